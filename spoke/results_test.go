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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

func TestRecord(t *testing.T) {
	ok := NodeResult{Phase: NodeSucceeded, Start: t0.Unix(), Finish: t1.Unix()}
	testCases := map[string]struct {
		prev        Results
		jobs        []batchv1.Job
		created     []string
		skipped     []plan.SkippedNode
		want        Results
		wantChanged bool
	}{
		"nothing ran: nothing to record": {want: ResultsOf(map[string]NodeResult{})},
		"Jobs just created are recorded running": {
			created:     []string{"a", "b"},
			want:        ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning}, "b": {Phase: NodeRunning}}),
			wantChanged: true,
		},
		"a Job seen running gets its start": {
			prev:        ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning}}),
			jobs:        []batchv1.Job{makeJob("a").Started(t0).Obj()},
			want:        ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Start: t0.Unix()}}),
			wantChanged: true,
		},
		"a finished Job is recorded with its outcome": {
			prev: ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Start: t0.Unix()}}),
			jobs: []batchv1.Job{
				makeJob("a").Started(t0).Complete(t1).Obj(),
				makeJob("b").Started(t0).Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit", t1).Obj(),
			},
			want: ResultsOf(map[string]NodeResult{"a": ok, "b": {Phase: NodeFailed, Reason: "BackoffLimitExceeded",
				Message: "Job has reached the specified backoff limit", Start: t0.Unix(), Finish: t1.Unix()}}),
			wantChanged: true,
		},
		"a recorded result outlives its Job: nothing to write": {
			prev: ResultsOf(map[string]NodeResult{"a": ok}),
			want: ResultsOf(map[string]NodeResult{"a": ok}),
		},
		"a running node whose Job is gone is recorded failed JobDeleted": {
			prev: ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Start: t0.Unix()}}),
			want: ResultsOf(map[string]NodeResult{"a": {Phase: NodeFailed, Reason: fleetv1.NodeReasonJobDeleted,
				Message: "the node's Job was deleted before it finished; it is not run again", Start: t0.Unix()}}),
			wantChanged: true,
		},
		"a node skipped when its group started is recorded skipped": {
			skipped:     []plan.SkippedNode{{Node: "c", Reason: "Unschedulable", Message: "node is cordoned when its group started"}},
			want:        ResultsOf(map[string]NodeResult{"c": {Phase: NodeSkipped, Reason: "Unschedulable", Message: "node is cordoned when its group started"}}),
			wantChanged: true,
		},
		"a pod seen started is remembered": {
			prev: ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Start: t0.Unix()}}),
			jobs: []batchv1.Job{func() batchv1.Job {
				j := makeJob("a").Started(t0).Obj()
				j.Status.Ready = ptr.To[int32](1)
				return j
			}()},
			want:        ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Start: t0.Unix(), Started: true}}),
			wantChanged: true,
		},
		"a node recorded starting whose Job is seen with nothing new: no write": {
			prev: ResultsOf(map[string]NodeResult{"a": {Phase: NodeStarting, Attempt: "x"}}),
			jobs: []batchv1.Job{makeJob("a").Obj()},
			want: ResultsOf(map[string]NodeResult{"a": {Phase: NodeStarting, Attempt: "x"}}),
		},
		"a node recorded starting whose Job started is recorded running": {
			prev:        ResultsOf(map[string]NodeResult{"a": {Phase: NodeStarting, Attempt: "x"}}),
			jobs:        []batchv1.Job{makeJob("a").Started(t0).Obj()},
			want:        ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Start: t0.Unix()}}),
			wantChanged: true,
		},
		"a node recorded starting whose Job is not there is recorded failed JobDeleted": {
			prev:        ResultsOf(map[string]NodeResult{"a": {Phase: NodeStarting, Attempt: "x"}}),
			want:        ResultsOf(map[string]NodeResult{"a": {Phase: NodeFailed, Reason: fleetv1.NodeReasonJobDeleted, Message: jobLostMessage}}),
			wantChanged: true,
		},
		"a final result never changes": {
			prev:    ResultsOf(map[string]NodeResult{"a": ok}),
			jobs:    []batchv1.Job{makeJob("a").Started(t0).Failed("X", "late", t2).Obj()},
			created: []string{"a"},
			want:    ResultsOf(map[string]NodeResult{"a": ok}),
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			st := Derive(&twoGroups, tc.jobs, present("a", "b", "c"), tc.prev)
			got, changed := Record(tc.prev, st, tc.created, tc.skipped)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Record() mismatch (-want +got):\n%s", diff)
			}
			if changed != tc.wantChanged {
				t.Errorf("Record() changed = %v, want %v", changed, tc.wantChanged)
			}
		})
	}
}

