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
	"errors"
	"fmt"
	"slices"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/access"
	"github.com/fleetjob/fleetjob/spoke"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Forbidden is a sample of what the hub's identity must not be able to do:
// read Secrets, run pods, change nodes, work outside its namespace, grant
// itself more, or mint tokens. If any is allowed, something else in the
// member grants the identity more than fleetjob asked for.
func Forbidden(ns string) []authorizationv1.ResourceAttributes {
	other := "default"
	if ns == other {
		other = "kube-system"
	}
	return []authorizationv1.ResourceAttributes{
		{Namespace: ns, Resource: "secrets", Verb: "get"},
		{Namespace: ns, Resource: "secrets", Verb: "list"},
		{Namespace: ns, Resource: "pods", Verb: "create"},
		{Namespace: ns, Resource: "serviceaccounts", Subresource: "token", Verb: "create"},
		{Namespace: HubNamespace, Resource: "serviceaccounts", Subresource: "token", Verb: "create"},
		{Namespace: HubNamespace, Resource: "secrets", Verb: "get"},
		{Namespace: ns, Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Verb: "create"},
		{Namespace: ns, Group: "batch", Resource: "jobs", Verb: "update"},
		{Resource: "nodes", Verb: "update"},
		{Resource: "nodes", Verb: "delete"},
		{Namespace: other, Group: "batch", Resource: "jobs", Verb: "create"},
		{Namespace: other, Resource: "configmaps", Verb: "get"},
		{Resource: "namespaces", Verb: "delete"},
		{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings", Verb: "create"},
	}
}

// WorkloadForbidden is what no ServiceAccount of work namespace ns may do,
// since a ClusterJob's pods may run as any of them: change what fleetjob's
// runs rely on (their Jobs, pods, plans and records), grant itself more, or
// take the hub's identity. Reading is not in it: a pod that reads another
// run's plan learns node names, and changes nothing.
func WorkloadForbidden(ns string) []authorizationv1.ResourceAttributes {
	var out []authorizationv1.ResourceAttributes
	for _, verb := range []string{"create", "update", "patch", "delete", "deletecollection"} {
		out = append(out,
			authorizationv1.ResourceAttributes{Namespace: ns, Group: "batch", Resource: "jobs", Verb: verb},
			authorizationv1.ResourceAttributes{Namespace: ns, Resource: "configmaps", Verb: verb})
	}
	return append(out,
		authorizationv1.ResourceAttributes{Namespace: ns, Group: "batch", Resource: "jobs", Subresource: "status", Verb: "update"},
		authorizationv1.ResourceAttributes{Namespace: ns, Resource: "pods", Verb: "delete"},
		authorizationv1.ResourceAttributes{Namespace: ns, Resource: "pods", Verb: "deletecollection"},
		authorizationv1.ResourceAttributes{Namespace: ns, Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Verb: "update"},
		authorizationv1.ResourceAttributes{Namespace: ns, Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Verb: "create"},
		authorizationv1.ResourceAttributes{Namespace: ns, Group: "rbac.authorization.k8s.io", Resource: "roles", Verb: "update"},
		authorizationv1.ResourceAttributes{Namespace: HubNamespace, Resource: "serviceaccounts", Subresource: "token", Verb: "create", Name: ServiceAccountName(ns)},
		authorizationv1.ResourceAttributes{Namespace: HubNamespace, Resource: "serviceaccounts", Verb: "impersonate", Name: ServiceAccountName(ns)},
		authorizationv1.ResourceAttributes{Namespace: HubNamespace, Resource: "serviceaccounts", Verb: "delete", Name: ServiceAccountName(ns)},
		authorizationv1.ResourceAttributes{Namespace: HubNamespace, Resource: "secrets", Verb: "list"},
	)
}

// Verification is what Verify proved.
type Verification struct {
	// Granted and Refused count the checks that came out as they must.
	Granted, Refused int
}

// maxWorkloadAccounts bounds how many ServiceAccounts of a work namespace
// VerifyWorkload reviews: each costs a review per WorkloadForbidden entry,
// and a work namespace holds fleetjob's runs, not a team's whole estate.
const maxWorkloadAccounts = 100

// WorkloadVerification is what VerifyWorkload proved.
type WorkloadVerification struct {
	// Accounts are the ServiceAccounts of the work namespace reviewed.
	Accounts []string
	// Refused counts the accesses each was refused.
	Refused int
}

// VerifyWorkload proves, with SubjectAccessReviews made with cs (the
// member context's own rights), that no ServiceAccount of work namespace
// ns, default and every one that exists there but skip, may do anything in
// WorkloadForbidden: whichever a template names, its pods cannot touch
// fleetjob's objects. skip is the legacy identity a migration is about to
// revoke (RevokedLegacy proves that).
func VerifyWorkload(ctx context.Context, cs kubernetes.Interface, ns, skip string) (WorkloadVerification, error) {
	list, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{Limit: maxWorkloadAccounts})
	if err != nil && !apierrors.IsNotFound(err) {
		return WorkloadVerification{}, fmt.Errorf("listing the serviceaccounts of namespace %s: %w", ns, err)
	}
	if err == nil && list.Continue != "" {
		return WorkloadVerification{}, fmt.Errorf("namespace %s holds more than %d serviceaccounts: register proves that none may touch fleetjob's objects and reviews at most %d; use a work namespace of fleetjob's own", ns, maxWorkloadAccounts, maxWorkloadAccounts)
	}
	// default is reviewed even before the member's controller created it:
	// a grant to its name waits for it.
	accounts := []string{fleetv1.DefaultServiceAccount}
	if list != nil {
		for _, sa := range list.Items {
			if sa.Name != skip && !slices.Contains(accounts, sa.Name) {
				accounts = append(accounts, sa.Name)
			}
		}
	}
	forbidden := WorkloadForbidden(ns)
	for _, name := range accounts {
		allowed, err := reviewAs(ctx, cs, serviceAccountUser(ns, name), serviceAccountGroups(ns), forbidden)
		if err != nil {
			return WorkloadVerification{}, err
		}
		if len(allowed) > 0 {
			return WorkloadVerification{}, fmt.Errorf("serviceaccount %s/%s, which a ClusterJob's pods may run as, may %s: a binding in the member grants it (look for RoleBindings in %s and ClusterRoleBindings of it or of the groups system:serviceaccounts, system:serviceaccounts:%s, system:authenticated); its pods could change other runs' Jobs, plans and records. Remove the grant, or move that account out of the work namespace", ns, name, describeFew(allowed), ns, ns)
		}
	}
	return WorkloadVerification{Accounts: accounts, Refused: len(forbidden)}, nil
}

