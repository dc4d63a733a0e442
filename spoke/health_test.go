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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

func TestGateHealth(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	gate := fleetv1.NodeHealthGate{ReadyFor: metav1.Duration{Duration: time.Minute}, Timeout: metav1.Duration{Duration: 5 * time.Minute}}
	// succeededAgo is a one-node state whose Job succeeded d ago, its
	// verdict recorded as rec (Running: none yet).
	succeededAgo := func(d time.Duration, rec NodePhase) State {
		p := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"n"}}}}
		job := succeededJob("n", now.Add(-d))
		recorded := ResultsOf(map[string]NodeResult{"n": {Phase: rec}})
		st := Derive(&p, []batchv1.Job{job}, map[string]bool{"n": true}, recorded)
		st.Recorded = recorded // as Observe reads it
		return st
	}
	readySince := func(d time.Duration) NodeHealth { return NodeHealth{Found: true, ReadySince: now.Add(-d)} }
	type verdict struct {
		Phase  NodePhase
		Reason string
		Groups GroupState
		Next   time.Time
	}
	tests := []struct {
		name  string
		state State
		reads map[string]NodeHealth
		want  verdict
	}{{
		name:  "just succeeded: Running until readyFor passed, nothing read yet",
		state: succeededAgo(10*time.Second, NodeRunning),
		want:  verdict{NodeRunning, fleetv1.NodeReasonAwaitingHealth, GroupState{Name: "all", Nodes: 1, Running: 1}, now.Add(50 * time.Second)},
	}, {
		name:  "Ready all along, readyFor after the Job passed: Succeeded",
		state: succeededAgo(time.Minute, NodeRunning),
		reads: map[string]NodeHealth{"n": readySince(time.Hour)},
		want:  verdict{NodeSucceeded, "", GroupState{Name: "all", Nodes: 1, Succeeded: 1}, time.Time{}},
	}, {
		name:  "rebooted after its Job, Ready again 20s ago: 40s more",
		state: succeededAgo(2*time.Minute, NodeRunning),
		reads: map[string]NodeHealth{"n": readySince(20 * time.Second)},
		want:  verdict{NodeRunning, fleetv1.NodeReasonAwaitingHealth, GroupState{Name: "all", Nodes: 1, Running: 1}, now.Add(40 * time.Second)},
	}, {
		name:  "NotReady: read again soon",
		state: succeededAgo(2*time.Minute, NodeRunning),
		reads: map[string]NodeHealth{"n": {Found: true}},
		want:  verdict{NodeRunning, fleetv1.NodeReasonAwaitingHealth, GroupState{Name: "all", Nodes: 1, Running: 1}, now.Add(healthPoll)},
	}, {
		name:  "NotReady past the timeout: NodeUnhealthy",
		state: succeededAgo(5*time.Minute, NodeRunning),
		reads: map[string]NodeHealth{"n": {Found: true}},
		want:  verdict{NodeFailed, fleetv1.NodeReasonNodeUnhealthy, GroupState{Name: "all", Nodes: 1, Failed: 1}, time.Time{}},
	}, {
		name:  "Ready but tainted NoExecute past the timeout: NodeUnhealthy",
		state: succeededAgo(6*time.Minute, NodeRunning),
		reads: map[string]NodeHealth{"n": {Found: true, ReadySince: now.Add(-time.Hour), Taint: "node.kubernetes.io/unreachable:NoExecute"}},
		want:  verdict{NodeFailed, fleetv1.NodeReasonNodeUnhealthy, GroupState{Name: "all", Nodes: 1, Failed: 1}, time.Time{}},
	}, {
		name:  "gone after its Job: NodeUnhealthy at once",
		state: succeededAgo(2*time.Minute, NodeRunning),
		reads: map[string]NodeHealth{"n": {}},
		want:  verdict{NodeFailed, fleetv1.NodeReasonNodeUnhealthy, GroupState{Name: "all", Nodes: 1, Failed: 1}, time.Time{}},
	}, {
		name:  "the verdict recorded: nothing is read or held again",
		state: succeededAgo(time.Hour, NodeSucceeded),
		want:  verdict{NodeSucceeded, "", GroupState{Name: "all", Nodes: 1, Succeeded: 1}, time.Time{}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.state
			next := st.GateHealth(now, gate, tt.reads)
			got := verdict{st.Nodes[0].Phase, st.Nodes[0].Reason, st.Groups[0], next}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GateHealth() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHealthReads(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	gate := fleetv1.NodeHealthGate{ReadyFor: metav1.Duration{Duration: time.Minute}, Timeout: metav1.Duration{Duration: 5 * time.Minute}}
	p := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"a", "b", "c", "d"}}}}
	jobs := []batchv1.Job{succeededJob("a", now.Add(-2*time.Minute)), succeededJob("b", now.Add(-time.Second)),
		succeededJob("c", now.Add(-3*time.Minute)), succeededJob("d", now.Add(-4*time.Minute))}
	recorded := ResultsOf(map[string]NodeResult{"c": {Phase: NodeSucceeded}})
	st := Derive(&p, jobs, map[string]bool{"a": true, "b": true, "c": true, "d": true}, recorded)
	st.Recorded = recorded
	if diff := cmp.Diff([]string{"a", "d"}, st.HealthReads(now, gate, 10)); diff != "" {
		t.Errorf("HealthReads() mismatch (-want +got):\n%s", diff)
	}
	if got := st.HealthReads(now, gate, 1); len(got) != 1 {
		t.Errorf("HealthReads(max 1) = %v, want one node", got)
	}
}

