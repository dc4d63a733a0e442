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

// Package controller holds the hub's two reconcilers. The fleet
// reconciler (ClusterJob) selects the run's clusters, creates one MemberRun
// per cluster, admits and halts them as hub/fleet decides, and sums their
// rows into the ClusterJob's status; it reads hub objects only. The member
// reconciler (MemberRun) runs the ClusterJob in one member: it observes that
// member, asks hub/member what to do, does it through spoke, and writes the
// MemberRun's status once. An event in one member reads and writes nothing
// of another.
package controller

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/disruption"
	"github.com/fleetjob/fleetjob/hub/fleet"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/text"
	"github.com/fleetjob/fleetjob/spoke"
)

// +kubebuilder:rbac:groups=fleetjob.io,resources=clusterjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=fleetjob.io,resources=clusterjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=fleetjob.io,resources=clusterjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=fleetjob.io,resources=memberruns,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=fleetjob.io,resources=memberruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=fleetjob.io,resources=memberruns/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,resourceNames=kube-system,verbs=get

// Finalizer holds a MemberRun until the run's Jobs and plans are gone from
// its member (owner references cannot reach across clusters), and a
// ClusterJob until its MemberRuns are gone.
const Finalizer = "fleetjob.io/cleanup"

// conflictRetry is how soon a reconcile that lost a status write retries:
// long enough for the cache to catch up with the write that won, short
// enough that a group handoff stays well under a second.
const conflictRetry = 100 * time.Millisecond

// hubWriteTimeout bounds one write to the hub API server; a status patch
// takes milliseconds, so this only ends a hung connection.
const hubWriteTimeout = 30 * time.Second

// Options tune the reconciler.
type Options struct {
	// RegistrationNamespace is the hub namespace of registration Secrets.
	RegistrationNamespace string
	// UnreachableTimeout is how long a started member may stay unreachable
	// before it counts as failed, and how long it may hold a deletion.
	UnreachableTimeout time.Duration
	// MemberErrorTimeout is how long the hub's work in a reachable member
	// may keep failing, retried with backoff, before the member fails; and
	// how long a run may keep failing to create a selected cluster's
	// MemberRun before it fails.
	MemberErrorTimeout time.Duration
	// EmptySelectionGrace is how long a run that selects no cluster waits
	// for registrations before it fails NoClusters.
	EmptySelectionGrace time.Duration
	// ConnectTimeout is the registry's --member-connect-timeout: for that
	// long after the hub starts, members still connecting accrue no
	// unreachable time.
	ConnectTimeout time.Duration
	// MemberTimeout bounds the work done in one member per reconcile.
	MemberTimeout time.Duration
	// MemberWorkers is how many MemberRuns are reconciled at once: each
	// one's work is in its member, so this is how many members the hub
	// works in at a time.
	MemberWorkers int
	// Parallelism is how many writes or reads one ClusterJob's reconcile
	// sends to the hub's API at once (its MemberRuns' creates and spec
	// updates).
	Parallelism int
	// HubID is this hub's identity, set as a label on everything it creates
	// in members; it only ever deletes objects with its own.
	HubID string
	// GCInterval is how often every reachable member is swept for this
	// hub's orphans, besides each (re)connection.
	GCInterval time.Duration
	// GCMinAge spares a run's objects until they are this old.
	GCMinAge time.Duration
	// Tenancy confines a ClusterJob to the clusters of the cluster sets
	// bound to its namespace, and its pod template to each set's Pod
	// Security level. Off, any ClusterJob may run any template anywhere.
	Tenancy bool
	// EndedRunTTL is how long an ended run without
	// spec.ttlSecondsAfterFinished is kept before the hub deletes it; 0
	// keeps it until someone does.
	EndedRunTTL time.Duration
	// Clock is the hub's clock, the real one when nil: every bound and
	// maintenance window is measured by it, so tests may set it.
	Clock clock.PassiveClock
}

// shared is what the hub's two reconcilers share: the managers and clients,
// the member registry, the options and the clock. Its methods are the
// reads both make (registrations, bound cluster sets) and the bounded
// writes and events.
type shared struct {
	Manager mcmanager.Manager
	Hub     client.Client
	// HubReader reads from the hub's API server, not a cache.
	HubReader client.Reader
	Members   *clusters.Provider
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	Options   Options
}

// ClusterJobReconciler runs each ClusterJob across the fleet: it selects
// the clusters, creates their MemberRuns, admits and halts them, writes
// the ClusterJob's status from theirs, and ends the run. Sharded, only the
// leader runs it.
type ClusterJobReconciler struct {
	*shared
	// members is the member reconciler of this replica, whose record of
	// the hand-offs a run's end clears.
	members *MemberRunReconciler
}

