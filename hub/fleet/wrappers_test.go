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
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/spoke"
)

const (
	testUID       = types.UID("3d0c6a8e-91b2-4f57-a7d4-2e6b1c9f0a55")
	testNamespace = "fleetjob-system"
	// timeout is the controller's --unreachable-timeout in every test.
	timeout = time.Hour
	// errorTimeout is the controller's --member-error-timeout in every test.
	errorTimeout = 10 * time.Minute
	// failReason and failMessage are what the Job controller writes on a Job
	// that ran out of retries.
	failReason  = "BackoffLimitExceeded"
	failMessage = "Job has reached the specified backoff limit"
	// unreachableReason and unreachableMessage are what the registry reports
	// for a member it cannot dial.
	unreachableReason  = "Unreachable"
	unreachableMessage = "dial tcp 10.0.0.7:6443: i/o timeout"
)

// now is Input.Now in every test; ago(d) is d before it.
var now = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

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

// nodeNames are the names of n nodes of cluster: <cluster>-n01, ... so that
// they sort by number and never clash across clusters.
func nodeNames(cluster string, n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = fmt.Sprintf("%s-n%02d", cluster, i+1)
	}
	return out
}

// readyNode returns a Ready, schedulable node.
func readyNode(name string) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
		}},
	}
}

// runWrapper is the run of a ClusterJob in one member: the plan frozen by
// plan.Compute and the Jobs that exist there. State derives spoke's view of
// it with spoke.Derive, so tests exercise the real derivation:
// makeRun(cj, "a", 6).Succeed(group 0...).Start(group 1...).State().
type runWrapper struct {
	run     spoke.Run
	plan    plan.Plan
	jobs    map[string]batchv1.Job
	present map[string]bool
}

// makeRun plans `ready` Ready nodes of cluster and the given cordoned nodes,
// which the plan skips. No Job exists yet.
func makeRun(cj *fleetv1.ClusterJob, cluster string, ready int, cordoned ...string) *runWrapper {
	var nodes []corev1.Node
	for _, n := range nodeNames(cluster, ready) {
		nodes = append(nodes, readyNode(n))
	}
	for _, n := range cordoned {
		node := readyNode(n)
		node.Spec.Unschedulable = true
		nodes = append(nodes, node)
	}
	p, err := plan.Compute(nodes, &cj.Spec, cj.UID, cluster)
	if err != nil {
		panic(err)
	}
	present := map[string]bool{}
	for _, n := range nodes {
		present[n.Name] = true
	}
	return &runWrapper{
		run:  spoke.Run{ClusterJob: cj, Cluster: cluster, Namespace: testNamespace},
		plan: p, jobs: map[string]batchv1.Job{}, present: present,
	}
}

// Group returns the nodes of the g-th group of the plan.
func (w *runWrapper) Group(g int) []string { return w.plan.Groups[g].Nodes }

// groupOf is the index and name of node's group.
func (w *runWrapper) groupOf(node string) (int, string) {
	for i, g := range w.plan.Groups {
		if slices.Contains(g.Nodes, node) {
			return i, g.Name
		}
	}
	panic(fmt.Sprintf("node %s is not in the plan of %s", node, w.run.Cluster))
}

// JobName is the name of node's Job, as spoke names it.
func (w *runWrapper) JobName(node string) string { return w.job(node).Name }

// job is node's Job as spoke.StartGroup creates it, started an hour ago.
func (w *runWrapper) job(node string) batchv1.Job {
	if j, ok := w.jobs[node]; ok {
		return j
	}
	g, name := w.groupOf(node)
	j := *spoke.BuildJob(w.run, node, g, name)
	j.Status.StartTime = mt(ago(time.Hour))
	return j
}

// Start creates the nodes' Jobs, running.
func (w *runWrapper) Start(nodes ...string) *runWrapper {
	for _, n := range nodes {
		w.jobs[n] = w.job(n)
	}
	return w
}

// Succeed gives the nodes a Job with a True Complete condition.
func (w *runWrapper) Succeed(nodes ...string) *runWrapper {
	return w.finish(nodes, batchv1.JobComplete, "CompletionsReached", "")
}

// Fail gives the nodes a Job with a True Failed condition.
func (w *runWrapper) Fail(nodes ...string) *runWrapper {
	return w.finish(nodes, batchv1.JobFailed, failReason, failMessage)
}

