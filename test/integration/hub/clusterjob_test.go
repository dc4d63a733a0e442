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
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// clusterJobWrapper builds test ClusterJobs: makeClusterJob("x").Batch(2).Obj().
type clusterJobWrapper struct{ fleetv1.ClusterJob }

// makeClusterJob returns a ClusterJob selecting every cluster, strategy all.
func makeClusterJob(name string) *clusterJobWrapper {
	return &clusterJobWrapper{fleetv1.ClusterJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: fleetv1.ClusterJobSpec{
			ClusterSelector: &metav1.LabelSelector{},
			Strategy:        fleetv1.Strategy{Type: fleetv1.StrategyAll},
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](0),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "work", Image: "busybox"}},
				}},
			}},
		},
	}}
}

// Batch sets spec.strategy to batch of size, alphabetical.
func (w *clusterJobWrapper) Batch(size int32) *clusterJobWrapper {
	w.Spec.Strategy = fleetv1.Strategy{Type: fleetv1.StrategyBatch, Batch: &fleetv1.BatchStrategy{Size: size, Order: fleetv1.BatchOrderAlphabetical}}
	return w
}

// Exit sets spec.failureStrategy to exit.
func (w *clusterJobWrapper) Exit() *clusterJobWrapper {
	w.Spec.FailureStrategy = fleetv1.FailureStrategyExit
	return w
}

// Policy sets spec.failurePolicy.
func (w *clusterJobWrapper) Policy(p fleetv1.FailurePolicy) *clusterJobWrapper {
	w.Spec.FailurePolicy = &p
	return w
}

// Clusters sets spec.clusterSelector.matchLabels.
func (w *clusterJobWrapper) Clusters(labels map[string]string) *clusterJobWrapper {
	w.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: labels}
	return w
}

// MaxConcurrentClusters sets spec.clusterRollout.
func (w *clusterJobWrapper) MaxConcurrentClusters(n int32) *clusterJobWrapper {
	w.Spec.ClusterRollout = &fleetv1.ClusterRollout{MaxConcurrentClusters: n}
	return w
}

// Suspend sets spec.suspend.
func (w *clusterJobWrapper) Suspend(s bool) *clusterJobWrapper {
	w.Spec.Suspend = ptr.To(s)
	return w
}

// Obj returns the ClusterJob.
func (w *clusterJobWrapper) Obj() *fleetv1.ClusterJob { return &w.ClusterJob }

// get reads cj and its MemberRuns, and returns cj with every cluster's row
// in Status.Clusters, sorted by cluster, as `kubectl fleetjob status` shows
// them: the hub writes the rows into the MemberRuns, not the ClusterJob.
func get(cj *fleetv1.ClusterJob) func(Gomega) *fleetv1.ClusterJob {
	return getOn(hubC, cj)
}

// getOn is get from the hub API server c.
func getOn(c client.Client, cj *fleetv1.ClusterJob) func(Gomega) *fleetv1.ClusterJob {
	return func(g Gomega) *fleetv1.ClusterJob {
		out := &fleetv1.ClusterJob{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cj), out)).To(Succeed())
		g.Expect(out.Status.Clusters).To(BeEmpty(), "the hub writes rows into MemberRuns")
		for _, mr := range memberRunsOn(g, c, out) {
			out.Status.Clusters = append(out.Status.Clusters, mr.Status.Row())
		}
		return out
	}
}

// memberRuns are cj's MemberRuns that have a row, sorted by cluster.
func memberRuns(g Gomega, cj *fleetv1.ClusterJob) []fleetv1.MemberRun {
	return memberRunsOn(g, hubC, cj)
}

func memberRunsOn(g Gomega, c client.Client, cj *fleetv1.ClusterJob) []fleetv1.MemberRun {
	list := &fleetv1.MemberRunList{}
	g.Expect(c.List(ctx, list, client.InNamespace(cj.Namespace),
		client.MatchingLabels{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID))})).To(Succeed())
	runs := slices.DeleteFunc(list.Items, func(mr fleetv1.MemberRun) bool { return mr.Status.Name == "" })
	slices.SortFunc(runs, func(a, b fleetv1.MemberRun) int { return strings.Compare(a.Spec.Cluster, b.Spec.Cluster) })
	return runs
}

