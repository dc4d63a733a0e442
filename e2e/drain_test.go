//go:build e2e

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

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
)

// setAllowDrain sets the default ClusterSet's spec.allowDrain, and
// registers m again so that its credentials follow.
func setAllowDrain(m *member, allow bool) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		set := &fleetv1.ClusterSet{}
		g.Expect(f.hub.Get(ctx, client.ObjectKey{Name: fleetv1.DefaultClusterSet}, set)).To(Succeed())
		set.Spec.AllowDrain = allow
		g.Expect(f.hub.Update(ctx, set)).To(Succeed())
	}).Should(Succeed())
	f.register(m)
}

var _ = Describe("Drain before the Job", kindOnly, func() {
	BeforeEach(func() { only(providerKind, "kwok runs no pod a drain could evict, and no disruption controller") })

	It("evicts a Deployment's pods through their PodDisruptionBudget, runs each Job on its cordoned node, and uncordons every node after", func() {
		m := f.member("member-1")
		nodes := names(eligibleNodes(m))
		Expect(len(nodes)).To(BeNumerically(">=", 3), "member-1 needs three nodes")
		setAllowDrain(m, true)
		DeferCleanup(func() { setAllowDrain(m, false) })

		// Three replicas the budget keeps two of: evicted one at a time,
		// rescheduled on the nodes not cordoned.
		const apps = "e2e-apps"
		ensureNamespace(m.client, apps)
		labels := map[string]string{"app": "e2e-web"}
		web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "e2e-web", Namespace: apps}, Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers:                    []corev1.Container{{Name: "web", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}},
			}},
		}}
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "e2e-web", Namespace: apps}, Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: labels}}}
		Expect(m.client.Create(ctx, web)).To(Succeed())
		Expect(m.client.Create(ctx, pdb)).To(Succeed())
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(m.client.Delete(ctx, pdb))).To(Succeed())
			Expect(client.IgnoreNotFound(m.client.Delete(ctx, web))).To(Succeed())
		})
		readyReplicas := func(g Gomega) int32 {
			got := &appsv1.Deployment{}
			g.Expect(m.client.Get(ctx, client.ObjectKeyFromObject(web), got)).To(Succeed())
			return got.Status.ReadyReplicas
		}
		Eventually(readyReplicas).WithTimeout(2 * time.Minute).Should(BeEquivalentTo(3))

		// One node at a time; only the Deployment's pods are the drain's.
		cj := makeClusterJob("drain").OnlyMember(m.name).Batch(1).Obj()
		cj.Spec.NodePreparation = &fleetv1.NodePreparation{Drain: &fleetv1.Drain{
			Timeout:     &metav1.Duration{Duration: 2 * time.Minute},
			PodSelector: &metav1.LabelSelector{MatchLabels: labels},
		}}
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		expectRun(m, recorders[m.name], got, batches(nodes, 1))

		// Each node's result says its drain; the evictions add up to at
		// least the pods that stood on the nodes drained.
		var mr fleetv1.MemberRun
		runs := &fleetv1.MemberRunList{}
		Expect(f.hub.List(ctx, runs, client.InNamespace(cj.Namespace), client.MatchingLabels{fleetv1.ClusterJobUIDLabel: string(got.UID)})).To(Succeed())
		Expect(runs.Items).To(HaveLen(1))
		mr = runs.Items[0]
		Expect(mr.Status.NodeResults).NotTo(BeNil())
		doc, err := noderesults.Decode(mr.Status.NodeResults.Data)
		Expect(err).NotTo(HaveOccurred())
		evicted := int32(0)
		for _, n := range doc.Nodes {
			Expect(n.Drain.Start).NotTo(BeZero(), "node %d was drained", n.Index)
			evicted += n.Drain.Evicted
		}
		Expect(evicted).To(BeNumerically(">=", 3), "every replica stood on some node the run drained")

		// Every node is back in service, its marks gone; the Deployment
		// is whole again.
		for _, name := range nodes {
			n := &corev1.Node{}
			Expect(m.client.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
			Expect(n.Spec.Unschedulable).To(BeFalse(), "%s is uncordoned", name)
			Expect(n.Annotations).NotTo(HaveKey(fleetv1.CordonedByAnnotation))
			Expect(n.Annotations).NotTo(HaveKey(fleetv1.DrainEvictedAnnotation))
		}
		Eventually(readyReplicas).WithTimeout(2 * time.Minute).Should(BeEquivalentTo(3))
	})
})
