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
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// fourNodes is a plan of batches a,b then c,d.
var fourNodes = plan.Plan{Groups: []plan.Group{
	{Name: "batch-1", Nodes: []string{"a", "b"}},
	{Name: "batch-2", Nodes: []string{"c", "d"}},
}}

// forbidNode makes Create of node's Job fail as if a quota refused it.
func forbidNode(node string) interceptor.Funcs {
	return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if obj.GetAnnotations()[fleetv1.NodeAnnotation] == node {
			return apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, obj.GetName(), errors.New("exceeded quota"))
		}
		return c.Create(ctx, obj, opts...)
	}}
}

func TestStartGroup(t *testing.T) {
	testCases := map[string]struct {
		objs        []client.Object
		funcs       interceptor.Funcs
		stateJobs   []batchv1.Job // the Jobs the caller saw, maybe stale
		group       int
		wantCreated []string
		wantJobs    []string // every Job in the namespace afterwards
		wantErr     string
	}{
		"creates the Pending nodes of the group only": {
			objs:        []client.Object{makeJob("b").Ptr()},
			stateJobs:   []batchv1.Job{makeJob("b").Obj()},
			group:       0,
			wantCreated: []string{"a"},
			wantJobs:    []string{"a", "b"},
		},
		"second group, deleted node skipped": {
			group:       1,
			wantCreated: []string{"c"},
			wantJobs:    []string{"c"},
		},
		"own Job missing from a stale state is success, not created": {
			objs:        []client.Object{makeJob("a").Ptr()},
			group:       0,
			wantCreated: []string{"b"},
			wantJobs:    []string{"a", "b"},
		},
		"foreign Job is a conflict, the other nodes still start": {
			objs:        []client.Object{makeJob("a").Owner(otherUID).Ptr()},
			group:       0,
			wantCreated: []string{"b"},
			wantJobs:    []string{"a", "b"},
			wantErr:     "Job fleetjob-system/" + jobName("a") + " exists and does not belong to this ClusterJob",
		},
		"Job without any UID label is a conflict": {
			objs:        []client.Object{makeJob("b").Owner("").Ptr()},
			group:       0,
			wantCreated: []string{"a"},
			wantJobs:    []string{"a", "b"},
			wantErr:     "Job fleetjob-system/" + jobName("b") + " exists and does not belong to this ClusterJob",
		},
		"API error is returned; creations already under way finish": {
			funcs:       forbidNode("b"),
			group:       0,
			wantCreated: []string{"a"},
			wantJobs:    []string{"a"},
			wantErr:     "creating Job fleetjob-system/" + jobName("b") + `: jobs.batch "` + jobName("b") + `" is forbidden: exceeded quota`,
		},
		"group out of range": {
			group:   2,
			wantErr: "group 2 is not in the plan of cluster member-1, which has 2 groups",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithObjects(append(nodeObjects("a", "b", "c", "d"), tc.objs...)...).Build()
			c := interceptor.NewClient(live, tc.funcs)
			st := Derive(&fourNodes, tc.stateJobs, present("a", "b", "c"), Results{})
			created, _, err := Member{Client: c, Live: live, Run: testRun(makeClusterJob("disk-clean").Batch(2).Obj())}.StartGroup(context.Background(), &st, tc.group)
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("StartGroup() error mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCreated, jobNodes(created)); diff != "" {
				t.Errorf("StartGroup() created mismatch (-want +got):\n%s", diff)
			}
			var jobs batchv1.JobList
			if err := live.List(context.Background(), &jobs); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantJobs, jobNodes(jobs.Items)); diff != "" {
				t.Errorf("Jobs afterwards mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStartGroupConflictError(t *testing.T) {
	live := fake.NewClientBuilder().WithObjects(append(nodeObjects("a", "b", "c", "d"), makeJob("a").Owner(otherUID).Ptr())...).Build()
	st := Derive(&fourNodes, nil, present("a", "b", "c", "d"), Results{})
	_, _, err := Member{Client: live, Live: live, Run: testRun(makeClusterJob("disk-clean").Obj())}.StartGroup(context.Background(), &st, 0)
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("StartGroup() error = %v, want a *ConflictError", err)
	}
	if diff := cmp.Diff(&ConflictError{Job: jobName("a"), Namespace: testNamespace}, conflict); diff != "" {
		t.Errorf("ConflictError mismatch (-want +got):\n%s", diff)
	}
}

// TestStartGroupIdempotent starts a group twice from the same state, as a
// controller does when its cache lags: the second call creates nothing and
// does not fail.
func TestStartGroupIdempotent(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(nodeObjects("a", "b", "c", "d")...).Build()
	run := testRun(makeClusterJob("disk-clean").Obj())
	st := Derive(&fourNodes, nil, present("a", "b", "c", "d"), Results{})
	first, _, err := Member{Client: c, Live: c, Run: run}.StartGroup(context.Background(), &st, 0)
	if err != nil {
		t.Fatalf("first StartGroup() error = %v", err)
	}
	second, _, err := Member{Client: c, Live: c, Run: run}.StartGroup(context.Background(), &st, 0)
	if err != nil {
		t.Fatalf("second StartGroup() error = %v", err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, jobNodes(first)); diff != "" {
		t.Errorf("first StartGroup() created mismatch (-want +got):\n%s", diff)
	}
	if len(second) != 0 {
		t.Errorf("second StartGroup() created %v, want none", jobNodes(second))
	}
}

// TestStartGroupWrapsAPIErrors checks the caller can still tell what the
// API server said.
func TestStartGroupWrapsAPIErrors(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(nodeObjects("a", "b", "c", "d")...).WithInterceptorFuncs(forbidNode("a")).Build()
	st := Derive(&fourNodes, nil, present("a", "b", "c", "d"), Results{})
	_, _, err := Member{Client: c, Live: c, Run: testRun(makeClusterJob("disk-clean").Obj())}.StartGroup(context.Background(), &st, 0)
	if !apierrors.IsForbidden(err) {
		t.Errorf("StartGroup() error = %v, want a Forbidden API error", err)
	}
}

func jobNodes(jobs []batchv1.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Annotations[fleetv1.NodeAnnotation])
	}
	return out
}

func errorString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestStartGroupBoundsParallelCreates(t *testing.T) {
	var names []string
	present := map[string]bool{}
	for i := range 100 {
		n := fmt.Sprintf("node-%03d", i)
		names, present[n] = append(names, n), true
	}
	p := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: names}}}
	var inFlight, most atomic.Int32
	live := fake.NewClientBuilder().WithObjects(nodeObjects(names...)...).Build()
	c := interceptor.NewClient(live, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			runtime.Gosched() // let other creations overlap this one
			return c.Create(ctx, obj, opts...)
		},
	})
	created, _, err := Member{Client: c, Live: live, Run: testRun(makeClusterJob("disk-clean").Obj())}.StartGroup(context.Background(), ptr.To(Derive(&p, nil, present, Results{})), 0)
	if err != nil {
		t.Fatalf("StartGroup() error = %v", err)
	}
	if diff := cmp.Diff(names, jobNodes(created)); diff != "" {
		t.Errorf("StartGroup() created mismatch, want every node in plan order (-want +got):\n%s", diff)
	}
	if got := most.Load(); got > createParallelism {
		t.Errorf("%d creations ran at once, want at most %d", got, createParallelism)
	}
}

