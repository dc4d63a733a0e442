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
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// TestDecideExpiry: an ended run is deleted once its TTL, from the spec or
// else the hub's default, has passed since it ended, and is otherwise
// looked at again exactly then; a run that has not ended, one without a
// TTL, one a person suspended and one a retry still needs are kept.
func TestDecideExpiry(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { at := now.Add(-d); return &at }
	const spec, hub = "spec.ttlSecondsAfterFinished", "the hub's --ended-run-ttl"
	testCases := map[string]struct {
		in   expiryInput
		want expiry
	}{
		"running: never deleted, whatever its TTL": {
			in: expiryInput{Phase: fleetv1.PhaseRunning, TTL: ptr.To[int32](0), Default: time.Minute},
		},
		"pending: never deleted": {
			in: expiryInput{Phase: fleetv1.PhasePending, TTL: ptr.To[int32](0)},
		},
		"no TTL and the hub's default off: kept, no requeue": {
			in: expiryInput{Phase: fleetv1.PhaseCompleted, End: ago(1000 * time.Hour)},
		},
		"spec TTL not passed: looked at again when it passes": {
			in:   expiryInput{Phase: fleetv1.PhaseCompleted, End: ago(10 * time.Minute), TTL: ptr.To[int32](3600)},
			want: expiry{After: 50 * time.Minute, TTL: time.Hour, Source: spec, Ended: 10 * time.Minute},
		},
		"spec TTL passed: deleted": {
			in:   expiryInput{Phase: fleetv1.PhaseFailed, End: ago(61 * time.Minute), TTL: ptr.To[int32](3600)},
			want: expiry{Delete: true, TTL: time.Hour, Source: spec, Ended: 61 * time.Minute},
		},
		"exactly at the TTL: deleted": {
			in:   expiryInput{Phase: fleetv1.PhaseCompleted, End: ago(time.Minute), TTL: ptr.To[int32](60)},
			want: expiry{Delete: true, TTL: time.Minute, Source: spec, Ended: time.Minute},
		},
		"spec TTL 0: deleted as it ends, even with the hub's default on": {
			in:   expiryInput{Phase: fleetv1.PhaseFailed, End: ago(0), TTL: ptr.To[int32](0), Default: 24 * time.Hour},
			want: expiry{Delete: true, Source: spec},
		},
		"no spec TTL: the hub's default, not passed": {
			in:   expiryInput{Phase: fleetv1.PhaseCompleted, End: ago(time.Hour), Default: 24 * time.Hour},
			want: expiry{After: 23 * time.Hour, TTL: 24 * time.Hour, Source: hub, Ended: time.Hour},
		},
		"no spec TTL: the hub's default, passed": {
			in:   expiryInput{Phase: fleetv1.PhaseFailed, End: ago(25 * time.Hour), Default: 24 * time.Hour},
			want: expiry{Delete: true, TTL: 24 * time.Hour, Source: hub, Ended: 25 * time.Hour},
		},
		"a spec TTL longer than the hub's default wins": {
			in:   expiryInput{Phase: fleetv1.PhaseCompleted, End: ago(time.Hour), TTL: ptr.To[int32](86400), Default: time.Minute},
			want: expiry{After: 23 * time.Hour, TTL: 24 * time.Hour, Source: spec, Ended: time.Hour},
		},
		"an end in the future (clock skew) counts as now": {
			in:   expiryInput{Phase: fleetv1.PhaseCompleted, End: ago(-5 * time.Minute), TTL: ptr.To[int32](60)},
			want: expiry{After: time.Minute, TTL: time.Minute, Source: spec},
		},
		"an end in the future with TTL 0: deleted now": {
			in:   expiryInput{Phase: fleetv1.PhaseCompleted, End: ago(-5 * time.Minute), TTL: ptr.To[int32](0)},
			want: expiry{Delete: true, Source: spec},
		},
		"no end time in the status: kept": {
			in: expiryInput{Phase: fleetv1.PhaseCompleted, TTL: ptr.To[int32](0)},
		},
		"suspended past its TTL: kept, no requeue (resuming wakes it)": {
			in:   expiryInput{Phase: fleetv1.PhaseCompleted, End: ago(2 * time.Hour), TTL: ptr.To[int32](3600), Suspended: true},
			want: expiry{TTL: time.Hour, Source: spec, Ended: 2 * time.Hour, Kept: "spec.suspend is true"},
		},
		"suspended before its TTL: still looked at when it passes": {
			in:   expiryInput{Phase: fleetv1.PhaseCompleted, End: ago(time.Minute), TTL: ptr.To[int32](3600), Suspended: true},
			want: expiry{After: 59 * time.Minute, TTL: time.Hour, Source: spec, Ended: time.Minute},
		},
		"its retry has not ended: kept, no requeue (the retry's end wakes it)": {
			in:   expiryInput{Phase: fleetv1.PhaseFailed, End: ago(2 * time.Hour), TTL: ptr.To[int32](3600), Retry: "flaky-retry-x7k2p"},
			want: expiry{TTL: time.Hour, Source: spec, Ended: 2 * time.Hour, Kept: "its retry flaky-retry-x7k2p has not ended"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			tc.in.Now = now
			if diff := cmp.Diff(tc.want, decideExpiry(tc.in)); diff != "" {
				t.Errorf("decideExpiry() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEndOf: the end of a run is its completionTime, or else when its
// Complete or Failed condition turned True.
func TestEndOf(t *testing.T) {
	t1 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Minute)
	cond := func(typ string, status metav1.ConditionStatus, at time.Time) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, LastTransitionTime: metav1.NewTime(at)}
	}
	testCases := map[string]struct {
		st   fleetv1.ClusterJobStatus
		want *time.Time
	}{
		"completionTime": {
			st:   fleetv1.ClusterJobStatus{CompletionTime: &metav1.Time{Time: t1}, Conditions: []metav1.Condition{cond(fleetv1.ConditionComplete, metav1.ConditionTrue, t2)}},
			want: &t1,
		},
		"no completionTime: the Failed condition": {
			st:   fleetv1.ClusterJobStatus{Conditions: []metav1.Condition{cond(fleetv1.ConditionComplete, metav1.ConditionFalse, t1), cond(fleetv1.ConditionFailed, metav1.ConditionTrue, t2)}},
			want: &t2,
		},
		"neither": {
			st: fleetv1.ClusterJobStatus{Conditions: []metav1.Condition{cond(fleetv1.ConditionProgressing, metav1.ConditionTrue, t1)}},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, endOf(&tc.st)); diff != "" {
				t.Errorf("endOf() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNeedsParent: a retry keeps its parent until it ends, unless it
// retries another run that had the parent's name.
func TestNeedsParent(t *testing.T) {
	parent := &fleetv1.ClusterJob{ObjectMeta: metav1.ObjectMeta{Name: "flaky", UID: "uid-parent"}}
	retry := func(mutate func(*fleetv1.ClusterJob)) *fleetv1.ClusterJob {
		cj := &fleetv1.ClusterJob{ObjectMeta: metav1.ObjectMeta{Name: "flaky-retry", UID: "uid-retry"},
			Spec: fleetv1.ClusterJobSpec{RetryOf: &fleetv1.RetryOf{Name: "flaky"}}}
		mutate(cj)
		return cj
	}
	testCases := map[string]struct {
		retry *fleetv1.ClusterJob
		want  bool
	}{
		"not started yet": {retry: retry(func(*fleetv1.ClusterJob) {}), want: true},
		"running, retrying this run": {retry: retry(func(cj *fleetv1.ClusterJob) {
			cj.Status.Phase, cj.Status.RetryOf = fleetv1.PhaseRunning, &fleetv1.RetrySource{Name: "flaky", UID: "uid-parent"}
		}), want: true},
		"running, retrying an earlier run of the name": {retry: retry(func(cj *fleetv1.ClusterJob) {
			cj.Status.Phase, cj.Status.RetryOf = fleetv1.PhaseRunning, &fleetv1.RetrySource{Name: "flaky", UID: "uid-earlier"}
		})},
		"ended":          {retry: retry(func(cj *fleetv1.ClusterJob) { cj.Status.Phase = fleetv1.PhaseCompleted })},
		"refused":        {retry: retry(func(cj *fleetv1.ClusterJob) { cj.Status.Phase = fleetv1.PhaseFailed })},
		"being deleted":  {retry: retry(func(cj *fleetv1.ClusterJob) { cj.DeletionTimestamp = &metav1.Time{Time: time.Now()} })},
		"itself (named)": {retry: retry(func(cj *fleetv1.ClusterJob) { cj.UID = parent.UID })},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if got := needsParent(tc.retry, parent); got != tc.want {
				t.Errorf("needsParent() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestExpire: what a person sees of the hub's expiry of a run: deleted
// with a RunExpired event once its TTL passed, through the finalizer (the
// ClusterJob waits for it); looked at again exactly when it will pass;
// kept while a retry of it runs; and a ClusterJob created again under the
// run's name is never deleted for the old run.
func TestExpire(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ended := func(name string, uid types.UID, endedAgo time.Duration, ttl int32) *fleetv1.ClusterJob {
		return &fleetv1.ClusterJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: uid, Finalizers: []string{Finalizer}},
			Spec:       fleetv1.ClusterJobSpec{TTLSecondsAfterFinished: ptr.To(ttl)},
			Status:     fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseFailed, CompletionTime: &metav1.Time{Time: now.Add(-endedAgo)}},
		}
	}
	runningRetry := &fleetv1.ClusterJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "clean-retry", UID: "uid-retry"},
		Spec:   fleetv1.ClusterJobSpec{RetryOf: &fleetv1.RetryOf{Name: "clean"}},
		Status: fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseRunning, RetryOf: &fleetv1.RetrySource{Name: "clean", UID: "uid-1"}}}
	testCases := map[string]struct {
		// stored are the hub's objects; seen is the run as the cache shows
		// it to the reconcile, "clean" of stored unless set.
		stored      []client.Object
		seen        *fleetv1.ClusterJob
		want        ctrl.Result
		wantDeleted bool
		wantEvents  []string
	}{
		"past its TTL: deleted, through its finalizer, with an event": {
			stored:      []client.Object{ended("clean", "uid-1", 2*time.Hour, 3600)},
			wantDeleted: true,
			wantEvents:  []string{"Normal RunExpired deleting the run and what it left in its clusters: it ended (Failed) 120m ago, past spec.ttlSecondsAfterFinished of 60m"},
		},
		"before its TTL: looked at again exactly when it passes": {
			stored: []client.Object{ended("clean", "uid-1", 20*time.Minute, 3600)},
			want:   ctrl.Result{RequeueAfter: 40 * time.Minute},
		},
		"a retry of it runs: kept": {
			stored: []client.Object{ended("clean", "uid-1", 2*time.Hour, 3600), runningRetry},
		},
		"created again under its name since: the new run is not deleted": {
			stored: []client.Object{ended("clean", "uid-2", 0, 3600)},
			seen: func() *fleetv1.ClusterJob {
				cj := ended("clean", "uid-1", 2*time.Hour, 3600)
				cj.ResourceVersion = "7"
				return cj
			}(),
			want: ctrl.Result{RequeueAfter: conflictRetry},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			_ = fleetv1.AddToScheme(scheme)
			hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.stored...).
				WithIndex(&fleetv1.ClusterJob{}, retriesOf, func(o client.Object) []string {
					if cj := o.(*fleetv1.ClusterJob); cj.Spec.RetryOf != nil {
						return []string{cj.Spec.RetryOf.Name}
					}
					return nil
				}).Build()
			ctx := context.Background()
			seen := tc.seen
			if seen == nil {
				seen = &fleetv1.ClusterJob{}
				if err := hub.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "clean"}, seen); err != nil {
					t.Fatal(err)
				}
			}
			recorder := events.NewFakeRecorder(10)
			r := &ClusterJobReconciler{shared: &shared{Hub: hub, Recorder: recorder, Clock: clocktesting.NewFakePassiveClock(now)}}
			got, err := r.expire(ctx, seen)
			if err != nil {
				t.Fatalf("expire() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("expire() result (-want +got):\n%s", diff)
			}
			stored := &fleetv1.ClusterJob{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "clean"}, stored); err != nil {
				t.Fatalf("the ClusterJob is gone before its finalizer ran: %v", err)
			}
			if deleted := !stored.DeletionTimestamp.IsZero(); deleted != tc.wantDeleted {
				t.Errorf("ClusterJob %s being deleted = %v, want %v", stored.UID, deleted, tc.wantDeleted)
			}
			close(recorder.Events)
			var gotEvents []string
			for e := range recorder.Events {
				gotEvents = append(gotEvents, e)
			}
			if diff := cmp.Diff(tc.wantEvents, gotEvents); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
