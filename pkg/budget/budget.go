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

// Package budget resolves the failure budgets of a ClusterJob's
// spec.failurePolicy against the scope they bound (a group, a cluster, the
// run) and tells whether they are exceeded. It is pure.
package budget

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// The names of the budgets, as their fields are spelt: messages name them
// so that a person finds the field.
const (
	PerGroup   = "maxFailedNodesPerGroup"
	PerCluster = "maxFailedNodesPerCluster"
	Nodes      = "maxFailedNodes"
	Clusters   = "maxFailedClusters"
)

// Budget is one failure budget resolved against its scope.
type Budget struct {
	// Name is the budget's field name.
	Name string
	// Value is the budget as written: a number or a percentage.
	Value intstr.IntOrString
	// Allowed is how many failures the budget allows in its scope.
	Allowed int
	// Total is the size of the scope: its planned nodes, or its clusters.
	Total int
	// Failed is how many failed in the scope.
	Failed int
}

// Resolve resolves the budget name of value v (nil: not set, ok false) in
// a scope of total items of which failed failed. A percentage is of total,
// rounded down. A value the API server would have refused resolves to 0
// allowed failures, and err says why: a broken budget must stop rather
// than let every failure through.
func Resolve(name string, v *intstr.IntOrString, total, failed int) (b Budget, ok bool, err error) {
	if v == nil {
		return Budget{}, false, nil
	}
	b = Budget{Name: name, Value: *v, Total: total, Failed: failed}
	switch {
	case v.Type == intstr.String && !strings.HasSuffix(v.StrVal, "%"):
		err = fmt.Errorf("spec.failurePolicy.%s: %q is neither a number nor a percentage", name, v.StrVal)
	default:
		b.Allowed, err = intstr.GetScaledValueFromIntOrPercent(v, total, false)
		if err == nil && (b.Allowed < 0 || v.Type == intstr.String && b.Allowed > total) {
			err = fmt.Errorf("spec.failurePolicy.%s: %s is out of range", name, v.String())
		}
		if err != nil {
			err = fmt.Errorf("spec.failurePolicy.%s: %w", name, err)
		}
	}
	if err != nil {
		b.Allowed = 0
	}
	return b, true, err
}

// Exceeded tells whether more failed than the budget allows.
func (b Budget) Exceeded() bool { return b.Failed > b.Allowed }

// Describe says how the budget stands, for a row or a condition, in
// terms of what (nodes, clusters) it counts, for example
// "maxFailedNodesPerCluster 10% allows 2 of 20 nodes to fail; 3 failed".
func (b Budget) Describe(what string) string {
	return fmt.Sprintf("%s %s allows %d of %d %s to fail; %d failed", b.Name, b.Value.String(), b.Allowed, b.Total, what, b.Failed)
}
