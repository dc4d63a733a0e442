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

package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// ClusterSetReconciler keeps each ClusterSet's status.clusters: how many
// registered clusters are in the set.
type ClusterSetReconciler struct {
	// Hub reads from the hub manager's cache.
	Hub client.Client
	// RegistrationNamespace is the hub namespace of registration Secrets.
	RegistrationNamespace string
}

// SetupWithManager runs the reconciler on the hub's own manager, woken by
// ClusterSets and by registration Secrets, whose set is their label.
func (r *ClusterSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterset").
		For(&fleetv1.ClusterSet{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.allSets)).
		Complete(r)
}

// Reconcile counts the set's clusters and writes the count when it changed.
func (r *ClusterSetReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cs := &fleetv1.ClusterSet{}
	if err := r.Hub.Get(ctx, req.NamespacedName, cs); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	secrets := &corev1.SecretList{}
	if err := r.Hub.List(ctx, secrets, client.InNamespace(r.RegistrationNamespace),
		client.MatchingLabels{fleetv1.RegistrationLabel: "true"}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing registrations: %w", err)
	}
	var n int32
	for _, s := range secrets.Items {
		if s.DeletionTimestamp.IsZero() && fleetv1.SetOf(s.Labels) == cs.Name {
			n++
		}
	}
	if cs.Status.Clusters == n && cs.Status.ObservedGeneration == cs.Generation {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFromWithOptions(cs.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cs.Status.Clusters, cs.Status.ObservedGeneration = n, cs.Generation
	ctx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
	defer cancel()
	return reconcile.Result{}, client.IgnoreNotFound(r.Hub.Status().Patch(ctx, cs, patch))
}

// allSets maps a registration change to every ClusterSet: a relabelled
// Secret leaves one set for another.
func (r *ClusterSetReconciler) allSets(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() != r.RegistrationNamespace {
		return nil
	}
	list := &fleetv1.ClusterSetList{}
	if err := r.Hub.List(ctx, list); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}
