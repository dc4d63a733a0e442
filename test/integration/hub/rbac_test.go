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
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// The hub runs with exactly config/rbac: as its ServiceAccount, bound by
// the generated roles, it runs a ClusterJob end to end, and may do
// nothing a tenant or an attacker who took it over could use.
var _ = Describe("The hub's own RBAC", Ordered, func() {
	const sa = "system:serviceaccount:" + workNamespace + ":fleetjob-hub"
	var stopHub func()

	BeforeAll(func() {
		for _, f := range []string{"service_account.yaml", "role.yaml", "role_binding.yaml", "secrets_role_binding.yaml",
			"leader_election_role.yaml", "leader_election_role_binding.yaml"} {
			applyManifests(filepath.Join("..", "..", "..", "config", "rbac", f))
		}
	})
	AfterEach(func() { cleanUp(stopHub) })

	It("runs a ClusterJob end to end as its ServiceAccount, with a token from the TokenRequest API", func() {
		cs, err := kubernetes.NewForConfig(hubEnv.Config)
		Expect(err).NotTo(HaveOccurred())
		tr, err := cs.CoreV1().ServiceAccounts(workNamespace).CreateToken(ctx, "fleetjob-hub",
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		cfg := rest.AnonymousClientConfig(hubEnv.Config)
		cfg.BearerToken = tr.Status.Token

		register(members["member-a"], admin, nil)
		register(members["member-b"], admin, nil)
		stopHub = startHub(hubOptions{config: cfg})
		cj := makeClusterJob("as-the-hub").Batch(3).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))
		Expect(jobNodes(members["member-b"], cj)).To(Equal(nodeNames("b", 7)))
	})

	DescribeTable("SubjectAccessReviews: what the hub's identity may not do",
		func(attrs authorizationv1.ResourceAttributes, allowed bool) {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: sa,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + workNamespace, "system:authenticated"}, ResourceAttributes: &attrs}}
			Expect(hubC.Create(ctx, review)).To(Succeed())
			Expect(review.Status.Allowed).To(Equal(allowed), "%+v: %s", attrs, review.Status.Reason)
		},
		Entry("read Secrets outside its namespace", authorizationv1.ResourceAttributes{Namespace: "default", Verb: "get", Resource: "secrets"}, false),
		Entry("list Secrets across namespaces", authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, false),
		Entry("create pods on the hub", authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Resource: "pods"}, false),
		Entry("create Jobs on the hub", authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Group: "batch", Resource: "jobs"}, false),
		Entry("bind a cluster set", authorizationv1.ResourceAttributes{Verb: fleetv1.BindVerb, Group: fleetv1.GroupVersion.Group, Resource: "clustersets", Name: "default"}, false),
		Entry("create a ClusterSetBinding", authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Group: fleetv1.GroupVersion.Group, Resource: "clustersetbindings"}, false),
		Entry("change a ClusterSet's policy", authorizationv1.ResourceAttributes{Verb: "update", Group: fleetv1.GroupVersion.Group, Resource: "clustersets", Name: "default"}, false),
		Entry("create a ClusterJob", authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Group: fleetv1.GroupVersion.Group, Resource: "clusterjobs"}, false),
		Entry("write RBAC", authorizationv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}, false),
		// What it needs, for contrast: a review that always says no proves nothing.
		Entry("read registration Secrets in its namespace", authorizationv1.ResourceAttributes{Namespace: workNamespace, Verb: "list", Resource: "secrets"}, true),
		Entry("update ClusterJob status", authorizationv1.ResourceAttributes{Namespace: "default", Verb: "patch", Group: fleetv1.GroupVersion.Group, Resource: "clusterjobs", Subresource: "status"}, true),
		Entry("count a ClusterSet's clusters", authorizationv1.ResourceAttributes{Verb: "patch", Group: fleetv1.GroupVersion.Group, Resource: "clustersets", Subresource: "status", Name: "default"}, true),
	)
})
