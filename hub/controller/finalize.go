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
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/spoke"
)

// finalize removes the run's Jobs and plans from every member it ran in,
// then lets the ClusterJob go. A member that stays unreachable holds it at
// most UnreachableTimeout from the deletion request; what it still holds is
// collected when it reconnects, as is anything in a member whose
// registration is gone.
func (r *Reconciler) finalize(ctx context.Context, cj *fleetv1.ClusterJob) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cj, Finalizer) {
		return ctrl.Result{}, nil
	}
	members := r.runMembers(cj)
	results := make([]cleanResult, len(members))
	r.forEach(len(members), func(i int) { results[i] = r.cleanMember(ctx, cj, members[i]) })
	var waiting, abandoned []string
	var wait time.Duration
	var errs []error
	for i, res := range results {
		switch {
		case res.err != nil:
			errs = append(errs, fmt.Errorf("cluster %s: %w", members[i].Name, res.err))
		case res.done:
		case res.left <= 0:
			abandoned = append(abandoned, members[i].Name)
		default:
			waiting = append(waiting, members[i].Name)
			wait = minPositive(wait, res.left)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if len(waiting) > 0 {
		// Job deletions in the members wake us; wait is the give-up deadline.
		log.FromContext(ctx).Info("Waiting for members to clean up", "clusters", waiting)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	patch := client.MergeFromWithOptions(cj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(cj, Finalizer)
	if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Patch(ctx, cj, patch) }); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	for _, name := range abandoned {
		r.Recorder.Eventf(cj, nil, corev1.EventTypeWarning, "CleanupAbandoned", "Delete",
			"cluster %s stayed unreachable for %s; its Jobs will be removed when it reconnects", name, r.Options.UnreachableTimeout)
	}
	return ctrl.Result{}, nil
}

// runMembers are the registered members the run may have touched: those in
// its status rows.
func (r *Reconciler) runMembers(cj *fleetv1.ClusterJob) []clusters.Member {
	var out []clusters.Member
	for _, row := range cj.Status.Clusters {
		if m, ok := r.Members.Member(row.Name); ok {
			out = append(out, m)
		}
	}
	return out
}

type cleanResult struct {
	done bool
	left time.Duration // how long the member may still hold the deletion
	err  error
}

// cleanMember deletes the run from one member.
func (r *Reconciler) cleanMember(ctx context.Context, cj *fleetv1.ClusterJob, m clusters.Member) cleanResult {
	left := cj.DeletionTimestamp.Add(r.Options.UnreachableTimeout).Sub(r.Clock.Now())
	cl, _, ok := r.member(ctx, cj, m)
	if !ok || !m.Reachable {
		return cleanResult{left: left}
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	done, err := spoke.Cleanup(ctx, cl.GetClient(), m.Namespace, cj.UID)
	return cleanResult{done: done, left: max(left, time.Second), err: err}
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || b < a {
		return b
	}
	return a
}
