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
	batchv1 "k8s.io/api/batch/v1"
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

	It("fails a node whose Node is deleted while its kubelet runs the pod NodeDeleted, deletes its Job, and the ClusterJob, the MemberRun and status --nodes agree for good", func() {
		m := f.member("member-1")
		workers := slices.DeleteFunc(names(eligibleNodes(m)), func(n string) bool { return n == m.controlPlane })
		Expect(workers).NotTo(BeEmpty(), "member-1 needs a worker")
		node := workers[len(workers)-1]
		// The pod outlives the spec unless fleetjob deletes its Job.
		cj := makeClusterJob("node-deleted").OnlyMember(m.name).RunFor(10 * time.Minute).Obj()
		onNodes(cj, node)
		create(cj)
		Eventually(func(g Gomega) {
			pods := runPods(m, cj.UID)
			g.Expect(pods).To(HaveLen(1))
			g.Expect(pods[0].Status.Phase).To(Equal(corev1.PodRunning))
		}).Should(Succeed(), "the pod runs on %s", node)

		deleteNode(m, node)
		got := waitPhase(cj, fleetv1.PhaseFailed)
		expectNodeDeleted(cj, m, node)
		Expect(got.Status.Summary.Nodes).To(Equal(fleetv1.NodeCounts{Total: 1, Failed: 1}))
		Eventually(func() int { return len(runJobs(m, cj.UID)) }).Should(BeZero(), "the deleted node's Job is deleted")

		// For good: while the kubelet goes on, and once its Node is back.
		Consistently(func(g Gomega) { expectNodeDeletedG(g, cj, m, node) }).WithTimeout(10 * time.Second).WithPolling(time.Second).Should(Succeed())
		restoreNode(m, node)
		Consistently(func(g Gomega) { expectNodeDeletedG(g, cj, m, node) }).WithTimeout(10 * time.Second).WithPolling(time.Second).Should(Succeed())
		for n, js := range recorders[m.name].jobsPerNode(cj.UID) {
			Expect(js).To(HaveLen(1), "node %s had one Job", n)
		}
	})
})

var _ = Describe("kubectl fleetjob clusters", func() {
	It("reaches every member from this machine at the address the hub uses, and counts its nodes", func() {
		var infos []clusterInfo
		Expect(json.Unmarshal([]byte(f.fleetjob("clusters", "-o", "json")), &infos)).To(Succeed())
		for _, m := range f.members {
			i := slices.IndexFunc(infos, func(c clusterInfo) bool { return c.Name == m.name })
			Expect(i).NotTo(Equal(-1), "%s is listed", m.name)
			Expect(infos[i].Reachable).To(BeTrue(), "%s is reachable from here: %s", m.name, infos[i].Message)
			Expect(infos[i].Nodes).To(HaveValue(Equal(nodeCount(m))), "%s's nodes", m.name)
		}
	})
})

// clusterInfo is one cluster of kubectl fleetjob clusters -o json.
type clusterInfo struct {
	Name      string `json:"name"`
	Reachable bool   `json:"reachable"`
	Nodes     *int   `json:"nodes"`
	Message   string `json:"message"`
}

// expectNodeDeleted checks that the verdict of node is Failed NodeDeleted
// in the ClusterJob's counts, in m's MemberRun row and in kubectl fleetjob
// status --nodes, read from the member.
func expectNodeDeleted(cj *fleetv1.ClusterJob, m *member, node string) {
	GinkgoHelper()
	expectNodeDeletedG(Default, cj, m, node)
}

func expectNodeDeletedG(g Gomega, cj *fleetv1.ClusterJob, m *member, node string) {
	got := latest(cj)(g)
	g.Expect(got.Status.Phase).To(Equal(fleetv1.PhaseFailed))
	g.Expect(got.Status.Summary.Nodes.Failed).To(BeEquivalentTo(1), "the ClusterJob counts the node failed")
	g.Expect(row(got, m.name).FailedNodes).To(ConsistOf(And(HaveField("Node", node), HaveField("Reason", fleetv1.NodeReasonNodeDeleted))),
		"the MemberRun's row")
	r := nodeResultOf(g, cj, m.name, node)
	g.Expect(r.Phase).To(Equal("Failed"), "status --nodes")
	g.Expect(r.Reason).To(Equal(fleetv1.NodeReasonNodeDeleted), "status --nodes")
	g.Expect(slices.ContainsFunc(runJobs(m, cj.UID), func(j batchv1.Job) bool { return j.Annotations[fleetv1.NodeAnnotation] == node })).
		To(BeFalse(), "no Job of the node")
}

// onNodes narrows cj to nodes, by hostname.
func onNodes(cj *fleetv1.ClusterJob, nodes ...string) {
	cj.Spec.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: corev1.LabelHostname, Operator: metav1.LabelSelectorOpIn, Values: nodes}}}
}

// nodeResult is one node's row of kubectl fleetjob status --nodes -o json.
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
	var out []nodeResult
	Expect(json.Unmarshal([]byte(f.fleetjob("status", cj.Name, "-n", cj.Namespace, "--nodes", "--cluster", cluster, "-o", "json")), &out)).To(Succeed())
	return out
}

// nodeResultOf is node's row of kubectl fleetjob status --nodes, for
// Eventually and Consistently.
func nodeResultOf(g Gomega, cj *fleetv1.ClusterJob, cluster, node string) nodeResult {
	out, err := f.fleetjobTry("status", cj.Name, "-n", cj.Namespace, "--nodes", "--cluster", cluster, "-o", "json")
	g.Expect(err).NotTo(HaveOccurred())
	var results []nodeResult
	g.Expect(json.Unmarshal([]byte(out), &results)).To(Succeed())
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
