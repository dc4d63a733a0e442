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
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResultMapFollowsAPlainMap applies random sets and deletes to a
// ResultMap and to a plain map side by side, from empty past several
// rebuilds: after every step they hold the same results, and every
// earlier version still holds what it held (a version is never changed,
// which the records cache and a failed write rely on).
func TestResultMapFollowsAPlainMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var m ResultMap
	plain := map[string]NodeResult{}
	type version struct {
		m    ResultMap
		want map[string]NodeResult
	}
	var versions []version
	for step := range 400 {
		batch := 1 + rng.IntN(40)
		if step%50 == 0 {
			batch = 500 // a group written ahead at once
		}
		if rng.IntN(5) == 0 {
			var gone []string
			for range batch {
				gone = append(gone, fmt.Sprintf("node-%05d", rng.IntN(6000)))
			}
			m = m.Without(gone...)
			for _, n := range gone {
				delete(plain, n)
			}
		} else {
			updates := map[string]NodeResult{}
			for range batch {
				updates[fmt.Sprintf("node-%05d", rng.IntN(6000))] = NodeResult{Phase: NodeSucceeded, Finish: int64(step)}
			}
			m = m.With(updates)
			maps.Copy(plain, updates)
		}
		if !maps.Equal(plain, m.Map()) {
			t.Fatalf("step %d (-plain map +ResultMap):\n%s", step, cmp.Diff(plain, m.Map()))
		}
		if m.Len() != len(plain) {
			t.Fatalf("step %d: Len() = %d, want %d", step, m.Len(), len(plain))
		}
		for n, want := range plain {
			if got, ok := m.Lookup(n); !ok || got != want {
				t.Fatalf("step %d: Lookup(%s) = %v, %t; want %v", step, n, got, ok, want)
			}
		}
		if _, ok := m.Lookup("not-a-node"); ok {
			t.Fatalf("step %d: a node never set is found", step)
		}
		versions = append(versions, version{m, maps.Clone(plain)})
	}
	for i, v := range versions {
		if !maps.Equal(v.want, v.m.Map()) {
			t.Fatalf("version %d changed after it was made (-then +now):\n%s", i, cmp.Diff(v.want, v.m.Map()))
		}
	}
	if len(m.buckets) < m.Len()/(4*nodesPerBucket) {
		t.Errorf("%d nodes in %d buckets: never rebuilt with more", m.Len(), len(m.buckets))
	}
}

// TestResultMapShares: a write of a few nodes copies only their buckets.
func TestResultMapShares(t *testing.T) {
	nodes := map[string]NodeResult{}
	for i := range 10000 {
		nodes[fmt.Sprintf("node-%05d", i)] = NodeResult{Phase: NodeRunning}
	}
	m := ResultMap{}.With(nodes)
	next := m.With(map[string]NodeResult{"node-00042": {Phase: NodeSucceeded}, "node-07000": {Phase: NodeFailed}})
	copied := 0
	for i := range m.buckets {
		if fmt.Sprintf("%p", m.buckets[i]) != fmt.Sprintf("%p", next.buckets[i]) {
			copied++
		}
	}
	if copied == 0 || copied > 2 {
		t.Errorf("a write of 2 nodes copied %d of %d buckets, want 1 or 2", copied, len(m.buckets))
	}
	if got := m.Get("node-00042").Phase; got != NodeRunning {
		t.Errorf("the map written from changed: node-00042 is %s", got)
	}
	if got := next.Get("node-00042").Phase; got != NodeSucceeded {
		t.Errorf("the new map: node-00042 is %s, want Succeeded", got)
	}
}

// TestResultMapJSON: a record's nodes read and written as the JSON object
// every fleetjob stores, the empty map left out.
func TestResultMapJSON(t *testing.T) {
	res := ResultsOf(map[string]NodeResult{"a": {Phase: NodeSucceeded, Start: 1, Finish: 2}, "b": {Phase: NodeStarting, Attempt: "x"}})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"nodes":{"a":{"p":"Succeeded","s":1,"f":2},"b":{"p":"Starting","a":"x"}}}`; string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
	var back Results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if b, _ := json.Marshal(Results{}); string(b) != `{}` {
		t.Errorf("an empty record is %s, want {}", b)
	}
}
