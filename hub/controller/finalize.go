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

// finalize removes the run's Jobs and plans from every member it ran in,
// then lets the ClusterJob go. Every member, reachable or not, may hold the
// deletion at most UnreachableTimeout from the deletion request; what is
// left then is named in a Warning event, and garbage collection removes it
// when it can.
func (r *Reconciler) finalize(ctx context.Context, cj *fleetv1.ClusterJob) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cj, Finalizer) {
		return ctrl.Result{}, nil
	}
	members := r.runMembers(cj)
	results := make([]cleanResult, len(members))
	r.forEach(len(members), func(i int) { results[i] = r.cleanMember(ctx, cj, members[i]) })
	deadline := cj.DeletionTimestamp.Add(r.Options.UnreachableTimeout)
	now := r.Clock.Now()
	var waiting, abandoned []string
	for i, res := range results {
		switch {
		case res.done():
		case now.Before(deadline):
			waiting = append(waiting, members[i].Name)
		default:
			abandoned = append(abandoned, fmt.Sprintf("cluster %s: %s", members[i].Name, res))
		}
	}
	if len(waiting) > 0 {
		log.FromContext(ctx).Info("Waiting for members to clean up", "clusters", waiting, "deadline", deadline)
		return ctrl.Result{RequeueAfter: min(deadline.Sub(now), cleanupRetry)}, nil
	}
	patch := client.MergeFromWithOptions(cj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(cj, Finalizer)
	if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Patch(ctx, cj, patch) }); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	for _, what := range abandoned {
		r.Recorder.Eventf(cj, nil, corev1.EventTypeWarning, "CleanupAbandoned", "Delete", "%s",
			text.Truncate(fmt.Sprintf("deletion deadline of %s passed; %s", r.Options.UnreachableTimeout, what), text.MaxEventNote))
	}
	return ctrl.Result{}, nil
}

// runMembers are the registered members the run may have touched: those of
// its status rows that started, and any reachable one (a plan may have been
// stored just before a status write was lost). A cluster that never started
// and cannot be reached now, such as a refused duplicate registration, does
// not hold the deletion: garbage collection covers it when it connects.
func (r *Reconciler) runMembers(cj *fleetv1.ClusterJob) []clusters.Member {
	var out []clusters.Member
	for _, row := range cj.Status.Clusters {
		if m, ok := r.Members.Member(row.Name); ok && (row.StartTime != nil || m.Engaged && m.Reachable) {
			out = append(out, m)
		}
	}
	return out
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
func (r *Reconciler) cleanMember(ctx context.Context, cj *fleetv1.ClusterJob, m clusters.Member) cleanResult {
	cl, _, ok := r.member(ctx, cj, m)
	if !ok || !m.Reachable {
		return cleanResult{}
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	left, err := spoke.Cleanup(ctx, cl.GetClient(), m.Namespace, cj.UID, r.Options.HubID)
	return cleanResult{reached: true, left: left, err: err}
}
