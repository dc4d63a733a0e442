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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func TestTimeOutStarts(t *testing.T) {
	const timeout = 5 * time.Minute
	now := t0.Time
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	// Jobs a day old by the member's clock: a member clock behind the hub
	// must not fail them (the hub's own sight is what counts).
	old := metav1.NewTime(now.Add(-24 * time.Hour))
	noPod := func(node string) batchv1.Job { return makeJob(node).Created(old).Obj() }
	pending := func(node string) batchv1.Job { return makeJob(node).Created(old).Pods(1, 0, 0).Obj() }
	running := func(node string) batchv1.Job { return makeJob(node).Created(old).Started(t0).Pods(1, 1, 0).Obj() }
	three := allOf("a", "b", "c")
	testCases := map[string]struct {
		jobs       []batchv1.Job
		rec        Results
		watch      StartWatch
		refusals   map[string]Refusal // what reads found now
		wantJobs   []string
		wantFailed int
		wantNodes  map[string]string // node: phase/reason
		wantMsg    string            // of node a
		wantNext   time.Time
	}{
		"Jobs the hub just saw, old by the member's clock: nothing fails; read for a refusal a delay later": {
			jobs:      []batchv1.Job{noPod("a"), pending("b")},
			wantNodes: map[string]string{"a": "Running/", "b": "Running/", "c": "Pending/"},
			wantNext:  now.Add(RefusalDelay),
		},
		"no pod for the bound while the member created none: PodCreateFailed": {
			jobs:       []batchv1.Job{noPod("a"), running("b")},
			watch:      StartWatch{Job: map[string]time.Time{"a": ago(timeout)}, Progress: ago(timeout), Pods: 1, Started: 1},
			wantJobs:   []string{jobName("a")},
			wantFailed: 1,
			wantNodes:  map[string]string{"a": "Failed/PodCreateFailed", "b": "Running/", "c": "Pending/"},
			wantMsg:    "no pod within 5m0s, and the member created no pod of the run meanwhile (a quota, an admission policy? see the Job's events)",
		},
		"no pod for the bound, but the member's Job controller makes progress (a queue) and says nothing of it: it waits, read again in a poll": {
			jobs:      []batchv1.Job{noPod("a"), running("b")},
			watch:     StartWatch{Job: map[string]time.Time{"a": ago(timeout)}, Progress: ago(time.Minute), Pods: 1, Started: 1},
			refusals:  map[string]Refusal{"a": {}},
			wantNodes: map[string]string{"a": "Running/", "b": "Running/", "c": "Pending/"},
			wantNext:  now.Add(RefusalPoll),
		},
		"no pod for the bound, the Job controller's FailedCreate read: PodCreateFailed with its message, though the member progresses": {
			jobs:       []batchv1.Job{noPod("a"), running("b")},
			watch:      StartWatch{Job: map[string]time.Time{"a": ago(timeout)}, Progress: now, Pods: 1, Started: 1},
			refusals:   map[string]Refusal{"a": {Reason: "FailedCreate", Message: `pods "x" is forbidden: violates PodSecurity "restricted:latest"`}},
			wantJobs:   []string{jobName("a")},
			wantFailed: 1,
			wantNodes:  map[string]string{"a": "Failed/PodCreateFailed", "b": "Running/", "c": "Pending/"},
			wantMsg:    `no pod within 5m0s: FailedCreate: pods "x" is forbidden: violates PodSecurity "restricted:latest"`,
		},
		"no pod within the bound, FailedCreate read: shown while it waits for the bound": {
			jobs:      []batchv1.Job{noPod("a")},
			watch:     StartWatch{Job: map[string]time.Time{"a": ago(time.Minute)}, Progress: now},
			refusals:  map[string]Refusal{"a": {Reason: "FailedCreate", Message: "exceeded quota"}},
			wantNodes: map[string]string{"a": "Running/FailedCreate", "b": "Pending/", "c": "Pending/"},
			wantMsg:   "exceeded quota",
			wantNext:  now.Add(RefusalPoll),
		},
		"a pod past the bound, refused by the scheduler: NotStarted with its message, though the member progresses": {
			jobs:       []batchv1.Job{pending("a"), running("b")},
			watch:      StartWatch{Job: map[string]time.Time{"a": ago(time.Hour)}, Pod: map[string]time.Time{"a": ago(timeout)}, Progress: now, Pods: 2, Started: 1},
			refusals:   map[string]Refusal{"a": {Reason: "Unschedulable", Message: "0/3 nodes are available: 1 Insufficient memory."}},
			wantJobs:   []string{jobName("a")},
			wantFailed: 1,
			wantNodes:  map[string]string{"a": "Failed/NotStarted", "b": "Running/", "c": "Pending/"},
			wantMsg:    "its pod did not start within 5m0s: Unschedulable: 0/3 nodes are available: 1 Insufficient memory.",
		},
		"a refused pod within the bound of the hub first seeing it: it waits, showing the refusal, read again in a poll": {
			jobs:      []batchv1.Job{pending("a")},
			watch:     StartWatch{Job: map[string]time.Time{"a": ago(time.Hour)}, Pod: map[string]time.Time{"a": ago(time.Minute)}, Progress: now, Pods: 1},
			refusals:  map[string]Refusal{"a": {Reason: "Unschedulable", Message: "no"}},
			wantNodes: map[string]string{"a": "Running/Unschedulable", "b": "Pending/", "c": "Pending/"},
			wantMsg:   "no",
			wantNext:  now.Add(RefusalPoll),
		},
		"a container configuration the kubelet refuses: ContainerConfigError at once, with its message, long before the bound": {
			jobs:  []batchv1.Job{pending("a")},
			watch: StartWatch{Job: map[string]time.Time{"a": ago(time.Hour)}, Pod: map[string]time.Time{"a": ago(RefusalDelay)}, Progress: now, Pods: 1},
			refusals: map[string]Refusal{"a": {Reason: "CreateContainerConfigError",
				Message: "container has runAsNonRoot and image will run as root"}},
			wantJobs:   []string{jobName("a")},
			wantFailed: 1,
			wantNodes:  map[string]string{"a": "Failed/ContainerConfigError", "b": "Pending/", "c": "Pending/"},
			wantMsg:    "container has runAsNonRoot and image will run as root",
		},
		"an image name that is no reference: InvalidImage at once": {
			jobs:       []batchv1.Job{pending("a")},
			watch:      StartWatch{Job: map[string]time.Time{"a": ago(time.Hour)}, Pod: map[string]time.Time{"a": ago(RefusalDelay)}, Progress: now, Pods: 1},
			refusals:   map[string]Refusal{"a": {Reason: "InvalidImageName", Message: `couldn't parse image name "Busybox"`}},
			wantJobs:   []string{jobName("a")},
			wantFailed: 1,
			wantNodes:  map[string]string{"a": "Failed/InvalidImage", "b": "Pending/", "c": "Pending/"},
			wantMsg:    `couldn't parse image name "Busybox"`,
		},
		"an image pull refused before, not read now, at the bound: NotStarted with what was shown, though the member progresses": {
			jobs:       []batchv1.Job{pending("a")},
			rec:        ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Reason: "ErrImagePull", Message: "not found"}}),
			watch:      StartWatch{Job: map[string]time.Time{"a": ago(time.Hour)}, Pod: map[string]time.Time{"a": ago(timeout)}, Progress: now, Pods: 1},
			wantJobs:   []string{jobName("a")},
			wantFailed: 1,
			wantNodes:  map[string]string{"a": "Failed/NotStarted", "b": "Pending/", "c": "Pending/"},
			wantMsg:    "its pod did not start within 5m0s: ErrImagePull: not found",
		},
		"an image pull refused before, read now as the kubelet's back-off: the reason shown stays": {
			jobs:      []batchv1.Job{pending("a")},
			rec:       ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Reason: "ErrImagePull", Message: "not found"}}),
			watch:     StartWatch{Job: map[string]time.Time{"a": ago(time.Hour)}, Pod: map[string]time.Time{"a": ago(time.Minute)}, Progress: now, Pods: 1},
			refusals:  map[string]Refusal{"a": {Reason: "ImagePullBackOff", Message: "Back-off pulling image"}},
			wantNodes: map[string]string{"a": "Running/ErrImagePull", "b": "Pending/", "c": "Pending/"},
			wantMsg:   "not found",
			wantNext:  now.Add(RefusalPoll),
		},
		"a refusal shown before that a read finds gone: no longer shown": {
			jobs:      []batchv1.Job{pending("a")},
			rec:       ResultsOf(map[string]NodeResult{"a": {Phase: NodeRunning, Reason: "Unschedulable", Message: "no"}}),
			watch:     StartWatch{Job: map[string]time.Time{"a": ago(time.Hour)}, Pod: map[string]time.Time{"a": ago(time.Minute)}, Progress: now, Pods: 1},
			refusals:  map[string]Refusal{"a": {}},
			wantNodes: map[string]string{"a": "Running/", "b": "Pending/", "c": "Pending/"},
			wantNext:  now.Add(RefusalPoll),
		},
		"a pod past the bound, nothing refuses it, the member progresses: it waits, its pod read again in a poll": {
			jobs:      []batchv1.Job{pending("a")},
			watch:     StartWatch{Job: map[string]time.Time{"a": ago(time.Hour)}, Pod: map[string]time.Time{"a": ago(timeout)}, Progress: ago(time.Minute), Pods: 1},
			refusals:  map[string]Refusal{"a": {}},
			wantNodes: map[string]string{"a": "Running/", "b": "Pending/", "c": "Pending/"},
			wantNext:  now.Add(RefusalPoll),
		},
		"a pod past the bound in a member that started no pod meanwhile: NotStarted": {
			jobs:       []batchv1.Job{pending("a")},
			watch:      StartWatch{Job: map[string]time.Time{"a": ago(time.Hour)}, Pod: map[string]time.Time{"a": ago(timeout)}, Progress: ago(timeout), Pods: 1},
			refusals:   map[string]Refusal{"a": {}},
			wantJobs:   []string{jobName("a")},
			wantFailed: 1,
			wantNodes:  map[string]string{"a": "Failed/NotStarted", "b": "Pending/", "c": "Pending/"},
			wantMsg:    "its pod did not start within 5m0s, and the member started no pod of the run meanwhile (see the pod's events)",
		},
		"a pod that started is never timed out, even once not Ready": {
			jobs:      []batchv1.Job{running("a"), pending("b")},
			rec:       ResultsOf(map[string]NodeResult{"b": {Phase: NodeRunning, Started: true}}),
			watch:     StartWatch{Progress: ago(time.Hour)},
			wantNodes: map[string]string{"a": "Running/", "b": "Running/", "c": "Pending/"},
		},
		"a node failed before whose Job still exists: its Job is deleted again, not counted again": {
			jobs:      []batchv1.Job{pending("a")},
			rec:       ResultsOf(map[string]NodeResult{"a": {Phase: NodeFailed, Reason: fleetv1.NodeReasonNotStarted}}),
			wantJobs:  []string{jobName("a")},
			wantNodes: map[string]string{"a": "Failed/NotStarted", "b": "Pending/", "c": "Pending/"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			st := Derive(&three, tc.jobs, present("a", "b", "c"), tc.rec)
			w := st.Watch(tc.watch, now).Noted(readsOf(tc.refusals), now) // as the hub notes what it read
			jobs, failed := st.TimeOutStarts(now, timeout, w, tc.refusals)
			if diff := cmp.Diff(tc.wantJobs, jobs); diff != "" {
				t.Errorf("TimeOutStarts() jobs mismatch (-want +got):\n%s", diff)
			}
			if failed != tc.wantFailed {
				t.Errorf("TimeOutStarts() failed = %d, want %d", failed, tc.wantFailed)
			}
			got := map[string]string{}
			for _, n := range st.Nodes {
				got[n.Node] = string(n.Phase) + "/" + n.Reason
			}
			if diff := cmp.Diff(tc.wantNodes, got); diff != "" {
				t.Errorf("nodes mismatch (-want +got):\n%s", diff)
			}
			if st.Nodes[0].Message != tc.wantMsg {
				t.Errorf("message = %q, want %q", st.Nodes[0].Message, tc.wantMsg)
			}
			if next, _ := st.StartDeadline(now, timeout, w); !next.Equal(tc.wantNext) {
				t.Errorf("StartDeadline() = %v, want %v", next, tc.wantNext)
			}
			if g := st.Groups[0]; g.Pending+g.Running+g.Succeeded+g.Failed+g.Skipped != g.Nodes {
				t.Errorf("group counts %+v do not add up", g)
			}
		})
	}
}

