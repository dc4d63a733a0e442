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
	"maps"
	"strings"
	"time"

	"golang.org/x/time/rate"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
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
	"github.com/fleetjob/fleetjob/hub/disruption"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/spoke"
)

// SetupWithManager wires the member reconciler: it watches MemberRuns and
// ClusterJobs on the hub, and the run's Jobs, plans and node deletions in
// each member, each mapped to the MemberRun of that member only; member
// connection changes come from the registry (its relay also wakes the
// fleet reconciler through wakeJobs, unless that is nil).
func (r *MemberRunReconciler) SetupWithManager(ctx context.Context, wakeJobs chan<- event.TypedGenericEvent[client.Object]) error {
	r.startedAt = r.Clock.Now()
	r.finishes = newFinishLog(r.Clock)
	r.pace = newPacer(r.Clock)
	r.ledger = disruption.NewLedger()
	// On the members only: an index on the hub's own cache would start a
	// Job informer in the hub cluster.
	if err := r.Members.IndexField(ctx, &batchv1.Job{}, spoke.RunIndex, spoke.RunIndexValue); err != nil {
		return err
	}
	if err := indexMemberRuns(ctx, r.Manager.GetLocalManager().GetFieldIndexer()); err != nil {
		return err
	}
	// Sharded, every replica runs the MemberRuns of the members it serves,
	// and what feeds them; the leader alone runs the ClusterJobs.
	sharded := r.Shard != nil
	wakeRuns := make(chan event.TypedGenericEvent[client.Object])
	relay := &changeRelay{r: r, clusterJobs: wakeJobs, memberRuns: wakeRuns, everyReplica: sharded}
	if err := r.Manager.GetLocalManager().Add(relay); err != nil {
		return err
	}
	wakeHeld := make(chan event.TypedGenericEvent[client.Object])
	if err := r.Manager.GetLocalManager().Add(&budgetRelay{ledger: r.ledger, runs: wakeHeld, everyReplica: sharded}); err != nil {
		return err
	}
	if err := r.Manager.GetLocalManager().Add(&budgetStatus{r: r}); err != nil {
		return err
	}
	if r.grants != nil {
		// Sharded: budgets span the replicas' members; each replica's
		// ledger meets the others' in the shared record.
		r.ledger.Share(r.grants)
		if err := r.Manager.GetLocalManager().Add(&grantsPublisher{ledger: r.ledger}); err != nil {
			return err
		}
		if err := wakeOnPeerGrants(ctx, r.Manager.GetLocalManager().GetCache(), r.ledger, r.grants.section()); err != nil {
			return err
		}
	}
	nodeCreatedOrDeleted := mcbuilder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})
	memberRuns := r.Manager
	if sharded {
		memberRuns = everyReplicaManager{r.Manager}
	}
	return mcbuilder.ControllerManagedBy(memberRuns).
		Named("memberrun").
		Watches(&fleetv1.MemberRun{}, r.toItsCluster, append(watchOnHub(), mcbuilder.WithPredicates(specOrLifecycleChanged()))...).
		Watches(&fleetv1.ClusterJob{}, r.toMemberRuns, append(watchOnHub(), mcbuilder.WithPredicates(predicate.GenerationChangedPredicate{}))...).
		Watches(&batchv1.Job{}, r.toMemberRun, append(inMembers(), mcbuilder.WithPredicates(r.jobChanged()))...).
		Watches(&corev1.ConfigMap{}, r.toMemberRun, inMembers()...).
		WatchesMetadata(&corev1.Node{}, r.toRunsInCluster, append(inMembers(), nodeCreatedOrDeleted)...).
		Watches(&fleetv1.ClusterSet{}, r.toUnfinishedRuns, append(watchOnHub(), mcbuilder.WithPredicates(predicate.GenerationChangedPredicate{}))...).
		WatchesRawSource(source.TypedChannel(wakeRuns, handler.TypedEnqueueRequestsFromMapFunc(r.memberRunRequest))).
		WatchesRawSource(source.TypedChannel(wakeHeld, handler.TypedEnqueueRequestsFromMapFunc(r.memberRunRequest))).
		Watches(&fleetv1.FleetDisruptionBudget{}, r.toHeldRuns, watchOnHub()...).
		WithOptions(controllerOptions(max(1, r.Options.MemberWorkers))).
		WithClusterNotFoundWrapper(false).
		Complete(mcreconcile.Func(r.reconcileMemberRun))
}

