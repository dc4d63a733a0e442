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
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// Cleanup deletes ClusterJob uid's Jobs, with their pods, and its plan from
// namespace. It reports true once nothing of the run is left; false means
// call again later (deletion takes time, and a cached c sees it late). It
// deletes by collection, one call per kind however many nodes ran, so the
// member's credentials need the deletecollection verb on Jobs and
// ConfigMaps.
func Cleanup(ctx context.Context, c client.Client, namespace string, uid types.UID) (bool, error) {
	sel := uidLabels(uid)
	if err := c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(namespace), sel, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return false, fmt.Errorf("deleting the Jobs of ClusterJob %s in namespace %s: %w", uid, namespace, err)
	}
	// The plan goes last: while any Job is left, the plan still explains it.
	if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(namespace), sel); err != nil {
		return false, fmt.Errorf("deleting the plan of ClusterJob %s in namespace %s: %w", uid, namespace, err)
	}
	return noneLeft(ctx, c, namespace, sel)
}

// noneLeft tells whether no Job and no ConfigMap matches sel. It asks for one
// item of each, which a cache also honours.
func noneLeft(ctx context.Context, c client.Reader, namespace string, sel client.MatchingLabels) (bool, error) {
	for _, list := range []client.ObjectList{&batchv1.JobList{}, &corev1.ConfigMapList{}} {
		if err := c.List(ctx, list, client.InNamespace(namespace), sel, client.Limit(1)); err != nil {
			return false, fmt.Errorf("listing what is left in namespace %s: %w", namespace, err)
		}
		if meta.LenList(list) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// CollectGarbage deletes the fleetjob Jobs and plans in namespace whose
// ClusterJob UID label value is not live: runs whose ClusterJob was deleted
// while the member could not be reached, so that Cleanup never ran. It
// returns how many objects it deleted.
//
// c is expected to read through the informer cache that already holds the
// run's Jobs and plans (the hub's member client, or an agent's manager
// client), so its lists are not paged: a controller-runtime cache truncates
// at a limit and refuses continue tokens, so paging would silently miss
// orphans. The lists share the cache's objects rather than copy them.
func CollectGarbage(ctx context.Context, c client.Client, namespace string, live func(uidLabel string) bool) (int, error) {
	jobs, err := collect(ctx, c, namespace, "Job", &batchv1.JobList{}, nil, live)
	if err != nil {
		return jobs, err
	}
	plans, err := collect(ctx, c, namespace, "plan ConfigMap", &corev1.ConfigMapList{},
		client.MatchingLabels{fleetv1.ComponentLabel: planComponent}, live)
	return jobs + plans, err
}

// collect deletes the fleetjob objects of list's kind that match extra and
// whose UID label is not live, unless already being deleted. what names the
// kind in errors.
func collect(ctx context.Context, c client.Client, namespace, what string, list client.ObjectList, extra client.MatchingLabels, live func(string) bool) (int, error) {
	if err := c.List(ctx, list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy,
		client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue}, client.HasLabels{fleetv1.ClusterJobUIDLabel}, extra); err != nil {
		return 0, fmt.Errorf("listing fleetjob %ss in namespace %s: %w", what, namespace, err)
	}
	var orphans []client.Object
	err := meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		if obj.GetDeletionTimestamp() == nil && !live(obj.GetLabels()[fleetv1.ClusterJobUIDLabel]) {
			orphans = append(orphans, obj.DeepCopyObject().(client.Object))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return deleteAll(ctx, c, what, orphans)
}

// deleteAll deletes objs; one already gone does not count. Background
// propagation takes a Job's pods with it.
func deleteAll(ctx context.Context, c client.Client, what string, objs []client.Object) (int, error) {
	deleted := 0
	for _, obj := range objs {
		err := c.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
		switch {
		case err == nil:
			deleted++
		case !apierrors.IsNotFound(err):
			return deleted, fmt.Errorf("deleting orphaned %s %s: %w", what, client.ObjectKeyFromObject(obj), err)
		}
	}
	return deleted, nil
}
