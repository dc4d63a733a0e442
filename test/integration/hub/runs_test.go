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
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// Guarantees 1 and 3 at the MemberRun: a run is all its selected clusters
// or nothing, and the hub runs, and cleans up for, only the MemberRuns it
// made.
var _ = Describe("MemberRuns", func() {
	var stopHub func()

	BeforeEach(func() { stopHub = func() {} })
	AfterEach(func() { cleanUp(stopHub) })

	It("starts no cluster until every selected one has its MemberRun, and completes in all once a refused create is allowed", func() {
		a, b := members["member-a"], members["member-b"]
		register(a, admin, nil)
		register(b, admin, nil)
		lift := refuseMemberRunsOf("member-b")
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("all-or-nothing").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			got := get(cj)(g)
			cond := meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionMemberRunsCreated)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Message).To(ContainSubstring("member-b"))
			g.Expect(eventNotes(g, cj.Namespace, cj.Name, fleetv1.ReasonMemberRunsNotCreated)).To(ContainElement(ContainSubstring("member-b")))
		}).Should(Succeed())
		Consistently(func() map[string]int { return jobNodes(a, cj) }).WithTimeout(3*time.Second).Should(BeEmpty(),
			"member-a must not start while member-b has no MemberRun")
		Expect(phaseOf(cj)(Default)).To(Equal(fleetv1.PhasePending))

		lift()
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)))
		Expect(jobNodes(b, cj)).To(Equal(nodeNames("b", 7)))
		Expect(meta.IsStatusConditionTrue(get(cj)(Default).Status.Conditions, fleetv1.ConditionMemberRunsCreated)).To(BeTrue())
	})

	It("fails a run whose MemberRun cannot be created within --member-error-timeout, naming the cluster, and runs nothing", func() {
		a, b := members["member-a"], members["member-b"]
		register(a, admin, nil)
		register(b, admin, nil)
		refuseMemberRunsOf("member-b")
		stopHub = startHub(hubOptions{errorTimeout: 3 * time.Second})
		cj := makeClusterJob("never-all").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		failed := meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionFailed)
		Expect(failed.Reason).To(Equal(fleetv1.ReasonMemberRunsNotCreated))
		Expect(failed.Message).To(ContainSubstring("member-b"))
		Expect(jobNodes(a, cj)).To(BeEmpty())
		Expect(jobNodes(b, cj)).To(BeEmpty())
	})

	It("never runs a MemberRun the fleet did not make, and a copy does not wedge the run's status", func() {
		a, b := members["member-a"], members["member-b"]
		register(a, admin, map[string]string{"env": "a"})
		register(b, admin, map[string]string{"env": "b"})
		a.runner.hold(true)
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("only-a").Clusters(map[string]string{"env": "a"}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(a, cj)) }).Should(Equal(4))
		live := get(cj)(Default)
		// By hand: one for a cluster the run did not select, and a copy of
		// the fleet's one for member-a under another name.
		forged := handMadeRun(live, "forged-b", "member-b")
		duplicate := handMadeRun(live, "copy-a", "member-a")
		Expect(hubC.Create(ctx, forged)).To(Succeed())
		Expect(hubC.Create(ctx, duplicate)).To(Succeed())
		DeferCleanup(func() {
			// The hub leaves what it did not make; the spec made them.
			for _, mr := range []*fleetv1.MemberRun{forged, duplicate} {
				if hubC.Get(ctx, client.ObjectKeyFromObject(mr), mr) == nil {
					patch := client.MergeFrom(mr.DeepCopy())
					mr.Finalizers = nil
					Expect(hubC.Patch(ctx, mr, patch)).To(Succeed())
					Expect(client.IgnoreNotFound(hubC.Delete(ctx, mr))).To(Succeed())
				}
			}
		})
		for want, mr := range map[string]*fleetv1.MemberRun{fleetv1.ReasonNotSelected: forged, fleetv1.ReasonDuplicateMemberRun: duplicate} {
			Eventually(func(g Gomega) {
				g.Expect(hubC.Get(ctx, client.ObjectKeyFromObject(mr), mr)).To(Succeed())
				cond := meta.FindStatusCondition(mr.Status.Conditions, fleetv1.ConditionAccepted)
				g.Expect(cond).NotTo(BeNil())
				g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(cond.Reason).To(Equal(want))
			}).Should(Succeed())
		}
		a.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(get(cj)(Default).Status.Summary.Clusters.Total).To(Equal(int32(1)))
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)), "one Job per node")
		Consistently(func() []batchv1.Job { return memberJobs(b) }).WithTimeout(2 * time.Second).Should(BeEmpty())
		cms := &corev1.ConfigMapList{}
		Expect(b.client.List(ctx, cms, client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue})).To(Succeed())
		Expect(cms.Items).To(BeEmpty(), "not even a plan in member-b")
	})

	It("never cleans up for a MemberRun naming another run's UID", func() {
		a := members["member-a"]
		register(a, admin, nil)
		stopHub = startHub(hubOptions{})
		victim := makeClusterJob("victim").Obj()
		Expect(hubC.Create(ctx, victim)).To(Succeed())
		Eventually(phaseOf(victim)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		forged := handMadeRun(get(victim)(Default), "forged-cleanup", "member-a")
		forged.Spec.ClusterJob = "not-the-victim"
		Expect(hubC.Create(ctx, forged)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hubC.Get(ctx, client.ObjectKeyFromObject(forged), forged)).To(Succeed())
			g.Expect(meta.FindStatusCondition(forged.Status.Conditions, fleetv1.ConditionAccepted)).NotTo(BeNil())
		}).Should(Succeed())
		Expect(forged.Status.Conditions[0].Reason).To(Equal(fleetv1.ReasonClusterJobNotFound))
		Expect(hubC.Delete(ctx, forged)).To(Succeed())
		Eventually(func() error { return hubC.Get(ctx, client.ObjectKeyFromObject(forged), forged) }).Should(Satisfy(isNotFound))
		Consistently(func() map[string]int { return jobNodes(a, victim) }).WithTimeout(3*time.Second).
			Should(Equal(nodeNames("a", 4)), "the victim's Jobs stay")
	})

	It("does not end a cluster while the Job of a node it failed is still there; the delete is retried until allowed", func() {
		a := members["member-a"]
		register(a, admin, nil)
		allow := refuseJobDeletes(a, "a-node-2")
		a.runner.stallOn("a-node-2")
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("undeletable").Obj()
		cj.Spec.NodeStartTimeout = &metav1.Duration{Duration: 3 * time.Second}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			row := rowOf(g, cj, 0)
			g.Expect(row.Nodes.Failed).To(Equal(int32(1)))
			g.Expect(row.Message).To(ContainSubstring("refuse-job-deletes"))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Consistently(phaseOf(cj)).WithTimeout(3*time.Second).Should(Equal(fleetv1.PhaseRunning),
			"a cluster whose failed node's Job cannot be deleted must not end: nothing would delete it then")
		Expect(jobNodes(a, cj)).To(HaveKey("a-node-2"))

		allow()
		Eventually(phaseOf(cj)).WithTimeout(45 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Expect(jobNodes(a, cj)).To(Equal(map[string]int{"a-node-1": 1, "a-node-3": 1, "a-node-4": 1}), "the failed node's Job is gone")
		row := rowOf(Default, cj, 0)
		Expect(row.FailedNodes).To(HaveLen(1))
		Expect(row.FailedNodes[0].Reason).To(Equal(fleetv1.NodeReasonPodCreateFailed))
	})

	It("ends a cluster whose failed node's Job cannot be deleted at the deletion deadline, with a Warning naming the Job", func() {
		a := members["member-a"]
		register(a, admin, nil)
		lift := refuseJobDeletes(a, "a-node-2")
		a.runner.stallOn("a-node-2")
		stopHub = startHub(hubOptions{unreachableTimeout: 4 * time.Second})
		cj := makeClusterJob("left-behind").Obj()
		cj.Spec.NodeStartTimeout = &metav1.Duration{Duration: 2 * time.Second}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Eventually(func(g Gomega) {
			g.Expect(eventNotes(g, cj.Namespace, cj.Name, fleetv1.ReasonJobsLeftBehind)).To(ContainElement(
				And(ContainSubstring("cluster member-a"), ContainSubstring("left-behind-a-node-2-"))))
		}).Should(Succeed())
		lift()
	})

	It("follows a run an older hub started, from its status.clusters rows, to its end", func() {
		a := members["member-a"]
		cj := makeClusterJob("from-an-older-hub").Batch(2).Obj()
		startHeldRun(&stopHub, a, cj, hubOptions{})
		Eventually(func(g Gomega) { g.Expect(rowOf(g, cj, 0).StartTime).NotTo(BeNil()) }).Should(Succeed())
		stopHub()
		// What a hub from before MemberRuns left: the rows in the
		// ClusterJob's status.clusters, no MemberRun, no recorded selection.
		live := get(cj)(Default)
		rows := live.Status.Clusters
		for _, mr := range memberRuns(Default, live) {
			patch := client.MergeFrom(mr.DeepCopy())
			mr.Finalizers = nil
			Expect(hubC.Patch(ctx, &mr, patch)).To(Succeed())
			Expect(hubC.Delete(ctx, &mr)).To(Succeed())
		}
		Eventually(func() []fleetv1.MemberRun { return memberRuns(Default, live) }).Should(BeEmpty())
		old := &fleetv1.ClusterJob{}
		Expect(hubC.Get(ctx, client.ObjectKeyFromObject(cj), old)).To(Succeed())
		patch := client.MergeFrom(old.DeepCopy())
		old.Status.Clusters, old.Status.SelectedClusters, old.Status.NotableClusters = rows, nil, nil
		meta.RemoveStatusCondition(&old.Status.Conditions, fleetv1.ConditionMemberRunsCreated)
		Expect(hubC.Status().Patch(ctx, old, patch)).To(Succeed())

		stopHub = startHub(hubOptions{emptySelectionGrace: time.Second})
		a.runner.hold(false)
		Eventually(func(g Gomega) {
			got := &fleetv1.ClusterJob{}
			g.Expect(hubC.Get(ctx, client.ObjectKeyFromObject(cj), got)).To(Succeed())
			g.Expect(got.Status.Phase).NotTo(Equal(fleetv1.PhaseFailed), "the run must not be wiped: %v", got.Status.Conditions)
			g.Expect(got.Status.Phase).To(Equal(fleetv1.PhaseCompleted))
			g.Expect(got.Status.Clusters).To(BeEmpty(), "the rows moved into the MemberRuns")
		}).WithTimeout(45 * time.Second).Should(Succeed())
		Expect(rowOf(Default, cj, 0).Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(rowOf(Default, cj, 0).StartTime.Time).To(BeTemporally("==", rows[0].StartTime.Time), "its row is the older hub's, carried on")
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)), "one Job per node")
	})

	Describe("the admission policy", Ordered, func() {
		const hubAccount = "system:serviceaccount:fleetjob-system:fleetjob-hub"
		BeforeAll(func() {
			applyManifests(filepath.Join("..", "..", "..", "config", "admission", "memberruns.yaml"))
			DeferCleanup(func() {
				Expect(client.IgnoreNotFound(hubC.Delete(ctx, &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-memberruns"}}))).To(Succeed())
				Expect(client.IgnoreNotFound(hubC.Delete(ctx, &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-memberruns"}}))).To(Succeed())
			})
			role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "memberruns"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{fleetv1.GroupVersion.Group}, Resources: []string{"memberruns"}, Verbs: []string{"create", "update", "patch", "get", "delete"}}}}
			Expect(client.IgnoreAlreadyExists(hubC.Create(ctx, role))).To(Succeed())
			Expect(client.IgnoreAlreadyExists(hubC.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "memberruns"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "memberruns"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "tenant-mr"}}}))).To(Succeed())
		})
		as := func(user envtest.User) client.Client {
			u, err := hubEnv.AddUser(user, nil)
			Expect(err).NotTo(HaveOccurred())
			c, err := client.New(u.Config(), client.Options{Scheme: scheme})
			Expect(err).NotTo(HaveOccurred())
			return c
		}

		It("lets the hub's ServiceAccount run ClusterJobs, and refuses anyone else's MemberRun or spec change", func() {
			a := members["member-a"]
			register(a, admin, nil)
			hub := envtest.User{Name: hubAccount, Groups: []string{"system:masters"}}
			u, err := hubEnv.AddUser(hub, nil)
			Expect(err).NotTo(HaveOccurred())
			stopHub = startHub(hubOptions{config: u.Config()})
			cj := makeClusterJob("by-the-hub").Obj()
			Expect(hubC.Create(ctx, cj)).To(Succeed())
			Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))

			tenant := as(envtest.User{Name: "tenant-mr"})
			Eventually(func(g Gomega) {
				err := tenant.Create(ctx, handMadeRun(get(cj)(g), "by-a-tenant", "member-b"))
				g.Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
				g.Expect(err.Error()).To(ContainSubstring("MemberRuns are created only by the hub"))
			}).WithTimeout(10*time.Second).Should(Succeed(), "the policy takes a moment to be enforced")
			mr := &memberRuns(Default, get(cj)(Default))[0]
			patch := client.MergeFrom(mr.DeepCopy())
			mr.Spec.AcceptedFailures = 3
			err = tenant.Patch(ctx, mr, patch)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring("is written only by the hub"))
			// Labels are not the spec: a person may still label it.
			mr = &memberRuns(Default, get(cj)(Default))[0]
			patch = client.MergeFrom(mr.DeepCopy())
			mr.Labels["team"] = "a"
			Expect(tenant.Patch(ctx, mr, patch)).To(Succeed())
		})
	})
})

