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

// Package member is what `kubectl fleetjob register` does in a member
// cluster: the least-privilege identity of the hub (a ServiceAccount in its
// own namespace, where no Job runs, a Role in the work namespace, a
// ClusterRole that reads nodes and, where the cluster's set allows drains,
// one that drains them), its token, the kubeconfig the hub stores, and the
// access reviews that prove the token can do what the hub needs and nothing
// else, and that the pods of the work namespace can touch none of it.
package member

import (
	"context"
	"fmt"
	"maps"
	"slices"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/access"
	"github.com/fleetjob/fleetjob/pkg/podsecurity"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	// FieldManager owns every field the CLI applies, in members and on the
	// hub, so that re-running register updates its own fields only.
	FieldManager = "kubectl-fleetjob"
	// HubNamespace holds the hub's identities in a member: one
	// ServiceAccount per work namespace. No Job runs there, and a pod can
	// only run as a ServiceAccount of its own namespace, so no pod a
	// ClusterJob creates can run as the hub.
	HubNamespace = "fleetjob-hub"
	// LegacyServiceAccountName is the hub's identity in the work namespace
	// of a member registered before it moved to HubNamespace: register
	// revokes it.
	LegacyServiceAccountName = fleetv1.ReservedServiceAccount
	// RoleName names the Role and RoleBinding in the work namespace.
	RoleName = "fleetjob-hub"
	// NodesClusterRoleName names the ClusterRole that reads nodes.
	NodesClusterRoleName = "fleetjob-hub-nodes"
	// DrainClusterRoleName names the ClusterRole that drains nodes
	// (access.Drain), bound only where the cluster's set allows drains.
	DrainClusterRoleName = "fleetjob-hub-drain"
	// managedByValue marks the member objects the CLI applied.
	managedByValue = "kubectl-fleetjob"
)

// ClusterRoleBindingName is per work namespace: two hubs that use different
// work namespaces in one member each keep their own binding of the shared
// ClusterRole.
func ClusterRoleBindingName(namespace string) string {
	return NodesClusterRoleName + "-" + namespace
}

// ServiceAccountName is the name of the hub's ServiceAccount, in
// HubNamespace, for work namespace ns: two registrations with different
// work namespaces (two hubs sharing a member) never share an identity. The
// prefix keeps it apart from the namespace's own default ServiceAccount,
// which the member creates, and any pod there would run as, for a work
// namespace named default.
func ServiceAccountName(ns string) string { return "for-" + ns }

// DrainClusterRoleBindingName is per work namespace, as
// ClusterRoleBindingName: revoking one registration's drains leaves
// another's, in the same member, alone.
func DrainClusterRoleBindingName(namespace string) string {
	return DrainClusterRoleName + "-" + namespace
}

// Objects are the member objects of one registration, applied in the order
// of List.
type Objects struct {
	Namespace          *corev1ac.NamespaceApplyConfiguration
	HubNamespace       *corev1ac.NamespaceApplyConfiguration
	ServiceAccount     *corev1ac.ServiceAccountApplyConfiguration
	Role               *rbacv1ac.RoleApplyConfiguration
	RoleBinding        *rbacv1ac.RoleBindingApplyConfiguration
	ClusterRole        *rbacv1ac.ClusterRoleApplyConfiguration
	ClusterRoleBinding *rbacv1ac.ClusterRoleBindingApplyConfiguration
	// DrainClusterRole and DrainClusterRoleBinding grant access.Drain;
	// both nil when the cluster's set does not allow drains.
	DrainClusterRole        *rbacv1ac.ClusterRoleApplyConfiguration
	DrainClusterRoleBinding *rbacv1ac.ClusterRoleBindingApplyConfiguration
}

