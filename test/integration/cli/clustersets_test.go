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

package cli

import (
	"encoding/json"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/podsecurity"
)

// setsNamespace is the work namespace of the cluster these specs register
// in a cluster set, apart from the other specs' own.
const setsNamespace = "fleetjob-sets"

// setInfo is a set as clustersets -o json prints it.
type setInfo struct {
	Name        string   `json:"name"`
	PodSecurity string   `json:"podSecurity"`
	Defined     bool     `json:"defined"`
	Clusters    []string `json:"clusters"`
	Bindings    []string `json:"bindings"`
}

// The hub of this suite does not load the binding admission policy: a
// bind without the bind verb is a unit test's.
var _ = Describe("kubectl fleetjob on cluster sets", Ordered, func() {
	const set, team = "team-a", "team-a"

	BeforeAll(func() {
		cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}, Spec: fleetv1.ClusterSetSpec{PodSecurity: fleetv1.PodSecurityRestricted}}
		Expect(hubC.Create(ctx, cs)).To(Succeed())
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: team}}
		Expect(hubC.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func() {
			Expect(hubC.Delete(ctx, cs)).To(Succeed())
			Expect(hubC.Delete(ctx, ns)).To(Succeed())
		})
	})

	AfterAll(func() {
		if slices.Contains(registrations(), "s1") {
			Expect(run("unregister", "s1", "--purge", "--member-context", "member").err).To(Succeed())
		}
	})

	It("registers a cluster in a set, its work namespace enforcing the set's Pod Security level", func() {
		r := run("register", "s1", "--member-context", "member", "--work-namespace", setsNamespace, "--cluster-set", set)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("cluster set team-a: namespace fleetjob-sets of the member enforces its Pod Security level restricted"))
		Expect(registrationSecret("s1").Labels).To(Equal(map[string]string{fleetv1.RegistrationLabel: "true", fleetv1.ClusterSetLabel: set}))
		Expect(registrationSecret("s1").Annotations).To(HaveKeyWithValue(fleetv1.PodSecurityAnnotation, "restricted"),
			"the registration records the level, so that the hub sees when the set's changes")
		ns := &corev1.Namespace{}
		Expect(memberHas(ns, "", setsNamespace)).To(BeTrue())
		Expect(ns.Labels).To(HaveKeyWithValue(podsecurity.EnforceLabel, "restricted"))
	})

	It("lists the set with its cluster, and no binding yet", func() {
		r := run("clustersets")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`(?m)^NAME +POD-SECURITY +CLUSTERS +BINDINGS$`))
		Expect(r.out).To(MatchRegexp(`(?m)^team-a +restricted +1 +<none>$`))
	})

	It("binds the set to the team's namespace, and binding it again changes nothing", func() {
		r := run("bind", set, "-n", team)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("clustersetbinding.fleetjob.io/team-a created in namespace team-a: its ClusterJobs may select the clusters of cluster set team-a\n"))
		binding := &fleetv1.ClusterSetBinding{}
		Expect(hubC.Get(ctx, client.ObjectKey{Namespace: team, Name: set}, binding)).To(Succeed())
		Expect(binding.Spec.ClusterSet).To(Equal(set))

		r = run("bind", set, "-n", team)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("already exists in namespace team-a: cluster set team-a is bound there, nothing changed"))
		again := &fleetv1.ClusterSetBinding{}
		Expect(hubC.Get(ctx, client.ObjectKeyFromObject(binding), again)).To(Succeed())
		Expect(again.ResourceVersion).To(Equal(binding.ResourceVersion))
	})

	It("lists the set with its binding and, wide, its cluster", func() {
		r := run("clustersets", "-o", "wide")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`(?m)^team-a +restricted +1 +team-a +s1$`))
		r = run("clustersets", "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var sets []setInfo
		Expect(json.Unmarshal([]byte(r.out), &sets)).To(Succeed())
		Expect(sets).To(ContainElement(setInfo{Name: set, PodSecurity: "restricted", Defined: true, Clusters: []string{"s1"}, Bindings: []string{team}}))
	})

	It("unbinds the set, and unbinding it again changes nothing", func() {
		r := run("unbind", set, "-n", team)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("clustersetbinding.fleetjob.io/team-a deleted from namespace team-a"))
		Expect(run("clustersets").out).To(MatchRegexp(`(?m)^team-a +restricted +1 +<none>$`))
		r = run("unbind", set, "-n", team)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("cluster set team-a is not bound to namespace team-a"))
	})

	It("moves the cluster back to the set default when registered again without --cluster-set", func() {
		r := run("register", "s1", "--member-context", "member", "--work-namespace", setsNamespace)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("cluster set default has no ClusterSet object: its clusters get the default Pod Security level baseline"))
		Expect(registrationSecret("s1").Labels).To(Equal(map[string]string{fleetv1.RegistrationLabel: "true"}))
		Expect(registrationSecret("s1").Annotations).To(HaveKeyWithValue(fleetv1.PodSecurityAnnotation, "baseline"))
		ns := &corev1.Namespace{}
		Expect(memberHas(ns, "", setsNamespace)).To(BeTrue())
		Expect(ns.Labels).To(HaveKeyWithValue(podsecurity.EnforceLabel, "baseline"))
		Expect(run("clustersets").out).To(MatchRegexp(`(?m)^team-a +restricted +0 +<none>$`))
	})

	It("shows a set without a ClusterSet object at the default level, in a dry run too", func() {
		r := run("register", "s2", "--member-context", "member", "--work-namespace", "fleetjob-labs", "--cluster-set", "labs", "--dry-run", "-o", "yaml")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.errOut).To(Equal("cluster set labs has no ClusterSet object: its clusters get the default Pod Security level baseline\n"))
		objs := splitYAML(r.out)
		Expect(objs[0].GetKind()).To(Equal("Namespace"))
		Expect(objs[0].GetLabels()).To(HaveKeyWithValue(podsecurity.EnforceLabel, "baseline"))
		Expect(objs[7].GetKind()).To(Equal("Secret"))
		Expect(objs[7].GetLabels()).To(HaveKeyWithValue(fleetv1.ClusterSetLabel, "labs"))
		Expect(memberHas(&corev1.Namespace{}, "", "fleetjob-labs")).To(BeFalse())
		Expect(registrations()).NotTo(ContainElement("s2"))
	})
})