func TestRootCause(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "j", errors.New("RBAC"))
	cancelled := fmt.Errorf("creating Job ns/j: client rate limiter Wait returned an error: %w", context.Canceled)
	testCases := map[string]struct {
		failures []error
		want     error
	}{
		"none":                        {},
		"the cause after a cancel":    {failures: []error{cancelled, forbidden, cancelled}, want: forbidden},
		"only cancels: the first one": {failures: []error{cancelled}, want: cancelled},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if got := rootCause(tc.failures); got != tc.want {
				t.Errorf("rootCause() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStartGroupRechecksNodes checks a node that turned cordoned, tainted,
// NotReady or was deleted after the plan was made is skipped, with the
// reason, when its group starts, and gets no Job.
func TestStartGroupRechecksNodes(t *testing.T) {
	nodes := readyNodes("a", "b", "c")
	nodes[0].Spec.Unschedulable = true
	nodes[1].Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}
	objs := []client.Object{&nodes[0], &nodes[1], &nodes[2]}
	c := fake.NewClientBuilder().WithObjects(objs...).Build()
	all := allOf("a", "b", "c", "d")
	st := Derive(&all, nil, present("a", "b", "c", "d"), Results{})
	created, skipped, err := Member{Client: c, Live: c, Run: testRun(makeClusterJob("disk-clean").Obj())}.StartGroup(context.Background(), &st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c"}, jobNodes(created)); diff != "" {
		t.Errorf("StartGroup() created mismatch (-want +got):\n%s", diff)
	}
	want := []plan.SkippedNode{
		{Node: "a", Reason: fleetv1.NodeReasonUnschedulable, Message: "node is cordoned when its group started"},
		{Node: "b", Reason: fleetv1.NodeReasonUntoleratedTaint, Message: "taint maintenance:NoExecute is not tolerated by the Job template when its group started"},
		{Node: "d", Reason: fleetv1.NodeReasonNodeDeleted, Message: "node was deleted before its Job started"},
	}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("StartGroup() skipped mismatch (-want +got):\n%s", diff)
	}
}

// TestStartGroupStoppedAfterItsRecord stops the caller right after the
// group's nodes were recorded as starting, as a hub shutting down does: no
// create is sent any more, and the nodes are taken off the record again,
// Pending for the next reconcile. Left recorded without a Job, they would
// fail though they never ran.
func TestStartGroupStoppedAfterItsRecord(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cancelOnRecord := func(err error) error {
		if err == nil {
			cancel()
		}
		return err
	}
	live := fake.NewClientBuilder().WithObjects(nodeObjects("a", "b", "c", "d")...).Build()
	c := interceptor.NewClient(live, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				return cancelOnRecord(c.Create(ctx, obj, opts...))
			}
			if err := ctx.Err(); err != nil { // what a real client says
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return cancelOnRecord(c.Update(ctx, obj, opts...))
		},
	})
	st := Derive(&fourNodes, nil, present("a", "b", "c", "d"), Results{})
	run := testRun(makeClusterJob("disk-clean").Obj())
	created, _, err := Member{Client: c, Live: live, Run: run}.StartGroup(ctx, &st, 0)
	if ctx.Err() == nil {
		t.Fatal("the caller was not stopped: the test did not cut the start")
	}
	if !errors.Is(err, errStopped) {
		t.Errorf("StartGroup() error = %v, want %v", err, errStopped)
	}
	if len(created) > 0 {
		t.Errorf("StartGroup() created Jobs for %v after its caller stopped, want none", jobNodes(created))
	}
	rec, _, err := ReadResults(context.Background(), live, run)
	if err != nil {
		t.Fatal(err)
	}
	var jobs batchv1.JobList
	if err := live.List(context.Background(), &jobs); err != nil {
		t.Fatal(err)
	}
	want := GroupState{Name: "batch-1", Nodes: 2, Pending: 2}
	if diff := cmp.Diff(want, Derive(&fourNodes, jobs.Items, present("a", "b", "c", "d"), rec).Groups[0]); diff != "" {
		t.Errorf("group after the stopped start (-want +got):\n%s", diff)
	}
}

