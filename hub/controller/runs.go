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
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/fleet"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// Hub cache indexes of MemberRuns: by their ClusterJob's UID, for the fleet
// reconciler, and by cluster, for member events that concern every run in
// a cluster.
const (
	runsOfClusterJob = "spec.clusterJobUID"
	runsInCluster    = "spec.cluster"
)

func indexMemberRuns(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &fleetv1.MemberRun{}, runsOfClusterJob, func(o client.Object) []string {
		return []string{o.(*fleetv1.MemberRun).Spec.ClusterJobUID}
	}); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &fleetv1.MemberRun{}, runsInCluster, func(o client.Object) []string {
		return []string{o.(*fleetv1.MemberRun).Spec.Cluster}
	})
}

// memberRuns are the ClusterJob's MemberRuns, sorted by cluster, read from
// the cache without copies: callers copy before they change one. When the
// cache holds fewer than the run selected, it may not have seen them all
// created yet, so the hub's API server answers instead. Only the fleet's
// own count (fromFleet): a copy under another name, or one of a cluster
// the run did not select, is never a cluster of the run, and two rows of
// one cluster would make every status write fail.
func (r *ClusterJobReconciler) memberRuns(ctx context.Context, cj *fleetv1.ClusterJob) ([]fleetv1.MemberRun, error) {
	list := &fleetv1.MemberRunList{}
	if err := r.Hub.List(ctx, list, client.InNamespace(cj.Namespace), client.MatchingFields{runsOfClusterJob: string(cj.UID)},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing MemberRuns: %w", err)
	}
	if n := len(list.Items); n < int(cj.Status.Summary.Clusters.Total) || n < len(cj.Status.SelectedClusters) {
		ctx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
		defer cancel()
		list = &fleetv1.MemberRunList{}
		if err := r.HubReader.List(ctx, list, client.InNamespace(cj.Namespace),
			client.MatchingLabels{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID))}); err != nil {
			return nil, fmt.Errorf("listing MemberRuns: %w", err)
		}
	}
	runs := slices.DeleteFunc(list.Items, func(mr fleetv1.MemberRun) bool { return fromFleet(cj, &mr) != "" })
	slices.SortFunc(runs, func(a, b fleetv1.MemberRun) int { return strings.Compare(a.Spec.Cluster, b.Spec.Cluster) })
	return runs, nil
}

// fromFleet says why mr is not the MemberRun the fleet made for one of
// cj's clusters, "" when it is: it names cj by UID, has the one name the
// hub gives the MemberRun of its cluster, and, once the run recorded its
// selection, its cluster is selected.
func fromFleet(cj *fleetv1.ClusterJob, mr *fleetv1.MemberRun) string {
	switch {
	case mr.Spec.ClusterJobUID != string(cj.UID):
		return fleetv1.ReasonClusterJobNotFound
	case len(cj.Status.SelectedClusters) > 0 && !isSelected(cj, mr.Spec.Cluster):
		return fleetv1.ReasonNotSelected
	case mr.Name != naming.MemberRunName(cj.Name, mr.Spec.Cluster):
		return fleetv1.ReasonDuplicateMemberRun
	}
	return ""
}

// isSelected tells whether the run selected cluster. The hub writes the
// selection sorted: a 2,000-cluster run checks each MemberRun in 11 steps.
func isSelected(cj *fleetv1.ClusterJob, cluster string) bool {
	_, found := slices.BinarySearch(cj.Status.SelectedClusters, cluster)
	return found
}

// fleetRuns is what hub/fleet sees of each MemberRun. A MemberRun that has
// not written its row yet shows the row an older hub wrote for its cluster
// in the ClusterJob's status.clusters, if any.
func fleetRuns(cj *fleetv1.ClusterJob, runs []fleetv1.MemberRun) []fleet.MemberRun {
	out := make([]fleet.MemberRun, len(runs))
	for i := range runs {
		mr := &runs[i]
		row := mr.Status.Row()
		legacy := false
		if mr.Status.Name == "" {
			if old := legacyRow(cj, mr.Spec.Cluster); old != nil {
				row, legacy = *old, true
			}
		}
		row.Name = mr.Spec.Cluster
		out[i] = fleet.MemberRun{Cluster: mr.Spec.Cluster, Admitted: mr.Spec.Admitted, AcceptedFailures: mr.Spec.AcceptedFailures, Row: row, Legacy: legacy}
	}
	return out
}

// legacyRow is cluster's row in cj's deprecated status.clusters, written by
// a hub from before MemberRuns; nil when there is none.
func legacyRow(cj *fleetv1.ClusterJob, cluster string) *fleetv1.ClusterStatus {
	if cj == nil {
		return nil
	}
	for i := range cj.Status.Clusters {
		if cj.Status.Clusters[i].Name == cluster {
			return &cj.Status.Clusters[i]
		}
	}
	return nil
}

