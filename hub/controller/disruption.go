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
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/disruption"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/spoke"
)

// +kubebuilder:rbac:groups=fleetjob.io,resources=fleetdisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=fleetjob.io,resources=fleetdisruptionbudgets/status,verbs=get;update;patch

// disruptionKey is the ledger's key of a MemberRun.
func disruptionKey(mr *fleetv1.MemberRun) disruption.Key {
	return disruption.Key{Run: client.ObjectKeyFromObject(mr), ClusterJob: mr.Spec.ClusterJob, Cluster: mr.Spec.Cluster}
}

// disrupted is how many nodes a run disrupts in its member now: nodes it
// cordoned and drains, Jobs created and not finished, and nodes awaiting
// their health verdict.
func disrupted(st spoke.State) int {
	n := st.Draining()
	for _, g := range st.Groups {
		n += g.Running
	}
	return n
}

// observeDisruption tells the ledger what a disruptive run disrupts in its
// member, when this reconcile read it. A run that could not be read keeps
// its last count: nothing starts a node there without the hub, so the
// count can only be too high, never too low.
func (r *MemberRunReconciler) observeDisruption(cj *fleetv1.ClusterJob, mr *fleetv1.MemberRun, c member.Cluster) {
	if !cj.Spec.DisruptsNodes() || !c.Engaged || !c.Reachable || c.Error != nil || !c.State.Planned {
		return
	}
	r.ledger.Observe(disruptionKey(mr), disrupted(c.State))
}

// grantDisruption limits the group start decided to what the budgets
// selecting the cluster have room for, and reserves it. A cluster granted
// nothing starts nothing now; its row names the budget, and the ledger
// wakes it when room frees. A budget that cannot be read holds the start
// as an error of the cluster's work: retried, and failing the cluster past
// --member-error-timeout, so that no run waits on it forever; so does a
// grant a sharded hub could not share with its other replicas.
func (r *MemberRunReconciler) grantDisruption(ctx context.Context, cj *fleetv1.ClusterJob, mr *fleetv1.MemberRun, in *member.Input, d *member.Decision) {
	c := &in.Cluster
	if !cj.Spec.DisruptsNodes() || d.Start == member.NoGroup || d.DrainOnly {
		return
	}
	// Nodes under drain hold their room already: they go on whatever the
	// budgets say, and only the others ask for room.
	draining := c.State.Draining()
	caps, err := r.disruptionCaps(ctx, mr.Spec.Cluster)
	if err == nil && len(caps) == 0 {
		return // no budget selects the cluster
	}
	var standIns map[disruption.Key]int
	if err == nil {
		standIns, err = r.disruptionStandIns(ctx, caps)
	}
	if err != nil {
		c.Error, d.Start = err, member.NoGroup
		return
	}
	want := c.State.Groups[d.Start].Pending - draining
	g, err := r.ledger.Grant(ctx, disruption.Request{Key: disruptionKey(mr), Want: want, Caps: caps, StandIns: standIns})
	if err != nil {
		c.Error, d.Start = err, member.NoGroup
		return
	}
	d.Limit, d.Limited = g.Nodes, true
	if g.Nodes < want {
		c.BudgetHold, c.BudgetWaiting = g.Hold, want-g.Nodes
	}
	if g.Nodes == 0 && draining == 0 {
		d.Start = member.NoGroup
	}
}

// disruptionCaps are the limits of the budgets selecting cluster, from the
// hub's cache.
func (r *MemberRunReconciler) disruptionCaps(ctx context.Context, cluster string) ([]disruption.Cap, error) {
	var budgets fleetv1.FleetDisruptionBudgetList
	if err := r.Hub.List(ctx, &budgets); err != nil {
		return nil, fmt.Errorf("listing FleetDisruptionBudgets: %w", err)
	}
	if len(budgets.Items) == 0 {
		return nil, nil
	}
	clusters, err := r.disruptionClusters(ctx)
	if err != nil {
		return nil, err
	}
	return disruption.Caps(budgets.Items, cluster, clusters)
}

// disruptionClusters are the registered clusters as budgets read them:
// the registration Secrets' clusters and labels, as selection reads them,
// and the node counts their MemberClusters show (none yet: 0). Neither is
// this replica's registry, which on a sharded hub knows only the clusters
// it serves.
func (r *MemberRunReconciler) disruptionClusters(ctx context.Context) (map[string]disruption.Cluster, error) {
	var mcs fleetv1.MemberClusterList
	if err := r.Hub.List(ctx, &mcs, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing MemberClusters: %w", err)
	}
	nodes := make(map[string]int, len(mcs.Items))
	for i := range mcs.Items {
		if n := mcs.Items[i].Status.NodeCount; n != nil {
			nodes[mcs.Items[i].Name] = int(*n)
		}
	}
	secrets, err := r.registrations(ctx)
	if err != nil {
		return nil, err
	}
	clusters := make(map[string]disruption.Cluster, len(secrets))
	for _, s := range secrets {
		clusters[s.Name] = disruption.Cluster{Labels: s.Labels, Nodes: nodes[s.Name]}
	}
	return clusters, nil
}

