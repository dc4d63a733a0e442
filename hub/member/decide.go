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

// Package member holds the hub's pure decisions for one ClusterJob's run in
// one member cluster: whether its plan is frozen now, which group starts
// next, when a fault fails the cluster, and the cluster's row. The fleet's
// say (the cluster's turn, a stop from elsewhere) comes in as Admitted and
// Halt; hub/fleet makes those decisions. Nothing here does I/O.
package member

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/budget"
	"github.com/fleetjob/fleetjob/pkg/window"
	"github.com/fleetjob/fleetjob/spoke"
)

// Cluster is what the hub knows of one selected cluster in this reconcile.
type Cluster struct {
	Name string
	// Engaged means the hub has a synced client for the cluster; State is
	// meaningful only then (possibly stale if the cluster just went away).
	Engaged bool
	// Reachable is the result of the last probe of the cluster.
	Reachable bool
	// Reason and Message tell why the cluster is unreachable.
	Reason, Message string
	// UnreachableSince is when the hub lost the cluster (zero if reachable).
	UnreachableSince time.Time
	// State is the run in the cluster, read from its plan and Jobs.
	State spoke.State
	// Error is a failure to observe or act in the cluster this reconcile.
	Error error
	// Previous is the cluster's row in the last written status, if any.
	Previous *fleetv1.ClusterStatus
	// StartTimedOut are the Jobs of nodes the hub failed (their pod never
	// started, their group ran past its progress deadline, their node was
	// lost or deleted), to be deleted;
	// NotStarted and DeadlineExceeded count the nodes failed so now.
	StartTimedOut    []string
	NotStarted       int
	DeadlineExceeded int
	// Lost counts the nodes failed now because their node was lost past
	// spec.nodeLostTimeout (their Jobs are in StartTimedOut), and
	// LostRecheck is when a node that may be lost is to be read again;
	// zero when none may be.
	Lost        int
	LostRecheck time.Time
	// Stalled counts the nodes failed now because the member created or
	// started no pod of the run for spec.nodeStartTimeout: the cluster
	// fails MemberStalled with them.
	Stalled int
	// StartRecheck is when a node whose pod has not started may time out
	// (spec.nodeStartTimeout), or its pod is to be read again for a
	// refusal; zero when no node waits for its pod.
	StartRecheck time.Time
	// ClusterID is the identity of the cluster the registration points at
	// now, once engaged.
	ClusterID string
	// PlanLost means the cluster started but its frozen plan is gone, as
	// read from the member's API server, not a cache; LeftJobs counts the
	// run's Jobs still there.
	PlanLost bool
	LeftJobs int
	// HealthRecheck is when a node awaiting its health verdict
	// (spec.gates.nodeHealth) is to be looked at again; zero when none
	// awaits.
	HealthRecheck time.Time
	// RetryOf, for a retry, is the parent run this cluster runs again (the
	// MemberRun's spec.retryOf): its plan is derived from the parent's.
	RetryOf *fleetv1.MemberRetry
	// Windows is when the cluster's groups may start: the run's
	// maintenance windows and those of the cluster's set, both open.
	// WindowError is a window of either that cannot be read, naming its
	// field.
	Windows     window.Schedule
	WindowError error
	// BudgetHold, when set, says which FleetDisruptionBudget holds
	// BudgetWaiting nodes of the group that starts: the ledger granted
	// fewer starts than the group has Pending nodes.
	BudgetHold    string
	BudgetWaiting int
	// Draining counts the nodes of the current group under drain
	// (spec.nodePreparation.drain): cordoned, their pods not all gone yet.
	// DrainWaiting says what holds the first of them, when something does.
	Draining     int
	DrainWaiting string
}

