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

package spoke

import (
	"context"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// RetrySkippedGroup names the last group of a retry's plan: the nodes the
// parent left out when it planned the cluster, which were in no group.
const RetrySkippedGroup = "skipped"

// ObserveParent reads a retry's parent run in this member from r, the
// member's API server: its plan, Jobs and record. found is false when the
// parent never planned here.
func ObserveParent(ctx context.Context, r client.Reader, parent Run) (st State, found bool, err error) {
	st, err = observe(ctx, r, nil, parent, observeOptions{})
	return st, st.Planned, err
}

// RetryPlan is a retry's plan in one cluster, from its parent's state
// there: the parent's groups in their order and under their names, each
// keeping only the nodes include names, and the nodes the parent left out
// when it planned as a last group when Skipped is included. A group left
// empty is dropped. unreachable tells that the parent could not reach the
// cluster: its nodes that never got a Job are then Unreachable rather than
// NotRun. A node still running in the parent is never taken: it would run
// twice. It is pure.
func RetryPlan(parent State, include []fleetv1.RetryInclude, unreachable bool) plan.Plan {
	want := func(k fleetv1.RetryInclude) bool { return slices.Contains(include, k) }
	var p plan.Plan
	for gi, g := range parent.Plan.Groups {
		var nodes []string
		for _, n := range parent.Nodes {
			if n.Group == gi && want(retryKind(n, unreachable)) {
				nodes = append(nodes, n.Node)
			}
		}
		if len(nodes) > 0 {
			p.Groups = append(p.Groups, plan.Group{Name: g.Name, Nodes: nodes})
		}
	}
	if !want(fleetv1.RetrySkipped) {
		return p
	}
	var skipped []string
	for _, s := range parent.Plan.Skipped {
		if retriableSkip(s.Reason) {
			skipped = append(skipped, s.Node)
		}
	}
	if len(skipped) > 0 {
		p.Groups = append(p.Groups, plan.Group{Name: RetrySkippedGroup, Nodes: skipped})
	}
	// The parent counted these without their names: they cannot be run
	// again by name, and this plan says so.
	p.MoreSkipped = maps.Clone(parent.Plan.MoreSkipped)
	return p
}

// retryKind is the kind of node n of the parent is, for retry.include; ""
// for a node never run again (succeeded, still running, or skipped as not
// meant to run).
func retryKind(n NodeState, unreachable bool) fleetv1.RetryInclude {
	switch {
	case n.Phase == NodeFailed:
		return fleetv1.RetryFailed
	case n.Phase == NodeSkipped && retriableSkip(n.Reason):
		return fleetv1.RetrySkipped
	case n.Phase == NodePending && unreachable:
		return fleetv1.RetryUnreachable
	case n.Phase == NodePending:
		return fleetv1.RetryNotRun
	}
	return ""
}

// retriableSkip tells whether a node skipped for reason may run on a retry:
// it was not ready to, rather than not meant to (the Job template's
// affinity, a missing perNodeGroup label with ignoreNull).
func retriableSkip(reason string) bool {
	return reason != fleetv1.NodeReasonAffinityMismatch && reason != fleetv1.NodeReasonNoGroupLabel
}
