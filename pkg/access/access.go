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

// Package access is what fleetjob does in a member cluster, as
// authorization attributes: the hub checks a registration against it before
// engaging the member, and `kubectl fleetjob register` grants exactly it.
// One list, so the two can never disagree.
package access

import (
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
)

var (
	// WorkVerbs are the verbs on Jobs in the work namespace:
	// deletecollection removes a run's Jobs in one call.
	WorkVerbs = []string{"get", "list", "watch", "create", "delete", "deletecollection"}
	// ConfigMapVerbs are the verbs on ConfigMaps in the work namespace: the
	// frozen plan, and the results record, which is updated as nodes finish.
	ConfigMapVerbs = append(slices.Clone(WorkVerbs), "update")
	// NodeVerbs are the verbs on Nodes: read-only, to plan and to notice a
	// node going away.
	NodeVerbs = []string{"get", "list", "watch"}
	// PodVerbs are the verbs on pods in the work namespace: read-only, to
	// record a failed node's exit code and termination message.
	PodVerbs = []string{"get", "list"}
	// EventVerbs are the verbs on events in the work namespace: read-only,
	// and only a bounded list on a Job that got no pod, since the Job
	// controller says why (FailedCreate: a quota, Pod Security) only in an
	// event on the Job. No watch: the hub reads them for stuck Jobs only.
	EventVerbs = []string{"get", "list"}
)

// The verbs of a drain (spec.nodePreparation.drain), granted only in the
// clusters of a set that allows drains (ClusterSet spec.allowDrain): they
// reach past the work namespace, into every workload of the member.
var (
	// DrainNodeVerbs are the verbs on Nodes a drain adds to NodeVerbs
	// (which read them): patch, to cordon a node with the run's mark and
	// uncordon it after. Not update, which would rewrite the whole node.
	DrainNodeVerbs = []string{"patch"}
	// DrainPodVerbs are the verbs on pods in every namespace: list, to
	// find the pods on a node (by spec.nodeName) wherever they run.
	DrainPodVerbs = []string{"list"}
	// DrainEvictionVerbs are the verbs on pods/eviction in every namespace:
	// create, to evict through the Eviction API, which honours
	// PodDisruptionBudgets; never delete on pods, which would not.
	DrainEvictionVerbs = []string{"create"}
)

// IdentityNamespace is the member namespace whose UID identifies the
// member cluster: the hub reads it, and only it, to tell two registrations
// of one cluster apart from two clusters, and a rebuilt cluster from the one
// a run started in.
const IdentityNamespace = "kube-system"

// Required lists every access fleetjob needs in a member whose work
// namespace is namespace.
func Required(namespace string) []authorizationv1.ResourceAttributes {
	var out []authorizationv1.ResourceAttributes
	for _, verb := range WorkVerbs {
		out = append(out, authorizationv1.ResourceAttributes{Namespace: namespace, Group: "batch", Resource: "jobs", Verb: verb})
	}
	for _, verb := range ConfigMapVerbs {
		out = append(out, authorizationv1.ResourceAttributes{Namespace: namespace, Resource: "configmaps", Verb: verb})
	}
	for _, verb := range PodVerbs {
		out = append(out, authorizationv1.ResourceAttributes{Namespace: namespace, Resource: "pods", Verb: verb})
	}
	for _, verb := range NodeVerbs {
		out = append(out, authorizationv1.ResourceAttributes{Resource: "nodes", Verb: verb})
	}
	out = append(out, authorizationv1.ResourceAttributes{Resource: "namespaces", Name: IdentityNamespace, Verb: "get"})
	return out
}

// Optional lists what fleetjob uses in a member whose work namespace is
// namespace when it is granted, and does without when not: `kubectl
// fleetjob register` grants it, but a registration from before it was
// added still engages. Without it, a Job refused its pod shows no reason
// of its member's.
func Optional(namespace string) []authorizationv1.ResourceAttributes {
	var out []authorizationv1.ResourceAttributes
	for _, verb := range EventVerbs {
		out = append(out, authorizationv1.ResourceAttributes{Namespace: namespace, Resource: "events", Verb: verb})
	}
	return out
}

// Drain lists what fleetjob needs in a member to drain its nodes, beyond
// Required: cluster-scoped, since a node's pods run in any namespace.
// `kubectl fleetjob register` grants it only where the cluster's set
// allows drains, and the hub checks it before a run drains there.
func Drain() []authorizationv1.ResourceAttributes {
	var out []authorizationv1.ResourceAttributes
	for _, verb := range DrainNodeVerbs {
		out = append(out, authorizationv1.ResourceAttributes{Resource: "nodes", Verb: verb})
	}
	for _, verb := range DrainPodVerbs {
		out = append(out, authorizationv1.ResourceAttributes{Resource: "pods", Verb: verb})
	}
	for _, verb := range DrainEvictionVerbs {
		out = append(out, authorizationv1.ResourceAttributes{Resource: "pods", Subresource: "eviction", Verb: verb})
	}
	return out
}

// DrainNotAllowed says why a run that drains does not run in cluster,
// whose ClusterSet set does not allow drains: the hub's verdict, and the
// preview's of it.
func DrainNotAllowed(set, cluster string) string {
	return fmt.Sprintf("ClusterSet %s does not allow drains (spec.allowDrain): spec.nodePreparation.drain cannot run in cluster %s", set, cluster)
}

// Describe says an access the way a person reads it: "create jobs.batch in
// namespace fleetjob-system".
func Describe(a authorizationv1.ResourceAttributes) string {
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Group != "" {
		res += "." + a.Group
	}
	if a.Name != "" {
		res += " " + a.Name
	}
	if a.Namespace != "" {
		return fmt.Sprintf("%s %s in namespace %s", a.Verb, res, a.Namespace)
	}
	return a.Verb + " " + res
}

// DescribeAll joins Describe of each access with "; ".
func DescribeAll(attrs []authorizationv1.ResourceAttributes) string {
	out := make([]string, len(attrs))
	for i, a := range attrs {
		out[i] = Describe(a)
	}
	return strings.Join(out, "; ")
}
