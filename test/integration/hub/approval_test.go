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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Approvals", func() {
	var stopHub func()

	BeforeEach(func() {
		register(members["member-a"], admin, map[string]string{"env": "dev"})
		register(members["member-b"], admin, map[string]string{"env": "dev"})
		stopHub = startHub(hubOptions{})
	})
	AfterEach(func() { cleanUp(stopHub) })

	// canaryRun starts a run over both members whose canary is member-a,
	// and waits until the canary ended and the run waits for a person:
	// member-b has run nothing.
	canaryRun := func(name string) *fleetv1.ClusterJob {
		GinkgoHelper()
		cj := makeClusterJob(name).Batch(2).Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1)}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(get(cj)(g).Status.Conditions, fleetv1.ConditionApproved)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(fleetv1.ReasonAwaitingApproval))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)), "the canary ran every node")
		Expect(jobNodes(members["member-b"], cj)).To(BeEmpty(), "nothing else ran before the decision")
		Expect(get(cj)(Default).Status.Phase).To(Equal(fleetv1.PhaseRunning))
		return cj
	}
	// decide writes the decision as a person would, on the latest
	// ClusterJob: the hub writes its status meanwhile, and a write that
	// lost that race (409 Conflict) is made again on the newer object.
	decide := func(cj *fleetv1.ClusterJob, d fleetv1.ApprovalDecision) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			latest := get(cj)(g)
			patch := client.MergeFromWithOptions(latest.DeepCopy(), client.MergeFromWithOptimisticLock{})
			latest.Spec.Approval.Decision = &d
			g.Expect(hubC.Patch(ctx, latest, patch)).To(Succeed())
		}).Should(Succeed())
	}

	It("holds every cluster but the canary until a person approves, then runs them, and says who approved", func() {
		cj := canaryRun("approved")
		decide(cj, fleetv1.ApprovalDecision{Approved: true, User: "alice", Reason: "the canary is clean"})
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)), "one Job per node after the approval")
		c := meta.FindStatusCondition(get(cj)(Default).Status.Conditions, fleetv1.ConditionApproved)
		Expect(c.Status).To(BeEquivalentTo("True"))
		Expect(c.Message).To(Equal("approved by alice: the canary is clean"))
		Eventually(func(g Gomega) {
			g.Expect(eventsAbout(g, cj, fleetv1.ReasonApproved)).To(ConsistOf(HaveField("Note", "approved by alice: the canary is clean")))
		}).Should(Succeed())
	})

	It("ends the run Failed, Rejected, when a person rejects it, and runs nothing more", func() {
		cj := canaryRun("rejected")
		decide(cj, fleetv1.ApprovalDecision{User: "bob", Reason: "a-node-3 came back slow"})
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		Expect(meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionFailed).Reason).To(Equal(fleetv1.ReasonRejected))
		Expect(jobNodes(members["member-b"], cj)).To(BeEmpty())
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)), "the canary's Jobs are its record")
		Eventually(func(g Gomega) {
			g.Expect(eventsAbout(g, cj, fleetv1.ReasonRejected)).To(ConsistOf(HaveField("Note", "stopping the run: rejected by bob: a-node-3 came back slow")))
		}).Should(Succeed())
	})
})
