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

package member_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/spoke"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// The tables of hub/fleet check what the fleet and member controllers
// converge to over whole worlds; these check the member alone, with the
// fleet's say (admission, halt) as its MemberRun carries it.

func clusterJob(exit bool) *fleetv1.ClusterJob {
	cj := wrappers.MakeClusterJob("disk-clean", "team-a").Batch(3, fleetv1.BatchOrderAlphabetical).Obj()
	cj.UID = "3d0c6a8e-91b2-4f57-a7d4-2e6b1c9f0a55"
	if exit {
		cj.Spec.FailureStrategy = fleetv1.FailureStrategyExit
	}
	return cj
}

func started() fleetv1.ClusterStatus {
	return fleetv1.ClusterStatus{Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonRunning,
		StartTime: &metav1.Time{Time: wrappers.Ago(time.Hour)}}
}

// memberCase is one cluster's input and what Decide and Status must make
// of it.
type memberCase struct {
	cj       *fleetv1.ClusterJob
	cluster  member.Cluster
	admitted bool
	halt     *fleetv1.Halt
	accepted int
	want     member.Decision
	wantRow  [3]string // phase, reason, message
}

// runMemberCases checks each case's decision and row, a clock at
// wrappers.Now, an unreachable timeout of an hour and a member error
// timeout of ten minutes.
func runMemberCases(t *testing.T, testCases map[string]memberCase) {
	t.Helper()
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := member.Input{Spec: &tc.cj.Spec, Cluster: tc.cluster, Admitted: tc.admitted, Halt: tc.halt, AcceptedFailures: tc.accepted, Now: wrappers.Now,
				UnreachableTimeout: time.Hour, MemberErrorTimeout: 10 * time.Minute, NodeStartTimeout: fleetv1.DefaultNodeStartTimeout}
			d := member.Decide(in)
			if diff := cmp.Diff(tc.want, d); diff != "" {
				t.Errorf("member.Decide() mismatch (-want +got):\n%s", diff)
			}
			row := member.Status(in, d)
			if got := [3]string{string(row.Phase), row.Reason, row.Message}; got != tc.wantRow {
				t.Errorf("row = %q,\n want %q", got, tc.wantRow)
			}
			if row.Name != tc.cluster.Name {
				t.Errorf("row.Name = %q, want %q", row.Name, tc.cluster.Name)
			}
		})
	}
}

