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

package member

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/text"
	"github.com/fleetjob/fleetjob/spoke"
)

// Status returns the cluster's row for what was observed, given its last
// written one (Cluster.Previous). A terminal row is kept as it was: a
// finished cluster does not become unfinished because it went away. The row
// lists up to MaxMemberRunFailedNodes failed nodes.
func Status(in Input, d Decision) fleetv1.ClusterStatus {
	return clusterRow(in, d, in.Cluster)
}

// clusterRow is one cluster's row.
func clusterRow(in Input, d Decision, c Cluster) fleetv1.ClusterStatus {
	row := fleetv1.ClusterStatus{Name: c.Name, Reachable: c.Engaged && c.Reachable}
	if since := unreachableSince(in, c); !since.IsZero() {
		row.UnreachableSince = &metav1.Time{Time: since}
	}
	if since := failingSince(in, c); !since.IsZero() {
		row.FailingSince = &metav1.Time{Time: since}
	}
	if c.Engaged && c.State.Planned {
		fillProgress(&row, c.State)
	} else if c.Previous != nil {
		keepProgress(&row, c.Previous)
	}
	row.Phase, row.Reason, row.Message = clusterPhase(in, d, c, row)
	if p := c.Previous; p != nil {
		row.StartTime, row.CompletionTime, row.ClusterID = p.StartTime, p.CompletionTime, p.ClusterID
	}
	if row.ClusterID == "" && c.Engaged && c.State.Planned {
		row.ClusterID = c.ClusterID // the cluster the plan was frozen in
	}
	now := metav1.NewTime(in.Now)
	if row.StartTime == nil && started(c) {
		row.StartTime = &now
	}
	if row.CompletionTime == nil && row.Phase.IsFinished() {
		row.CompletionTime = &now
	}
	return row
}

