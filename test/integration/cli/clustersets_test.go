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
	"path/filepath"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/cli"
	"github.com/fleetjob/fleetjob/pkg/podsecurity"
)

// setsNamespace is the work namespace of the cluster these specs register
// in a cluster set, apart from the other specs' own.
const setsNamespace = "fleetjob-sets"

// setInfo is a set as clustersets -o json prints it.
type setInfo struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	PodSecurity string   `json:"podSecurity"`
	Defined     bool     `json:"defined"`
	Clusters    []string `json:"clusters"`
	Bindings    []string `json:"bindings"`
}

// The hub of this suite loads the binding admission policy only for the
// server dry run spec, which removes it after.
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
		Expect(client.IgnoreNotFound(hubC.Delete(ctx, &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "s1"}}))).To(Succeed())
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
		// What the hub publishes for the registration: clustersets counts
		// MemberClusters, not registration Secrets.
		publishMember("s1", set, fleetv1.MemberClusterStatus{})
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
		var sets list[setInfo]
		Expect(json.Unmarshal([]byte(r.out), &sets)).To(Succeed())
		want := setInfo{Kind: "ClusterSetSummary", PodSecurity: "restricted", Defined: true, Clusters: []string{"s1"}, Bindings: []string{team}}
		want.Metadata.Name = set
		Expect(sets.Items).To(ContainElement(want))

		r = run("clustersets", "-o", "name")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("clustersetsummary.cli.fleetjob.io/team-a\n"))
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

	It("has the hub's admission policy check bind --dry-run=server, and stores nothing", func() {
		policy := filepath.Join("..", "..", "..", "config", "admission", "clusterset_bind.yaml")
		for _, obj := range manifests(policy) {
			Expect(hubC.Create(ctx, obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
			DeferCleanup(func() { Expect(hubC.Delete(ctx, obj)).To(Succeed()) })
		}
		// A namespace admin of team-a, without the bind verb on the set.
		tenant := kubeconfigOf(envtest.User{Name: "team-a-admin"})
		binder := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "bindings"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{fleetv1.GroupVersion.Group}, Resources: []string{"clustersetbindings"}, Verbs: []string{"create", "get", "delete"}}}}
		binderBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: team, Name: "bindings"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "bindings"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "team-a-admin"}}}
		for _, obj := range []client.Object{binder, binderBinding} {
			Expect(hubC.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() { Expect(hubC.Delete(ctx, obj)).To(Succeed()) })
		}

		Eventually(func(g Gomega) {
			r := run("--kubeconfig", tenant, "bind", set, "-n", team, "--dry-run=server")
			g.Expect(r.err).To(MatchError(ContainSubstring("binding cluster set team-a to namespace team-a needs the bind verb on clustersets/team-a in group fleetjob.io")))
			g.Expect(r.err).To(MatchError(ContainSubstring("ValidatingAdmissionPolicy 'fleetjob-clusterset-bind'")), "refused by the policy, not by RBAC")
			g.Expect(cli.ExitCode(r.err)).To(Equal(cli.ExitAPI))
		}).Should(Succeed())

		grant := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "bind-team-a"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{fleetv1.GroupVersion.Group}, Resources: []string{"clustersets"}, ResourceNames: []string{set}, Verbs: []string{fleetv1.BindVerb}}}}
		grantBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bind-team-a"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "bind-team-a"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "team-a-admin"}}}
		for _, obj := range []client.Object{grant, grantBinding} {
			Expect(hubC.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() { Expect(hubC.Delete(ctx, obj)).To(Succeed()) })
		}
		Eventually(func(g Gomega) {
			r := run("--kubeconfig", tenant, "bind", set, "-n", team, "--dry-run=server")
			g.Expect(r.err).NotTo(HaveOccurred())
			g.Expect(r.out).To(Equal("clustersetbinding.fleetjob.io/team-a created in namespace team-a: its ClusterJobs may select the clusters of cluster set team-a (server dry run)\n"))
		}).Should(Succeed())
		Expect(hubC.Get(ctx, client.ObjectKey{Namespace: team, Name: set}, &fleetv1.ClusterSetBinding{})).To(Satisfy(apierrors.IsNotFound), "a dry run stores nothing")
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
		publishMember("s1", fleetv1.DefaultClusterSet, fleetv1.MemberClusterStatus{})
		Expect(run("clustersets").out).To(MatchRegexp(`(?m)^team-a +restricted +0 +<none>$`))
	})

	It("shows a set without a ClusterSet object at the default level, in a dry run too", func() {
		r := run("register", "s2", "--member-context", "member", "--work-namespace", "fleetjob-labs", "--cluster-set", "labs", "--dry-run=client", "-o", "yaml")
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
