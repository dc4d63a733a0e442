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
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/kubeconfig"
)

const workNamespace = fleetv1.DefaultWorkNamespace

// hubNamespace holds the hub's identity in the member, out of the Jobs'
// reach: ServiceAccount <work namespace> there.
const hubNamespace = "fleetjob-hub"

// identity is a user as the member authenticates a ServiceAccount token.
type identity struct {
	user   string
	groups []string
}

// serviceAccount is how the member authenticates a token of ServiceAccount
// ns/name.
func serviceAccount(ns, name string) identity {
	return identity{user: "system:serviceaccount:" + ns + ":" + name,
		groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
}

// hubIdentity is how the member authenticates the registered token.
var hubIdentity = serviceAccount(hubNamespace, "for-"+workNamespace)

// podIdentity is how the member authenticates the token of a pod in the
// work namespace that names no ServiceAccount: what a ClusterJob's pods run as.
var podIdentity = serviceAccount(workNamespace, "default")

type access struct {
	ns, group, resource, subresource, name, verb string
}

func (a access) String() string {
	return fmt.Sprintf("%s %s/%s.%s in %q", a.verb, a.resource, a.subresource, a.group, a.ns)
}

// needed is what the hub does in a member (README, member RBAC table).
func needed() []access {
	var out []access
	for _, verb := range []string{"get", "list", "watch", "create", "delete", "deletecollection"} {
		out = append(out, access{ns: workNamespace, group: "batch", resource: "jobs", verb: verb},
			access{ns: workNamespace, resource: "configmaps", verb: verb})
	}
	// The results record is updated as nodes finish; kube-system's UID
	// identifies the cluster.
	out = append(out, access{ns: workNamespace, resource: "configmaps", verb: "update"},
		access{resource: "namespaces", name: "kube-system", verb: "get"})
	for _, verb := range []string{"get", "list", "watch"} {
		out = append(out, access{resource: "nodes", verb: verb})
	}
	return out
}

// notNeeded is a table of what the hub must never be able to do.
var notNeeded = []access{
	{ns: workNamespace, resource: "secrets", verb: "get"},
	{ns: workNamespace, resource: "secrets", verb: "list"},
	{ns: workNamespace, resource: "secrets", verb: "watch"},
	{ns: "default", resource: "secrets", verb: "get"},
	{ns: workNamespace, resource: "pods", verb: "create"},
	{ns: workNamespace, resource: "pods", subresource: "exec", verb: "create"},
	{ns: workNamespace, group: "batch", resource: "jobs", verb: "update"},
	{ns: workNamespace, group: "batch", resource: "jobs", verb: "patch"},
	{ns: workNamespace, group: "batch", resource: "jobs", subresource: "status", verb: "update"},
	{ns: workNamespace, group: "batch", resource: "cronjobs", verb: "create"},
	{ns: workNamespace, group: "apps", resource: "deployments", verb: "create"},
	{ns: workNamespace, resource: "configmaps", verb: "patch"},
	{resource: "nodes", verb: "create"},
	{resource: "nodes", verb: "update"},
	{resource: "nodes", verb: "patch"},
	{resource: "nodes", verb: "delete"},
	{resource: "nodes", subresource: "status", verb: "patch"},
	{ns: "default", group: "batch", resource: "jobs", verb: "create"},
	{ns: "default", group: "batch", resource: "jobs", verb: "list"},
	{ns: "kube-system", group: "batch", resource: "jobs", verb: "create"},
	{ns: "default", resource: "configmaps", verb: "get"},
	{ns: "default", resource: "configmaps", verb: "create"},
	{resource: "namespaces", verb: "create"},
	{resource: "namespaces", name: "default", verb: "get"},
	{resource: "namespaces", verb: "delete"},
	{ns: workNamespace, resource: "serviceaccounts", subresource: "token", verb: "create"},
	{ns: workNamespace, resource: "serviceaccounts", verb: "impersonate"},
	{ns: hubNamespace, resource: "serviceaccounts", subresource: "token", verb: "create"},
	{ns: hubNamespace, resource: "secrets", verb: "list"},
	{resource: "users", verb: "impersonate"},
	{ns: workNamespace, group: "rbac.authorization.k8s.io", resource: "roles", verb: "create"},
	{ns: workNamespace, group: "rbac.authorization.k8s.io", resource: "rolebindings", verb: "create"},
	{group: "rbac.authorization.k8s.io", resource: "clusterroles", verb: "create"},
	{group: "rbac.authorization.k8s.io", resource: "clusterroles", verb: "escalate"},
	{group: "rbac.authorization.k8s.io", resource: "clusterroles", verb: "bind"},
	{group: "rbac.authorization.k8s.io", resource: "clusterrolebindings", verb: "create"},
}

// reliedOn is what a pod of the work namespace could use to change
// fleetjob's objects (other runs' Jobs, pods, plans and records) or to
// become the hub, and must never be able to.
func reliedOn() []access {
	var out []access
	for _, verb := range []string{"create", "update", "patch", "delete", "deletecollection"} {
		out = append(out, access{ns: workNamespace, group: "batch", resource: "jobs", verb: verb},
			access{ns: workNamespace, resource: "configmaps", verb: verb})
	}
	return append(out,
		access{ns: workNamespace, resource: "pods", verb: "delete"},
		access{ns: workNamespace, group: "rbac.authorization.k8s.io", resource: "rolebindings", verb: "update"},
		access{ns: hubNamespace, resource: "serviceaccounts", subresource: "token", name: "for-" + workNamespace, verb: "create"},
		access{ns: workNamespace, resource: "serviceaccounts", subresource: "token", name: "fleetjob-hub", verb: "create"})
}

// allowed asks the member, as an admin, whether the hub's identity may.
func allowed(g Gomega, a access) bool { return allowedTo(g, hubIdentity, a) }

// allowedTo asks the member, as an admin, whether who may.
func allowedTo(g Gomega, who identity, a access) bool {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: who.user, Groups: who.groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: a.ns, Group: a.group, Resource: a.resource, Subresource: a.subresource, Name: a.name, Verb: a.verb},
	}}
	g.Expect(memberC.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}

