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

// Phase is the coarse state of a ClusterJob, kept for the printer column;
// conditions carry the detail.
// +kubebuilder:validation:Enum=Pending;Running;Completed;Failed
type Phase string

const (
	// PhasePending means no Job has started yet.
	PhasePending Phase = "Pending"
	// PhaseRunning means at least one cluster has work left.
	PhaseRunning Phase = "Running"
	// PhaseCompleted means every selected cluster finished and no node failed.
	PhaseCompleted Phase = "Completed"
	// PhaseFailed means the run ended and a node or a cluster failed.
	PhaseFailed Phase = "Failed"
)

// IsFinished tells whether the run ended, Completed or Failed: a finished
// run is a record, and nothing restarts it.
func (p Phase) IsFinished() bool { return p == PhaseCompleted || p == PhaseFailed }

// Condition types of a ClusterJob.
const (
	// ConditionProgressing is True while the run has work left.
	ConditionProgressing = "Progressing"
	// ConditionComplete is True when the run ended without failure.
	ConditionComplete = "Complete"
	// ConditionFailed is True when the run ended with a failed node or cluster.
	ConditionFailed = "Failed"
	// ConditionSuspended is True while spec.suspend holds new groups back.
	ConditionSuspended = "Suspended"
	// ConditionFailureBudgetExceeded is True from the moment a budget of
	// spec.failurePolicy with onExceeded Suspend suspended the run until a
	// person resumes it (then False, reason Resumed), and for good once a
	// run-wide budget with onExceeded Stop stopped the run.
	ConditionFailureBudgetExceeded = "FailureBudgetExceeded"
	// ConditionClustersLeftOut is True when more clusters matched
	// clusterSelector than a run can report on; its message names them.
	ConditionClustersLeftOut = "ClustersLeftOut"
	// ConditionMemberRunsCreated is True once every selected cluster has
	// its MemberRun, False (reason CreatingMemberRuns, the message naming
	// the clusters and the error) while some are still being created: no
	// cluster starts before every one exists.
	ConditionMemberRunsCreated = "MemberRunsCreated"
	// ConditionApproved, on a run with spec.approval: Unknown while its
	// canary runs (reason CanaryRunning) or waits for a decision (reason
	// AwaitingApproval, the message saying until when), True once
	// approved (reason Approved) or when every cluster is in the canary
	// (NothingToApprove), False once rejected (Rejected) or past
	// the timeout (ApprovalTimeout). The message names who decided.
	ConditionApproved = "Approved"
)

// Bounds that keep the status of a large fleet small.
const (
	// MaxClusters is the most clusters a ClusterJob runs in. Each has its
	// own MemberRun, so the ClusterJob's status does not grow with them;
	// the bound keeps one fleet reconcile, which reads every MemberRun of
	// the run, to milliseconds. Clusters that match beyond it are left out
	// and named in ClustersLeftOut.
	MaxClusters = 2000
	// MaxClusterRows is the most rows the deprecated status.clusters holds:
	// a row with every field at its maximum takes about 4.9 KB of the
	// stored object, and 200 of them two thirds of the 1.5 MiB limit.
	MaxClusterRows = 200
	// MaxFailedNodeSamples is the most failed nodes listed per cluster; the
	// full list lives in the member beside the Jobs.
	MaxFailedNodeSamples = 5
	// MaxClusterMessageLength bounds a cluster row's message.
	MaxClusterMessageLength = 256
	// MaxFailureMessageLength bounds a failed node's message.
	MaxFailureMessageLength = 128
)