// Input is everything Decide and Status look at.
type Input struct {
	Spec    *fleetv1.ClusterJobSpec
	Cluster Cluster
	// Admitted lets the cluster start: it is its turn under
	// maxConcurrentClusters (the MemberRun's spec.admitted).
	Admitted bool
	// Halt, when set, stops the run here for a reason outside the cluster
	// (the MemberRun's spec.halt).
	Halt *fleetv1.Halt
	// AcceptedFailures is how many failed nodes of the cluster a person
	// accepted by resuming the run (the MemberRun's spec.acceptedFailures).
	AcceptedFailures int

	Now time.Time
	// UnreachableTimeout is how long a cluster may stay unreachable.
	UnreachableTimeout time.Duration
	// MemberErrorTimeout is how long the hub's work in a reachable cluster
	// may keep failing before the cluster fails.
	MemberErrorTimeout time.Duration
	// NodeStartTimeout is the run's spec.nodeStartTimeout (the hub
	// decides start timeouts as it observes; Cluster.StartRecheck says
	// when to look again).
	NodeStartTimeout time.Duration
	// ConnectingGraceUntil ends the hub's startup grace: until then, a
	// cluster the hub is still connecting to accrues no unreachable time, so
	// the hub's own downtime never fails a cluster.
	ConnectingGraceUntil time.Time
}

// NoGroup is Decision.Start when no group starts.
const NoGroup = -1

// Decision is what the member controller should do now.
type Decision struct {
	// Freeze is true when the cluster's plan is to be frozen now: it starts.
	Freeze bool
	// Start is the group whose Jobs should be created, or NoGroup.
	Start int
	// Stopped is true when the run stops in this cluster: failureStrategy
	// exit or a failure budget (onExceeded Stop) tripped here, or the fleet
	// halted it.
	Stopped bool
	// Held is true when a failure budget with onExceeded Suspend is
	// exceeded here past the failures accepted: no group starts until a
	// person resumes the run, which accepts them.
	Held bool
	// RequeueAfter is the next deadline or retry that no watch event will
	// announce: a timeout, the retry of a failed call, the end of a grace.
	RequeueAfter time.Duration
	// Limit, when Limited, is the most nodes of group Start to start now:
	// what the fleet's disruption budgets granted.
	Limit   int
	Limited bool
	// DrainOnly, with Start, steps only the drains of nodes already
	// cordoned (Limit 0): no new node of the group starts now.
	DrainOnly bool
}

// Decide returns the actions for this reconcile.
func Decide(in Input) Decision {
	d := decide(in)
	if d.Start == NoGroup && !d.Freeze && !d.Stopped && drainsGoOn(in) {
		// Nodes cordoned for a drain have started, as a running Job has:
		// a closed window, a suspend or a failure budget's hold stops new
		// nodes, not theirs, which would stay cordoned meanwhile.
		d.Start, d.DrainOnly, d.Limit, d.Limited = in.Cluster.State.Current(), true, 0, true
	}
	return d
}

// drainsGoOn tells whether the cluster has nodes under drain that still
// may get their Jobs: the cluster neither failed nor finished.
func drainsGoOn(in Input) bool {
	c := in.Cluster
	if c.Draining == 0 || !c.Engaged || !c.Reachable || c.Error != nil || !c.State.Planned || finished(in) {
		return false
	}
	if _, failed := failure(in, c); failed {
		return false
	}
	g := c.State.Current()
	return g >= 0 && g < len(c.State.Groups) && c.State.Groups[g].Pending > 0
}

// decide is Decide but for the drains that go on.
func decide(in Input) Decision {
	d := Decision{Start: NoGroup, Stopped: stopped(in), Held: held(in) && !finished(in), RequeueAfter: RequeueAfter(in)}
	c := in.Cluster
	// A failed cluster waiting for its Jobs to be deleted starts nothing.
	if _, failed := failure(in, in.Cluster); failed || d.Stopped || d.Held || ptr.Deref(in.Spec.Suspend, false) || finished(in) {
		return d
	}
	if !wouldStart(in) || windowHeld(in) {
		return d
	}
	if !started(c) {
		d.Freeze = true
		return d
	}
	if g, ok := nextGroup(c.State); ok {
		d.Start = g
	}
	return d
}

