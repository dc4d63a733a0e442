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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// retriesOf indexes ClusterJobs by the run their spec.retryOf names.
const retriesOf = "spec.retryOf.name"

// expiryInput is what the deletion of an ended run depends on.
type expiryInput struct {
	// Phase is the run's status.phase.
	Phase fleetv1.Phase
	// End is when the run ended (endOf); nil when the status does not say.
	End *time.Time
	// TTL is spec.ttlSecondsAfterFinished; nil falls back to Default.
	TTL *int32
	// Default is the hub's --ended-run-ttl; 0 keeps a run without a TTL.
	Default time.Duration
	// Suspended is spec.suspend: a person holds the run.
	Suspended bool
	// Retry names a retry of the run that has not ended, "" when none.
	Retry string
	// Now is the hub's clock.
	Now time.Time
}

// expiry is what becomes of an ended run now.
type expiry struct {
	// Delete says the run's TTL passed and nothing keeps it.
	Delete bool
	// After is how long until the TTL passes; 0 when it passed or no TTL
	// applies.
	After time.Duration
	// TTL is the TTL that applies, and Source the setting it comes from.
	TTL    time.Duration
	Source string
	// Ended is how long ago the run ended.
	Ended time.Duration
	// Kept says why a run past its TTL is kept, "" when it is not.
	Kept string
}

// decideExpiry decides whether an ended run is deleted now, and otherwise
// when to look again: exactly when its TTL passes. An end time after now,
// which only a clock that runs behind the one that wrote it can see, counts
// as now: the run is never deleted before its TTL passed by either clock.
// A pending or running run is never deleted; neither is an ended one a
// person suspended, nor one a retry still needs: the retry plans each of
// its clusters from the run's record there, which the deletion removes.
// Both wake the reconciler when they stop holding it (a spec change, the
// retry's end), so a kept run needs no requeue.
func decideExpiry(in expiryInput) expiry {
	if !in.Phase.IsFinished() || in.End == nil {
		return expiry{}
	}
	e := expiry{TTL: in.Default, Source: "the hub's --ended-run-ttl"}
	if in.TTL != nil {
		e.TTL, e.Source = time.Duration(*in.TTL)*time.Second, "spec.ttlSecondsAfterFinished"
	} else if in.Default <= 0 {
		return expiry{}
	}
	end := *in.End
	if end.After(in.Now) {
		end = in.Now
	}
	e.Ended = in.Now.Sub(end)
	if left := e.TTL - e.Ended; left > 0 {
		e.After = left
		return e
	}
	switch {
	case in.Suspended:
		e.Kept = "spec.suspend is true"
	case in.Retry != "":
		e.Kept = fmt.Sprintf("its retry %s has not ended", in.Retry)
	default:
		e.Delete = true
	}
	return e
}

// endOf is when the run ended: status.completionTime, which the hub writes
// with the phase, or else when its Complete or Failed condition turned
// True; nil when neither says.
func endOf(st *fleetv1.ClusterJobStatus) *time.Time {
	if st.CompletionTime != nil {
		return &st.CompletionTime.Time
	}
	for _, t := range []string{fleetv1.ConditionComplete, fleetv1.ConditionFailed} {
		if c := meta.FindStatusCondition(st.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			return &c.LastTransitionTime.Time
		}
	}
	return nil
}

