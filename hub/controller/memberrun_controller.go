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

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/fleet"
	"github.com/fleetjob/fleetjob/hub/member"
)

// reconcileMemberRun runs one ClusterJob in one member: it fetches the
// MemberRun and its ClusterJob from the hub's cache, observes that member
// only, decides, acts, and writes the MemberRun's status once.
func (r *Reconciler) reconcileMemberRun(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	r.pace.reconciling(req.NamespacedName)
	mr := &fleetv1.MemberRun{}
	if err := r.Hub.Get(ctx, req.NamespacedName, mr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("memberrun", req.NamespacedName, "cluster", mr.Spec.Cluster))
	if !mr.DeletionTimestamp.IsZero() {
		return r.finalizeMemberRun(ctx, mr)
	}
	cj, err := r.clusterJobOf(ctx, mr)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cj == nil {
		// Its ClusterJob is gone (or is another one under the same name):
		// nothing will ever delete it but us.
		log.FromContext(ctx).Info("Deleting a MemberRun whose ClusterJob is gone")
		return ctrl.Result{}, client.IgnoreNotFound(r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Delete(ctx, mr) }))
	}
	if mr.Status.Phase.IsFinished() || cj.Status.Phase.IsFinished() || !cj.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // a finished run is a record; a deleted one is cleaned up
	}
	c := r.observeCluster(ctx, cj, mr.Spec.Cluster, previousRow(mr))
	c.RetryOf = mr.Spec.RetryOf
	in := r.memberInput(cj, mr, c)
	if in.Cluster.State.Planned {
		r.pace.planned(req.NamespacedName, in.Cluster.State.Plan.NodeCount())
	}
	decision := member.Decide(in)
	notes := r.act(ctx, cj, &in.Cluster, decision)
	// After act: what it failed at is retried too.
	requeue := member.RequeueAfter(in)
	row := member.Status(in, decision)
	exceeded := row.Reason == fleetv1.ReasonFailureBudgetExceeded && mr.Status.Reason != fleetv1.ReasonFailureBudgetExceeded
	if err := r.writeRunStatus(ctx, mr, row); err != nil {
		if apierrors.IsConflict(err) {
			log.FromContext(ctx).V(1).Info("Writing status lost a race; retrying")
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if row.Phase.IsFinished() {
		r.starts.forget(watchKey(mr.Spec.ClusterJobUID, mr.Spec.Cluster)) // never reconciled again but to be deleted
	}
	if exceeded {
		budgetsExceeded.WithLabelValues(fleet.ScopeCluster, onExceeded(cj)).Inc()
	}
	r.emitNotes(cj, notes)
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// clusterJobOf is the MemberRun's ClusterJob from the cache, or nil when it
// is gone or another ClusterJob now has its name. Absence is confirmed with
// the hub's API server: a ClusterJob created a moment ago may not be cached.
func (r *Reconciler) clusterJobOf(ctx context.Context, mr *fleetv1.MemberRun) (*fleetv1.ClusterJob, error) {
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

func (r *Reconciler) memberInput(cj *fleetv1.ClusterJob, mr *fleetv1.MemberRun, c member.Cluster) member.Input {
	return member.Input{
		Spec: &cj.Spec, Cluster: c, Admitted: mr.Spec.Admitted, Halt: mr.Spec.Halt, AcceptedFailures: int(mr.Spec.AcceptedFailures), Now: r.Clock.Now(),
		UnreachableTimeout:   r.Options.UnreachableTimeout,
		NodeStartTimeout:     nodeStartTimeout(cj),
		MemberErrorTimeout:   r.Options.MemberErrorTimeout,
		ConnectingGraceUntil: r.startedAt.Add(r.Options.ConnectTimeout),
	}
}

// previousRow is the MemberRun's last written row, nil before the first.
func previousRow(mr *fleetv1.MemberRun) *fleetv1.ClusterStatus {
	if mr.Status.Name == "" {
		return nil
	}
	row := mr.Status.ClusterStatus
	return &row
}

// writeRunStatus patches the MemberRun's status with an optimistic lock,
// and not at all when nothing changed.
func (r *Reconciler) writeRunStatus(ctx context.Context, mr *fleetv1.MemberRun, row fleetv1.ClusterStatus) error {
	status := mr.Status
	status.SetRow(row)
	status.ObservedGeneration = mr.Generation
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
