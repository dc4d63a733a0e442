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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/controller"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

var _ = Describe("Run history", func() {
	var stopHub func()

	BeforeEach(func() {
		register(members["member-a"], admin, nil)
		register(members["member-b"], admin, nil)
	})
	AfterEach(func() { cleanUp(stopHub) })

	gone := func(cj *fleetv1.ClusterJob) func() bool {
		return func() bool {
			return apierrors.IsNotFound(hubC.Get(ctx, client.ObjectKeyFromObject(cj), &fleetv1.ClusterJob{}))
		}
	}

	It("deletes a run ttlSecondsAfterFinished after it ended, with its MemberRuns, its Jobs and plans in every member and its metric series; keeps a run without one", func() {
		stopHub = startHub(hubOptions{})
		negative := makeClusterJob("negative-ttl").Obj()
		negative.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1)
		err := hubC.Create(ctx, negative)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.ttlSecondsAfterFinished"))

		const ttl = 5 * time.Second
		expiring := makeClusterJob("expiring").Batch(3).Obj()
		expiring.Spec.TTLSecondsAfterFinished = ptr.To(int32(ttl / time.Second))
		kept := makeClusterJob("kept").Obj()
		Expect(hubC.Create(ctx, kept)).To(Succeed())
		Expect(hubC.Create(ctx, expiring)).To(Succeed())

		// All in one look: once Completed, the run is there for ttl more.
		var ended time.Time
		Eventually(func(g Gomega) {
			got := get(expiring)(g)
			g.Expect(got.Status.Phase).To(Equal(fleetv1.PhaseCompleted))
			ended = got.Status.CompletionTime.Time
			g.Expect(jobNodes(members["member-a"], expiring)).To(Equal(nodeNames("a", 4)))
			g.Expect(jobNodes(members["member-b"], expiring)).To(Equal(nodeNames("b", 7)))
			g.Expect(runSeries(g, expiring.Name)).NotTo(BeEmpty(), "the run's metric series while it is there")
		}).WithTimeout(60 * time.Second).Should(Succeed())

		Eventually(gone(expiring)).WithTimeout(60 * time.Second).Should(BeTrue())
		Eventually(func(g Gomega) {
			expired := eventsAbout(g, expiring, fleetv1.ReasonRunExpired)
			g.Expect(expired).To(HaveLen(1))
			g.Expect(expired[0].Type).To(Equal(corev1.EventTypeNormal))
			g.Expect(expired[0].Note).To(HavePrefix("deleting the run and what it left in its clusters: it ended (Completed) "))
			g.Expect(expired[0].Note).To(HaveSuffix(" ago, past spec.ttlSecondsAfterFinished of 5s"))
			g.Expect(expired[0].EventTime.Time).To(BeTemporally(">=", ended.Add(ttl)), "not deleted before its TTL passed")
		}).Should(Succeed())
		runs := &fleetv1.MemberRunList{}
		Expect(hubC.List(ctx, runs, client.MatchingLabels{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(expiring.UID))})).To(Succeed())
		Expect(runs.Items).To(BeEmpty())
		for _, m := range members {
			Expect(jobNodes(m, expiring)).To(BeEmpty(), m.name)
			plans := &corev1.ConfigMapList{}
			Expect(m.client.List(ctx, plans, client.MatchingLabels{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(expiring.UID))})).To(Succeed())
			Expect(plans.Items).To(BeEmpty(), m.name)
		}
		Expect(runSeries(Default, expiring.Name)).To(BeEmpty(), "no metric series of a deleted run")

		// kept, all at once, ended before expiring, which ran in batches:
		// longer ago than ttl. With the hub's default off it stays.
		got := get(kept)(Default)
		Expect(got.Status.Phase).To(Equal(fleetv1.PhaseCompleted))
		Expect(got.Status.CompletionTime.Time).To(BeTemporally("<=", ended))
		Expect(got.DeletionTimestamp).To(BeNil())
		Expect(jobNodes(members["member-a"], kept)).To(Equal(nodeNames("a", 4)))
	})

	It("deletes a run without ttlSecondsAfterFinished after the hub's --ended-run-ttl, and keeps one whose own TTL is longer", func() {
		const hubTTL = 3 * time.Second
		stopHub = startHub(hubOptions{endedRunTTL: hubTTL})
		defaulted := makeClusterJob("defaulted").Obj()
		own := makeClusterJob("own-ttl").Obj()
		own.Spec.TTLSecondsAfterFinished = ptr.To[int32](3600)
		Expect(hubC.Create(ctx, defaulted)).To(Succeed())
		Expect(hubC.Create(ctx, own)).To(Succeed())

		Eventually(gone(defaulted)).WithTimeout(60 * time.Second).Should(BeTrue())
		Eventually(func(g Gomega) {
			expired := eventsAbout(g, defaulted, fleetv1.ReasonRunExpired)
			g.Expect(expired).To(HaveLen(1))
			g.Expect(expired[0].Note).To(HaveSuffix(" ago, past the hub's --ended-run-ttl of 3s"))
		}).Should(Succeed())
		var ownEnd time.Time
		Eventually(func(g Gomega) {
			got := get(own)(g)
			g.Expect(got.Status.Phase).To(Equal(fleetv1.PhaseCompleted))
			ownEnd = got.Status.CompletionTime.Time
		}).WithTimeout(60 * time.Second).Should(Succeed())
		// Past the hub's TTL by a margin, the run with its own is there.
		Consistently(gone(own)).WithTimeout(max(time.Until(ownEnd.Add(hubTTL+2*time.Second)), time.Second)).Should(BeFalse())
		Expect(jobNodes(members["member-b"], own)).To(Equal(nodeNames("b", 7)))
	})

	It("keeps a run past its TTL while a retry of it runs, so that the retry plans every cluster from its record, and deletes it once the retry ended", func() {
		stopHub = startHub(hubOptions{})
		members["member-a"].runner.failOn("a-node-1")
		members["member-b"].runner.failOn("b-node-2")
		parent := makeClusterJob("parent").Obj()
		parent.Spec.TTLSecondsAfterFinished = ptr.To[int32](3600)
		Expect(hubC.Create(ctx, parent)).To(Succeed())
		Eventually(phaseOf(parent)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		members["member-a"].runner.heal("a-node-1")
		members["member-b"].runner.heal("b-node-2")

		// As kubectl fleetjob retry makes it (TTL copied), one cluster at a
		// time: member-b plans only once member-a is done.
		members["member-a"].runner.hold(true)
		retry := makeClusterJob("parent-retry").MaxConcurrentClusters(1).Obj()
		retry.Spec.TTLSecondsAfterFinished = parent.Spec.TTLSecondsAfterFinished
		retry.Spec.RetryOf = &fleetv1.RetryOf{Name: parent.Name}
		Expect(hubC.Create(ctx, retry)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(members["member-a"], retry) }).WithTimeout(30 * time.Second).
			Should(Equal(map[string]int{"a-node-1": 1}))

		// The parent's TTL runs out while its retry runs.
		latest := &fleetv1.ClusterJob{}
		Expect(hubC.Get(ctx, client.ObjectKeyFromObject(parent), latest)).To(Succeed())
		patch := client.MergeFrom(latest.DeepCopy())
		latest.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
		Expect(hubC.Patch(ctx, latest, patch)).To(Succeed())
		Consistently(gone(parent)).WithTimeout(3 * time.Second).Should(BeFalse())
		members["member-a"].runner.hold(false)

		Eventually(phaseOf(retry)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-b"], retry)).To(Equal(map[string]int{"b-node-2": 1}), "member-b planned from the parent's record")
		Eventually(gone(parent)).WithTimeout(30 * time.Second).Should(BeTrue())
		for _, m := range members {
			Eventually(func() map[string]int { return jobNodes(m, parent) }).Should(BeEmpty(), m.name)
		}
		got := get(retry)(Default)
		Expect(got.Status.RetryOf).To(Equal(&fleetv1.RetrySource{Name: parent.Name, UID: string(parent.UID)}), "the retry's record outlives its parent")
		Expect(jobNodes(members["member-a"], retry)).To(Equal(map[string]int{"a-node-1": 1}))
	})
})

// runSeries names the metric series the hub's Collector exports about the
// run name (a label with its name as value), as a scrape of the hub's
// /metrics would show them.
func runSeries(g Gomega, name string) []string {
	reg := prometheus.NewRegistry()
	g.Expect(reg.Register(&controller.Collector{Hub: hubC, RegistrationNamespace: workNamespace})).To(Succeed())
	families, err := reg.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == name {
					out = append(out, f.GetName())
				}
			}
		}
	}
	return out
}