// ClusterJobStatus is the observed state of a run across the fleet: counts
// for the fleet, one row per cluster, and a bounded sample of failed nodes.
// Per-node detail lives in each member beside the Jobs.
type ClusterJobStatus struct {
	// observedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase is Pending, Running, Completed or Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// conditions are Progressing, Complete, Failed, Suspended,
	// FailureBudgetExceeded, ClustersLeftOut and MemberRunsCreated.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// startTime is when the first cluster started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the run ended, successfully or not;
	// spec.ttlSecondsAfterFinished counts from it.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// summary counts clusters and nodes across the fleet.
	// +optional
	Summary Summary `json:"summary,omitzero"`

	// selectedClusters are the clusters the run selected when it started,
	// sorted, written before their MemberRuns are created: the run is
	// exactly these clusters, and the hub runs no MemberRun of another
	// cluster for it.
	// +listType=set
	// +kubebuilder:validation:MaxItems=2000
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	SelectedClusters []string `json:"selectedClusters,omitempty"`

	// retryOf is the run this one retries, by name and UID, once it
	// started: a ClusterJob created again under that name is another run.
	// +optional
	RetryOf *RetrySource `json:"retryOf,omitempty"`

	// acceptedFailures are the failures across the run a person accepted by
	// resuming a run that a run-wide budget (maxFailedNodes,
	// maxFailedClusters) suspended. They never decrease.
	// +optional
	AcceptedFailures *AcceptedFailures `json:"acceptedFailures,omitempty"`

	// notableClusters are the rows a person looks at first, at most 20:
	// failed clusters, then running ones, then the rest, each by name,
	// without failed-node samples. Every cluster's full row, with up to 500
	// failed nodes, is its MemberRun:
	// `kubectl get memberruns -l fleetjob.io/clusterjob=NAME`.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(r, !has(r.failedNodes) || size(r.failedNodes) <= 5)",message="failedNodes must have at most 5 items in a ClusterJob's rows"
	// +optional
	NotableClusters []ClusterStatus `json:"notableClusters,omitempty"`

	// clusters had one row per selected member cluster, written by hubs
	// before MemberRuns (deprecated: this hub writes the rows into
	// MemberRuns and notableClusters). Kept so that a status written by an
	// older hub still reads.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=200
	// +kubebuilder:validation:XValidation:rule="self.all(r, !has(r.failedNodes) || size(r.failedNodes) <= 5)",message="failedNodes must have at most 5 items in a ClusterJob's rows"
	// +optional
	Clusters []ClusterStatus `json:"clusters,omitempty"`
}

// AcceptedFailures counts failures a person accepted by resuming a
// suspended run: budgets suspend the run again only past them.
type AcceptedFailures struct {
	// nodes is the number of failed nodes accepted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Nodes int32 `json:"nodes,omitempty"`

	// clusters is the number of failed clusters accepted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Clusters int32 `json:"clusters,omitempty"`
}

// Summary counts clusters and nodes across the fleet.
type Summary struct {
	// clusters counts the selected member clusters by state.
	// +optional
	Clusters ClusterCounts `json:"clusters,omitzero"`

	// nodes counts the nodes of every selected cluster by state.
	// +optional
	Nodes NodeCounts `json:"nodes,omitzero"`

	// clusterProgress is "finished/total" clusters, for the printer column.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	ClusterProgress string `json:"clusterProgress,omitempty"`

	// nodeProgress is "succeeded/not skipped" nodes for the printer
	// column, with the skipped ones counted apart: `2/2, 2 skipped`.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	NodeProgress string `json:"nodeProgress,omitempty"`
}

// ClusterCounts counts member clusters by state.
type ClusterCounts struct {
	// total is the number of selected clusters.
	// +optional
	Total int32 `json:"total"`
	// running is the number of clusters with work in flight.
	// +optional
	Running int32 `json:"running"`
	// completed is the number of clusters that finished with no failed node.
	// +optional
	Completed int32 `json:"completed"`
	// failed is the number of clusters that finished with a failed node, or
	// that stayed unreachable past the controller's unreachable timeout.
	// +optional
	Failed int32 `json:"failed"`
	// unreachable is the number of clusters the hub cannot reach now.
	// +optional
	Unreachable int32 `json:"unreachable"`
}

