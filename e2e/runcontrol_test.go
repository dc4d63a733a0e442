//go:build e2e

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

package e2e

import (
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Run control", hubLogic, func() {
	It("maxFailedNodesPerCluster 1: one failure per cluster runs every group, a second stops that cluster", func() {
		m1, m2 := f.member("member-1"), f.member("member-2")
		n1, n2 := names(eligibleNodes(m1)), names(eligibleNodes(m2))
		// Batches of 2, or of 1 where member-1 has fewer than 6 nodes (3 on
		// kind): member-1 needs a third batch that never runs.
		size := min(2, len(n1)/3)
		Expect(size).To(BeNumerically(">=", 1), "member-1 needs three batches")
		Expect(len(n2)).To(BeNumerically(">=", 2), "member-2 needs two nodes")
		b1 := batches(n1, size)
		// member-1: one failure in each of its first two batches (the last
		// node of the first, the first of the second); member-2: one, its
		// second node.
		bad1, bad2, bad3 := b1[0].nodes[size-1], b1[1].nodes[0], n2[1]
		failPodsOn(m1, bad1)
		failPodsOn(m1, bad2)
		failPodsOn(m2, bad3)
		one := intstr.FromInt32(1)
		cj := makeClusterJob("budget").Batch(int32(size)).Policy(fleetv1.FailurePolicy{MaxFailedNodesPerCluster: &one}).
			FailOn(bad1, bad2, bad3).Obj()
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseFailed)

		// member-1 stops after the batch of its second failure; every
		// batch of member-2 runs, one Job per node.
		expectRun(m1, recorders[m1.name], cj, b1[:2], bad1, bad2)
		expectRun(m2, recorders[m2.name], cj, batches(n2, size), bad3)
		r1 := row(got, m1.name)
		Expect(r1.Phase).To(Equal(fleetv1.ClusterFailed))
		Expect(r1.Reason).To(Equal(fleetv1.ReasonFailureBudgetExceeded))
		Expect(r1.Message).To(ContainSubstring("maxFailedNodesPerCluster 1 allows 1 of"))
		r2 := row(got, m2.name)
		Expect(r2.Phase).To(Equal(fleetv1.ClusterFailed))
		Expect(r2.Reason).To(Equal(fleetv1.ReasonNodeFailed), "one failure is within member-2's budget")
		Expect(r2.Groups.Completed).To(Equal(r2.Groups.Total))
	})

	It("kubectl fleetjob retry of a keepgoing run with 2 failed nodes runs exactly those 2 Jobs and nothing else", func() {
		m1, m2 := f.member("member-1"), f.member("member-2")
		n1, n2 := names(eligibleNodes(m1)), names(eligibleNodes(m2))
		Expect(len(n1)).To(BeNumerically(">=", 3), "member-1 needs two batches of 2")
		heal1, heal2 := failPodsOn(m1, n1[2]), failPodsOn(m2, n2[0])
		parent := makeClusterJob("flaky").Batch(2).FailOn(n1[2], n2[0]).Obj()
		create(parent)
		waitPhase(parent, fleetv1.PhaseFailed)
		expectRun(m1, recorders[m1.name], parent, batches(n1, 2), n1[2])
		expectRun(m2, recorders[m2.name], parent, batches(n2, 2), n2[0])
		// Each failed node's exit code, as a user reads it.
		out := f.fleetjob("status", parent.Name, "-n", parent.Namespace, "--nodes", "--failed")
		Expect(out).To(MatchRegexp(`(?m)^%s\s+%s\s+batch-2\s+\S+\s+Failed\s+\S+\s+1\s`, m1.name, n1[2]))
		Expect(out).To(MatchRegexp(`(?m)^%s\s+%s\s+batch-1\s+\S+\s+Failed\s+\S+\s+1\s`, m2.name, n2[0]))
		heal1()
		heal2()

		out = f.fleetjob("retry", parent.Name, "-n", parent.Namespace, "--name", "flaky-retry")
		Expect(out).To(ContainSubstring("retrying 2 nodes"))
		child := &fleetv1.ClusterJob{}
		child.Name, child.Namespace = "flaky-retry", parent.Namespace
		// On kind the template still fails those nodes: the retry ends
		// Failed there, having run each of them once more.
		want, failed1, failed2 := fleetv1.PhaseCompleted, []string(nil), []string(nil)
		if f.provider != providerKwok {
			want, failed1, failed2 = fleetv1.PhaseFailed, []string{n1[2]}, []string{n2[0]}
		}
		got := waitPhase(child, want)
		Expect(got.Status.RetryOf).To(Equal(&fleetv1.RetrySource{Name: parent.Name, UID: string(parent.UID)}))
		// Each node in its parent group, by name; the only group of the retry.
		expectRun(m1, recorders[m1.name], got, []group{{name: "batch-2", nodes: []string{n1[2]}}}, failed1...)
		expectRun(m2, recorders[m2.name], got, []group{{name: "batch-1", nodes: []string{n2[0]}}}, failed2...)
		Expect(runJobs(m1, parent.UID)).To(HaveLen(len(n1)), "the parent's Jobs stay")
		Expect(runJobs(m2, parent.UID)).To(HaveLen(len(n2)))
	})

	It("gates.nodeHealth fails a node that kwok turns NotReady after its Job succeeded, NodeUnhealthy, and holds the next group until then", kwokOnly, func() {
		only(providerKwok, "a kwok Stage turns the node NotReady at once; a stopped kind kubelet is seen NotReady only after the node-monitor grace period (40 s or more), past the gate's timeout")
		m1 := f.member("member-1")
		n1 := names(eligibleNodes(m1))
		Expect(len(n1)).To(BeNumerically(">=", 3), "member-1 needs two batches of 2")
		const readyFor, timeout = 10 * time.Second, 20 * time.Second
		cj := makeClusterJob("health").Batch(2).OnlyMember(m1.name).Obj()
		cj.Spec.Gates = &fleetv1.Gates{NodeHealth: &fleetv1.NodeHealthGate{
			ReadyFor: metav1.Duration{Duration: readyFor}, Timeout: metav1.Duration{Duration: timeout}}}
		create(cj)
		// n1[1]'s Job succeeds; then kwok turns the node NotReady, before
		// the hub may call it healthy.
		Eventually(func(g Gomega) {
			i := slices.IndexFunc(runJobs(m1, cj.UID), func(j batchv1.Job) bool { return j.Annotations[fleetv1.NodeAnnotation] == n1[1] })
			g.Expect(i).NotTo(Equal(-1))
			g.Expect(runJobs(m1, cj.UID)[i].Status.CompletionTime).NotTo(BeNil())
		}).WithTimeout(runTimeout).WithPolling(200 * time.Millisecond).Should(Succeed())
		makeNotReady(m1, n1[1])
		Eventually(func(g Gomega) {
			g.Expect(row(latest(cj)(g), m1.name).Message).To(HavePrefix("Waiting for node health: "))
		}).WithTimeout(timeout).Should(Succeed())

		got := waitPhase(cj, fleetv1.PhaseFailed)
		expectRun(m1, recorders[m1.name], cj, batches(n1, 2)) // every Job succeeded
		r := row(got, m1.name)
		Expect(r.FailedNodes).To(ConsistOf(And(HaveField("Node", n1[1]), HaveField("Reason", fleetv1.NodeReasonNodeUnhealthy))))
		out := f.fleetjob("status", cj.Name, "-n", cj.Namespace, "--nodes", "--failed")
		Expect(out).To(MatchRegexp(`(?m)^%s\s+%s\s+batch-1\s+\S+\s+Failed\s+NodeUnhealthy\s`, m1.name, n1[1]))

		// From the Jobs: batch-2 started once the verdict was in, no
		// sooner than the timeout after n1[1]'s Job (1 s resolution).
		var verdictDue, secondCreated time.Time
		for _, j := range runJobs(m1, cj.UID) {
			switch {
			case j.Annotations[fleetv1.NodeAnnotation] == n1[1]:
				verdictDue = j.Status.CompletionTime.Add(timeout)
			case j.Labels[fleetv1.GroupIndexLabel] == "1" && (secondCreated.IsZero() || j.CreationTimestamp.Time.Before(secondCreated)):
				secondCreated = j.CreationTimestamp.Time
			}
		}
		Expect(secondCreated).To(BeTemporally(">=", verdictDue.Add(-time.Second)))
	})

	It("gates.soak keeps the groups of a member apart by at least the soak, from the Jobs' own times", func() {
		m1 := f.member("member-1")
		const soak = 3 * time.Second
		// Batches of 3, smaller where member-1 has fewer than 6 nodes (3 on
		// kind): a soak is seen only between two groups.
		n1 := names(eligibleNodes(m1))
		size := min(3, (len(n1)+1)/2)
		Expect(len(n1)).To(BeNumerically(">=", 2), "member-1 needs two groups")
		cj := makeClusterJob("soak").Batch(int32(size)).OnlyMember(m1.name).Obj()
		cj.Spec.Gates = &fleetv1.Gates{Soak: &metav1.Duration{Duration: soak}}
		create(cj)
		waitPhase(cj, fleetv1.PhaseCompleted)
		want := batches(n1, size)
		Expect(len(want)).To(BeNumerically(">=", 2))
		expectRun(m1, recorders[m1.name], cj, want)

		done, created := map[string]time.Time{}, map[string]time.Time{}
		for _, j := range runJobs(m1, cj.UID) {
			g := j.Labels[fleetv1.GroupIndexLabel]
			if t := j.Status.CompletionTime; t != nil && t.After(done[g]) {
				done[g] = t.Time
			}
			if t := j.CreationTimestamp.Time; created[g].IsZero() || t.Before(created[g]) {
				created[g] = t
			}
		}
		for i := 1; i < len(want); i++ {
			prev, next := strconv.Itoa(i-1), strconv.Itoa(i)
			// Job times have a resolution of 1 s.
			Expect(created[next].Sub(done[prev])).To(BeNumerically(">=", soak-time.Second), "group %s after group %s", next, prev)
		}
	})
})
