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
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// DrainOwner is the CordonedByAnnotation value of the nodes run cordons:
// its hub and its ClusterJob's UID, so that only that run, from that hub,
// ever uncordons them.
func DrainOwner(run Run) string {
	return run.Hub + "/" + string(run.ClusterJob.UID)
}

// CordonedBy tells whether node carries owner's cordon mark.
func CordonedBy(annotations map[string]string, owner string) bool {
	return annotations[fleetv1.CordonedByAnnotation] == owner
}

// maxEvictionsPerStep bounds the evictions one drain step sends for one
// node: a node with hundreds of pods is drained over a few steps rather
// than in one burst past the start's deadline.
const maxEvictionsPerStep = 50

// DrainStep is where one node's drain stands after a step.
type DrainStep struct {
	// Drained tells that no pod the drain evicts is left on the node: its
	// Job may be created.
	Drained bool
	// Reason and Message, when Reason is set, fail the node: its drain
	// timed out (NodeReasonDrainTimeout) or cannot succeed
	// (NodeReasonDrainBlocked).
	Reason, Message string
	// Evicted counts the evictions the API server accepted in this step;
	// Left the pods still to go, Waiting what holds the first of them (a
	// PodDisruptionBudget, a pod terminating).
	Evicted, Left int
	Waiting       string
	// Started is when the drain began (the node's cordon); EvictedTotal
	// counts the evictions accepted since, this step's included.
	Started      time.Time
	EvictedTotal int32
}

// Result is what the drain came to by now, for the node's record.
func (s DrainStep) Result(now time.Time) noderesults.Drain {
	return noderesults.Drain{Start: s.Started.Unix(), Seconds: int64(max(0, now.Sub(s.Started)/time.Second)), Evicted: s.EvictedTotal}
}

// StepDrain moves node's drain for run one step on: it cordons the node,
// marking it with the run (DrainOwner) and the time, unless the run's mark
// is there already; fails it once the drain's timeout has passed since;
// and evicts the pods still to go, through the Eviction API, so that
// PodDisruptionBudgets are respected. The node must be the run's to drain:
// schedulable, or cordoned by the run. live must read from the API server.
func (m Member) StepDrain(ctx context.Context, node *corev1.Node, now time.Time) (DrainStep, error) {
	drain := m.Run.ClusterJob.Spec.NodePreparation.Drain
	owner := DrainOwner(m.Run)
	started, err := cordon(ctx, m.Client, node, owner, now)
	if err != nil {
		return DrainStep{}, err
	}
	var pods corev1.PodList
	if err := m.Live.List(ctx, &pods, client.MatchingFields{"spec.nodeName": node.Name}); err != nil {
		return DrainStep{}, fmt.Errorf("listing the pods of node %s to drain it: %w", node.Name, err)
	}
	evict, wait, blocked, err := drainTargets(pods.Items, drain)
	if err != nil {
		return DrainStep{}, err
	}
	evicted := evictedSoFar(node)
	if blocked != "" {
		return DrainStep{Reason: fleetv1.NodeReasonDrainBlocked, Message: blocked, Started: started, EvictedTotal: evicted}, nil
	}
	step := DrainStep{Left: len(evict) + len(wait), Drained: len(evict)+len(wait) == 0, Started: started, EvictedTotal: evicted}
	if step.Drained {
		return step, nil
	}
	if timeout := drain.TimeoutOrDefault(); !now.Before(started.Add(timeout)) {
		first := append(slices.Clone(evict), wait...)[0]
		return DrainStep{Reason: fleetv1.NodeReasonDrainTimeout, Started: started, EvictedTotal: evicted, Message: fmt.Sprintf(
			"%d pods were still on the node %s after its drain began (spec.nodePreparation.drain.timeout), pod %s/%s first", step.Left, timeout, first.Namespace, first.Name)}, nil
	}
	if len(wait) > 0 {
		step.Waiting = fmt.Sprintf("pod %s/%s is terminating", wait[0].Namespace, wait[0].Name)
	}
	var evictErr error
	for i := range evict[:min(len(evict), maxEvictionsPerStep)] {
		why, err := evictPod(ctx, m.Client, &evict[i])
		if err != nil {
			evictErr = err
			break
		}
		if why == "" {
			step.Evicted++
		} else if step.Waiting == "" {
			step.Waiting = why
		}
	}
	if step.Evicted > 0 {
		step.EvictedTotal += int32(step.Evicted)
		if err := countEvicted(ctx, m.Client, node, step.EvictedTotal); err != nil && evictErr == nil {
			evictErr = err
		}
	}
	return step, evictErr
}