func TestDecideAndStatus(t *testing.T) {
	keepgoing, exit := clusterJob(false), clusterJob(true)
	suspended := clusterJob(false)
	suspended.Spec.Suspend = ptr.To(true)
	halt := &fleetv1.Halt{Reason: fleetv1.ReasonStopped, Message: "a node failed in cluster b"}
	run := func(cj *fleetv1.ClusterJob) *wrappers.RunWrapper { return wrappers.MakeRun(cj, "a", 6) }

	testCases := map[string]memberCase{
		"not admitted: waits for its turn, though ready": {
			cj: keepgoing, cluster: wrappers.MakeCluster("a").Obj(),
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Pending", fleetv1.ReasonWaitingForTurn, "waiting for a slot under clusterRollout.maxConcurrentClusters"},
		},
		"not admitted under an approval not given yet: the row says what it may wait for": {
			cj: func() *fleetv1.ClusterJob {
				cj := clusterJob(false)
				cj.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1)}
				return cj
			}(), cluster: wrappers.MakeCluster("a").Obj(),
			want: member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Pending", fleetv1.ReasonWaitingForTurn, "waiting for its turn: the approval after the canary (spec.approval; " +
				"see the ClusterJob's Approved condition), or a slot under clusterRollout.maxConcurrentClusters"},
		},
		"admitted and ready: its plan is frozen": {
			cj: keepgoing, cluster: wrappers.MakeCluster("a").Obj(), admitted: true,
			want:    member.Decision{Freeze: true, Start: member.NoGroup},
			wantRow: [3]string{"Pending", fleetv1.ReasonPending, "starting"},
		},
		"admitted but unreachable: nothing, until it is back or times out": {
			cj: keepgoing, cluster: wrappers.MakeCluster("a").Disengaged().Unreachable(wrappers.Ago(time.Minute)).Obj(), admitted: true,
			want:    member.Decision{Start: member.NoGroup, RequeueAfter: time.Hour - time.Minute},
			wantRow: [3]string{"Pending", wrappers.UnreachableReason, wrappers.UnreachableMessage},
		},
		"admitted but suspended: nothing starts": {
			cj: suspended, cluster: wrappers.MakeCluster("a").Obj(), admitted: true,
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Pending", fleetv1.ReasonSuspended, "spec.suspend is true"},
		},
		"planned: group 0 starts": {
			cj: keepgoing, cluster: run(keepgoing).Cluster().Previous(started()).Obj(), admitted: true,
			want:    member.Decision{Start: 0},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"halted before it started: never starts, and is done": {
			cj: keepgoing, cluster: wrappers.MakeCluster("a").Obj(), admitted: true, halt: halt,
			want:    member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Pending", fleetv1.ReasonStopped, "failureStrategy exit stopped the run before this cluster started: a node failed in cluster b"},
		},
		"halted with a group running: no new group, the running one finishes": {
			cj: keepgoing, cluster: func() member.Cluster {
				r := run(keepgoing)
				return r.Succeed(r.Group(0)...).Start(r.Group(1)...).Cluster().Previous(started()).Obj()
			}(), admitted: true, halt: halt,
			want:    member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"halted between groups: it ends Failed, Stopped": {
			cj: keepgoing, cluster: func() member.Cluster {
				r := run(keepgoing)
				return r.Succeed(r.Group(0)...).Cluster().Previous(started()).Obj()
			}(), admitted: true, halt: halt,
			want:    member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Failed", fleetv1.ReasonStopped, "failureStrategy exit stopped the run: a node failed in cluster b"},
		},
		"exit, its own node failed: it stops at once, without waiting for the fleet": {
			cj: exit, cluster: func() member.Cluster {
				r := run(exit)
				return r.Fail(r.Group(0)[0]).Succeed(r.Group(0)[1:]...).Cluster().Previous(started()).Obj()
			}(), admitted: true,
			want:    member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Failed", fleetv1.ReasonNodeFailed, "1 of 6 nodes failed: a-n01"},
		},
		"keepgoing, its own node failed: the next group starts": {
			cj: keepgoing, cluster: func() member.Cluster {
				r := run(keepgoing)
				return r.Fail(r.Group(0)[0]).Succeed(r.Group(0)[1:]...).Cluster().Previous(started()).Obj()
			}(), admitted: true,
			want:    member.Decision{Start: 1},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
	}
	runMemberCases(t, testCases)
}

// TestStatusFailedNodes: a MemberRun lists up to 500 failed nodes, sorted by
// name, where a ClusterJob row lists 5.
func TestStatusFailedNodes(t *testing.T) {
	cj := clusterJob(false)
	cj.Spec.Strategy = fleetv1.Strategy{Type: fleetv1.StrategyAll}
	r := wrappers.MakeRun(cj, "a", 600)
	r.Fail(r.Group(0)...)
	in := member.Input{Spec: &cj.Spec, Cluster: r.Cluster().Previous(started()).Obj(), Admitted: true, Now: wrappers.Now,
		UnreachableTimeout: time.Hour, MemberErrorTimeout: 10 * time.Minute}
	row := member.Status(in, member.Decide(in))
	if row.Nodes.Failed != 600 || len(row.FailedNodes) != fleetv1.MaxMemberRunFailedNodes {
		t.Fatalf("row counts %d failed with %d samples, want 600 with %d", row.Nodes.Failed, len(row.FailedNodes), fleetv1.MaxMemberRunFailedNodes)
	}
	names := wrappers.NodeNames("a", 600)
	slices.Sort(names)
	for i, f := range row.FailedNodes {
		if want := names[i]; f.Node != want || f.Reason != wrappers.FailReason {
			t.Fatalf("failedNodes[%d] = %s (%s), want %s (%s)", i, f.Node, f.Reason, want, wrappers.FailReason)
		}
	}
	var mr fleetv1.MemberRunStatus
	mr.SetRow(row)
	if got := mr.Row(); len(got.FailedNodes) != fleetv1.MaxFailedNodeSamples || got.FailedNodes[0].Node != names[0] {
		t.Errorf("Row() has %d samples from %s, want %d from %s", len(got.FailedNodes), got.FailedNodes[0].Node, fleetv1.MaxFailedNodeSamples, names[0])
	}
	if mr.GroupProgress != "1/1" || mr.NodeProgress != "0/600" {
		t.Errorf("progress columns = %q, %q, want 1/1, 0/600", mr.GroupProgress, mr.NodeProgress)
	}
}

// TestFailureBudgets: a cluster's own budgets (per group, per cluster) stop
// or hold it as failurePolicy.onExceeded says, skipped nodes never count,
// and failures a person accepted by resuming hold it no more.
func TestFailureBudgets(t *testing.T) {
	num := func(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v }
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	policy := func(p fleetv1.FailurePolicy) *fleetv1.ClusterJob {
		cj := clusterJob(false)
		cj.Spec.FailurePolicy = &p
		return cj
	}
	perCluster := policy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: num(1)})
	perGroup := policy(fleetv1.FailurePolicy{MaxFailedNodesPerGroup: pct("50%")})
	suspendPerCluster := policy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: num(1), OnExceeded: fleetv1.OnExceededSuspend})
	runWide := policy(fleetv1.FailurePolicy{MaxFailedNodes: num(0)})
	runWidePct := policy(fleetv1.FailurePolicy{MaxFailedNodes: pct("1%")})
	zeroPerCluster := policy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: num(0)})
	// 6 nodes in groups of 3: a-n01..a-n03, then a-n04..a-n06.
	group0 := func(cj *fleetv1.ClusterJob, failed int) *wrappers.RunWrapper {
		r := wrappers.MakeRun(cj, "a", 6)
		return r.Fail(r.Group(0)[:failed]...).Succeed(r.Group(0)[failed:]...)
	}
	const held = "; the run is suspended until spec.suspend is set back to false, which accepts these failures"

	testCases := map[string]memberCase{
		"per cluster, within the budget: the next group starts": {
			cj: perCluster, cluster: group0(perCluster, 1).Cluster().Previous(started()).Obj(),
			want:    member.Decision{Start: 1},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"per cluster, exceeded between groups: it stops and ends Failed, naming the budget": {
			cj: perCluster, cluster: group0(perCluster, 2).Cluster().Previous(started()).Obj(),
			want: member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Failed", fleetv1.ReasonFailureBudgetExceeded,
				"maxFailedNodesPerCluster 1 allows 1 of 6 nodes to fail; 2 failed in cluster a"},
		},
		"per cluster, exceeded while a node still runs: no new group, the running one finishes": {
			cj: perCluster, cluster: func() member.Cluster {
				r := wrappers.MakeRun(perCluster, "a", 6)
				return r.Fail(r.Group(0)[:2]...).Start(r.Group(0)[2]).Cluster().Previous(started()).Obj()
			}(),
			want: member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Running", fleetv1.ReasonFailureBudgetExceeded,
				"no new group starts: maxFailedNodesPerCluster 1 allows 1 of 6 nodes to fail; 2 failed in cluster a"},
		},
		"per group 50% of 3 allows 1: two failed in group 0 stop the cluster": {
			cj: perGroup, cluster: group0(perGroup, 2).Cluster().Previous(started()).Obj(),
			want: member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Failed", fleetv1.ReasonFailureBudgetExceeded,
				"maxFailedNodesPerGroup 50% allows 1 of 3 nodes to fail; 2 failed in group batch-1 of cluster a"},
		},
		"per group, one failure in each group: every group ran, none exceeded": {
			cj: perGroup, cluster: func() member.Cluster {
				r := wrappers.MakeRun(perGroup, "a", 6)
				return r.Fail(r.Group(0)[0], r.Group(1)[0]).Succeed(r.Group(0)[1:]...).Succeed(r.Group(1)[1:]...).Cluster().Previous(started()).Obj()
			}(),
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Failed", fleetv1.ReasonNodeFailed, "2 of 6 nodes failed: a-n01, a-n04"},
		},
		"per cluster 0, a node skipped (deleted before its Job): skipped nodes never count": {
			cj: zeroPerCluster, cluster: func() member.Cluster {
				r := wrappers.MakeRun(zeroPerCluster, "a", 6)
				return r.Succeed(r.Group(0)[1:]...).Deleted(r.Group(0)[0]).Cluster().Previous(started()).Obj()
			}(),
			want:    member.Decision{Start: 1},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"a run-wide number its own failures pass: it stops at once, without waiting for the fleet": {
			cj: runWide, cluster: group0(runWide, 1).Cluster().Previous(started()).Obj(),
			want: member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Failed", fleetv1.ReasonFailureBudgetExceeded,
				"maxFailedNodes 0 allows 0 nodes of the run to fail; 1 failed in cluster a alone"},
		},
		"a run-wide percentage is the fleet's: the member goes on": {
			cj: runWidePct, cluster: group0(runWidePct, 1).Cluster().Previous(started()).Obj(),
			want:    member.Decision{Start: 1},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"Suspend, exceeded: held, its row says why and how to go on": {
			cj: suspendPerCluster, cluster: group0(suspendPerCluster, 2).Cluster().Previous(started()).Obj(),
			want: member.Decision{Start: member.NoGroup, Held: true},
			wantRow: [3]string{"Running", fleetv1.ReasonFailureBudgetExceeded,
				"maxFailedNodesPerCluster 1 allows 1 of 6 nodes to fail; 2 failed in cluster a" + held},
		},
		"Suspend, the failures accepted: the next group starts": {
			cj: suspendPerCluster, cluster: group0(suspendPerCluster, 2).Cluster().Previous(started()).Obj(), accepted: 2,
			want:    member.Decision{Start: 1},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"Suspend, one more failure past those accepted: held again": {
			cj: suspendPerCluster, cluster: func() member.Cluster {
				r := group0(suspendPerCluster, 2)
				return r.Fail(r.Group(1)[0]).Start(r.Group(1)[1:]...).Cluster().Previous(started()).Obj()
			}(), accepted: 2,
			want: member.Decision{Start: member.NoGroup, Held: true},
			wantRow: [3]string{"Running", fleetv1.ReasonFailureBudgetExceeded,
				"maxFailedNodesPerCluster 1 allows 1 of 6 nodes to fail; 3 failed in cluster a" + held},
		},
		"Suspend, exceeded in the last group: nothing is left to hold, it ends Failed": {
			cj: suspendPerCluster, cluster: func() member.Cluster {
				r := group0(suspendPerCluster, 2)
				return r.Succeed(r.Group(1)...).Cluster().Previous(started()).Obj()
			}(), accepted: 0,
			want: member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Failed", fleetv1.ReasonFailureBudgetExceeded,
				"maxFailedNodesPerCluster 1 allows 1 of 6 nodes to fail; 2 failed in cluster a"},
		},
		"a budget the API server would refuse stops the cluster, naming the field": {
			cj: policy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: pct("many")}), cluster: group0(perCluster, 0).Cluster().Previous(started()).Obj(),
			want: member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Failed", fleetv1.ReasonFailureBudgetExceeded,
				`spec.failurePolicy.maxFailedNodesPerCluster: "many" is neither a number nor a percentage`},
		},
	}
	for name, tc := range testCases {
		tc.admitted = true
		testCases[name] = tc
	}
	runMemberCases(t, testCases)
}

