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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Tenancy", func() {
	It("two cluster sets, two namespaces: each namespace's ClusterJob runs only in its own set's cluster", func() {
		m1, m2 := f.member("member-1"), f.member("member-2")
		for i, m := range []*member{m1, m2} {
			set := fmt.Sprintf("team-%d", i+1)
			inClusterSet(m, set)
			clusterSet(set, fleetv1.PodSecurityBaseline)
			teamNamespace(set)
			bindSet(set, set)
		}
		var runs []*fleetv1.ClusterJob
		for _, ns := range []string{"team-1", "team-2"} {
			cj := makeClusterJob("mine").Obj() // every member of the suite
			cj.Namespace = ns
			create(cj)
			DeferCleanup(deleteAndWait, cj) // also when the spec fails: the suite's cleanup sweeps only its own namespace
			runs = append(runs, cj)
		}
		for i, cj := range runs {
			got := waitPhase(cj, fleetv1.PhaseCompleted)
			Expect(got.Status.Clusters).To(HaveLen(1), "%s runs in one cluster", cj.Namespace)
			own, other := m1, m2
			if i == 1 {
				own, other = m2, m1
			}
			Expect(got.Status.Clusters[0].Name).To(Equal(own.name))
			expectRun(own, recorders[own.name], got, []group{{name: "all", nodes: names(eligibleNodes(own))}})
			expectNoRun(other, recorders[other.name], got)
		}
		// Before the suite's AfterEach checks the members are empty.
		for _, cj := range runs {
			deleteAndWait(cj)
		}
	})

	It("a privileged template in a restricted set fails that cluster before any Job exists, naming the check", func() {
		m1 := f.member("member-1")
		inClusterSet(m1, "locked")
		clusterSet("locked", fleetv1.PodSecurityRestricted)
		bindSet(testNamespace, "locked")
		cj := makeClusterJob("privileged").OnlyMember(m1.name).Obj()
		cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseFailed)
		r := row(got, m1.name)
		Expect(r.Reason).To(Equal(fleetv1.ReasonPodSecurityViolation))
		Expect(r.Message).To(And(ContainSubstring(`Pod Security level "restricted" of cluster set locked, no Job was created`), ContainSubstring("privileged")))
		expectNoRun(m1, recorders[m1.name], got)
	})
})

// inClusterSet puts m's registration in set until the spec ends.
func inClusterSet(m *member, set string) {
	GinkgoHelper()
	key := types.NamespacedName{Namespace: fleetv1.DefaultWorkNamespace, Name: m.name}
	label := func(value *string) {
		s := &corev1.Secret{}
		Expect(f.hub.Get(ctx, key, s)).To(Succeed())
		patch := client.MergeFrom(s.DeepCopy())
		if value == nil {
			delete(s.Labels, fleetv1.ClusterSetLabel)
		} else {
			s.Labels[fleetv1.ClusterSetLabel] = *value
		}
		Expect(f.hub.Patch(ctx, s, patch)).To(Succeed())
	}
	label(&set)
	DeferCleanup(label, (*string)(nil))
}

// clusterSet creates the ClusterSet name until the spec ends.
func clusterSet(name string, level fleetv1.PodSecurityLevel) {
	GinkgoHelper()
	cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: fleetv1.ClusterSetSpec{PodSecurity: level}}
	Expect(f.hub.Create(ctx, cs)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(f.hub.Delete(ctx, cs))).To(Succeed()) })
}

// teamNamespace creates a hub namespace for a team.
func teamNamespace(name string) {
	GinkgoHelper()
	ensureNamespace(f.hub, name)
}

// bindSet binds set to namespace until the spec ends, as a platform admin.
func bindSet(namespace, set string) {
	GinkgoHelper()
	b := &fleetv1.ClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: set}, Spec: fleetv1.ClusterSetBindingSpec{ClusterSet: set}}
	Expect(f.hub.Create(ctx, b)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(f.hub.Delete(ctx, b))).To(Succeed()) })
}

// deleteAndWait deletes cj and waits until its finalizer emptied the
// members: the suite's cleanup only sweeps its own namespace.
func deleteAndWait(cj *fleetv1.ClusterJob) {
	GinkgoHelper()
	Expect(client.IgnoreNotFound(f.hub.Delete(ctx, cj))).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(f.hub.Get(ctx, client.ObjectKeyFromObject(cj), &fleetv1.ClusterJob{}))
	}).
		WithTimeout(2*time.Minute).Should(BeTrue(), "ClusterJob %s/%s is gone", cj.Namespace, cj.Name)
}