// Build returns the member objects for work namespace ns, whose Jobs'
// pods the member's PodSecurity admission holds to level, the Pod Security
// level of the cluster's set (see EnforcesPodSecurity). drain tells
// whether the set allows drains (ClusterSet spec.allowDrain): only then
// do the objects grant access.Drain.
func Build(ns string, level fleetv1.PodSecurityLevel, drain bool) Objects {
	labels := map[string]string{"app.kubernetes.io/managed-by": managedByValue, "app.kubernetes.io/part-of": "fleetjob"}
	nsLabels := maps.Clone(labels)
	if EnforcesPodSecurity(ns) {
		nsLabels[podsecurity.EnforceLabel] = string(level)
	}
	// No pod is meant to run in the hub's namespace: restricted refuses
	// the worst of one created there by mistake.
	hubNSLabels := maps.Clone(labels)
	hubNSLabels[podsecurity.EnforceLabel] = string(fleetv1.PodSecurityRestricted)
	subject := rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(ServiceAccountName(ns)).WithNamespace(HubNamespace)
	o := Objects{
		Namespace:      corev1ac.Namespace(ns).WithLabels(nsLabels),
		HubNamespace:   corev1ac.Namespace(HubNamespace).WithLabels(hubNSLabels),
		ServiceAccount: corev1ac.ServiceAccount(ServiceAccountName(ns), HubNamespace).WithLabels(labels),
		Role: rbacv1ac.Role(RoleName, ns).WithLabels(labels).WithRules(
			rbacv1ac.PolicyRule().WithAPIGroups("batch").WithResources("jobs").WithVerbs(access.WorkVerbs...),
			rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("configmaps").WithVerbs(access.ConfigMapVerbs...),
			rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("pods").WithVerbs(access.PodVerbs...),
			rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("events").WithVerbs(access.EventVerbs...),
		),
		RoleBinding: rbacv1ac.RoleBinding(RoleName, ns).WithLabels(labels).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("Role").WithName(RoleName)).
			WithSubjects(subject),
		ClusterRole: rbacv1ac.ClusterRole(NodesClusterRoleName).WithLabels(labels).WithRules(
			rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("nodes").WithVerbs(access.NodeVerbs...),
			rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("namespaces").WithResourceNames(access.IdentityNamespace).WithVerbs("get"),
		),
		ClusterRoleBinding: rbacv1ac.ClusterRoleBinding(ClusterRoleBindingName(ns)).WithLabels(labels).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(NodesClusterRoleName)).
			WithSubjects(subject),
	}
	if drain {
		o.DrainClusterRole = rbacv1ac.ClusterRole(DrainClusterRoleName).WithLabels(labels).WithRules(
			rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("nodes").WithVerbs(access.DrainNodeVerbs...),
			rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("pods").WithVerbs(access.DrainPodVerbs...),
			rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("pods/eviction").WithVerbs(access.DrainEvictionVerbs...),
		)
		o.DrainClusterRoleBinding = rbacv1ac.ClusterRoleBinding(DrainClusterRoleBindingName(ns)).WithLabels(labels).
			WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(DrainClusterRoleName)).
			WithSubjects(subject)
	}
	return o
}

// AllowsDrain tells whether the objects grant access.Drain.
func (o Objects) AllowsDrain() bool { return o.DrainClusterRoleBinding != nil }

// EnforcedLevel is the Pod Security level the objects label the work
// namespace with, "" when they leave its labels alone: what the
// registration records (fleetv1.PodSecurityAnnotation), so that the hub
// can tell when a set's level changed after.
func (o Objects) EnforcedLevel() string {
	return o.Namespace.Labels[podsecurity.EnforceLabel]
}

// legacySubject is the hub's identity of a registration from before
// HubNamespace.
func legacySubject(ns string) *rbacv1ac.SubjectApplyConfiguration {
	return rbacv1ac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(LegacyServiceAccountName).WithNamespace(ns)
}

// WithLegacySubject is o with the bindings naming the legacy identity
// too: while register migrates a registration, the hub keeps working with
// the old token until it has the new one.
func (o Objects) WithLegacySubject() Objects {
	ns := *o.Namespace.Name
	rb, crb := *o.RoleBinding, *o.ClusterRoleBinding
	rb.Subjects = append(slices.Clone(rb.Subjects), *legacySubject(ns))
	crb.Subjects = append(slices.Clone(crb.Subjects), *legacySubject(ns))
	o.RoleBinding, o.ClusterRoleBinding = &rb, &crb
	return o
}

// List is the objects in apply order: the namespaces first, bindings after
// what they bind.
func (o Objects) List() []any {
	out := []any{o.Namespace, o.HubNamespace, o.ServiceAccount, o.Role, o.RoleBinding, o.ClusterRole, o.ClusterRoleBinding}
	if o.AllowsDrain() {
		out = append(out, o.DrainClusterRole, o.DrainClusterRoleBinding)
	}
	return out
}