// TestGates: a soak holds the next group after a successful one, a failed
// group hands off at once, and the row says what is waited on; a progress
// deadline is looked at again when it is due.
func TestGates(t *testing.T) {
	gated := func(g fleetv1.Gates) *fleetv1.ClusterJob {
		cj := clusterJob(false)
		cj.Spec.Gates = &g
		return cj
	}
	// wrappers finish Jobs a minute before wrappers.Now.
	soak5m := gated(fleetv1.Gates{Soak: &metav1.Duration{Duration: 5 * time.Minute}})
	soak30s := gated(fleetv1.Gates{Soak: &metav1.Duration{Duration: 30 * time.Second}})
	deadline := gated(fleetv1.Gates{ProgressDeadline: &metav1.Duration{Duration: 2 * time.Hour}})
	group0 := func(cj *fleetv1.ClusterJob, failed int) member.Cluster {
		r := wrappers.MakeRun(cj, "a", 6)
		return r.Fail(r.Group(0)[:failed]...).Succeed(r.Group(0)[failed:]...).Cluster().Previous(started()).Obj()
	}
	until := wrappers.Ago(time.Minute).Add(5 * time.Minute).UTC().Format(time.RFC3339)
	health := gated(fleetv1.Gates{NodeHealth: &fleetv1.NodeHealthGate{ReadyFor: metav1.Duration{Duration: time.Minute}, Timeout: metav1.Duration{Duration: 5 * time.Minute}}})
	// healthOf0 is group 0 succeeded, its first node seen healthy and the
	// others not Ready, gated as the hub gates it.
	healthOf0 := func() member.Cluster {
		c := group0(health, 0)
		nodes := c.State.Plan.Groups[0].Nodes
		reads := map[string]spoke.NodeHealth{nodes[0]: {Found: true, ReadySince: wrappers.Ago(time.Hour)}}
		for _, n := range nodes[1:] {
			reads[n] = spoke.NodeHealth{Found: true}
		}
		c.HealthRecheck = c.State.GateHealth(wrappers.Now, *health.Spec.Gates.NodeHealth, reads)
		return c
	}

	testCases := map[string]memberCase{
		"soak 5m, group 0 succeeded a minute ago: the next group waits 4m more": {
			cj: soak5m, cluster: group0(soak5m, 0),
			want:    member.Decision{Start: member.NoGroup, RequeueAfter: 4 * time.Minute},
			wantRow: [3]string{"Running", fleetv1.ReasonSoaking, "Soaking until " + until + " (spec.gates.soak 5m0s after group batch-1)"},
		},
		"soak 30s, over: the next group starts": {
			cj: soak30s, cluster: group0(soak30s, 0),
			want:    member.Decision{Start: 1},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"soak 5m, group 0 had a failure: no soak, the next group starts": {
			cj: soak5m, cluster: group0(soak5m, 1),
			want:    member.Decision{Start: 1},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"soak 5m, the next group started already: nothing waits": {
			cj: soak5m, cluster: func() member.Cluster {
				r := wrappers.MakeRun(soak5m, "a", 6)
				return r.Succeed(r.Group(0)...).Start(r.Group(1)...).Cluster().Previous(started()).Obj()
			}(),
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"nodeHealth: group 0 succeeded, 2 of its nodes not Ready yet: the next group waits, read again in 5s": {
			cj: health, cluster: healthOf0(),
			want:    member.Decision{Start: member.NoGroup, RequeueAfter: 5 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, "Waiting for node health: 1 of 3 in group batch-1 (spec.gates.nodeHealth)"},
		},
		"progress deadline 2h, a group started an hour ago: looked at again when it is due": {
			cj: deadline, cluster: func() member.Cluster {
				r := wrappers.MakeRun(deadline, "a", 6)
				return r.Succeed(r.Group(0)...).Start(r.Group(1)...).Cluster().Previous(started()).Obj()
			}(),
			want:    member.Decision{Start: member.NoGroup, RequeueAfter: time.Hour},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
	}
	for name, tc := range testCases {
		tc.admitted = true
		testCases[name] = tc
	}
	runMemberCases(t, testCases)
}

// TestHubFailedJobsHoldTheCluster: a cluster whose last nodes the hub
// failed (their pod never started) does not end while their Jobs still
// exist: a terminal row is never reconciled again, so a Job whose deletion
// failed would stay, and its late pod would run the node after the run
// ended. Past the deletion deadline (the unreachable timeout after the
// verdict) the cluster ends anyway.
func TestHubFailedJobsHoldTheCluster(t *testing.T) {
	cj := clusterJob(false)
	cj.Spec.Strategy = fleetv1.Strategy{Type: fleetv1.StrategyAll}
	failedAt := func(verdict time.Time) member.Cluster {
		r := wrappers.MakeRun(cj, "a", 2)
		nodes := r.Group(0)
		st := r.Succeed(nodes[0]).Start(nodes[1]).State()
		// Seen waiting since the bound, by a member that made no progress.
		since := verdict.Add(-fleetv1.DefaultNodeStartTimeout)
		w := spoke.StartWatch{Job: map[string]time.Time{nodes[1]: since}, Pod: map[string]time.Time{nodes[1]: since}, Progress: since}
		jobs, failed := st.TimeOutStarts(verdict, fleetv1.DefaultNodeStartTimeout, w, nil)
		if failed != 1 {
			t.Fatalf("TimeOutStarts failed %d nodes, want 1", failed)
		}
		c := wrappers.MakeCluster("a").State(st).Previous(started()).Obj()
		c.StartTimedOut = jobs
		return c
	}
	testCases := map[string]struct {
		cluster      member.Cluster
		wantPhase    fleetv1.ClusterPhase
		wantReason   string
		wantFinished bool
		wantRequeue  time.Duration
	}{
		"its Job still exists: the cluster runs on and the delete is retried": {
			cluster: failedAt(wrappers.Now), wantPhase: fleetv1.ClusterRunning, wantReason: fleetv1.ReasonRunning, wantRequeue: 30 * time.Second,
		},
		"its delete failed: the error is retried, the cluster runs on": {
			cluster: func() member.Cluster {
				c := failedAt(wrappers.Ago(time.Minute))
				c.Error = errors.New("deleting Job x: forbidden")
				return c
			}(), wantPhase: fleetv1.ClusterRunning, wantReason: fleetv1.ReasonMemberError, wantRequeue: time.Second,
		},
		"past the deletion deadline: the cluster ends": {
			cluster: failedAt(wrappers.Ago(2 * time.Hour)), wantPhase: fleetv1.ClusterFailed, wantReason: fleetv1.ReasonNodeFailed, wantFinished: true,
		},
		"its Job is gone: the cluster ends": {
			cluster: func() member.Cluster {
				c := failedAt(wrappers.Now)
				c.StartTimedOut = nil
				return c
			}(), wantPhase: fleetv1.ClusterFailed, wantReason: fleetv1.ReasonNodeFailed, wantFinished: true,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := member.Input{Spec: &cj.Spec, Cluster: tc.cluster, Admitted: true, Now: wrappers.Now,
				UnreachableTimeout: time.Hour, MemberErrorTimeout: 10 * time.Minute, NodeStartTimeout: fleetv1.DefaultNodeStartTimeout}
			d := member.Decide(in)
			row := member.Status(in, d)
			if row.Phase != tc.wantPhase || row.Reason != tc.wantReason {
				t.Errorf("row = %s %s (%s), want %s %s", row.Phase, row.Reason, row.Message, tc.wantPhase, tc.wantReason)
			}
			if got := row.CompletionTime != nil; got != tc.wantFinished {
				t.Errorf("row finished = %v, want %v", got, tc.wantFinished)
			}
			if !tc.wantFinished && d.RequeueAfter != tc.wantRequeue {
				t.Errorf("RequeueAfter = %s, want %s", d.RequeueAfter, tc.wantRequeue)
			}
		})
	}
}

// TestNodeLost: a node lost after its pod started holds its group only until
// spec.nodeLostTimeout; then it fails, NodeLost, and the run goes on.
func TestNodeLost(t *testing.T) {
	keepgoing, exit := clusterJob(false), clusterJob(true)
	const timeout = 10 * time.Minute
	// lost is group 0 with its first node lost since `since`, the others
	// succeeded, read and timed out as the hub does it.
	lost := func(cj *fleetv1.ClusterJob, since time.Time, reads map[string]spoke.NodeHealth) member.Cluster {
		r := wrappers.MakeRun(cj, "a", 6)
		c := r.Succeed(r.Group(0)[1:]...).LostSince(since, r.Group(0)[0]).Cluster().Previous(started()).Obj()
		c.StartTimedOut, c.Lost, c.LostRecheck = c.State.TimeOutLost(wrappers.Now, timeout, reads)
		return c
	}
	notReady := map[string]spoke.NodeHealth{"a-n01": {Found: true}}
	testCases := map[string]memberCase{
		"lost a minute ago: nothing starts; looked at again when its bound ends, with no event to wake it": {
			cj: keepgoing, cluster: lost(keepgoing, wrappers.Ago(time.Minute), nil),
			want:    member.Decision{Start: member.NoGroup, RequeueAfter: 9 * time.Minute},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"lost past its bound, still lost: it fails NodeLost and keepgoing starts the next group; its Job's delete is retried": {
			cj: keepgoing, cluster: lost(keepgoing, wrappers.Ago(11*time.Minute), notReady),
			want:    member.Decision{Start: 1, RequeueAfter: 30 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"lost past its bound under exit: the cluster stops, and ends once the lost node's Job is gone": {
			cj: exit, cluster: lost(exit, wrappers.Ago(11*time.Minute), notReady),
			want:    member.Decision{Start: member.NoGroup, Stopped: true, RequeueAfter: 30 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, "deleting 1 Jobs of nodes the hub failed, disk-clean-a-n01-cru74m3yqv first, before the cluster ends"},
		},
		"lost past its bound under exit, its Job gone: the cluster fails, naming the node": {
			cj: exit, cluster: func() member.Cluster {
				c := lost(exit, wrappers.Ago(11*time.Minute), notReady)
				c.StartTimedOut = nil
				return c
			}(),
			want:    member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Failed", fleetv1.ReasonNodeFailed, "1 of 6 nodes failed: a-n01"},
		},
		"back within its bound (read Ready): forgotten, read again in a poll": {
			cj: keepgoing, cluster: lost(keepgoing, wrappers.Ago(11*time.Minute), map[string]spoke.NodeHealth{"a-n01": {Found: true, ReadySince: wrappers.Ago(time.Second)}}),
			want:    member.Decision{Start: member.NoGroup, RequeueAfter: spoke.LostPoll},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
	}
	for name, tc := range testCases {
		tc.admitted = true
		testCases[name] = tc
	}
	runMemberCases(t, testCases)
	c := lost(keepgoing, wrappers.Ago(11*time.Minute), notReady)
	row := member.Status(member.Input{Spec: &keepgoing.Spec, Cluster: c, Admitted: true, Now: wrappers.Now,
		UnreachableTimeout: time.Hour, MemberErrorTimeout: 10 * time.Minute, NodeStartTimeout: fleetv1.DefaultNodeStartTimeout}, member.Decision{Start: 1})
	if len(row.FailedNodes) != 1 || row.FailedNodes[0].Node != "a-n01" || row.FailedNodes[0].Reason != fleetv1.NodeReasonNodeLost ||
		row.FailedNodes[0].Message != "node not Ready for 11m0s after its pod started, past nodeLostTimeout 10m0s; its Job is deleted" {
		t.Errorf("row.FailedNodes = %+v; want a-n01 NodeLost, saying for how long", row.FailedNodes)
	}
	if len(c.StartTimedOut) != 1 {
		t.Errorf("Jobs to delete = %v; want the lost node's", c.StartTimedOut)
	}
}

// TestMemberStalled: a member that created or started no pod of the run
// for nodeStartTimeout while Jobs waited fails as a member, with the
// reason, and starts no further group (each would wait as long again).
func TestMemberStalled(t *testing.T) {
	keepgoing := clusterJob(false)
	stalled := func() member.Cluster {
		r := wrappers.MakeRun(keepgoing, "a", 6)
		c := r.Start(r.Group(0)...).Cluster().Previous(started()).Obj()
		w := c.State.Watch(spoke.StartWatch{}, wrappers.Ago(fleetv1.DefaultNodeStartTimeout))
		w = c.State.Watch(w, wrappers.Now)
		c.Stalled = c.State.Stalled(wrappers.Now, fleetv1.DefaultNodeStartTimeout, w, nil)
		c.StartTimedOut, c.NotStarted = c.State.TimeOutStarts(wrappers.Now, fleetv1.DefaultNodeStartTimeout, w, nil)
		return c
	}
	const stall = "the member created or started no pod of the run for 10m0s (spec.nodeStartTimeout) while 3 of its Jobs waited: " +
		"its Job controller or scheduler makes no progress, or a quota or an admission policy refuses every pod (see the Jobs' events)"
	runMemberCases(t, map[string]memberCase{
		"no pod for any Job of group 0 for the bound: the cluster fails MemberStalled, once its Jobs are deleted; no group starts meanwhile": {
			cj: keepgoing, cluster: stalled(), admitted: true,
			want:    member.Decision{Start: member.NoGroup, RequeueAfter: 30 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonMemberStalled, stall},
		},
		"its Jobs gone, the stall remembered from the row: the cluster fails MemberStalled": {
			cj: keepgoing, cluster: func() member.Cluster {
				c := stalled()
				c.StartTimedOut, c.Stalled = nil, 0
				prev := started()
				prev.Reason, prev.Message = fleetv1.ReasonMemberStalled, stall
				c.Previous = &prev
				return c
			}(), admitted: true,
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Failed", fleetv1.ReasonMemberStalled, stall},
		},
	})
}

// TestRefusedNodesInTheRow: while pods wait to start, the cluster's row
// names the first whose member says what refuses it, with its reason, so
// that the refusal shows long before nodeStartTimeout ends the wait.
func TestRefusedNodesInTheRow(t *testing.T) {
	cj := clusterJob(false)
	group := wrappers.MakeRun(cj, "a", 6).Group(0)
	const psa = `pods "x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`
	waiting := func(refused ...string) member.Cluster {
		r := wrappers.MakeRun(cj, "a", 6)
		c := r.Start(group...).Cluster().Previous(started()).Obj()
		w := c.State.Watch(spoke.StartWatch{}, wrappers.Ago(time.Minute))
		w = c.State.Watch(w, wrappers.Now)
		refusals := map[string]spoke.Refusal{}
		for _, n := range refused {
			refusals[n] = spoke.Refusal{Reason: "FailedCreate", Message: psa}
		}
		c.StartTimedOut, c.NotStarted = c.State.TimeOutStarts(wrappers.Now, fleetv1.DefaultNodeStartTimeout, w, refusals)
		return c
	}
	runMemberCases(t, map[string]memberCase{
		"no pod refused: nothing to say": {
			cj: cj, cluster: waiting(), admitted: true,
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"one node's pod refused: the row names it and its member's reason": {
			cj: cj, cluster: waiting(group[1]), admitted: true,
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, "node " + group[1] + "'s pod waits: FailedCreate: " + psa},
		},
		"several: how many, and the first": {
			cj: cj, cluster: waiting(group[2], group[1]), admitted: true,
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, "2 nodes' pods wait, " + group[1] + "'s: FailedCreate: " + psa},
		},
	})
}

// TestOnlySucceeded: the rows whose write may wait are those that only
// moved nodes from running to succeeded; anything a decision or a user
// acts on at once is written at once.
func TestOnlySucceeded(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC))
	prev := fleetv1.ClusterStatus{Name: "member-1", Phase: fleetv1.ClusterRunning, Reason: fleetv1.ReasonRunning, Reachable: true,
		StartTime: &start, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "all", Groups: fleetv1.GroupCounts{Total: 2},
		Nodes: fleetv1.NodeCounts{Total: 10, Pending: 4, Running: 5, Succeeded: 1}}
	with := func(edit func(*fleetv1.ClusterStatus)) fleetv1.ClusterStatus {
		row := *prev.DeepCopy()
		edit(&row)
		return row
	}
	cases := map[string]struct {
		next fleetv1.ClusterStatus
		want bool
	}{
		"two nodes succeeded": {next: with(func(r *fleetv1.ClusterStatus) { r.Nodes.Running, r.Nodes.Succeeded = 3, 3 }), want: true},
		"the same start time, another instance": {next: with(func(r *fleetv1.ClusterStatus) {
			r.Nodes.Running, r.Nodes.Succeeded = 4, 2
			r.StartTime = &metav1.Time{Time: start.Local()}
		}), want: true},
		"nothing changed":           {next: prev},
		"nodes started":             {next: with(func(r *fleetv1.ClusterStatus) { r.Nodes.Pending, r.Nodes.Running = 2, 7 })},
		"a node failed":             {next: with(func(r *fleetv1.ClusterStatus) { r.Nodes.Running, r.Nodes.Failed = 4, 1 })},
		"a node skipped":            {next: with(func(r *fleetv1.ClusterStatus) { r.Nodes.Pending, r.Nodes.Skipped = 3, 1 })},
		"counts that do not add up": {next: with(func(r *fleetv1.ClusterStatus) { r.Nodes.Running, r.Nodes.Succeeded = 3, 2 })},
		"succeeded, and the group finished": {next: with(func(r *fleetv1.ClusterStatus) {
			r.Nodes.Running, r.Nodes.Succeeded = 0, 6
			r.Groups.Completed = 1
		})},
		"succeeded, and the message changed": {next: with(func(r *fleetv1.ClusterStatus) {
			r.Nodes.Running, r.Nodes.Succeeded = 4, 2
			r.Message = "1 pod waits to start"
		})},
		"succeeded, and the run completed": {next: with(func(r *fleetv1.ClusterStatus) {
			r.Nodes.Running, r.Nodes.Succeeded = 0, 6
			r.Phase, r.Reason = fleetv1.ClusterCompleted, fleetv1.ReasonCompleted
		})},
		"succeeded, and unreachable": {next: with(func(r *fleetv1.ClusterStatus) {
			r.Nodes.Running, r.Nodes.Succeeded = 4, 2
			r.Reachable = false
		})},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := member.OnlySucceeded(prev, tc.next); got != tc.want {
				t.Errorf("OnlySucceeded() = %v, want %v", got, tc.want)
			}
		})
	}
}
