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
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/text"
)

// approvalStage is where a run with spec.approval stands.
type approvalStage int

const (
	// notGated: no spec.approval, or it was approved: every cluster may
	// start.
	notGated approvalStage = iota
	// canaryRunning: the canary clusters run; the others wait.
	canaryRunning
	// awaitingDecision: the canary ended; the others wait for a person
	// until the deadline.
	awaitingDecision
	// refused: rejected, or no decision before the deadline: the run
	// stops.
	refused
)

// gate is a run's approval gate as of now.
type gate struct {
	stage approvalStage
	// canary names the canary clusters (nil when notGated).
	canary map[string]bool
	// deadline is when awaitingDecision times out.
	deadline time.Time
	// reason and message say why the run was refused, or, for the
	// Approved condition, where it stands.
	reason, message string
}

// approvalGate decides where the run's approval stands: a decision settles
// it; without one, the canary runs, then the run waits for a person until
// spec.approval.timeout after the canary ended, and is refused past it, so
// that a run nobody looks at still ends.
func approvalGate(in Input) gate {
	a := in.Spec.Approval
	if a == nil {
		return gate{stage: notGated}
	}
	if d := a.Decision; d != nil {
		if d.Approved {
			return gate{stage: notGated, reason: fleetv1.ReasonApproved, message: decidedMessage("approved", d)}
		}
		return gate{stage: refused, reason: fleetv1.ReasonRejected, message: decidedMessage("rejected", d)}
	}
	g := gate{stage: canaryRunning, canary: canaryOf(in), reason: fleetv1.ReasonCanaryRunning}
	if len(in.Missing) == 0 && !slices.ContainsFunc(in.Runs, func(r MemberRun) bool { return !g.canary[r.Cluster] }) {
		// Every cluster is in the canary: no one is left to hold, and a
		// run that ran everywhere must not wait for a person to fail it.
		return gate{stage: notGated, reason: fleetv1.ReasonNothingToApprove,
			message: fmt.Sprintf("every one of the %d clusters is in the canary: nothing waits for an approval", len(in.Runs))}
	}
	ended, last := true, time.Time{}
	for _, r := range in.Runs {
		if !g.canary[r.Cluster] {
			continue
		}
		ended = ended && finished(r.Row)
		if t := r.Row.CompletionTime; t != nil && t.After(last) {
			last = t.Time
		}
	}
	if last.IsZero() {
		last = in.Created // no canary cluster, or none that ran
	}
	if !ended {
		g.message = "the canary runs before the approval: " + namesOf(sortedNames(g.canary))
		return g
	}
	g.deadline = last.Add(approvalTimeout(a))
	if !in.Now.Before(g.deadline) {
		return gate{stage: refused, reason: fleetv1.ReasonApprovalTimeout, message: fmt.Sprintf(
			"no decision within %s (spec.approval.timeout) of the canary's end at %s", approvalTimeout(a), last.UTC().Format(time.RFC3339))}
	}
	g.stage, g.reason = awaitingDecision, fleetv1.ReasonAwaitingApproval
	g.message = fmt.Sprintf("the canary ended (%s); approve with `kubectl fleetjob approve NAME` or reject with `kubectl fleetjob reject NAME --reason ...` by %s, when the run fails ApprovalTimeout",
		canarySummary(in, g.canary), g.deadline.UTC().Format(time.RFC3339))
	return g
}

// holds tells whether the gate keeps cluster from being admitted now.
func (g gate) holds(cluster string) bool {
	return (g.stage == canaryRunning || g.stage == awaitingDecision) && !g.canary[cluster]
}

// canaryOf names the canary clusters: the first canaryClusters in name
// order (in.Runs is sorted), or those whose registration labels match
// canarySelector.
func canaryOf(in Input) map[string]bool {
	a := in.Spec.Approval
	canary := map[string]bool{}
	if a.CanaryClusters != nil {
		for _, r := range in.Runs[:min(len(in.Runs), int(*a.CanaryClusters))] {
			canary[r.Cluster] = true
		}
		return canary
	}
	selector, err := metav1.LabelSelectorAsSelector(a.CanarySelector)
	if err != nil {
		return canary // the API server validated it: no canary, the run waits for a person
	}
	for _, r := range in.Runs {
		if selector.Matches(labels.Set(r.Labels)) {
			canary[r.Cluster] = true
		}
	}
	return canary
}

// canarySummary counts how the canary clusters ended.
func canarySummary(in Input, canary map[string]bool) string {
	clusters, failedClusters, failedNodes := 0, 0, int32(0)
	for _, r := range in.Runs {
		if !canary[r.Cluster] {
			continue
		}
		clusters++
		failedNodes += r.Row.Nodes.Failed
		if r.Row.Phase == fleetv1.ClusterFailed {
			failedClusters++
		}
	}
	return fmt.Sprintf("%d clusters, %d failed, %d failed nodes", clusters, failedClusters, failedNodes)
}

func decidedMessage(verb string, d *fleetv1.ApprovalDecision) string {
	msg := verb + " by " + d.User
	if d.Reason != "" {
		msg += ": " + d.Reason
	}
	return msg
}

// approvalTimeout is spec.approval.timeout, defaulted.
func approvalTimeout(a *fleetv1.Approval) time.Duration {
	if a.Timeout != nil && a.Timeout.Duration > 0 {
		return a.Timeout.Duration
	}
	return fleetv1.DefaultApprovalTimeout
}

func sortedNames(set map[string]bool) []string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// setApprovalCondition keeps the Approved condition of a run with
// spec.approval.
func setApprovalCondition(st *fleetv1.ClusterJobStatus, in Input) {
	g := approvalGate(in)
	if in.Spec.Approval == nil {
		return
	}
	status := metav1.ConditionUnknown
	switch g.reason {
	case fleetv1.ReasonApproved, fleetv1.ReasonNothingToApprove:
		status = metav1.ConditionTrue
	case fleetv1.ReasonRejected, fleetv1.ReasonApprovalTimeout:
		status = metav1.ConditionFalse
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: fleetv1.ConditionApproved, Status: status, Reason: g.reason,
		Message: text.Truncate(g.message, 1024), ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(in.Now)})
}
