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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

var _ = Describe("A MemberRun", func() {
	var n int
	// created creates a MemberRun of a ClusterJob named for this spec and
	// returns it as stored.
	created := func(change func(*wrappers.MemberRunWrapper)) *fleetv1.MemberRun {
		GinkgoHelper()
		n++
		w := wrappers.MakeMemberRun(ns, fmt.Sprintf("run-%d", n), fmt.Sprintf("uid-%d", n), "member-1")
		if change != nil {
			change(w)
		}
		mr := w.Obj()
		Expect(k8sClient.Create(ctx, mr)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, mr))).To(Succeed()) })
		return mr
	}

	It("prints Cluster, Phase, Groups, Nodes, Failed and Age, in the fleetjob category", func() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "memberruns.fleetjob.io"}, crd)).To(Succeed())
		Expect(crd.Spec.Names.Categories).To(ConsistOf("fleetjob"))
		var names []string
		for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			if c.Priority == 0 {
				names = append(names, c.Name)
			}
		}
		Expect(names).To(Equal([]string{"Cluster", "Phase", "Groups", "Nodes", "Failed", "Age"}))
		Expect(crd.Spec.Versions[0].Subresources.Status).NotTo(BeNil())
	})

	It("requires a cluster, naming the field", func() {
		mr := wrappers.MakeMemberRun(ns, "run-x", "uid-x", "").Obj()
		expectInvalid(k8sClient.Create(ctx, mr), "spec.cluster")
	})

	DescribeTable("rejects a change to an immutable field, naming it",
		func(change func(*fleetv1.MemberRun), field, message string) {
			mr := created(func(w *wrappers.MemberRunWrapper) {
				w.Admitted().Halt("Stopped", "cluster a failed").AcceptedFailures(3)
			})
			change(mr)
			expectInvalid(k8sClient.Update(ctx, mr), field+": Invalid value", message)
		},
		Entry("cluster", func(mr *fleetv1.MemberRun) { mr.Spec.Cluster = "member-2" }, "spec.cluster", "cluster is immutable"),
		Entry("clusterJob", func(mr *fleetv1.MemberRun) { mr.Spec.ClusterJob = "other" }, "spec.clusterJob", "clusterJob is immutable"),
		Entry("clusterJobUID", func(mr *fleetv1.MemberRun) { mr.Spec.ClusterJobUID = "other" }, "spec.clusterJobUID", "clusterJobUID is immutable"),
		Entry("admitted taken back", func(mr *fleetv1.MemberRun) { mr.Spec.Admitted = false }, "spec.admitted", "admitted cannot be taken back"),
		Entry("halt lifted", func(mr *fleetv1.MemberRun) { mr.Spec.Halt = nil }, "spec.halt", "halt cannot be changed or lifted"),
		Entry("halt changed", func(mr *fleetv1.MemberRun) { mr.Spec.Halt.Message = "another" }, "spec.halt", "halt cannot be changed or lifted"),
		Entry("acceptedFailures decreased", func(mr *fleetv1.MemberRun) { mr.Spec.AcceptedFailures = 2 }, "spec.acceptedFailures", "acceptedFailures cannot decrease"),
		Entry("acceptedFailures removed", func(mr *fleetv1.MemberRun) { mr.Spec.AcceptedFailures = 0 }, "spec.acceptedFailures", "acceptedFailures cannot decrease"),
		Entry("retryOf added", func(mr *fleetv1.MemberRun) {
			mr.Spec.RetryOf = &fleetv1.MemberRetry{ClusterJob: "parent", ClusterJobUID: "uid-p"}
		}, "spec.retryOf", "retryOf is immutable"),
	)

	It("may be admitted and halted later", func() {
		mr := created(nil)
		mr.Spec.Admitted = true
		Expect(k8sClient.Update(ctx, mr)).To(Succeed())
		mr.Spec.Halt = &fleetv1.Halt{Reason: "Stopped", Message: "cluster a failed"}
		Expect(k8sClient.Update(ctx, mr)).To(Succeed())
	})

	It("holds 500 failed nodes and rejects 501, naming the field", func() {
		mr := created(nil)
		failed := make([]fleetv1.NodeFailure, fleetv1.MaxMemberRunFailedNodes+1)
		for i := range failed {
			failed[i] = fleetv1.NodeFailure{Node: fmt.Sprintf("node-%04d", i), Reason: "BackoffLimitExceeded", Message: repeat("m", fleetv1.MaxFailureMessageLength)}
		}
		mr.Status.Name = mr.Spec.Cluster
		mr.Status.FailedNodes = failed[:fleetv1.MaxMemberRunFailedNodes]
		Expect(k8sClient.Status().Update(ctx, mr)).To(Succeed())
		mr.Status.FailedNodes = failed
		expectInvalid(k8sClient.Status().Update(ctx, mr), "status.failedNodes", fmt.Sprintf("must have at most %d items", fleetv1.MaxMemberRunFailedNodes))
	})
})
