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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/version"
)

// TestCollectorOnlyWhenLeading: a replica that does not lead exports no
// gauge of runs, ClusterJobs or members, so that however many replicas
// run, each run is counted once; once elected it exports them all.
func TestCollectorOnlyWhenLeading(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := fleetv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cj := &fleetv1.ClusterJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "clean"}}
	mr := &fleetv1.MemberRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "clean-eu-1-x"},
		Spec: fleetv1.MemberRunSpec{ClusterJob: "clean", Cluster: "eu-1"}}
	mr.Status.SetRow(fleetv1.ClusterStatus{Name: "eu-1", Phase: fleetv1.ClusterRunning, Nodes: fleetv1.NodeCounts{Total: 2, Running: 2}})
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cj, mr, registrationSecret("eu-1")).Build()
	closed := make(chan struct{})
	close(closed)
	testCases := map[string]struct {
		elected   <-chan struct{}
		wantCount int
	}{
		"waiting for the lease": {elected: make(chan struct{}), wantCount: 0},
		// 4 phases of ClusterJobs; 5 node phases and the cluster's info
		// for the run; one member registered.
		"leading":                  {elected: closed, wantCount: 4 + 5 + 1 + 1},
		"no leader election (nil)": {elected: nil, wantCount: 4 + 5 + 1 + 1},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			c := &Collector{Hub: hub, RegistrationNamespace: testRegistrationNamespace, Elected: tc.elected}
			if got := testutil.CollectAndCount(c); got != tc.wantCount {
				t.Errorf("series = %d, want %d", got, tc.wantCount)
			}
		})
	}
}

// TestCollectorMembers: every registration Secret is a member cluster,
// reachable as its MemberCluster's Connected condition says, whichever
// replica published it; one without a MemberCluster yet is Connecting, and
// a MemberCluster without a registration is not counted.
func TestCollectorMembers(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := fleetv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	memberCluster := func(name string, status metav1.ConditionStatus, reason string) *fleetv1.MemberCluster {
		mc := &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		mc.Status.Conditions = []metav1.Condition{{Type: fleetv1.MemberClusterConnected, Status: status, Reason: reason}}
		return mc
	}
	notRegistration := registrationSecret("other")
	delete(notRegistration.Labels, fleetv1.RegistrationLabel)
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		registrationSecret("eu-1"), memberCluster("eu-1", metav1.ConditionTrue, fleetv1.ClusterReasonConnected),
		registrationSecret("eu-2"), memberCluster("eu-2", metav1.ConditionTrue, fleetv1.ClusterReasonConnected),
		registrationSecret("us-1"), memberCluster("us-1", metav1.ConditionFalse, fleetv1.ClusterReasonUnreachable),
		registrationSecret("us-2"), memberCluster("us-2", metav1.ConditionUnknown, fleetv1.ClusterReasonConnecting),
		registrationSecret("new"),
		memberCluster("gone", metav1.ConditionTrue, fleetv1.ClusterReasonConnected),
		notRegistration,
	).Build()
	c := &Collector{Hub: hub, RegistrationNamespace: testRegistrationNamespace}
	want := `
# HELP fleetjob_member_clusters Registered member clusters by reachability.
# TYPE fleetjob_member_clusters gauge
fleetjob_member_clusters{reachable="false",reason="Connecting"} 2
fleetjob_member_clusters{reachable="false",reason="Unreachable"} 1
fleetjob_member_clusters{reachable="true",reason="Connected"} 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "fleetjob_member_clusters"); err != nil {
		t.Error(err)
	}
}

const testRegistrationNamespace = "fleetjob-system"

// registrationSecret is the registration Secret of cluster name.
func registrationSecret(name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testRegistrationNamespace, Name: name,
		Labels: map[string]string{fleetv1.RegistrationLabel: "true"}}}
}

// targetLabels are the labels the Prometheus Operator (and Prometheus'
// Kubernetes discovery as commonly relabelled) sets on every series of a
// target: a metric label of the same name is renamed exported_<name>, and
// queries and dashboards filtering on it see the hub's pod instead.
var targetLabels = []string{"namespace", "pod", "service", "endpoint", "container", "job", "instance", "cluster", "node"}

// TestNoTargetLabels: no metric of the hub has a label the scraper
// overwrites; a ClusterJob's namespace is clusterjob_namespace and a
// member is member_cluster.
func TestNoTargetLabels(t *testing.T) {
	descs := make(chan *prometheus.Desc, 64)
	for _, c := range []prometheus.Collector{&Collector{}, jobsCreated, groupDuration, groupHandoff, budgetsExceeded, newBuildInfo(version.Get())} {
		c.Describe(descs)
	}
	close(descs)
	labelList := regexp.MustCompile(`fqName: "([^"]+)".*constLabels: \{([^}]*)\}, variableLabels: \{([^}]*)\}`)
	seen := 0
	for d := range descs {
		m := labelList.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the labels of %s", d)
		}
		seen++
		var labels []string
		for _, l := range strings.Split(m[2], ",") {
			if name, _, ok := strings.Cut(l, "="); ok {
				labels = append(labels, name)
			}
		}
		labels = append(labels, strings.Split(m[3], ",")...)
		for _, l := range labels {
			if slices.Contains(targetLabels, l) {
				t.Errorf("%s has the label %q, which the scraper's target label overwrites", m[1], l)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no metric described")
	}
	wantRun := "clusterjob_namespace,clusterjob,member_cluster,phase"
	if diff := cmp.Diff(wantRun, variableLabels(runNodesDesc)); diff != "" {
		t.Errorf("fleetjob_run_nodes labels (-want +got):\n%s", diff)
	}
}