// SetupWithManager wires the fleet reconciler: it watches ClusterJobs and
// their MemberRuns on the hub, and the end of each retry, for the run it
// retries, whose TTL it held; wakeJobs (nil: none) wakes it on member
// connection changes. Sharded, it wakes on MemberClusters instead.
func (r *ClusterJobReconciler) SetupWithManager(ctx context.Context, wakeJobs <-chan event.TypedGenericEvent[client.Object]) error {
	if err := indexRetries(ctx, r.Manager.GetLocalManager().GetFieldIndexer()); err != nil {
		return err
	}
	onHub := []mcbuilder.ForOption{mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)}
	ownedOnHub := []mcbuilder.OwnsOption{mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)}
	clusterJobs := mcbuilder.ControllerManagedBy(r.Manager).
		Named("clusterjob").
		For(&fleetv1.ClusterJob{}, append(onHub, mcbuilder.WithPredicates(specOrLifecycleChanged()))...).
		Owns(&fleetv1.MemberRun{}, ownedOnHub...).
		Watches(&fleetv1.ClusterSetBinding{}, r.toUnstartedClusterJobs, watchOnHub()...).
		Watches(&fleetv1.ClusterJob{}, toRetried, append(watchOnHub(), mcbuilder.WithPredicates(retryLetGo()))...)
	if wakeJobs != nil {
		clusterJobs = clusterJobs.WatchesRawSource(source.TypedChannel(wakeJobs, handler.TypedEnqueueRequestsFromMapFunc(hubRequest)))
	} else {
		// Sharded: a relay on a replica that does not lead would wait
		// forever on a controller that never starts there.
		clusterJobs = clusterJobs.Watches(&fleetv1.MemberCluster{}, r.toUnfinishedClusterJobs, append(watchOnHub(), mcbuilder.WithPredicates(memberClusterChanged()))...)
	}
	return clusterJobs.WithOptions(controllerOptions(4)).
		WithClusterNotFoundWrapper(false).
		Complete(mcreconcile.Func(r.reconcileClusterJob))
}

// watchOnHub and inMembers engage a watch with the hub's own cluster only,
// or with the member clusters only.
func watchOnHub() []mcbuilder.WatchesOption {
	return []mcbuilder.WatchesOption{mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false)}
}

func inMembers() []mcbuilder.WatchesOption {
	return []mcbuilder.WatchesOption{mcbuilder.WithEngageWithLocalCluster(false), mcbuilder.WithEngageWithProviderClusters(true)}
}

// controllerOptions are both reconcilers' options, with workers at once.
func controllerOptions(workers int) controller.TypedOptions[mcreconcile.Request] {
	return controller.TypedOptions[mcreconcile.Request]{
		MaxConcurrentReconciles: workers,
		// Several managers share a test process; names are not global.
		SkipNameValidation: ptr.To(true),
		// controller-runtime v0.24's priority queue can deadlock on
		// shutdown (kubernetes-sigs/controller-runtime#3538, fixed
		// after v0.24.1): a stopping hub then hangs past its grace.
		UsePriorityQueue: ptr.To(false),
		RateLimiter:      retryLimiter(),
	}
}

// maxRetryDelay bounds how long a reconcile that returned an error waits
// for its next try, however often it has failed: a write the hub's API
// server refused (a webhook down, a quota, etcd out of space) is retried
// at least this often, so a repaired fault is picked up within it and not
// after controller-runtime's default ceiling of 1,000 s.
const maxRetryDelay = 30 * time.Second

