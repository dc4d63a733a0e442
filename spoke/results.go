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
	"iter"
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/pkg/text"
)

const (
	// resultsKey names the results document in its ConfigMap.
	resultsKey = "results.json"
	// resultsComponent is the ComponentLabel value of a results ConfigMap.
	resultsComponent = "results"
	// resultsPartComponent is the ComponentLabel value of the ConfigMaps
	// that hold the rest of a record too large for one (parts.go).
	resultsPartComponent = "results-part"
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
// how each finished. It only ever grows: a node is recorded as starting
// before its Job is created (written ahead: a node the record names is
// never created again, whatever the Job store says) and once more when it
// finishes, so the record outlives the Jobs (a TTL, a namespace cleaner, a
// hand, a hub that crashed between the create and the record) and a node
// is never run twice.
type Results struct {
	// Nodes maps a node name to its result.
	Nodes ResultMap `json:"nodes,omitzero"`
}

// NodeStarting is the recorded phase of a node whose Job is about to be
// created, or was created and not seen yet. It is only ever recorded: the
// node's state is its Job's while the Job exists, and a failure once it is
// gone. The Job's name is not recorded: it is naming.JobName of the run and
// the node, the record's own key.
const NodeStarting NodePhase = "Starting"

// NodeResult is one node's recorded result.
type NodeResult struct {
	// Phase is Starting before its Job is seen, Running while the Job
	// runs, then Succeeded or Failed.
	Phase NodePhase `json:"p"`
	// Reason and Message tell why a node failed or, while its pod has not
	// started, what its member says refuses it.
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
	// Attempt names the write that recorded a Starting node, so that a
	// write whose outcome is unknown takes off only the nodes it recorded.
	Attempt string `json:"a,omitempty"`
	// Drain is what the node's drain came to, recorded with its start or
	// its failure.
	Drain noderesults.Drain `json:"d,omitzero"`
}

func (r NodeResult) final() bool {
	return r.Phase == NodeSucceeded || r.Phase == NodeFailed || r.Phase == NodeSkipped
}

// state is the node state the result stands for when the Job is gone.
func (r NodeResult) state(node string) NodeState {
	ns := NodeState{Node: node, Phase: r.Phase, Reason: r.Reason, Message: r.Message, StartTime: unixTime(r.Start), CompletionTime: unixTime(r.Finish),
		ExitCode: r.ExitCode, Output: r.Output, Drain: r.Drain}
	switch {
	case r.Phase == NodeStarting:
		ns.Phase, ns.Reason, ns.Message = NodeFailed, fleetv1.NodeReasonJobDeleted, jobLostMessage
	case !r.final():
		ns.Phase, ns.Reason, ns.Message = NodeFailed, fleetv1.NodeReasonJobDeleted, "the node's Job was deleted before it finished; it is not run again"
	}
	if ns.Phase == NodeSkipped {
		ns.StartTime, ns.CompletionTime = nil, nil
	}
	return ns
}

// jobLostMessage explains a node recorded as starting whose Job is not
// there: its creation was written ahead, and the hub cannot tell a Job
// never created (the hub stopped, or the create failed in a way that does
// not say) from one created, run and deleted before the hub saw it.
const jobLostMessage = "its Job is not there: deleted before the hub saw it, or its create interrupted (the hub stopped); it is not run again"

// Record returns the record after this reconcile: prev plus the nodes of st
// that have a Job or a result now, the nodes whose Jobs were just created
// and those skipped when their group started. changed tells whether it must
// be written. It is pure.
func Record(prev Results, st State, created []string, skipped []plan.SkippedNode) (Results, bool) {
	next, changed := recordChanges(prev, st, created, skipped)
	return next, len(changed) > 0
}

// recordChanges is Record, naming the nodes whose results changed. It costs what
// changed: the new record shares with prev every bucket of its ResultMap
// but those of the nodes that changed (prev itself is returned when none
// did), and a node whose result is final is passed over at the price of one
// lookup.
func recordChanges(prev Results, st State, created []string, skipped []plan.SkippedNode) (Results, []string) {
	return recordChangesOf(prev, st, nil, created, skipped)
}

// recordChangesOf is recordChanges looking only at the nodes of st at
// places (nil: every node), in plan order.
func recordChangesOf(prev Results, st State, places []int, created []string, skipped []plan.SkippedNode) (Results, []string) {
	updates := map[string]NodeResult{}
	var changed []string
	get := func(node string) (NodeResult, bool) {
		if r, ok := updates[node]; ok {
			return r, true
		}
		r, ok := prev.Nodes.Lookup(node)
		return r, ok
	}
	set := func(node string, r NodeResult) {
		old, ok := get(node)
		if ok && old.final() {
			return // a result never changes
		}
		if ok && old.Phase == NodeStarting && r.Phase == NodeRunning && r.Start == 0 && !r.Started && r.Reason == "" {
			return // a Job seen that tells nothing new: not worth a write
		}
		if ok && !r.final() {
			r.Start, r.Started = max(r.Start, old.Start), r.Started || old.Started
		}
		if !ok || r != old {
			if _, again := updates[node]; !again {
				changed = append(changed, node)
			}
			updates[node] = r
		}
	}
	fullOutputs := -1 // counted when a failed node first needs it
	for n := range nodesAt(st.Nodes, places) {
		if n.Job == "" && n.Reason != fleetv1.NodeReasonJobDeleted {
			continue // no Job, ever: pending, or skipped before it started
		}
		if old, ok := get(n.Node); ok && old.final() {
			continue
		}
		r := NodeResult{Phase: n.Phase, Start: unix(n.StartTime), Finish: unix(n.CompletionTime), Drain: n.Drain}
		switch n.Phase {
		case NodeFailed:
			if fullOutputs < 0 {
				fullOutputs = countFullOutputs(prev, updates)
			}
			r.Reason, r.Message, r.ExitCode = n.Reason, text.Truncate(n.Message, maxResultMessage), n.ExitCode
			bound := maxResultMessage
			if fullOutputs < maxFullOutputs {
				bound = maxOutput
			}
			if r.Output = text.Truncate(n.Output, bound); len(r.Output) > maxResultMessage {
				fullOutputs++
			}
		case NodeSucceeded:
		default:
			r = NodeResult{Phase: NodeRunning, Start: r.Start, Started: n.Started, Lost: unix(n.LostSince), Drain: n.Drain}
			if waitingForStart(n) {
				r.Reason, r.Message = n.Reason, text.Truncate(n.Message, maxResultMessage)
			}
		}
		set(n.Node, r)
	}
	for _, node := range created {
		set(node, NodeResult{Phase: NodeRunning})
	}
	for _, s := range skipped {
		phase := NodeSkipped
		if DrainFailed(s.Reason) {
			phase = NodeFailed // cordoned and partly drained: it was disrupted, not passed over
		}
		set(s.Node, NodeResult{Phase: phase, Reason: s.Reason, Message: text.Truncate(s.Message, maxResultMessage)})
	}
	if len(changed) == 0 {
		return prev, nil
	}
	return Results{Nodes: prev.Nodes.With(updates)}, changed
}

// nodesAt yields the nodes at places, every node when places is nil.
func nodesAt(nodes []NodeState, places []int) iter.Seq[NodeState] {
	return func(yield func(NodeState) bool) {
		if places == nil {
			for _, n := range nodes {
				if !yield(n) {
					return
				}
			}
			return
		}
		for _, k := range places {
			if !yield(nodes[k]) {
				return
			}
		}
	}
}

// countFullOutputs counts the recorded failures that keep a long output.
func countFullOutputs(prev Results, updates map[string]NodeResult) int {
	n := 0
	for node, r := range prev.Nodes.All() {
		if _, replaced := updates[node]; !replaced && len(r.Output) > maxResultMessage {
			n++
		}
	}
	for _, r := range updates {
		if len(r.Output) > maxResultMessage {
			n++
		}
	}
	return n
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
	if err := recordLayout(run).decode(ctx, r, cm, run, &res); err != nil {
		return Results{}, nil, err
	}
	return res, cm, nil
}

// WriteResults stores res, the record that Record derived from stored (the
// ConfigMap it read, nil if none). A write that loses a race with another
// (a cache behind the last write) merges with the stored record read live
// and tries once more: records only grow, so merging loses nothing.
func (m Member) WriteResults(ctx context.Context, res Results, stored *corev1.ConfigMap) error {
	_, err := m.writeResultsMerging(ctx, Results{}, res, nil, stored)
	return err
}

// written is a record as a write stored it.
type written struct {
	// prior is the record the write replaced: the one read, or the one
	// read live after a lost race.
	prior Results
	// res is the record stored, and cm its ConfigMap as written.
	res Results
	cm  *corev1.ConfigMap
}

// writeResultsMerging is WriteResults, keeping what it wrote in records
// (nil: nowhere). read is the record stored was read with, and changed the
// nodes res changes in it (nil: not known).
func (m Member) writeResultsMerging(ctx context.Context, read, res Results, changed []string, stored *corev1.ConfigMap) (written, error) {
	cm, err := m.writeResults(ctx, res, changed, stored)
	if err == nil {
		return written{prior: read, res: res, cm: cm}, nil
	}
	if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
		return written{}, err
	}
	current, stored, err := ReadResults(ctx, m.Live, m.Run)
	if err != nil {
		return written{}, err
	}
	res = merge(current, res)
	cm, err = m.writeResults(ctx, res, nil, stored)
	if err != nil {
		return written{}, err
	}
	return written{prior: current, res: res, cm: cm}, nil
}

