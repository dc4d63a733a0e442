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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// StartWatch is what the hub saw of a run's starts in one member, by the
// hub's own clock, never the member's: the start bound
// (spec.nodeStartTimeout) counts from when the hub first saw a node's Job
// and its pod, and a member's own slowness (its Job controller or
// scheduler working through a queue) is told from a refusal by whether the
// member makes progress at all. The hub keeps it in memory: after a hub
// restart, it starts again from what the hub sees then.
type StartWatch struct {
	// Job and Pod map each node whose pod has not started to when the hub
	// first saw its Job without a pod, and its pod.
	Job, Pod map[string]time.Time
	// Read maps each node whose pod has not started to when the hub last
	// read what keeps it from starting (Noted): its pod or, with none, its
	// Job's events. A node whose first pod shows up is read again.
	Read map[string]time.Time
	// Polls are when the pod reads of the last RefusalPoll were made, and
	// Listed when the Jobs without a pod were last read, in one list of
	// events: they bound the reads to come, whatever became of the nodes
	// read (most pods of a queue start soon after their read).
	Polls  []time.Time
	Listed time.Time
	// Progress is when the member last created or started a pod of the
	// run (or the hub began to watch it); Pods and Started are the most
	// nodes seen with a pod, and with a pod that started or finished: a
	// rise in either is progress.
	Progress      time.Time
	Pods, Started int
	// Groups maps each group with running nodes to when the hub first saw
	// a Job of it: spec.gates.progressDeadline counts from it.
	Groups map[int]time.Time
	// Finished maps each node whose Job finished and whose result is not
	// recorded yet to when the hub first saw it finished, and Offset to
	// how far that is from the Job's own completion time: spec.gates.soak
	// and nodeHealth count from it. Once recorded, the record's finish
	// time (written from it) stands.
	Finished map[string]time.Time
	Offset   map[string]time.Duration
}

// waitingForStart tells whether n's Job runs and its pod has not started.
func waitingForStart(n NodeState) bool {
	return n.Phase == NodeRunning && n.Job != "" && !n.Started
}

// Watch returns w with what s shows at now: the first sight of each
// waiting node's Job and pod, and the member's progress. It is pure; w is
// not changed.
func (s State) Watch(w StartWatch, now time.Time) StartWatch {
	next := StartWatch{Job: map[string]time.Time{}, Pod: map[string]time.Time{}, Read: map[string]time.Time{}, Progress: w.Progress, Pods: w.Pods, Started: w.Started,
		Groups: map[int]time.Time{}, Finished: map[string]time.Time{}, Offset: map[string]time.Duration{},
		Polls: w.recentPolls(now), Listed: w.Listed}
	pods, started := 0, 0
	for _, n := range s.Nodes {
		// A group runs while a node of it has a Job whose result is not
		// recorded yet: running, or finished and awaiting its record or
		// its health verdict.
		if n.Job != "" && (n.Phase == NodeRunning || !s.Recorded.Nodes.Get(n.Node).final()) {
			if _, ok := next.Groups[n.Group]; !ok {
				next.Groups[n.Group] = firstSeenAt(w.Groups, n.Group, now)
			}
		}
		if n.Job != "" && n.CompletionTime != nil && !s.Recorded.Nodes.Get(n.Node).final() {
			at := firstSeen(w.Finished, n.Node, now)
			next.Finished[n.Node] = at
			if off, ok := w.Offset[n.Node]; ok {
				next.Offset[n.Node] = off
			} else {
				next.Offset[n.Node] = at.Sub(n.CompletionTime.Time)
			}
		}
		switch {
		case waitingForStart(n):
			next.Job[n.Node] = firstSeen(w.Job, n.Node, now)
			_, hadPod := w.Pod[n.Node]
			if n.Pods > 0 {
				next.Pod[n.Node] = firstSeen(w.Pod, n.Node, now)
				pods++
			}
			if at, ok := w.Read[n.Node]; ok && hadPod == (n.Pods > 0) {
				next.Read[n.Node] = at
			}
		case n.Phase == NodeRunning && n.Job != "", n.Phase == NodeSucceeded, n.Phase == NodeFailed && !failedByHub(n.Reason) && n.Reason != fleetv1.NodeReasonJobDeleted:
			pods, started = pods+1, started+1
		}
	}
	if next.Progress.IsZero() || pods > w.Pods || started > w.Started {
		next.Progress = now
	}
	next.Pods, next.Started = max(w.Pods, pods), max(w.Started, started)
	return next
}

