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
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/access"
	registrations "github.com/fleetjob/fleetjob/pkg/registration"
	"github.com/fleetjob/fleetjob/spoke"
)

// registration is a parsed registration Secret.
type registration struct {
	name      string
	labels    map[string]string
	namespace string
	config    *rest.Config
	hash      string
	// created is the Secret's creationTimestamp, which decides between
	// registrations of one cluster.
	created time.Time
	// tokenExpiry is when the kubeconfig's bearer token expires; zero when
	// unknown.
	tokenExpiry time.Time
}

// parseRegistration reads a registration Secret, naming the field at fault.
func parseRegistration(s *corev1.Secret) (registration, error) {
	r, err := registrations.Parse(s)
	reg := registration{name: r.Name, labels: r.Labels, namespace: r.Namespace, created: s.CreationTimestamp.Time}
	if err != nil {
		return reg, err
	}
	// Limits come later, from the hub's flags (restConfig).
	cfg, err := r.RESTConfig(registrations.Limits{})
	if err != nil {
		return reg, err
	}
	reg.tokenExpiry, _ = registrations.TokenExpiry(cfg.BearerToken)
	h := sha256.New()
	h.Write(r.Kubeconfig)
	h.Write([]byte("\x00" + reg.namespace))
	reg.config, reg.hash = cfg, hex.EncodeToString(h.Sum(nil))
	return reg, nil
}

// checkAccess asks the member whether the registered identity may do what
// the hub needs. An identity that may not list a watched kind would never
// sync its cache; better to say so on the cluster's row than to hang.
func checkAccess(ctx context.Context, cfg *rest.Config, namespace string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, refused, err := spoke.ReviewAccess(ctx, cs, access.Required(namespace))
	if err != nil {
		return err
	}
	var denied []string
	for _, attrs := range refused {
		denied = append(denied, access.Describe(attrs))
	}
	if len(denied) > 0 {
		return &accessError{denied: denied}
	}
	return nil
}

// clusterID reads the member's identity: the UID of its kube-system
// namespace, which every cluster has and which changes only when the cluster
// is rebuilt.
func clusterID(ctx context.Context, cfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, access.IdentityNamespace, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading the cluster's identity (namespace %s): %w", access.IdentityNamespace, err)
	}
	return string(ns.UID), nil
}

// duplicateError refuses a second registration of one cluster: both would
// run every node. why says why the other runs it.
type duplicateError struct{ other, id, why string }

func (e *duplicateError) Error() string {
	return fmt.Sprintf("the cluster (kube-system UID %s) is registered already as %s, which runs it (%s); unregister one of the two", e.id, e.other, e.why)
}

// waitingError defers a registration, at start-up, until an older one was
// tried: it may point at the same cluster and would then run it.
type waitingError struct{ older string }

func (e *waitingError) Error() string {
	return fmt.Sprintf("waiting for the older registration %s to connect first", e.older)
}

type accessError struct{ denied []string }

func (e *accessError) Error() string {
	return "the registered credentials may not: " + strings.Join(e.denied, "; ")
}

// clusterOptions scope a member's caches to what fleetjob owns: its Jobs
// (trimmed to what the hub reads) and plans in the work namespace, and node
// metadata. Hub memory must not grow with a member's pods, unrelated
// objects, or the size of the Job template.
func clusterOptions(namespace string, informers *spoke.Informers) cluster.Option {
	owned := labels.SelectorFromSet(labels.Set{fleetv1.ManagedByLabel: fleetv1.ManagedByValue})
	inWorkNamespace := cache.ByObject{Namespaces: map[string]cache.Config{namespace: {}}, Label: owned}
	jobs := inWorkNamespace
	jobs.Transform = spoke.TrimJob // the hub never reads a cached Job's spec
	return func(o *cluster.Options) {
		o.Cache.ByObject = map[client.Object]cache.ByObject{
			&batchv1.Job{}:      jobs,
			&corev1.ConfigMap{}: inWorkNamespace,
			&corev1.Node{}:      {Transform: spoke.TrimNodeMetadata}, // watched metadata-only
		}
		o.Cache.DefaultTransform = cache.TransformStripManagedFields()
		o.Cache.NewInformer = informers.NewInformer
	}
}

// memberCluster is a member's cluster with its cache's informers, which
// the hub reads its runs from without copying them.
type memberCluster struct {
	cluster.Cluster
	informers *spoke.Informers
}

// Informers are the member cache's Job and Node informers.
func (m *memberCluster) Informers() *spoke.Informers { return m.informers }

// InformersOf are cl's Job and Node informers when cl is a member cluster
// this provider connected, nil otherwise.
func InformersOf(cl cluster.Cluster) *spoke.Informers {
	if m, ok := cl.(interface{ Informers() *spoke.Informers }); ok {
		return m.Informers()
	}
	return nil
}

// watchedKinds are the informers the hub's controllers start in a member;
// they are synced before engaging so engaging never blocks.
func watchedKinds() []client.Object {
	node := &metav1.PartialObjectMetadata{}
	node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	return []client.Object{&batchv1.Job{}, &corev1.ConfigMap{}, node}
}

