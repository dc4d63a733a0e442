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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func num(n int32) *intstr.IntOrString  { v := intstr.FromInt32(n); return &v }
func pct(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

// heldRow is a cluster whose own budget with onExceeded Suspend holds it.
var heldRow = fleetv1.ClusterStatus{Phase: fleetv1.ClusterRunning, Reason: fleetv1.ReasonFailureBudgetExceeded, StartTime: mt(ago(time.Hour)),
	Message: "maxFailedNodesPerCluster 1 allows 1 of 3 nodes to fail; 2 failed in cluster a; the run is suspended until spec.suspend is set back to false, which accepts these failures",
	Nodes:   fleetv1.NodeCounts{Total: 3, Succeeded: 1, Failed: 2}}

// TestDecideFailureBudgets: the run-wide budgets stop or suspend the
// fleet, a cluster's own Suspend budget suspends the run, and a resume
// accepts what failed so far.
func TestDecideFailureBudgets(t *testing.T) {
	stopNodes := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedNodes: num(1)}).MaxConcurrent(2).Obj()
	halfNodes := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedNodes: pct("50%")}).Obj()
	noFailedCluster := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedClusters: num(0)}).Obj()
	oneFailedCluster := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedClusters: num(1)}).Obj()
	suspendNodes := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedNodes: num(1), OnExceeded: fleetv1.OnExceededSuspend}).Obj()
	suspendNodesSuspended := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedNodes: num(1), OnExceeded: fleetv1.OnExceededSuspend}).Suspend(true).Obj()
	suspendCluster := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: num(1), OnExceeded: fleetv1.OnExceededSuspend}).Obj()
	accepted := func(r MemberRun, n int32) MemberRun { r.AcceptedFailures = n; return r }

	testCases := map[string]struct {
		cj              *fleetv1.ClusterJob
		runs            []MemberRun
		accepted        fleetv1.AcceptedFailures
		budgetSuspended bool
		want            Decision
	}{
		"maxFailedNodes 1, two failed: every cluster halts, naming the budget": {
			cj:   stopNodes,
			runs: []MemberRun{runOf("a", true, failedRow), runOf("b", true, failedRow), runOf("c", false, pendingRow)},
			want: Decision{Halt: &fleetv1.Halt{Reason: fleetv1.ReasonFailureBudgetExceeded,
				Message: "maxFailedNodes 1 allows 1 of 6 nodes planned so far to fail; 2 failed"}},
		},
		"maxFailedNodes 1, one failed: the run goes on": {
			cj:   stopNodes,
			runs: []MemberRun{runOf("a", true, failedRow), runOf("b", true, completedRow), runOf("c", false, pendingRow)},
			want: Decision{Admit: []string{"c"}},
		},
		"maxFailedNodes 50% of the 6 planned allows 3": {
			cj:   halfNodes,
			runs: []MemberRun{runOf("a", true, failedRow), runOf("b", true, failedRow)},
		},
		"maxFailedClusters 0, a cluster failed: halted": {
			cj:   noFailedCluster,
			runs: []MemberRun{runOf("a", true, failedRow), runOf("b", false, pendingRow)},
			want: Decision{Halt: &fleetv1.Halt{Reason: fleetv1.ReasonFailureBudgetExceeded,
				Message: "maxFailedClusters 0 allows 0 of 2 clusters to fail; 1 failed"}},
		},
		"maxFailedClusters 0, a cluster unreachable too long: it counts": {
			cj: noFailedCluster,
			runs: []MemberRun{runOf("a", true, fleetv1.ClusterStatus{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonUnreachableTimeout,
				StartTime: mt(ago(time.Hour))}), runOf("b", true, runningRow)},
			want: Decision{Halt: &fleetv1.Halt{Reason: fleetv1.ReasonFailureBudgetExceeded,
				Message: "maxFailedClusters 0 allows 0 of 2 clusters to fail; 1 failed"}},
		},
		"maxFailedClusters 1, one failed and one ended by a stop: the stopped one is no failure": {
			cj:   oneFailedCluster,
			runs: []MemberRun{runOf("a", true, failedRow), runOf("b", true, stoppedRow), runOf("c", true, runningRow)},
		},
		"Suspend, maxFailedNodes exceeded: the run is suspended, nothing admitted": {
			cj:   suspendNodes,
			runs: []MemberRun{runOf("a", true, failedRow), runOf("b", true, failedRow), runOf("c", false, pendingRow)},
			want: Decision{Suspend: "maxFailedNodes 1 allows 1 of 6 nodes planned so far to fail; 2 failed", SuspendScope: ScopeRun},
		},
		"Suspend, already suspended for it: nothing more": {
			cj:              suspendNodesSuspended,
			runs:            []MemberRun{runOf("a", true, failedRow), runOf("b", true, failedRow)},
			budgetSuspended: true,
		},
		"Suspend, a person resumed: the failures so far are accepted and the run goes on": {
			cj:              suspendNodes,
			runs:            []MemberRun{runOf("a", true, failedRow), runOf("b", true, failedRow), runOf("c", false, pendingRow)},
			budgetSuspended: true,
			want: Decision{Accept: &Acceptance{Runs: map[string]int32{}, Fleet: fleetv1.AcceptedFailures{Nodes: 2, Clusters: 2}},
				Admit: []string{"c"}},
		},
		"Suspend, accepted 2 and one more failed: suspended again": {
			cj: suspendNodes,
			runs: []MemberRun{runOf("a", true, failedRow), runOf("b", true, failedRow),
				runOf("c", true, fleetv1.ClusterStatus{Phase: fleetv1.ClusterRunning, StartTime: mt(ago(time.Hour)), Nodes: fleetv1.NodeCounts{Total: 3, Failed: 1, Running: 2}})},
			accepted: fleetv1.AcceptedFailures{Nodes: 2, Clusters: 2},
			want:     Decision{Suspend: "maxFailedNodes 1 allows 1 of 9 nodes planned so far to fail; 3 failed", SuspendScope: ScopeRun},
		},
		"Suspend, a cluster's own budget holds it: the run is suspended with its reason": {
			cj:   suspendCluster,
			runs: []MemberRun{runOf("a", true, heldRow), runOf("b", true, runningRow)},
			want: Decision{Suspend: heldRow.Message, SuspendScope: ScopeCluster},
		},
		"Suspend, resumed while a cluster is held: its failures are accepted in its MemberRun": {
			cj:              suspendCluster,
			runs:            []MemberRun{runOf("a", true, heldRow), runOf("b", true, runningRow)},
			budgetSuspended: true,
			want:            Decision{Accept: &Acceptance{Runs: map[string]int32{"a": 2}, Fleet: fleetv1.AcceptedFailures{Nodes: 2}}},
		},
		"Suspend, a held row whose failures are accepted already (the member has not written since): nothing": {
			cj:   suspendCluster,
			runs: []MemberRun{accepted(runOf("a", true, heldRow), 2), runOf("b", true, runningRow)},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := Input{Spec: &tc.cj.Spec, Runs: tc.runs, Now: now, Created: ago(time.Hour), EmptySelectionGrace: time.Minute,
				Accepted: tc.accepted, BudgetSuspended: tc.budgetSuspended}
			if diff := cmp.Diff(tc.want, Decide(in), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatusFailureBudgets: the run's Failed reason names a budget that
// stopped it, and a Suspend budget's condition follows the suspension and
// the resume.
func TestStatusFailureBudgets(t *testing.T) {
	condition := func(st fleetv1.ClusterJobStatus, typ string) [2]string {
		c := meta.FindStatusCondition(st.Conditions, typ)
		if c == nil {
			return [2]string{}
		}
		return [2]string{string(c.Status), c.Reason}
	}
	t.Run("a run-wide Stop budget: Failed, FailureBudgetExceeded", func(t *testing.T) {
		cj := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedNodes: num(0)}).Obj()
		in := Input{Spec: &cj.Spec, Runs: []MemberRun{runOf("a", true, failedRow), runOf("b", true, stoppedRow)}, Now: now, Created: ago(time.Hour)}
		st := Status(in, Decide(in), &fleetv1.ClusterJobStatus{}, 1)
		if got, want := condition(st, fleetv1.ConditionFailed), [2]string{"True", fleetv1.ReasonFailureBudgetExceeded}; st.Phase != fleetv1.PhaseFailed || got != want {
			t.Errorf("phase %s, Failed condition %v; want Failed, %v", st.Phase, got, want)
		}
		if got, want := condition(st, fleetv1.ConditionFailureBudgetExceeded), [2]string{"True", fleetv1.ReasonFailureBudgetExceeded}; got != want {
			t.Errorf("FailureBudgetExceeded condition %v, want %v", got, want)
		}
	})
	t.Run("a cluster's Stop budget: the run's Failed reason names it", func(t *testing.T) {
		cj := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: num(0)}).Obj()
		over := failedRow
		over.Reason = fleetv1.ReasonFailureBudgetExceeded
		in := Input{Spec: &cj.Spec, Runs: []MemberRun{runOf("a", true, over), runOf("b", true, completedRow)}, Now: now, Created: ago(time.Hour)}
		st := Status(in, Decide(in), &fleetv1.ClusterJobStatus{}, 1)
		if got, want := condition(st, fleetv1.ConditionFailed), [2]string{"True", fleetv1.ReasonFailureBudgetExceeded}; got != want {
			t.Errorf("Failed condition %v, want %v", got, want)
		}
		if got := condition(st, fleetv1.ConditionFailureBudgetExceeded); got != ([2]string{}) {
			t.Errorf("FailureBudgetExceeded condition %v, want none: the cluster's row tells", got)
		}
	})
	t.Run("Suspend: the condition is True while suspended, False once resumed, and the resume is remembered", func(t *testing.T) {
		cj := makeClusterJob().Policy(fleetv1.FailurePolicy{MaxFailedNodes: num(1), OnExceeded: fleetv1.OnExceededSuspend}).Obj()
		runs := []MemberRun{runOf("a", true, failedRow), runOf("b", true, failedRow), runOf("c", true, runningRow)}
		in := Input{Spec: &cj.Spec, Runs: runs, Now: now, Created: ago(time.Hour)}
		st := Status(in, Decide(in), &fleetv1.ClusterJobStatus{}, 1)
		if got, want := condition(st, fleetv1.ConditionFailureBudgetExceeded), [2]string{"True", fleetv1.ReasonFailureBudgetExceeded}; got != want {
			t.Fatalf("after the budget was exceeded: condition %v, want %v", got, want)
		}
		// The hub suspended the run; a person resumes it.
		in.BudgetSuspended = meta.IsStatusConditionTrue(st.Conditions, fleetv1.ConditionFailureBudgetExceeded)
		d := Decide(in)
		resumed := Status(in, d, &st, 1)
		if got, want := condition(resumed, fleetv1.ConditionFailureBudgetExceeded), [2]string{"False", fleetv1.ReasonResumed}; got != want {
			t.Errorf("after the resume: condition %v, want %v", got, want)
		}
		want := &fleetv1.AcceptedFailures{Nodes: 2, Clusters: 2}
		if diff := cmp.Diff(want, resumed.AcceptedFailures); diff != "" {
			t.Errorf("acceptedFailures mismatch (-want +got):\n%s", diff)
		}
		// The next reconcile reads what it wrote: nothing is suspended or
		// accepted again.
		in.Accepted, in.BudgetSuspended = *resumed.AcceptedFailures, false
		if d := Decide(in); d.Suspend != "" || d.Accept != nil {
			t.Errorf("after the resume, Decide() = %+v, want neither a suspension nor an acceptance", d)
		}
	})
}

