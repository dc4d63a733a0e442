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
	batchv1 "k8s.io/api/batch/v1"

	"github.com/fleetjob/fleetjob/pkg/plan"
)

// TestDeriveWithTheLastDerivationIsDeriveWhole changes a run at random, as
// a member would between reconciles (Jobs created, started, finished,
// failed and deleted, nodes deleted, results recorded), and checks after
// each change that deriving from the last derivation gives the state a
// whole derive gives, and that a node nothing changed is not derived again.
func TestDeriveWithTheLastDerivationIsDeriveWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := make([]string, 60)
	for i := range names {
		names[i] = fmt.Sprintf("node-%02d", i)
	}
	p := plan.Plan{Groups: []plan.Group{{Name: "batch-1", Nodes: names[:25]}, {Name: "batch-2", Nodes: names[25:]}}}
	byNode := map[string]*batchv1.Job{}
	gone := map[string]bool{}
	present := func(n string) bool { return !gone[n] }
	rec := ResultsOf(map[string]NodeResult{})
	var last derivation
	for step := range 300 {
		n := names[rng.IntN(len(names))]
		switch rng.IntN(8) {
		case 0:
			byNode[n] = makeJob(n).Created(t0).Ptr()
		case 1:
			byNode[n] = makeJob(n).Created(t0).Started(t0).Pods(1, 1, 0).Ptr()
		case 2:
			byNode[n] = makeJob(n).Created(t0).Started(t0).Complete(t1).Ptr()
		case 3:
			byNode[n] = makeJob(n).Created(t0).Started(t0).Failed("BackoffLimitExceeded", "exit 1", t1).Ptr()
		case 4:
			delete(byNode, n)
		case 5:
			gone[n] = !gone[n]
		case 6:
			rec = Results{Nodes: rec.Nodes.With(map[string]NodeResult{n: {Phase: NodeStarting, Attempt: "a"}})}
		case 7:
			if r, ok := rec.Nodes.Lookup(n); ok && !r.final() {
				rec = Results{Nodes: rec.Nodes.With(map[string]NodeResult{n: {Phase: NodeRunning, Started: true, Start: t0.Unix()}})}
			}
		}
		want, wantMissing := derive(&p, byNode, present, rec, nil, feed{})
		got, gotMissing := derive(&p, byNode, present, rec, &last, feed{})
		if diff := cmp.Diff(want, got); diff != "" || gotMissing != wantMissing {
			t.Fatalf("step %d: missing %v, want %v; state (-whole +from the last):\n%s", step, gotMissing, wantMissing, diff)
		}
	}
	// Nothing changed: every node comes from the last derivation.
	before := make([]NodeState, len(last.states))
	copy(before, last.states)
	again, _ := derive(&p, byNode, present, rec, &last, feed{})
	for i := range again.Nodes {
		if again.Nodes[i].StartTime != before[i].StartTime {
			t.Fatalf("node %s was derived again though nothing changed", again.Nodes[i].Node)
		}
	}
	// The state is the caller's: changing it leaves the derivation as it was.
	again.Nodes[0].Phase = NodeFailed
	if last.states[0].Phase == NodeFailed && before[0].Phase != NodeFailed {
		t.Fatal("a change to the derived state changed the derivation")
	}
}

// TestDerivationsForgetAndBound: a finished run is forgotten, a run planned
// again starts over, and the nodes held stay within the bound.
func TestDerivationsForgetAndBound(t *testing.T) {
	var ds Derivations
	run := testRun(makeClusterJob("disk-clean").Obj())
	d := ds.of(run, "plan-1", 10)
	d.from = make([]derivedFrom, 10)
	d.mu.Unlock()
	if again := ds.of(run, "plan-1", 10); again != d {
		t.Fatal("the same run and plan got another derivation")
	} else {
		again.mu.Unlock()
	}
	replanned := ds.of(run, "plan-2", 10)
	replanned.mu.Unlock()
	if replanned == d || replanned.from != nil {
		t.Fatal("a run planned again kept the derivation of its old plan")
	}
	if ds.nodes != 10 {
		t.Fatalf("holds %d nodes, want 10", ds.nodes)
	}
	ds.Forget(run.ClusterJob.UID, run.Cluster)
	if len(ds.runs) != 0 || ds.nodes != 0 {
		t.Fatalf("after Forget: %d runs, %d nodes; want none", len(ds.runs), ds.nodes)
	}
	other := testRun(makeClusterJob("other").UID("other-uid").Obj())
	ds.of(run, "plan-1", maxDerivedNodes-1).mu.Unlock()
	ds.of(other, "plan-3", 2).mu.Unlock() // past the bound: starts over
	if len(ds.runs) != 1 || ds.nodes != 2 {
		t.Fatalf("past the bound: %d runs, %d nodes; want 1 run of 2", len(ds.runs), ds.nodes)
	}
}
