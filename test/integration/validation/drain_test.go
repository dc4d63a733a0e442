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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// draining is a valid ClusterJob whose spec.nodePreparation.drain is d.
func draining(d fleetv1.Drain) *fleetv1.ClusterJob {
	cj := makeClusterJob().Obj()
	cj.Spec.NodePreparation = &fleetv1.NodePreparation{Drain: &d}
	return cj
}

var _ = Describe("spec.nodePreparation.drain", func() {
	It("defaults the timeout to 10m and onTimeout to Uncordon", func() {
		cj := draining(fleetv1.Drain{})
		Expect(createGenerated(cj)).To(Succeed())
		Expect(cj.Spec.NodePreparation.Drain.Timeout).To(Equal(&metav1.Duration{Duration: 10 * time.Minute}))
		Expect(cj.Spec.NodePreparation.Drain.OnTimeout).To(Equal(fleetv1.DrainUncordon))
	})

	DescribeTable("accepts values at their bounds",
		func(d fleetv1.Drain) { Expect(createGenerated(draining(d))).To(Succeed()) },
		Entry("timeout 10s", fleetv1.Drain{Timeout: &metav1.Duration{Duration: 10 * time.Second}}),
		Entry("timeout 24h, every option", fleetv1.Drain{Timeout: &metav1.Duration{Duration: 24 * time.Hour}, DeleteEmptyDirData: true, Force: true,
			OnTimeout: fleetv1.DrainLeave, KeepCordoned: true, PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"agent"}}}}}),
	)

	DescribeTable("rejects an invalid drain naming the field",
		func(d fleetv1.Drain, want ...string) { expectInvalid(createGenerated(draining(d)), want...) },
		Entry("timeout under 10s", fleetv1.Drain{Timeout: &metav1.Duration{Duration: 9 * time.Second}},
			"spec.nodePreparation.drain.timeout", "drain.timeout must be from 10s to 24h"),
		Entry("timeout over 24h", fleetv1.Drain{Timeout: &metav1.Duration{Duration: 25 * time.Hour}},
			"spec.nodePreparation.drain.timeout", "drain.timeout must be from 10s to 24h"),
		Entry("unknown onTimeout", fleetv1.Drain{OnTimeout: "Delete"},
			"spec.nodePreparation.drain.onTimeout", "Unsupported value"),
		Entry("podSelector with an unknown operator", fleetv1.Drain{PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: "Gt", Values: []string{"1"}}}}},
			"spec.nodePreparation.drain.podSelector", "matchExpressions operator must be In, NotIn, Exists or DoesNotExist"),
	)

	It("is immutable", func() {
		cj := draining(fleetv1.Drain{})
		Expect(createGenerated(cj)).To(Succeed())
		cj.Spec.NodePreparation.Drain.Force = true
		expectInvalid(k8sClient.Update(ctx, cj), "spec.nodePreparation: Invalid value", "nodePreparation is immutable")
		cj.Spec.NodePreparation = nil
		expectInvalid(k8sClient.Update(ctx, cj), "spec.nodePreparation: Invalid value", "nodePreparation is immutable")
	})
})
