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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

var _ = Describe("Gates", func() {
	var stopHub func()

	BeforeEach(func() {
		register(members["member-a"], admin, map[string]string{"env": "dev"})
		register(members["member-b"], admin, map[string]string{"env": "prod"})
		stopHub = startHub(hubOptions{})
	})
	AfterEach(func() { cleanUp(stopHub) })

	It("soak keeps the next group back after a successful one, and the row says until when", func() {
		const soak = 3 * time.Second
		cj := makeClusterJob("soak").Batch(2).Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.Gates = &fleetv1.Gates{Soak: &metav1.Duration{Duration: soak}}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			runs := memberRuns(g, get(cj)(g))
			g.Expect(runs).To(HaveLen(1))
			g.Expect(runs[0].Status.Reason).To(Equal(fleetv1.ReasonSoaking))
			g.Expect(runs[0].Status.Message).To(HavePrefix("Soaking until "))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))

		// From the Jobs: the second group was created a soak after the
		// first finished (their times have a resolution of 1 s).
		var firstDone, secondCreated time.Time
		for _, j := range memberJobs(members["member-a"]) {
			if j.Labels[fleetv1.ClusterJobUIDLabel] != naming.LabelValue(string(cj.UID)) {
				continue
			}
			switch j.Labels[fleetv1.GroupIndexLabel] {
			case "0":
				if t := j.Status.CompletionTime; t != nil && t.After(firstDone) {
					firstDone = t.Time
				}
			case "1":
				if t := j.CreationTimestamp.Time; secondCreated.IsZero() || t.Before(secondCreated) {
					secondCreated = t
				}
			}
		}
		Expect(secondCreated.Sub(firstDone)).To(BeNumerically(">=", soak-time.Second))
	})

	It("progressDeadline fails the unfinished nodes of a group that runs too long, deletes their Jobs, and the run ends", func() {
		members["member-a"].runner.stallOn("a-node-2")
		cj := makeClusterJob("deadline").Batch(2).Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.Gates = &fleetv1.Gates{ProgressDeadline: &metav1.Duration{Duration: 3 * time.Second}}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.FailedNodes).To(ConsistOf(And(HaveField("Node", "a-node-2"), HaveField("Reason", fleetv1.NodeReasonGroupDeadlineExceeded))))
		left := map[string]int{"a-node-1": 1, "a-node-3": 1, "a-node-4": 1}
		Eventually(func() map[string]int { return jobNodes(members["member-a"], cj) }).Should(Equal(left), "the late node's Job is deleted; the next group still ran")
		Consistently(func() map[string]int { return jobNodes(members["member-a"], cj) }).WithTimeout(2*time.Second).Should(Equal(left), "and never created again")
	})

	It("nodeHealth fails a node that goes NotReady after its Job, NodeUnhealthy, and holds the next group until the verdict", func() {
		m := members["member-a"]
		cj := makeClusterJob("health").Batch(2).Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.Gates = &fleetv1.Gates{NodeHealth: &fleetv1.NodeHealthGate{
			ReadyFor: metav1.Duration{Duration: time.Second}, Timeout: metav1.Duration{Duration: 4 * time.Second}}}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(30 * time.Second).
			Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}))
		setReady(m, "a-node-2", false)
		DeferCleanup(setReady, m, "a-node-2", true)
		Eventually(func(g Gomega) {
			runs := memberRuns(g, get(cj)(g))
			g.Expect(runs).To(HaveLen(1))
			g.Expect(runs[0].Status.Message).To(Equal("Waiting for node health: 1 of 2 in group batch-1 (spec.gates.nodeHealth)"))
		}).WithTimeout(10 * time.Second).Should(Succeed())

		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Expect(jobNodes(m, cj)).To(Equal(nodeNames("a", 4)), "the next group ran once the verdict was in")
		got := get(cj)(Default)
		Expect(got.Status.Clusters[0].FailedNodes).To(ConsistOf(And(
			HaveField("Node", "a-node-2"), HaveField("Reason", fleetv1.NodeReasonNodeUnhealthy),
			HaveField("Message", HaveSuffix("it is not Ready")))))

		// From the Jobs: batch-2 started no sooner than the timeout after
		// a-node-2's Job succeeded (times have a resolution of 1 s).
		var verdictDue, secondCreated time.Time
		for _, j := range memberJobs(m) {
			switch {
			case j.Labels[fleetv1.ClusterJobUIDLabel] != naming.LabelValue(string(cj.UID)):
			case j.Annotations[fleetv1.NodeAnnotation] == "a-node-2":
				Expect(j.Status.CompletionTime).NotTo(BeNil(), "its Job succeeded: the node failed on its health")
				verdictDue = j.Status.CompletionTime.Add(4 * time.Second)
			case j.Labels[fleetv1.GroupIndexLabel] == "1" && (secondCreated.IsZero() || j.CreationTimestamp.Before(&metav1.Time{Time: secondCreated})):
				secondCreated = j.CreationTimestamp.Time
			}
		}
		Expect(secondCreated).To(BeTemporally(">=", verdictDue.Add(-time.Second)))
	})
})
