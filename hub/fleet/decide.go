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

// Package fleet holds the hub's pure decisions over a whole run: which
// clusters may start under maxConcurrentClusters, when failureStrategy exit
// stops every cluster, and the ClusterJob's status summed from its
// MemberRuns. It sees each cluster only through its MemberRun; hub/member
// decides inside a cluster. Nothing here does I/O.
package fleet

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/budget"
	"github.com/fleetjob/fleetjob/pkg/text"
)

// MemberRun is one cluster's run as the fleet sees it, read from its
// MemberRun object (fleetv1.MemberRun); spoke.Run is the same run as the
// member sees it.
type MemberRun struct {
	// Cluster is the member cluster's name.
	Cluster string
	// Admitted is the MemberRun's spec.admitted.
	Admitted bool
	// AcceptedFailures is the MemberRun's spec.acceptedFailures.
	AcceptedFailures int32
	// Row is the MemberRun's status as a row; only its name is set until
	// the member controller first writes it.
	Row fleetv1.ClusterStatus
	// Legacy tells that Row is the cluster's row in the ClusterJob's
	// deprecated status.clusters, written by an older hub: its MemberRun
	// has not written its own yet.
	Legacy bool
	// Labels are the cluster's registration labels, set only for a run
	// whose spec.approval.canarySelector needs them.
	Labels map[string]string
}

// Input is everything Decide and Status look at.
type Input struct {
	Spec *fleetv1.ClusterJobSpec
	// Runs are the run's MemberRuns, sorted by cluster name.
	Runs []MemberRun
	// LeftOut are the clusters that matched beyond MaxClusters when the
	// run's clusters were selected (this reconcile only).
	LeftOut []string
	Now     time.Time
	// Created is when the ClusterJob was created.
	Created time.Time
	// EmptySelectionGrace is how long a run that selects no cluster waits
	// for registrations before it fails.
	EmptySelectionGrace time.Duration
	// Accepted are the run-wide failures accepted so far (the ClusterJob's
	// status.acceptedFailures).
	Accepted fleetv1.AcceptedFailures
	// Refused, when set, is why the run cannot start: a retry of a run that
	// cannot be retried (RetryTargets). It fails at once.
	Refused string
	// Unbound tells that the run's namespace has no ClusterSetBinding
	// (tenancy on): it may select no cluster.
	Unbound bool
	// RetryOf is the run a retry runs again, once its clusters are chosen.
	RetryOf *fleetv1.RetrySource
	// BudgetSuspended tells that a failure budget suspended the run and no
	// one resumed it yet, as the last status says (its
	// FailureBudgetExceeded condition is True).
	BudgetSuspended bool
	// Selected are the clusters the run selected (status.selectedClusters),
	// empty until they are recorded.
	Selected []string
	// Missing are the selected clusters whose MemberRun does not exist
	// after this reconcile's creates; CreateError says why the last ones
	// failed. No cluster is admitted while any is missing.
	Missing     []string
	CreateError string
	// CreatingSince is when MemberRuns began to be missing (the
	// MemberRunsCreated condition's last transition to False), and
	// MemberErrorTimeout how long they may: the run fails then.
	CreatingSince      time.Time
	MemberErrorTimeout time.Duration
}

// Decision is what the fleet controller should do now.
type Decision struct {
	// Admit names the clusters whose MemberRun is to be admitted now: they
	// may start.
	Admit []string
	// Halt, when set, is to be set on every MemberRun not yet halted:
	// failureStrategy exit stops the run.
	Halt *fleetv1.Halt
	// Suspend, when set, is why the run is to be suspended now (spec.suspend
	// set to true): a failure budget with onExceeded Suspend is exceeded,
	// in SuspendScope: ScopeRun for a run-wide budget, ScopeCluster for a
	// cluster's own.
	Suspend      string
	SuspendScope string
	// Accept, when set, is what a person accepted by resuming a run a
	// failure budget suspended: each MemberRun named in Accept.Runs gets
	// spec.acceptedFailures, the ClusterJob status.acceptedFailures.
	Accept *Acceptance
	// RequeueAfter is when to look again though no MemberRun changes: the
	// end of the wait for a first cluster.
	RequeueAfter time.Duration
}

