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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/podsecurity"
	"github.com/fleetjob/fleetjob/spoke"
)

// +kubebuilder:rbac:groups=fleetjob.io,resources=clustersetbindings,verbs=get;list;watch
// +kubebuilder:rbac:groups=fleetjob.io,resources=clustersets,verbs=get;list;watch
// +kubebuilder:rbac:groups=fleetjob.io,resources=clustersets/status,verbs=get;update;patch

// boundSets are the cluster sets bound to namespace, sorted: those its
// ClusterJobs may reach.
func (r *shared) boundSets(ctx context.Context, namespace string) ([]string, error) {
	list := &fleetv1.ClusterSetBindingList{}
	if err := r.Hub.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing ClusterSetBindings: %w", err)
	}
	sets := make([]string, 0, len(list.Items))
	for _, b := range list.Items {
		if b.DeletionTimestamp.IsZero() {
			sets = append(sets, b.Spec.ClusterSet)
		}
	}
	slices.Sort(sets)
	return sets, nil
}

// setPolicy is the policy of the cluster set of a cluster with these
// registration labels: its ClusterSet's spec, defaulted as the API server
// defaults it (a set without a ClusterSet object has the defaults).
func (r *shared) setPolicy(ctx context.Context, labels map[string]string) (string, fleetv1.ClusterSetSpec, error) {
	set := fleetv1.SetOf(labels)
	cs := &fleetv1.ClusterSet{}
	if err := r.Hub.Get(ctx, client.ObjectKey{Name: set}, cs); err != nil && !apierrors.IsNotFound(err) {
		return set, fleetv1.ClusterSetSpec{}, fmt.Errorf("reading ClusterSet %s: %w", set, err)
	}
	if cs.Spec.PodSecurity == "" {
		cs.Spec.PodSecurity = fleetv1.DefaultPodSecurityLevel
	}
	return set, cs.Spec, nil
}

// checkTemplate checks the run's pod template against the policy of the
// cluster's set, before its plan is frozen: a template the set does not
// allow fails the cluster at once, and no Job is created. Without tenancy
// there are no sets, and only the hub's reserved ServiceAccount is
// refused.
func (r *MemberRunReconciler) checkTemplate(ctx context.Context, cj *fleetv1.ClusterJob, labels map[string]string) error {
	set, policy := "", (*fleetv1.ClusterSetSpec)(nil)
	if r.Options.Tenancy {
		name, spec, err := r.setPolicy(ctx, labels)
		if err != nil {
			return err
		}
		set, policy = name, &spec
	}
	var refusal *podsecurity.Refusal
	if err := podsecurity.CheckTemplate(set, policy, &cj.Spec.JobTemplate.Spec.Template, "no Job was created"); errors.As(err, &refusal) {
		return &spoke.PermanentError{Reason: refusal.Reason, Err: refusal.Err}
	}
	return nil
}

// tokenAccounts are the ServiceAccounts whose token cj's Job pods may
// mount in a cluster with these registration labels (spoke.Run's
// ServiceAccounts). It is read when Jobs are created, not only when the
// plan froze: an account the set stops allowing mid-run loses its token
// for the groups that start after.
func (r *MemberRunReconciler) tokenAccounts(ctx context.Context, cj *fleetv1.ClusterJob, labels map[string]string) ([]string, error) {
	pod := &cj.Spec.JobTemplate.Spec.Template.Spec
	if !r.Options.Tenancy {
		return podsecurity.TokenAccounts(nil, pod), nil
	}
	_, policy, err := r.setPolicy(ctx, labels)
	if err != nil {
		return nil, err
	}
	return podsecurity.TokenAccounts(&policy, pod), nil
}

// toUnstartedClusterJobs maps a ClusterSetBinding's change to its
// namespace's ClusterJobs: one that waits for a binding starts at once.
func (r *ClusterJobReconciler) toUnstartedClusterJobs(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []mcreconcile.Request {
		list := &fleetv1.ClusterJobList{}
		if err := r.Hub.List(ctx, list, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
			log.FromContext(ctx).Error(err, "Listing ClusterJobs")
			return nil
		}
		var reqs []mcreconcile.Request
		for i := range list.Items {
			if cj := &list.Items[i]; !selected(cj) && !cj.Status.Phase.IsFinished() {
				reqs = append(reqs, hubRequest(ctx, cj)...)
			}
		}
		return reqs
	})
}
