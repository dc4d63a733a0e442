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
	"github.com/fleetjob/fleetjob/pkg/text"
)

// MaxNotableClusters is the most rows a ClusterJob's status carries: the
// rest are in the MemberRuns, so a 2,000-cluster run's status stays small.
const MaxNotableClusters = 20

// Status returns the ClusterJob status summed from its MemberRuns' rows,
// given the last written one. Times are kept from prev.
func Status(in Input, d Decision, prev *fleetv1.ClusterJobStatus, generation int64) fleetv1.ClusterJobStatus {
	st := fleetv1.ClusterJobStatus{
		ObservedGeneration: generation,
		Conditions:         slices.Clone(prev.Conditions),
		StartTime:          prev.StartTime,
		CompletionTime:     prev.CompletionTime,
	}
	st.Summary = summarize(in.Runs, len(in.Missing))
	st.Phase = phase(in)
	st.SelectedClusters = prev.SelectedClusters
	if slices.ContainsFunc(in.Runs, func(r MemberRun) bool { return r.Legacy }) {
		// An older hub's rows stay until every MemberRun wrote its own:
		// they are the only record of those clusters until then.
		st.Clusters = prev.Clusters
	}
	now := metav1.NewTime(in.Now)
	if st.StartTime == nil && st.Phase != fleetv1.PhasePending {
		st.StartTime = earliestStart(in.Runs, now)
	}
	if st.CompletionTime == nil && st.Phase.IsFinished() {
		st.CompletionTime = &now
	}
	st.NotableClusters = notable(in.Runs)
	st.AcceptedFailures = prev.AcceptedFailures
	st.RetryOf = prev.RetryOf
	if st.RetryOf == nil {
		st.RetryOf = in.RetryOf
	}
	if d.Accept != nil {
		st.AcceptedFailures = &d.Accept.Fleet
		in = accepted(in, d.Accept)
	}
	setConditions(&st, in, d)
	setBudgetCondition(&st, in, d)
	setApprovalCondition(&st, in)
	return st
}

// setBudgetCondition keeps the FailureBudgetExceeded condition. A run
// whose failurePolicy suspends has it True while a budget is exceeded past
// the failures accepted and False (Resumed) once a person resumed it; a
// run-wide Stop budget sets it True for good.
func setBudgetCondition(st *fleetv1.ClusterJobStatus, in Input, d Decision) {
	cond := metav1.Condition{Type: fleetv1.ConditionFailureBudgetExceeded, ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(in.Now)}
	if onExceeded(in.Spec) != fleetv1.OnExceededSuspend {
		if d.Halt != nil && d.Halt.Reason == fleetv1.ReasonFailureBudgetExceeded {
			cond.Status, cond.Reason = metav1.ConditionTrue, fleetv1.ReasonFailureBudgetExceeded
			cond.Message = text.Truncate("stopping the run: "+d.Halt.Message, 1024)
			meta.SetStatusCondition(&st.Conditions, cond)
		}
		return
	}
	switch cause, _ := suspendCause(in); {
	case cause != "" && !st.Phase.IsFinished():
		cond.Status, cond.Reason = metav1.ConditionTrue, fleetv1.ReasonFailureBudgetExceeded
		cond.Message = text.Truncate(cause+"; set spec.suspend to false to accept these failures and go on", 1024)
	case d.Accept != nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, fleetv1.ReasonResumed
		cond.Message = fmt.Sprintf("resumed: %d failed nodes and %d failed clusters accepted across the run", d.Accept.Fleet.Nodes, d.Accept.Fleet.Clusters)
	default:
		return
	}
	meta.SetStatusCondition(&st.Conditions, cond)
}

