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
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// disruptionSampler watches the Jobs of some runs in every member and
// keeps, at every change it is told of, how many of them are unfinished
// per member and in all: the nodes those runs disrupt as the members see
// them, which a budget must bound at every moment, not only when a test
// happens to look.
type disruptionSampler struct {
	mu      sync.Mutex
	uids    map[string]bool
	open    map[string]map[string]bool // member → Job UID → unfinished
	peak    map[string]int
	peakAll int
	events  int
}

func sampleDisruption(ctx context.Context, runs ...*fleetv1.ClusterJob) *disruptionSampler {
	s := &disruptionSampler{uids: map[string]bool{}, open: map[string]map[string]bool{}, peak: map[string]int{}}
	for _, cj := range runs {
		s.uids[naming.LabelValue(string(cj.UID))] = true
	}
	for name, m := range members {
		wc, err := client.NewWithWatch(m.env.Config, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		w, err := wc.Watch(ctx, &batchv1.JobList{}, client.InNamespace(workNamespace))
		Expect(err).NotTo(HaveOccurred())
		s.open[name] = map[string]bool{}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if job, ok := ev.Object.(*batchv1.Job); ok {
					s.observe(name, ev.Type, job)
				}
			}
		}()
	}
	return s
}

func (s *disruptionSampler) observe(member string, t watch.EventType, job *batchv1.Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.uids[job.Labels[fleetv1.ClusterJobUIDLabel]] {
		return
	}
	s.events++
	if t == watch.Deleted || finished(job) {
		delete(s.open[member], string(job.UID))
	} else {
		s.open[member][string(job.UID)] = true
	}
	all := 0
	for m, jobs := range s.open {
		s.peak[m] = max(s.peak[m], len(jobs))
		all += len(jobs)
	}
	s.peakAll = max(s.peakAll, all)
}

// peaks are the most Jobs seen unfinished at once per member and in all.
func (s *disruptionSampler) peaks() (map[string]int, int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	per := map[string]int{}
	for m, n := range s.peak {
		per[m] = n
	}
	return per, s.peakAll, s.events
}

func disruptionBudget(name string, perCluster, total *intstr.IntOrString) *fleetv1.FleetDisruptionBudget {
	return &fleetv1.FleetDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: fleetv1.FleetDisruptionBudgetSpec{
		ClusterSelector:             &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}},
		MaxDisruptedNodesPerCluster: perCluster, MaxDisruptedNodes: total,
	}}
}

var _ = Describe("Fleet disruption budgets", func() {
	var stopHub func()

	BeforeEach(func() {
		register(members["member-a"], admin, map[string]string{"env": "dev"})
		register(members["member-b"], admin, map[string]string{"env": "dev"})
		stopHub = startHub(hubOptions{})
	})
	AfterEach(func() { cleanUp(stopHub) })

	It("two disruptive runs over the same clusters never pass the budget together, and both complete with one Job per node", func() {
		fdb := disruptionBudget("two-runs", ptr.To(intstr.FromInt32(2)), ptr.To(intstr.FromInt32(3)))
		Expect(hubC.Create(ctx, fdb)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, fdb))).To(Succeed()) })
		reboot := makeClusterJob("reboot").Clusters(map[string]string{"env": "dev"}).Obj()
		patch := makeClusterJob("patch").Batch(3).Clusters(map[string]string{"env": "dev"}).Obj()
		reboot.Spec.Disruptive, patch.Spec.Disruptive = true, true
		for _, m := range members {
			m.runner.hold(true)
		}
		Expect(hubC.Create(ctx, reboot)).To(Succeed())
		Expect(hubC.Create(ctx, patch)).To(Succeed())
		sampler := sampleDisruption(ctx, reboot, patch)

		// Jobs held running: the runs fill the budget exactly, and wait.
		count := func() (int, int) {
			a := len(jobNodes(members["member-a"], reboot)) + len(jobNodes(members["member-a"], patch))
			b := len(jobNodes(members["member-b"], reboot)) + len(jobNodes(members["member-b"], patch))
			return a, b
		}
		Eventually(func(g Gomega) {
			a, b := count()
			g.Expect(a + b).To(Equal(3))
		}).WithTimeout(20 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			var held []string
			for _, cj := range []*fleetv1.ClusterJob{reboot, patch} {
				for _, mr := range memberRuns(g, cj) {
					if mr.Status.Reason == fleetv1.ReasonWaitingForBudget {
						g.Expect(mr.Status.Message).To(HavePrefix("Waiting for budget: "))
						g.Expect(mr.Status.Message).To(ContainSubstring("FleetDisruptionBudget two-runs caps"))
						held = append(held, mr.Spec.Cluster)
					}
				}
			}
			g.Expect(held).NotTo(BeEmpty(), "a held cluster says which budget holds it")
		}).Should(Succeed())
		Consistently(func() int { a, b := count(); return a + b }).WithTimeout(2*time.Second).Should(Equal(3), "nothing starts past the budget")
		a, b := count()
		Expect(a).To(BeNumerically("<=", 2))
		Expect(b).To(BeNumerically("<=", 2))

		// Released: every node of both runs runs, once, within the caps.
		for _, m := range members {
			m.runner.hold(false)
		}
		for _, cj := range []*fleetv1.ClusterJob{reboot, patch} {
			Eventually(phaseOf(cj)).WithTimeout(120 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
			Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)), "one Job per node")
			Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)), "one Job per node")
		}
		per, all, events := sampler.peaks()
		Expect(events).To(BeNumerically(">=", 2*22), "every Job of both runs was seen created and finished")
		Expect(all).To(Equal(3), "the total cap, reached and never passed")
		Expect(per).To(HaveKeyWithValue("member-a", BeNumerically("<=", 2)))
		Expect(per).To(HaveKeyWithValue("member-b", BeNumerically("<=", 2)))
	})

	It("a budget's change wakes the runs it held: raising its cap starts their nodes within seconds", func() {
		fdb := disruptionBudget("raise", ptr.To(intstr.FromInt32(1)), nil)
		Expect(hubC.Create(ctx, fdb)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, fdb))).To(Succeed()) })
		m := members["member-a"]
		m.runner.hold(true)
		cj := makeClusterJob("raise").Clusters(map[string]string{"env": "dev"}).Obj()
		cj.Spec.Disruptive = true
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(m, cj)) }).Should(Equal(1))
		Eventually(func(g Gomega) string { return rowsByName(g, get(cj)(g))["member-a"].Reason }).Should(Equal(fleetv1.ReasonWaitingForBudget))
		Consistently(func() int { return len(jobNodes(m, cj)) }).WithTimeout(time.Second).Should(Equal(1))

		patch := client.MergeFrom(fdb.DeepCopy())
		fdb.Spec.MaxDisruptedNodesPerCluster = ptr.To(intstr.FromString("100%"))
		Expect(hubC.Patch(ctx, fdb, patch)).To(Succeed())
		Eventually(func() int { return len(jobNodes(m, cj)) }).WithTimeout(5*time.Second).Should(Equal(4), "the rest of the group starts, woken by the change")
		m.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(m, cj)).To(Equal(nodeNames("a", 4)))
	})
})
