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
	"errors"
	"fmt"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/fleetjob/fleetjob/pkg/text"
)

// +kubebuilder:rbac:groups="",namespace=fleetjob-system,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// connectWorkers is how many members may connect at once. Each waits at most
// ConnectTimeout, so a few unreachable members never hold up a healthy one.
const connectWorkers = 8

// waitForOlder is how soon a registration deferred at start-up for an older
// one is tried again: the older one's first attempt takes a second or so
// when its member answers, and the wait ends with the start-up grace anyway.
const waitForOlder = time.Second

// RegistrationSecrets is the hub cache's configuration for Secrets: only
// those labelled as registrations (fleetv1.RegistrationLabel=true) in
// namespace. A Secret without the label registers nothing (unlabelling one
// unregisters its member), so the hub never needs another: the TLS keys,
// tokens and passwords that share the namespace stay out of its memory and
// its watch. A Secret that loses the label leaves the cache, which the
// reconciler sees as its deletion: the member is forgotten, as before.
func RegistrationSecrets(namespace string) cache.ByObject {
	return cache.ByObject{
		Namespaces: map[string]cache.Config{namespace: {}},
		Label:      labels.SelectorFromSet(labels.Set{fleetv1.RegistrationLabel: "true"}),
	}
}

// SetupWithManager watches registration Secrets on the hub, and publishes
// one MemberCluster per registration.
func (p *Provider) SetupWithManager(mgr mcmanager.Manager) error {
	local := mgr.GetLocalManager()
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == p.opts.Namespace })
	p.hub = local.GetClient()
	if p.opts.Shard != nil {
		// Started twice, the provider would panic; started by the manager,
		// on the leader only.
		if _, raw := mgr.GetProvider().(*Provider); raw {
			return errors.New("a sharded registry must be given to mcmanager.New as its ForManager()")
		}
		if err := local.Add(startOnEveryReplica{p: p, aware: mgr}); err != nil {
			return err
		}
		p.opts.Shard.Subscribe(p.wakeAll)
	}
	if err := p.setupMemberClusters(local); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(local).
		Named("fleetjob-registrations").
		For(&corev1.Secret{}, builder.WithPredicates(inNamespace)).
		WatchesRawSource(source.Channel(p.wakeups, &handler.EnqueueRequestForObject{})).
		// No priority queue: v0.24's can deadlock on shutdown
		// (kubernetes-sigs/controller-runtime#3538).
		// Sharded, every replica connects to the members it serves.
		WithOptions(controller.Options{MaxConcurrentReconciles: connectWorkers, SkipNameValidation: ptr.To(true), UsePriorityQueue: ptr.To(false),
			NeedLeaderElection: ptr.To(p.opts.Shard == nil)}).
		Complete(&secretReconciler{provider: p, hub: local.GetClient()})
}

type secretReconciler struct {
	provider *Provider
	hub      client.Client
}

// Reconcile engages, re-engages or forgets the member a Secret registers.
func (r *secretReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := r.provider
	secret := &corev1.Secret{}
	if err := r.hub.Get(ctx, req.NamespacedName, secret); err != nil {
		if apierrors.IsNotFound(err) {
			p.remove(req.Name)
			p.release(ctx, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	// Unlike the stock provider, removing the label unregisters the member.
	if !secret.DeletionTimestamp.IsZero() || secret.Labels[fleetv1.RegistrationLabel] != "true" {
		p.remove(req.Name)
		p.release(ctx, req.Name)
		return ctrl.Result{}, nil
	}
	reg, err := parseRegistration(secret)
	if err != nil {
		p.invalid(reg, err)
		r.warn(secret, fleetv1.ClusterReasonInvalidRegistration, err)
		return ctrl.Result{}, nil // nothing to retry until the Secret changes
	}
	upToDate := p.upsert(reg)
	if connect, retry := p.gate(ctx, reg); !connect {
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	if upToDate {
		return ctrl.Result{}, nil
	}
	log.FromContext(ctx).Info("Connecting member cluster", "cluster", reg.name, "namespace", reg.namespace)
	if err := p.connect(ctx, reg); err != nil {
		if waiting := (*waitingError)(nil); errors.As(err, &waiting) {
			log.FromContext(ctx).V(1).Info("Deferring member cluster", "cluster", reg.name, "reason", err)
			return ctrl.Result{RequeueAfter: waitForOlder}, nil
		}
		retry := p.failed(reg.name, err)
		r.warn(secret, classify(err), err)
		log.FromContext(ctx).Info("Connecting member cluster failed", "cluster", reg.name, "err", err, "retryIn", retry)
		return ctrl.Result{RequeueAfter: retry}, nil
	}
	log.FromContext(ctx).Info("Engaged member cluster", "cluster", reg.name)
	return ctrl.Result{}, nil
}

func (r *secretReconciler) warn(secret *corev1.Secret, reason string, err error) {
	if rec := r.provider.opts.Recorder; rec != nil {
		rec.Eventf(secret, nil, corev1.EventTypeWarning, reason, "Connect", "%s", text.Truncate(fmt.Sprintf("cluster %s: %v", secret.Name, err), text.MaxEventNote))
	}
}
