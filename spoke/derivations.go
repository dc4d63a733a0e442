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
	"sync"

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
	runs  map[types.UID]*derivation
	nodes int
}

// derivation is one run's last derive in one member, node by node in plan
// order.
type derivation struct {
	mu     sync.Mutex
	from   []derivedFrom
	states []NodeState
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

// of returns the derivation of the run whose plan ConfigMap is uid, locked:
// the caller unlocks it. Past maxDecodedNodes it starts over, as Plans
// does.
func (ds *Derivations) of(uid types.UID, nodes int) *derivation {
	if ds == nil || uid == "" {
		return nil
	}
	ds.mu.Lock()
	d, ok := ds.runs[uid]
	if !ok {
		if ds.runs == nil || ds.nodes+nodes > maxDecodedNodes {
			ds.runs, ds.nodes = map[types.UID]*derivation{}, 0
		}
		d = &derivation{}
		ds.runs[uid] = d
		ds.nodes += nodes
	}
	ds.mu.Unlock()
	d.mu.Lock()
	return d
}
