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
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// podOf is node's pod of run, created at created, with the container
// statuses given.
func podOf(run Run, node, name string, created time.Time, statuses ...corev1.ContainerStatus) *corev1.Pod {
	labels := runSelector(run)
	labels[fleetv1.NodeLabel] = naming.LabelValue(node)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace, Labels: labels, CreationTimestamp: metav1.NewTime(created)},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: statuses},
	}
}

func terminated(name string, code int32, msg string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: msg, Reason: "Error"}}}
}

func TestReadExitCodes(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	three := allOf("a", "b", "c")
	jobs := []batchv1.Job{
		makeJob("a").Started(t0).Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit", t1).Obj(),
		makeJob("b").Started(t0).Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit", t1).Obj(),
		makeJob("c").Started(t0).Complete(t1).Obj(),
	}
	objs := []client.Object{
		podOf(run, "a", "a-old", t0.Time, terminated("main", 1, "first try")),
		podOf(run, "a", "a-new", t1.Time, terminated("side", 0, ""), terminated("main", 3, "disk /var is full")),
		podOf(run, "c", "c-1", t0.Time, terminated("main", 0, "")),
	}
	c := fake.NewClientBuilder().WithObjects(objs...).Build()
	st := Derive(&three, jobs, present("a", "b", "c"), Results{})
	if err := (Member{Live: c, Run: run}).ReadExitCodes(context.Background(), &st); err != nil {
		t.Fatalf("ReadExitCodes() error = %v", err)
	}
	type exit struct {
		Code   *int32
		Output string
	}
	got := map[string]exit{}
	for _, n := range st.Nodes {
		got[n.Node] = exit{n.ExitCode, n.Output}
	}
	want := map[string]exit{
		"a": {ptr.To[int32](3), "disk /var is full"}, // the newest pod's failed container
		"b": {},                                      // its pod is gone
		"c": {},                                      // succeeded: not read
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}

	// Recorded once, kept from the record while the Job exists, and
	// bounded.
	rec, _ := Record(Results{}, st, nil, nil)
	if r := rec.Nodes.Get("a"); r.ExitCode == nil || *r.ExitCode != 3 || r.Output != "disk /var is full" {
		t.Errorf("recorded %+v, want exit code 3 and the message", r)
	}
	again := Derive(&three, jobs, present("a", "b", "c"), rec)
	again.Recorded = rec // as Observe reads it
	if n := again.Nodes[0]; n.ExitCode == nil || *n.ExitCode != 3 || n.Output != "disk /var is full" {
		t.Errorf("derived from the record: %+v, want exit code 3 and the message", n)
	}
	reads := 0
	counting := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		reads++
		return c.List(ctx, list, opts...)
	}}).Build()
	if err := (Member{Live: counting, Run: run}).ReadExitCodes(context.Background(), &again); err != nil || reads != 0 {
		t.Errorf("ReadExitCodes() of recorded nodes listed %d times (error %v), want none", reads, err)
	}
}

