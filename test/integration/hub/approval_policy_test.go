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
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// The admission policy fleetjob-approvals: the decision the hub acts on,
// and names in the run's Approved condition, is written in the writer's
// own name. No hub runs here: the API server alone admits or refuses.
var _ = Describe("The approvals admission policy", Ordered, func() {
	const policy = "fleetjob-approvals"
	// withApproval is a ClusterJob of namespace default held after a
	// canary of one cluster, with decision when set.
	withApproval := func(name string, decision *fleetv1.ApprovalDecision) *fleetv1.ClusterJob {
		cj := makeClusterJob(name).Obj()
		cj.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1), Decision: decision}
		return cj
	}
	// forged is a dry-run create, as the suite's admin, of a ClusterJob
	// decided in someone else's name: refused while the policy is enforced.
	forged := func() error {
		return hubC.Create(ctx, withApproval("forged", &fleetv1.ApprovalDecision{Approved: true, User: "nobody"}), client.DryRunAll)
	}
	refusedFor := func(err error, writer, named string) {
		GinkgoHelper()
		Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '" + policy + "'"))
		Expect(err.Error()).To(ContainSubstring("spec.approval.decision.user must be the user who decides (" + writer + "), not " + named + ": use kubectl fleetjob approve"))
	}

	BeforeAll(func() {
		applyManifests(filepath.Join("..", "..", "..", "config", "admission", "approvals.yaml"))
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(hubC.Delete(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: policy}}))).To(Succeed())
			Expect(client.IgnoreNotFound(hubC.Delete(ctx, &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: policy}}))).To(Succeed())
			// Lifted before the next spec: the suite's admin writes
			// decisions in made-up names elsewhere.
			Eventually(forged).WithTimeout(10*time.Second).Should(Succeed(), "the policy takes a moment to be lifted")
		})
		// alice and bob may create and update the ClusterJobs of default:
		// whoever may update one may decide on it, in their own name.
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "clusterjob-deciders"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{fleetv1.GroupVersion.Group}, Resources: []string{"clusterjobs"}, Verbs: []string{"create", "get", "update", "patch"}}}}
		Expect(client.IgnoreAlreadyExists(hubC.Create(ctx, role))).To(Succeed())
		Expect(client.IgnoreAlreadyExists(hubC.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "clusterjob-deciders"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "clusterjob-deciders"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"},
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}}))).To(Succeed())
		Eventually(func(g Gomega) {
			err := forged()
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("not nobody"))
		}).WithTimeout(10*time.Second).Should(Succeed(), "the policy takes a moment to be enforced")
	})
	AfterEach(func() { cleanUp(func() {}) })

	as := func(user envtest.User) client.Client {
		GinkgoHelper()
		u, err := hubEnv.AddUser(user, nil)
		Expect(err).NotTo(HaveOccurred())
		c, err := client.New(u.Config(), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		return c
	}
	// read is cj as c reads it (a tenant may not list MemberRuns, which
	// getOn reads too).
	read := func(c client.Client, cj *fleetv1.ClusterJob) *fleetv1.ClusterJob {
		GinkgoHelper()
		out := &fleetv1.ClusterJob{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(cj), out)).To(Succeed())
		return out
	}
	// decide writes decision on cj as c, a merge patch conditional on the
	// resourceVersion c read, as kubectl fleetjob approve sends it.
	decide := func(c client.Client, cj *fleetv1.ClusterJob, decision fleetv1.ApprovalDecision) error {
		GinkgoHelper()
		latest := read(c, cj)
		patch := client.MergeFromWithOptions(latest.DeepCopy(), client.MergeFromWithOptimisticLock{})
		latest.Spec.Approval.Decision = &decision
		return c.Patch(ctx, latest, patch)
	}

	It("lets a user decide in their own name, and refuses a decision in someone else's name, naming both", func() {
		alice, bob := as(envtest.User{Name: "alice"}), as(envtest.User{Name: "bob"})
		cj := withApproval("held", nil)
		Expect(alice.Create(ctx, cj)).To(Succeed())

		refusedFor(decide(bob, cj, fleetv1.ApprovalDecision{Approved: true, User: "alice", Reason: "alice said so"}), "bob", "alice")
		// Not even a cluster admin (system:masters) decides for another.
		refusedFor(decide(as(admin), cj, fleetv1.ApprovalDecision{Approved: false, User: "bob"}), admin.Name, "bob")
		Expect(read(hubC, cj).Spec.Approval.Decision).To(BeNil(), "nothing stored")

		Expect(decide(alice, cj, fleetv1.ApprovalDecision{Approved: true, User: "alice", Reason: "the canary is clean"})).To(Succeed())
		Expect(read(hubC, cj).Spec.Approval.Decision).To(Equal(&fleetv1.ApprovalDecision{Approved: true, User: "alice", Reason: "the canary is clean"}))
	})

	It("lets later updates keep the decision, whoever writes them, and a change of it is still refused", func() {
		alice, bob := as(envtest.User{Name: "alice"}), as(envtest.User{Name: "bob"})
		cj := withApproval("kept", nil)
		Expect(alice.Create(ctx, cj)).To(Succeed())
		Expect(decide(alice, cj, fleetv1.ApprovalDecision{Approved: true, User: "alice"})).To(Succeed())

		// bob suspends the run: the decision goes along unchanged.
		latest := read(bob, cj)
		patch := client.MergeFromWithOptions(latest.DeepCopy(), client.MergeFromWithOptimisticLock{})
		latest.Spec.Suspend = ptr.To(true)
		Expect(bob.Patch(ctx, latest, patch)).To(Succeed())
		// A full update by the suite's admin, as the hub writes its
		// finalizer: the decision, read and written back, is alice's still.
		latest = read(hubC, cj)
		latest.Labels = map[string]string{"team": "disks"}
		Expect(hubC.Update(ctx, latest)).To(Succeed())
		got := read(hubC, cj)
		Expect(got.Spec.Suspend).To(Equal(ptr.To(true)))
		Expect(got.Spec.Approval.Decision).To(Equal(&fleetv1.ApprovalDecision{Approved: true, User: "alice"}))

		err := decide(bob, cj, fleetv1.ApprovalDecision{Approved: false, User: "bob", Reason: "changed my mind"})
		Expect(err).To(HaveOccurred(), "a decision is final, even in one's own name")
		Expect(read(hubC, cj).Spec.Approval.Decision.User).To(Equal("alice"))
	})

	It("checks the decision a ClusterJob is created with: allowed in the creator's own name only", func() {
		alice := as(envtest.User{Name: "alice"})
		refusedFor(alice.Create(ctx, withApproval("pre-decided-for-bob", &fleetv1.ApprovalDecision{Approved: true, User: "bob"})), "alice", "bob")

		cj := withApproval("pre-decided", &fleetv1.ApprovalDecision{Approved: true, User: "alice", Reason: "ran it on staging"})
		Expect(alice.Create(ctx, cj)).To(Succeed())
		Expect(read(hubC, cj).Spec.Approval.Decision).To(Equal(&fleetv1.ApprovalDecision{Approved: true, User: "alice", Reason: "ran it on staging"}))
	})
})
