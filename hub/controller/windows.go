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

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/window"
)

// windows is when the run's groups may start in a cluster with these
// registration labels: while one of the run's maintenance windows and one
// of its cluster set's are open. bad is a window of either that cannot be
// read, naming its object and field: it fails the cluster when it would
// hold it. err is a failure to read the set, retried as any.
func (r *MemberRunReconciler) windows(ctx context.Context, cj *fleetv1.ClusterJob, labels map[string]string) (s window.Schedule, bad, err error) {
	set, policy, err := r.setPolicy(ctx, labels)
	if err != nil {
		return window.Schedule{}, nil, err
	}
	s, bad = window.ForCluster(cj.Name, cj.Spec.MaintenanceWindows, set, policy.MaintenanceWindows)
	return s, bad, nil
}
