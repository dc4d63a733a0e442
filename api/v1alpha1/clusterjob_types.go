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

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// StrategyType names how the nodes of a member cluster are split into groups.
// +kubebuilder:validation:Enum=all;batch;perNodeGroup
type StrategyType string

const (
	// StrategyAll runs every eligible node of a cluster in one group.
	StrategyAll StrategyType = "all"
	// StrategyBatch runs groups of a fixed number of nodes.
	StrategyBatch StrategyType = "batch"
	// StrategyPerNodeGroup runs one group per value of a node label.
	StrategyPerNodeGroup StrategyType = "perNodeGroup"
)

// BatchOrder is the order in which nodes are cut into batches.
// +kubebuilder:validation:Enum=random;alphabetical
type BatchOrder string

const (
	// BatchOrderAlphabetical sorts nodes by name before cutting batches.
	BatchOrderAlphabetical BatchOrder = "alphabetical"
	// BatchOrderRandom shuffles nodes with a seed derived from the ClusterJob
	// UID and the cluster name, so the same run always gets the same order.
	BatchOrderRandom BatchOrder = "random"
)

// FailureStrategy is what a run does once a node has failed.
// +kubebuilder:validation:Enum=keepgoing;exit
type FailureStrategy string

const (
	// FailureStrategyKeepGoing runs every group; the run ends Failed if any
	// node failed.
	FailureStrategyKeepGoing FailureStrategy = "keepgoing"
	// FailureStrategyExit starts no new group anywhere in the fleet once any
	// node has failed; Jobs already running finish.
	FailureStrategyExit FailureStrategy = "exit"
)

// OnExceeded is what a run does when a failure budget is exceeded.
// +kubebuilder:validation:Enum=Stop;Suspend
type OnExceeded string

const (
	// OnExceededStop starts no new group in the budget's scope, and the
	// scope ends Failed with reason FailureBudgetExceeded.
	OnExceededStop OnExceeded = "Stop"
	// OnExceededSuspend suspends the ClusterJob (spec.suspend: true) so that
	// a person can look; setting suspend back to false accepts the
	// failures so far and goes on.
	OnExceededSuspend OnExceeded = "Suspend"
)

// FailurePolicy bounds how many failures a run tolerates, in each scope. A
// budget is exceeded when more nodes (or clusters) than it allows have
// failed. Failed nodes include nodes whose Job failed, timed out, was
// deleted before it finished, or whose node was deleted while its Job ran;
// a cluster that failed (unreachable too long, its plan lost, the hub's
// work in it failing) counts against maxFailedClusters. Skipped nodes
// never count.
// +kubebuilder:validation:XValidation:rule="has(self.maxFailedNodesPerGroup) || has(self.maxFailedNodesPerCluster) || has(self.maxFailedNodes) || has(self.maxFailedClusters)",message="failurePolicy must set at least one of maxFailedNodesPerGroup, maxFailedNodesPerCluster, maxFailedNodes and maxFailedClusters"
type FailurePolicy struct {
	// maxFailedNodesPerGroup is the most nodes that may fail in one group
	// of a cluster: a number, or a percentage of the group's planned nodes
	// ("5%", rounded down). Past it, the cluster is the scope: it starts no
	// new group.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9]?[0-9])%$') : self >= 0",message="maxFailedNodesPerGroup must be a number of at least 0 or a percentage from 0% to 100%"
	// +optional
	MaxFailedNodesPerGroup *intstr.IntOrString `json:"maxFailedNodesPerGroup,omitempty"`

	// maxFailedNodesPerCluster is the most nodes that may fail in one
	// cluster: a number, or a percentage of the cluster's planned nodes.
	// Past it, the cluster starts no new group.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9]?[0-9])%$') : self >= 0",message="maxFailedNodesPerCluster must be a number of at least 0 or a percentage from 0% to 100%"
	// +optional
	MaxFailedNodesPerCluster *intstr.IntOrString `json:"maxFailedNodesPerCluster,omitempty"`

	// maxFailedNodes is the most nodes that may fail across the whole run: a
	// number, or a percentage of the nodes planned in every cluster that
	// started so far. Past it, no cluster starts a new group.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9]?[0-9])%$') : self >= 0",message="maxFailedNodes must be a number of at least 0 or a percentage from 0% to 100%"
	// +optional
	MaxFailedNodes *intstr.IntOrString `json:"maxFailedNodes,omitempty"`

	// maxFailedClusters is the most clusters that may fail: a number, or a
	// percentage of the selected clusters. A cluster fails when a node of it
	// failed or it could not be run to its end. Past it, no cluster starts
	// a new group.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == string ? self.matches('^(100|[1-9]?[0-9])%$') : self >= 0",message="maxFailedClusters must be a number of at least 0 or a percentage from 0% to 100%"
	// +optional
	MaxFailedClusters *intstr.IntOrString `json:"maxFailedClusters,omitempty"`

	// onExceeded is `Stop` (default): the scope starts no new group and ends
	// Failed with reason FailureBudgetExceeded naming the budget; or
	// `Suspend`: the hub sets spec.suspend to true, with a
	// FailureBudgetExceeded condition naming the budget, and setting
	// suspend back to false accepts the failures so far (the same budget
	// suspends the run again only when more nodes or clusters fail). Jobs
	// already running finish either way.
	// +kubebuilder:default=Stop
	// +optional
	OnExceeded OnExceeded `json:"onExceeded,omitempty"`
}

