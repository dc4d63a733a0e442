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

package validation

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("A MemberCluster", func() {
	It("is cluster-scoped and prints Ready, Reason, Version, Nodes, Set, Token-Expiry and Age, and Cluster-ID and Message with -o wide", func() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "memberclusters.fleetjob.io"}, crd)).To(Succeed())
		Expect(crd.Spec.Scope).To(Equal(apiextensionsv1.ClusterScoped))
		Expect(crd.Spec.Versions).To(HaveLen(1))
		var names, wide []string
		for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			if c.Priority == 0 {
				names = append(names, c.Name)
			} else {
				wide = append(wide, c.Name)
			}
		}
		Expect(names).To(Equal([]string{"Ready", "Reason", "Version", "Nodes", "Set", "Token-Expiry", "Age"}))
		Expect(wide).To(Equal([]string{"Cluster-ID", "Message"}))
		Expect(crd.Spec.Versions[0].Subresources.Status).NotTo(BeNil())
	})

	// Each case breaks one bound of a valid status; the API server must
	// refuse it naming the field.
	DescribeTable("refuses a status past its bounds, naming the field",
		func(mutate func(*fleetv1.MemberClusterStatus), wantField, wantDetail string) {
			mc := &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "bounded"}}
			Expect(k8sClient.Create(ctx, mc)).To(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, mc))).To(Succeed()) })
			mc.Status = validMemberClusterStatus()
			Expect(k8sClient.Status().Update(ctx, mc)).To(Succeed(), "the valid status")
			mutate(&mc.Status)
			expectInvalid(k8sClient.Status().Update(ctx, mc), wantField, wantDetail)
		},
		Entry("a version longer than 64", func(s *fleetv1.MemberClusterStatus) { s.KubernetesVersion = "v" + repeat("1", 64) },
			"status.kubernetesVersion", "may not be more than 64 bytes"),
		Entry("a negative node count", func(s *fleetv1.MemberClusterStatus) { s.NodeCount = ptr.To[int32](-1) },
			"status.nodeCount", "should be greater than or equal to 0"),
		Entry("a cluster ID longer than 128", func(s *fleetv1.MemberClusterStatus) { s.ClusterID = repeat("a", 129) },
			"status.clusterID", "may not be more than 128 bytes"),
		Entry("a set name longer than 253", func(s *fleetv1.MemberClusterStatus) { s.ClusterSet = repeat("a", 254) },
			"status.clusterSet", "may not be more than 253 bytes"),
		Entry("a work namespace longer than 63", func(s *fleetv1.MemberClusterStatus) { s.WorkNamespace = repeat("a", 64) },
			"status.workNamespace", "may not be more than 63 bytes"),
		Entry("9 conditions", func(s *fleetv1.MemberClusterStatus) {
			for i := range 5 {
				s.Conditions = append(s.Conditions, memberClusterCondition(fmt.Sprintf("Extra%d", i)))
			}
		}, "status.conditions", "must have at most 8 items"),
	)
})

// validMemberClusterStatus is a status with every field set.
func validMemberClusterStatus() fleetv1.MemberClusterStatus {
	return fleetv1.MemberClusterStatus{
		Conditions: []metav1.Condition{
			memberClusterCondition(fleetv1.MemberClusterConnected), memberClusterCondition(fleetv1.MemberClusterAccessReviewed),
			memberClusterCondition(fleetv1.MemberClusterReady), memberClusterCondition(fleetv1.MemberClusterTokenExpiring),
		},
		KubernetesVersion: "v1.36.3", NodeCount: ptr.To[int32](1000), ClusterID: "0f4d6c1e-5b1a-4c57-9a57-1f5d8a8a6e42",
		ClusterSet: "team-a", WorkNamespace: "fleetjob-system", TokenExpiry: ptr.To(metav1.Now()), LastProbeTime: ptr.To(metav1.Now()),
	}
}

func memberClusterCondition(typ string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "Test", Message: "test", LastTransitionTime: metav1.Now()}
}
