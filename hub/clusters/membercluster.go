/*
Copyright 2026 The fleetjob Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package clusters

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/text"
)

// +kubebuilder:rbac:groups=fleetjob.io,resources=memberclusters,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=fleetjob.io,resources=memberclusters/status,verbs=get;update;patch

// inventoryInterval is how often the hub reads a connected member's version
// and counts its nodes (and once at each connect). Each read is one small
// request to the member and a count of the member cache's nodes, and each
// changes lastProbeTime, so one MemberCluster status write per member per
// interval: 5 minutes keeps a 1,000-member hub at about 3 writes a second,
// while a version upgrade or a node pool resize shows within minutes. The
// member's health is watched every --member-health-interval regardless.
const inventoryInterval = 5 * time.Minute

// inventoryJitter spreads the reads of members that connected together (at
// a hub start) over a tenth of the interval.
const inventoryJitter = 0.1

// memberClusterTimeout bounds one MemberCluster reconcile: a few reads of
// the hub's cache and at most three writes to the hub.
const memberClusterTimeout = 30 * time.Second

// conflictRetry is when a MemberCluster whose write lost an optimistic lock
// is tried again, without logging an error for a race that is normal.
const conflictRetry = time.Second

// memberClusterWorkers MemberClusters are written at once: each reconcile
// is a handful of hub calls, and a hub start writes every member's.
const memberClusterWorkers = 4

// reviewed records what the member said of the registered identity's
// access: denied is what it refused, empty when it allowed everything.
func (p *Provider) reviewed(name string, denied []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.members[name]
	if !ok || (m.seen.reviewed && slices.Equal(m.seen.denied, denied)) {
		return
	}
	m.seen.reviewed, m.seen.denied = true, slices.Clone(denied)
	p.published.notify(name)
}

// inventoried records the version and node count read from cl, if it is
// still the member's cluster.
func (p *Provider) inventoried(name string, cl cluster.Cluster, version string, nodes int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.members[name]
	if !ok || m.cluster != cl {
		return
	}
	m.seen.version, m.seen.nodes, m.seen.probedAt = version, nodes, p.now()
	p.published.notify(name)
}

// observed returns what the registry knows of a member, for its
// MemberCluster; ok is false for a name it has no record of.
func (p *Provider) observed(name string) (m Member, o observation, ok bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	rec, ok := p.members[name]
	if !ok {
		return Member{}, observation{}, false
	}
	o = rec.seen
	o.denied = slices.Clone(o.denied)
	o.clusterID = rec.clusterID
	return rec.snapshot.clone(), o, true
}

// inventoryLoop reads the member's version and node count now and every
// inventoryInterval until ctx ends (the member is disconnected).
func (p *Provider) inventoryLoop(ctx context.Context, name string, cl cluster.Cluster) {
	cs, err := kubernetes.NewForConfig(cl.GetConfig())
	if err != nil {
		log.FromContext(ctx).Error(err, "Building the inventory client of a member", "cluster", name)
		return
	}
	wait.JitterUntilWithContext(ctx, func(ctx context.Context) {
		v, nodes, err := inventory(ctx, cs, cl, p.opts.RequestTimeout)
		if err != nil {
			// The health probe reports a member that stopped answering;
			// the last values stay, dated by lastProbeTime.
			log.FromContext(ctx).V(1).Info("Reading member inventory failed", "cluster", name, "err", err)
			return
		}
		p.inventoried(name, cl, v, nodes)
	}, inventoryInterval, inventoryJitter, true)
}

// inventory reads the member's version (one request, within timeout) and
// counts the nodes in its cache, which the hub watches anyway (metadata
// only): no node list ever goes to the member for it.
func inventory(ctx context.Context, cs kubernetes.Interface, cl cluster.Cluster, timeout time.Duration) (string, int32, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", 0, fmt.Errorf("reading the member's version: %w", err)
	}
	var v version.Info
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", 0, fmt.Errorf("reading the member's version: %w", err)
	}
	nodes := &metav1.PartialObjectMetadataList{}
	nodes.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
	if err := cl.GetCache().List(ctx, nodes, client.UnsafeDisableDeepCopy); err != nil {
		return "", 0, fmt.Errorf("counting the member's nodes: %w", err)
	}
	return text.Truncate(v.GitVersion, 64), int32(min(len(nodes.Items), 1<<31-1)), nil
}

// memberClusterReconciler keeps one MemberCluster per registration, named
// after it, with the registry's view of the member as its status.
type memberClusterReconciler struct {
	provider *Provider
	hub      client.Client
}

// setupMemberClusters runs the MemberCluster publisher on the hub manager.
// Like the registration controller it runs on the leader only, publishing
// that registry's view; sharded, on every replica, each publishing the
// members it serves. Every MemberCluster is reconciled when it starts, so
// that those of registrations deleted while no hub ran are deleted.
func (p *Provider) setupMemberClusters(mgr ctrl.Manager) error {
	changes := source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go func() {
			for {
				names, err := p.published.wait(ctx)
				if err != nil {
					return // the manager is stopping
				}
				for _, name := range names {
					q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
				}
			}
		}()
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("fleetjob-memberclusters").
		For(&fleetv1.MemberCluster{}).
		WatchesRawSource(changes).
		WithOptions(controller.Options{MaxConcurrentReconciles: memberClusterWorkers, SkipNameValidation: ptr.To(true), UsePriorityQueue: ptr.To(false),
			NeedLeaderElection: ptr.To(p.opts.Shard == nil)}).
		Complete(&memberClusterReconciler{provider: p, hub: mgr.GetClient()})
}

// Reconcile creates, updates or deletes the MemberCluster of one
// registration.
func (r *memberClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, memberClusterTimeout)
	defer cancel()
	name := req.Name
	if s := r.provider.opts.Shard; s != nil && !s.Owns(name) {
		// The replica serving the member publishes it, and deletes its
		// MemberCluster once unregistered; this one knows it only as served
		// elsewhere, which is nothing to publish.
		forgetMemberClusterMetrics(name)
		return ctrl.Result{}, nil
	}
	registered, err := r.registered(ctx, name)
	if err != nil {
		return ctrl.Result{}, err
	}
	mc := &fleetv1.MemberCluster{}
	if err := r.hub.Get(ctx, req.NamespacedName, mc); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		mc = nil
	}
	if !registered {
		forgetMemberClusterMetrics(name)
		if mc == nil {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(r.hub.Delete(ctx, mc, client.Preconditions{UID: &mc.UID}))
	}
	m, o, ok := r.provider.observed(name)
	if !ok {
		// The registry has not read the Secret yet; it tells when it did.
		return ctrl.Result{}, nil
	}
	now := r.provider.now()
	want := memberClusterStatus(m, o, now)
	if mc, err = r.ensure(ctx, mc, name, memberClusterLabels(m.Labels)); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, mc, want); err != nil {
		if apierrors.IsConflict(err) {
			// The cache is behind a write; it catches up within
			// milliseconds, and the watch event of that write requeues too.
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	setMemberClusterMetrics(name, mc.Status)
	return ctrl.Result{RequeueAfter: nextTokenCheck(o.tokenExpiry, now)}, nil
}

// registered tells whether a registration Secret of name exists, read from
// the hub's cache of the registration namespace. It is the Secret, not the
// registry, that decides: at a hub start the registry is empty until it has
// read every Secret, and the MemberClusters must not go meanwhile.
func (r *memberClusterReconciler) registered(ctx context.Context, name string) (bool, error) {
	s := &corev1.Secret{}
	err := r.hub.Get(ctx, client.ObjectKey{Namespace: r.provider.opts.Namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading registration %s: %w", name, err)
	}
	return s.DeletionTimestamp.IsZero() && s.Labels[fleetv1.RegistrationLabel] == "true", nil
}

// ensure creates the MemberCluster, or sets its labels to the
// registration's.
func (r *memberClusterReconciler) ensure(ctx context.Context, mc *fleetv1.MemberCluster, name string, labels map[string]string) (*fleetv1.MemberCluster, error) {
	if mc == nil {
		mc = &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		if err := r.hub.Create(ctx, mc); err != nil {
			return nil, fmt.Errorf("creating MemberCluster %s: %w", name, err)
		}
		return mc, nil
	}
	if maps.Equal(mc.Labels, labels) {
		return mc, nil
	}
	base := mc.DeepCopy()
	mc.Labels = labels
	if err := r.hub.Patch(ctx, mc, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("labelling MemberCluster %s: %w", name, err)
	}
	return mc, nil
}

// writeStatus writes want over mc's status when that changes anything, with
// an optimistic lock, and then sends the token warning it calls for: an
// event is sent only for a write that took.
func (r *memberClusterReconciler) writeStatus(ctx context.Context, mc *fleetv1.MemberCluster, want fleetv1.MemberClusterStatus) error {
	next, changed := mergeStatus(mc.Status, want)
	if !changed {
		return nil
	}
	base := mc.DeepCopy()
	mc.Status = next
	if err := r.hub.Status().Patch(ctx, mc, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	if c, ok := tokenWarning(base.Status, next); ok {
		if rec := r.provider.opts.Recorder; rec != nil {
			rec.Eventf(mc, nil, corev1.EventTypeWarning, c.Reason, "CheckToken", "%s", text.Truncate(fmt.Sprintf("cluster %s: %s", mc.Name, c.Message), text.MaxEventNote))
		}
	}
	return nil
}
