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
	"context"
	"fmt"
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/pkg/text"
)

const (
	// resultsKey names the results document in its ConfigMap.
	resultsKey = "results.json"
	// resultsComponent is the ComponentLabel value of a results ConfigMap.
	resultsComponent = "results"
	// maxResultMessage bounds a recorded failure message, so that a
	// cluster's record stays small: the Job's condition has the rest while
	// it exists.
	maxResultMessage = 128
	// maxOutput bounds a failed node's recorded termination message, for
	// the first maxFullOutputs failed nodes; later ones keep
	// maxResultMessage, so that a cluster where every node fails still
	// fits its record in one ConfigMap.
	maxOutput      = 1024
	maxFullOutputs = 100
)

// Results is the run's record in one member of which nodes got a Job and
// how each finished. It only ever grows: a node is recorded when its Job is
// created and once more when it finishes, so the record outlives the Jobs
// (a TTL, a namespace cleaner, a hand) and a node is never run twice.
type Results struct {
	// Nodes maps a node name to its result.
	Nodes map[string]NodeResult `json:"nodes,omitempty"`
}

// NodeResult is one node's recorded result.
type NodeResult struct {
	// Phase is Running while the Job runs, then Succeeded or Failed.
	Phase NodePhase `json:"p"`
	// Reason and Message tell why a node failed.
	Reason  string `json:"r,omitempty"`
	Message string `json:"m,omitempty"`
	// Start and Finish are Unix seconds, 0 when unknown.
	Start  int64 `json:"s,omitempty"`
	Finish int64 `json:"f,omitempty"`
	// Started tells that the node's pod started once.
	Started bool `json:"st,omitempty"`
	// Lost is when the hub first read a running node lost, Unix seconds by
	// the hub's clock, 0 while it is not: spec.nodeLostTimeout counts from
	// it across hub restarts.
	Lost int64 `json:"l,omitempty"`
	// ExitCode and Output are a failed node's container exit code and the
	// start of its termination message, when its pod could be read.
	ExitCode *int32 `json:"x,omitempty"`
	Output   string `json:"o,omitempty"`
}

func (r NodeResult) final() bool {
	return r.Phase == NodeSucceeded || r.Phase == NodeFailed || r.Phase == NodeSkipped
}

// state is the node state the result stands for when the Job is gone.
func (r NodeResult) state(node string) NodeState {
	ns := NodeState{Node: node, Phase: r.Phase, Reason: r.Reason, Message: r.Message, StartTime: unixTime(r.Start), CompletionTime: unixTime(r.Finish),
		ExitCode: r.ExitCode, Output: r.Output}
	if !r.final() {
		ns.Phase, ns.Reason, ns.Message = NodeFailed, fleetv1.NodeReasonJobDeleted, "the node's Job was deleted before it finished; it is not run again"
	}
	if ns.Phase == NodeSkipped {
		ns.StartTime, ns.CompletionTime = nil, nil
	}
	return ns
}

// Record returns the record after this reconcile: prev plus the nodes of st
// that have a Job or a result now, the nodes whose Jobs were just created
// and those skipped when their group started. changed tells whether it must
// be written. It is pure.
func Record(prev Results, st State, created []string, skipped []plan.SkippedNode) (Results, bool) {
	next := Results{Nodes: maps.Clone(prev.Nodes)}
	if next.Nodes == nil {
		next.Nodes = map[string]NodeResult{}
	}
	changed := false
	set := func(node string, r NodeResult) {
		old, ok := next.Nodes[node]
		if ok && old.final() {
			return // a result never changes
		}
		if ok && !r.final() {
			r.Start, r.Started = max(r.Start, old.Start), r.Started || old.Started
		}
		if !ok || r != old {
			next.Nodes[node] = r
			changed = true
		}
	}
	fullOutputs := 0
	for _, r := range next.Nodes {
		if len(r.Output) > maxResultMessage {
			fullOutputs++
		}
	}
	for _, n := range st.Nodes {
		if n.Job == "" && n.Reason != fleetv1.NodeReasonJobDeleted {
			continue // no Job, ever: pending, or skipped before it started
		}
		r := NodeResult{Phase: n.Phase, Start: unix(n.StartTime), Finish: unix(n.CompletionTime)}
		switch n.Phase {
		case NodeFailed:
			r.Reason, r.Message, r.ExitCode = n.Reason, text.Truncate(n.Message, maxResultMessage), n.ExitCode
			bound := maxResultMessage
			if old, ok := next.Nodes[n.Node]; fullOutputs < maxFullOutputs && (!ok || !old.final()) {
				bound = maxOutput
			}
			if r.Output = text.Truncate(n.Output, bound); len(r.Output) > maxResultMessage {
				fullOutputs++
			}
		case NodeSucceeded:
		default:
			r = NodeResult{Phase: NodeRunning, Start: r.Start, Started: n.Started, Lost: unix(n.LostSince)}
		}
		set(n.Node, r)
	}
	for _, node := range created {
		set(node, NodeResult{Phase: NodeRunning})
	}
	for _, s := range skipped {
		set(s.Node, NodeResult{Phase: NodeSkipped, Reason: s.Reason, Message: text.Truncate(s.Message, maxResultMessage)})
	}
	return next, changed
}

