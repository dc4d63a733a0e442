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

package member

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/access"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// decode turns an apply configuration into the API type it configures.
func decode[T any](t *testing.T, ac any) T {
	t.Helper()
	data, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var wantLabels = map[string]string{"app.kubernetes.io/managed-by": "kubectl-fleetjob", "app.kubernetes.io/part-of": "fleetjob"}

func TestBuildRules(t *testing.T) {
	work := []string{"get", "list", "watch", "create", "delete", "deletecollection"}
	configMaps := append(slices.Clone(work), "update")
	clusterRules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{"kube-system"}, Verbs: []string{"get"}},
	}
	for _, tc := range []struct {
		ns              string
		wantRole        []rbacv1.PolicyRule
		wantNodes       []rbacv1.PolicyRule
		wantCRBName     string
		wantSubjectName string
	}{
		{
			ns: "fleetjob-system",
			wantRole: []rbacv1.PolicyRule{
				{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: work},
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: configMaps},
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
				{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list"}},
			},
			wantNodes:       clusterRules,
			wantCRBName:     "fleetjob-hub-nodes-fleetjob-system",
			wantSubjectName: "for-fleetjob-system",
		},
		{
			ns: "jobs",
			wantRole: []rbacv1.PolicyRule{
				{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: work},
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: configMaps},
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
				{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list"}},
			},
			wantNodes:       clusterRules,
			wantCRBName:     "fleetjob-hub-nodes-jobs",
			wantSubjectName: "for-jobs",
		},
	} {
		t.Run(tc.ns, func(t *testing.T) {
			o := Build(tc.ns, fleetv1.PodSecurityRestricted, false)
			role := decode[rbacv1.Role](t, o.Role)
			if diff := cmp.Diff(tc.wantRole, role.Rules); diff != "" {
				t.Errorf("Role rules (-want +got):\n%s", diff)
			}
			if role.Namespace != tc.ns || role.Name != "fleetjob-hub" {
				t.Errorf("Role is %s/%s, want %s/fleetjob-hub", role.Namespace, role.Name, tc.ns)
			}
			nodes := decode[rbacv1.ClusterRole](t, o.ClusterRole)
			if diff := cmp.Diff(tc.wantNodes, nodes.Rules); diff != "" {
				t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
			}
			// The subject lives in fleetjob-hub, where no Job runs: no pod
			// of the work namespace can run as it.
			wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: tc.wantSubjectName, Namespace: "fleetjob-hub"}}
			rb := decode[rbacv1.RoleBinding](t, o.RoleBinding)
			if diff := cmp.Diff(rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "fleetjob-hub"}, rb.RoleRef); diff != "" {
				t.Errorf("RoleBinding roleRef (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSubjects, rb.Subjects); diff != "" {
				t.Errorf("RoleBinding subjects (-want +got):\n%s", diff)
			}
			crb := decode[rbacv1.ClusterRoleBinding](t, o.ClusterRoleBinding)
			if crb.Name != tc.wantCRBName {
				t.Errorf("ClusterRoleBinding name = %s, want %s", crb.Name, tc.wantCRBName)
			}
			if diff := cmp.Diff(rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "fleetjob-hub-nodes"}, crb.RoleRef); diff != "" {
				t.Errorf("ClusterRoleBinding roleRef (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSubjects, crb.Subjects); diff != "" {
				t.Errorf("ClusterRoleBinding subjects (-want +got):\n%s", diff)
			}
			for _, obj := range []metav1.ObjectMeta{role.ObjectMeta, nodes.ObjectMeta, rb.ObjectMeta, crb.ObjectMeta,
				decode[corev1.ServiceAccount](t, o.ServiceAccount).ObjectMeta} {
				if diff := cmp.Diff(wantLabels, obj.Labels); diff != "" {
					t.Errorf("%s labels (-want +got):\n%s", obj.Name, diff)
				}
			}
			wantNSLabels := maps.Clone(wantLabels)
			wantNSLabels["pod-security.kubernetes.io/enforce"] = "restricted"
			if diff := cmp.Diff(wantNSLabels, decode[corev1.Namespace](t, o.Namespace).Labels); diff != "" {
				t.Errorf("Namespace labels (-want +got):\n%s", diff)
			}
		})
	}
}

