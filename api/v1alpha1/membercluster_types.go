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

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemberClusterTokenWarning is how long before the registered token
// expires the hub warns (the TokenExpiring condition and a Warning event):
// a month leaves time to rotate it with `kubectl fleetjob register` within
// a monthly change window, and tokens minted in one week, which expire in
// one week a year later, all show up at once.
const MemberClusterTokenWarning = 30 * 24 * time.Hour

// Condition types of a MemberCluster.
const (
	// MemberClusterConnected is True while the hub reaches the cluster's
	// API server with the registered credentials and watches it; Unknown
	// while it connects; False otherwise, its reason one of the
	// ClusterReason* values (Unreachable, Unauthorized, Forbidden,
	// InvalidRegistration, DuplicateCluster) and its message the error.
	MemberClusterConnected = "Connected"
	// MemberClusterAccessReviewed is True when the member said, at the last
	// connect, that the registered identity may do everything fleetjob needs
	// there; False (reason AccessDenied) when it may not, the message naming
	// the missing permissions; Unknown until the member answered a review.
	MemberClusterAccessReviewed = "AccessReviewed"
	// MemberClusterReady is True when the cluster is Connected and its
	// access reviewed: ClusterJobs run there. Otherwise it carries the
	// reason and message of the condition that is not.
	MemberClusterReady = "Ready"
	// MemberClusterTokenExpiring is True, a warning, when the registration's
	// bearer token expires within MemberClusterTokenWarning or has expired;
	// a Warning event on the MemberCluster says so when it turns True.
	MemberClusterTokenExpiring = "TokenExpiring"
)

// Reasons of a MemberCluster's conditions besides the ClusterReason* ones.
const (
	// ReasonReady: the cluster is connected and its access reviewed.
	ReasonReady = "Ready"
	// ReasonAccessGranted: the registered identity may do everything
	// fleetjob needs in the cluster.
	ReasonAccessGranted = "AccessGranted"
	// ReasonAccessDenied: the registered identity lacks permissions
	// fleetjob needs; the message names them.
	ReasonAccessDenied = "AccessDenied"
	// ReasonAccessNotReviewed: the member has not answered an access review
	// yet (it was never reached, or the registration is invalid).
	ReasonAccessNotReviewed = "NotReviewed"
	// ReasonTokenValid: the registered token expires later than
	// MemberClusterTokenWarning from now.
	ReasonTokenValid = "TokenValid"
	// ReasonTokenExpiresSoon: the registered token expires within
	// MemberClusterTokenWarning.
	ReasonTokenExpiresSoon = "TokenExpiresSoon"
	// ReasonTokenExpired: the registered token has expired; the member
	// rejects it.
	ReasonTokenExpired = "TokenExpired"
	// ReasonTokenExpiryUnknown: the registered credentials record no
	// expiry the hub can read (a client certificate, an opaque token, or a
	// token that never expires).
	ReasonTokenExpiryUnknown = "TokenExpiryUnknown"
)

// MaxMemberClusterMissingPermissions is the most missing permissions the
// AccessReviewed condition names; it counts the others.
const MaxMemberClusterMissingPermissions = 8

// MemberClusterStatus is what the hub sees of a registered member cluster.
type MemberClusterStatus struct {
	// conditions are Connected, AccessReviewed, Ready and TokenExpiring.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// kubernetesVersion is the version the cluster's API server reports
	// (its /version gitVersion), as the hub last read it (lastProbeTime).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// nodeCount is how many nodes the cluster has, as the hub last counted
	// them (lastProbeTime), whether or not a ClusterJob would select them.
	// +kubebuilder:validation:Minimum=0
	// +optional
	NodeCount *int32 `json:"nodeCount,omitempty"`

	// clusterID identifies the cluster the registration points at: the UID
	// of its kube-system namespace. Two registrations with one clusterID
	// are one cluster (the second is refused DuplicateCluster); a new
	// clusterID under the same name is a rebuilt or another cluster.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	ClusterID string `json:"clusterID,omitempty"`

	// clusterSet is the cluster set the cluster is in: the registration
	// Secret's fleetjob.io/cluster-set label, `default` without one.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClusterSet string `json:"clusterSet,omitempty"`

	// workNamespace is the member namespace where fleetjob runs its Jobs
	// (the registration's fleetjob.io/namespace annotation).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	WorkNamespace string `json:"workNamespace,omitempty"`

	// tokenExpiry is when the registration's bearer token expires (its
	// JWT exp claim); absent when the credentials record none the hub can
	// read. Run `kubectl fleetjob register` for the cluster again before
	// then to rotate it.
	// +optional
	TokenExpiry *metav1.Time `json:"tokenExpiry,omitempty"`

	// lastProbeTime is when the hub last read the cluster's version and
	// counted its nodes: at each connect, then every few minutes while
	// connected. Whether the cluster answers is watched more often; see
	// the Connected condition.
	// +optional
	LastProbeTime *metav1.Time `json:"lastProbeTime,omitempty"`
}

// MemberCluster is the hub's view of one registered member cluster: one per
// registration Secret, of the same name, written only by the hub, and
// deleted with the registration. Its labels are the registration's, so
// `kubectl get memberclusters -l KEY=VALUE` lists the clusters a ClusterJob
// with that clusterSelector would select (of the sets bound to its
// namespace, with tenancy on).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=fleetjob,shortName=mcl
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodeCount`
// +kubebuilder:printcolumn:name="Set",type=string,JSONPath=`.status.clusterSet`
// +kubebuilder:printcolumn:name="Token-Expiry",type=string,JSONPath=`.status.tokenExpiry`,description="when the registered token expires"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Cluster-ID",type=string,JSONPath=`.status.clusterID`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type MemberCluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata; its name is the
	// registration Secret's, and its labels the registration's.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// status is what the hub sees of the cluster.
	// +optional
	Status MemberClusterStatus `json:"status,omitzero"`
}

// MemberClusterList is a list of MemberClusters.
// +kubebuilder:object:root=true
type MemberClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the MemberClusters.
	Items []MemberCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MemberCluster{}, &MemberClusterList{})
}
