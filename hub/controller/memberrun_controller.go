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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/fleet"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// memberRunScope is what one MemberRun reconcile works on: the MemberRun
// and its ClusterJob, fetched from the hub's cache.
type memberRunScope struct {
	key types.NamespacedName
	mr  *fleetv1.MemberRun
	cj  *fleetv1.ClusterJob
}

// reconcileMemberRun runs one ClusterJob in one member: it fetches the
// MemberRun and its ClusterJob from the hub's cache, observes that member
// only, decides, acts, writes the MemberRun's status once, then records
// the events.
func (r *MemberRunReconciler) reconcileMemberRun(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	ctx, s, res, err := r.fetchMemberRun(ctx, req)
	if s == nil {
		return res, err
	}
	in, decision, notes := r.actInMember(ctx, s)
	row, results, requeue := r.memberRunRow(ctx, s, &in, decision)
	exceeded := row.Reason == fleetv1.ReasonFailureBudgetExceeded && s.mr.Status.Reason != fleetv1.ReasonFailureBudgetExceeded
	notes = append(r.held.take(s.key), notes...)
	if err := r.writeRunStatus(ctx, s.mr, row, results); err != nil {
		r.held.hold(s.key, notes)
		if apierrors.IsConflict(err) {
			log.FromContext(ctx).V(1).Info("Writing status lost a race; retrying")
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	r.memberRunWritten(s, in, row, exceeded, notes)
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// fetchMemberRun reads the MemberRun of req and its ClusterJob, and deals
// with every MemberRun that is not to be run now: one another replica
// serves, one being deleted, refused, or finished. It returns a scope only
// for a run to go on with, and the context with the run's log values.
func (r *MemberRunReconciler) fetchMemberRun(ctx context.Context, req mcreconcile.Request) (context.Context, *memberRunScope, ctrl.Result, error) {
	key := req.NamespacedName
	if !r.owns(string(req.ClusterName)) {
		// Another replica serves the cluster and writes the run's row;
		// what this one kept of the run (a disruption grant, a held note)
		// goes, or its budget would stay taken here.
		r.ledger.Forget(key)
		r.held.take(key)
		return ctx, nil, ctrl.Result{}, nil
	}
	r.pace.reconciling(key)
	mr := &fleetv1.MemberRun{}
	if err := r.Hub.Get(ctx, key, mr); err != nil {
		if apierrors.IsNotFound(err) {
			r.held.take(key)
			r.ledger.Forget(key)
		}
		return ctx, nil, ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("memberrun", key, "cluster", mr.Spec.Cluster))
	cj, why, err := r.ownerRun(ctx, mr)
	if err != nil {
		return ctx, nil, ctrl.Result{}, err
	}
	if !mr.DeletionTimestamp.IsZero() {
		r.ledger.Forget(key)
		// A run an older hub started is the fleet's though its selection
		// is not recorded yet: its name and UID say whose it is.
		res, err := r.finalizeMemberRun(ctx, mr, why == "" || why == fleetv1.ReasonAwaitingSelection)
		return ctx, nil, res, err
	}
	if why != "" && why != fleetv1.ReasonAwaitingSelection {
		r.ledger.Forget(key)
		res, err := r.refuseRun(ctx, mr, why)
		return ctx, nil, res, err
	}
	if mr.Status.Phase.IsFinished() || cj.Status.Phase.IsFinished() || !cj.DeletionTimestamp.IsZero() {
		r.ledger.Forget(key)
		r.emitNotes(cj, mr.Spec.Cluster, r.held.take(key))
		return ctx, nil, ctrl.Result{}, nil // a finished run is a record; a deleted one is cleaned up
	}
	if why != "" {
		res, err := r.refuseRun(ctx, mr, why)
		return ctx, nil, res, err
	}
	return ctx, &memberRunScope{key: key, mr: mr, cj: cj}, ctrl.Result{}, nil
}

// actInMember observes the run's member, decides (member.Decide, with the
// disruption budgets' grant) and acts there; the notes are the events of
// what it did.
func (r *MemberRunReconciler) actInMember(ctx context.Context, s *memberRunScope) (member.Input, member.Decision, []note) {
	c := r.observeCluster(ctx, s.cj, s.mr.Spec.Cluster, previousRow(s.cj, s.mr))
	c.RetryOf = s.mr.Spec.RetryOf
	in := r.memberInput(s.cj, s.mr, c)
	if in.Cluster.State.Planned {
		r.pace.planned(s.key, in.Cluster.State.Plan.NodeCount())
	}
	r.observeDisruption(s.cj, s.mr, in.Cluster)
	decision := member.Decide(in)
	r.grantDisruption(ctx, s.cj, s.mr, &in, &decision)
	notes := r.act(ctx, s.cj, &in.Cluster, decision)
	return in, decision, notes
}

// memberRunRow is the MemberRun's status after act: its row (drained
// nodes released when the run ends), the node results it publishes, and
// when to look again. After act: what act failed at is retried too.
func (r *MemberRunReconciler) memberRunRow(ctx context.Context, s *memberRunScope, in *member.Input, decision member.Decision) (fleetv1.ClusterStatus, *fleetv1.NodeResults, time.Duration) {
	requeue := member.RequeueAfter(*in)
	row := member.Status(*in, decision)
	if row.Phase.IsFinished() && s.cj.Spec.Drains() {
		row, requeue = r.releaseAtEnd(ctx, s.cj, in, decision, row, requeue)
	}
	results, publishWait := nodeResults(s.mr.Status.NodeResults, in.Cluster.State, row, r.Clock.Now())
	if publishWait > 0 && s.mr.Status.Name != "" && member.OnlySucceeded(s.mr.Status.ClusterStatus, row) {
		// Nodes that succeeded wait for the next publication of the
		// results (within publishInterval): a busy member would otherwise
		// patch its MemberRun, and the ClusterJob after it, every reconcile.
		row = s.mr.Status.ClusterStatus
	}
	if publishWait > 0 && (requeue == 0 || publishWait < requeue) {
		requeue = publishWait
	}
	return row, results, requeue
}

// memberRunWritten does what follows a status write: a finished run's
// state forgotten and its last group observed (once: the write that
// finished the row won its optimistic lock), the metrics, and the events.
func (r *MemberRunReconciler) memberRunWritten(s *memberRunScope, in member.Input, row fleetv1.ClusterStatus, exceeded bool, notes []note) {
	if row.Phase.IsFinished() {
		// Never reconciled again but to be deleted.
		r.starts.forget(watchKey(s.mr.Spec.ClusterJobUID, s.mr.Spec.Cluster))
		r.caches().Forget(types.UID(s.mr.Spec.ClusterJobUID), s.mr.Spec.Cluster)
		r.ledger.Forget(s.key)
		observeLastGroup(in.Cluster.State)
	}
	if exceeded {
		budgetsExceeded.WithLabelValues(fleet.ScopeCluster, onExceeded(s.cj)).Inc()
	}
	if left := in.Cluster.StartTimedOut; len(left) > 0 && row.Phase.IsFinished() {
		notes = append(notes, note{corev1.EventTypeWarning, fleetv1.ReasonJobsLeftBehind, fmt.Sprintf(
			"cluster %s ended with %d Jobs of nodes the hub failed still there, past the deletion deadline: %s; delete them by hand so that no late pod runs the node",
			s.mr.Spec.Cluster, len(left), strings.Join(left[:min(len(left), 5)], ", "))})
	}
	r.emitNotes(s.cj, s.mr.Spec.Cluster, notes)
}

// clusterJobOf is the MemberRun's ClusterJob from the cache, or nil when it
// is gone or another ClusterJob now has its name. Absence is confirmed with
// the hub's API server: a ClusterJob created a moment ago may not be cached.
func (r *MemberRunReconciler) clusterJobOf(ctx context.Context, mr *fleetv1.MemberRun) (*fleetv1.ClusterJob, error) {
	key := types.NamespacedName{Namespace: mr.Namespace, Name: mr.Spec.ClusterJob}
	cj := &fleetv1.ClusterJob{}
	err := r.Hub.Get(ctx, key, cj)
	if apierrors.IsNotFound(err) {
		ctx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
		defer cancel()
		err = r.HubReader.Get(ctx, key, cj)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading ClusterJob %s: %w", key, err)
	case string(cj.UID) != mr.Spec.ClusterJobUID:
		return nil, nil
	}
	return cj, nil
}

// awaitSelection is how often a MemberRun whose ClusterJob has not recorded
// its selected clusters is looked at again: the fleet reconciler records
// them at once for a run an older hub started, and a status write of the
// ClusterJob does not wake the member reconciler.
const awaitSelection = 5 * time.Second

// ownerRun is the MemberRun's ClusterJob and why the hub does not run it,
// "" when it does: the fleet created it for a cluster its ClusterJob (by
// UID) selected, under the one name the hub gives it (fromFleet). A
// selection the cache does not show yet is read from the hub's API server:
// the fleet records it just before it creates the MemberRuns.
func (r *MemberRunReconciler) ownerRun(ctx context.Context, mr *fleetv1.MemberRun) (*fleetv1.ClusterJob, string, error) {
	cj, err := r.clusterJobOf(ctx, mr)
	if err != nil || cj == nil {
		return nil, fleetv1.ReasonClusterJobNotFound, err
	}
	why := fromFleet(cj, mr)
	if why == "" && len(cj.Status.SelectedClusters) == 0 {
		why = fleetv1.ReasonAwaitingSelection
	}
	if why != fleetv1.ReasonNotSelected && why != fleetv1.ReasonAwaitingSelection {
		return cj, why, nil
	}
	ctx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
	defer cancel()
	fresh := &fleetv1.ClusterJob{}
	switch err := r.HubReader.Get(ctx, client.ObjectKeyFromObject(cj), fresh); {
	case apierrors.IsNotFound(err):
		return nil, fleetv1.ReasonClusterJobNotFound, nil
	case err != nil:
		return nil, "", fmt.Errorf("reading ClusterJob %s: %w", cj.Name, err)
	case fresh.UID != cj.UID:
		return nil, fleetv1.ReasonClusterJobNotFound, nil
	}
	why = fromFleet(fresh, mr)
	if why == "" && len(fresh.Status.SelectedClusters) == 0 {
		why = fleetv1.ReasonAwaitingSelection
	}
	return fresh, why, nil
}

// refuseRun says on the MemberRun why the hub does not run it, and does
// nothing else: no member is read or written for it.
func (r *MemberRunReconciler) refuseRun(ctx context.Context, mr *fleetv1.MemberRun, why string) (ctrl.Result, error) {
	var msg string
	switch why {
	case fleetv1.ReasonClusterJobNotFound:
		msg = fmt.Sprintf("no ClusterJob %s with UID %s in this namespace: the hub neither runs nor cleans up for this MemberRun", mr.Spec.ClusterJob, mr.Spec.ClusterJobUID)
	case fleetv1.ReasonDuplicateMemberRun:
		msg = fmt.Sprintf("the MemberRun of ClusterJob %s in cluster %s is %s; this copy is neither run nor cleaned up for",
			mr.Spec.ClusterJob, mr.Spec.Cluster, naming.MemberRunName(mr.Spec.ClusterJob, mr.Spec.Cluster))
	case fleetv1.ReasonNotSelected:
		msg = fmt.Sprintf("ClusterJob %s did not select cluster %s (status.selectedClusters): only the hub creates MemberRuns, for the clusters it selected", mr.Spec.ClusterJob, mr.Spec.Cluster)
	default:
		msg = fmt.Sprintf("ClusterJob %s has not recorded its selected clusters yet", mr.Spec.ClusterJob)
	}
	status := mr.Status.DeepCopy()
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: fleetv1.ConditionAccepted, Status: metav1.ConditionFalse,
		Reason: why, Message: msg, ObservedGeneration: mr.Generation, LastTransitionTime: metav1.NewTime(r.Clock.Now())})
	var requeue time.Duration
	if why == fleetv1.ReasonAwaitingSelection {
		requeue = awaitSelection
	}
	if apiequality.Semantic.DeepEqual(&mr.Status, status) {
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	log.FromContext(ctx).Info("Not running a MemberRun the fleet did not create", "reason", why)
	patch := client.MergeFromWithOptions(mr.DeepCopy(), client.MergeFromWithOptimisticLock{})
	mr.Status = *status
	if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Status().Patch(ctx, mr, patch) }); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

func (r *MemberRunReconciler) memberInput(cj *fleetv1.ClusterJob, mr *fleetv1.MemberRun, c member.Cluster) member.Input {
	return member.Input{
		Spec: &cj.Spec, Cluster: c, Admitted: mr.Spec.Admitted, Halt: mr.Spec.Halt, AcceptedFailures: int(mr.Spec.AcceptedFailures), Now: r.Clock.Now(),
		UnreachableTimeout:   r.Options.UnreachableTimeout,
		NodeStartTimeout:     nodeStartTimeout(cj),
		MemberErrorTimeout:   r.Options.MemberErrorTimeout,
		ConnectingGraceUntil: r.startedAt.Add(r.Options.ConnectTimeout),
	}
}

// previousRow is the MemberRun's last written row; before the first, the
// row an older hub wrote for its cluster in the ClusterJob's
// status.clusters, whose run this one follows; else nil.
func previousRow(cj *fleetv1.ClusterJob, mr *fleetv1.MemberRun) *fleetv1.ClusterStatus {
	if mr.Status.Name == "" {
		if old := legacyRow(cj, mr.Spec.Cluster); old != nil {
			row := *old.DeepCopy()
			return &row
		}
		return nil
	}
	row := mr.Status.ClusterStatus
	return &row
}

// writeRunStatus patches the MemberRun's status with an optimistic lock,
// and not at all when nothing changed.
func (r *MemberRunReconciler) writeRunStatus(ctx context.Context, mr *fleetv1.MemberRun, row fleetv1.ClusterStatus, results *fleetv1.NodeResults) error {
	status := *mr.Status.DeepCopy()
	status.SetRow(row)
	status.NodeResults = results
	status.ObservedGeneration = mr.Generation
	meta.RemoveStatusCondition(&status.Conditions, fleetv1.ConditionAccepted) // it runs now
	if apiequality.Semantic.DeepEqual(mr.Status, status) {
		return nil
	}
	patch := client.MergeFromWithOptions(mr.DeepCopy(), client.MergeFromWithOptimisticLock{})
	mr.Status = status
	if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Status().Patch(ctx, mr, patch) }); err != nil {
		return fmt.Errorf("writing MemberRun status: %w", err)
	}
	return nil
}