func firstSeen(seen map[string]time.Time, node string, now time.Time) time.Time {
	return firstSeenAt(seen, node, now)
}

func firstSeenAt[K comparable](seen map[K]time.Time, key K, now time.Time) time.Time {
	if t, ok := seen[key]; ok {
		return t
	}
	return now
}

// OnHubClock has s time by the hub's clock what w saw: its running groups
// start when the hub first saw a Job of them, and its finished Jobs end
// when the hub first saw them finished. Member timestamps are used only
// as differences, which no clock skew changes.
func (s *State) OnHubClock(w StartWatch) {
	s.GroupsSeen = w.Groups
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Job == "" || n.CompletionTime == nil {
			continue
		}
		// Only what differs is edited: a final result derives with the
		// record's finish time already (withRecord), so a reconcile edits
		// the nodes that finished since the record was written, not every
		// node that ever finished.
		if at, ok := w.Finished[n.Node]; ok {
			if !n.CompletionTime.Time.Equal(at) {
				s.edit(i).CompletionTime = &metav1.Time{Time: at}
			}
		} else if r := s.Recorded.Nodes.Get(n.Node); r.final() && r.Finish != 0 && !n.CompletionTime.Time.Equal(time.Unix(r.Finish, 0)) {
			s.edit(i).CompletionTime = unixTime(r.Finish)
		}
	}
}

// HubTime is t, a member timestamp of node's Job or node, by the hub's
// clock as w measured it for that node's Job; t unchanged when w has
// none.
func (w StartWatch) HubTime(node string, t time.Time) time.Time {
	if off, ok := w.Offset[node]; ok && !t.IsZero() {
		return t.Add(off)
	}
	return t
}

// Waiting tells whether some node's pod has not started.
func (w StartWatch) Waiting() bool { return len(w.Job) > 0 }

// Needed tells whether w still has something to time: a node waiting for
// its pod, a group running, or a Job's end not recorded yet.
func (w StartWatch) Needed() bool { return w.Waiting() || len(w.Groups) > 0 || len(w.Finished) > 0 }

// stalled tells whether the member made no progress for timeout.
func (w StartWatch) stalled(now time.Time, timeout time.Duration) bool {
	return !now.Before(w.Progress.Add(timeout))
}

// TimeOutStarts fails the running nodes whose pod has not started within
// timeout of when the hub first saw it, or, with no pod, its Job, and
// returns the Jobs of every node failed so that still exist, to be deleted
// (again, until they are gone), and how many it failed now: a pod that
// cannot run must not hold its group, nor run later. refusals are what
// reads (ReadRefusals) found now, by node: each read node's row shows its
// member's reason while it waits (RefusedBy), and loses it once a read
// finds nothing. A node fails for what happened to it: at once when its
// member's reason is one no wait cures (a container configuration error,
// an invalid image name); at the bound when a reason is known (its pod
// refused by the scheduler or its image, no pod for the Job controller's
// FailedCreate), with it; or, with none known, no pod at all or a pod
// that never starts while the member makes no progress for timeout
// either. A member working through a queue (pods created or started late,
// but created and started) fails no node. w is Watch's for this state.
//
// A hub verdict the Job's state gave with no time of its own (its node
// deleted) is timed now, when the hub saw it, so that the record keeps when
// and the deletion of its Job is bounded from then. It is pure.
func (s *State) TimeOutStarts(now time.Time, timeout time.Duration, w StartWatch, refusals map[string]Refusal) (jobs []string, failed int) {
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Phase == NodeFailed && n.Job != "" && failedByHub(n.Reason) {
			if n.CompletionTime == nil {
				s.edit(i).CompletionTime = &metav1.Time{Time: now}
			}
			jobs = append(jobs, n.Job) // failed before; its Job is not gone yet
			continue
		}
		if !waitingForStart(*n) {
			continue
		}
		if _, read := refusals[n.Node]; read {
			n = s.edit(i)
			showRefusal(n, refusals)
		}
		reason, msg := startVerdict(*n, now, timeout, w)
		if reason == "" {
			continue
		}
		n = s.edit(i)
		s.Groups[n.Group].Running--
		s.Groups[n.Group].Failed++
		n.Phase, n.CompletionTime = NodeFailed, &metav1.Time{Time: now}
		n.Reason, n.Message = reason, msg
		jobs = append(jobs, n.Job)
		failed++
	}
	return jobs, failed
}

