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

// NodePreparation is what the hub does to a node before its Job is
// created.
type NodePreparation struct {
	// drain cordons each node and evicts its pods, as `kubectl drain`
	// does, before the node's Job is created.
	// +optional
	Drain *Drain `json:"drain,omitempty"`
}

// DrainOnTimeout says what becomes of a node whose drain failed.
// +kubebuilder:validation:Enum=Uncordon;Leave
type DrainOnTimeout string

const (
	// DrainUncordon uncordons a node whose drain failed: its workloads
	// may come back.
	DrainUncordon DrainOnTimeout = "Uncordon"
	// DrainLeave leaves a node whose drain failed cordoned, for a person
	// to look at; fleetjob forgets it (its mark is taken off).
	DrainLeave DrainOnTimeout = "Leave"
)

// Drain cordons each node and evicts its pods through the Eviction API
// before the node's Job is created. PodDisruptionBudgets are respected:
// an eviction they refuse is tried again until timeout. DaemonSet pods,
// mirror (static) pods, finished pods and the Job pods of fleetjob runs
// are never evicted. The Job's pod tolerates the cordon. The member
// cluster's set must allow drains (ClusterSet spec.allowDrain), which
// grants the hub's identity there the permissions a drain needs.
type Drain struct {
	// timeout bounds a node's drain, from its cordon: a node whose pods
	// are not all gone by then fails DrainTimeout, and is uncordoned or
	// left cordoned as onTimeout says. Default 10m; at least 10s, at most
	// 24h.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s') && duration(self) <= duration('24h')",message="drain.timeout must be from 10s to 24h"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// deleteEmptyDirData evicts pods with emptyDir volumes, whose data is
	// lost (kubectl drain --delete-emptydir-data). Without it such a pod
	// fails the node's drain DrainBlocked.
	// +optional
	DeleteEmptyDirData bool `json:"deleteEmptyDirData,omitempty"`

	// force evicts pods that no controller manages, which nothing
	// recreates (kubectl drain --force). Without it such a pod fails the
	// node's drain DrainBlocked.
	// +optional
	Force bool `json:"force,omitempty"`

	// podSelector, when set, selects the pods to evict: pods it does not
	// select stay on the node (kubectl drain --pod-selector, negated:
	// `{matchExpressions: [{key: app, operator: NotIn, values: [agent]}]}`
	// leaves the agent's pods).
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="matchExpressions operator must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) == (has(e.values) && size(e.values) > 0))",message="matchExpressions values must be set for In and NotIn, and only for them"
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`

	// onTimeout says what becomes of a node whose drain failed (timed out
	// or blocked): Uncordon (the default) or Leave it cordoned.
	// +kubebuilder:default=Uncordon
	// +optional
	OnTimeout DrainOnTimeout `json:"onTimeout,omitempty"`

	// keepCordoned leaves each node cordoned after its Job succeeded (and
	// passed spec.gates.nodeHealth), for whatever comes next; fleetjob
	// takes its mark off and forgets it. By default fleetjob uncordons
	// every node it cordoned once the node is done.
	// +optional
	KeepCordoned bool `json:"keepCordoned,omitempty"`
}

// DefaultDrainTimeout is spec.nodePreparation.drain.timeout when unset.
const DefaultDrainTimeout = 10 * time.Minute

// TimeoutOrDefault is the drain's timeout, defaulted as the API server
// does for objects that predate it.
func (d *Drain) TimeoutOrDefault() time.Duration {
	if d.Timeout == nil || d.Timeout.Duration <= 0 {
		return DefaultDrainTimeout
	}
	return d.Timeout.Duration
}

// DisruptsNodes tells whether the run counts against
// FleetDisruptionBudgets: it says it is disruptive, or it drains.
func (s *ClusterJobSpec) DisruptsNodes() bool {
	return s.Disruptive || s.Drains()
}

// Drains tells whether the run drains each node before its Job.
func (s *ClusterJobSpec) Drains() bool {
	return s.NodePreparation != nil && s.NodePreparation.Drain != nil
}

const (
	// CordonedByAnnotation marks a node fleetjob cordoned, with
	// `<hub>/<ClusterJob UID>`: only the run that cordoned it, from that
	// hub, uncordons it, and a node someone else cordoned never carries
	// it.
	CordonedByAnnotation = "fleetjob.io/cordoned-by"
	// DrainStartedAnnotation is when fleetjob cordoned the node (RFC
	// 3339): the drain's timeout counts from it, across hub restarts.
	DrainStartedAnnotation = "fleetjob.io/drain-started"
	// DrainEvictedAnnotation counts the pods the drain evicted from the
	// node so far, for its result.
	DrainEvictedAnnotation = "fleetjob.io/drain-evicted"
	// UnschedulableTaint is the taint the node lifecycle controller puts
	// on a cordoned node; a drain run's pods tolerate it.
	UnschedulableTaint = "node.kubernetes.io/unschedulable"
)
