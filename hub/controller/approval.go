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
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/fleet"
)

// withCanaryLabels gives each run its cluster's registration labels when
// spec.approval.canarySelector picks the canary by them; other runs carry
// none. The labels are the registration Secrets', as selection reads them:
// the same on every replica of the hub, and there before any replica
// connected to the cluster.
func (r *ClusterJobReconciler) withCanaryLabels(ctx context.Context, cj *fleetv1.ClusterJob, runs []fleet.MemberRun) error {
	if a := cj.Spec.Approval; a == nil || a.CanarySelector == nil {
		return nil
	}
	secrets, err := r.registrations(ctx)
	if err != nil {
		return err
	}
	byName := make(map[string]map[string]string, len(secrets))
	for _, s := range secrets {
		byName[s.Name] = s.Labels
	}
	for i := range runs {
		// A copy: the fleet's decisions must not hold the cache's map.
		runs[i].Labels = maps.Clone(byName[runs[i].Cluster])
	}
	return nil
}

// approvalNote is the event of a decision the status now records for the
// first time: who approved, rejected, or that nobody did in time.
func approvalNote(prev []metav1.Condition, cur []metav1.Condition) (note, bool) {
	now := meta.FindStatusCondition(cur, fleetv1.ConditionApproved)
	if now == nil || now.Status == metav1.ConditionUnknown {
		return note{}, false
	}
	if was := meta.FindStatusCondition(prev, fleetv1.ConditionApproved); was != nil && was.Reason == now.Reason {
		return note{}, false
	}
	if now.Status == metav1.ConditionTrue {
		return note{corev1.EventTypeNormal, now.Reason, now.Message}, true
	}
	return note{corev1.EventTypeWarning, now.Reason, "stopping the run: " + now.Message}, true
}