// asRules turns access checks into the rules that would grant exactly them.
func asRules(attrs []authorizationv1.ResourceAttributes) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(attrs))
	for i, a := range attrs {
		resource := a.Resource
		if a.Subresource != "" {
			resource += "/" + a.Subresource
		}
		out[i] = rbacv1.PolicyRule{APIGroups: []string{a.Group}, Resources: []string{resource}, Verbs: []string{a.Verb}}
		if a.Name != "" {
			out[i].ResourceNames = []string{a.Name}
		}
	}
	return out
}

// TestRulesGrantExactlyRequired proves the Role and ClusterRoles grant
// every access the hub checks or uses when granted, and nothing beyond it:
// the drain ClusterRole exactly access.Drain.
func TestRulesGrantExactlyRequired(t *testing.T) {
	o := Build("w", fleetv1.DefaultPodSecurityLevel, true)
	var namespaced, cluster []authorizationv1.ResourceAttributes
	for _, a := range append(access.Required("w"), access.Optional("w")...) {
		if a.Namespace == "" {
			cluster = append(cluster, a)
		} else {
			namespaced = append(namespaced, a)
		}
	}
	for _, tc := range []struct {
		name  string
		rules []rbacv1.PolicyRule
		want  []authorizationv1.ResourceAttributes
	}{
		{"Role", decode[rbacv1.Role](t, o.Role).Rules, namespaced},
		{"ClusterRole", decode[rbacv1.ClusterRole](t, o.ClusterRole).Rules, cluster},
		{"DrainClusterRole", decode[rbacv1.ClusterRole](t, o.DrainClusterRole).Rules, access.Drain()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ok, missing := validation.Covers(tc.rules, asRules(tc.want)); !ok {
				t.Errorf("%s does not grant %v", tc.name, missing)
			}
			if ok, extra := validation.Covers(asRules(tc.want), tc.rules); !ok {
				t.Errorf("%s grants more than required: %v", tc.name, extra)
			}
		})
	}
}

func TestRequiredAndForbiddenDisjoint(t *testing.T) {
	for _, ns := range []string{"fleetjob-system", "default"} {
		req := append(access.Required(ns), access.Drain()...)
		for _, f := range Forbidden(ns) {
			if slices.Contains(req, f) {
				t.Errorf("namespace %s: %s is both required and forbidden", ns, access.Describe(f))
			}
		}
	}
}

// TestBuildDrain: the drain ClusterRole and its binding of the hub's
// identity are built, listed and named only where the set allows drains.
func TestBuildDrain(t *testing.T) {
	base := []string{"namespace/w", "namespace/fleetjob-hub", "serviceaccount/fleetjob-hub/for-w", "role/fleetjob-hub", "rolebinding/fleetjob-hub",
		"clusterrole/fleetjob-hub-nodes", "clusterrolebinding/fleetjob-hub-nodes-w"}
	for _, tc := range []struct {
		name      string
		drain     bool
		wantNames []string
	}{
		{name: "allowed", drain: true, wantNames: append(slices.Clone(base), "clusterrole/fleetjob-hub-drain", "clusterrolebinding/fleetjob-hub-drain-w")},
		{name: "not allowed", wantNames: base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Build("w", fleetv1.DefaultPodSecurityLevel, tc.drain)
			if diff := cmp.Diff(tc.wantNames, o.Names()); diff != "" {
				t.Errorf("Names (-want +got):\n%s", diff)
			}
			if len(o.List()) != len(tc.wantNames) {
				t.Errorf("List has %d objects, want %d", len(o.List()), len(tc.wantNames))
			}
			if o.AllowsDrain() != tc.drain {
				t.Errorf("AllowsDrain = %v, want %v", o.AllowsDrain(), tc.drain)
			}
			if !tc.drain {
				if o.DrainClusterRole != nil || o.DrainClusterRoleBinding != nil {
					t.Errorf("drain objects built for a set that does not allow drains")
				}
				return
			}
			crb := decode[rbacv1.ClusterRoleBinding](t, o.DrainClusterRoleBinding)
			if diff := cmp.Diff(rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "fleetjob-hub-drain"}, crb.RoleRef); diff != "" {
				t.Errorf("drain ClusterRoleBinding roleRef (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]rbacv1.Subject{{Kind: "ServiceAccount", Name: "for-w", Namespace: "fleetjob-hub"}}, crb.Subjects); diff != "" {
				t.Errorf("drain ClusterRoleBinding subjects (-want +got):\n%s", diff)
			}
			for _, obj := range []metav1.ObjectMeta{crb.ObjectMeta, decode[rbacv1.ClusterRole](t, o.DrainClusterRole).ObjectMeta} {
				if diff := cmp.Diff(wantLabels, obj.Labels); diff != "" {
					t.Errorf("%s labels (-want +got):\n%s", obj.Name, diff)
				}
			}
		})
	}
}

