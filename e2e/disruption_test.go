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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Fleet disruption budgets", hubLogic, func() {
	It("two disruptive runs share a budget of 2 nodes per member: never more unfinished at once in any member, both complete, one Job per node", func() {
		const perMember = 2
		fdb := &fleetv1.FleetDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "e2e-two-per-member"}, Spec: fleetv1.FleetDisruptionBudgetSpec{
			ClusterSelector:             &metav1.LabelSelector{MatchLabels: map[string]string{suiteLabel: suiteValue}},
			MaxDisruptedNodesPerCluster: ptr.To(intstr.FromInt32(perMember)),
		}}
		Expect(f.hub.Create(ctx, fdb)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(f.hub.Delete(ctx, fdb))).To(Succeed()) })
		reboot := makeClusterJob("budget-reboot").Obj()
		kernel := makeClusterJob("budget-kernel").Batch(2).Obj()
		reboot.Spec.Disruptive, kernel.Spec.Disruptive = true, true
		create(reboot)
		create(kernel)
		for _, m := range f.members {
			recorders[m.name].countUnfinished(reboot.UID, kernel.UID)
		}
		Eventually(func(g Gomega) {
			waiting := false
			for _, cj := range []*fleetv1.ClusterJob{reboot, kernel} {
				for _, r := range latest(cj)(g).Status.Clusters {
					waiting = waiting || r.Reason == fleetv1.ReasonWaitingForBudget
				}
			}
			g.Expect(waiting).To(BeTrue(), "a member's row says the budget holds it")
		}).WithTimeout(runTimeout).Should(Succeed())

		gotReboot := waitPhase(reboot, fleetv1.PhaseCompleted)
		gotKernel := waitPhase(kernel, fleetv1.PhaseCompleted)
		for _, m := range f.members {
			nodes := names(eligibleNodes(m))
			expectRun(m, recorders[m.name], gotReboot, []group{{name: "all", nodes: nodes}})
			expectRun(m, recorders[m.name], gotKernel, batches(nodes, 2))
			Expect(recorders[m.name].unfinishedPeak()).To(And(BeNumerically(">=", 1), BeNumerically("<=", perMember)),
				"member %s: Jobs of the two runs unfinished at once, at any change", m.name)
		}
		for _, m := range f.members {
			recorders[m.name].countUnfinished()
		}
	})
})
