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
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func fleetBudget(perCluster, total *intstr.IntOrString) *fleetv1.FleetDisruptionBudget {
	return &fleetv1.FleetDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "fdb"}, Spec: fleetv1.FleetDisruptionBudgetSpec{
		ClusterSelector:             &metav1.LabelSelector{},
		MaxDisruptedNodesPerCluster: perCluster, MaxDisruptedNodes: total,
	}}
}

var _ = Describe("A FleetDisruptionBudget", func() {
	DescribeTable("accepts caps at their bounds",
		func(b *fleetv1.FleetDisruptionBudget) {
			Expect(k8sClient.Create(ctx, b)).To(Succeed())
			Expect(k8sClient.Delete(ctx, b)).To(Succeed())
		},
		Entry("one node per cluster", fleetBudget(ptr.To(intstr.FromInt32(1)), nil)),
		Entry("1% of the clusters' nodes", fleetBudget(nil, ptr.To(intstr.FromString("1%")))),
		Entry("both, 100%", fleetBudget(ptr.To(intstr.FromString("100%")), ptr.To(intstr.FromInt32(5000)))),
	)

	DescribeTable("refuses a cap that could hold every run forever, or none, naming the field",
		func(b *fleetv1.FleetDisruptionBudget, field, message string) {
			expectInvalid(k8sClient.Create(ctx, b), field, message)
		},
		Entry("no cap", fleetBudget(nil, nil), "spec", "must set maxDisruptedNodesPerCluster, maxDisruptedNodes or both"),
		Entry("zero nodes per cluster", fleetBudget(ptr.To(intstr.FromInt32(0)), nil),
			"spec.maxDisruptedNodesPerCluster", "must be a number of at least 1 or a percentage from 1% to 100%"),
		Entry("0%", fleetBudget(nil, ptr.To(intstr.FromString("0%"))),
			"spec.maxDisruptedNodes", "must be a number of at least 1 or a percentage from 1% to 100%"),
		Entry("101%", fleetBudget(nil, ptr.To(intstr.FromString("101%"))),
			"spec.maxDisruptedNodes", "must be a number of at least 1 or a percentage from 1% to 100%"),
		Entry("a fraction", fleetBudget(ptr.To(intstr.FromString("2.5%")), nil),
			"spec.maxDisruptedNodesPerCluster", "must be a number of at least 1 or a percentage from 1% to 100%"),
	)

	It("refuses a budget without a cluster selector, naming the field", func() {
		b := fleetBudget(ptr.To(intstr.FromInt32(1)), nil)
		b.Spec.ClusterSelector = nil
		expectInvalid(k8sClient.Create(ctx, b), "spec.clusterSelector", "Required value")
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, b))).To(Succeed()) })
	})

	It("accepts the sample, decoded strictly", func() {
		data, err := os.ReadFile(filepath.Join(repoRoot, "config", "samples", "fleetjob_v1alpha1_fleetdisruptionbudget.yaml"))
		Expect(err).NotTo(HaveOccurred())
		b := &fleetv1.FleetDisruptionBudget{}
		Expect(yaml.UnmarshalStrict(data, b)).To(Succeed())
		Expect(b.Kind).To(Equal("FleetDisruptionBudget"))
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		Expect(k8sClient.Delete(ctx, b)).To(Succeed())
	})
})
