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
	"encoding/json"
	"fmt"
	"hash/maphash"
	"iter"
	"maps"
	"reflect"
	"slices"
)

// ResultMap is a record's node results by node name, as a persistent map:
// a ResultMap is never changed once built; With and Without return a new
// one sharing every bucket they do not change. A record is shared by the
// cache of decoded records, the state derived from it and the write that
// replaces it, none of which may see another's changes, and a write used
// to copy it whole: at 10,000 nodes that copy was most of a reconcile. A
// write now costs the buckets of the nodes it changes.
//
// The zero ResultMap is empty.
type ResultMap struct {
	// buckets is a power of two of maps, a node in the one its name
	// hashes to; nil when empty.
	buckets []map[string]NodeResult
	n       int
}

// nodesPerBucket is how many nodes a bucket holds on average when its map
// is built; a map that grew to 4 times that is built again with more.
const nodesPerBucket = 32

// resultSeed places nodes in buckets: the same in the whole process, so
// that every version of a record hashes alike.
var resultSeed = maphash.MakeSeed()

// ResultsOf is a record of nodes' results.
func ResultsOf(nodes map[string]NodeResult) Results {
	return Results{Nodes: ResultMap{}.With(nodes)}
}

// Len is how many nodes m holds.
func (m ResultMap) Len() int { return m.n }

// Lookup is node's result, and whether m holds one.
func (m ResultMap) Lookup(node string) (NodeResult, bool) {
	if m.n == 0 {
		return NodeResult{}, false
	}
	r, ok := m.buckets[m.bucket(node)][node]
	return r, ok
}

// Get is node's result; the zero NodeResult when m holds none.
func (m ResultMap) Get(node string) NodeResult {
	r, _ := m.Lookup(node)
	return r
}

// All yields every node and its result, in no order.
func (m ResultMap) All() iter.Seq2[string, NodeResult] {
	return func(yield func(string, NodeResult) bool) {
		for _, b := range m.buckets {
			for node, r := range b {
				if !yield(node, r) {
					return
				}
			}
		}
	}
}

func (m ResultMap) bucket(node string) int {
	return int(maphash.String(resultSeed, node) & uint64(len(m.buckets)-1))
}

// With is m with updates set, nodes added or their results replaced; m
// does not change.
func (m ResultMap) With(updates map[string]NodeResult) ResultMap {
	if len(updates) == 0 {
		return m
	}
	if total := m.n + len(updates); len(m.buckets) == 0 || total > 4*nodesPerBucket*len(m.buckets) {
		return m.rebuilt(updates, total)
	}
	next := ResultMap{buckets: slices.Clone(m.buckets), n: m.n}
	copied := make(map[int]bool, len(updates))
	for node, r := range updates {
		b := next.bucket(node)
		if !copied[b] {
			next.buckets[b] = cloneBucket(next.buckets[b], 1)
			copied[b] = true
		}
		if _, ok := next.buckets[b][node]; !ok {
			next.n++
		}
		next.buckets[b][node] = r
	}
	return next
}

// Without is m without nodes; m does not change.
func (m ResultMap) Without(nodes ...string) ResultMap {
	next := ResultMap{buckets: m.buckets, n: m.n}
	copied := map[int]bool{}
	for _, node := range nodes {
		if _, ok := next.Lookup(node); !ok {
			continue
		}
		if len(copied) == 0 {
			next.buckets = slices.Clone(m.buckets)
		}
		b := next.bucket(node)
		if !copied[b] {
			next.buckets[b] = cloneBucket(next.buckets[b], 0)
			copied[b] = true
		}
		delete(next.buckets[b], node)
		next.n--
	}
	return next
}

// rebuilt is m with updates, in as many buckets as size nodes need.
func (m ResultMap) rebuilt(updates map[string]NodeResult, size int) ResultMap {
	buckets := 1
	for buckets*nodesPerBucket < size {
		buckets *= 2
	}
	next := ResultMap{buckets: make([]map[string]NodeResult, buckets)}
	for i := range next.buckets {
		next.buckets[i] = make(map[string]NodeResult, nodesPerBucket)
	}
	set := func(node string, r NodeResult) {
		b := next.buckets[next.bucket(node)]
		if _, ok := b[node]; !ok {
			next.n++
		}
		b[node] = r
	}
	for node, r := range m.All() {
		set(node, r)
	}
	for node, r := range updates {
		set(node, r)
	}
	return next
}

// cloneBucket copies a bucket, with room for extra more nodes.
func cloneBucket(b map[string]NodeResult, extra int) map[string]NodeResult {
	out := make(map[string]NodeResult, len(b)+extra)
	maps.Copy(out, b)
	return out
}

// Map is m as a plain map, for tests and tools: a copy.
func (m ResultMap) Map() map[string]NodeResult {
	out := make(map[string]NodeResult, m.n)
	for node, r := range m.All() {
		out[node] = r
	}
	return out
}

// Equal tells whether m and o hold the same results (go-cmp uses it).
func (m ResultMap) Equal(o ResultMap) bool {
	if m.n != o.n {
		return false
	}
	for node, r := range m.All() {
		if other, ok := o.Lookup(node); !ok || !reflect.DeepEqual(r, other) {
			return false
		}
	}
	return true
}

// String is m's results in node order, as a plain map prints: go-cmp
// shows it when two records differ.
func (m ResultMap) String() string { return fmt.Sprint(m.Map()) }

// IsZero tells an empty map, which a record's JSON leaves out.
func (m ResultMap) IsZero() bool { return m.n == 0 }

// MarshalJSON is m as a JSON object of node results.
func (m ResultMap) MarshalJSON() ([]byte, error) { return json.Marshal(m.Map()) }

// UnmarshalJSON reads a JSON object of node results into m.
func (m *ResultMap) UnmarshalJSON(data []byte) error {
	var nodes map[string]NodeResult
	if err := json.Unmarshal(data, &nodes); err != nil {
		return err
	}
	*m = ResultMap{}.With(nodes)
	return nil
}
