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
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/spoke"
)

// The fault matrix: each spec breaks one thing a member can do to a run and
// checks, on the members' real objects, that the run still ends within a
// stated bound, with one Job per node.
var _ = Describe("Faults in members", func() {
	var stopHub func()

	AfterEach(func() { cleanUp(stopHub) })

	It("creates a missing work namespace with an admin registration and completes the run", func() {
		a := members["member-a"]
		ns := "fresh-work"
		registerIn(a, admin, ns)
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("fresh-namespace").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(a.client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})).To(Succeed())
		Expect(jobNodesIn(a, cj, ns)).To(Equal(nodeNames("a", 4)))
	})

	It("waits for a work namespace the registered identity may not create, and resumes within 30 s of it appearing", func() {
		a := members["member-a"]
		ns := "created-later"
		user := leastPrivileged(a, "no-namespaces")
		registerIn(a, user, ns)
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("missing-namespace").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			row := rowOf(g, cj, 0)
			g.Expect(row.Reason).To(Equal(fleetv1.ReasonWorkNamespaceMissing))
			g.Expect(row.Message).To(ContainSubstring("kubectl fleetjob register member-a"))
			g.Expect(row.FailingSince).NotTo(BeNil())
		}).Should(Succeed())
		// While the namespace is missing nothing is created, and the retries
		// back off past their first steps: the fix must still be picked up
		// within the 30 s cap, with no other event to wake the run.
		Consistently(func(g Gomega) {
			g.Expect(rowOf(g, cj, 0).Reason).To(Equal(fleetv1.ReasonWorkNamespaceMissing))
			g.Expect(jobNodesIn(a, cj, ns)).To(BeEmpty())
		}).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(Succeed())
		Expect(a.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(35 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodesIn(a, cj, ns)).To(Equal(nodeNames("a", 4)))
		Expect(get(cj)(Default).Status.Clusters[0].FailingSince).To(BeNil())
	})

	It("retries a plan refused by the member's admission, and completes once it is allowed", func() {
		a := members["member-a"]
		ns := "quota-plan"
		Expect(a.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		quota := blockingQuota(a, ns)
		registerIn(a, admin, ns)
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("plan-refused").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			row := rowOf(g, cj, 0)
			g.Expect(row.Phase).To(Equal(fleetv1.ClusterPending))
			g.Expect(row.Reason).To(Equal(fleetv1.ClusterReasonForbidden))
			g.Expect(row.Message).To(ContainSubstring("creating plan ConfigMap"))
		}).Should(Succeed())
		Expect(a.client.Delete(ctx, quota)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(35 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodesIn(a, cj, ns)).To(Equal(nodeNames("a", 4)))
	})

	It("fails a cluster whose Job creates turn forbidden mid-run past the error timeout; keepgoing finishes the other", func() {
		a, b := members["member-a"], members["member-b"]
		user, revoke := revocable(a, "revoked-keepgoing")
		register(a, user, nil)
		register(b, admin, nil)
		a.runner.hold(true)
		stopHub = startHub(hubOptions{errorTimeout: 3 * time.Second})
		cj := makeClusterJob("jobs-forbidden").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(a, cj)) }).Should(Equal(2))
		revoke()
		a.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		Expect(got.Status.Clusters[0].Phase).To(Equal(fleetv1.ClusterFailed))
		Expect(got.Status.Clusters[0].Reason).To(Equal(fleetv1.ClusterReasonForbidden))
		Expect(got.Status.Clusters[0].Message).To(HavePrefix("failing for longer than 3s: creating Job"))
		Expect(got.Status.Clusters[1].Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(jobNodes(a, cj)).To(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}))
		Expect(jobNodes(b, cj)).To(Equal(nodeNames("b", 7)))
	})

	It("stops the fleet under exit when a cluster's Job creates stay forbidden", func() {
		a, b := members["member-a"], members["member-b"]
		user, revoke := revocable(a, "revoked-exit")
		register(a, user, nil)
		register(b, admin, nil)
		a.runner.hold(true)
		b.runner.hold(true)
		stopHub = startHub(hubOptions{errorTimeout: 3 * time.Second})
		cj := makeClusterJob("jobs-forbidden-exit").Batch(2).Exit().Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(a, cj)) + len(jobNodes(b, cj)) }).Should(Equal(4))
		revoke()
		a.runner.hold(false)
		Eventually(func(g Gomega) {
			g.Expect(rowOf(g, cj, 0).Phase).To(Equal(fleetv1.ClusterFailed))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		b.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[1]
		Expect(row.Reason).To(Equal(fleetv1.ReasonStopped))
		Expect(jobNodes(b, cj)).To(HaveLen(2), "only the group running when the fleet stopped")
	})

	It("fails a started cluster whose plan was deleted, PlanLost, without running a node twice", func() {
		a := members["member-a"]
		cj := makeClusterJob("plan-deleted").Batch(2).Obj()
		startHeldRun(&stopHub, a, cj, hubOptions{})
		plan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.PlanName(get(cj)(Default).UID), Namespace: workNamespace}}
		Expect(a.client.Delete(ctx, plan)).To(Succeed())
		a.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Reason).To(Equal(fleetv1.ReasonPlanLost))
		Expect(row.Message).To(ContainSubstring("2 of its Jobs are left there"))
		Consistently(func() map[string]int { return jobNodes(a, cj) }).WithTimeout(2 * time.Second).
			Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}))
	})

	It("keeps the result of a finished node whose Job was deleted, and does not run it again", func() {
		a := members["member-a"]
		cj := makeClusterJob("ttl-deleted").Batch(2).Obj()
		startHeldRun(&stopHub, a, cj, hubOptions{})
		first := memberJobs(a)
		a.runner.hold(false)
		Eventually(func(g Gomega) {
			res := recorded(g, a, cj)
			g.Expect(res.Nodes.Get("a-node-1").Phase).To(Equal(spoke.NodeSucceeded))
			g.Expect(res.Nodes.Get("a-node-2").Phase).To(Equal(spoke.NodeSucceeded))
		}).Should(Succeed())
		// A TTL of a few seconds, or a namespace cleaner, deletes them.
		for i := range first {
			Expect(a.client.Delete(ctx, &first[i], client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		}
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Nodes).To(Equal(fleetv1.NodeCounts{Total: 4, Succeeded: 4}))
		Consistently(func() map[string]int { return jobNodes(a, cj) }).WithTimeout(2*time.Second).
			Should(Equal(map[string]int{"a-node-3": 1, "a-node-4": 1}), "the deleted Jobs' nodes ran once")
	})

	It("fails a node whose Job was deleted while it ran, JobDeleted, and the run ends", func() {
		a := members["member-a"]
		register(a, admin, nil)
		a.runner.hold(true)
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("running-deleted").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		// The record names the nodes before their Jobs exist: wait for both.
		Eventually(func(g Gomega) { g.Expect(recorded(g, a, cj).Nodes.Len()).To(Equal(4)) }).Should(Succeed())
		Eventually(func() int { return len(jobNodes(a, cj)) }).Should(Equal(4))
		for _, j := range memberJobs(a) {
			if j.Annotations[fleetv1.NodeAnnotation] == "a-node-3" {
				Expect(a.client.Delete(ctx, &j, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
			}
		}
		a.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Nodes).To(Equal(fleetv1.NodeCounts{Total: 4, Succeeded: 3, Failed: 1}))
		Expect(row.FailedNodes).To(HaveLen(1))
		Expect(row.FailedNodes[0].Node).To(Equal("a-node-3"))
		Expect(row.FailedNodes[0].Reason).To(Equal(fleetv1.NodeReasonJobDeleted))
		Consistently(func() map[string]int { return jobNodes(a, cj) }).WithTimeout(2*time.Second).
			Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1, "a-node-4": 1}), "a-node-3 is not run again")
	})

	It("fails a node whose Job gets no pod within nodeStartTimeout, PodCreateFailed, deletes its Job, and the run ends", func() {
		a := members["member-a"]
		register(a, admin, nil)
		a.runner.stallOn("a-node-2")
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("no-pod").Obj()
		cj.Spec.NodeStartTimeout = &metav1.Duration{Duration: 3 * time.Second}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Nodes).To(Equal(fleetv1.NodeCounts{Total: 4, Succeeded: 3, Failed: 1}))
		Expect(row.FailedNodes).To(HaveLen(1))
		Expect(row.FailedNodes[0].Node).To(Equal("a-node-2"))
		Expect(row.FailedNodes[0].Reason).To(Equal(fleetv1.NodeReasonPodCreateFailed))
		// The other nodes finished: the member then created no pod for
		// the bound, and fails as a member too.
		Expect(row.Reason).To(Equal(fleetv1.ReasonMemberStalled))
		Eventually(func() map[string]int { return jobNodes(a, cj) }).
			Should(Equal(map[string]int{"a-node-1": 1, "a-node-3": 1, "a-node-4": 1}), "the stuck Job is deleted")
		Consistently(func() map[string]int { return jobNodes(a, cj) }).WithTimeout(2*time.Second).
			Should(Equal(map[string]int{"a-node-1": 1, "a-node-3": 1, "a-node-4": 1}), "and not created again")
	})

	It("skips a node cordoned after planning, before its group starts", func() {
		a := members["member-a"]
		cj := makeClusterJob("cordoned-later").Batch(2).Obj()
		startHeldRun(&stopHub, a, cj, hubOptions{})
		setUnschedulable(a, "a-node-3", true)
		DeferCleanup(setUnschedulable, a, "a-node-3", false)
		a.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Nodes).To(Equal(fleetv1.NodeCounts{Total: 4, Succeeded: 3, Skipped: 1}))
		Expect(jobNodes(a, cj)).To(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1, "a-node-4": 1}))
		res := recorded(Default, a, cj)
		Expect(res.Nodes.Get("a-node-3")).To(Equal(spoke.NodeResult{Phase: spoke.NodeSkipped, Reason: "Unschedulable",
			Message: "node is cordoned when its group started"}))
	})

	It("fails a run that selects no cluster once the grace has passed", func() {
		register(members["member-a"], admin, nil)
		stopHub = startHub(hubOptions{emptySelectionGrace: 2 * time.Second})
		cj := makeClusterJob("no-clusters").Clusters(map[string]string{"env": "nowhere"}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Expect(phaseOf(cj)(Default)).NotTo(Equal(fleetv1.PhaseCompleted))
		Eventually(phaseOf(cj)).WithTimeout(15 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		failed := findCondition(get(cj)(Default).Status.Conditions, fleetv1.ConditionFailed)
		Expect(failed.Reason).To(Equal(fleetv1.ReasonNoClusters))
	})

	It("runs a ClusterJob applied before its registration once the registration arrives", func() {
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("registered-after").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Consistently(phaseOf(cj)).WithTimeout(time.Second).ShouldNot(BeElementOf(fleetv1.PhaseCompleted, fleetv1.PhaseFailed))
		register(members["member-a"], admin, nil)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))
	})
})