func (w *runWrapper) finish(nodes []string, t batchv1.JobConditionType, reason, msg string) *runWrapper {
	for _, n := range nodes {
		j := w.job(n)
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{
			Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg,
			LastTransitionTime: metav1.NewTime(ago(time.Minute)),
		})
		w.jobs[n] = j
	}
	return w
}

// Deleted removes the nodes from the cluster.
func (w *runWrapper) Deleted(nodes ...string) *runWrapper {
	for _, n := range nodes {
		delete(w.present, n)
	}
	return w
}

// State is spoke.Derive over the plan, the Jobs and the nodes present.
func (w *runWrapper) State() spoke.State {
	jobs := make([]batchv1.Job, 0, len(w.jobs))
	for _, n := range slices.Sorted(maps.Keys(w.jobs)) {
		jobs = append(jobs, w.jobs[n])
	}
	return spoke.Derive(&w.plan, jobs, w.present, spoke.Results{})
}

// Cluster is an engaged, reachable view of the cluster with this run.
func (w *runWrapper) Cluster() *clusterWrapper {
	return makeCluster(w.run.Cluster).State(w.State())
}

// clusterWrapper builds the hub's view of one cluster:
// makeCluster("a").Disengaged().Unreachable(ago(time.Minute)).Obj().
type clusterWrapper struct{ Cluster }

// makeCluster returns an engaged, reachable cluster with no plan.
func makeCluster(name string) *clusterWrapper {
	return &clusterWrapper{Cluster{Name: name, Engaged: true, Reachable: true}}
}

// State sets State.
func (w *clusterWrapper) State(st spoke.State) *clusterWrapper { w.Cluster.State = st; return w }

// Disengaged clears Engaged: the hub has no synced client for the cluster.
func (w *clusterWrapper) Disengaged() *clusterWrapper { w.Engaged = false; return w }

// Unreachable clears Reachable and sets UnreachableSince, Reason and Message
// as the registry reports a member it cannot dial.
func (w *clusterWrapper) Unreachable(since time.Time) *clusterWrapper {
	w.Reachable, w.UnreachableSince = false, since
	w.Reason, w.Message = unreachableReason, unreachableMessage
	return w
}

// Error sets Error, as when reading the run in the cluster failed. The state
// of a failed observation is empty, as spoke.Observe returns it.
func (w *clusterWrapper) Error(msg string) *clusterWrapper {
	w.Cluster.Error, w.Cluster.State = errors.New(msg), spoke.State{}
	return w
}

// Err sets Error to err, as when the hub's work in the cluster failed.
func (w *clusterWrapper) Err(err error) *clusterWrapper { w.Cluster.Error = err; return w }

// PlanLost marks the cluster's plan as gone, with left Jobs remaining.
func (w *clusterWrapper) PlanLost(left int) *clusterWrapper {
	w.Cluster.PlanLost, w.LeftJobs, w.Cluster.State = true, left, spoke.State{}
	return w
}

// Connecting marks the cluster as one the registry is still connecting to.
func (w *clusterWrapper) Connecting() *clusterWrapper {
	w.Engaged, w.Reachable, w.Reason, w.Message = false, false, fleetv1.ClusterReasonConnecting, "connecting"
	w.UnreachableSince = now
	return w
}

// Previous sets Previous, the cluster's row in the last written status.
func (w *clusterWrapper) Previous(row fleetv1.ClusterStatus) *clusterWrapper {
	row.Name = w.Name
	w.Cluster.Previous = &row
	return w
}

// Obj returns the cluster.
func (w *clusterWrapper) Obj() Cluster { return w.Cluster }

// input is the Input of cj over clusters at now, with the test timeout.
func input(cj *fleetv1.ClusterJob, clusters ...Cluster) Input {
	return Input{Spec: &cj.Spec, Clusters: clusters, Now: now, Created: ago(2 * time.Hour),
		UnreachableTimeout: timeout, MemberErrorTimeout: errorTimeout, EmptySelectionGrace: time.Minute}
}

// startedRow is a previous row of a cluster that started at start and runs.
func startedRow(start time.Time) fleetv1.ClusterStatus {
	return fleetv1.ClusterStatus{Phase: fleetv1.ClusterRunning, Reachable: true, Reason: fleetv1.ReasonRunning, StartTime: mt(start)}
}
