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

package wrappers

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/pkg/window"
	"github.com/fleetjob/fleetjob/spoke"
)

// The world of the hub's pure-decision tests: MakeRun builds a member's run
// from the real plan.Compute and spoke.Derive, MakeCluster the hub's view of
// the member.
const (
	// WorkNamespace is the member namespace of every run.
	WorkNamespace = "fleetjob-system"
	// FailReason and FailMessage are what the Job controller writes on a Job
	// that ran out of retries.
	FailReason  = "BackoffLimitExceeded"
	FailMessage = "Job has reached the specified backoff limit"
	// UnreachableReason and UnreachableMessage are what the registry reports
	// for a member it cannot dial.
	UnreachableReason  = "Unreachable"
	UnreachableMessage = "dial tcp 10.0.0.7:6443: i/o timeout"
)

// Now is the time of every pure-decision test; Ago(d) is d before it.
var Now = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// Ago is d before Now.
func Ago(d time.Duration) time.Time { return Now.Add(-d) }

// NodeNames are the names of n nodes of cluster: <cluster>-n01, ... so that
// they sort by number and never clash across clusters.
func NodeNames(cluster string, n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = fmt.Sprintf("%s-n%02d", cluster, i+1)
	}
	return out
}

// ReadyNode returns a Ready, schedulable node.
func ReadyNode(name string) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
		}},
	}
}

// RunWrapper is the run of a ClusterJob in one member: the plan frozen by
// plan.Compute and the Jobs that exist there. State derives spoke's view of
// it with spoke.Derive, so tests exercise the real derivation:
// MakeRun(cj, "a", 6).Succeed(group 0...).Start(group 1...).State().
type RunWrapper struct {
	run     spoke.Run
	plan    plan.Plan
	jobs    map[string]batchv1.Job
	present map[string]bool
	rec     spoke.Results
}

// MakeRun plans `ready` Ready nodes of cluster and the given cordoned nodes,
// which the plan skips. No Job exists yet.
func MakeRun(cj *fleetv1.ClusterJob, cluster string, ready int, cordoned ...string) *RunWrapper {
	var nodes []corev1.Node
	for _, n := range NodeNames(cluster, ready) {
		nodes = append(nodes, ReadyNode(n))
	}
	for _, n := range cordoned {
		node := ReadyNode(n)
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
	return &RunWrapper{
		run:  spoke.Run{ClusterJob: cj, Cluster: cluster, Namespace: WorkNamespace},
		plan: p, jobs: map[string]batchv1.Job{}, present: present,
	}
}

// Plan is the run's frozen plan.
func (w *RunWrapper) Plan() plan.Plan { return w.plan }

// Group returns the nodes of the g-th group of the plan.
func (w *RunWrapper) Group(g int) []string { return w.plan.Groups[g].Nodes }

// GroupOf is the index and name of node's group.
func (w *RunWrapper) GroupOf(node string) (int, string) {
	for i, g := range w.plan.Groups {
		if slices.Contains(g.Nodes, node) {
			return i, g.Name
		}
	}
	panic(fmt.Sprintf("node %s is not in the plan of %s", node, w.run.Cluster))
}

// JobName is the name of node's Job, as spoke names it.
func (w *RunWrapper) JobName(node string) string { return w.job(node).Name }

// job is node's Job as spoke.Member.StartGroup creates it, started an hour ago.
func (w *RunWrapper) job(node string) batchv1.Job {
	if j, ok := w.jobs[node]; ok {
		return j
	}
	g, name := w.GroupOf(node)
	j := *spoke.BuildJob(w.run, node, g, name)
	j.Status.StartTime = &metav1.Time{Time: Ago(time.Hour)}
	return j
}

// Start creates the nodes' Jobs, running.
func (w *RunWrapper) Start(nodes ...string) *RunWrapper {
	for _, n := range nodes {
		w.jobs[n] = w.job(n)
	}
	return w
}

// Succeed gives the nodes a Job with a True Complete condition.
func (w *RunWrapper) Succeed(nodes ...string) *RunWrapper {
	return w.finish(nodes, batchv1.JobComplete, "CompletionsReached", "")
}

// Fail gives the nodes a Job with a True Failed condition.
func (w *RunWrapper) Fail(nodes ...string) *RunWrapper {
	return w.finish(nodes, batchv1.JobFailed, FailReason, FailMessage)
}

func (w *RunWrapper) finish(nodes []string, t batchv1.JobConditionType, reason, msg string) *RunWrapper {
	for _, n := range nodes {
		j := w.job(n)
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{
			Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg,
			LastTransitionTime: metav1.NewTime(Ago(time.Minute)),
		})
		w.jobs[n] = j
	}
	return w
}