// setUnschedulable cordons or uncordons a node of m.
func setUnschedulable(m *member, node string, cordoned bool) {
	n := &corev1.Node{}
	Expect(m.client.Get(ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
	patch := client.MergeFrom(n.DeepCopy())
	n.Spec.Unschedulable = cordoned
	Expect(m.client.Patch(ctx, n, patch)).To(Succeed())
}

// recorded is the run's results record in m's work namespace.
func recorded(g Gomega, m *member, cj *fleetv1.ClusterJob) spoke.Results {
	res, _, err := spoke.ReadResults(ctx, m.client, spoke.Run{ClusterJob: get(cj)(g), Cluster: m.name, Namespace: workNamespace})
	g.Expect(err).NotTo(HaveOccurred())
	return res
}

// startHeldRun registers m as admin, starts the hub with o (its stop
// function in *stopHub, for cleanup) and runs cj there, holding its Jobs:
// it returns once the first group of two nodes runs.
func startHeldRun(stopHub *func(), m *member, cj *fleetv1.ClusterJob, o hubOptions) {
	GinkgoHelper()
	register(m, admin, nil)
	m.runner.hold(true)
	*stopHub = startHub(o)
	Expect(hubC.Create(ctx, cj)).To(Succeed())
	Eventually(func() int { return len(jobNodes(m, cj)) }).Should(Equal(2))
}

// rowOf is the i-th cluster row of cj, failing g while there is none.
func rowOf(g Gomega, cj *fleetv1.ClusterJob, i int) fleetv1.ClusterStatus {
	rows := get(cj)(g).Status.Clusters
	g.Expect(len(rows)).To(BeNumerically(">", i), "cluster rows")
	return rows[i]
}

// jobNodesIn is jobNodes for Jobs in namespace only.
func jobNodesIn(m *member, cj *fleetv1.ClusterJob, namespace string) map[string]int {
	out := map[string]int{}
	for _, j := range memberJobs(m) {
		if j.Namespace == namespace && j.Labels[fleetv1.ClusterJobUIDLabel] == naming.LabelValue(string(get(cj)(Default).UID)) {
			out[j.Annotations[fleetv1.NodeAnnotation]]++
		}
	}
	return out
}

// leastPrivileged returns a user of m who may do what fleetjob needs in any
// namespace but may not create namespaces, as a registration minted by
// `kubectl fleetjob register` for another namespace would.
func leastPrivileged(m *member, name string) envtest.User {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{"kube-system"}, Verbs: []string{"get"}},
			{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews"}, Verbs: []string{"create"}},
		},
	}
	bindRole(m, role)
	return envtest.User{Name: name}
}