// TestBetweenClustersSoak: under maxConcurrentClusters, the next cluster
// starts a soak after the last one finished, and the run says so.
func TestBetweenClustersSoak(t *testing.T) {
	soaked := func(d time.Duration) *fleetv1.ClusterJob {
		cj := makeClusterJob().MaxConcurrent(1).Obj()
		cj.Spec.Gates = &fleetv1.Gates{BetweenClusters: &fleetv1.BetweenClustersGate{Soak: metav1.Duration{Duration: d}}}
		return cj
	}
	done := completedRow
	done.CompletionTime = mt(ago(time.Minute))
	testCases := map[string]struct {
		cj   *fleetv1.ClusterJob
		runs []MemberRun
		want Decision
	}{
		"a finished a minute ago, soak 5m: b waits 4m more": {
			cj:   soaked(5 * time.Minute),
			runs: []MemberRun{runOf("a", true, done), runOf("b", false, pendingRow)},
			want: Decision{RequeueAfter: 4 * time.Minute},
		},
		"soak 30s, over: b is admitted": {
			cj:   soaked(30 * time.Second),
			runs: []MemberRun{runOf("a", true, done), runOf("b", false, pendingRow)},
			want: Decision{Admit: []string{"b"}},
		},
		"no cluster finished yet: the first is admitted at once": {
			cj:   soaked(5 * time.Minute),
			runs: []MemberRun{runOf("a", false, pendingRow), runOf("b", false, pendingRow)},
			want: Decision{Admit: []string{"a"}},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := Input{Spec: &tc.cj.Spec, Runs: tc.runs, Now: now, Created: ago(time.Hour), EmptySelectionGrace: time.Minute}
			d := Decide(in)
			if diff := cmp.Diff(tc.want, d, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	cj := soaked(5 * time.Minute)
	in := Input{Spec: &cj.Spec, Runs: []MemberRun{runOf("a", true, done), runOf("b", false, pendingRow)}, Now: now, Created: ago(time.Hour)}
	st := Status(in, Decide(in), &fleetv1.ClusterJobStatus{}, 1)
	c := meta.FindStatusCondition(st.Conditions, fleetv1.ConditionProgressing)
	want := "Soaking until " + ago(time.Minute).Add(5*time.Minute).UTC().Format(time.RFC3339)
	if c == nil || c.Reason != fleetv1.ReasonSoaking || !strings.Contains(c.Message, want) {
		t.Errorf("Progressing condition = %+v, want reason Soaking and a message with %q", c, want)
	}
}
