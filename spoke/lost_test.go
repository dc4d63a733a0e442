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
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func TestTimeOutLost(t *testing.T) {
	const timeout = 5 * time.Minute
	now := t0.Time
	ago := func(d time.Duration) int64 { return now.Add(-d).Unix() }
	notReady, ready, gone := NodeHealth{Found: true}, NodeHealth{Found: true, ReadySince: now.Add(-time.Hour)}, NodeHealth{}
	// A Job whose pod ran and is not Ready now: what the node lifecycle
	// controller leaves of a started pod on a node whose kubelet stopped.
	unready := func(node string) batchv1.Job { return makeJob(node).Started(t0).Pods(1, 0, 0).Obj() }
	started := func(lost int64) NodeResult { return NodeResult{Phase: NodeRunning, Started: true, Lost: lost} }
	testCases := map[string]struct {
		jobs        []batchv1.Job
		rec         Results
		reads       map[string]NodeHealth
		wantJobs    []string
		wantFailed  int
		wantNodes   map[string]string // node: phase/reason
		wantMessage string            // of node a
		wantLost    map[string]int64  // as recorded next
		wantNext    time.Time
	}{
		"a started pod not Ready on a node read NotReady: the bound starts now, by the hub's clock": {
			jobs:      []batchv1.Job{unready("a")},
			rec:       ResultsOf(map[string]NodeResult{"a": started(0)}),
			reads:     map[string]NodeHealth{"a": notReady},
			wantNodes: map[string]string{"a": "Running/"},
			wantLost:  map[string]int64{"a": now.Unix()},
			wantNext:  now.Add(timeout),
		},
		"lost for longer than the bound and still lost: NodeLost, its Job deleted": {
			jobs:        []batchv1.Job{unready("a")},
			rec:         ResultsOf(map[string]NodeResult{"a": started(ago(6 * time.Minute))}),
			reads:       map[string]NodeHealth{"a": notReady},
			wantJobs:    []string{jobName("a")},
			wantFailed:  1,
			wantNodes:   map[string]string{"a": "Failed/NodeLost"},
			wantMessage: "node not Ready for 6m0s after its pod started, past nodeLostTimeout 5m0s; its Job is deleted",
			wantLost:    map[string]int64{},
		},
		"a lost node that is gone by the read: NodeLost": {
			jobs:        []batchv1.Job{unready("a")},
			rec:         ResultsOf(map[string]NodeResult{"a": started(ago(timeout))}),
			reads:       map[string]NodeHealth{"a": gone},
			wantJobs:    []string{jobName("a")},
			wantFailed:  1,
			wantNodes:   map[string]string{"a": "Failed/NodeLost"},
			wantMessage: "node gone for 5m0s after its pod started, past nodeLostTimeout 5m0s; its Job is deleted",
			wantLost:    map[string]int64{},
		},
		"an evicted pod Terminating for good under FailureTarget: lost too": {
			jobs: []batchv1.Job{makeJob("a").Started(t0).Pods(0, 0, 1).
				Condition(batchv1.JobFailureTarget, corev1.ConditionTrue, "BackoffLimitExceeded", "", t0).Obj()},
			rec:         ResultsOf(map[string]NodeResult{"a": started(ago(6 * time.Minute))}),
			reads:       map[string]NodeHealth{"a": notReady},
			wantJobs:    []string{jobName("a")},
			wantFailed:  1,
			wantNodes:   map[string]string{"a": "Failed/NodeLost"},
			wantMessage: "node not Ready for 6m0s after its pod started, past nodeLostTimeout 5m0s; its Job is deleted",
			wantLost:    map[string]int64{},
		},
		"known lost within its bound, not read: kept, looked at again at its bound": {
			jobs:      []batchv1.Job{unready("a")},
			rec:       ResultsOf(map[string]NodeResult{"a": started(ago(time.Minute))}),
			wantNodes: map[string]string{"a": "Running/"},
			wantLost:  map[string]int64{"a": ago(time.Minute)},
			wantNext:  now.Add(4 * time.Minute),
		},
		"the node came back before the bound (read Ready, its pod not Ready yet): forgotten, polled": {
			jobs:      []batchv1.Job{unready("a")},
			rec:       ResultsOf(map[string]NodeResult{"a": started(ago(6 * time.Minute))}),
			reads:     map[string]NodeHealth{"a": ready},
			wantNodes: map[string]string{"a": "Running/"},
			wantLost:  map[string]int64{"a": 0},
			wantNext:  now.Add(LostPoll),
		},
		"its pod is Ready again: forgotten, nothing to read": {
			jobs:      []batchv1.Job{makeJob("a").Started(t0).Pods(1, 1, 0).Obj()},
			rec:       ResultsOf(map[string]NodeResult{"a": started(ago(time.Minute))}),
			wantNodes: map[string]string{"a": "Running/"},
			wantLost:  map[string]int64{"a": 0},
		},
		"a pod that never started is the start timeout's, not this bound's": {
			jobs:      []batchv1.Job{unready("a")},
			reads:     map[string]NodeHealth{"a": notReady},
			wantNodes: map[string]string{"a": "Running/"},
			wantLost:  map[string]int64{"a": 0},
		},
		"a Job that finished while its node was lost counts as it finished": {
			jobs:      []batchv1.Job{makeJob("a").Started(t0).Complete(t1).Obj()},
			rec:       ResultsOf(map[string]NodeResult{"a": started(ago(6 * time.Minute))}),
			reads:     map[string]NodeHealth{"a": notReady},
			wantNodes: map[string]string{"a": "Succeeded/"},
			wantLost:  map[string]int64{},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			one := allOf("a")
			st := Derive(&one, tc.jobs, present("a"), tc.rec)
			jobs, failed, next := st.TimeOutLost(now, timeout, tc.reads)
			if diff := cmp.Diff(tc.wantJobs, jobs); diff != "" {
				t.Errorf("TimeOutLost() jobs mismatch (-want +got):\n%s", diff)
			}
			if failed != tc.wantFailed {
				t.Errorf("TimeOutLost() failed = %d, want %d", failed, tc.wantFailed)
			}
			if !next.Equal(tc.wantNext) {
				t.Errorf("TimeOutLost() next = %v, want %v", next, tc.wantNext)
			}
			got := map[string]string{}
			for _, n := range st.Nodes {
				got[n.Node] = string(n.Phase) + "/" + n.Reason
			}
			if diff := cmp.Diff(tc.wantNodes, got); diff != "" {
				t.Errorf("nodes mismatch (-want +got):\n%s", diff)
			}
			if st.Nodes[0].Message != tc.wantMessage {
				t.Errorf("message = %q, want %q", st.Nodes[0].Message, tc.wantMessage)
			}
			rec, _ := Record(tc.rec, st, nil, nil)
			gotLost := map[string]int64{}
			for node, r := range rec.Nodes.All() {
				if !r.final() {
					gotLost[node] = r.Lost
				}
			}
			if diff := cmp.Diff(tc.wantLost, gotLost); diff != "" {
				t.Errorf("recorded lost times mismatch (-want +got):\n%s", diff)
			}
			if g := st.Groups[0]; g.Pending+g.Running+g.Succeeded+g.Failed+g.Skipped != g.Nodes {
				t.Errorf("group counts %+v do not add up", g)
			}
		})
	}
}

