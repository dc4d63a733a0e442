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
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/fleetjob/fleetjob/pkg/plan"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// twoGroups is a plan of batches a,b then c.
var twoGroups = plan.Plan{Groups: []plan.Group{
	{Name: "batch-1", Nodes: []string{"a", "b"}},
	{Name: "batch-2", Nodes: []string{"c"}},
}}

func jobName(node string) string { return makeJob(node).Name }

func pending(node string, group int) NodeState {
	return NodeState{Node: node, Group: group, GroupName: twoGroups.Groups[group].Name, Phase: NodePending}
}

func running(node string, group int) NodeState {
	return NodeState{Node: node, Job: jobName(node), Group: group, GroupName: twoGroups.Groups[group].Name, Phase: NodeRunning, StartTime: &t0}
}

func TestDerive(t *testing.T) {
	testCases := map[string]struct {
		plan         *plan.Plan
		jobs         []batchv1.Job
		nodesPresent map[string]bool
		wantState    State
	}{
		"no plan": {
			jobs:         []batchv1.Job{makeJob("a").Obj()},
			nodesPresent: present("a"),
			wantState:    State{},
		},
		"plan with no groups": {
			plan:         &plan.Plan{Skipped: []plan.SkippedNode{{Node: "a", Reason: fleetv1.NodeReasonNotReady}}},
			nodesPresent: present("a"),
			wantState:    State{Planned: true, Plan: plan.Plan{Skipped: []plan.SkippedNode{{Node: "a", Reason: fleetv1.NodeReasonNotReady}}}},
		},
		"nothing started": {
			plan:         &twoGroups,
			nodesPresent: present("a", "b", "c"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 2}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes:  []NodeState{pending("a", 0), pending("b", 0), pending("c", 1)},
			},
		},
		"mid-group: one running, one complete": {
			plan: &twoGroups,
			jobs: []batchv1.Job{
				makeJob("a").Started(t0).Obj(),
				makeJob("b").Started(t0).Complete(t1).Obj(),
			},
			nodesPresent: present("a", "b", "c"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Running: 1, Succeeded: 1}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes: []NodeState{
					running("a", 0),
					{Node: "b", Job: jobName("b"), GroupName: "batch-1", Phase: NodeSucceeded, StartTime: &t0, CompletionTime: &t1},
					pending("c", 1),
				},
			},
		},
		"failed copies reason and message": {
			plan:         &twoGroups,
			jobs:         []batchv1.Job{makeJob("a").Started(t0).Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit", t1).Obj()},
			nodesPresent: present("a", "b", "c"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 1, Failed: 1}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes: []NodeState{
					{Node: "a", Job: jobName("a"), GroupName: "batch-1", Phase: NodeFailed, Reason: "BackoffLimitExceeded",
						Message: "Job has reached the specified backoff limit", StartTime: &t0, CompletionTime: &t1},
					pending("b", 0), pending("c", 1),
				},
			},
		},
		"FailureTarget alone is still running: its pod may not be gone yet": {
			plan: &twoGroups,
			jobs: []batchv1.Job{makeJob("a").Started(t0).
				Condition(batchv1.JobFailureTarget, corev1.ConditionTrue, "DeadlineExceeded", "Job was active longer than specified deadline", t1).Obj()},
			nodesPresent: present("a", "b", "c"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 1, Running: 1}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes: []NodeState{
					{Node: "a", Job: jobName("a"), GroupName: "batch-1", Phase: NodeRunning, StartTime: &t0},
					pending("b", 0), pending("c", 1),
				},
			},
		},
		"Failed wins over FailureTarget": {
			plan: &twoGroups,
			jobs: []batchv1.Job{makeJob("a").Started(t0).
				Condition(batchv1.JobFailureTarget, corev1.ConditionTrue, "PodFailurePolicy", "target", t1).
				Failed("PodFailurePolicy", "Container main exited with code 3", t2).Obj()},
			nodesPresent: present("a", "b", "c"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 1, Failed: 1}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes: []NodeState{
					{Node: "a", Job: jobName("a"), GroupName: "batch-1", Phase: NodeFailed, Reason: "PodFailurePolicy",
						Message: "Container main exited with code 3", StartTime: &t0, CompletionTime: &t2},
					pending("b", 0), pending("c", 1),
				},
			},
		},
		"SuccessCriteriaMet alone is still running": {
			plan: &twoGroups,
			jobs: []batchv1.Job{makeJob("a").Started(t0).
				Condition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "SuccessPolicy", "Matched rules at index 0", t1).Obj()},
			nodesPresent: present("a", "b", "c"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 1, Running: 1}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes: []NodeState{
					{Node: "a", Job: jobName("a"), GroupName: "batch-1", Phase: NodeRunning, StartTime: &t0},
					pending("b", 0), pending("c", 1),
				},
			},
		},
		"False conditions and counters do not finish a Job": {
			plan: &twoGroups,
			jobs: []batchv1.Job{func() batchv1.Job {
				j := makeJob("a").Started(t0).
					Condition(batchv1.JobFailed, corev1.ConditionFalse, "", "", t1).
					Condition(batchv1.JobComplete, corev1.ConditionFalse, "", "", t1).Obj()
				j.Status.Succeeded, j.Status.Failed = 1, 1
				return j
			}()},
			nodesPresent: present("a", "b", "c"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 1, Running: 1}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes: []NodeState{func() NodeState {
					n := running("a", 0)
					n.Started, n.Pods = true, 2 // the counters say its pods ran
					return n
				}(), pending("b", 0), pending("c", 1)},
			},
		},
		"node deleted before its Job started": {
			plan:         &twoGroups,
			nodesPresent: present("a", "b"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 2}, {Name: "batch-2", Nodes: 1, Skipped: 1}},
				Nodes: []NodeState{pending("a", 0), pending("b", 0),
					{Node: "c", Group: 1, GroupName: "batch-2", Phase: NodeSkipped, Reason: fleetv1.NodeReasonNodeDeleted, Message: "node was deleted before its Job started"}},
			},
		},
		"node deleted while its Job ran": {
			plan:         &twoGroups,
			jobs:         []batchv1.Job{makeJob("a").Started(t0).Obj()},
			nodesPresent: present("b", "c"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 1, Failed: 1}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes: []NodeState{
					{Node: "a", Job: jobName("a"), GroupName: "batch-1", Phase: NodeFailed, Reason: fleetv1.NodeReasonNodeDeleted,
						Message: "node was deleted while its Job ran", StartTime: &t0},
					pending("b", 0), pending("c", 1),
				},
			},
		},
		"node deleted after its Job completed": {
			plan:         &twoGroups,
			jobs:         []batchv1.Job{makeJob("a").Started(t0).Complete(t1).Obj()},
			nodesPresent: present("b", "c"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 1, Succeeded: 1}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes: []NodeState{
					{Node: "a", Job: jobName("a"), GroupName: "batch-1", Phase: NodeSucceeded, StartTime: &t0, CompletionTime: &t1},
					pending("b", 0), pending("c", 1),
				},
			},
		},
		"Job of a node not in the plan is ignored": {
			plan: &twoGroups,
			jobs: []batchv1.Job{
				makeJob("z").Started(t0).Failed("BackoffLimitExceeded", "", t1).Obj(),
				makeJob("a").ForeignNode("z").Started(t0).Obj(),
			},
			nodesPresent: present("a", "b", "c", "z"),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 2}, {Name: "batch-2", Nodes: 1, Pending: 1}},
				Nodes:  []NodeState{pending("a", 0), pending("b", 0), pending("c", 1)},
			},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got := Derive(tc.plan, tc.jobs, tc.nodesPresent, Results{})
			if diff := cmp.Diff(tc.wantState, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Derive() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeriveDoesNotAliasJobs(t *testing.T) {
	jobs := []batchv1.Job{makeJob("a").Started(t0).Complete(t1).Obj()}
	st := Derive(&twoGroups, jobs, present("a", "b", "c"), Results{})
	jobs[0].Status.StartTime.Time = t2.Time
	jobs[0].Status.Conditions[0].LastTransitionTime = t2
	if diff := cmp.Diff(NodeState{Node: "a", Job: jobName("a"), GroupName: "batch-1", Phase: NodeSucceeded, StartTime: &t0, CompletionTime: &t1}, st.Nodes[0]); diff != "" {
		t.Errorf("Derive() result changed with its input (-want +got):\n%s", diff)
	}
}

// stateSummary is what the State methods answer.
type stateSummary struct {
	Finished, AnyFailed   bool
	Current, RunningGroup int
}

func TestStateMethods(t *testing.T) {
	testCases := map[string]struct {
		state       State
		wantSummary stateSummary
	}{
		"not planned": {
			state:       State{},
			wantSummary: stateSummary{Current: -1, RunningGroup: -1},
		},
		"planned, no groups": {
			state:       State{Planned: true},
			wantSummary: stateSummary{Finished: true, Current: 0, RunningGroup: -1},
		},
		"first group pending": {
			state:       State{Planned: true, Groups: []GroupState{{Nodes: 2, Pending: 2}, {Nodes: 1, Pending: 1}}},
			wantSummary: stateSummary{Current: 0, RunningGroup: -1},
		},
		"first group running": {
			state:       State{Planned: true, Groups: []GroupState{{Nodes: 2, Running: 1, Succeeded: 1}, {Nodes: 1, Pending: 1}}},
			wantSummary: stateSummary{Current: 0, RunningGroup: 0},
		},
		"first group failed, second pending": {
			state:       State{Planned: true, Groups: []GroupState{{Nodes: 2, Failed: 1, Skipped: 1}, {Nodes: 1, Pending: 1}}},
			wantSummary: stateSummary{AnyFailed: true, Current: 1, RunningGroup: -1},
		},
		"all finished with a failure": {
			state:       State{Planned: true, Groups: []GroupState{{Nodes: 2, Succeeded: 2}, {Nodes: 1, Failed: 1}}},
			wantSummary: stateSummary{Finished: true, AnyFailed: true, Current: 2, RunningGroup: -1},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got := stateSummary{tc.state.Finished(), tc.state.AnyFailed(), tc.state.Current(), tc.state.RunningGroup()}
			if diff := cmp.Diff(tc.wantSummary, got); diff != "" {
				t.Errorf("State methods mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGroupState(t *testing.T) {
	testCases := map[string]struct {
		group        GroupState
		wantStarted  bool
		wantFinished bool
	}{
		"all pending":           {GroupState{Nodes: 2, Pending: 2}, false, false},
		"one running":           {GroupState{Nodes: 2, Pending: 1, Running: 1}, true, false},
		"skipped only finishes": {GroupState{Nodes: 2, Skipped: 2}, true, true},
		"mixed terminal":        {GroupState{Nodes: 3, Succeeded: 1, Failed: 1, Skipped: 1}, true, true},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if got := tc.group.Started(); got != tc.wantStarted {
				t.Errorf("Started() = %v, want %v", got, tc.wantStarted)
			}
			if got := tc.group.Finished(); got != tc.wantFinished {
				t.Errorf("Finished() = %v, want %v", got, tc.wantFinished)
			}
		})
	}
}

func TestTimeOutGroup(t *testing.T) {
	started := metav1.NewTime(t0.Add(-10 * time.Minute))
	job := func(node string) batchv1.Job {
		j := makeJob(node).Started(started).Obj()
		j.CreationTimestamp, j.Status.Active, j.Status.Ready = started, 1, ptr.To[int32](1)
		return j
	}
	done := makeJob("a").Started(started).Complete(t0).Obj()
	three := allOf("a", "b", "c")
	testCases := map[string]struct {
		jobs       []batchv1.Job
		rec        Results
		deadline   time.Duration
		wantJobs   []string
		wantFailed int
		wantNodes  map[string]string // node: phase/reason
	}{
		"within the deadline: nothing": {
			jobs: []batchv1.Job{done, job("b"), job("c")}, deadline: 15 * time.Minute,
			wantNodes: map[string]string{"a": "Succeeded/", "b": "Running/", "c": "Running/"},
		},
		"past it: the running nodes fail, the finished one keeps its result": {
			jobs: []batchv1.Job{done, job("b"), job("c")}, deadline: 5 * time.Minute,
			wantJobs: []string{jobName("b"), jobName("c")}, wantFailed: 2,
			wantNodes: map[string]string{"a": "Succeeded/", "b": "Failed/GroupDeadlineExceeded", "c": "Failed/GroupDeadlineExceeded"},
		},
		"no deadline": {
			jobs: []batchv1.Job{job("a")}, deadline: 0,
			wantNodes: map[string]string{"a": "Running/", "b": "Pending/", "c": "Pending/"},
		},
		"failed so before, its Job finished before its deletion: the hub's verdict stands": {
			jobs:      []batchv1.Job{makeJob("a").Started(started).Complete(t0).Obj()},
			rec:       ResultsOf(map[string]NodeResult{"a": {Phase: NodeFailed, Reason: fleetv1.NodeReasonGroupDeadlineExceeded}}),
			deadline:  5 * time.Minute,
			wantNodes: map[string]string{"a": "Failed/GroupDeadlineExceeded", "b": "Pending/", "c": "Pending/"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			st := Derive(&three, tc.jobs, present("a", "b", "c"), tc.rec)
			jobs, failed := st.TimeOutGroup(t0.Time, tc.deadline)
			if diff := cmp.Diff(tc.wantJobs, jobs); diff != "" {
				t.Errorf("TimeOutGroup() jobs mismatch (-want +got):\n%s", diff)
			}
			if failed != tc.wantFailed {
				t.Errorf("TimeOutGroup() failed = %d, want %d", failed, tc.wantFailed)
			}
			got := map[string]string{}
			for _, n := range st.Nodes {
				got[n.Node] = string(n.Phase) + "/" + n.Reason
			}
			if diff := cmp.Diff(tc.wantNodes, got); diff != "" {
				t.Errorf("nodes mismatch (-want +got):\n%s", diff)
			}
			if g := st.Groups[0]; g.Pending+g.Running+g.Succeeded+g.Failed+g.Skipped != g.Nodes {
				t.Errorf("group counts %+v do not add up", g)
			}
			// A Job failed so is deleted until it is gone.
			if again, _ := st.TimeOutStarts(t0.Time, time.Hour, StartWatch{}, nil); tc.wantFailed > 0 && len(again) != tc.wantFailed {
				t.Errorf("TimeOutStarts() after the deadline gives %d Jobs to delete, want %d", len(again), tc.wantFailed)
			}
		})
	}
}

func TestGroupDeadline(t *testing.T) {
	first := metav1.NewTime(t0.Add(-2 * time.Minute))
	a := makeJob("a").Started(first).Obj()
	a.CreationTimestamp = first
	b := makeJob("b").Obj()
	b.CreationTimestamp = t0
	st := Derive(&twoGroups, []batchv1.Job{a, b}, present("a", "b", "c"), Results{})
	if got, ok := st.GroupDeadline(5 * time.Minute); !ok || !got.Equal(first.Add(5*time.Minute)) {
		t.Errorf("GroupDeadline() = %v, %v; want %v from the group's first Job", got, ok, first.Add(5*time.Minute))
	}
	if _, ok := Derive(&twoGroups, nil, present("a", "b", "c"), Results{}).GroupDeadline(time.Minute); ok {
		t.Error("GroupDeadline() of a run with no running group = true")
	}
}

// TestGroupNodes: a group's nodes, from a derived state's layout or, in a
// state laid out otherwise, by filtering.
func TestGroupNodes(t *testing.T) {
	p := plan.Plan{Groups: []plan.Group{{Name: "g0", Nodes: []string{"a", "b"}}, {Name: "g1", Nodes: []string{"c"}}, {Name: "g2", Nodes: []string{"d", "e", "f"}}}}
	derived := Derive(&p, nil, present("a", "b", "c", "d", "e", "f"), Results{})
	shuffled := derived
	shuffled.Nodes = slices.Clone(derived.Nodes)
	slices.Reverse(shuffled.Nodes)
	for name, st := range map[string]State{"derived": derived, "laid out otherwise": shuffled} {
		for g, want := range [][]string{{"a", "b"}, {"c"}, {"d", "e", "f"}} {
			var got []string
			for n := range st.GroupNodes(g) {
				got = append(got, n.Node)
			}
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: group %d (-want +got):\n%s", name, g, diff)
			}
		}
	}
}