// clusterPhase decides a row's phase, reason and message. The first matching
// case wins; terminal phases are sticky.
func clusterPhase(in Input, d Decision, c Cluster, row fleetv1.ClusterStatus) (fleetv1.ClusterPhase, string, string) {
	unreachable := func(phase fleetv1.ClusterPhase) (fleetv1.ClusterPhase, string, string) {
		return phase, c.Reason, text.Truncate(c.Message, fleetv1.MaxClusterMessageLength)
	}
	switch {
	case c.Previous != nil && c.Previous.Phase.IsFinished():
		return c.Previous.Phase, c.Previous.Reason, c.Previous.Message
	case failing(in, c) && !deleting(in):
		f, _ := failure(in, c)
		return fleetv1.ClusterFailed, f.reason, text.Truncate(f.message, fleetv1.MaxClusterMessageLength)
	case failing(in, c):
		// Not terminal until the Jobs of its failed nodes are gone: a
		// terminal row is never looked at again.
		f, _ := failure(in, c)
		msg := f.message
		if c.Error != nil {
			msg = retrying + c.Error.Error()
		}
		return pendingOrRunning(c), f.reason, text.Truncate(msg, fleetv1.MaxClusterMessageLength)
	case c.Engaged && c.State.Finished() && !deleting(in):
		if over := budgetExceeded(in); over != "" {
			return fleetv1.ClusterFailed, fleetv1.ReasonFailureBudgetExceeded, text.Truncate(over, fleetv1.MaxClusterMessageLength)
		}
		if row.Nodes.Failed > 0 {
			return fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, failedMessage(row)
		}
		return fleetv1.ClusterCompleted, fleetv1.ReasonCompleted, row.Nodes.Outcome()
	case d.Stopped && finished(in):
		if over := budgetExceeded(in); over != "" && in.Halt == nil {
			return fleetv1.ClusterFailed, fleetv1.ReasonFailureBudgetExceeded, text.Truncate(over, fleetv1.MaxClusterMessageLength)
		}
		if row.Nodes.Failed > 0 {
			return fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, failedMessage(row)
		}
		if started(c) {
			return fleetv1.ClusterFailed, fleetv1.ReasonStopped, text.Truncate(stopPrefix(in)+" stopped the run: "+stopCause(in), fleetv1.MaxClusterMessageLength)
		}
		return fleetv1.ClusterPending, fleetv1.ReasonStopped, text.Truncate(stopPrefix(in)+" stopped the run before this cluster started: "+stopCause(in), fleetv1.MaxClusterMessageLength)
	case !c.Engaged || !c.Reachable:
		return unreachable(pendingOrRunning(c))
	case c.Error != nil:
		reason, _ := spoke.ErrorReason(c.Error)
		return pendingOrRunning(c), reason, text.Truncate(retrying+c.Error.Error(), fleetv1.MaxClusterMessageLength)
	case d.Stopped && in.Halt == nil && budgetExceeded(in) != "":
		return fleetv1.ClusterRunning, fleetv1.ReasonFailureBudgetExceeded, text.Truncate("no new group starts: "+budgetExceeded(in), fleetv1.MaxClusterMessageLength)
	case !soakingUntil(in).IsZero():
		return fleetv1.ClusterRunning, fleetv1.ReasonSoaking, fmt.Sprintf("Soaking until %s (spec.gates.soak %s after group %s)",
			soakingUntil(in).UTC().Format(time.RFC3339), in.Spec.Gates.Soak.Duration, in.Cluster.State.Groups[in.Cluster.State.Current()-1].Name)
	case windowHeld(in):
		_, opens, _ := windowWait(in)
		return pendingOrRunning(c), fleetv1.ReasonWaitingForWindow, windowMessage(opens)
	case c.BudgetHold != "" && c.State.Planned && c.State.Current() < len(c.State.Groups):
		return fleetv1.ClusterRunning, fleetv1.ReasonWaitingForBudget, text.Truncate(fmt.Sprintf("Waiting for budget: %d nodes of group %s wait: %s",
			c.BudgetWaiting, c.State.Groups[c.State.Current()].Name, c.BudgetHold), fleetv1.MaxClusterMessageLength)
	case c.Draining > 0 && c.State.Planned && c.State.Current() < len(c.State.Groups):
		msg := fmt.Sprintf("Draining %d nodes of group %s before their Jobs (spec.nodePreparation.drain)", c.Draining, c.State.Groups[c.State.Current()].Name)
		if c.DrainWaiting != "" {
			msg += ": " + c.DrainWaiting
		}
		return fleetv1.ClusterRunning, fleetv1.ReasonDraining, text.Truncate(msg, fleetv1.MaxClusterMessageLength)
	case deleting(in) && done(in):
		return fleetv1.ClusterRunning, fleetv1.ReasonRunning, text.Truncate(fmt.Sprintf("deleting %d Jobs of nodes the hub failed, %s first, before the cluster ends",
			len(c.StartTimedOut), c.StartTimedOut[0]), fleetv1.MaxClusterMessageLength)
	case d.Held:
		return fleetv1.ClusterRunning, fleetv1.ReasonFailureBudgetExceeded, text.Truncate(budgetExceeded(in)+"; the run is suspended until spec.suspend is set back to false, which accepts these failures", fleetv1.MaxClusterMessageLength)
	case !started(c) && ptr.Deref(in.Spec.Suspend, false):
		return fleetv1.ClusterPending, fleetv1.ReasonSuspended, "spec.suspend is true"
	case !started(c) && !in.Admitted && in.Spec.Approval != nil && in.Spec.Approval.Decision == nil:
		return fleetv1.ClusterPending, fleetv1.ReasonWaitingForTurn, "waiting for its turn: the approval after the canary (spec.approval; see the ClusterJob's Approved condition), or a slot under clusterRollout.maxConcurrentClusters"
	case !started(c) && !in.Admitted:
		return fleetv1.ClusterPending, fleetv1.ReasonWaitingForTurn, "waiting for a slot under clusterRollout.maxConcurrentClusters"
	case !started(c):
		return fleetv1.ClusterPending, fleetv1.ReasonPending, "starting"
	}
	if g := c.State.RunningGroup(); g >= 0 && in.Spec.Gates != nil && in.Spec.Gates.NodeHealth != nil {
		if healthy, waiting := c.State.HealthWaits(g); waiting > 0 {
			return fleetv1.ClusterRunning, fleetv1.ReasonRunning, fmt.Sprintf("Waiting for node health: %d of %d in group %s (spec.gates.nodeHealth)",
				healthy, healthy+waiting, c.State.Groups[g].Name)
		}
	}
	return fleetv1.ClusterRunning, fleetv1.ReasonRunning, refusedMessage(c.State)
}

// refusedMessage names, while pods wait to start, the first whose member
// says what refuses it, "" when none does.
func refusedMessage(st spoke.State) string {
	n, refused := st.RefusedBy()
	if refused == 0 {
		return ""
	}
	who := "node " + n.Node + "'s pod waits"
	if refused > 1 {
		who = fmt.Sprintf("%d nodes' pods wait, %s's", refused, n.Node)
	}
	return text.Truncate(fmt.Sprintf("%s: %s: %s", who, n.Reason, n.Message), fleetv1.MaxClusterMessageLength)
}

// stopPrefix names what stopped the run in a stopped cluster's message.
func stopPrefix(in Input) string {
	if in.Halt != nil && in.Halt.Reason == fleetv1.ReasonFailureBudgetExceeded {
		return "a failure budget"
	}
	if in.Halt != nil && (in.Halt.Reason == fleetv1.ReasonRejected || in.Halt.Reason == fleetv1.ReasonApprovalTimeout) {
		return "spec.approval"
	}
	return "failureStrategy exit"
}

