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
	"bytes"
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
// may wait for publishInterval (0: nothing waits). What a user sees of a
// node changes without its counts (a waiting pod's reason), so the results
// are encoded and compared at most every publishInterval, and published
// when they differ; always with the row that ends the cluster, which is
// never reconciled again.
func nodeResults(prev *fleetv1.NodeResults, st spoke.State, row fleetv1.ClusterStatus, now time.Time) (*fleetv1.NodeResults, time.Duration) {
	if !st.Planned {
		return prev, 0 // not read this time: what was published stands
	}
	if prev != nil && !row.Phase.IsFinished() {
		if wait := prev.ObservedTime.Add(publishInterval).Sub(now); wait > 0 {
			return prev, wait
		}
	}
	out := &fleetv1.NodeResults{ObservedTime: metav1.NewTime(now), Nodes: row.Nodes}
	data, omitted, err := noderesults.Encode(st.Published())
	if err != nil {
		out.Message = text.Truncate(err.Error(), fleetv1.MaxClusterMessageLength)
	} else {
		out.Data, out.Omitted = data, int32(omitted)
	}
	if prev != nil && prev.Nodes == out.Nodes && prev.Omitted == out.Omitted && prev.Message == out.Message && bytes.Equal(prev.Data, out.Data) {
		return prev, 0 // as published: no write
	}
	return out, 0
}
