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
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// ConflictError reports a Job under one of the run's names that belongs to
// someone else. It is never adopted: the node is not run, and the conflict
// is reported.
type ConflictError struct {
	// Job is the Job's name.
	Job string
	// Namespace is the Job's namespace.
	Namespace string
}

// Error implements error.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("Job %s/%s exists and does not belong to this ClusterJob", e.Namespace, e.Job)
}

// createParallelism is how many Job creations run at once: enough that a
// group of 1,000 nodes starts in about a second rather than a minute of
// sequential round trips (a create takes 10-30 ms), few enough not to
// flood a member API server; the member client's rate limit still applies.
const createParallelism = 32

// StartGroup creates the Jobs of the group-th group for its nodes that are
// Pending in st, and returns the Jobs it created, in plan order, and the
// nodes it skipped. Each node is checked again first, as the API server has
// it now: one cordoned, tainted, NotReady or deleted since the plan was made
// is skipped with the reason, never started.
//
// It writes ahead: the nodes are recorded as starting, with the skipped ones
// and all else st adds to the run's results record, in one write, before any
// of their Jobs is created. When that write fails no Job is created, and a
// node the stored record named already (a cache behind) is not created: a
// recorded node never runs twice, whatever became of its Job. st's record is
// the one written afterwards. A node whose create surely did not happen (the
// API server refused it, or it was never sent) is taken off the record
// again, so that it stays Pending; one whose create ended without saying (a
// timeout) stays recorded, and fails if its Job never shows.
//
// A Job that already exists and carries the run's UID label was created
// before, by this or another writer, and counts as started but not as
// created; one that does not is a *ConflictError (find it with errors.As:
// several are joined), and the other nodes are still started. live must
// read from the API server. On any other error StartGroup stops creating
// and returns it. opts may hold At, WithLimit and WithDrainReport.
func (m Member) StartGroup(ctx context.Context, st *State, group int, opts ...ObserveOption) ([]batchv1.Job, []plan.SkippedNode, error) {
	if group < 0 || group >= len(st.Groups) {
		return nil, nil, fmt.Errorf("group %d is not in the plan of cluster %s, which has %d groups", group, m.Run.Cluster, len(st.Groups))
	}
	o := m.options(append([]ObserveOption{At(time.Now()), WithDrainReport(&DrainReport{})}, opts...))
	var pending []string
	taken := 0
	for _, n := range st.Nodes {
		if n.Group != group || n.Phase != NodePending {
			continue
		}
		if st.Cordoned[n.Node] {
			// Its drain goes on: it holds its room under the budgets
			// since its cordon, and is not held back by the limit.
			pending = append(pending, n.Node)
			continue
		}
		if !o.limited || taken < o.limit {
			pending = append(pending, n.Node)
			taken++
		}
	}
	if len(pending) == 0 {
		return nil, nil, nil
	}
	nodes, err := ListNodes(ctx, m.Live)
	if err != nil {
		return nil, nil, err
	}
	drains := m.Run.ClusterJob.Spec.Drains()
	owner := ""
	if drains {
		owner = DrainOwner(m.Run)
	}
	ready, skipped := recheck(pending, nodes, &m.Run.ClusterJob.Spec, owner)
	var drainErr error
	if drains {
		ready, drainErr = m.drainReady(ctx, st, group, nodes, ready, o)
		skipped = append(skipped, o.drain.Failed...)
	}
	var starting []string
	for _, n := range st.Nodes {
		if n.Group == group && ready[n.Node] {
			starting = append(starting, n.Node)
		}
	}
	// From here the nodes are recorded as starting, then their Jobs are
	// made: cut between the two, the nodes whose Jobs were never created
	// would fail. So the caller's cancellation (a hub stopping, a leader
	// handing over) does not cut the start: it stops the sending of
	// creates, those under way are answered, and the nodes not sent are
	// taken off the record again, within the start's deadline and one
	// write. The hub waits for that before it exits.
	if err := ctx.Err(); err != nil {
		return nil, nil, errors.Join(drainErr, err)
	}
	stop := ctx.Done()
	ctx, cancel := uncancelled(ctx)
	defer cancel()
	wrote := time.Now()
	fresh, err := m.writeAhead(ctx, st, starting, skipped, o.drain.Results)
	if err != nil {
		return nil, nil, errors.Join(drainErr, err)
	}
	// The write ahead is the member's latest answer to a write: a create
	// is not sent that one as slow would not bring back in time.
	writeTook := time.Since(wrote)
	var jobs []*batchv1.Job
	for _, n := range st.Nodes {
		if n.Group == group && fresh[n.Node] {
			jobs = append(jobs, BuildJob(m.Run, n.Node, group, n.GroupName))
		}
	}
	results := m.createAll(ctx, stop, jobs, writeTook)
	var created []batchv1.Job
	var conflicts, failures []error
	var refused []string
	for i, job := range jobs {
		var conflict *ConflictError
		switch r := results[i]; {
		case errors.As(r.err, &conflict):
			conflicts = append(conflicts, r.err)
		case r.err != nil:
			failures = append(failures, r.err)
		case r.made:
			created = append(created, *job)
		}
		if results[i].refused {
			refused = append(refused, job.Annotations[fleetv1.NodeAnnotation])
		}
	}
	var unrecordErr error
	if len(refused) > 0 {
		// Its own time: the start's deadline may be spent, and a node left
		// recorded without a Job would fail rather than start next time.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		unrecordErr = m.unstart(uctx, st, refused, st.Recorded.Nodes.Get(refused[0]).Attempt)
	}
	cause := rootCause(failures)
	if cause == nil && len(created) == 0 && len(refused) > 0 && len(conflicts) == 0 {
		// Cut before any create was sent: no Job event will wake the
		// next reconcile, the error's retry does.
		cause = fmt.Errorf("cluster %s: the start of group %d ran out of time before any of its %d Jobs was created", m.Run.Cluster, group, len(refused))
	}
	return created, skipped, errors.Join(append(conflicts, cause, unrecordErr, drainErr)...)
}

