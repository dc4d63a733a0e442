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
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/spoke"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// publishMember writes the MemberCluster the hub would publish for a
// registration: this suite runs no hub controller.
func publishMember(name, set string, status fleetv1.MemberClusterStatus) *fleetv1.MemberCluster {
	GinkgoHelper()
	m := &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{fleetv1.ClusterSetLabel: set}}}
	Expect(client.IgnoreAlreadyExists(hubC.Create(ctx, m))).To(Succeed())
	Expect(hubC.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
	status.ClusterSet = set
	for i := range status.Conditions {
		status.Conditions[i].LastTransitionTime = metav1.Now()
	}
	m.Labels[fleetv1.ClusterSetLabel], m.Status = set, status
	Expect(hubC.Update(ctx, m)).To(Succeed())
	m.Status = status
	Expect(hubC.Status().Update(ctx, m)).To(Succeed())
	return m
}

// The tenant of these specs holds exactly what the README and
// config/samples/tenancy/team-a.yaml grant a team: the Role in its
// namespace and the ClusterRole that reads MemberClusters and ClusterSets,
// and no access to any Secret.
var _ = Describe("kubectl fleetjob read commands as a tenant without Secret access", Ordered, func() {
	const ns, set = "team-t", "tenant-set"
	var tenant string

	BeforeAll(func() {
		Expect(hubC.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		for _, obj := range manifests(filepath.Join("..", "..", "..", "config", "samples", "tenancy", "team-a.yaml")) {
			switch obj.GetKind() {
			case "Role", "RoleBinding":
				obj.SetNamespace(ns)
			case "ClusterRole", "ClusterRoleBinding":
			default:
				continue
			}
			Expect(hubC.Create(ctx, obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
			DeferCleanup(func() { Expect(hubC.Delete(ctx, obj)).To(Succeed()) })
		}
		cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}, Spec: fleetv1.ClusterSetSpec{PodSecurity: fleetv1.PodSecurityRestricted}}
		b := &fleetv1.ClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set}, Spec: fleetv1.ClusterSetBindingSpec{ClusterSet: set}}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: registrationNamespace, Name: "ready-1", Labels: map[string]string{fleetv1.RegistrationLabel: "true"}},
			Data: map[string][]byte{fleetv1.KubeconfigKey: []byte("the keys to the member")}}
		for _, obj := range []client.Object{cs, b, secret} {
			Expect(hubC.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() { Expect(hubC.Delete(ctx, obj)).To(Succeed()) })
		}
		probed := metav1.Now()
		for _, m := range []*fleetv1.MemberCluster{
			publishMember("ready-1", set, fleetv1.MemberClusterStatus{KubernetesVersion: "v1.36.3", NodeCount: ptr.To[int32](4), WorkNamespace: "jobs", LastProbeTime: &probed,
				Conditions: []metav1.Condition{{Type: fleetv1.MemberClusterReady, Status: metav1.ConditionTrue, Reason: fleetv1.ReasonReady, Message: "connected"}}}),
			publishMember("forbidden-1", set, fleetv1.MemberClusterStatus{WorkNamespace: "jobs", Conditions: []metav1.Condition{
				{Type: fleetv1.MemberClusterReady, Status: metav1.ConditionFalse, Reason: "Forbidden", Message: "the registered identity lacks permissions"},
				{Type: fleetv1.MemberClusterAccessReviewed, Status: metav1.ConditionFalse, Reason: fleetv1.ReasonAccessDenied,
					Message: "the registered identity may not: get nodes; list nodes; watch nodes"},
			}}),
		} {
			DeferCleanup(func() { Expect(hubC.Delete(ctx, m)).To(Succeed()) })
		}
		// A run in ready-1 as the hub publishes it: node-1 succeeded,
		// node-2 failed, node-3 waits for the second group.
		cj := wrappers.MakeClusterJob("tenant-run", ns).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		DeferCleanup(func() { Expect(hubC.Delete(ctx, cj)).To(Succeed()) })
		started := metav1.Now()
		publishResults(cj, "ready-1", &spoke.State{Planned: true,
			Plan: plan.Plan{Groups: []plan.Group{{Name: "batch-1", Nodes: []string{"node-1", "node-2"}}, {Name: "batch-2", Nodes: []string{"node-3"}}}},
			Nodes: []spoke.NodeState{
				{Node: "node-1", GroupName: "batch-1", Phase: spoke.NodeSucceeded, StartTime: &started, CompletionTime: &started},
				{Node: "node-2", GroupName: "batch-1", Phase: spoke.NodeFailed, Reason: "BackoffLimitExceeded", ExitCode: ptr.To[int32](3), Output: "disk full",
					StartTime: &started, CompletionTime: &started},
				{Node: "node-3", Group: 1, GroupName: "batch-2", Phase: spoke.NodePending},
			}})
		tenant = kubeconfigOf(envtest.User{Name: "team-t-dev", Groups: []string{"team-a"}})

		cfg, err := clientcmd.BuildConfigFromFlags("", tenant)
		Expect(err).NotTo(HaveOccurred())
		tc, err := client.New(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			g.Expect(tc.List(ctx, &fleetv1.MemberClusterList{})).To(Succeed())
		}).Should(Succeed())
		Expect(tc.List(ctx, &corev1.SecretList{}, client.InNamespace(registrationNamespace))).To(Satisfy(apierrors.IsForbidden), "the tenant may not read registrations")
		Expect(tc.List(ctx, &corev1.SecretList{}, client.InNamespace(ns))).To(Satisfy(apierrors.IsForbidden), "the tenant may read no Secret")
	})

	It("lists the members: a Ready one with its nodes, a Forbidden one with its missing permissions", func() {
		r := run("--kubeconfig", tenant, "-n", ns, "clusters")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`(?m)^NAME +READY +REASON +VERSION +NODES +SET +TOKEN-EXPIRY +AGE$`))
		Expect(r.out).To(MatchRegexp(`(?m)^ready-1 +True +Ready +v1\.36\.3 +4 +tenant-set +<none> +\S+$`))
		Expect(r.out).To(MatchRegexp(`(?m)^forbidden-1 +False +Forbidden +<none> +<unknown> +tenant-set +<none> +\S+$`))

		r = run("--kubeconfig", tenant, "-n", ns, "clusters", "-o", "wide")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`(?m)^forbidden-1 +False +Forbidden .* jobs +<never> +the registered identity may not: get nodes; list nodes; watch nodes$`))
	})

	It("prints the MemberClusters for -o jsonpath", func() {
		r := run("--kubeconfig", tenant, "-n", ns, "clusters", "-o",
			`jsonpath={range .items[*]}{.kind} {.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.status.nodeCount}{"\n"}{end}`)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("MemberCluster ready-1 True 4\n"))
		Expect(r.out).To(ContainSubstring("MemberCluster forbidden-1 False \n"))

		r = run("--kubeconfig", tenant, "clusters", "-o", "yaml", "-l", fleetv1.ClusterSetLabel+"="+set)
		Expect(r.err).NotTo(HaveOccurred())
		objs := splitYAML(r.out)
		Expect(objs).To(HaveLen(1))
		Expect(objs[0].GetKind()).To(Equal("List"))
		items, _, err := unstructured.NestedSlice(objs[0].Object, "items")
		Expect(err).NotTo(HaveOccurred())
		Expect(items).To(HaveLen(2))
	})

	It("lists the cluster sets with the members in them and the tenant's own bindings", func() {
		r := run("--kubeconfig", tenant, "-n", ns, "clustersets")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`(?m)^tenant-set +restricted +2 +team-t$`))
		Expect(r.errOut).To(ContainSubstring("Bindings of namespace team-t only: you may not list clustersetbindings in every namespace."))
		r = run("--kubeconfig", tenant, "-n", ns, "clustersets", "-o", "wide")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`(?m)^tenant-set +restricted +2 +team-t +forbidden-1,ready-1$`))
	})

	It("shows a run, its nodes and its plans from what the hub published", func() {
		r := run("--kubeconfig", tenant, "-n", ns, "status", "tenant-run")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`(?m)^ready-1 +Running `))

		r = run("--kubeconfig", tenant, "-n", ns, "status", "tenant-run", "--nodes")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`(?m)^ready-1 +node-1 +batch-1 +tenant-run-node-1-\S+ +Succeeded `))
		Expect(r.out).To(MatchRegexp(`(?m)^ready-1 +node-2 +batch-1 +tenant-run-node-2-\S+ +Failed +BackoffLimitExceeded +3 .* disk full$`))
		Expect(r.out).To(MatchRegexp(`(?m)^ready-1 +node-3 +batch-2 +<none> +Pending `))

		r = run("--kubeconfig", tenant, "-n", ns, "status", "tenant-run", "--nodes", "--failed", "-o", "jsonpath={.items[*].node}")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("node-2"))

		r = run("--kubeconfig", tenant, "-n", ns, "plan", "tenant-run")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`ready-1\s+0\s+batch-1\s+2\s+node-1,node-2`))
		Expect(r.out).To(MatchRegexp(`ready-1\s+1\s+batch-2\s+1\s+node-3`))
	})

	It("reads the logs with the user's own member credentials, the work namespace from the MemberCluster", func() {
		r := run("--kubeconfig", tenant, "-n", ns, "logs", "tenant-run", "--cluster", "ready-1", "--node", "node-2",
			"--member-kubeconfig", memberKubeconfig, "--member-context", "member-admin")
		// No kubelet here: the pod is not there, and the error says where
		// it was looked for.
		Expect(r.err).To(MatchError(ContainSubstring("no pod of clusterjob team-t/tenant-run on node node-2 in cluster ready-1 (namespace jobs)")))
	})
})
