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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

var _ = Describe("Updating a ClusterJob", func() {
	// created creates base and returns it as the API server stored it, with
	// its defaults and resourceVersion, ready to be changed and updated.
	created := func(base *wrappers.ClusterJobWrapper) *fleetv1.ClusterJob {
		GinkgoHelper()
		cj := base.Obj()
		Expect(createGenerated(cj)).To(Succeed())
		return cj
	}

	DescribeTable("rejects a change to an immutable field, naming it",
		func(base *wrappers.ClusterJobWrapper, change func(*fleetv1.ClusterJob), field, message string) {
			cj := created(base)
			change(cj)
			err := k8sClient.Update(ctx, cj)
			expectInvalid(err, field+": Invalid value", message)
		},
		Entry("clusterSelector {} → matchLabels",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			}, "spec.clusterSelector", "clusterSelector is immutable"),
		Entry("disruptive set",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.Disruptive = true
			}, "spec.disruptive", "disruptive is immutable"),
		Entry("nodeSelector added",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}}
			}, "spec.nodeSelector", "nodeSelector is immutable"),
		Entry("nodeSelector changed",
			makeClusterJob().NodeLabels(map[string]string{"pool": "a"}), func(cj *fleetv1.ClusterJob) {
				cj.Spec.NodeSelector.MatchLabels["pool"] = "b"
			}, "spec.nodeSelector", "nodeSelector is immutable"),
		Entry("nodeSelector removed",
			makeClusterJob().NodeLabels(map[string]string{"pool": "a"}), func(cj *fleetv1.ClusterJob) {
				cj.Spec.NodeSelector = nil
			}, "spec.nodeSelector", "nodeSelector is immutable"),
		Entry("strategy all → batch",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.Strategy = fleetv1.Strategy{Type: fleetv1.StrategyBatch, Batch: &fleetv1.BatchStrategy{Size: 3}}
			}, "spec.strategy", "strategy is immutable"),
		Entry("strategy batch size 3 → 4",
			makeClusterJob().Batch(3, ""), func(cj *fleetv1.ClusterJob) {
				cj.Spec.Strategy.Batch.Size = 4
			}, "spec.strategy", "strategy is immutable"),
		Entry("strategy groupLabel changed",
			makeClusterJob().PerNodeGroup("zone", false), func(cj *fleetv1.ClusterJob) {
				cj.Spec.Strategy.PerNodeGroup.GroupLabel = "pool"
			}, "spec.strategy", "strategy is immutable"),
		Entry("failureStrategy keepgoing (defaulted) → exit",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.FailureStrategy = fleetv1.FailureStrategyExit
			}, "spec.failureStrategy", "failureStrategy is immutable"),
		Entry("failurePolicy added",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.FailurePolicy = &fleetv1.FailurePolicy{MaxFailedNodes: percent("5%")}
			}, "spec.failurePolicy", "failurePolicy is immutable"),
		Entry("failurePolicy budget changed",
			makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodes: percent("5%")}), func(cj *fleetv1.ClusterJob) {
				cj.Spec.FailurePolicy.MaxFailedNodes = percent("50%")
			}, "spec.failurePolicy", "failurePolicy is immutable"),
		Entry("failurePolicy removed",
			makeClusterJob().FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodes: percent("5%")}), func(cj *fleetv1.ClusterJob) {
				cj.Spec.FailurePolicy = nil
			}, "spec.failurePolicy", "failurePolicy is immutable"),
		Entry("retryOf added",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.RetryOf = &fleetv1.RetryOf{Name: "parent"}
			}, "spec.retryOf", "retryOf is immutable"),
		Entry("retryOf changed",
			makeClusterJob().RetryOf("parent"), func(cj *fleetv1.ClusterJob) {
				cj.Spec.RetryOf.Name = "other"
			}, "spec.retryOf", "retryOf is immutable"),
		Entry("retry.include changed",
			makeClusterJob().RetryOf("parent", fleetv1.RetryFailed), func(cj *fleetv1.ClusterJob) {
				cj.Spec.Retry.Include = append(cj.Spec.Retry.Include, fleetv1.RetrySkipped)
			}, "spec.retry", "retry is immutable"),
		Entry("gates added",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.Gates = &fleetv1.Gates{Soak: &metav1.Duration{Duration: time.Minute}}
			}, "spec.gates", "gates is immutable"),
		Entry("gates soak changed",
			makeClusterJob().Gates(fleetv1.Gates{Soak: &metav1.Duration{Duration: time.Minute}}), func(cj *fleetv1.ClusterJob) {
				cj.Spec.Gates.Soak.Duration = 2 * time.Minute
			}, "spec.gates", "gates is immutable"),
		Entry("clusterRollout added",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.ClusterRollout = &fleetv1.ClusterRollout{MaxConcurrentClusters: 2}
			}, "spec.clusterRollout", "clusterRollout is immutable"),
		Entry("clusterRollout changed",
			makeClusterJob().MaxConcurrentClusters(2), func(cj *fleetv1.ClusterJob) {
				cj.Spec.ClusterRollout.MaxConcurrentClusters = 3
			}, "spec.clusterRollout", "clusterRollout is immutable"),
		Entry("clusterRollout removed",
			makeClusterJob().MaxConcurrentClusters(2), func(cj *fleetv1.ClusterJob) {
				cj.Spec.ClusterRollout = nil
			}, "spec.clusterRollout", "clusterRollout is immutable"),
		Entry("jobTemplate image changed",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/e2e-test-images/busybox:1.37.0-1"
			}, "spec.jobTemplate", "jobTemplate is immutable"),
		Entry("jobTemplate pod annotation added",
			makeClusterJob(), func(cj *fleetv1.ClusterJob) {
				cj.Spec.JobTemplate.Spec.Template.Annotations = map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": "1s"}
			}, "spec.jobTemplate", "jobTemplate is immutable"),
	)

	It("accepts suspend absent → true → false", func() {
		cj := created(makeClusterJob().Batch(3, "").MaxConcurrentClusters(2))
		Expect(cj.Spec.Suspend).To(BeNil())
		for _, suspend := range []bool{true, false} {
			cj.Spec.Suspend = ptr.To(suspend)
			Expect(k8sClient.Update(ctx, cj)).To(Succeed(), "suspend=%t", suspend)
			Expect(cj.Spec.Suspend).To(HaveValue(Equal(suspend)))
		}
	})

	It("accepts a change to suspend by merge patch", func() {
		cj := created(makeClusterJob().Suspend(true))
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":false}}`))
		Expect(k8sClient.Patch(ctx, cj, patch)).To(Succeed())
		Expect(cj.Spec.Suspend).To(HaveValue(BeFalse()))
	})

	It("accepts maintenance windows added, changed and removed while the run goes on", func() {
		cj := created(makeClusterJob())
		for _, ws := range [][]fleetv1.MaintenanceWindow{
			{window("0 22 * * 1-5", 6*time.Hour)},
			{window("0 20 * * 1-5", 8*time.Hour), window("@weekly", time.Hour)},
			nil,
		} {
			cj.Spec.MaintenanceWindows, cj.Spec.MaxWindowWait = ws, &metav1.Duration{Duration: 48 * time.Hour}
			Expect(k8sClient.Update(ctx, cj)).To(Succeed())
			Expect(cj.Spec.MaintenanceWindows).To(Equal(ws))
		}
	})

	It("accepts a change to labels and annotations", func() {
		cj := created(makeClusterJob())
		cj.Labels = map[string]string{"team": "platform"}
		cj.Annotations = map[string]string{"note": "rerun after the kernel upgrade"}
		Expect(k8sClient.Update(ctx, cj)).To(Succeed())
	})
})
