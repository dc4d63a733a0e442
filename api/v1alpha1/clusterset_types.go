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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// ClusterSetLabel, on a registration Secret, puts the cluster in a
	// cluster set: one set per cluster. A Secret without it is in the set
	// DefaultClusterSet.
	ClusterSetLabel = "fleetjob.io/cluster-set"
	// DefaultClusterSet is the set of a cluster whose registration names
	// none.
	DefaultClusterSet = "default"
	// BindVerb is the verb on clustersets/<name> (group fleetjob.io) a
	// person needs to create or change a ClusterSetBinding of that set.
	BindVerb = "bind"
)

// PodSecurityLevel is a Pod Security Standard level.
// +kubebuilder:validation:Enum=restricted;baseline;privileged
type PodSecurityLevel string

// The Pod Security Standard levels.
const (
	PodSecurityRestricted PodSecurityLevel = "restricted"
	PodSecurityBaseline   PodSecurityLevel = "baseline"
	PodSecurityPrivileged PodSecurityLevel = "privileged"
)

// DefaultPodSecurityLevel is a ClusterSet's podSecurity when it sets none,
// and that of a set with no ClusterSet object.
const DefaultPodSecurityLevel = PodSecurityBaseline

// DefaultServiceAccount is the ServiceAccount a pod runs as when its
// template names none, and the only one a set allows by default.
const DefaultServiceAccount = "default"

// ReservedServiceAccount is the name of the hub's own ServiceAccount in
// the work namespace of a member registered before the hub's identity
// moved out of it (`kubectl fleetjob register` migrates it). No template
// may run as it, in any set, tenancy or not, and no set may allow it.
const ReservedServiceAccount = "fleetjob-hub"

// ServiceAccountName is the name of a ServiceAccount in a member's work
// namespace.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
type ServiceAccountName string

// ClusterSetSpec is the policy of the clusters of a set.
type ClusterSetSpec struct {
	// podSecurity is the Pod Security Standard level
	// (https://kubernetes.io/docs/concepts/security/pod-security-standards/)
	// a ClusterJob's pod template must meet to run in this set's clusters:
	// a template that does not fails those clusters before any Job is
	// created, naming the checks it failed. `kubectl fleetjob register`
	// labels the member's work namespace
	// pod-security.kubernetes.io/enforce with it, so the member enforces
	// it too. Default baseline.
	// +kubebuilder:default=baseline
	// +optional
	PodSecurity PodSecurityLevel `json:"podSecurity,omitempty"`

	// allowedServiceAccounts are the ServiceAccounts of the member's work
	// namespace a ClusterJob's pod template may run as in this set's
	// clusters (spec.jobTemplate.spec.template.spec.serviceAccountName; a
	// template that names none runs as `default`, which must then be
	// listed). A template naming another fails those clusters with reason
	// ServiceAccountNotAllowed before any Job is created, and a Job pod
	// whose account is not listed never mounts its token. The hub's own
	// identity lives in another namespace and cannot be named;
	// `fleetjob-hub`, its old name in the work namespace, is refused.
	// Default: [default].
	// +kubebuilder:default={default}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="!self.exists(n, n == 'fleetjob-hub')",message="fleetjob-hub is the name of the hub's identity in members registered before it moved; no template may run as it"
	// +listType=set
	// +optional
	AllowedServiceAccounts []ServiceAccountName `json:"allowedServiceAccounts,omitempty"`

	// maintenanceWindows are when groups of any ClusterJob may start in
	// this set's clusters: a group starts only while one of them is open
	// (and one of the ClusterJob's own, if it names any). Groups that
	// started run to their end. Unset: any time.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	MaintenanceWindows []MaintenanceWindow `json:"maintenanceWindows,omitempty"`

	// allowDrain lets ClusterJobs drain the nodes of this set's clusters
	// (spec.nodePreparation.drain). `kubectl fleetjob register` then grants
	// the hub's identity there what a drain needs: patch nodes, list pods
	// in every namespace and create pods/eviction. Without it, register
	// grants none of it and a run that drains fails in these clusters
	// DrainNotAllowed.
	// +optional
	AllowDrain bool `json:"allowDrain,omitempty"`
}

// ServiceAccountAllowed tells whether the set allows pods to run as
// ServiceAccount name of the work namespace: a name its
// allowedServiceAccounts lists (only DefaultServiceAccount when it lists
// none), and never ReservedServiceAccount.
func (s *ClusterSetSpec) ServiceAccountAllowed(name string) bool {
	if name == ReservedServiceAccount {
		return false
	}
	if len(s.AllowedServiceAccounts) == 0 {
		return name == DefaultServiceAccount
	}
	for _, a := range s.AllowedServiceAccounts {
		if string(a) == name {
			return true
		}
	}
	return false
}

