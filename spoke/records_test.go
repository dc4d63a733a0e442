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
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// TestRecordsReadBackOwnWrite: the record RecordResults wrote is read back
// from Records, without decoding, while the ConfigMap is at the
// resourceVersion written; any other version is decoded.
func TestRecordsReadBackOwnWrite(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	// An API server gives every object a UID; the fake client does not.
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			obj.SetUID("results-uid")
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	var records Records
	want := ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning}})
	if _, err := (Member{Client: c, Live: c, Run: run, Caches: Caches{Records: &records}}).writeResultsMerging(context.Background(), Results{}, want, nil, nil); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: naming.ResultsName(run.ClusterJob.UID)}, cm); err != nil {
		t.Fatal(err)
	}
	if got, ok := records.get(cm.UID, cm.ResourceVersion); !ok || !cmp.Equal(want, got) {
		t.Fatalf("records after the write = %v, %v; want %v at resourceVersion %s", got, ok, want, cm.ResourceVersion)
	}

	// Damage the stored document without moving the resourceVersion, as a
	// cache at the written version would hold it: Records answers.
	reader := fake.NewClientBuilder().WithObjects(func() *corev1.ConfigMap {
		damaged := cm.DeepCopy()
		damaged.BinaryData[resultsKey+compressedSuffix] = []byte("not gzip")
		return damaged
	}()).Build()
	stored := &corev1.ConfigMap{}
	if err := reader.Get(context.Background(), client.ObjectKeyFromObject(cm), stored); err != nil {
		t.Fatal(err)
	}
	records.put(stored.UID, testRun(makeClusterJob("disk-clean").Obj()), stored.ResourceVersion, want, nil, "", nil)
	got, _, err := readResults(context.Background(), reader, run, &records)
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("readResults() at the written version = %v, %v; want %v from Records", got, err, want)
	}
	records.put(stored.UID, testRun(makeClusterJob("disk-clean").Obj()), "another-version", want, nil, "", nil)
	if _, _, err := readResults(context.Background(), reader, run, &records); err == nil || !strings.Contains(err.Error(), "decoding results.json") {
		t.Errorf("readResults() at another version: error = %v, want the document decoded (and failing)", err)
	}
}

func TestRecordsBounded(t *testing.T) {
	var records Records
	nodes := map[string]NodeResult{}
	for _, n := range randomNames(maxDecodedNodes/2+1, 8) {
		nodes[n] = NodeResult{Phase: NodeSucceeded}
	}
	big := ResultsOf(nodes)
	records.put("a", testRun(makeClusterJob("disk-clean").Obj()), "1", big, nil, "", nil)
	records.put("a", testRun(makeClusterJob("disk-clean").Obj()), "2", big, nil, "", nil) // replaces a's entry: still one record's nodes
	if _, ok := records.get("a", "2"); !ok || records.nodes != big.Nodes.Len() {
		t.Fatalf("after replacing a: %d nodes kept, want %d", records.nodes, big.Nodes.Len())
	}
	records.put("b", testRun(makeClusterJob("disk-clean").Obj()), "1", big, nil, "", nil) // past the bound: starts over
	if _, ok := records.get("a", "2"); ok {
		t.Error("Records kept more than maxDecodedNodes")
	}
	if _, ok := records.get("b", "1"); !ok || records.nodes != big.Nodes.Len() {
		t.Errorf("after starting over: b kept %v, %d nodes", ok, records.nodes)
	}
}

// TestCachesForget: a run that finished in its member leaves nothing in
// the caches, and another run's entries stay.
func TestCachesForget(t *testing.T) {
	done := testRun(makeClusterJob("done").UID("uid-done").Obj())
	running := testRun(makeClusterJob("running").UID("uid-running").Obj())
	results := ResultsOf(map[string]NodeResult{"a": {Phase: NodeSucceeded}, "b": {Phase: NodeSucceeded}})
	p := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"a", "b"}}}}
	caches := Caches{Plans: &Plans{}, Records: &Records{}, Derivations: &Derivations{}}
	for _, r := range []struct {
		run       Run
		plan, rec types.UID
	}{{done, "plan-done", "rec-done"}, {running, "plan-running", "rec-running"}} {
		caches.Plans.put(r.plan, r.run, p)
		caches.Records.put(r.rec, r.run, "1", results, nil, "", nil)
		caches.Derivations.of(r.run, r.plan, 2).mu.Unlock()
	}

	caches.Forget(done.ClusterJob.UID, done.Cluster)

	if _, ok := caches.Plans.get("plan-done"); ok {
		t.Error("the finished run's plan is kept")
	}
	if _, ok := caches.Records.get("rec-done", "1"); ok {
		t.Error("the finished run's record is kept")
	}
	if _, ok := caches.Plans.get("plan-running"); !ok {
		t.Error("the running run's plan is gone")
	}
	if _, ok := caches.Records.get("rec-running", "1"); !ok {
		t.Error("the running run's record is gone")
	}
	if got := []int{caches.Plans.nodes, caches.Records.nodes, caches.Derivations.nodes}; !slices.Equal(got, []int{2, 2, 2}) {
		t.Errorf("nodes held by plans, records, derivations = %v, want the running run's 2 each", got)
	}
}
