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
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// The change feed lets a reconcile derive only the nodes whose inputs
// changed since the run's last derive, instead of every node of the run:
// a busy member's reconcile sees a few Jobs finish among thousands.
//
// A change must never be missed, or a finished node stays Running and the
// run never ends. The feed is therefore fed by the event handler that
// enqueues the reconcile, in the same call and before the enqueue:
// client-go calls a handler after its informer's store holds the change,
// so a reconcile that finds no mark for a node reads a store whose change,
// if any, has a mark and a reconcile still to come. A second listener
// would run on its own goroutine, and a transform runs before the store
// is updated: either could let a reconcile consume a change the store
// does not show yet. What the feed does not see (an update the Job
// predicate filters, which changes nothing derived; a bug) is bounded by
// a whole derive at least every wholeDeriveEvery, which counts the nodes
// the feed did not name within suspectGrace of finding them changed
// (Misses).

// wholeDeriveEvery bounds how long a run goes on being derived from the
// feed alone: a change the feed missed delays a verdict by this much at
// most, never loses it.
const wholeDeriveEvery = 30 * time.Second

// JobChanged tells the feed that job, a Job of member cluster, changed
// (was created, updated or deleted): the next derive of its run looks at
// its node again. Call it from the handler that enqueues the run's
// reconcile, before the enqueue.
func (ds *Derivations) JobChanged(cluster string, job metav1.Object) {
	uid, node := job.GetLabels()[fleetv1.ClusterJobUIDLabel], job.GetAnnotations()[fleetv1.NodeAnnotation]
	if ds == nil || uid == "" || node == "" {
		return
	}
	ds.mu.Lock()
	d := ds.runs[derivationKey(types.UID(uid), cluster)]
	ds.mu.Unlock()
	if d == nil {
		return // not derived yet: its first derive is whole
	}
	d.marksMu.Lock()
	defer d.marksMu.Unlock()
	if d.marks == nil {
		d.marks = map[string]struct{}{}
	}
	d.marks[node] = struct{}{}
}

// NodesChanged tells the feed that a node of member cluster was created
// or deleted: the next derive of every run there looks at every node.
// Call it from the handler of Node events, before it enqueues.
func (ds *Derivations) NodesChanged(cluster string) {
	if ds == nil {
		return
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.nodeSets == nil {
		ds.nodeSets = map[string]uint64{}
	}
	ds.nodeSets[cluster]++
}

// Misses counts the nodes whose state a whole derive found changed though
// the feed had not named them, and did not within suspectGrace: it must
// stay 0.
func (ds *Derivations) Misses() int64 {
	if ds == nil {
		return 0
	}
	return ds.misses.Load()
}

// nodeSet is the generation of member cluster's set of nodes.
func (ds *Derivations) nodeSet(cluster string) uint64 {
	if ds == nil {
		return 0
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.nodeSets[cluster]
}

// takeMarks returns the nodes marked since the last call, and clears them.
func (d *derivation) takeMarks() map[string]struct{} {
	d.marksMu.Lock()
	defer d.marksMu.Unlock()
	m := d.marks
	d.marks = nil
	return m
}

// recordVersion names one version of a results record.
type recordVersion struct {
	uid             types.UID
	resourceVersion string
}

// versionOf is the version of the record stored in cm, nil when there is
// none.
func versionOf(cm *corev1.ConfigMap) recordVersion {
	if cm == nil {
		return recordVersion{}
	}
	return recordVersion{uid: cm.UID, resourceVersion: cm.ResourceVersion}
}

// feed is what one derive looks at: every node (the zero value), or, when
// partial, only the nodes named.
type feed struct {
	partial bool
	nodes   []string
	now     time.Time
	// marked are the nodes the Job events named: on a whole derive, a node
	// whose Job alone changed its state and that is not among them is a
	// suspect (derivation.suspect).
	marked map[string]struct{}
}

// feedFor decides what this derive of d looks at: the nodes marked since
// the last one and those the record's writes changed, or every node when
// d holds no whole derive, the feed cannot tell (no informer to read the
// marked Jobs from, the cluster's nodes changed, the record was written by
// another), or the last whole derive is wholeDeriveEvery old.
func (ds *Derivations) feedFor(d *derivation, run Run, rec recordVersion, records *Records, jobs bool, now time.Time) feed {
	f := feed{marked: d.takeMarks(), now: now}
	for node := range f.marked {
		delete(d.suspects, node) // named late: not missed
	}
	nodes := ds.nodeSet(run.Cluster)
	whole := !d.complete || !jobs || nodes != d.nodeSet || now.Sub(d.wholeAt) >= wholeDeriveEvery || now.Before(d.wholeAt)
	var recorded []string
	if !whole && rec != d.record {
		var ok bool
		recorded, ok = records.changedSince(rec.uid, d.record.resourceVersion, rec.resourceVersion)
		whole = !ok || rec.uid != d.record.uid && d.record.uid != ""
	}
	d.nodeSet, d.record = nodes, rec
	if whole {
		d.wholeAt = now
		return f
	}
	f.partial, f.nodes = true, make([]string, 0, len(f.marked)+len(recorded))
	for n := range f.marked {
		f.nodes = append(f.nodes, n)
	}
	f.nodes = append(f.nodes, recorded...)
	return f
}

// refreshJobs updates d's Jobs by node with the marked nodes' Jobs as the
// store holds them now, and returns them.
func (d *derivation) refreshJobs(run Run, store jobStore, marked map[string]struct{}) map[string]*batchv1.Job {
	for node := range marked {
		if _, planned := d.index[node]; !planned {
			continue
		}
		j := store.job(run.Namespace, naming.JobName(run.ClusterJob.Name, run.ClusterJob.UID, run.Cluster, node))
		if j != nil && j.Annotations[fleetv1.NodeAnnotation] == node && slices.Contains(RunIndexValue(j), runIndexKey(run)) {
			d.jobs[node] = j
		} else {
			delete(d.jobs, node)
		}
	}
	return d.jobs
}

// unnamed tells that node's Job changed from was to is, nothing else did,
// and the Job events did not name it (yet): only the feed could have told.
func (f feed) unnamed(node string, was, is derivedFrom) bool {
	_, named := f.marked[node]
	was.job = is.job
	return !named && was == is
}

// suspectGrace is how long a change a whole derive found may wait for the
// feed to name it before it counts as missed: a handler's call lags its
// store by milliseconds, unless the handlers are far behind.
const suspectGrace = 10 * time.Second

// suspect notes that a whole derive at now found node changed without a
// mark.
func (d *derivation) suspect(node string, now time.Time) {
	if d.suspects == nil {
		d.suspects = map[string]time.Time{}
	}
	if _, ok := d.suspects[node]; !ok {
		d.suspects[node] = now
	}
}

// judgeSuspects counts, and forgets, the suspects no mark named within
// suspectGrace of now.
func (d *derivation) judgeSuspects(now time.Time) (missed int) {
	for node, at := range d.suspects {
		if now.Sub(at) >= suspectGrace {
			missed++
			delete(d.suspects, node)
		}
	}
	return missed
}