// evictedSoFar is the node's count of pods its drain evicted.
func evictedSoFar(node *corev1.Node) int32 {
	n, err := strconv.ParseInt(node.Annotations[fleetv1.DrainEvictedAnnotation], 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

// countEvicted stores the drain's eviction count on the node, for its
// result; it survives a hub restart as the drain does.
func countEvicted(ctx context.Context, c client.Client, node *corev1.Node, total int32) error {
	patched := node.DeepCopy()
	patched.Annotations[fleetv1.DrainEvictedAnnotation] = strconv.Itoa(int(total))
	if err := c.Patch(ctx, patched, client.MergeFrom(node)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("counting the pods evicted from node %s: %w", node.Name, err)
	}
	*node = *patched
	return nil
}

// cordon marks node unschedulable with owner's mark and now, unless it
// carries owner's mark already, and returns when its drain started. The
// patch is conditional on the node as read (its resourceVersion): a node
// someone cordoned meanwhile is never marked as ours.
func cordon(ctx context.Context, c client.Client, node *corev1.Node, owner string, now time.Time) (time.Time, error) {
	started, err := time.Parse(time.RFC3339, node.Annotations[fleetv1.DrainStartedAnnotation])
	ours := CordonedBy(node.Annotations, owner)
	if ours && err == nil && node.Spec.Unschedulable {
		return started, nil
	}
	if !ours && node.Spec.Unschedulable {
		return time.Time{}, fmt.Errorf("node %s was cordoned by someone else: fleetjob drains only nodes it cordons", node.Name)
	}
	if !ours || err != nil {
		// A first cordon; or our start time was lost, and the drain
		// counts again from now, stored, so that its timeout still
		// bounds it.
		started = now
	}
	// Marked ours but uncordoned meanwhile: cordoned again, or the pods
	// evicted would be scheduled right back.
	patched := node.DeepCopy()
	patched.Spec.Unschedulable = true
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	if !ours {
		delete(patched.Annotations, fleetv1.DrainEvictedAnnotation) // another run's count
	}
	patched.Annotations[fleetv1.CordonedByAnnotation] = owner
	// To the nanosecond: a start rounded down to the second would end the
	// drain's timeout up to a second early.
	patched.Annotations[fleetv1.DrainStartedAnnotation] = started.UTC().Format(time.RFC3339Nano)
	if err := c.Patch(ctx, patched, client.MergeFromWithOptions(node, client.MergeFromWithOptimisticLock{})); err != nil {
		return time.Time{}, fmt.Errorf("cordoning node %s: %w", node.Name, err)
	}
	*node = *patched
	return started, nil
}

// drainTargets sorts a node's pods into those to evict and those to wait
// for (evicted or deleted already, still terminating), as kubectl drain
// does: finished pods, mirror pods, DaemonSet pods, fleetjob's own Job
// pods and pods drain's podSelector does not select stay. blocked names a
// pod the drain's options do not let it evict. It is pure.
func drainTargets(pods []corev1.Pod, drain *fleetv1.Drain) (evict, wait []corev1.Pod, blocked string, err error) {
	selector := labels.Everything()
	if drain.PodSelector != nil {
		if selector, err = metav1.LabelSelectorAsSelector(drain.PodSelector); err != nil {
			return nil, nil, "", fmt.Errorf("spec.nodePreparation.drain.podSelector: %w", err)
		}
	}
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		case p.Annotations[corev1.MirrorPodAnnotationKey] != "":
		case p.Labels[fleetv1.ManagedByLabel] == fleetv1.ManagedByValue:
			// A Job pod of a fleetjob run, this one's or another's: its
			// node's work, never evicted by a drain.
		case ownedByKind(&p, "DaemonSet"):
		case !selector.Matches(labels.Set(p.Labels)):
		case !p.DeletionTimestamp.IsZero():
			wait = append(wait, p)
		case blocked == "" && metav1.GetControllerOf(&p) == nil && !drain.Force:
			blocked = fmt.Sprintf("pod %s/%s has no controller: nothing would recreate it (spec.nodePreparation.drain.force evicts it)", p.Namespace, p.Name)
		case blocked == "" && hasEmptyDir(&p) && !drain.DeleteEmptyDirData:
			blocked = fmt.Sprintf("pod %s/%s has emptyDir data that eviction would delete (spec.nodePreparation.drain.deleteEmptyDirData evicts it)", p.Namespace, p.Name)
		default:
			evict = append(evict, p)
		}
	}
	return evict, wait, blocked, nil
}

