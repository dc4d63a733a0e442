//go:build e2e

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

package e2e

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

const zoneLabel = "topology.kubernetes.io/zone"

var _ = Describe("Strategies across two members", hubLogic, func() {
	// The smoke test of the fleet too: Jobs complete under kwok's stages.
	It("runs every node of both members in one group with the all strategy", func() {
		cj := makeClusterJob("all-at-once").Obj()
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		var want fleetv1.NodeCounts
		for _, m := range f.members {
			nodes := names(eligibleNodes(m))
			expectRun(m, recorders[m.name], cj, []group{{name: "all", nodes: nodes}})
			Expect(row(got, m.name).Groups).To(Equal(fleetv1.GroupCounts{Total: 1, Completed: 1}))
			// A kind control plane is skipped for its taint.
			all := int32(nodeCount(m))
			want.Total, want.Succeeded, want.Skipped = want.Total+all, want.Succeeded+int32(len(nodes)), want.Skipped+all-int32(len(nodes))
		}
		Expect(got.Status.Summary.Nodes).To(Equal(want))
	})

	It("runs alphabetical batches of 3 one after the other, one Job per node, each pod on its node", func() {
		cj := makeClusterJob("batch-alphabetical").Batch(3).Obj()
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		for _, m := range f.members {
			want := batches(names(eligibleNodes(m)), 3)
			expectRun(m, recorders[m.name], cj, want)
			r := row(got, m.name)
			Expect(r.Phase).To(Equal(fleetv1.ClusterCompleted))
			Expect(r.Groups).To(Equal(fleetv1.GroupCounts{Total: int32(len(want)), Completed: int32(len(want))}))
		}
		if f.provider == providerKwok {
			// The fleet's shape, spelled out: hack/fleet.sh names nodes mN-node-NN.
			Expect(batches(names(eligibleNodes(f.member("member-1"))), 3)[0].nodes).To(Equal([]string{"m1-node-01", "m1-node-02", "m1-node-03"}))
		}
	})

	It("runs one group per zone, in sorted zone order", func() {
		cj := makeClusterJob("per-zone").PerNodeGroup(zoneLabel, false).Obj()
		create(cj)
		waitPhase(cj, fleetv1.PhaseCompleted)
		for _, m := range f.members {
			want := byLabel(eligibleNodes(m), zoneLabel, false)
			Expect(len(want)).To(BeNumerically(">", 1), "%s has nodes in several zones", m.name)
			expectRun(m, recorders[m.name], cj, want)
		}
	})

	DescribeTable("runs nodes without the group label last as <none>, or skips them with ignoreNull",
		func(ignoreNull bool) {
			labelSomeNodes(tierLabel)
			cj := makeClusterJob("per-tier").PerNodeGroup(tierLabel, ignoreNull).Obj()
			create(cj)
			got := waitPhase(cj, fleetv1.PhaseCompleted)
			for _, m := range f.members {
				nodes := eligibleNodes(m)
				want := byLabel(nodes, tierLabel, ignoreNull)
				expectRun(m, recorders[m.name], cj, want)
				ran := 0
				for _, g := range want {
					ran += len(g.nodes)
				}
				all := nodeCount(m)
				Expect(row(got, m.name).Nodes).To(Equal(fleetv1.NodeCounts{
					Total: int32(all), Succeeded: int32(ran), Skipped: int32(all - ran),
				}), "%s: unlabelled nodes are skipped only with ignoreNull", m.name)
			}
		},
		Entry("ignoreNull false", false),
		Entry("ignoreNull true", true),
	)
})

// tierLabel is a node label only the suite sets, on some nodes.
const tierLabel = "e2e.fleetjob.io/tier"

// labelSomeNodes labels each member's first eligible node label=gold and,
// where there are three or more, its second label=silver, leaving the
// others unlabelled, until the spec ends.
func labelSomeNodes(label string) {
	GinkgoHelper()
	for _, m := range f.members {
		nodes := eligibleNodes(m)
		values := []string{"gold"}
		if len(nodes) >= 3 {
			values = append(values, "silver")
		}
		for i, v := range values {
			setNodeLabel(m, nodes[i].Name, label, &v)
			DeferCleanup(setNodeLabel, m, nodes[i].Name, label, (*string)(nil))
		}
	}
}

// setNodeLabel sets (or, value nil, removes) a label of a node.
func setNodeLabel(m *member, node, label string, value *string) {
	GinkgoHelper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]*string{label: value}}})
	Expect(err).NotTo(HaveOccurred())
	Expect(m.client.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}
