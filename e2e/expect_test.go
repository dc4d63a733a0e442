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
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// runTimeout bounds a whole run of the suite's ClusterJobs: the longest
// (one node per group on 9 nodes, 2 s a pod) takes about 30 s on a loaded
// 2-core machine.
const runTimeout = 3 * time.Minute

// jobNameLabel is set by the Job controller on a Job's pods.
const jobNameLabel = "batch.kubernetes.io/job-name"

// group is one group of a run as a spec expects it: its name and its nodes.
type group struct {
	name  string
	nodes []string
}

// eligibleNodes are the nodes of m that a Job without tolerations can run
// on (Ready, schedulable, no NoSchedule/NoExecute taint: a kind control
// plane is not), by name.
func eligibleNodes(m *member) []corev1.Node {
	GinkgoHelper()
	list := &corev1.NodeList{}
	Expect(m.client.List(ctx, list)).To(Succeed())
	var out []corev1.Node
	for _, n := range list.Items {
		if n.Spec.Unschedulable || !nodeReady(n) || slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}) {
			continue
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b corev1.Node) int { return cmp.Compare(a.Name, b.Name) })
	Expect(out).NotTo(BeEmpty(), "member %s has no node to run on", m.name)
	return out
}

// nodeCount is the number of nodes of m, eligible or not: the nodes a run
// without a nodeSelector counts (the ineligible ones as skipped).
func nodeCount(m *member) int {
	GinkgoHelper()
	list := &corev1.NodeList{}
	Expect(m.client.List(ctx, list)).To(Succeed())
	return len(list.Items)
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func names(nodes []corev1.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// batches cuts nodes, in order, into groups batch-1, batch-2, ... of size.
func batches(nodes []string, size int) []group {
	var out []group
	for c := range slices.Chunk(nodes, size) {
		out = append(out, group{name: fmt.Sprintf("batch-%d", len(out)+1), nodes: c})
	}
	return out
}

// byLabel makes one group per value of label in sorted order, nodes by
// name, and the unlabelled nodes last as <none> unless ignoreNull.
func byLabel(nodes []corev1.Node, label string, ignoreNull bool) []group {
	values := map[string][]string{}
	var unlabelled []string
	for _, n := range nodes {
		if v, ok := n.Labels[label]; ok {
			values[v] = append(values[v], n.Name)
		} else {
			unlabelled = append(unlabelled, n.Name)
		}
	}
	var out []group
	for _, v := range slices.Sorted(maps.Keys(values)) {
		out = append(out, group{name: v, nodes: values[v]})
	}
	if len(unlabelled) > 0 && !ignoreNull {
		out = append(out, group{name: "<none>", nodes: unlabelled})
	}
	return out
}

// runJobs are m's Jobs of run uid, read from the API server.
func runJobs(m *member, uid types.UID) []batchv1.Job {
	GinkgoHelper()
	list := &batchv1.JobList{}
	Expect(m.client.List(ctx, list, client.InNamespace(workNamespace), client.MatchingLabels{fleetv1.ClusterJobUIDLabel: string(uid)})).To(Succeed())
	return list.Items
}

// runPods are m's pods of run uid (fleetjob labels a Job's pods too).
func runPods(m *member, uid types.UID) []corev1.Pod {
	GinkgoHelper()
	list := &corev1.PodList{}
	Expect(m.client.List(ctx, list, client.InNamespace(workNamespace), client.MatchingLabels{fleetv1.ClusterJobUIDLabel: string(uid)})).To(Succeed())
	return list.Items
}

// runPlans are m's plan ConfigMaps of run uid.
func runPlans(m *member, uid types.UID) []corev1.ConfigMap {
	GinkgoHelper()
	list := &corev1.ConfigMapList{}
	Expect(m.client.List(ctx, list, client.InNamespace(workNamespace),
		client.MatchingLabels{fleetv1.ClusterJobUIDLabel: string(uid), fleetv1.ComponentLabel: "plan"})).To(Succeed())
	return list.Items
}

// runConfigMaps are all of m's ConfigMaps of run uid: its plan and its
// results record.
func runConfigMaps(m *member, uid types.UID) []corev1.ConfigMap {
	GinkgoHelper()
	list := &corev1.ConfigMapList{}
	Expect(m.client.List(ctx, list, client.InNamespace(workNamespace), client.MatchingLabels{fleetv1.ClusterJobUIDLabel: string(uid)})).To(Succeed())
	return list.Items
}

// jobsByGroup counts m's Jobs of run uid per group index.
func jobsByGroup(m *member, uid types.UID) map[string]int {
	out := map[string]int{}
	for _, j := range runJobs(m, uid) {
		out[j.Labels[fleetv1.GroupIndexLabel]]++
	}
	return out
}

// create creates cj on the hub; cj then carries its UID.
func create(cj *fleetv1.ClusterJob) {
	GinkgoHelper()
	Expect(f.hub.Create(ctx, cj)).To(Succeed())
	GinkgoWriter.Printf("Created ClusterJob %s/%s uid %s\n", cj.Namespace, cj.Name, cj.UID)
}

// latest reads cj from the hub, with every cluster's row in
// Status.Clusters, read from its MemberRuns (sorted by cluster), as
// `kubectl fleetjob status` shows them: the hub keeps the rows there.
func latest(cj *fleetv1.ClusterJob) func(Gomega) *fleetv1.ClusterJob {
	return func(g Gomega) *fleetv1.ClusterJob {
		out := &fleetv1.ClusterJob{}
		g.Expect(f.hub.Get(ctx, client.ObjectKeyFromObject(cj), out)).To(Succeed())
		g.Expect(out.Status.Clusters).To(BeEmpty(), "the hub writes rows into MemberRuns")
		runs := &fleetv1.MemberRunList{}
		g.Expect(f.hub.List(ctx, runs, client.InNamespace(out.Namespace),
			client.MatchingLabels{fleetv1.ClusterJobUIDLabel: string(out.UID)})).To(Succeed())
		slices.SortFunc(runs.Items, func(a, b fleetv1.MemberRun) int { return cmp.Compare(a.Spec.Cluster, b.Spec.Cluster) })
		for _, mr := range runs.Items {
			if mr.Status.Name != "" {
				out.Status.Clusters = append(out.Status.Clusters, mr.Status.Row())
			}
		}
		return out
	}
}

// waitPhase waits until cj reaches phase and returns it then.
func waitPhase(cj *fleetv1.ClusterJob, phase fleetv1.Phase) *fleetv1.ClusterJob {
	GinkgoHelper()
	var got *fleetv1.ClusterJob
	Eventually(func(g Gomega) {
		got = latest(cj)(g)
		g.Expect(got.Status.Phase).To(Equal(phase), "ClusterJob %s: %s", cj.Name, got.Status.Summary.NodeProgress)
	}).WithTimeout(runTimeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	cond := fleetv1.ConditionComplete
	if phase == fleetv1.PhaseFailed {
		cond = fleetv1.ConditionFailed
	}
	Expect(meta.IsStatusConditionTrue(got.Status.Conditions, cond)).To(BeTrue(), "condition %s", cond)
	return got
}

// row is cj's status row of member name.
func row(cj *fleetv1.ClusterJob, name string) fleetv1.ClusterStatus {
	GinkgoHelper()
	i := slices.IndexFunc(cj.Status.Clusters, func(c fleetv1.ClusterStatus) bool { return c.Name == name })
	Expect(i).NotTo(Equal(-1), "status.clusters has a row for %s", name)
	return cj.Status.Clusters[i]
}

// expectRun checks what run cj did in m, from m's own objects: exactly one
// Job per node of want, each in its group (index and name), finished (the
// ones on failedNodes failed, every other succeeded), every pod on exactly
// its Job's node; and from the recorder, that no node ever had a second
// Job and no two groups were ever unfinished together.
func expectRun(m *member, rec *jobRecorder, cj *fleetv1.ClusterJob, want []group, failedNodes ...string) {
	GinkgoHelper()
	wantGroupOf := map[string]string{}
	for i, g := range want {
		for _, n := range g.nodes {
			wantGroupOf[n] = fmt.Sprintf("%d/%s", i, g.name)
		}
	}
	jobs := runJobs(m, cj.UID)
	gotGroupOf := map[string]string{}
	for _, j := range jobs {
		node := j.Annotations[fleetv1.NodeAnnotation]
		Expect(gotGroupOf).NotTo(HaveKey(node), "%s: node %s has two Jobs", m.name, node)
		gotGroupOf[node] = j.Labels[fleetv1.GroupIndexLabel] + "/" + j.Annotations[fleetv1.GroupAnnotation]
		expectJobResult(m, j, slices.Contains(failedNodes, node))
	}
	Expect(gotGroupOf).To(Equal(wantGroupOf), "%s: each node's Job's group (index/name)", m.name)
	expectPinned(m, cj.UID, jobs)
	perNode := rec.jobsPerNode(cj.UID)
	Expect(perNode).To(HaveLen(len(wantGroupOf)), "%s: the recorder saw a Job on every node", m.name)
	for node, js := range perNode {
		Expect(js).To(HaveLen(1), "%s: node %s had more than one Job during the run", m.name, node)
	}
	Expect(rec.overlapsSeen()).To(BeEmpty(), "%s: Jobs of two groups were unfinished together", m.name)
}

// expectJobResult checks that j finished, failed or succeeded.
func expectJobResult(m *member, j batchv1.Job, failed bool) {
	GinkgoHelper()
	want, reason := batchv1.JobComplete, ""
	if failed {
		want, reason = batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded
	}
	i := slices.IndexFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool { return c.Type == want && c.Status == corev1.ConditionTrue })
	Expect(i).NotTo(Equal(-1), "%s: Job %s (node %s) has condition %s; conditions %v", m.name, j.Name, j.Annotations[fleetv1.NodeAnnotation], want, j.Status.Conditions)
	if reason != "" {
		Expect(j.Status.Conditions[i].Reason).To(Equal(reason), "%s: Job %s", m.name, j.Name)
	}
}

// expectPinned checks that every Job has a pod and that each pod ran on
// exactly the node its Job is for.
func expectPinned(m *member, uid types.UID, jobs []batchv1.Job) {
	GinkgoHelper()
	podsOf := map[string][]corev1.Pod{}
	for _, p := range runPods(m, uid) {
		podsOf[p.Labels[jobNameLabel]] = append(podsOf[p.Labels[jobNameLabel]], p)
	}
	for _, j := range jobs {
		node := j.Annotations[fleetv1.NodeAnnotation]
		Expect(podsOf[j.Name]).NotTo(BeEmpty(), "%s: Job %s has a pod", m.name, j.Name)
		for _, p := range podsOf[j.Name] {
			Expect(p.Spec.NodeName).To(Equal(node), "%s: pod %s of Job %s ran on its Job's node", m.name, p.Name, j.Name)
		}
	}
}

// expectNoRun checks that run cj left nothing in m and that m never had a
// Job of it.
func expectNoRun(m *member, rec *jobRecorder, cj *fleetv1.ClusterJob) {
	GinkgoHelper()
	Expect(runJobs(m, cj.UID)).To(BeEmpty(), "%s has no Job of %s", m.name, cj.Name)
	Expect(runConfigMaps(m, cj.UID)).To(BeEmpty(), "%s has no plan or record of %s", m.name, cj.Name)
	Expect(rec.jobsPerNode(cj.UID)).To(BeEmpty(), "%s never had a Job of %s", m.name, cj.Name)
}