// TestRevokeDrain: registering again where the set no longer allows drains
// deletes that work namespace's drain binding, and neither another's nor
// the ClusterRole they share; purging the last one takes the ClusterRole.
func TestRevokeDrain(t *testing.T) {
	cs := fake.NewClientset()
	ctx := context.Background()
	for _, ns := range []string{"a", "b"} {
		if err := Apply(ctx, cs, Build(ns, fleetv1.DefaultPodSecurityLevel, true)); err != nil {
			t.Fatalf("Apply(%s): %v", ns, err)
		}
	}
	if err := Apply(ctx, cs, Build("a", fleetv1.DefaultPodSecurityLevel, false)); err != nil {
		t.Fatal(err)
	}
	got, err := RevokeDrain(ctx, cs, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"clusterrolebinding/fleetjob-hub-drain-a"}, got); diff != "" {
		t.Errorf("RevokeDrain(a) deleted (-want +got):\n%s", diff)
	}
	bindings, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bindings.Items {
		names = append(names, b.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"fleetjob-hub-drain-b", "fleetjob-hub-nodes-a", "fleetjob-hub-nodes-b"}, names); diff != "" {
		t.Errorf("clusterrolebindings after RevokeDrain(a) (-want +got):\n%s", diff)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, "fleetjob-hub-drain", metav1.GetOptions{}); err != nil {
		t.Errorf("RevokeDrain(a) took the ClusterRole b binds: %v", err)
	}
	if got, err := RevokeDrain(ctx, cs, "a", nil); err != nil || len(got) != 0 {
		t.Errorf("RevokeDrain again = %v, %v; want nothing, no error", got, err)
	}
	got, err = Purge(ctx, cs, "b")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"clusterrolebinding/fleetjob-hub-nodes-b", "clusterrolebinding/fleetjob-hub-drain-b", "rolebinding/fleetjob-hub", "role/fleetjob-hub",
		"serviceaccount/fleetjob-hub/for-b", "clusterrole/fleetjob-hub-drain", "namespace/b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Purge(b), the last user of the drain ClusterRole, deleted (-want +got):\n%s", diff)
	}
}

// TestRevokeDrainServerDryRun: the delete is a dry run.
func TestRevokeDrainServerDryRun(t *testing.T) {
	cs := fake.NewClientset()
	dryRunOnly(t, cs)
	got, err := RevokeDrain(context.Background(), cs, "w", []string{metav1.DryRunAll})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"clusterrolebinding/fleetjob-hub-drain-w"}, got); diff != "" {
		t.Errorf("RevokeDrain deleted (-want +got):\n%s", diff)
	}
}

func TestApplyPurge(t *testing.T) {
	cs := fake.NewClientset()
	ctx := context.Background()
	for _, ns := range []string{"a", "b"} {
		if err := Apply(ctx, cs, Build(ns, fleetv1.DefaultPodSecurityLevel, false)); err != nil {
			t.Fatalf("Apply(%s): %v", ns, err)
		}
	}
	got, err := Purge(ctx, cs, "a")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"clusterrolebinding/fleetjob-hub-nodes-a", "rolebinding/fleetjob-hub", "role/fleetjob-hub", "serviceaccount/fleetjob-hub/for-a", "namespace/a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Purge(a) deleted (-want +got):\n%s", diff)
	}
	got, err = Purge(ctx, cs, "b")
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"clusterrolebinding/fleetjob-hub-nodes-b", "rolebinding/fleetjob-hub", "role/fleetjob-hub", "serviceaccount/fleetjob-hub/for-b", "clusterrole/fleetjob-hub-nodes", "namespace/b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Purge(b), the last user of the ClusterRole, deleted (-want +got):\n%s", diff)
	}
	if got, err = Purge(ctx, cs, "b"); err != nil || len(got) != 0 {
		t.Errorf("Purge again = %v, %v; want nothing, no error", got, err)
	}
}

