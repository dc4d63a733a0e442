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
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// ClusterSetReconciler keeps each ClusterSet's status: how many registered
// clusters are in the set, and whether their work namespaces enforce the
// set's Pod Security level.
type ClusterSetReconciler struct {
	// Hub reads from the hub manager's cache.
	Hub client.Client
	// RegistrationNamespace is the hub namespace of registration Secrets.
	RegistrationNamespace string
}

// SetupWithManager runs the reconciler on the hub's own manager, woken by
// ClusterSets and by registration Secrets, whose set is their label.
func (r *ClusterSetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("clusterset").
		For(&fleetv1.ClusterSet{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.allSets)).
		Complete(r)
}

// Reconcile counts the set's clusters, compares the level each one's
// registration records with the set's, and writes the status when it
// changed.
func (r *ClusterSetReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cs := &fleetv1.ClusterSet{}
	if err := r.Hub.Get(ctx, req.NamespacedName, cs); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	secrets := &corev1.SecretList{}
	if err := r.Hub.List(ctx, secrets, client.InNamespace(r.RegistrationNamespace),
		client.MatchingLabels{fleetv1.RegistrationLabel: "true"}); err != nil {
		return reconcile.Result{}, fmt.Errorf("listing registrations: %w", err)
	}
	recorded := map[string]string{}
	for _, s := range secrets.Items {
		if s.DeletionTimestamp.IsZero() && fleetv1.SetOf(s.Labels) == cs.Name {
			recorded[s.Name] = s.Annotations[fleetv1.PodSecurityAnnotation]
		}
	}
	status := *cs.Status.DeepCopy()
	status.Clusters, status.ObservedGeneration = int32(len(recorded)), cs.Generation
	cond := podSecurityCondition(levelOf(cs), recorded)
	cond.ObservedGeneration, cond.LastTransitionTime = cs.Generation, metav1.Now()
	meta.SetStatusCondition(&status.Conditions, cond)
	if apiequality.Semantic.DeepEqual(cs.Status, status) {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFromWithOptions(cs.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cs.Status = status
	ctx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
	defer cancel()
	return reconcile.Result{}, client.IgnoreNotFound(r.Hub.Status().Patch(ctx, cs, patch))
}

// levelOf is the set's podSecurity, defaulted as the API server defaults it.
func levelOf(cs *fleetv1.ClusterSet) fleetv1.PodSecurityLevel {
	if cs.Spec.PodSecurity == "" {
		return fleetv1.DefaultPodSecurityLevel
	}
	return cs.Spec.PodSecurity
}

// maxClustersNamed bounds the clusters a condition message names.
const maxClustersNamed = 5

// podSecurityCondition is the set's MembersEnforcePodSecurity condition,
// from the level each cluster's registration records ("" for none), by
// cluster. Changing a set's podSecurity changes what the hub checks
// templates against at once, but not the label `kubectl fleetjob register`
// put on the members' work namespaces: the hub may not relabel a member's
// namespace (its identity there is least-privilege, and lowering a level
// is not its call), so it says which clusters to register again.
func podSecurityCondition(level fleetv1.PodSecurityLevel, recorded map[string]string) metav1.Condition {
	var other, unknown []string
	for _, name := range slices.Sorted(maps.Keys(recorded)) {
		switch recorded[name] {
		case string(level):
		case "":
			unknown = append(unknown, name)
		default:
			other = append(other, fmt.Sprintf("%s (%s)", name, recorded[name]))
		}
	}
	rerun := "; run `kubectl fleetjob register` again for them so that the members enforce it too"
	notRecorded := "registrations that do not record what their work namespace enforces (written by an older kubectl fleetjob, or a Kubernetes namespace register leaves alone): " +
		namedFew(unknown)
	cond := metav1.Condition{Type: fleetv1.ConditionMembersEnforcePodSecurity}
	switch {
	case len(other) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, fleetv1.ReasonPodSecurityMismatch
		cond.Message = fmt.Sprintf("work namespaces labelled with another Pod Security level than the set's %s: %s; the hub holds templates to %s all the same",
			level, namedFew(other), level)
		if len(unknown) > 0 {
			cond.Message += "; " + notRecorded
		}
		cond.Message += rerun
	case len(unknown) > 0:
		cond.Status, cond.Reason = metav1.ConditionUnknown, fleetv1.ReasonPodSecurityNotRecorded
		cond.Message = notRecorded + rerun
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, fleetv1.ReasonPodSecurityEnforced
		cond.Message = fmt.Sprintf("every cluster's work namespace enforces %s (%d clusters)", level, len(recorded))
	}
	return cond
}

// namedFew joins the first few names and counts the rest.
func namedFew(names []string) string {
	out := strings.Join(names[:min(len(names), maxClustersNamed)], ", ")
	if len(names) > maxClustersNamed {
		out += fmt.Sprintf(" and %d more", len(names)-maxClustersNamed)
	}
	return out
}

// allSets maps a registration change to every ClusterSet: a relabelled
// Secret leaves one set for another.
func (r *ClusterSetReconciler) allSets(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetNamespace() != r.RegistrationNamespace {
		return nil
	}
	list := &fleetv1.ClusterSetList{}
	if err := r.Hub.List(ctx, list); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}
