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

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
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
fleetjob_run_cluster_info{cluster="eu-1",clusterjob="clean",namespace="team-a",phase="Running",reason="FailureBudgetExceeded"} 1
# HELP fleetjob_run_failed_nodes Failed nodes of a ClusterJob's run in one cluster, by reason, from its MemberRun's sample of up to 500 failed nodes.
# TYPE fleetjob_run_failed_nodes gauge
fleetjob_run_failed_nodes{cluster="eu-1",clusterjob="clean",namespace="team-a",reason="BackoffLimitExceeded"} 2
fleetjob_run_failed_nodes{cluster="eu-1",clusterjob="clean",namespace="team-a",reason="NotStarted"} 1
# HELP fleetjob_run_nodes Nodes of a ClusterJob's run in one cluster, by phase, from its MemberRun.
# TYPE fleetjob_run_nodes gauge
fleetjob_run_nodes{cluster="eu-1",clusterjob="clean",namespace="team-a",phase="Failed"} 3
fleetjob_run_nodes{cluster="eu-1",clusterjob="clean",namespace="team-a",phase="Pending"} 4
fleetjob_run_nodes{cluster="eu-1",clusterjob="clean",namespace="team-a",phase="Running"} 1
fleetjob_run_nodes{cluster="eu-1",clusterjob="clean",namespace="team-a",phase="Skipped"} 0
fleetjob_run_nodes{cluster="eu-1",clusterjob="clean",namespace="team-a",phase="Succeeded"} 2
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
