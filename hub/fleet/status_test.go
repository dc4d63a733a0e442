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

package fleet

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/spoke"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// Condition summaries, "status reason", as conditionSummary writes them.
const (
	completedConditions = "Completed"
	runningConditions   = "Running"
)

// conditionSummary is "status reason" per condition type.
func conditionSummary(conds []metav1.Condition) map[string]string {
	out := map[string]string{}
	for _, c := range conds {
		out[c.Type] = string(c.Status) + " " + c.Reason
	}
	return out
}

// wantConditions are the summaries of a run in the given state: progressing
// while the run has work left, then complete or failed, with reason; and
// suspended.
func wantConditions(progressing bool, complete, failed string, suspended bool) map[string]string {
	out := map[string]string{}
	switch {
	case progressing:
		out[fleetv1.ConditionProgressing] = "True " + complete
		out[fleetv1.ConditionComplete] = "False " + complete
		out[fleetv1.ConditionFailed] = "False " + complete
	case failed != "":
		out[fleetv1.ConditionProgressing] = "False " + fleetv1.ReasonFailed
		out[fleetv1.ConditionComplete] = "False " + fleetv1.ReasonFailed
		out[fleetv1.ConditionFailed] = "True " + failed
	default:
		out[fleetv1.ConditionProgressing] = "False " + complete
		out[fleetv1.ConditionComplete] = "True " + complete
		out[fleetv1.ConditionFailed] = "False " + complete
	}
	out[fleetv1.ConditionSuspended] = "False NotSuspended"
	if suspended {
		out[fleetv1.ConditionSuspended] = "True " + fleetv1.ReasonSuspended
	}
	return out
}

