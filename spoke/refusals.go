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
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// RefusalDelay is how long after the hub first saw a node's pod (or, with
// none, its Job) it first reads what keeps it from starting. A pod that
// starts as it should (a few seconds; longer for a large image, which
// waits as ContainerCreating, not refused) is done before; a refused one
// shows its member's reason in its row within seconds rather than at
// nodeStartTimeout, and one no wait cures fails then. Half the start bound
// when that is shorter, so that the reason shows before the verdict.
const RefusalDelay = 10 * time.Second

// RefusalPoll is how often a node still waiting for its pod is read
// again: a pod's state changes with no Job event (an image pulled at last,
// a node freed for the scheduler). Each read is one GET; at most
// MaxRefusalReads reads start in any RefusalPoll per run and member,
// besides the read each node gets at its bound, so that a member working
// through a queue of a thousand pods costs the hub a read a second and a
// half, not a read per waiting node per reconcile. It adds at most 30 s to
// the bound of a pod refused only after its bound.
const RefusalPoll = 30 * time.Second

// MaxRefusalReads bounds the reads for refusals per reconcile, as
// MaxExitReads does for exit codes, and the reads before the bound per
// RefusalPoll.
const MaxRefusalReads = 20

// refusalRetry is how soon a read that was due but left out (more were due
// than one reconcile reads) is tried again.
const refusalRetry = 5 * time.Second

// reasonFailedCreate is the reason of the Job controller's event on a Job
// whose pod it may not create (a quota, Pod Security admission).
const reasonFailedCreate = "FailedCreate"

// Refusal is what a member says keeps a node's pod from starting.
type Refusal struct {
	// Reason is the member's own word: a container's waiting reason
	// (ErrImagePull, ImagePullBackOff, InvalidImageName,
	// CreateContainerConfigError, ...), Unschedulable (the scheduler's),
	// or FailedCreate (the Job controller's event: no pod at all).
	Reason string
	// Message is the kubelet's, the scheduler's or the Job controller's.
	Message string
}

// String is the refusal for a person: "ImagePullBackOff: Back-off ...".
func (r Refusal) String() string {
	if r.Message == "" {
		return r.Reason
	}
	return r.Reason + ": " + r.Message
}

// verdict is the node reason of a refusal no wait cures, "" for one that
// may heal (an image a registry serves later, a node the scheduler frees,
// a quota freed): a container configuration the kubelet refuses, or an
// image name that is no reference, wait for a person, and the node fails
// at once rather than hold its group for nodeStartTimeout.
func (r Refusal) verdict() string {
	switch r.Reason {
	case "CreateContainerConfigError":
		return fleetv1.NodeReasonContainerConfigError
	case "InvalidImageName":
		return fleetv1.NodeReasonInvalidImage
	}
	return ""
}

// sameKind tells whether r says what reason says already: the kubelet
// alternates ErrImagePull and ImagePullBackOff as it retries.
func (r Refusal) sameKind(reason string) bool {
	return r.Reason == reason || imagePull[r.Reason] && imagePull[reason]
}

var imagePull = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true}

// refusingWaits are the reasons a container waits that tell its pod is
// refused, not slow: its image, or what it needs to be created.
var refusingWaits = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"CreateContainerConfigError": true, "CreateContainerError": true,
}

// showRefusal sets on waiting node n what a read found keeps its pod from
// starting, or clears it when the read found nothing (any more); a node
// not read keeps what it shows. One of the same kind as the one shown
// keeps the one shown: the kubelet's and the scheduler's messages change
// as they retry, and each change would be one more write of the record.
func showRefusal(n *NodeState, refusals map[string]Refusal) {
	r, read := refusals[n.Node]
	switch {
	case !read:
	case r.Reason == "":
		n.Reason, n.Message = "", ""
	case !r.sameKind(n.Reason):
		n.Reason, n.Message = r.Reason, r.Message
	}
}

// RefusedBy is the first node, in plan order, whose pod waits with its
// member's reason, and how many do. Only groups with nodes running are
// looked at: a waiting node is running.
func (s State) RefusedBy() (first NodeState, refused int) {
	for n := range s.NodesWhere(func(g GroupState) bool { return g.Running > 0 }) {
		if n.Reason != "" && waitingForStart(*n) {
			if refused == 0 {
				first = *n
			}
			refused++
		}
	}
	return first, refused
}