// maxDraining bounds the nodes of a cluster whose drain one group start
// steps: the others stay Pending, uncordoned, for a later start.
const maxDraining = 100

// drainReady steps the drains of the group's ready nodes, in plan order,
// within half the time left before ctx's deadline (the rest is the
// creates'), and returns the nodes drained: only they start now. The
// others stay Pending and are stepped again by the next start; those
// whose drain failed are in o.drain.Failed.
func (m Member) drainReady(ctx context.Context, st *State, group int, nodes []corev1.Node, ready map[string]bool, o observeOptions) (map[string]bool, error) {
	byName := make(map[string]*corev1.Node, len(ready))
	for i := range nodes {
		if ready[nodes[i].Name] {
			byName[nodes[i].Name] = &nodes[i]
		}
	}
	// Drains under way first, then new ones, up to maxDraining: each
	// step lists a node's pods and may evict them, and a group of
	// thousands is drained in turns rather than all at once.
	var targets, fresh []*corev1.Node
	for _, n := range st.Nodes {
		switch node := byName[n.Node]; {
		case n.Group != group || node == nil:
		case st.Cordoned[n.Node]:
			targets = append(targets, node)
		default:
			fresh = append(fresh, node)
		}
	}
	targets = append(targets, fresh[:max(0, min(len(fresh), maxDraining-len(targets)))]...)
	dctx := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		now := time.Now() // the deadline's clock, not o.now: that may be a test's
		dctx, cancel = context.WithDeadline(ctx, now.Add(deadline.Sub(now)/2))
		defer cancel()
	}
	return m.drainNodes(dctx, targets, o.now, o.drain)
}

// undoTimeout bounds taking nodes whose creates were not sent off the
// record, after the start's own deadline.
const undoTimeout = 10 * time.Second

// maxCreateReserve caps createReserve.
const maxCreateReserve = 10 * time.Second

// createCutoff is when createAll stops sending creates: a third of the time
// left before ctx's deadline (at most maxCreateReserve) is kept for the
// creates under way to be answered. A create the deadline cuts cannot say
// whether it happened, so its node stays recorded and fails if its Job
// never shows (no node runs twice); one not sent stays Pending and is
// created by the next reconcile. On a member too slow to take a whole
// group within a reconcile, the start stops early rather than fail nodes.
func createCutoff(ctx context.Context, now time.Time) (time.Time, bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return time.Time{}, false
	}
	return deadline.Add(-min(deadline.Sub(now)/3, maxCreateReserve)), true
}

// answerRoom is how many times the slowest create answered so far a
// create sent now must have before the deadline. A member's answers slow
// down as its queue grows (an overloaded API server took over 10 s, more
// than createCutoff's reserve): one as slow as the slowest yet, sent when
// less room is left, would likely be cut.
const answerRoom = 2

// maySend tells whether createAll sends a create at now: before cutoff
// (none when unbounded), and with room for answerRoom times slowest, the
// slowest create answered so far, before deadline.
func maySend(now, cutoff, deadline time.Time, bounded bool, slowest time.Duration) bool {
	return !bounded || now.Before(cutoff) && now.Add(answerRoom*slowest).Before(deadline)
}

// uncancelled is ctx without its cancellation but with its deadline. A ctx
// without a deadline is kept as it is: every remote call needs a bound.
func uncancelled(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
}