// notable picks the rows a person looks at first: failed, then running,
// then pending, then completed, each by name. They carry no failed-node
// samples (a row's message names the first failed nodes, its MemberRun up
// to 500), so that 20 rows at their longest stay about 20 KiB.
func notable(runs []MemberRun) []fleetv1.ClusterStatus {
	rank := func(r MemberRun) int {
		switch r.Row.Phase {
		case fleetv1.ClusterFailed:
			return 0
		case fleetv1.ClusterRunning:
			return 1
		case fleetv1.ClusterCompleted:
			return 3
		}
		return 2
	}
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b MemberRun) int { return cmp.Or(rank(a)-rank(b), strings.Compare(a.Cluster, b.Cluster)) })
	var rows []fleetv1.ClusterStatus
	for _, r := range sorted[:min(len(sorted), MaxNotableClusters)] {
		row := r.Row
		row.Name = r.Cluster
		row.FailedNodes = nil
		rows = append(rows, row)
	}
	return rows
}

// summarize counts the runs, and the selected clusters whose MemberRun is
// still missing (as pending).
func summarize(runs []MemberRun, missing int) fleetv1.Summary {
	var s fleetv1.Summary
	s.Clusters.Total = int32(missing)
	for _, run := range runs {
		r := run.Row
		s.Clusters.Total++
		switch r.Phase {
		case fleetv1.ClusterRunning:
			s.Clusters.Running++
		case fleetv1.ClusterCompleted:
			s.Clusters.Completed++
		case fleetv1.ClusterFailed:
			s.Clusters.Failed++
		}
		if !r.Reachable {
			s.Clusters.Unreachable++
		}
		s.Nodes.Total += r.Nodes.Total
		s.Nodes.Pending += r.Nodes.Pending
		s.Nodes.Running += r.Nodes.Running
		s.Nodes.Succeeded += r.Nodes.Succeeded
		s.Nodes.Failed += r.Nodes.Failed
		s.Nodes.Skipped += r.Nodes.Skipped
	}
	s.ClusterProgress = fmt.Sprintf("%d/%d", s.Clusters.Completed+s.Clusters.Failed, s.Clusters.Total)
	s.NodeProgress = s.Nodes.Progress()
	return s
}

// ProgressMessage is the run's progress for a person: clusters finished,
// then nodes succeeded and failed, skipped ones counted apart, or that no
// node ran when every node was skipped.
func ProgressMessage(s fleetv1.Summary) string {
	n := s.Nodes
	nodes := "no node ran"
	if n.NotSkipped() > 0 || n.Skipped == 0 {
		nodes = fmt.Sprintf("%d/%d nodes succeeded, %d failed", n.Succeeded, n.NotSkipped(), n.Failed)
	}
	if n.Skipped > 0 {
		nodes += fmt.Sprintf(", %d skipped", n.Skipped)
	}
	return s.ClusterProgress + " clusters finished, " + nodes
}

// maxFailuresNamed is how many failed clusters a run's Failed condition
// names, and maxFailureNote how much of each one's message it quotes: the
// rest are in their MemberRuns.
const (
	maxFailuresNamed = 3
	maxFailureNote   = 200
)

