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

package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

const uid = types.UID("6f1c0f3e-2b7d-4a51-9a0e-3c5d8e7f9a10")

// nodeWrapper builds test Nodes: makeNode("n1").Label("zone", "a").Obj().
type nodeWrapper struct{ corev1.Node }

// makeNode returns a Ready, schedulable, untainted node.
func makeNode(name string) *nodeWrapper {
	return &nodeWrapper{corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
		}},
	}}
}

// Label sets metadata.labels[k].
func (w *nodeWrapper) Label(k, v string) *nodeWrapper { w.Labels[k] = v; return w }

// Cordon sets spec.unschedulable.
func (w *nodeWrapper) Cordon() *nodeWrapper { w.Spec.Unschedulable = true; return w }

// NotReady sets the Ready condition to False.
func (w *nodeWrapper) NotReady() *nodeWrapper {
	w.Status.Conditions[0].Status = corev1.ConditionFalse
	return w
}

// Taint adds a spec.taints entry.
func (w *nodeWrapper) Taint(key string, effect corev1.TaintEffect) *nodeWrapper {
	w.Spec.Taints = append(w.Spec.Taints, corev1.Taint{Key: key, Value: "x", Effect: effect})
	return w
}

// Obj returns the node.
func (w *nodeWrapper) Obj() corev1.Node { return w.Node }

func nodes(names ...string) []corev1.Node {
	out := make([]corev1.Node, len(names))
	for i, n := range names {
		out[i] = makeNode(n).Obj()
	}
	return out
}

func spec(s fleetv1.Strategy) *fleetv1.ClusterJobSpec {
	return &fleetv1.ClusterJobSpec{
		ClusterSelector: &metav1.LabelSelector{},
		Strategy:        s,
		JobTemplate:     batchv1.JobTemplateSpec{},
	}
}

var (
	all          = fleetv1.Strategy{Type: fleetv1.StrategyAll}
	alphabetical = func(size int32) fleetv1.Strategy {
		return fleetv1.Strategy{Type: fleetv1.StrategyBatch, Batch: &fleetv1.BatchStrategy{Size: size, Order: fleetv1.BatchOrderAlphabetical}}
	}
	random = func(size int32) fleetv1.Strategy {
		return fleetv1.Strategy{Type: fleetv1.StrategyBatch, Batch: &fleetv1.BatchStrategy{Size: size, Order: fleetv1.BatchOrderRandom}}
	}
	perZone = func(ignoreNull bool) fleetv1.Strategy {
		return fleetv1.Strategy{Type: fleetv1.StrategyPerNodeGroup, PerNodeGroup: &fleetv1.PerNodeGroupStrategy{GroupLabel: "zone", IgnoreNull: ignoreNull}}
	}
)