// refuseMemberRunsOf makes the hub's API server refuse every MemberRun of
// cluster, as a quota or a webhook would, and returns a function that lifts
// the refusal.
func refuseMemberRunsOf(cluster string) func() {
	GinkgoHelper()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-" + cluster},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule: admissionv1.Rule{APIGroups: []string{fleetv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"memberruns"}}},
			}}},
			Validations: []admissionv1.Validation{{Expression: "object.spec.cluster != '" + cluster + "'", Message: "no MemberRun of " + cluster + " (test refusal)"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-" + cluster},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	Expect(hubC.Create(ctx, policy)).To(Succeed())
	Expect(hubC.Create(ctx, binding)).To(Succeed())
	// The policy takes a moment to be enforced: probe with a dry run.
	probe := &fleetv1.MemberRun{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"},
		Spec: fleetv1.MemberRunSpec{ClusterJob: "probe", ClusterJobUID: "probe", Cluster: cluster}}
	Eventually(func() error { return hubC.Create(ctx, probe.DeepCopy(), client.DryRunAll) }).Should(HaveOccurred())
	lifted := false
	lift := func() {
		if lifted {
			return
		}
		lifted = true
		Expect(client.IgnoreNotFound(hubC.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(hubC.Delete(ctx, policy))).To(Succeed())
		Eventually(func() error { return hubC.Create(ctx, probe.DeepCopy(), client.DryRunAll) }).Should(Succeed())
	}
	DeferCleanup(lift) // should the spec fail first
	return lift
}

// refuseJobDeletes makes m's API server refuse to delete the Jobs of node,
// as a webhook or a policy of the member would, and returns a function
// that lifts the refusal.
func refuseJobDeletes(m *member, node string) func() {
	GinkgoHelper()
	name := "refuse-job-deletes"
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Delete},
					Rule: admissionv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"*"}, Resources: []string{"jobs"}}},
			}}},
			Validations: []admissionv1.Validation{{
				Expression: "!has(oldObject.metadata.annotations) || !('" + fleetv1.NodeAnnotation + "' in oldObject.metadata.annotations) || oldObject.metadata.annotations['" + fleetv1.NodeAnnotation + "'] != '" + node + "'",
				Message:    "Jobs of " + node + " may not be deleted (test refusal)"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	Expect(m.client.Create(ctx, policy)).To(Succeed())
	Expect(m.client.Create(ctx, binding)).To(Succeed())
	probe := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "delete-probe", Namespace: "default", Annotations: map[string]string{fleetv1.NodeAnnotation: node}},
		Spec: memberJob("x", "", "").Spec}
	Expect(m.client.Create(ctx, probe)).To(Succeed())
	Eventually(func() error { return m.client.Delete(ctx, probe.DeepCopy(), client.DryRunAll) }).Should(HaveOccurred())
	lifted := false
	lift := func() {
		if lifted {
			return
		}
		lifted = true
		Expect(client.IgnoreNotFound(m.client.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(m.client.Delete(ctx, policy))).To(Succeed())
		Eventually(func() error {
			return client.IgnoreNotFound(m.client.Delete(ctx, probe.DeepCopy(), client.PropagationPolicy(metav1.DeletePropagationBackground)))
		}).Should(Succeed())
	}
	DeferCleanup(lift) // should the spec fail first
	return lift
}

// handMadeRun is a MemberRun of cj's run in cluster, named name, made by
// hand as a user with create on memberruns could: with the cleanup
// finalizer.
func handMadeRun(cj *fleetv1.ClusterJob, name, cluster string) *fleetv1.MemberRun {
	return &fleetv1.MemberRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cj.Namespace, Finalizers: []string{"fleetjob.io/cleanup"},
			Labels: map[string]string{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID)), fleetv1.ClusterLabel: cluster}},
		Spec: fleetv1.MemberRunSpec{ClusterJob: cj.Name, ClusterJobUID: string(cj.UID), Cluster: cluster, Admitted: true},
	}
}
