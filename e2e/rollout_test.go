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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Cluster rollout", hubLogic, func() {
	It("starts the second member only after the first finished under maxConcurrentClusters 1", func() {
		// Members run in name order.
		first, second := f.member("member-1"), f.member("member-2")
		cj := makeClusterJob("one-at-a-time").MaxConcurrentClusters(1).RunFor(2 * time.Second).Obj()
		create(cj)
		// Each poll lists the second member before the first: a Job seen in
		// the second was made before the first was listed, so every Job of
		// the first must be finished in that list.
		var violations []string
		sawSecond := false
		Eventually(func(g Gomega) {
			inSecond := runJobs(second, cj.UID)
			inFirst := runJobs(first, cj.UID)
			if len(inSecond) > 0 {
				sawSecond = true
				if n := unfinished(inFirst); n > 0 || len(inFirst) == 0 {
					violations = append(violations, fmt.Sprintf("%s has %d Jobs while %s has %d Jobs, %d unfinished", second.name, len(inSecond), first.name, len(inFirst), n))
				}
			}
			g.Expect(latest(cj)(g).Status.Phase).To(Equal(fleetv1.PhaseCompleted))
		}).WithTimeout(runTimeout).Should(Succeed())
		Expect(violations).To(BeEmpty())
		Expect(sawSecond).To(BeTrue(), "the poll saw %s's Jobs", second.name)

		expectRun(first, recorders[first.name], cj, []group{{name: "all", nodes: names(eligibleNodes(first))}})
		expectRun(second, recorders[second.name], cj, []group{{name: "all", nodes: names(eligibleNodes(second))}})
		// The same from the members' own clocks (same host, 1 s resolution).
		firstDone := latestCompletion(runJobs(first, cj.UID))
		for _, j := range runJobs(second, cj.UID) {
			Expect(j.CreationTimestamp.Before(&firstDone)).To(BeFalse(), "Job %s of %s created at %s, before %s finished at %s", j.Name, second.name, j.CreationTimestamp, first.name, firstDone)
		}
	})
})

func unfinished(jobs []batchv1.Job) int {
	n := 0
	for i := range jobs {
		if !jobFinished(&jobs[i]) {
			n++
		}
	}
	return n
}

// latestCompletion is when the last of jobs completed.
func latestCompletion(jobs []batchv1.Job) metav1.Time {
	GinkgoHelper()
	var last metav1.Time
	for _, j := range jobs {
		Expect(j.Status.CompletionTime).NotTo(BeNil(), "Job %s completed", j.Name)
		if last.Before(j.Status.CompletionTime) {
			last = *j.Status.CompletionTime
		}
	}
	return last
}
