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
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// decodeRecord reads an encoded record back as every reader does.
func decodeRecord(t *testing.T, e *encodedRecord) Results {
	t.Helper()
	var got Results
	if err := decodeCompressed(e.document(), &got); err != nil {
		t.Fatalf("decoding the record: %v", err)
	}
	return got
}

// TestEncodedRecordFollowsEveryChange updates a record through random
// changes (nodes added, finished, removed, across segments and past the
// layout) and checks after each that the stored form reads back as the
// record, and that the nodes of segments nothing touched were not
// compressed again.
func TestEncodedRecordFollowsEveryChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	node := func(i int) string { return fmt.Sprintf("node-%04d", i) }
	nodes := map[string]NodeResult{}
	for i := range 500 {
		nodes[node(i)] = NodeResult{Phase: NodeStarting, Attempt: "a1"}
	}
	res := ResultsOf(nodes)
	enc, err := encodeRecord(res)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res, decodeRecord(t, enc)); diff != "" {
		t.Fatalf("whole record (-want +got):\n%s", diff)
	}
	for step := range 200 {
		next := res
		var changed []string
		for range 1 + rng.IntN(12) {
			n := node(rng.IntN(900)) // past 500: nodes the layout does not place
			switch rng.IntN(4) {
			case 0:
				next.Nodes = next.Nodes.Without(n)
			case 1:
				next.Nodes = next.Nodes.With(map[string]NodeResult{n: {Phase: NodeFailed, Reason: "BackoffLimitExceeded", Message: `exit "1"`, ExitCode: ptr.To[int32](1), Finish: int64(step)}})
			default:
				next.Nodes = next.Nodes.With(map[string]NodeResult{n: {Phase: NodeSucceeded, Start: int64(step), Finish: int64(step + 1)}})
			}
			changed = append(changed, n)
		}
		updated, err := enc.update(next, changed)
		if err != nil {
			t.Fatal(err)
		}
		if updated.nodes != next.Nodes.Len() {
			t.Fatalf("step %d: the encoding counts %d nodes, the record has %d", step, updated.nodes, next.Nodes.Len())
		}
		if diff := cmp.Diff(next, decodeRecord(t, updated)); diff != "" {
			t.Fatalf("step %d (-want +got):\n%s", step, diff)
		}
		if diff := cmp.Diff(res, decodeRecord(t, enc)); diff != "" {
			t.Fatalf("step %d changed the encoding it started from (-want +got):\n%s", step, diff)
		}
		res, enc = next, updated
	}
}

// TestEncodedRecordCompressesOnlyChangedSegments: one node finishing in a
// 1,000-node record compresses one segment again, and the rest are the
// same bytes.
func TestEncodedRecordCompressesOnlyChangedSegments(t *testing.T) {
	nodes := map[string]NodeResult{}
	for i := range 1000 {
		nodes[fmt.Sprintf("node-%04d", i)] = NodeResult{Phase: NodeRunning, Start: 100}
	}
	res := ResultsOf(nodes)
	enc, err := encodeRecord(res)
	if err != nil {
		t.Fatal(err)
	}
	next := Results{Nodes: res.Nodes.With(map[string]NodeResult{"node-0500": {Phase: NodeSucceeded, Start: 100, Finish: 160}})}
	updated, err := enc.update(next, []string{"node-0500"})
	if err != nil {
		t.Fatal(err)
	}
	var recompressed []int
	for i := range enc.segments {
		if enc.segments[i] != updated.segments[i] {
			recompressed = append(recompressed, i)
		}
	}
	if want := []int{500 / recordSegmentNodes}; !cmp.Equal(recompressed, want) {
		t.Errorf("segments compressed again: %v, want %v", recompressed, want)
	}
}

// TestRecordsEncodeCatchesAnUnnamedChange: a write told of fewer nodes
// than it adds or removes is encoded whole, never stored without them.
func TestRecordsEncodeCatchesAnUnnamedChange(t *testing.T) {
	prev := ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning}, "b": {Phase: NodeRunning}})
	var records Records
	enc, err := records.encode(nil, prev, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: "record", ResourceVersion: "7"}}
	records.put(stored.UID, testRun(makeClusterJob("disk-clean").Obj()), stored.ResourceVersion, prev, enc, "", nil)
	next := ResultsOf(map[string]NodeResult{"a": {Phase: NodeSucceeded}, "b": {Phase: NodeRunning}, "c": {Phase: NodeStarting}})
	got, err := records.encode(stored, next, []string{"a"}) // c not named
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(next, decodeRecord(t, got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
