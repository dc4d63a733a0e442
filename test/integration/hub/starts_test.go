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
			HaveField("Message", "its pod did not start within 3s: unschedulable: 0/4 nodes are available: 1 Insufficient cpu."))))
		Eventually(func() map[string]int { return jobNodes(m, cj) }).Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1, "a-node-4": 1}))
	})
})

// unschedulablePod plays the Job controller and the scheduler for node's
// Job of cj: its pod exists, and the scheduler found no place for it.
func unschedulablePod(m *member, cj *fleetv1.ClusterJob, node, message string) {
	GinkgoHelper()
	var job batchv1.Job
	for _, j := range memberJobs(m) {
		if j.Labels[fleetv1.ClusterJobUIDLabel] == naming.LabelValue(string(get(cj)(Default).UID)) && j.Annotations[fleetv1.NodeAnnotation] == node {
			job = j
		}
	}
	Expect(job.Name).NotTo(BeEmpty())
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: job.Namespace}}
	if err := m.client.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-pod", Namespace: job.Namespace, Labels: job.Spec.Template.Labels},
		Spec:       *job.Spec.Template.Spec.DeepCopy(),
	}
	Expect(m.client.Create(ctx, pod)).To(Succeed())
	pod.Status.Phase = corev1.PodPending
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: message, LastTransitionTime: metav1.Now()}}
	Expect(m.client.Status().Update(ctx, pod)).To(Succeed())
	setPods(m, cj, node, 0)
}