// MemberRunReconciler runs a ClusterJob in one member cluster per
// MemberRun: it observes the run there, decides, starts groups, records
// the results and writes the MemberRun's status. Sharded, every replica
// runs it for the members it serves.
type MemberRunReconciler struct {
	*shared
	// Shard, when set, says which member clusters this replica of the hub
	// serves: it runs the MemberRuns of those only (nil: every one).
	Shard Ownership

	// underWay counts the group starts under way, which a stopping hub
	// waits for (Hub.Start).
	underWay inFlight
	// startedAt is when the hub started: its startup grace counts from it.
	startedAt time.Time
	// finishes is when the hub last saw each run's Jobs finish, per member.
	finishes *finishLog
	// pace spaces the reconciles of a MemberRun while its member changes.
	pace *pacer
	// plans are the members' plans, decoded once each; records the
	// results records last written, so that reading one back costs no
	// decoding; derivations what each run's last reconcile derived of its
	// nodes, so that the next derives only those that changed.
	plans       spoke.Plans
	records     spoke.Records
	derivations spoke.Derivations
	// deriveMisses is the count of derivations.Misses last reported.
	deriveMisses atomic.Int64
	// starts is what the hub saw of each run's starts per member, by its
	// own clock.
	starts startWatches
	// held are the notes of MemberRun reconciles whose status write failed.
	held heldNotes
	// ledger counts the nodes disruptive runs disrupt, and grants their
	// starts under the FleetDisruptionBudgets.
	ledger *disruption.Ledger
	// grants, on a sharded hub, is where the replicas' ledgers meet.
	grants *sharedGrants
}

// Ownership says which member clusters a replica of the hub serves.
type Ownership interface {
	// Owns says whether this replica serves cluster now.
	Owns(cluster string) bool
}

// fenced is an Ownership whose writes to a member end at a deadline: a
// sharded hub's shard.
type fenced interface {
	// Until is when this replica's writes to member end, and whether it
	// may write to member now.
	Until(member string) (time.Time, bool)
	// Steady is the least time before its fence a replica whose session
	// is renewed on time has.
	Steady() time.Duration
}

// fence is when this replica's writes to cluster end, if they do, and the
// least time before it a session renewed on time leaves.
func (r *MemberRunReconciler) fence(cluster string) (until time.Time, steady time.Duration, ok bool) {
	if f, is := r.Shard.(fenced); is {
		until, ok = f.Until(cluster)
		return until, f.Steady(), ok
	}
	return time.Time{}, 0, false
}

// owns says whether this replica runs the MemberRuns of cluster.
func (r *MemberRunReconciler) owns(cluster string) bool {
	return r.Shard == nil || r.Shard.Owns(cluster)
}

// reconcileClusterJob fetches the ClusterJob and its MemberRuns, creates
// them when the run starts, decides for the fleet, admits and halts
// MemberRuns, writes the ClusterJob's status once, then records the events.
func (r *ClusterJobReconciler) reconcileClusterJob(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	cj := &fleetv1.ClusterJob{}
	if err := r.Hub.Get(ctx, req.NamespacedName, cj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("clusterjob", req.NamespacedName))
	if !cj.DeletionTimestamp.IsZero() {
		return r.finalizeClusterJob(ctx, cj)
	}
	if err := r.ensureFinalizer(ctx, cj); err != nil {
		return ctrl.Result{}, err
	}
	if cj.Status.Phase.IsFinished() {
		// A finished run is a record; nothing restarts it. Only its TTL
		// is left to run out.
		return r.expire(ctx, cj)
	}
	s, res, err := r.observeFleet(ctx, cj)
	if s == nil {
		return res, err
	}
	decision := fleet.Decide(s.in)
	notes, err := r.actOnFleet(ctx, cj, s, decision)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.writeFleetStatus(ctx, cj, s, decision, notes)
}

// fleetScope is what one ClusterJob reconcile decides on: its MemberRuns,
// created where missing, and the fleet's input read from them.
type fleetScope struct {
	runs []fleetv1.MemberRun
	in   fleet.Input
	// leftOut are the clusters selected beyond MaxClusters, missing the
	// clusters whose MemberRun could not be created, for createErr.
	leftOut, missing []string
	createErr        error
}