func ownedByKind(p *corev1.Pod, kind string) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == kind
}

func hasEmptyDir(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.EmptyDir != nil })
}

// evictPod asks the API server to evict pod. why says what refused it for
// now (a PodDisruptionBudget: 429), "" when it was accepted or the pod is
// gone; err is any other failure.
func evictPod(ctx context.Context, c client.Client, pod *corev1.Pod) (why string, err error) {
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}}
	err = c.SubResource("eviction").Create(ctx, pod, eviction)
	switch {
	case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return "", nil // evicted, or gone (a conflict: its UID changed, the pod we saw is gone)
	case apierrors.IsTooManyRequests(err):
		return fmt.Sprintf("the eviction of pod %s/%s is refused for now: %s", pod.Namespace, pod.Name, apiMessage(err)), nil
	default:
		return "", fmt.Errorf("evicting pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
}

// apiMessage is an API error's message, without the client's wrapping.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

// ReleaseNode takes run's mark off node, and uncordons it unless keep:
// only a node the run cordoned, as its mark says, is touched. The patch is
// conditional on the node as read, so that a cordon someone else set
// meanwhile is never undone. A node that is gone is released.
func (m Member) ReleaseNode(ctx context.Context, name string, keep bool) error {
	return releaseNode(ctx, m.Client, m.Live, DrainOwner(m.Run), name, keep)
}

func releaseNode(ctx context.Context, c client.Client, live client.Reader, owner, name string, keep bool) error {
	var node corev1.Node
	if err := live.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !CordonedBy(node.Annotations, owner) {
		return nil
	}
	patched := node.DeepCopy()
	delete(patched.Annotations, fleetv1.CordonedByAnnotation)
	delete(patched.Annotations, fleetv1.DrainStartedAnnotation)
	delete(patched.Annotations, fleetv1.DrainEvictedAnnotation)
	if !keep {
		patched.Spec.Unschedulable = false
	}
	if err := c.Patch(ctx, patched, client.MergeFromWithOptions(&node, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("uncordoning node %s: %w", name, err)
	}
	return nil
}

// DrainFailed tells whether reason is a drain's failure: the node failed
// before its Job was created.
func DrainFailed(reason string) bool {
	return reason == fleetv1.NodeReasonDrainTimeout || reason == fleetv1.NodeReasonDrainBlocked
}

// asIfUncordoned is node as the scheduler will see it for the run's pod,
// which tolerates the cordon: what decides whether a node the run cordoned
// can still run its Job.
func asIfUncordoned(node *corev1.Node) *corev1.Node {
	out := *node
	out.Spec.Unschedulable = false
	out.Spec.Taints = slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool { return t.Key == fleetv1.UnschedulableTaint })
	return &out
}

// DrainReport is what a group start's drain steps came to.
type DrainReport struct {
	// Draining counts the nodes whose drain goes on; Waiting says what
	// holds the first of them, when something does.
	Draining int
	Waiting  string
	// Evicted counts the evictions accepted.
	Evicted int
	// Failed are the nodes whose drain failed, recorded as failed.
	Failed []plan.SkippedNode
	// Results are what the drains of the nodes drained now, and of those
	// failed, came to, by node: recorded with them.
	Results map[string]noderesults.Drain
}

// drainParallelism is how many nodes are drained at once in one start.
const drainParallelism = 16

// drainNodes steps the drain of each of nodes (the ready nodes of the
// group, by name), in parallel, and returns those drained. A node whose
// step failed with an error stays to drain; the first error is returned.
func (m Member) drainNodes(ctx context.Context, nodes []*corev1.Node, now time.Time, report *DrainReport) (map[string]bool, error) {
	steps := make([]DrainStep, len(nodes))
	errs := notTried(ctx, len(nodes))
	workqueue.ParallelizeUntil(ctx, drainParallelism, len(nodes), func(i int) {
		steps[i], errs[i] = m.StepDrain(ctx, nodes[i], now)
	})
	drained := map[string]bool{}
	if report.Results == nil {
		report.Results = map[string]noderesults.Drain{}
	}
	for i, s := range steps {
		switch {
		case errs[i] != nil:
			report.Draining++
		case s.Reason != "":
			report.Failed = append(report.Failed, plan.SkippedNode{Node: nodes[i].Name, Reason: s.Reason, Message: s.Message})
			report.Results[nodes[i].Name] = s.Result(now)
		case s.Drained:
			drained[nodes[i].Name] = true
			report.Results[nodes[i].Name] = s.Result(now)
		default:
			report.Draining++
			if report.Waiting == "" && s.Waiting != "" {
				report.Waiting = fmt.Sprintf("node %s: %s", nodes[i].Name, s.Waiting)
			}
		}
		report.Evicted += s.Evicted
	}
	return drained, firstError(errs)
}

// maxReleasesPerCall bounds the nodes ReleaseNodes patches in one call;
// the rest are released by the next.
const maxReleasesPerCall = 50

// ReleaseNodes releases the nodes st says run cordoned and is done with
// (State.Releasable; all of them when all is set): each is uncordoned, or
// left cordoned as the drain's options say, and loses the run's mark. It
// returns how many are left to release, by a later call, and the first
// error; the others are still released. With all, the marks are read from
// live first: the run ends, and a cache that has not seen a cordon of the
// last moment must not leave that node cordoned for good.
func (m Member) ReleaseNodes(ctx context.Context, st *State, all bool) (left int, err error) {
	if all {
		marked, err := cordonedNodes(ctx, m.Live, m.Run, *st, observeOptions{})
		if err != nil {
			return len(st.Cordoned), err
		}
		st.Cordoned = marked
	}
	nodes, keep := st.Releasable(m.Run.ClusterJob.Spec.NodePreparation.Drain, all)
	n := min(len(nodes), maxReleasesPerCall)
	errs := notTried(ctx, n)
	workqueue.ParallelizeUntil(ctx, drainParallelism, n, func(i int) {
		errs[i] = m.ReleaseNode(ctx, nodes[i], keep[i])
	})
	left = len(nodes)
	for i := range n {
		if errs[i] == nil {
			delete(st.Cordoned, nodes[i])
			left--
		}
	}
	return left, firstError(errs)
}

// firstError is the first of errs that is not nil, saying how many more
// failed too.
func firstError(errs []error) error {
	var first error
	more := 0
	for _, err := range errs {
		switch {
		case err == nil:
		case first == nil:
			first = err
		default:
			more++
		}
	}
	if more > 0 {
		return fmt.Errorf("%w (and %d more)", first, more)
	}
	return first
}

// releaseAll uncordons every node that carries owner's mark, as c (a
// cache of node metadata will do) lists them, at most maxReleasesPerCall
// of them, and returns how many are left.
func releaseAll(ctx context.Context, c client.Client, live client.Reader, owner string) (left int, err error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
	if err := c.List(ctx, &list); err != nil {
		return 0, fmt.Errorf("listing nodes: %w", err)
	}
	var marked []string
	for _, n := range list.Items {
		if CordonedBy(n.Annotations, owner) {
			marked = append(marked, n.Name)
		}
	}
	n := min(len(marked), maxReleasesPerCall)
	errs := notTried(ctx, n)
	workqueue.ParallelizeUntil(ctx, drainParallelism, n, func(i int) {
		errs[i] = releaseNode(ctx, c, live, owner, marked[i], false)
	})
	left = len(marked)
	for _, err := range errs {
		if err == nil {
			left--
		}
	}
	return left, firstError(errs)
}

// notTried is n errors for work ParallelizeUntil may leave undone when ctx
// ends (it skips the rest silently): each piece that runs overwrites its
// own, and one never run is not taken for done.
func notTried(ctx context.Context, n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = errNotTried{ctx}
	}
	return errs
}

// errNotTried is the error of a piece of work never run: its context
// ended first.
type errNotTried struct{ ctx context.Context }

func (e errNotTried) Error() string {
	if err := e.ctx.Err(); err != nil {
		return "not tried: " + err.Error()
	}
	return "not tried"
}

// NoEvictionWait wraps a member client's transport so that client-go does
// not sleep on an eviction a PodDisruptionBudget refuses: the API server
// answers 429 with a Retry-After of seconds, which client-go would wait out
// and retry, up to ten times, inside one drain step and past its deadline.
// The drain steps again within seconds on its own, and its timeout bounds
// it, so the refusal is returned at once. Other requests are untouched.
func NoEvictionWait(rt http.RoundTripper) http.RoundTripper {
	return evictionTransport{rt}
}

type evictionTransport struct{ rt http.RoundTripper }

func (t evictionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests && req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/eviction") {
		resp.Header.Del("Retry-After")
	}
	return resp, err
}
