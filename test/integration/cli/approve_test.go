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

package cli

import (
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/cli"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

var _ = Describe("kubectl fleetjob approve and reject", Ordered, func() {
	// held creates a ClusterJob of namespace default held after a canary
	// of one cluster. The hub does not run here: the decision is what the
	// specs read.
	held := func(name string) *fleetv1.ClusterJob {
		GinkgoHelper()
		cj := wrappers.MakeClusterJob(name, "default").Obj()
		cj.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1)}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, cj))).To(Succeed()) })
		return cj
	}
	decisionOf := func(cj *fleetv1.ClusterJob) *fleetv1.ApprovalDecision {
		GinkgoHelper()
		got := &fleetv1.ClusterJob{}
		Expect(hubC.Get(ctx, client.ObjectKeyFromObject(cj), got)).To(Succeed())
		return got.Spec.Approval.Decision
	}

	BeforeAll(func() {
		// The hub's admission policy: a decision must name who writes it.
		for _, obj := range manifests(filepath.Join("..", "..", "..", "config", "admission", "approvals.yaml")) {
			Expect(hubC.Create(ctx, obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
			DeferCleanup(func() { Expect(hubC.Delete(ctx, obj)).To(Succeed()) })
		}
		Eventually(func(g Gomega) {
			forged := wrappers.MakeClusterJob("forged", "default").Obj()
			forged.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1), Decision: &fleetv1.ApprovalDecision{Approved: true, User: "nobody"}}
			err := hubC.Create(ctx, forged, client.DryRunAll)
			g.Expect(err).To(MatchError(ContainSubstring("spec.approval.decision.user must be the user who decides")))
		}).Should(Succeed(), "the policy takes a moment to be enforced")
	})

	It("approves a held run in the name the hub authenticates, which the hub's policy admits", func() {
		cj := held("canary-clean")
		r := run("approve", "canary-clean", "--reason", "dashboards green", "--dry-run=server")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("clusterjob.fleetjob.io/canary-clean approved (server dry run)\n"))
		Expect(decisionOf(cj)).To(BeNil(), "a dry run stores nothing")

		r = run("approve", "canary-clean", "--reason", "dashboards green")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("clusterjob.fleetjob.io/canary-clean approved\n"))
		Expect(decisionOf(cj)).To(Equal(&fleetv1.ApprovalDecision{Approved: true, User: admin.Name, Reason: "dashboards green"}),
			"the user the hub's API server authenticates the kubeconfig's certificate as")

		r = run("approve", "canary-clean")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("clusterjob.fleetjob.io/canary-clean already approved by fleet-admin (dashboards green): nothing changed\n"))
	})

	It("rejects another with its reason, and a decision is final", func() {
		cj := held("canary-broken")
		r := run("reject", "canary-broken", "--reason", "two canary nodes lost their disks")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("clusterjob.fleetjob.io/canary-broken rejected\n"))
		Expect(decisionOf(cj)).To(Equal(&fleetv1.ApprovalDecision{Approved: false, User: admin.Name, Reason: "two canary nodes lost their disks"}))

		r = run("approve", "canary-broken")
		Expect(r.err).To(MatchError("clusterjob default/canary-broken was already rejected by fleet-admin (two canary nodes lost their disks): a decision is final"))
		Expect(cli.ExitCode(r.err)).To(Equal(cli.ExitError))
		Expect(decisionOf(cj).Approved).To(BeFalse())
	})

	It("names a run without spec.approval", func() {
		plain := wrappers.MakeClusterJob("no-approval", "default").Obj()
		Expect(hubC.Create(ctx, plain)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, plain))).To(Succeed()) })
		Expect(run("approve", "no-approval").err).To(MatchError("clusterjob default/no-approval has no spec.approval: there is nothing to approve"))
	})
})
