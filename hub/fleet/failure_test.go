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
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/spoke"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// rowView is what TestFailures checks of a cluster's row.
type rowView struct {
	Phase        fleetv1.ClusterPhase
	Reason       string
	Message      string
	FailingSince *time.Time
}

// TestFailures covers every way a cluster the hub cannot make progress in
// ends: retried with backoff while a fault may heal, failed at its deadline
// or at once when it cannot, and the run ending with it.
func TestFailures(t *testing.T) {
	base := makeClusterJob().Obj()
	exit := makeClusterJob().Exit().Obj()
	one := makeClusterJob().MaxConcurrent(1).Obj()
	nsMissing := fmt.Errorf("storing the plan: %w", &spoke.NamespaceMissingError{Namespace: wrappers.WorkNamespace, Cluster: "a"})
	forbidden := errors.New("creating Job fleetjob-system/x: jobs.batch is forbidden")
	tooLarge := &spoke.PermanentError{Reason: fleetv1.ReasonPlanTooLarge, Err: errors.New("the plan of cluster a is 2000000 bytes")}
	failingFor := func(d time.Duration) fleetv1.ClusterStatus {
		return fleetv1.ClusterStatus{Phase: fleetv1.ClusterPending, Reachable: true, FailingSince: mt(ago(d))}
	}
	startedFailingFor := func(d time.Duration) fleetv1.ClusterStatus {
		row := startedRow(ago(time.Hour))
		row.FailingSince = mt(ago(d))
		return row
	}
	running := func(cluster string) member.Cluster {
		r := wrappers.MakeRun(base, cluster, 6)
		return r.Start(r.Group(0)...).Cluster().Obj()
	}
	tp := func(t time.Time) *time.Time { return &t }

	testCases := map[string]struct {
		cj           *fleetv1.ClusterJob
		clusters     []member.Cluster
		graceUntil   time.Time
		wantDecision worldDecision
		wantRow      rowView // of the first cluster
		wantPhase    fleetv1.Phase
	}{
		"first error: retried in 1 s, the row names the reason and since when": {
			cj:           base,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Err(nsMissing).Obj()},
			wantDecision: worldDecision{RequeueAfter: time.Second},
			wantRow: rowView{Phase: fleetv1.ClusterPending, Reason: fleetv1.ReasonWorkNamespaceMissing,
				Message: "retrying: " + nsMissing.Error(), FailingSince: tp(now)},
			wantPhase: fleetv1.PhasePending,
		},
		"failing for 5 s: the next retry backs off to 5 s": {
			cj:           base,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Err(nsMissing).Previous(failingFor(5 * time.Second)).Obj()},
			wantDecision: worldDecision{RequeueAfter: 5 * time.Second},
			wantRow: rowView{Phase: fleetv1.ClusterPending, Reason: fleetv1.ReasonWorkNamespaceMissing,
				Message: "retrying: " + nsMissing.Error(), FailingSince: tp(ago(5 * time.Second))},
			wantPhase: fleetv1.PhasePending,
		},
		"failing for 3 minutes: retries are capped at 30 s": {
			cj:           base,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Err(forbidden).Previous(startedFailingFor(3 * time.Minute)).Obj()},
			wantDecision: worldDecision{RequeueAfter: 30 * time.Second},
			wantRow: rowView{Phase: fleetv1.ClusterRunning, Reason: fleetv1.ReasonMemberError,
				Message: "retrying: " + forbidden.Error(), FailingSince: tp(ago(3 * time.Minute))},
			wantPhase: fleetv1.PhaseRunning,
		},
		"10 s before the error timeout: the last retry is at the deadline": {
			cj:           base,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Err(forbidden).Previous(startedFailingFor(errorTimeout - 10*time.Second)).Obj()},
			wantDecision: worldDecision{RequeueAfter: 10 * time.Second},
			wantRow: rowView{Phase: fleetv1.ClusterRunning, Reason: fleetv1.ReasonMemberError,
				Message: "retrying: " + forbidden.Error(), FailingSince: tp(ago(errorTimeout - 10*time.Second))},
			wantPhase: fleetv1.PhaseRunning,
		},
		"failing past the error timeout: the cluster fails with the last error, and the run ends": {
			cj:       base,
			clusters: []member.Cluster{wrappers.MakeCluster("a").Err(nsMissing).Previous(failingFor(errorTimeout)).Obj()},
			wantRow: rowView{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonWorkNamespaceMissing,
				Message: "failing for longer than 10m0s: " + nsMissing.Error(), FailingSince: tp(ago(errorTimeout))},
			wantPhase: fleetv1.PhaseFailed,
		},
		"a failed unstarted cluster frees its slot under maxConcurrentClusters": {
			cj:           one,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Err(nsMissing).Previous(failingFor(errorTimeout)).Obj(), wrappers.MakeCluster("b").Obj()},
			wantDecision: worldDecision{Freeze: []string{"b"}},
			wantRow: rowView{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonWorkNamespaceMissing,
				Message: "failing for longer than 10m0s: " + nsMissing.Error(), FailingSince: tp(ago(errorTimeout))},
			wantPhase: fleetv1.PhasePending, // b is planned by the act that follows
		},
		"a permanent error fails the cluster at once": {
			cj:        base,
			clusters:  []member.Cluster{wrappers.MakeCluster("a").Err(tooLarge).Obj(), running("b")},
			wantRow:   rowView{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonPlanTooLarge, Message: tooLarge.Error(), FailingSince: tp(now)},
			wantPhase: fleetv1.PhaseRunning,
		},
		"exit: a cluster failed by its error timeout stops the fleet": {
			cj: exit,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Err(forbidden).Previous(startedFailingFor(errorTimeout)).Obj(),
				wrappers.MakeCluster("b").Obj(),
			},
			wantDecision: worldDecision{Stopped: true},
			wantRow: rowView{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonMemberError,
				Message: "failing for longer than 10m0s: " + forbidden.Error(), FailingSince: tp(ago(errorTimeout))},
			wantPhase: fleetv1.PhaseFailed,
		},
		"a started cluster whose plan is gone fails PlanLost and is not planned again": {
			cj:       base,
			clusters: []member.Cluster{wrappers.MakeCluster("a").Previous(startedRow(ago(time.Hour))).PlanLost(2).Obj()},
			wantRow: rowView{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonPlanLost,
				Message: "the run's frozen plan is gone from the cluster (2 of its Jobs are left there); re-planning could run a node twice, so the cluster stops"},
			wantPhase: fleetv1.PhaseFailed,
		},
		"exit: a lost plan stops the fleet": {
			cj:           exit,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Previous(startedRow(ago(time.Hour))).PlanLost(0).Obj(), wrappers.MakeCluster("b").Obj()},
			wantDecision: worldDecision{Stopped: true},
			wantRow: rowView{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonPlanLost,
				Message: "the run's frozen plan is gone from the cluster (0 of its Jobs are left there); re-planning could run a node twice, so the cluster stops"},
			wantPhase: fleetv1.PhaseFailed,
		},
		"a registration re-pointed at another cluster fails ClusterChanged, and nothing starts there": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				row := startedRow(ago(time.Hour))
				row.ClusterID = "uid-old"
				c := running("a")
				c.ClusterID, c.Previous = "uid-new", &row
				return c
			}()},
			wantRow: rowView{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonClusterChanged,
				Message: "the registration now points at another cluster (kube-system UID uid-new) than the run started in (uid-old); nothing of the run is created there"},
			wantPhase: fleetv1.PhaseFailed,
		},
		"a second registration of a registered cluster fails DuplicateCluster at once": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				c := wrappers.MakeCluster("a").Disengaged().Unreachable(now).Obj()
				c.Reason, c.Message = fleetv1.ClusterReasonDuplicateCluster, "registered already as b"
				return c
			}(), running("b")},
			wantRow:   rowView{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ClusterReasonDuplicateCluster, Message: "registered already as b"},
			wantPhase: fleetv1.PhaseRunning,
		},
		"startup grace: a cluster still connecting after a hub restart accrues no unreachable time": {
			cj: base,
			clusters: []member.Cluster{wrappers.MakeCluster("a").Connecting().Previous(fleetv1.ClusterStatus{
				Phase: fleetv1.ClusterRunning, Reason: fleetv1.ClusterReasonConnecting, StartTime: mt(ago(3 * time.Hour)),
				UnreachableSince: mt(ago(2 * time.Hour)),
			}).Obj()},
			graceUntil:   now.Add(20 * time.Second),
			wantDecision: worldDecision{RequeueAfter: 20 * time.Second},
			wantRow:      rowView{Phase: fleetv1.ClusterRunning, Reason: fleetv1.ClusterReasonConnecting, Message: "the hub has not connected to it yet"},
			wantPhase:    fleetv1.PhaseRunning,
		},
		"after the startup grace, a cluster still connecting times out as before": {
			cj: base,
			clusters: []member.Cluster{wrappers.MakeCluster("a").Connecting().Previous(fleetv1.ClusterStatus{
				Phase: fleetv1.ClusterRunning, Reason: fleetv1.ClusterReasonConnecting, StartTime: mt(ago(3 * time.Hour)),
				UnreachableSince: mt(ago(2 * time.Hour)),
			}).Obj()},
			graceUntil: now.Add(-time.Second),
			wantRow: rowView{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonUnreachableTimeout,
				Message: "unreachable for longer than 1h0m0s: the hub has not connected to it yet"},
			wantPhase: fleetv1.PhaseFailed,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := input(tc.cj, tc.clusters...)
			in.ConnectingGraceUntil = tc.graceUntil
			d := decideWorld(in)
			if diff := cmp.Diff(tc.wantDecision, d, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
			st := statusWorld(in, &fleetv1.ClusterJobStatus{}, 1)
			row := st.Clusters[0]
			got := rowView{Phase: row.Phase, Reason: row.Reason, Message: row.Message}
			if row.FailingSince != nil {
				got.FailingSince = &row.FailingSince.Time
			}
			if diff := cmp.Diff(tc.wantRow, got); diff != "" {
				t.Errorf("row mismatch (-want +got):\n%s", diff)
			}
			if st.Phase != tc.wantPhase {
				t.Errorf("Phase = %q, want %q", st.Phase, tc.wantPhase)
			}
		})
	}
}

func TestClustersLeftOut(t *testing.T) {
	in := input(makeClusterJob().Obj(), wrappers.MakeCluster("a").Obj())
	in.LeftOut = []string{"z1", "z2", "z3", "z4", "z5", "z6", "z7"}
	st := statusWorld(in, &fleetv1.ClusterJobStatus{}, 1)
	got := findCondition(st.Conditions, fleetv1.ConditionClustersLeftOut)
	want := "7 clusters matched spec.clusterSelector beyond the 2000 a run runs in and are left out: z1, z2, z3, z4, z5 and 2 more; narrow the selector or split the run"
	if got == nil || got.Status != metav1.ConditionTrue || got.Message != want {
		t.Errorf("ClustersLeftOut condition = %+v, want True with %q", got, want)
	}
	// The next reconcile keeps it: the selection is not made again.
	in.LeftOut = nil
	next := statusWorld(in, &st, 1)
	if c := findCondition(next.Conditions, fleetv1.ConditionClustersLeftOut); c == nil || c.Message != want {
		t.Errorf("ClustersLeftOut after the next reconcile = %+v", c)
	}
}
