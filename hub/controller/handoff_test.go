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

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func handoffJob(uid, cluster string, conditions ...batchv1.JobConditionType) *batchv1.Job {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		fleetv1.ClusterJobUIDLabel: uid, fleetv1.ClusterLabel: cluster,
	}}}
	for _, c := range conditions {
		job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue})
	}
	return job
}

// TestFinishLog checks that the hand-off counts from the update in which a
// run's Job reached its final condition, and from nothing else.
func TestFinishLog(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	running, complete, failed := handoffJob("uid-1", "eu"), handoffJob("uid-1", "eu", batchv1.JobComplete), handoffJob("uid-1", "eu", batchv1.JobFailed)
	type update struct{ old, updated *batchv1.Job }
	testCases := map[string]struct {
		updates []update
		want    bool
	}{
		"a Job completes":                   {updates: []update{{running, complete}}, want: true},
		"a Job fails":                       {updates: []update{{running, failed}}, want: true},
		"a finished Job is updated again":   {updates: []update{{complete, complete}}},
		"a Job still running":               {updates: []update{{running, running}}},
		"a FailureTarget is not the end":    {updates: []update{{running, handoffJob("uid-1", "eu", batchv1.JobFailureTarget)}}},
		"another cluster's Job":             {updates: []update{{handoffJob("uid-1", "us"), handoffJob("uid-1", "us", batchv1.JobComplete)}}},
		"another run's Job":                 {updates: []update{{handoffJob("uid-2", "eu"), handoffJob("uid-2", "eu", batchv1.JobComplete)}}},
		"a Job without the run's UID label": {updates: []update{{handoffJob("", "eu"), handoffJob("", "eu", batchv1.JobComplete)}}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			clock := clocktesting.NewFakePassiveClock(t0)
			l := newFinishLog(clock)
			for _, u := range tc.updates {
				l.observe(u.old, u.updated)
			}
			at, ok := l.take("uid-1", "eu")
			if ok != tc.want {
				t.Fatalf("take() found = %v, want %v", ok, tc.want)
			}
			if ok && !at.Equal(t0) {
				t.Errorf("take() = %v, want %v", at, t0)
			}
		})
	}
}

// TestFinishLogKeepsTheLast checks that the next group's start reads the
// last finish (the one that let it start) once, and that a finished run's
// entries go.
func TestFinishLogKeepsTheLast(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := clocktesting.NewFakePassiveClock(t0)
	l := newFinishLog(clock)
	l.observe(handoffJob("uid-1", "eu"), handoffJob("uid-1", "eu", batchv1.JobComplete))
	clock.SetTime(t0.Add(time.Second))
	l.observe(handoffJob("uid-1", "eu"), handoffJob("uid-1", "eu", batchv1.JobComplete))
	l.observe(handoffJob("uid-1", "us"), handoffJob("uid-1", "us", batchv1.JobComplete))
	at, ok := l.take("uid-1", "eu")
	if diff := cmp.Diff(t0.Add(time.Second), at); !ok || diff != "" {
		t.Errorf("take() = %v, %v; want the last finish (-want +got):\n%s", at, ok, diff)
	}
	if _, ok := l.take("uid-1", "eu"); ok {
		t.Error("take() found the same finish twice")
	}
	l.forget("uid-1")
	if _, ok := l.take("uid-1", "us"); ok {
		t.Error("take() found a finish of a run that was forgotten")
	}
}
