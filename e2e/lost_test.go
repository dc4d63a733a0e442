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
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

// nodeMonitorGrace is how long the members' kube-controller-manager waits
// for a silent kubelet before it marks the node Unknown and its pods not
// Ready: kwokctl's binary runtime passes --node-monitor-grace-period=3m20s
// (E2E_NODE_MONITOR_GRACE when the fleet is brought up with another, see
// FLEET_KWOK_EXTRA_ARGS), and it looks every --node-monitor-period (25s).
func nodeMonitorGrace() time.Duration {
	d, err := time.ParseDuration(envOr("E2E_NODE_MONITOR_GRACE", "3m20s"))
	Expect(err).NotTo(HaveOccurred(), "E2E_NODE_MONITOR_GRACE")
	return d + 25*time.Second
}

// Every kubelet of a member dies while two runs have pods running there,
// one whose template tolerates everything (its pods stay Running on the
// lost nodes) and one with the default tolerations (its pods are evicted
// 300 s after, and stay Terminating for good): both runs end within the
// bound, every node of the member fails NodeLost saying so, and no node
// gets a second Job, also once the kubelets are back.
var _ = Describe("Lost nodes", func() {
	It("fails the nodes of a member whose kubelets died NodeLost within nodeLostTimeout, for a tolerant and a default template, and deletes their Jobs", kwokOnly, func() {
		only(providerKwok, "kills the kwok controller that plays every kubelet of a member at once, and waits out kwokctl's node-monitor grace")
		const lostTimeout = 30 * time.Second
		m := f.member("member-1")
		tolerant := makeClusterJob("lost-tolerant").OnlyMember(m.name).RunFor(30 * time.Minute).Obj()
		tolerant.Spec.JobTemplate.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		plain := makeClusterJob("lost-default").OnlyMember(m.name).RunFor(30 * time.Minute).Obj()
		runs := []*fleetv1.ClusterJob{tolerant, plain}
		for _, cj := range runs {
			cj.Spec.NodeLostTimeout = &metav1.Duration{Duration: lostTimeout}
			create(cj)
		}
		nodes := len(eligibleNodes(m))
		// Every pod started, and the hub recorded it: a pod lost before it
		// started is nodeStartTimeout's.
		for _, cj := range runs {
			Eventually(func(g Gomega) {
				jobs := runJobs(m, cj.UID)
				g.Expect(jobs).To(HaveLen(nodes))
				for _, j := range jobs {
					g.Expect(ptr.Deref(j.Status.Ready, 0)).To(BeEquivalentTo(1), "Job %s has its pod Ready", j.Name)
				}
				rec, _, err := spoke.ReadResults(ctx, m.client, spoke.Run{ClusterJob: latest(cj)(g), Cluster: m.name, Namespace: workNamespace})
				g.Expect(err).NotTo(HaveOccurred())
				for node, r := range rec.Nodes.All() {
					g.Expect(r.Started).To(BeTrue(), "node %s recorded started", node)
				}
			}).WithTimeout(2 * time.Minute).Should(Succeed())
		}

		killKwok(m)
		lost := time.Now()
		// The node lifecycle controller notices first, then the bound, then
		// at most one lost-node poll of the hub, plus a minute for a loaded
		// machine.
		bound := nodeMonitorGrace() + lostTimeout + spoke.LostPoll + time.Minute
		for _, cj := range runs {
			var got *fleetv1.ClusterJob
			Eventually(func(g Gomega) {
				got = latest(cj)(g)
				g.Expect(got.Status.Phase).To(Equal(fleetv1.PhaseFailed), "ClusterJob %s: %s", cj.Name, got.Status.Summary.NodeProgress)
			}).WithTimeout(bound - time.Since(lost)).WithPolling(time.Second).Should(Succeed())
			r := row(got, m.name)
			Expect(r.Nodes.Failed).To(BeEquivalentTo(nodes), "ClusterJob %s: every node of %s failed", cj.Name, m.name)
			for _, n := range r.FailedNodes {
				Expect(n.Reason).To(Equal(fleetv1.NodeReasonNodeLost), "ClusterJob %s node %s", cj.Name, n.Node)
				Expect(n.Message).To(MatchRegexp(`^node not Ready for \S+ after its pod started, past nodeLostTimeout 30s`), "ClusterJob %s node %s", cj.Name, n.Node)
			}
			Eventually(func() int { return len(runJobs(m, cj.UID)) }).Should(BeZero(), "ClusterJob %s: the lost nodes' Jobs are deleted", cj.Name)
		}
		GinkgoWriter.Printf("Both runs ended %s after the kubelets died (bound %s)\n", time.Since(lost).Round(time.Second), bound)

		reviveKwok(m)
		Consistently(func(g Gomega) {
			for _, cj := range runs {
				g.Expect(runJobs(m, cj.UID)).To(BeEmpty(), "ClusterJob %s: no Job once the kubelets are back", cj.Name)
			}
		}).WithTimeout(10 * time.Second).Should(Succeed())
		for _, cj := range runs {
			for node, js := range recorders[m.name].jobsPerNode(cj.UID) {
				Expect(js).To(HaveLen(1), "ClusterJob %s: node %s had one Job", cj.Name, node)
			}
		}
	})
})

// killed holds the kwok controllers killKwok stopped, by member name.
var killed = map[string]*process{}

// killKwok kills the kwok controller of m: every kubelet of m dies at once,
// its nodes stop heartbeating, its pods stay as they are. The spec's
// cleanup starts it again and waits for every node to be Ready.
func killKwok(m *member) {
	GinkgoHelper()
	p := findClusterProcess(filepath.Join(f.dir, "kwok", "clusters", m.name)+"/", "kwok-controller")
	Expect(p).NotTo(BeNil(), "the kwok controller of %s", m.name)
	Expect(syscall.Kill(p.pid, syscall.SIGKILL)).To(Succeed())
	Eventually(func() bool { return processGone(p.pid) }).WithTimeout(10*time.Second).Should(BeTrue(), "kwok of %s exited", m.name)
	killed[m.name] = p
	DeferCleanup(reviveKwok, m)
	GinkgoWriter.Printf("Killed the kwok controller of %s\n", m.name)
}

// reviveKwok starts m's kwok controller again, if killKwok stopped it, and
// waits until every node of m is Ready again and untainted, so that the next spec finds
// every node eligible.
func reviveKwok(m *member) {
	GinkgoHelper()
	p := killed[m.name]
	if p == nil {
		return
	}
	p.start()
	delete(killed, m.name)
	Eventually(func(g Gomega) {
		nodes := &corev1.NodeList{}
		g.Expect(m.client.List(ctx, nodes)).To(Succeed())
		for _, n := range nodes.Items {
			g.Expect(nodeReady(n)).To(BeTrue(), "node %s is Ready again", n.Name)
			// The node lifecycle controller lifts its unreachable taints
			// only at its next look, up to --node-monitor-period later: a
			// run planned before then would skip the node.
			g.Expect(n.Spec.Taints).NotTo(ContainElement(HaveField("Key", BeElementOf(corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady))),
				"node %s is no longer tainted unreachable", n.Name)
		}
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
}