// TestStartBacklog is the busy member of issue 17: 1,000 Jobs created at
// once with a start bound (30 s) shorter than the member needs to give
// them all a pod and start them (about 55 s: its Job controller creates
// about 18 pods a second, each starts a few seconds after). The hub looks
// every second, as Job events would make it. No node fails: the member
// makes progress all along.
func TestStartBacklog(t *testing.T) {
	const (
		nodes     = 1000
		timeout   = 30 * time.Second
		perSecond = 18              // pods the member's Job controller creates per second
		startLag  = 5 * time.Second // from a pod to its start
	)
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i)
	}
	p := allOf(names...)
	built := make([]batchv1.Job, nodes)
	for i, n := range names {
		built[i] = makeJob(n).Created(t0).Obj()
	}
	var w StartWatch
	for sec := 0; sec <= 120; sec++ {
		now := t0.Add(time.Duration(sec) * time.Second)
		jobs := make([]batchv1.Job, nodes)
		for i := range names {
			podAt := time.Duration(i/perSecond) * time.Second
			j := &jobWrapper{built[i]}
			switch at := time.Duration(sec) * time.Second; {
			case at >= podAt+startLag+10*time.Second:
				j = j.Complete(metav1.NewTime(now))
			case at >= podAt+startLag:
				j = j.Started(t0).Pods(1, 1, 0)
			case at >= podAt:
				j = j.Pods(1, 0, 0)
			}
			jobs[i] = j.Obj()
		}
		st := Derive(&p, jobs, present(names...), Results{})
		w = st.Watch(w, now)
		if _, failed := st.TimeOutStarts(now, timeout, w, nil); failed > 0 {
			t.Fatalf("at %ds, %d nodes failed; want none: the member is slow, not refusing", sec, failed)
		}
	}
	if w.Waiting() {
		t.Errorf("nodes still wait after 120 s: %d", len(w.Job))
	}
}