func TestRecordBoundsOutputs(t *testing.T) {
	long := string(make([]byte, 2000))
	var nodes []string
	for i := range maxFullOutputs + 5 {
		nodes = append(nodes, naming.LabelValue(string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	p := allOf(nodes...)
	st := Derive(&p, nil, present(nodes...), Results{})
	for i := range st.Nodes {
		st.Nodes[i].Phase, st.Nodes[i].Job, st.Nodes[i].Output = NodeFailed, "job", long
		st.Groups[0].Pending, st.Groups[0].Failed = 0, len(nodes)
	}
	rec, _ := Record(Results{}, st, nil, nil)
	full, short := 0, 0
	for _, r := range rec.Nodes.All() {
		switch len(r.Output) {
		case maxOutput:
			full++
		case maxResultMessage:
			short++
		default:
			t.Errorf("an output of %d bytes recorded, want %d or %d", len(r.Output), maxOutput, maxResultMessage)
		}
	}
	if full != maxFullOutputs || short != 5 {
		t.Errorf("recorded %d full and %d short outputs, want %d and 5", full, short, maxFullOutputs)
	}
}

func TestExitOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pod      corev1.Pod
		wantCode *int32
		wantMsg  string
	}{
		{name: "no container ended", pod: corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "main"}}}}},
		{name: "the failed one, not the first", pod: corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			terminated("side", 0, "ok"), terminated("main", 2, "boom")}}}, wantCode: ptr.To[int32](2), wantMsg: "boom"},
		{name: "a failed init container", pod: corev1.Pod{Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{terminated("init", 126, "")}}}, wantCode: ptr.To[int32](126), wantMsg: "Error"},
		{name: "a restarted container's last state", pod: corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}}},
			wantCode: ptr.To[int32](137), wantMsg: "OOMKilled"},
		// FallbackToLogsOnError fills the message with the last log lines:
		// the kill must not hide behind them as a bare 137.
		{name: "killed out of memory, its logs as the message", pod: corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", Message: "allocating 2Gi\n"}}}}}},
			wantCode: ptr.To[int32](137), wantMsg: "OOMKilled: allocating 2Gi\n"},
		{name: "a container that could not run", pod: corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError", Message: "exec: \"nope\": not found"}}}}}},
			wantCode: ptr.To[int32](128), wantMsg: `StartError: exec: "nope": not found`},
		{name: "a plain error keeps its message alone", pod: corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			terminated("main", 3, "disk full")}}}, wantCode: ptr.To[int32](3), wantMsg: "disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := exitOf(&tc.pod)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" || msg != tc.wantMsg {
				t.Errorf("exitOf() = %v, %q; want %v, %q", code, msg, tc.wantCode, tc.wantMsg)
			}
		})
	}
}

func TestNewestPod(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	at := func(name, node string, d time.Duration) corev1.Pod {
		p := podOf(run, "n1", name, t0.Add(d))
		p.Spec.NodeName = node
		return *p
	}
	old, recent, pending, elsewhere := at("old", "n1", 0), at("recent", "n1", time.Minute), at("pending", "", 2*time.Minute), at("elsewhere", "n1-same-hash", 3*time.Minute)
	for _, tc := range []struct {
		name   string
		pods   []corev1.Pod
		want   string
		wantOK bool
	}{
		{name: "the newest of the node's pods", pods: []corev1.Pod{recent, old}, want: "recent", wantOK: true},
		{name: "one not scheduled yet counts", pods: []corev1.Pod{old, pending}, want: "pending", wantOK: true},
		{name: "a pod on another node is not the node's", pods: []corev1.Pod{old, elsewhere}, want: "old", wantOK: true},
		{name: "none", pods: []corev1.Pod{elsewhere}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := NewestPod(tc.pods, "n1")
			if ok != tc.wantOK || got.Name != tc.want {
				t.Errorf("NewestPod() = %q, %v; want %q, %v", got.Name, ok, tc.want, tc.wantOK)
			}
		})
	}
}

// TestReadExitCodesEveryFailedNode: when more nodes fail at once than are
// read one by one, every one still gets its exit code before its result is
// recorded (a recorded result never changes), in a few lists.
func TestReadExitCodesEveryFailedNode(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	var nodes []string
	var jobs []batchv1.Job
	var objs []client.Object
	for i := range 3*MaxExitReads/2 + 1 {
		n := fmt.Sprintf("node-%02d", i)
		nodes = append(nodes, n)
		jobs = append(jobs, makeJob(n).Started(t0).Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit", t1).Obj())
		pod := podOf(run, n, n+"-pod", t0.Time, terminated("main", int32(i+1), "failed on "+n))
		pod.Labels[fleetv1.GroupIndexLabel] = "0"
		objs = append(objs, pod)
	}
	lists := 0
	c := fake.NewClientBuilder().WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		lists++
		return c.List(ctx, list, opts...)
	}}).Build()
	p := allOf(nodes...)
	st := Derive(&p, jobs, present(nodes...), Results{})
	if err := (Member{Live: c, Run: run}).ReadExitCodes(context.Background(), &st); err != nil {
		t.Fatalf("ReadExitCodes() error = %v", err)
	}
	rec, _ := Record(Results{}, st, nil, nil)
	for i, n := range nodes {
		if r := rec.Nodes.Get(n); r.ExitCode == nil || *r.ExitCode != int32(i+1) || r.Output != "failed on "+n {
			t.Errorf("node %s recorded %+v, want exit code %d and its message", n, r, i+1)
		}
	}
	if lists > MaxExitReads {
		t.Errorf("%d lists, want at most %d", lists, MaxExitReads)
	}
}
