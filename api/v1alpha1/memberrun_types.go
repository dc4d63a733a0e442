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
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxMemberRunFailedNodes is the most failed nodes a MemberRun lists; the
// full list lives in the member's results record.
const MaxMemberRunFailedNodes = 500

// MemberRunSpec is written by the hub's fleet controller: which run and
// which cluster, and the fleet's say on when the cluster may start and when
// it must stop. A person never writes it.
// +kubebuilder:validation:XValidation:rule="self.clusterJob == oldSelf.clusterJob",message="clusterJob is immutable",fieldPath=".clusterJob"
// +kubebuilder:validation:XValidation:rule="self.clusterJobUID == oldSelf.clusterJobUID",message="clusterJobUID is immutable",fieldPath=".clusterJobUID"
// +kubebuilder:validation:XValidation:rule="self.cluster == oldSelf.cluster",message="cluster is immutable",fieldPath=".cluster"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.admitted) || !oldSelf.admitted || (has(self.admitted) && self.admitted)",message="admitted cannot be taken back: the cluster may have started",fieldPath=".admitted"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.halt) || (has(self.halt) && self.halt == oldSelf.halt)",message="halt cannot be changed or lifted once set",fieldPath=".halt"
// +kubebuilder:validation:XValidation:rule="has(self.retryOf) == has(oldSelf.retryOf) && (!has(self.retryOf) || self.retryOf == oldSelf.retryOf)",message="retryOf is immutable",fieldPath=".retryOf"
// +kubebuilder:validation:XValidation:rule="(has(self.acceptedFailures) ? self.acceptedFailures : 0) >= (has(oldSelf.acceptedFailures) ? oldSelf.acceptedFailures : 0)",message="acceptedFailures cannot decrease: failures once accepted stay accepted",fieldPath=".acceptedFailures"
type MemberRunSpec struct {
	// clusterJob is the name of the ClusterJob, in this namespace, whose run
	// this is.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	ClusterJob string `json:"clusterJob"`

	// clusterJobUID is the UID of that ClusterJob: a ClusterJob deleted and
	// created again under the same name is another run.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +required
	ClusterJobUID string `json:"clusterJobUID"`

	// cluster is the member cluster (its registration Secret's name).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Cluster string `json:"cluster"`

	// admitted lets the cluster start: it is its turn under the
	// ClusterJob's clusterRollout.maxConcurrentClusters. Once true it stays
	// true.
	// +optional
	Admitted bool `json:"admitted,omitempty"`

	// halt, once set, stops the run in this cluster for a reason outside
	// it (failureStrategy exit tripped in another cluster): no new group
	// starts, and the cluster ends once nothing of it runs.
	// +optional
	Halt *Halt `json:"halt,omitempty"`

	// retryOf, on a retry's MemberRun, is the parent run's in this cluster:
	// its plan and record are what this cluster runs again.
	// +optional
	RetryOf *MemberRetry `json:"retryOf,omitempty"`

	// acceptedFailures is how many failed nodes of this cluster a person
	// accepted by resuming a run that a per-group or per-cluster budget
	// (failurePolicy onExceeded Suspend) suspended: those budgets hold the
	// cluster again only when more of its nodes fail. It never decreases.
	// +kubebuilder:validation:Minimum=0
	// +optional
	AcceptedFailures int32 `json:"acceptedFailures,omitempty"`
}

// MemberRetry is the parent run a retry's cluster runs again.
type MemberRetry struct {
	// clusterJob is the parent ClusterJob's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	ClusterJob string `json:"clusterJob"`
	// clusterJobUID is the parent ClusterJob's UID.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +required
	ClusterJobUID string `json:"clusterJobUID"`
	// unreachable tells that the parent run could not reach this cluster:
	// its nodes that never got a Job are Unreachable, not NotRun.
	// +optional
	Unreachable bool `json:"unreachable,omitempty"`
}

// Halt tells why the fleet stopped a cluster's run.
type Halt struct {
	// reason is a CamelCase word, for example `Stopped`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +required
	Reason string `json:"reason"`

	// message explains reason for a person.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Message string `json:"message,omitempty"`
}