// RevokedLegacy proves, with SubjectAccessReviews made with cs, that the
// legacy identity of work namespace ns may no longer do anything the hub
// needs, waiting up to grantTimeout for the member's authorizer to see the
// bindings just applied.
func RevokedLegacy(ctx context.Context, cs kubernetes.Interface, ns string) error {
	var still []authorizationv1.ResourceAttributes
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, grantTimeout, true, func(ctx context.Context) (bool, error) {
		allowed, err := reviewAs(ctx, cs, serviceAccountUser(ns, LegacyServiceAccountName), serviceAccountGroups(ns), access.Required(ns))
		still = allowed
		return len(allowed) == 0, err
	})
	if len(still) > 0 && wait.Interrupted(err) {
		return fmt.Errorf("after %s the old identity %s may still %s: another binding grants it", grantTimeout, serviceAccountUser(ns, LegacyServiceAccountName), access.DescribeAll(still))
	}
	return err
}

// describeFew describes the first few accesses of attrs and counts the
// rest: an error that names twenty grants hides the first.
func describeFew(attrs []authorizationv1.ResourceAttributes) string {
	const few = 3
	if len(attrs) <= few {
		return access.DescribeAll(attrs)
	}
	return fmt.Sprintf("%s and %d more", access.DescribeAll(attrs[:few]), len(attrs)-few)
}

