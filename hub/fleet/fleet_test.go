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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// The world tables check what both controllers converge to; these check
// the fleet's decision alone, over MemberRuns as the hub's cache holds
// them: admission remembered in their specs, rows in their statuses.

// runOf is cluster's MemberRun as the fleet sees it.
func runOf(cluster string, admitted bool, row fleetv1.ClusterStatus) MemberRun {
	row.Name = cluster
	return MemberRun{Cluster: cluster, Admitted: admitted, Row: row}
}

var (
	pendingRow   = fleetv1.ClusterStatus{}
	runningRow   = startedRow(ago(time.Hour))
	completedRow = fleetv1.ClusterStatus{Phase: fleetv1.ClusterCompleted, Reason: fleetv1.ReasonCompleted, StartTime: mt(ago(time.Hour)),
		Nodes: fleetv1.NodeCounts{Total: 3, Succeeded: 3}}
	failedRow = fleetv1.ClusterStatus{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonNodeFailed, StartTime: mt(ago(time.Hour)),
		Nodes: fleetv1.NodeCounts{Total: 3, Succeeded: 2, Failed: 1}}
	stoppedRow = fleetv1.ClusterStatus{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonStopped, StartTime: mt(ago(time.Hour)),
		Nodes: fleetv1.NodeCounts{Total: 3, Succeeded: 3}}
)

func TestDecideOverMemberRuns(t *testing.T) {
	testCases := map[string]struct {
		cj   *fleetv1.ClusterJob
		runs []MemberRun
		want Decision
	}{
		"no limit: every cluster is admitted": {
			cj:   makeClusterJob().Obj(),
			runs: []MemberRun{runOf("a", false, pendingRow), runOf("b", false, pendingRow)},
			want: Decision{Admit: []string{"a", "b"}},
		},
		"admitted once, never again": {
			cj:   makeClusterJob().Obj(),
			runs: []MemberRun{runOf("a", true, runningRow), runOf("b", false, pendingRow)},
			want: Decision{Admit: []string{"b"}},
		},
		"maxConcurrentClusters 1, one admitted and not started yet: it keeps the slot": {
			cj:   makeClusterJob().MaxConcurrent(1).Obj(),
			runs: []MemberRun{runOf("a", true, pendingRow), runOf("b", false, pendingRow)},
		},
		"maxConcurrentClusters 2, one running: the next by name is admitted": {
			cj:   makeClusterJob().MaxConcurrent(2).Obj(),
			runs: []MemberRun{runOf("a", true, runningRow), runOf("b", false, pendingRow), runOf("c", false, pendingRow)},
			want: Decision{Admit: []string{"b"}},
		},
		"maxConcurrentClusters 1, the first finished: the second is admitted": {
			cj:   makeClusterJob().MaxConcurrent(1).Obj(),
			runs: []MemberRun{runOf("a", true, completedRow), runOf("b", false, pendingRow), runOf("c", false, pendingRow)},
			want: Decision{Admit: []string{"b"}},
		},
		"suspended: nothing is admitted": {
			cj:   makeClusterJob().Suspend(true).Obj(),
			runs: []MemberRun{runOf("a", false, pendingRow)},
		},
		"exit, a node failed in b: every cluster is halted, none admitted": {
			cj:   makeClusterJob().Exit().MaxConcurrent(1).Obj(),
			runs: []MemberRun{runOf("a", false, pendingRow), runOf("b", true, failedRow)},
			want: Decision{Halt: &fleetv1.Halt{Reason: fleetv1.ReasonStopped, Message: "a node failed in cluster b"}},
		},
		"exit, a cluster failed unreachable: halted, naming why": {
			cj: makeClusterJob().Exit().Obj(),
			runs: []MemberRun{runOf("a", true, runningRow), runOf("b", true, fleetv1.ClusterStatus{Phase: fleetv1.ClusterFailed,
				Reason: fleetv1.ReasonUnreachableTimeout, StartTime: mt(ago(time.Hour))})},
			want: Decision{Halt: &fleetv1.Halt{Reason: fleetv1.ReasonStopped, Message: "cluster b failed: UnreachableTimeout"}},
		},
		"exit, a cluster ended by the stop is no cause: nothing to halt": {
			cj:   makeClusterJob().Exit().Obj(),
			runs: []MemberRun{runOf("a", true, stoppedRow), runOf("b", false, pendingRow)},
			want: Decision{Admit: []string{"b"}},
		},
		"keepgoing, a node failed: nothing halts": {
			cj:   makeClusterJob().Obj(),
			runs: []MemberRun{runOf("a", true, failedRow), runOf("b", true, runningRow)},
		},
		"no cluster yet: look again when the wait for registrations ends": {
			cj:   makeClusterJob().Obj(),
			want: Decision{RequeueAfter: 30 * time.Second},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := Input{Spec: &tc.cj.Spec, Runs: tc.runs, Now: now, Created: ago(30 * time.Second), EmptySelectionGrace: time.Minute}
			if diff := cmp.Diff(tc.want, Decide(in), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNotableClusters: failed first, then running, pending, completed, each
// by name, at most 20, without failure samples.
func TestNotableClusters(t *testing.T) {
	var runs []MemberRun
	add := func(prefix string, n int, row fleetv1.ClusterStatus) {
		for i := range n {
			runs = append(runs, runOf(fmt.Sprintf("%s-%02d", prefix, i), true, row))
		}
	}
	failed := failedRow
	for i := range 7 {
		failed.FailedNodes = append(failed.FailedNodes, fleetv1.NodeFailure{Node: fmt.Sprintf("n%d", i)})
	}
	add("c", 7, completedRow)
	add("r", 5, runningRow)
	add("f", 3, failed)
	add("p", 10, pendingRow)
	cj := makeClusterJob().Obj()
	st := Status(Input{Spec: &cj.Spec, Runs: runs, Now: now, Created: ago(time.Hour)}, Decision{}, &fleetv1.ClusterJobStatus{}, 1)
	var got []string
	for _, r := range st.NotableClusters {
		got = append(got, r.Name)
		if len(r.FailedNodes) > 0 {
			t.Errorf("row %s has %d failure samples", r.Name, len(r.FailedNodes))
		}
	}
	want := "f-00 f-01 f-02 r-00 r-01 r-02 r-03 r-04 p-00 p-01 p-02 p-03 p-04 p-05 p-06 p-07 p-08 p-09 c-00 c-01"
	if strings.Join(got, " ") != want {
		t.Errorf("notableClusters = %s, want %s", strings.Join(got, " "), want)
	}
	if len(runs[12].Row.FailedNodes) != 7 {
		t.Errorf("Status changed a run's row: %d failure samples", len(runs[12].Row.FailedNodes))
	}
	if st.Summary.Clusters.Total != 25 || st.Summary.Clusters.Failed != 3 || st.Summary.ClusterProgress != "10/25" {
		t.Errorf("summary = %+v", st.Summary.Clusters)
	}
}
