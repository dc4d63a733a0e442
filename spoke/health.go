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
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// healthPoll is how soon a node seen unhealthy is read again: a node that
// turns Ready sends the hub no event it watches (its cache holds node
// metadata only).
const healthPoll = 5 * time.Second

// healthReadTurn is how long one window of the nodes due a read keeps its
// turn, when more are due than one reconcile reads: the hub looks again a
// second after a reconcile that left a due node unread (GateHealth), so a
// turn per second reads every due node within about due/max seconds.
const healthReadTurn = time.Second

// NodeHealth is what one read of a node tells of its health.
type NodeHealth struct {
	// Found is false when the node is gone.
	Found bool
	// ReadySince is when the node's Ready condition last turned True; zero
	// while it is not Ready.
	ReadySince time.Time
	// Taint names a NoExecute taint the Job template does not tolerate; ""
	// when there is none.
	Taint string
}

// healthy tells whether the node has been healthy since at least from.
func (h NodeHealth) healthy(from time.Time, now time.Time, readyFor time.Duration) bool {
	return h.Found && h.Taint == "" && !h.ReadySince.IsZero() && !now.Before(later(from, h.ReadySince).Add(readyFor))
}

// describe is what keeps the node from being healthy, for a message.
func (h NodeHealth) describe(readyFor time.Duration) string {
	switch {
	case !h.Found:
		return "it is gone"
	case h.Taint != "":
		return "it has the NoExecute taint " + h.Taint
	case h.ReadySince.IsZero():
		return "it is not Ready"
	}
	return fmt.Sprintf("it is Ready since %s, not yet for %s", h.ReadySince.UTC().Format(time.RFC3339), readyFor)
}

// awaitingHealth tells whether n's Job succeeded and its health verdict is
// not recorded yet.
func (s State) awaitingHealth(n NodeState) bool {
	return n.Phase == NodeSucceeded && n.Job != "" && n.CompletionTime != nil && s.Recorded.Nodes.Get(n.Node).Phase != NodeSucceeded
}

// HealthReads names the nodes whose health is read now, at most most: those
// awaiting their verdict whose Job succeeded at least readyFor ago. Before
// that no read could tell them healthy. When more are due, those at their
// timeout come first (the read gives their verdict its reason), and the
// window over the others turns with the clock (healthReadTurn), so that
// nodes slow to turn healthy, read again and again, never keep the others
// from being read before their timeout. It is pure.
func (s State) HealthReads(now time.Time, gate fleetv1.NodeHealthGate, most int) []string {
	var overdue, due []string
	for n := range s.NodesWhere(func(g GroupState) bool { return g.Succeeded > 0 }) {
		switch {
		case !s.awaitingHealth(*n) || now.Before(n.CompletionTime.Add(gate.ReadyFor.Duration)):
		case !now.Before(n.CompletionTime.Add(gate.Timeout.Duration)):
			overdue = append(overdue, n.Node)
		default:
			due = append(due, n.Node)
		}
	}
	if len(overdue) >= most {
		return overdue[:most]
	}
	if most -= len(overdue); len(due) <= most {
		return append(overdue, due...)
	}
	turn := now.UnixNano() / int64(healthReadTurn)
	start := int(turn % int64(len(due)) * int64(most) % int64(len(due)))
	return slices.Concat(overdue, due[start:min(len(due), start+most)], due[:max(0, start+most-len(due))])
}

// ReadNodeHealth reads the health of nodes from r, one Get each: a full
// Node, which the member cache does not hold. tolerations are the Job
// template's.
func ReadNodeHealth(ctx context.Context, r client.Reader, nodes []string, tolerations []corev1.Toleration) (map[string]NodeHealth, error) {
	out := make(map[string]NodeHealth, len(nodes))
	var errs []error
	for _, name := range nodes {
		node := &corev1.Node{}
		switch err := r.Get(ctx, client.ObjectKey{Name: name}, node); {
		case apierrors.IsNotFound(err):
			out[name] = NodeHealth{}
		case err != nil:
			errs = append(errs, fmt.Errorf("reading node %s: %w", name, err))
		default:
			out[name] = healthOf(node, tolerations)
		}
	}
	return out, errors.Join(errs...)
}

// healthOf is what node says of its health.
func healthOf(node *corev1.Node, tolerations []corev1.Toleration) NodeHealth {
	h := NodeHealth{Found: true}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			h.ReadySince = c.LastTransitionTime.Time
		}
	}
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, tolerations,
		func(t *corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute }, true)
	if untolerated {
		h.Taint = taint.ToString()
	}
	return h
}

// GateHealth holds each node awaiting its health verdict back as Running,
// unless reads tell it healthy (it stays Succeeded) or it ran out of
// time (it fails, NodeUnhealthy). next is when to look again; zero when no
// node awaits. It is pure.
func (s *State) GateHealth(now time.Time, gate fleetv1.NodeHealthGate, reads map[string]NodeHealth) (next time.Time) {
	readyFor, timeout := gate.ReadyFor.Duration, gate.Timeout.Duration
	due := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !s.awaitingHealth(*n) {
			continue
		}
		n = s.edit(i)
		finish := n.CompletionTime.Time
		h, read := reads[n.Node]
		switch {
		case read && h.healthy(finish, now, readyFor):
			continue
		case read && !h.Found, !now.Before(finish.Add(timeout)):
			why := "no read found it healthy" // read in other turns; a healthy read is recorded at once
			if read {
				why = h.describe(readyFor)
			}
			s.Groups[n.Group].Succeeded--
			s.Groups[n.Group].Failed++
			n.Phase, n.CompletionTime = NodeFailed, &metav1.Time{Time: now}
			n.Reason = fleetv1.NodeReasonNodeUnhealthy
			n.Message = fmt.Sprintf("its Job succeeded, but the node was not Ready, untainted, for %s within %s (spec.gates.nodeHealth): %s", readyFor, timeout, why)
			continue
		}
		s.Groups[n.Group].Succeeded--
		s.Groups[n.Group].Running++
		n.Phase, n.Reason = NodeRunning, fleetv1.NodeReasonAwaitingHealth
		n.Message = fmt.Sprintf("its Job succeeded; waiting for the node to be Ready, untainted, for %s", readyFor)
		n.Started = true
		switch {
		case !read:
			due(later(now.Add(time.Second), finish.Add(readyFor)))
		case h.Taint == "" && !h.ReadySince.IsZero():
			due(later(finish, h.ReadySince).Add(readyFor))
		default:
			due(now.Add(healthPoll))
		}
		due(finish.Add(timeout))
	}
	return next
}

// HealthWaits counts, in group g, the nodes whose Job succeeded that are
// healthy and those still proving it.
func (s State) HealthWaits(g int) (healthy, waiting int) {
	for n := range s.GroupNodes(g) {
		switch {
		case n.Group != g:
		case n.Phase == NodeSucceeded:
			healthy++
		case n.Phase == NodeRunning && n.Reason == fleetv1.NodeReasonAwaitingHealth:
			waiting++
		}
	}
	return healthy, waiting
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
