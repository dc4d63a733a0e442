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

package member

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fleetjob/fleetjob/pkg/access"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// reviewer answers SelfSubjectAccessReviews: allow says what is allowed.
func reviewer(allow func(authorizationv1.ResourceAttributes) bool) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = allow(*r.Spec.ResourceAttributes)
		return true, r, nil
	})
	return cs
}

func TestVerify(t *testing.T) {
	defer func(d time.Duration) { grantTimeout = d }(grantTimeout)
	grantTimeout = 300 * time.Millisecond
	const ns = "fleetjob-system"
	exactly := func(a authorizationv1.ResourceAttributes) bool { return slices.Contains(access.Required(ns), a) }
	for _, tc := range []struct {
		name    string
		allow   func(authorizationv1.ResourceAttributes) bool
		want    Verification
		wantErr string
	}{
		{name: "least privilege", allow: exactly, want: Verification{Granted: 19, Refused: 12}},
		{
			name:    "a grant missing",
			allow:   func(a authorizationv1.ResourceAttributes) bool { return exactly(a) && a.Verb != "deletecollection" },
			wantErr: "still may not deletecollection jobs.batch in namespace fleetjob-system; deletecollection configmaps in namespace fleetjob-system",
		},
		{
			name:    "secrets readable",
			allow:   func(a authorizationv1.ResourceAttributes) bool { return exactly(a) || a.Resource == "secrets" },
			wantErr: "the new token may also get secrets in namespace fleetjob-system; list secrets in namespace fleetjob-system: another binding",
		},
		{
			name:    "cluster-admin",
			allow:   func(authorizationv1.ResourceAttributes) bool { return true },
			wantErr: "update nodes; delete nodes; create jobs.batch in namespace default",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Verify(context.Background(), reviewer(tc.allow), ns)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Verify (-want +got):\n%s", diff)
			}
		})
	}
}

// TestVerifyWaitsForGrants: a member's authorizer sees new bindings a
// moment after they were applied.
func TestVerifyWaitsForGrants(t *testing.T) {
	calls := 0
	cs := reviewer(func(a authorizationv1.ResourceAttributes) bool {
		calls++
		return calls > len(access.Required("w")) && slices.Contains(access.Required("w"), a)
	})
	if _, err := Verify(context.Background(), cs, "w"); err != nil {
		t.Errorf("Verify = %v, want success once the grants showed", err)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		a    authorizationv1.ResourceAttributes
		want string
	}{
		{authorizationv1.ResourceAttributes{Namespace: "w", Group: "batch", Resource: "jobs", Verb: "create"}, "create jobs.batch in namespace w"},
		{authorizationv1.ResourceAttributes{Resource: "nodes", Verb: "get"}, "get nodes"},
		{authorizationv1.ResourceAttributes{Namespace: "w", Resource: "serviceaccounts", Subresource: "token", Verb: "create"}, "create serviceaccounts/token in namespace w"},
	} {
		if got := access.Describe(tc.a); got != tc.want {
			t.Errorf("access.Describe(%+v) = %q, want %q", tc.a, got, tc.want)
		}
	}
}
