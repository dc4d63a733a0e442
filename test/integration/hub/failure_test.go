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
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

var _ = Describe("Members that fail mid-run", func() {
	var stopHub func()

	AfterEach(func() { cleanUp(stopHub) })

	It("keeps the other member going while one is unreachable, then finishes without re-running nodes", func() {
		a, b := members["member-a"], members["member-b"]
		proxy := newOutage(b.env.Config.Host)
		DeferCleanup(proxy.cut)
		register(a, admin, nil)
		registerThrough(b, proxy, nil)
		stopHub = startHub(hubOptions{})
		b.runner.hold(true)
		cj := makeClusterJob("outage").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(b, cj)) }).Should(Equal(2))

		proxy.cut()
		Eventually(func(g Gomega) {
			row := get(cj)(g).Status.Clusters[1]
			g.Expect(row.Reachable).To(BeFalse())
			g.Expect(row.Reason).To(Equal("Unreachable"))
			g.Expect(row.UnreachableSince).NotTo(BeNil())
		}).WithTimeout(20 * time.Second).Should(Succeed())
		// The member's Jobs run on without the hub; the other member finishes.
		b.runner.hold(false)
		Eventually(func(g Gomega) {
			g.Expect(get(cj)(g).Status.Clusters[0].Phase).To(Equal(fleetv1.ClusterCompleted))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Consistently(func() int { return len(jobNodes(b, cj)) }).WithTimeout(time.Second).Should(Equal(2))

		proxy.restore()
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(b, cj)).To(Equal(nodeNames("b", 7)), "one Job per node, none re-run")
		Expect(get(cj)(Default).Status.Clusters[1].Reachable).To(BeTrue())
	})

	It("fails a member whose registration is deleted mid-run after the timeout, and collects its Jobs when it returns", func() {
		a, b := members["member-a"], members["member-b"]
		register(a, admin, nil)
		register(b, admin, nil)
		stopHub = startHub(hubOptions{unreachableTimeout: 3 * time.Second})
		b.runner.hold(true)
		cj := makeClusterJob("unregistered").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(b, cj)) }).Should(Equal(7))

		unregister("member-b")
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		Expect(got.Status.Clusters[0].Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(got.Status.Clusters[1].Phase).To(Equal(fleetv1.ClusterFailed))
		Expect(got.Status.Clusters[1].Reason).To(Equal("UnreachableTimeout"))
		Expect(got.Status.Clusters[1].Message).To(ContainSubstring("no registration Secret"))

		// Deleted while the member is away, the run leaves Jobs there; they
		// go when the member is registered again.
		Expect(hubC.Delete(ctx, cj)).To(Succeed())
		Eventually(func() error { return hubC.Get(ctx, client.ObjectKeyFromObject(cj), &fleetv1.ClusterJob{}) }).
			WithTimeout(30 * time.Second).Should(Satisfy(func(err error) bool { return client.IgnoreNotFound(err) == nil && err != nil }))
		Expect(jobNodes(b, cj)).To(HaveLen(7))
		register(b, admin, nil)
		Eventually(func() []batchv1.Job { return memberJobs(b) }).WithTimeout(30 * time.Second).Should(BeEmpty())
	})

	It("reports a node deleted while its Job ran as failed and one deleted before its group as skipped", func() {
		a := members["member-a"]
		register(a, admin, nil)
		stopHub = startHub(hubOptions{})
		DeferCleanup(func() {
			for _, n := range []string{"a-node-2", "a-node-4"} {
				Expect(client.IgnoreNotFound(a.client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}))).To(Succeed())
			}
			Eventually(func() error { return a.client.Get(ctx, client.ObjectKey{Name: "a-node-4"}, &corev1.Node{}) }).Should(HaveOccurred())
			recreateNodes(a, "a", 2, 4)
		})
		a.runner.hold(true)
		cj := makeClusterJob("node-deleted").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(a, cj)) }).Should(Equal(2))
		for _, n := range []string{"a-node-2", "a-node-4"} {
			Expect(a.client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
		}
		a.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Nodes).To(Equal(fleetv1.NodeCounts{Total: 4, Succeeded: 2, Failed: 1, Skipped: 1}))
		Expect(row.FailedNodes).To(HaveLen(1))
		Expect(row.FailedNodes[0].Node).To(Equal("a-node-2"))
		Expect(row.FailedNodes[0].Reason).To(Equal(fleetv1.NodeReasonNodeDeleted))
		// Its Job is deleted with the verdict: a node registered again
		// under the same name (a VM rebuilt) must not run it.
		left := map[string]int{"a-node-1": 1, "a-node-3": 1}
		Eventually(func() map[string]int { return jobNodes(a, cj) }).Should(Equal(left))
		recreateNodes(a, "a", 2)
		Consistently(func() map[string]int { return jobNodes(a, cj) }).WithTimeout(2 * time.Second).Should(Equal(left))
		Expect(get(cj)(Default).Status.Clusters[0].FailedNodes[0].Reason).To(Equal(fleetv1.NodeReasonNodeDeleted))
	})

	// A real kubelet runs on when its Node is deleted: the verdict must be
	// stored before the Job goes, or the record (what `status --nodes` and
	// a retry read) says otherwise than the MemberRun.
	It("records a deleted node's verdict before deleting its Job: the MemberRun, the ClusterJob and the member's record agree", func() {
		const deleted = "a-node-2"
		a := members["member-a"]
		register(a, admin, nil)
		var refusing atomic.Bool
		var refused atomic.Int32
		stopHub = startHub(hubOptions{wrapMember: refuseRecordUpdates(&refusing, &refused)})
		DeferCleanup(func() {
			if err := a.client.Get(ctx, client.ObjectKey{Name: deleted}, &corev1.Node{}); apierrors.IsNotFound(err) {
				recreateNodes(a, "a", 2)
			}
		})
		a.runner.hold(true)
		cj := makeClusterJob("node-deleted-ahead").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(a, cj) }).Should(Equal(nodeNames("a", 4)))

		refusing.Store(true)
		Expect(a.client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: deleted}})).To(Succeed())
		Eventually(refused.Load).Should(BeNumerically(">", 0))
		Consistently(func() map[string]int { return jobNodes(a, cj) }).WithTimeout(2*time.Second).
			Should(Equal(nodeNames("a", 4)), "the Job of the deleted node is kept while its verdict cannot be recorded")

		refusing.Store(false)
		a.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		verdict := And(HaveField("Node", deleted), HaveField("Reason", fleetv1.NodeReasonNodeDeleted))
		Expect(get(cj)(Default).Status.Clusters[0].FailedNodes).To(ConsistOf(verdict))
		Expect(jobNodes(a, cj)).NotTo(HaveKey(deleted))
		Expect(nodeRow(Default, a, cj, deleted)).To(And(verdict, HaveField("Phase", spoke.NodeFailed)))
	})
})