// soakingUntil is when the soak of spec.gates ends after the last finished
// group, before the next one may start; zero when no soak holds the
// cluster: no soak set, no group finished yet, or the last finished group
// had a failure (which hands off at once).
func soakingUntil(in Input) time.Time {
	st := in.Cluster.State
	if !st.Planned {
		return time.Time{}
	}
	cur := st.Current()
	if cur <= 0 || cur >= len(st.Groups) || st.Groups[cur].Started() {
		return time.Time{}
	}
	if until := SoakEnd(in.Spec, st, cur); in.Now.Before(until) {
		return until
	}
	return time.Time{}
}

// SoakEnd is when spec.gates.soak lets group g start after group g-1,
// zero when no soak applies: none set, g is the first group, or group g-1
// had a failure or no success.
func SoakEnd(spec *fleetv1.ClusterJobSpec, st spoke.State, g int) time.Time {
	gates := spec.Gates
	if gates == nil || gates.Soak == nil || gates.Soak.Duration <= 0 || g <= 0 || g > len(st.Groups) {
		return time.Time{}
	}
	if prev := st.Groups[g-1]; prev.Failed > 0 || prev.Succeeded == 0 {
		return time.Time{}
	}
	end := groupEnd(st, g-1)
	if end.IsZero() {
		return time.Time{}
	}
	return end.Add(gates.Soak.Duration)
}

// groupEnd is when group g's last node finished, as its Jobs say.
func groupEnd(st spoke.State, g int) time.Time {
	var last time.Time
	for _, n := range st.Nodes {
		if n.Group == g && n.CompletionTime != nil && n.CompletionTime.After(last) {
			last = n.CompletionTime.Time
		}
	}
	return last
}

// nextGroup is the first unfinished group when it still has nodes to start.
// A group half created by a controller that died is completed here too.
func nextGroup(st spoke.State) (int, bool) {
	g := st.Current()
	if g < 0 || g >= len(st.Groups) || st.Groups[g].Pending == 0 {
		return 0, false
	}
	return g, true
}

// stopped tells whether the run stops in this cluster.
func stopped(in Input) bool { return stopCause(in) != "" }

// stopCause tells why the run stops in this cluster, "" when it does not:
// the fleet's halt or, under failureStrategy exit or a failure budget with
// onExceeded Stop, a failure here, which stops this cluster at once rather
// than when the fleet has seen it.
func stopCause(in Input) string {
	if in.Halt != nil {
		return in.Halt.Message
	}
	if onExceeded(in) == fleetv1.OnExceededStop {
		if cause := budgetExceeded(in); cause != "" {
			return cause
		}
	}
	if in.Spec.FailureStrategy != fleetv1.FailureStrategyExit {
		return ""
	}
	c := in.Cluster
	switch f, failed := failure(in, c); {
	case anyFailed(c):
		return "a node failed in cluster " + c.Name
	case failed:
		return "cluster " + c.Name + " failed: " + f.reason
	case terminal(c) && c.Previous.Phase == fleetv1.ClusterFailed:
		return "cluster " + c.Name + " failed: " + c.Previous.Reason
	}
	return ""
}

// held tells whether a failure budget with onExceeded Suspend holds the
// cluster: exceeded by failures a person has not accepted yet.
func held(in Input) bool {
	return onExceeded(in) == fleetv1.OnExceededSuspend && budgetExceeded(in) != ""
}

// onExceeded is the run's failurePolicy.onExceeded, "" without a policy.
func onExceeded(in Input) fleetv1.OnExceeded {
	if in.Spec.FailurePolicy == nil {
		return ""
	}
	if in.Spec.FailurePolicy.OnExceeded == "" {
		return fleetv1.OnExceededStop
	}
	return in.Spec.FailurePolicy.OnExceeded
}