func TestCompute(t *testing.T) {
	zoned := []corev1.Node{
		makeNode("n4").Label("zone", "b").Obj(),
		makeNode("n1").Label("zone", "b").Obj(),
		makeNode("n3").Obj(),
		makeNode("n2").Label("zone", "a").Obj(),
		makeNode("n5").Label("zone", "").Obj(),
	}
	testCases := map[string]struct {
		nodes    []corev1.Node
		spec     *fleetv1.ClusterJobSpec
		wantPlan Plan
	}{
		"all, no nodes": {
			spec:     spec(all),
			wantPlan: Plan{},
		},
		"batch, no nodes": {
			spec:     spec(alphabetical(2)),
			wantPlan: Plan{},
		},
		"perNodeGroup, no nodes": {
			spec:     spec(perZone(false)),
			wantPlan: Plan{},
		},
		"all, one node": {
			nodes:    nodes("n1"),
			spec:     spec(all),
			wantPlan: Plan{Groups: []Group{{Name: "all", Nodes: []string{"n1"}}}},
		},
		"all, nodes sorted by name": {
			nodes:    nodes("n3", "n1", "n2"),
			spec:     spec(all),
			wantPlan: Plan{Groups: []Group{{Name: "all", Nodes: []string{"n1", "n2", "n3"}}}},
		},
		"alphabetical batches are sorted, last one smaller": {
			nodes: nodes("node-b", "node-e", "node-a", "node-d", "node-c"),
			spec:  spec(alphabetical(2)),
			wantPlan: Plan{Groups: []Group{
				{Name: "batch-1", Nodes: []string{"node-a", "node-b"}},
				{Name: "batch-2", Nodes: []string{"node-c", "node-d"}},
				{Name: "batch-3", Nodes: []string{"node-e"}},
			}},
		},
		"batch size larger than nodes": {
			nodes:    nodes("n2", "n1"),
			spec:     spec(alphabetical(10)),
			wantPlan: Plan{Groups: []Group{{Name: "batch-1", Nodes: []string{"n1", "n2"}}}},
		},
		"batch size one": {
			nodes: nodes("n2", "n1"),
			spec:  spec(alphabetical(1)),
			wantPlan: Plan{Groups: []Group{
				{Name: "batch-1", Nodes: []string{"n1"}},
				{Name: "batch-2", Nodes: []string{"n2"}},
			}},
		},
		"perNodeGroup: sorted values, empty value is a value, unlabelled last": {
			nodes: zoned,
			spec:  spec(perZone(false)),
			wantPlan: Plan{Groups: []Group{
				{Name: "", Nodes: []string{"n5"}},
				{Name: "a", Nodes: []string{"n2"}},
				{Name: "b", Nodes: []string{"n1", "n4"}},
				{Name: NullGroupName, Nodes: []string{"n3"}},
			}},
		},
		"perNodeGroup with ignoreNull skips unlabelled nodes": {
			nodes: zoned,
			spec:  spec(perZone(true)),
			wantPlan: Plan{
				Groups: []Group{
					{Name: "", Nodes: []string{"n5"}},
					{Name: "a", Nodes: []string{"n2"}},
					{Name: "b", Nodes: []string{"n1", "n4"}},
				},
				Skipped: []SkippedNode{{Node: "n3", Reason: fleetv1.NodeReasonNoGroupLabel, Message: "node has no zone label and ignoreNull is set"}},
			},
		},
		"perNodeGroup, every node unlabelled and ignoreNull": {
			nodes: nodes("n1"),
			spec:  spec(perZone(true)),
			wantPlan: Plan{
				Skipped: []SkippedNode{{Node: "n1", Reason: fleetv1.NodeReasonNoGroupLabel, Message: "node has no zone label and ignoreNull is set"}},
			},
		},
		"nodeSelector leaves other nodes out entirely": {
			nodes: zoned,
			spec: func() *fleetv1.ClusterJobSpec {
				s := spec(all)
				s.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "b"}}
				return s
			}(),
			wantPlan: Plan{Groups: []Group{{Name: "all", Nodes: []string{"n1", "n4"}}}},
		},
		"all skipped, sorted by name": {
			nodes: []corev1.Node{
				makeNode("n4").Taint("dedicated", corev1.TaintEffectNoExecute).Obj(),
				makeNode("n2").NotReady().Obj(),
				makeNode("n1").Cordon().Obj(),
				makeNode("n3").Taint("gpu", corev1.TaintEffectNoSchedule).Obj(),
			},
			spec: spec(all),
			wantPlan: Plan{Skipped: []SkippedNode{
				{Node: "n1", Reason: fleetv1.NodeReasonUnschedulable, Message: "node is cordoned"},
				{Node: "n2", Reason: fleetv1.NodeReasonNotReady, Message: "node is not Ready"},
				{Node: "n3", Reason: fleetv1.NodeReasonUntoleratedTaint, Message: "taint gpu=x:NoSchedule is not tolerated by the Job template"},
				{Node: "n4", Reason: fleetv1.NodeReasonUntoleratedTaint, Message: "taint dedicated=x:NoExecute is not tolerated by the Job template"},
			}},
		},
		"PreferNoSchedule taints and tolerated taints do not skip": {
			nodes: []corev1.Node{
				makeNode("n1").Taint("soft", corev1.TaintEffectPreferNoSchedule).Obj(),
				makeNode("n2").Taint("gpu", corev1.TaintEffectNoSchedule).Obj(),
			},
			spec: func() *fleetv1.ClusterJobSpec {
				s := spec(all)
				s.JobTemplate.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
				return s
			}(),
			wantPlan: Plan{Groups: []Group{{Name: "all", Nodes: []string{"n1", "n2"}}}},
		},
		"template nodeSelector mismatch is skipped": {
			nodes: []corev1.Node{makeNode("n1").Label("os", "linux").Obj(), makeNode("n2").Obj()},
			spec: func() *fleetv1.ClusterJobSpec {
				s := spec(all)
				s.JobTemplate.Spec.Template.Spec.NodeSelector = map[string]string{"os": "linux"}
				return s
			}(),
			wantPlan: Plan{
				Groups:  []Group{{Name: "all", Nodes: []string{"n1"}}},
				Skipped: []SkippedNode{{Node: "n2", Reason: fleetv1.NodeReasonAffinityMismatch, Message: "node does not match the Job template's node selector or required affinity"}},
			},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got, err := Compute(tc.nodes, tc.spec, uid, "member-1")
			if err != nil {
				t.Fatalf("Compute() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantPlan, got); diff != "" {
				t.Errorf("Compute() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeErrors(t *testing.T) {
	badSelector := spec(all)
	badSelector.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: "Near"}}}
	testCases := map[string]struct {
		spec      *fleetv1.ClusterJobSpec
		wantField string
	}{
		"invalid nodeSelector":   {badSelector, "spec.nodeSelector"},
		"batch without size":     {spec(fleetv1.Strategy{Type: fleetv1.StrategyBatch}), "spec.strategy.batch.size"},
		"perNodeGroup, no label": {spec(fleetv1.Strategy{Type: fleetv1.StrategyPerNodeGroup}), "spec.strategy.perNodeGroup.groupLabel"},
		"unknown type":           {spec(fleetv1.Strategy{Type: "rolling"}), "spec.strategy.type"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			_, err := Compute(nodes("n1"), tc.spec, uid, "c")
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantField+":") {
				t.Errorf("Compute() error = %v, want one naming %s", err, tc.wantField)
			}
		})
	}
}

