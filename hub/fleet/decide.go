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
	"time"

	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/text"
)

// Run is one cluster's run as the fleet sees it: its MemberRun.
type Run struct {
	// Cluster is the member cluster's name.
	Cluster string
	// Admitted is the MemberRun's spec.admitted.
	Admitted bool
	// Row is the MemberRun's status as a row; only its name is set until
	// the member controller first writes it.
	Row fleetv1.ClusterStatus
}

// Input is everything Decide and Status look at.
type Input struct {
	Spec *fleetv1.ClusterJobSpec
	// Runs are the run's MemberRuns, sorted by cluster name.
	Runs []Run
	// LeftOut are the clusters that matched beyond MaxClusters when the
	// run's clusters were selected (this reconcile only).
	LeftOut []string
	Now     time.Time
	// Created is when the ClusterJob was created.
	Created time.Time
	// EmptySelectionGrace is how long a run that selects no cluster waits
	// for registrations before it fails.
	EmptySelectionGrace time.Duration
}

// Decision is what the fleet controller should do now.
type Decision struct {
	// Admit names the clusters whose MemberRun is to be admitted now: they
	// may start.
	Admit []string
	// Halt, when set, is to be set on every MemberRun not yet halted:
	// failureStrategy exit stops the run.
	Halt *fleetv1.Halt
	// RequeueAfter is when to look again though no MemberRun changes: the
	// end of the wait for a first cluster.
	RequeueAfter time.Duration
}

// Decide returns the actions for this reconcile.
func Decide(in Input) Decision {
	d := Decision{}
	if len(in.Runs) == 0 {
		d.RequeueAfter = max(0, in.Created.Add(in.EmptySelectionGrace).Sub(in.Now))
	}
	if cause := stopCause(in); cause != "" {
		d.Halt = &fleetv1.Halt{Reason: fleetv1.ReasonStopped, Message: text.Truncate(cause, fleetv1.MaxClusterMessageLength)}
		return d
	}
	if ptr.Deref(in.Spec.Suspend, false) {
		return d
	}
	slots := freeSlots(in)
	for _, r := range in.Runs {
		if r.Admitted || finished(r.Row) {
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

// started tells whether a cluster's run began: its plan is frozen.
func started(row fleetv1.ClusterStatus) bool { return row.StartTime != nil }

// finished tells whether a cluster has nothing left to do: it completed, it
// failed, or a stop ended it before it started.
func finished(row fleetv1.ClusterStatus) bool {
	return row.Phase.IsFinished() || row.Reason == fleetv1.ReasonStopped
}