// expire deletes an ended run whose TTL passed, and otherwise asks to be
// reconciled again exactly when it passes. The deletion goes through the
// ClusterJob's finalizer, as `kubectl delete` does: its MemberRuns are
// deleted and each cleans its member first. Background propagation, so
// that the finalizer, not the garbage collector, decides when the run is
// gone; the preconditions make sure that what is deleted is the run
// decided on: a ClusterJob created again under its name, or one a person
// changed since (a longer TTL), is not.
func (r *ClusterJobReconciler) expire(ctx context.Context, cj *fleetv1.ClusterJob) (ctrl.Result, error) {
	in := expiryInput{
		Phase: cj.Status.Phase, End: endOf(&cj.Status), TTL: cj.Spec.TTLSecondsAfterFinished, Default: r.Options.EndedRunTTL,
		Suspended: ptr.Deref(cj.Spec.Suspend, false), Now: r.Clock.Now(),
	}
	retry, err := r.openRetry(ctx, cj)
	if err != nil {
		return ctrl.Result{}, err
	}
	in.Retry = retry
	e := decideExpiry(in)
	if !e.Delete {
		if e.Kept != "" {
			log.FromContext(ctx).V(1).Info("Keeping an ended run past its TTL", "ttl", e.TTL, "why", e.Kept)
		}
		return ctrl.Result{RequeueAfter: e.After}, nil
	}
	uid, version := cj.UID, cj.ResourceVersion
	err = r.hubWrite(ctx, func(ctx context.Context) error {
		return r.Hub.Delete(ctx, cj, client.Preconditions{UID: &uid, ResourceVersion: &version},
			client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case apierrors.IsConflict(err):
		// Changed or replaced since the cache saw it: decide again on what
		// is there now.
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("deleting the expired run: %w", err)
	}
	// Sent once the deletion began, not before: a deletion refused for a
	// change made meanwhile tells the person nothing false. The finalizer
	// keeps the ClusterJob, which the event is about, until the members
	// are clean.
	if r.Recorder != nil {
		r.Recorder.Eventf(cj, nil, corev1.EventTypeNormal, fleetv1.ReasonRunExpired, "Delete",
			"deleting the run and what it left in its clusters: it ended (%s) %s ago, past %s of %s",
			cj.Status.Phase, duration.HumanDuration(e.Ended), e.Source, duration.HumanDuration(e.TTL))
	}
	log.FromContext(ctx).Info("Deleting an expired run", "ended", e.Ended, "ttl", e.TTL, "source", e.Source)
	return ctrl.Result{}, nil
}

// openRetry names a retry of cj that has not ended, "" when there is none.
func (r *ClusterJobReconciler) openRetry(ctx context.Context, cj *fleetv1.ClusterJob) (string, error) {
	list := &fleetv1.ClusterJobList{}
	if err := r.Hub.List(ctx, list, client.InNamespace(cj.Namespace), client.MatchingFields{retriesOf: cj.Name},
		client.UnsafeDisableDeepCopy); err != nil {
		return "", fmt.Errorf("listing the retries of the run: %w", err)
	}
	for i := range list.Items {
		if retry := &list.Items[i]; needsParent(retry, cj) {
			return retry.Name, nil
		}
	}
	return "", nil
}

// needsParent tells whether retry, a ClusterJob whose spec.retryOf names
// parent, may still read parent's record: it has not ended, nor is it
// being deleted, and it retries this run of the name: one that started
// names the run's UID in status.retryOf, and one that did not will retry
// whichever run has the name.
func needsParent(retry, parent *fleetv1.ClusterJob) bool {
	switch {
	case retry.UID == parent.UID || retry.Status.Phase.IsFinished() || !retry.DeletionTimestamp.IsZero():
		return false
	case retry.Status.RetryOf != nil:
		return retry.Status.RetryOf.UID == string(parent.UID)
	}
	return true
}

// indexRetries indexes ClusterJobs by the run they retry.
func indexRetries(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &fleetv1.ClusterJob{}, retriesOf, func(o client.Object) []string {
		if cj := o.(*fleetv1.ClusterJob); cj.Spec.RetryOf != nil {
			return []string{cj.Spec.RetryOf.Name}
		}
		return nil
	})
}

// retryLetGo passes the events after which a retry no longer keeps its
// parent: it ended, its deletion began, or it is gone. Status writes
// reach the fleet reconciler through no other watch.
func retryLetGo() predicate.Predicate {
	isRetry := func(o client.Object) bool {
		cj, ok := o.(*fleetv1.ClusterJob)
		return ok && cj.Spec.RetryOf != nil
	}
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*fleetv1.ClusterJob)
			updated, okNew := e.ObjectNew.(*fleetv1.ClusterJob)
			if !okOld || !okNew || updated.Spec.RetryOf == nil {
				return false
			}
			return updated.Status.Phase.IsFinished() && !old.Status.Phase.IsFinished() ||
				!updated.DeletionTimestamp.IsZero() && old.DeletionTimestamp.IsZero()
		},
		DeleteFunc:  func(e event.DeleteEvent) bool { return isRetry(e.Object) },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// toRetried maps a retry to the run it retries, whose TTL it may have held.
func toRetried(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []mcreconcile.Request {
		cj, ok := o.(*fleetv1.ClusterJob)
		if !ok || cj.Spec.RetryOf == nil {
			return nil
		}
		key := types.NamespacedName{Namespace: cj.Namespace, Name: cj.Spec.RetryOf.Name}
		return []mcreconcile.Request{{Request: reconcile.Request{NamespacedName: key}}}
	})
}
