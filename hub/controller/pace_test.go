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
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func TestPacerDelay(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	p := newPacer(clock)
	run := types.NamespacedName{Namespace: "team-a", Name: "disk-clean-member-1-abc"}
	if d := p.delay(run); d != 0 {
		t.Errorf("delay before any reconcile = %s, want 0", d)
	}
	p.reconciling(run)
	clock.SetTime(clock.Now().Add(100 * time.Millisecond))
	if d := p.delay(run); d != memberReconcileInterval-100*time.Millisecond {
		t.Errorf("delay 100ms into the interval = %s, want %s", d, memberReconcileInterval-100*time.Millisecond)
	}
	if d := p.delay(types.NamespacedName{Namespace: "team-a", Name: "other"}); d != 0 {
		t.Errorf("delay of another run = %s, want 0", d)
	}
	clock.SetTime(clock.Now().Add(memberReconcileInterval))
	if d := p.delay(run); d != 0 {
		t.Errorf("delay after the interval = %s, want 0", d)
	}
}

func TestPacerIntervalGrowsWithTheRun(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	p := newPacer(clock)
	run := types.NamespacedName{Namespace: "team-a", Name: "disk-clean-member-1-abc"}
	for _, tc := range []struct {
		nodes int
		want  time.Duration
	}{
		{nodes: 0, want: 250 * time.Millisecond},
		{nodes: 10, want: 250 * time.Millisecond},
		{nodes: 250, want: 250 * time.Millisecond},
		{nodes: 251, want: 500 * time.Millisecond},
		{nodes: 1000, want: time.Second},
		{nodes: 2000, want: 2 * time.Second},
		{nodes: 5000, want: 2 * time.Second},
	} {
		p.reconciling(run)
		p.planned(run, tc.nodes)
		if d := p.delay(run); d != tc.want {
			t.Errorf("delay after a reconcile of a run of %d nodes = %s, want %s", tc.nodes, d, tc.want)
		}
		// The next reconcile starts with the interval this one learnt.
		clock.SetTime(clock.Now().Add(time.Minute))
		p.reconciling(run)
		if d := p.delay(run); d != tc.want {
			t.Errorf("delay at the start of the next reconcile of %d nodes = %s, want %s", tc.nodes, d, tc.want)
		}
	}
}

func TestPacerUrgent(t *testing.T) {
	p := newPacer(clocktesting.NewFakePassiveClock(time.Now()))
	job := func(group string, finished bool) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
			fleetv1.ClusterJobUIDLabel: "uid", fleetv1.ClusterLabel: "member-1", fleetv1.GroupIndexLabel: group}}}
		if finished {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		}
		return j
	}
	running, done := job("1", false), job("1", true)
	if !p.urgent(running, done) {
		t.Error("a Job of a group the pacer does not know finished: not urgent")
	}
	p.groupStarting("uid", "member-1", 1, 4)
	p.notCreated("uid", "member-1", 1, 1) // one skipped: 3 Jobs run
	for i, want := range []bool{false, false, true} {
		if got := p.urgent(running, done); got != want {
			t.Errorf("finish %d of 3: urgent = %v, want %v", i+1, got, want)
		}
	}
	if p.urgent(running, running) || p.urgent(done, done) {
		t.Error("an update that finishes nothing is urgent")
	}
}