// LostSince gives the nodes a Job whose pod started and is not Ready now,
// as on a lost node, and records the hub first read them lost at since.
func (w *RunWrapper) LostSince(since time.Time, nodes ...string) *RunWrapper {
	lost := map[string]spoke.NodeResult{}
	for _, n := range nodes {
		j := w.job(n)
		j.Status.Active, j.Status.Ready = 1, ptr.To[int32](0)
		w.jobs[n] = j
		lost[n] = spoke.NodeResult{Phase: spoke.NodeRunning, Started: true, Lost: since.Unix()}
	}
	w.rec.Nodes = w.rec.Nodes.With(lost)
	return w
}

// Deleted removes the nodes from the cluster.
func (w *RunWrapper) Deleted(nodes ...string) *RunWrapper {
	for _, n := range nodes {
		delete(w.present, n)
	}
	return w
}

// State is spoke.Derive over the plan, the Jobs and the nodes present.
func (w *RunWrapper) State() spoke.State {
	jobs := make([]batchv1.Job, 0, len(w.jobs))
	for _, n := range slices.Sorted(maps.Keys(w.jobs)) {
		jobs = append(jobs, w.jobs[n])
	}
	return spoke.Derive(&w.plan, jobs, w.present, w.rec)
}

// Cluster is an engaged, reachable view of the cluster with this run.
func (w *RunWrapper) Cluster() *ClusterWrapper {
	return MakeCluster(w.run.Cluster).State(w.State())
}

// ClusterWrapper builds the hub's view of one cluster:
// MakeCluster("a").Disengaged().Unreachable(Ago(time.Minute)).Obj().
type ClusterWrapper struct{ member.Cluster }

// MakeCluster returns an engaged, reachable cluster with no plan.
func MakeCluster(name string) *ClusterWrapper {
	return &ClusterWrapper{member.Cluster{Name: name, Engaged: true, Reachable: true}}
}

// State sets State.
func (w *ClusterWrapper) State(st spoke.State) *ClusterWrapper { w.Cluster.State = st; return w }

// Disengaged clears Engaged: the hub has no synced client for the cluster.
func (w *ClusterWrapper) Disengaged() *ClusterWrapper { w.Engaged = false; return w }

// Unreachable clears Reachable and sets UnreachableSince, Reason and Message
// as the registry reports a member it cannot dial.
func (w *ClusterWrapper) Unreachable(since time.Time) *ClusterWrapper {
	w.Reachable, w.UnreachableSince = false, since
	w.Reason, w.Message = UnreachableReason, UnreachableMessage
	return w
}

// Error sets Error, as when reading the run in the cluster failed. The state
// of a failed observation is empty, as spoke.Member.Observe returns it.
func (w *ClusterWrapper) Error(msg string) *ClusterWrapper {
	w.Cluster.Error, w.Cluster.State = errors.New(msg), spoke.State{}
	return w
}

// Err sets Error to err, as when the hub's work in the cluster failed.
func (w *ClusterWrapper) Err(err error) *ClusterWrapper { w.Cluster.Error = err; return w }

// PlanLost marks the cluster's plan as gone, with left Jobs remaining.
func (w *ClusterWrapper) PlanLost(left int) *ClusterWrapper {
	w.Cluster.PlanLost, w.LeftJobs, w.Cluster.State = true, left, spoke.State{}
	return w
}

// Connecting marks the cluster as one the registry is still connecting to.
func (w *ClusterWrapper) Connecting() *ClusterWrapper {
	w.Engaged, w.Reachable, w.Reason, w.Message = false, false, fleetv1.ClusterReasonConnecting, "the hub has not connected to it yet"
	w.UnreachableSince = Now
	return w
}

// Previous sets Previous, the cluster's row in the last written status.
func (w *ClusterWrapper) Previous(row fleetv1.ClusterStatus) *ClusterWrapper {
	row.Name = w.Name
	w.Cluster.Previous = &row
	return w
}

// Windows sets Windows, the maintenance windows parsed as the hub parses
// them, or WindowError when they cannot be.
func (w *ClusterWrapper) Windows(ws ...fleetv1.MaintenanceWindow) *ClusterWrapper {
	set, err := window.Parse("spec.maintenanceWindows", ws)
	w.Cluster.Windows, w.WindowError = window.All(set), err
	return w
}

// Obj returns the cluster.
func (w *ClusterWrapper) Obj() member.Cluster { return w.Cluster }
