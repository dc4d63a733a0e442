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
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/fleet"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/spoke"
)

// retryTargets are the clusters of a retry: its parent's, or refused says
// why the parent cannot be retried.
func (r *ClusterJobReconciler) retryTargets(ctx context.Context, cj *fleetv1.ClusterJob) (targets []fleet.RetryTarget, parent *fleetv1.ClusterJob, refused string, err error) {
	if parent, err = r.parentOf(ctx, cj); err != nil {
		return nil, nil, "", err
	}
	var parentRuns []fleetv1.MemberRun
	if parent != nil && parent.Status.Phase.IsFinished() {
		if parentRuns, err = r.memberRuns(ctx, parent); err != nil {
			return nil, nil, "", err
		}
	}
	targets, refused = fleet.RetryTargets(&cj.Spec, cj.Namespace, parent, fleetRuns(parent, parentRuns))
	return targets, parent, refused, nil
}

// selectRetry selects a retry's clusters: its parent's, each MemberRun
// naming the parent's run there. refused says why the parent cannot be
// retried; nothing is selected then.
func (r *ClusterJobReconciler) selectRetry(ctx context.Context, cj *fleetv1.ClusterJob) (names []string, refused string, err error) {
	targets, _, refused, err := r.retryTargets(ctx, cj)
	if err != nil || refused != "" {
		return nil, refused, err
	}
	if refused, err := r.unboundTarget(ctx, cj.Namespace, targets); err != nil || refused != "" {
		return nil, refused, err
	}
	for _, t := range targets {
		names = append(names, t.Cluster)
	}
	slices.Sort(names)
	return names, "", nil
}

// setRetryOf sets, on the MemberRuns of a retry about to be created, the
// parent's run in their cluster. A cluster an older hub started has its
// plan already: it needs no parent's.
func (r *ClusterJobReconciler) setRetryOf(ctx context.Context, cj *fleetv1.ClusterJob, runs []fleetv1.MemberRun) error {
	started := func(mr *fleetv1.MemberRun) bool {
		old := legacyRow(cj, mr.Spec.Cluster)
		return old != nil && old.StartTime != nil
	}
	if cj.Spec.RetryOf == nil || !slices.ContainsFunc(runs, func(mr fleetv1.MemberRun) bool { return !started(&mr) }) {
		return nil
	}
	targets, parent, refused, err := r.retryTargets(ctx, cj)
	switch {
	case err != nil:
		return err
	case refused != "":
		return errors.New(refused)
	}
	for i := range runs {
		if started(&runs[i]) {
			continue
		}
		j := slices.IndexFunc(targets, func(t fleet.RetryTarget) bool { return t.Cluster == runs[i].Spec.Cluster })
		if j < 0 {
			return fmt.Errorf("cluster %s is no longer a cluster of the parent run %s", runs[i].Spec.Cluster, parent.Name)
		}
		runs[i].Spec.RetryOf = &fleetv1.MemberRetry{ClusterJob: parent.Name, ClusterJobUID: string(parent.UID), Unreachable: targets[j].Unreachable}
	}
	return nil
}

// unboundTarget names a cluster of a retry that is, now, in a cluster set
// not bound to the retry's namespace (tenancy on): a binding removed since
// the parent ran must not be outlived by retrying it. "" when there is
// none. The set is read from the cluster's registration Secret, not the
// registry, which may not know the cluster yet (the hub just started, a
// cluster re-registered into another set): a cluster whose registration
// is gone is refused, and one that cannot be read is an error, retried.
func (r *ClusterJobReconciler) unboundTarget(ctx context.Context, namespace string, targets []fleet.RetryTarget) (string, error) {
	if !r.Options.Tenancy {
		return "", nil
	}
	sets, err := r.boundSets(ctx, namespace)
	if err != nil {
		return "", err
	}
	for _, t := range targets {
		secret := &corev1.Secret{}
		err := r.Hub.Get(ctx, client.ObjectKey{Namespace: r.Options.RegistrationNamespace, Name: t.Cluster}, secret)
		switch {
		case apierrors.IsNotFound(err) || err == nil && (!secret.DeletionTimestamp.IsZero() || secret.Labels[fleetv1.RegistrationLabel] != "true"):
			return fmt.Sprintf("spec.retryOf.name: cluster %s of the parent run is not registered now (no registration Secret %s/%s): "+
				"a retry runs only in registered clusters of the cluster sets bound to namespace %s; name the others in spec.retry.clusters", t.Cluster, r.Options.RegistrationNamespace, t.Cluster, namespace), nil
		case err != nil:
			return "", fmt.Errorf("reading the registration of cluster %s: %w", t.Cluster, err)
		}
		if set := fleetv1.SetOf(secret.Labels); !slices.Contains(sets, set) {
			return fmt.Sprintf("spec.retryOf.name: cluster %s of the parent run is in cluster set %s, which is not bound to namespace %s", t.Cluster, set, namespace), nil
		}
	}
	return "", nil
}

