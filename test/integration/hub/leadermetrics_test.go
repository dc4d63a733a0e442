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
	"github.com/prometheus/client_golang/prometheus"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Run gauges with two hub replicas", func() {
	// stopFirst stops the replica that leads first, nil once it stopped;
	// stopHub the other, which cleanUp stops.
	var stopFirst, stopHub func()

	BeforeEach(func() { register(members["member-a"], admin, nil) })

	AfterEach(func() {
		if stopFirst != nil {
			stopFirst()
			stopFirst = nil
		}
		cleanUp(stopHub)
	})

	// Prometheus scrapes every pod of the hub: a sum over them must count
	// each run once, whatever the replica count.
	It("are exported by the leader only, then by the replica that takes over", func() {
		first, second := prometheus.NewRegistry(), prometheus.NewRegistry()
		stopFirst = startHub(hubOptions{leaderElect: true, collector: first})
		Eventually(leaseHolder).ShouldNot(BeEmpty(), "the first replica leads")
		stopHub = startHub(hubOptions{leaderElect: true, collector: second})
		cj := makeClusterJob("counted-once").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))

		Eventually(runNodes(first, cj)).Should(HaveKeyWithValue("Succeeded", 4.0), "the leader exports the run")
		Expect(first.Gather()).To(ContainElement(HaveField("GetName()", "fleetjob_clusterjobs")))
		// Were it not gated, the waiting replica's collector would list
		// the same objects from its own cache and export them here.
		Expect(second.Gather()).To(BeEmpty(), "the replica waiting for the lease exports no gauge")

		stopFirst()
		stopFirst = nil
		Eventually(runNodes(second, cj)).WithTimeout(30*time.Second).Should(HaveKeyWithValue("Succeeded", 4.0), "the new leader exports the run")
		// The member gauge is read from the registrations and the
		// MemberClusters, not from the new leader's registry: it counts
		// member-a reachable as published, before the new leader engaged it.
		Expect(reachableMembers(second)()).To(Equal(1.0), "the new leader exports the members")
		// cleanUp's deletion cleans member-a up at once once the new
		// leader engaged it (registry is the second replica's).
		Eventually(func() bool { m, _ := registry.Member("member-a"); return m.Engaged }).WithTimeout(30 * time.Second).Should(BeTrue())
	})
})

// runNodes reads fleetjob_run_nodes of cj in member-a from reg, by phase.
func runNodes(reg prometheus.Gatherer, cj *fleetv1.ClusterJob) func(Gomega) map[string]float64 {
	want := map[string]string{"clusterjob_namespace": cj.Namespace, "clusterjob": cj.Name, "member_cluster": "member-a"}
	return func(g Gomega) map[string]float64 {
		families, err := reg.Gather()
		g.Expect(err).NotTo(HaveOccurred())
		out := map[string]float64{}
		for _, f := range families {
			if f.GetName() != "fleetjob_run_nodes" {
				continue
			}
			for _, m := range f.GetMetric() {
				have := map[string]string{}
				for _, l := range m.GetLabel() {
					have[l.GetName()] = l.GetValue()
				}
				if matches(have, want) {
					out[have["phase"]] = m.GetGauge().GetValue()
				}
			}
		}
		return out
	}
}

// reachableMembers reads fleetjob_member_clusters{reachable="true"} from
// reg, summed over reasons.
func reachableMembers(reg prometheus.Gatherer) func() float64 {
	return func() float64 {
		families, err := reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		n := 0.0
		for _, f := range families {
			if f.GetName() != "fleetjob_member_clusters" {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "reachable" && l.GetValue() == "true" {
						n += m.GetGauge().GetValue()
					}
				}
			}
		}
		return n
	}
}