func variableLabels(d *prometheus.Desc) string {
	m := regexp.MustCompile(`variableLabels: \{([^}]*)\}`).FindStringSubmatch(d.String())
	if m == nil {
		return ""
	}
	return m[1]
}

// TestBuildInfo: one series, 1, labelled with the binary's version, commit
// and Go version.
func TestBuildInfo(t *testing.T) {
	g := newBuildInfo(version.Info{Version: "v0.1.0", Commit: "0123456789ab", GoVersion: "go1.26.3"})
	want := `
# HELP fleetjob_build_info The hub binary: 1, labelled with its version, commit and the Go version that built it.
# TYPE fleetjob_build_info gauge
fleetjob_build_info{commit="0123456789ab",go_version="go1.26.3",version="v0.1.0"} 1
`
	if err := testutil.CollectAndCompare(g, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestDashboardUsesNoTargetLabels: the Grafana dashboard filters, groups
// and names series by the hub's own labels, not by the target labels the
// scraper sets (namespace would pick the hub's namespace, not the run's).
func TestDashboardUsesNoTargetLabels(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "grafana", "fleetjob-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct {
				Name  string
				Query json.RawMessage
			}
		}
		Panels []struct {
			Title   string
			Targets []struct{ Expr, LegendFormat string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	queries := map[string]string{}
	for _, v := range dash.Templating.List {
		var q struct{ Query string }
		if json.Unmarshal(v.Query, &q) == nil {
			queries["variable "+v.Name] = q.Query
		}
	}
	for _, p := range dash.Panels {
		for i, target := range p.Targets {
			queries[fmt.Sprintf("panel %q query %d", p.Title, i)] = target.Expr + " " + target.LegendFormat
		}
	}
	// A matcher (label="…", label=~"…"), a grouping (by/without/ignoring/
	// on (…)), a label_values(…, label) argument or a legend {{label}}.
	uses := regexp.MustCompile(`(\w+)\s*(?:=~|!~|!=|=)\s*"|\b(?:by|without|ignoring|on)\s*\(([^)]*)\)|label_values\([^,]*,\s*(\w+)\)|\{\{(\w+)\}\}`)
	for where, q := range queries {
		for _, m := range uses.FindAllStringSubmatch(q, -1) {
			for _, group := range m[1:] {
				for _, l := range strings.Split(group, ",") {
					if l = strings.TrimSpace(l); slices.Contains(targetLabels, l) {
						t.Errorf("%s uses the target label %q: %s", where, l, q)
					}
				}
			}
		}
	}
	if len(queries) == 0 {
		t.Fatal("the dashboard has no query")
	}
}
