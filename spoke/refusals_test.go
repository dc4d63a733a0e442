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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

func TestRefusalReads(t *testing.T) {
	const timeout = 5 * time.Minute
	now := t0.Time
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	noPod := func(node string) batchv1.Job { return makeJob(node).Obj() }
	pending := func(node string) batchv1.Job { return makeJob(node).Pods(1, 0, 0).Obj() }
	pod := func(node string) RefusalRead { return RefusalRead{Node: node, Job: jobName(node), Pod: true} }
	job := func(node string) RefusalRead { return RefusalRead{Node: node, Job: jobName(node)} }
	three := allOf("a", "b", "c")
	testCases := map[string]struct {
		jobs  []batchv1.Job
		watch StartWatch // as the last reconcile left it
		max   int
		want  []RefusalRead
	}{
		"a pod seen less than RefusalDelay ago: not read, it may well start": {
			jobs:  []batchv1.Job{pending("a")},
			watch: StartWatch{Pod: map[string]time.Time{"a": ago(RefusalDelay - time.Second)}},
		},
		"a pod seen RefusalDelay ago, never read: read": {
			jobs:  []batchv1.Job{pending("a")},
			watch: StartWatch{Pod: map[string]time.Time{"a": ago(RefusalDelay)}},
			want:  []RefusalRead{pod("a")},
		},
		"read less than a poll ago: not read again": {
			jobs:  []batchv1.Job{pending("a")},
			watch: StartWatch{Pod: map[string]time.Time{"a": ago(time.Minute)}, Read: map[string]time.Time{"a": ago(RefusalPoll - time.Second)}},
		},
		"read a poll ago: read again": {
			jobs:  []batchv1.Job{pending("a")},
			watch: StartWatch{Pod: map[string]time.Time{"a": ago(time.Minute)}, Read: map[string]time.Time{"a": ago(RefusalPoll)}},
			want:  []RefusalRead{pod("a")},
		},
		"at its bound, read just before: read again, its verdict needs a read of now": {
			jobs:  []batchv1.Job{pending("a")},
			watch: StartWatch{Pod: map[string]time.Time{"a": ago(timeout)}, Read: map[string]time.Time{"a": ago(time.Second)}},
			want:  []RefusalRead{pod("a")},
		},
		"more due than a reconcile reads: those at their bound first, then those never read": {
			jobs: []batchv1.Job{pending("a"), pending("b"), pending("c")},
			watch: StartWatch{Pod: map[string]time.Time{"a": ago(time.Minute), "b": ago(time.Minute), "c": ago(timeout)},
				Read: map[string]time.Time{"a": ago(RefusalPoll)}},
			max:  2,
			want: []RefusalRead{pod("c"), pod("b")},
		},
		"reads made within the last poll leave less room before the bound; none is taken from a bound": {
			jobs: []batchv1.Job{pending("a"), pending("b"), pending("c")},
			watch: StartWatch{Pod: map[string]time.Time{"a": ago(timeout), "b": ago(time.Minute), "c": ago(time.Minute)},
				Read: map[string]time.Time{"a": ago(time.Second), "c": ago(time.Second)}, Polls: []time.Time{ago(time.Second), ago(time.Second)}},
			max:  2,
			want: []RefusalRead{pod("a")},
		},
		"reads of pods that started since still count": {
			jobs:  []batchv1.Job{pending("a"), pending("b")},
			watch: StartWatch{Pod: map[string]time.Time{"a": ago(time.Minute), "b": ago(time.Minute)}, Polls: []time.Time{ago(RefusalPoll - time.Second), ago(time.Second)}},
			max:   3,
			want:  []RefusalRead{pod("a")},
		},
		"Jobs without a pod, listed less than RefusalDelay ago: not listed again before a bound": {
			jobs:  []batchv1.Job{noPod("a"), noPod("b")},
			watch: StartWatch{Job: map[string]time.Time{"a": ago(time.Minute), "b": ago(RefusalDelay)}, Read: map[string]time.Time{"a": ago(RefusalPoll)}, Listed: ago(time.Second)},
		},
		"Jobs without a pod, listed a moment ago, one at its bound: listed": {
			jobs:  []batchv1.Job{noPod("a"), noPod("b")},
			watch: StartWatch{Job: map[string]time.Time{"a": ago(timeout), "b": ago(time.Minute)}, Read: map[string]time.Time{"a": ago(time.Second), "b": ago(time.Second)}, Listed: ago(time.Second)},
			want:  []RefusalRead{job("a"), job("b")},
		},
		"Jobs without a pod: when one is due, every one past the delay is read, in one list": {
			jobs: []batchv1.Job{noPod("a"), noPod("b"), noPod("c")},
			watch: StartWatch{Job: map[string]time.Time{"a": ago(time.Minute), "b": ago(time.Minute), "c": ago(time.Second)},
				Read: map[string]time.Time{"b": ago(time.Second)}},
			max:  1,
			want: []RefusalRead{job("a"), job("b")},
		},
		"Jobs without a pod, none due: none read": {
			jobs:  []batchv1.Job{noPod("a"), noPod("b")},
			watch: StartWatch{Job: map[string]time.Time{"a": ago(time.Minute), "b": ago(time.Minute)}, Read: map[string]time.Time{"a": ago(time.Second), "b": ago(time.Second)}},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			st := Derive(&three, tc.jobs, present("a", "b", "c"), Results{})
			if tc.max == 0 {
				tc.max = MaxRefusalReads
			}
			if diff := cmp.Diff(tc.want, st.RefusalReads(now, timeout, tc.watch, tc.max)); diff != "" {
				t.Errorf("RefusalReads() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefusalReadsBounded is a member working through a queue (the
// backlog of TestStartBacklog) seen by a hub that reads what it is told to
// every second: pods are read at most MaxRefusalReads per RefusalPoll
// before their bound, and the Jobs without a pod in one list at a time.
func TestRefusalReadsBounded(t *testing.T) {
	const (
		nodes   = 1000
		timeout = 10 * time.Minute
	)
	names := make([]string, nodes)
	jobs := make([]batchv1.Job, nodes)
	for i := range names {
		names[i] = naming.LabelValue("node-" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)))
		jobs[i] = makeJob(names[i]).Pods(1, 0, 0).Obj()
		if i%2 == 0 {
			jobs[i] = makeJob(names[i]).Obj()
		}
	}
	p := allOf(names...)
	st := Derive(&p, jobs, present(names...), Results{})
	var w StartWatch
	podReads, lists := 0, 0
	for sec := 0; sec < 120; sec++ {
		now := t0.Add(time.Duration(sec) * time.Second)
		w = st.Watch(w, now)
		reads := st.RefusalReads(now, timeout, w, MaxRefusalReads)
		listed := false
		for _, r := range reads {
			if r.Pod {
				podReads++
			} else {
				listed = true
			}
		}
		if listed {
			lists++
		}
		w = w.Noted(reads, now)
	}
	// 110 s of reads past the first RefusalDelay: four polls' worth.
	if podReads > 4*MaxRefusalReads {
		t.Errorf("%d pod reads in 120 s, want at most %d", podReads, 4*MaxRefusalReads)
	}
	if lists != 4 {
		t.Errorf("%d lists of events in 120 s, want 4 (at 10, 40, 70 and 100 s)", lists)
	}
}

// TestRefusalReadsQueueDrained is a member working through a queue as
// members do: its Jobs created over 5 s, their pods over 20 s, each pod
// starting 12 s after it showed up, so that most are read once and start
// soon after. A hub reconciling every second reads at most
// MaxRefusalReads pods in any RefusalPoll, and lists events at most once
// per RefusalDelay.
func TestRefusalReadsQueueDrained(t *testing.T) {
	const (
		nodes   = 1000
		timeout = 10 * time.Minute
	)
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i)
	}
	p := allOf(names...)
	var w StartWatch
	var polls []time.Time
	var lists []time.Time
	for sec := 0; sec < 90; sec++ {
		now := t0.Add(time.Duration(sec) * time.Second)
		var jobs []batchv1.Job
		for i, name := range names {
			created, podAt := i/200, i/50
			switch {
			case sec < created:
			case sec < podAt:
				jobs = append(jobs, makeJob(name).Obj())
			case sec < podAt+12:
				jobs = append(jobs, makeJob(name).Pods(1, 0, 0).Obj())
			default:
				jobs = append(jobs, makeJob(name).Pods(1, 1, 0).Obj())
			}
		}
		st := Derive(&p, jobs, present(names...), Results{})
		w = st.Watch(w, now)
		reads := st.RefusalReads(now, timeout, w, MaxRefusalReads)
		listed := false
		for _, r := range reads {
			if r.Pod {
				polls = append(polls, now)
			} else {
				listed = true
			}
		}
		if listed {
			lists = append(lists, now)
		}
		w = w.Noted(reads, now)
	}
	for i := range polls {
		if j := i + MaxRefusalReads; j < len(polls) && polls[j].Sub(polls[i]) < RefusalPoll {
			t.Fatalf("pod reads %d to %d within %s, want at most %d per %s (%d pod reads in all)", i, j, polls[j].Sub(polls[i]), MaxRefusalReads, RefusalPoll, len(polls))
		}
	}
	for i := 1; i < len(lists); i++ {
		if d := lists[i].Sub(lists[i-1]); d < RefusalDelay {
			t.Errorf("lists of events %s apart, want at least %s: %v", d, RefusalDelay, lists)
		}
	}
	if len(polls) == 0 || len(lists) == 0 {
		t.Fatalf("%d pod reads and %d lists: the queue was never read", len(polls), len(lists))
	}
}

func TestReadRefusals(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	podOf := func(node string, statuses ...corev1.ContainerStatus) *corev1.Pod {
		l := runLabels(run)
		l[fleetv1.NodeLabel] = node
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: node + "-pod", Namespace: testNamespace, Labels: l},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{ContainerStatuses: statuses}}
	}
	event := func(name, job, reason, msg string, at metav1.Time) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace}, Reason: reason, Message: msg, LastTimestamp: at,
			InvolvedObject: corev1.ObjectReference{Kind: "Job", Namespace: testNamespace, Name: job}}
	}
	objs := []client.Object{
		podOf("a", corev1.ContainerStatus{Name: "work", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "nope"`}}}),
		podOf("b", corev1.ContainerStatus{Name: "work", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}),
		event("c1", jobName("c"), reasonFailedCreate, "exceeded quota", t0),
		event("c2", jobName("c"), reasonFailedCreate, `violates PodSecurity "restricted:latest"`, t1),
		event("c3", jobName("c"), "SuccessfulCreate", "Created pod", t2),
		event("x", "someone-elses", reasonFailedCreate, "exceeded quota", t2),
	}
	reads := []RefusalRead{{Node: "a", Job: jobName("a"), Pod: true}, {Node: "b", Job: jobName("b"), Pod: true}, {Node: "c", Job: jobName("c")}, {Node: "d", Job: jobName("d")}}
	testCases := map[string]struct {
		reads []RefusalRead // default: reads
		funcs interceptor.Funcs
		want  map[string]Refusal
	}{
		"one Job without a pod: its own events": {
			reads: []RefusalRead{{Node: "c", Job: jobName("c")}},
			want:  map[string]Refusal{"c": {Reason: reasonFailedCreate, Message: `violates PodSecurity "restricted:latest"`}},
		},
		"the kubelet's reason, nothing, the Job controller's newest FailedCreate, nothing": {
			want: map[string]Refusal{
				"a": {Reason: "ImagePullBackOff", Message: `Back-off pulling image "nope"`},
				"b": {},
				"c": {Reason: reasonFailedCreate, Message: `violates PodSecurity "restricted:latest"`},
				"d": {},
			},
		},
		"a registration that may not read events: the pods still tell": {
			funcs: interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*corev1.EventList); ok {
					return apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errors.New("no"))
				}
				return c.List(ctx, list, opts...)
			}},
			want: map[string]Refusal{"a": {Reason: "ImagePullBackOff", Message: `Back-off pulling image "nope"`}, "b": {}},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithObjects(objs...).
				WithIndex(&corev1.Event{}, "involvedObject.kind", func(o client.Object) []string { return []string{o.(*corev1.Event).InvolvedObject.Kind} }).
				WithIndex(&corev1.Event{}, "involvedObject.name", func(o client.Object) []string { return []string{o.(*corev1.Event).InvolvedObject.Name} }).
				WithIndex(&corev1.Event{}, "reason", func(o client.Object) []string { return []string{o.(*corev1.Event).Reason} }).
				WithInterceptorFuncs(tc.funcs).Build()
			if tc.reads == nil {
				tc.reads = reads
			}
			got, err := Member{Live: live, Run: run}.ReadRefusals(context.Background(), tc.reads)
			if err != nil {
				t.Errorf("ReadRefusals() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadRefusals() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefusalShownWhileWaiting: what refuses a node's pod is in its row
// while it waits, from its results record as `status --nodes` reads it (no
// hub memory), until its pod starts; its verdict at the bound says it.
func TestRefusalShownWhileWaiting(t *testing.T) {
	const timeout = 5 * time.Minute
	one := allOf("a")
	waiting := []batchv1.Job{makeJob("a").Pods(1, 0, 0).Obj()}
	refused := map[string]Refusal{"a": {Reason: "ImagePullBackOff", Message: `Back-off pulling image "nope:1"`}}
	seen := t0.Time

	st := Derive(&one, waiting, present("a"), Results{})
	w := st.Watch(StartWatch{}, seen)
	at := seen.Add(RefusalDelay)
	w = st.Watch(w, at).Noted(readsOf(refused), at)
	st.TimeOutStarts(at, timeout, w, refused)
	rec, _ := Record(Results{}, st, nil, nil)

	shown := Derive(&one, waiting, present("a"), rec).Nodes[0]
	if shown.Phase != NodeRunning || shown.Reason != "ImagePullBackOff" || shown.Message != `Back-off pulling image "nope:1"` {
		t.Errorf("the waiting node's row = %s/%s %q, want Running/ImagePullBackOff with the kubelet's message", shown.Phase, shown.Reason, shown.Message)
	}

	bound := seen.Add(timeout)
	st = Derive(&one, waiting, present("a"), rec)
	w = st.Watch(w, bound)
	st.TimeOutStarts(bound, timeout, w, nil) // the read at the bound failed: what was shown stands
	if n := st.Nodes[0]; n.Reason != fleetv1.NodeReasonNotStarted || n.Message != `its pod did not start within 5m0s: ImagePullBackOff: Back-off pulling image "nope:1"` {
		t.Errorf("the verdict = %s %q, want NotStarted with the refusal shown", n.Reason, n.Message)
	}

	started := []batchv1.Job{makeJob("a").Started(t1).Pods(1, 1, 0).Obj()}
	st = Derive(&one, started, present("a"), rec)
	if n := st.Nodes[0]; n.Reason != "" || n.Message != "" {
		t.Errorf("a started node shows %s %q, want nothing", n.Reason, n.Message)
	}
	if next, _ := Record(rec, st, nil, nil); next.Nodes.Get("a").Reason != "" {
		t.Errorf("a started node's record keeps %q", next.Nodes.Get("a").Reason)
	}
}
