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
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// The hub run as a sharded hub's replicas (--shard), each a whole hub
// manager: the leader decides for the fleet, and each replica, elected or
// not, connects to and runs the runs of the members it serves, and no
// other.
var _ = Describe("Sharded hub replicas", func() {
	var (
		idA, idB       string
		shardA, shardB *hubShard
		callsA, callsB *callCounter
		stopA, stopB   func()
		// split is when each member was claimed by its owner.
		split time.Time
	)

	BeforeEach(func() {
		register(members["member-a"], admin, nil)
		register(members["member-b"], admin, nil)
		idA, idB = splitting("member-a", "member-b") // idA owns member-a, idB member-b
		callsA, callsB = &callCounter{}, &callCounter{}
		// A starts alone, and leads.
		shardA, shardB = &hubShard{id: idA}, &hubShard{id: idB}
		stopA = startHub(hubOptions{leaderElect: true, shard: shardA, calls: callsA})
		Eventually(leaseHolder).ShouldNot(BeEmpty(), "the first replica leads")
		stopB = startHub(hubOptions{leaderElect: true, shard: shardB, calls: callsB})
		Eventually(func(g Gomega) {
			g.Expect(claimedBy(g, "member-a")).To(Equal(idA))
			g.Expect(claimedBy(g, "member-b")).To(Equal(idB))
		}).WithTimeout(30*time.Second).Should(Succeed(), "each member claimed by its owner")
		// A served both members alone until B came: its calls to member-b
		// before B claimed it are no overlap.
		split = time.Now()
	})

	AfterEach(func() {
		for _, m := range members {
			m.runner.hold(false)
		}
		// The runs' finalizers empty each member from its owner.
		cleanUp(func() {
			stopB()
			stopA()
		})
		deleteShardLeases()
	})

	It("runs each member's run from the replica that serves it, the one that does not lead among them, one Job per node", func() {
		cj := makeClusterJob("sharded").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)))
		Expect(callsA.firstSince("member-b", split)).To(BeZero(), "the leader called the member another replica serves")
		Expect(callsB.firstSince("member-a", time.Time{})).To(BeZero(), "a replica called the member another replica serves")
		Expect(callsB.of("member-b")).To(BeNumerically(">", 0), "the replica that does not lead ran its member's run")
		Expect(callsA.of("member-a")).To(BeNumerically(">", 0))
	})

	It("keeps a budget over both replicas' members: their runs never pass it together, the budget's status counts both, and the run completes with one Job per node", func() {
		fdb := disruptionBudget("across-replicas", nil, ptr.To(intstr.FromInt32(3)))
		fdb.Spec.ClusterSelector = &metav1.LabelSelector{} // both members
		Expect(hubC.Create(ctx, fdb)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, fdb))).To(Succeed()) })
		for _, m := range members {
			m.runner.hold(true)
		}
		reboot := makeClusterJob("reboot-sharded").Obj()
		reboot.Spec.Disruptive = true
		Expect(hubC.Create(ctx, reboot)).To(Succeed())
		sampler := sampleDisruption(ctx, reboot)

		// Each replica alone would grant its member 3: together, 3 in all.
		running := func() int {
			return len(jobNodes(members["member-a"], reboot)) + len(jobNodes(members["member-b"], reboot))
		}
		Eventually(running).WithTimeout(20 * time.Second).Should(Equal(3))
		Consistently(running).WithTimeout(3*time.Second).Should(Equal(3), "nothing starts past the budget on either replica")
		Eventually(func(g Gomega) fleetv1.FleetDisruptionBudgetStatus {
			got := &fleetv1.FleetDisruptionBudget{}
			g.Expect(hubC.Get(ctx, client.ObjectKeyFromObject(fdb), got)).To(Succeed())
			return got.Status
		}).WithTimeout(10*time.Second).Should(And(
			HaveField("Clusters", BeEquivalentTo(2)), HaveField("DisruptedNodes", BeEquivalentTo(3)), HaveField("WaitingClusters", BeNumerically(">=", 1))),
			"the leader's status counts the other replica's runs")

		// Released: room freed on one replica reaches the other's held run.
		for _, m := range members {
			m.runner.hold(false)
		}
		Eventually(phaseOf(reboot)).WithTimeout(120 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-a"], reboot)).To(Equal(nodeNames("a", 4)), "one Job per node")
		Expect(jobNodes(members["member-b"], reboot)).To(Equal(nodeNames("b", 7)), "one Job per node")
		_, all, events := sampler.peaks()
		Expect(events).To(BeNumerically(">=", 2*11), "every Job was seen created and finished")
		Expect(all).To(Equal(3), "the budget's total, reached and never passed across the replicas")
		Expect(callsA.firstSince("member-b", split)).To(BeZero(), "the leader called the member another replica serves")
		Expect(callsB.firstSince("member-a", time.Time{})).To(BeZero(), "a replica called the member another replica serves")
	})

	It("hands a stopped replica's member to the other mid-run within seconds; the run completes, one Job per node, the member never called by both at once", func() {
		b := members["member-b"]
		b.runner.hold(true)
		cj := makeClusterJob("handed-over").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(b, cj) }).Should(HaveLen(2), "member-b's first group started by its replica")

		stopped := time.Now()
		stopB()
		Eventually(func(g Gomega) string { return claimedBy(g, "member-b") }).WithTimeout(10*time.Second).WithPolling(100*time.Millisecond).
			Should(Equal(idA), "member-b handed over to the remaining replica")
		AddReportEntry("member hand-over mid-run", time.Since(stopped).String())
		b.runner.hold(false)

		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))
		Expect(jobNodes(b, cj)).To(Equal(nodeNames("b", 7)), "one Job per node across the hand-over")
		// The remaining replica served member-b alone before the other
		// came (BeforeEach): only its calls since the stop count.
		lastB, firstA := callsB.last("member-b"), callsA.firstSince("member-b", stopped)
		Expect(lastB).NotTo(BeZero())
		Expect(firstA).NotTo(BeZero(), "the new owner never called member-b")
		Expect(firstA).To(BeTemporally(">", lastB), "the new owner called member-b before the old one's last call")
	})

	It("goes on when the leader is killed mid-run: the other replica leads, takes its member only once its session expired, and the run completes, one Job per node", func() {
		a := members["member-a"]
		a.runner.hold(true)
		cj := makeClusterJob("leader-killed").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(a, cj) }).Should(HaveLen(2), "member-a's first group started by the leader")

		// Killed, not stopped: the leader's shard can no longer reach the
		// hub, so it hands nothing back (its manager still releases the
		// leader Lease, as the kubelet's SIGKILL would not: the kwok e2e
		// covers that).
		killed := time.Now()
		shardA.dead.Store(true)
		stopA()
		engagedHere := func() bool { m, _ := registry.Member("member-a"); return m.Engaged }
		Consistently(engagedHere).WithTimeout(testShard.LeaseDuration-2*time.Second).WithPolling(100*time.Millisecond).
			Should(BeFalse(), "member-a taken while the killed replica's session could still be live")
		Eventually(engagedHere).WithTimeout(15*time.Second).WithPolling(100*time.Millisecond).Should(BeTrue(), "member-a moves once the session expired")
		AddReportEntry("member move after the leader was killed", time.Since(killed).String())
		a.runner.hold(false)

		Eventually(phaseOf(cj)).WithTimeout(60*time.Second).Should(Equal(fleetv1.PhaseCompleted), "the new leader ends the run")
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)), "one Job per node across the move")
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)))
		lastA, firstB := callsA.last("member-a"), callsB.firstSince("member-a", killed)
		Expect(firstB).NotTo(BeZero(), "the new owner never called member-a")
		Expect(firstB).To(BeTemporally(">", lastA), "the new owner called member-a before the killed one's last call")
		Expect(callsB.firstSince("member-a", time.Time{})).To(Equal(firstB), "the replica that does not lead called member-a before the leader was killed")
	})
})
