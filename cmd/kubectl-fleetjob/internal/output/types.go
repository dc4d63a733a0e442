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

// Package output is what `kubectl fleetjob` prints for -o: the output-only
// kinds of group cli.fleetjob.io, v1 Lists of objects, and the
// custom-columns printer that cli-runtime does not carry.
//
// The kinds of cli.fleetjob.io/v1alpha1 are rows the plugin computes (a
// node's result read from a member, a plan, a cluster set's summary): no
// API server serves them and none accepts them. They carry an apiVersion,
// a kind and metadata.name so that -o name, jsonpath and custom-columns
// work on them as on API objects.
package output

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetjob/fleetjob/pkg/plan"
)

// APIVersion is the group and version of the output-only kinds.
const APIVersion = "cli.fleetjob.io/v1alpha1"

// Kinds of cli.fleetjob.io/v1alpha1.
const (
	KindNodeResult        = "NodeResult"
	KindClusterPlan       = "ClusterPlan"
	KindClusterSetSummary = "ClusterSetSummary"
)

// Meta is the metadata of an output-only object: a name, and labels where
// the row has some. It has no uid, resourceVersion or timestamps: nothing
// stores it.
type Meta struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: APIVersion, Kind: kind}
}

// NodeResult is one node's result in one member cluster, as status --nodes
// reads it from the member. Its name is "<cluster>/<node>".
type NodeResult struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        Meta         `json:"metadata"`
	Cluster         string       `json:"cluster"`
	Node            string       `json:"node"`
	Group           string       `json:"group"`
	GroupIndex      int          `json:"groupIndex"`
	Job             string       `json:"job,omitempty"`
	Phase           string       `json:"phase"`
	Reason          string       `json:"reason,omitempty"`
	Message         string       `json:"message,omitempty"`
	ExitCode        *int32       `json:"exitCode,omitempty"`
	Output          string       `json:"output,omitempty"`
	StartTime       *metav1.Time `json:"startTime,omitempty"`
	FinishTime      *metav1.Time `json:"finishTime,omitempty"`
}

// NewNodeResult is a NodeResult named for its cluster and node.
func NewNodeResult(cluster, node string) NodeResult {
	return NodeResult{TypeMeta: typeMeta(KindNodeResult), Metadata: Meta{Name: cluster + "/" + node}, Cluster: cluster, Node: node}
}

// ClusterPlan is the plan a run froze in one member cluster, named for the
// cluster.
type ClusterPlan struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        Meta      `json:"metadata"`
	Cluster         string    `json:"cluster"`
	Plan            plan.Plan `json:"plan"`
}

// NewClusterPlan is the ClusterPlan of cluster.
func NewClusterPlan(cluster string, p plan.Plan) ClusterPlan {
	return ClusterPlan{TypeMeta: typeMeta(KindClusterPlan), Metadata: Meta{Name: cluster}, Cluster: cluster, Plan: p}
}

// ClusterSetSummary is a cluster set as the hub's objects describe it.
type ClusterSetSummary struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        Meta   `json:"metadata"`
	PodSecurity     string `json:"podSecurity"`
	// Defined tells whether a ClusterSet object exists.
	Defined  bool     `json:"defined"`
	Clusters []string `json:"clusters"`
	Bindings []string `json:"bindings"`
	Warning  string   `json:"warning,omitempty"`
}

// NewClusterSetSummary is the summary of set name.
func NewClusterSetSummary(name string) ClusterSetSummary {
	return ClusterSetSummary{TypeMeta: typeMeta(KindClusterSetSummary), Metadata: Meta{Name: name}}
}
