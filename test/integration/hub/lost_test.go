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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/spoke"
)

// A node that dies while its Job's pod runs: envtest has no kubelet and no
// node lifecycle controller, so the spec plays both: the pod starts (the
// Job's status.ready), then the node turns NotReady and the pod not Ready,
// as kube-controller-manager marks the pods of a node whose kubelet stopped.
var _ = Describe("Lost nodes", func() {
	var stopHub func()
	const lostNode = "a-node-2"

	BeforeEach(func() {
		register(members["member-a"], admin, map[string]string{"env": "dev"})
		stopHub = startHub(hubOptions{})
		members["member-a"].runner.stallOn(lostNode)
	})
	AfterEach(func() {
		setReady(members["member-a"], lostNode, true)
		cleanUp(stopHub)
	})

	// startThenLose starts the pod of lostNode's Job, waits until the hub
	// recorded it started, then loses the node. It returns when.
	startThenLose := func(cj *fleetv1.ClusterJob) time.Time {
		m := members["member-a"]
		setPods(m, cj, lostNode, 1)
		Eventually(func(g Gomega) {
			rec := record(g, m, cj)
			g.Expect(rec.Nodes.Get(lostNode).Started).To(BeTrue())
		}).WithTimeout(10 * time.Second).Should(Succeed())
		setReady(m, lostNode, false)
		setPods(m, cj, lostNode, 0)
		return time.Now()
	}

	It("fails the node NodeLost within nodeLostTimeout, deletes its Job, and the run ends", func() {
		const bound = 10 * time.Second
		m := members["member-a"]
		cj := makeClusterJob("lost").Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.NodeLostTimeout = &metav1.Duration{Duration: bound}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(30 * time.Second).Should(Equal(nodeNames("a", 4)))
		lost := startThenLose(cj)

		// The bound plus the hub's first read (an event) and a second of
		// slack for the record's one-second resolution.
		Eventually(phaseOf(cj)).WithTimeout(bound + 10*time.Second).WithPolling(200 * time.Millisecond).Should(Equal(fleetv1.PhaseFailed))
		Expect(time.Since(lost)).To(BeNumerically(">=", bound-time.Second), "not before the bound")
		GinkgoWriter.Printf("The run ended %s after its node was lost (nodeLostTimeout %s)\n", time.Since(lost).Round(100*time.Millisecond), bound)
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.FailedNodes).To(ConsistOf(And(HaveField("Node", lostNode), HaveField("Reason", fleetv1.NodeReasonNodeLost),
			HaveField("Message", MatchRegexp(`^node not Ready for \d+s after its pod started, past nodeLostTimeout 10s; its Job is deleted$`)))))
		Eventually(func() map[string]int { return jobNodes(m, cj) }).Should(Equal(map[string]int{"a-node-1": 1, "a-node-3": 1, "a-node-4": 1}),
			"the lost node's Job is deleted, so its pod never runs when the node comes back")
		setReady(m, lostNode, true)
		Consistently(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(2*time.Second).Should(Equal(map[string]int{"a-node-1": 1, "a-node-3": 1, "a-node-4": 1}),
			"and no second Job when the node comes back")
	})

	It("keeps the time a node was first read lost across a hub restart: the verdict comes at the bound, not a bound after the restart", func() {
		const bound = 20 * time.Second
		m := members["member-a"]
		cj := makeClusterJob("lost-restart").Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.NodeLostTimeout = &metav1.Duration{Duration: bound}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(30 * time.Second).Should(Equal(nodeNames("a", 4)))
		lost := startThenLose(cj)
		Eventually(func(g Gomega) {
			g.Expect(record(g, m, cj).Nodes.Get(lostNode).Lost).NotTo(BeZero(), "the hub read the node lost")
		}).WithTimeout(10 * time.Second).Should(Succeed())
		stopHub()
		stopHub = func() {}
		restart := lost.Add(bound / 2)
		Eventually(func() bool { return time.Now().After(restart) }).WithTimeout(bound).Should(BeTrue()) // the hub is down half the bound
		stopHub = startHub(hubOptions{})

		Eventually(phaseOf(cj)).WithTimeout(bound).WithPolling(200 * time.Millisecond).Should(Equal(fleetv1.PhaseFailed))
		Expect(time.Since(lost)).To(BeNumerically("<", bound+bound/4), "from when the first hub read the node lost, not from the restart")
		Expect(get(cj)(Default).Status.Clusters[0].FailedNodes).To(ConsistOf(HaveField("Reason", fleetv1.NodeReasonNodeLost)))
	})

	It("counts a node that comes back within nodeLostTimeout as usual once its pod finishes", func() {
		const bound = 20 * time.Second
		m := members["member-a"]
		cj := makeClusterJob("lost-back").Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.NodeLostTimeout = &metav1.Duration{Duration: bound}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(30 * time.Second).Should(Equal(nodeNames("a", 4)))
		startThenLose(cj)
		Eventually(func(g Gomega) {
			g.Expect(record(g, m, cj).Nodes.Get(lostNode).Lost).NotTo(BeZero(), "the hub read the node lost")
		}).WithTimeout(10 * time.Second).Should(Succeed())

		setReady(m, lostNode, true)
		setPods(m, cj, lostNode, 1)
		m.runner.unstall(lostNode)
		Eventually(phaseOf(cj)).WithTimeout(bound).Should(Equal(fleetv1.PhaseCompleted))
		Expect(get(cj)(Default).Status.Clusters[0].FailedNodes).To(BeEmpty())
		Expect(jobNodes(m, cj)).To(Equal(nodeNames("a", 4)))
	})
})

// setPods writes the status of node's Job of cj as the Job controller would
// with one pod running, ready of it Ready.
func setPods(m *member, cj *fleetv1.ClusterJob, node string, ready int32) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		var job *batchv1.Job
		for _, j := range memberJobs(m) {
			if j.Labels[fleetv1.ClusterJobUIDLabel] == naming.LabelValue(string(get(cj)(g).UID)) && j.Annotations[fleetv1.NodeAnnotation] == node {
				job = &j
			}
		}
		g.Expect(job).NotTo(BeNil())
		if job.Status.StartTime == nil {
			job.Status.StartTime = &metav1.Time{Time: time.Now()}
		}
		job.Status.Active, job.Status.Ready = 1, ptr.To(ready)
		g.Expect(m.client.Status().Update(ctx, job)).To(Succeed())
	}).Should(Succeed())
}

// record is cj's results record in m.
func record(g Gomega, m *member, cj *fleetv1.ClusterJob) spoke.Results {
	run := spoke.Run{ClusterJob: get(cj)(g), Cluster: m.name, Namespace: workNamespace}
	rec, _, err := spoke.ReadResults(ctx, m.client, run)
	g.Expect(err).NotTo(HaveOccurred())
	return rec
}