// reviewAs asks the member, with SubjectAccessReviews, which of attrs user
// in groups may do.
func reviewAs(ctx context.Context, cs kubernetes.Interface, user string, groups []string, attrs []authorizationv1.ResourceAttributes) ([]authorizationv1.ResourceAttributes, error) {
	var allowed []authorizationv1.ResourceAttributes
	for _, a := range attrs {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &a}}
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("asking the member whether %s may %s: %w", user, access.Describe(a), err)
		}
		if got.Status.Allowed {
			allowed = append(allowed, a)
		}
	}
	return allowed, nil
}

// grantTimeout bounds the wait for the member's authorizer to see bindings
// just applied: its RBAC informer usually takes milliseconds, but a loaded
// API server can take seconds. A grant still missing after this is not a
// delay but something changing the objects (a webhook, a policy engine).
// A variable so that tests need not wait that long.
var grantTimeout = 30 * time.Second

// Verify proves, as the identity cs authenticates as, that every Required
// access is granted and every Forbidden one refused, and the Drain ones
// granted when drain (the cluster's set allows drains), refused when not:
// register has just deleted a drain binding the set no longer allows.
func Verify(ctx context.Context, cs kubernetes.Interface, ns string, drain bool) (Verification, error) {
	required, revoked := access.Required(ns), access.Drain()
	if drain {
		required, revoked = append(required, revoked...), nil
	}
	if err := awaitGranted(ctx, cs, required); err != nil {
		return Verification{}, err
	}
	allowed, denied, err := spoke.ReviewAccess(ctx, cs, Forbidden(ns))
	if err != nil {
		return Verification{}, err
	}
	if len(allowed) > 0 {
		return Verification{}, errors.New("the new token may also " + access.DescribeAll(allowed) +
			": another binding in the member grants it (look for ClusterRoleBindings of the groups system:serviceaccounts, system:serviceaccounts:" + HubNamespace + " or system:authenticated); fleetjob registers only a least-privilege identity")
	}
	if err := awaitRevokedDrain(ctx, cs, revoked); err != nil {
		return Verification{}, err
	}
	return Verification{Granted: len(required), Refused: len(denied) + len(revoked)}, nil
}

// awaitGranted waits up to grantTimeout for the member's authorizer to
// grant cs every access of attrs, as the bindings just applied say.
func awaitGranted(ctx context.Context, cs kubernetes.Interface, attrs []authorizationv1.ResourceAttributes) error {
	var missing []authorizationv1.ResourceAttributes
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, grantTimeout, true, func(ctx context.Context) (bool, error) {
		_, denied, err := spoke.ReviewAccess(ctx, cs, attrs)
		missing = denied
		return len(denied) == 0, err
	})
	if len(missing) > 0 && wait.Interrupted(err) {
		return fmt.Errorf("after %s the new token still may not %s: the applied Role and ClusterRoles did not take effect as written; check admission webhooks or policies that change RBAC objects", grantTimeout, access.DescribeAll(missing))
	}
	return err
}

// awaitRevokedDrain waits up to grantTimeout for the member's authorizer
// to refuse cs every drain access of attrs, as it does a moment after
// register deleted the drain binding.
func awaitRevokedDrain(ctx context.Context, cs kubernetes.Interface, attrs []authorizationv1.ResourceAttributes) error {
	if len(attrs) == 0 {
		return nil
	}
	var still []authorizationv1.ResourceAttributes
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, grantTimeout, true, func(ctx context.Context) (bool, error) {
		allowed, _, err := spoke.ReviewAccess(ctx, cs, attrs)
		still = allowed
		return len(allowed) == 0, err
	})
	if len(still) > 0 && wait.Interrupted(err) {
		return fmt.Errorf("after %s the new token still may %s, though its cluster set does not allow drains (ClusterSet spec.allowDrain): another binding in the member grants it; fleetjob registers only a least-privilege identity", grantTimeout, access.DescribeAll(still))
	}
	return err
}
