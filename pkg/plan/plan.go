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

// Package plan splits the nodes of one member cluster into the ordered groups
// a ClusterJob runs, group after group. It is pure: the same nodes and spec
// always give the same plan, so a plan can be recomputed in a test and
// compared, and the controller freezes the first one it computes.
package plan

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// NullGroupName names the group of nodes that lack the perNodeGroup label.
// '<' cannot occur in a label value, so no real value can merge into it.
const NullGroupName = "<none>"

// MaxSkippedNames is how many of the nodes left out a plan names. A
// 5,000-node cluster where the selector matches everything and most nodes
// are cordoned must still plan in one ConfigMap: past the first names, the
// rest are counted by reason.
const MaxSkippedNames = 100

// Plan is the ordered groups of one cluster and the nodes left out.
type Plan struct {
	// Groups run one after the other; they are never empty.
	Groups []Group `json:"groups"`
	// Skipped are the first MaxSkippedNames nodes matched by nodeSelector
	// that cannot run the Job, sorted by name.
	Skipped []SkippedNode `json:"skipped,omitempty"`
	// MoreSkipped counts, by reason, the nodes left out after Skipped.
	MoreSkipped map[string]int `json:"moreSkipped,omitempty"`
}

// Group is nodes that run together.
type Group struct {
	// Name is `all`, `batch-N` (1-based) or a node label value.
	Name string `json:"name"`
	// Nodes are node names, in the order their Jobs are created.
	Nodes []string `json:"nodes"`
}

