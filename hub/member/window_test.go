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

// TestMaintenanceWindows: outside its windows a cluster neither freezes its
// plan nor starts a group, says when the next window opens and is looked
// at again then; a group that started runs on; a window that never opens
// within spec.maxWindowWait, or cannot be read, fails the cluster instead
// of holding it forever. wrappers.Now is Wednesday 2026-05-06 07:08:09 UTC.
func TestMaintenanceWindows(t *testing.T) {
	keepgoing := clusterJob(false)
	suspended := clusterJob(false)
	suspended.Spec.Suspend = ptr.To(true)
	waitAnHour := clusterJob(false)
	waitAnHour.Spec.MaxWindowWait = &metav1.Duration{Duration: time.Hour}
	nights := fleetv1.MaintenanceWindow{Schedule: "0 22 * * *", Duration: metav1.Duration{Duration: 4 * time.Hour}}
	mornings := fleetv1.MaintenanceWindow{Schedule: "0 7 * * *", Duration: metav1.Duration{Duration: time.Hour}}
	never := fleetv1.MaintenanceWindow{Schedule: "0 0 30 2 *", Duration: metav1.Duration{Duration: time.Hour}}
	badZone := fleetv1.MaintenanceWindow{Schedule: "0 22 * * *", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: "Mars/Olympus_Mons"}
	toNight := 14*time.Hour + 51*time.Minute + 51*time.Second
	waiting := "Waiting for window: next opens 2026-05-06T22:00:00Z"
	run := func(cj *fleetv1.ClusterJob) *wrappers.RunWrapper { return wrappers.MakeRun(cj, "a", 6) }
	between := func(cj *fleetv1.ClusterJob) *wrappers.ClusterWrapper {
		r := run(cj)
		return r.Succeed(r.Group(0)...).Cluster().Previous(started())
	}

	testCases := map[string]memberCase{
		"admitted, no window open: the plan is not frozen, looked at again when the window opens": {
			cj: keepgoing, cluster: wrappers.MakeCluster("a").Windows(nights).Obj(), admitted: true,
			want:    member.Decision{Start: member.NoGroup, RequeueAfter: toNight},
			wantRow: [3]string{"Pending", fleetv1.ReasonWaitingForWindow, waiting},
		},
		"admitted, a window open: the plan is frozen": {
			cj: keepgoing, cluster: wrappers.MakeCluster("a").Windows(nights, mornings).Obj(), admitted: true,
			want:    member.Decision{Freeze: true, Start: member.NoGroup},
			wantRow: [3]string{"Pending", fleetv1.ReasonPending, "starting"},
		},
		"between groups, no window open: the next group waits": {
			cj: keepgoing, cluster: between(keepgoing).Windows(nights).Obj(), admitted: true,
			want:    member.Decision{Start: member.NoGroup, RequeueAfter: toNight},
			wantRow: [3]string{"Running", fleetv1.ReasonWaitingForWindow, waiting},
		},
		"between groups, a window open: the next group starts": {
			cj: keepgoing, cluster: between(keepgoing).Windows(mornings).Obj(), admitted: true,
			want:    member.Decision{Start: 1},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"a group running when its window closed: it runs on, nothing waits": {
			cj: keepgoing, cluster: func() member.Cluster {
				r := run(keepgoing)
				return r.Succeed(r.Group(0)...).Start(r.Group(1)...).Cluster().Previous(started()).Windows(nights).Obj()
			}(), admitted: true,
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
		"not admitted: it waits for its turn first": {
			cj: keepgoing, cluster: wrappers.MakeCluster("a").Windows(nights).Obj(),
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Pending", fleetv1.ReasonWaitingForTurn, "waiting for a slot under clusterRollout.maxConcurrentClusters"},
		},
		"suspended: suspension says why, not the window": {
			cj: suspended, cluster: wrappers.MakeCluster("a").Windows(nights).Obj(), admitted: true,
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Pending", fleetv1.ReasonSuspended, "spec.suspend is true"},
		},
		"no window ever opens: the cluster fails rather than wait forever": {
			cj: keepgoing, cluster: between(keepgoing).Windows(never).Obj(), admitted: true,
			want: member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Failed", fleetv1.ReasonNoMaintenanceWindow, "no maintenance window of the run or of the cluster's set opens within 840h0m0s " +
				"(spec.maxWindowWait) of 2026-05-06T07:08:09Z; no further group starts in this cluster"},
		},
		"the next window opens past spec.maxWindowWait: the cluster fails": {
			cj: waitAnHour, cluster: wrappers.MakeCluster("a").Windows(nights).Obj(), admitted: true,
			want: member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Failed", fleetv1.ReasonNoMaintenanceWindow, "no maintenance window of the run or of the cluster's set opens within 1h0m0s " +
				"(spec.maxWindowWait) of 2026-05-06T07:08:09Z; no further group starts in this cluster"},
		},
		"a window that cannot be read fails a cluster it would hold, naming the field": {
			cj: keepgoing, cluster: between(keepgoing).Windows(badZone).Obj(), admitted: true,
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Failed", fleetv1.ReasonNoMaintenanceWindow, `spec.maintenanceWindows[0].timeZone: unknown time zone "Mars/Olympus_Mons"`},
		},
		"a window that cannot be read holds nothing while a group runs": {
			cj: keepgoing, cluster: func() member.Cluster {
				r := run(keepgoing)
				return r.Start(r.Group(0)...).Cluster().Previous(started()).Windows(badZone).Obj()
			}(), admitted: true,
			want:    member.Decision{Start: member.NoGroup},
			wantRow: [3]string{"Running", fleetv1.ReasonRunning, ""},
		},
	}
	runMemberCases(t, testCases)
}