// MemberRunStatus is written by the hub's member controller: the run in one
// member cluster, as the cluster's row (name is the cluster), with a larger
// sample of failed nodes than a ClusterJob's rows carry.
type MemberRunStatus struct {
	ClusterStatus `json:",inline"`

	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// groupProgress is "finished/total" groups, for the printer column.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	GroupProgress string `json:"groupProgress,omitempty"`

	// nodeProgress is "succeeded/not skipped" nodes for the printer
	// column, with the skipped ones counted apart: `2/2, 2 skipped`.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	NodeProgress string `json:"nodeProgress,omitempty"`

	// nodeResults is the run's frozen plan in this cluster and each planned
	// node's result, as the hub last read them from the member. Read them
	// with `kubectl fleetjob status NAME --nodes` and `kubectl fleetjob plan
	// NAME`, which need read access to MemberRuns only, no credential for
	// the member. Refreshed when it changed, at most every 5 seconds while
	// the cluster runs, and with the write that ends it.
	// +optional
	NodeResults *NodeResults `json:"nodeResults,omitempty"`

	// conditions has Accepted, False on a MemberRun the hub neither runs
	// nor cleans up for, its reason saying why (ClusterJobNotFound,
	// NotSelected, DuplicateMemberRun).
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodeResults is a cluster's plan and node results, compressed.
type NodeResults struct {
	// observedTime is when the hub read them from the member.
	// +required
	ObservedTime metav1.Time `json:"observedTime"`

	// nodes counts the cluster's nodes by state as data has them.
	// +optional
	Nodes NodeCounts `json:"nodes,omitzero"`

	// omitted counts the succeeded and skipped nodes left out of data to
	// keep it within 512 KiB; failed and running nodes are always in it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Omitted int32 `json:"omitted,omitempty"`

	// message says why data is missing, when it is.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Message string `json:"message,omitempty"`

	// data is the plan and the results as gzip-compressed JSON (the
	// document of fleetjob's pkg/noderesults), at most 512 KiB.
	// +kubebuilder:validation:MaxLength=699052
	// +optional
	Data []byte `json:"data,omitempty"`
}

// Row is the status as the cluster's row in a ClusterJob, with at most
// MaxFailedNodeSamples failed nodes.
func (s *MemberRunStatus) Row() ClusterStatus {
	row := s.ClusterStatus
	row.FailedNodes = row.FailedNodes[:min(len(row.FailedNodes), MaxFailedNodeSamples):min(len(row.FailedNodes), MaxFailedNodeSamples)]
	return row
}

// SetRow sets the status from the cluster's row, whose failed nodes may
// number up to MaxMemberRunFailedNodes, and fills the progress columns.
func (s *MemberRunStatus) SetRow(row ClusterStatus) {
	s.ClusterStatus = row
	s.GroupProgress = fmt.Sprintf("%d/%d", row.Groups.Completed, row.Groups.Total)
	s.NodeProgress = row.Nodes.Progress()
}

// MemberRun is one ClusterJob's run in one member cluster. The hub creates
// one per selected cluster when the run starts, owned by the ClusterJob;
// list a run's rows with
// `kubectl get memberruns -l fleetjob.io/clusterjob=NAME`.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=fleetjob,shortName=mr
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Groups",type=string,JSONPath=`.status.groupProgress`,description="finished/total groups"
// +kubebuilder:printcolumn:name="Nodes",type=string,JSONPath=`.status.nodeProgress`,description="succeeded/not skipped nodes, and the skipped ones"
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.nodes.failed`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MemberRun struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the run and the cluster, and carries the fleet's decisions.
	// +required
	Spec MemberRunSpec `json:"spec"`

	// status is the observed run in the cluster.
	// +optional
	Status MemberRunStatus `json:"status,omitzero"`
}

// MemberRunList is a list of MemberRuns.
// +kubebuilder:object:root=true
type MemberRunList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the MemberRuns.
	Items []MemberRun `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MemberRun{}, &MemberRunList{})
}
