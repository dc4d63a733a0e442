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

package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/fleet"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/pkg/text"
	"github.com/fleetjob/fleetjob/spoke"
)

// note is an event to send once the status that explains it is written.
type note struct {
	eventType, reason, message string
}

// maxHeldNotes bounds the notes held for one MemberRun: a member that keeps
// failing while its status writes keep losing adds one note a retry.
const maxHeldNotes = 16

// heldNotes are the notes of MemberRun reconciles whose status write
// failed. What they tell of happened (a plan frozen, Jobs created), and the
// reconcile that follows does not do it again: it sends them once its own
// write showed the state they explain. Without them, a lost race dropped a
// cluster's GroupStarted for good.
type heldNotes struct {
	mu sync.Mutex
	m  map[types.NamespacedName][]note
}

// hold keeps notes for the MemberRun key's next written status.
func (h *heldNotes) hold(key types.NamespacedName, notes []note) {
	if len(notes) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[types.NamespacedName][]note{}
	}
	held := append(h.m[key], notes...)
	h.m[key] = held[max(0, len(held)-maxHeldNotes):]
}

// take returns and forgets the notes held for key.
func (h *heldNotes) take(key types.NamespacedName) []note {
	h.mu.Lock()
	defer h.mu.Unlock()
	notes := h.m[key]
	delete(h.m, key)
	return notes
}

// act deletes the Jobs whose pods never started, freezes the plan or starts
// the group decided, records what it learnt, and keeps a failure on the
// cluster's view so that its row shows it. A group start writes the record
// ahead of its Jobs, with all this reconcile learnt: the exit codes of
// failed nodes are read first, as a result once recorded never changes.
func (r *MemberRunReconciler) act(ctx context.Context, cj *fleetv1.ClusterJob, c *member.Cluster, d member.Decision) []note {
	var notes []note
	add := func(n note) { notes = append(notes, n) }
	err := r.deleteTimedOut(ctx, cj, c, add)
	r.readExitCodes(ctx, cj, c)
	var created []string
	var skipped []plan.SkippedNode
	if d.Start != member.NoGroup && err == nil {
		created, skipped, err = r.startGroup(ctx, cj, c, d, add)
	} else if d.Freeze {
		err = r.freezePlan(ctx, cj, c, add)
	}
	if rerr := r.record(ctx, cj, c, created, skipped); err == nil {
		err = rerr
	}
	if _, rerr := r.releaseNodes(ctx, cj, c, false); err == nil {
		err = rerr
	}
	if err != nil {
		// Events are rate-limited and the row keeps only the last error;
		// the log is where an operator reads every retry of a member.
		log.FromContext(ctx).Error(err, "Acting on the member; retrying", "cluster", c.Name, "start", d.Start, "freeze", d.Freeze)
		c.Error = err
		add(note{corev1.EventTypeWarning, fleetv1.ReasonMemberError, fmt.Sprintf("cluster %s: %v", c.Name, err)})
	}
	return notes
}

// freezePlan computes and stores the cluster's plan: the cluster starts.
func (r *MemberRunReconciler) freezePlan(ctx context.Context, cj *fleetv1.ClusterJob, c *member.Cluster, add func(note)) error {
	m, _ := r.Members.Member(c.Name)
	sm, ok := r.member(ctx, cj, m)
	if !ok {
		return errors.New("cluster disengaged")
	}
	if err := r.checkTemplate(ctx, cj, m.Labels); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	if err := r.checkDrainAccess(ctx, cj, m, sm.Client); err != nil {
		return err
	}
	nodes, err := spoke.ListNodes(ctx, sm.Live)
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	var p plan.Plan
	if c.RetryOf != nil {
		p, err = sm.EnsurePlanFrom(ctx, func() (plan.Plan, error) {
			return r.retryPlan(ctx, cj, c.RetryOf, sm, nodes)
		})
	} else {
		p, err = sm.EnsurePlan(ctx, nodes)
	}
	if err != nil {
		return fmt.Errorf("storing the plan: %w", err)
	}
	present := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		present[n.Name] = true
	}
	c.State = spoke.Derive(&p, nil, present, spoke.Results{})
	add(note{corev1.EventTypeNormal, fleetv1.EventReasonClusterStarted, fmt.Sprintf("cluster %s: planned %d groups of %d nodes, %d skipped",
		c.Name, len(p.Groups), p.NodeCount(), p.SkippedCount())})
	log.FromContext(ctx).Info("Froze plan", "cluster", c.Name, "groups", len(p.Groups), "nodes", p.NodeCount())
	return nil
}

