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
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/controller"
)

var _ = Describe("Two hub replicas electing a leader", func() {
	// stopFirst stops the first replica, nil once it stopped; stopHub the
	// second, which cleanUp stops.
	var stopFirst, stopHub func()

	BeforeEach(func() { register(members["member-a"], admin, nil) })

	AfterEach(func() {
		if stopFirst != nil {
			stopFirst()
			stopFirst = nil
		}
		cleanUp(stopHub)
	})

	// A hub pod deleted for an upgrade or a drain while a run is under
	// way: the replica waiting beside it must lead within seconds, not a
	// lease duration later, and finish the run.
	It("hands the lease to the other replica within 5 s of the leader being asked to stop, and the run goes on", func() {
		a := members["member-a"]
		stopFirst = startHub(hubOptions{leaderElect: true})
		var first string
		Eventually(func(g Gomega) {
			first = leaseHolder(g)
			g.Expect(first).NotTo(BeEmpty())
		}).Should(Succeed())
		stopHub = startHub(hubOptions{leaderElect: true})
		a.runner.hold(true)
		cj := makeClusterJob("handover").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(a, cj) }).Should(Equal(nodeNames("a", 4)))
		Expect(leaseHolder(Default)).To(Equal(first), "the first replica ran the run's start")

		asked := time.Now()
		stopFirst()
		stopFirst = nil
		stopped := time.Since(asked)
		Eventually(leaseHolder).WithTimeout(5*time.Second).WithPolling(20*time.Millisecond).
			Should(And(Not(BeEmpty()), Not(Equal(first))), "the other replica leads")
		AddReportEntry("leader hand-over", "stopped in "+stopped.String()+", other replica leading "+time.Since(asked).String()+" after the stop began")
		a.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)), "one Job per node across the hand-over")
	})
})

// leaseHolder is who holds the hub's leader lease, "" for no one.
func leaseHolder(g Gomega) string {
	lease := &coordinationv1.Lease{}
	err := hubC.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: controller.LeaderElectionID}, lease)
	if isNotFound(err) {
		return ""
	}
	g.Expect(err).NotTo(HaveOccurred())
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}
