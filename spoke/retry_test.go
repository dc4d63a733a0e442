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
	"testing"

	"github.com/google/go-cmp/cmp"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

func TestRetryPlan(t *testing.T) {
	// Cluster a: the parent ran batch-1 and batch-2, where a-2 failed and
	// a-3 was NotReady when batch-2 started; failureStrategy exit stopped
	// it before batch-3. a-7 was cordoned and a-8 lacked the group label
	// when it planned.
	reachable := Derive(&plan.Plan{
		Groups: []plan.Group{{Name: "batch-1", Nodes: []string{"a-1", "a-2"}}, {Name: "batch-2", Nodes: []string{"a-3", "a-4"}}, {Name: "batch-3", Nodes: []string{"a-5", "a-6"}}},
		Skipped: []plan.SkippedNode{
			{Node: "a-7", Reason: fleetv1.NodeReasonUnschedulable},
			{Node: "a-8", Reason: fleetv1.NodeReasonNoGroupLabel},
		},
		MoreSkipped: map[string]int{fleetv1.NodeReasonNotReady: 3},
	}, nil, map[string]bool{"a-1": true, "a-2": true, "a-3": true, "a-4": true, "a-5": true, "a-6": true}, ResultsOf(map[string]NodeResult{
		"a-1": {Phase: NodeSucceeded},
		"a-2": {Phase: NodeFailed, Reason: "BackoffLimitExceeded"},
		"a-3": {Phase: NodeSkipped, Reason: fleetv1.NodeReasonNotReady},
		"a-4": {Phase: NodeSucceeded},
	}))
	// Cluster b: the parent planned it, ran b-1 (whose Job was deleted
	// mid-run) and lost the cluster: b-2 and b-3 never got a Job.
	unreachable := Derive(&plan.Plan{
		Groups: []plan.Group{{Name: "all", Nodes: []string{"b-1", "b-2", "b-3"}}},
	}, nil, map[string]bool{"b-1": true, "b-2": true, "b-3": true}, ResultsOf(map[string]NodeResult{
		"b-1": {Phase: NodeRunning},
	}))

	tests := []struct {
		name        string
		parent      State
		unreachable bool
		include     []fleetv1.RetryInclude
		want        plan.Plan
	}{{
		name:    "failed only: the failed node in its own group",
		parent:  reachable,
		include: []fleetv1.RetryInclude{fleetv1.RetryFailed},
		want:    plan.Plan{Groups: []plan.Group{{Name: "batch-1", Nodes: []string{"a-2"}}}},
	}, {
		name:    "skipped: skipped at start in its group, skipped at planning last, never the ones not meant to run",
		parent:  reachable,
		include: []fleetv1.RetryInclude{fleetv1.RetrySkipped},
		want: plan.Plan{
			Groups:      []plan.Group{{Name: "batch-2", Nodes: []string{"a-3"}}, {Name: RetrySkippedGroup, Nodes: []string{"a-7"}}},
			MoreSkipped: map[string]int{fleetv1.NodeReasonNotReady: 3},
		},
	}, {
		name:    "not run: the group the stop held back",
		parent:  reachable,
		include: []fleetv1.RetryInclude{fleetv1.RetryNotRun},
		want:    plan.Plan{Groups: []plan.Group{{Name: "batch-3", Nodes: []string{"a-5", "a-6"}}}},
	}, {
		name:    "unreachable names nothing in a reachable cluster",
		parent:  reachable,
		include: []fleetv1.RetryInclude{fleetv1.RetryUnreachable},
		want:    plan.Plan{},
	}, {
		name:    "everything: the parent's groups in order, minus the succeeded",
		parent:  reachable,
		include: []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetrySkipped, fleetv1.RetryUnreachable, fleetv1.RetryNotRun},
		want: plan.Plan{
			Groups: []plan.Group{
				{Name: "batch-1", Nodes: []string{"a-2"}}, {Name: "batch-2", Nodes: []string{"a-3"}},
				{Name: "batch-3", Nodes: []string{"a-5", "a-6"}}, {Name: RetrySkippedGroup, Nodes: []string{"a-7"}},
			},
			MoreSkipped: map[string]int{fleetv1.NodeReasonNotReady: 3},
		},
	}, {
		name:        "unreachable cluster, failed: the node whose Job was deleted",
		parent:      unreachable,
		unreachable: true,
		include:     []fleetv1.RetryInclude{fleetv1.RetryFailed},
		want:        plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"b-1"}}}},
	}, {
		name:        "unreachable cluster, unreachable: the nodes that never got a Job",
		parent:      unreachable,
		unreachable: true,
		include:     []fleetv1.RetryInclude{fleetv1.RetryUnreachable},
		want:        plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"b-2", "b-3"}}}},
	}, {
		name:        "unreachable cluster, not run: none, they were unreachable",
		parent:      unreachable,
		unreachable: true,
		include:     []fleetv1.RetryInclude{fleetv1.RetryNotRun},
		want:        plan.Plan{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RetryPlan(tt.parent, tt.include, tt.unreachable)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RetryPlan() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryPlanNeverTakesARunningNode(t *testing.T) {
	p := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"n-1"}}}}
	st := Derive(&p, nil, map[string]bool{"n-1": true}, Results{})
	st.Nodes[0].Phase, st.Nodes[0].Job = NodeRunning, "job-n-1"
	all := []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetrySkipped, fleetv1.RetryUnreachable, fleetv1.RetryNotRun}
	if got := RetryPlan(st, all, false); got.NodeCount() != 0 {
		t.Errorf("RetryPlan() plans %v, want nothing: the node may still run", got.Groups)
	}
}
