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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// ValidateSetName checks a cluster set name, given with flag: it names a
// ClusterSet and is the value of a registration's set label, so it must be
// both a DNS-1123 subdomain and a label value.
func ValidateSetName(flag, set string) error {
	errs := validation.IsDNS1123Subdomain(set)
	errs = append(errs, validation.IsValidLabelValue(set)...)
	if len(errs) > 0 {
		return fmt.Errorf("%s %q is not a valid cluster set name: %s", flag, set, strings.Join(slices.Compact(errs), "; "))
	}
	return nil
}

// JoinSet puts a registration with labels (from --label) in the cluster
// set of --cluster-set, set, by adding the set label to labels, and
// returns the set it is in: set, or the one its labels name, or
// DefaultClusterSet. It refuses a --label that names another set, and a
// set name the hub would not match.
func JoinSet(labels map[string]string, set string) (string, error) {
	inLabels, labelled := labels[fleetv1.ClusterSetLabel]
	switch {
	case set == "" && labelled:
		if err := ValidateSetName("--label "+fleetv1.ClusterSetLabel, inLabels); err != nil {
			return "", err
		}
	case set == "":
	case labelled && inLabels != set:
		return "", fmt.Errorf("--label %s=%s conflicts with --cluster-set %s: a cluster is in one set (--cluster-set sets that label)", fleetv1.ClusterSetLabel, inLabels, set)
	default:
		if err := ValidateSetName("--cluster-set", set); err != nil {
			return "", err
		}
		labels[fleetv1.ClusterSetLabel] = set
	}
	return fleetv1.SetOf(labels), nil
}

// SetPolicy is what the hub holds of one cluster set's policy.
type SetPolicy struct {
	// Set is the set's name.
	Set string
	// PodSecurity is the set's level: its ClusterSet's, or the default.
	PodSecurity fleetv1.PodSecurityLevel
	// Defined tells whether the set has a ClusterSet object; without one,
	// the hub holds its clusters to the default level.
	Defined bool
	// AllowDrain is the ClusterSet's spec.allowDrain: register grants the
	// hub what a drain needs in the set's clusters only when it is true.
	// A set without a ClusterSet allows no drain.
	AllowDrain bool
}

// GetSetPolicy reads the ClusterSet of set. A set without one has the
// default level, as the hub treats it.
func GetSetPolicy(ctx context.Context, c client.Reader, set string) (SetPolicy, error) {
	cs := &fleetv1.ClusterSet{}
	err := c.Get(ctx, client.ObjectKey{Name: set}, cs)
	switch {
	case apierrors.IsNotFound(err):
		return SetPolicy{Set: set, PodSecurity: fleetv1.DefaultPodSecurityLevel}, nil
	case meta.IsNoMatchError(err):
		return SetPolicy{}, fmt.Errorf("the hub does not serve clustersets.fleetjob.io: install the fleetjob CRDs of this version on the hub: %w", err)
	case err != nil:
		return SetPolicy{}, fmt.Errorf("reading clusterset %s on the hub: %w", set, err)
	}
	return SetPolicy{Set: set, PodSecurity: levelOf(cs), Defined: true, AllowDrain: cs.Spec.AllowDrain}, nil
}

// levelOf is a ClusterSet's level; the API defaults it, an object written
// before the default existed may still lack it.
func levelOf(cs *fleetv1.ClusterSet) fleetv1.PodSecurityLevel {
	if cs.Spec.PodSecurity == "" {
		return fleetv1.DefaultPodSecurityLevel
	}
	return cs.Spec.PodSecurity
}

// SetInfo is one cluster set as `kubectl fleetjob clustersets` shows it.
type SetInfo struct {
	Name        string                   `json:"name"`
	PodSecurity fleetv1.PodSecurityLevel `json:"podSecurity"`
	// Defined tells whether a ClusterSet object exists; a set only named
	// by registrations or bindings has the default level.
	Defined bool `json:"defined"`
	// Clusters are the registered clusters in the set, sorted.
	Clusters []string `json:"clusters"`
	// Bindings are the hub namespaces the set is bound to, sorted.
	Bindings []string `json:"bindings"`
	// Warning is the message of the set's MembersEnforcePodSecurity
	// condition when it is not True: which clusters' work namespaces
	// enforce another level than the set's, or do not record one.
	Warning string `json:"warning,omitempty"`
}

// SummarizeSets joins ClusterSets, MemberClusters and ClusterSetBindings
// into one row per set, sorted by name: every set with an object, and
// every set a member or a binding names without one. What is being
// deleted no longer counts, as for the hub.
func SummarizeSets(sets []fleetv1.ClusterSet, members []fleetv1.MemberCluster, bindings []fleetv1.ClusterSetBinding) []SetInfo {
	byName := map[string]*SetInfo{}
	row := func(name string) *SetInfo {
		if byName[name] == nil {
			byName[name] = &SetInfo{Name: name, PodSecurity: fleetv1.DefaultPodSecurityLevel, Clusters: []string{}, Bindings: []string{}}
		}
		return byName[name]
	}
	for i := range sets {
		if cs := &sets[i]; cs.DeletionTimestamp.IsZero() {
			r := row(cs.Name)
			r.PodSecurity, r.Defined = levelOf(cs), true
			if c := meta.FindStatusCondition(cs.Status.Conditions, fleetv1.ConditionMembersEnforcePodSecurity); c != nil && c.Status != metav1.ConditionTrue {
				r.Warning = c.Message
			}
		}
	}
	for i := range members {
		if m := &members[i]; m.DeletionTimestamp.IsZero() {
			r := row(SetOfMember(m))
			r.Clusters = append(r.Clusters, m.Name)
		}
	}
	for _, b := range bindings {
		if b.DeletionTimestamp.IsZero() {
			r := row(b.Spec.ClusterSet)
			r.Bindings = append(r.Bindings, b.Namespace)
		}
	}
	out := make([]SetInfo, 0, len(byName))
	for _, r := range byName {
		slices.Sort(r.Clusters)
		slices.Sort(r.Bindings)
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b SetInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Sets is what ListSets found: the sets, and the one namespace whose
// bindings they show when the user may not list bindings everywhere.
type Sets struct {
	Sets []SetInfo
	// BindingsOf is the namespace whose bindings alone were read, because
	// listing them in every namespace was Forbidden; empty when every
	// namespace's were.
	BindingsOf string
}

// ListSets reads the ClusterSets, the MemberClusters (never a
// registration Secret) and the ClusterSetBindings of every namespace, or,
// for a tenant who may read only its own, those of namespace, and
// summarizes them.
func ListSets(ctx context.Context, c client.Reader, namespace string) (Sets, error) {
	sets := &fleetv1.ClusterSetList{}
	if err := c.List(ctx, sets); err != nil {
		return Sets{}, fmt.Errorf("listing clustersets on the hub: %w", err)
	}
	members, err := ListMemberClusters(ctx, c, labels.Everything())
	if err != nil {
		return Sets{}, err
	}
	out := Sets{}
	bindings := &fleetv1.ClusterSetBindingList{}
	err = c.List(ctx, bindings)
	if apierrors.IsForbidden(err) {
		out.BindingsOf = namespace
		err = c.List(ctx, bindings, client.InNamespace(namespace))
	}
	if err != nil {
		return Sets{}, fmt.Errorf("listing clustersetbindings on the hub: %w", err)
	}
	out.Sets = SummarizeSets(sets.Items, members, bindings.Items)
	return out, nil
}