// TestStartGroupStoppedMidway stops the caller while the first creates
// are under way on a slow member: they are answered and their Jobs kept,
// no other create is sent, and the nodes not sent are Pending again; none
// is left recorded without a Job. The stop ends the start within the
// answers under way, not at its deadline.
func TestStartGroupStoppedMidway(t *testing.T) {
	s := startOnSlowMember(t, slowStart{nodes: 3 * createParallelism, createTakes: time.Second, deadline: time.Minute, stopAfter: 500 * time.Millisecond})
	if !errors.Is(s.err, errStopped) {
		t.Errorf("StartGroup() error = %v, want %v", s.err, errStopped)
	}
	if len(s.created) != createParallelism {
		t.Errorf("StartGroup() created %d Jobs, want the %d under way when it was stopped", len(s.created), createParallelism)
	}
	if len(s.unbacked) > 0 {
		t.Errorf("%d nodes recorded as starting have no Job and would fail: %v", len(s.unbacked), s.unbacked)
	}
	want := GroupState{Name: "all", Nodes: 3 * createParallelism, Pending: 2 * createParallelism, Running: createParallelism}
	if diff := cmp.Diff(want, s.group); diff != "" {
		t.Errorf("group after the start (-want +got):\n%s", diff)
	}
	if s.took > 10*time.Second {
		t.Errorf("StartGroup() returned %s after it was stopped, want within the creates under way (1 s) and a write", s.took)
	}
}

