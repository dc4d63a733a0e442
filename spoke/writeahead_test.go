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
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// failRecord makes every write of the results record fail with err: after
// writing it when stored is set (a timeout that came after the write).
func failRecord(err error, stored bool) interceptor.Funcs {
	isRecord := func(obj client.Object) bool {
		_, ok := obj.(*corev1.ConfigMap)
		return ok && obj.GetLabels()[fleetv1.ComponentLabel] == resultsComponent
	}
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if !isRecord(obj) {
				return c.Create(ctx, obj, opts...)
			}
			if stored {
				if werr := c.Create(ctx, obj, opts...); werr != nil {
					return werr
				}
			}
			return err
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if !isRecord(obj) {
				return c.Update(ctx, obj, opts...)
			}
			if stored {
				if werr := c.Update(ctx, obj, opts...); werr != nil {
					return werr
				}
			}
			return err
		},
	}
}

var (
	errRecordForbidden = apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "results", errors.New("quota"))
	errRecordTimeout   = apierrors.NewTimeoutError("the request timed out", 1)
)

// TestStartGroupWritesAhead: a node is recorded as starting before its Job
// is created; when the record cannot be written no Job is; a create the API
// server refused leaves the node Pending, to start later.
func TestStartGroupWritesAhead(t *testing.T) {
	starting := NodeResult{Phase: NodeStarting}
	testCases := map[string]struct {
		funcs       interceptor.Funcs
		wantErr     bool
		wantCreated []string
		wantRecord  map[string]NodeResult // the stored record, attempts aside
		wantPhases  []NodePhase           // of a, b as a reconcile then derives them
	}{
		"the nodes are recorded starting, then created": {
			wantCreated: []string{"a", "b"},
			wantRecord:  map[string]NodeResult{"a": starting, "b": starting},
			wantPhases:  []NodePhase{NodeRunning, NodeRunning},
		},
		"the record write is refused: no Job is created": {
			funcs:      failRecord(errRecordForbidden, false),
			wantErr:    true,
			wantPhases: []NodePhase{NodePending, NodePending},
		},
		"the record write times out after it was stored: no Job, the nodes are taken off again": {
			funcs: func() interceptor.Funcs {
				f := failRecord(errRecordTimeout, true)
				f.Update = nil // taking them off again works
				return f
			}(),
			wantErr:    true,
			wantRecord: map[string]NodeResult{},
			wantPhases: []NodePhase{NodePending, NodePending},
		},
		"a create that timed out may have happened: that node stays recorded, and fails as its Job never shows": {
			funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if obj.GetAnnotations()[fleetv1.NodeAnnotation] == "b" {
					return errRecordTimeout
				}
				return c.Create(ctx, obj, opts...)
			}},
			wantErr:     true,
			wantCreated: []string{"a"},
			wantRecord:  map[string]NodeResult{"a": starting, "b": starting},
			wantPhases:  []NodePhase{NodeRunning, NodeFailed},
		},
		"a create the rate limiter held past the deadline was never sent: that node stays Pending": {
			funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if obj.GetAnnotations()[fleetv1.NodeAnnotation] == "b" {
					return fmt.Errorf("client rate limiter Wait returned an error: %w", context.DeadlineExceeded)
				}
				return c.Create(ctx, obj, opts...)
			}},
			wantErr:     true,
			wantCreated: []string{"a"},
			wantRecord:  map[string]NodeResult{"a": starting},
			wantPhases:  []NodePhase{NodeRunning, NodePending},
		},
		"a create a sharded hub's fence refused to send: that node stays Pending": {
			funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if obj.GetAnnotations()[fleetv1.NodeAnnotation] == "b" {
					// As client-go returns a transport's error.
					return &url.Error{Op: "Post", URL: "https://member/apis/batch/v1/namespaces/fleetjob-system/jobs", Err: unsentError{}}
				}
				return c.Create(ctx, obj, opts...)
			}},
			wantErr:     true,
			wantCreated: []string{"a"},
			wantRecord:  map[string]NodeResult{"a": starting},
			wantPhases:  []NodePhase{NodeRunning, NodePending},
		},
		"a create the API server refused: that node stays Pending": {
			funcs:       forbidNode("b"),
			wantErr:     true,
			wantCreated: []string{"a"},
			wantRecord:  map[string]NodeResult{"a": starting},
			wantPhases:  []NodePhase{NodeRunning, NodePending},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			run := testRun(makeClusterJob("disk-clean").Batch(2).Obj())
			live := fake.NewClientBuilder().WithObjects(append(nodeObjects("a", "b", "c", "d"), planObject(fourNodes))...).Build()
			c := interceptor.NewClient(live, tc.funcs)
			st := Derive(&fourNodes, nil, present("a", "b", "c", "d"), Results{})
			created, _, err := Member{Client: c, Live: live, Run: run}.StartGroup(context.Background(), &st, 0)
			if (err != nil) != tc.wantErr {
				t.Errorf("StartGroup() error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantCreated, jobNodes(created)); diff != "" {
				t.Errorf("StartGroup() created mismatch (-want +got):\n%s", diff)
			}
			rec, cm, err := ReadResults(context.Background(), live, run)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantRecord, withoutAttempts(rec, cm)); diff != "" {
				t.Errorf("stored record mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPhases, phasesOf(t, live, run, "a", "b")); diff != "" {
				t.Errorf("phases afterwards mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecordedNodeNeverCreatedAgain: once a node is recorded as starting,
// it is not created again whatever the Job store says: the hub stopped
// between the record and the create, or between the create and any later
// record write, and the Jobs were deleted (a TTL) before it looked again.
func TestRecordedNodeNeverCreatedAgain(t *testing.T) {
	testCases := map[string]struct {
		// stop ends the first reconcile at a point: "before create" (the
		// hub died after the write ahead), "after create" (it died, or every
		// later record write failed, once the Jobs existed).
		stop string
	}{
		"hub stopped between the record and the create":               {stop: "before create"},
		"hub stopped after the create, before any other record write": {stop: "after create"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			run := testRun(makeClusterJob("disk-clean").Batch(2).Obj())
			live := fake.NewClientBuilder().WithObjects(append(nodeObjects("a", "b", "c", "d"), planObject(fourNodes))...).Build()
			st := Derive(&fourNodes, nil, present("a", "b", "c", "d"), Results{})
			if tc.stop == "before create" {
				if _, err := (Member{Client: live, Live: live, Run: run}).writeAhead(ctx, &st, []string{"a", "b"}, nil, nil); err != nil {
					t.Fatal(err)
				}
			} else if created, _, err := (Member{Client: live, Live: live, Run: run}).StartGroup(ctx, &st, 0); err != nil || len(created) != 2 {
				t.Fatalf("StartGroup() = %v, %v", jobNodes(created), err)
			}
			// Every record write fails from now on, and a TTL deleted the Jobs.
			if err := live.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(testNamespace)); err != nil {
				t.Fatal(err)
			}
			broken := interceptor.NewClient(live, failRecord(errRecordForbidden, false))
			for range 3 { // reconciles
				st, err := Member{Client: live, Live: live, Run: run}.Observe(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range st.Nodes[:2] {
					if n.Phase != NodeFailed || n.Reason != fleetv1.NodeReasonJobDeleted {
						t.Errorf("node %s = %s %s, want Failed %s: it may have run", n.Node, n.Phase, n.Reason, fleetv1.NodeReasonJobDeleted)
					}
				}
				if st.Groups[0].Finished() {
					if err := (Member{Client: broken, Live: live, Run: run}).RecordResults(ctx, st, nil, nil); err == nil {
						t.Error("RecordResults() through a broken client succeeded")
					}
					continue
				}
				if created, _, _ := (Member{Client: broken, Live: live, Run: run}).StartGroup(ctx, &st, 0); len(created) > 0 {
					t.Errorf("StartGroup() created %v again", jobNodes(created))
				}
			}
			var jobs batchv1.JobList
			if err := live.List(ctx, &jobs); err != nil {
				t.Fatal(err)
			}
			if len(jobs.Items) > 0 {
				t.Errorf("Jobs %v exist: a recorded node was created again", jobNodes(jobs.Items))
			}
		})
	}
}

// TestStartGroupStaleRecord: a reconcile whose cache has not seen the
// record's last write does not create the nodes that write recorded.
func TestStartGroupStaleRecord(t *testing.T) {
	ctx := context.Background()
	run := testRun(makeClusterJob("disk-clean").Batch(2).Obj())
	live := fake.NewClientBuilder().WithObjects(append(nodeObjects("a", "b", "c", "d"), planObject(fourNodes))...).Build()
	if err := (Member{Client: live, Live: live, Run: run}).WriteResults(ctx, ResultsOf(map[string]NodeResult{"a": {Phase: NodeStarting}}), nil); err != nil {
		t.Fatal(err)
	}
	stale := Derive(&fourNodes, nil, present("a", "b", "c", "d"), Results{})
	created, _, err := Member{Client: live, Live: live, Run: run}.StartGroup(ctx, &stale, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b"}, jobNodes(created)); diff != "" {
		t.Errorf("StartGroup() from a stale record created mismatch (-want +got):\n%s", diff)
	}
}

// TestWriteAheadCost: starting a group costs one record write, and the
// record written after the create adds nothing.
func TestWriteAheadCost(t *testing.T) {
	ctx := context.Background()
	run := testRun(makeClusterJob("disk-clean").Batch(2).Obj())
	writes := 0
	live := fake.NewClientBuilder().WithObjects(append(nodeObjects("a", "b", "c", "d"), planObject(fourNodes))...).Build()
	c := interceptor.NewClient(live, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				writes++
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			writes++
			return c.Update(ctx, obj, opts...)
		},
	})
	for g := range 2 {
		st, err := Member{Client: live, Live: live, Run: run}.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before := writes
		created, _, err := Member{Client: c, Live: live, Run: run}.StartGroup(ctx, &st, g)
		if err != nil {
			t.Fatal(err)
		}
		if err := (Member{Client: c, Live: live, Run: run}).RecordResults(ctx, st, jobNodes(created), nil); err != nil {
			t.Fatal(err)
		}
		if got := writes - before; got != 1 {
			t.Errorf("group %d: %d record writes, want 1", g, got)
		}
		for _, j := range created { // the group ends
			job := j
			job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			if err := live.Status().Update(ctx, &job); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// withoutAttempts is rec with the attempts cleared; nil when cm is.
func withoutAttempts(rec Results, cm *corev1.ConfigMap) map[string]NodeResult {
	if cm == nil {
		return nil
	}
	out := map[string]NodeResult{}
	for n, r := range rec.Nodes.All() {
		r.Attempt = ""
		out[n] = r
	}
	return out
}

// phasesOf is the phase of each of nodes as a reconcile observes them now.
func phasesOf(t *testing.T, live client.Client, run Run, nodes ...string) []NodePhase {
	t.Helper()
	st, err := Member{Client: live, Live: live, Run: run}.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []NodePhase
	for _, name := range nodes {
		for _, n := range st.Nodes {
			if n.Node == name {
				out = append(out, n.Phase)
			}
		}
	}
	return out
}

// TestDeleteFailedJobsWritesAhead: the hub's verdict on a node is recorded
// before its Job is deleted, so that the record, which `status --nodes`
// reads, says what the MemberRun says: when the write fails no Job is
// deleted (the verdict is decided again next time), and a Job is never
// gone with its verdict unwritten (it would read JobDeleted, or, its node
// back, run on and succeed after the hub counted it failed).
func TestDeleteFailedJobsWritesAhead(t *testing.T) {
	now := t1.Time
	twoNodes := allOf("a", "b")
	testCases := map[string]struct {
		funcs      interceptor.Funcs
		wantErr    bool
		wantJobs   []string // the nodes whose Jobs are left
		wantRecord map[string]NodeResult
	}{
		"the verdict is recorded, then the Job deleted": {
			wantJobs: []string{"b"},
			wantRecord: map[string]NodeResult{
				"a": {Phase: NodeFailed, Reason: fleetv1.NodeReasonNodeDeleted, Message: "node was deleted while its Job ran", Start: t0.Unix(), Finish: now.Unix()},
				"b": {Phase: NodeRunning, Start: t0.Unix(), Started: true},
			},
		},
		"the record write is refused: the Job is kept": {
			funcs:      failRecord(errRecordForbidden, false),
			wantErr:    true,
			wantJobs:   []string{"a", "b"},
			wantRecord: map[string]NodeResult{"a": {Phase: NodeRunning, Start: t0.Unix(), Started: true}, "b": {Phase: NodeRunning, Start: t0.Unix(), Started: true}},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			run := testRun(makeClusterJob("disk-clean").Obj())
			live := fake.NewClientBuilder().WithObjects(append(nodeObjects("b"), planObject(twoNodes),
				makeJob("a").Started(t0).Pods(1, 1, 0).Ptr(), makeJob("b").Started(t0).Pods(1, 1, 0).Ptr())...).Build()
			started := NodeResult{Phase: NodeRunning, Start: t0.Unix(), Started: true}
			if err := (Member{Client: live, Live: live, Run: run}).WriteResults(ctx, ResultsOf(map[string]NodeResult{"a": started, "b": started}), nil); err != nil {
				t.Fatal(err)
			}
			st, err := Member{Client: live, Live: live, Run: run}.Observe(ctx) // node a is gone
			if err != nil {
				t.Fatal(err)
			}
			jobs, _ := st.TimeOutStarts(now, time.Hour, StartWatch{}, nil)
			funcs := tc.funcs
			funcs.Delete = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				if rec, _, err := ReadResults(ctx, live, run); err != nil || !rec.Nodes.Get("a").final() {
					t.Errorf("Job %s deleted while the record says %+v (error %v); want its verdict first", obj.GetName(), rec.Nodes.Get("a"), err)
				}
				return c.Delete(ctx, obj, opts...)
			}
			err = Member{Client: interceptor.NewClient(live, funcs), Live: live, Run: run}.DeleteFailedJobs(ctx, &st, jobs)
			if (err != nil) != tc.wantErr {
				t.Errorf("DeleteFailedJobs() error = %v, want error %v", err, tc.wantErr)
			}
			var left batchv1.JobList
			if err := live.List(ctx, &left); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantJobs, jobNodes(left.Items)); diff != "" {
				t.Errorf("Jobs left mismatch (-want +got):\n%s", diff)
			}
			rec, _, err := ReadResults(ctx, live, run)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantRecord, rec.Nodes.Map()); diff != "" {
				t.Errorf("stored record mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// unsentError is a transport's refusal of a write it never sent, as a
// sharded hub's fence refuses one once the replica may no longer write.
type unsentError struct{}

func (unsentError) Error() string { return "hub replica hub-0 may not write to member-1 now" }
func (unsentError) NotSent() bool { return true }