// SkippedNode is a node left out of the plan and why.
type SkippedNode struct {
	Node    string `json:"node"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// SkippedCount is the number of nodes left out of the plan.
func (p Plan) SkippedCount() int {
	n := len(p.Skipped)
	for _, c := range p.MoreSkipped {
		n += c
	}
	return n
}

// NodeCount is the number of planned nodes.
func (p Plan) NodeCount() int {
	n := 0
	for _, g := range p.Groups {
		n += len(g.Nodes)
	}
	return n
}

// Compute plans the nodes of cluster for ClusterJob uid. It fails only on a
// spec that admission should have rejected, naming the field.
func Compute(nodes []corev1.Node, spec *fleetv1.ClusterJobSpec, uid types.UID, cluster string) (Plan, error) {
	eligible, skipped, err := filterNodes(nodes, spec)
	if err != nil {
		return Plan{}, err
	}
	var groups []Group
	switch spec.Strategy.Type {
	case fleetv1.StrategyAll:
		groups = groupAll(eligible)
	case fleetv1.StrategyBatch:
		if spec.Strategy.Batch == nil || spec.Strategy.Batch.Size < 1 {
			return Plan{}, fmt.Errorf("spec.strategy.batch.size: must be at least 1")
		}
		groups = groupBatches(eligible, *spec.Strategy.Batch, seed(uid, cluster))
	case fleetv1.StrategyPerNodeGroup:
		if spec.Strategy.PerNodeGroup == nil || spec.Strategy.PerNodeGroup.GroupLabel == "" {
			return Plan{}, fmt.Errorf("spec.strategy.perNodeGroup.groupLabel: required")
		}
		var unlabelled []SkippedNode
		groups, unlabelled = groupByLabel(eligible, *spec.Strategy.PerNodeGroup)
		skipped = append(skipped, unlabelled...)
	default:
		return Plan{}, fmt.Errorf("spec.strategy.type: unsupported value %q", spec.Strategy.Type)
	}
	slices.SortFunc(skipped, func(a, b SkippedNode) int { return strings.Compare(a.Node, b.Node) })
	p := Plan{Groups: groups, Skipped: skipped}
	if len(skipped) > MaxSkippedNames {
		p.Skipped, p.MoreSkipped = skipped[:MaxSkippedNames:MaxSkippedNames], map[string]int{}
		for _, s := range skipped[MaxSkippedNames:] {
			p.MoreSkipped[s.Reason]++
		}
	}
	return p, nil
}

// filterNodes returns, sorted by name, the nodes selected by nodeSelector
// that can run the Job, and the selected ones that cannot. Nodes the selector
// leaves out are neither: they are not part of the run.
func filterNodes(nodes []corev1.Node, spec *fleetv1.ClusterJobSpec) ([]*corev1.Node, []SkippedNode, error) {
	selector := labels.Everything()
	if spec.NodeSelector != nil {
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(spec.NodeSelector); err != nil {
			return nil, nil, fmt.Errorf("spec.nodeSelector: %w", err)
		}
	}
	podSpec := &spec.JobTemplate.Spec.Template.Spec
	affinity := nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: *podSpec})
	var eligible []*corev1.Node
	var skipped []SkippedNode
	for i := range nodes {
		node := &nodes[i]
		if !selector.Matches(labels.Set(node.Labels)) {
			continue
		}
		if reason, msg := ineligible(node, podSpec.Tolerations, affinity); reason != "" {
			skipped = append(skipped, SkippedNode{Node: node.Name, Reason: reason, Message: msg})
			continue
		}
		eligible = append(eligible, node)
	}
	slices.SortFunc(eligible, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	return eligible, skipped, nil
}

// Ineligible tells why the Job of spec could not run on node now (cordoned,
// NotReady, an untolerated taint, the template's affinity), with the reason
// a plan would skip it for; "" when it can. A planned node is checked again
// when its group starts.
func Ineligible(node *corev1.Node, spec *fleetv1.ClusterJobSpec) (reason, message string) {
	podSpec := &spec.JobTemplate.Spec.Template.Spec
	return ineligible(node, podSpec.Tolerations, nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: *podSpec}))
}

// ineligible tells why the Job's pod could never run on node, the checks the
// scheduler would make that do not depend on the node's load.
func ineligible(node *corev1.Node, tolerations []corev1.Toleration, affinity nodeaffinity.RequiredNodeAffinity) (string, string) {
	if node.Spec.Unschedulable {
		return fleetv1.NodeReasonUnschedulable, "node is cordoned"
	}
	if !isReady(node) {
		return fleetv1.NodeReasonNotReady, "node is not Ready"
	}
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, tolerations,
		func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, true)
	if untolerated {
		return fleetv1.NodeReasonUntoleratedTaint, fmt.Sprintf("taint %s is not tolerated by the Job template", taint.ToString())
	}
	if ok, err := affinity.Match(node); err != nil || !ok {
		return fleetv1.NodeReasonAffinityMismatch, "node does not match the Job template's node selector or required affinity"
	}
	return "", ""
}

func isReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func groupAll(nodes []*corev1.Node) []Group {
	if len(nodes) == 0 {
		return nil
	}
	return []Group{{Name: "all", Nodes: names(nodes)}}
}

func groupBatches(nodes []*corev1.Node, batch fleetv1.BatchStrategy, seed [2]uint64) []Group {
	order := names(nodes)
	if batch.Order == fleetv1.BatchOrderRandom {
		shuffle(order, seed)
	}
	var groups []Group
	for chunk := range slices.Chunk(order, int(batch.Size)) {
		groups = append(groups, Group{Name: fmt.Sprintf("batch-%d", len(groups)+1), Nodes: chunk})
	}
	return groups
}

// groupByLabel makes one group per value of the label in sorted order, then
// the unlabelled nodes as a last group, or as skipped nodes with ignoreNull.
func groupByLabel(nodes []*corev1.Node, s fleetv1.PerNodeGroupStrategy) ([]Group, []SkippedNode) {
	byValue := map[string][]string{}
	var unlabelled []string
	for _, n := range nodes {
		if v, ok := n.Labels[s.GroupLabel]; ok {
			byValue[v] = append(byValue[v], n.Name)
		} else {
			unlabelled = append(unlabelled, n.Name)
		}
	}
	var groups []Group
	for _, v := range slices.Sorted(maps.Keys(byValue)) {
		groups = append(groups, Group{Name: v, Nodes: byValue[v]})
	}
	if len(unlabelled) == 0 {
		return groups, nil
	}
	if !s.IgnoreNull {
		return append(groups, Group{Name: NullGroupName, Nodes: unlabelled}), nil
	}
	skipped := make([]SkippedNode, 0, len(unlabelled))
	for _, n := range unlabelled {
		skipped = append(skipped, SkippedNode{Node: n, Reason: fleetv1.NodeReasonNoGroupLabel,
			Message: fmt.Sprintf("node has no %s label and ignoreNull is set", s.GroupLabel)})
	}
	return groups, skipped
}

// seed derives the shuffle seed from the run and the cluster, so a restarted
// controller, or a second cluster, never reuses or changes another's order.
func seed(uid types.UID, cluster string) [2]uint64 {
	sum := sha256.Sum256([]byte(string(uid) + "\x00" + cluster))
	return [2]uint64{binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])}
}

// shuffle is a Fisher-Yates shuffle over PCG written out here, because the
// math/rand Shuffle algorithm is not promised to stay the same across Go
// releases and a plan must not change when the controller is rebuilt.
func shuffle(s []string, seed [2]uint64) {
	r := rand.NewPCG(seed[0], seed[1])
	for i := len(s) - 1; i > 0; i-- {
		j := int(r.Uint64() % uint64(i+1))
		s[i], s[j] = s[j], s[i]
	}
}

func names(nodes []*corev1.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}
