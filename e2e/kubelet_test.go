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
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// What only real kubelets and containers show: the kind fleet's specs.
var _ = Describe("Real kubelets", kindOnly, func() {
	BeforeEach(func() { only(providerKind, "kwok runs no container and its kubelets stop with their Node") })

	It("puts a real container's exit code with its termination message, or its last log lines, in the node's verdict, and kubectl fleetjob logs prints its output", func() {
		m := f.member("member-1")
		nodes := names(eligibleNodes(m))
		Expect(len(nodes)).To(BeNumerically(">=", 3), "member-1 needs three nodes")
		withMessage, withLogs := nodes[0], nodes[1]
		cj := makeClusterJob("exit-codes").OnlyMember(m.name).Obj()
		work := &cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
		work.Command = []string{"sh", "-c", strings.NewReplacer("MESSAGE_NODE", withMessage, "LOGS_NODE", withLogs).Replace(
			`case "$FLEETJOB_NODE_NAME" in
			MESSAGE_NODE) echo "e2e checking disks"; echo "e2e disk sdz missing on $FLEETJOB_NODE_NAME" >/dev/termination-log; exit 3;;
			LOGS_NODE) echo "e2e fsck found errors on $FLEETJOB_NODE_NAME"; exit 4;;
			esac`)}
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseFailed)

		expectRun(m, recorders[m.name], cj, []group{{name: "all", nodes: nodes}}, withMessage, withLogs)
		// The kubelet's own record, which the verdicts come from.
		terminated := podOn(m, cj.UID, withMessage).Status.ContainerStatuses[0].State.Terminated
		Expect(terminated).NotTo(BeNil())
		Expect(terminated.ExitCode).To(BeEquivalentTo(3))
		Expect(terminated.Message).To(Equal("e2e disk sdz missing on " + withMessage + "\n"))
		Expect(row(got, m.name).FailedNodes).To(ConsistOf(
			And(HaveField("Node", withMessage), HaveField("ExitCode", HaveValue(BeEquivalentTo(3))),
				HaveField("Message", ContainSubstring("e2e disk sdz missing on "+withMessage))),
			And(HaveField("Node", withLogs), HaveField("ExitCode", HaveValue(BeEquivalentTo(4))),
				HaveField("Message", ContainSubstring("e2e fsck found errors on "+withLogs))),
		))
		results := nodeResults(cj, m.name)
		Expect(results).To(ContainElement(And(HaveField("Node", withMessage), HaveField("Phase", "Failed"),
			HaveField("ExitCode", HaveValue(BeEquivalentTo(3))), HaveField("Output", ContainSubstring("e2e disk sdz missing")))))

		// The container's stdout, from the kubelet, not its termination message.
		out, err := f.fleetjobTry("logs", cj.Name, "-n", cj.Namespace, "--cluster", m.name, "--node", withMessage,
			"--member-kubeconfig", m.kubeconfig, "--member-context", m.name)
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal("e2e checking disks\n"))
	})

	It("shows the kubelet's reason in the row of a node whose image cannot be pulled while it waits, keeps it in the node's verdict, and ends the run", func() {
		m := f.member("member-1")
		node := names(eligibleNodes(m))[0]
		const startTimeout = 30 * time.Second
		cj := makeClusterJob("bad-image").OnlyMember(m.name).Obj()
		onNodes(cj, node)
		cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/e2e-test-images/busybox:does-not-exist"
		cj.Spec.NodeStartTimeout = &metav1.Duration{Duration: startTimeout}
		create(cj)
		pullError := MatchRegexp(`ErrImagePull|ImagePullBackOff`)

		// What a user sees while the node waits: the kubelet's reason, in
		// the node's row of kubectl fleetjob status --nodes.
		Eventually(func(g Gomega) {
			r := nodeResultOf(g, cj, m.name, node)
			g.Expect(r.Phase).To(BeElementOf("Pending", "Running"), "the node still waits")
			g.Expect(r.Reason+": "+r.Message).To(pullError, "the node's row names the kubelet's reason")
		}).WithTimeout(startTimeout).WithPolling(time.Second).Should(Succeed())

		got := waitPhase(cj, fleetv1.PhaseFailed)
		verdict := WithTransform(func(n fleetv1.NodeFailure) string { return n.Reason + ": " + n.Message }, pullError)
		Expect(row(got, m.name).FailedNodes).To(ConsistOf(And(HaveField("Node", node), verdict)), "the verdict keeps the kubelet's reason")
		Expect(nodeResults(cj, m.name)).To(ConsistOf(And(HaveField("Node", node), HaveField("Phase", "Failed"),
			WithTransform(func(r nodeResult) string { return r.Reason + ": " + r.Message }, pullError))))
		Eventually(func() int { return len(runJobs(m, cj.UID)) }).Should(BeZero(), "the Job that could not start is deleted")
	})

	// A Node deleted mid-Job while its kubelet goes on running the pod (a
	// kwok kubelet stops with its Node), in a run that goes on on another
	// node. The pods' ends are in the suite's hands: each waits for a file
	// in its emptyDir, which the suite writes from inside the node
	// container.
	DescribeTable("a node whose Node object is deleted while its kubelet runs the pod: one verdict, the same in the ClusterJob, the MemberRun and status --nodes, for good, and no Job left of a node failed NodeDeleted",
		func(podEnds podEnd, allowed ...string) {
			m := f.member("member-1")
			nodes := names(eligibleNodes(m))
			workers := slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return n == m.controlPlane })
			Expect(workers).ToNot(BeEmpty(), "member-1 needs a worker")
			Expect(len(nodes)).To(BeNumerically(">=", 2), "member-1 needs two nodes")
			node := workers[len(workers)-1]
			other := nodes[slices.IndexFunc(nodes, func(n string) bool { return n != node })]
			cj := makeClusterJob("node-deleted").OnlyMember(m.name).Obj()
			onNodes(cj, node, other)
			untilSignalled(cj)
			create(cj)
			pods := map[string]corev1.Pod{}
			Eventually(func(g Gomega) {
				for _, p := range runPods(m, cj.UID) {
					g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
					pods[p.Spec.NodeName] = p
				}
				g.Expect(pods).To(HaveKey(node))
				g.Expect(pods).To(HaveKey(other))
			}).Should(Succeed(), "the pods run on %s and %s", node, other)

			if podEnds == podEndsBefore {
				signal(node, pods[node])
			}
			deleteNode(m, node)
			if podEnds == podEndsAfter {
				signal(node, pods[node])
			}
			var verdict verdicts
			Eventually(func(g Gomega) {
				verdict = verdictsOf(g, cj, m, node)
				g.Expect(verdict.memberRun).To(Or(HavePrefix("Failed"), Equal("Succeeded")), "the hub's verdict on %s", node)
			}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
			GinkgoWriter.Printf("The verdict on %s while %s runs: %+v\n", node, other, verdict)
			Expect(verdict.memberRun).To(BeElementOf(allowed))
			agree := func(g Gomega) {
				v := verdictsOf(g, cj, m, node)
				g.Expect(v.memberRun).To(Equal(verdict.memberRun), "the verdict stands")
				g.Expect(v.status).To(Equal(v.memberRun), "the MemberRun's row and status --nodes agree")
				if strings.HasPrefix(v.status, "Failed") {
					g.Expect(nodeJobs(m, cj, node)).To(BeEmpty(), "no Job of a node failed NodeDeleted")
				}
			}
			// While the run goes on: when the pod the kubelet still runs
			// ends by itself, if it was not deleted, and once the node's
			// kubelet registered its Node again.
			Eventually(agree).Should(Succeed())
			signal(node, pods[node])
			Consistently(agree).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(Succeed())
			restoreNode(m, node)
			Consistently(agree).WithTimeout(10 * time.Second).WithPolling(time.Second).Should(Succeed())

			signal(other, pods[other])
			want := fleetv1.PhaseCompleted
			if strings.HasPrefix(verdict.memberRun, "Failed") {
				want = fleetv1.PhaseFailed
			}
			waitPhase(cj, want)
			Consistently(agree).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(Succeed())
			for n, js := range recorders[m.name].jobsPerNode(cj.UID) {
				Expect(js).To(HaveLen(1), "node %s had one Job", n)
			}
		},
		Entry("its pod still running: Failed NodeDeleted", podRuns, "Failed "+fleetv1.NodeReasonNodeDeleted),
		Entry("its pod succeeding just after the deletion: either verdict, as long as it is one", podEndsAfter,
			"Failed "+fleetv1.NodeReasonNodeDeleted, "Succeeded"),
		Entry("its pod succeeding just before the deletion, its Job completing after it: either verdict, as long as it is one", podEndsBefore,
			"Failed "+fleetv1.NodeReasonNodeDeleted, "Succeeded"),
	)
})