// TestStartGroupStopsBeforeItsDeadline: on a member too slow to take a
// whole group within the start's time, creates stop being sent a while
// before the deadline, so that those under way are answered and the nodes
// not sent are taken off the record again: no node is left recorded
// without a Job (it would fail, NotStarted or JobDeleted, though it never
// ran), and the next reconcile creates the rest.
func TestStartGroupStopsBeforeItsDeadline(t *testing.T) {
	// Each Job takes a slow member 2 s to create: 32 at a time, the whole
	// group would take 8 s, and a fourth wave sent at 6 s would be cut by
	// a 7.5 s deadline; the cutoff (7.5 s less a third: 5 s) stops it being
	// sent, and leaves the third wave (sent at 4 s, done at 6 s) a second
	// and a half of room on a loaded machine.
	const nodes = 100
	s := startOnSlowMember(t, slowStart{nodes: nodes, createTakes: 2 * time.Second, deadline: 7500 * time.Millisecond})
	if s.err != nil {
		t.Fatalf("StartGroup() error = %v, want none: the Jobs created wake the next reconcile", s.err)
	}
	if len(s.created) == 0 || len(s.created) == nodes {
		t.Fatalf("StartGroup() created %d Jobs, want some but not all: the test did not cut the start", len(s.created))
	}
	if len(s.unbacked) > 0 {
		t.Errorf("%d nodes recorded as starting have no Job and would fail: %v", len(s.unbacked), s.unbacked)
	}
	if got, want := s.group.Pending, nodes-len(s.created); got != want {
		t.Errorf("pending after the start = %d, want %d (the nodes not created, for the next reconcile)", got, want)
	}
}

// TestStartGroupSendsNoCreateItsAnswerWouldNotFit: a member whose creates
// take 2.3 s, under a 4 s deadline. createCutoff alone (4 s less a third)
// would send a second wave at 2.3 s, whose answers would come after the
// deadline: 32 nodes recorded without a Job, failed though they never ran.
// After the first answers, no create is sent that twice the slowest answer
// would not bring back in time.
func TestStartGroupSendsNoCreateItsAnswerWouldNotFit(t *testing.T) {
	s := startOnSlowMember(t, slowStart{nodes: 2 * createParallelism, createTakes: 2300 * time.Millisecond, deadline: 4 * time.Second})
	if s.err != nil {
		t.Fatalf("StartGroup() error = %v, want none: the Jobs created wake the next reconcile", s.err)
	}
	if len(s.created) != createParallelism {
		t.Errorf("StartGroup() created %d Jobs, want the first wave's %d", len(s.created), createParallelism)
	}
	if len(s.unbacked) > 0 {
		t.Errorf("%d nodes recorded as starting have no Job and would fail: %v", len(s.unbacked), s.unbacked)
	}
	want := GroupState{Name: "all", Nodes: 2 * createParallelism, Pending: createParallelism, Running: createParallelism}
	if diff := cmp.Diff(want, s.group); diff != "" {
		t.Errorf("group after the start (-want +got):\n%s", diff)
	}
}

