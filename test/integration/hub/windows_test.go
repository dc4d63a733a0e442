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
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// shiftedClock is the real clock moved to where a spec puts it: the hub
// sees time pass as it does, from a chosen instant, so a spec can start a
// run just before a window closes without waiting for one.
type shiftedClock struct{ offset atomic.Int64 }

func (c *shiftedClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *shiftedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// set moves the clock so that it reads at now.
func (c *shiftedClock) set(at time.Time) { c.offset.Store(int64(time.Until(at))) }

// real is the real time at which the clock reads t.
func (c *shiftedClock) real(t time.Time) time.Time { return t.Add(-time.Duration(c.offset.Load())) }

var _ = Describe("Maintenance windows", func() {
	var stopHub func()
	clk := &shiftedClock{}

	BeforeEach(func() {
		register(members["member-a"], admin, map[string]string{"env": "dev"})
		clk.set(time.Now())
		stopHub = startHub(hubOptions{clock: clk})
	})
	AfterEach(func() { cleanUp(stopHub) })

	It("a window closing mid-group holds the next group, which starts by itself when the next window opens", func() {
		m := members["member-a"]
		// Open one minute in two (Asia/Kolkata: a half-hour offset from
		// UTC, which the minutes do not see). The hub's clock is put 45 s
		// into the last window opened (at most a minute and a quarter
		// off: no other bound notices): the first group starts in it, and
		// the window closes while the group runs.
		opens := time.Now().Truncate(2 * time.Minute)
		next := opens.Add(2 * time.Minute)
		cj := makeClusterJob("window").Batch(2).Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.MaintenanceWindows = []fleetv1.MaintenanceWindow{{Schedule: "*/2 * * * *", Duration: metav1.Duration{Duration: time.Minute}, TimeZone: "Asia/Kolkata"}}
		m.runner.stallOn("a-node-1", "a-node-2")
		DeferCleanup(m.runner.unstall, "a-node-1", "a-node-2")
		clk.set(opens.Add(45 * time.Second))
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(15*time.Second).
			Should(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}), "the first group starts in the open window")

		Eventually(clk.Now).WithTimeout(20*time.Second).Should(BeTemporally(">", opens.Add(time.Minute)), "the window closes")
		m.runner.unstall("a-node-1", "a-node-2")
		Eventually(func(g Gomega) {
			runs := memberRuns(g, get(cj)(g))
			g.Expect(runs).To(HaveLen(1))
			g.Expect(runs[0].Status.Reason).To(Equal(fleetv1.ReasonWaitingForWindow))
			g.Expect(runs[0].Status.Message).To(Equal("Waiting for window: next opens " + next.Format(time.RFC3339)))
			g.Expect(runs[0].Status.Nodes.Succeeded).To(BeEquivalentTo(2))
		}).WithTimeout(15 * time.Second).Should(Succeed())
		Expect(jobNodes(m, cj)).To(HaveLen(2), "no Job of the next group outside the window")

		Eventually(phaseOf(cj)).WithTimeout(90 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(m, cj)).To(Equal(nodeNames("a", 4)), "one Job per node")
		// From the Jobs: the second group was created once the next
		// window opened, and within seconds of it (times have a
		// resolution of 1 s).
		var secondCreated time.Time
		for _, j := range memberJobs(m) {
			if j.Labels[fleetv1.ClusterJobUIDLabel] == naming.LabelValue(string(cj.UID)) && j.Labels[fleetv1.GroupIndexLabel] == "1" {
				secondCreated = j.CreationTimestamp.Time
			}
		}
		Expect(secondCreated).To(BeTemporally(">=", clk.real(next).Add(-time.Second)))
		Expect(secondCreated).To(BeTemporally("<", clk.real(next).Add(5*time.Second)))
	})

	It("a set's windows hold its clusters, and a change of the set that opens one starts the run within seconds", func() {
		m := members["member-a"]
		set := &fleetv1.ClusterSet{}
		Expect(hubC.Get(ctx, client.ObjectKey{Name: fleetv1.DefaultClusterSet}, set)).To(Succeed())
		setWindows := func(ws ...fleetv1.MaintenanceWindow) {
			GinkgoHelper()
			patch := client.MergeFrom(set.DeepCopy())
			set.Spec.MaintenanceWindows = ws
			Expect(hubC.Patch(ctx, set, patch)).To(Succeed())
		}
		// Closed now: it opens in twelve hours, daily (well within
		// maxWindowWait).
		later := clk.Now().Add(12 * time.Hour).UTC()
		setWindows(fleetv1.MaintenanceWindow{Schedule: fmt.Sprintf("%d %d * * *", later.Minute(), later.Hour()), Duration: metav1.Duration{Duration: time.Minute}})
		DeferCleanup(setWindows)
		cj := makeClusterJob("set-window").Clusters(map[string]string{"env": "dev"}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			runs := memberRuns(g, get(cj)(g))
			g.Expect(runs).To(HaveLen(1))
			g.Expect(runs[0].Status.Phase).To(Equal(fleetv1.ClusterPending))
			g.Expect(runs[0].Status.Reason).To(Equal(fleetv1.ReasonWaitingForWindow))
			g.Expect(runs[0].Status.Message).To(Equal("Waiting for window: next opens " + later.Truncate(time.Minute).Format(time.RFC3339)))
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(jobNodes(m, cj)).To(BeEmpty())

		// The set's owner opens a window now: the run does not wait for
		// the wake-up set for twelve hours from now.
		setWindows(fleetv1.MaintenanceWindow{Schedule: "* * * * *", Duration: metav1.Duration{Duration: time.Hour}})
		Eventually(func() map[string]int { return jobNodes(m, cj) }).WithTimeout(10 * time.Second).Should(Equal(nodeNames("a", 4)))
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
	})

	It("a window that never opens fails the run at once, NoMaintenanceWindow, and creates no Job", func() {
		cj := makeClusterJob("no-window").Batch(2).Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.MaintenanceWindows = []fleetv1.MaintenanceWindow{{Schedule: "0 0 30 2 *", Duration: metav1.Duration{Duration: time.Hour}}}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Reason).To(Equal(fleetv1.ReasonNoMaintenanceWindow))
		Expect(row.Message).To(ContainSubstring("within 840h0m0s (spec.maxWindowWait)"))
		Expect(jobNodes(members["member-a"], cj)).To(BeEmpty())
	})
})