// NodeCounts counts nodes by state. Every node selected by nodeSelector is in
// exactly one of pending, running, succeeded, failed and skipped.
type NodeCounts struct {
	// total is the number of nodes selected by nodeSelector.
	// +optional
	Total int32 `json:"total"`
	// pending is the number of planned nodes whose Job has not started.
	// +optional
	Pending int32 `json:"pending"`
	// running is the number of nodes whose Job is running.
	// +optional
	Running int32 `json:"running"`
	// succeeded is the number of nodes whose Job completed.
	// +optional
	Succeeded int32 `json:"succeeded"`
	// failed is the number of nodes whose Job failed, or that disappeared
	// before their Job finished.
	// +optional
	Failed int32 `json:"failed"`
	// skipped is the number of selected nodes that did not run the Job:
	// left out of the plan (cordoned, NotReady, untolerated taint, no group
	// label with ignoreNull) or deleted before their Job started.
	// +optional
	Skipped int32 `json:"skipped"`
}

// NotSkipped counts the nodes that ran or are to run the Job: every
// selected node but the skipped ones.
func (n NodeCounts) NotSkipped() int32 { return n.Total - n.Skipped }

// Progress is "succeeded/not skipped" nodes, and ", N skipped" after it
// when some were: a skipped node is neither done nor left to do, so a clean
// run that skipped two of four nodes reads `2/2, 2 skipped`, not `2/4`.
func (n NodeCounts) Progress() string {
	return fmt.Sprintf("%d/%d", n.Succeeded, n.NotSkipped()) + n.skippedSuffix()
}

// Outcome says what became of the nodes of a finished run or cluster:
// `2 of 2 nodes succeeded, 2 skipped`, or, when every node was skipped,
// `no node ran, 2 skipped`.
func (n NodeCounts) Outcome() string {
	if n.NotSkipped() == 0 {
		return "no node ran" + n.skippedSuffix()
	}
	return fmt.Sprintf("%d of %d nodes succeeded", n.Succeeded, n.NotSkipped()) + n.skippedSuffix()
}

func (n NodeCounts) skippedSuffix() string {
	if n.Skipped == 0 {
		return ""
	}
	return fmt.Sprintf(", %d skipped", n.Skipped)
}

// ClusterPhase is the state of the run in one member cluster.
// +kubebuilder:validation:Enum=Pending;Running;Completed;Failed
type ClusterPhase string

const (
	// ClusterPending means the cluster has not started, for example while it
	// waits for its turn under maxConcurrentClusters.
	ClusterPending ClusterPhase = "Pending"
	// ClusterRunning means the cluster has groups left.
	ClusterRunning ClusterPhase = "Running"
	// ClusterCompleted means every group ran and no node failed.
	ClusterCompleted ClusterPhase = "Completed"
	// ClusterFailed means a node failed, or the cluster stayed unreachable
	// too long.
	ClusterFailed ClusterPhase = "Failed"
)

// IsFinished tells whether the run ended in the cluster, Completed or
// Failed.
func (p ClusterPhase) IsFinished() bool { return p == ClusterCompleted || p == ClusterFailed }