func TestRandomBatches(t *testing.T) {
	in := make([]string, 50)
	for i := range in {
		in[i] = fmt.Sprintf("node-%02d", i)
	}
	flatten := func(p Plan) []string {
		var out []string
		for _, g := range p.Groups {
			out = append(out, g.Nodes...)
		}
		return out
	}
	first, _ := Compute(nodes(in...), spec(random(7)), uid, "member-1")
	reversed := slices.Clone(in)
	slices.Reverse(reversed)
	again, _ := Compute(nodes(reversed...), spec(random(7)), uid, "member-1")
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("same run and cluster gave a different plan (-first +again):\n%s", diff)
	}
	got := flatten(first)
	if slices.Equal(got, in) {
		t.Errorf("random order left 50 nodes sorted")
	}
	if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, in) {
		t.Errorf("random order is not a permutation of the nodes: %v", got)
	}
	if len(first.Groups) != 8 || len(first.Groups[7].Nodes) != 1 {
		t.Errorf("got %d groups, last of %d nodes; want 8 groups, last of 1", len(first.Groups), len(first.Groups[len(first.Groups)-1].Nodes))
	}
	other, _ := Compute(nodes(in...), spec(random(7)), uid, "member-2")
	if slices.Equal(flatten(other), got) {
		t.Errorf("two clusters got the same random order")
	}
	otherRun, _ := Compute(nodes(in...), spec(random(7)), "another-uid", "member-1")
	if slices.Equal(flatten(otherRun), got) {
		t.Errorf("two runs got the same random order")
	}
	// Golden prefix: a change of shuffle algorithm would reorder started runs
	// whose plan is computed again by an older version; catch it here.
	wantHead := []string{"node-49", "node-47", "node-27"}
	if !slices.Equal(got[:3], wantHead) {
		t.Errorf("random order starts %v, want %v", got[:3], wantHead)
	}
}

func TestTenThousandNodes(t *testing.T) {
	in := make([]string, 10000)
	for i := range in {
		in[i] = fmt.Sprintf("node-%05d", len(in)-i)
	}
	p, err := Compute(nodes(in...), spec(alphabetical(100)), uid, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 100 || p.NodeCount() != 10000 {
		t.Fatalf("got %d groups of %d nodes, want 100 of 10000", len(p.Groups), p.NodeCount())
	}
	if p.Groups[0].Nodes[0] != "node-00001" || p.Groups[99].Nodes[99] != "node-10000" {
		t.Errorf("groups not in alphabetical order: first %s, last %s", p.Groups[0].Nodes[0], p.Groups[99].Nodes[99])
	}
}

// TestMostNodesSkipped checks that a cluster where most selected nodes
// cannot run the Job names the first of them and counts the rest, so its
// plan stays small.
func TestMostNodesSkipped(t *testing.T) {
	var in []corev1.Node
	for i := range 5000 {
		n := makeNode(fmt.Sprintf("node-%04d", i))
		switch {
		case i%50 == 0:
		case i%2 == 0:
			n.Cordon()
		default:
			n.NotReady()
		}
		in = append(in, n.Obj())
	}
	p, err := Compute(in, spec(fleetv1.Strategy{Type: fleetv1.StrategyAll}), uid, "c")
	if err != nil {
		t.Fatal(err)
	}
	if p.NodeCount() != 100 || p.SkippedCount() != 4900 {
		t.Errorf("got %d nodes planned and %d skipped, want 100 and 4900", p.NodeCount(), p.SkippedCount())
	}
	if len(p.Skipped) != MaxSkippedNames || p.Skipped[0].Node != "node-0001" || p.Skipped[MaxSkippedNames-1].Node != "node-0102" {
		t.Errorf("named %d skipped nodes from %s to %s, want the first %d by name, node-0001 to node-0102",
			len(p.Skipped), p.Skipped[0].Node, p.Skipped[len(p.Skipped)-1].Node, MaxSkippedNames)
	}
	// Odd nodes are NotReady (2,500), other even ones but every 50th are
	// cordoned (2,400); the first 100 named hold 51 and 49 of them.
	want := map[string]int{fleetv1.NodeReasonNotReady: 2500 - 51, fleetv1.NodeReasonUnschedulable: 2400 - 49}
	if diff := cmp.Diff(want, p.MoreSkipped); diff != "" {
		t.Errorf("MoreSkipped (-want +got):\n%s", diff)
	}
}

func BenchmarkCompute10kNodes(b *testing.B) {
	in := make([]string, 10000)
	for i := range in {
		in[i] = fmt.Sprintf("node-%05d", i)
	}
	ns := nodes(in...)
	s := spec(random(100))
	for b.Loop() {
		if _, err := Compute(ns, s, uid, "c"); err != nil {
			b.Fatal(err)
		}
	}
}