func failing(in Input, c Cluster) bool {
	_, ok := failure(in, c)
	return ok
}

func pendingOrRunning(c Cluster) fleetv1.ClusterPhase {
	if started(c) {
		return fleetv1.ClusterRunning
	}
	return fleetv1.ClusterPending
}

// fillProgress copies counts, the current group and a failure sample from
// the cluster's observed state.
func fillProgress(row *fleetv1.ClusterStatus, st spoke.State) {
	row.Groups.Total = int32(len(st.Groups))
	for _, g := range st.Groups {
		if g.Finished() {
			row.Groups.Completed++
			if g.Failed > 0 {
				row.Groups.Failed++
			}
		}
	}
	if len(st.Groups) > 0 {
		cur := currentGroup(st)
		row.CurrentGroup = ptr.To(int32(cur))
		row.CurrentGroupName = text.Truncate(st.Groups[cur].Name, 63)
	}
	// From the groups' counts: a pass over every node only for the groups
	// with failed nodes, whose failures the row lists.
	row.Nodes.Skipped = int32(st.Plan.SkippedCount())
	for _, g := range st.Groups {
		row.Nodes.Pending += int32(g.Pending)
		row.Nodes.Running += int32(g.Running)
		row.Nodes.Succeeded += int32(g.Succeeded)
		row.Nodes.Failed += int32(g.Failed)
		row.Nodes.Skipped += int32(g.Skipped)
	}
	var failed []fleetv1.NodeFailure
	for g := range st.Groups {
		if st.Groups[g].Failed == 0 {
			continue
		}
		for n := range st.GroupNodes(g) {
			if n.Phase != spoke.NodeFailed {
				continue
			}
			msg := n.Message
			if n.Output != "" {
				msg = n.Output
			}
			failed = append(failed, fleetv1.NodeFailure{Node: n.Node, Group: text.Truncate(n.GroupName, 63), Job: n.Job,
				Reason: text.Truncate(n.Reason, 64), Message: text.Truncate(msg, fleetv1.MaxFailureMessageLength), ExitCode: n.ExitCode})
		}
	}
	row.Nodes.Total = row.Nodes.Pending + row.Nodes.Running + row.Nodes.Succeeded + row.Nodes.Failed + row.Nodes.Skipped
	slices.SortFunc(failed, func(a, b fleetv1.NodeFailure) int { return strings.Compare(a.Node, b.Node) })
	row.FailedNodes = failed[:min(len(failed), fleetv1.MaxMemberRunFailedNodes)]
}

// currentGroup is the group running now, else the last one that started.
func currentGroup(st spoke.State) int {
	if g := st.RunningGroup(); g >= 0 {
		return g
	}
	for g := len(st.Groups) - 1; g > 0; g-- {
		if st.Groups[g].Started() {
			return g
		}
	}
	return 0
}

// OnlySucceeded tells whether next differs from prev only by nodes that
// succeeded since: Running down and Succeeded up by as many, the rest of
// the row the same. Such a row may wait a few seconds to be written: on a
// busy member nearly every reconcile is one, and each write costs a
// MemberRun patch, the ClusterJob's reconcile and a write of its status.
// Nothing decides on it: a start (Running up), a failure, a skip, a
// finished group or phase, a message all change more, and Running only
// falling keeps the last written row an upper bound of the nodes disrupted
// (what a restarted hub's budgets count until it observes the run).
func OnlySucceeded(prev, next fleetv1.ClusterStatus) bool {
	finished := prev.Nodes.Running - next.Nodes.Running
	if finished <= 0 || next.Nodes.Succeeded-prev.Nodes.Succeeded != finished {
		return false
	}
	next.Nodes.Running, next.Nodes.Succeeded = prev.Nodes.Running, prev.Nodes.Succeeded
	return equality.Semantic.DeepEqual(prev, next)
}

// keepProgress carries the last known progress of a cluster the hub cannot
// read now.
func keepProgress(row *fleetv1.ClusterStatus, prev *fleetv1.ClusterStatus) {
	row.Groups, row.Nodes = prev.Groups, prev.Nodes
	row.CurrentGroup, row.CurrentGroupName = prev.CurrentGroup, prev.CurrentGroupName
	row.FailedNodes = prev.FailedNodes
}

func failedMessage(row fleetv1.ClusterStatus) string {
	names := make([]string, 0, 3)
	for _, f := range row.FailedNodes[:min(3, len(row.FailedNodes))] {
		names = append(names, f.Node)
	}
	return text.Truncate(fmt.Sprintf("%d of %d nodes failed: %s", row.Nodes.Failed, row.Nodes.NotSkipped(), strings.Join(names, ", ")), fleetv1.MaxClusterMessageLength)
}
