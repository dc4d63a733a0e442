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

package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/spoke"
)

func TestNodeResults(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	planned := spoke.State{Planned: true, Plan: plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"node-1", "node-2"}}}},
		Nodes: []spoke.NodeState{{Node: "node-1", GroupName: "all", Phase: spoke.NodeSucceeded}, {Node: "node-2", GroupName: "all", Phase: spoke.NodeRunning}}}
	running := fleetv1.ClusterStatus{Phase: fleetv1.ClusterRunning, Nodes: fleetv1.NodeCounts{Total: 2, Running: 1, Succeeded: 1}}
	ended := fleetv1.ClusterStatus{Phase: fleetv1.ClusterCompleted, Nodes: running.Nodes}
	published := func(ago time.Duration, counts fleetv1.NodeCounts) *fleetv1.NodeResults {
		return &fleetv1.NodeResults{ObservedTime: metav1.NewTime(now.Add(-ago)), Nodes: counts, Data: []byte("earlier")}
	}
	asRead := func(ago time.Duration) *fleetv1.NodeResults {
		data, _, err := noderesults.Encode(planned.Published())
		if err != nil {
			t.Fatal(err)
		}
		return &fleetv1.NodeResults{ObservedTime: metav1.NewTime(now.Add(-ago)), Nodes: running.Nodes, Data: data}
	}
	for _, tc := range []struct {
		name        string
		prev        *fleetv1.NodeResults
		st          spoke.State
		row         fleetv1.ClusterStatus
		wantPublish bool
		wantWait    time.Duration
	}{
		{name: "not read this time: the last publication stands", prev: published(time.Hour, fleetv1.NodeCounts{}), row: running},
		{name: "first read of the plan", st: planned, row: running, wantPublish: true},
		{name: "as published, after the interval: no write", prev: asRead(time.Hour), st: planned, row: running},
		{name: "a moment after the last: looked at again at the end of the interval", prev: published(2*time.Second, fleetv1.NodeCounts{Total: 2, Running: 2}),
			st: planned, row: running, wantWait: 3 * time.Second},
		{name: "counts changed after the interval", prev: published(publishInterval, fleetv1.NodeCounts{Total: 2, Running: 2}), st: planned, row: running,
			wantPublish: true},
		{name: "the same counts, a node's reason changed, after the interval", prev: published(time.Minute, running.Nodes), st: planned, row: running,
			wantPublish: true},
		{name: "the row that ends the cluster, however soon", prev: published(time.Second, running.Nodes), st: planned, row: ended, wantPublish: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, wait := nodeResults(tc.prev, tc.st, tc.row, now)
			if wait != tc.wantWait {
				t.Errorf("wait = %s, want %s", wait, tc.wantWait)
			}
			if !tc.wantPublish {
				if got != tc.prev {
					t.Errorf("nodeResults() = %+v, want the last publication %+v", got, tc.prev)
				}
				return
			}
			if !got.ObservedTime.Time.Equal(now) || got.Nodes != tc.row.Nodes || got.Message != "" {
				t.Fatalf("nodeResults() = observed %s, nodes %+v, message %q; want now, the row's counts, no message", got.ObservedTime, got.Nodes, got.Message)
			}
			doc, err := noderesults.Decode(got.Data)
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			if diff := cmp.Diff(tc.st.Published(), doc); diff != "" {
				t.Errorf("published document differs (-read +published):\n%s", diff)
			}
		})
	}
}

func TestNodeResultsTooLarge(t *testing.T) {
	st := spoke.State{Planned: true, Plan: plan.Plan{Groups: []plan.Group{{Name: "all"}}}}
	for i := range 100000 {
		node := fmt.Sprintf("pool-%08x-%05d.eu-west-1.compute.internal.fleet.example.com", uint32(i)*2654435761, i)
		st.Plan.Groups[0].Nodes = append(st.Plan.Groups[0].Nodes, node)
		st.Nodes = append(st.Nodes, spoke.NodeState{Node: node, GroupName: "all", Phase: spoke.NodeFailed, Reason: "NodeFailed"})
	}
	row := fleetv1.ClusterStatus{Phase: fleetv1.ClusterFailed, Nodes: fleetv1.NodeCounts{Total: 100000, Failed: 100000}}
	got, _ := nodeResults(nil, st, row, time.Now())
	if got == nil || got.Data != nil || !strings.Contains(got.Message, "do not fit") || got.Nodes != row.Nodes {
		t.Errorf("nodeResults() of 100,000 failed nodes = %+v, want no data, the counts and a message saying they do not fit", got)
	}
}