// A node failed NodeLost keeps its verdict, and its Job is deleted again,
// until the Job is gone, even if the node comes back and its pod finishes.
func TestNodeLostVerdictStands(t *testing.T) {
	one := allOf("a")
	rec := ResultsOf(map[string]NodeResult{"a": {Phase: NodeFailed, Reason: fleetv1.NodeReasonNodeLost, Message: "node not Ready"}})
	st := Derive(&one, []batchv1.Job{makeJob("a").Started(t0).Complete(t1).Obj()}, present("a"), rec)
	jobs, failed := st.TimeOutStarts(t0.Time, time.Minute, StartWatch{}, nil)
	if diff := cmp.Diff([]string{jobName("a")}, jobs); diff != "" || failed != 0 {
		t.Errorf("TimeOutStarts() = %v, %d; want the lost node's Job to delete again, 0 failed now (-want +got):\n%s", jobs, failed, diff)
	}
	if n := st.Nodes[0]; n.Phase != NodeFailed || n.Reason != fleetv1.NodeReasonNodeLost {
		t.Errorf("node = %s/%s, want Failed/NodeLost", n.Phase, n.Reason)
	}
}

func TestLostReads(t *testing.T) {
	const timeout = 5 * time.Minute
	now := t0.Time
	nodes := []string{"due", "waiting", "u1", "u2", "u3", "u4", "u5", "ready", "fresh"}
	recorded := map[string]NodeResult{}
	var jobs []batchv1.Job
	for _, n := range nodes {
		switch n {
		case "ready":
			jobs = append(jobs, makeJob(n).Started(t0).Pods(1, 1, 0).Obj())
		default:
			jobs = append(jobs, makeJob(n).Started(t0).Pods(1, 0, 0).Obj())
		}
		if n != "fresh" {
			recorded[n] = NodeResult{Phase: NodeRunning, Started: true}
		}
	}
	recorded["due"] = NodeResult{Phase: NodeRunning, Started: true, Lost: now.Add(-timeout).Unix()}
	recorded["waiting"] = NodeResult{Phase: NodeRunning, Started: true, Lost: now.Add(-time.Minute).Unix()}
	rec := ResultsOf(recorded)
	p := allOf(nodes...)
	st := Derive(&p, jobs, present(nodes...), rec)

	if got := st.LostReads(now, timeout, 3); len(got) != 3 || got[0] != "due" {
		t.Errorf("LostReads(max 3) = %v; want the node due first, then 2 not known lost", got)
	}
	// Over successive polls, every node not known lost is read however
	// small max is; a node lost within its bound, Ready, or never started
	// is never read.
	seen := map[string]int{}
	for i := range 5 {
		for _, n := range st.LostReads(now.Add(time.Duration(i)*LostPoll), timeout, 2) {
			seen[n]++
		}
	}
	for _, n := range []string{"u1", "u2", "u3", "u4", "u5"} {
		if seen[n] == 0 {
			t.Errorf("node %s never read over 5 polls: %v", n, seen)
		}
	}
	for _, n := range []string{"waiting", "ready", "fresh"} {
		if seen[n] > 0 {
			t.Errorf("node %s read %d times; want never", n, seen[n])
		}
	}
}