// retryLimiter is the reconcilers' backoff after an error: 5 ms doubling to
// maxRetryDelay per request, and no more than 10 retries a second (a burst
// of 100) over all of them, so a fleet of failing runs cannot flood the API
// server either.
func retryLimiter() workqueue.TypedRateLimiter[mcreconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[mcreconcile.Request](5*time.Millisecond, maxRetryDelay),
		&workqueue.TypedBucketRateLimiter[mcreconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// specOrLifecycleChanged drops an object's status writes, which would wake
// the reconciler that made them for nothing, and its other updates that
// leave the spec, deletion and finalizers as they were. A MemberRun created
// by the fleet reconciler does wake the member reconciler.
func specOrLifecycleChanged() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !e.ObjectNew.GetDeletionTimestamp().Equal(e.ObjectOld.GetDeletionTimestamp()) ||
				len(e.ObjectNew.GetFinalizers()) != len(e.ObjectOld.GetFinalizers())
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
}

// jobChanged drops Job updates that change nothing the reconciler reads: a
// 1,000-node group makes several updates per Job (pods pending, running,
// uncounted, terminated), and only some move a node's state. It is also
// where the hub first sees a Job finish, which the hand-off metric counts
// from.
func (r *MemberRunReconciler) jobChanged() predicate.Predicate {
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

// toMemberRun maps a member object to the MemberRun of its ClusterJob in
// the member the event came from: the request names that member, and the
// reconcile reads nothing of another. Updates are paced (see pacer), but
// for a Job finishing its group; creations of Jobs (the hub's own) are
// paced too; a plan created or anything deleted is looked at now.
func (r *MemberRunReconciler) toMemberRun(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[mcreconcile.Request]
	request := func(o client.Object) (mcreconcile.Request, bool) {
		ns, cj, ok := strings.Cut(o.GetAnnotations()[fleetv1.ClusterJobAnnotation], "/")
		if !ok || o.GetLabels()[fleetv1.ManagedByLabel] != fleetv1.ManagedByValue {
			return mcreconcile.Request{}, false
		}
		if !r.owns(string(name)) {
			return mcreconcile.Request{}, false // a member being handed over
		}
		return runRequest(ns, naming.MemberRunName(cj, string(name)), string(name)), true
	}
	// A Job's change goes to the derivations' change feed before its
	// reconcile is enqueued, from this handler, which client-go calls once
	// the cache holds the change (spoke/feed.go).
	feed := func(o client.Object) {
		if _, isJob := o.(*batchv1.Job); isJob {
			r.derivations.JobChanged(string(name), o)
		}
	}
	now := func(o client.Object, q queue) {
		feed(o)
		if req, ok := request(o); ok {
			q.Add(req)
		}
	}
	paced := func(o client.Object, q queue) {
		feed(o)
		if req, ok := request(o); ok {
			q.AddAfter(req, r.pace.delay(req.NamespacedName))
		}
	}
	return handler.TypedFuncs[client.Object, mcreconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[client.Object], q queue) {
			if _, isJob := e.Object.(*batchv1.Job); isJob {
				paced(e.Object, q)
				return
			}
			now(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[client.Object], q queue) {
			old, okOld := e.ObjectOld.(*batchv1.Job)
			updated, okNew := e.ObjectNew.(*batchv1.Job)
			if okOld && okNew && r.pace.urgent(old, updated) {
				now(e.ObjectNew, q)
				return
			}
			paced(e.ObjectNew, q)
		},
		DeleteFunc:  func(_ context.Context, e event.TypedDeleteEvent[client.Object], q queue) { now(e.Object, q) },
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[client.Object], q queue) { now(e.Object, q) },
	}
}

// toItsCluster maps a hub MemberRun to the request for its member.
func (r *MemberRunReconciler) toItsCluster(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(r.memberRunRequest)
}

// memberRunRequest is the request of a MemberRun whose member this replica
// serves.
func (r *MemberRunReconciler) memberRunRequest(_ context.Context, o client.Object) []mcreconcile.Request {
	mr, ok := o.(*fleetv1.MemberRun)
	if !ok || !r.owns(mr.Spec.Cluster) {
		return nil
	}
	return []mcreconcile.Request{runRequest(mr.Namespace, mr.Name, mr.Spec.Cluster)}
}

func runRequest(namespace, name, cluster string) mcreconcile.Request {
	return mcreconcile.Request{ClusterName: multicluster.ClusterName(cluster),
		Request: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}}
}