// writeAhead records nodes as starting, with skipped, what their drains
// came to (drains, by node) and whatever else st adds to the record, in one
// write, and returns those of nodes that no
// stored record named before: only they may be created. st's record becomes
// the one written. A write that fails may still have been stored (a
// timeout): the nodes are taken off again, as no Job of theirs is created.
func (m Member) writeAhead(ctx context.Context, st *State, nodes []string, skipped []plan.SkippedNode, drains map[string]noderesults.Drain) (map[string]bool, error) {
	next, changed := recordChanges(st.Recorded, *st, nil, skipped)
	attempt := newAttempt()
	updates := map[string]NodeResult{}
	for _, n := range nodes {
		if _, ok := next.Nodes.Lookup(n); ok {
			continue
		}
		updates[n] = NodeResult{Phase: NodeStarting, Attempt: attempt}
		changed = append(changed, n)
	}
	if len(changed) == 0 {
		return nil, nil
	}
	for _, n := range changed {
		// Written now or never: a result, once final, does not change.
		r, ok := updates[n]
		if !ok {
			r, ok = next.Nodes.Lookup(n)
		}
		if ok && r.Drain == (noderesults.Drain{}) && drains[n] != (noderesults.Drain{}) {
			r.Drain = drains[n]
			updates[n] = r
		}
	}
	next = Results{Nodes: next.Nodes.With(updates)}
	w, err := m.writeResultsMerging(ctx, st.Recorded, next, changed, st.RecordObject)
	if err != nil {
		err = fmt.Errorf("recording the group's nodes as starting, before creating their Jobs: %w", err)
		if !refusedByServer(err) {
			err = errors.Join(err, m.unstart(ctx, &State{}, nodes, attempt))
		}
		return nil, err
	}
	st.Recorded, st.RecordObject = w.res, w.cm
	fresh := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if _, ok := w.prior.Nodes.Lookup(n); !ok {
			fresh[n] = true
		}
	}
	return fresh, nil
}

