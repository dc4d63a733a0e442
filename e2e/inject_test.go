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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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
