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
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

// SetupWithManager wires the reconciler: ClusterJobs on the hub; Jobs, plans
// and node deletions in members, mapped back to their hub ClusterJob; and
// member connection changes from the registry.
func (r *Reconciler) SetupWithManager(ctx context.Context) error {
	r.startedAt = r.Clock.Now()
	r.finishes = newFinishLog(r.Clock)
	// On the members only: an index on the hub's own cache would start a
	// Job informer in the hub cluster.
	if err := r.Members.IndexField(ctx, &batchv1.Job{}, spoke.RunIndex, spoke.RunIndexValue); err != nil {
		return err
	}
	changes := make(chan event.TypedGenericEvent[client.Object])
	if err := r.Manager.GetLocalManager().Add(&changeRelay{r: r, out: changes}); err != nil {
		return err
	}
	onHub := []mcbuilder.ForOption{mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)}
	inMembers := []mcbuilder.WatchesOption{mcbuilder.WithEngageWithLocalCluster(false), mcbuilder.WithEngageWithProviderClusters(true)}
	nodeGone := mcbuilder.WithPredicates(predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(event.UpdateEvent) bool { return false },
	})
	return mcbuilder.ControllerManagedBy(r.Manager).
		Named("clusterjob").
		For(&fleetv1.ClusterJob{}, append(onHub, mcbuilder.WithPredicates(specOrLifecycleChanged()))...).
		Watches(&batchv1.Job{}, toClusterJob, append(inMembers, mcbuilder.WithPredicates(r.jobChanged()))...).
		Watches(&corev1.ConfigMap{}, toClusterJob, inMembers...).
		WatchesMetadata(&corev1.Node{}, r.toRunning, append(inMembers, nodeGone)...).
		WatchesRawSource(source.TypedChannel(changes, handler.TypedEnqueueRequestsFromMapFunc(hubRequest))).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{
			MaxConcurrentReconciles: 4,
			// Several managers share a test process; names are not global.
			SkipNameValidation: ptr.To(true),
		}).
		WithClusterNotFoundWrapper(false).
		Complete(r)
}

// specOrLifecycleChanged drops the ClusterJob's own status writes: they
// would wake the reconciler for nothing.
func specOrLifecycleChanged() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !e.ObjectNew.GetDeletionTimestamp().Equal(e.ObjectOld.GetDeletionTimestamp()) ||
				len(e.ObjectNew.GetFinalizers()) != len(e.ObjectOld.GetFinalizers())
		},
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
}

// jobChanged drops Job updates that change nothing the reconciler reads: a
// 1,000-node group makes several updates per Job (pods pending, running,
// uncounted, terminated), and only some move a node's state. It is also
// where the hub first sees a Job finish, which the hand-off metric counts
// from.
func (r *Reconciler) jobChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*batchv1.Job)
		updated, okNew := e.ObjectNew.(*batchv1.Job)
		if !okOld || !okNew {
			return true
		}
		r.finishes.observe(old, updated)
		return spoke.JobChanged(old, updated)
	}}
}

// toClusterJob maps a member object to its hub ClusterJob. ClusterName stays
// empty: the request is for the hub, whatever member the event came from.
func toClusterJob(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []mcreconcile.Request {
		ns, name, ok := strings.Cut(o.GetAnnotations()[fleetv1.ClusterJobAnnotation], "/")
		if !ok || o.GetLabels()[fleetv1.ManagedByLabel] != fleetv1.ManagedByValue {
			return nil
		}
		return []mcreconcile.Request{{Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}}
	})
}

// toRunning maps a member event that concerns every run (a node deleted) to
// every unfinished ClusterJob.
func (r *Reconciler) toRunning(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []mcreconcile.Request {
		return r.unfinished(ctx)
	})
}

func (r *Reconciler) unfinished(ctx context.Context) []mcreconcile.Request {
	list := &fleetv1.ClusterJobList{}
	if err := r.Hub.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "Listing ClusterJobs")
		return nil
	}
	var out []mcreconcile.Request
	for _, cj := range list.Items {
		if !cj.Status.Phase.IsFinished() || !cj.DeletionTimestamp.IsZero() {
			out = append(out, mcreconcile.Request{Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&cj)}})
		}
	}
	return out
}

func hubRequest(_ context.Context, o client.Object) []mcreconcile.Request {
	return []mcreconcile.Request{{Request: reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)}}}
}
