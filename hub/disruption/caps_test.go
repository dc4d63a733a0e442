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

package disruption

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func budget(name string, sel map[string]string, perCluster, total *intstr.IntOrString) fleetv1.FleetDisruptionBudget {
	b := fleetv1.FleetDisruptionBudget{Spec: fleetv1.FleetDisruptionBudgetSpec{
		ClusterSelector:             &metav1.LabelSelector{MatchLabels: sel},
		MaxDisruptedNodesPerCluster: perCluster, MaxDisruptedNodes: total,
	}}
	b.Name = name
	return b
}

func TestCaps(t *testing.T) {
	clusters := map[string]Cluster{
		"a": {Labels: map[string]string{"env": "prod"}, Nodes: 40},
		"b": {Labels: map[string]string{"env": "prod"}, Nodes: 9},
		"c": {Labels: map[string]string{"env": "dev"}, Nodes: 100},
		"d": {Labels: map[string]string{"env": "prod"}}, // node count not known yet
	}
	cases := map[string]struct {
		budgets []fleetv1.FleetDisruptionBudget
		cluster string
		want    []Cap
		err     string
	}{
		"numbers": {cluster: "a",
			budgets: []fleetv1.FleetDisruptionBudget{budget("prod", map[string]string{"env": "prod"}, ptr.To(intstr.FromInt32(2)), ptr.To(intstr.FromInt32(5)))},
			want:    []Cap{{Budget: "prod", PerCluster: 2, Total: 5, Clusters: set("a", "b", "d")}}},
		"a budget that does not select the cluster does not bear on it": {cluster: "c",
			budgets: []fleetv1.FleetDisruptionBudget{budget("prod", map[string]string{"env": "prod"}, ptr.To(intstr.FromInt32(2)), nil)}},
		"percentages of the cluster's nodes and of the selected clusters' nodes together": {cluster: "a",
			budgets: []fleetv1.FleetDisruptionBudget{budget("prod", map[string]string{"env": "prod"}, ptr.To(intstr.FromString("10%")), ptr.To(intstr.FromString("10%")))},
			want:    []Cap{{Budget: "prod", PerCluster: 4, Total: 4, Clusters: set("a", "b", "d")}}},
		"a percentage rounds down, never below one node": {cluster: "b",
			budgets: []fleetv1.FleetDisruptionBudget{budget("prod", map[string]string{"env": "prod"}, ptr.To(intstr.FromString("10%")), nil)},
			want:    []Cap{{Budget: "prod", PerCluster: 1, Clusters: set("a", "b", "d")}}},
		"an unknown node count gives one node": {cluster: "d",
			budgets: []fleetv1.FleetDisruptionBudget{budget("prod", map[string]string{"env": "prod"}, ptr.To(intstr.FromString("50%")), nil)},
			want:    []Cap{{Budget: "prod", PerCluster: 1, Clusters: set("a", "b", "d")}}},
		"every budget that selects the cluster": {cluster: "c",
			budgets: []fleetv1.FleetDisruptionBudget{
				budget("all", map[string]string{}, nil, ptr.To(intstr.FromInt32(10))),
				budget("dev", map[string]string{"env": "dev"}, ptr.To(intstr.FromInt32(3)), nil),
			},
			want: []Cap{
				{Budget: "all", Total: 10, Clusters: set("a", "b", "c", "d")},
				{Budget: "dev", PerCluster: 3, Clusters: set("c")},
			}},
		"a selector that cannot be read is an error naming the budget and field": {cluster: "a",
			budgets: []fleetv1.FleetDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: fleetv1.FleetDisruptionBudgetSpec{
				ClusterSelector:   &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}},
				MaxDisruptedNodes: ptr.To(intstr.FromInt32(1)),
			}}},
			err: `FleetDisruptionBudget bad: spec.clusterSelector: "Near" is not a valid label selector operator`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Caps(tc.budgets, tc.cluster, clusters)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Caps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	clusters := map[string]Cluster{
		"a": {Labels: map[string]string{"env": "prod"}, Nodes: 40},
		"b": {Labels: map[string]string{"env": "prod"}, Nodes: 9},
		"c": {Labels: map[string]string{"env": "dev"}, Nodes: 100},
	}
	prod := budget("prod", map[string]string{"env": "prod"}, ptr.To(intstr.FromInt32(2)), nil)
	prod.Generation = 3
	l := NewLedger()
	caps, err := Caps([]fleetv1.FleetDisruptionBudget{prod}, "a", clusters)
	if err != nil {
		t.Fatal(err)
	}
	l.Observe(key("reboot", "a"), 2)
	l.Observe(key("reboot", "b"), 1)
	l.Observe(key("reboot", "c"), 7) // not selected: not counted
	if g := grant(t, l, Request{Key: key("patch", "a"), Want: 3, Caps: caps}); g.Nodes != 0 || g.Budget != "prod" {
		t.Fatalf("grant = %+v, want none, held by prod", g)
	}
	got, err := Status(&prod, clusters, l.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	want := fleetv1.FleetDisruptionBudgetStatus{ObservedGeneration: 3, Clusters: 2, DisruptedNodes: 3, WaitingClusters: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	select {
	case <-l.Changed():
	default:
		t.Error("no change signalled for the budgets' status")
	}

	bad := budget("bad", nil, nil, ptr.To(intstr.FromInt32(1)))
	bad.Spec.ClusterSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}
	if _, err := Status(&bad, clusters, l.Snapshot()); err == nil || err.Error() != `FleetDisruptionBudget bad: spec.clusterSelector: "Near" is not a valid label selector operator` {
		t.Errorf("Status of an unreadable selector: %v", err)
	}
}
