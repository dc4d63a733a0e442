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
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/spoke"
)

var _ = Describe("Start bounds", func() {
	var stopHub func()

	BeforeEach(func() {
		register(members["member-a"], admin, map[string]string{"env": "dev"})
		stopHub = startHub(hubOptions{})
	})
	AfterEach(func() { cleanUp(stopHub) })

	It("fails a node whose pod the scheduler refuses NotStarted with the scheduler's message, not the member", func() {
		const refused = "a-node-3"
		m := members["member-a"]
		m.runner.stallOn(refused)
		cj := makeClusterJob("unschedulable").Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.NodeStartTimeout = &metav1.Duration{Duration: 3 * time.Second}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(30 * time.Second).Should(Equal(nodeNames("a", 4)))
		unschedulablePod(m, cj, refused, "0/4 nodes are available: 1 Insufficient cpu.")

		Eventually(phaseOf(cj)).WithTimeout(20 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Reason).To(Equal(fleetv1.ReasonNodeFailed), "a refusal of one node's pod is the node's, not the member's")
		Expect(row.FailedNodes).To(ConsistOf(And(HaveField("Node", refused), HaveField("Reason", fleetv1.NodeReasonNotStarted),
			HaveField("Message", "its pod did not start within 3s: Unschedulable: 0/4 nodes are available: 1 Insufficient cpu."))))
		Eventually(func() map[string]int { return jobNodes(m, cj) }).Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1, "a-node-4": 1}))
	})

	It("fails a node whose container configuration the kubelet refuses at once, not at nodeStartTimeout, with the kubelet's message", func() {
		const refused = "a-node-3"
		const msg = `container has runAsNonRoot and image will run as root (pod: "x", container: work)`
		m := members["member-a"]
		m.runner.stallOn(refused)
		cj := makeClusterJob("config-error").Clusters(map[string]string{"env": "dev"}).Obj() // nodeStartTimeout: the default 10m
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(30 * time.Second).Should(Equal(nodeNames("a", 4)))
		waitingPod(m, cj, refused, "CreateContainerConfigError", msg)

		// spoke.RefusalDelay (10s) after the hub saw the pod, not 10m.
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Reason).To(Equal(fleetv1.ReasonNodeFailed))
		Expect(row.FailedNodes).To(ConsistOf(And(HaveField("Node", refused), HaveField("Reason", fleetv1.NodeReasonContainerConfigError),
			HaveField("Message", msg))))
		Eventually(func() map[string]int { return jobNodes(m, cj) }).Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1, "a-node-4": 1}))
	})

	It("shows a pull refusal in the node's row and record while it waits, and fails it at the bound with it", func() {
		const refused = "a-node-3"
		const msg = `Back-off pulling image "busybox:nope"`
		m := members["member-a"]
		m.runner.stallOn(refused)
		cj := makeClusterJob("pull-refused").Clusters(map[string]string{"env": "dev"}).Obj()
		// The reason shows half the bound after the pod, the verdict at the bound.
		cj.Spec.NodeStartTimeout = &metav1.Duration{Duration: 16 * time.Second}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(30 * time.Second).Should(Equal(nodeNames("a", 4)))
		waitingPod(m, cj, refused, "ImagePullBackOff", msg)

		Eventually(func(g Gomega) {
			row := rowOf(g, cj, 0)
			g.Expect(row.Phase).To(Equal(fleetv1.ClusterRunning))
			g.Expect(row.Message).To(Equal("node " + refused + "'s pod waits: ImagePullBackOff: " + msg))
			g.Expect(nodeRow(g, m, cj, refused)).To(And(HaveField("Phase", spoke.NodeRunning), HaveField("Reason", "ImagePullBackOff"), HaveField("Message", msg)))
		}).WithTimeout(15 * time.Second).Should(Succeed())

		Eventually(phaseOf(cj)).WithTimeout(20 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		verdict := "its pod did not start within 16s: ImagePullBackOff: " + msg
		Expect(get(cj)(Default).Status.Clusters[0].FailedNodes).To(ConsistOf(And(HaveField("Node", refused), HaveField("Reason", fleetv1.NodeReasonNotStarted),
			HaveField("Message", verdict))))
		Expect(nodeRow(Default, m, cj, refused)).To(And(HaveField("Phase", spoke.NodeFailed), HaveField("Reason", fleetv1.NodeReasonNotStarted), HaveField("Message", verdict)))
	})

	It("fails a Job the member refuses its pod with the Job controller's FailedCreate message, not the member", func() {
		const refused = "a-node-3"
		const msg = `pods "x" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`
		m := members["member-a"]
		m.runner.stallOn(refused)
		cj := makeClusterJob("create-refused").Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.NodeStartTimeout = &metav1.Duration{Duration: 6 * time.Second}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(30 * time.Second).Should(Equal(nodeNames("a", 4)))
		failedCreate(m, cj, refused, msg)

		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Reason).To(Equal(fleetv1.ReasonNodeFailed), "a refusal of one node's pod is the node's, not the member's")
		Expect(row.FailedNodes).To(ConsistOf(And(HaveField("Node", refused), HaveField("Reason", fleetv1.NodeReasonPodCreateFailed),
			HaveField("Message", "no pod within 6s: FailedCreate: "+msg))))
	})
})

