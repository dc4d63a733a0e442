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

package noderesults

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/fleetjob/fleetjob/pkg/plan"
)

// shape says what document builds: a one-group run of nodes named by
// name, the first failed of them failed with a random output of outputLen
// bytes, the rest succeeded with a random message of messageLen bytes and
// random start and finish times when randomTimes.
type shape struct {
	nodes, failed, outputLen, messageLen int
	name                                 func(rng *rand.Rand, i int) string
	randomTimes                          bool
}

// cloudName is a 63-character node name of the shape clouds give.
func cloudName(rng *rand.Rand, i int) string {
	return fmt.Sprintf("pool%s-%05d.eu-west-1.compute.internal.fleet.example.com", randomText(rng, 8), i)
}

func shortName(_ *rand.Rand, i int) string { return fmt.Sprintf("n%06d", i) }

func document(s shape) Document {
	rng := rand.New(rand.NewPCG(1, 2))
	d := Document{Plan: plan.Plan{Groups: []plan.Group{{Name: "all"}}}}
	for i := range s.nodes {
		name := s.name(rng, i)
		d.Plan.Groups[0].Nodes = append(d.Plan.Groups[0].Nodes, name)
		node := Node{Name: name, Index: i, Phase: Succeeded, Start: 1764720000, Finish: 1764720012}
		if s.messageLen > 0 {
			node.Message = randomText(rng, s.messageLen)
		}
		if s.randomTimes {
			node.Start = 1764720000 + rng.Int64N(1<<30)
			node.Finish = node.Start + rng.Int64N(1<<20)
		}
		if i < s.failed {
			node.Phase, node.Reason, node.Message = Failed, "NodeFailed", "the Job failed: BackoffLimitExceeded"
			node.ExitCode, node.Output = ptr.To[int32](3), randomText(rng, s.outputLen)
		}
		d.Nodes = append(d.Nodes, node)
	}
	return d
}

func TestRoundTrip(t *testing.T) {
	want := document(shape{nodes: 50, failed: 3, outputLen: 200, messageLen: 10, name: cloudName})
	want.Plan.Skipped = []plan.SkippedNode{{Node: "cordoned-1", Reason: "Unschedulable", Message: "cordoned"}}
	want.Plan.MoreSkipped = map[string]int{"NotReady": 2}
	data, omitted, err := Encode(want)
	if err != nil || omitted != 0 {
		t.Fatalf("Encode() = %d omitted, %v; want 0, nil", omitted, err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode() error = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode(Encode(d)) differs (-want +got):\n%s", diff)
	}
}

func TestEncodeShrinksTheLeastTellingFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  Document
		// wantMessages: the succeeded nodes keep their messages;
		// wantOutputs: the failed ones keep their outputs.
		wantMessages, wantOutputs bool
		wantOmitted               int
	}{
		{name: "fits whole", doc: document(shape{nodes: 1000, failed: 10, outputLen: 1024, messageLen: 20, name: cloudName}),
			wantMessages: true, wantOutputs: true},
		{name: "30,000 nodes with 63-character names fit whole",
			doc: document(shape{nodes: 30000, failed: 10, outputLen: 1024, name: cloudName}), wantOutputs: true},
		{name: "the messages of nodes that did not fail go first",
			doc: document(shape{nodes: 3000, failed: 10, outputLen: 1024, messageLen: 400, name: cloudName}), wantOutputs: true},
		{name: "then the outputs", doc: document(shape{nodes: 1000, failed: 1000, outputLen: 1024, name: cloudName})},
		{name: "then the succeeded nodes",
			doc:         document(shape{nodes: 100000, failed: 100, outputLen: 1024, name: shortName, randomTimes: true}),
			wantOmitted: 99900},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.doc.Nodes[len(tc.doc.Nodes)-1]
			data, omitted, err := Encode(tc.doc)
			if err != nil {
				t.Fatalf("Encode() error = %v", err)
			}
			if len(data) > MaxBytes {
				t.Errorf("Encode() = %d bytes, over MaxBytes %d", len(data), MaxBytes)
			}
			if diff := cmp.Diff(before, tc.doc.Nodes[len(tc.doc.Nodes)-1]); diff != "" {
				t.Errorf("Encode() changed the caller's document (-before +after):\n%s", diff)
			}
			got, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			if omitted != tc.wantOmitted || got.Omitted != tc.wantOmitted {
				t.Errorf("omitted = %d, document says %d; want %d", omitted, got.Omitted, tc.wantOmitted)
			}
			if n := len(got.Nodes) + got.Omitted; n != len(tc.doc.Nodes) {
				t.Errorf("nodes listed and omitted = %d, want %d", n, len(tc.doc.Nodes))
			}
			var messages, outputs bool
			for _, n := range got.Nodes {
				messages = messages || n.Phase == Succeeded && n.Message != ""
				outputs = outputs || n.Output != ""
				if n.Phase == Failed && (n.Message == "" || n.ExitCode == nil) {
					t.Fatalf("failed node %s lost its message or exit code: %+v", n.Name, n)
				}
			}
			if messages != tc.wantMessages || outputs != tc.wantOutputs {
				t.Errorf("succeeded messages kept = %t, outputs kept = %t; want %t, %t", messages, outputs, tc.wantMessages, tc.wantOutputs)
			}
			for _, n := range got.Nodes {
				if want := tc.doc.Nodes[n.Index]; n.Name != want.Name || n.Phase != want.Phase {
					t.Fatalf("node %d decoded as %s %s, want %s %s", n.Index, n.Name, n.Phase, want.Name, want.Phase)
				}
			}
			if len(got.Plan.Groups[0].Nodes) != len(tc.doc.Nodes) {
				t.Errorf("plan lists %d nodes, want every one of %d", len(got.Plan.Groups[0].Nodes), len(tc.doc.Nodes))
			}
		})
	}
}

func TestEncodeTooLarge(t *testing.T) {
	_, _, err := Encode(document(shape{nodes: 100000, failed: 100000, name: cloudName}))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Encode() of 100,000 failed nodes = %v, want ErrTooLarge", err)
	}
}

func TestDecodeRefusesGarbageAndBombs(t *testing.T) {
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	if _, err := zw.Write(bytes.Repeat([]byte(" "), maxInflated+1)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"not gzip": []byte("{}"), "over the inflate bound": bomb.Bytes()} {
		if _, err := Decode(data); err == nil {
			t.Errorf("Decode(%s) succeeded, want an error", name)
		}
	}
}

func randomText(rng *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	for range n {
		b.WriteByte(letters[rng.IntN(len(letters))])
	}
	return b.String()
}