// writeResults stores res over stored (nil: there is none) and returns the
// ConfigMap as written. A record too large for one ConfigMap is split: its
// parts are written first, under names no other version of the record has,
// then the record ConfigMap that names them, then the parts it replaced are
// deleted. A reader never sees parts change under a record ConfigMap.
// changed names the nodes res changes in stored (nil: not known).
func (m Member) writeResults(ctx context.Context, res Results, changed []string, stored *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	enc, err := m.Caches.Records.encode(stored, res, changed)
	if err != nil {
		return nil, fmt.Errorf("encoding the results: %w", err)
	}
	l := recordLayout(m.Run)
	chunks, annotations, err := l.split(enc.document())
	if err != nil {
		return nil, err
	}
	cm := resultsConfigMap(m.Run, stored, chunks[0], annotations)
	made, err := m.createResultsParts(ctx, l, cm, chunks[1:])
	if err == nil {
		err = storeResults(ctx, m.Client, cm, stored == nil)
	}
	if err != nil {
		deleteResultsParts(ctx, m.Client, m.Run.Namespace, made)
		return nil, err
	}
	if stored != nil && stored.Annotations[l.digest] != cm.Annotations[l.digest] {
		old, _ := l.partNames(stored) // a stored record that names none has none to delete
		deleteResultsParts(ctx, m.Client, m.Run.Namespace, old)
	}
	from := ""
	if stored != nil {
		from = stored.ResourceVersion
	}
	m.Caches.Records.put(cm.UID, m.Run, cm.ResourceVersion, res, enc, from, changed)
	return cm, nil
}