func phaseOf(cj *fleetv1.ClusterJob) func(Gomega) fleetv1.Phase {
	return func(g Gomega) fleetv1.Phase { return get(cj)(g).Status.Phase }
}

// jobNodes maps each node of a member that has a Job of cj to its count.
func jobNodes(m *member, cj *fleetv1.ClusterJob) map[string]int {
	out := map[string]int{}
	for _, j := range memberJobs(m) {
		if j.Labels[fleetv1.ClusterJobUIDLabel] == naming.LabelValue(string(cj.UID)) {
			out[j.Annotations[fleetv1.NodeAnnotation]]++
		}
	}
	return out
}

func nodeNames(prefix string, n int) map[string]int {
	out := map[string]int{}
	for i := 1; i <= n; i++ {
		out[fmt.Sprintf("%s-node-%d", prefix, i)] = 1
	}
	return out
}

// pinnedNode is the node a Job's required node affinity names.
func pinnedNode(j batchv1.Job) string {
	terms := j.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for _, f := range terms[0].MatchFields {
		if f.Key == "metadata.name" && len(f.Values) == 1 {
			return f.Values[0]
		}
	}
	return ""
}

var _ = Describe("ClusterJob across two members", func() {
	var stopHub func()

	BeforeEach(func() {
		register(members["member-a"], admin, map[string]string{"env": "dev"})
		register(members["member-b"], admin, map[string]string{"env": "prod"})
	})

	AfterEach(func() { cleanUp(stopHub) })

	It("runs batches group after group on every node of both members, one Job per node", func() {
		stopHub = startHub(hubOptions{})
		handoffsBefore := histogramCount("fleetjob_group_handoff_seconds")
		durationsBefore := histogramCount("fleetjob_group_duration_seconds")
		cj := makeClusterJob("batches").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		// The hub measures each hand-off itself: 1 in member-a (2 groups),
		// 3 in member-b (4 groups); each group's duration, the last ones
		// too; and it counts its watches of members.
		Expect(histogramCount("fleetjob_group_handoff_seconds") - handoffsBefore).To(Equal(uint64(4)))
		Expect(histogramCount("fleetjob_group_duration_seconds") - durationsBefore).To(Equal(uint64(6)))
		for _, m := range []string{"member-a", "member-b"} {
			Expect(counterValue("fleetjob_member_watch_requests_total", map[string]string{"member_cluster": m, "resource": "jobs"})).
				To(BeNumerically(">", 0), "watches of Jobs in %s", m)
		}

		got := get(cj)(Default)
		Expect(meta.IsStatusConditionTrue(got.Status.Conditions, fleetv1.ConditionComplete)).To(BeTrue())
		Expect(got.Status.Summary.Nodes).To(Equal(fleetv1.NodeCounts{Total: 11, Succeeded: 11}))
		Expect(got.Status.Summary.ClusterProgress).To(Equal("2/2"))
		Expect(got.Status.Clusters).To(HaveLen(2))
		Expect(got.Status.Clusters[0].Groups).To(Equal(fleetv1.GroupCounts{Total: 2, Completed: 2}))
		Expect(got.Status.Clusters[1].Groups).To(Equal(fleetv1.GroupCounts{Total: 4, Completed: 4}))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)))
		for _, m := range members {
			for _, j := range memberJobs(m) {
				Expect(pinnedNode(j)).To(Equal(j.Annotations[fleetv1.NodeAnnotation]), "Job %s", j.Name)
				Expect(j.Spec.Template.Spec.NodeName).To(BeEmpty())
			}
			Expect(m.runner.overlapsSeen()).To(BeEmpty(), "two groups of one run ran together in %s", m.name)
		}
		// How soon each group started after the previous one ended, as a
		// report (the runner ticks every 100ms): a regression to polling
		// shows here as seconds.
		handoffs := members["member-b"].runner.handoffs(naming.LabelValue(string(got.UID)), 4)
		Expect(handoffs).To(HaveLen(3))
		AddReportEntry("group handoff in member-b (3 handoffs)", fmt.Sprint(handoffs))
		// Alphabetical batches: b-node-1,b-node-2 first, b-node-7 last.
		for _, j := range memberJobs(members["member-b"]) {
			want := map[string]string{"b-node-1": "batch-1", "b-node-2": "batch-1", "b-node-7": "batch-4"}[j.Annotations[fleetv1.NodeAnnotation]]
			if want != "" {
				Expect(j.Annotations[fleetv1.GroupAnnotation]).To(Equal(want))
			}
		}
	})

	It("runs one group per zone, in sorted order, on both members", func() {
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("per-zone").Obj()
		cj.Spec.Strategy = fleetv1.Strategy{Type: fleetv1.StrategyPerNodeGroup,
			PerNodeGroup: &fleetv1.PerNodeGroupStrategy{GroupLabel: "topology.kubernetes.io/zone"}}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		for _, row := range get(cj)(Default).Status.Clusters {
			Expect(row.Groups).To(Equal(fleetv1.GroupCounts{Total: 2, Completed: 2}), "cluster %s", row.Name)
		}
		for _, m := range members {
			for _, j := range memberJobs(m) {
				node := &corev1.Node{}
				Expect(m.client.Get(ctx, client.ObjectKey{Name: j.Annotations[fleetv1.NodeAnnotation]}, node)).To(Succeed())
				zone := node.Labels["topology.kubernetes.io/zone"]
				Expect(j.Annotations[fleetv1.GroupAnnotation]).To(Equal(zone), "Job %s", j.Name)
				// Groups run in sorted order of the label value.
				Expect(j.Labels[fleetv1.GroupIndexLabel]).To(Equal(map[string]string{"zone-0": "0", "zone-1": "1"}[zone]))
			}
			Expect(m.runner.overlapsSeen()).To(BeEmpty())
		}
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)))
	})

	It("keeps going after a failed node and names it in status", func() {
		stopHub = startHub(hubOptions{})
		members["member-a"].runner.failOn("a-node-2")
		cj := makeClusterJob("keepgoing").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)), "every group still ran")
		row := got.Status.Clusters[0]
		Expect(row.Phase).To(Equal(fleetv1.ClusterFailed))
		Expect(row.FailedNodes).To(HaveLen(1))
		Expect(row.FailedNodes[0].Node).To(Equal("a-node-2"))
		Expect(row.FailedNodes[0].Reason).To(Equal(batchv1.JobReasonBackoffLimitExceeded))
		Expect(row.FailedNodes[0].ExitCode).To(HaveValue(BeEquivalentTo(3)), "read from the node's pod")
		Expect(row.FailedNodes[0].Message).To(Equal("disk /var is full on a-node-2"), "the container's termination message")
		Expect(got.Status.Clusters[1].Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(meta.IsStatusConditionTrue(got.Status.Conditions, fleetv1.ConditionFailed)).To(BeTrue())

		By("publishing each cluster's plan and node results on its MemberRun, as they ended")
		for _, mr := range memberRuns(Default, cj) {
			published := mr.Status.NodeResults
			Expect(published).NotTo(BeNil(), "cluster %s", mr.Spec.Cluster)
			Expect(published.Nodes).To(Equal(mr.Status.Nodes), "cluster %s: the counts of the row that ended it", mr.Spec.Cluster)
			doc, err := noderesults.Decode(published.Data)
			Expect(err).NotTo(HaveOccurred())
			Expect(doc.Plan.Groups).To(HaveLen(int(mr.Status.Groups.Total)))
			phases := map[string]string{}
			for _, n := range doc.Nodes {
				phases[n.Name] = n.Phase
				Expect(n.Group).To(Equal(slices.IndexFunc(doc.Plan.Groups, func(g plan.Group) bool { return slices.Contains(g.Nodes, n.Name) })))
			}
			want := map[string]string{}
			for node := range jobNodes(members[mr.Spec.Cluster], cj) {
				want[node] = noderesults.Succeeded
			}
			if mr.Spec.Cluster == "member-a" {
				want["a-node-2"] = noderesults.Failed
				failed := doc.Nodes[slices.IndexFunc(doc.Nodes, func(n noderesults.Node) bool { return n.Name == "a-node-2" })]
				Expect(failed.ExitCode).To(HaveValue(BeEquivalentTo(3)))
				Expect(failed.Output).To(Equal("disk /var is full on a-node-2"))
			}
			Expect(phases).To(Equal(want), "cluster %s", mr.Spec.Cluster)
		}
	})

	It("starts no new group anywhere after a failure with exit", func() {
		stopHub = startHub(hubOptions{})
		members["member-a"].runner.failOn("a-node-1")
		cj := makeClusterJob("exit").Batch(2).Exit().MaxConcurrentClusters(1).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(map[string]int{"a-node-1": 1, "a-node-2": 1}))
		Expect(jobNodes(members["member-b"], cj)).To(BeEmpty())
		got := get(cj)(Default)
		Expect(got.Status.Clusters[1].Reason).To(Equal("Stopped"))
	})

	It("runs only in the clusters clusterSelector picks", func() {
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("prod-only").Clusters(map[string]string{"env": "prod"}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(get(cj)(Default).Status.Clusters).To(HaveLen(1))
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)))
		Expect(jobNodes(members["member-a"], cj)).To(BeEmpty())
	})

	It("starts the second cluster only after the first finished under maxConcurrentClusters 1", func() {
		stopHub = startHub(hubOptions{})
		members["member-a"].runner.hold(true)
		cj := makeClusterJob("one-at-a-time").MaxConcurrentClusters(1).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(members["member-a"], cj) }).Should(Equal(nodeNames("a", 4)))
		Consistently(func() map[string]int { return jobNodes(members["member-b"], cj) }).WithTimeout(2 * time.Second).Should(BeEmpty())
		Expect(get(cj)(Default).Status.Clusters[1].Reason).To(Equal("WaitingForTurn"))
		members["member-a"].runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)))
	})

	It("starts nothing while suspended and resumes", func() {
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("suspended").Batch(3).Suspend(true).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(meta.IsStatusConditionTrue(get(cj)(g).Status.Conditions, fleetv1.ConditionSuspended)).To(BeTrue())
		}).Should(Succeed())
		Consistently(func() []batchv1.Job { return memberJobs(members["member-b"]) }).WithTimeout(2 * time.Second).Should(BeEmpty())
		patch := client.MergeFrom(get(cj)(Default).DeepCopy())
		cj = get(cj)(Default)
		cj.Spec.Suspend = ptr.To(false)
		Expect(hubC.Patch(ctx, cj, patch)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
	})

	It("creates no duplicate Job when the controller restarts mid-run", func() {
		stopHub = startHub(hubOptions{})
		members["member-b"].runner.hold(true)
		cj := makeClusterJob("restart").Batch(3).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(members["member-b"], cj)) }).Should(Equal(3))
		stopHub()
		stopHub = startHub(hubOptions{})
		members["member-b"].runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))
	})

	It("removes every Job and plan from both members when deleted mid-run", func() {
		stopHub = startHub(hubOptions{})
		for _, m := range members {
			m.runner.hold(true)
		}
		cj := makeClusterJob("deleted").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(members["member-a"], cj)) + len(jobNodes(members["member-b"], cj)) }).Should(Equal(11))
		Expect(hubC.Delete(ctx, cj)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(hubC.Get(ctx, client.ObjectKeyFromObject(cj), &fleetv1.ClusterJob{}))
		}).
			WithTimeout(30 * time.Second).Should(BeTrue())
		for _, m := range members {
			Expect(memberJobs(m)).To(BeEmpty())
			cms := &corev1.ConfigMapList{}
			Expect(m.client.List(ctx, cms, client.InNamespace(workNamespace), client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue})).To(Succeed())
			Expect(cms.Items).To(BeEmpty())
		}
	})

	It("keeps serving a healthy member registered after one with forbidden credentials", func() {
		unregister("member-a")
		unregister("member-b")
		// The stock provider hangs for good on this one; ours reports it.
		register(&member{name: "forbidden", env: members["member-a"].env}, envtest.User{Name: "nobody"}, nil)
		stopHub = startHub(hubOptions{unreachableTimeout: 5 * time.Second})
		register(members["member-b"], admin, map[string]string{"env": "prod"})
		cj := makeClusterJob("with-forbidden").Obj()
		Eventually(func(g Gomega) {
			secrets := &corev1.SecretList{}
			g.Expect(hubC.List(ctx, secrets, client.InNamespace(workNamespace))).To(Succeed())
			g.Expect(secrets.Items).To(HaveLen(2))
		}).Should(Succeed())
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(members["member-b"], cj) }).WithTimeout(30 * time.Second).Should(Equal(nodeNames("b", 7)))
		Eventually(func(g Gomega) {
			row := get(cj)(g).Status.Clusters[0]
			g.Expect(row.Name).To(Equal("forbidden"))
			g.Expect(row.Reachable).To(BeFalse())
			g.Expect(row.Message).To(ContainSubstring("may not"))
		}).Should(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		Expect(got.Status.Clusters[0].Reason).To(Equal("UnreachableTimeout"))
		Expect(got.Status.Clusters[1].Phase).To(Equal(fleetv1.ClusterCompleted))
	})
})

