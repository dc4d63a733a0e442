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

// Every reason fleetjob writes, in one place: the condition reasons of a
// ClusterJob, the reasons on its cluster rows, and the reasons of a node's
// result. Users match on them (alerts, `kubectl get -o jsonpath`, scripts),
// so they are API: renaming one breaks them.

// Reasons of a ClusterJob's conditions and of its cluster rows about the
// run.
const (
	// ReasonPending: no Job has started yet.
	ReasonPending = "Pending"
	// ReasonRunning: groups are left.
	ReasonRunning = "Running"
	// ReasonCompleted: every group ran and no node failed.
	ReasonCompleted = "Completed"
	// ReasonFailed: the run ended and a node or a cluster failed.
	ReasonFailed = "Failed"
	// ReasonWaitingForTurn: the cluster waits under maxConcurrentClusters.
	ReasonWaitingForTurn = "WaitingForTurn"
	// ReasonSuspended: spec.suspend holds the run; running Jobs finish.
	ReasonSuspended = "Suspended"
	// ReasonStopped: failureStrategy exit stopped the cluster after a
	// failure elsewhere.
	ReasonStopped = "Stopped"
	// ReasonFailureBudgetExceeded: more nodes or clusters failed than a
	// budget of spec.failurePolicy allows; the message names the budget.
	ReasonFailureBudgetExceeded = "FailureBudgetExceeded"
	// ReasonResumed: a person resumed a run that a failure budget
	// suspended, accepting the failures so far.
	ReasonResumed = "Resumed"
	// ReasonRetryRefused: spec.retryOf names a ClusterJob that cannot be
	// retried (missing, still running, another jobTemplate, a cluster it
	// did not run); the message says which.
	ReasonRetryRefused = "RetryRefused"
	// ReasonRetryParentGone: the parent of a retry was deleted before this
	// cluster planned, and its record there with it.
	ReasonRetryParentGone = "RetryParentGone"
	// ReasonNoBoundClusterSets: the ClusterJob's namespace has no
	// ClusterSetBinding, so it may select no cluster (hub --tenancy on).
	ReasonNoBoundClusterSets = "NoBoundClusterSets"
	// ReasonPodSecurityViolation: the pod template does not meet the Pod
	// Security Standard level of the cluster's set; no Job was created.
	ReasonPodSecurityViolation = "PodSecurityViolation"
	// ReasonServiceAccountNotAllowed: the pod template runs as a
	// ServiceAccount the cluster's set does not allow (or as the hub's
	// own); no Job was created.
	ReasonServiceAccountNotAllowed = "ServiceAccountNotAllowed"
	// ReasonCanaryRunning: the run's canary clusters run; the others wait
	// for the approval.
	ReasonCanaryRunning = "CanaryRunning"
	// ReasonAwaitingApproval: the canary ended; the run waits for a
	// person's decision.
	ReasonAwaitingApproval = "AwaitingApproval"
	// ReasonApproved: a person approved the run.
	ReasonApproved = "Approved"
	// ReasonNothingToApprove: every selected cluster is in the canary:
	// the run runs everywhere without a decision.
	ReasonNothingToApprove = "NothingToApprove"
	// ReasonRejected: a person rejected the run: it stops, Failed.
	ReasonRejected = "Rejected"
	// ReasonApprovalTimeout: no decision came within spec.approval.timeout
	// of the canary's end: the run stops, Failed.
	ReasonApprovalTimeout = "ApprovalTimeout"
	// ReasonWaitingForWindow: no maintenance window of the run (or of the
	// cluster's set) is open: the cluster's next group waits for the next
	// one, which the message names.
	ReasonWaitingForWindow = "WaitingForWindow"
	// ReasonWaitingForBudget: a FleetDisruptionBudget has no room for the
	// cluster's next nodes: they wait until nodes of any disruptive run
	// finish, the message naming the budget and who holds it.
	ReasonWaitingForBudget = "WaitingForBudget"
	// ReasonDraining: nodes of the cluster's current group are being
	// drained (spec.nodePreparation.drain) before their Jobs; the message
	// says how many and what holds the first of them.
	ReasonDraining = "Draining"
	// ReasonSoaking: a gate's soak holds the next group or cluster back.
	ReasonSoaking = "Soaking"
	// ReasonNodeFailed: a node of the cluster failed.
	ReasonNodeFailed = "NodeFailed"
	// ReasonUnreachableTimeout: a started cluster stayed unreachable longer
	// than the hub's --unreachable-timeout.
	ReasonUnreachableTimeout = "UnreachableTimeout"
	// ReasonNoClusters: the cluster selector matched no registered cluster
	// within the hub's --empty-selection-grace.
	ReasonNoClusters = "NoClusters"
	// ReasonPlanLost: the cluster's frozen plan disappeared mid-run; nothing
	// is run again from another plan.
	ReasonPlanLost = "PlanLost"
	// ReasonClusterChanged: the registration points at another cluster than
	// the one the run started in.
	ReasonClusterChanged = "ClusterChanged"
	// ReasonCreatingMemberRuns: some selected clusters do not have their
	// MemberRun yet; their creation is retried and no cluster starts.
	ReasonCreatingMemberRuns = "CreatingMemberRuns"
	// ReasonMemberRunsNotCreated: a selected cluster's MemberRun could not
	// be created within the hub's --member-error-timeout; no cluster
	// started, and the message names the clusters.
	ReasonMemberRunsNotCreated = "MemberRunsNotCreated"
	// ReasonJobsLeftBehind: a Warning event: a cluster ended while Jobs of
	// nodes the hub failed were still there, past the deletion deadline;
	// the event names them.
	ReasonJobsLeftBehind = "JobsLeftBehind"
	// ReasonMemberStalled: the member created or started no pod of the run
	// for spec.nodeStartTimeout while Jobs of it waited (its Job
	// controller or scheduler makes no progress, or a quota or an
	// admission policy refuses every pod); the waiting nodes fail and the
	// cluster stops.
	ReasonMemberStalled = "MemberStalled"
	// ReasonRunExpired: a Normal event: the run ended longer ago than its
	// spec.ttlSecondsAfterFinished (or the hub's --ended-run-ttl), and the
	// hub is deleting it with what it left in the members.
	ReasonRunExpired = "RunExpired"
)