// slowStart is a group start on a member whose Job creates each take
// createTakes and whose record writes recordTakes: the group's nodes, the
// start's deadline, and when its caller stops it (0: never).
type slowStart struct {
	nodes                                         int
	createTakes, recordTakes, deadline, stopAfter time.Duration
}

// slowStarted is how a slowStart ended: what StartGroup returned, how long
// it took after its caller stopped it, the nodes recorded as starting
// without a Job, and the group as the member holds it after.
type slowStarted struct {
	created  []batchv1.Job
	err      error
	took     time.Duration
	unbacked []string
	group    GroupState
}

// TestStartGroupSendsNoCreateAfterASlowRecord: on a member whose writes
// take 2.5 s, a start with 4.5 s writes its record ahead by 2.5 s; a create
// sent then (before createCutoff's 3.7 s) would be answered at the
// deadline and cut, its node recorded without a Job and failed though it
// never ran. The write ahead's own time counts as the slowest answer yet:
// no create is sent, and the nodes are taken off the record again.
func TestStartGroupSendsNoCreateAfterASlowRecord(t *testing.T) {
	s := startOnSlowMember(t, slowStart{nodes: 10, createTakes: 2500 * time.Millisecond, recordTakes: 2500 * time.Millisecond, deadline: 4500 * time.Millisecond})
	if len(s.created) > 0 {
		t.Errorf("StartGroup() created %d Jobs, want none: their answers would come after the deadline", len(s.created))
	}
	if len(s.unbacked) > 0 {
		t.Errorf("%d nodes recorded as starting have no Job and would fail: %v", len(s.unbacked), s.unbacked)
	}
	want := GroupState{Name: "all", Nodes: 10, Pending: 10}
	if diff := cmp.Diff(want, s.group); diff != "" {
		t.Errorf("group after the start (-want +got):\n%s", diff)
	}
}

// startOnSlowMember runs s.
func startOnSlowMember(t *testing.T, s slowStart) slowStarted {
	t.Helper()
	names := make([]string, s.nodes)
	for i := range names {
		names[i] = fmt.Sprintf("n%03d", i)
	}
	p := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: names}}}
	live := fake.NewClientBuilder().WithObjects(nodeObjects(names...)...).Build()
	// takes holds a write for d, as a slow API server does, unless its
	// context ends first.
	takes := func(ctx context.Context, d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return fmt.Errorf("reading the response: %w", ctx.Err()) // what a real client says
		}
	}
	c := interceptor.NewClient(live, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			d := s.createTakes
			if _, ok := obj.(*corev1.ConfigMap); ok {
				d = s.recordTakes
			}
			if err := takes(ctx, d); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := takes(ctx, s.recordTakes); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), s.deadline)
	defer cancel()
	var stopped atomic.Int64 // when the caller stopped, in Unix nanoseconds
	if s.stopAfter > 0 {
		timer := time.AfterFunc(s.stopAfter, func() {
			stopped.Store(time.Now().UnixNano())
			cancel()
		})
		defer timer.Stop()
	}
	run := testRun(makeClusterJob("disk-clean").Obj())
	st := Derive(&p, nil, present(names...), Results{})
	var out slowStarted
	out.created, _, out.err = Member{Client: c, Live: live, Run: run}.StartGroup(ctx, &st, 0)
	if at := stopped.Load(); at > 0 {
		out.took = time.Since(time.Unix(0, at))
	}
	rec, _, err := ReadResults(context.Background(), live, run)
	if err != nil {
		t.Fatal(err)
	}
	var jobs batchv1.JobList
	if err := live.List(context.Background(), &jobs); err != nil {
		t.Fatal(err)
	}
	withJob := map[string]bool{}
	for _, j := range jobs.Items {
		withJob[j.Annotations[fleetv1.NodeAnnotation]] = true
	}
	for node := range rec.Nodes.All() {
		if !withJob[node] {
			out.unbacked = append(out.unbacked, node)
		}
	}
	out.group = Derive(&p, jobs.Items, present(names...), rec).Groups[0]
	return out
}

