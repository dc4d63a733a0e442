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
		sel, err := selector(b.Spec.ClusterSelector)
		if err != nil {
			return nil, fmt.Errorf("FleetDisruptionBudget %s: spec.clusterSelector: %w", b.Name, err)
		}
		if c, ok := clusters[cluster]; !ok || !sel.Matches(labels.Set(c.Labels)) {
			continue
		}
		c := Cap{Budget: b.Name, Clusters: map[string]bool{}}
		total := 0
		for name, m := range clusters {
			if sel.Matches(labels.Set(m.Labels)) {
				c.Clusters[name] = true
				total += m.Nodes
			}
		}
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

// selector reads a budget's cluster selector; nil selects nothing, which
// the API does not allow.
func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Nothing(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
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