// inherited are the clusters of a run started by an older hub, which did
// not record its selection: its MemberRuns' and its status.clusters rows'.
// An upgrade follows such a run to its end rather than lose it.
func inherited(cj *fleetv1.ClusterJob, runs []fleetv1.MemberRun) []string {
	var names []string
	for _, mr := range runs {
		names = append(names, mr.Spec.Cluster)
	}
	for _, row := range cj.Status.Clusters {
		names = append(names, row.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// recordSelection writes the run's selected clusters into its status before
// any of their MemberRuns exists: the run is exactly these clusters from
// then on, whatever a partial creation, a crash or a later registration
// does. cj is updated in place.
func (r *ClusterJobReconciler) recordSelection(ctx context.Context, cj *fleetv1.ClusterJob, names []string) error {
	patch := client.MergeFromWithOptions(cj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cj.Status.SelectedClusters = names
	if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Status().Patch(ctx, cj, patch) }); err != nil {
		return fmt.Errorf("recording the selected clusters: %w", err)
	}
	return nil
}

// ensureRuns creates the MemberRuns of the selected clusters that have
// none, not admitted: the fleet admits clusters only once every one
// exists. It returns the run's MemberRuns, the clusters still without
// one, and why. Creating one that exists is not an error: a reconcile lost
// after a first try leaves them behind.
func (r *ClusterJobReconciler) ensureRuns(ctx context.Context, cj *fleetv1.ClusterJob, runs []fleetv1.MemberRun) ([]fleetv1.MemberRun, []string, error) {
	have := make(map[string]bool, len(runs))
	for _, mr := range runs {
		have[mr.Spec.Cluster] = true
	}
	var todo []fleetv1.MemberRun
	for _, c := range cj.Status.SelectedClusters {
		if !have[c] {
			todo = append(todo, r.newMemberRun(cj, c))
		}
	}
	if len(todo) == 0 {
		return runs, nil, nil
	}
	if err := r.setRetryOf(ctx, cj, todo); err != nil {
		return runs, names(todo), err
	}
	errs := make([]error, len(todo))
	r.forEach(len(todo), func(i int) {
		mr := &todo[i]
		if old := legacyRow(cj, mr.Spec.Cluster); old != nil {
			mr.Spec.Admitted = old.StartTime != nil // it started under the older hub
		}
		err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Create(ctx, mr) })
		if apierrors.IsAlreadyExists(err) {
			if err = r.HubReader.Get(ctx, client.ObjectKeyFromObject(mr), mr); err == nil && fromFleet(cj, mr) != "" {
				err = fmt.Errorf("a MemberRun of that name exists and is not this run's (%s)", fromFleet(cj, mr))
			}
		}
		if err != nil {
			errs[i] = fmt.Errorf("creating MemberRun %s: %w", mr.Name, err)
		}
	})
	var missing []string
	for i := range todo {
		if errs[i] != nil {
			missing = append(missing, todo[i].Spec.Cluster)
			continue
		}
		runs = append(runs, todo[i])
	}
	slices.SortFunc(runs, func(a, b fleetv1.MemberRun) int { return strings.Compare(a.Spec.Cluster, b.Spec.Cluster) })
	if err := errors.Join(errs...); err != nil {
		return runs, missing, err
	}
	log.FromContext(ctx).Info("Created MemberRuns", "clusters", len(todo), "selected", len(cj.Status.SelectedClusters))
	return runs, nil, nil
}

func names(runs []fleetv1.MemberRun) []string {
	out := make([]string, len(runs))
	for i := range runs {
		out[i] = runs[i].Spec.Cluster
	}
	return out
}

// selectRun selects the run's clusters, and returns those left out beyond
// MaxClusters, and whether the namespace has no binding (tenancy on).
func (r *ClusterJobReconciler) selectRun(ctx context.Context, cj *fleetv1.ClusterJob) (names, leftOut []string, unbound bool, err error) {
	var sets []string
	if r.Options.Tenancy {
		if sets, err = r.boundSets(ctx, cj.Namespace); err != nil || len(sets) == 0 {
			return nil, nil, err == nil, err
		}
	}
	names, leftOut, err = r.selectClusters(ctx, cj, sets)
	return names, leftOut, false, err
}

// newMemberRun is the MemberRun of cj in cluster, owned by cj and held by
// the cleanup finalizer from its creation.
func (r *ClusterJobReconciler) newMemberRun(cj *fleetv1.ClusterJob, cluster string) fleetv1.MemberRun {
	mr := fleetv1.MemberRun{
		ObjectMeta: metav1.ObjectMeta{
			Name: naming.MemberRunName(cj.Name, cluster), Namespace: cj.Namespace,
			Labels: map[string]string{
				fleetv1.ClusterJobLabel:    naming.LabelValue(cj.Name),
				fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID)),
				fleetv1.ClusterLabel:       naming.LabelValue(cluster),
			},
			Annotations: map[string]string{fleetv1.ClusterAnnotation: cluster},
			Finalizers:  []string{Finalizer},
		},
		Spec: fleetv1.MemberRunSpec{ClusterJob: cj.Name, ClusterJobUID: string(cj.UID), Cluster: cluster},
	}
	// The scheme knows ClusterJob: this cannot fail.
	_ = controllerutil.SetControllerReference(cj, &mr, r.Hub.Scheme())
	return mr
}

