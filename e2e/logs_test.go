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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// logsServed bounds the wait for a pod's logs to be readable: kwok picks
// up a new Logs object from its watch within about 2 s; a loaded 2-core
// machine can take several times that. (On kind the kubelet has the logs
// as soon as the pod ended.)
const logsServed = 30 * time.Second

// logsScript is the container's work in the logs spec: one line on stdout,
// then, a second later, one on stderr, each naming the node, and the usual
// sleep. The kubelet orders the two streams by when the runtime read each
// pipe: lines written together came out stderr first once on kind, so
// they are written apart. On kwok no container runs: serveLogs makes kwok
// serve the same lines from a file.
const logsScript = `echo "e2e-logs stdout on $FLEETJOB_NODE_NAME"; sleep 1; echo "e2e-logs stderr on $FLEETJOB_NODE_NAME" >&2; sleep "$E2E_SECONDS"`

var _ = Describe("kubectl fleetjob logs", func() {
	It("prints the pod's output on a chosen node of a member: all of it, --tail 1 its last line, --previous the previous container's", func() {
		m := f.member("member-1")
		nodes := names(eligibleNodes(m))
		Expect(len(nodes)).To(BeNumerically(">=", 2), "member-1 needs two nodes")
		picked := nodes[:2]
		cj := makeClusterJob("logs").Batch(2).OnlyMember(m.name).Obj()
		cj.Spec.NodeSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: corev1.LabelHostname, Operator: metav1.LabelSelectorOpIn, Values: picked}}}
		work := &cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
		work.Command = []string{"sh", "-c", logsScript}
		create(cj)
		waitPhase(cj, fleetv1.PhaseCompleted)

		node := picked[1]
		stdoutLine, stderrLine := "e2e-logs stdout on "+node, "e2e-logs stderr on "+node
		previousLine := "e2e-logs previous on " + node
		if f.provider == providerKwok {
			ensureKwokAddress(m, node)
			serveLogs(m, podOn(m, cj.UID, node), work.Name,
				[]logLine{{"stdout", stdoutLine}, {"stderr", stderrLine}}, []logLine{{"stdout", previousLine}})
		}
		logs := func(extra ...string) (string, error) {
			return f.fleetjobTry(append([]string{"logs", cj.Name, "-n", cj.Namespace, "--cluster", m.name, "--node", node,
				"--member-kubeconfig", m.kubeconfig, "--member-context", m.name}, extra...)...)
		}
		Eventually(func() (string, error) { return logs() }).WithTimeout(logsServed).WithPolling(500*time.Millisecond).
			Should(Equal(stdoutLine+"\n"+stderrLine+"\n"), "both streams, in order, and nothing else")

		out, err := logs("--tail", "1")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(Equal(stderrLine + "\n"))
		// A kind pod that never restarted has no previous container.
		if f.provider == providerKwok {
			out, err = logs("--previous")
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(Equal(previousLine + "\n"))
		}

		_, err = logs("--node", "e2e-no-such-node")
		Expect(err).To(MatchError(ContainSubstring("no pod of clusterjob %s/%s on node e2e-no-such-node", cj.Namespace, cj.Name)))
	})
})

// podOn is the pod of run uid in m on node: there is exactly one, as the
// run's Jobs do not retry.
func podOn(m *member, uid types.UID, node string) corev1.Pod {
	GinkgoHelper()
	var out []corev1.Pod
	for _, p := range runPods(m, uid) {
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	Expect(out).To(HaveLen(1), "%s: the run's pods on node %s", m.name, node)
	return out[0]
}

// kwokHost is the Hostname address kwok's node-initialize stage gives a
// node in kwokctl's binary runtime, which runs kwok with
// --node-name=localhost and no --node-ip: the member's kube-apiserver
// reaches kwok's server there for a pod's logs.
const kwokHost = "localhost"

// ensureKwokAddress gives node of m its kwokHost address back if it lost
// it. The stage adds the address only when missing and writes the list
// whenever it lacks an InternalIP, which it never has here: each time it
// runs again (the node was NotReady or its Ready condition Unknown, as
// after an earlier spec's API server outage) it writes an empty list.
func ensureKwokAddress(m *member, node string) {
	GinkgoHelper()
	n := &corev1.Node{}
	Expect(m.client.Get(ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
	if len(n.Status.Addresses) > 0 {
		return
	}
	GinkgoWriter.Printf("Node %s of %s lost its addresses: adding Hostname %s\n", node, m.name, kwokHost)
	base := n.DeepCopy()
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: kwokHost}}
	Expect(m.client.Status().Patch(ctx, n, client.MergeFrom(base))).To(Succeed())
}

// logLine is one line a container wrote, to stream stdout or stderr.
type logLine struct{ stream, text string }

// podLogs is a kwok Logs object: kwok serves the logs of the pod of the
// same name and namespace, container CONTAINER, from file LOGS (PREVIOUS
// with previous=true). POD, NS, CONTAINER, LOGS and PREVIOUS are replaced.
const podLogs = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Logs
metadata:
  name: POD
  namespace: NS
spec:
  logs:
  - containers: ['CONTAINER']
    logsFile: 'LOGS'
    previousLogsFile: 'PREVIOUS'
`

// serveLogs makes kwok serve lines as the logs of container of pod in m,
// and previous as those of its previous instance, until the spec ends.
func serveLogs(m *member, pod corev1.Pod, container string, lines, previous []logLine) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	obj := strings.NewReplacer("POD", pod.Name, "NS", pod.Namespace, "CONTAINER", container,
		"LOGS", writeCRILog(dir, "current.log", lines), "PREVIOUS", writeCRILog(dir, "previous.log", previous)).Replace(podLogs)
	_, err := f.run(m.name, obj, "create", "-f", "-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		f.kubectlOK(m.name, "delete", "logs.kwok.x-k8s.io", pod.Name, "-n", pod.Namespace, "--ignore-not-found")
	})
}

// writeCRILog writes lines to dir/name in the format a container runtime
// writes a container's log file (the only one kwok reads: plain text is an
// "unsupported log format"), a millisecond apart, and returns its path,
// absolute as kwok, a local process, needs it.
func writeCRILog(dir, name string, lines []logLine) string {
	GinkgoHelper()
	var b strings.Builder
	start := time.Now().UTC()
	for i, l := range lines {
		// time, stream, F (a full line, not a partial one), text.
		fmt.Fprintf(&b, "%s %s F %s\n", start.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), l.stream, l.text)
	}
	path, err := filepath.Abs(filepath.Join(dir, name))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(path, []byte(b.String()), 0o644)).To(Succeed())
	return path
}

// fleetjobTry runs kubectl fleetjob against the hub as fleet.fleetjob does,
// but returns its stdout alone and an error carrying stderr rather than
// failing the spec: for Eventually, and for specs on the exact output.
func (f *fleet) fleetjobTry(args ...string) (string, error) {
	run, cancel := context.WithTimeout(ctx, pluginTimeout)
	defer cancel()
	args = append([]string{"--kubeconfig", f.kubeconfig("hub")}, args...)
	cmd := exec.CommandContext(run, f.plugin, args...)
	// A child that inherited the output pipes must not outlive the timeout.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	line := "kubectl fleetjob " + strings.Join(args, " ")
	GinkgoWriter.Printf("$ %s\n%s%s", line, stdout.String(), stderr.String())
	if err != nil && run.Err() != nil {
		err = fmt.Errorf("%w (timeout %s)", err, pluginTimeout)
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("%s: %w: %s", line, err, stderr.String())
	}
	return stdout.String(), nil
}