// record writes what this reconcile learnt of the cluster's nodes to its
// results record: the Jobs just created, seen, or finished. It writes only
// where the hub reads the run now, and at most once.
func (r *MemberRunReconciler) record(ctx context.Context, cj *fleetv1.ClusterJob, c *member.Cluster, created []string, skipped []plan.SkippedNode) error {
	if !c.State.Planned || c.Error != nil || !c.Reachable {
		return nil
	}
	m, _ := r.Members.Member(c.Name)
	sm, ok := r.member(ctx, cj, m)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	if err := sm.RecordResults(ctx, c.State, created, skipped); err != nil {
		return fmt.Errorf("recording results: %w", err)
	}
	return nil
}

// deleteTimedOut deletes the Jobs of nodes the hub failed, whose pod never
// started or whose group ran past its progress deadline: they count as
// failed, and a pod that starts or goes on late must not run the node.
func (r *MemberRunReconciler) deleteTimedOut(ctx context.Context, cj *fleetv1.ClusterJob, c *member.Cluster, add func(note)) error {
	if len(c.StartTimedOut) == 0 {
		return nil
	}
	m, _ := r.Members.Member(c.Name)
	sm, ok := r.member(ctx, cj, m)
	if !ok {
		return errors.New("cluster disengaged")
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	if err := sm.DeleteFailedJobs(ctx, &c.State, c.StartTimedOut); err != nil {
		return err
	}
	if c.NotStarted > 0 {
		// Both ways a pod fails to start end here: refused for good at once
		// (an invalid image name, a container configuration the kubelet
		// refuses) or not started within the bound; each node says which.
		add(note{corev1.EventTypeWarning, fleetv1.EventReasonNodeNotStarted, fmt.Sprintf("cluster %s: %d nodes failed: their pods were refused for good or did not start within %s (kubectl fleetjob status %s --nodes --failed says which)",
			c.Name, c.NotStarted, nodeStartTimeout(cj), cj.Name)})
	}
	if c.Lost > 0 {
		add(note{corev1.EventTypeWarning, fleetv1.NodeReasonNodeLost, fmt.Sprintf("cluster %s: %d nodes failed: lost (not Ready) for longer than spec.nodeLostTimeout (%s) after their pods started",
			c.Name, c.Lost, nodeLostTimeout(cj))})
	}
	if c.DeadlineExceeded > 0 {
		add(note{corev1.EventTypeWarning, fleetv1.NodeReasonGroupDeadlineExceeded, fmt.Sprintf("cluster %s: %d nodes failed: their group ran past spec.gates.progressDeadline (%s)",
			c.Name, c.DeadlineExceeded, cj.Spec.Gates.ProgressDeadline.Duration)})
	}
	return nil
}

// startGroup creates the Jobs of the group d starts in the cluster (no
// more than d.Limit of them when d is Limited), and returns the nodes it
// created Jobs for and those it skipped.
func (r *MemberRunReconciler) startGroup(ctx context.Context, cj *fleetv1.ClusterJob, c *member.Cluster, d member.Decision, add func(note)) ([]string, []plan.SkippedNode, error) {
	g := d.Start
	m, _ := r.Members.Member(c.Name)
	sm, ok := r.member(ctx, cj, m)
	if !ok {
		return nil, nil, errors.New("cluster disengaged")
	}
	accounts, err := r.tokenAccounts(ctx, cj, m.Labels)
	if err != nil {
		return nil, nil, err
	}
	sm.Run.ServiceAccounts = accounts
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	if until, steady, ok := r.fence(m.Name); ok {
		// Sharded, the writes end at the replica's fence: the start stops
		// sending creates a third before its deadline, so none is cut in
		// flight there, which would fail its node (a create cut cannot say
		// whether it happened); those not sent start next time, once
		// taken off the record again, which must be before the fence too.
		deadline, err := fencedStart(r.Clock.Now(), until, steady, c.Name)
		if err != nil {
			return nil, nil, err // retried: a renewed session starts it
		}
		var cancelFence context.CancelFunc
		ctx, cancelFence = context.WithDeadline(ctx, deadline)
		defer cancelFence()
	}
	var finished time.Time
	// Under a disruption budget a group starts in waves: only its first
	// wave hands over from the group before.
	if g > 0 && !c.State.Groups[g].Started() {
		observeGroupDuration(c.State, g-1)
		finished, _ = r.finishes.take(naming.LabelValue(string(cj.UID)), naming.LabelValue(c.Name))
	}
	writer := &firstCreate{Client: sm.Client, clock: r.Clock}
	sm.Client = writer
	uid, cluster, group := naming.LabelValue(string(cj.UID)), naming.LabelValue(c.Name), c.State.Groups[g]
	r.pace.groupStarting(uid, cluster, g, group.Pending+group.Running)
	var drained spoke.DrainReport
	opts := []spoke.ObserveOption{spoke.At(r.Clock.Now()), spoke.WithDrainReport(&drained)}
	if d.Limited {
		opts = append(opts, spoke.WithLimit(d.Limit))
	}
	r.underWay.begin()
	created, skipped, err := sm.StartGroup(ctx, &c.State, g, opts...)
	r.underWay.end()
	r.pace.notCreated(uid, cluster, g, group.Pending-len(created))
	jobsCreated.Add(float64(len(created)))
	// A soak is the user's wait, not the hub's: the hand-off counts from
	// its end.
	if soaked := member.SoakEnd(&cj.Spec, c.State, g); soaked.After(finished) && !finished.IsZero() {
		finished = soaked
	}
	if !finished.IsZero() && !writer.at.IsZero() {
		groupHandoff.Observe(max(0, writer.at.Sub(finished).Seconds()))
	}
	if len(created) > 0 {
		add(note{corev1.EventTypeNormal, fleetv1.EventReasonGroupStarted, fmt.Sprintf("cluster %s: started group %d (%s) with %d Jobs",
			c.Name, g, c.State.Groups[g].Name, len(created))})
		log.FromContext(ctx).Info("Started group", "cluster", c.Name, "group", g, "jobs", len(created))
	}
	if cj.Spec.Drains() {
		c.Draining, c.DrainWaiting = drained.Draining, drained.Waiting
		drainNotes(c, g, drained, add)
	}
	if passed := slices.DeleteFunc(slices.Clone(skipped), func(s plan.SkippedNode) bool { return spoke.DrainFailed(s.Reason) }); len(passed) > 0 {
		add(note{corev1.EventTypeWarning, fleetv1.EventReasonNodesSkipped, fmt.Sprintf("cluster %s: group %d skipped %d nodes that cannot run the Job now, %s first: %s",
			c.Name, g, len(passed), passed[0].Node, passed[0].Message)})
	}
	nodes := make([]string, len(created))
	for i := range created {
		nodes[i] = created[i].Annotations[fleetv1.NodeAnnotation]
	}
	return nodes, skipped, err
}

// readExitCodes reads the exit codes of the cluster's failed nodes into its
// state, before any write of the record. Exit codes are the record's
// detail, not its point: a pod that cannot be read never holds the record
// back.
func (r *MemberRunReconciler) readExitCodes(ctx context.Context, cj *fleetv1.ClusterJob, c *member.Cluster) {
	if !c.State.Planned || c.Error != nil || !c.Reachable {
		return
	}
	m, _ := r.Members.Member(c.Name)
	sm, ok := r.member(ctx, cj, m)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	if err := sm.ReadExitCodes(ctx, &c.State); err != nil {
		log.FromContext(ctx).V(1).Info("Reading the exit codes of failed nodes", "cluster", c.Name, "error", err.Error())
	}
}

// nodeStartTimeout is the run's spec.nodeStartTimeout, defaulted as the
// API server does for objects that predate it.
func nodeStartTimeout(cj *fleetv1.ClusterJob) time.Duration {
	if t := cj.Spec.NodeStartTimeout; t != nil && t.Duration > 0 {
		return t.Duration
	}
	return fleetv1.DefaultNodeStartTimeout
}

// emit sends the notes, and the run's end, after the ClusterJob's status
// was written: an event never tells of a state the API does not show.
func (r *ClusterJobReconciler) emit(cj *fleetv1.ClusterJob, notes []note, prevPhase fleetv1.Phase) {
	if !prevPhase.IsFinished() && cj.Status.Phase.IsFinished() {
		kind, cond := corev1.EventTypeNormal, fleetv1.ConditionComplete
		if cj.Status.Phase == fleetv1.PhaseFailed {
			kind, cond = corev1.EventTypeWarning, fleetv1.ConditionFailed
		}
		// The condition's message: counts, and why the run failed.
		msg := fleet.ProgressMessage(cj.Status.Summary)
		if c := meta.FindStatusCondition(cj.Status.Conditions, cond); c != nil && c.Message != "" {
			msg = c.Message
		}
		notes = append(notes, note{kind, string(cj.Status.Phase), "run " + string(cj.Status.Phase) + ": " + msg})
	}
	r.emitNotes(cj, "", notes)
}

// emitNotes sends the notes as events on the ClusterJob, where a person
// running it looks: `kubectl describe clusterjob`. cluster is the member
// the notes are about, "" for the whole run.
func (r *shared) emitNotes(cj *fleetv1.ClusterJob, cluster string, notes []note) {
	if r.Recorder == nil {
		return
	}
	action := eventAction("Reconcile", cluster)
	for _, n := range notes {
		r.Recorder.Eventf(cj, nil, n.eventType, n.reason, action, "%s", text.Truncate(n.message, text.MaxEventNote))
	}
}

// eventAction is the action of the events about cluster, "" for the whole
// run: verb, then the cluster. The recorder folds events of one object
// with the same reason and action into a series that keeps the first one's
// note: with one action for every cluster, two clusters starting at once
// showed as one cluster's event counted twice. The cluster's name is
// bounded as a label value is (at most 63 characters, a hash past that),
// so the action stays far within the 128 the API server accepts.
func eventAction(verb, cluster string) string {
	if cluster == "" {
		return verb
	}
	return verb + " cluster " + naming.LabelValue(cluster)
}

// fencedStart is when a group start in cluster ends under a fence that
// ends the replica's writes to the member at until: a third of the time
// left before it is kept for the write that takes the nodes whose creates
// were not sent off the record again. The fence refuses that write after
// until, and the nodes, recorded as starting without a Job, would fail.
// So no start begins with less time than steady left, the least a session
// renewed on time leaves: its renewals not answered, the hub API server
// is stalled, and the member, on the same overloaded machine or network,
// may take seconds a write (P6 at two replicas lost 9 nodes of a member
// whose start ran into its session's lapse, their creates and undo then
// refused). The retry starts it once the session is renewed.
func fencedStart(now, until time.Time, steady time.Duration, cluster string) (time.Time, error) {
	if room := until.Sub(now); room < steady {
		return time.Time{}, fmt.Errorf("this hub replica's hold on cluster %s ends in %s, too soon to start a group (%s needed): waiting for its session's renewal",
			cluster, max(0, room).Round(time.Millisecond), steady)
	}
	return until.Add(-until.Sub(now) / 3), nil
}