// jobOf is node's Job of cj in m.
func jobOf(m *member, cj *fleetv1.ClusterJob, node string) batchv1.Job {
	GinkgoHelper()
	var job batchv1.Job
	for _, j := range memberJobs(m) {
		if j.Labels[fleetv1.ClusterJobUIDLabel] == naming.LabelValue(string(get(cj)(Default).UID)) && j.Annotations[fleetv1.NodeAnnotation] == node {
			job = j
		}
	}
	Expect(job.Name).NotTo(BeEmpty())
	return job
}

// waitingPod plays the Job controller and the kubelet for node's Job of
// cj: its pod is on the node, its container waits for reason.
func waitingPod(m *member, cj *fleetv1.ClusterJob, node, reason, message string) {
	GinkgoHelper()
	pod := podOf(m, jobOf(m, cj, node))
	pod.Spec.NodeName = node
	Expect(m.client.Create(ctx, pod)).To(Succeed())
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}
	Expect(m.client.Status().Update(ctx, pod)).To(Succeed())
	setPods(m, cj, node, 0)
}

// failedCreate plays the Job controller that may not create node's pod of
// cj: its FailedCreate event on the Job, and no pod.
func failedCreate(m *member, cj *fleetv1.ClusterJob, node, message string) {
	GinkgoHelper()
	job := jobOf(m, cj, node)
	Expect(m.client.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: job.Name + ".refused", Namespace: job.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: job.Namespace, Name: job.Name, UID: job.UID},
		Reason:         "FailedCreate",
		Message:        message,
		Type:           corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "job-controller"},
		FirstTimestamp: metav1.Now(),
		LastTimestamp:  metav1.Now(),
		Count:          1,
	})).To(Succeed())
}

// podOf is the pod the Job controller would make of job.
func podOf(m *member, job batchv1.Job) *corev1.Pod {
	GinkgoHelper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: job.Namespace}}
	if err := m.client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-pod", Namespace: job.Namespace, Labels: job.Spec.Template.Labels},
		Spec:       *job.Spec.Template.Spec.DeepCopy(),
	}
}

// nodeRow is node's row of cj in m as `kubectl fleetjob status --nodes`
// shows it: read from the member, with no hub memory.
func nodeRow(g Gomega, m *member, cj *fleetv1.ClusterJob, node string) spoke.NodeState {
	st, err := spoke.Member{Client: m.client, Run: spoke.Run{ClusterJob: get(cj)(g), Cluster: m.name, Namespace: workNamespace}}.Observe(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	for _, n := range st.Nodes {
		if n.Node == node {
			return n
		}
	}
	g.Expect(st.Nodes).To(ContainElement(HaveField("Node", node)))
	return spoke.NodeState{}
}

// unschedulablePod plays the Job controller and the scheduler for node's
// Job of cj: its pod exists, and the scheduler found no place for it.
func unschedulablePod(m *member, cj *fleetv1.ClusterJob, node, message string) {
	GinkgoHelper()
	pod := podOf(m, jobOf(m, cj, node))
	Expect(m.client.Create(ctx, pod)).To(Succeed())
	pod.Status.Phase = corev1.PodPending
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: message, LastTransitionTime: metav1.Now()}}
	Expect(m.client.Status().Update(ctx, pod)).To(Succeed())
	setPods(m, cj, node, 0)
}
