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
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/shard"
)

// The hub run as a sharded hub's replicas (--shard), each a whole hub
// manager: the leader decides for the fleet, and each replica, elected or
// not, connects to and runs the runs of the members it serves, and no
// other.
var _ = Describe("Sharded hub replicas", Ordered, func() {
	var (
		idA, idB       string
		shardA, shardB *hubShard
		callsA, callsB *callCounter
		stopA, stopB   func()
		// split is when each member was claimed by its owner.
		split time.Time
	)
	// owner is the replica that serves member while both live.
	owner := func(member string) string { return shard.OwnerOf(member, []string{idA, idB}) }
	// servedBy are the members replica id serves while both live.
	servedBy := func(id string) []string {
		var out []string
		for name := range members {
			if owner(name) == id {
				out = append(out, name)
			}
		}
		return out
	}
	// onlyOwnersCalled: no replica called, since split, a member the other
	// serves.
	onlyOwnersCalled := func() {
		GinkgoHelper()
		for name := range members {
			other := callsA
			if owner(name) == idA {
				other = callsB
			}
			Expect(other.firstSince(name, split)).To(BeZero(), "%s was called by the replica that does not serve it", name)
		}
	}
	// oneJobPerNode: the run ran every node of every member once.
	oneJobPerNode := func(cj *fleetv1.ClusterJob) {
		GinkgoHelper()
		for name, m := range members {
			Expect(jobNodes(m, cj)).To(Equal(memberNodes(m)), "one Job per node in %s", name)
		}
	}

	BeforeAll(func() {
		// Four members: each replica serves several, and moves them
		// together.
		addMembers(map[string]int{"member-c": 3, "member-d": 5})
	})

	BeforeEach(func() {
		for _, m := range members {
			register(m, admin, nil)
		}
		idA, idB = splitting("member-a", "member-b") // idA owns member-a, idB member-b
		callsA, callsB = &callCounter{}, &callCounter{}
		// A starts alone, and leads.
		shardA, shardB = &hubShard{id: idA}, &hubShard{id: idB}
		stopA = startHub(hubOptions{leaderElect: true, shard: shardA, calls: callsA})
		Eventually(leaseHolder).ShouldNot(BeEmpty(), "the first replica leads")
		stopB = startHub(hubOptions{leaderElect: true, shard: shardB, calls: callsB})
		Eventually(func(g Gomega) {
			for name := range members {
				g.Expect(claimedBy(g, name)).To(Equal(owner(name)), "the claim of %s", name)
			}
		}).WithTimeout(30*time.Second).Should(Succeed(), "each member claimed by its owner")
		// A served every member alone until B came: its calls to B's
		// members before B claimed them are no overlap.
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
		Expect(servedBy(idA)).NotTo(BeEmpty())
		Expect(servedBy(idB)).NotTo(BeEmpty())
		cj := makeClusterJob("sharded").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		oneJobPerNode(cj)
		onlyOwnersCalled()
		for name := range members {
			calls := callsA
			if owner(name) == idB {
				calls = callsB
			}
			Expect(calls.of(name)).To(BeNumerically(">", 0), "%s's run ran from its replica (B does not lead)", name)
		}
	})

	It("keeps a budget over both replicas' members: their runs never pass it together, the budget's status counts both, and the run completes with one Job per node", func() {
		fdb := disruptionBudget("across-replicas", nil, ptr.To(intstr.FromInt32(3)))
		fdb.Spec.ClusterSelector = &metav1.LabelSelector{} // every member
		Expect(hubC.Create(ctx, fdb)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, fdb))).To(Succeed()) })
		for _, m := range members {
			m.runner.hold(true)
		}
		reboot := makeClusterJob("reboot-sharded").Obj()
		reboot.Spec.Disruptive = true
		Expect(hubC.Create(ctx, reboot)).To(Succeed())
		// Its watches end with the spec: an API server stops only once
		// its watches have.
		sampleCtx, stopSampling := context.WithCancel(ctx)
		DeferCleanup(stopSampling)
		sampler := sampleDisruption(sampleCtx, reboot)

		// Each replica alone would grant its members 3: together, 3 in all.
		running := func() int {
			n := 0
			for _, m := range members {
				n += len(jobNodes(m, reboot))
			}
			return n
		}
		Eventually(running).WithTimeout(20 * time.Second).Should(Equal(3))
		Consistently(running).WithTimeout(3*time.Second).Should(Equal(3), "nothing starts past the budget on either replica")
		Eventually(func(g Gomega) fleetv1.FleetDisruptionBudgetStatus {
			got := &fleetv1.FleetDisruptionBudget{}
			g.Expect(hubC.Get(ctx, client.ObjectKeyFromObject(fdb), got)).To(Succeed())
			return got.Status
		}).WithTimeout(10*time.Second).Should(And(
			HaveField("Clusters", BeEquivalentTo(len(members))), HaveField("DisruptedNodes", BeEquivalentTo(3)), HaveField("WaitingClusters", BeNumerically(">=", 1))),
			"the leader's status counts the other replica's runs")

		// Released: room freed on one replica reaches the other's held runs.
		for _, m := range members {
			m.runner.hold(false)
		}
		Eventually(phaseOf(reboot)).WithTimeout(120 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		oneJobPerNode(reboot)
		_, all, events := sampler.peaks()
		Expect(events).To(BeNumerically(">=", 2*19), "every Job was seen created and finished")
		Expect(all).To(Equal(3), "the budget's total, reached and never passed across the replicas")
		onlyOwnersCalled()
	})

	It("hands a stopped replica's members to the other mid-run within seconds; the run completes, one Job per node, no member called by both at once", func() {
		b := members["member-b"]
		b.runner.hold(true)
		cj := makeClusterJob("handed-over").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(b, cj) }).Should(HaveLen(2), "member-b's first group started by its replica")

		moved := servedBy(idB)
		stopped := time.Now()
		stopB()
		Eventually(func(g Gomega) {
			for _, name := range moved {
				g.Expect(claimedBy(g, name)).To(Equal(idA), "the claim of %s", name)
			}
		}).WithTimeout(10*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(), "every member of the stopped replica handed over to the other")
		AddReportEntry("members handed over mid-run", fmt.Sprintf("%d in %s", len(moved), time.Since(stopped)))
		b.runner.hold(false)

		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		oneJobPerNode(cj)
		// The remaining replica served every member alone before the
		// other came (BeforeEach): only its calls since the stop count.
		Expect(callsB.last("member-b")).NotTo(BeZero(), "member-b was never called by its replica")
		for _, name := range moved {
			// A member whose run the stopped replica had not reached yet
			// was never called by it.
			lastB, firstA := callsB.last(name), callsA.firstSince(name, stopped)
			Expect(firstA).NotTo(BeZero(), "the new owner never called %s", name)
			Expect(firstA).To(BeTemporally(">", lastB), "the new owner called %s before the old one's last call", name)
		}
	})

	It("goes on when the leader is killed mid-run: the other replica leads, takes its members only once its session expired, and the run completes, one Job per node", func() {
		a := members["member-a"]
		a.runner.hold(true)
		cj := makeClusterJob("leader-killed").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(a, cj) }).Should(HaveLen(2), "member-a's first group started by the leader")

		// Killed, not stopped: the leader's shard can no longer reach the
		// hub, so it hands nothing back (its manager still releases the
		// leader Lease, as the kubelet's SIGKILL would not: the kwok e2e
		// covers that).
		moved := servedBy(idA)
		killed := time.Now()
		shardA.dead.Store(true)
		stopA()
		engagedHere := func() bool {
			for _, name := range moved {
				if m, _ := registry.Member(name); !m.Engaged {
					return false
				}
			}
			return true
		}
		anyEngagedHere := func() bool {
			for _, name := range moved {
				if m, _ := registry.Member(name); m.Engaged {
					return true
				}
			}
			return false
		}
		Consistently(anyEngagedHere).WithTimeout(testShard.LeaseDuration-2*time.Second).WithPolling(100*time.Millisecond).
			Should(BeFalse(), "a member taken while the killed replica's session could still be live")
		Eventually(engagedHere).WithTimeout(15*time.Second).WithPolling(100*time.Millisecond).Should(BeTrue(), "the members move once the session expired")
		AddReportEntry("members moved after the leader was killed", fmt.Sprintf("%d in %s", len(moved), time.Since(killed)))
		a.runner.hold(false)

		Eventually(phaseOf(cj)).WithTimeout(60*time.Second).Should(Equal(fleetv1.PhaseCompleted), "the new leader ends the run")
		oneJobPerNode(cj)
		for _, name := range moved {
			lastA, firstB := callsA.last(name), callsB.firstSince(name, killed)
			Expect(firstB).NotTo(BeZero(), "the new owner never called %s", name)
			Expect(firstB).To(BeTemporally(">", lastA), "the new owner called %s before the killed one's last call", name)
			Expect(callsB.firstSince(name, time.Time{})).To(Equal(firstB), "the replica that does not lead called %s before the leader was killed", name)
		}
	})
})