// cleanUp deletes every ClusterJob while the hub runs, so its finalizer
// empties the members, then stops the hub and resets the fleet.
func cleanUp(stopHub func()) {
	// Should a wait below fail (a spec failed with a member refusing
	// deletes, say), the hub must stop all the same: left running, it goes
	// on as the suite's hub (testHubID) beside every later spec's hubs, and
	// takes their runs and registrations for its own.
	clean := false
	defer func() {
		if !clean {
			stopHub()
			forgetFleet()
		}
	}()
	list := &fleetv1.ClusterJobList{}
	Expect(hubC.List(ctx, list)).To(Succeed())
	for i := range list.Items {
		Expect(client.IgnoreNotFound(hubC.Delete(ctx, &list.Items[i]))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		g.Expect(hubC.List(ctx, list)).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}).WithTimeout(30 * time.Second).Should(Succeed())
	stopHub()
	unregister("forbidden")
	for name := range members {
		unregister(name)
	}
	for _, m := range members {
		Eventually(func() []batchv1.Job { return memberJobs(m) }).Should(BeEmpty())
		m.runner.reset()
	}
	clean = true
}

// forgetFleet is what cleanUp does, with the hub stopped, when its hub could
// not clean up: it drops the finalizers of what is left in the hub, deletes
// the registrations and every fleetjob object of the members, and resets the
// runners, so that the next spec starts on an empty fleet. Best effort, no
// assertion: it runs while a failure unwinds, and that failure is the one to
// report.
func forgetFleet() {
	cjs, mrs := &fleetv1.ClusterJobList{}, &fleetv1.MemberRunList{}
	if hubC.List(ctx, mrs) == nil {
		for i := range mrs.Items {
			mr := &mrs.Items[i]
			patch := client.MergeFrom(mr.DeepCopy())
			mr.Finalizers = nil
			_ = hubC.Patch(ctx, mr, patch)
			_ = hubC.Delete(ctx, mr)
		}
	}
	if hubC.List(ctx, cjs) == nil {
		for i := range cjs.Items {
			cj := &cjs.Items[i]
			patch := client.MergeFrom(cj.DeepCopy())
			cj.Finalizers = nil
			_ = hubC.Patch(ctx, cj, patch)
			_ = hubC.Delete(ctx, cj)
		}
	}
	names := []string{"forbidden"}
	for name := range members {
		names = append(names, name)
	}
	for _, name := range names {
		_ = hubC.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workNamespace}})
	}
	managed := client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue}
	for _, m := range members {
		jobs, cms := &batchv1.JobList{}, &corev1.ConfigMapList{}
		if m.client.List(ctx, jobs, managed) == nil {
			for i := range jobs.Items {
				_ = m.client.Delete(ctx, &jobs.Items[i], client.PropagationPolicy(metav1.DeletePropagationBackground))
			}
		}
		if m.client.List(ctx, cms, managed) == nil {
			for i := range cms.Items {
				_ = m.client.Delete(ctx, &cms.Items[i])
			}
		}
		m.runner.reset()
	}
}