// observeFleet reads the run's MemberRuns, records its selection the first
// time and creates the MemberRuns missing, and reads the fleet's input. A
// nil scope ends the reconcile with the result and error returned.
func (r *ClusterJobReconciler) observeFleet(ctx context.Context, cj *fleetv1.ClusterJob) (*fleetScope, ctrl.Result, error) {
	runs, err := r.memberRuns(ctx, cj)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	leftOut, refused, unbound, err := r.ensureSelection(ctx, cj, runs)
	if apierrors.IsConflict(err) {
		return nil, ctrl.Result{RequeueAfter: conflictRetry}, nil // nothing was created: look again with fresh state
	}
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	runs, missing, createErr := r.ensureRuns(ctx, cj, runs)
	now := r.Clock.Now()
	in := fleet.Input{
		Refused: refused, RetryOf: retrySource(cj, runs), Unbound: unbound,
		Spec: &cj.Spec, Runs: fleetRuns(cj, runs), LeftOut: leftOut, Now: now, Created: cj.CreationTimestamp.Time,
		EmptySelectionGrace: r.Options.EmptySelectionGrace,
		Accepted:            ptr.Deref(cj.Status.AcceptedFailures, fleetv1.AcceptedFailures{}),
		BudgetSuspended:     meta.IsStatusConditionTrue(cj.Status.Conditions, fleetv1.ConditionFailureBudgetExceeded),
		Selected:            cj.Status.SelectedClusters, Missing: missing, MemberErrorTimeout: r.Options.MemberErrorTimeout,
		CreatingSince: fleet.CreatingSince(cj.Status.Conditions, now),
	}
	if err := r.withCanaryLabels(ctx, cj, in.Runs); err != nil {
		return nil, ctrl.Result{}, err
	}
	if createErr != nil {
		in.CreateError = text.Truncate(createErr.Error(), 512)
		log.FromContext(ctx).Error(createErr, "Creating MemberRuns", "missing", len(missing))
	}
	return &fleetScope{runs: runs, in: in, leftOut: leftOut, missing: missing, createErr: createErr}, ctrl.Result{}, nil
}

// actOnFleet admits and halts MemberRuns as decided, and suspends the run
// when a failure budget says so; the notes are the events of what it did.
func (r *ClusterJobReconciler) actOnFleet(ctx context.Context, cj *fleetv1.ClusterJob, s *fleetScope, decision fleet.Decision) ([]note, error) {
	if err := r.admitAndHalt(ctx, s.runs, decision); err != nil {
		return nil, err
	}
	var notes []note
	if s.createErr != nil {
		notes = append(notes, note{corev1.EventTypeWarning, fleetv1.ReasonMemberRunsNotCreated, fmt.Sprintf("could not create the MemberRuns of %s, retrying; no cluster starts before every one exists: %v",
			strings.Join(s.missing, ", "), s.createErr)})
	}
	if decision.Suspend != "" {
		if err := r.suspend(ctx, cj); err != nil {
			return nil, err
		}
		if decision.SuspendScope == fleet.ScopeRun {
			budgetsExceeded.WithLabelValues(fleet.ScopeRun, string(fleetv1.OnExceededSuspend)).Inc()
		}
		notes = append(notes, note{corev1.EventTypeWarning, fleetv1.ReasonFailureBudgetExceeded, "suspending the run: " + decision.Suspend})
	}
	return notes, nil
}

