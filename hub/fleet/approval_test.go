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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// TestApproval: before a decision only the canary clusters are admitted;
// once they ended the run waits for a person until spec.approval.timeout,
// then fails ApprovalTimeout; an approval lets every cluster go on (under
// maxConcurrentClusters still), a rejection stops the run, Failed. The
// Approved condition says where it stands and who decided.
func TestApproval(t *testing.T) {
	approval := func(a fleetv1.Approval) *fleetv1.ClusterJob {
		cj := makeClusterJob().Obj()
		a.Timeout = &metav1.Duration{Duration: time.Hour}
		cj.Spec.Approval = &a
		return cj
	}
	firstOne := fleetv1.Approval{CanaryClusters: ptr.To[int32](1)}
	approved := fleetv1.Approval{CanaryClusters: ptr.To[int32](1), Decision: &fleetv1.ApprovalDecision{Approved: true, User: "alice", Reason: "the canary is clean"}}
	rejected := fleetv1.Approval{CanaryClusters: ptr.To[int32](1), Decision: &fleetv1.ApprovalDecision{User: "bob", Reason: "a-n01 lost its disk"}}
	labelled := fleetv1.Approval{CanarySelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}}
	twoOfThree := approval(fleetv1.Approval{CanaryClusters: ptr.To[int32](2)})
	twoOfThree.Spec.ClusterRollout = &fleetv1.ClusterRollout{MaxConcurrentClusters: 1}

	pending := func(name string) MemberRun {
		return MemberRun{Cluster: name, Row: fleetv1.ClusterStatus{Name: name, Phase: fleetv1.ClusterPending, Reason: fleetv1.ReasonWaitingForTurn}}
	}
	running := func(name string) MemberRun {
		return MemberRun{Cluster: name, Admitted: true, Row: startedRow(ago(time.Hour))}
	}
	completed := func(name string, ended time.Duration) MemberRun {
		row := startedRow(ago(2 * time.Hour))
		row.Phase, row.Reason, row.CompletionTime = fleetv1.ClusterCompleted, fleetv1.ReasonCompleted, mt(ago(ended))
		return MemberRun{Cluster: name, Admitted: true, Row: row}
	}
	stopped := func(name string) MemberRun {
		return MemberRun{Cluster: name, Row: fleetv1.ClusterStatus{Name: name, Phase: fleetv1.ClusterPending, Reason: fleetv1.ReasonStopped}}
	}
	withLabels := func(r MemberRun, l map[string]string) MemberRun { r.Labels = l; return r }

	testCases := map[string]struct {
		cj       *fleetv1.ClusterJob
		runs     []MemberRun
		created  time.Duration // before now; default 2h
		want     Decision
		wantCond [3]string // status, reason, message
		wantFail string    // the Failed condition's reason, when the run ends
	}{
		"the first cluster runs alone as the canary": {
			cj: approval(firstOne), runs: []MemberRun{pending("a"), pending("b"), pending("c")},
			want:     Decision{Admit: []string{"a"}},
			wantCond: [3]string{"Unknown", fleetv1.ReasonCanaryRunning, "the canary runs before the approval: 1 clusters (a)"},
		},
		"while the canary runs nothing else is admitted": {
			cj: approval(firstOne), runs: []MemberRun{running("a"), pending("b"), pending("c")},
			want:     Decision{},
			wantCond: [3]string{"Unknown", fleetv1.ReasonCanaryRunning, "the canary runs before the approval: 1 clusters (a)"},
		},
		"the canary ended half an hour ago: the run waits for a person, looked at again at the deadline": {
			cj: approval(firstOne), runs: []MemberRun{completed("a", 30*time.Minute), pending("b"), pending("c")},
			want: Decision{RequeueAfter: 30 * time.Minute},
			wantCond: [3]string{"Unknown", fleetv1.ReasonAwaitingApproval, "the canary ended (1 clusters, 0 failed, 0 failed nodes); approve with `kubectl fleetjob approve NAME` " +
				"or reject with `kubectl fleetjob reject NAME --reason ...` by 2026-05-06T07:38:09Z, when the run fails ApprovalTimeout"},
		},
		"nobody decided within the timeout: the run stops": {
			cj: approval(firstOne), runs: []MemberRun{completed("a", 2*time.Hour), pending("b"), pending("c")},
			want: Decision{Halt: &fleetv1.Halt{Reason: fleetv1.ReasonApprovalTimeout,
				Message: "no decision within 1h0m0s (spec.approval.timeout) of the canary's end at 2026-05-06T05:08:09Z"}},
			wantCond: [3]string{"False", fleetv1.ReasonApprovalTimeout, "no decision within 1h0m0s (spec.approval.timeout) of the canary's end at 2026-05-06T05:08:09Z"},
		},
		"approved: every other cluster is admitted": {
			cj: approval(approved), runs: []MemberRun{completed("a", 30*time.Minute), pending("b"), pending("c")},
			want:     Decision{Admit: []string{"b", "c"}},
			wantCond: [3]string{"True", fleetv1.ReasonApproved, "approved by alice: the canary is clean"},
		},
		"approved before the canary ended: nothing waits for it": {
			cj: approval(approved), runs: []MemberRun{running("a"), pending("b")},
			want:     Decision{Admit: []string{"b"}},
			wantCond: [3]string{"True", fleetv1.ReasonApproved, "approved by alice: the canary is clean"},
		},
		"rejected: the run stops": {
			cj: approval(rejected), runs: []MemberRun{completed("a", 30*time.Minute), pending("b")},
			want:     Decision{Halt: &fleetv1.Halt{Reason: fleetv1.ReasonRejected, Message: "rejected by bob: a-n01 lost its disk"}},
			wantCond: [3]string{"False", fleetv1.ReasonRejected, "rejected by bob: a-n01 lost its disk"},
		},
		"rejected, the others stopped before they started: the run ends Failed, Rejected": {
			cj: approval(rejected), runs: []MemberRun{completed("a", 30*time.Minute), stopped("b")},
			want:     Decision{Halt: &fleetv1.Halt{Reason: fleetv1.ReasonRejected, Message: "rejected by bob: a-n01 lost its disk"}},
			wantCond: [3]string{"False", fleetv1.ReasonRejected, "rejected by bob: a-n01 lost its disk"},
			wantFail: fleetv1.ReasonRejected,
		},
		"the canary by selector: only the labelled cluster runs first": {
			cj:       approval(labelled),
			runs:     []MemberRun{withLabels(pending("a"), nil), withLabels(pending("b"), map[string]string{"ring": "canary"}), pending("c")},
			want:     Decision{Admit: []string{"b"}},
			wantCond: [3]string{"Unknown", fleetv1.ReasonCanaryRunning, "the canary runs before the approval: 1 clusters (b)"},
		},
		"a selector that matches no cluster: the run waits for a person from its creation": {
			cj: approval(labelled), runs: []MemberRun{pending("a"), pending("b")}, created: 10 * time.Minute,
			want: Decision{RequeueAfter: 50 * time.Minute},
			wantCond: [3]string{"Unknown", fleetv1.ReasonAwaitingApproval, "the canary ended (0 clusters, 0 failed, 0 failed nodes); approve with `kubectl fleetjob approve NAME` " +
				"or reject with `kubectl fleetjob reject NAME --reason ...` by 2026-05-06T07:58:09Z, when the run fails ApprovalTimeout"},
		},
		"every cluster is in the canary: nothing waits for a person": {
			cj: twoOfThree, runs: []MemberRun{completed("a", 30*time.Minute), completed("b", 20*time.Minute)},
			want:     Decision{},
			wantCond: [3]string{"True", fleetv1.ReasonNothingToApprove, "every one of the 2 clusters is in the canary: nothing waits for an approval"},
		},
		"a canary of two under maxConcurrentClusters 1: one at a time still": {
			cj: twoOfThree, runs: []MemberRun{pending("a"), pending("b"), pending("c")},
			want:     Decision{Admit: []string{"a"}},
			wantCond: [3]string{"Unknown", fleetv1.ReasonCanaryRunning, "the canary runs before the approval: 2 clusters (a, b)"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			created := 2 * time.Hour
			if tc.created != 0 {
				created = tc.created
			}
			in := Input{Spec: &tc.cj.Spec, Runs: tc.runs, Now: now, Created: ago(created), EmptySelectionGrace: time.Minute,
				Selected: []string{"a", "b", "c"}, MemberErrorTimeout: errorTimeout}
			d := Decide(in)
			if diff := cmp.Diff(tc.want, d); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
			st := Status(in, d, &fleetv1.ClusterJobStatus{}, 1)
			c := meta.FindStatusCondition(st.Conditions, fleetv1.ConditionApproved)
			if c == nil {
				t.Fatalf("no %s condition", fleetv1.ConditionApproved)
			}
			if got := [3]string{string(c.Status), c.Reason, c.Message}; got != tc.wantCond {
				t.Errorf("condition = %q,\nwant %q", got, tc.wantCond)
			}
			gotFail := ""
			if st.Phase == fleetv1.PhaseFailed {
				gotFail = meta.FindStatusCondition(st.Conditions, fleetv1.ConditionFailed).Reason
			}
			if gotFail != tc.wantFail {
				t.Errorf("phase %s, Failed reason %q; want reason %q", st.Phase, gotFail, tc.wantFail)
			}
		})
	}
}