// ConditionMembersEnforcePodSecurity is a ClusterSet's condition: True
// when `kubectl fleetjob register` labelled the work namespace of every
// cluster of the set with the set's spec.podSecurity, False (reason
// PodSecurityMismatch) when it labelled some with another level, its
// message naming them, and Unknown (reason PodSecurityNotRecorded) when
// some registrations do not record a level. The hub checks pod templates
// against the set's level whatever the members enforce; running register
// again for the clusters named brings their namespaces in line.
const ConditionMembersEnforcePodSecurity = "MembersEnforcePodSecurity"

// Reasons of ConditionMembersEnforcePodSecurity.
const (
	// ReasonPodSecurityEnforced: every cluster's work namespace enforces
	// the set's level.
	ReasonPodSecurityEnforced = "PodSecurityEnforced"
	// ReasonPodSecurityMismatch: some clusters' work namespaces were
	// labelled with another level, for example before the set's
	// podSecurity changed.
	ReasonPodSecurityMismatch = "PodSecurityMismatch"
	// ReasonPodSecurityNotRecorded: some registrations do not record what
	// their work namespace enforces.
	ReasonPodSecurityNotRecorded = "PodSecurityNotRecorded"
)

// ClusterSetStatus is what the hub sees of a set.
type ClusterSetStatus struct {
	// clusters is how many registered clusters are in the set.
	// +optional
	Clusters int32 `json:"clusters"`
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions has MembersEnforcePodSecurity: whether the work
	// namespaces of the set's clusters enforce its podSecurity, as
	// `kubectl fleetjob register` last labelled them; its message names
	// at most a few clusters that do not.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterSet is a named set of member clusters and their policy. A
// cluster is in the set its registration Secret's fleetjob.io/cluster-set
// label names (`default` without one); ClusterJobs of a namespace reach
// the clusters of the sets bound to it by a ClusterSetBinding.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=fleetjob,shortName=cset
// +kubebuilder:printcolumn:name="Pod-Security",type=string,JSONPath=`.spec.podSecurity`
// +kubebuilder:printcolumn:name="Service-Accounts",type=string,JSONPath=`.spec.allowedServiceAccounts`,priority=1
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.clusters`
// +kubebuilder:printcolumn:name="Members-Enforce",type=string,JSONPath=`.status.conditions[?(@.type=="MembersEnforcePodSecurity")].status`,description="whether the clusters' work namespaces enforce podSecurity"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterSet struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata; its name is the set's.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the set's policy.
	// +kubebuilder:default={}
	// +optional
	Spec ClusterSetSpec `json:"spec"`

	// status is what the hub sees of the set.
	// +optional
	Status ClusterSetStatus `json:"status,omitzero"`
}

// ClusterSetList is a list of ClusterSets.
// +kubebuilder:object:root=true
type ClusterSetList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterSets.
	Items []ClusterSet `json:"items"`
}

// ClusterSetBindingSpec names the set a binding binds.
type ClusterSetBindingSpec struct {
	// clusterSet is the set bound to this namespace; it must be the
	// binding's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	ClusterSet string `json:"clusterSet"`
}

// ClusterSetBinding lets the ClusterJobs of its namespace select the
// clusters of one cluster set; its name is the set's. Creating or changing
// one needs the `bind` verb on `clustersets/<name>` in group fleetjob.io,
// which an admission policy checks: a namespace's own admin cannot reach
// clusters a platform team did not grant.
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=fleetjob,shortName=csb
// +kubebuilder:printcolumn:name="Cluster-Set",type=string,JSONPath=`.spec.clusterSet`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.spec.clusterSet == self.metadata.name",message="spec.clusterSet must be the binding's name"
type ClusterSetBinding struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata; its name is the set's.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the bound set.
	// +required
	Spec ClusterSetBindingSpec `json:"spec"`
}

// ClusterSetBindingList is a list of ClusterSetBindings.
// +kubebuilder:object:root=true
type ClusterSetBindingList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterSetBindings.
	Items []ClusterSetBinding `json:"items"`
}

// SetOf is the cluster set of a registration with these labels.
func SetOf(labels map[string]string) string {
	if s := labels[ClusterSetLabel]; s != "" {
		return s
	}
	return DefaultClusterSet
}

func init() {
	SchemeBuilder.Register(&ClusterSet{}, &ClusterSetList{}, &ClusterSetBinding{}, &ClusterSetBindingList{})
}