func TestHealthOf(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC))
	node := &corev1.Node{
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}, {Key: "gone", Effect: corev1.TaintEffectNoExecute}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: since}}},
	}
	if got, want := healthOf(node, nil), (NodeHealth{Found: true, ReadySince: since.Time, Taint: "gone:NoExecute"}); got != want {
		t.Errorf("healthOf() = %+v, want %+v", got, want)
	}
	tolerated := []corev1.Toleration{{Key: "gone", Operator: corev1.TolerationOpExists}}
	if got, want := healthOf(node, tolerated), (NodeHealth{Found: true, ReadySince: since.Time}); got != want {
		t.Errorf("healthOf() with the taint tolerated = %+v, want %+v: NoSchedule taints never count", got, want)
	}
}

// succeededJob is node's Job, Complete at t.
func succeededJob(node string, t time.Time) batchv1.Job {
	return makeJob(node).Complete(metav1.NewTime(t)).Obj()
}

// TestHealthReadsTurn: with more nodes due a read than one reconcile reads,
// nodes slow to turn healthy do not keep the others from being read: every
// healthy node is found so before its timeout.
func TestHealthReadsTurn(t *testing.T) {
	const most, slow, healthy = 100, 150, 100
	start := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	gate := fleetv1.NodeHealthGate{ReadyFor: metav1.Duration{Duration: 10 * time.Second}, Timeout: metav1.Duration{Duration: time.Minute}}
	var nodes []string
	var jobs []batchv1.Job
	health := map[string]NodeHealth{}
	for i := range slow + healthy {
		n := fmt.Sprintf("node-%03d", i)
		nodes = append(nodes, n)
		jobs = append(jobs, succeededJob(n, start))
		health[n] = NodeHealth{Found: true} // NotReady: slow to come back
		if i >= slow {
			health[n] = NodeHealth{Found: true, ReadySince: start.Add(-time.Hour)}
		}
	}
	p := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: nodes}}}
	rec := Results{}
	var st State
	// One reconcile a second, as GateHealth asks while a due node is unread.
	for now := start; !now.After(start.Add(gate.Timeout.Duration)); now = now.Add(time.Second) {
		st = Derive(&p, jobs, present(nodes...), rec)
		st.Recorded = rec
		reads := map[string]NodeHealth{}
		for _, n := range st.HealthReads(now, gate, most) {
			reads[n] = health[n]
		}
		st.GateHealth(now, gate, reads)
		rec, _ = Record(rec, st, nil, nil)
	}
	for _, n := range st.Nodes[slow:] {
		if n.Phase != NodeSucceeded {
			t.Errorf("healthy node %s = %s: %s", n.Node, n.Phase, n.Message)
		}
	}
	for _, n := range st.Nodes[:slow] {
		if n.Phase != NodeFailed || n.Reason != fleetv1.NodeReasonNodeUnhealthy {
			t.Errorf("slow node %s = %s %s: %s; want failed %s", n.Node, n.Phase, n.Reason, n.Message, fleetv1.NodeReasonNodeUnhealthy)
		}
	}
}
