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
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/text"
	"github.com/fleetjob/fleetjob/spoke"
)

// Status returns the ClusterJob status for what was observed, given the last
// written one. Terminal rows and times are kept from prev: a finished
// cluster does not become unfinished because it went away.
func Status(in Input, d Decision, prev *fleetv1.ClusterJobStatus, generation int64) fleetv1.ClusterJobStatus {
	st := fleetv1.ClusterJobStatus{
		ObservedGeneration: generation,
		Conditions:         slices.Clone(prev.Conditions),
		StartTime:          prev.StartTime,
		CompletionTime:     prev.CompletionTime,
	}
	for _, c := range in.Clusters {
		st.Clusters = append(st.Clusters, clusterRow(in, d, c))
	}
	st.Summary = summarize(st.Clusters)
	st.Phase = phase(in, st)
	now := metav1.NewTime(in.Now)
	if st.StartTime == nil && st.Phase != fleetv1.PhasePending {
		st.StartTime = earliestStart(st.Clusters, now)
	}
	if st.CompletionTime == nil && st.Phase.IsFinished() {
		st.CompletionTime = &now
	}
	setConditions(&st, in, d)
	return st
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
	case failing(in, c):
		f, _ := failure(in, c)
		return fleetv1.ClusterFailed, f.reason, text.Truncate(f.message, fleetv1.MaxClusterMessageLength)
	case c.Engaged && c.State.Finished():
		if row.Nodes.Failed > 0 {
			return fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, failedMessage(row)
		}
		return fleetv1.ClusterCompleted, fleetv1.ReasonCompleted, fmt.Sprintf("%d of %d nodes succeeded", row.Nodes.Succeeded, row.Nodes.Total)
	case d.Stopped && finished(in, c):
		if row.Nodes.Failed > 0 {
			return fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, failedMessage(row)
		}
		if started(c) {
			return fleetv1.ClusterFailed, fleetv1.ReasonStopped, "failureStrategy exit stopped the run: " + stopCause(in)
		}
		return fleetv1.ClusterPending, fleetv1.ReasonStopped, "failureStrategy exit stopped the run before this cluster started: " + stopCause(in)
	case !c.Engaged || !c.Reachable:
		return unreachable(pendingOrRunning(c))
	case c.Error != nil:
		reason, _ := spoke.ErrorReason(c.Error)
		return pendingOrRunning(c), reason, text.Truncate("retrying: "+c.Error.Error(), fleetv1.MaxClusterMessageLength)
	case !started(c) && ptr.Deref(in.Spec.Suspend, false):
		return fleetv1.ClusterPending, fleetv1.ReasonSuspended, "spec.suspend is true"
	case !started(c) && !slices.Contains(d.Freeze, c.Name):
		return fleetv1.ClusterPending, fleetv1.ReasonWaitingForTurn, "waiting for a slot under clusterRollout.maxConcurrentClusters"
	case !started(c):
		return fleetv1.ClusterPending, fleetv1.ReasonPending, "starting"
	}
	return fleetv1.ClusterRunning, fleetv1.ReasonRunning, ""
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
	row.Nodes.Skipped = int32(st.Plan.SkippedCount())
	var failed []fleetv1.NodeFailure
	for _, n := range st.Nodes {
		countNode(&row.Nodes, n.Phase)
		if n.Phase == spoke.NodeFailed {
			failed = append(failed, fleetv1.NodeFailure{Node: n.Node, Group: text.Truncate(n.GroupName, 63), Job: n.Job,
				Reason: text.Truncate(n.Reason, 64), Message: text.Truncate(n.Message, fleetv1.MaxFailureMessageLength)})
		}
	}
	row.Nodes.Total = row.Nodes.Pending + row.Nodes.Running + row.Nodes.Succeeded + row.Nodes.Failed + row.Nodes.Skipped
	slices.SortFunc(failed, func(a, b fleetv1.NodeFailure) int { return strings.Compare(a.Node, b.Node) })
	row.FailedNodes = failed[:min(len(failed), fleetv1.MaxFailedNodeSamples)]
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