// A node deleted while its Job ran fails NodeDeleted and its Job is
// deleted, until gone: when a node registers again under the same name (a
// VM rebuilt, a pool scaled back), or its kubelet ran on (a real one
// does), the Job's pod would run it after the run counted it failed. The
// verdict is timed when the hub saw it (the record keeps when, and the
// deletion of the Job is bounded from then), and a pod that finishes after
// it does not change it.
func TestNodeDeletedJobDeleted(t *testing.T) {
	one := allOf("a")
	now := t1.Time
	running := makeJob("a").Started(t0).Pods(1, 1, 0).Obj()
	st := Derive(&one, []batchv1.Job{running}, present(), Results{})
	jobs, _ := st.TimeOutStarts(now, time.Hour, StartWatch{}, nil)
	if diff := cmp.Diff([]string{jobName("a")}, jobs); diff != "" {
		t.Errorf("TimeOutStarts() jobs mismatch (-want +got):\n%s", diff)
	}
	want := NodeState{Node: "a", Job: jobName("a"), GroupName: "all", Phase: NodeFailed, Reason: fleetv1.NodeReasonNodeDeleted,
		Message: "node was deleted while its Job ran", StartTime: &t0, CompletionTime: &metav1.Time{Time: now}}
	if diff := cmp.Diff(want, st.Nodes[0]); diff != "" {
		t.Errorf("the deleted node mismatch (-want +got):\n%s", diff)
	}
	rec, _ := Record(ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Start: t0.Unix(), Started: true}}), st, nil, nil)

	testCases := map[string]struct {
		job     batchv1.Job
		present map[string]bool
	}{
		"the node is still gone":                          {job: running, present: present()},
		"the node registered again, its Job still runs":   {job: running, present: present("a")},
		"its kubelet ran on: the pod finished afterwards": {job: makeJob("a").Started(t0).Complete(t2).Obj(), present: present("a")},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			st := Derive(&one, []batchv1.Job{tc.job}, tc.present, rec)
			jobs, _ := st.TimeOutStarts(t2.Time, time.Hour, StartWatch{}, nil)
			if diff := cmp.Diff([]string{jobName("a")}, jobs); diff != "" {
				t.Errorf("TimeOutStarts() jobs mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, st.Nodes[0]); diff != "" {
				t.Errorf("the deleted node mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