func TestPurgeKeepsSystemNamespaces(t *testing.T) {
	cs := fake.NewClientset()
	ctx := context.Background()
	if err := Apply(ctx, cs, Build("default", fleetv1.DefaultPodSecurityLevel, false)); err != nil {
		t.Fatal(err)
	}
	got, err := Purge(ctx, cs, "default")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, "namespace/default") {
		t.Errorf("Purge(default) deleted the default namespace: %v", got)
	}
}

// TestBuildLeavesSystemNamespacesPodSecurity: a work namespace of
// Kubernetes' own keeps its Pod Security labels; any other enforces the
// set's level.
func TestBuildLeavesSystemNamespacesPodSecurity(t *testing.T) {
	for _, tc := range []struct {
		ns   string
		want string
	}{
		{ns: "fleetjob-system", want: "baseline"},
		{ns: "default"},
		{ns: "kube-system"},
	} {
		t.Run(tc.ns, func(t *testing.T) {
			got := decode[corev1.Namespace](t, Build(tc.ns, fleetv1.PodSecurityBaseline, false).Namespace).Labels["pod-security.kubernetes.io/enforce"]
			if got != tc.want {
				t.Errorf("enforce label of namespace %s = %q, want %q", tc.ns, got, tc.want)
			}
		})
	}
}

// legacyRegistration is what register applied before the hub's identity
// moved: ServiceAccount fleetjob-hub in the work namespace, bound there.
func legacyRegistration(ns string) []runtime.Object {
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "fleetjob-hub", Namespace: ns}}
	return []runtime.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-hub", Namespace: ns, Labels: wantLabels}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-hub", Namespace: ns, Labels: wantLabels}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "fleetjob-hub"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-hub-nodes-" + ns, Labels: wantLabels}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "fleetjob-hub-nodes"}},
	}
}

// TestMigrate: the bindings name both identities while the hub switches
// tokens, then only the new one, and the old ServiceAccount is gone.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	const ns = "w"
	cs := fake.NewClientset(legacyRegistration(ns)...)
	subjects := func() [][]rbacv1.Subject {
		rb, err := cs.RbacV1().RoleBindings(ns).Get(ctx, "fleetjob-hub", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "fleetjob-hub-nodes-"+ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return [][]rbacv1.Subject{rb.Subjects, crb.Subjects}
	}
	legacy, err := HasLegacy(ctx, cs, ns)
	if err != nil || !legacy {
		t.Fatalf("HasLegacy = %v, %v; want true", legacy, err)
	}
	objs := Build(ns, fleetv1.DefaultPodSecurityLevel, false)
	if err := Apply(ctx, cs, objs.WithLegacySubject()); err != nil {
		t.Fatal(err)
	}
	newSA := rbacv1.Subject{Kind: "ServiceAccount", Name: "for-" + ns, Namespace: "fleetjob-hub"}
	oldSA := rbacv1.Subject{Kind: "ServiceAccount", Name: "fleetjob-hub", Namespace: ns}
	if diff := cmp.Diff([][]rbacv1.Subject{{newSA, oldSA}, {newSA, oldSA}}, subjects()); diff != "" {
		t.Errorf("bindings while migrating (-want +got):\n%s", diff)
	}
	deleted, err := Revoke(ctx, cs, objs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"serviceaccount/w/fleetjob-hub"}, deleted); diff != "" {
		t.Errorf("Revoke deleted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]rbacv1.Subject{{newSA}, {newSA}}, subjects()); diff != "" {
		t.Errorf("bindings after the migration (-want +got):\n%s", diff)
	}
	if legacy, err := HasLegacy(ctx, cs, ns); err != nil || legacy {
		t.Errorf("HasLegacy after Revoke = %v, %v; want false", legacy, err)
	}
}