// writeFleetStatus writes the ClusterJob's status once, then counts and
// records what its transitions say.
func (r *ClusterJobReconciler) writeFleetStatus(ctx context.Context, cj *fleetv1.ClusterJob, s *fleetScope, decision fleet.Decision, notes []note) (ctrl.Result, error) {
	status := fleet.Status(s.in, decision, &cj.Status, cj.Generation)
	prevPhase, prevConditions := cj.Status.Phase, cj.Status.Conditions
	// Counted on the condition's transition, which the optimistic lock on
	// the status write makes happen once per run: a halt patch can be
	// retried by several reconciles.
	stopped := decision.Halt != nil && decision.Halt.Reason == fleetv1.ReasonFailureBudgetExceeded &&
		!meta.IsStatusConditionTrue(cj.Status.Conditions, fleetv1.ConditionFailureBudgetExceeded)
	if err := r.writeStatus(ctx, cj, status); err != nil {
		if apierrors.IsConflict(err) {
			// The cache is behind our own last write; status-only updates
			// do not wake us, so look again shortly. Nothing was acted on
			// twice: every action above is idempotent.
			log.FromContext(ctx).V(1).Info("Writing status lost a race; retrying")
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if n, ok := approvalNote(prevConditions, status.Conditions); ok {
		notes = append(notes, n)
	}
	if stopped {
		budgetsExceeded.WithLabelValues(fleet.ScopeRun, string(fleetv1.OnExceededStop)).Inc()
		notes = append(notes, note{corev1.EventTypeWarning, fleetv1.ReasonFailureBudgetExceeded, "stopping the run: " + decision.Halt.Message})
	}
	if cj.Status.Phase.IsFinished() {
		r.members.finishes.forget(naming.LabelValue(string(cj.UID)))
	}
	if len(s.leftOut) > 0 {
		notes = append(notes, note{corev1.EventTypeWarning, fleetv1.ConditionClustersLeftOut, fleet.LeftOutMessage(s.leftOut)})
	}
	r.emit(cj, notes, prevPhase)
	if cj.Status.Phase.IsFinished() {
		// Its status write wakes no reconcile: its TTL starts now.
		return r.expire(ctx, cj)
	}
	return ctrl.Result{RequeueAfter: decision.RequeueAfter}, nil
}

// ensureSelection records the run's clusters the first time it is
// reconciled (its parent's for a retry), before any MemberRun is created,
// and those of a run an older hub started, which did not record them.
// refused says why a retry cannot start, unbound that the namespace has
// no binding; leftOut are the clusters selected beyond MaxClusters.
func (r *ClusterJobReconciler) ensureSelection(ctx context.Context, cj *fleetv1.ClusterJob, runs []fleetv1.MemberRun) (leftOut []string, refused string, unbound bool, err error) {
	var names []string
	switch {
	case len(cj.Status.SelectedClusters) > 0:
		return nil, "", false, nil
	case len(runs) > 0 || len(cj.Status.Clusters) > 0:
		names = inherited(cj, runs)
	case selected(cj):
		return nil, "", false, nil // started with no cluster: nothing joins later
	case cj.Spec.RetryOf != nil:
		names, refused, err = r.selectRetry(ctx, cj)
	default:
		names, leftOut, unbound, err = r.selectRun(ctx, cj)
	}
	if err != nil || len(names) == 0 {
		return leftOut, refused, unbound, err
	}
	return leftOut, refused, unbound, r.recordSelection(ctx, cj, names)
}

// retrySource is the parent of a retry, as its MemberRuns name it.
func retrySource(cj *fleetv1.ClusterJob, runs []fleetv1.MemberRun) *fleetv1.RetrySource {
	if cj.Spec.RetryOf == nil || len(runs) == 0 || runs[0].Spec.RetryOf == nil {
		return nil
	}
	return &fleetv1.RetrySource{Name: runs[0].Spec.RetryOf.ClusterJob, UID: runs[0].Spec.RetryOf.ClusterJobUID}
}

// selected tells whether the run's clusters were selected: they are then
// its MemberRuns, and a cluster registered later never joins.
func selected(cj *fleetv1.ClusterJob) bool {
	return len(cj.Status.SelectedClusters) > 0 || cj.Status.StartTime != nil || cj.Status.Summary.Clusters.Total > 0
}

// suspend sets the ClusterJob's spec.suspend, as its failurePolicy asks
// when a budget is exceeded. The optimistic lock keeps a person's edit
// made meanwhile: the next reconcile decides again.
func (r *ClusterJobReconciler) suspend(ctx context.Context, cj *fleetv1.ClusterJob) error {
	patch := client.MergeFromWithOptions(cj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cj.Spec.Suspend = ptr.To(true)
	if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Patch(ctx, cj, patch) }); err != nil {
		return fmt.Errorf("suspending the ClusterJob: %w", err)
	}
	return nil
}

func (r *ClusterJobReconciler) ensureFinalizer(ctx context.Context, cj *fleetv1.ClusterJob) error {
	if controllerutil.ContainsFinalizer(cj, Finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(cj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(cj, Finalizer)
	return r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Patch(ctx, cj, patch) })
}

// writeStatus patches the status with an optimistic lock, and not at all
// when nothing changed: a lost race retries with fresh state.
func (r *ClusterJobReconciler) writeStatus(ctx context.Context, cj *fleetv1.ClusterJob, status fleetv1.ClusterJobStatus) error {
	if apiequality.Semantic.DeepEqual(cj.Status, status) {
		return nil
	}
	patch := client.MergeFromWithOptions(cj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cj.Status = status
	if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Status().Patch(ctx, cj, patch) }); err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	return nil
}

// hubWrite bounds a write to the hub: reads come from the cache, but a hub
// API server that hangs must not hold a worker forever.
func (r *shared) hubWrite(ctx context.Context, write func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
	defer cancel()
	return write(ctx)
}