// toMemberRuns maps a ClusterJob's spec change (suspend, resume) to its
// MemberRuns.
func (r *MemberRunReconciler) toMemberRuns(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []mcreconcile.Request {
		return r.runRequests(ctx, client.InNamespace(o.GetNamespace()), client.MatchingFields{runsOfClusterJob: string(o.GetUID())})
	})
}

// toRunsInCluster maps a member event that concerns every run there (a node
// deleted) to the cluster's unfinished MemberRuns. A node created or
// deleted goes to the derivations' change feed first: the runs there look
// at every node's presence again.
func (r *MemberRunReconciler) toRunsInCluster(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[mcreconcile.Request]
	return handler.TypedFuncs[client.Object, mcreconcile.Request]{
		CreateFunc: func(context.Context, event.TypedCreateEvent[client.Object], queue) {
			r.derivations.NodesChanged(string(name))
		},
		DeleteFunc: func(ctx context.Context, _ event.TypedDeleteEvent[client.Object], q queue) {
			r.derivations.NodesChanged(string(name))
			for _, req := range r.runRequests(ctx, client.MatchingFields{runsInCluster: string(name)}) {
				q.Add(req)
			}
		},
	}
}

// toUnfinishedRuns maps a ClusterSet's change to every unfinished
// MemberRun: a set's maintenance windows that open now start the groups
// waiting for them within seconds, not at the wake-up the old windows set.
// Sets change rarely; telling which runs are in the set would cost more.
func (r *MemberRunReconciler) toUnfinishedRuns(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []mcreconcile.Request {
		return r.runRequests(ctx)
	})
}

// runRequests are the requests of the unfinished MemberRuns listed by opts,
// in the members this replica serves.
func (r *MemberRunReconciler) runRequests(ctx context.Context, opts ...client.ListOption) []mcreconcile.Request {
	list := &fleetv1.MemberRunList{}
	if err := r.Hub.List(ctx, list, append(opts, client.UnsafeDisableDeepCopy)...); err != nil {
		log.FromContext(ctx).Error(err, "Listing MemberRuns")
		return nil
	}
	var out []mcreconcile.Request
	for i := range list.Items {
		if mr := &list.Items[i]; r.owns(mr.Spec.Cluster) && (!mr.Status.Phase.IsFinished() || !mr.DeletionTimestamp.IsZero()) {
			out = append(out, runRequest(mr.Namespace, mr.Name, mr.Spec.Cluster))
		}
	}
	return out
}

// toUnfinishedClusterJobs maps a change of the fleet's members (a cluster
// registered, connected, relabelled, lost) to every unfinished ClusterJob:
// a run waiting for a first cluster starts within seconds.
func (r *ClusterJobReconciler) toUnfinishedClusterJobs(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []mcreconcile.Request {
		return r.unfinished(ctx)
	})
}

// memberClusterChanged passes the MemberCluster changes that may change a
// run: created, deleted, relabelled, or connected, lost or refused. Not the
// inventory's periodic writes (node counts, probe times), each of which
// would wake every unfinished ClusterJob: a few a second at a thousand
// members.
func memberClusterChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*fleetv1.MemberCluster)
			cur, okNew := e.ObjectNew.(*fleetv1.MemberCluster)
			if !okOld || !okNew {
				return true
			}
			if !maps.Equal(old.Labels, cur.Labels) {
				return true
			}
			for _, t := range []string{fleetv1.MemberClusterConnected, fleetv1.MemberClusterReady} {
				a, b := meta.FindStatusCondition(old.Status.Conditions, t), meta.FindStatusCondition(cur.Status.Conditions, t)
				if (a == nil) != (b == nil) || a != nil && (a.Status != b.Status || a.Reason != b.Reason) {
					return true
				}
			}
			return false
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

func (r *shared) unfinished(ctx context.Context) []mcreconcile.Request {
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