// Reasons of the events the hub records on a ClusterJob about its run in
// one cluster (the event's action names the cluster). Events with a
// condition or node reason above reuse it.
const (
	// EventReasonClusterStarted: a Normal event: the cluster's plan was
	// frozen; the note counts its groups, nodes and skipped nodes.
	EventReasonClusterStarted = "ClusterStarted"
	// EventReasonGroupStarted: a Normal event: the Jobs of a group were
	// created.
	EventReasonGroupStarted = "GroupStarted"
	// EventReasonNodesSkipped: a Warning event: nodes of a starting group
	// cannot run the Job now (gone, cordoned, not Ready) and were skipped.
	EventReasonNodesSkipped = "NodesSkipped"
	// EventReasonNodesLeftCordoned: a Warning event: the run ended in a
	// cluster with nodes it cordoned for a drain that it could not
	// uncordon; the message names how many and why.
	EventReasonNodesLeftCordoned = "NodesLeftCordoned"
	// EventReasonNodeNotStarted: a Warning event: nodes failed because
	// their pods were refused for good or did not start within
	// spec.nodeStartTimeout.
	EventReasonNodeNotStarted = "NodeNotStarted"
	// EventReasonCleanupAbandoned: a Warning event: the hub gave up
	// deleting what a run left in a cluster (unreachable, or the deletion
	// deadline passed); the note says what may be left.
	EventReasonCleanupAbandoned = "CleanupAbandoned"
)

// Condition type and reasons of a MemberRun that the hub does not run.
const (
	// ConditionAccepted is False on a MemberRun the hub does not run nor
	// clean up for: it is not the one the fleet created for a cluster its
	// ClusterJob selected.
	ConditionAccepted = "Accepted"
	// ReasonClusterJobNotFound: no ClusterJob with spec.clusterJob's name
	// and spec.clusterJobUID exists in the MemberRun's namespace.
	ReasonClusterJobNotFound = "ClusterJobNotFound"
	// ReasonNotSelected: the ClusterJob did not select spec.cluster
	// (its status.selectedClusters does not list it).
	ReasonNotSelected = "NotSelected"
	// ReasonDuplicateMemberRun: the ClusterJob's MemberRun for spec.cluster
	// has another name; this one is a copy.
	ReasonDuplicateMemberRun = "DuplicateMemberRun"
	// ReasonAwaitingSelection: the ClusterJob has not recorded its selected
	// clusters yet (a run started by an older hub); the hub looks again.
	ReasonAwaitingSelection = "AwaitingSelection"
)

// Reasons on a cluster row about the hub's work in the member.
const (
	// ReasonWorkNamespaceMissing: the work namespace does not exist and the
	// registered identity may not create it.
	ReasonWorkNamespaceMissing = "WorkNamespaceMissing"
	// ReasonPlanTooLarge: the cluster's plan does not fit in the 16
	// ConfigMaps a plan may be split across.
	ReasonPlanTooLarge = "PlanTooLarge"
	// ReasonInvalidSpec: the ClusterJob's spec cannot be planned.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonInvalidJob: the member's API server rejects the Job built from
	// the template as invalid.
	ReasonInvalidJob = "InvalidJob"
	// ReasonNoMaintenanceWindow: no maintenance window of the run (and of
	// the cluster's set) opens within spec.maxWindowWait, or one cannot be
	// read (a schedule or time zone the hub does not know); the message
	// names the field.
	ReasonNoMaintenanceWindow = "NoMaintenanceWindow"
	// ReasonMemberError: any other failure of a call to the member.
	ReasonMemberError = "MemberError"
)

