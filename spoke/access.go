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

package spoke

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetjob/fleetjob/pkg/access"
)

// ReviewAccess asks the member, as the identity cs authenticates as, which
// of attrs it may do. The hub checks a registration with it before it
// connects, and the plugin proves the credentials it made, with the same
// questions (pkg/access).
func ReviewAccess(ctx context.Context, cs kubernetes.Interface, attrs []authorizationv1.ResourceAttributes) (allowed, denied []authorizationv1.ResourceAttributes, err error) {
	for _, a := range attrs {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a}}
		got, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("asking the member whether the registered identity may %s: %w", access.Describe(a), err)
		}
		if got.Status.Allowed {
			allowed = append(allowed, a)
		} else {
			denied = append(denied, a)
		}
	}
	return allowed, denied, nil
}
