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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// TestDraining: a cluster whose current group has nodes under drain says
// so, with what holds the first of them, and steps the drains again
// within drainRecheck (no event the hub watches says an eviction went
// through); a budget hold still speaks first.
func TestDraining(t *testing.T) {
	keepgoing, exit, suspended := clusterJob(false), clusterJob(true), clusterJob(false)
	suspended.Spec.Suspend = ptr.To(true)
	nights := fleetv1.MaintenanceWindow{Schedule: "0 22 * * *", Duration: metav1.Duration{Duration: 4 * time.Hour}}
	draining := func(c member.Cluster, waiting string) member.Cluster {
		c.Draining, c.DrainWaiting = 2, waiting
		return c
	}
	between := func() member.Cluster {
		r := wrappers.MakeRun(keepgoing, "a", 6)
		return r.Succeed(r.Group(0)...).Cluster().Previous(started()).Obj()
	}
	pdb := "node node-3: the eviction of pod web/api-1 is refused for now: Cannot evict pod as it would violate the pod's disruption budget."
	testCases := map[string]memberCase{
		"draining: the row says how many and what holds them": {
			cj: keepgoing, cluster: draining(between(), pdb), admitted: true,
			want:    member.Decision{Start: 1, RequeueAfter: 2 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonDraining, "Draining 2 nodes of group batch-2 before their Jobs (spec.nodePreparation.drain): " + pdb},
		},
		"draining with nothing holding them": {
			cj: keepgoing, cluster: draining(between(), ""), admitted: true,
			want:    member.Decision{Start: 1, RequeueAfter: 2 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonDraining, "Draining 2 nodes of group batch-2 before their Jobs (spec.nodePreparation.drain)"},
		},
		"a budget hold speaks first": {
			cj: keepgoing, cluster: func() member.Cluster {
				c := draining(between(), pdb)
				c.BudgetHold, c.BudgetWaiting = "FleetDisruptionBudget night caps cluster a at 2 disrupted nodes; 2 are (ns/patch 2)", 1
				return c
			}(), admitted: true,
			want: member.Decision{Start: 1, RequeueAfter: 2 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonWaitingForBudget,
				"Waiting for budget: 1 nodes of group batch-2 wait: FleetDisruptionBudget night caps cluster a at 2 disrupted nodes; 2 are (ns/patch 2)"},
		},
		"a closed window holds new nodes, not the drains under way": {
			cj: keepgoing, cluster: func() member.Cluster {
				r := wrappers.MakeRun(keepgoing, "a", 6)
				return draining(r.Succeed(r.Group(0)...).Cluster().Previous(started()).Windows(nights).Obj(), "")
			}(), admitted: true,
			want:    member.Decision{Start: 1, DrainOnly: true, Limited: true, RequeueAfter: 2 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonWaitingForWindow, "Waiting for window: next opens 2026-05-06T22:00:00Z"},
		},
		"suspended: the drains under way go on": {
			cj: suspended, cluster: func() member.Cluster {
				r := wrappers.MakeRun(suspended, "a", 6)
				return draining(r.Succeed(r.Group(0)...).Cluster().Previous(started()).Obj(), "")
			}(), admitted: true,
			want:    member.Decision{Start: 1, DrainOnly: true, Limited: true, RequeueAfter: 2 * time.Second},
			wantRow: [3]string{"Running", fleetv1.ReasonDraining, "Draining 2 nodes of group batch-2 before their Jobs (spec.nodePreparation.drain)"},
		},
		"stopped by failureStrategy exit: no drain goes on, the cluster ends": {
			cj: exit, cluster: func() member.Cluster {
				r := wrappers.MakeRun(exit, "a", 6)
				return draining(r.Fail(r.Group(0)[0]).Succeed(r.Group(0)[1:]...).Cluster().Previous(started()).Obj(), "")
			}(), admitted: true,
			want:    member.Decision{Start: member.NoGroup, Stopped: true},
			wantRow: [3]string{"Failed", fleetv1.ReasonNodeFailed, "1 of 6 nodes failed: a-n01"},
		},
	}
	runMemberCases(t, testCases)
}