// revocable returns a user of m with the access fleetjob needs in the work
// namespace, and a function that takes away its right to create Jobs, as an
// RBAC change in the member would.
func revocable(m *member, name string) (envtest.User, func()) {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{"kube-system"}, Verbs: []string{"get"}},
		},
	}
	bindRole(m, role)
	return envtest.User{Name: name}, func() {
		role.Rules[0].Verbs = []string{"get", "list", "watch", "delete", "deletecollection"}
		Expect(m.client.Update(ctx, role)).To(Succeed())
	}
}

// bindRole creates role and binds it to the user of its name.
func bindRole(m *member, role *rbacv1.ClusterRole) {
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: role.Name}},
	}
	Expect(m.client.Create(ctx, role)).To(Succeed())
	Expect(m.client.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(m.client.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(m.client.Delete(ctx, role))).To(Succeed())
	})
}

// blockingQuota creates a ResourceQuota of 0 ConfigMaps in namespace: the
// API server refuses every ConfigMap create there until it is deleted.
func blockingQuota(m *member, namespace string) *corev1.ResourceQuota {
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "block", Namespace: namespace},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("0")}},
	}
	Expect(m.client.Create(ctx, quota)).To(Succeed())
	// Play the quota controller, which the suite does not run: admission
	// enforces status.hard against status.used.
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("0")}}
	Expect(m.client.Status().Update(ctx, quota)).To(Succeed())
	// The quota admission plugin sees new quotas through an informer: wait
	// until it refuses a create, so the spec does not race it.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "quota-probe-", Namespace: namespace}}
	Eventually(func() error { return m.client.Create(ctx, probe.DeepCopy()) }).Should(Satisfy(apierrors.IsForbidden))
	return quota
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