func countNode(n *fleetv1.NodeCounts, p spoke.NodePhase) {
	switch p {
	case spoke.NodePending:
		n.Pending++
	case spoke.NodeRunning:
		n.Running++
	case spoke.NodeSucceeded:
		n.Succeeded++
	case spoke.NodeFailed:
		n.Failed++
	case spoke.NodeSkipped:
		n.Skipped++
	}
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
	return text.Truncate(fmt.Sprintf("%d of %d nodes failed: %s", row.Nodes.Failed, row.Nodes.Total, strings.Join(names, ", ")), fleetv1.MaxClusterMessageLength)
}

func summarize(rows []fleetv1.ClusterStatus) fleetv1.Summary {
	var s fleetv1.Summary
	for _, r := range rows {
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
	s.NodeProgress = fmt.Sprintf("%d/%d", s.Nodes.Succeeded, s.Nodes.Total)
	return s
}

// phase is the run's phase: done when every cluster is done (or stopped and
// idle), Running once any started.
func phase(in Input, st fleetv1.ClusterJobStatus) fleetv1.Phase {
	if len(st.Clusters) == 0 {
		// Registrations applied with the ClusterJob may not be seen yet;
		// after the grace, a run with nothing to run did not do its job.
		if in.Now.Sub(in.Created) < in.EmptySelectionGrace {
			return fleetv1.PhasePending
		}
		return fleetv1.PhaseFailed
	}
	done, anyStarted, failed := true, false, false
	for i, r := range st.Clusters {
		c := in.Clusters[i]
		stoppedIdle := r.Reason == fleetv1.ReasonStopped
		done = done && (r.Phase.IsFinished() || stoppedIdle)
		anyStarted = anyStarted || started(c)
		failed = failed || r.Phase == fleetv1.ClusterFailed
	}
	switch {
	case done && failed:
		return fleetv1.PhaseFailed
	case done:
		return fleetv1.PhaseCompleted
	case anyStarted:
		return fleetv1.PhaseRunning
	}
	return fleetv1.PhasePending
}

func earliestStart(rows []fleetv1.ClusterStatus, now metav1.Time) *metav1.Time {
	var first *metav1.Time
	for _, r := range rows {
		if r.StartTime != nil && (first == nil || r.StartTime.Before(first)) {
			first = r.StartTime
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
	sum := st.Summary
	progress := fmt.Sprintf("%s clusters finished, %s nodes succeeded, %d failed", sum.ClusterProgress, sum.NodeProgress, sum.Nodes.Failed)
	if len(st.Clusters) == 0 {
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
		reason := failedReason(st, d)
		set(fleetv1.ConditionProgressing, metav1.ConditionFalse, fleetv1.ReasonFailed, progress)
		set(fleetv1.ConditionComplete, metav1.ConditionFalse, fleetv1.ReasonFailed, progress)
		set(fleetv1.ConditionFailed, metav1.ConditionTrue, reason, progress)
	default:
		reason := fleetv1.ReasonRunning
		if st.Phase == fleetv1.PhasePending {
			reason = fleetv1.ReasonPending
		}
		if suspended {
			reason = fleetv1.ReasonSuspended
		}
		set(fleetv1.ConditionProgressing, metav1.ConditionTrue, reason, progress)
		set(fleetv1.ConditionComplete, metav1.ConditionFalse, reason, progress)
		set(fleetv1.ConditionFailed, metav1.ConditionFalse, reason, progress)
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
func failedReason(st *fleetv1.ClusterJobStatus, d Decision) string {
	switch {
	case len(st.Clusters) == 0:
		return fleetv1.ReasonNoClusters
	case d.Stopped && st.Summary.Nodes.Failed > 0:
		return fleetv1.ReasonStopped
	case st.Summary.Nodes.Failed > 0:
		return fleetv1.ReasonNodeFailed
	}
	for _, r := range st.Clusters {
		if r.Phase == fleetv1.ClusterFailed {
			return r.Reason
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
	return fmt.Sprintf("%d clusters matched spec.clusterSelector beyond the %d a run reports on and are left out: %s%s; narrow the selector or split the run",
		len(leftOut), fleetv1.MaxClusters, strings.Join(names, ", "), more)
}