// failuresMessage names the failed clusters of a run and why each failed,
// those whose own failure ended them first and the ones a stop ended
// after: a run whose template a set refused reads PodSecurityViolation,
// not only counts.
func failuresMessage(runs []MemberRun) string {
	var failed []MemberRun
	for _, r := range runs {
		if r.Row.Phase == fleetv1.ClusterFailed {
			failed = append(failed, r)
		}
	}
	if len(failed) == 0 {
		return ""
	}
	stopped := func(r MemberRun) int {
		if r.Row.Reason == fleetv1.ReasonStopped {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(failed, func(a, b MemberRun) int { return cmp.Or(stopped(a)-stopped(b), strings.Compare(a.Cluster, b.Cluster)) })
	named := make([]string, 0, maxFailuresNamed)
	for _, r := range failed[:min(len(failed), maxFailuresNamed)] {
		why := r.Row.Reason
		if r.Row.Message != "" {
			why += ": " + text.Truncate(r.Row.Message, maxFailureNote)
		}
		named = append(named, fmt.Sprintf("%s (%s)", r.Cluster, why))
	}
	more := ""
	if len(failed) > len(named) {
		more = fmt.Sprintf(" and %d more", len(failed)-len(named))
	}
	return "; failed: " + strings.Join(named, ", ") + more
}

// phase is the run's phase: done when every cluster is done (or stopped
// before it started), Running once any started.
func phase(in Input) fleetv1.Phase {
	if in.Refused != "" || createTimedOut(in) {
		return fleetv1.PhaseFailed
	}
	if len(in.Runs) == 0 && len(in.Missing) > 0 {
		return fleetv1.PhasePending
	}
	if len(in.Runs) == 0 {
		// Registrations applied with the ClusterJob may not be seen yet;
		// after the grace, a run with nothing to run did not do its job.
		if in.Now.Sub(in.Created) < in.EmptySelectionGrace {
			return fleetv1.PhasePending
		}
		return fleetv1.PhaseFailed
	}
	done, anyStarted, failed := len(in.Missing) == 0, false, false
	for _, r := range in.Runs {
		done = done && finished(r.Row)
		anyStarted = anyStarted || started(r.Row)
		failed = failed || r.Row.Phase == fleetv1.ClusterFailed
	}
	switch {
	case done && (failed || approvalGate(in).stage == refused):
		return fleetv1.PhaseFailed
	case done:
		return fleetv1.PhaseCompleted
	case anyStarted:
		return fleetv1.PhaseRunning
	}
	return fleetv1.PhasePending
}

func earliestStart(runs []MemberRun, now metav1.Time) *metav1.Time {
	var first *metav1.Time
	for _, r := range runs {
		if t := r.Row.StartTime; t != nil && (first == nil || t.Before(first)) {
			first = t
		}
	}
	if first == nil {
		return &now
	}
	return first
}

// setConditions sets the four conditions from the phase, one function each
// would be overkill: they are one decision seen four ways.
func setConditions(st *fleetv1.ClusterJobStatus, in Input, d Decision) {
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: text.Truncate(msg, 1024),
			ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(in.Now)})
	}
	progress := ProgressMessage(st.Summary)
	switch {
	case in.Refused != "":
		progress = in.Refused
	case createTimedOut(in):
		progress = notCreatedMessage(in)
	case len(in.Runs) == 0 && in.Unbound:
		progress = fmt.Sprintf("no ClusterSetBinding in this namespace within %s of creation: its ClusterJobs may select no cluster until a platform admin binds a cluster set to it (kubectl fleetjob bind SET -n NAMESPACE)", in.EmptySelectionGrace)
		if st.Phase == fleetv1.PhasePending {
			progress = "waiting for a ClusterSetBinding in this namespace: its ClusterJobs may select clusters only of the cluster sets bound to it"
		}
	case len(in.Runs) == 0:
		progress = fmt.Sprintf("no registered cluster matched spec.clusterSelector within %s of creation", in.EmptySelectionGrace)
		if st.Phase == fleetv1.PhasePending {
			progress = "waiting for a registered cluster to match spec.clusterSelector"
		}
	}
	suspended := ptr.Deref(in.Spec.Suspend, false) && !st.Phase.IsFinished()
	switch st.Phase {
	case fleetv1.PhaseCompleted:
		set(fleetv1.ConditionProgressing, metav1.ConditionFalse, fleetv1.ReasonCompleted, progress)
		set(fleetv1.ConditionComplete, metav1.ConditionTrue, fleetv1.ReasonCompleted, progress)
		set(fleetv1.ConditionFailed, metav1.ConditionFalse, fleetv1.ReasonCompleted, progress)
	case fleetv1.PhaseFailed:
		reason := failedReason(st, in, d)
		progress += failuresMessage(in.Runs)
		set(fleetv1.ConditionProgressing, metav1.ConditionFalse, fleetv1.ReasonFailed, progress)
		set(fleetv1.ConditionComplete, metav1.ConditionFalse, fleetv1.ReasonFailed, progress)
		set(fleetv1.ConditionFailed, metav1.ConditionTrue, reason, progress)
	default:
		reason := fleetv1.ReasonRunning
		if st.Phase == fleetv1.PhasePending {
			reason = fleetv1.ReasonPending
		}
		if g := approvalGate(in); !suspended && (g.stage == canaryRunning || g.stage == awaitingDecision) {
			progress += "; " + g.message
		}
		if suspended {
			reason = fleetv1.ReasonSuspended
		} else if until := soakingUntil(in); !until.IsZero() {
			reason = fleetv1.ReasonSoaking
			progress = fmt.Sprintf("%s; Soaking until %s (spec.gates.betweenClusters.soak %s) before the next cluster starts",
				progress, until.UTC().Format(time.RFC3339), in.Spec.Gates.BetweenClusters.Soak.Duration)
		}
		set(fleetv1.ConditionProgressing, metav1.ConditionTrue, reason, progress)
		set(fleetv1.ConditionComplete, metav1.ConditionFalse, reason, progress)
		set(fleetv1.ConditionFailed, metav1.ConditionFalse, reason, progress)
	}
	switch {
	case len(in.Missing) > 0:
		set(fleetv1.ConditionMemberRunsCreated, metav1.ConditionFalse, fleetv1.ReasonCreatingMemberRuns,
			fmt.Sprintf("retrying the MemberRuns of %s; no cluster starts before every one exists: %s", namesOf(in.Missing), in.CreateError))
	case len(in.Selected) > 0:
		set(fleetv1.ConditionMemberRunsCreated, metav1.ConditionTrue, "Created", fmt.Sprintf("every one of the %d selected clusters has its MemberRun", len(in.Selected)))
	}
	if len(in.LeftOut) > 0 {
		set(fleetv1.ConditionClustersLeftOut, metav1.ConditionTrue, fleetv1.ConditionClustersLeftOut, LeftOutMessage(in.LeftOut))
	}
	if suspended {
		set(fleetv1.ConditionSuspended, metav1.ConditionTrue, fleetv1.ReasonSuspended, "spec.suspend is true: no new group starts")
	} else {
		set(fleetv1.ConditionSuspended, metav1.ConditionFalse, "NotSuspended", "")
	}
}

