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
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

// runCollector reports MemberRuns as the hub's Collector does.
type runCollector []fleetv1.MemberRun

func (c runCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runNodesDesc
	ch <- runFailedDesc
	ch <- runClusterDesc
}

func (c runCollector) Collect(ch chan<- prometheus.Metric) {
	for i := range c {
		collectRun(ch, &c[i])
	}
}

// TestCollectRun: a MemberRun's nodes by phase, its failed nodes by reason
// and its phase, labelled by run and cluster, never by node; one the hub
// has not written yet reports nothing.
func TestCollectRun(t *testing.T) {
	row := fleetv1.ClusterStatus{Name: "eu-1", Phase: fleetv1.ClusterRunning, Reason: fleetv1.ReasonFailureBudgetExceeded,
		Nodes: fleetv1.NodeCounts{Total: 10, Pending: 4, Running: 1, Succeeded: 2, Failed: 3},
		FailedNodes: []fleetv1.NodeFailure{
			{Node: "n1", Reason: "BackoffLimitExceeded"}, {Node: "n2", Reason: "BackoffLimitExceeded"}, {Node: "n3", Reason: fleetv1.NodeReasonNotStarted},
		}}
	written := fleetv1.MemberRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "clean-eu-1-x"},
		Spec: fleetv1.MemberRunSpec{ClusterJob: "clean", Cluster: "eu-1"}}
	written.Status.SetRow(row)
	unwritten := fleetv1.MemberRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "clean-eu-2-y"},
		Spec: fleetv1.MemberRunSpec{ClusterJob: "clean", Cluster: "eu-2"}}
	want := `
# HELP fleetjob_run_cluster_info A ClusterJob's run in one cluster: 1, with the cluster's phase and reason.
# TYPE fleetjob_run_cluster_info gauge
fleetjob_run_cluster_info{clusterjob="clean",clusterjob_namespace="team-a",member_cluster="eu-1",phase="Running",reason="FailureBudgetExceeded"} 1
# HELP fleetjob_run_failed_nodes Failed nodes of a ClusterJob's run in one cluster, by reason, from its MemberRun's sample of up to 500 failed nodes.
# TYPE fleetjob_run_failed_nodes gauge
fleetjob_run_failed_nodes{clusterjob="clean",clusterjob_namespace="team-a",member_cluster="eu-1",reason="BackoffLimitExceeded"} 2
fleetjob_run_failed_nodes{clusterjob="clean",clusterjob_namespace="team-a",member_cluster="eu-1",reason="NotStarted"} 1
# HELP fleetjob_run_nodes Nodes of a ClusterJob's run in one cluster, by phase, from its MemberRun.
# TYPE fleetjob_run_nodes gauge
fleetjob_run_nodes{clusterjob="clean",clusterjob_namespace="team-a",member_cluster="eu-1",phase="Failed"} 3
fleetjob_run_nodes{clusterjob="clean",clusterjob_namespace="team-a",member_cluster="eu-1",phase="Pending"} 4
fleetjob_run_nodes{clusterjob="clean",clusterjob_namespace="team-a",member_cluster="eu-1",phase="Running"} 1
fleetjob_run_nodes{clusterjob="clean",clusterjob_namespace="team-a",member_cluster="eu-1",phase="Skipped"} 0
fleetjob_run_nodes{clusterjob="clean",clusterjob_namespace="team-a",member_cluster="eu-1",phase="Succeeded"} 2
`
	if err := testutil.CollectAndCompare(runCollector{written, unwritten}, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestDashboardQueriesExportedMetrics: every metric the Grafana dashboard
// queries is one the hub exports, so renaming a metric cannot leave the
// dashboard silently empty; and every panel has a query.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	exported := map[string]bool{
		// Registered by hub/clusters, which counts the watches it opens.
		"fleetjob_member_watch_requests_total": true,
	}
	descs := make(chan *prometheus.Desc, 64)
	for _, c := range []prometheus.Collector{&Collector{}, jobsCreated, groupDuration, groupHandoff, budgetsExceeded} {
		c.Describe(descs)
	}
	close(descs)
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			exported[m[1]] = true
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "grafana", "fleetjob-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if len(dash.Panels) == 0 {
		t.Fatal("the dashboard has no panel")
	}
	metric := regexp.MustCompile(`fleetjob_[a-z_]+`)
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			for _, name := range metric.FindAllString(target.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
				if !exported[name] && !exported[base] {
					t.Errorf("panel %q queries %s, which the hub does not export", p.Title, name)
				}
			}
		}
	}
}

// ranNode is a node of group g whose Job started at start and finished at
// end, in seconds past a fixed time; a negative end has not finished.
func ranNode(g int, start, end int) spoke.NodeState {
	base := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	n := spoke.NodeState{Node: "n", Group: g, StartTime: &metav1.Time{Time: base.Add(time.Duration(start) * time.Second)}}
	if end >= 0 {
		n.CompletionTime = &metav1.Time{Time: base.Add(time.Duration(end) * time.Second)}
	}
	return n
}

// TestObserveLastGroup: a finished cluster's last group that started is
// observed once, whatever came before it; `all` has only that one, and a
// group done within the one-second resolution of Job times counts as 0.
func TestObserveLastGroup(t *testing.T) {
	testCases := map[string]struct {
		st          spoke.State
		wantSamples uint64
		wantSum     float64
	}{
		"all: its one group": {
			st: spoke.State{Planned: true, Groups: []spoke.GroupState{{Nodes: 2, Succeeded: 2}},
				Nodes: []spoke.NodeState{ranNode(0, 0, 30), ranNode(0, 5, 42)}},
			wantSamples: 1, wantSum: 42,
		},
		"batches: the last group only, the others observed as the next started": {
			st: spoke.State{Planned: true, Groups: []spoke.GroupState{{Nodes: 1, Succeeded: 1}, {Nodes: 1, Succeeded: 1}},
				Nodes: []spoke.NodeState{ranNode(0, 0, 100), ranNode(1, 110, 117)}},
			wantSamples: 1, wantSum: 7,
		},
		"stopped after a failure: the last group that started, not the last planned": {
			st: spoke.State{Planned: true, Groups: []spoke.GroupState{{Nodes: 1, Failed: 1}, {Nodes: 1, Pending: 1}},
				Nodes: []spoke.NodeState{ranNode(0, 0, 3), {Node: "m", Group: 1, Phase: spoke.NodePending}}},
			wantSamples: 1, wantSum: 3,
		},
		"done within a second": {
			st: spoke.State{Planned: true, Groups: []spoke.GroupState{{Nodes: 1, Succeeded: 1}},
				Nodes: []spoke.NodeState{ranNode(0, 9, 9)}},
			wantSamples: 1, wantSum: 0,
		},
		"nothing ran: every node skipped": {
			st: spoke.State{Planned: true, Groups: []spoke.GroupState{{Nodes: 2, Skipped: 2}}},
		},
		"never planned": {},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			before := histogram(t, groupDuration)
			observeLastGroup(tc.st)
			after := histogram(t, groupDuration)
			got := []float64{float64(after.GetSampleCount() - before.GetSampleCount()), after.GetSampleSum() - before.GetSampleSum()}
			if diff := cmp.Diff([]float64{float64(tc.wantSamples), tc.wantSum}, got); diff != "" {
				t.Errorf("observations (count, sum) (-want +got):\n%s", diff)
			}
		})
	}
}

func histogram(t *testing.T, h prometheus.Histogram) *dto.Histogram {
	t.Helper()
	m := &dto.Metric{}
	if err := h.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram()
}