func TestDeriveFromResults(t *testing.T) {
	rec := ResultsOf(map[string]NodeResult{
		"a": {Phase: NodeSucceeded, Start: t0.Unix(), Finish: t1.Unix()},
		"b": {Phase: NodeRunning, Start: t0.Unix()},
	})
	// Both Jobs are gone and node a too: a keeps its result, b's Job was
	// deleted before it finished; c has no Job and never had: pending.
	got := Derive(&twoGroups, nil, present("b", "c"), rec)
	want := []NodeState{
		{Node: "a", GroupName: "batch-1", Phase: NodeSucceeded, StartTime: &t0, CompletionTime: &t1},
		{Node: "b", GroupName: "batch-1", Phase: NodeFailed, Reason: fleetv1.NodeReasonJobDeleted,
			Message: "the node's Job was deleted before it finished; it is not run again", StartTime: &t0},
		pending("c", 1),
	}
	if diff := cmp.Diff(want, got.Nodes); diff != "" {
		t.Errorf("Derive() nodes mismatch (-want +got):\n%s", diff)
	}
	if g := got.Groups[0]; !g.Finished() || g.Failed != 1 {
		t.Errorf("group 0 = %+v, want finished with one failure", g)
	}
}

// TestObserveCacheBehind checks that a recorded running node whose Job the
// cache has not seen yet is not taken for a deleted Job: the API server is
// asked.
func TestObserveCacheBehind(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	rec, changed := Record(Results{}, State{}, []string{"a", "b"}, nil)
	if !changed {
		t.Fatal("Record() of created Jobs did not change the record")
	}
	live := fake.NewClientBuilder().WithObjects(append(nodeObjects("a", "b", "c"), planObject(twoGroups), makeJob("a").Ptr(), makeJob("b").Ptr())...).Build()
	if err := (Member{Client: live, Live: live, Run: run}).WriteResults(context.Background(), rec, nil); err != nil {
		t.Fatal(err)
	}
	// The cache has the plan and the record but only Job a.
	cache := interceptor.NewClient(live, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if err := c.List(ctx, list, opts...); err != nil {
			return err
		}
		if jobs, ok := list.(*batchv1.JobList); ok {
			jobs.Items = jobs.Items[:1]
		}
		return nil
	}})
	st, err := Member{Client: cache, Live: live, Run: run}.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Nodes[1]; got.Phase != NodeRunning {
		t.Errorf("node b = %+v, want Running: its Job exists", got)
	}
	// Without the API server to ask, the same read says JobDeleted: the
	// live read is what keeps a lagging cache from failing a node.
	st, err = Member{Client: cache, Run: run}.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Nodes[1]; got.Reason != fleetv1.NodeReasonJobDeleted {
		t.Errorf("node b = %+v, want JobDeleted", got)
	}
}

// TestWriteResultsRace checks a write from a stale read merges with the
// stored record rather than overwrite it.
func TestWriteResultsRace(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	c := fake.NewClientBuilder().Build()
	first := ResultsOf(map[string]NodeResult{"a": {Phase: NodeSucceeded, Finish: t1.Unix()}})
	if err := (Member{Client: c, Live: c, Run: run}).WriteResults(context.Background(), first, nil); err != nil {
		t.Fatal(err)
	}
	// A reconcile whose cache has no record yet writes b as new.
	second := ResultsOf(map[string]NodeResult{"b": {Phase: NodeRunning}})
	if err := (Member{Client: c, Live: c, Run: run}).WriteResults(context.Background(), second, nil); err != nil {
		t.Fatalf("WriteResults() from a stale read error = %v", err)
	}
	got, _, err := ReadResults(context.Background(), c, run)
	if err != nil {
		t.Fatal(err)
	}
	want := ResultsOf(map[string]NodeResult{"a": first.Nodes.Get("a"), "b": second.Nodes.Get("b")})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored record mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteResultsError(t *testing.T) {
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", nil)
	}}).Build()
	err := Member{Client: c, Live: c, Run: testRun(makeClusterJob("disk-clean").Obj())}.WriteResults(context.Background(), ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning}}), nil)
	if !apierrors.IsForbidden(err) {
		t.Errorf("WriteResults() error = %v, want Forbidden", err)
	}
}
