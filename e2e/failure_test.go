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
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("A node whose Job fails", func() {
	It("keeps going: every group still runs, the run fails and names the node with the Job's reason", func() {
		m1, m2 := f.member("member-1"), f.member("member-2")
		// The second node: its batch has others that succeed.
		bad := names(eligibleNodes(m1))[1]
		failPodsOn(m1, bad)
		cj := makeClusterJob("keepgoing").Batch(3).FailOn(bad).Obj()
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseFailed)

		expectRun(m1, recorders[m1.name], cj, batches(names(eligibleNodes(m1)), 3), bad)
		expectRun(m2, recorders[m2.name], cj, batches(names(eligibleNodes(m2)), 3))
		for _, p := range runPods(m1, cj.UID) {
			if p.Spec.NodeName == bad {
				Expect(p.Status.Phase).To(Equal(corev1.PodFailed), "pod %s on %s", p.Name, bad)
			}
		}
		r1 := row(got, m1.name)
		Expect(r1.Phase).To(Equal(fleetv1.ClusterFailed))
		Expect(r1.FailedNodes).To(ConsistOf(And(
			HaveField("Node", bad),
			HaveField("Reason", batchv1.JobReasonBackoffLimitExceeded),
			HaveField("ExitCode", HaveValue(BeEquivalentTo(1))), // read from the failed pod
		)))
		Expect(r1.Nodes.Failed).To(BeEquivalentTo(1))
		Expect(row(got, m2.name).Phase).To(Equal(fleetv1.ClusterCompleted))
	})

	It("exits: once a node failed, no new group starts in any member and the run fails", func() {
		m1, m2 := f.member("member-1"), f.member("member-2")
		bad := names(eligibleNodes(m1))[1]
		failPodsOn(m1, bad)
		// The failure comes at once, the other pods of the first batches
		// take 5 s: the hub learns of it long before either first batch
		// ends, so no second batch may start anywhere.
		cj := makeClusterJob("exit").Batch(3).Exit().RunFor(5 * time.Second).FailOn(bad).Obj()
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseFailed)
		first := batches(names(eligibleNodes(m1)), 3)[:1]
		// Running Jobs are left to finish; give a wrongly started group the
		// time to show up.
		Consistently(func() map[string]int { return jobsByGroup(m1, cj.UID) }).Should(Equal(map[string]int{"0": len(first[0].nodes)}))
		for _, m := range []*member{m1, m2} {
			Expect(recorders[m.name].groupIndicesSeen(cj.UID)).To(Or(BeEmpty(), Equal([]string{"0"})), "%s: only the first group ever started", m.name)
			Expect(recorders[m.name].overlapsSeen()).To(BeEmpty())
		}
		Expect(jobsByGroup(m2, cj.UID)).To(Or(BeEmpty(), Equal(map[string]int{"0": len(batches(names(eligibleNodes(m2)), 3)[0].nodes)})))
		Eventually(func(g Gomega) {
			for _, j := range runJobs(m1, cj.UID) {
				g.Expect(jobFinished(&j)).To(BeTrue(), "Job %s finished", j.Name)
			}
		}).Should(Succeed())
		expectRun(m1, recorders[m1.name], cj, first, bad)
		r1 := row(got, m1.name)
		Expect(r1.Phase).To(Equal(fleetv1.ClusterFailed))
		Expect(r1.FailedNodes).To(ConsistOf(HaveField("Node", bad)))
	})
})
