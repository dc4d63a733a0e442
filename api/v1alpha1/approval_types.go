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

// DefaultApprovalTimeout is an approval's timeout when it sets none: a
// working day and a night for someone to look at the canary.
const DefaultApprovalTimeout = 24 * time.Hour

// Approval holds a run after its canary clusters until a person approves
// it. The canary is the first canaryClusters clusters in name order (the
// order clusters start in), or the clusters whose registration labels
// match canarySelector; no other cluster starts before the decision.
// +kubebuilder:validation:XValidation:rule="has(self.canaryClusters) != has(self.canarySelector)",message="exactly one of canaryClusters and canarySelector must be set"
// +kubebuilder:validation:XValidation:rule="has(self.canaryClusters) == has(oldSelf.canaryClusters) && (!has(self.canaryClusters) || self.canaryClusters == oldSelf.canaryClusters) && has(self.canarySelector) == has(oldSelf.canarySelector) && (!has(self.canarySelector) || self.canarySelector == oldSelf.canarySelector) && has(self.timeout) == has(oldSelf.timeout) && (!has(self.timeout) || duration(self.timeout) == duration(oldSelf.timeout))",message="canaryClusters, canarySelector and timeout are immutable: only decision may be set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.decision) || (has(self.decision) && self.decision == oldSelf.decision)",message="decision is set once and never changed",fieldPath=".decision"
type Approval struct {
	// canaryClusters is how many clusters run before the approval: the
	// first ones in name order.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	CanaryClusters *int32 `json:"canaryClusters,omitempty"`

	// canarySelector picks the clusters that run before the approval by
	// the labels of their registration Secret. When it matches no selected
	// cluster, no cluster starts before the approval.
	// +optional
	CanarySelector *metav1.LabelSelector `json:"canarySelector,omitempty"`

	// timeout is how long the run waits for a decision once every canary
	// cluster ended: past it the run fails with reason ApprovalTimeout, so
	// that a run nobody looks at still ends. Default 24h; from 1m to 720h.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('720h')",message="timeout must be from 1m to 720h"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// decision is a person's answer, written by `kubectl fleetjob approve`
	// or `reject`: approved goes on to every cluster, rejected ends the run
	// Failed with reason Rejected. It is set once and never changed; the
	// admission policy fleetjob-approvals checks that user names whoever
	// wrote it. It may be written before the canary ended, to let the run
	// go on without waiting.
	// +optional
	Decision *ApprovalDecision `json:"decision,omitempty"`
}

// ApprovalDecision is a person's answer to an approval.
type ApprovalDecision struct {
	// approved is true to go on, false to end the run.
	// +required
	Approved bool `json:"approved"`

	// user is who decided, as the hub's API server authenticated them.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +required
	User string `json:"user"`

	// reason says why, for the ClusterJob's Approved condition and event.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Reason string `json:"reason,omitempty"`
}