// Reasons on a cluster's status row about its connection, also used as
// Warning event reasons on registration Secrets.
const (
	// ClusterReasonConnected: the hub reaches the cluster.
	ClusterReasonConnected = "Connected"
	// ClusterReasonConnecting: the hub is checking and engaging the cluster.
	ClusterReasonConnecting = "Connecting"
	// ClusterReasonInvalidRegistration: the registration Secret cannot be
	// used (bad kubeconfig, bad namespace annotation) until it changes.
	ClusterReasonInvalidRegistration = "InvalidRegistration"
	// ClusterReasonForbidden: the registered credentials lack a permission
	// fleetjob needs.
	ClusterReasonForbidden = "Forbidden"
	// ClusterReasonUnauthorized: the member rejects the credentials.
	ClusterReasonUnauthorized = "Unauthorized"
	// ClusterReasonDuplicateCluster: the registration points at a cluster
	// that another registration runs already.
	ClusterReasonDuplicateCluster = "DuplicateCluster"
	// ReasonNotRegistered: no registration Secret names the cluster.
	ReasonNotRegistered = "NotRegistered"
	// ClusterReasonUnreachable: the member's API server does not answer.
	ClusterReasonUnreachable = "Unreachable"
	// ClusterReasonServedByPeer: another hub replica serves the cluster
	// (the hub runs sharded); the message names it.
	ClusterReasonServedByPeer = "ServedByPeer"
)

// Reasons of a node's result besides its Job's own (BackoffLimitExceeded,
// DeadlineExceeded, ...): why it was skipped or failed without a verdict of
// its Job.
const (
	// NodeReasonUnschedulable: the node is cordoned.
	NodeReasonUnschedulable = "Unschedulable"
	// NodeReasonNotReady: the node is not Ready.
	NodeReasonNotReady = "NotReady"
	// NodeReasonUntoleratedTaint: the Job template does not tolerate a
	// NoSchedule or NoExecute taint of the node.
	NodeReasonUntoleratedTaint = "UntoleratedTaint"
	// NodeReasonAffinityMismatch: the node does not match the Job template's
	// node selector or required affinity.
	NodeReasonAffinityMismatch = "NodeAffinityMismatch"
	// NodeReasonNoGroupLabel: the node lacks the perNodeGroup label and
	// ignoreNull is set.
	NodeReasonNoGroupLabel = "NoGroupLabel"
	// NodeReasonNodeDeleted: the node disappeared after it was planned.
	NodeReasonNodeDeleted = "NodeDeleted"
	// NodeReasonJobDeleted: the node's Job disappeared before its result
	// was recorded; it ran, or may have, and is never run again.
	NodeReasonJobDeleted = "JobDeleted"
	// NodeReasonPodCreateFailed: the Job got no pod at all (quota,
	// admission) within nodeStartTimeout.
	NodeReasonPodCreateFailed = "PodCreateFailed"
	// NodeReasonNotStarted: the Job's pod exists but did not start within
	// nodeStartTimeout (unschedulable, image pull, a node gone NotReady).
	NodeReasonNotStarted = "NotStarted"
	// NodeReasonContainerConfigError: the kubelet cannot create the pod's
	// container from its configuration (CreateContainerConfigError: a
	// runAsNonRoot image that runs as root, a missing ConfigMap or Secret
	// key); no wait cures it, so the node fails at once.
	NodeReasonContainerConfigError = "ContainerConfigError"
	// NodeReasonInvalidImage: the pod names an image that is no valid
	// reference (InvalidImageName); the node fails at once.
	NodeReasonInvalidImage = "InvalidImage"
	// NodeReasonNodeUnhealthy: the node's Job succeeded but the node was
	// not Ready, untainted, for spec.gates.nodeHealth.readyFor within its
	// timeout.
	NodeReasonNodeUnhealthy = "NodeUnhealthy"
	// NodeReasonAwaitingHealth: the node's Job succeeded and the hub waits
	// for the node to prove healthy (spec.gates.nodeHealth); the node is
	// Running meanwhile.
	NodeReasonAwaitingHealth = "AwaitingNodeHealth"
	// NodeReasonGroupDeadlineExceeded: the node's group ran past
	// spec.gates.progressDeadline before the node finished.
	NodeReasonGroupDeadlineExceeded = "GroupDeadlineExceeded"
	// NodeReasonNodeLost: the node's pod started, then the node was
	// NotReady or Unknown for longer than spec.nodeLostTimeout while its
	// pod was not Ready; its Job is deleted.
	NodeReasonNodeLost = "NodeLost"
	// NodeReasonDrainTimeout: the node's pods were not all evicted within
	// spec.nodePreparation.drain.timeout (a PodDisruptionBudget that never
	// allowed it, a pod that would not terminate); its Job was never
	// created.
	NodeReasonDrainTimeout = "DrainTimeout"
	// NodeReasonDrainBlocked: the node has a pod the drain's options do
	// not let it evict (emptyDir data without deleteEmptyDirData, a pod
	// no controller manages without force); its Job was never created.
	NodeReasonDrainBlocked = "DrainBlocked"
	// ReasonDrainNotAllowed: the run drains nodes, and the hub's identity
	// in the cluster may not (its set does not allowDrain, or register
	// did not grant it); the cluster fails naming the missing permission.
	ReasonDrainNotAllowed = "DrainNotAllowed"
)
