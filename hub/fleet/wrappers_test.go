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

package fleet

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

const (
	testUID = types.UID("3d0c6a8e-91b2-4f57-a7d4-2e6b1c9f0a55")
	// timeout is the controller's --unreachable-timeout in every test.
	timeout = time.Hour
	// errorTimeout is the controller's --member-error-timeout in every test.
	errorTimeout = 10 * time.Minute
)

// now is the world's Now in every test; ago(d) is d before it.
var now = wrappers.Now

func ago(d time.Duration) time.Time { return wrappers.Ago(d) }

// mt is a *metav1.Time for t.
func mt(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// clusterJobWrapper builds test ClusterJobs:
// makeClusterJob().Exit().MaxConcurrent(1).Obj().
type clusterJobWrapper struct{ fleetv1.ClusterJob }

// makeClusterJob returns a ClusterJob with testUID, alphabetical batches of 3
// nodes, failureStrategy keepgoing, no clusterRollout and a one-container
// template.
func makeClusterJob() *clusterJobWrapper {
	return &clusterJobWrapper{fleetv1.ClusterJob{
		ObjectMeta: metav1.ObjectMeta{Name: "disk-clean", Namespace: "team-a", UID: testUID, Generation: 1},
		Spec: fleetv1.ClusterJobSpec{
			ClusterSelector: &metav1.LabelSelector{},
			Strategy: fleetv1.Strategy{Type: fleetv1.StrategyBatch,
				Batch: &fleetv1.BatchStrategy{Size: 3, Order: fleetv1.BatchOrderAlphabetical}},
			FailureStrategy: fleetv1.FailureStrategyKeepGoing,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				},
			}}},
		},
	}}
}

// FailureStrategy sets spec.failureStrategy.
func (w *clusterJobWrapper) FailureStrategy(s fleetv1.FailureStrategy) *clusterJobWrapper {
	w.Spec.FailureStrategy = s
	return w
}

// Exit sets spec.failureStrategy to exit.
func (w *clusterJobWrapper) Exit() *clusterJobWrapper {
	return w.FailureStrategy(fleetv1.FailureStrategyExit)
}

// Policy sets spec.failurePolicy.
func (w *clusterJobWrapper) Policy(p fleetv1.FailurePolicy) *clusterJobWrapper {
	w.Spec.FailurePolicy = &p
	return w
}

// MaxConcurrent sets spec.clusterRollout.maxConcurrentClusters.
func (w *clusterJobWrapper) MaxConcurrent(n int32) *clusterJobWrapper {
	w.Spec.ClusterRollout = &fleetv1.ClusterRollout{MaxConcurrentClusters: n}
	return w
}

// Suspend sets spec.suspend.
func (w *clusterJobWrapper) Suspend(s bool) *clusterJobWrapper {
	w.Spec.Suspend = ptr.To(s)
	return w
}

// RandomOrder sets spec.strategy.batch.order to random.
func (w *clusterJobWrapper) RandomOrder() *clusterJobWrapper {
	w.Spec.Strategy.Batch.Order = fleetv1.BatchOrderRandom
	return w
}

// Obj returns the ClusterJob.
func (w *clusterJobWrapper) Obj() *fleetv1.ClusterJob { return &w.ClusterJob }

// input is the Input of cj over clusters at now, with the test timeout.
func input(cj *fleetv1.ClusterJob, clusters ...member.Cluster) world {
	return world{Spec: &cj.Spec, Clusters: clusters, Now: now, Created: ago(2 * time.Hour),
		UnreachableTimeout: timeout, MemberErrorTimeout: errorTimeout, EmptySelectionGrace: time.Minute}
}

// startedRow is a previous row of a cluster that started at start and runs.
func startedRow(start time.Time) fleetv1.ClusterStatus {
	return fleetv1.ClusterStatus{Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonRunning, StartTime: mt(start)}
}