// podEnd is when the deleted node's pod ends, next to its Node's deletion.
type podEnd int

const (
	podRuns podEnd = iota
	podEndsAfter
	podEndsBefore
)

// verdicts are what a user reads of the only node of a run: in the
// ClusterJob (its phase, once finished), in the member's MemberRun row and
// in kubectl fleetjob status --nodes ("Succeeded", "Failed <reason>", or
// the node's phase while it runs).
type verdicts struct {
	clusterJob fleetv1.Phase
	memberRun  string
	status     string
}

func verdictsOf(g Gomega, cj *fleetv1.ClusterJob, m *member, node string) verdicts {
	got := latest(cj)(g)
	v := verdicts{clusterJob: got.Status.Phase}
	i := slices.IndexFunc(got.Status.Clusters, func(c fleetv1.ClusterStatus) bool { return c.Name == m.name })
	g.Expect(i).NotTo(Equal(-1), "a MemberRun row for %s", m.name)
	r := got.Status.Clusters[i]
	switch j := slices.IndexFunc(r.FailedNodes, func(n fleetv1.NodeFailure) bool { return n.Node == node }); {
	case j != -1:
		v.memberRun = "Failed " + r.FailedNodes[j].Reason
	case r.Nodes.Succeeded == 1:
		v.memberRun = "Succeeded"
	default:
		v.memberRun = string(r.Phase)
	}
	n := nodeResultOf(g, cj, m.name, node)
	v.status = n.Phase
	if n.Phase == "Failed" {
		v.status += " " + n.Reason
	}
	return v
}