// Stalled counts the nodes waiting for their pod that TimeOutStarts fails
// now for the member's lack of progress rather than a reason of their own:
// when some do, the member makes no progress at all, and the hub fails it
// as a member too, or each later group would wait as long again.
func (s State) Stalled(now time.Time, timeout time.Duration, w StartWatch, refusals map[string]Refusal) int {
	stalled := 0
	for _, n := range s.Nodes {
		if !waitingForStart(n) {
			continue
		}
		showRefusal(&n, refusals)
		if n.Reason != "" {
			continue
		}
		if reason, _ := startVerdict(n, now, timeout, w); reason != "" {
			stalled++
		}
	}
	return stalled
}

// startVerdict is why a node waiting for its pod fails now, "" when it
// does not. Its Reason and Message are its member's refusal, when one is
// known.
func startVerdict(n NodeState, now time.Time, timeout time.Duration, w StartWatch) (reason, msg string) {
	r := Refusal{Reason: n.Reason, Message: n.Message}
	if final := r.verdict(); final != "" {
		return final, r.Message
	}
	seen, ok := w.seen(n)
	if !ok || now.Before(seen.Add(timeout)) {
		return "", ""
	}
	switch {
	case n.Pods == 0 && r.Reason != "":
		return fleetv1.NodeReasonPodCreateFailed, fmt.Sprintf("no pod within %s: %s", timeout, r)
	case n.Pods == 0 && w.stalled(now, timeout):
		return fleetv1.NodeReasonPodCreateFailed, fmt.Sprintf("no pod within %s, and the member created no pod of the run meanwhile (a quota, an admission policy? see the Job's events)", timeout)
	case n.Pods == 0:
		return "", ""
	case r.Reason != "":
		return fleetv1.NodeReasonNotStarted, fmt.Sprintf("its pod did not start within %s: %s", timeout, r)
	case w.stalled(now, timeout):
		return fleetv1.NodeReasonNotStarted, fmt.Sprintf("its pod did not start within %s, and the member started no pod of the run meanwhile (see the pod's events)", timeout)
	}
	return "", ""
}

// StartDeadline is the earliest time a waiting node's start may time out,
// as TimeOutStarts decides it, or what keeps it from starting is to be
// read again (RefusalReads); false when no node waits for its pod.
func (s State) StartDeadline(now time.Time, timeout time.Duration, w StartWatch) (time.Time, bool) {
	var first time.Time
	due := func(t time.Time) {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	stall := w.Progress.Add(timeout)
	for _, n := range s.Nodes {
		if !waitingForStart(n) {
			continue
		}
		seen, ok := w.seen(n)
		if !ok {
			continue
		}
		due(later(seen.Add(timeout), stall))
		if own := seen.Add(timeout); now.Before(own) {
			due(own)
		}
		due(later(w.nextRead(n, timeout), now.Add(refusalRetry)))
	}
	return first, !first.IsZero()
}
