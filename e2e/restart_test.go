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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

var _ = Describe("The hub controller killed mid-run", func() {
	It("completes the run after a restart with one Job per node", func() {
		m, other := f.member("member-2"), f.member("member-1")
		cj := makeClusterJob("restart").Batch(1).OnlyMember(m.name).RunFor(2 * time.Second).Obj()
		create(cj)
		Eventually(func() int { return len(recorders[m.name].jobsPerNode(cj.UID)) }).Should(BeNumerically(">=", 2), "the second group started")
		hub.kill()
		// Nothing makes Jobs while the controller is down, and the running
		// group finishes without it: the restarted controller must take
		// the run up from the members' Jobs.
		before := len(runJobs(m, cj.UID))
		Consistently(func() int { return len(runJobs(m, cj.UID)) }).Should(Equal(before))
		Eventually(func() int { return unfinished(runJobs(m, cj.UID)) }).Should(BeZero())
		hub.start()
		waitPhase(cj, fleetv1.PhaseCompleted)
		expectRun(m, recorders[m.name], cj, batches(names(eligibleNodes(m)), 1))
		expectNoRun(other, recorders[other.name], cj)
	})

	It("a deleted hub pod: the Deployment's next pod takes the lease over within the lease duration and completes the run with one Job per node", kindOnly, func() {
		only(providerKind, "deletes the hub's pod, which runs in the hub cluster only on kind")
		m := f.member("member-1")
		cj := makeClusterJob("hub-pod-deleted").Batch(1).OnlyMember(m.name).RunFor(2 * time.Second).Obj()
		create(cj)
		Eventually(func() int { return len(recorders[m.name].jobsPerNode(cj.UID)) }).Should(BeNumerically(">=", 2), "the second group started")
		handOver := hub.(*deployedHub).deletePod()
		AddReportEntry("lease hand-over after kubectl delete pod of the hub", handOver.Round(100*time.Millisecond).String())
		// A hub that releases its lease when it stops hands over as soon as
		// the next pod runs; one that leaves it to expire, only after the
		// lease duration (controller-runtime's 15 s), blind in between.
		Expect(handOver).To(BeNumerically("<", 15*time.Second), "the deleted pod released the lease")
		waitPhase(cj, fleetv1.PhaseCompleted)
		expectRun(m, recorders[m.name], cj, batches(names(eligibleNodes(m)), 1))
	})

	It("keeps a random batch plan across a restart", func() {
		m := f.member("member-2")
		cj := makeClusterJob("random-restart").RandomBatch(2).OnlyMember(m.name).RunFor(2 * time.Second).Obj()
		create(cj)
		var plan corev1.ConfigMap
		Eventually(func(g Gomega) {
			plans := runPlans(m, cj.UID)
			g.Expect(plans).To(HaveLen(1))
			plan = plans[0]
		}).Should(Succeed())
		Expect(plan.Name).To(Equal("fleetjob-plan-" + string(cj.UID)))
		Eventually(func() int { return len(runJobs(m, cj.UID)) }).Should(BeNumerically(">", 0), "the first group started")
		hub.kill()
		hub.start()
		waitPhase(cj, fleetv1.PhaseCompleted)

		var after corev1.ConfigMap
		Expect(m.client.Get(ctx, client.ObjectKeyFromObject(&plan), &after)).To(Succeed())
		Expect(after.UID).To(Equal(plan.UID), "the plan ConfigMap was never replaced")
		Expect(after.BinaryData).To(Equal(plan.BinaryData))
		want := planGroups(m, cj)
		Expect(want).To(HaveLen((len(eligibleNodes(m)) + 1) / 2))
		var planned []string
		for _, g := range want {
			Expect(len(g.nodes)).To(BeNumerically("<=", 2))
			planned = append(planned, g.nodes...)
		}
		Expect(planned).To(ConsistOf(names(eligibleNodes(m))))
		// The Jobs made before and after the restart follow the one plan.
		expectRun(m, recorders[m.name], cj, want)
	})
})

// planGroups reads the groups of the run's plan in m, as the hub does.
func planGroups(m *member, cj *fleetv1.ClusterJob) []group {
	GinkgoHelper()
	p, found, err := spoke.ReadPlan(ctx, m.client, spoke.Run{ClusterJob: cj, Cluster: m.name, Namespace: workNamespace})
	Expect(err).NotTo(HaveOccurred())
	Expect(found).To(BeTrue(), "the run has a plan in %s", m.name)
	var out []group
	for _, g := range p.Groups {
		out = append(out, group{name: g.Name, nodes: g.Nodes})
	}
	return out
}