// Gates hold a run back between groups and between clusters, and bound how
// long a group may take.
type Gates struct {
	// soak is how long to wait after a group finished with every node
	// succeeded before the next group starts in that cluster, to see the
	// change settle (minSuccessTime in Open Cluster Management). A group
	// with a failed node hands off at once: the failure is the signal.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="soak must not be negative"
	// +optional
	Soak *metav1.Duration `json:"soak,omitempty"`

	// progressDeadline is how long a group may run in a cluster, from its
	// first Job's creation: past it, its unfinished nodes fail with reason
	// GroupDeadlineExceeded and their Jobs are deleted, so the group ends.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="progressDeadline must be at least 1s"
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`

	// nodeHealth makes a node whose Job succeeded prove it is healthy before
	// it counts as succeeded: it must be Ready, with no NoExecute taint the
	// Job template does not tolerate, for readyFor, within timeout of its
	// Job's success. Until then the node is Running and its group is not
	// over; past timeout it fails with reason NodeUnhealthy. This is what
	// makes rolling reboots and kernel updates safe.
	// +optional
	NodeHealth *NodeHealthGate `json:"nodeHealth,omitempty"`

	// betweenClusters holds the next cluster back, under
	// clusterRollout.maxConcurrentClusters, after a cluster finished.
	// +optional
	BetweenClusters *BetweenClustersGate `json:"betweenClusters,omitempty"`
}

// NodeHealthGate is how long a node must stay healthy after its Job, and
// how long it has to get there.
// +kubebuilder:validation:XValidation:rule="duration(self.timeout) >= duration(self.readyFor)",message="nodeHealth.timeout must be at least nodeHealth.readyFor"
type NodeHealthGate struct {
	// readyFor is how long the node must be Ready, untainted, after its Job
	// succeeded. Default 60s.
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="nodeHealth.readyFor must not be negative"
	// +optional
	ReadyFor metav1.Duration `json:"readyFor,omitzero"`

	// timeout is how long after its Job succeeded a node may take to be
	// healthy for readyFor; past it, the node fails with reason
	// NodeUnhealthy. Default 5m.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="nodeHealth.timeout must be at least 1s"
	// +optional
	Timeout metav1.Duration `json:"timeout,omitzero"`
}

// BetweenClustersGate spaces clusters under maxConcurrentClusters.
type BetweenClustersGate struct {
	// soak is how long after a cluster finished the next cluster may start.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="betweenClusters.soak must not be negative"
	// +required
	Soak metav1.Duration `json:"soak"`
}

// DefaultNodeStartTimeout is spec.nodeStartTimeout when it is not set.
const DefaultNodeStartTimeout = 10 * time.Minute

// DefaultNodeLostTimeout is spec.nodeLostTimeout when it is not set: long
// enough for a node that reboots (a kernel update, a maintenance Job) to
// come back and its kubelet to report again, short enough that a dead node
// holds its group no longer than a pod that never starts
// (DefaultNodeStartTimeout).
const DefaultNodeLostTimeout = 10 * time.Minute

// ClusterJobSpec is the desired run. It is immutable after creation except
// for suspend, ttlSecondsAfterFinished, maintenanceWindows and
// maxWindowWait (which say when, not what, runs), so the status can never
// describe a different spec than the one that ran.
// +kubebuilder:validation:XValidation:rule="self.clusterSelector == oldSelf.clusterSelector",message="clusterSelector is immutable",fieldPath=".clusterSelector"
// +kubebuilder:validation:XValidation:rule="has(self.nodeSelector) == has(oldSelf.nodeSelector) && (!has(self.nodeSelector) || self.nodeSelector == oldSelf.nodeSelector)",message="nodeSelector is immutable",fieldPath=".nodeSelector"
// +kubebuilder:validation:XValidation:rule="self.strategy == oldSelf.strategy",message="strategy is immutable",fieldPath=".strategy"
// +kubebuilder:validation:XValidation:rule="(has(self.failureStrategy) ? self.failureStrategy : 'keepgoing') == (has(oldSelf.failureStrategy) ? oldSelf.failureStrategy : 'keepgoing')",message="failureStrategy is immutable",fieldPath=".failureStrategy"
// +kubebuilder:validation:XValidation:rule="has(self.failurePolicy) == has(oldSelf.failurePolicy) && (!has(self.failurePolicy) || self.failurePolicy == oldSelf.failurePolicy)",message="failurePolicy is immutable",fieldPath=".failurePolicy"
// +kubebuilder:validation:XValidation:rule="!has(self.failurePolicy) || !has(self.failureStrategy) || self.failureStrategy != 'exit'",message="failurePolicy and failureStrategy exit exclude each other: exit is failurePolicy maxFailedNodes: 0 and maxFailedClusters: 0",fieldPath=".failurePolicy"
// +kubebuilder:validation:XValidation:rule="has(self.gates) == has(oldSelf.gates) && (!has(self.gates) || self.gates == oldSelf.gates)",message="gates is immutable",fieldPath=".gates"
// +kubebuilder:validation:XValidation:rule="!has(self.gates) || !has(self.gates.betweenClusters) || has(self.clusterRollout)",message="gates.betweenClusters needs clusterRollout.maxConcurrentClusters: without it every cluster starts at once",fieldPath=".gates.betweenClusters"
// +kubebuilder:validation:XValidation:rule="has(self.clusterRollout) == has(oldSelf.clusterRollout) && (!has(self.clusterRollout) || self.clusterRollout == oldSelf.clusterRollout)",message="clusterRollout is immutable",fieldPath=".clusterRollout"
// +kubebuilder:validation:XValidation:rule="self.jobTemplate == oldSelf.jobTemplate",message="jobTemplate is immutable",fieldPath=".jobTemplate"
// +kubebuilder:validation:XValidation:rule="has(self.approval) == has(oldSelf.approval)",message="approval cannot be added or removed after creation",fieldPath=".approval"
// +kubebuilder:validation:XValidation:rule="has(self.nodeStartTimeout) == has(oldSelf.nodeStartTimeout) && (!has(self.nodeStartTimeout) || duration(self.nodeStartTimeout) == duration(oldSelf.nodeStartTimeout))",message="nodeStartTimeout is immutable",fieldPath=".nodeStartTimeout"
// +kubebuilder:validation:XValidation:rule="has(self.nodeLostTimeout) == has(oldSelf.nodeLostTimeout) && (!has(self.nodeLostTimeout) || duration(self.nodeLostTimeout) == duration(oldSelf.nodeLostTimeout))",message="nodeLostTimeout is immutable",fieldPath=".nodeLostTimeout"
// +kubebuilder:validation:XValidation:rule="has(self.retryOf) == has(oldSelf.retryOf) && (!has(self.retryOf) || self.retryOf == oldSelf.retryOf)",message="retryOf is immutable",fieldPath=".retryOf"
// +kubebuilder:validation:XValidation:rule="has(self.retry) == has(oldSelf.retry) && (!has(self.retry) || self.retry == oldSelf.retry)",message="retry is immutable",fieldPath=".retry"
// +kubebuilder:validation:XValidation:rule="(has(self.disruptive) && self.disruptive) == (has(oldSelf.disruptive) && oldSelf.disruptive)",message="disruptive is immutable",fieldPath=".disruptive"
// +kubebuilder:validation:XValidation:rule="has(self.nodePreparation) == has(oldSelf.nodePreparation) && (!has(self.nodePreparation) || self.nodePreparation == oldSelf.nodePreparation)",message="nodePreparation is immutable",fieldPath=".nodePreparation"
// +kubebuilder:validation:XValidation:rule="!has(self.retry) || has(self.retryOf)",message="retry needs retryOf: it says which nodes of that run to run again",fieldPath=".retry"
type ClusterJobSpec struct {
	// clusterSelector selects the registered member clusters that take part,
	// by the labels of their registration Secret. `{}` selects every
	// registered cluster. The set is taken when the run starts: a cluster
	// registered later does not join a started run.
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="matchExpressions operator must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) == (has(e.values) && size(e.values) > 0))",message="matchExpressions values must be set for In and NotIn, and only for them"
	// +required
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector"`

	// nodeSelector selects the nodes that take part inside each member
	// cluster. When absent, every node takes part. Nodes that are cordoned,
	// NotReady, or carry a NoSchedule/NoExecute taint the Job template does
	// not tolerate are skipped and reported.
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="matchExpressions operator must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) == (has(e.values) && size(e.values) > 0))",message="matchExpressions values must be set for In and NotIn, and only for them"
	// +optional
	NodeSelector *metav1.LabelSelector `json:"nodeSelector,omitempty"`

	// strategy decides how the eligible nodes of a cluster are split into
	// groups. Groups run one after the other; the nodes of a group run
	// together.
	// +required
	Strategy Strategy `json:"strategy"`

	// failureStrategy decides what happens after a node fails: `keepgoing`
	// (default) runs every group and ends Failed if any node failed; `exit`
	// starts no new group anywhere once any node failed.
	// +kubebuilder:default=keepgoing
	// +optional
	FailureStrategy FailureStrategy `json:"failureStrategy,omitempty"`

	// failurePolicy sets failure budgets per group, per cluster and across
	// the run, and what happens when one is exceeded. When absent,
	// failureStrategy alone decides; it may not be combined with
	// failureStrategy exit, which is the budget of 0 failed nodes and 0
	// failed clusters on the run.
	// +optional
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`

	// gates hold the run back between groups (soak) and between clusters
	// (betweenClusters.soak), and bound how long a group may take
	// (progressDeadline).
	// +optional
	Gates *Gates `json:"gates,omitempty"`

	// clusterRollout limits how many member clusters run at the same time.
	// When absent, every selected cluster runs at once.
	// +optional
	ClusterRollout *ClusterRollout `json:"clusterRollout,omitempty"`

	// approval holds the run after its canary clusters until a person
	// approves it (`kubectl fleetjob approve NAME`) or rejects it (`kubectl
	// fleetjob reject NAME`, which ends it Failed). The ClusterJob's
	// Approved condition says where it stands and who decided.
	// clusterRollout and the failure budgets still apply after approval.
	// +optional
	Approval *Approval `json:"approval,omitempty"`

	// maintenanceWindows are when groups may start: in each cluster, a
	// group (the first one too) starts only while one of these windows is
	// open and, where the cluster's ClusterSet names windows, one of the
	// set's as well. A group that started runs to its end when the window
	// closes; the next one waits, its cluster's row saying when the next
	// window opens, and starts by itself then. Unset: groups start at any
	// time the set allows. It may change while the run goes on (a window
	// extended tonight, a blackout date added): the hub applies it at once.
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	MaintenanceWindows []MaintenanceWindow `json:"maintenanceWindows,omitempty"`

	// maxWindowWait bounds the wait for a window: a cluster whose next
	// window (this run's and its set's open together) does not open within
	// maxWindowWait fails with reason NoMaintenanceWindow, so that a run
	// never waits for a window that does not come (a schedule of a day
	// that does not exist, blackout dates over every opening). Default
	// 840h (35 days: a monthly window always opens within it); from 1h to
	// 8784h (366 days).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1h') && duration(self) <= duration('8784h')",message="maxWindowWait must be from 1h to 8784h"
	// +optional
	MaxWindowWait *metav1.Duration `json:"maxWindowWait,omitempty"`

	// nodeStartTimeout is how long a node's pod may go without starting
	// (Ready) or finishing, from when the hub first saw the pod (or, while
	// its Job has no pod, the Job), by the hub's clock. While it waits, the
	// node's row shows what its member says refuses it, read from 10s (at
	// most half this bound) after the hub saw it: the container's waiting
	// reason (ErrImagePull, ImagePullBackOff, ...), the scheduler's
	// Unschedulable, or the Job controller's FailedCreate (a quota, Pod
	// Security), with its message. A refusal no wait cures fails the node
	// at once: `ContainerConfigError` (CreateContainerConfigError, for
	// example runAsNonRoot with an image that runs as root) or
	// `InvalidImage` (InvalidImageName). At the bound a node refused
	// otherwise counts as failed with the member's reason in its message:
	// `NotStarted` for its pod (unschedulable, an image that cannot be
	// pulled), `PodCreateFailed` for a Job given no pod; any other waiting
	// node fails only once its member also made no progress for as long
	// (created or started no pod of the run): `PodCreateFailed` when its
	// Job has no pod, `NotStarted` when its pod never started. A member
	// that works through a queue of pods fails no node.
	// The failed node's Job is deleted, so that a pod that cannot run never
	// holds its group. Default 10m. The Job template's own
	// activeDeadlineSeconds still applies to a pod that runs.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="nodeStartTimeout must be at least 1s"
	// +optional
	NodeStartTimeout *metav1.Duration `json:"nodeStartTimeout,omitempty"`

	// nodeLostTimeout is how long a node whose Job's pod started may stay
	// lost: NotReady or Unknown (its kubelet stopped reporting: power loss,
	// a kernel panic, a reboot) while its pod is not Ready. Past it, the
	// node counts as failed with reason `NodeLost`, and its Job is deleted,
	// so that its pod never runs later, when the node comes back. It counts
	// from when the hub first saw the node lost, by the hub's clock. A node
	// that comes back within it and whose pod then finishes counts as
	// usual. Default 10m; at least 10s, at most 24h.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s') && duration(self) <= duration('24h')",message="nodeLostTimeout must be from 10s to 24h"
	// +optional
	NodeLostTimeout *metav1.Duration `json:"nodeLostTimeout,omitempty"`

	// retryOf makes this run a retry of an ended ClusterJob in the same
	// namespace: it runs that run's frozen plan again in each of its
	// clusters, limited to the nodes retry.include names (by default the
	// nodes that failed), group by group in the parent's order. Its plan is
	// derived from the parent's plan and results record, never from the
	// nodes there are now; clusterSelector, nodeSelector and strategy are
	// not used to plan a cluster the parent planned. jobTemplate must equal
	// the parent's. A parent still running, missing, or with another
	// jobTemplate fails the run at once with reason RetryRefused.
	// `kubectl fleetjob retry NAME` writes it.
	// +optional
	RetryOf *RetryOf `json:"retryOf,omitempty"`

	// retry says which nodes of the retryOf run to run again, and in which
	// of its clusters. Default: the failed nodes, in every cluster.
	// +optional
	Retry *Retry `json:"retry,omitempty"`

	// disruptive says that the Job disrupts its node (a reboot, a kernel
	// or agent upgrade): the run counts against every
	// FleetDisruptionBudget selecting its clusters, and its nodes start
	// only as the budgets have room, shared with every other disruptive
	// run. A node is disrupted from its Job's creation until it succeeded
	// and passed its nodeHealth gate, or failed.
	// +optional
	Disruptive bool `json:"disruptive,omitempty"`

	// nodePreparation is what the hub does to each node before its Job:
	// drain cordons it and evicts its pods. A run that drains is
	// disruptive: it counts against every FleetDisruptionBudget selecting
	// its clusters, from the node's cordon.
	// +optional
	NodePreparation *NodePreparation `json:"nodePreparation,omitempty"`

	// suspend, while true, starts no new group anywhere; Jobs already running
	// finish. Setting it back to false resumes the run. On a run that ended
	// it keeps the run past ttlSecondsAfterFinished. It may change after
	// creation, as may ttlSecondsAfterFinished, maintenanceWindows and
	// maxWindowWait, and no other field.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// ttlSecondsAfterFinished is how long the run is kept once it ended,
	// Completed or Failed, counted from status.completionTime. Past it the
	// hub deletes the ClusterJob, and with it, as `kubectl delete` would,
	// its MemberRuns and the Jobs, pods, plans and results records of the
	// run in every member cluster. 0 deletes the run as soon as it ends.
	// Unset, the hub's --ended-run-ttl applies (off by default: the run is
	// kept until someone deletes it). A pending or running run is never
	// deleted; nor is an ended run with suspend: true, or one whose retry
	// (a ClusterJob whose retryOf names it) has not ended: it is kept until
	// neither holds. It may be changed at any time, for example to keep a
	// run longer. A deleted run can no longer be retried: `kubectl fleetjob
	// retry` needs its record.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// jobTemplate is the Job run once on every node. fleetjob pins each Job to
	// its node by adding a required node affinity term
	// (`matchFields metadata.name In [node]`, ANDed into the template's own
	// affinity) and sets FLEETJOB_NODE_NAME, FLEETJOB_CLUSTER_NAME and
	// FLEETJOB_GROUP in every container. One Job runs one pod to completion,
	// so selector, manualSelector, parallelism and completions other than 1,
	// Indexed completion and nodeName are rejected; so are suspend: true and
	// managedBy, with which a Job never runs, and ttlSecondsAfterFinished,
	// because the finished Jobs are the run's per-node record until the
	// ClusterJob is deleted.
	// +kubebuilder:validation:XValidation:rule="has(self.spec) && has(self.spec.template.spec)",message="jobTemplate.spec.template.spec is required: it holds the containers each Job runs"
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.selector)",message="jobTemplate.spec.selector must not be set: fleetjob selects each Job's pod itself"
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.manualSelector) || !self.spec.manualSelector",message="jobTemplate.spec.manualSelector must not be true"
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.parallelism) || self.spec.parallelism == 1",message="jobTemplate.spec.parallelism must be 1: one Job runs one pod on its node"
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.completions) || self.spec.completions == 1",message="jobTemplate.spec.completions must be 1: one Job runs one pod on its node"
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.completionMode) || self.spec.completionMode == 'NonIndexed'",message="jobTemplate.spec.completionMode must be NonIndexed"
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.ttlSecondsAfterFinished)",message="jobTemplate.spec.ttlSecondsAfterFinished must not be set: a finished Job is the node's result, and deleting it would run the node again"
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.suspend) || !self.spec.suspend",message="jobTemplate.spec.suspend must not be true: a suspended Job never runs its node and would hold its group forever; suspend the ClusterJob with spec.suspend instead"
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.managedBy)",message="jobTemplate.spec.managedBy must not be set: the member's Job controller must run fleetjob's Jobs, or they never finish"
	// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.template.spec) || !has(self.spec.template.spec.nodeName)",message="jobTemplate.spec.template.spec.nodeName must not be set: fleetjob pins each Job to its node by node affinity"
	// +required
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`
}

// Strategy is a union: type names the strategy, and exactly the block of that
// type is set (none for `all`).
// +kubebuilder:validation:XValidation:rule="self.type == 'batch' ? has(self.batch) : !has(self.batch)",message="batch must be set when type is batch, and only then",fieldPath=".batch"
// +kubebuilder:validation:XValidation:rule="self.type == 'perNodeGroup' ? has(self.perNodeGroup) : !has(self.perNodeGroup)",message="perNodeGroup must be set when type is perNodeGroup, and only then",fieldPath=".perNodeGroup"
type Strategy struct {
	// type is one of `all` (every node at once), `batch` (groups of
	// batch.size nodes) or `perNodeGroup` (one group per value of a node
	// label).
	// +required
	Type StrategyType `json:"type"`

	// batch configures the `batch` strategy.
	// +optional
	Batch *BatchStrategy `json:"batch,omitempty"`

	// perNodeGroup configures the `perNodeGroup` strategy.
	// +optional
	PerNodeGroup *PerNodeGroupStrategy `json:"perNodeGroup,omitempty"`
}

// BatchStrategy cuts the eligible nodes of a cluster into groups of size
// nodes; the last group may be smaller.
type BatchStrategy struct {
	// size is the number of nodes per group, at least 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +required
	Size int32 `json:"size"`

	// order is `alphabetical` (default: nodes sorted by name) or `random` (a
	// shuffle seeded by the ClusterJob UID and the cluster name, so it is the
	// same after a controller restart).
	// +kubebuilder:default=alphabetical
	// +optional
	Order BatchOrder `json:"order,omitempty"`
}

// PerNodeGroupStrategy runs one group per value of a node label, in sorted
// order of the values; nodes are sorted by name inside a group.
type PerNodeGroupStrategy struct {
	// groupLabel is the node label key whose values define the groups, for
	// example `topology.kubernetes.io/zone`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="!format.qualifiedName().validate(self).hasValue()",message="groupLabel must be a valid label key"
	// +required
	GroupLabel string `json:"groupLabel"`

	// ignoreNull, when true, leaves out nodes that do not carry groupLabel.
	// When false (default), they run as one last group named `<none>`.
	// +optional
	IgnoreNull bool `json:"ignoreNull,omitempty"`
}

// ClusterRollout limits how many member clusters run at once.
type ClusterRollout struct {
	// maxConcurrentClusters is the largest number of member clusters running
	// at the same time; clusters are taken in name order, and the next one
	// starts when a running one finishes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +required
	MaxConcurrentClusters int32 `json:"maxConcurrentClusters"`
}

// RetryOf names the run a retry runs again.
type RetryOf struct {
	// name is the ClusterJob, in this namespace, to retry. It must have
	// ended (Completed or Failed), and it must stay until this run planned
	// every cluster: its record in each member is what this run reads.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// RetryInclude is a kind of node of the parent run that a retry runs again.
// +kubebuilder:validation:Enum=Failed;Skipped;Unreachable;NotRun
type RetryInclude string

const (
	// RetryFailed: nodes whose Job failed, timed out, was deleted or whose
	// group ran past its deadline.
	RetryFailed RetryInclude = "Failed"
	// RetrySkipped: nodes left out when the parent planned the cluster or
	// started their group (cordoned, NotReady, an untolerated taint). Nodes
	// left out by the Job template's own node affinity or a missing
	// perNodeGroup label are not: they were never meant to run.
	RetrySkipped RetryInclude = "Skipped"
	// RetryUnreachable: the nodes of a cluster the parent could not reach
	// (it ended UnreachableTimeout, or was never connected) that never got
	// a Job; a cluster the parent never planned is planned now, from this
	// run's spec.
	RetryUnreachable RetryInclude = "Unreachable"
	// RetryNotRun: the nodes of a reachable cluster that never got a Job
	// because the parent stopped first (failureStrategy exit, a failure
	// budget, its plan lost).
	RetryNotRun RetryInclude = "NotRun"
)

// Retry says what a retry runs again.
type Retry struct {
	// include are the kinds of node of the parent run to run again.
	// +kubebuilder:default={Failed}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=set
	// +optional
	Include []RetryInclude `json:"include,omitempty"`

	// clusters narrows the retry to these clusters of the parent run; every
	// one must have run in it. When absent, every cluster of the parent
	// run takes part.
	// +kubebuilder:validation:MaxItems=2000
	// +kubebuilder:validation:items:MaxLength=253
	// +listType=set
	// +optional
	Clusters []string `json:"clusters,omitempty"`
}

// RetryIncludes returns what spec retries, its default when unset, or nil
// for a run that is no retry.
func (s *ClusterJobSpec) RetryIncludes() []RetryInclude {
	switch {
	case s.RetryOf == nil:
		return nil
	case s.Retry == nil || len(s.Retry.Include) == 0:
		return []RetryInclude{RetryFailed}
	}
	return s.Retry.Include
}
