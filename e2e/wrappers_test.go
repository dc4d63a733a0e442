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
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// Pod annotations read by kwok's default pod stages (kustomize/stage/pod/
// general): the delay before a pod gets its IP, turns Running, and
// succeeds. A delay equal to its jitter-delay is exact.
const (
	kwokCreateDelay   = "pod-create.stage.kwok.x-k8s.io/delay"
	kwokCreateJitter  = "pod-create.stage.kwok.x-k8s.io/jitter-delay"
	kwokReadyDelay    = "pod-ready.stage.kwok.x-k8s.io/delay"
	kwokReadyJitter   = "pod-ready.stage.kwok.x-k8s.io/jitter-delay"
	kwokCompleteDelay = "pod-complete.stage.kwok.x-k8s.io/delay"
	kwokCompleteJtr   = "pod-complete.stage.kwok.x-k8s.io/jitter-delay"
)

// defaultRunFor is how long a pod runs unless a spec says otherwise: long
// enough that a group's Jobs are seen unfinished together, short enough
// that a 3-group run takes seconds.
const defaultRunFor = time.Second

// clusterJobWrapper builds the suite's ClusterJobs:
// makeClusterJob("x").Batch(3).RunFor(2 * time.Second).Obj().
type clusterJobWrapper struct{ fleetv1.ClusterJob }

// makeClusterJob returns a ClusterJob in the test namespace selecting every
// member of the suite (env=e2e), strategy all, whose pods run for
// defaultRunFor and succeed. The pod's work is real on kind (a busybox
// sleep, failing where FailOn says) and simulated by kwok's stages on kwok.
func makeClusterJob(name string) *clusterJobWrapper {
	w := &clusterJobWrapper{fleetv1.ClusterJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
		Spec: fleetv1.ClusterJobSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{suiteLabel: suiteValue}},
			Strategy:        fleetv1.Strategy{Type: fleetv1.StrategyAll},
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](0),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					// Deleted pods go at once, not after 30 s.
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{
						Name:  "work",
						Image: "busybox:1.36",
						// A node of FailOn fails at once, as kwok's Stage fails its pods
						// as soon as they run.
						Command: []string{"sh", "-c", `case " $E2E_FAIL_NODE " in *" $FLEETJOB_NODE_NAME "*) exit 1;; esac; sleep "$E2E_SECONDS"`},
					}},
				}},
			}},
		},
	}}
	return w.RunFor(defaultRunFor).FailOn()
}

// Batch sets spec.strategy to batch of size in alphabetical order.
func (w *clusterJobWrapper) Batch(size int32) *clusterJobWrapper {
	w.Spec.Strategy = fleetv1.Strategy{Type: fleetv1.StrategyBatch, Batch: &fleetv1.BatchStrategy{Size: size, Order: fleetv1.BatchOrderAlphabetical}}
	return w
}

// RandomBatch sets spec.strategy to batch of size in random order.
func (w *clusterJobWrapper) RandomBatch(size int32) *clusterJobWrapper {
	w.Spec.Strategy = fleetv1.Strategy{Type: fleetv1.StrategyBatch, Batch: &fleetv1.BatchStrategy{Size: size, Order: fleetv1.BatchOrderRandom}}
	return w
}

// PerNodeGroup sets spec.strategy to perNodeGroup on label.
func (w *clusterJobWrapper) PerNodeGroup(label string, ignoreNull bool) *clusterJobWrapper {
	w.Spec.Strategy = fleetv1.Strategy{Type: fleetv1.StrategyPerNodeGroup, PerNodeGroup: &fleetv1.PerNodeGroupStrategy{GroupLabel: label, IgnoreNull: ignoreNull}}
	return w
}

// Exit sets spec.failureStrategy to exit.
func (w *clusterJobWrapper) Exit() *clusterJobWrapper {
	w.Spec.FailureStrategy = fleetv1.FailureStrategyExit
	return w
}

// OnlyMember sets spec.clusterSelector to the registration of one member.
func (w *clusterJobWrapper) OnlyMember(name string) *clusterJobWrapper {
	w.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{suiteLabel: suiteValue, memberNameLabel: name}}
	return w
}

// MaxConcurrentClusters sets spec.clusterRollout.maxConcurrentClusters.
func (w *clusterJobWrapper) MaxConcurrentClusters(n int32) *clusterJobWrapper {
	w.Spec.ClusterRollout = &fleetv1.ClusterRollout{MaxConcurrentClusters: n}
	return w
}

// RunFor sets how long each pod runs: kwok's pod-complete delay (pods get
// their IP and turn Running at once) and, for real containers, a sleep.
func (w *clusterJobWrapper) RunFor(d time.Duration) *clusterJobWrapper {
	tmpl := &w.Spec.JobTemplate.Spec.Template
	ms := fmt.Sprintf("%dms", d.Milliseconds())
	tmpl.Annotations = map[string]string{
		kwokCreateDelay: "0ms", kwokCreateJitter: "0ms",
		kwokReadyDelay: "0ms", kwokReadyJitter: "0ms",
		kwokCompleteDelay: ms, kwokCompleteJtr: ms,
	}
	return w.setEnv("E2E_SECONDS", fmt.Sprintf("%.3f", d.Seconds()))
}

// FailOn makes the container exit 1 on these nodes (kind). On kwok no
// container runs: failPodsOn installs the Stage that fails pods there.
func (w *clusterJobWrapper) FailOn(nodes ...string) *clusterJobWrapper {
	return w.setEnv("E2E_FAIL_NODE", strings.Join(nodes, " "))
}

// Policy sets spec.failurePolicy.
func (w *clusterJobWrapper) Policy(p fleetv1.FailurePolicy) *clusterJobWrapper {
	w.Spec.FailurePolicy = &p
	return w
}

func (w *clusterJobWrapper) setEnv(name, value string) *clusterJobWrapper {
	c := &w.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	for i := range c.Env {
		if c.Env[i].Name == name {
			c.Env[i].Value = value
			return w
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
	return w
}

// byProvider is onKwok on the kwok fleet and onKind on the kind fleet:
// for the few durations that depend on the fleet's shape or on real pods.
func byProvider[T any](onKwok, onKind T) T {
	if f.provider == providerKind {
		return onKind
	}
	return onKwok
}

// Obj returns the ClusterJob.
func (w *clusterJobWrapper) Obj() *fleetv1.ClusterJob { return &w.ClusterJob }
