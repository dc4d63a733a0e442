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
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Approvals", hubLogic, func() {
	It("runs the canary member alone until `kubectl fleetjob approve`, which records who approved, then the rest, one Job per node", func() {
		// Members run in name order: member-1 is the canary.
		canary, other := f.member("member-1"), f.member("member-2")
		cj := makeClusterJob("approval").Obj()
		cj.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1)}
		create(cj)
		Eventually(func(g Gomega) {
			c := meta.FindStatusCondition(latest(cj)(g).Status.Conditions, fleetv1.ConditionApproved)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(fleetv1.ReasonAwaitingApproval))
		}).WithTimeout(runTimeout).Should(Succeed())
		Expect(runJobs(other, cj.UID)).To(BeEmpty(), "nothing but the canary runs before the approval")

		out := f.fleetjob("approve", cj.Name, "-n", cj.Namespace, "--reason", "the canary is clean")
		Expect(out).To(ContainSubstring("clusterjob.fleetjob.io/approval approved"))
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		expectRun(canary, recorders[canary.name], got, []group{{name: "all", nodes: names(eligibleNodes(canary))}})
		expectRun(other, recorders[other.name], got, []group{{name: "all", nodes: names(eligibleNodes(other))}})

		// The decision names the user the hub's API server knows the suite
		// as, and its admission policy let nobody else write that name.
		review := &authenticationv1.SelfSubjectReview{}
		Expect(f.hub.Create(ctx, review)).To(Succeed())
		Expect(got.Spec.Approval.Decision).To(Equal(&fleetv1.ApprovalDecision{Approved: true, User: review.Status.UserInfo.Username, Reason: "the canary is clean"}))
		c := meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionApproved)
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Message).To(Equal("approved by " + review.Status.UserInfo.Username + ": the canary is clean"))
	})
})