// ClusterStatus is the run in one member cluster.
type ClusterStatus struct {
	// name is the member cluster name (its registration Secret's name).
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// phase is Pending, Running, Completed or Failed.
	// +optional
	Phase ClusterPhase `json:"phase,omitempty"`

	// clusterID identifies the member cluster the run's plan was frozen in
	// (the UID of its kube-system namespace). A registration that later
	// points at another cluster fails the row ClusterChanged.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	ClusterID string `json:"clusterID,omitempty"`

	// reachable tells whether the hub reached the cluster on its last try.
	// +optional
	Reachable bool `json:"reachable"`

	// reason is a CamelCase word for why the cluster is unreachable, failed,
	// or waiting, for example `Unreachable`, `Forbidden` or `NodeFailed`.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Reason string `json:"reason,omitempty"`

	// message explains reason for a person.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Message string `json:"message,omitempty"`

	// unreachableSince is when the hub lost the cluster; the cluster counts
	// as failed once it stays unreachable longer than the controller's
	// --unreachable-timeout.
	// +optional
	UnreachableSince *metav1.Time `json:"unreachableSince,omitempty"`

	// failingSince is when the hub's work in the reachable cluster began to
	// fail without a break (its reason and message tell how); the hub
	// retries with backoff, and the cluster counts as failed once it keeps
	// failing longer than the controller's --member-error-timeout.
	// +optional
	FailingSince *metav1.Time `json:"failingSince,omitempty"`

	// groups counts the groups of the cluster's frozen plan.
	// +optional
	Groups GroupCounts `json:"groups,omitzero"`

	// currentGroup is the zero-based index of the group running now, or of
	// the last group that ran.
	// +optional
	CurrentGroup *int32 `json:"currentGroup,omitempty"`

	// currentGroupName is the name of the group at currentGroup: `all`,
	// `batch-N`, or a node label value.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	CurrentGroupName string `json:"currentGroupName,omitempty"`

	// nodes counts the cluster's nodes by state.
	// +optional
	Nodes NodeCounts `json:"nodes,omitzero"`

	// failedNodes is a sample of failed nodes, sorted by name: at most 5 in
	// a ClusterJob's rows, at most 500 in a MemberRun.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	// +optional
	FailedNodes []NodeFailure `json:"failedNodes,omitempty"`

	// startTime is when the cluster's first group started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the cluster finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// GroupCounts counts the groups of a cluster's plan.
type GroupCounts struct {
	// total is the number of groups in the plan.
	// +optional
	Total int32 `json:"total"`
	// completed is the number of groups whose every Job finished.
	// +optional
	Completed int32 `json:"completed"`
	// failed is the number of finished groups with at least one failed node.
	// +optional
	Failed int32 `json:"failed"`
}

// NodeFailure tells why one node failed.
type NodeFailure struct {
	// node is the node name.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Node string `json:"node"`
	// group is the name of the node's group.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Group string `json:"group,omitempty"`
	// job is the name of the node's Job in the member's work namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Job string `json:"job,omitempty"`
	// reason is the failed Job condition's reason (for example
	// `BackoffLimitExceeded`), or `NodeDeleted`.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Reason string `json:"reason,omitempty"`
	// message is the start of the failed container's termination message
	// (its last log lines when it wrote none), else the failed Job
	// condition's message, truncated.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Message string `json:"message,omitempty"`
	// exitCode is the failed container's exit code, when its pod could be
	// read.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
}

// RetrySource is the run a retry runs again.
type RetrySource struct {
	// name is the parent ClusterJob's name.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// uid is the parent ClusterJob's UID.
	// +kubebuilder:validation:MaxLength=128
	// +required
	UID string `json:"uid"`
}

// ClusterJob runs one Job per node, group after group, in every selected
// member cluster of the fleet, and reports the results per cluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=fleetjob,shortName=fj
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Clusters",type=string,JSONPath=`.status.summary.clusterProgress`,description="finished/total clusters"
// +kubebuilder:printcolumn:name="Nodes",type=string,JSONPath=`.status.summary.nodeProgress`,description="succeeded/not skipped nodes, and the skipped ones"
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.summary.nodes.failed`
// +kubebuilder:printcolumn:name="Retry-Of",type=string,JSONPath=`.spec.retryOf.name`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.spec.retryOf) || self.spec.retryOf.name != self.metadata.name",message="spec.retryOf.name must name another ClusterJob: a run cannot retry itself"
type ClusterJob struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired run.
	// +required
	Spec ClusterJobSpec `json:"spec"`

	// status is the observed run.
	// +optional
	Status ClusterJobStatus `json:"status,omitzero"`
}

// ClusterJobList is a list of ClusterJobs.
// +kubebuilder:object:root=true
type ClusterJobList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterJobs.
	Items []ClusterJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterJob{}, &ClusterJobList{})
}
