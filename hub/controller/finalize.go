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

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/pkg/text"
	"github.com/fleetjob/fleetjob/spoke"
)

// cleanupRetry is how often a deletion that is not done re-issues its
// deletes: Job deletions in members wake the reconciler anyway, so this only
// paces a member whose cleanup is stuck (a foreign finalizer, a revoked
// permission) until the deadline.
const cleanupRetry = 5 * time.Second

// finalizeMemberRun removes the run's Jobs and plans from the MemberRun's
// member, then lets the MemberRun go. The member, reachable or not, may hold
// the deletion at most UnreachableTimeout from the deletion request; what is
// left then is named in a Warning event, and garbage collection removes it
// when it can. A cluster that never started and cannot be reached now, such
// as a refused duplicate registration, does not hold it: garbage collection
// covers it when it connects. A MemberRun the fleet did not create (ours
// false) is let go without a call to any member: its finalizer and UID are
// not the hub's to act on, and the run of a ClusterJob that is gone is
// garbage collection's.
func (r *MemberRunReconciler) finalizeMemberRun(ctx context.Context, mr *fleetv1.MemberRun, ours bool) (ctrl.Result, error) {
	if ours {
		// A copy naming the run's UID must not reset the run's bounds.
		r.starts.forget(watchKey(mr.Spec.ClusterJobUID, mr.Spec.Cluster))
		r.caches().Forget(types.UID(mr.Spec.ClusterJobUID), mr.Spec.Cluster)
	}
	if !controllerutil.ContainsFinalizer(mr, Finalizer) {
		return ctrl.Result{}, nil
	}
	var res cleanResult
	m, registered := r.Members.Member(mr.Spec.Cluster)
	touched := ours && registered && (mr.Status.StartTime != nil || m.Engaged && m.Reachable)
	if touched {
		res = r.cleanMember(ctx, types.UID(mr.Spec.ClusterJobUID), m)
	}
	deadline := mr.DeletionTimestamp.Add(r.Options.UnreachableTimeout)
	now := r.Clock.Now()
	if touched && !res.done() && now.Before(deadline) {
		log.FromContext(ctx).Info("Waiting for the member to clean up", "deadline", deadline, "result", res.String())
		return ctrl.Result{RequeueAfter: min(deadline.Sub(now), cleanupRetry)}, nil
	}
	patch := client.MergeFromWithOptions(mr.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(mr, Finalizer)
	if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Patch(ctx, mr, patch) }); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if touched && !res.done() && r.Recorder != nil {
		// The ClusterJob waits for its MemberRuns, so it is still there
		// to tell; the MemberRun is about to go.
		var about client.Object = mr
		if cj, _ := r.clusterJobOf(ctx, mr); cj != nil {
			about = cj
		}
		r.Recorder.Eventf(about, nil, corev1.EventTypeWarning, fleetv1.EventReasonCleanupAbandoned, eventAction("Delete", mr.Spec.Cluster), "%s",
			text.Truncate(fmt.Sprintf("deletion deadline of %s passed; cluster %s: %s", r.Options.UnreachableTimeout, mr.Spec.Cluster, res), text.MaxEventNote))
	}
	return ctrl.Result{}, nil
}

// cleanResult is one member's cleanup this reconcile.
type cleanResult struct {
	reached bool
	left    spoke.Leftovers
	err     error
}

func (c cleanResult) done() bool { return c.reached && c.err == nil && c.left.None() }

// String says what is left and why, for the Warning event.
func (c cleanResult) String() string {
	switch {
	case !c.reached:
		return "unreachable; what the run left there is collected when it reconnects"
	case c.err != nil:
		return "cleaning up failed: " + c.err.Error()
	}
	return c.left.String() + " left behind (held by a finalizer?); garbage collection keeps deleting them"
}

// cleanMember deletes the run from one member.
func (r *MemberRunReconciler) cleanMember(ctx context.Context, uid types.UID, m clusters.Member) cleanResult {
	cl, ok := r.engaged(ctx, m)
	if !ok || !m.Reachable {
		return cleanResult{}
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	left, err := spoke.Cleanup(ctx, cl.GetClient(), cl.GetAPIReader(), m.Namespace, uid, r.Options.HubID)
	return cleanResult{reached: true, left: left, err: err}
}
