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
	"testing"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// TestDisruptionBudgetHold: a cluster whose group a disruption budget
// holds (the ledger granted fewer starts than it has Pending nodes) says
// which budget and who holds it, and asks again within budgetRecheck even
// if no wake comes; a failure or a window still speaks first.
func TestDisruptionBudgetHold(t *testing.T) {
	keepgoing := clusterJob(false)
	hold := "FleetDisruptionBudget night caps cluster a at 2 disrupted nodes; 2 are (ns/patch 2)"
	held := func(c member.Cluster) member.Cluster {
		c.BudgetHold, c.BudgetWaiting = hold, 3
		return c
	}
	between := func() *wrappers.ClusterWrapper {
		r := wrappers.MakeRun(keepgoing, "a", 6)
		return r.Succeed(r.Group(0)...).Cluster().Previous(started())
	}
	never := fleetv1.MaintenanceWindow{Schedule: "0 0 30 2 *"}
	never.Duration.Duration = time.Hour
	testCases := map[string]memberCase{
		"held between groups: the row names the budget and its holders": {
			cj: keepgoing, cluster: held(between().Obj()), admitted: true,
			want:    member.Decision{Start: 1, RequeueAfter: 30 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonWaitingForBudget, "Waiting for budget: 3 nodes of group batch-2 wait: " + hold},
		},
		"held part way through a group": {
			cj: keepgoing, cluster: func() member.Cluster {
				r := wrappers.MakeRun(keepgoing, "a", 6)
				return held(r.Succeed(r.Group(0)...).Start(r.Group(1)[0]).Cluster().Previous(started()).Obj())
			}(), admitted: true,
			want:    member.Decision{Start: 1, RequeueAfter: 30 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonWaitingForBudget, "Waiting for budget: 3 nodes of group batch-2 wait: " + hold},
		},
		"a failure speaks first": {
			cj: keepgoing, cluster: held(between().Windows(never).Obj()), admitted: true,
			want: member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Failed", fleetv1.ReasonNoMaintenanceWindow,
				"no maintenance window of the run or of the cluster's set opens within 840h0m0s (spec.maxWindowWait) of 2026-05-06T07:08:09Z; no further group starts in this cluster"},
		},
	}
	runMemberCases(t, testCases)
}
