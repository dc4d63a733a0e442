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

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// A spec here may leave a member stopped or unregistered when it fails:
// the suite's AfterEach restores both.
var _ = Describe("Member lifecycle", func() {
	It("keeps the other member going while one member's API server is down, then finishes without re-running nodes", func() {
		up, down := f.member("member-1"), f.member("member-2")
		// One node per group: each member has groups left to run when the
		// outage starts. A real pod takes about 4 s more than it runs for:
		// on kind, where member-1 has 3 nodes, its pods run longer, so that
		// it is still busy once the outage is seen.
		cj := makeClusterJob("outage").Batch(1).RunFor(byProvider(time.Second, 3*time.Second)).Obj()
		create(cj)
		Eventually(func() int { return len(runJobs(down, cj.UID)) }).Should(BeNumerically(">", 0), "%s started", down.name)
		f.stopAPIServer(down)
		Eventually(func(g Gomega) {
			r := row(latest(cj)(g), down.name)
			g.Expect(r.Reachable).To(BeFalse())
			g.Expect(r.UnreachableSince).NotTo(BeNil())
		}).WithTimeout(30*time.Second).Should(Succeed(), "%s is reported unreachable", down.name)
		// The other member starts a new group while this one is down.
		groups := len(recorders[up.name].groupIndicesSeen(cj.UID))
		Eventually(func() int { return len(recorders[up.name].groupIndicesSeen(cj.UID)) }).Should(BeNumerically(">", groups), "%s keeps going", up.name)
		// Back well within the unreachable timeout (20 s).
		f.startAPIServer(down)
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		Expect(row(got, down.name).Reachable).To(BeTrue())
		for _, m := range f.members {
			expectRun(m, recorders[m.name], cj, batches(names(eligibleNodes(m)), 1))
		}
	})

	It("fails a member whose registration is deleted mid-run after the unreachable timeout", func() {
		kept, dropped := f.member("member-1"), f.member("member-2")
		// member-2 must still run when the hub loses it: 3 groups of 2 s on
		// kwok; on kind its 2 nodes make one group, whose pods run longer.
		cj := makeClusterJob("unregistered").Batch(3).RunFor(byProvider(2*time.Second, 10*time.Second)).Obj()
		create(cj)
		Eventually(func() int { return len(runJobs(dropped, cj.UID)) }).Should(BeNumerically(">", 0), "%s started", dropped.name)
		f.unregister(dropped)
		Eventually(func(g Gomega) {
			r := row(latest(cj)(g), dropped.name)
			g.Expect(r.Reachable).To(BeFalse())
			g.Expect(r.Message).To(ContainSubstring("no registration Secret"))
		}).Should(Succeed(), "%s is reported unreachable", dropped.name)
		got := waitPhase(cj, fleetv1.PhaseFailed)
		Expect(row(got, dropped.name).Phase).To(Equal(fleetv1.ClusterFailed))
		Expect(row(got, dropped.name).Reason).To(Equal("UnreachableTimeout"))
		Expect(row(got, kept.name).Phase).To(Equal(fleetv1.ClusterCompleted))
		expectRun(kept, recorders[kept.name], cj, batches(names(eligibleNodes(kept)), 3))
		// Registered again, so that cleanup can empty it.
		mark := logMark()
		f.register(dropped)
		waitLogged(mark, "Engaged member cluster", fmt.Sprintf("%q", dropped.name))
	})

	It("takes the members registered when a run starts: one registered later gets no Job of it", func() {
		early, late := f.member("member-1"), f.member("member-2")
		f.unregister(late)
		cj := makeClusterJob("snapshot").Batch(3).RunFor(2 * time.Second).Obj()
		create(cj)
		Eventually(func(g Gomega) {
			g.Expect(latest(cj)(g).Status.Clusters).To(ConsistOf(HaveField("Name", early.name)))
		}).Should(Succeed(), "the run took its members")
		mark := logMark()
		f.register(late)
		waitLogged(mark, "Engaged member cluster", fmt.Sprintf("%q", late.name))
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		Expect(got.Status.Clusters).To(ConsistOf(HaveField("Name", early.name)))
		expectRun(early, recorders[early.name], cj, batches(names(eligibleNodes(early)), 3))
		expectNoRun(late, recorders[late.name], cj)
	})
})
