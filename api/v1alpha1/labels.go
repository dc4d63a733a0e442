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

package v1alpha1

// Well-known labels and annotations. Owner references cannot cross from a
// member cluster to the hub, so every object fleetjob creates in a member is
// identified by these instead. Labels carry values that fit a label (hashed
// when too long) for selecting; annotations carry the full values for people.
const (
	// ManagedByLabel is the standard app.kubernetes.io/managed-by label; its
	// value is ManagedByValue on every object fleetjob creates in a member.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of ManagedByLabel set by fleetjob.
	ManagedByValue = "fleetjob"

	// ClusterJobLabel, on a hub MemberRun, holds the name of its ClusterJob
	// (hashed if it is not a valid label value).
	ClusterJobLabel = "fleetjob.io/clusterjob"
	// ClusterJobUIDLabel holds the UID of the hub ClusterJob that owns a
	// member object.
	ClusterJobUIDLabel = "fleetjob.io/clusterjob-uid"
	// HubLabel holds the identity of the hub that created a member object
	// (by default the UID of the hub's kube-system namespace): a hub only
	// ever collects or cleans up objects that carry its own.
	HubLabel = "fleetjob.io/hub"
	// ClusterLabel holds the member cluster name (hashed if it is not a valid
	// label value).
	ClusterLabel = "fleetjob.io/cluster"
	// NodeLabel holds the target node name (hashed if it is not a valid label
	// value).
	NodeLabel = "fleetjob.io/node"
	// GroupIndexLabel holds the zero-based index of the node's group in the
	// frozen plan.
	GroupIndexLabel = "fleetjob.io/group-index"
	// ComponentLabel tells a plan object from a Job.
	ComponentLabel = "fleetjob.io/component"

	// ClusterJobAnnotation holds the owning ClusterJob as namespace/name.
	ClusterJobAnnotation = "fleetjob.io/clusterjob"
	// ClusterAnnotation holds the full member cluster name.
	ClusterAnnotation = "fleetjob.io/cluster"
	// ClusterIDAnnotation, on a plan, holds the identity of the member
	// cluster it was made in (the UID of its kube-system namespace).
	ClusterIDAnnotation = "fleetjob.io/cluster-id"
	// PlanPartsAnnotation, on a plan too large for one ConfigMap, holds how
	// many ConfigMaps its compressed document is split across (the plan
	// ConfigMap and the parts named after it); PlanDigestAnnotation holds
	// the SHA-256 of the whole document, checked when it is read.
	PlanPartsAnnotation  = "fleetjob.io/plan-parts"
	PlanDigestAnnotation = "fleetjob.io/plan-digest"
	// RecordPartsAnnotation and RecordDigestAnnotation are the same for a
	// results record too large for one ConfigMap. Its parts are never
	// changed: each write of the record makes new ones, named after the
	// digest, and deletes those it replaced.
	RecordPartsAnnotation  = "fleetjob.io/record-parts"
	RecordDigestAnnotation = "fleetjob.io/record-digest"
	// NodeAnnotation holds the full target node name.
	NodeAnnotation = "fleetjob.io/node"
	// GroupAnnotation holds the name of the node's group.
	GroupAnnotation = "fleetjob.io/group"

	// RegistrationLabel, set to "true" on a hub Secret in the registration
	// namespace, registers a member cluster; the Secret's name is the
	// cluster's name. It is multicluster-runtime's kubeconfig-provider label,
	// so existing registrations keep working.
	RegistrationLabel = "sigs.k8s.io/multicluster-runtime-kubeconfig"
	// KubeconfigKey is the registration Secret's data key holding the member
	// kubeconfig.
	KubeconfigKey = "kubeconfig"

	// NamespaceAnnotation, on a cluster registration Secret, names the member
	// namespace where fleetjob runs its Jobs (default DefaultWorkNamespace).
	NamespaceAnnotation = "fleetjob.io/namespace"
	// DefaultWorkNamespace is the member namespace used when a registration
	// does not name one.
	DefaultWorkNamespace = "fleetjob-system"
	// PodSecurityAnnotation, on a cluster registration Secret, holds the Pod
	// Security level `kubectl fleetjob register` last labelled the member's
	// work namespace with (pod-security.kubernetes.io/enforce). It is
	// absent when register left the namespace's labels alone (Kubernetes'
	// own namespaces) and on registrations written before it existed.
	PodSecurityAnnotation = "fleetjob.io/pod-security"

	// NodeNameEnv, ClusterNameEnv and GroupEnv are set in every container of
	// every Job so that the work knows where it runs.
	NodeNameEnv    = "FLEETJOB_NODE_NAME"
	ClusterNameEnv = "FLEETJOB_CLUSTER_NAME"
	GroupEnv       = "FLEETJOB_GROUP"
)
