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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fleetjob/fleetjob/pkg/plan"
)

// maxDecodedNodes bounds what Plans holds, in planned nodes over all its
// plans: some tens of MiB at most, whatever the fleet.
const maxDecodedNodes = 500_000

// Plans keeps decoded plans, so that a plan is decompressed and decoded
// once, not on every reconcile of its run. A plan ConfigMap is immutable,
// so its UID names its content. The zero value is ready; it is safe for
// concurrent use. The plans it returns are shared: callers only read them.
type Plans struct {
	mu    sync.Mutex
	plans map[types.UID]plan.Plan
	// runs names the plan of each run (derivationKey), for Forget.
	runs  map[string]types.UID
	nodes int
}

func (ps *Plans) get(uid types.UID) (plan.Plan, bool) {
	if ps == nil || uid == "" {
		return plan.Plan{}, false
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.plans[uid]
	return p, ok
}

// put keeps p, run's plan. Past maxDecodedNodes it starts over: plans of
// deleted runs go with the rest, and live ones are decoded again once.
func (ps *Plans) put(uid types.UID, run Run, p plan.Plan) {
	if ps == nil || uid == "" {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	n := p.NodeCount() + len(p.Skipped)
	if ps.plans == nil || ps.nodes+n > maxDecodedNodes {
		ps.plans, ps.runs, ps.nodes = map[types.UID]plan.Plan{}, map[string]types.UID{}, 0
	}
	if _, ok := ps.plans[uid]; !ok {
		ps.plans[uid] = p
		ps.runs[derivationKey(run.ClusterJob.UID, run.Cluster)] = uid
		ps.nodes += n
	}
}

// forget drops the plan of the run named key (derivationKey).
func (ps *Plans) forget(key string) {
	if ps == nil {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if uid, ok := ps.runs[key]; ok {
		p := ps.plans[uid]
		ps.nodes -= p.NodeCount() + len(p.Skipped)
		delete(ps.plans, uid)
		delete(ps.runs, key)
	}
}

// Records keeps the results records the hub wrote last, decoded, so that a
// reconcile that reads back its own last write does not decode it again:
// at 1,000 nodes, decoding the record was a tenth of the hub's CPU. An
// entry stands for the ConfigMap's content at one resourceVersion only. The
// zero value is ready; it is safe for concurrent use. The records it
// returns are shared: callers only read them (Record copies before it
// adds).
type Records struct {
	mu      sync.Mutex
	records map[types.UID]record
	// runs names the record of each run (derivationKey), for Forget.
	runs  map[string]types.UID
	nodes int
}

type record struct {
	resourceVersion string
	results         Results
	// encoded is results as stored, segment by segment: the next write
	// compresses again only what it changes.
	encoded *encodedRecord
	// writes are the last writes of the record by this hub, oldest first:
	// a derivation of the record as it was a few writes ago looks again at
	// only the nodes they changed.
	writes []recordWrite
}

// recordWrite is one write of a record: from the version it replaced ("":
// it created the record) to resourceVersion, changing the nodes changed
// (nil: not known).
type recordWrite struct {
	from, resourceVersion string
	changed               []string
}

// maxRecordWrites is how many writes of one record Records remembers: a
// reconcile writes at most two (a group start's write-ahead, then the
// results), so a derivation one reconcile old finds its way.
const maxRecordWrites = 4

// get returns the record stored in ConfigMap uid at resourceVersion.
func (rs *Records) get(uid types.UID, resourceVersion string) (Results, bool) {
	if rs == nil || uid == "" {
		return Results{}, false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r, ok := rs.records[uid]
	if !ok || r.resourceVersion != resourceVersion {
		return Results{}, false
	}
	return r.results, true
}

// encoded returns the encoding of the record stored in ConfigMap uid at
// resourceVersion, nil when it is not the one last written.
func (rs *Records) encoded(uid types.UID, resourceVersion string) *encodedRecord {
	if rs == nil || uid == "" {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r, ok := rs.records[uid]; ok && r.resourceVersion == resourceVersion {
		return r.encoded
	}
	return nil
}

// encode encodes res, the record stored (nil: none) changed in the nodes
// changed (nil: not known). From the encoding of stored when the cache has
// it, only the segments of the changed nodes are compressed again; a change
// it was not told of is caught by the count of nodes, and encoded whole.
func (rs *Records) encode(stored *corev1.ConfigMap, res Results, changed []string) (*encodedRecord, error) {
	if stored != nil && changed != nil {
		if prev := rs.encoded(stored.UID, stored.ResourceVersion); prev != nil {
			if enc, err := prev.update(res, changed); err == nil && enc.nodes == res.Nodes.Len() {
				return enc, nil
			}
		}
	}
	return encodeRecord(res)
}

// put keeps res, encoded as enc, as the content of ConfigMap uid, run's
// record, at resourceVersion, written over version from ("": created)
// changing the nodes changed (nil: not known). Past maxDecodedNodes it
// starts over, as Plans does.
func (rs *Records) put(uid types.UID, run Run, resourceVersion string, res Results, enc *encodedRecord, from string, changed []string) {
	if rs == nil || uid == "" || resourceVersion == "" {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	prev := rs.records[uid]
	old := prev.results.Nodes.Len()
	if rs.records == nil || rs.nodes-old+res.Nodes.Len() > maxDecodedNodes {
		rs.records, rs.runs, rs.nodes, old = map[types.UID]record{}, map[string]types.UID{}, 0, 0
	}
	rs.runs[derivationKey(run.ClusterJob.UID, run.Cluster)] = uid
	writes := append(prev.writes, recordWrite{from: from, resourceVersion: resourceVersion, changed: changed})
	if len(writes) > maxRecordWrites {
		writes = writes[len(writes)-maxRecordWrites:]
	}
	rs.records[uid] = record{resourceVersion: resourceVersion, results: res, encoded: enc, writes: slices.Clip(writes)}
	rs.nodes += res.Nodes.Len() - old
}

// forget drops the record of the run named key (derivationKey).
func (rs *Records) forget(key string) {
	if rs == nil {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if uid, ok := rs.runs[key]; ok {
		rs.nodes -= rs.records[uid].results.Nodes.Len()
		delete(rs.records, uid)
		delete(rs.runs, key)
	}
}

// changedSince names the nodes the writes of ConfigMap uid changed from
// version from ("": none) to version to. ok is false when Records does not
// know every write between them: written by another, or too long ago.
func (rs *Records) changedSince(uid types.UID, from, to string) (nodes []string, ok bool) {
	if from == to {
		return nil, true
	}
	if rs == nil || uid == "" {
		return nil, false
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	writes := rs.records[uid].writes
	i := len(writes) - 1
	for i >= 0 && writes[i].resourceVersion != to {
		i-- // written since: the reader's cache is behind
	}
	for ; i >= 0 && to != from; i-- {
		w := writes[i]
		if w.resourceVersion != to || w.changed == nil {
			return nil, false
		}
		nodes, to = append(nodes, w.changed...), w.from
	}
	return nodes, to == from
}
