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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// failingStage is a kwok Stage that fails every running pod on one node:
// phase Failed, its containers terminated with exit code 1. Its weight
// beats the default pod-complete stage (weight 1) that would otherwise
// pick the same pods. NODE and NAME are replaced.
const failingStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: NAME
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.spec.nodeName'
      operator: 'In'
      values: ['NODE']
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
  weight: 10000
  next:
    statusTemplate: |
      {{ $now := Now }}
      containerStatuses:
      {{ range $index, $item := .spec.containers }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 1
            finishedAt: {{ $now | Quote }}
            reason: Error
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Failed
`

// failPodsOn makes every pod on node of m fail until the spec ends, or
// until heal is called. On kwok it installs a Stage; on kind the pods are
// real and fail by themselves where the ClusterJob says FailOn(node), and
// heal does nothing.
func failPodsOn(m *member, node string) (heal func()) {
	GinkgoHelper()
	if f.provider != providerKwok {
		return func() {}
	}
	name := "e2e-fail-" + node
	stage := strings.NewReplacer("NAME", name, "NODE", node).Replace(failingStage)
	_, err := f.run(m.name, stage, "create", "-f", "-")
	Expect(err).NotTo(HaveOccurred())
	heal = func() { f.kubectlOK(m.name, "delete", "stage", name, "--ignore-not-found") }
	DeferCleanup(heal)
	return heal
}

// notReadyStage is a kwok Stage that keeps one node NotReady: its Ready
// condition False, its other conditions as they are, set again every
// second. It selects the node whatever its Ready condition, so that its
// weight keeps beating kwok's node-initialize stage, which would turn a
// NotReady node Ready at once. NODE and NAME are replaced.
const notReadyStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: NAME
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.metadata.name'
      operator: 'In'
      values: ['NODE']
  delay:
    durationMilliseconds: 1000
  weight: 10000
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      {{ if eq .type "Ready" }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: "e2e: made NotReady"
        reason: "E2ENotReady"
        status: "False"
        type: "Ready"
      {{ else }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
      {{ end }}
`

// makeNotReady turns node of m NotReady (kwok only) until the spec ends,
// when it waits for the node to be Ready and untainted again, so that the
// next spec finds every node eligible.
func makeNotReady(m *member, node string) {
	GinkgoHelper()
	name := "e2e-not-ready-" + node
	stage := strings.NewReplacer("NAME", name, "NODE", node).Replace(notReadyStage)
	_, err := f.run(m.name, stage, "create", "-f", "-")
	Expect(err).NotTo(HaveOccurred())
	// kwok applies a Stage on the node's next event: its heartbeat comes
	// 20-45 s apart.
	poke := func() {
		f.kubectlOK(m.name, "annotate", "node", node, "--overwrite", "e2e.fleetjob.io/poke="+time.Now().Format(time.RFC3339Nano))
	}
	poke()
	notReady := func(g Gomega) {
		n := &corev1.Node{}
		g.Expect(m.client.Get(ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
		g.Expect(nodeReady(*n)).To(BeFalse(), "node %s is NotReady", node)
	}
	Eventually(notReady).WithTimeout(10 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	Consistently(notReady).WithTimeout(3*time.Second).WithPolling(100*time.Millisecond).Should(Succeed(), "and stays NotReady")
	DeferCleanup(func() {
		f.kubectlOK(m.name, "delete", "stage", name, "--ignore-not-found")
		poke()
		Eventually(func(g Gomega) {
			n := &corev1.Node{}
			g.Expect(m.client.Get(ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
			g.Expect(nodeReady(*n)).To(BeTrue(), "node %s is Ready again", node)
			g.Expect(n.Spec.Taints).To(BeEmpty(), "node %s lost its not-ready taint", node)
		}).WithTimeout(2 * time.Minute).Should(Succeed())
	})
}