// resultsConfigMap is the record ConfigMap holding chunk and annotations:
// stored changed (its resourceVersion kept, so that an Update fails on a
// newer record rather than overwrite it), or a new one.
func resultsConfigMap(run Run, stored *corev1.ConfigMap, chunk []byte, annotations map[string]string) *corev1.ConfigMap {
	var cm *corev1.ConfigMap
	if stored != nil {
		cm = stored.DeepCopy()
	} else {
		labels := runLabels(run)
		labels[fleetv1.ComponentLabel] = resultsComponent
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: naming.ResultsName(run.ClusterJob.UID), Namespace: run.Namespace,
			Labels: labels, Annotations: runAnnotations(run)}}
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	delete(cm.Annotations, fleetv1.RecordPartsAnnotation)
	delete(cm.Annotations, fleetv1.RecordDigestAnnotation)
	maps.Copy(cm.Annotations, annotations)
	cm.Data, cm.BinaryData = nil, map[string][]byte{resultsKey + compressedSuffix: chunk}
	return cm
}

// storeResults creates or updates the record ConfigMap cm.
func storeResults(ctx context.Context, c client.Client, cm *corev1.ConfigMap, create bool) error {
	if create {
		if err := c.Create(ctx, cm); err != nil {
			return fmt.Errorf("creating the results ConfigMap %s: %w", client.ObjectKeyFromObject(cm), err)
		}
		return nil
	}
	if err := c.Update(ctx, cm); err != nil {
		return fmt.Errorf("updating the results ConfigMap %s: %w", client.ObjectKeyFromObject(cm), err)
	}
	return nil
}

// createResultsParts creates the parts of the split record cm, chunks, and
// returns the names of those it created. A part that exists already holds
// the same bytes: its name is the digest of the whole.
func (m Member) createResultsParts(ctx context.Context, l layout, cm *corev1.ConfigMap, chunks [][]byte) ([]string, error) {
	names, err := l.partNames(cm)
	if err != nil {
		return nil, err
	}
	var made []string
	for i, name := range names {
		labels := runLabels(m.Run)
		labels[fleetv1.ComponentLabel] = resultsPartComponent
		part := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: m.Run.Namespace, Labels: labels, Annotations: runAnnotations(m.Run)},
			Immutable:  ptr.To(true),
			BinaryData: map[string][]byte{resultsKey + compressedSuffix: chunks[i]},
		}
		switch err := m.Client.Create(ctx, part); {
		case err == nil:
			made = append(made, name)
		case !apierrors.IsAlreadyExists(err):
			return made, fmt.Errorf("creating results part %s/%s: %w", m.Run.Namespace, name, err)
		}
	}
	return made, nil
}

// deleteResultsParts deletes the parts names of a record that is not, or
// no longer, stored. A part left (the call failed, the hub stopped) is only
// garbage: no record names it, and the run's cleanup deletes it with the
// rest of the run's ConfigMaps.
func deleteResultsParts(ctx context.Context, c client.Client, namespace string, names []string) {
	for _, name := range names {
		part := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
		_ = c.Delete(ctx, part)
	}
}

// merge is a with every result of b that a lacks or has not finished.
func merge(a, b Results) Results {
	updates := map[string]NodeResult{}
	for node, r := range b.Nodes.All() {
		if old, ok := a.Nodes.Lookup(node); !ok || !old.final() && r.final() {
			updates[node] = r
		}
	}
	return Results{Nodes: a.Nodes.With(updates)}
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