// Acceptance is the failures a resume accepts.
type Acceptance struct {
	// Runs maps a held cluster to the failed nodes it accepts.
	Runs map[string]int32
	// Fleet is the run's accepted failures.
	Fleet fleetv1.AcceptedFailures
}

// Decide returns the actions for this reconcile.
func Decide(in Input) Decision {
	d := Decision{}
	if in.Refused != "" {
		return d
	}
	if len(in.Missing) > 0 {
		// All or nothing: a cluster admitted now could run while another
		// selected one never gets its MemberRun.
		if createTimedOut(in) {
			d.Halt = &fleetv1.Halt{Reason: fleetv1.ReasonMemberRunsNotCreated, Message: text.Truncate(notCreatedMessage(in), fleetv1.MaxClusterMessageLength)}
			return d
		}
		d.RequeueAfter = createRetry(in)
		return d
	}
	if len(in.Runs) == 0 {
		d.RequeueAfter = max(0, in.Created.Add(in.EmptySelectionGrace).Sub(in.Now))
	}
	if cause := stopCause(in); cause != "" {
		d.Halt = &fleetv1.Halt{Reason: fleetv1.ReasonStopped, Message: text.Truncate(cause, fleetv1.MaxClusterMessageLength)}
		return d
	}
	if cause := budgetStopCause(in); cause != "" {
		d.Halt = &fleetv1.Halt{Reason: fleetv1.ReasonFailureBudgetExceeded, Message: text.Truncate(cause, fleetv1.MaxClusterMessageLength)}
		return d
	}
	approval := approvalGate(in)
	if approval.stage == refused {
		d.Halt = &fleetv1.Halt{Reason: approval.reason, Message: text.Truncate(approval.message, fleetv1.MaxClusterMessageLength)}
		return d
	}
	if approval.stage == awaitingDecision {
		d.RequeueAfter = approval.deadline.Sub(in.Now) // the deadline passes with no event
	}
	suspended := ptr.Deref(in.Spec.Suspend, false)
	if in.BudgetSuspended && !suspended && onExceeded(in.Spec) == fleetv1.OnExceededSuspend {
		d.Accept = accept(in)
		in = accepted(in, d.Accept)
	}
	if cause, scope := suspendCause(in); cause != "" {
		if !suspended {
			d.Suspend, d.SuspendScope = cause, scope
		}
		return d
	}
	if suspended {
		return d
	}
	if until := soakingUntil(in); !until.IsZero() {
		d.RequeueAfter = until.Sub(in.Now) // a soak ends with no event
		return d
	}
	slots := freeSlots(in)
	for _, r := range in.Runs {
		if r.Admitted || finished(r.Row) || approval.holds(r.Cluster) {
			continue
		}
		// Clusters take their turn in name order: one admitted but not
		// ready yet keeps its place rather than let a later one overtake.
		if slots == 0 {
			break
		}
		slots--
		d.Admit = append(d.Admit, r.Cluster)
	}
	return d
}

// maxCreateRetry caps the backoff of MemberRun creates that fail: a quota
// or a webhook fixed by a person is picked up within this long, as for a
// member's own errors, and a refusal that lasts costs two calls a minute.
const maxCreateRetry = 30 * time.Second

// createRetry is when to create the missing MemberRuns again: backing off
// from 1 s, doubling with the time they have been missing, to
// maxCreateRetry, and no later than the timeout.
func createRetry(in Input) time.Duration {
	since := in.Now.Sub(in.CreatingSince)
	return max(10*time.Millisecond, min(max(time.Second, since), maxCreateRetry, in.CreatingSince.Add(in.MemberErrorTimeout).Sub(in.Now)))
}

// createTimedOut tells whether selected clusters have been missing their
// MemberRun for longer than the member error timeout: the run fails.
func createTimedOut(in Input) bool {
	return len(in.Missing) > 0 && !in.CreatingSince.IsZero() && in.Now.Sub(in.CreatingSince) >= in.MemberErrorTimeout
}

