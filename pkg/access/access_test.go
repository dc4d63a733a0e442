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

package access

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	authorizationv1 "k8s.io/api/authorization/v1"
)

func TestRequiredAccess(t *testing.T) {
	const ns = "team-a"
	var want []authorizationv1.ResourceAttributes
	for _, verb := range []string{"get", "list", "watch", "create", "delete", "deletecollection"} {
		want = append(want,
			authorizationv1.ResourceAttributes{Namespace: ns, Group: "batch", Resource: "jobs", Verb: verb},
			authorizationv1.ResourceAttributes{Namespace: ns, Resource: "configmaps", Verb: verb})
	}
	want = append(want, authorizationv1.ResourceAttributes{Namespace: ns, Resource: "configmaps", Verb: "update"},
		authorizationv1.ResourceAttributes{Resource: "namespaces", Name: "kube-system", Verb: "get"})
	for _, verb := range []string{"get", "list", "watch"} {
		want = append(want, authorizationv1.ResourceAttributes{Resource: "nodes", Verb: verb})
	}
	for _, verb := range []string{"get", "list"} {
		want = append(want, authorizationv1.ResourceAttributes{Namespace: ns, Resource: "pods", Verb: verb})
	}
	byString := cmpopts.SortSlices(func(a, b authorizationv1.ResourceAttributes) bool { return a.String() < b.String() })
	if diff := cmp.Diff(want, Required(ns), byString); diff != "" {
		t.Errorf("Required() (-want +got):\n%s", diff)
	}
}

// TestDrain: a drain's accesses are cluster-wide, and no more than
// cordoning and evicting need.
func TestDrain(t *testing.T) {
	want := []authorizationv1.ResourceAttributes{
		{Resource: "nodes", Verb: "patch"},
		{Resource: "pods", Verb: "list"},
		{Resource: "pods", Subresource: "eviction", Verb: "create"},
	}
	if diff := cmp.Diff(want, Drain()); diff != "" {
		t.Errorf("Drain() (-want +got):\n%s", diff)
	}
}

func TestDescribe(t *testing.T) {
	testCases := map[string]struct {
		attrs authorizationv1.ResourceAttributes
		want  string
	}{
		"namespaced, named group": {
			attrs: authorizationv1.ResourceAttributes{Namespace: "team-a", Group: "batch", Resource: "jobs", Verb: "deletecollection"},
			want:  "deletecollection jobs.batch in namespace team-a",
		},
		"namespaced, core group": {
			attrs: authorizationv1.ResourceAttributes{Namespace: "team-a", Resource: "configmaps", Verb: "create"},
			want:  "create configmaps in namespace team-a",
		},
		"cluster scoped": {
			attrs: authorizationv1.ResourceAttributes{Resource: "nodes", Verb: "watch"},
			want:  "watch nodes",
		},
		"cluster scoped subresource": {
			attrs: authorizationv1.ResourceAttributes{Resource: "pods", Subresource: "eviction", Verb: "create"},
			want:  "create pods/eviction",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Describe(tc.attrs)); diff != "" {
				t.Errorf("Describe() (-want +got):\n%s", diff)
			}
		})
	}
}