// budgetExceeded names the per-cluster or per-group budget of
// spec.failurePolicy the cluster's observed failures exceed, or a run-wide
// number they exceed alone, "" when none does or the cluster cannot be
// read now. Under onExceeded Suspend, only
// failures beyond those a person accepted count.
func budgetExceeded(in Input) string {
	fp, c := in.Spec.FailurePolicy, in.Cluster
	if fp == nil || !c.Engaged || !c.State.Planned {
		return ""
	}
	// Skipped nodes never ran: they are neither failures nor in the scope.
	failed, eligible := 0, 0
	for _, g := range c.State.Groups {
		failed, eligible = failed+g.Failed, eligible+g.Nodes-g.Skipped
	}
	if onExceeded(in) == fleetv1.OnExceededSuspend && failed <= in.AcceptedFailures {
		return ""
	}
	// A run-wide number this cluster's failures alone pass is exceeded
	// already: the cluster stops (or holds) at once, as under exit, rather
	// than start a group before the fleet has seen it.
	if v := fp.MaxFailedNodes; v != nil && v.Type == intstr.Int && failed > v.IntValue() {
		return fmt.Sprintf("%s %d allows %d nodes of the run to fail; %d failed in cluster %s alone", budget.Nodes, v.IntValue(), v.IntValue(), failed, c.Name)
	}
	if b, ok, err := budget.Resolve(budget.PerCluster, fp.MaxFailedNodesPerCluster, eligible, failed); err != nil {
		return err.Error()
	} else if ok && b.Exceeded() {
		return b.Describe("nodes") + " in cluster " + c.Name
	}
	for _, g := range c.State.Groups {
		if b, ok, err := budget.Resolve(budget.PerGroup, fp.MaxFailedNodesPerGroup, g.Nodes-g.Skipped, g.Failed); err != nil {
			return err.Error()
		} else if ok && b.Exceeded() {
			return b.Describe("nodes") + " in group " + g.Name + " of cluster " + c.Name
		}
	}
	return ""
}

// started tells whether a cluster's run began: its plan is frozen.
func started(c Cluster) bool {
	return c.State.Planned || c.Previous != nil && c.Previous.StartTime != nil
}

// anyFailed remembers failures from the last status too: a failed cluster
// that cannot be read now must not lift an exit stop.
func anyFailed(c Cluster) bool {
	if c.Previous != nil && c.Previous.Nodes.Failed > 0 {
		return true
	}
	return c.Engaged && c.State.AnyFailed()
}

// terminal tells whether the cluster's row already says it finished.
func terminal(c Cluster) bool {
	return c.Previous != nil && c.Previous.Phase.IsFinished()
}

// finished tells whether a cluster has nothing left to do: every group ran,
// it failed, or the run stopped and nothing of it is still running. A Job
// of a node the hub failed that still exists holds it until the Job is gone
// or the deletion deadline passed: once the row is terminal nothing deletes
// it again, and a late pod would run the node after the run ended.
func finished(in Input) bool {
	return terminal(in.Cluster) || !deleting(in) && done(in)
}

// done is finished but for the Jobs still to delete.
func done(in Input) bool {
	c := in.Cluster
	if _, failed := failure(in, c); terminal(c) || failed {
		return true
	}
	if !started(c) {
		return stopped(in) // it will never start
	}
	if !c.Engaged || !c.State.Planned {
		return false // unknown now: not finished until seen or timed out
	}
	if c.State.Finished() {
		return true
	}
	return stopped(in) && c.State.RunningGroup() < 0
}

// deleting tells whether Jobs of nodes the hub failed still exist in the
// cluster and their deletion deadline has not passed.
func deleting(in Input) bool {
	at, ok := DeletionDeadline(in)
	return ok && in.Now.Before(at)
}

// DeletionDeadline is when the cluster may end although Jobs of nodes the
// hub failed (Cluster.StartTimedOut) are still there: UnreachableTimeout,
// the hub's bound on any deletion, after the first of their verdicts. False
// when there is no such Job.
func DeletionDeadline(in Input) (time.Time, bool) {
	c := in.Cluster
	if !c.Engaged || len(c.StartTimedOut) == 0 {
		return time.Time{}, false
	}
	first := in.Now
	for _, n := range c.State.Nodes {
		if n.Job != "" && n.CompletionTime != nil && n.CompletionTime.Before(&metav1.Time{Time: first}) && slices.Contains(c.StartTimedOut, n.Job) {
			first = n.CompletionTime.Time
		}
	}
	return first.Add(in.UnreachableTimeout), true
}

// retrying starts the row's message of a cluster whose work fails and is
// retried.
const retrying = "retrying: "

