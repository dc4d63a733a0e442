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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	withDrain := func(a authorizationv1.ResourceAttributes) bool {
		return exactly(a) || slices.Contains(access.Drain(), a)
	}
	for _, tc := range []struct {
		name    string
		drain   bool
		allow   func(authorizationv1.ResourceAttributes) bool
		want    Verification
		wantErr string
	}{
		{name: "least privilege: drains refused", allow: exactly, want: Verification{Granted: 19, Refused: 17}},
		{name: "drains allowed and granted", drain: true, allow: withDrain, want: Verification{Granted: 22, Refused: 14}},
		{
			name:    "drains allowed, not granted",
			drain:   true,
			allow:   exactly,
			wantErr: "still may not patch nodes; list pods; create pods/eviction: the applied Role and ClusterRoles did not take effect",
		},
		{
			name:    "drains not allowed, granted by another binding",
			allow:   withDrain,
			wantErr: "still may patch nodes; list pods; create pods/eviction, though its cluster set does not allow drains",
		},
		{
			name:    "a grant missing",
			allow:   func(a authorizationv1.ResourceAttributes) bool { return exactly(a) && a.Verb != "deletecollection" },
			wantErr: "still may not deletecollection jobs.batch in namespace fleetjob-system; deletecollection configmaps in namespace fleetjob-system",
		},
		{
			name:    "secrets readable",
			allow:   func(a authorizationv1.ResourceAttributes) bool { return exactly(a) || a.Resource == "secrets" },
			wantErr: "the new token may also get secrets in namespace fleetjob-system; list secrets in namespace fleetjob-system; get secrets in namespace fleetjob-hub: another binding",
		},
		{
			name:    "cluster-admin",
			allow:   func(authorizationv1.ResourceAttributes) bool { return true },
			wantErr: "update nodes; delete nodes; create jobs.batch in namespace default",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Verify(context.Background(), reviewer(tc.allow), ns, tc.drain)
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
	if _, err := Verify(context.Background(), cs, "w", false); err != nil {
		t.Errorf("Verify = %v, want success once the grants showed", err)
	}
}

// TestVerifyWaitsForRevokedDrain: a member's authorizer refuses what a
// deleted binding granted a moment after it was deleted.
func TestVerifyWaitsForRevokedDrain(t *testing.T) {
	drainReviews := 0
	cs := reviewer(func(a authorizationv1.ResourceAttributes) bool {
		if slices.Contains(access.Drain(), a) {
			drainReviews++
			return drainReviews <= len(access.Drain()) // granted at the first look only
		}
		return slices.Contains(access.Required("w"), a)
	})
	if _, err := Verify(context.Background(), cs, "w", false); err != nil {
		t.Errorf("Verify = %v, want success once the drains were refused", err)
	}
	if drainReviews <= len(access.Drain()) {
		t.Errorf("Verify looked at the drains %d times, want more than once", drainReviews)
	}
}

// subjectReviewer answers SubjectAccessReviews: allow says what user may.
func subjectReviewer(cs *fake.Clientset, allow func(user string, a authorizationv1.ResourceAttributes) bool) *fake.Clientset {
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		r.Status.Allowed = allow(r.Spec.User, *r.Spec.ResourceAttributes)
		return true, r, nil
	})
	return cs
}

// TestVerifyWorkload: whichever ServiceAccount of the work namespace a
// template names, its pods may touch none of fleetjob's objects.
func TestVerifyWorkload(t *testing.T) {
	const ns = "w"
	sa := func(name string) runtime.Object {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	}
	nothing := func(string, authorizationv1.ResourceAttributes) bool { return false }
	for _, tc := range []struct {
		name         string
		objects      []runtime.Object
		skip         string
		allow        func(string, authorizationv1.ResourceAttributes) bool
		wantAccounts []string
		wantErr      string
	}{
		{name: "default, before the member created it", allow: nothing, wantAccounts: []string{"default"}},
		{name: "every account there", objects: []runtime.Object{sa("default"), sa("builder")}, allow: nothing, wantAccounts: []string{"default", "builder"}},
		{
			name: "default may write ConfigMaps",
			allow: func(u string, a authorizationv1.ResourceAttributes) bool {
				return u == "system:serviceaccount:w:default" && a.Resource == "configmaps"
			},
			wantErr: "serviceaccount w/default, which a ClusterJob's pods may run as, may create configmaps in namespace w",
		},
		{
			name:    "another account may mint the hub's token",
			objects: []runtime.Object{sa("builder")},
			allow: func(u string, a authorizationv1.ResourceAttributes) bool {
				return u == "system:serviceaccount:w:builder" && a.Subresource == "token"
			},
			wantErr: "serviceaccount w/builder, which a ClusterJob's pods may run as, may create serviceaccounts/token for-w in namespace fleetjob-hub",
		},
		{
			name:    "the legacy identity a migration revokes next is skipped",
			objects: []runtime.Object{sa("fleetjob-hub")},
			skip:    "fleetjob-hub",
			allow: func(u string, _ authorizationv1.ResourceAttributes) bool {
				return u == "system:serviceaccount:w:fleetjob-hub"
			},
			wantAccounts: []string{"default"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := subjectReviewer(fake.NewClientset(tc.objects...), tc.allow)
			got, err := VerifyWorkload(context.Background(), cs, ns, tc.skip)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAccounts, got.Accounts); diff != "" {
				t.Errorf("accounts reviewed (-want +got):\n%s", diff)
			}
			if tc.wantErr == "" && got.Refused != len(WorkloadForbidden(ns)) {
				t.Errorf("Refused = %d, want %d", got.Refused, len(WorkloadForbidden(ns)))
			}
		})
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