func TestStatus(t *testing.T) {
	base := makeClusterJob().Obj()
	exit := makeClusterJob().Exit().Obj()
	one := makeClusterJob().MaxConcurrent(1).Obj()
	suspended := makeClusterJob().Suspend(true).Obj()
	random := makeClusterJob().RandomOrder().Obj()

	run := func(cluster string, nodes int) *wrappers.RunWrapper { return wrappers.MakeRun(base, cluster, nodes) }
	done := func(cluster string, nodes int) *wrappers.RunWrapper {
		r := run(cluster, nodes)
		for g := range r.Plan().Groups {
			r.Succeed(r.Group(g)...)
		}
		return r
	}
	// failedFirst is a 6-node run whose group 0 finished with its first
	// node failed; group 1 has not started.
	failedFirst := func(cluster string) *wrappers.RunWrapper {
		r := run(cluster, 6)
		return r.Fail(r.Group(0)[0]).Succeed(r.Group(0)[1:]...)
	}
	// started is a previous row of a cluster that started at start.
	started := func(start time.Duration) fleetv1.ClusterStatus { return startedRow(ago(start)) }
	// progress is a previous row with progress: group 1 of 2 running.
	progress := fleetv1.ClusterStatus{
		Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonRunning,
		Groups: fleetv1.GroupCounts{Total: 2, Completed: 1}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
		Nodes:     fleetv1.NodeCounts{Total: 6, Running: 3, Succeeded: 3},
		StartTime: mt(ago(30 * time.Minute)),
	}
	// completedRow is a previous row of a cluster that finished.
	completedRow := fleetv1.ClusterStatus{
		Phase: fleetv1.ClusterCompleted, Reachable: true, Reason: fleetv1.ReasonCompleted, Message: "6 of 6 nodes succeeded",
		Groups: fleetv1.GroupCounts{Total: 2, Completed: 2}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
		Nodes:     fleetv1.NodeCounts{Total: 6, Succeeded: 6},
		StartTime: mt(ago(30 * time.Minute)), CompletionTime: mt(ago(5 * time.Minute)),
	}
	withName := func(row fleetv1.ClusterStatus, name string) fleetv1.ClusterStatus { row.Name = name; return row }

	// A run in random order where 7 of 9 nodes failed: the failure sample
	// must come out sorted although the plan is not.
	sevenFailed := wrappers.MakeRun(random, "a", 9)
	failedNames := wrappers.NodeNames("a", 7)
	sevenFailed.Fail(failedNames...).Succeed(wrappers.NodeNames("a", 9)[7:]...)
	if order := slices.Concat(sevenFailed.Group(0), sevenFailed.Group(1), sevenFailed.Group(2)); slices.IsSorted(order) {
		t.Fatalf("The random plan is in name order %v; the failure sample test would prove nothing", order)
	}
	failure := func(r *wrappers.RunWrapper, node string) fleetv1.NodeFailure {
		_, group := r.GroupOf(node)
		return fleetv1.NodeFailure{Node: node, Group: group, Job: r.JobName(node), Reason: wrappers.FailReason, Message: wrappers.FailMessage}
	}
	aFailed := failedFirst("a")

	// currentGroup follows its API doc, the group running now or the last
	// group that ran; TestStatusCurrentGroup tells it apart.
	testCases := map[string]struct {
		cj                 *fleetv1.ClusterJob
		createdAgo         time.Duration // 0: the input's default
		clusters           []member.Cluster
		prev               fleetv1.ClusterJobStatus
		wantPhase          fleetv1.Phase
		wantConditions     map[string]string
		wantMessages       map[string]string // condition type: message, for the types listed
		wantSummary        *fleetv1.Summary  // nil: not checked
		wantRows           []fleetv1.ClusterStatus
		wantStartTime      *metav1.Time
		wantCompletionTime *metav1.Time
	}{
		"no cluster matched yet, within the grace after creation: pending": {
			cj:             base,
			createdAgo:     30 * time.Second,
			wantPhase:      fleetv1.PhasePending,
			wantConditions: wantConditions(true, fleetv1.ReasonPending, "", false),
			wantMessages: map[string]string{
				fleetv1.ConditionProgressing: "waiting for a registered cluster to match spec.clusterSelector",
			},
			wantSummary: &fleetv1.Summary{ClusterProgress: "0/0", NodeProgress: "0/0"},
		},
		"no cluster matched past the grace: failed NoClusters": {
			cj:             base,
			wantPhase:      fleetv1.PhaseFailed,
			wantConditions: wantConditions(false, "", fleetv1.ReasonNoClusters, false),
			wantMessages: map[string]string{
				fleetv1.ConditionFailed: "no registered cluster matched spec.clusterSelector within 1m0s of creation",
			},
			wantSummary:        &fleetv1.Summary{ClusterProgress: "0/0", NodeProgress: "0/0"},
			wantStartTime:      mt(now),
			wantCompletionTime: mt(now),
		},
		"every cluster completed": {
			cj: base,
			clusters: []member.Cluster{
				done("a", 6).Cluster().Previous(started(30 * time.Minute)).Obj(),
				done("b", 3).Cluster().Previous(started(20 * time.Minute)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseCompleted,
			wantConditions: wantConditions(false, completedConditions, "", false),
			wantMessages: map[string]string{
				fleetv1.ConditionComplete: "2/2 clusters finished, 9/9 nodes succeeded, 0 failed",
			},
			wantSummary: &fleetv1.Summary{
				Clusters:        fleetv1.ClusterCounts{Total: 2, Completed: 2},
				Nodes:           fleetv1.NodeCounts{Total: 9, Succeeded: 9},
				ClusterProgress: "2/2", NodeProgress: "9/9",
			},
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterCompleted, Reachable: true, Reason: fleetv1.ReasonCompleted, Message: "6 of 6 nodes succeeded",
					Groups: fleetv1.GroupCounts{Total: 2, Completed: 2}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
					Nodes:     fleetv1.NodeCounts{Total: 6, Succeeded: 6},
					StartTime: mt(ago(30 * time.Minute)), CompletionTime: mt(now),
				},
				{
					Name: "b", Phase: fleetv1.ClusterCompleted, Reachable: true, Reason: fleetv1.ReasonCompleted, Message: "3 of 3 nodes succeeded",
					Groups: fleetv1.GroupCounts{Total: 1, Completed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:     fleetv1.NodeCounts{Total: 3, Succeeded: 3},
					StartTime: mt(ago(20 * time.Minute)), CompletionTime: mt(now),
				},
			},
			wantStartTime:      mt(ago(30 * time.Minute)),
			wantCompletionTime: mt(now),
		},
		"7 failed nodes: the row is Failed, a sorted sample of 5, a message naming 3": {
			cj:             random,
			clusters:       []member.Cluster{sevenFailed.Cluster().Previous(started(30 * time.Minute)).Obj()},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseFailed,
			wantConditions: wantConditions(false, "", fleetv1.ReasonNodeFailed, false),
			wantRows: []fleetv1.ClusterStatus{{
				Name: "a", Phase: fleetv1.ClusterFailed, Reachable: true, Reason: fleetv1.ReasonNodeFailed,
				Message: "7 of 9 nodes failed: a-n01, a-n02, a-n03",
				Groups:  fleetv1.GroupCounts{Total: 3, Completed: 3, Failed: 3}, CurrentGroup: ptr.To[int32](2), CurrentGroupName: "batch-3",
				Nodes: fleetv1.NodeCounts{Total: 9, Succeeded: 2, Failed: 7},
				FailedNodes: []fleetv1.NodeFailure{
					failure(sevenFailed, "a-n01"), failure(sevenFailed, "a-n02"), failure(sevenFailed, "a-n03"),
					failure(sevenFailed, "a-n04"), failure(sevenFailed, "a-n05"),
				},
				StartTime: mt(ago(30 * time.Minute)), CompletionTime: mt(now),
			}},
			wantStartTime:      mt(ago(30 * time.Minute)),
			wantCompletionTime: mt(now),
		},

		"keepgoing, a failed node mid-run: the run goes on": {
			cj: base,
			clusters: []member.Cluster{
				func() member.Cluster {
					r := failedFirst("a")
					return r.Start(r.Group(1)...).Cluster().Previous(started(30 * time.Minute)).Obj()
				}(),
				wrappers.MakeCluster("b").Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, runningConditions, "", false),
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonRunning,
					Groups: fleetv1.GroupCounts{Total: 2, Completed: 1, Failed: 1}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
					Nodes:       fleetv1.NodeCounts{Total: 6, Running: 3, Succeeded: 2, Failed: 1},
					FailedNodes: []fleetv1.NodeFailure{failure(aFailed, "a-n01")},
					StartTime:   mt(ago(30 * time.Minute)),
				},
				{Name: "b", Phase: fleetv1.ClusterPending, Reachable: true, Reason: fleetv1.ReasonPending, Message: "starting"},
			},
			wantStartTime: mt(ago(30 * time.Minute)),
		},
		"keepgoing, every group ran with a failed node: the run ends Failed": {
			cj: base,
			clusters: []member.Cluster{
				func() member.Cluster {
					r := failedFirst("a")
					return r.Succeed(r.Group(1)...).Cluster().Previous(started(30 * time.Minute)).Obj()
				}(),
				done("b", 3).Cluster().Previous(started(20 * time.Minute)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseFailed,
			wantConditions: wantConditions(false, "", fleetv1.ReasonNodeFailed, false),
			wantMessages: map[string]string{
				fleetv1.ConditionFailed: "2/2 clusters finished, 8/9 nodes succeeded, 1 failed; failed: a (NodeFailed: 1 of 6 nodes failed: a-n01)",
			},
			wantSummary: &fleetv1.Summary{
				Clusters:        fleetv1.ClusterCounts{Total: 2, Completed: 1, Failed: 1},
				Nodes:           fleetv1.NodeCounts{Total: 9, Succeeded: 8, Failed: 1},
				ClusterProgress: "2/2", NodeProgress: "8/9",
			},
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterFailed, Reachable: true, Reason: fleetv1.ReasonNodeFailed, Message: "1 of 6 nodes failed: a-n01",
					Groups: fleetv1.GroupCounts{Total: 2, Completed: 2, Failed: 1}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
					Nodes:       fleetv1.NodeCounts{Total: 6, Succeeded: 5, Failed: 1},
					FailedNodes: []fleetv1.NodeFailure{failure(aFailed, "a-n01")},
					StartTime:   mt(ago(30 * time.Minute)), CompletionTime: mt(now),
				},
				{
					Name: "b", Phase: fleetv1.ClusterCompleted, Reachable: true, Reason: fleetv1.ReasonCompleted, Message: "3 of 3 nodes succeeded",
					Groups: fleetv1.GroupCounts{Total: 1, Completed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:     fleetv1.NodeCounts{Total: 3, Succeeded: 3},
					StartTime: mt(ago(20 * time.Minute)), CompletionTime: mt(now),
				},
			},
			wantStartTime:      mt(ago(30 * time.Minute)),
			wantCompletionTime: mt(now),
		},
		"exit, a failed node while another cluster runs: Failed, Running, and Pending Stopped": {
			cj: exit,
			clusters: []member.Cluster{
				failedFirst("a").Cluster().Previous(started(30 * time.Minute)).Obj(),
				func() member.Cluster {
					r := run("b", 6)
					return r.Start(r.Group(0)...).Cluster().Previous(started(30 * time.Minute)).Obj()
				}(),
				wrappers.MakeCluster("c").Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, runningConditions, "", false),
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterFailed, Reachable: true, Reason: fleetv1.ReasonNodeFailed, Message: "1 of 6 nodes failed: a-n01",
					Groups: fleetv1.GroupCounts{Total: 2, Completed: 1, Failed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:       fleetv1.NodeCounts{Total: 6, Pending: 3, Succeeded: 2, Failed: 1},
					FailedNodes: []fleetv1.NodeFailure{failure(aFailed, "a-n01")},
					StartTime:   mt(ago(30 * time.Minute)), CompletionTime: mt(now),
				},
				{
					Name: "b", Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonRunning,
					Groups: fleetv1.GroupCounts{Total: 2}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:     fleetv1.NodeCounts{Total: 6, Pending: 3, Running: 3},
					StartTime: mt(ago(30 * time.Minute)),
				},
				{
					Name: "c", Phase: fleetv1.ClusterPending, Reachable: true, Reason: fleetv1.ReasonStopped,
					Message: "failureStrategy exit stopped the run before this cluster started: a node failed in cluster a",
				},
			},
			wantStartTime: mt(ago(30 * time.Minute)),
		},
		"exit, nothing runs any more: the run ends Failed": {
			cj: exit,
			clusters: []member.Cluster{
				failedFirst("a").Cluster().Previous(started(30 * time.Minute)).Obj(),
				func() member.Cluster {
					r := run("b", 6)
					return r.Succeed(r.Group(0)...).Cluster().Previous(started(30 * time.Minute)).Obj()
				}(),
				wrappers.MakeCluster("c").Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseFailed,
			wantConditions: wantConditions(false, "", fleetv1.ReasonStopped, false),
			wantSummary: &fleetv1.Summary{
				Clusters:        fleetv1.ClusterCounts{Total: 3, Failed: 2},
				Nodes:           fleetv1.NodeCounts{Total: 12, Pending: 6, Succeeded: 5, Failed: 1},
				ClusterProgress: "2/3", NodeProgress: "5/12",
			},
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterFailed, Reachable: true, Reason: fleetv1.ReasonNodeFailed, Message: "1 of 6 nodes failed: a-n01",
					Groups: fleetv1.GroupCounts{Total: 2, Completed: 1, Failed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:       fleetv1.NodeCounts{Total: 6, Pending: 3, Succeeded: 2, Failed: 1},
					FailedNodes: []fleetv1.NodeFailure{failure(aFailed, "a-n01")},
					StartTime:   mt(ago(30 * time.Minute)), CompletionTime: mt(now),
				},
				{
					Name: "b", Phase: fleetv1.ClusterFailed, Reachable: true, Reason: fleetv1.ReasonStopped,
					Message: "failureStrategy exit stopped the run: a node failed in cluster a",
					Groups:  fleetv1.GroupCounts{Total: 2, Completed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:     fleetv1.NodeCounts{Total: 6, Pending: 3, Succeeded: 3},
					StartTime: mt(ago(30 * time.Minute)), CompletionTime: mt(now),
				},
				{
					Name: "c", Phase: fleetv1.ClusterPending, Reachable: true, Reason: fleetv1.ReasonStopped,
					Message: "failureStrategy exit stopped the run before this cluster started: a node failed in cluster a",
				},
			},
			wantStartTime:      mt(ago(30 * time.Minute)),
			wantCompletionTime: mt(now),
		},

		"an unreachable cluster keeps its last progress": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(progress).Disengaged().Unreachable(ago(10 * time.Minute)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, runningConditions, "", false),
			wantSummary: &fleetv1.Summary{
				Clusters:        fleetv1.ClusterCounts{Total: 1, Running: 1, Unreachable: 1},
				Nodes:           fleetv1.NodeCounts{Total: 6, Running: 3, Succeeded: 3},
				ClusterProgress: "0/1", NodeProgress: "3/6",
			},
			wantRows: []fleetv1.ClusterStatus{{
				Name: "a", Phase: fleetv1.ClusterRunning, Reason: wrappers.UnreachableReason, Message: wrappers.UnreachableMessage,
				UnreachableSince: mt(ago(10 * time.Minute)),
				Groups:           fleetv1.GroupCounts{Total: 2, Completed: 1}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
				Nodes:     fleetv1.NodeCounts{Total: 6, Running: 3, Succeeded: 3},
				StartTime: mt(ago(30 * time.Minute)),
			}},
			wantStartTime: mt(ago(30 * time.Minute)),
		},
		"an unreachable cluster past the timeout: Failed UnreachableTimeout": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(progress).Disengaged().Unreachable(ago(2 * time.Hour)).Obj(),
				done("b", 3).Cluster().Previous(started(20 * time.Minute)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseFailed,
			wantConditions: wantConditions(false, "", fleetv1.ReasonUnreachableTimeout, false),
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonUnreachableTimeout,
					Message:          "unreachable for longer than 1h0m0s: " + wrappers.UnreachableMessage,
					UnreachableSince: mt(ago(2 * time.Hour)),
					Groups:           fleetv1.GroupCounts{Total: 2, Completed: 1}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
					Nodes:     fleetv1.NodeCounts{Total: 6, Running: 3, Succeeded: 3},
					StartTime: mt(ago(30 * time.Minute)), CompletionTime: mt(now),
				},
				{
					Name: "b", Phase: fleetv1.ClusterCompleted, Reachable: true, Reason: fleetv1.ReasonCompleted, Message: "3 of 3 nodes succeeded",
					Groups: fleetv1.GroupCounts{Total: 1, Completed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:     fleetv1.NodeCounts{Total: 3, Succeeded: 3},
					StartTime: mt(ago(20 * time.Minute)), CompletionTime: mt(now),
				},
			},
			wantStartTime:      mt(ago(30 * time.Minute)),
			wantCompletionTime: mt(now),
		},
		"the last row's unreachableSince wins over the registry's": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(func() fleetv1.ClusterStatus {
					row := progress
					row.Reachable, row.Reason, row.UnreachableSince = false, wrappers.UnreachableReason, mt(ago(50*time.Minute))
					return row
				}()).Disengaged().Unreachable(ago(time.Minute)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, runningConditions, "", false),
			wantRows: []fleetv1.ClusterStatus{{
				Name: "a", Phase: fleetv1.ClusterRunning, Reason: wrappers.UnreachableReason, Message: wrappers.UnreachableMessage,
				UnreachableSince: mt(ago(50 * time.Minute)),
				Groups:           fleetv1.GroupCounts{Total: 2, Completed: 1}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
				Nodes:     fleetv1.NodeCounts{Total: 6, Running: 3, Succeeded: 3},
				StartTime: mt(ago(30 * time.Minute)),
			}},
			wantStartTime: mt(ago(30 * time.Minute)),
		},
		"the last row's unreachableSince past the timeout times the cluster out": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(func() fleetv1.ClusterStatus {
					row := progress
					row.Reachable, row.Reason, row.UnreachableSince = false, wrappers.UnreachableReason, mt(ago(2*time.Hour))
					return row
				}()).Disengaged().Unreachable(ago(time.Minute)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseFailed,
			wantConditions: wantConditions(false, "", fleetv1.ReasonUnreachableTimeout, false),
			wantRows: []fleetv1.ClusterStatus{{
				Name: "a", Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonUnreachableTimeout,
				Message:          "unreachable for longer than 1h0m0s: " + wrappers.UnreachableMessage,
				UnreachableSince: mt(ago(2 * time.Hour)),
				Groups:           fleetv1.GroupCounts{Total: 2, Completed: 1}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
				Nodes:     fleetv1.NodeCounts{Total: 6, Running: 3, Succeeded: 3},
				StartTime: mt(ago(30 * time.Minute)), CompletionTime: mt(now),
			}},
			wantStartTime:      mt(ago(30 * time.Minute)),
			wantCompletionTime: mt(now),
		},
		"a Completed row stays Completed when its cluster goes away, even past the timeout": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(completedRow).Disengaged().Unreachable(ago(2 * time.Hour)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseCompleted,
			wantConditions: wantConditions(false, completedConditions, "", false),
			wantRows: []fleetv1.ClusterStatus{func() fleetv1.ClusterStatus {
				row := withName(completedRow, "a")
				row.Reachable, row.UnreachableSince = false, mt(ago(2*time.Hour))
				return row
			}()},
			wantStartTime:      mt(ago(30 * time.Minute)),
			wantCompletionTime: mt(now),
		},
		"a Failed row stays Failed when its cluster comes back": {
			cj: base,
			clusters: []member.Cluster{
				run("a", 6).Cluster().Previous(fleetv1.ClusterStatus{
					Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonUnreachableTimeout, Message: "unreachable for longer than 1h0m0s",
					StartTime: mt(ago(3 * time.Hour)), CompletionTime: mt(ago(time.Hour)),
				}).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(3 * time.Hour))},
			wantPhase:      fleetv1.PhaseFailed,
			wantConditions: wantConditions(false, "", fleetv1.ReasonUnreachableTimeout, false),
			wantRows: []fleetv1.ClusterStatus{{
				Name: "a", Phase: fleetv1.ClusterFailed, Reachable: true, Reason: fleetv1.ReasonUnreachableTimeout, Message: "unreachable for longer than 1h0m0s",
				Groups: fleetv1.GroupCounts{Total: 2}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
				Nodes:     fleetv1.NodeCounts{Total: 6, Pending: 6},
				StartTime: mt(ago(3 * time.Hour)), CompletionTime: mt(ago(time.Hour)),
			}},
			wantStartTime:      mt(ago(3 * time.Hour)),
			wantCompletionTime: mt(now),
		},

		"maxConcurrentClusters 1: the clusters that wait are Pending WaitingForTurn": {
			cj: one,
			clusters: []member.Cluster{
				func() member.Cluster {
					r := run("a", 6)
					return r.Start(r.Group(0)...).Cluster().Previous(started(10 * time.Minute)).Obj()
				}(),
				wrappers.MakeCluster("b").Obj(),
				wrappers.MakeCluster("c").Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(10 * time.Minute))},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, runningConditions, "", false),
			wantSummary: &fleetv1.Summary{
				Clusters:        fleetv1.ClusterCounts{Total: 3, Running: 1},
				Nodes:           fleetv1.NodeCounts{Total: 6, Pending: 3, Running: 3},
				ClusterProgress: "0/3", NodeProgress: "0/6",
			},
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonRunning,
					Groups: fleetv1.GroupCounts{Total: 2}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:     fleetv1.NodeCounts{Total: 6, Pending: 3, Running: 3},
					StartTime: mt(ago(10 * time.Minute)),
				},
				{Name: "b", Phase: fleetv1.ClusterPending, Reachable: true, Reason: fleetv1.ReasonWaitingForTurn, Message: "waiting for a slot under clusterRollout.maxConcurrentClusters"},
				{Name: "c", Phase: fleetv1.ClusterPending, Reachable: true, Reason: fleetv1.ReasonWaitingForTurn, Message: "waiting for a slot under clusterRollout.maxConcurrentClusters"},
			},
			wantStartTime: mt(ago(10 * time.Minute)),
		},
		"suspended mid-run: Suspended, unstarted clusters Pending Suspended": {
			cj: suspended,
			clusters: []member.Cluster{
				func() member.Cluster {
					r := run("a", 6)
					return r.Succeed(r.Group(0)...).Cluster().Previous(started(10 * time.Minute)).Obj()
				}(),
				wrappers.MakeCluster("b").Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(10 * time.Minute))},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, fleetv1.ReasonSuspended, "", true),
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonRunning,
					Groups: fleetv1.GroupCounts{Total: 2, Completed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:     fleetv1.NodeCounts{Total: 6, Pending: 3, Succeeded: 3},
					StartTime: mt(ago(10 * time.Minute)),
				},
				{Name: "b", Phase: fleetv1.ClusterPending, Reachable: true, Reason: fleetv1.ReasonSuspended, Message: "spec.suspend is true"},
			},
			wantStartTime: mt(ago(10 * time.Minute)),
		},
		"suspended before anything started: Pending": {
			cj:             suspended,
			clusters:       []member.Cluster{wrappers.MakeCluster("a").Obj()},
			wantPhase:      fleetv1.PhasePending,
			wantConditions: wantConditions(true, fleetv1.ReasonSuspended, "", true),
			wantRows: []fleetv1.ClusterStatus{
				{Name: "a", Phase: fleetv1.ClusterPending, Reachable: true, Reason: fleetv1.ReasonSuspended, Message: "spec.suspend is true"},
			},
		},
		"not started, being planned: Pending": {
			cj:             base,
			clusters:       []member.Cluster{wrappers.MakeCluster("a").Obj()},
			wantPhase:      fleetv1.PhasePending,
			wantConditions: wantConditions(true, fleetv1.ReasonPending, "", false),
			wantRows: []fleetv1.ClusterStatus{
				{Name: "a", Phase: fleetv1.ClusterPending, Reachable: true, Reason: fleetv1.ReasonPending, Message: "starting"},
			},
		},
		"skipped nodes of the plan are counted": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				r := wrappers.MakeRun(base, "a", 4, "a-x1", "a-x2")
				return r.Succeed(r.Group(0)...).Cluster().Obj()
			}()},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, runningConditions, "", false),
			wantSummary: &fleetv1.Summary{
				Clusters:        fleetv1.ClusterCounts{Total: 1, Running: 1},
				Nodes:           fleetv1.NodeCounts{Total: 6, Pending: 1, Succeeded: 3, Skipped: 2},
				ClusterProgress: "0/1", NodeProgress: "3/4, 2 skipped",
			},
			wantMessages: map[string]string{fleetv1.ConditionProgressing: "0/1 clusters finished, 3/4 nodes succeeded, 0 failed, 2 skipped"},
			wantRows: []fleetv1.ClusterStatus{{
				Name: "a", Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonRunning,
				Groups: fleetv1.GroupCounts{Total: 2, Completed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
				Nodes:     fleetv1.NodeCounts{Total: 6, Pending: 1, Succeeded: 3, Skipped: 2},
				StartTime: mt(now),
			}},
			wantStartTime: mt(now),
		},
		"a node deleted before its Job started is skipped too": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				r := wrappers.MakeRun(base, "a", 4, "a-x1", "a-x2")
				return r.Succeed(r.Group(0)...).Deleted("a-n04").Cluster().Previous(started(10 * time.Minute)).Obj()
			}()},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(10 * time.Minute))},
			wantPhase:      fleetv1.PhaseCompleted,
			wantConditions: wantConditions(false, completedConditions, "", false),
			wantRows: []fleetv1.ClusterStatus{{
				Name: "a", Phase: fleetv1.ClusterCompleted, Reachable: true, Reason: fleetv1.ReasonCompleted, Message: "3 of 3 nodes succeeded, 3 skipped",
				Groups: fleetv1.GroupCounts{Total: 2, Completed: 2}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
				Nodes:     fleetv1.NodeCounts{Total: 6, Succeeded: 3, Skipped: 3},
				StartTime: mt(ago(10 * time.Minute)), CompletionTime: mt(now),
			}},
			wantStartTime:      mt(ago(10 * time.Minute)),
			wantCompletionTime: mt(now),
		},
		"every node skipped: the cluster and the run say that no node ran": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeRun(base, "a", 0, "a-x1", "a-x2").Cluster().Previous(started(time.Minute)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(time.Minute))},
			wantPhase:      fleetv1.PhaseCompleted,
			wantConditions: wantConditions(false, completedConditions, "", false),
			wantMessages:   map[string]string{fleetv1.ConditionComplete: "1/1 clusters finished, no node ran, 2 skipped"},
			wantSummary: &fleetv1.Summary{
				Clusters:        fleetv1.ClusterCounts{Total: 1, Completed: 1},
				Nodes:           fleetv1.NodeCounts{Total: 2, Skipped: 2},
				ClusterProgress: "1/1", NodeProgress: "0/0, 2 skipped",
			},
			wantRows: []fleetv1.ClusterStatus{{
				Name: "a", Phase: fleetv1.ClusterCompleted, Reachable: true, Reason: fleetv1.ReasonCompleted, Message: "no node ran, 2 skipped",
				Nodes:     fleetv1.NodeCounts{Total: 2, Skipped: 2},
				StartTime: mt(ago(time.Minute)), CompletionTime: mt(now),
			}},
			wantStartTime:      mt(ago(time.Minute)),
			wantCompletionTime: mt(now),
		},
		"a cluster whose set refused the template: the Failed condition names the cluster and why": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Err(&spoke.PermanentError{Reason: fleetv1.ReasonPodSecurityViolation,
					Err: errors.New(`spec.jobTemplate.spec.template does not meet Pod Security level "restricted" of cluster set locked`)}).Obj(),
				done("b", 3).Cluster().Previous(started(20 * time.Minute)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(20 * time.Minute))},
			wantPhase:      fleetv1.PhaseFailed,
			wantConditions: wantConditions(false, "", fleetv1.ReasonPodSecurityViolation, false),
			wantMessages: map[string]string{fleetv1.ConditionFailed: "2/2 clusters finished, 3/3 nodes succeeded, 0 failed; " +
				`failed: a (PodSecurityViolation: spec.jobTemplate.spec.template does not meet Pod Security level "restricted" of cluster set locked)`},
			wantStartTime:      mt(ago(20 * time.Minute)),
			wantCompletionTime: mt(now),
		},

		"the run's start time is carried from the last status": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				r := run("a", 6)
				return r.Start(r.Group(0)...).Cluster().Previous(started(10 * time.Minute)).Obj()
			}()},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(time.Hour))},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, runningConditions, "", false),
			wantStartTime:  mt(ago(time.Hour)),
		},
		"no start time yet: the earliest cluster start": {
			cj: base,
			clusters: []member.Cluster{
				func() member.Cluster {
					r := run("a", 6)
					return r.Start(r.Group(0)...).Cluster().Previous(started(10 * time.Minute)).Obj()
				}(),
				func() member.Cluster {
					r := run("b", 6)
					return r.Start(r.Group(0)...).Cluster().Previous(started(20 * time.Minute)).Obj()
				}(),
			},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, runningConditions, "", false),
			wantStartTime:  mt(ago(20 * time.Minute)),
		},
		"the run's completion time is carried from the last status": {
			cj:       base,
			clusters: []member.Cluster{wrappers.MakeCluster("a").Previous(completedRow).Obj()},
			prev: fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseCompleted,
				StartTime: mt(ago(30 * time.Minute)), CompletionTime: mt(ago(5 * time.Minute))},
			wantPhase:          fleetv1.PhaseCompleted,
			wantConditions:     wantConditions(false, completedConditions, "", false),
			wantStartTime:      mt(ago(30 * time.Minute)),
			wantCompletionTime: mt(ago(5 * time.Minute)),
		},

		// The cases below describe bugs in decide.go (finished); see the report.
		"exit, a started cluster that cannot be read this time is not finished": {
			cj: exit,
			clusters: []member.Cluster{
				failedFirst("a").Cluster().Previous(started(30 * time.Minute)).Obj(),
				wrappers.MakeCluster("b").Previous(progress).Error("listing the Jobs of the run: context deadline exceeded").Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseRunning,
			wantConditions: wantConditions(true, runningConditions, "", false),
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterFailed, Reachable: true, Reason: fleetv1.ReasonNodeFailed, Message: "1 of 6 nodes failed: a-n01",
					Groups: fleetv1.GroupCounts{Total: 2, Completed: 1, Failed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:       fleetv1.NodeCounts{Total: 6, Pending: 3, Succeeded: 2, Failed: 1},
					FailedNodes: []fleetv1.NodeFailure{failure(aFailed, "a-n01")},
					StartTime:   mt(ago(30 * time.Minute)), CompletionTime: mt(now),
				},
				{
					Name: "b", Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonMemberError,
					Message:      "retrying: listing the Jobs of the run: context deadline exceeded",
					FailingSince: mt(now),
					Groups:       fleetv1.GroupCounts{Total: 2, Completed: 1}, CurrentGroup: ptr.To[int32](1), CurrentGroupName: "batch-2",
					Nodes:     fleetv1.NodeCounts{Total: 6, Running: 3, Succeeded: 3},
					StartTime: mt(ago(30 * time.Minute)),
				},
			},
			wantStartTime: mt(ago(30 * time.Minute)),
		},
		"exit, a never-started cluster the hub has no client for is Stopped, and the run ends": {
			cj: exit,
			clusters: []member.Cluster{
				failedFirst("a").Cluster().Previous(started(30 * time.Minute)).Obj(),
				wrappers.MakeCluster("b").Disengaged().Unreachable(ago(10 * time.Minute)).Obj(),
			},
			prev:           fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, StartTime: mt(ago(30 * time.Minute))},
			wantPhase:      fleetv1.PhaseFailed,
			wantConditions: wantConditions(false, "", fleetv1.ReasonStopped, false),
			wantRows: []fleetv1.ClusterStatus{
				{
					Name: "a", Phase: fleetv1.ClusterFailed, Reachable: true, Reason: fleetv1.ReasonNodeFailed, Message: "1 of 6 nodes failed: a-n01",
					Groups: fleetv1.GroupCounts{Total: 2, Completed: 1, Failed: 1}, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
					Nodes:       fleetv1.NodeCounts{Total: 6, Pending: 3, Succeeded: 2, Failed: 1},
					FailedNodes: []fleetv1.NodeFailure{failure(aFailed, "a-n01")},
					StartTime:   mt(ago(30 * time.Minute)), CompletionTime: mt(now),
				},
				{
					Name: "b", Phase: fleetv1.ClusterPending, Reason: fleetv1.ReasonStopped,
					Message:          "failureStrategy exit stopped the run before this cluster started: a node failed in cluster a",
					UnreachableSince: mt(ago(10 * time.Minute)),
				},
			},
			wantStartTime:      mt(ago(30 * time.Minute)),
			wantCompletionTime: mt(now),
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := input(tc.cj, tc.clusters...)
			if tc.createdAgo != 0 {
				in.Created = ago(tc.createdAgo)
			}
			prev := tc.prev.DeepCopy()
			got := statusWorld(in, prev, 1)
			if got.ObservedGeneration != 1 {
				t.Errorf("ObservedGeneration = %d, want 1", got.ObservedGeneration)
			}
			if got.Phase != tc.wantPhase {
				t.Errorf("Phase = %q, want %q", got.Phase, tc.wantPhase)
			}
			if diff := cmp.Diff(tc.wantConditions, conditionSummary(got.Conditions)); diff != "" {
				t.Errorf("Conditions mismatch (-want +got):\n%s", diff)
			}
			for typ, wantMsg := range tc.wantMessages {
				if c := findCondition(got.Conditions, typ); c == nil || c.Message != wantMsg {
					t.Errorf("Condition %s = %+v, want message %q", typ, c, wantMsg)
				}
			}
			if tc.wantSummary != nil {
				if diff := cmp.Diff(*tc.wantSummary, got.Summary); diff != "" {
					t.Errorf("Summary mismatch (-want +got):\n%s", diff)
				}
			}
			if tc.wantRows != nil {
				if diff := cmp.Diff(tc.wantRows, got.Clusters, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Clusters mismatch (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.wantStartTime, got.StartTime); diff != "" {
				t.Errorf("StartTime mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCompletionTime, got.CompletionTime); diff != "" {
				t.Errorf("CompletionTime mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(&tc.prev, prev); diff != "" {
				t.Errorf("Status changed the previous status (-before +after):\n%s", diff)
			}
			checkCounts(t, got)
		})
	}
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// checkCounts asserts what holds for every status: each node count is the
// sum of its parts, the summary is the sum of the rows, a failure sample is
// bounded, and rows are sorted by name.
func checkCounts(t *testing.T, st fleetv1.ClusterJobStatus) {
	t.Helper()
	var sum fleetv1.NodeCounts
	for _, r := range st.Clusters {
		n := r.Nodes
		if parts := n.Pending + n.Running + n.Succeeded + n.Failed + n.Skipped; parts != n.Total {
			t.Errorf("Cluster %s: nodes %+v: parts add up to %d, total is %d", r.Name, n, parts, n.Total)
		}
		if len(r.FailedNodes) > fleetv1.MaxFailedNodeSamples || len(r.FailedNodes) > int(n.Failed) {
			t.Errorf("Cluster %s: %d failed node samples for %d failed nodes", r.Name, len(r.FailedNodes), n.Failed)
		}
		sum.Total += n.Total
		sum.Pending += n.Pending
		sum.Running += n.Running
		sum.Succeeded += n.Succeeded
		sum.Failed += n.Failed
		sum.Skipped += n.Skipped
	}
	if diff := cmp.Diff(sum, st.Summary.Nodes); diff != "" {
		t.Errorf("Summary nodes are not the sum of the rows (-rows +summary):\n%s", diff)
	}
	if !slices.IsSortedFunc(st.Clusters, func(a, b fleetv1.ClusterStatus) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("Rows are not sorted by name")
	}
}

// TestStatusConditionTimes checks that condition transition times come from
// Input.Now, like every other time in the status: Status is pure, and a
// controller under a fake clock writes fake-clock times.
func TestStatusConditionTimes(t *testing.T) {
	cj := makeClusterJob().Obj()
	running := func() member.Cluster {
		r := wrappers.MakeRun(cj, "a", 6)
		return r.Start(r.Group(0)...).Cluster().Previous(startedRow(ago(time.Hour))).Obj()
	}()
	earlier := metav1.NewTime(ago(time.Hour))
	prevRunning := fleetv1.ClusterJobStatus{
		Phase: fleetv1.PhaseRunning, StartTime: &earlier,
		Conditions: []metav1.Condition{
			{Type: fleetv1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: fleetv1.ReasonRunning, LastTransitionTime: earlier},
			{Type: fleetv1.ConditionComplete, Status: metav1.ConditionFalse, Reason: fleetv1.ReasonRunning, LastTransitionTime: earlier},
			{Type: fleetv1.ConditionFailed, Status: metav1.ConditionFalse, Reason: fleetv1.ReasonRunning, LastTransitionTime: earlier},
			{Type: fleetv1.ConditionSuspended, Status: metav1.ConditionFalse, Reason: "NotSuspended", LastTransitionTime: earlier},
		},
	}
	testCases := map[string]struct {
		clusters  []member.Cluster
		prev      fleetv1.ClusterJobStatus
		wantTimes map[string]time.Time
	}{
		"first status: every condition is new at Now": {
			clusters: []member.Cluster{running},
			wantTimes: map[string]time.Time{
				fleetv1.ConditionProgressing: now, fleetv1.ConditionComplete: now,
				fleetv1.ConditionFailed: now, fleetv1.ConditionSuspended: now,
			},
		},
		"no transition: the times are kept": {
			clusters: []member.Cluster{running},
			prev:     prevRunning,
			wantTimes: map[string]time.Time{
				fleetv1.ConditionProgressing: earlier.Time, fleetv1.ConditionComplete: earlier.Time,
				fleetv1.ConditionFailed: earlier.Time, fleetv1.ConditionSuspended: earlier.Time,
			},
		},
		"the run completes: the conditions that flipped moved at Now": {
			clusters: []member.Cluster{func() member.Cluster {
				r := wrappers.MakeRun(cj, "a", 3)
				return r.Succeed(r.Group(0)...).Cluster().Previous(startedRow(ago(time.Hour))).Obj()
			}()},
			prev: prevRunning,
			wantTimes: map[string]time.Time{
				fleetv1.ConditionProgressing: now, fleetv1.ConditionComplete: now,
				fleetv1.ConditionFailed: earlier.Time, fleetv1.ConditionSuspended: earlier.Time,
			},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := input(cj, tc.clusters...)
			got := statusWorld(in, &tc.prev, 1)
			gotTimes := map[string]time.Time{}
			for _, c := range got.Conditions {
				gotTimes[c.Type] = c.LastTransitionTime.Time
			}
			if diff := cmp.Diff(tc.wantTimes, gotTimes); diff != "" {
				t.Errorf("Condition transition times mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatusCurrentGroup checks currentGroup against its API doc: the group
// running now, or the last group that ran.
func TestStatusCurrentGroup(t *testing.T) {
	base := makeClusterJob().Obj()
	exit := makeClusterJob().Exit().Obj()
	suspended := makeClusterJob().Suspend(true).Obj()
	testCases := map[string]struct {
		cj                   *fleetv1.ClusterJob
		run                  func(r *wrappers.RunWrapper)
		wantCurrentGroup     int32
		wantCurrentGroupName string
	}{
		"nothing started yet: the first group": {
			cj:                   base,
			run:                  func(r *wrappers.RunWrapper) {},
			wantCurrentGroup:     0,
			wantCurrentGroupName: "batch-1",
		},
		"group 1 running": {
			cj:                   base,
			run:                  func(r *wrappers.RunWrapper) { r.Succeed(r.Group(0)...).Start(r.Group(1)...) },
			wantCurrentGroup:     1,
			wantCurrentGroupName: "batch-2",
		},
		"group 1 half started": {
			cj:                   base,
			run:                  func(r *wrappers.RunWrapper) { r.Succeed(r.Group(0)...).Succeed(r.Group(1)[0]) },
			wantCurrentGroup:     1,
			wantCurrentGroupName: "batch-2",
		},
		"every group ran: the last": {
			cj:                   base,
			run:                  func(r *wrappers.RunWrapper) { r.Succeed(r.Group(0)...).Succeed(r.Group(1)...).Succeed(r.Group(2)...) },
			wantCurrentGroup:     2,
			wantCurrentGroupName: "batch-3",
		},
		"suspended after group 0: group 0 is the last that ran": {
			cj:                   suspended,
			run:                  func(r *wrappers.RunWrapper) { r.Succeed(r.Group(0)...) },
			wantCurrentGroup:     0,
			wantCurrentGroupName: "batch-1",
		},
		"exit stopped the cluster after group 0: group 0 is the last that ran": {
			cj:                   exit,
			run:                  func(r *wrappers.RunWrapper) { r.Fail(r.Group(0)[0]).Succeed(r.Group(0)[1:]...) },
			wantCurrentGroup:     0,
			wantCurrentGroupName: "batch-1",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			r := wrappers.MakeRun(tc.cj, "a", 9)
			tc.run(r)
			in := input(tc.cj, r.Cluster().Previous(startedRow(ago(time.Hour))).Obj())
			got := statusWorld(in, &fleetv1.ClusterJobStatus{}, 1).Clusters[0]
			if got.CurrentGroup == nil || *got.CurrentGroup != tc.wantCurrentGroup || got.CurrentGroupName != tc.wantCurrentGroupName {
				t.Errorf("currentGroup = %v %q, want %d %q", ptr.Deref(got.CurrentGroup, -1), got.CurrentGroupName,
					tc.wantCurrentGroup, tc.wantCurrentGroupName)
			}
		})
	}
}

// TestFailuresMessage: a failed run's message names a few failed clusters
// and why, the causes before the clusters a stop ended, each quote bounded.
func TestFailuresMessage(t *testing.T) {
	failed := func(cluster, reason, msg string) MemberRun {
		return MemberRun{Cluster: cluster, Row: fleetv1.ClusterStatus{Phase: fleetv1.ClusterFailed, Reason: reason, Message: msg}}
	}
	completed := MemberRun{Cluster: "ok", Row: fleetv1.ClusterStatus{Phase: fleetv1.ClusterCompleted, Reason: fleetv1.ReasonCompleted}}
	testCases := map[string]struct {
		runs []MemberRun
		want string
	}{
		"none failed": {runs: []MemberRun{completed}, want: ""},
		"a reason without a message": {
			runs: []MemberRun{completed, failed("a", fleetv1.ReasonUnreachableTimeout, "")},
			want: "; failed: a (UnreachableTimeout)",
		},
		"the cause before the clusters its stop ended": {
			runs: []MemberRun{
				failed("a", fleetv1.ReasonStopped, "failureStrategy exit stopped the run: a node failed in cluster b"),
				failed("b", fleetv1.ReasonNodeFailed, "1 of 4 nodes failed: b-n1"),
			},
			want: "; failed: b (NodeFailed: 1 of 4 nodes failed: b-n1), a (Stopped: failureStrategy exit stopped the run: a node failed in cluster b)",
		},
		"three named, the rest counted, long messages cut": {
			runs: []MemberRun{
				failed("a", fleetv1.ReasonPodSecurityViolation, strings.Repeat("x", 300)),
				failed("b", fleetv1.ReasonNodeFailed, "m"), failed("c", fleetv1.ReasonNodeFailed, "m"),
				failed("d", fleetv1.ReasonNodeFailed, "m"), failed("e", fleetv1.ReasonNodeFailed, "m"),
			},
			want: "; failed: a (PodSecurityViolation: " + strings.Repeat("x", 197) + "...), b (NodeFailed: m), c (NodeFailed: m) and 2 more",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, failuresMessage(tc.runs)); diff != "" {
				t.Errorf("failuresMessage (-want +got):\n%s", diff)
			}
		})
	}
}