// CreatingSince is when MemberRuns began to be missing, as the last
// status's MemberRunsCreated condition says; now when it does not say so.
func CreatingSince(prev []metav1.Condition, now time.Time) time.Time {
	if c := meta.FindStatusCondition(prev, fleetv1.ConditionMemberRunsCreated); c != nil && c.Status == metav1.ConditionFalse {
		return c.LastTransitionTime.Time
	}
	return now
}

// notCreatedMessage names the clusters whose MemberRun could not be
// created, and why.
func notCreatedMessage(in Input) string {
	return fmt.Sprintf("the MemberRuns of %s could not be created within %s (--member-error-timeout): %s; no cluster started",
		namesOf(in.Missing), in.MemberErrorTimeout, in.CreateError)
}

// namesOf names a few clusters and counts the rest.
func namesOf(clusters []string) string {
	names := clusters[:min(len(clusters), 5)]
	more := ""
	if len(clusters) > len(names) {
		more = fmt.Sprintf(" and %d more", len(clusters)-len(names))
	}
	return fmt.Sprintf("%d clusters (%s%s)", len(clusters), strings.Join(names, ", "), more)
}

// soakingUntil is when spec.gates.betweenClusters.soak lets the next
// cluster start after the last one that finished; zero when nothing waits
// for it: no soak, no cluster finished yet, or none left to start.
func soakingUntil(in Input) time.Time {
	g := in.Spec.Gates
	if g == nil || g.BetweenClusters == nil || g.BetweenClusters.Soak.Duration <= 0 {
		return time.Time{}
	}
	waiting := slices.ContainsFunc(in.Runs, func(r MemberRun) bool { return !r.Admitted && !finished(r.Row) })
	var last time.Time
	for _, r := range in.Runs {
		if t := r.Row.CompletionTime; t != nil && started(r.Row) && t.After(last) {
			last = t.Time
		}
	}
	if until := last.Add(g.BetweenClusters.Soak.Duration); waiting && !last.IsZero() && in.Now.Before(until) {
		return until
	}
	return time.Time{}
}

// freeSlots is how many more clusters may be admitted under
// maxConcurrentClusters; -1 means no limit. A cluster holds a slot from its
// admission until it finishes, including while unreachable: its Jobs may
// still run.
func freeSlots(in Input) int {
	if in.Spec.ClusterRollout == nil {
		return -1
	}
	busy := 0
	for _, r := range in.Runs {
		if (r.Admitted || started(r.Row)) && !finished(r.Row) {
			busy++
		}
	}
	return max(0, int(in.Spec.ClusterRollout.MaxConcurrentClusters)-busy)
}

// stopCause names the first cluster whose failure stops the fleet under
// failureStrategy exit, and how it failed; "" when nothing stops it. A
// cluster that ended because of the stop is not a cause.
func stopCause(in Input) string {
	if in.Spec.FailureStrategy != fleetv1.FailureStrategyExit {
		return ""
	}
	for _, r := range in.Runs {
		switch {
		case r.Row.Nodes.Failed > 0:
			return "a node failed in cluster " + r.Cluster
		case r.Row.Phase == fleetv1.ClusterFailed && r.Row.Reason != fleetv1.ReasonStopped:
			return "cluster " + r.Cluster + " failed: " + r.Row.Reason
		}
	}
	return ""
}

// onExceeded is the spec's failurePolicy.onExceeded, "" without a policy.
func onExceeded(spec *fleetv1.ClusterJobSpec) fleetv1.OnExceeded {
	if spec.FailurePolicy == nil {
		return ""
	}
	return cmp.Or(spec.FailurePolicy.OnExceeded, fleetv1.OnExceededStop)
}

// failures counts the run's failed nodes, the nodes planned so far, and
// the clusters that failed; a cluster that ended because the fleet stopped
// it is not a failure.
func failures(runs []MemberRun) (nodes, planned, clusters int) {
	for _, r := range runs {
		nodes += int(r.Row.Nodes.Failed)
		planned += int(r.Row.Nodes.Total - r.Row.Nodes.Skipped)
		if r.Row.Phase == fleetv1.ClusterFailed && r.Row.Reason != fleetv1.ReasonStopped {
			clusters++
		}
	}
	return nodes, planned, clusters
}

