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

package hub

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Failure budgets", func() {
	var stopHub func()
	num := func(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v }

	BeforeEach(func() {
		register(members["member-a"], admin, map[string]string{"env": "dev"})
		register(members["member-b"], admin, map[string]string{"env": "prod"})
		stopHub = startHub(hubOptions{})
	})
	AfterEach(func() { cleanUp(stopHub) })

	It("stops a cluster past maxFailedNodesPerCluster, FailureBudgetExceeded, while the other cluster runs to its end", func() {
		exceeded := map[string]string{"scope": "cluster", "action": "Stop"}
		before := counterValue("fleetjob_failure_budget_exceeded_total", exceeded)
		members["member-a"].runner.failOn("a-node-1", "a-node-2")
		cj := makeClusterJob("per-cluster").Batch(2).Policy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: num(1)}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}), "no group after the budget was exceeded")
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)), "the budget is member-a's")
		got := get(cj)(Default)
		Expect(got.Status.Clusters[0].Reason).To(Equal(fleetv1.ReasonFailureBudgetExceeded))
		Expect(got.Status.Clusters[0].Message).To(Equal("maxFailedNodesPerCluster 1 allows 1 of 4 nodes to fail; 2 failed in cluster member-a"))
		Expect(got.Status.Clusters[1].Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionFailed).Reason).To(Equal(fleetv1.ReasonFailureBudgetExceeded))
		Expect(counterValue("fleetjob_failure_budget_exceeded_total", exceeded)-before).To(Equal(1.0), "counted once, when member-a's row first said so")
	})

	It("stops the fleet past maxFailedNodes: the next cluster never starts", func() {
		exceeded := map[string]string{"scope": "run", "action": "Stop"}
		before := counterValue("fleetjob_failure_budget_exceeded_total", exceeded)
		members["member-a"].runner.failOn("a-node-1")
		cj := makeClusterJob("run-wide").Batch(2).MaxConcurrentClusters(1).Policy(fleetv1.FailurePolicy{MaxFailedNodes: num(0)}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}))
		Expect(jobNodes(members["member-b"], cj)).To(BeEmpty())
		got := get(cj)(Default)
		Expect(got.Status.Clusters[1].Reason).To(Equal(fleetv1.ReasonStopped))
		Expect(got.Status.Clusters[1].Message).To(HavePrefix("a failure budget stopped the run before this cluster started: maxFailedNodes 0"))
		Expect(meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionFailed).Reason).To(Equal(fleetv1.ReasonFailureBudgetExceeded))
		Expect(meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionFailureBudgetExceeded).Message).To(HavePrefix("stopping the run: maxFailedNodes 0"))
		Expect(counterValue("fleetjob_failure_budget_exceeded_total", exceeded)-before).To(Equal(1.0), "counted once, however many reconciles retried the halt")
	})

	It("suspends the run past a Suspend budget, and a resume accepts the failures and runs every node once", func() {
		members["member-a"].runner.failOn("a-node-1")
		cj := makeClusterJob("suspend").Batch(2).Clusters(map[string]string{"env": "dev"}).
			Policy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: num(0), OnExceeded: fleetv1.OnExceededSuspend}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			got := get(cj)(g)
			g.Expect(got.Spec.Suspend).To(HaveValue(BeTrue()), "the hub suspends the run")
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, fleetv1.ConditionFailureBudgetExceeded)).To(BeTrue())
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Consistently(func() map[string]int { return jobNodes(members["member-a"], cj) }).WithTimeout(2*time.Second).
			Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}), "no group starts while suspended")

		current := get(cj)(Default)
		patch := client.MergeFrom(current.DeepCopy())
		current.Spec.Suspend = ptr.To(false)
		Expect(hubC.Patch(ctx, current, patch)).To(Succeed())

		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)), "every node ran once after the resume")
		got := get(cj)(Default)
		cond := meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionFailureBudgetExceeded)
		Expect(cond.Status).To(Equal(metav1.ConditionFalse))
		Expect(cond.Reason).To(Equal(fleetv1.ReasonResumed))
		Expect(got.Spec.Suspend).To(HaveValue(BeFalse()))
		runs := memberRuns(Default, got)
		Expect(runs).To(HaveLen(1))
		Expect(runs[0].Spec.AcceptedFailures).To(Equal(int32(1)))
		Expect(runs[0].Status.Reason).To(Equal(fleetv1.ReasonNodeFailed))
	})
})