// connect checks, starts, syncs and engages a member within ConnectTimeout.
func (p *Provider) connect(ctx context.Context, reg registration) error {
	select {
	case <-p.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.ConnectTimeout)
	defer cancel()
	cfg := p.restConfig(reg.config)
	if err := checkAccess(ctx, cfg, reg.namespace); err != nil {
		if refused := (*accessError)(nil); errors.As(err, &refused) {
			p.reviewed(reg.name, refused.denied)
		}
		return err
	}
	p.reviewed(reg.name, nil)
	id, err := clusterID(ctx, cfg)
	if err != nil {
		return err
	}
	p.noteID(reg.name, id)
	if older, err := p.untriedOlder(ctx, reg); err != nil || older != "" {
		return cmp.Or(err, error(&waitingError{older: older}))
	}
	started, err := p.startedIn(ctx, id)
	if err != nil {
		return err
	}
	if w := p.claim(reg, id, started); w.name != reg.name {
		return &duplicateError{other: w.name, id: id, why: w.why()}
	}
	cfg.Wrap(countWatches(reg.name))
	cfg.Wrap(spoke.NoEvictionWait)
	if p.opts.Shard != nil {
		// Outermost: a write refused by the fence is never sent.
		cfg.Wrap(p.opts.Shard.Fence(reg.name))
	}
	informers := &spoke.Informers{}
	inner, err := cluster.New(cfg, clusterOptions(reg.namespace, informers))
	if err != nil {
		return err
	}
	cl := &memberCluster{Cluster: inner, informers: informers}
	p.mu.RLock()
	memberCtx, stop := context.WithCancel(p.baseCtx)
	aware, indexers := p.aware, p.indexers
	p.mu.RUnlock()
	go func() { _ = cl.Start(memberCtx) }()
	if err := p.prepare(ctx, cl, indexers); err != nil {
		stop()
		return err
	}
	p.replace(reg, cl, stop)
	if err := engage(ctx, aware, memberCtx, reg.name, cl); err != nil {
		p.disengage(reg.name, cl)
		return err
	}
	// A registration that won the cluster meanwhile displaced this one.
	if w := p.engaged(reg.name, cl); w.name != "" {
		return &duplicateError{other: w.name, id: id, why: w.why()}
	}
	go p.probeLoop(memberCtx, reg.name, cl, reg.namespace)
	go p.inventoryLoop(memberCtx, reg.name, cl)
	return nil
}

// prepare adds indexes and syncs every watched informer, so that the
// controllers' watches start on synced caches.
func (p *Provider) prepare(ctx context.Context, cl cluster.Cluster, indexers []indexer) error {
	for _, ix := range indexers {
		if err := cl.GetFieldIndexer().IndexField(ctx, ix.obj, ix.field, ix.extract); err != nil {
			return err
		}
	}
	for _, obj := range watchedKinds() {
		if _, err := cl.GetCache().GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("syncing %T: %w", obj, err)
		}
	}
	if !cl.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("caches did not sync within the connect timeout")
	}
	return nil
}

// engage hands the member to the controllers, giving up at ctx's deadline;
// cancelling the member's context then releases an engagement still running.
func engage(ctx context.Context, aware multicluster.Aware, memberCtx context.Context, name string, cl cluster.Cluster) error {
	done := make(chan error, 1)
	go func() { done <- aware.Engage(memberCtx, multicluster.ClusterName(name), cl) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("engaging timed out: %w", ctx.Err())
	}
}

// classify maps a connection error to a row reason.
func classify(err error) string {
	var access *accessError
	var duplicate *duplicateError
	var waiting *waitingError
	switch {
	case errors.As(err, &waiting):
		return fleetv1.ClusterReasonConnecting
	case errors.As(err, &duplicate):
		return fleetv1.ClusterReasonDuplicateCluster
	case errors.As(err, &access), apierrors.IsForbidden(err):
		return fleetv1.ClusterReasonForbidden
	case apierrors.IsUnauthorized(err):
		return fleetv1.ClusterReasonUnauthorized
	default:
		return fleetv1.ClusterReasonUnreachable
	}
}

// maxBackoff caps the wait between connection attempts. Nothing wakes a
// member refused or unreachable when it connects (an RBAC fix or a restored
// network happens in the member, out of the hub's sight), so the next attempt
// is what picks the fix up: 30 s keeps the README's bound, a fix picked up
// within 30 s, for every fault. Longer made a member fixed after a long
// outage wait minutes more and fail UnreachableTimeout although it was back;
// shorter buys little, as a failed attempt costs a handful of requests.
const maxBackoff = 30 * time.Second

// backoff is the wait before retrying a member after attempts failures:
// 2 s doubling to maxBackoff, so that one that blipped is back within
// seconds and one down for hours costs a few requests every 30 s.
func backoff(attempts int) time.Duration {
	d := 2 * time.Second
	for i := 1; i < attempts && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}
