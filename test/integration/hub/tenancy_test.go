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
	"bytes"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Tenancy", func() {
	var stopHub func()

	// namespace creates a hub namespace for a team, deleted after the spec.
	namespace := func(name string) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		Expect(client.IgnoreAlreadyExists(hubC.Create(ctx, ns))).To(Succeed())
	}
	// clusterSet creates set with level, deleted after the spec.
	clusterSet := func(name string, level fleetv1.PodSecurityLevel) {
		cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: fleetv1.ClusterSetSpec{PodSecurity: level}}
		Expect(hubC.Create(ctx, cs)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, cs))).To(Succeed()) })
	}
	bind := func(ns, set string) {
		b := binding(ns, set)
		Expect(hubC.Create(ctx, b)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, b))).To(Succeed()) })
	}
	in := func(cj *fleetv1.ClusterJob, ns string) *fleetv1.ClusterJob { cj.Namespace = ns; return cj }

	BeforeEach(func() { stopHub = func() {} })
	AfterEach(func() { cleanUp(stopHub) })

	It("runs a ClusterJob of a namespace with no binding nowhere, and fails it NoBoundClusterSets", func() {
		register(members["member-a"], admin, nil)
		register(members["member-b"], admin, nil)
		stopHub = startHub(hubOptions{emptySelectionGrace: 2 * time.Second})
		namespace("team-unbound")
		cj := in(makeClusterJob("nowhere").Obj(), "team-unbound")
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(20 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		failed := meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionFailed)
		Expect(failed.Reason).To(Equal(fleetv1.ReasonNoBoundClusterSets))
		Expect(failed.Message).To(ContainSubstring("kubectl fleetjob bind SET -n NAMESPACE"))
		Expect(got.Status.Clusters).To(BeEmpty(), "no MemberRun")
		Expect(jobNodes(members["member-a"], cj)).To(BeEmpty())
		Expect(jobNodes(members["member-b"], cj)).To(BeEmpty())
	})

	It("starts a waiting ClusterJob as soon as its namespace is bound, with no other event", func() {
		register(members["member-a"], admin, nil)
		stopHub = startHub(hubOptions{})
		namespace("team-late")
		cj := in(makeClusterJob("late").Obj(), "team-late")
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(10 * time.Second).Should(Equal(fleetv1.PhasePending))
		Consistently(phaseOf(cj)).WithTimeout(2 * time.Second).Should(Equal(fleetv1.PhasePending))
		bind("team-late", fleetv1.DefaultClusterSet)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))
	})

	It("bound to set a, a {} selector runs only in set a's clusters; the sets count their clusters", func() {
		register(members["member-a"], admin, map[string]string{fleetv1.ClusterSetLabel: "set-a"})
		register(members["member-b"], admin, map[string]string{fleetv1.ClusterSetLabel: "set-b"})
		clusterSet("set-a", "")
		clusterSet("set-b", "")
		stopHub = startHub(hubOptions{})
		namespace("team-a")
		bind("team-a", "set-a")
		cj := in(makeClusterJob("mine").Obj(), "team-a")
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))
		Expect(jobNodes(members["member-b"], cj)).To(BeEmpty(), "set-b is not bound to team-a")
		Expect(get(cj)(Default).Status.Clusters).To(HaveLen(1))
		Eventually(func(g Gomega) {
			for set, want := range map[string]int32{"set-a": 1, "set-b": 1} {
				cs := &fleetv1.ClusterSet{}
				g.Expect(hubC.Get(ctx, client.ObjectKey{Name: set}, cs)).To(Succeed())
				g.Expect(cs.Status.Clusters).To(Equal(want), set)
				g.Expect(cs.Spec.PodSecurity).To(Equal(fleetv1.PodSecurityBaseline), "defaulted")
			}
		}).WithTimeout(10 * time.Second).Should(Succeed())
	})

	It("warns on a ClusterSet made stricter than what its clusters' namespaces were labelled with, until they are registered again", func() {
		register(members["member-a"], admin, map[string]string{fleetv1.ClusterSetLabel: "tightened"})
		register(members["member-b"], admin, map[string]string{fleetv1.ClusterSetLabel: "tightened"})
		// As `kubectl fleetjob register` records it under a baseline set.
		recordLevel := func(cluster string, level fleetv1.PodSecurityLevel) {
			secret := &corev1.Secret{}
			Expect(hubC.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: cluster}, secret)).To(Succeed())
			if secret.Annotations == nil {
				secret.Annotations = map[string]string{}
			}
			secret.Annotations[fleetv1.PodSecurityAnnotation] = string(level)
			Expect(hubC.Update(ctx, secret)).To(Succeed())
		}
		recordLevel("member-a", fleetv1.PodSecurityBaseline)
		recordLevel("member-b", fleetv1.PodSecurityBaseline)
		clusterSet("tightened", fleetv1.PodSecurityBaseline)
		stopHub = startHub(hubOptions{})
		enforced := func(g Gomega) *metav1.Condition {
			cs := &fleetv1.ClusterSet{}
			g.Expect(hubC.Get(ctx, client.ObjectKey{Name: "tightened"}, cs)).To(Succeed())
			c := meta.FindStatusCondition(cs.Status.Conditions, fleetv1.ConditionMembersEnforcePodSecurity)
			g.Expect(c).NotTo(BeNil())
			return c
		}
		Eventually(func(g Gomega) { g.Expect(enforced(g).Status).To(Equal(metav1.ConditionTrue)) }).Should(Succeed())

		By("making the set restricted")
		cs := &fleetv1.ClusterSet{}
		Expect(hubC.Get(ctx, client.ObjectKey{Name: "tightened"}, cs)).To(Succeed())
		cs.Spec.PodSecurity = fleetv1.PodSecurityRestricted
		Expect(hubC.Update(ctx, cs)).To(Succeed())
		Eventually(func(g Gomega) {
			c := enforced(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(fleetv1.ReasonPodSecurityMismatch))
			g.Expect(c.Message).To(ContainSubstring("the set's restricted: member-a (baseline), member-b (baseline)"))
			g.Expect(c.Message).To(ContainSubstring("kubectl fleetjob register"))
		}).Should(Succeed())

		By("registering the clusters again, which labels their namespaces restricted")
		recordLevel("member-a", fleetv1.PodSecurityRestricted)
		Consistently(func(g Gomega) { g.Expect(enforced(g).Status).To(Equal(metav1.ConditionFalse)) }).WithTimeout(time.Second).Should(Succeed())
		recordLevel("member-b", fleetv1.PodSecurityRestricted)
		Eventually(func(g Gomega) { g.Expect(enforced(g).Status).To(Equal(metav1.ConditionTrue)) }).Should(Succeed())
	})

	It("fails the cluster of a restricted set before any Job exists, naming the checks, while a baseline one runs", func() {
		register(members["member-a"], admin, nil)
		register(members["member-b"], admin, map[string]string{fleetv1.ClusterSetLabel: "locked"})
		clusterSet("locked", fleetv1.PodSecurityRestricted)
		stopHub = startHub(hubOptions{})
		bind("default", "locked")
		cj := makeClusterJob("plain").Obj() // meets baseline, not restricted
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		Expect(got.Status.Clusters[0].Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(got.Status.Clusters[1].Reason).To(Equal(fleetv1.ReasonPodSecurityViolation))
		failed := meta.FindStatusCondition(got.Status.Conditions, fleetv1.ConditionFailed)
		Expect(failed.Reason).To(Equal(fleetv1.ReasonPodSecurityViolation))
		Expect(failed.Message).To(ContainSubstring(`failed: member-b (PodSecurityViolation: spec.jobTemplate.spec.template does not meet Pod Security level "restricted"`),
			"the run's message says which cluster failed and why")
		Expect(got.Status.Clusters[1].Message).To(And(
			ContainSubstring(`does not meet Pod Security level "restricted" of cluster set locked, no Job was created: `),
			ContainSubstring("runAsNonRoot != true")))
		Expect(jobNodes(members["member-b"], cj)).To(BeEmpty())
		cms := &corev1.ConfigMapList{}
		Expect(members["member-b"].client.List(ctx, cms, client.InNamespace(workNamespace), client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue})).To(Succeed())
		Expect(cms.Items).To(BeEmpty(), "not even a plan")
	})

	It("refuses a template running as a ServiceAccount its set does not allow, naming the field, before any Job or plan; an allowed one runs", func() {
		register(members["member-a"], admin, map[string]string{fleetv1.ClusterSetLabel: "builders"})
		register(members["member-b"], admin, nil)
		builders := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "builders"},
			Spec: fleetv1.ClusterSetSpec{AllowedServiceAccounts: []fleetv1.ServiceAccountName{"default", "builder"}}}
		Expect(hubC.Create(ctx, builders)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, builders))).To(Succeed()) })
		stopHub = startHub(hubOptions{})
		bind("default", "builders")
		cj := makeClusterJob("as-builder").Obj()
		cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName = "builder"
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		Expect(got.Status.Clusters[0].Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(got.Status.Clusters[1].Reason).To(Equal(fleetv1.ReasonServiceAccountNotAllowed))
		Expect(got.Status.Clusters[1].Message).To(ContainSubstring(
			`spec.jobTemplate.spec.template.spec.serviceAccountName: ServiceAccount "builder" is not in allowedServiceAccounts of cluster set default (default); no Job was created`))
		for _, j := range memberJobs(members["member-a"]) {
			Expect(j.Spec.Template.Spec.ServiceAccountName).To(Equal("builder"))
			Expect(j.Spec.Template.Spec.AutomountServiceAccountToken).To(BeNil(), "the set allows the account: its token is the template's choice")
		}
		Expect(jobNodes(members["member-b"], cj)).To(BeEmpty())
		cms := &corev1.ConfigMapList{}
		Expect(members["member-b"].client.List(ctx, cms, client.InNamespace(workNamespace), client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue})).To(Succeed())
		Expect(cms.Items).To(BeEmpty(), "not even a plan")
	})

	It("never runs a template as fleetjob-hub, the hub's old identity in the work namespace, even with --tenancy=off", func() {
		register(members["member-a"], admin, nil)
		stopHub = startHub(hubOptions{tenancyOff: true})
		cj := makeClusterJob("as-the-hub").Obj()
		cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName = fleetv1.ReservedServiceAccount
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		got := get(cj)(Default)
		Expect(got.Status.Clusters[0].Reason).To(Equal(fleetv1.ReasonServiceAccountNotAllowed))
		Expect(got.Status.Clusters[0].Message).To(ContainSubstring(`spec.jobTemplate.spec.template.spec.serviceAccountName: ServiceAccount "fleetjob-hub" is the name of the hub's own identity`))
		Expect(jobNodes(members["member-a"], cj)).To(BeEmpty())
		cms := &corev1.ConfigMapList{}
		Expect(members["member-a"].client.List(ctx, cms, client.InNamespace(workNamespace), client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue})).To(Succeed())
		Expect(cms.Items).To(BeEmpty(), "not even a plan")
	})

	It("runs anywhere with --tenancy=off, as before cluster sets", func() {
		register(members["member-a"], admin, map[string]string{fleetv1.ClusterSetLabel: "unbound"})
		stopHub = startHub(hubOptions{tenancyOff: true})
		namespace("team-open")
		cj := in(makeClusterJob("open").Obj(), "team-open")
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(members["member-a"], cj)).To(Equal(nodeNames("a", 4)))
	})

	Describe("binding a cluster set", Ordered, func() {
		BeforeAll(func() {
			applyManifests(filepath.Join("..", "..", "..", "config", "admission", "clusterset_bind.yaml"))
			namespace("team-b")
			// The tenant administers team-b: it may create bindings there.
			role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "bindings"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{fleetv1.GroupVersion.Group}, Resources: []string{"clustersetbindings"}, Verbs: []string{"create", "update", "get", "delete"}}}}
			Expect(hubC.Create(ctx, role)).To(Succeed())
			Expect(hubC.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "bindings"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "bindings"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "tenant-b"}}})).To(Succeed())
		})
		// tenant is a client of user tenant-b.
		tenant := func() client.Client {
			u, err := hubEnv.AddUser(envtest.User{Name: "tenant-b"}, nil)
			Expect(err).NotTo(HaveOccurred())
			c, err := client.New(u.Config(), client.Options{Scheme: scheme})
			Expect(err).NotTo(HaveOccurred())
			return c
		}

		It("is Forbidden without the bind verb on the set, naming it", func() {
			Eventually(func(g Gomega) {
				err := tenant().Create(ctx, binding("team-b", "production"))
				g.Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
				g.Expect(err.Error()).To(ContainSubstring("needs the bind verb on clustersets/production in group fleetjob.io"))
			}).WithTimeout(10*time.Second).Should(Succeed(), "the policy takes a moment to be enforced")
		})

		It("is allowed with bind on that set, and only that set", func() {
			cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "bind-staging"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{fleetv1.GroupVersion.Group}, Resources: []string{"clustersets"}, ResourceNames: []string{"staging"}, Verbs: []string{fleetv1.BindVerb}}}}
			Expect(hubC.Create(ctx, cr)).To(Succeed())
			Expect(hubC.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bind-staging"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "bind-staging"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "tenant-b"}}})).To(Succeed())
			Eventually(func() error { return tenant().Create(ctx, binding("team-b", "staging")) }).WithTimeout(10 * time.Second).Should(Succeed())
			DeferCleanup(func() { Expect(client.IgnoreNotFound(hubC.Delete(ctx, binding("team-b", "staging")))).To(Succeed()) })
			err := tenant().Create(ctx, binding("team-b", "production"))
			Expect(err).To(HaveOccurred(), "bind on staging is not bind on production")
			Expect(err.Error()).To(ContainSubstring("clustersets/production"))
		})
	})
})

// applyManifests creates the objects of a YAML file on the hub.
func applyManifests(file string) {
	GinkgoHelper()
	data, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			break
		}
		if len(obj.Object) == 0 {
			continue
		}
		Expect(client.IgnoreAlreadyExists(hubC.Create(ctx, obj))).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
	}
}
