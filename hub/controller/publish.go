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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/text"
	"github.com/fleetjob/fleetjob/spoke"
)

// publishInterval bounds how often a running cluster's node results are
// published on its MemberRun: a publication encodes every node of the
// cluster, and every watch of MemberRuns carries it.
const publishInterval = 5 * time.Second

// nodeResults is the MemberRun's status.nodeResults to write with row, from
// st as read in this reconcile, and how soon to look again when a change
// waits for publishInterval (0: none waits). Results are published when
// the node counts changed, at most every publishInterval, and always with
// the row that ends the cluster: it is never reconciled again.
func nodeResults(prev *fleetv1.NodeResults, st spoke.State, row fleetv1.ClusterStatus, now time.Time) (*fleetv1.NodeResults, time.Duration) {
	finished := row.Phase.IsFinished()
	switch {
	case !st.Planned:
		return prev, 0 // not read this time: what was published stands
	case prev != nil && !finished && prev.Nodes == row.Nodes:
		return prev, 0
	case prev != nil && !finished:
		if wait := prev.ObservedTime.Add(publishInterval).Sub(now); wait > 0 {
			return prev, wait
		}
	}
	out := &fleetv1.NodeResults{ObservedTime: metav1.NewTime(now), Nodes: row.Nodes}
	data, omitted, err := noderesults.Encode(st.Published())
	if err != nil {
		out.Message = text.Truncate(err.Error(), fleetv1.MaxClusterMessageLength)
		return out, 0
	}
	out.Data, out.Omitted = data, int32(omitted)
	return out, 0
}
