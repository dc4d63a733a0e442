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

package disruption

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// Cluster is what a budget reads of one registered cluster.
type Cluster struct {
	// Labels are the registration Secret's labels.
	Labels map[string]string
	// Nodes is the cluster's node count (its MemberCluster's
	// status.nodeCount), the base of a percentage; 0 when not known yet.
	Nodes int
}

// Caps are the limits of the budgets that select cluster, resolved
// against the registered clusters: a percentage of the cluster's nodes
// per cluster, of the selected clusters' nodes together for the total.
// A budget whose selector cannot be read is an error naming it: it must
// not be taken to select nothing, which would lift its cap.
func Caps(budgets []fleetv1.FleetDisruptionBudget, cluster string, clusters map[string]Cluster) ([]Cap, error) {
	var caps []Cap
	for i := range budgets {
		b := &budgets[i]
		sel, err := selector(b)
		if err != nil {
			return nil, err
		}
		if c, ok := clusters[cluster]; !ok || !sel.Matches(labels.Set(c.Labels)) {
			continue
		}
		c := Cap{Budget: b.Name}
		total := 0
		c.Clusters, total = selected(sel, clusters)
		if c.PerCluster, err = resolve(b.Spec.MaxDisruptedNodesPerCluster, clusters[cluster].Nodes); err != nil {
			return nil, fmt.Errorf("FleetDisruptionBudget %s: spec.maxDisruptedNodesPerCluster: %w", b.Name, err)
		}
		if c.Total, err = resolve(b.Spec.MaxDisruptedNodes, total); err != nil {
			return nil, fmt.Errorf("FleetDisruptionBudget %s: spec.maxDisruptedNodes: %w", b.Name, err)
		}
		caps = append(caps, c)
	}
	return caps, nil
}

// selector reads a budget's cluster selector, the error naming the budget
// and field; nil selects nothing, which the API does not allow.
func selector(b *fleetv1.FleetDisruptionBudget) (labels.Selector, error) {
	if b.Spec.ClusterSelector == nil {
		return labels.Nothing(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(b.Spec.ClusterSelector)
	if err != nil {
		return nil, fmt.Errorf("FleetDisruptionBudget %s: spec.clusterSelector: %w", b.Name, err)
	}
	return sel, nil
}

// selected are the clusters sel selects, and their nodes together.
func selected(sel labels.Selector, clusters map[string]Cluster) (map[string]bool, int) {
	names, nodes := map[string]bool{}, 0
	for name, c := range clusters {
		if sel.Matches(labels.Set(c.Labels)) {
			names[name] = true
			nodes += c.Nodes
		}
	}
	return names, nodes
}

// Status is what budget b counts now: the clusters it selects, the nodes
// disrupted in them as the ledger's snapshot has them, and the runs it
// holds back. An unreadable selector is the error naming it.
func Status(b *fleetv1.FleetDisruptionBudget, clusters map[string]Cluster, snap Snapshot) (fleetv1.FleetDisruptionBudgetStatus, error) {
	sel, err := selector(b)
	if err != nil {
		return fleetv1.FleetDisruptionBudgetStatus{}, err
	}
	names, _ := selected(sel, clusters)
	st := fleetv1.FleetDisruptionBudgetStatus{ObservedGeneration: b.Generation, Clusters: int32(len(names)), WaitingClusters: int32(snap.Waiting[b.Name])}
	for k, n := range snap.Usage {
		if names[k.Cluster] && n > 0 {
			st.DisruptedNodes += int32(n)
		}
	}
	return st, nil
}

// resolve is a cap as a node count: a number, or a percentage of nodes
// rounded down; never below 1, so that a cap always lets runs go on (a
// cluster whose node count is not known yet gets 1). 0 when v is unset.
func resolve(v *intstr.IntOrString, nodes int) (int, error) {
	if v == nil {
		return 0, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, nodes, false)
	if err != nil {
		return 0, err
	}
	return max(1, n), nil
}
