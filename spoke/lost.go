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

package spoke

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// LostPoll is how often a started node whose pod is not Ready, but whose
// node was read Ready, is read again: its pod may wait for a retry or fail
// its readiness probe, and its node may be lost later with no Job event to
// tell (its pod is not Ready already). Each poll costs one GET per such
// node; 30 s keeps that small and adds at most 30 s to the bound.
const LostPoll = 30 * time.Second

// mayBeLost tells whether n's node may be lost: its pod started once, and
// its Job has not finished and has a pod that is not Ready. A node lost
// before its pod started is the start timeout's.
func mayBeLost(n NodeState) bool {
	return n.Phase == NodeRunning && n.Job != "" && n.Started && n.Unconfirmed && n.Reason != fleetv1.NodeReasonAwaitingHealth
}

// LostReads names the nodes whose health is read now for
// spec.nodeLostTimeout, at most max: first those read lost before whose
// bound is over (the verdict needs the node still lost now), then those not
// known lost, in a window that moves every LostPoll so that each is read
// however many there are. A node known lost whose bound is not over is not
// read: if it comes back, its pod turns Ready again and the Job says so.
func (s State) LostReads(now time.Time, timeout time.Duration, max int) []string {
	var due, unknown []string
	for n := range s.NodesWhere(func(g GroupState) bool { return g.Running > 0 }) {
		switch {
		case !mayBeLost(*n):
		case n.LostSince == nil:
			unknown = append(unknown, n.Node)
		case !now.Before(n.LostSince.Add(timeout)):
			due = append(due, n.Node)
		}
	}
	names := due[:min(len(due), max)]
	if room := max - len(names); room > 0 && len(unknown) > 0 {
		from := int(now.Unix()/int64(LostPoll/time.Second)) * room % len(unknown)
		for i := range min(room, len(unknown)) {
			names = append(names, unknown[(from+i)%len(unknown)])
		}
	}
	return names
}

// TimeOutLost fails, NodeLost, each node whose pod started and whose node
// reads tell lost (NotReady, Unknown or gone) for timeout since the hub
// first read it so, and returns their Jobs, to be deleted, and how many it
// failed: a dead node's pod never finishes, and must not run when the node
// comes back. It keeps on each node when it was first read lost, and
// forgets it once its pod is Ready again or its node reads Ready. next is
// when to look again, zero when no node may be lost. It is pure;
// TimeOutStarts returns the Jobs of nodes failed so before, until gone.
func (s *State) TimeOutLost(now time.Time, timeout time.Duration, reads map[string]NodeHealth) (jobs []string, failed int, next time.Time) {
	due := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !mayBeLost(*n) {
			if n.LostSince != nil {
				s.edit(i).LostSince = nil
			}
			continue
		}
		h, read := reads[n.Node]
		lost := read && (!h.Found || h.ReadySince.IsZero())
		switch {
		case read && !lost:
			if n.LostSince != nil {
				s.edit(i).LostSince = nil
			}
			due(now.Add(LostPoll))
			continue
		case !read && n.LostSince == nil:
			due(now.Add(LostPoll))
			continue
		case lost && n.LostSince == nil:
			s.edit(i).LostSince = &metav1.Time{Time: now}
		}
		at := n.LostSince.Add(timeout)
		if !lost || now.Before(at) {
			due(later(at, now.Add(time.Second)))
			continue
		}
		n = s.edit(i)
		s.Groups[n.Group].Running--
		s.Groups[n.Group].Failed++
		n.Phase, n.CompletionTime = NodeFailed, &metav1.Time{Time: now}
		n.Reason = fleetv1.NodeReasonNodeLost
		n.Message = fmt.Sprintf("node %s for %s after its pod started, past nodeLostTimeout %s; its Job is deleted",
			lostAs(h), now.Sub(n.LostSince.Time).Round(time.Second), timeout)
		jobs = append(jobs, n.Job)
		failed++
	}
	return jobs, failed, next
}

// lostAs says how a node read lost is lost, for a message the results
// record keeps whole (at most 128 bytes).
func lostAs(h NodeHealth) string {
	if !h.Found {
		return "gone"
	}
	return "not Ready"
}
