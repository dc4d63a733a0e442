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
	"k8s.io/apimachinery/pkg/util/intstr"
)

// FleetDisruptionBudgetSpec caps how many nodes the disruptive runs
// (ClusterJobs with spec.disruptive) may disrupt at once in the clusters
// it selects, all runs together. A node is disrupted from its Job's
// creation until it succeeded and passed its nodeHealth gate, or failed.
// A group that would pass a cap starts as many of its nodes as the cap
// leaves (none: it waits), its cluster's row naming the budget, and
// starts more as nodes of any run finish.
// +kubebuilder:validation:XValidation:rule="has(self.maxDisruptedNodesPerCluster) || has(self.maxDisruptedNodes)",message="a FleetDisruptionBudget must set maxDisruptedNodesPerCluster, maxDisruptedNodes or both"
type FleetDisruptionBudgetSpec struct {
	// clusterSelector selects the member clusters the budget covers, by
	// the labels of their registration Secret (fleetjob.io/cluster-set
	// selects a cluster set). `{}` selects every registered cluster.
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="matchExpressions operator must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) == (has(e.values) && size(e.values) > 0))",message="matchExpressions values must be set for In and NotIn, and only for them"
	// +required
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector"`

	// maxDisruptedNodesPerCluster is the most nodes disrupted at once in
	// any one selected cluster: a number of at least 1, or a percentage
	// from 1% to 100% of the cluster's nodes (its MemberCluster's
	// status.nodeCount), rounded down but never below 1 node, so that
	// every run can go on.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9][0-9]?)%$') : self >= 1",message="maxDisruptedNodesPerCluster must be a number of at least 1 or a percentage from 1% to 100%"
	// +optional
	MaxDisruptedNodesPerCluster *intstr.IntOrString `json:"maxDisruptedNodesPerCluster,omitempty"`

	// maxDisruptedNodes is the most nodes disrupted at once across all
	// the selected clusters together: a number of at least 1, or a
	// percentage from 1% to 100% of their nodes together, rounded down
	// but never below 1 node.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9][0-9]?)%$') : self >= 1",message="maxDisruptedNodes must be a number of at least 1 or a percentage from 1% to 100%"
	// +optional
	MaxDisruptedNodes *intstr.IntOrString `json:"maxDisruptedNodes,omitempty"`
}

// FleetDisruptionBudgetStatus is what the hub counts under the budget now.
type FleetDisruptionBudgetStatus struct {
	// observedGeneration is the generation of the spec the status counts
	// under.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// clusters is how many registered clusters the budget selects.
	// +optional
	Clusters int32 `json:"clusters,omitempty"`
	// disruptedNodes is how many nodes of the selected clusters the
	// disruptive runs disrupt now, all runs together, as the hub counts
	// them (with the starts it granted and has not seen yet).
	// +optional
	DisruptedNodes int32 `json:"disruptedNodes,omitempty"`
	// waitingClusters is how many runs' clusters wait for room under this
	// budget: their rows say WaitingForBudget and name it.
	// +optional
	WaitingClusters int32 `json:"waitingClusters,omitempty"`
}

// FleetDisruptionBudget is one disruption cap shared by every disruptive
// ClusterJob of every namespace over the clusters it selects. Budgets add
// up: a node starts only where every budget selecting its cluster has
// room. It is cluster-scoped: a platform team's, not a tenant's.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=fleetjob,shortName=fdb
// +kubebuilder:printcolumn:name="Per-Cluster",type=string,JSONPath=`.spec.maxDisruptedNodesPerCluster`
// +kubebuilder:printcolumn:name="Total",type=string,JSONPath=`.spec.maxDisruptedNodes`
// +kubebuilder:printcolumn:name="Clusters",type=integer,JSONPath=`.status.clusters`
// +kubebuilder:printcolumn:name="Disrupted",type=integer,JSONPath=`.status.disruptedNodes`,description="nodes the disruptive runs disrupt now in the selected clusters"
// +kubebuilder:printcolumn:name="Waiting",type=integer,JSONPath=`.status.waitingClusters`,description="runs' clusters waiting for room under this budget"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FleetDisruptionBudget struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the budget's selection and caps.
	// +required
	Spec FleetDisruptionBudgetSpec `json:"spec"`

	// status is what the hub counts under the budget now.
	// +optional
	Status FleetDisruptionBudgetStatus `json:"status,omitzero"`
}

// FleetDisruptionBudgetList is a list of FleetDisruptionBudgets.
// +kubebuilder:object:root=true
type FleetDisruptionBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the FleetDisruptionBudgets.
	Items []FleetDisruptionBudget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&FleetDisruptionBudget{}, &FleetDisruptionBudgetList{})
}