// TestLegacyOnlyOurs: a ServiceAccount fleetjob-hub that register did not
// create is someone else's, and stays.
func TestLegacyOnlyOurs(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-hub", Namespace: "w"}})
	if legacy, err := HasLegacy(ctx, cs, "w"); err != nil || legacy {
		t.Errorf("HasLegacy = %v, %v; want false for an account register did not label", legacy, err)
	}
	if _, err := Purge(ctx, cs, "w"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("w").Get(ctx, "fleetjob-hub", metav1.GetOptions{}); err != nil {
		t.Errorf("Purge deleted a ServiceAccount it did not create: %v", err)
	}
}

// TestPurgeUnmigrated: purging a registration never migrated revokes its
// identity in the work namespace too.
func TestPurgeUnmigrated(t *testing.T) {
	cs := fake.NewClientset(legacyRegistration("w")...)
	got, err := Purge(context.Background(), cs, "w")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"clusterrolebinding/fleetjob-hub-nodes-w", "rolebinding/fleetjob-hub", "serviceaccount/w/fleetjob-hub"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Purge deleted (-want +got):\n%s", diff)
	}
}

// dryRunOnly is a member whose every write must ask for dryRun=All, and
// is then answered without being stored, as an API server does.
func dryRunOnly(t *testing.T, cs *fake.Clientset) {
	t.Helper()
	cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		var dryRun []string
		switch a := a.(type) {
		case k8stesting.PatchActionImpl:
			dryRun = a.PatchOptions.DryRun
		case k8stesting.DeleteActionImpl:
			dryRun = a.DeleteOptions.DryRun
		case k8stesting.CreateActionImpl:
			dryRun = a.CreateOptions.DryRun
		default:
			return false, nil, nil
		}
		if !slices.Equal(dryRun, []string{metav1.DryRunAll}) {
			t.Errorf("%s %s without dryRun=All", a.GetVerb(), a.GetResource().Resource)
		}
		return true, nil, nil
	})
}

// TestApplyServerDryRun: every apply is a dry run, the drain objects
// included where the set allows drains, and the objects of a namespace
// that does not exist yet are left out, named.
func TestApplyServerDryRun(t *testing.T) {
	for _, tc := range []struct {
		name        string
		drain       bool
		wantApplied []string
	}{
		{name: "no drain", wantApplied: []string{"namespaces", "namespaces", "serviceaccounts", "clusterroles", "clusterrolebindings"}},
		{name: "drain", drain: true, wantApplied: []string{"namespaces", "namespaces", "serviceaccounts", "clusterroles", "clusterrolebindings", "clusterroles", "clusterrolebindings"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: HubNamespace}})
			dryRunOnly(t, cs)
			unchecked, err := ApplyServerDryRun(context.Background(), cs, Build("w", fleetv1.DefaultPodSecurityLevel, tc.drain))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"role/fleetjob-hub", "rolebinding/fleetjob-hub"}, unchecked); diff != "" {
				t.Errorf("unchecked (-want +got):\n%s", diff)
			}
			var applied []string
			for _, a := range cs.Actions() {
				if a.GetVerb() == "patch" {
					applied = append(applied, a.GetResource().Resource)
				}
			}
			if diff := cmp.Diff(tc.wantApplied, applied); diff != "" {
				t.Errorf("applied (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPurgeServerDryRun: every delete is a dry run, nothing is deleted,
// and the ClusterRole that only this namespace's binding uses is counted.
func TestPurgeServerDryRun(t *testing.T) {
	cs := fake.NewClientset()
	ctx := context.Background()
	if err := Apply(ctx, cs, Build("w", fleetv1.DefaultPodSecurityLevel, false)); err != nil {
		t.Fatal(err)
	}
	dryRunOnly(t, cs)
	got, err := PurgeServerDryRun(ctx, cs, "w")
	if err != nil {
		t.Fatal(err)
	}
	// The fake member answers every dry-run delete, even of the drain
	// objects that do not exist; a real one answers NotFound.
	want := []string{"clusterrolebinding/fleetjob-hub-nodes-w", "clusterrolebinding/fleetjob-hub-drain-w", "rolebinding/fleetjob-hub", "role/fleetjob-hub",
		"serviceaccount/fleetjob-hub/for-w", "clusterrole/fleetjob-hub-nodes", "clusterrole/fleetjob-hub-drain", "namespace/w"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PurgeServerDryRun (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, slices.DeleteFunc(PurgeCandidates("w"), func(s string) bool { return s == "serviceaccount/w/fleetjob-hub" })); diff != "" {
		t.Errorf("PurgeCandidates, but for the legacy identity (-want +got):\n%s", diff)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "w", metav1.GetOptions{}); err != nil {
		t.Errorf("the dry run deleted namespace w: %v", err)
	}
}
