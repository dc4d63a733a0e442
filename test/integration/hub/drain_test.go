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
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// appNamespace holds the workloads the drain specs evict.
const appNamespace = "apps"

// workload creates a running pod bound to node, managed by a (stand-in)
// ReplicaSet, that the API server deletes at once when evicted: no
// kubelet runs here to finish its termination.
func workload(m *member, name, node string) *corev1.Pod {
	GinkgoHelper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNamespace, Labels: map[string]string{"app": name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-rs", UID: types.UID(name + "-rs-uid"), Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
	}
	Expect(m.client.Create(ctx, pod)).To(Succeed())
	// Running and Ready, as its kubelet would say: the Eviction API lets a
	// Pending pod go whatever its budget says.
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	Expect(m.client.Status().Update(ctx, pod)).To(Succeed())
	return pod
}

// nodeOf reads a member's node.
func nodeOf(m *member, name string) func(Gomega) *corev1.Node {
	return func(g Gomega) *corev1.Node {
		n := &corev1.Node{}
		g.Expect(m.client.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
		return n
	}
}

// setCordon cordons or uncordons a member's node by hand, as a person
// would, without fleetjob's mark.
func setCordon(m *member, name string, on bool) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		n := nodeOf(m, name)(g)
		n.Spec.Unschedulable = on
		g.Expect(m.client.Update(ctx, n)).To(Succeed())
	}).Should(Succeed())
}

// drainingRun is a ClusterJob over member-a that drains each node before
// its Job, with the shortest drain timeout the API allows.
func drainingRun(name string) *fleetv1.ClusterJob {
	cj := makeClusterJob(name).Clusters(map[string]string{"ring": "a"}).Obj()
	cj.Spec.NodePreparation = &fleetv1.NodePreparation{Drain: &fleetv1.Drain{Timeout: &metav1.Duration{Duration: 10 * time.Second}}}
	return cj
}

// allowDrains sets the default ClusterSet's allowDrain.
func allowDrains(allow bool) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		set := &fleetv1.ClusterSet{}
		g.Expect(hubC.Get(ctx, client.ObjectKey{Name: fleetv1.DefaultClusterSet}, set)).To(Succeed())
		set.Spec.AllowDrain = allow
		g.Expect(hubC.Update(ctx, set)).To(Succeed())
	}).Should(Succeed())
}