// seen is when the hub first saw n's pod or, with none, its Job.
func (w StartWatch) seen(n NodeState) (time.Time, bool) {
	if n.Pods > 0 {
		t, ok := w.Pod[n.Node]
		return t, ok
	}
	t, ok := w.Job[n.Node]
	return t, ok
}

// nextRead is when waiting node n is due a read: RefusalDelay (at most
// half the bound) after it was first seen, then every RefusalPoll, and at
// its bound, where its verdict needs a read of now.
func (w StartWatch) nextRead(n NodeState, timeout time.Duration) time.Time {
	seen, _ := w.seen(n)
	last, read := w.Read[n.Node]
	bound := seen.Add(timeout)
	switch {
	case !read:
		return seen.Add(firstRead(timeout))
	case last.Before(bound):
		return earlier(last.Add(RefusalPoll), bound)
	}
	return last.Add(RefusalPoll)
}

// firstRead is how long after the hub first saw a node's pod, or its Job,
// it first reads what refuses it: RefusalDelay, or half the start bound
// when that is shorter.
func firstRead(timeout time.Duration) time.Duration { return min(RefusalDelay, timeout/2) }

// Noted is w with nodes read at now.
func (w StartWatch) Noted(reads []RefusalRead, now time.Time) StartWatch {
	w.Read = maps.Clone(w.Read)
	if w.Read == nil {
		w.Read = map[string]time.Time{}
	}
	w.Polls = slices.Clip(w.Polls)
	for _, r := range reads {
		w.Read[r.Node] = now
		if r.Pod {
			w.Polls = append(w.Polls, now)
		} else {
			w.Listed = now
		}
	}
	return w
}

// recentPolls are the pod reads of w made within RefusalPoll before now.
func (w StartWatch) recentPolls(now time.Time) []time.Time {
	return slices.DeleteFunc(slices.Clone(w.Polls), func(at time.Time) bool { return !now.Before(at.Add(RefusalPoll)) })
}

// RefusalRead is one read of what keeps a node's pod from starting: its
// pod, or, while its Job has none, its Job's events.
type RefusalRead struct {
	// Node is the node; Job its Job's name.
	Node, Job string
	// Pod tells that the Job has a pod to read.
	Pod bool
}

// RefusalReads are the reads due now (nextRead). Pods are read one GET
// each, at most max: first those at their bound, whose verdict needs a
// read of now, then the others, those never read or read longest ago
// first, within what is left of max reads per RefusalPoll (counting every
// read made in it, of a pod that started since too). Jobs without a pod
// are read together, in one list of the work namespace's FailedCreate
// events, at most once per RefusalDelay but at a node's bound: when one is
// due, every one past RefusalDelay is read. A list scans every event of
// the namespace, and a queue of pods read one by one as the member works
// through it cost its API server hundreds of reads a run. Note the reads
// in the watch (Noted) once made. It is pure.
func (s State) RefusalReads(now time.Time, timeout time.Duration, w StartWatch, max int) []RefusalRead {
	var atBound, early, noPod []NodeState
	recent, jobDue := len(w.recentPolls(now)), false
	listing := !now.Before(w.Listed.Add(RefusalDelay))
	for _, n := range s.Nodes {
		seen, ok := w.seen(n)
		if !waitingForStart(n) || !ok || now.Before(seen.Add(firstRead(timeout))) {
			continue
		}
		due := !now.Before(w.nextRead(n, timeout))
		switch {
		case n.Pods == 0:
			noPod = append(noPod, n)
			jobDue = jobDue || due && (listing || !now.Before(seen.Add(timeout)))
		case !due:
		case !now.Before(seen.Add(timeout)):
			atBound = append(atBound, n)
		default:
			early = append(early, n)
		}
	}
	slices.SortStableFunc(early, func(a, b NodeState) int { return w.Read[a.Node].Compare(w.Read[b.Node]) })
	due := atBound[:min(len(atBound), max)]
	if room := min(max-len(due), max-recent); room > 0 {
		due = append(due, early[:min(len(early), room)]...)
	}
	var reads []RefusalRead
	for _, n := range due {
		reads = append(reads, RefusalRead{Node: n.Node, Job: n.Job, Pod: true})
	}
	if jobDue {
		for _, n := range noPod {
			reads = append(reads, RefusalRead{Node: n.Node, Job: n.Job})
		}
	}
	return reads
}

