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

// Package spoke is everything fleetjob does inside one member cluster for one
// ClusterJob: freeze the plan, derive the state of the run from the objects
// that exist there, start a group's Jobs, and clean up. It is given a client
// for the member and a snapshot of the ClusterJob and knows nothing of the
// hub or of other clusters, so the hub (push) and a member agent (pull) run
// the same code.
package spoke

import (
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// Run identifies one ClusterJob's work in one member cluster.
type Run struct {
	// ClusterJob is the hub snapshot; its Name, Namespace, UID and Spec are
	// used.
	ClusterJob *fleetv1.ClusterJob
	// Cluster is the member cluster name (the registration Secret's name).
	Cluster string
	// Namespace is the member work namespace where the Jobs and the plan live.
	Namespace string
	// Hub is the identity of the hub that runs the ClusterJob; every object
	// created for the run carries it.
	Hub string
	// ClusterID is the member cluster's identity, recorded on the plan.
	ClusterID string
	// ServiceAccounts are the ServiceAccounts of the work namespace whose
	// token the run's pods may mount: a Job whose pods run as another gets
	// automountServiceAccountToken: false. None: only default.
	ServiceAccounts []string
}

// uidLabels select every object of ClusterJob uid in a member. managed-by is
// part of the selector so that an object someone else labelled by hand is
// never taken for ours.
func uidLabels(uid types.UID) client.MatchingLabels {
	return client.MatchingLabels{
		fleetv1.ManagedByLabel:     fleetv1.ManagedByValue,
		fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(uid)),
	}
}

// runSelector selects the objects of run: its ClusterJob's, made for this
// cluster. Two registrations of one member never read each other's Jobs.
func runSelector(run Run) client.MatchingLabels {
	l := uidLabels(run.ClusterJob.UID)
	l[fleetv1.ClusterLabel] = naming.LabelValue(run.Cluster)
	return l
}

// RunIndex names a member cache index of Jobs by run (ClusterJob UID and
// cluster, as their labels hold them): a reconcile reads its run's Jobs
// through it rather than matching the labels of every Job the work
// namespace holds, retained runs' included. Register it with
// RunIndexValue; Member.Indexed tells Observe to use it.
const RunIndex = "fleetjob.io/run"

// RunIndexValue is the RunIndex value of obj: its run, for an object
// fleetjob manages; none for any other.
func RunIndexValue(obj client.Object) []string {
	l := obj.GetLabels()
	uid, cluster := l[fleetv1.ClusterJobUIDLabel], l[fleetv1.ClusterLabel]
	if l[fleetv1.ManagedByLabel] != fleetv1.ManagedByValue || uid == "" || cluster == "" {
		return nil
	}
	return []string{uid + "/" + cluster}
}

// runIndexKey is run's RunIndex value.
func runIndexKey(run Run) string {
	return naming.LabelValue(string(run.ClusterJob.UID)) + "/" + naming.LabelValue(run.Cluster)
}

// ownLabels select the objects of ClusterJob uid that hub created: what
// cleanup and garbage collection may delete, and nothing else.
func ownLabels(uid types.UID, hub string) client.MatchingLabels {
	l := uidLabels(uid)
	l[fleetv1.HubLabel] = hub
	return l
}

// runLabels are the labels on every object of run in the member.
func runLabels(run Run) map[string]string {
	l := runSelector(run)
	if run.Hub != "" {
		l[fleetv1.HubLabel] = run.Hub
	}
	return l
}

// runAnnotations carry the full names the labels may have hashed.
func runAnnotations(run Run) map[string]string {
	return map[string]string{
		fleetv1.ClusterJobAnnotation: client.ObjectKeyFromObject(run.ClusterJob).String(),
		fleetv1.ClusterAnnotation:    run.Cluster,
	}
}

// ownedBy tells whether obj carries ClusterJob uid's label. It is how an
// object found under one of our deterministic names is told apart from a
// foreign one, which is never adopted.
func ownedBy(obj client.Object, uid types.UID) bool {
	return obj.GetLabels()[fleetv1.ClusterJobUIDLabel] == naming.LabelValue(string(uid))
}