// Names are kind/name of the objects, in apply order, for messages.
func (o Objects) Names() []string {
	out := []string{
		"namespace/" + *o.Namespace.Name,
		"namespace/" + *o.HubNamespace.Name,
		"serviceaccount/" + *o.ServiceAccount.Namespace + "/" + *o.ServiceAccount.Name,
		"role/" + *o.Role.Name,
		"rolebinding/" + *o.RoleBinding.Name,
		"clusterrole/" + *o.ClusterRole.Name,
		"clusterrolebinding/" + *o.ClusterRoleBinding.Name,
	}
	if o.AllowsDrain() {
		out = append(out, "clusterrole/"+*o.DrainClusterRole.Name, "clusterrolebinding/"+*o.DrainClusterRoleBinding.Name)
	}
	return out
}

// Apply applies the objects with server-side apply, in order. Applying the
// same objects again changes nothing.
func Apply(ctx context.Context, cs kubernetes.Interface, o Objects) error {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	for _, s := range applySteps(ctx, cs, o, opts) {
		if err := s.apply(); err != nil {
			return fmt.Errorf("applying %s in the member: %w", s.name, err)
		}
	}
	return nil
}

// ApplyServerDryRun sends Apply's requests with dryRun=All: the member
// checks each (authorization, admission, validation) and stores nothing.
// An object in a namespace that does not exist yet cannot be checked (a
// dry run does not create its namespace): it is left out, and returned.
func ApplyServerDryRun(ctx context.Context, cs kubernetes.Interface, o Objects) (unchecked []string, err error) {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true, DryRun: []string{metav1.DryRunAll}}
	exists := map[string]bool{}
	for _, s := range applySteps(ctx, cs, o, opts) {
		if s.namespace != "" {
			if _, known := exists[s.namespace]; !known {
				_, err := cs.CoreV1().Namespaces().Get(ctx, s.namespace, metav1.GetOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					return unchecked, fmt.Errorf("reading namespace %s in the member: %w", s.namespace, err)
				}
				exists[s.namespace] = err == nil
			}
			if !exists[s.namespace] {
				unchecked = append(unchecked, s.name)
				continue
			}
		}
		if err := s.apply(); err != nil {
			return unchecked, fmt.Errorf("applying %s in the member (server dry run): %w", s.name, err)
		}
	}
	return unchecked, nil
}

// applyStep applies one object; namespace is its namespace, "" for a
// cluster-scoped one.
type applyStep struct {
	name, namespace string
	apply           func() error
}

func applySteps(ctx context.Context, cs kubernetes.Interface, o Objects, opts metav1.ApplyOptions) []applyStep {
	ns := *o.Namespace.Name
	steps := []applyStep{
		{"namespace/" + ns, "", func() error { _, err := cs.CoreV1().Namespaces().Apply(ctx, o.Namespace, opts); return err }},
		{"namespace/" + HubNamespace, "", func() error { _, err := cs.CoreV1().Namespaces().Apply(ctx, o.HubNamespace, opts); return err }},
		{"serviceaccount/" + HubNamespace + "/" + ServiceAccountName(ns), HubNamespace, func() error {
			_, err := cs.CoreV1().ServiceAccounts(HubNamespace).Apply(ctx, o.ServiceAccount, opts)
			return err
		}},
		{"role/" + RoleName, ns, func() error { _, err := cs.RbacV1().Roles(ns).Apply(ctx, o.Role, opts); return err }},
		{"rolebinding/" + RoleName, ns, func() error { _, err := cs.RbacV1().RoleBindings(ns).Apply(ctx, o.RoleBinding, opts); return err }},
		{"clusterrole/" + NodesClusterRoleName, "", func() error { _, err := cs.RbacV1().ClusterRoles().Apply(ctx, o.ClusterRole, opts); return err }},
		{"clusterrolebinding/" + ClusterRoleBindingName(ns), "", func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Apply(ctx, o.ClusterRoleBinding, opts)
			return err
		}},
	}
	if !o.AllowsDrain() {
		return steps
	}
	return append(steps,
		applyStep{"clusterrole/" + DrainClusterRoleName, "", func() error {
			_, err := cs.RbacV1().ClusterRoles().Apply(ctx, o.DrainClusterRole, opts)
			return err
		}},
		applyStep{"clusterrolebinding/" + DrainClusterRoleBindingName(ns), "", func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Apply(ctx, o.DrainClusterRoleBinding, opts)
			return err
		}},
	)
}