// nodeJobs are the Jobs of cj for node in m.
func nodeJobs(m *member, cj *fleetv1.ClusterJob, node string) []string {
	var out []string
	for _, j := range runJobs(m, cj.UID) {
		if j.Annotations[fleetv1.NodeAnnotation] == node {
			out = append(out, j.Name)
		}
	}
	return out
}

// signalVolume is the emptyDir where untilSignalled's pods wait for the
// file done.
const signalVolume = "e2e-signal"

// untilSignalled makes cj's pods run until signal, at most 10 minutes.
func untilSignalled(cj *fleetv1.ClusterJob) {
	spec := &cj.Spec.JobTemplate.Spec.Template.Spec
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: signalVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: signalVolume, MountPath: "/signal"})
	c.Command = []string{"sh", "-c", `i=0; until [ -e /signal/done ] || [ $i -ge 3000 ]; do sleep 0.2; i=$((i+1)); done`}
}

// signal ends pod, an untilSignalled pod, on node: it writes the file its
// container waits for into its emptyDir, from inside the kind node, which
// needs neither the API server nor the Node object. A pod already gone is
// left alone.
func signal(node string, pod corev1.Pod) {
	GinkgoHelper()
	dir := filepath.Join("/var/lib/kubelet/pods", string(pod.UID), "volumes/kubernetes.io~empty-dir", signalVolume)
	f.runTool("docker", "exec", node, "sh", "-c", `[ ! -d "$1" ] || touch "$1/done"`, "-", dir)
}

// onNodes narrows cj to nodes, by hostname.
func onNodes(cj *fleetv1.ClusterJob, nodes ...string) {
	cj.Spec.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: corev1.LabelHostname, Operator: metav1.LabelSelectorOpIn, Values: nodes}}}
}