func TestRefusalOf(t *testing.T) {
	waiting := func(reason, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "work", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	}
	testCases := map[string]struct {
		pod  corev1.Pod
		want Refusal
	}{
		"unschedulable: the scheduler's message": {
			pod: corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 node(s) had untolerated taint."}}}},
			want: Refusal{Reason: "Unschedulable", Message: "0/1 nodes are available: 1 node(s) had untolerated taint."},
		},
		"an image that cannot be pulled": {
			pod:  corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("ImagePullBackOff", `Back-off pulling image "nope:1"`)}}},
			want: Refusal{Reason: "ImagePullBackOff", Message: `Back-off pulling image "nope:1"`},
		},
		"a configuration the kubelet refuses, in an init container": {
			pod: corev1.Pod{Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{
				waiting("CreateContainerConfigError", "container has runAsNonRoot and image will run as root")}}},
			want: Refusal{Reason: "CreateContainerConfigError", Message: "container has runAsNonRoot and image will run as root"},
		},
		"an image name that is no reference": {
			pod:  corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("InvalidImageName", `couldn't parse image name "B"`)}}},
			want: Refusal{Reason: "InvalidImageName", Message: `couldn't parse image name "B"`},
		},
		"a container still being created: nothing refuses it": {
			pod: corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("ContainerCreating", "")}}},
		},
		"not tried by the scheduler yet: nothing refuses it": {},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, refusalOf(&tc.pod)); diff != "" {
				t.Errorf("refusalOf() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// readsOf are the reads that found refusals.
func readsOf(refusals map[string]Refusal) []RefusalRead {
	var reads []RefusalRead
	for node := range refusals {
		reads = append(reads, RefusalRead{Node: node})
	}
	return reads
}

// The progress deadline counts from when the hub first saw the group's
// Jobs, by its clock: a member clock a day behind fails nothing.
func TestGroupDeadlineByHubClock(t *testing.T) {
	const deadline = 5 * time.Minute
	now := t0.Time
	old := metav1.NewTime(now.Add(-24 * time.Hour))
	two := allOf("a", "b")
	jobs := []batchv1.Job{makeJob("a").Created(old).Started(old).Pods(1, 1, 0).Obj(), makeJob("b").Created(old).Started(old).Pods(1, 1, 0).Obj()}
	st := Derive(&two, jobs, present("a", "b"), Results{})
	st.GroupsSeen = st.Watch(StartWatch{Groups: map[int]time.Time{0: now.Add(-time.Minute)}}, now).Groups
	if at, ok := st.GroupDeadline(deadline); !ok || !at.Equal(now.Add(4*time.Minute)) {
		t.Errorf("GroupDeadline() = %v, %v; want %v", at, ok, now.Add(4*time.Minute))
	}
	if _, failed := st.TimeOutGroup(now, deadline); failed != 0 {
		t.Errorf("TimeOutGroup() failed %d nodes; want none", failed)
	}
}

// A Job's end counts from when the hub first saw it, for the soak and the
// health gate, and a node's Ready time moves with it: a member clock a day
// behind shortens neither.
func TestOnHubClock(t *testing.T) {
	now := t0.Time
	memberEnd := metav1.NewTime(now.Add(-24 * time.Hour))
	one := allOf("a")
	st := Derive(&one, []batchv1.Job{makeJob("a").Created(memberEnd).Complete(memberEnd).Obj()}, present("a"), Results{})
	w := st.Watch(StartWatch{}, now.Add(-30*time.Second))
	w = st.Watch(w, now) // seen again: the first sight stands
	st.OnHubClock(w)
	if got := st.Nodes[0].CompletionTime.Time; !got.Equal(now.Add(-30 * time.Second)) {
		t.Errorf("CompletionTime = %v, want when the hub first saw it, %v", got, now.Add(-30*time.Second))
	}
	// The node turned Ready 10 s after its Job ended, by the member's clock.
	if got := w.HubTime("a", memberEnd.Add(10*time.Second)); !got.Equal(now.Add(-20 * time.Second)) {
		t.Errorf("HubTime() = %v, want %v", got, now.Add(-20*time.Second))
	}
}
