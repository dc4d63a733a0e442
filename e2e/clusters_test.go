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
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("kubectl fleetjob clusters", func() {
	It("shows every member Ready with its nodes, as the hub sees it", func() {
		// The hub publishes and refreshes the MemberClusters on its own
		// schedule: wait for them rather than for a fixed time.
		Eventually(func(g Gomega) {
			var list struct {
				Kind  string                  `json:"kind"`
				Items []fleetv1.MemberCluster `json:"items"`
			}
			g.Expect(json.Unmarshal([]byte(f.fleetjob("clusters", "-o", "json")), &list)).To(Succeed())
			g.Expect(list.Kind).To(Equal("List"))
			for _, m := range f.members {
				i := slices.IndexFunc(list.Items, func(c fleetv1.MemberCluster) bool { return c.Name == m.name })
				g.Expect(i).NotTo(Equal(-1), "%s is listed", m.name)
				mc := list.Items[i]
				g.Expect(mc.Kind).To(Equal("MemberCluster"))
				ready := meta.FindStatusCondition(mc.Status.Conditions, fleetv1.MemberClusterReady)
				g.Expect(ready).NotTo(BeNil(), "%s has a Ready condition", m.name)
				g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%s is Ready: %s", m.name, ready.Message)
				g.Expect(mc.Status.NodeCount).To(HaveValue(BeEquivalentTo(nodeCount(m))), "%s's nodes", m.name)
			}
		}).Should(Succeed())
	})
})
