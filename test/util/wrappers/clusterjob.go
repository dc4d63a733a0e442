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

// Package wrappers builds ClusterJobs for tests:
//
//	wrappers.MakeClusterJob("clean", "default").Batch(3, fleetv1.BatchOrderAlphabetical).Obj()
//
// MakeClusterJob starts from a valid object; each setter changes one field and
// names it in its comment, so a test shows only what it is about.
package wrappers

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// Image is the container image of the default Job template.
const Image = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"

// ClusterJobWrapper wraps a ClusterJob under construction.
type ClusterJobWrapper struct{ fleetv1.ClusterJob }

// MakeClusterJob returns a valid ClusterJob: every cluster (`{}`), strategy
// `all`, and a one-container Job template with restartPolicy Never and
// backoffLimit 0 that echoes its node name.
func MakeClusterJob(name, namespace string) *ClusterJobWrapper {
	return &ClusterJobWrapper{fleetv1.ClusterJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: fleetv1.ClusterJobSpec{
			ClusterSelector: &metav1.LabelSelector{},
			Strategy:        fleetv1.Strategy{Type: fleetv1.StrategyAll},
			JobTemplate: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{
					BackoffLimit: ptr.To[int32](0),
					Template: corev1.PodTemplateSpec{
						Spec: corev1.PodSpec{
							RestartPolicy: corev1.RestartPolicyNever,
							Containers: []corev1.Container{{
								Name:    "work",
								Image:   Image,
								Command: []string{"sh", "-c", "echo $" + fleetv1.NodeNameEnv},
							}},
						},
					},
				},
			},
		},
	}}
}

// Obj returns a copy of the built ClusterJob.
func (w *ClusterJobWrapper) Obj() *fleetv1.ClusterJob { return w.DeepCopy() }

// Clone returns an independent wrapper with the same object.
func (w *ClusterJobWrapper) Clone() *ClusterJobWrapper {
	return &ClusterJobWrapper{*w.DeepCopy()}
}

// ClusterSelector sets spec.clusterSelector; nil leaves it out.
func (w *ClusterJobWrapper) ClusterSelector(s *metav1.LabelSelector) *ClusterJobWrapper {
	w.Spec.ClusterSelector = s
	return w
}

// ClusterLabels sets spec.clusterSelector to match these registration labels.
func (w *ClusterJobWrapper) ClusterLabels(labels map[string]string) *ClusterJobWrapper {
	return w.ClusterSelector(&metav1.LabelSelector{MatchLabels: labels})
}

// NodeSelector sets spec.nodeSelector; nil leaves it out.
func (w *ClusterJobWrapper) NodeSelector(s *metav1.LabelSelector) *ClusterJobWrapper {
	w.Spec.NodeSelector = s
	return w
}

// NodeLabels sets spec.nodeSelector to match these node labels.
func (w *ClusterJobWrapper) NodeLabels(labels map[string]string) *ClusterJobWrapper {
	return w.NodeSelector(&metav1.LabelSelector{MatchLabels: labels})
}

// Strategy sets spec.strategy as given, valid or not.
func (w *ClusterJobWrapper) Strategy(s fleetv1.Strategy) *ClusterJobWrapper {
	w.Spec.Strategy = s
	return w
}

// StrategyType sets spec.strategy.type only, leaving the blocks as they are.
func (w *ClusterJobWrapper) StrategyType(t fleetv1.StrategyType) *ClusterJobWrapper {
	w.Spec.Strategy.Type = t
	return w
}

// All sets spec.strategy to `all`.
func (w *ClusterJobWrapper) All() *ClusterJobWrapper {
	return w.Strategy(fleetv1.Strategy{Type: fleetv1.StrategyAll})
}

// Batch sets spec.strategy to `batch` with spec.strategy.batch.size and
// .order; an empty order is left for the API server to default.
func (w *ClusterJobWrapper) Batch(size int32, order fleetv1.BatchOrder) *ClusterJobWrapper {
	return w.Strategy(fleetv1.Strategy{
		Type:  fleetv1.StrategyBatch,
		Batch: &fleetv1.BatchStrategy{Size: size, Order: order},
	})
}

// PerNodeGroup sets spec.strategy to `perNodeGroup` with
// spec.strategy.perNodeGroup.groupLabel and .ignoreNull.
func (w *ClusterJobWrapper) PerNodeGroup(groupLabel string, ignoreNull bool) *ClusterJobWrapper {
	return w.Strategy(fleetv1.Strategy{
		Type:         fleetv1.StrategyPerNodeGroup,
		PerNodeGroup: &fleetv1.PerNodeGroupStrategy{GroupLabel: groupLabel, IgnoreNull: ignoreNull},
	})
}

// FailureStrategy sets spec.failureStrategy.
func (w *ClusterJobWrapper) FailureStrategy(f fleetv1.FailureStrategy) *ClusterJobWrapper {
	w.Spec.FailureStrategy = f
	return w
}

