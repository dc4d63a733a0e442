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
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Derivations keeps what the last reconcile of each run derived of each
// node, and from what, so that the next derives again only the nodes whose
// Job, presence or record entry changed: a busy member's reconcile, once a
// second, sees a few Jobs change among thousands. The Jobs are the
// informer's objects, which it replaces on every change and never edits,
// so one is the same object only while it has not changed. Nothing depends
// on it for being right: a run it does not hold is derived whole, as after
// a restart. The zero value is ready; it is safe for concurrent use.
type Derivations struct {
	mu    sync.Mutex
	runs  map[string]*derivation
	nodes int
	// nodeSets counts, per member cluster, the creations and deletions of
	// its nodes the feed was told of (NodesChanged).
	nodeSets map[string]uint64
	misses   atomic.Int64
}

// maxDerivedNodes bounds what Derivations holds, in nodes over all its
// runs: about 350 bytes each, with the Jobs they keep from being freed.
const maxDerivedNodes = 100_000

// derivation is one run's last derive in one member, node by node in plan
// order, from the plan of ConfigMap plan.
type derivation struct {
	mu     sync.Mutex
	plan   types.UID
	nodes  int
	from   []derivedFrom
	states []NodeState

	// What a derive from the feed (feed.go) starts from. complete tells
	// that from, states and the rest hold a whole derive and what the
	// derives from the feed changed since: index is each planned node's
	// place in plan order, groups and missing the counts derive returns,
	// jobs the run's Jobs by node as the informer's store held them,
	// nodeSet and record the generation of the cluster's nodes and the
	// record version derived from, wholeAt when the last whole derive was.
	complete bool
	index    map[string]int
	groups   []GroupState
	missing  int
	jobs     map[string]*batchv1.Job
	nodeSet  uint64
	record   recordVersion
	wholeAt  time.Time
	// suspects are the nodes a whole derive found changed that the feed
	// had not named, with when: the handler's call may still be on its
	// way (client-go notifies handlers after the store changed). missed
	// counts those the last whole derive judged missed: no mark named
	// them within suspectGrace.
	suspects map[string]time.Time
	missed   int
	// unsynced are the places of the nodes derived again since the last
	// RecordResults that succeeded, every node when allUnsynced: the
	// others' state is what that one recorded, or needed no record.
	unsynced    map[int]struct{}
	allUnsynced bool
	// edited are the places of states the last State shared with this
	// derivation edited in place (its verdicts, State.edit), with each
	// state as derived: restore puts them back before the next derive.
	edited map[int]NodeState

	// marks are the nodes whose Jobs changed since the last derive, set by
	// the event handlers while a reconcile may be deriving.
	marksMu sync.Mutex
	marks   map[string]struct{}
}

// derivedFrom is what one node's state was derived from.
type derivedFrom struct {
	job      *batchv1.Job
	present  bool
	recorded bool
	rec      NodeResult
	// valid tells an entry derived from the zero value of an entry never
	// derived.
	valid bool
}

// missing tells that the node was recorded, has not finished and has no
// Job: lost, or its Job not seen yet.
func (f derivedFrom) missing() bool { return f.job == nil && f.recorded && !f.rec.final() }

// restore puts back the states the last State's verdicts edited, so that
// the derivation holds what was derived, and nothing a reconcile judged
// from it. The reconciles of one run are serial: the State that edited
// them is done with.
func (d *derivation) restore() {
	for k, ns := range d.edited {
		if k < len(d.states) {
			d.states[k] = ns
		}
	}
	d.edited = nil
}

// derivationKey names a run in one member.
func derivationKey(clusterJob types.UID, cluster string) string {
	return string(clusterJob) + "/" + cluster
}

// of returns the derivation of run, whose plan is in ConfigMap plan,
// locked: the caller unlocks it. One of another plan (the run planned
// again) starts over. Past maxDerivedNodes it forgets every run: those
// still running are derived whole once more.
func (ds *Derivations) of(run Run, plan types.UID, nodes int) *derivation {
	if ds == nil || plan == "" {
		return nil
	}
	key := derivationKey(run.ClusterJob.UID, run.Cluster)
	ds.mu.Lock()
	d, ok := ds.runs[key]
	if !ok || d.plan != plan {
		if ok {
			ds.nodes -= d.nodes
		}
		if ds.runs == nil || ds.nodes+nodes > maxDerivedNodes {
			ds.runs, ds.nodes = map[string]*derivation{}, 0
		}
		d = &derivation{plan: plan, nodes: nodes}
		ds.runs[key] = d
		ds.nodes += nodes
	}
	ds.mu.Unlock()
	d.mu.Lock()
	return d
}

// Forget drops what it holds of the run of ClusterJob clusterJob in
// member cluster: call it once the run finished there, so that its Jobs are
// not kept from being freed.
func (ds *Derivations) Forget(clusterJob types.UID, cluster string) {
	if ds == nil {
		return
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	key := derivationKey(clusterJob, cluster)
	if d, ok := ds.runs[key]; ok {
		ds.nodes -= d.nodes
		delete(ds.runs, key)
	}
}

// recordCandidates are the places of the nodes of st whose record may
// change: derived again since the record was last written from st's
// derivation, or, unless their recorded result is final, changed by a
// verdict since st was derived. nil means every node: st has no
// derivation, or its derivation was whole.
func (st *State) recordCandidates() []int {
	d := st.Derived.d
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.allUnsynced || len(d.states) != len(st.Nodes) {
		return nil
	}
	places := make([]int, 0, len(d.unsynced)+len(d.edited))
	for k := range d.unsynced {
		places = append(places, k)
	}
	changed := func(k int) bool {
		if _, in := d.unsynced[k]; in || d.from[k].rec.final() {
			return false // a final result never changes: the hub's clock on its times changes no record
		}
		if st.Derived.shared {
			return true // edited: d.states is st.Nodes
		}
		return st.Nodes[k] != d.states[k]
	}
	if st.Derived.shared {
		for k := range d.edited {
			if changed(k) {
				places = append(places, k)
			}
		}
	} else {
		for k := range st.Nodes {
			if changed(k) {
				places = append(places, k)
			}
		}
	}
	slices.Sort(places)
	return places
}

// recordSynced tells st's derivation that the record holds what st's
// nodes, as derived, call for.
func (st *State) recordSynced() {
	if d := st.Derived.d; d != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.unsynced, d.allUnsynced = nil, false
	}
}