// protectedNamespaces are Kubernetes' own: never deleted by Purge, nor
// given a Pod Security level by Build, whatever the registration named as
// its work namespace.
var protectedNamespaces = map[string]bool{
	"default": true, "kube-system": true, "kube-public": true, "kube-node-lease": true,
}

// EnforcesPodSecurity tells whether Build labels work namespace ns with
// its set's Pod Security level. It does not label Kubernetes' own
// namespaces: restricted on kube-system would refuse the member's own
// system pods, and any level on default would hold every other workload
// there to it. The hub checks a run's pod template against the level
// either way.
func EnforcesPodSecurity(ns string) bool { return !protectedNamespaces[ns] }

// Purge deletes the objects Apply created for work namespace ns (and the
// legacy identity of an unmigrated registration), and the work namespace
// itself unless it is one of Kubernetes' own. A shared ClusterRole goes
// only when no other binding uses it. HubNamespace stays: other work
// namespaces' identities may live there, and a register running meanwhile
// would lose its new identity with it. It returns what it deleted, as
// kind/name.
func Purge(ctx context.Context, cs kubernetes.Interface, ns string) ([]string, error) {
	return purge(ctx, cs, ns, nil)
}

// PurgeCandidates is what Purge deletes for work namespace ns where it
// exists, as kind/name, without asking the member: the legacy identity of
// an unmigrated registration, the drain binding of one whose set allows
// drains, and the shared ClusterRoles when no other work namespace's
// binding uses them.
func PurgeCandidates(ns string) []string {
	out := []string{
		"clusterrolebinding/" + ClusterRoleBindingName(ns), "clusterrolebinding/" + DrainClusterRoleBindingName(ns),
		"rolebinding/" + RoleName, "role/" + RoleName,
		"serviceaccount/" + HubNamespace + "/" + ServiceAccountName(ns), "serviceaccount/" + ns + "/" + LegacyServiceAccountName,
		"clusterrole/" + NodesClusterRoleName, "clusterrole/" + DrainClusterRoleName,
	}
	if !protectedNamespaces[ns] {
		out = append(out, "namespace/"+ns)
	}
	return out
}

// PurgeServerDryRun sends Purge's requests with dryRun=All: the member
// checks each deletion and deletes nothing. It returns what Purge would
// delete.
func PurgeServerDryRun(ctx context.Context, cs kubernetes.Interface, ns string) ([]string, error) {
	return purge(ctx, cs, ns, []string{metav1.DryRunAll})
}

func purge(ctx context.Context, cs kubernetes.Interface, ns string, dryRun []string) ([]string, error) {
	var deleted []string
	del := deleter(&deleted)
	opts := metav1.DeleteOptions{DryRun: dryRun}
	rbac, core := cs.RbacV1(), cs.CoreV1()
	steps := []struct {
		name string
		f    func() error
	}{
		{"clusterrolebinding/" + ClusterRoleBindingName(ns), func() error {
			return rbac.ClusterRoleBindings().Delete(ctx, ClusterRoleBindingName(ns), opts)
		}},
		{"clusterrolebinding/" + DrainClusterRoleBindingName(ns), func() error {
			return rbac.ClusterRoleBindings().Delete(ctx, DrainClusterRoleBindingName(ns), opts)
		}},
		{"rolebinding/" + RoleName, func() error { return rbac.RoleBindings(ns).Delete(ctx, RoleName, opts) }},
		{"role/" + RoleName, func() error { return rbac.Roles(ns).Delete(ctx, RoleName, opts) }},
		{"serviceaccount/" + HubNamespace + "/" + ServiceAccountName(ns), func() error {
			return core.ServiceAccounts(HubNamespace).Delete(ctx, ServiceAccountName(ns), opts)
		}},
	}
	for _, s := range steps {
		if err := del(s.name, s.f); err != nil {
			return deleted, err
		}
	}
	if err := deleteLegacy(ctx, cs, ns, opts, del); err != nil {
		return deleted, err
	}
	if err := purgeClusterRoles(ctx, cs, ns, opts, del); err != nil {
		return deleted, err
	}
	if protectedNamespaces[ns] {
		return deleted, nil
	}
	return deleted, del("namespace/"+ns, func() error { return core.Namespaces().Delete(ctx, ns, opts) })
}

// deleter returns a delete step runner that appends what it deleted to
// deleted and takes an object already gone as done.
func deleter(deleted *[]string) func(string, func() error) error {
	return func(name string, f func() error) error {
		err := f()
		switch {
		case err == nil:
			*deleted = append(*deleted, name)
			return nil
		case apierrors.IsNotFound(err):
			return nil
		default:
			return fmt.Errorf("deleting %s in the member: %w", name, err)
		}
	}
}