// stallMessage says why a member that made no progress fails.
func stallMessage(timeout time.Duration, waiting string) string {
	return fmt.Sprintf("the member created or started no pod of the run for %s (spec.nodeStartTimeout) while %s waited: "+
		"its Job controller or scheduler makes no progress, or a quota or an admission policy refuses every pod (see the Jobs' events)", timeout, waiting)
}

// clusterFailure is why a cluster fails now, for its row.
type clusterFailure struct{ reason, message string }

// failure tells whether a cluster that has not finished fails now, and why:
// it stayed unreachable too long, its plan is gone, or the hub's work in it
// failed in a way retrying cannot heal or for longer than the error timeout.
// Every way the hub can be stuck on a cluster ends here, in bounded time.
func failure(in Input, c Cluster) (clusterFailure, bool) {
	if terminal(c) {
		return clusterFailure{}, false
	}
	switch {
	case !c.Engaged && c.Reason == fleetv1.ClusterReasonDuplicateCluster:
		return clusterFailure{c.Reason, c.Message}, true
	case timedOut(in, c):
		return clusterFailure{fleetv1.ReasonUnreachableTimeout, fmt.Sprintf("unreachable for longer than %s: %s", in.UnreachableTimeout, c.Message)}, true
	case changed(c):
		return clusterFailure{fleetv1.ReasonClusterChanged, fmt.Sprintf("the registration now points at another cluster (kube-system UID %s) than the run started in (%s); "+
			"nothing of the run is created there", c.ClusterID, c.Previous.ClusterID)}, true
	case c.Stalled > 0:
		return clusterFailure{fleetv1.ReasonMemberStalled, stallMessage(in.NodeStartTimeout, fmt.Sprintf("%d of its Jobs", c.Stalled))}, true
	case c.Previous != nil && c.Previous.Reason == fleetv1.ReasonMemberStalled:
		// Stalled while its Jobs were deleted: the nodes it counted have
		// their verdicts now, and the failure stands.
		if strings.HasPrefix(c.Previous.Message, retrying) {
			return clusterFailure{c.Previous.Reason, stallMessage(in.NodeStartTimeout, "its Jobs")}, true
		}
		return clusterFailure{c.Previous.Reason, c.Previous.Message}, true
	case c.PlanLost:
		return clusterFailure{fleetv1.ReasonPlanLost, fmt.Sprintf("the run's frozen plan is gone from the cluster (%d of its Jobs are left there); "+
			"re-planning could run a node twice, so the cluster stops", c.LeftJobs)}, true
	case c.Error == nil:
		return windowFailure(in)
	default:
		reason, permanent := spoke.ErrorReason(c.Error)
		if permanent {
			return clusterFailure{reason, c.Error.Error()}, true
		}
		if in.Now.Sub(failingSince(in, c)) >= in.MemberErrorTimeout {
			return clusterFailure{reason, fmt.Sprintf("failing for longer than %s: %v", in.MemberErrorTimeout, c.Error)}, true
		}
	}
	return clusterFailure{}, false
}

// changed tells whether the registration points at another cluster than the
// one the run started in: a rebuilt cluster, or the Secret re-pointed.
func changed(c Cluster) bool {
	return c.Engaged && c.ClusterID != "" && c.Previous != nil && c.Previous.ClusterID != "" && c.Previous.ClusterID != c.ClusterID
}

// timedOut tells whether a cluster stayed unreachable too long. A cluster
// that never became reachable times out too, or one bad registration would
// hold the whole run forever.
func timedOut(in Input, c Cluster) bool {
	since := unreachableSince(in, c)
	return !since.IsZero() && !terminal(c) && in.Now.Sub(since) >= in.UnreachableTimeout
}

// unreachableSince prefers the time written in status, which survives a
// controller restart, to the registry's, which restarts with it. A cluster
// the hub is still connecting to in its startup grace is not unreachable:
// the hub was, and a hub that restarts often must not fail every run.
func unreachableSince(in Input, c Cluster) time.Time {
	if c.Reachable && c.Engaged || inStartupGrace(in, c) {
		return time.Time{}
	}
	if c.Previous != nil && c.Previous.UnreachableSince != nil {
		return c.Previous.UnreachableSince.Time
	}
	return c.UnreachableSince
}

