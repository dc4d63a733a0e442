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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("A ClusterSet and its bindings", func() {
	It("defaults a ClusterSet's podSecurity to baseline, even with no spec", func() {
		cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "defaulted"}}
		Expect(k8sClient.Create(ctx, cs)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, cs))).To(Succeed()) })
		Expect(cs.Spec.PodSecurity).To(Equal(fleetv1.PodSecurityBaseline))
	})

	It("refuses an unknown podSecurity level, naming the field", func() {
		cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "open"}, Spec: fleetv1.ClusterSetSpec{PodSecurity: "open"}}
		expectInvalid(k8sClient.Create(ctx, cs), "spec.podSecurity", `Unsupported value: "open"`)
	})

	It("defaults allowedServiceAccounts to [default]", func() {
		cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "accounts-defaulted"}}
		Expect(k8sClient.Create(ctx, cs)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, cs))).To(Succeed()) })
		Expect(cs.Spec.AllowedServiceAccounts).To(Equal([]fleetv1.ServiceAccountName{"default"}))
	})

	It("accepts ServiceAccount names", func() {
		cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "accounts-ok"},
			Spec: fleetv1.ClusterSetSpec{AllowedServiceAccounts: []fleetv1.ServiceAccountName{"default", "builder", "ci.runner-1"}}}
		Expect(k8sClient.Create(ctx, cs)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, cs))).To(Succeed()) })
	})

	DescribeTable("refuses bad allowedServiceAccounts, naming the field",
		func(accounts []fleetv1.ServiceAccountName, wantField, wantDetail string) {
			cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "accounts-bad"}, Spec: fleetv1.ClusterSetSpec{AllowedServiceAccounts: accounts}}
			expectInvalid(k8sClient.Create(ctx, cs), wantField, wantDetail)
		},
		Entry("the hub's reserved name", []fleetv1.ServiceAccountName{"default", "fleetjob-hub"}, "spec.allowedServiceAccounts", "fleetjob-hub is the name of the hub's identity"),
		Entry("not a name", []fleetv1.ServiceAccountName{"Builder_1"}, "spec.allowedServiceAccounts[0]", "should match"),
		Entry("empty", []fleetv1.ServiceAccountName{""}, "spec.allowedServiceAccounts[0]", "at least 1 chars long"),
		Entry("too long", []fleetv1.ServiceAccountName{fleetv1.ServiceAccountName(strings.Repeat("a", 254))}, "spec.allowedServiceAccounts[0]", "may not be more than 253"),
		Entry("twice", []fleetv1.ServiceAccountName{"default", "default"}, "spec.allowedServiceAccounts[1]", "Duplicate value"),
		Entry("too many", manyAccounts(33), "spec.allowedServiceAccounts", "must have at most 32 items"),
	)

	It("refuses a binding named for another set than it binds", func() {
		b := &fleetv1.ClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a"}, Spec: fleetv1.ClusterSetBindingSpec{ClusterSet: "team-b"}}
		expectInvalid(k8sClient.Create(ctx, b), "spec.clusterSet must be the binding's name")
	})

	It("accepts a binding named for its set", func() {
		b := &fleetv1.ClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-a"}, Spec: fleetv1.ClusterSetBindingSpec{ClusterSet: "team-a"}}
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, b))).To(Succeed()) })
	})
})

// manyAccounts is n distinct ServiceAccount names.
func manyAccounts(n int) []fleetv1.ServiceAccountName {
	out := make([]fleetv1.ServiceAccountName, n)
	for i := range out {
		out[i] = fleetv1.ServiceAccountName(fmt.Sprintf("sa-%d", i))
	}
	return out
}