// FailurePolicy sets spec.failurePolicy.
func (w *ClusterJobWrapper) FailurePolicy(p fleetv1.FailurePolicy) *ClusterJobWrapper {
	w.Spec.FailurePolicy = &p
	return w
}

// Gates sets spec.gates.
func (w *ClusterJobWrapper) Gates(g fleetv1.Gates) *ClusterJobWrapper {
	w.Spec.Gates = &g
	return w
}

// Windows sets spec.maintenanceWindows.
func (w *ClusterJobWrapper) Windows(ws ...fleetv1.MaintenanceWindow) *ClusterJobWrapper {
	w.Spec.MaintenanceWindows = ws
	return w
}

// MaxWindowWait sets spec.maxWindowWait.
func (w *ClusterJobWrapper) MaxWindowWait(d time.Duration) *ClusterJobWrapper {
	w.Spec.MaxWindowWait = &metav1.Duration{Duration: d}
	return w
}

// RetryOf makes the run a retry of parent, of the nodes include names
// (none: the default, Failed).
func (w *ClusterJobWrapper) RetryOf(parent string, include ...fleetv1.RetryInclude) *ClusterJobWrapper {
	w.Spec.RetryOf = &fleetv1.RetryOf{Name: parent}
	if len(include) > 0 {
		w.Spec.Retry = &fleetv1.Retry{Include: include}
	}
	return w
}

// Retry sets spec.retry.
func (w *ClusterJobWrapper) Retry(r fleetv1.Retry) *ClusterJobWrapper {
	w.Spec.Retry = &r
	return w
}

// MaxConcurrentClusters sets spec.clusterRollout.maxConcurrentClusters.
func (w *ClusterJobWrapper) MaxConcurrentClusters(n int32) *ClusterJobWrapper {
	w.Spec.ClusterRollout = &fleetv1.ClusterRollout{MaxConcurrentClusters: n}
	return w
}

// Suspend sets spec.suspend.
func (w *ClusterJobWrapper) Suspend(s bool) *ClusterJobWrapper {
	w.Spec.Suspend = ptr.To(s)
	return w
}

// Image sets the image of the first container of
// spec.jobTemplate.spec.template.
func (w *ClusterJobWrapper) Image(image string) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = image
	return w
}

// JobTemplate sets spec.jobTemplate as given, valid or not.
func (w *ClusterJobWrapper) JobTemplate(t batchv1.JobTemplateSpec) *ClusterJobWrapper {
	w.Spec.JobTemplate = t
	return w
}

// JobSelector sets spec.jobTemplate.spec.selector.
func (w *ClusterJobWrapper) JobSelector(s *metav1.LabelSelector) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.Selector = s
	return w
}

// ManualSelector sets spec.jobTemplate.spec.manualSelector.
func (w *ClusterJobWrapper) ManualSelector(m bool) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.ManualSelector = ptr.To(m)
	return w
}

// Parallelism sets spec.jobTemplate.spec.parallelism.
func (w *ClusterJobWrapper) Parallelism(n int32) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.Parallelism = ptr.To(n)
	return w
}

// Completions sets spec.jobTemplate.spec.completions.
func (w *ClusterJobWrapper) Completions(n int32) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.Completions = ptr.To(n)
	return w
}

// CompletionMode sets spec.jobTemplate.spec.completionMode.
func (w *ClusterJobWrapper) CompletionMode(m batchv1.CompletionMode) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.CompletionMode = ptr.To(m)
	return w
}

// TTLSecondsAfterFinished sets spec.jobTemplate.spec.ttlSecondsAfterFinished.
func (w *ClusterJobWrapper) TTLSecondsAfterFinished(s int32) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To(s)
	return w
}

// JobSuspend sets spec.jobTemplate.spec.suspend.
func (w *ClusterJobWrapper) JobSuspend(s bool) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.Suspend = ptr.To(s)
	return w
}

// ManagedBy sets spec.jobTemplate.spec.managedBy.
func (w *ClusterJobWrapper) ManagedBy(controller string) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.ManagedBy = ptr.To(controller)
	return w
}

// NodeName sets spec.jobTemplate.spec.template.spec.nodeName.
func (w *ClusterJobWrapper) NodeName(node string) *ClusterJobWrapper {
	w.Spec.JobTemplate.Spec.Template.Spec.NodeName = node
	return w
}

// PodAnnotation sets an annotation on spec.jobTemplate.spec.template, for
// example kwok's `pod-complete.stage.kwok.x-k8s.io/delay`.
func (w *ClusterJobWrapper) PodAnnotation(key, value string) *ClusterJobWrapper {
	if w.Spec.JobTemplate.Spec.Template.Annotations == nil {
		w.Spec.JobTemplate.Spec.Template.Annotations = map[string]string{}
	}
	w.Spec.JobTemplate.Spec.Template.Annotations[key] = value
	return w
}

// Status sets status, for writes through the status subresource.
func (w *ClusterJobWrapper) Status(s fleetv1.ClusterJobStatus) *ClusterJobWrapper {
	w.ClusterJob.Status = s
	return w
}