func inStartupGrace(in Input, c Cluster) bool {
	return c.Reason == fleetv1.ClusterReasonConnecting && in.Now.Before(in.ConnectingGraceUntil)
}

// failingSince is when the hub's work in a cluster began to fail without a
// break, kept in status across reconciles and restarts; zero when it works.
func failingSince(in Input, c Cluster) time.Time {
	if c.Error == nil {
		return time.Time{}
	}
	if c.Previous != nil && c.Previous.FailingSince != nil {
		return c.Previous.FailingSince.Time
	}
	return in.Now
}

// maxRetryInterval caps the backoff of a failing cluster: a fault fixed by
// a person (a namespace created, a permission granted) is picked up within
// this long, and a cluster that fails for minutes costs two calls a minute.
const maxRetryInterval = 30 * time.Second

// budgetRecheck is how often a cluster held by a disruption budget asks
// again without being woken.
const budgetRecheck = 30 * time.Second

// drainRecheck is how often a cluster with nodes under drain steps their
// drains again.
const drainRecheck = 2 * time.Second

// RequeueAfter is how soon the run must be looked at again when no watch
// event may come: the next unreachable timeout, the retry of a cluster whose
// work failed (backing off from 1 s, doubling with the time it has failed,
// to maxRetryInterval), or the end of the startup grace. Zero means nothing
// is due.
func RequeueAfter(in Input) time.Duration {
	var next time.Duration
	due := func(d time.Duration) {
		if d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	c := in.Cluster
	if _, failed := failure(in, c); terminal(c) || failed && !deleting(in) {
		return 0 // its status is written now; nothing more is due
	}
	if since := unreachableSince(in, c); !since.IsZero() {
		due(since.Add(in.UnreachableTimeout).Sub(in.Now))
	}
	if inStartupGrace(in, c) {
		due(in.ConnectingGraceUntil.Sub(in.Now))
	}
	if !c.StartRecheck.IsZero() && c.Engaged {
		due(max(time.Second, c.StartRecheck.Sub(in.Now))) // no event comes for a pod that never starts
	}
	if g := in.Spec.Gates; g != nil && g.ProgressDeadline != nil && c.Engaged {
		if t, ok := c.State.GroupDeadline(g.ProgressDeadline.Duration); ok {
			due(max(time.Second, t.Sub(in.Now)))
		}
	}
	if !c.LostRecheck.IsZero() && c.Engaged {
		due(max(time.Second, c.LostRecheck.Sub(in.Now))) // a lost node's bound ends with no event
	}
	if !c.HealthRecheck.IsZero() && c.Engaged {
		due(max(10*time.Millisecond, c.HealthRecheck.Sub(in.Now))) // a node turning Ready sends no event the hub watches
	}
	if drainsGoOn(in) {
		// An eviction's progress (a pod gone, a PodDisruptionBudget
		// allowing) sends no event the hub watches: the drain is stepped
		// again this often, and its timeout bounds it.
		due(drainRecheck)
	}
	if c.BudgetHold != "" {
		// The ledger wakes a held run when room frees; this bounds a
		// wake that never comes (room freed by a budget's deletion
		// while the hub restarted).
		due(budgetRecheck)
	}
	if held, opens, _ := windowWait(in); held {
		due(max(time.Second, opens.Sub(in.Now))) // a window opens with no event
	}
	if until := soakingUntil(in); !until.IsZero() && c.Engaged {
		due(max(10*time.Millisecond, until.Sub(in.Now))) // a soak ends with no event
	}
	if c.Error != nil {
		since := failingSince(in, c)
		due(min(max(time.Second, in.Now.Sub(since)), maxRetryInterval, since.Add(in.MemberErrorTimeout).Sub(in.Now)))
	}
	if at, ok := DeletionDeadline(in); ok {
		// A Job held by someone else's finalizer sends no event at the
		// deadline; its deletion is retried at least this often.
		due(max(time.Second, min(at.Sub(in.Now), maxRetryInterval)))
	}
	return next
}
