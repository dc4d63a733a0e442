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

package hub

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// ListMemberClusters reads the MemberClusters the hub publishes, one per
// registration, that selector matches, sorted by name. They hold no
// credentials: reading them needs list on memberclusters, not on the
// registration Secrets.
func ListMemberClusters(ctx context.Context, c client.Reader, selector labels.Selector) ([]fleetv1.MemberCluster, error) {
	list := &fleetv1.MemberClusterList{}
	err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: selector})
	switch {
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("the hub does not serve memberclusters.fleetjob.io: install the fleetjob CRDs of this version on the hub: %w", err)
	case err != nil:
		return nil, fmt.Errorf("listing memberclusters on the hub: %w", err)
	}
	slices.SortFunc(list.Items, func(a, b fleetv1.MemberCluster) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// SetOfMember is the cluster set of a MemberCluster: its status, or, before
// the hub filled it, its labels (copied from the registration).
func SetOfMember(m *fleetv1.MemberCluster) string {
	if m.Status.ClusterSet != "" {
		return m.Status.ClusterSet
	}
	return fleetv1.SetOf(m.Labels)
}