// failedReason is the Failed condition's reason: no cluster, a node failed,
// an exit stop, or else the reason of the first cluster that failed.
func failedReason(st *fleetv1.ClusterJobStatus, in Input, d Decision) string {
	switch {
	case in.Refused != "":
		return fleetv1.ReasonRetryRefused
	case createTimedOut(in):
		return fleetv1.ReasonMemberRunsNotCreated
	case len(in.Runs) == 0 && in.Unbound:
		return fleetv1.ReasonNoBoundClusterSets
	case len(in.Runs) == 0:
		return fleetv1.ReasonNoClusters
	case d.Halt != nil && d.Halt.Reason == fleetv1.ReasonFailureBudgetExceeded:
		return fleetv1.ReasonFailureBudgetExceeded
	case d.Halt != nil && (d.Halt.Reason == fleetv1.ReasonRejected || d.Halt.Reason == fleetv1.ReasonApprovalTimeout):
		return d.Halt.Reason
	case d.Halt != nil && st.Summary.Nodes.Failed > 0:
		return fleetv1.ReasonStopped
	case slices.ContainsFunc(in.Runs, func(r MemberRun) bool { return r.Row.Reason == fleetv1.ReasonFailureBudgetExceeded }):
		return fleetv1.ReasonFailureBudgetExceeded
	case st.Summary.Nodes.Failed > 0:
		return fleetv1.ReasonNodeFailed
	}
	for _, r := range in.Runs {
		if r.Row.Phase == fleetv1.ClusterFailed {
			return r.Row.Reason
		}
	}
	return fleetv1.ReasonFailed
}

// LeftOutMessage says which clusters a run left out, naming a few.
func LeftOutMessage(leftOut []string) string {
	names := leftOut[:min(len(leftOut), 5)]
	more := ""
	if len(leftOut) > len(names) {
		more = fmt.Sprintf(" and %d more", len(leftOut)-len(names))
	}
	return fmt.Sprintf("%d clusters matched spec.clusterSelector beyond the %d a run runs in and are left out: %s%s; narrow the selector or split the run",
		len(leftOut), fleetv1.MaxClusters, strings.Join(names, ", "), more)
}
