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

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// TestMissingMemberRuns: a run whose selected clusters do not all have
// their MemberRun admits none, retries with backoff, and fails
// MemberRunsNotCreated past the member error timeout, naming the clusters;
// it never completes on the clusters it has.
func TestMissingMemberRuns(t *testing.T) {
	cj := makeClusterJob().Obj()
	fresh := MemberRun{Cluster: "a", Row: fleetv1.ClusterStatus{Name: "a"}}
	completed := MemberRun{Cluster: "a", Admitted: true, Row: fleetv1.ClusterStatus{Name: "a", Phase: fleetv1.ClusterCompleted, Reason: fleetv1.ReasonCompleted,
		StartTime: mt(ago(time.Hour)), CompletionTime: mt(ago(time.Minute))}}
	testCases := map[string]struct {
		runs          []MemberRun
		missing       []string
		creatingSince time.Time
		wantDecision  Decision
		wantPhase     fleetv1.Phase
		wantReason    string // of the Failed condition, or of MemberRunsCreated
	}{
		"every MemberRun exists: the first is admitted": {
			runs: []MemberRun{fresh}, creatingSince: now,
			wantDecision: Decision{Admit: []string{"a"}}, wantPhase: fleetv1.PhasePending, wantReason: "Created",
		},
		"one missing for a second: none is admitted, retried in a second": {
			runs: []MemberRun{fresh}, missing: []string{"b"}, creatingSince: ago(time.Second),
			wantDecision: Decision{RequeueAfter: time.Second}, wantPhase: fleetv1.PhasePending, wantReason: fleetv1.ReasonCreatingMemberRuns,
		},
		"missing for five minutes: retried every 30 s": {
			runs: []MemberRun{fresh}, missing: []string{"b"}, creatingSince: ago(5 * time.Minute),
			wantDecision: Decision{RequeueAfter: 30 * time.Second}, wantPhase: fleetv1.PhasePending, wantReason: fleetv1.ReasonCreatingMemberRuns,
		},
		"every one missing: Pending, not NoClusters": {
			missing: []string{"a", "b"}, creatingSince: ago(time.Minute),
			wantDecision: Decision{RequeueAfter: 30 * time.Second}, wantPhase: fleetv1.PhasePending, wantReason: fleetv1.ReasonCreatingMemberRuns,
		},
		"the clusters it has completed, one is missing: not Completed": {
			runs: []MemberRun{completed}, missing: []string{"b"}, creatingSince: ago(time.Minute),
			wantDecision: Decision{RequeueAfter: 30 * time.Second}, wantPhase: fleetv1.PhaseRunning, wantReason: fleetv1.ReasonCreatingMemberRuns,
		},
		"missing past the timeout: the run fails and halts the others": {
			runs: []MemberRun{fresh}, missing: []string{"b"}, creatingSince: ago(10 * time.Minute),
			wantDecision: Decision{Halt: &fleetv1.Halt{Reason: fleetv1.ReasonMemberRunsNotCreated,
				Message: "the MemberRuns of 1 clusters (b) could not be created within 10m0s (--member-error-timeout): quota exceeded; no cluster started"}},
			wantPhase: fleetv1.PhaseFailed, wantReason: fleetv1.ReasonMemberRunsNotCreated,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := Input{Spec: &cj.Spec, Runs: tc.runs, Now: now, Created: ago(time.Hour), EmptySelectionGrace: time.Minute,
				Selected: []string{"a", "b"}, Missing: tc.missing, CreateError: "quota exceeded",
				CreatingSince: tc.creatingSince, MemberErrorTimeout: 10 * time.Minute}
			d := Decide(in)
			if diff := cmp.Diff(tc.wantDecision, d); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
			st := Status(in, d, &fleetv1.ClusterJobStatus{}, 1)
			if st.Phase != tc.wantPhase {
				t.Errorf("phase = %s, want %s", st.Phase, tc.wantPhase)
			}
			cond := meta.FindStatusCondition(st.Conditions, fleetv1.ConditionMemberRunsCreated)
			if tc.wantPhase == fleetv1.PhaseFailed {
				cond = meta.FindStatusCondition(st.Conditions, fleetv1.ConditionFailed)
			}
			if cond == nil || cond.Reason != tc.wantReason {
				t.Fatalf("condition = %+v, want reason %s", cond, tc.wantReason)
			}
			if want := int32(len(tc.runs) + len(tc.missing)); st.Summary.Clusters.Total != want {
				t.Errorf("summary counts %d clusters, want %d", st.Summary.Clusters.Total, want)
			}
		})
	}
}

// TestCreatingSince: the time MemberRuns began to be missing survives in
// the MemberRunsCreated condition, across reconciles and restarts.
func TestCreatingSince(t *testing.T) {
	since := ago(3 * time.Minute)
	conds := []metav1.Condition{{Type: fleetv1.ConditionMemberRunsCreated, Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(since)}}
	if got := CreatingSince(conds, now); !got.Equal(since) {
		t.Errorf("CreatingSince() = %s, want %s", got, since)
	}
	conds[0].Status = metav1.ConditionTrue
	if got := CreatingSince(conds, now); !got.Equal(now) {
		t.Errorf("CreatingSince() after they were created = %s, want now", got)
	}
}