func registrationSecret(name string) *corev1.Secret {
	s := &corev1.Secret{}
	Expect(hubC.Get(ctx, client.ObjectKey{Namespace: registrationNamespace, Name: name}, s)).To(Succeed())
	return s
}

func registrations() []string {
	list := &corev1.SecretList{}
	Expect(hubC.List(ctx, list, client.InNamespace(registrationNamespace), client.MatchingLabels{fleetv1.RegistrationLabel: "true"})).To(Succeed())
	var names []string
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	return names
}

func memberHas(obj client.Object, ns, name string) bool {
	err := memberC.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return false
	}
	Expect(err).NotTo(HaveOccurred())
	return true
}

// splitYAML decodes the documents of multi-document YAML.
func splitYAML(text string) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, doc := range strings.Split(text, "\n---\n") {
		u := unstructured.Unstructured{}
		Expect(yaml.Unmarshal([]byte(doc), &u.Object)).To(Succeed())
		out = append(out, u)
	}
	return out
}

func kinds(objs []unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

var _ = Describe("kubectl fleetjob register", Ordered, func() {
	It("prints the member RBAC and the hub Secret with --dry-run=client -o yaml, and writes nothing", func() {
		r := run("register", "m1", "--member-context", "member", "--label", "env=test", "--dry-run=client", "-o", "yaml")
		Expect(r.err).NotTo(HaveOccurred())
		objs := splitYAML(r.out)
		Expect(kinds(objs)).To(Equal([]string{
			"Namespace/" + workNamespace, "Namespace/" + hubNamespace, "ServiceAccount/for-" + workNamespace, "Role/fleetjob-hub", "RoleBinding/fleetjob-hub",
			"ClusterRole/fleetjob-hub-nodes", "ClusterRoleBinding/fleetjob-hub-nodes-" + workNamespace, "Secret/m1",
		}))
		Expect(objs[2].GetNamespace()).To(Equal(hubNamespace), "the hub's identity lives where no Job runs")
		Expect(r.out).To(ContainSubstring("# member cluster (context member)"))
		Expect(r.out).To(ContainSubstring("# hub cluster"))
		secret := objs[7]
		Expect(secret.GetLabels()).To(Equal(map[string]string{fleetv1.RegistrationLabel: "true", "env": "test"}))
		kc, _, _ := unstructured.NestedString(secret.Object, "stringData", "kubeconfig")
		Expect(kc).To(ContainSubstring("token: <minted at apply time>"))
		_, err := kubeconfig.Parse([]byte(kc))
		Expect(err).NotTo(HaveOccurred())

		Expect(memberHas(&corev1.Namespace{}, "", workNamespace)).To(BeFalse())
		Expect(memberHas(&rbacv1.ClusterRole{}, "", "fleetjob-hub-nodes")).To(BeFalse())
		Expect(registrations()).To(BeEmpty())

		r = run("register", "m1", "--member-context", "member", "--dry-run")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("(dry run)"))
		Expect(r.errOut).To(ContainSubstring("warning: --dry-run is deprecated and can be replaced with --dry-run=client."))
		Expect(memberHas(&corev1.Namespace{}, "", workNamespace)).To(BeFalse())
	})

	It("has the member and the hub check every write with --dry-run=server, and stores nothing", func() {
		r := run("register", "m1", "--member-context", "member", "--work-namespace", "fleetjob-dry", "--dry-run=server")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("member context member: applied namespace/fleetjob-dry, namespace/fleetjob-hub, "))
		Expect(r.out).To(ContainSubstring("clusterrole/fleetjob-hub-nodes, clusterrolebinding/fleetjob-hub-nodes-fleetjob-dry (server dry run)"))
		// The other specs' registrations may have created fleetjob-hub.
		Expect(r.out).To(MatchRegexp(`not checked (serviceaccount/fleetjob-hub/for-fleetjob-dry, )?role/fleetjob-hub, rolebinding/fleetjob-hub: ` +
			`their namespace does not exist yet, and a dry run creates none \(server dry run\)`))
		Expect(r.out).To(ContainSubstring("secret/m1 created in namespace " + registrationNamespace + " on the hub (server dry run)"))
		Expect(memberHas(&corev1.Namespace{}, "", "fleetjob-dry")).To(BeFalse())
		Expect(memberHas(&rbacv1.ClusterRoleBinding{}, "", "fleetjob-hub-nodes-fleetjob-dry")).To(BeFalse())
		Expect(registrations()).NotTo(ContainElement("m1"))
	})

	It("checks the hub before touching the member", func() {
		r := run("register", "m0", "--member-context", "member", "--work-namespace", "never-created", "--registration-namespace", "no-such-namespace")
		Expect(r.err).To(MatchError(ContainSubstring("namespace no-such-namespace does not exist on the hub")))
		Expect(memberHas(&corev1.Namespace{}, "", "never-created")).To(BeFalse())
	})

	It("names a member context that does not exist", func() {
		r := run("register", "m0", "--member-context", "nope")
		Expect(r.err).To(MatchError(ContainSubstring(`member context "nope"`)))
	})

	It("registers the member and prints the token's expiry, never the token", func() {
		r := run("register", "m1", "--member-context", "member", "--label", "env=test", "--label", "tier=gold")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("expires"))
		Expect(r.out).To(ContainSubstring(`cluster "m1" registered`))
		Expect(r.out).To(ContainSubstring("19 permissions granted"))

		s := registrationSecret("m1")
		Expect(s.Labels).To(Equal(map[string]string{fleetv1.RegistrationLabel: "true", "env": "test", "tier": "gold"}))
		Expect(s.Annotations).To(HaveKeyWithValue(fleetv1.NamespaceAnnotation, workNamespace))
		raw, err := clientcmd.Load(s.Data[fleetv1.KubeconfigKey])
		Expect(err).NotTo(HaveOccurred())
		user := raw.AuthInfos[raw.Contexts[raw.CurrentContext].AuthInfo]
		Expect(user.Token).NotTo(BeEmpty())
		Expect(r.out + r.errOut).NotTo(ContainSubstring(user.Token))
		cluster := raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster]
		Expect(strings.TrimSuffix(cluster.Server, "/")).To(Equal(strings.TrimSuffix(memberEnv.Config.Host, "/")))
		Expect(cluster.CertificateAuthorityData).To(Equal(memberEnv.Config.CAData))
	})

	It("stores a kubeconfig the hub accepts, that may list Jobs in the work namespace and not Secrets", func() {
		cfg, err := kubeconfig.Parse(registrationSecret("m1").Data[fleetv1.KubeconfigKey])
		Expect(err).NotTo(HaveOccurred())
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		Expect(c.List(ctx, &batchv1.JobList{}, client.InNamespace(workNamespace))).To(Succeed())
		Expect(c.List(ctx, &corev1.NodeList{})).To(Succeed())
		Expect(apierrors.IsForbidden(c.List(ctx, &corev1.SecretList{}, client.InNamespace(workNamespace)))).To(BeTrue())
		Expect(apierrors.IsForbidden(c.List(ctx, &batchv1.JobList{}, client.InNamespace("default")))).To(BeTrue())
	})

	It("grants the hub's identity exactly what the hub needs", func() {
		for _, a := range needed() {
			Expect(allowed(Default, a)).To(BeTrue(), "the hub needs to %s", a)
		}
		for _, a := range notNeeded {
			Expect(allowed(Default, a)).To(BeFalse(), "the hub must not %s", a)
		}
	})

	It("keeps the hub's identity out of the Jobs' reach: a pod's ServiceAccount in the work namespace may do nothing fleetjob relies on", func() {
		Expect(memberHas(&corev1.ServiceAccount{}, workNamespace, "fleetjob-hub")).To(BeFalse(), "no identity of the hub in the work namespace")
		Expect(memberHas(&corev1.ServiceAccount{}, hubNamespace, "for-"+workNamespace)).To(BeTrue())
		for _, a := range reliedOn() {
			Expect(allowedTo(Default, podIdentity, a)).To(BeFalse(), "a pod of the work namespace must not %s", a)
		}
	})

	It("refuses a member where the work namespace's pods may change fleetjob's objects, and writes nothing on the hub", func() {
		const ns = "fleetjob-leaky"
		leaky := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "leaky-edit"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "leaky-edit"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns}},
		}
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "leaky-edit"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"update"}}}}
		Expect(memberC.Create(ctx, role)).To(Succeed())
		Expect(memberC.Create(ctx, leaky)).To(Succeed())
		DeferCleanup(func() {
			Expect(memberC.Delete(ctx, leaky)).To(Succeed())
			Expect(memberC.Delete(ctx, role)).To(Succeed())
		})
		r := run("register", "leaky", "--member-context", "member", "--work-namespace", ns)
		Expect(r.err).To(MatchError(ContainSubstring("serviceaccount " + ns + "/default, which a ClusterJob's pods may run as, may update configmaps in namespace " + ns)))
		Expect(r.err).To(MatchError(ContainSubstring("Nothing was written on the hub")))
		Expect(registrations()).To(Equal([]string{"m1"}))
		Expect(run("unregister", "leaky", "--purge", "--member-context", "member", "--work-namespace", ns).err).NotTo(HaveOccurred())
	})

	It("is idempotent: a second run changes nothing but the token", func() {
		objs := []struct {
			obj      client.Object
			ns, name string
		}{
			{&corev1.Namespace{}, "", workNamespace},
			{&corev1.Namespace{}, "", hubNamespace},
			{&corev1.ServiceAccount{}, hubNamespace, "for-" + workNamespace},
			{&rbacv1.Role{}, workNamespace, "fleetjob-hub"},
			{&rbacv1.RoleBinding{}, workNamespace, "fleetjob-hub"},
			{&rbacv1.ClusterRole{}, "", "fleetjob-hub-nodes"},
			{&rbacv1.ClusterRoleBinding{}, "", "fleetjob-hub-nodes-" + workNamespace},
		}
		versions := func() []string {
			var out []string
			for _, o := range objs {
				Expect(memberHas(o.obj, o.ns, o.name)).To(BeTrue(), o.name)
				out = append(out, o.obj.GetResourceVersion())
			}
			return out
		}
		before, secretBefore := versions(), registrationSecret("m1")
		r := run("register", "m1", "--member-context", "member", "--label", "env=test", "--label", "tier=gold")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("secret/m1 configured"))
		Expect(versions()).To(Equal(before))
		Expect(registrations()).To(Equal([]string{"m1"}))
		after := registrationSecret("m1")
		Expect(after.Labels).To(Equal(secretBefore.Labels))
		Expect(after.Annotations).To(Equal(secretBefore.Annotations))
		Expect(after.Data[fleetv1.KubeconfigKey]).NotTo(Equal(secretBefore.Data[fleetv1.KubeconfigKey]), "the token is new")
	})

	It("grants what a drain needs only where the cluster's set allows drains, and takes it back when the set stops", func() {
		drain := []access{{resource: "nodes", verb: "patch"}, {resource: "pods", verb: "list"}, {ns: "default", resource: "pods", verb: "list"},
			{resource: "pods", subresource: "eviction", verb: "create"}, {ns: "default", resource: "pods", subresource: "eviction", verb: "create"}}
		for _, a := range drain {
			Expect(allowed(Default, a)).To(BeFalse(), "no drain before the set allows it: %s", a)
		}
		setAllowDrain := func(allow bool) {
			set := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: fleetv1.DefaultClusterSet}}
			_, err := controllerutil.CreateOrUpdate(ctx, hubC, set, func() error { set.Spec.AllowDrain = allow; return nil })
			Expect(err).NotTo(HaveOccurred())
		}
		existed := hubC.Get(ctx, client.ObjectKey{Name: fleetv1.DefaultClusterSet}, &fleetv1.ClusterSet{}) == nil
		setAllowDrain(true)
		if !existed {
			DeferCleanup(func() {
				Expect(hubC.Delete(ctx, &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: fleetv1.DefaultClusterSet}})).To(Succeed())
			})
		}
		r := run("register", "m1", "--member-context", "member", "--label", "env=test", "--label", "tier=gold")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("drains allowed"))
		for _, a := range drain {
			Expect(allowed(Default, a)).To(BeTrue(), "a drain needs to %s", a)
		}
		for _, a := range []access{{resource: "nodes", verb: "delete"}, {resource: "pods", verb: "delete"}, {ns: "default", resource: "pods", verb: "create"}} {
			Expect(allowed(Default, a)).To(BeFalse(), "a drain does not %s", a)
		}

		setAllowDrain(false)
		r = run("register", "m1", "--member-context", "member", "--label", "env=test", "--label", "tier=gold")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(memberHas(&rbacv1.ClusterRoleBinding{}, "", "fleetjob-hub-drain-"+workNamespace)).To(BeFalse(), "the drain binding is revoked")
		for _, a := range drain {
			Expect(allowed(Default, a)).To(BeFalse(), "no drain once the set stops allowing it: %s", a)
		}
		for _, a := range needed() {
			Expect(allowed(Default, a)).To(BeTrue(), "the hub still may %s", a)
		}
	})

	It("migrates a registration whose identity lives in the work namespace: register again moves it and revokes the old one", func() {
		const ns = "fleetjob-legacy"
		old := serviceAccount(ns, "fleetjob-hub")
		oldToken := legacyRegistration(ns)
		oldClient := func() kubernetes.Interface {
			cfg := rest.AnonymousClientConfig(memberEnv.Config)
			cfg.BearerToken = oldToken
			cs, err := kubernetes.NewForConfig(cfg)
			Expect(err).NotTo(HaveOccurred())
			return cs
		}
		_, err := oldClient().BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred(), "the old identity works before the migration")

		r := run("register", "legacy", "--member-context", "member", "--work-namespace", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("migrated the hub's identity from serviceaccount " + ns + "/fleetjob-hub to " + hubNamespace + "/for-" + ns))
		Expect(memberHas(&corev1.ServiceAccount{}, ns, "fleetjob-hub")).To(BeFalse())
		// The API server checks the ServiceAccount through its informer: a
		// deleted one stops authenticating a moment later.
		Eventually(func() error {
			_, err := oldClient().BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
			return err
		}).Should(Satisfy(apierrors.IsUnauthorized), "the old token no longer authenticates")
		cfg, err := kubeconfig.Parse(registrationSecret("legacy").Data[fleetv1.KubeconfigKey])
		Expect(err).NotTo(HaveOccurred())
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		Expect(c.List(ctx, &batchv1.JobList{}, client.InNamespace(ns))).To(Succeed(), "the hub's new identity works")
		for _, a := range []access{{ns: ns, group: "batch", resource: "jobs", verb: "create"}, {ns: ns, resource: "configmaps", verb: "update"}, {resource: "nodes", verb: "list"}} {
			Expect(allowedTo(Default, old, a)).To(BeFalse(), "the old identity may no longer %s", a)
		}
		rb := &rbacv1.RoleBinding{}
		Expect(memberC.Get(ctx, client.ObjectKey{Namespace: ns, Name: "fleetjob-hub"}, rb)).To(Succeed())
		Expect(rb.Subjects).To(Equal([]rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "for-" + ns, Namespace: hubNamespace}}))

		r = run("register", "legacy", "--member-context", "member", "--work-namespace", ns)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).NotTo(ContainSubstring("migrated"), "a migrated registration has nothing left to move")

		r = run("unregister", "legacy", "--purge", "--member-context", "member")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("serviceaccount/" + hubNamespace + "/for-" + ns + " deleted"))
		Expect(memberHas(&corev1.ServiceAccount{}, hubNamespace, "for-"+ns)).To(BeFalse())
	})

	It("takes the member's own kubeconfig with --member-kubeconfig, and the hub's address with --server", func() {
		r := run("register", "m2", "--member-kubeconfig", memberKubeconfig, "--work-namespace", "fleetjob-m2", "--server", "https://m2.fleet.internal:6443")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("https://m2.fleet.internal:6443"))
		raw, err := clientcmd.Load(registrationSecret("m2").Data[fleetv1.KubeconfigKey])
		Expect(err).NotTo(HaveOccurred())
		Expect(raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster].Server).To(Equal("https://m2.fleet.internal:6443"))
		Expect(registrationSecret("m2").Annotations).To(HaveKeyWithValue(fleetv1.NamespaceAnnotation, "fleetjob-m2"))

		r = run("unregister", "m2", "--purge", "--member-kubeconfig", memberKubeconfig)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("clusterrolebinding/fleetjob-hub-nodes-fleetjob-m2 deleted"))
		Expect(r.out).NotTo(ContainSubstring("clusterrole/fleetjob-hub-nodes deleted"), "m1 still binds it")
		Expect(memberHas(&rbacv1.ClusterRole{}, "", "fleetjob-hub-nodes")).To(BeTrue())
	})

	It("refuses an identity the member grants more than fleetjob asked, and writes nothing on the hub", func() {
		greedy := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "too-generous"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			// The hub's identities are ServiceAccounts of namespace fleetjob-hub.
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts:" + hubNamespace}},
		}
		Expect(memberC.Create(ctx, greedy)).To(Succeed())
		DeferCleanup(func() { Expect(memberC.Delete(ctx, greedy)).To(Succeed()) })
		r := run("register", "greedy", "--member-context", "member", "--work-namespace", "fleetjob-greedy")
		Expect(r.err).To(MatchError(ContainSubstring("the new token may also get secrets in namespace fleetjob-greedy")))
		Expect(r.err).To(MatchError(ContainSubstring("Nothing was written on the hub")))
		Expect(registrations()).To(Equal([]string{"m1"}))
		Expect(run("unregister", "greedy", "--purge", "--member-context", "member", "--work-namespace", "fleetjob-greedy").err).NotTo(HaveOccurred())
	})

	It("refuses bad input, naming the flag", func() {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"register", "Bad_Name", "--member-context", "member"}, "not a valid Secret name"},
			{[]string{"register", "m3", "--member-context", "member", "--label", "novalue"}, `--label "novalue": want key=value`},
			{[]string{"register", "m3", "--member-context", "member", "--label", fleetv1.RegistrationLabel + "=false"}, "set by register itself"},
			{[]string{"register", "m3", "--member-context", "member", "--server", "http://m3:6443"}, "not https"},
			{[]string{"register", "m3", "--member-context", "member", "--token-duration", "1m"}, "--token-duration"},
			{[]string{"register", "m3"}, "--member-context is required"},
			{[]string{"register", "m3", "--member-context", "member", "-o", "table"}, "-o table is not supported"},
			{[]string{"unregister", "m3", "--purge"}, "--purge needs --member-context"},
			{[]string{"unregister", "m3"}, `cluster "m3" is not registered`},
		} {
			Expect(run(tc.args...).err).To(MatchError(ContainSubstring(tc.want)), strings.Join(tc.args, " "))
		}
		Expect(registrations()).To(Equal([]string{"m1"}))
	})

	It("unregisters, and with --purge removes the member identity and namespace", func() {
		r := run("unregister", "m1", "--purge", "--member-context", "member")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(registrations()).To(BeEmpty())
		Expect(memberHas(&rbacv1.ClusterRoleBinding{}, "", "fleetjob-hub-nodes-"+workNamespace)).To(BeFalse())
		Expect(memberHas(&rbacv1.ClusterRole{}, "", "fleetjob-hub-nodes")).To(BeFalse())
		Expect(memberHas(&rbacv1.RoleBinding{}, workNamespace, "fleetjob-hub")).To(BeFalse())
		Expect(memberHas(&rbacv1.Role{}, workNamespace, "fleetjob-hub")).To(BeFalse())
		Expect(memberHas(&corev1.ServiceAccount{}, hubNamespace, "for-"+workNamespace)).To(BeFalse())
		// envtest runs no namespace controller: the namespace stays
		// Terminating instead of disappearing.
		ns := &corev1.Namespace{}
		if memberHas(ns, "", workNamespace) {
			Expect(ns.DeletionTimestamp).NotTo(BeNil())
		}
		for _, a := range needed() {
			Expect(allowed(Default, a)).To(BeFalse(), "after --purge the identity may not %s", a)
		}
	})
})

// legacyRegistration creates in the member what register created before
// the hub's identity moved out of the work namespace ns, and a token of
// that identity.
func legacyRegistration(ns string) string {
	labels := map[string]string{"app.kubernetes.io/managed-by": "kubectl-fleetjob", "app.kubernetes.io/part-of": "fleetjob"}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "fleetjob-hub", Namespace: ns}}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-hub", Namespace: ns, Labels: labels}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-hub", Namespace: ns, Labels: labels}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch", "create", "delete", "deletecollection"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete", "deletecollection"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-hub", Namespace: ns, Labels: labels}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "fleetjob-hub"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-hub-nodes", Labels: labels}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-hub-nodes-" + ns, Labels: labels}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "fleetjob-hub-nodes"}},
	} {
		if err := memberC.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	}
	cs, err := kubernetes.NewForConfig(memberEnv.Config)
	Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "fleetjob-hub",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return tr.Status.Token
}
