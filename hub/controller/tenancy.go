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
func (r *Reconciler) boundSets(ctx context.Context, namespace string) ([]string, error) {
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

// checkPodSecurity checks the run's pod template against the Pod Security
// level of the cluster's set, before its plan is frozen: a template the
// set does not allow fails the cluster at once, and no Job is created. A
// set without a ClusterSet object has the default level.
func (r *Reconciler) checkPodSecurity(ctx context.Context, cj *fleetv1.ClusterJob, labels map[string]string) error {
	set := fleetv1.SetOf(labels)
	level := fleetv1.DefaultPodSecurityLevel
	cs := &fleetv1.ClusterSet{}
	switch err := r.Hub.Get(ctx, client.ObjectKey{Name: set}, cs); {
	case err == nil && cs.Spec.PodSecurity != "":
		level = cs.Spec.PodSecurity
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("reading ClusterSet %s: %w", set, err)
	}
	failed, err := podsecurity.Check(level, &cj.Spec.JobTemplate.Spec.Template)
	if err != nil {
		return &spoke.PermanentError{Reason: fleetv1.ReasonPodSecurityViolation, Err: fmt.Errorf("ClusterSet %s: %w", set, err)}
	}
	if len(failed) > 0 {
		return &spoke.PermanentError{Reason: fleetv1.ReasonPodSecurityViolation, Err: fmt.Errorf(
			"spec.jobTemplate.spec.template does not meet Pod Security level %q of cluster set %s, no Job was created: %s", level, set, podsecurity.Describe(failed))}
	}
	return nil
}

// toUnstartedClusterJobs maps a ClusterSetBinding's change to its
// namespace's ClusterJobs: one that waits for a binding starts at once.
func (r *Reconciler) toUnstartedClusterJobs(multicluster.ClusterName, cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
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
