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
	"time"

	"github.com/fleetjob/fleetjob/pkg/access"
	"github.com/fleetjob/fleetjob/spoke"

	authorizationv1 "k8s.io/api/authorization/v1"
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

// Verification is what Verify proved.
type Verification struct {
	// Granted and Refused count the checks that came out as they must.
	Granted, Refused int
}

// grantTimeout bounds the wait for the member's authorizer to see bindings
// just applied: its RBAC informer usually takes milliseconds, but a loaded
// API server can take seconds. A grant still missing after this is not a
// delay but something changing the objects (a webhook, a policy engine).
// A variable so that tests need not wait that long.
var grantTimeout = 30 * time.Second

// Verify proves, as the identity cs authenticates as, that every Required
// access is granted and every Forbidden one refused.
func Verify(ctx context.Context, cs kubernetes.Interface, ns string) (Verification, error) {
	var missing []authorizationv1.ResourceAttributes
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, grantTimeout, true, func(ctx context.Context) (bool, error) {
		_, denied, err := spoke.ReviewAccess(ctx, cs, access.Required(ns))
		missing = denied
		return len(denied) == 0, err
	})
	if len(missing) > 0 && wait.Interrupted(err) {
		return Verification{}, fmt.Errorf("after %s the new token still may not %s: the applied Role and ClusterRole did not take effect as written; check admission webhooks or policies that change RBAC objects", grantTimeout, access.DescribeAll(missing))
	}
	if err != nil {
		return Verification{}, err
	}
	allowed, denied, err := spoke.ReviewAccess(ctx, cs, Forbidden(ns))
	if err != nil {
		return Verification{}, err
	}
	if len(allowed) > 0 {
		return Verification{}, errors.New("the new token may also " + access.DescribeAll(allowed) +
			": another binding in the member grants it (look for ClusterRoleBindings of the groups system:serviceaccounts, system:serviceaccounts:" + ns + " or system:authenticated); fleetjob registers only a least-privilege identity")
	}
	return Verification{Granted: len(access.Required(ns)), Refused: len(denied)}, nil
}
