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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Retry", func() {
	var stopHub func()

	BeforeEach(func() {
		register(members["member-a"], admin, map[string]string{"env": "dev"})
		register(members["member-b"], admin, map[string]string{"env": "prod"})
		stopHub = startHub(hubOptions{})
	})
	AfterEach(func() { cleanUp(stopHub) })

	// retryOf is a retry of parent: its spec, as kubectl fleetjob retry
	// copies it, naming parent.
	retryOf := func(parent *fleetv1.ClusterJob, name string, include ...fleetv1.RetryInclude) *fleetv1.ClusterJob {
		child := &fleetv1.ClusterJob{}
		child.Name, child.Namespace = name, parent.Namespace
		child.Spec = *parent.Spec.DeepCopy()
		child.Spec.RetryOf = &fleetv1.RetryOf{Name: parent.Name}
		if len(include) > 0 {
			child.Spec.Retry = &fleetv1.Retry{Include: include}
		}
		return child
	}

	It("runs exactly the failed nodes of an ended run again, in their groups, and leaves the parent's Jobs alone", func() {
		members["member-a"].runner.failOn("a-node-1", "a-node-3")
		members["member-b"].runner.failOn("b-node-6")
		parent := makeClusterJob("flaky").Batch(2).Obj()
		Expect(hubC.Create(ctx, parent)).To(Succeed())
		Eventually(phaseOf(parent)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		members["member-a"].runner.heal("a-node-1", "a-node-3")
		members["member-b"].runner.heal("b-node-6")

		child := retryOf(parent, "flaky-retry")
		Expect(hubC.Create(ctx, child)).To(Succeed())
		Eventually(phaseOf(child)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))

		Expect(jobNodes(members["member-a"], child)).To(Equal(map[string]int{"a-node-1": 1, "a-node-3": 1}))
		Expect(jobNodes(members["member-b"], child)).To(Equal(map[string]int{"b-node-6": 1}))
		Expect(jobNodes(members["member-a"], parent)).To(Equal(nodeNames("a", 4)), "the parent's record stays")
		Expect(jobNodes(members["member-b"], parent)).To(Equal(nodeNames("b", 7)))
		got := get(child)(Default)
		Expect(got.Status.RetryOf).To(Equal(&fleetv1.RetrySource{Name: parent.Name, UID: string(parent.UID)}))
		Expect(got.Status.Summary.Nodes.Succeeded).To(Equal(int32(3)))
		Expect(got.Status.Summary.Nodes.Total).To(Equal(int32(3)))
		runs := memberRuns(Default, got)
		Expect(runs[0].Status.Groups.Total).To(Equal(int32(2)), "a-node-1 and a-node-3 keep their batches")
		Expect(runs[1].Status.Groups.Total).To(Equal(int32(1)))
	})

	It("refuses at once a retry of a run that has not ended, and creates nothing", func() {
		parent := makeClusterJob("held").Batch(2).Suspend(true).Obj()
		Expect(hubC.Create(ctx, parent)).To(Succeed())
		child := retryOf(parent, "held-retry")
		child.Spec.Suspend = nil
		Expect(hubC.Create(ctx, child)).To(Succeed())
		Eventually(phaseOf(child)).WithTimeout(10 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(child)(Default)
		failed := meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionFailed)
		Expect(failed.Reason).To(Equal(fleetv1.ReasonRetryRefused))
		Expect(failed.Message).To(MatchRegexp(`^spec.retryOf.name: ClusterJob \S+/held is still (Pending|Running); retry it once it has ended$`))
		list := &fleetv1.MemberRunList{}
		Expect(hubC.List(ctx, list, client.InNamespace(child.Namespace), client.MatchingLabels{fleetv1.ClusterJobUIDLabel: string(got.UID)})).To(Succeed())
		Expect(list.Items).To(BeEmpty())
		Expect(jobNodes(members["member-a"], got)).To(BeEmpty())
	})

	It("refuses a retry with another jobTemplate, naming the field", func() {
		parent := makeClusterJob("done").Clusters(map[string]string{"env": "dev"}).Obj()
		Expect(hubC.Create(ctx, parent)).To(Succeed())
		Eventually(phaseOf(parent)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		child := retryOf(parent, "done-retry")
		child.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "busybox:other"
		Expect(hubC.Create(ctx, child)).To(Succeed())
		Eventually(phaseOf(child)).WithTimeout(10 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		failed := meta.FindStatusCondition(get(child)(Default).Status.Conditions, fleetv1.ConditionFailed)
		Expect(failed.Reason).To(Equal(fleetv1.ReasonRetryRefused))
		Expect(failed.Message).To(HavePrefix("spec.jobTemplate: differs from the jobTemplate of ClusterJob done"))
	})

	It("fails a cluster that plans after its parent was deleted, RetryParentGone, and still ends", func() {
		members["member-a"].runner.failOn("a-node-2")
		members["member-b"].runner.failOn("b-node-2")
		parent := makeClusterJob("gone").Batch(4).Obj()
		Expect(hubC.Create(ctx, parent)).To(Succeed())
		Eventually(phaseOf(parent)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		members["member-a"].runner.heal("a-node-2")
		members["member-b"].runner.heal("b-node-2")

		// member-b waits for member-a's turn; the parent goes meanwhile.
		members["member-a"].runner.hold(true)
		child := retryOf(parent, "gone-retry")
		child.Spec.ClusterRollout = &fleetv1.ClusterRollout{MaxConcurrentClusters: 1}
		Expect(hubC.Create(ctx, child)).To(Succeed())
		Eventually(func() map[string]int { return jobNodes(members["member-a"], child) }).WithTimeout(30 * time.Second).
			Should(Equal(map[string]int{"a-node-2": 1}))
		Expect(hubC.Delete(ctx, parent)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(hubC.Get(ctx, client.ObjectKeyFromObject(parent), &fleetv1.ClusterJob{}))
		}).
			WithTimeout(30 * time.Second).Should(BeTrue())
		members["member-a"].runner.hold(false)

		Eventually(phaseOf(child)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(child)(Default)
		Expect(got.Status.Clusters[0].Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(got.Status.Clusters[1].Reason).To(Equal(fleetv1.ReasonRetryParentGone))
		Expect(jobNodes(members["member-b"], got)).To(BeEmpty(), "nothing is guessed from a record that is gone")
	})
})