// HasLegacy tells whether work namespace ns holds the hub's identity of a
// registration from before HubNamespace, as register created it: one
// register did not label is not ours, and is never deleted.
func HasLegacy(ctx context.Context, cs kubernetes.Interface, ns string) (bool, error) {
	sa, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, LegacyServiceAccountName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading serviceaccount %s/%s in the member: %w", ns, LegacyServiceAccountName, err)
	}
	return sa.Labels["app.kubernetes.io/managed-by"] == managedByValue, nil
}

// deleteLegacy deletes the legacy identity of work namespace ns, if
// register created it: deleting a ServiceAccount invalidates every token
// issued for it.
func deleteLegacy(ctx context.Context, cs kubernetes.Interface, ns string, opts metav1.DeleteOptions, del func(string, func() error) error) error {
	legacy, err := HasLegacy(ctx, cs, ns)
	if err != nil || !legacy {
		return err
	}
	return del("serviceaccount/"+ns+"/"+LegacyServiceAccountName, func() error {
		return cs.CoreV1().ServiceAccounts(ns).Delete(ctx, LegacyServiceAccountName, opts)
	})
}

// Revoke ends a migration: it applies o's bindings, which name only the
// new identity, and deletes the legacy ServiceAccount of o's work
// namespace. It returns what it deleted.
func Revoke(ctx context.Context, cs kubernetes.Interface, o Objects) ([]string, error) {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	ns := *o.Namespace.Name
	if _, err := cs.RbacV1().RoleBindings(ns).Apply(ctx, o.RoleBinding, opts); err != nil {
		return nil, fmt.Errorf("applying rolebinding/%s in the member: %w", RoleName, err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Apply(ctx, o.ClusterRoleBinding, opts); err != nil {
		return nil, fmt.Errorf("applying clusterrolebinding/%s in the member: %w", ClusterRoleBindingName(ns), err)
	}
	var deleted []string
	return deleted, deleteLegacy(ctx, cs, ns, metav1.DeleteOptions{}, deleter(&deleted))
}

// RevokeDrain takes the drains of work namespace ns back, where its set
// does not allow them (any more): it deletes ns's drain binding, and never
// the shared ClusterRole, which another work namespace's registration may
// bind. dryRun goes with the delete. It returns what it deleted.
func RevokeDrain(ctx context.Context, cs kubernetes.Interface, ns string, dryRun []string) ([]string, error) {
	var deleted []string
	name := DrainClusterRoleBindingName(ns)
	err := deleter(&deleted)("clusterrolebinding/"+name, func() error {
		return cs.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{DryRun: dryRun})
	})
	return deleted, err
}

// purgeClusterRoles deletes each shared ClusterRole that no binding but
// ns's own uses.
func purgeClusterRoles(ctx context.Context, cs kubernetes.Interface, ns string, opts metav1.DeleteOptions, del func(string, func() error) error) error {
	bindings, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing clusterrolebindings in the member: %w", err)
	}
	inUse := map[string]bool{}
	for _, b := range bindings.Items {
		// A dry run deleted ns's own bindings without removing them.
		if len(opts.DryRun) > 0 && (b.Name == ClusterRoleBindingName(ns) || b.Name == DrainClusterRoleBindingName(ns)) {
			continue
		}
		if b.RoleRef.Kind == "ClusterRole" {
			inUse[b.RoleRef.Name] = true // another work namespace's registration still uses it
		}
	}
	for _, role := range []string{NodesClusterRoleName, DrainClusterRoleName} {
		if inUse[role] {
			continue
		}
		if err := del("clusterrole/"+role, func() error { return cs.RbacV1().ClusterRoles().Delete(ctx, role, opts) }); err != nil {
			return err
		}
	}
	return nil
}

// ServiceAccountUser is the user name the member authenticates the hub's
// token for work namespace ns as.
func ServiceAccountUser(ns string) string {
	return serviceAccountUser(HubNamespace, ServiceAccountName(ns))
}

func serviceAccountUser(ns, name string) string {
	return "system:serviceaccount:" + ns + ":" + name
}

// serviceAccountGroups are the groups the member puts a ServiceAccount of
// namespace ns in.
func serviceAccountGroups(ns string) []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
}