// nodeResultList is kubectl fleetjob status --nodes -o json: a v1 List of
// NodeResult rows.
type nodeResultList struct {
	Items []nodeResult `json:"items"`
}

// nodeResult is one node's row (kind NodeResult) of kubectl fleetjob
// status --nodes -o json.
type nodeResult struct {
	Cluster  string `json:"cluster"`
	Node     string `json:"node"`
	Phase    string `json:"phase"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
	ExitCode *int32 `json:"exitCode"`
	Output   string `json:"output"`
}

// nodeResults is what kubectl fleetjob status --nodes says of cj's nodes
// in cluster.
func nodeResults(cj *fleetv1.ClusterJob, cluster string) []nodeResult {
	GinkgoHelper()
	var out nodeResultList
	Expect(json.Unmarshal([]byte(f.fleetjob("status", cj.Name, "-n", cj.Namespace, "--nodes", "--cluster", cluster, "-o", "json")), &out)).To(Succeed())
	return out.Items
}

// nodeResultOf is node's row of kubectl fleetjob status --nodes, for
// Eventually and Consistently.
func nodeResultOf(g Gomega, cj *fleetv1.ClusterJob, cluster, node string) nodeResult {
	out, err := f.fleetjobTry("status", cj.Name, "-n", cj.Namespace, "--nodes", "--cluster", cluster, "-o", "json")
	g.Expect(err).NotTo(HaveOccurred())
	var list nodeResultList
	g.Expect(json.Unmarshal([]byte(out), &list)).To(Succeed())
	results := list.Items
	i := slices.IndexFunc(results, func(r nodeResult) bool { return r.Node == node })
	g.Expect(i).NotTo(Equal(-1), "status --nodes lists %s", node)
	return results[i]
}

// deleteNode deletes the Node object of a kind node, whose kubelet and
// containers go on; the spec's cleanup brings it back (restoreNode).
func deleteNode(m *member, name string) {
	GinkgoHelper()
	n := &corev1.Node{}
	Expect(m.client.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
	labels := n.Labels
	DeferCleanup(func() { restoreNodeLabels(m, name, labels) })
	Expect(m.client.Delete(ctx, n)).To(Succeed())
	GinkgoWriter.Printf("Deleted the Node %s of %s; its kubelet goes on\n", name, m.name)
}

// restoreNode brings back the Node of a kind node that deleteNode deleted:
// the kubelet registers its Node only when it starts, so it is restarted;
// the fleet's labels are set again, the node is Ready and untainted, and
// the routes to its pod CIDR, which may have changed, are set again.
func restoreNode(m *member, name string) {
	GinkgoHelper()
	err := m.client.Get(ctx, client.ObjectKey{Name: name}, &corev1.Node{})
	if apierrors.IsNotFound(err) {
		f.runTool("docker", "exec", name, "systemctl", "restart", "kubelet")
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	Eventually(func(g Gomega) {
		n := &corev1.Node{}
		g.Expect(m.client.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
		g.Expect(n.Spec.PodCIDR).NotTo(BeEmpty())
	}).WithTimeout(2*time.Minute).Should(Succeed(), "the Node %s is registered again", name)
	f.runTool(filepath.Join(f.root, "hack", "fleet.sh"), "routes")
}

// restoreNodeLabels restores the Node and its labels, once.
func restoreNodeLabels(m *member, name string, labels map[string]string) {
	GinkgoHelper()
	restoreNode(m, name)
	n := &corev1.Node{}
	Expect(m.client.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
	base := n.DeepCopy()
	for k, v := range labels {
		n.Labels[k] = v
	}
	Expect(m.client.Patch(ctx, n, client.MergeFrom(base))).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(m.client.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
		g.Expect(nodeReady(*n)).To(BeTrue(), "node %s is Ready", name)
		g.Expect(n.Spec.Taints).To(BeEmpty(), "node %s is untainted", name)
	}).WithTimeout(2 * time.Minute).Should(Succeed())
}