// selectClusters returns the clusters the registration Secrets select,
// sorted by name, and those that matched beyond MaxClusters, left out.
// sets, when set, are the cluster sets the run may reach: a cluster of
// another set never matches.
func (r *ClusterJobReconciler) selectClusters(ctx context.Context, cj *fleetv1.ClusterJob, sets []string) (names, leftOut []string, err error) {
	selector, err := metav1.LabelSelectorAsSelector(cj.Spec.ClusterSelector)
	if err != nil {
		return nil, nil, fmt.Errorf("spec.clusterSelector: %w", err)
	}
	secrets, err := r.registrations(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range secrets {
		if selector.Matches(labels.Set(s.Labels)) && (sets == nil || slices.Contains(sets, fleetv1.SetOf(s.Labels))) {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	if len(names) > fleetv1.MaxClusters {
		return names[:fleetv1.MaxClusters], names[fleetv1.MaxClusters:], nil
	}
	return names, nil, nil
}

// registrations are the registration Secrets not being deleted, from the
// hub's cache: the fleet's membership and labels as every replica of the
// hub reads them alike, whichever replica connects to a member and whether
// or not it could. They are the cache's own objects, not copies (each holds
// a kubeconfig, and a fleet has thousands): read them, never change them.
func (r *shared) registrations(ctx context.Context) ([]corev1.Secret, error) {
	secrets := &corev1.SecretList{}
	if err := r.Hub.List(ctx, secrets, client.InNamespace(r.Options.RegistrationNamespace),
		client.MatchingLabels{fleetv1.RegistrationLabel: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing registrations: %w", err)
	}
	live := secrets.Items[:0]
	for _, s := range secrets.Items {
		if s.DeletionTimestamp.IsZero() {
			live = append(live, s)
		}
	}
	return live, nil
}

// admitAndHalt writes the fleet's decision into the MemberRuns' specs, a
// bounded number at a time: admissions, halts and accepted failures.
// runs are the cache's: each is copied first.
func (r *ClusterJobReconciler) admitAndHalt(ctx context.Context, runs []fleetv1.MemberRun, d fleet.Decision) error {
	var mu sync.Mutex
	var errs []error
	r.forEach(len(runs), func(i int) {
		admit := slices.Contains(d.Admit, runs[i].Spec.Cluster) && !runs[i].Spec.Admitted
		halt := d.Halt != nil && runs[i].Spec.Halt == nil && !runs[i].Status.Phase.IsFinished()
		var accept int32
		if d.Accept != nil {
			accept = d.Accept.Runs[runs[i].Spec.Cluster]
		}
		accepts := accept > runs[i].Spec.AcceptedFailures
		if !admit && !halt && !accepts {
			return
		}
		mr := runs[i].DeepCopy()
		// No optimistic lock: the member reconciler's status writes would
		// make every admission of a MemberRun just created lose a race.
		// Only this reconciler writes the spec, and the CRD's rules keep
		// each field moving one way (admitted, halt, acceptedFailures).
		patch := client.MergeFrom(mr.DeepCopy())
		if admit {
			mr.Spec.Admitted = true
		}
		if halt {
			mr.Spec.Halt = d.Halt.DeepCopy()
		}
		if accepts {
			mr.Spec.AcceptedFailures = accept
		}
		err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Patch(ctx, mr, patch) })
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("updating MemberRun %s: %w", mr.Name, err))
		}
	})
	return errors.Join(errs...)
}

// finalizeClusterJob deletes the run's MemberRuns, whose finalizers clean
// their members, each within its own deadline, and lets the ClusterJob go
// once they are gone. The API server answers, not the cache: a MemberRun
// created a moment ago must not be missed.
func (r *ClusterJobReconciler) finalizeClusterJob(ctx context.Context, cj *fleetv1.ClusterJob) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cj, Finalizer) {
		return ctrl.Result{}, nil
	}
	list := &fleetv1.MemberRunList{}
	listCtx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
	defer cancel()
	if err := r.HubReader.List(listCtx, list, client.InNamespace(cj.Namespace),
		client.MatchingLabels{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID))}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing MemberRuns: %w", err)
	}
	// Only the fleet's own: a MemberRun made by hand is not the hub's to
	// delete (its condition says so), nor does the run wait for it.
	runs := slices.DeleteFunc(list.Items, func(mr fleetv1.MemberRun) bool { return fromFleet(cj, &mr) != "" })
	if len(runs) > 0 {
		errs := make([]error, len(runs))
		r.forEach(len(runs), func(i int) {
			if runs[i].DeletionTimestamp.IsZero() {
				errs[i] = client.IgnoreNotFound(r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Delete(ctx, &runs[i]) }))
			}
		})
		log.FromContext(ctx).Info("Waiting for MemberRuns to clean up their members", "left", len(runs))
		// Their deletion wakes us; the retry only paces a stuck one.
		return ctrl.Result{RequeueAfter: cleanupRetry}, errors.Join(errs...)
	}
	patch := client.MergeFromWithOptions(cj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(cj, Finalizer)
	if err := r.hubWrite(ctx, func(ctx context.Context) error { return r.Hub.Patch(ctx, cj, patch) }); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}