// parentOf is the ClusterJob a retry names, nil when there is none. A
// parent the cache shows missing or still running is read again from the
// hub's API server: a retry made the moment its parent ended must not be
// refused for a cache that is behind.
func (r *ClusterJobReconciler) parentOf(ctx context.Context, cj *fleetv1.ClusterJob) (*fleetv1.ClusterJob, error) {
	key := types.NamespacedName{Namespace: cj.Namespace, Name: cj.Spec.RetryOf.Name}
	parent := &fleetv1.ClusterJob{}
	err := r.Hub.Get(ctx, key, parent)
	if err == nil && parent.Status.Phase.IsFinished() {
		return parent, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading the parent ClusterJob %s: %w", key, err)
	}
	ctx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
	defer cancel()
	switch err := r.HubReader.Get(ctx, key, parent); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the parent ClusterJob %s: %w", key, err)
	}
	return parent, nil
}

// retryPlan is a retry's plan in one cluster, derived from its parent's
// plan and record there, read from the member's API server. The parent is
// checked before and after the read, from the hub's API server: a parent
// deleted meanwhile may have lost its record to its cleanup, and a plan
// read from part of it would leave out nodes the user asked for.
func (r *MemberRunReconciler) retryPlan(ctx context.Context, cj *fleetv1.ClusterJob, retry *fleetv1.MemberRetry, sm spoke.Member, nodes []corev1.Node) (plan.Plan, error) {
	run := sm.Run
	parent, err := r.liveParent(ctx, cj.Namespace, retry)
	if err != nil {
		return plan.Plan{}, err
	}
	parentRun := run
	parentRun.ClusterJob = parent
	st, found, err := spoke.ObserveParent(ctx, sm.Live, parentRun)
	if err != nil {
		return plan.Plan{}, fmt.Errorf("reading the run of ClusterJob %s in the member: %w", parent.Name, err)
	}
	if _, err := r.liveParent(ctx, cj.Namespace, retry); err != nil {
		return plan.Plan{}, err
	}
	include := cj.Spec.RetryIncludes()
	switch {
	case found:
		return spoke.RetryPlan(st, include, retry.Unreachable), nil
	case retry.Unreachable && slices.Contains(include, fleetv1.RetryUnreachable):
		// The parent never reached the cluster: it plans now, as the
		// parent would have, with its seed.
		p, err := plan.Compute(nodes, &cj.Spec, parent.UID, run.Cluster)
		if err != nil {
			return plan.Plan{}, &spoke.PermanentError{Reason: fleetv1.ReasonInvalidSpec, Err: fmt.Errorf("planning cluster %s: %w", run.Cluster, err)}
		}
		return p, nil
	}
	return plan.Plan{}, nil // the parent never planned here: nothing ran, nothing failed
}

// liveParent reads a retry's parent from the hub's API server: a
// PermanentError when it is gone, being deleted, or another run now has
// its name.
func (r *MemberRunReconciler) liveParent(ctx context.Context, namespace string, retry *fleetv1.MemberRetry) (*fleetv1.ClusterJob, error) {
	ctx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
	defer cancel()
	parent := &fleetv1.ClusterJob{}
	err := r.HubReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: retry.ClusterJob}, parent)
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading the parent ClusterJob %s: %w", retry.ClusterJob, err)
	case err != nil || string(parent.UID) != retry.ClusterJobUID || !parent.DeletionTimestamp.IsZero():
		return nil, &spoke.PermanentError{Reason: fleetv1.ReasonRetryParentGone, Err: fmt.Errorf(
			"ClusterJob %s, which this run retries, was deleted before this cluster started, and its record here with it: nothing is retried in this cluster", retry.ClusterJob)}
	}
	return parent, nil
}
