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

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/pkg/access"
	"github.com/fleetjob/fleetjob/spoke"
)

// checkDrainAccess refuses, before its plan is frozen, a run that drains in
// a cluster where it may not: the cluster's set does not allowDrain (with
// tenancy), or the hub's identity there lacks a permission a drain needs,
// as the member's access review says. Either fails the cluster at once,
// DrainNotAllowed, naming what is missing; no node is touched.
func (r *MemberRunReconciler) checkDrainAccess(ctx context.Context, cj *fleetv1.ClusterJob, m clusters.Member, cl client.Client) error {
	if !cj.Spec.Drains() {
		return nil
	}
	if r.Options.Tenancy {
		set, policy, err := r.setPolicy(ctx, m.Labels)
		if err != nil {
			return err
		}
		if !policy.AllowDrain {
			return &spoke.PermanentError{Reason: fleetv1.ReasonDrainNotAllowed, Err: errors.New(access.DrainNotAllowed(set, m.Name))}
		}
	}
	var denied []authorizationv1.ResourceAttributes
	for _, a := range access.Drain() {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a}}
		if err := cl.Create(ctx, review); err != nil {
			return fmt.Errorf("asking cluster %s whether the hub may %s: %w", m.Name, access.Describe(a), err)
		}
		if !review.Status.Allowed {
			denied = append(denied, a)
		}
	}
	if len(denied) > 0 {
		return &spoke.PermanentError{Reason: fleetv1.ReasonDrainNotAllowed, Err: fmt.Errorf(
			"the hub's identity in cluster %s may not %s, which spec.nodePreparation.drain needs: register the cluster again once its ClusterSet allows drains (spec.allowDrain)",
			m.Name, access.DescribeAll(denied))}
	}
	return nil
}

// releaseNodes releases the nodes the run cordoned in the cluster and is
// done with (all of them when all is set: the run ends there), uncordoning
// them unless the drain's options keep them cordoned. It returns how many
// are left to release.
func (r *MemberRunReconciler) releaseNodes(ctx context.Context, cj *fleetv1.ClusterJob, c *member.Cluster, all bool) (int, error) {
	if !cj.Spec.Drains() || !all && len(c.State.Cordoned) == 0 || !c.Engaged || !c.Reachable || !c.State.Planned {
		return len(c.State.Cordoned), nil
	}
	m, _ := r.Members.Member(c.Name)
	sm, ok := r.member(ctx, cj, m)
	if !ok {
		return len(c.State.Cordoned), errors.New("cluster disengaged")
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	left, err := sm.ReleaseNodes(ctx, &c.State, all)
	if err != nil {
		err = fmt.Errorf("releasing the nodes the run cordoned: %w", err)
	}
	return left, err
}

// drainNotes are the events of a group start's drains.
func drainNotes(c *member.Cluster, g int, rep spoke.DrainReport, add func(note)) {
	if rep.Evicted > 0 {
		add(note{corev1.EventTypeNormal, fleetv1.ReasonDraining, fmt.Sprintf("cluster %s: group %d (%s): %d pods evicted, %d nodes still draining",
			c.Name, g, c.State.Groups[g].Name, rep.Evicted, rep.Draining)})
	}
	if len(rep.Failed) > 0 {
		f := rep.Failed[0]
		add(note{corev1.EventTypeWarning, f.Reason, fmt.Sprintf("cluster %s: group %d (%s): %d nodes failed their drain, %s first: %s",
			c.Name, g, c.State.Groups[g].Name, len(rep.Failed), f.Node, f.Message)})
	}
}
