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

package fleet

import (
	"cmp"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// RetryTarget is a cluster a retry runs in.
type RetryTarget struct {
	// Cluster is the member cluster's name.
	Cluster string
	// Unreachable tells that the parent run could not reach the cluster.
	Unreachable bool
}

// RetryTargets decides where a retry runs: the parent's clusters (those of
// spec.retry.clusters when set), or, when the parent cannot be retried, why
// not, naming the field. parent is nil when it does not exist; runs are
// its MemberRuns, sorted by cluster.
func RetryTargets(spec *fleetv1.ClusterJobSpec, namespace string, parent *fleetv1.ClusterJob, runs []MemberRun) ([]RetryTarget, string) {
	name := spec.RetryOf.Name
	switch {
	case parent == nil:
		return nil, fmt.Sprintf("spec.retryOf.name: ClusterJob %s/%s not found", namespace, name)
	case !parent.DeletionTimestamp.IsZero():
		return nil, fmt.Sprintf("spec.retryOf.name: ClusterJob %s/%s is being deleted, and its record with it", namespace, name)
	case !parent.Status.Phase.IsFinished():
		return nil, fmt.Sprintf("spec.retryOf.name: ClusterJob %s/%s is still %s; retry it once it has ended", namespace, name, cmp.Or(parent.Status.Phase, fleetv1.PhasePending))
	case !apiequality.Semantic.DeepEqual(parent.Spec.JobTemplate, spec.JobTemplate):
		return nil, fmt.Sprintf("spec.jobTemplate: differs from the jobTemplate of ClusterJob %s: a retry runs the same Job again (kubectl fleetjob retry copies it)", name)
	case len(runs) == 0:
		return nil, fmt.Sprintf("spec.retryOf.name: ClusterJob %s ran in no cluster: there is nothing to retry", name)
	}
	var only []string
	if spec.Retry != nil {
		only = spec.Retry.Clusters
	}
	for i, c := range only {
		if !slices.ContainsFunc(runs, func(r MemberRun) bool { return r.Cluster == c }) {
			return nil, fmt.Sprintf("spec.retry.clusters[%d]: cluster %s did not run in ClusterJob %s", i, c, name)
		}
	}
	var targets []RetryTarget
	for _, r := range runs {
		if len(only) == 0 || slices.Contains(only, r.Cluster) {
			targets = append(targets, RetryTarget{Cluster: r.Cluster, Unreachable: Unreachable(r.Row)})
		}
	}
	return targets, ""
}

// Unreachable tells whether a finished row says the run could not reach
// its cluster: it timed out unreachable, or never connected. A retry runs
// that cluster's nodes that never got a Job as Unreachable, not NotRun.
func Unreachable(row fleetv1.ClusterStatus) bool {
	switch row.Reason {
	case fleetv1.ReasonUnreachableTimeout, fleetv1.ClusterReasonUnreachable, fleetv1.ClusterReasonConnecting,
		fleetv1.ClusterReasonUnauthorized, fleetv1.ClusterReasonForbidden, fleetv1.ClusterReasonInvalidRegistration,
		fleetv1.ClusterReasonDuplicateCluster, fleetv1.ReasonNotRegistered:
		return true
	}
	return false
}
