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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("A ClusterJob deleted mid-run", func() {
	It("leaves no Job, pod or plan in either member", func() {
		// Pods that would run for minutes: the run is surely mid-way.
		cj := makeClusterJob("deleted").RunFor(5 * time.Minute).Obj()
		create(cj)
		for _, m := range f.members {
			Eventually(func(g Gomega) {
				g.Expect(runJobs(m, cj.UID)).To(HaveLen(len(eligibleNodes(m))))
				g.Expect(runPlans(m, cj.UID)).To(HaveLen(1))
			}).Should(Succeed(), "%s runs its Jobs", m.name)
		}
		Expect(f.hub.Delete(ctx, cj)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(f.hub.Get(ctx, client.ObjectKeyFromObject(cj), &fleetv1.ClusterJob{}))
		}).Should(BeTrue(), "the ClusterJob is gone")
		// The finalizer cleaned the members before it let the ClusterJob go.
		for _, m := range f.members {
			Expect(runJobs(m, cj.UID)).To(BeEmpty(), "%s has no Job left", m.name)
			Expect(runConfigMaps(m, cj.UID)).To(BeEmpty(), "%s has no plan or record left", m.name)
			// Pods go by garbage collection, right after their Jobs.
			Eventually(func() int { return len(runPods(m, cj.UID)) }).Should(BeZero(), "%s has no pod left", m.name)
		}
	})
})
