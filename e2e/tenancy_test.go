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
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Tenancy", func() {
	It("two cluster sets, two namespaces: each namespace's ClusterJob runs only in its own set's cluster", hubLogic, func() {
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

	It("a privileged template in a restricted set fails that cluster before any Job exists, naming the check", hubLogic, func() {
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

	It("a template naming the hub's ServiceAccount is refused; no member Job or pod ever runs as the hub", func() {
		// register keeps the hub's identity in namespace fleetjob-hub, where
		// no Job runs: a pod can only run as an account of its own namespace.
		for _, m := range f.members {
			Expect(exists(m, &corev1.ServiceAccount{}, workNamespace, fleetv1.ReservedServiceAccount)).To(BeFalse(), "%s: no hub identity in the work namespace", m.name)
			Expect(exists(m, &corev1.ServiceAccount{}, "fleetjob-hub", "for-"+workNamespace)).To(BeTrue(), "%s: the hub's identity lives in namespace fleetjob-hub", m.name)
		}
		cj := makeClusterJob("as-the-hub").Obj() // every member of the suite
		cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName = fleetv1.ReservedServiceAccount
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseFailed)
		for _, m := range f.members {
			r := row(got, m.name)
			Expect(r.Reason).To(Equal(fleetv1.ReasonServiceAccountNotAllowed), m.name)
			Expect(r.Message).To(ContainSubstring("spec.jobTemplate.spec.template.spec.serviceAccountName"), m.name)
			expectNoRun(m, recorders[m.name], got)
		}
		// The same template by its deprecated field is refused the same way.
		old := makeClusterJob("as-the-hub-deprecated").Obj()
		old.Spec.JobTemplate.Spec.Template.Spec.DeprecatedServiceAccount = fleetv1.ReservedServiceAccount
		create(old)
		got = waitPhase(old, fleetv1.PhaseFailed)
		for _, m := range f.members {
			Expect(row(got, m.name).Reason).To(Equal(fleetv1.ReasonServiceAccountNotAllowed), m.name)
			expectNoRun(m, recorders[m.name], got)
		}
		// Whatever ran before in the suite: no Job or pod of fleetjob's in
		// any member names the hub's identity or mounts a token the set did
		// not allow.
		for _, m := range f.members {
			expectNoneAsTheHub(m)
		}
	})
})

// exists tells whether m holds obj ns/name.
func exists(m *member, obj client.Object, ns, name string) bool {
	GinkgoHelper()
	err := m.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	Expect(err).NotTo(HaveOccurred())
	return true
}

// expectNoneAsTheHub checks that no Job or pod in m's work namespace runs
// as the hub's identity, old or new.
func expectNoneAsTheHub(m *member) {
	GinkgoHelper()
	jobs := &batchv1.JobList{}
	Expect(m.client.List(ctx, jobs, client.InNamespace(workNamespace))).To(Succeed())
	for _, j := range jobs.Items {
		sa := j.Spec.Template.Spec.ServiceAccountName
		Expect(sa).NotTo(Equal(fleetv1.ReservedServiceAccount), "%s: Job %s runs as the hub", m.name, j.Name)
		Expect(j.Spec.Template.Spec.DeprecatedServiceAccount).NotTo(Equal(fleetv1.ReservedServiceAccount), "%s: Job %s runs as the hub", m.name, j.Name)
	}
	pods := &corev1.PodList{}
	Expect(m.client.List(ctx, pods, client.InNamespace(workNamespace))).To(Succeed())
	for _, p := range pods.Items {
		Expect(p.Spec.ServiceAccountName).NotTo(Equal(fleetv1.ReservedServiceAccount), "%s: pod %s runs as the hub", m.name, p.Name)
	}
}

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
