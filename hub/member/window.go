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
	"time"

	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// windowWait is the cluster's wait for a maintenance window: whether its
// windows hold it now, and when they next open. Only a cluster that would
// start something now (freeze its plan, start its next group) waits: the
// Jobs of a group that started run on when its window closes, and a
// cluster that waits for its turn, a soak or a person is not held by a
// window as well. found is false when no window opens within
// spec.maxWindowWait.
func windowWait(in Input) (held bool, opens time.Time, found bool) {
	if in.Cluster.WindowError != nil || !wouldStart(in) || in.Cluster.Windows.Open(in.Now) {
		return false, time.Time{}, false
	}
	opens, found = in.Cluster.Windows.NextOpen(in.Now, in.Now.Add(MaxWindowWait(in.Spec)))
	return true, opens, found
}

// windowHeld tells whether the cluster's windows hold it now.
func windowHeld(in Input) bool {
	held, _, _ := windowWait(in)
	return held
}

// wouldStart tells whether the cluster, ready, would freeze its plan or
// start a group now but for its windows. It must not ask whether the run
// stopped: under failureStrategy exit that asks for the cluster's
// failure, which asks this.
func wouldStart(in Input) bool {
	c := in.Cluster
	if !c.Engaged || !c.Reachable || c.Error != nil || ptr.Deref(in.Spec.Suspend, false) || held(in) {
		return false
	}
	if !started(c) {
		return in.Admitted
	}
	_, ok := nextGroup(c.State)
	return c.State.Planned && ok && soakingUntil(in).IsZero()
}

// windowFailure is why the cluster fails for its windows when they would
// hold it: one cannot be read, or none opens within spec.maxWindowWait. A
// window that cannot be read fails only a cluster it would hold: a set's
// windows edited while a group runs do not fail that group.
func windowFailure(in Input) (clusterFailure, bool) {
	if err := in.Cluster.WindowError; err != nil && wouldStart(in) {
		return clusterFailure{fleetv1.ReasonNoMaintenanceWindow, err.Error()}, true
	}
	if held, _, found := windowWait(in); held && !found {
		return clusterFailure{fleetv1.ReasonNoMaintenanceWindow, fmt.Sprintf(
			"no maintenance window of the run or of the cluster's set opens within %s (spec.maxWindowWait) of %s; no further group starts in this cluster",
			MaxWindowWait(in.Spec), in.Now.UTC().Format(time.RFC3339))}, true
	}
	return clusterFailure{}, false
}

// windowMessage is the row's message while windows hold the cluster.
func windowMessage(opens time.Time) string {
	return "Waiting for window: next opens " + opens.UTC().Format(time.RFC3339)
}

// MaxWindowWait is the run's spec.maxWindowWait, defaulted.
func MaxWindowWait(spec *fleetv1.ClusterJobSpec) time.Duration {
	if w := spec.MaxWindowWait; w != nil && w.Duration > 0 {
		return w.Duration
	}
	return fleetv1.DefaultMaxWindowWait
}
