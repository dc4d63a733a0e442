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

package spoke

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

const (
	testUID       = types.UID("6f1c0f3e-2b7d-4a51-9a0e-3c5d8e7f9a10")
	otherUID      = types.UID("0b7a2c4e-5f1d-4b8a-9c3e-7d6f5a4b3c2d")
	thirdUID      = types.UID("9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b")
	fourthUID     = types.UID("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f")
	testCluster   = "member-1"
	testNamespace = "fleetjob-system"
	testHub       = "hub-1"
	otherHub      = "hub-2"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
	t2 = metav1.NewTime(t0.Add(2 * time.Minute))
)

// clusterJobWrapper builds test ClusterJobs:
// makeClusterJob("disk-clean").Batch(2).Obj().
type clusterJobWrapper struct{ fleetv1.ClusterJob }

// makeClusterJob returns a ClusterJob in namespace team-a with testUID, the
// `all` strategy and a one-container template.
func makeClusterJob(name string) *clusterJobWrapper {
	return &clusterJobWrapper{fleetv1.ClusterJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: testUID},
		Spec: fleetv1.ClusterJobSpec{
			ClusterSelector: &metav1.LabelSelector{},
			Strategy:        fleetv1.Strategy{Type: fleetv1.StrategyAll},
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				},
			}}},
		},
	}}
}

// UID sets metadata.uid.
func (w *clusterJobWrapper) UID(uid types.UID) *clusterJobWrapper { w.ObjectMeta.UID = uid; return w }

// Batch sets spec.strategy to alphabetical batches of size nodes.
func (w *clusterJobWrapper) Batch(size int32) *clusterJobWrapper {
	w.Spec.Strategy = fleetv1.Strategy{Type: fleetv1.StrategyBatch, Batch: &fleetv1.BatchStrategy{Size: size, Order: fleetv1.BatchOrderAlphabetical}}
	return w
}

// Template sets spec.jobTemplate.
func (w *clusterJobWrapper) Template(t batchv1.JobTemplateSpec) *clusterJobWrapper {
	w.Spec.JobTemplate = t
	return w
}

// Obj returns the ClusterJob.
func (w *clusterJobWrapper) Obj() *fleetv1.ClusterJob { return &w.ClusterJob }

// testRun is the run of cj in testCluster's testNamespace.
func testRun(cj *fleetv1.ClusterJob) Run {
	return Run{ClusterJob: cj, Cluster: testCluster, Namespace: testNamespace, Hub: testHub}
}

// jobWrapper builds test Jobs: makeJob("n1").Complete(t1).Obj().
type jobWrapper struct{ batchv1.Job }

// makeJob returns the Job of node in the test run, as StartGroup creates it,
// with no status.
func makeJob(node string) *jobWrapper {
	cj := makeClusterJob("disk-clean").Obj()
	return &jobWrapper{*BuildJob(testRun(cj), node, 0, "all")}
}

// ForeignNode sets the node annotation, as if the Job ran another node.
func (w *jobWrapper) ForeignNode(node string) *jobWrapper {
	w.Annotations[fleetv1.NodeAnnotation] = node
	return w
}

// Owner sets the ClusterJob UID label; "" removes it.
func (w *jobWrapper) Owner(uid types.UID) *jobWrapper {
	if uid == "" {
		delete(w.Labels, fleetv1.ClusterJobUIDLabel)
		return w
	}
	w.Labels[fleetv1.ClusterJobUIDLabel] = naming.LabelValue(string(uid))
	return w
}

// Hub sets the hub label; "" removes it, as on objects from before it.
func (w *jobWrapper) Hub(hub string) *jobWrapper {
	if hub == "" {
		delete(w.Labels, fleetv1.HubLabel)
		return w
	}
	w.Labels[fleetv1.HubLabel] = hub
	return w
}

// OfClusterJob sets the ClusterJob annotation to key ("namespace/name").
func (w *jobWrapper) OfClusterJob(key string) *jobWrapper {
	w.Annotations[fleetv1.ClusterJobAnnotation] = key
	return w
}

// Created sets metadata.creationTimestamp.
func (w *jobWrapper) Created(t metav1.Time) *jobWrapper { w.CreationTimestamp = t; return w }

// Unmanaged removes the managed-by label.
func (w *jobWrapper) Unmanaged() *jobWrapper { delete(w.Labels, fleetv1.ManagedByLabel); return w }

// Started sets status.startTime.
func (w *jobWrapper) Started(t metav1.Time) *jobWrapper { w.Status.StartTime = &t; return w }

// Pods sets status.active, status.ready and status.terminating.
func (w *jobWrapper) Pods(active, ready, terminating int32) *jobWrapper {
	w.Status.Active, w.Status.Ready, w.Status.Terminating = active, &ready, &terminating
	return w
}

// Condition adds a status.conditions entry.
func (w *jobWrapper) Condition(ct batchv1.JobConditionType, s corev1.ConditionStatus, reason, msg string, t metav1.Time) *jobWrapper {
	w.Status.Conditions = append(w.Status.Conditions, batchv1.JobCondition{
		Type: ct, Status: s, Reason: reason, Message: msg, LastTransitionTime: t,
	})
	return w
}

// Complete adds a True Complete condition at t.
func (w *jobWrapper) Complete(t metav1.Time) *jobWrapper {
	return w.Condition(batchv1.JobComplete, corev1.ConditionTrue, "CompletionsReached", "", t)
}

// Failed adds a True Failed condition at t.
func (w *jobWrapper) Failed(reason, msg string, t metav1.Time) *jobWrapper {
	return w.Condition(batchv1.JobFailed, corev1.ConditionTrue, reason, msg, t)
}

// Obj returns the Job.
func (w *jobWrapper) Obj() batchv1.Job { return w.Job }

// Ptr returns a pointer to the Job, for a fake client.
func (w *jobWrapper) Ptr() *batchv1.Job { return &w.Job }

// readyNode returns a Ready, schedulable node.
func readyNode(name string) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
		}},
	}
}

func readyNodes(names ...string) []corev1.Node {
	out := make([]corev1.Node, len(names))
	for i, n := range names {
		out[i] = readyNode(n)
	}
	return out
}

// nodeObjects returns Ready nodes as objects for a fake client.
func nodeObjects(names ...string) []client.Object {
	out := make([]client.Object, len(names))
	for i, n := range readyNodes(names...) {
		out[i] = &n
	}
	return out
}

// present is a nodesPresent set.
func present(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}