// unstart takes nodes, whose Jobs surely were not created, off the record
// again, so that they stay Pending: a create refused (a quota, a webhook, a
// rate limit) is tried again, not taken for a Job lost. Only an entry that
// write attempt recorded Starting is taken off. st's record is the one
// stored; without its ConfigMap it is read live. It is one write over the
// record read: lost to another writer, the nodes stay recorded and fail
// rather than risk running twice.
func (m Member) unstart(ctx context.Context, st *State, nodes []string, attempt string) error {
	rec, cm := st.Recorded, st.RecordObject
	if cm == nil {
		var err error
		if rec, cm, err = ReadResults(ctx, m.Live, m.Run); err != nil || cm == nil {
			return err
		}
	}
	var removed []string
	for _, n := range nodes {
		if r := rec.Nodes.Get(n); r.Phase == NodeStarting && r.Attempt == attempt {
			removed = append(removed, n)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	next := Results{Nodes: rec.Nodes.Without(removed...)}
	written, err := m.writeResults(ctx, next, removed, cm)
	if err != nil {
		return fmt.Errorf("taking the nodes whose Jobs were not created off the record: %w", err)
	}
	st.Recorded, st.RecordObject = next, written
	return nil
}

// recheck splits pending into the nodes that can run the Job now and those
// to skip, as nodes (the cluster's nodes now) say; a node drainOwner
// cordoned is judged as its pod, which tolerates the cordon, sees it. It
// is pure.
func recheck(pending []string, nodes []corev1.Node, spec *fleetv1.ClusterJobSpec, drainOwner string) (ready map[string]bool, skipped []plan.SkippedNode) {
	ready = make(map[string]bool, len(pending))
	byName := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	for _, name := range pending {
		node, ok := byName[name]
		if !ok {
			skipped = append(skipped, plan.SkippedNode{Node: name, Reason: fleetv1.NodeReasonNodeDeleted, Message: "node was deleted before its Job started"})
			continue
		}
		if drainOwner != "" && CordonedBy(node.Annotations, drainOwner) {
			node = asIfUncordoned(node) // draining: the run's pod tolerates its cordon
		}
		if reason, msg := plan.Ineligible(node, spec); reason != "" {
			skipped = append(skipped, plan.SkippedNode{Node: name, Reason: reason, Message: msg + " when its group started"})
			continue
		}
		ready[name] = true
	}
	return ready, skipped
}

// rootCause is the failure that stopped the creations: the others were
// cancelled because of it, and would hide it from the cluster's row.
func rootCause(failures []error) error {
	for _, err := range failures {
		if !errors.Is(err, context.Canceled) {
			return err
		}
	}
	if len(failures) > 0 {
		return failures[0]
	}
	return nil
}

// newAttempt names one write ahead: unique enough that two writes of one
// run never share it.
func newAttempt() string {
	return strconv.FormatUint(rand.Uint64()>>24, 36)
}

// createResult is how one create ended: made tells that the Job was
// created now, refused that it surely was not (nor will be by this call).
// A create that was not sent is not tried, and refused.
type createResult struct {
	tried, made, refused bool
	err                  error
}

// createAll creates jobs, createParallelism at a time, and stops starting
// new creations after the first error that is not a conflict, at
// createCutoff, once the slowest answer yet (the write before them,
// prior, counted) says that one sent now would not be answered in time
// (maySend), or once stop is closed (the caller stopping): a creation not
// started returns the error that stopped them (none at a cutoff), and is
// refused. Creations under way are not cancelled: each ends with the API
// server's answer, so that as few creates as can be are left without
// saying whether they happened.
func (m Member) createAll(ctx context.Context, stop <-chan struct{}, jobs []*batchv1.Job, prior time.Duration) []createResult {
	var stopped atomic.Bool
	var slowest atomic.Int64 // the slowest answer yet, in nanoseconds
	slowest.Store(int64(prior))
	results := make([]createResult, len(jobs))
	cutoff, bounded := createCutoff(ctx, time.Now())
	deadline, _ := ctx.Deadline()
	// Not ctx: every piece runs, to say whether it was sent.
	workqueue.ParallelizeUntil(context.Background(), createParallelism, len(jobs), func(i int) {
		sent := time.Now()
		if stopped.Load() || ctx.Err() != nil || closed(stop) || !maySend(sent, cutoff, deadline, bounded, time.Duration(slowest.Load())) {
			return
		}
		results[i] = m.createJob(ctx, jobs[i])
		for took := int64(time.Since(sent)); ; {
			if old := slowest.Load(); took <= old || slowest.CompareAndSwap(old, took) {
				break
			}
		}
		var conflict *ConflictError
		if err := results[i].err; err != nil && !errors.As(err, &conflict) {
			stopped.Store(true)
		}
	})
	cause := ctx.Err()
	if cause == nil && closed(stop) {
		cause = errStopped
	}
	for _, r := range results {
		var conflict *ConflictError
		if r.err != nil && !errors.As(r.err, &conflict) {
			cause = r.err
			break
		}
	}
	for i := range results {
		if !results[i].tried {
			results[i] = createResult{refused: true, err: cause}
		}
	}
	return results
}

// errStopped is why the creates a group start did not send were not sent
// when its caller stopped.
var errStopped = errors.New("the hub stopped before their creates were sent")

// closed tells whether c is closed; a nil c never is.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// createJob creates job. made is false when it already existed as the run's
// own: st may come from a cache that has not seen it yet.
func (m Member) createJob(ctx context.Context, job *batchv1.Job) createResult {
	err := m.Client.Create(ctx, job)
	if err == nil {
		return createResult{tried: true, made: true}
	}
	if apierrors.IsInvalid(err) {
		// The template is valid on the hub but not for this member (an
		// older API server, a field it does not know): retrying cannot help.
		return createResult{tried: true, refused: true, err: &PermanentError{Reason: fleetv1.ReasonInvalidJob, Err: fmt.Errorf("creating Job %s/%s: %w", job.Namespace, job.Name, err)}}
	}
	if !apierrors.IsAlreadyExists(err) {
		return createResult{tried: true, refused: refusedByServer(err), err: fmt.Errorf("creating Job %s/%s: %w", job.Namespace, job.Name, namespaceError(err, job.Namespace))}
	}
	var existing batchv1.Job
	if err := m.Live.Get(ctx, client.ObjectKeyFromObject(job), &existing); err != nil {
		return createResult{tried: true, err: fmt.Errorf("reading the existing Job %s/%s: %w", job.Namespace, job.Name, err)}
	}
	if !ownedBy(&existing, m.Run.ClusterJob.UID) {
		return createResult{tried: true, refused: true, err: &ConflictError{Job: job.Name, Namespace: job.Namespace}}
	}
	return createResult{tried: true}
}

// refusedByServer tells whether err is the API server's refusal of a
// write, which it then surely did not make: a 4xx status other than a
// timeout; a request client-go's rate limiter never let out; or one its
// transport refused to send and says so (NotSent: a sharded hub's fence,
// once the replica may no longer write to the member). Any other
// failure (a timeout, a lost connection, a 5xx) may come after the write
// was made.
func refusedByServer(err error) bool {
	if err != nil && strings.Contains(err.Error(), throttledPrefix) {
		return true
	}
	var unsent interface{ NotSent() bool }
	if errors.As(err, &unsent) && unsent.NotSent() {
		return true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout
}

// throttledPrefix starts the error of a request that client-go's rate
// limiter held until its context ended (k8s.io/client-go/rest, Request
// tryThrottle): it was never sent. client-go gives it no type to match, and
// taking it for a create that may have happened would fail, on a busy
// member, every node whose create waited at the reconcile's deadline.
const throttledPrefix = "client rate limiter Wait returned an error"