// runBudgetExceeded names the run-wide budget (maxFailedNodes,
// maxFailedClusters) exceeded past the failures accepted, "" when none is.
func runBudgetExceeded(in Input, accepted fleetv1.AcceptedFailures) string {
	fp := in.Spec.FailurePolicy
	if fp == nil {
		return ""
	}
	nodes, planned, clusters := failures(in.Runs)
	if nodes > int(accepted.Nodes) {
		if b, ok, err := budget.Resolve(budget.Nodes, fp.MaxFailedNodes, planned, nodes); err != nil {
			return err.Error()
		} else if ok && b.Exceeded() {
			return b.Describe("nodes planned so far")
		}
	}
	if clusters > int(accepted.Clusters) {
		if b, ok, err := budget.Resolve(budget.Clusters, fp.MaxFailedClusters, len(in.Runs), clusters); err != nil {
			return err.Error()
		} else if ok && b.Exceeded() {
			return b.Describe("clusters")
		}
	}
	return ""
}

// budgetStopCause names the run-wide budget whose onExceeded Stop stops
// every cluster, "" when none.
func budgetStopCause(in Input) string {
	if onExceeded(in.Spec) != fleetv1.OnExceededStop {
		return ""
	}
	return runBudgetExceeded(in, fleetv1.AcceptedFailures{})
}

// heldCluster tells whether a cluster's own budget with onExceeded Suspend
// holds it past the failures accepted: its row says so while it runs.
func heldCluster(r MemberRun) bool {
	return r.Row.Reason == fleetv1.ReasonFailureBudgetExceeded && !finished(r.Row) && r.Row.Nodes.Failed > r.AcceptedFailures
}

// The scopes of a budget.
const (
	ScopeRun     = "run"
	ScopeCluster = "cluster"
)

// suspendCause names the budget with onExceeded Suspend that is exceeded
// past the failures accepted, the run's or a cluster's, and its scope; ""
// when none.
func suspendCause(in Input) (cause, scope string) {
	if onExceeded(in.Spec) != fleetv1.OnExceededSuspend {
		return "", ""
	}
	if cause := runBudgetExceeded(in, in.Accepted); cause != "" {
		return cause, ScopeRun
	}
	for _, r := range in.Runs {
		if heldCluster(r) {
			return r.Row.Message, ScopeCluster
		}
	}
	return "", ""
}

// accept is what a resume accepts: every held cluster's failed nodes, and
// the run's failures.
func accept(in Input) *Acceptance {
	a := &Acceptance{Runs: map[string]int32{}}
	for _, r := range in.Runs {
		if heldCluster(r) {
			a.Runs[r.Cluster] = r.Row.Nodes.Failed
		}
	}
	nodes, _, clusters := failures(in.Runs)
	a.Fleet = fleetv1.AcceptedFailures{Nodes: max(in.Accepted.Nodes, int32(nodes)), Clusters: max(in.Accepted.Clusters, int32(clusters))}
	return a
}

// accepted is in as it is once a is written.
func accepted(in Input, a *Acceptance) Input {
	runs := slices.Clone(in.Runs)
	for i, r := range runs {
		if n, ok := a.Runs[r.Cluster]; ok {
			runs[i].AcceptedFailures = max(r.AcceptedFailures, n)
		}
	}
	in.Runs, in.Accepted, in.BudgetSuspended = runs, a.Fleet, false
	return in
}

// started tells whether a cluster's run began: its plan is frozen.
func started(row fleetv1.ClusterStatus) bool { return row.StartTime != nil }

// finished tells whether a cluster has nothing left to do: it completed, it
// failed, or a stop ended it before it started.
func finished(row fleetv1.ClusterStatus) bool {
	return row.Phase.IsFinished() || row.Reason == fleetv1.ReasonStopped
}