// TestMaySend covers the two bounds of a create's sending.
func TestMaySend(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	deadline := t0.Add(30 * time.Second)
	cutoff := t0.Add(20 * time.Second)
	cases := map[string]struct {
		now     time.Time
		bounded bool
		slowest time.Duration
		want    bool
	}{
		"unbounded":                                {now: t0.Add(time.Hour), slowest: time.Minute, want: true},
		"nothing answered yet":                     {now: t0, bounded: true, want: true},
		"fast answers, before the cutoff":          {now: t0.Add(19 * time.Second), bounded: true, slowest: 30 * time.Millisecond, want: true},
		"at the cutoff":                            {now: cutoff, bounded: true, slowest: 30 * time.Millisecond},
		"twice the slowest answer fits":            {now: t0.Add(10 * time.Second), bounded: true, slowest: 9 * time.Second, want: true},
		"twice the slowest answer passes deadline": {now: t0.Add(10 * time.Second), bounded: true, slowest: 10 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := maySend(tc.now, cutoff, deadline, tc.bounded, tc.slowest); got != tc.want {
				t.Errorf("maySend() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestObserveJudgesUnstartedNodesFromTheStoredRecord: a group start took
// nodes whose creates were never sent off the record again; a cache still
// holding the record before that must not make them lost (JobDeleted), a
// failure of nodes that never ran: Observe reads the stored record before
// it judges a recorded node without a Job.
func TestObserveJudgesUnstartedNodesFromTheStoredRecord(t *testing.T) {
	ctx := context.Background()
	run := testRun(makeClusterJob("disk-clean").Obj())
	job := makeJob("a").Ptr()
	build := func(rec Results) client.Client {
		c := fake.NewClientBuilder().WithObjects(append(nodeObjects("a", "b", "c", "d"), planObject(fourNodes), job.DeepCopy())...).Build()
		if _, err := (Member{Client: c, Run: run}).writeResults(ctx, rec, nil, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	cached := build(ResultsOf(map[string]NodeResult{"a": {Phase: NodeStarting, Attempt: "x"}, "b": {Phase: NodeStarting, Attempt: "x"}}))
	live := build(ResultsOf(map[string]NodeResult{"a": {Phase: NodeStarting, Attempt: "x"}}))
	st, err := Member{Client: cached, Live: live, Run: run}.Observe(ctx)
	if err != nil {
		t.Fatalf("Observe() error = %v", err)
	}
	got := map[string]NodePhase{}
	for _, n := range st.Nodes {
		got[n.Node] = n.Phase
	}
	want := map[string]NodePhase{"a": NodeRunning, "b": NodePending, "c": NodePending, "d": NodePending}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node phases mismatch (-want +got):\n%s", diff)
	}
}

// TestStartGroupWithLimit starts a group in waves, as a disruption budget
// grants it: each start creates the first Pending nodes up to its limit,
// the group stays current, and every node gets exactly one Job.
func TestStartGroupWithLimit(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(nodeObjects("a", "b", "c", "d", "e")...).Build()
	all := allOf("a", "b", "c", "d", "e")
	run := testRun(makeClusterJob("reboot").Obj())
	var waves [][]string
	for _, limit := range []int{0, 2, 1, 5} {
		var jobs batchv1.JobList
		if err := c.List(context.Background(), &jobs); err != nil {
			t.Fatal(err)
		}
		st := Derive(&all, jobs.Items, present("a", "b", "c", "d", "e"), Results{})
		created, _, err := Member{Client: c, Live: c, Run: run}.StartGroup(context.Background(), &st, 0, WithLimit(limit))
		if err != nil {
			t.Fatal(err)
		}
		waves = append(waves, jobNodes(created))
	}
	want := [][]string{nil, {"a", "b"}, {"c"}, {"d", "e"}}
	if diff := cmp.Diff(want, waves); diff != "" {
		t.Errorf("waves (-want +got):\n%s", diff)
	}
	var jobs batchv1.JobList
	if err := c.List(context.Background(), &jobs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d", "e"}, jobNodes(jobs.Items)); diff != "" {
		t.Errorf("one Job per node (-want +got):\n%s", diff)
	}
}