// ReadResults reads the run's record; it is empty when there is none yet.
// cm is the stored ConfigMap, nil when there is none.
func ReadResults(ctx context.Context, r client.Reader, run Run) (Results, *corev1.ConfigMap, error) {
	return readResults(ctx, r, run, nil)
}

// readResults is ReadResults, taking the record from records (nil: none)
// when it is the one last written.
func readResults(ctx context.Context, r client.Reader, run Run, records *Records) (Results, *corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: run.Namespace, Name: naming.ResultsName(run.ClusterJob.UID)}
	if err := r.Get(ctx, key, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return Results{}, nil, nil
		}
		return Results{}, nil, fmt.Errorf("reading the results ConfigMap %s: %w", key, err)
	}
	if !ownedBy(cm, run.ClusterJob.UID) {
		return Results{}, nil, fmt.Errorf("ConfigMap %s exists but does not belong to ClusterJob %s", key, run.ClusterJob.UID)
	}
	if res, ok := records.get(cm.UID, cm.ResourceVersion); ok {
		return res, cm, nil
	}
	var res Results
	if err := decodeDocument(cm, resultsKey, &res); err != nil {
		return Results{}, nil, err
	}
	return res, cm, nil
}

// WriteResults stores res, the record that Record derived from stored (the
// ConfigMap it read, nil if none). A write that loses a race with another
// (a cache behind the last write) merges with the stored record read live
// and tries once more: records only grow, so merging loses nothing.
func WriteResults(ctx context.Context, c client.Client, live client.Reader, run Run, res Results, stored *corev1.ConfigMap) error {
	return writeResultsMerging(ctx, c, live, run, res, stored, nil)
}

// writeResultsMerging is WriteResults, keeping what it wrote in records
// (nil: nowhere).
func writeResultsMerging(ctx context.Context, c client.Client, live client.Reader, run Run, res Results, stored *corev1.ConfigMap, records *Records) error {
	err := writeResults(ctx, c, run, res, stored, records)
	if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
		return err
	}
	current, cm, rerr := ReadResults(ctx, live, run)
	if rerr != nil {
		return rerr
	}
	return writeResults(ctx, c, run, merge(current, res), cm, records)
}

func writeResults(ctx context.Context, c client.Client, run Run, res Results, stored *corev1.ConfigMap, records *Records) error {
	data, err := encodeDocument(resultsKey, res)
	if err != nil {
		return fmt.Errorf("encoding the results: %w", err)
	}
	if stored == nil {
		labels := runLabels(run)
		labels[fleetv1.ComponentLabel] = resultsComponent
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: naming.ResultsName(run.ClusterJob.UID), Namespace: run.Namespace,
				Labels: labels, Annotations: runAnnotations(run)},
			BinaryData: data,
		}
		if err := c.Create(ctx, cm); err != nil {
			return fmt.Errorf("creating the results ConfigMap %s: %w", client.ObjectKeyFromObject(cm), err)
		}
		records.put(cm.UID, cm.ResourceVersion, res)
		return nil
	}
	cm := stored.DeepCopy()
	cm.Data, cm.BinaryData = nil, data
	// The resourceVersion read is kept: Update fails on a newer record
	// rather than overwrite it.
	if err := c.Update(ctx, cm); err != nil {
		return fmt.Errorf("updating the results ConfigMap %s: %w", client.ObjectKeyFromObject(cm), err)
	}
	records.put(cm.UID, cm.ResourceVersion, res)
	return nil
}

// merge is a with every result of b that a lacks or has not finished.
func merge(a, b Results) Results {
	out := Results{Nodes: maps.Clone(a.Nodes)}
	if out.Nodes == nil {
		out.Nodes = map[string]NodeResult{}
	}
	for node, r := range b.Nodes {
		if old, ok := out.Nodes[node]; !ok || !old.final() && r.final() {
			out.Nodes[node] = r
		}
	}
	return out
}

// liveJobs lists the run's Jobs from the API server, metadata only, as Jobs
// without status: they tell a Job the cache has not seen yet from one that
// is gone.
func liveJobs(ctx context.Context, live client.Reader, run Run) ([]batchv1.Job, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("JobList"))
	var out []batchv1.Job
	opts := []client.ListOption{client.InNamespace(run.Namespace), runSelector(run), client.Limit(nodePageSize)}
	for range maxNodes/nodePageSize + 1 {
		if err := live.List(ctx, &list, opts...); err != nil {
			return nil, fmt.Errorf("listing the Jobs of the run in namespace %s: %w", run.Namespace, err)
		}
		for _, item := range list.Items {
			out = append(out, batchv1.Job{ObjectMeta: item.ObjectMeta})
		}
		if list.Continue == "" {
			return out, nil
		}
		opts = []client.ListOption{client.InNamespace(run.Namespace), runSelector(run), client.Limit(nodePageSize), client.Continue(list.Continue)}
	}
	return nil, fmt.Errorf("the run has more than %d Jobs in namespace %s", maxNodes, run.Namespace)
}

func unix(t *metav1.Time) int64 {
	if t == nil {
		return 0
	}
	return t.Unix()
}

func unixTime(s int64) *metav1.Time {
	if s == 0 {
		return nil
	}
	t := metav1.Unix(s, 0)
	return &t
}