var _ = Describe("Drain before the Job", func() {
	var stopHub func()
	a := func() *member { return members["member-a"] }

	BeforeEach(func() {
		Expect(client.IgnoreAlreadyExists(a().client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNamespace}}))).To(Succeed())
		register(a(), admin, map[string]string{"ring": "a"})
	})
	AfterEach(func() {
		cleanUp(stopHub)
		allowDrains(false)
		Expect(a().client.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(appNamespace))).To(Succeed())
		Expect(a().client.DeleteAllOf(ctx, &policyv1.PodDisruptionBudget{}, client.InNamespace(appNamespace))).To(Succeed())
		setCordon(a(), "a-node-4", false)
	})

	It("evicts what it may, waits on a PodDisruptionBudget until the drain's timeout, runs each Job on its cordoned node, and uncordons only what it cordoned", func() {
		allowDrains(true)
		stopHub = startHub(hubOptions{})
		// a-node-1: a pod a PodDisruptionBudget protects (no disruption
		// controller runs here: the budget never allows an eviction).
		// a-node-2: a pod that may go. a-node-4: cordoned by a person.
		guarded := workload(a(), "guarded", "a-node-1")
		Expect(a().client.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: appNamespace},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}}})).To(Succeed())
		web := workload(a(), "web", "a-node-2")
		setCordon(a(), "a-node-4", true)
		a().runner.hold(true)

		cj := drainingRun("drain")
		created := time.Now()
		Expect(hubC.Create(ctx, cj)).To(Succeed())

		// The evictable pod goes; its node and the empty one run their
		// Jobs, cordoned, with fleetjob's mark; the guarded node drains.
		Eventually(func(g Gomega) {
			g.Expect(jobNodes(a(), cj)).To(Equal(map[string]int{"a-node-2": 1, "a-node-3": 1}))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(a().client.Get(ctx, client.ObjectKeyFromObject(web), &corev1.Pod{})).To(MatchError(ContainSubstring("not found")), "the drain evicted web's pod")
		for _, name := range []string{"a-node-1", "a-node-2", "a-node-3"} {
			n := nodeOf(a(), name)(Default)
			Expect(n.Spec.Unschedulable).To(BeTrue(), "%s is cordoned while its Job runs or it drains", name)
			Expect(n.Annotations).To(HaveKeyWithValue(fleetv1.CordonedByAnnotation, testHubID+"/"+string(cj.UID)))
		}
		for _, j := range memberJobs(a()) {
			Expect(j.Spec.Template.Spec.Tolerations).To(ContainElement(HaveField("Key", fleetv1.UnschedulableTaint)), "the Job's pod tolerates its node's cordon")
		}
		Eventually(func(g Gomega) {
			row := memberRuns(g, cj)[0].Status
			g.Expect(row.Reason).To(Equal(fleetv1.ReasonDraining))
			g.Expect(row.Message).To(And(HavePrefix("Draining 1 nodes of group all"), ContainSubstring("apps/guarded")))
		}).Should(Succeed())

		// Jobs done, and the drain's timeout past: the guarded node fails
		// DrainTimeout, its pod still there, and the run ends.
		a().runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(40 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Expect(time.Since(created)).To(BeNumerically(">=", 10*time.Second), "the drain waited for its timeout")
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Reason).To(Equal(fleetv1.ReasonNodeFailed))
		Expect(row.FailedNodes).To(ConsistOf(And(HaveField("Node", "a-node-1"), HaveField("Reason", fleetv1.NodeReasonDrainTimeout))))
		Expect(row.Nodes.Succeeded).To(BeEquivalentTo(2))
		Expect(row.Nodes.Failed).To(BeEquivalentTo(1))
		Expect(jobNodes(a(), cj)).To(Equal(map[string]int{"a-node-2": 1, "a-node-3": 1}), "no Job on the node whose drain failed")
		Expect(a().client.Get(ctx, client.ObjectKeyFromObject(guarded), &corev1.Pod{})).To(Succeed(), "the budget's pod was never evicted")

		// Every node fleetjob cordoned is uncordoned, its mark gone; the
		// person's cordon stays.
		for _, name := range []string{"a-node-1", "a-node-2", "a-node-3"} {
			n := nodeOf(a(), name)(Default)
			Expect(n.Spec.Unschedulable).To(BeFalse(), "%s is uncordoned", name)
			Expect(n.Annotations).NotTo(HaveKey(fleetv1.CordonedByAnnotation))
			Expect(n.Annotations).NotTo(HaveKey(fleetv1.DrainStartedAnnotation))
		}
		Expect(nodeOf(a(), "a-node-4")(Default).Spec.Unschedulable).To(BeTrue(), "a node someone else cordoned stays cordoned")
	})

	It("a hub restarted mid-drain finishes it from the node's mark: one Job per node, every node uncordoned", func() {
		allowDrains(true)
		stopHub = startHub(hubOptions{})
		guarded := workload(a(), "guarded", "a-node-1")
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: appNamespace},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}}}
		Expect(a().client.Create(ctx, pdb)).To(Succeed())
		cj := drainingRun("restart")
		cj.Spec.NodePreparation.Drain.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(jobNodes(a(), cj)).To(Equal(map[string]int{"a-node-2": 1, "a-node-3": 1, "a-node-4": 1}))
			g.Expect(nodeOf(a(), "a-node-1")(g).Annotations).To(HaveKey(fleetv1.DrainStartedAnnotation))
		}).Should(Succeed())

		// The hub stops; meanwhile the budget's owner lets the pod go.
		stopHub()
		Expect(a().client.Delete(ctx, pdb)).To(Succeed())
		restarted := time.Now()
		stopHub = startHub(hubOptions{})
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		GinkgoWriter.Printf("completed %s after the restart\n", time.Since(restarted))
		Expect(jobNodes(a(), cj)).To(Equal(nodeNames("a", 4)), "one Job per node")
		Expect(a().client.Get(ctx, client.ObjectKeyFromObject(guarded), &corev1.Pod{})).To(MatchError(ContainSubstring("not found")), "the new hub evicted it")
		for name := range nodeNames("a", 4) {
			n := nodeOf(a(), name)(Default)
			Expect(n.Spec.Unschedulable).To(BeFalse(), "%s is uncordoned", name)
			Expect(n.Annotations).NotTo(HaveKey(fleetv1.CordonedByAnnotation))
		}
	})

	It("deleting a run mid-drain uncordons the nodes it cordoned, and only those", func() {
		allowDrains(true)
		stopHub = startHub(hubOptions{})
		workload(a(), "guarded", "a-node-1")
		Expect(a().client.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: appNamespace},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}}})).To(Succeed())
		setCordon(a(), "a-node-4", true)
		a().runner.hold(true)
		cj := drainingRun("deleted")
		cj.Spec.NodePreparation.Drain.Timeout = &metav1.Duration{Duration: 10 * time.Minute}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(jobNodes(a(), cj)).To(HaveLen(2))
			g.Expect(nodeOf(a(), "a-node-1")(g).Spec.Unschedulable).To(BeTrue())
		}).Should(Succeed())

		Expect(hubC.Delete(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			err := hubC.Get(ctx, client.ObjectKeyFromObject(cj), &fleetv1.ClusterJob{})
			g.Expect(err).To(MatchError(ContainSubstring("not found")))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		for _, name := range []string{"a-node-1", "a-node-2", "a-node-3"} {
			n := nodeOf(a(), name)(Default)
			Expect(n.Spec.Unschedulable).To(BeFalse(), "%s is uncordoned", name)
			Expect(n.Annotations).NotTo(HaveKey(fleetv1.CordonedByAnnotation))
		}
		Expect(nodeOf(a(), "a-node-4")(Default).Spec.Unschedulable).To(BeTrue(), "a node someone else cordoned stays cordoned")
	})

	It("refuses a run that drains where the cluster's set does not allow drains, and touches no node", func() {
		stopHub = startHub(hubOptions{})
		cj := drainingRun("not-allowed")
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(20 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Reason).To(Equal(fleetv1.ReasonDrainNotAllowed))
		Expect(row.Message).To(ContainSubstring("spec.allowDrain"))
		Expect(jobNodes(a(), cj)).To(BeEmpty())
		for _, name := range []string{"a-node-1", "a-node-2", "a-node-3"} {
			Expect(nodeOf(a(), name)(Default).Spec.Unschedulable).To(BeFalse())
		}
	})
})