// disruptionStandIns are the disrupted nodes of the unfinished disruptive
// runs in the budgets' clusters that the ledger has not observed since the
// hub started, as their last written rows say: after a restart, a budget
// is not granted as if they disrupted nothing.
func (r *MemberRunReconciler) disruptionStandIns(ctx context.Context, caps []disruption.Cap) (map[disruption.Key]int, error) {
	var runs fleetv1.MemberRunList
	if err := r.Hub.List(ctx, &runs, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing MemberRuns: %w", err)
	}
	inScope := func(cluster string) bool {
		for _, c := range caps {
			if c.Clusters[cluster] {
				return true
			}
		}
		return false
	}
	standIns := map[disruption.Key]int{}
	for i := range runs.Items {
		mr := &runs.Items[i]
		k := disruptionKey(mr)
		if mr.Status.Phase.IsFinished() || mr.Status.Nodes.Running == 0 || !inScope(mr.Spec.Cluster) || r.ledger.Observed(k) {
			continue
		}
		cj := &fleetv1.ClusterJob{}
		err := r.Hub.Get(ctx, types.NamespacedName{Namespace: mr.Namespace, Name: mr.Spec.ClusterJob}, cj, client.UnsafeDisableDeepCopy)
		if client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("reading ClusterJob %s/%s: %w", mr.Namespace, mr.Spec.ClusterJob, err)
		}
		if err == nil && string(cj.UID) == mr.Spec.ClusterJobUID && cj.Spec.DisruptsNodes() {
			standIns[k] = int(mr.Status.Nodes.Running)
		}
	}
	return standIns, nil
}

// budgetRelay wakes the MemberRuns a disruption budget held back when
// room may have freed: a node of any disruptive run finished, a run ended,
// or a budget changed. It is how a held group starts within seconds
// without polling.
type budgetRelay struct {
	ledger *disruption.Ledger
	runs   chan<- event.TypedGenericEvent[client.Object]
	// everyReplica runs the relay on every replica of a sharded hub.
	everyReplica bool
}

// Start relays until ctx ends.
func (b *budgetRelay) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-b.ledger.Freed():
			for _, k := range b.ledger.Waiting() {
				mr := &fleetv1.MemberRun{Spec: fleetv1.MemberRunSpec{Cluster: k.Cluster}}
				mr.Namespace, mr.Name = k.Run.Namespace, k.Run.Name
				select {
				case b.runs <- event.TypedGenericEvent[client.Object]{Object: mr}:
				case <-ctx.Done():
					return nil
				}
			}
		}
	}
}

// NeedLeaderElection: only the leader starts nodes, unless sharded: then
// every replica starts those of the members it serves, and its ledger is
// its own.
func (b *budgetRelay) NeedLeaderElection() bool { return !b.everyReplica }

// toHeldRuns wakes, through the budget relay, the runs a budget held back
// when any FleetDisruptionBudget changes: a cap raised or a budget deleted
// may give them room.
func (r *MemberRunReconciler) toHeldRuns(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(context.Context, client.Object) []mcreconcile.Request {
		r.ledger.Wake()
		return nil
	})
}

// Status writes of the FleetDisruptionBudgets: after a change of the
// ledger, at most once per budgetStatusInterval, so that a fleet of runs
// changing every second costs one write per budget every few seconds; and
// every budgetStatusResync, for clusters registered or relabelled since.
const (
	budgetStatusInterval = 2 * time.Second
	budgetStatusResync   = 30 * time.Second
)

// budgetStatus writes what the ledger counts into each
// FleetDisruptionBudget's status, so that `kubectl get fdb` shows how many
// nodes are disrupted under each and how many runs wait for it.
type budgetStatus struct{ r *MemberRunReconciler }

// Start writes until ctx ends.
func (b *budgetStatus) Start(ctx context.Context) error {
	resync := time.NewTicker(budgetStatusResync)
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-b.r.ledger.Changed():
		case <-resync.C:
		}
		b.write(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(budgetStatusInterval):
		}
	}
}

// write counts every budget and patches the status of those whose count
// changed. A budget that cannot be counted (an unreadable selector) keeps
// its last status: the rows of the clusters it holds say why.
func (b *budgetStatus) write(ctx context.Context) {
	r := b.r
	var budgets fleetv1.FleetDisruptionBudgetList
	if err := r.Hub.List(ctx, &budgets); err != nil || len(budgets.Items) == 0 {
		return
	}
	clusters, err := r.disruptionClusters(ctx)
	if err != nil {
		return
	}
	if err := r.ledger.Refresh(ctx); err != nil {
		// The other replicas' counts as last read: the next change or
		// resync counts them again.
		log.FromContext(ctx).V(1).Info("Reading the other hub replicas' disruption counts", "error", err.Error())
	}
	snap := r.ledger.Snapshot()
	for i := range budgets.Items {
		fdb := &budgets.Items[i]
		st, err := disruption.Status(fdb, clusters, snap)
		if err != nil || st == fdb.Status {
			continue
		}
		patch := client.MergeFrom(fdb.DeepCopy())
		fdb.Status = st
		if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Status().Patch(ctx, fdb, patch) }); client.IgnoreNotFound(err) != nil {
			log.FromContext(ctx).Error(err, "Writing the status of a FleetDisruptionBudget", "budget", fdb.Name)
		}
	}
}

// NeedLeaderElection: the ledger counts on the leader only.
func (b *budgetStatus) NeedLeaderElection() bool { return true }