// releaseAtEnd releases every node the run cordoned in the cluster before
// its row says the run ended there: once ended, it is never reconciled
// again. While some are left, the row stays as it was with the error, and
// the release is retried; past --member-error-timeout the cluster fails
// anyway, and the nodes left cordoned are named in an event.
func (r *MemberRunReconciler) releaseAtEnd(ctx context.Context, cj *fleetv1.ClusterJob, in *member.Input, d member.Decision, row fleetv1.ClusterStatus, requeue time.Duration) (fleetv1.ClusterStatus, time.Duration) {
	left, err := r.releaseNodes(ctx, cj, &in.Cluster, true)
	if left == 0 && err == nil {
		return row, requeue
	}
	if err == nil {
		err = fmt.Errorf("%d nodes the run cordoned are still to uncordon", left)
	}
	in.Cluster.Error = err
	again := member.Status(*in, d)
	if again.Phase.IsFinished() {
		r.emitNotes(cj, in.Cluster.Name, []note{{corev1.EventTypeWarning, fleetv1.EventReasonNodesLeftCordoned, fmt.Sprintf(
			"cluster %s ended with %d nodes the run cordoned still cordoned: %v; uncordon them by hand (kubectl uncordon)", in.Cluster.Name, left, err)}})
		return again, requeue
	}
	return again, member.RequeueAfter(*in)
}
