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
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

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
		register(members["member-a"], admin, map[string]string{"env": "dev", "ring": "a"})
		register(members["member-b"], admin, map[string]string{"env": "dev", "ring": "b"})
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
		durationsBefore := histogramCount("fleetjob_group_duration_seconds")
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
		budgetStatus := func(g Gomega) fleetv1.FleetDisruptionBudgetStatus {
			got := &fleetv1.FleetDisruptionBudget{}
			g.Expect(hubC.Get(ctx, client.ObjectKeyFromObject(fdb), got)).To(Succeed())
			return got.Status
		}
		Eventually(budgetStatus).WithTimeout(10*time.Second).Should(And(
			HaveField("Clusters", BeEquivalentTo(2)), HaveField("DisruptedNodes", BeEquivalentTo(3)), HaveField("WaitingClusters", BeNumerically(">=", 1))),
			"kubectl get fdb shows the budget full and who waits")
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
		Eventually(budgetStatus).WithTimeout(10*time.Second).Should(And(HaveField("DisruptedNodes", BeZero()), HaveField("WaitingClusters", BeZero())),
			"nothing disrupted once both runs ended")
		// Groups start in waves here; each group's duration is still
		// observed once: reboot's one group in each member, patch's 2 in
		// member-a and 3 in member-b.
		Expect(histogramCount("fleetjob_group_duration_seconds") - durationsBefore).To(Equal(uint64(7)))
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

	It("after a hub restart, a run not observed yet counts at its last row: no budget is granted as if it disrupted nothing", func() {
		fdb := disruptionBudget("restart", nil, ptr.To(intstr.FromInt32(2)))
		Expect(hubC.Create(ctx, fdb)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, fdb))).To(Succeed()) })
		a, b := members["member-a"], members["member-b"]
		a.runner.hold(true)
		first := makeClusterJob("first").Clusters(map[string]string{"ring": "a"}).Obj()
		first.Spec.Disruptive = true
		Expect(hubC.Create(ctx, first)).To(Succeed())
		Eventually(func(g Gomega) {
			rows := rowsByName(g, get(first)(g))
			g.Expect(rows["member-a"].Nodes.Running).To(BeEquivalentTo(2), "the row the next hub starts from")
		}).Should(Succeed())
		Expect(jobNodes(a, first)).To(HaveLen(2))

		// The next hub cannot read member-a (every read fails), so it
		// never observes first's nodes there; only its row says they run.
		stopHub()
		var unreadable atomic.Bool
		unreadable.Store(true)
		DeferCleanup(func() { unreadable.Store(false) })
		stopHub = startHub(hubOptions{wrapMember: failReadsOf(a, &unreadable)})
		second := makeClusterJob("second").Clusters(map[string]string{"ring": "b"}).Obj()
		second.Spec.Disruptive = true
		Expect(hubC.Create(ctx, second)).To(Succeed())
		Eventually(func(g Gomega) {
			row := rowsByName(g, get(second)(g))["member-b"]
			g.Expect(row.Reason).To(Equal(fleetv1.ReasonWaitingForBudget))
			g.Expect(row.Message).To(ContainSubstring("caps its 2 clusters at 2 disrupted nodes together; 2 are (default/first in member-a 2)"))
		}).Should(Succeed())
		Consistently(func() int { return len(jobNodes(b, second)) }).WithTimeout(2*time.Second).Should(BeZero(), "no node starts beside first's two")

		// member-a readable again and first's nodes finishing: second runs.
		unreadable.Store(false)
		a.runner.hold(false)
		for _, cj := range []*fleetv1.ClusterJob{first, second} {
			Eventually(phaseOf(cj)).WithTimeout(120 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		}
		Expect(jobNodes(a, first)).To(Equal(nodeNames("a", 4)), "one Job per node")
		Expect(jobNodes(b, second)).To(Equal(nodeNames("b", 7)), "one Job per node")
	})
})

// failReadsOf makes every read of member m through the hub's clients fail
// while on is set, as a member whose API server answers the hub's probe
// but not its reads.
func failReadsOf(m *member, on *atomic.Bool) func(cluster.Cluster) cluster.Cluster {
	return func(cl cluster.Cluster) cluster.Cluster {
		if strings.TrimSuffix(cl.GetConfig().Host, "/") != strings.TrimSuffix(m.env.Config.Host, "/") {
			return cl
		}
		return &unreadableCluster{Cluster: cl, on: on}
	}
}

type unreadableCluster struct {
	cluster.Cluster
	on *atomic.Bool
}

func (c *unreadableCluster) GetClient() client.Client {
	return &unreadableClient{Client: c.Cluster.GetClient(), on: c.on}
}

func (c *unreadableCluster) GetAPIReader() client.Reader {
	return &unreadableReader{Reader: c.Cluster.GetAPIReader(), on: c.on}
}

var errUnreadable = errors.New("injected: the member refuses the hub's reads")

type unreadableClient struct {
	client.Client
	on *atomic.Bool
}

// Get and List fail as the member's API reader does.
func (c *unreadableClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return (&unreadableReader{Reader: c.Client, on: c.on}).Get(ctx, key, obj, opts...)
}

func (c *unreadableClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return (&unreadableReader{Reader: c.Client, on: c.on}).List(ctx, list, opts...)
}

type unreadableReader struct {
	client.Reader
	on *atomic.Bool
}

func (r *unreadableReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r.on.Load() {
		return errUnreadable
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

func (r *unreadableReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if r.on.Load() {
		return errUnreadable
	}
	return r.Reader.List(ctx, list, opts...)
}