// ReadRefusals makes reads from live and returns, by node, what refuses
// each one's pod: the scheduler's message, why its containers cannot be
// created (an image that cannot be pulled, a configuration the kubelet
// refuses), or, for a Job without a pod, why the Job controller may not
// create it (its FailedCreate event: a quota, Pod Security admission). A
// node read that nothing refuses maps to the zero Refusal; one whose read
// failed is left out. A member that does not let the hub read events (a
// registration from before it was granted) tells no FailedCreate.
func (m Member) ReadRefusals(ctx context.Context, reads []RefusalRead) (map[string]Refusal, error) {
	out := map[string]Refusal{}
	var errs []error
	jobs := map[string]string{}
	for _, rd := range reads {
		if !rd.Pod {
			jobs[rd.Job] = rd.Node
			continue
		}
		r, err := m.readPodRefusal(ctx, rd.Node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[rd.Node] = r
	}
	if len(jobs) > 0 {
		created, err := m.readCreateRefusals(ctx, jobs)
		maps.Copy(out, created)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// readPodRefusal reads what refuses the pod of node.
func (m Member) readPodRefusal(ctx context.Context, node string) (Refusal, error) {
	var pods corev1.PodList
	sel := runSelector(m.Run)
	sel[fleetv1.NodeLabel] = naming.LabelValue(node)
	if err := m.Live.List(ctx, &pods, client.InNamespace(m.Run.Namespace), sel); err != nil {
		return Refusal{}, fmt.Errorf("reading the pod of node %s: %w", node, err)
	}
	pod, ok := NewestPod(pods.Items, node)
	if !ok {
		return Refusal{}, nil
	}
	return refusalOf(&pod), nil
}

// readCreateRefusals reads, into out by node, the Job controller's newest
// FailedCreate event on each of jobs (Job name to node): only there does a
// member say why a Job has no pod. One list of the work namespace's
// FailedCreate events on Jobs (the one Job's, when one waits), however many
// Jobs wait: the API server filters events by field, not by index, so a
// list per Job would cost as much each.
func (m Member) readCreateRefusals(ctx context.Context, jobs map[string]string) (map[string]Refusal, error) {
	set := fields.Set{"involvedObject.kind": "Job", "reason": reasonFailedCreate}
	if len(jobs) == 1 {
		for job := range jobs {
			set["involvedObject.name"] = job
		}
	}
	events, err := listEvents(ctx, m.Live, m.Run.Namespace, fields.SelectorFromSet(set))
	switch {
	case apierrors.IsForbidden(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the FailedCreate events of the Jobs in namespace %s: %w", m.Run.Namespace, err)
	}
	newest := map[string]corev1.Event{}
	for _, ev := range events {
		job := ev.InvolvedObject.Name
		if prev, ok := newest[job]; jobs[job] != "" && (!ok || eventTime(ev).After(eventTime(prev))) {
			newest[job] = ev
		}
	}
	out := make(map[string]Refusal, len(jobs))
	for job, node := range jobs {
		out[node] = Refusal{}
		if ev, ok := newest[job]; ok {
			out[node] = Refusal{Reason: reasonFailedCreate, Message: ev.Message}
		}
	}
	return out, nil
}

// maxCreateEvents bounds the events readCreateRefusals lists. The Job
// controller counts a repeated refusal in one event per Job, so it is as
// many refused Jobs in the namespace, this run's and others'; past it, the
// Jobs not listed show no reason until they reach their bound.
const maxCreateEvents = 2000

// listEvents lists the events of namespace that sel selects, a page at a
// time, at most maxCreateEvents.
func listEvents(ctx context.Context, r client.Reader, namespace string, sel fields.Selector) ([]corev1.Event, error) {
	var out []corev1.Event
	opts := []client.ListOption{client.InNamespace(namespace), client.MatchingFieldsSelector{Selector: sel}, client.Limit(nodePageSize)}
	for len(out) < maxCreateEvents {
		var page corev1.EventList
		if err := r.List(ctx, &page, opts...); err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if page.Continue == "" {
			break
		}
		opts = []client.ListOption{client.InNamespace(namespace), client.MatchingFieldsSelector{Selector: sel}, client.Limit(nodePageSize), client.Continue(page.Continue)}
	}
	return out, nil
}

// eventTime is when ev last happened.
func eventTime(ev corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// refusalOf is what refuses pod, the zero Refusal when nothing does (yet).
func refusalOf(pod *corev1.Pod) Refusal {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return Refusal{Reason: corev1.PodReasonUnschedulable, Message: c.Message}
		}
	}
	for _, cs := range append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && refusingWaits[w.Reason] {
			return Refusal{Reason: w.Reason, Message: w.Message}
		}
	}
	return Refusal{}
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
