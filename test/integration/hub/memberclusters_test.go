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
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// What `kubectl get memberclusters` shows of each registration: the hub's
// own view, before and without any run.
var _ = Describe("MemberClusters", func() {
	var stopHub func()

	AfterEach(func() {
		cleanUp(stopHub)
		// cleanUp stops the hub before it unregisters; what it published
		// stays until the next hub starts, unless removed here.
		Expect(hubC.DeleteAllOf(ctx, &fleetv1.MemberCluster{})).To(Succeed())
	})

	It("shows a Forbidden member's missing permissions and a healthy member's version and nodes before any run, and goes with the registration", func() {
		a, b := members["member-a"], members["member-b"]
		register(a, admin, map[string]string{fleetv1.ClusterSetLabel: "team-x", "env": "prod"})
		register(&member{name: "forbidden", env: b.env}, withoutNodeAccess(b, "no-node-access"), nil)
		stopHub = startHub(hubOptions{})

		Eventually(func(g Gomega) {
			mc := memberCluster(g, "forbidden")
			access := condition(g, mc, fleetv1.MemberClusterAccessReviewed)
			g.Expect(access.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(access.Reason).To(Equal(fleetv1.ReasonAccessDenied))
			g.Expect(access.Message).To(ContainSubstring("may not: get nodes; list nodes; watch nodes;"))
			ready := condition(g, mc, fleetv1.MemberClusterReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(fleetv1.ClusterReasonForbidden))
			g.Expect(ready.Message).To(Equal(access.Message))
			g.Expect(condition(g, mc, fleetv1.MemberClusterConnected).Reason).To(Equal(fleetv1.ClusterReasonForbidden))
		}).Should(Succeed())
		runs := &fleetv1.ClusterJobList{}
		Expect(hubC.List(ctx, runs)).To(Succeed())
		Expect(runs.Items).To(BeEmpty(), "the hub showed the refusal before any ClusterJob asked for the cluster")

		cs, err := kubernetes.NewForConfig(a.env.Config)
		Expect(err).NotTo(HaveOccurred())
		version, err := cs.Discovery().ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		Expect(version.GitVersion).NotTo(BeEmpty())
		kubeSystem := &corev1.Namespace{}
		Expect(a.client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem)).To(Succeed())
		Eventually(func(g Gomega) {
			mc := memberCluster(g, "member-a")
			g.Expect(condition(g, mc, fleetv1.MemberClusterReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(g, mc, fleetv1.MemberClusterAccessReviewed).Reason).To(Equal(fleetv1.ReasonAccessGranted))
			g.Expect(mc.Status.KubernetesVersion).To(Equal(version.GitVersion))
			g.Expect(mc.Status.NodeCount).To(HaveValue(BeEquivalentTo(4)))
			g.Expect(mc.Status.ClusterID).To(Equal(string(kubeSystem.UID)))
			g.Expect(mc.Status.ClusterSet).To(Equal("team-x"))
			g.Expect(mc.Status.WorkNamespace).To(Equal(workNamespace))
			g.Expect(mc.Status.LastProbeTime).NotTo(BeNil())
			g.Expect(mc.Labels).To(Equal(map[string]string{fleetv1.ClusterSetLabel: "team-x", "env": "prod"}))
			// envtest users authenticate with client certificates.
			g.Expect(mc.Status.TokenExpiry).To(BeNil())
			g.Expect(condition(g, mc, fleetv1.MemberClusterTokenExpiring).Reason).To(Equal(fleetv1.ReasonTokenExpiryUnknown))
		}).Should(Succeed())

		By("listing them as kubectl get does: the server's table of the printer columns")
		table := memberClusterTable()
		Expect(columnNames(table, 0)).To(Equal([]string{"Name", "Ready", "Reason", "Version", "Nodes", "Set", "Token-Expiry", "Age"}))
		Expect(tableRow(table, "member-a")).To(And(
			HaveKeyWithValue("Ready", "True"), HaveKeyWithValue("Reason", fleetv1.ReasonReady),
			HaveKeyWithValue("Version", version.GitVersion), HaveKeyWithValue("Nodes", "4"), HaveKeyWithValue("Set", "team-x")))
		Expect(tableRow(table, "forbidden")).To(And(
			HaveKeyWithValue("Ready", "False"), HaveKeyWithValue("Reason", fleetv1.ClusterReasonForbidden),
			HaveKeyWithValue("Set", fleetv1.DefaultClusterSet), HaveKeyWithValue("Message", ContainSubstring("list nodes"))))
		Expect(gaugeValue("fleetjob_member_cluster_ready", "member-a")).To(HaveValue(BeEquivalentTo(1)))
		Expect(gaugeValue("fleetjob_member_cluster_ready", "forbidden")).To(HaveValue(BeEquivalentTo(0)))

		By("unregistering the Forbidden member")
		unregister("forbidden")
		Eventually(func() error {
			return hubC.Get(ctx, client.ObjectKey{Name: "forbidden"}, &fleetv1.MemberCluster{})
		}).Should(Satisfy(isNotFound))
		Expect(gaugeValue("fleetjob_member_cluster_ready", "forbidden")).To(BeNil())
		Expect(memberCluster(Default, "member-a").Status.NodeCount).To(HaveValue(BeEquivalentTo(4)))
	})

	It("warns when the registered token expires within 30 days: the TokenExpiring condition, the expiry, a Warning event and the metric", func() {
		b := members["member-b"]
		expiry := registerWithToken(b, 10*24*time.Hour)
		stopHub = startHub(hubOptions{})
		Eventually(func(g Gomega) {
			mc := memberCluster(g, b.name)
			g.Expect(condition(g, mc, fleetv1.MemberClusterReady).Status).To(Equal(metav1.ConditionTrue))
			token := condition(g, mc, fleetv1.MemberClusterTokenExpiring)
			g.Expect(token.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(token.Reason).To(Equal(fleetv1.ReasonTokenExpiresSoon))
			g.Expect(token.Message).To(ContainSubstring(expiry.UTC().Format(time.RFC3339)))
			g.Expect(mc.Status.TokenExpiry).NotTo(BeNil())
			g.Expect(mc.Status.TokenExpiry.Time).To(BeTemporally("==", expiry))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			// The events of a cluster-scoped object are in namespace default.
			g.Expect(eventNotes(g, metav1.NamespaceDefault, b.name, fleetv1.ReasonTokenExpiresSoon)).
				To(ConsistOf(ContainSubstring("cluster member-b: the registered token expires at " + expiry.UTC().Format(time.RFC3339))))
		}).Should(Succeed())
		Expect(gaugeValue("fleetjob_member_cluster_token_expiry_seconds", b.name)).To(HaveValue(BeEquivalentTo(expiry.Unix())))
	})
})

// memberCluster reads the MemberCluster of registration name.
func memberCluster(g Gomega, name string) *fleetv1.MemberCluster {
	mc := &fleetv1.MemberCluster{}
	g.Expect(hubC.Get(ctx, client.ObjectKey{Name: name}, mc)).To(Succeed())
	return mc
}

// condition is mc's condition of type typ; it must have one.
func condition(g Gomega, mc *fleetv1.MemberCluster, typ string) metav1.Condition {
	c := meta.FindStatusCondition(mc.Status.Conditions, typ)
	g.Expect(c).NotTo(BeNil(), "MemberCluster %s has no condition %s", mc.Name, typ)
	return *c
}

// withoutNodeAccess returns a user of m who may do everything fleetjob
// needs but read nodes.
func withoutNodeAccess(m *member, name string) envtest.User {
	bindRole(m, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{"kube-system"}, Verbs: []string{"get"}},
		},
	})
	return envtest.User{Name: name}
}

// registerWithToken registers m with a ServiceAccount token of m valid for
// d, as `kubectl fleetjob register` mints one, and returns when the member
// says it expires.
func registerWithToken(m *member, d time.Duration) time.Time {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "hub-with-token", Namespace: workNamespace}}
	Expect(m.client.Create(ctx, sa)).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "hub-with-token"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}},
	}
	Expect(m.client.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(m.client.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(m.client.Delete(ctx, sa))).To(Succeed())
	})
	cs, err := kubernetes.NewForConfig(m.env.Config)
	Expect(err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(workNamespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(d / time.Second))}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	// The admin's kubeconfig, its client certificate swapped for the token.
	u, err := m.env.AddUser(admin, nil)
	Expect(err).NotTo(HaveOccurred())
	data, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.Load(data)
	Expect(err).NotTo(HaveOccurred())
	for _, au := range cfg.AuthInfos {
		au.ClientCertificateData, au.ClientKeyData, au.Token = nil, nil, tr.Status.Token
	}
	data, err = clientcmd.Write(*cfg)
	Expect(err).NotTo(HaveOccurred())
	registerKubeconfig(m.name, data, nil)
	return tr.Status.ExpirationTimestamp.Time
}

// memberClusterTable is the table the hub's API server serves `kubectl get
// memberclusters`.
func memberClusterTable() *metav1.Table {
	cs, err := kubernetes.NewForConfig(hubEnv.Config)
	Expect(err).NotTo(HaveOccurred())
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/apis/fleetjob.io/v1alpha1/memberclusters").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Raw()
	Expect(err).NotTo(HaveOccurred())
	table := &metav1.Table{}
	Expect(json.Unmarshal(raw, table)).To(Succeed())
	return table
}

// columnNames are the names of table's columns of priority at most p.
func columnNames(table *metav1.Table, p int32) []string {
	var out []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority <= p {
			out = append(out, c.Name)
		}
	}
	return out
}

// tableRow is table's row of the object named name, by column name.
func tableRow(table *metav1.Table, name string) map[string]string {
	for _, row := range table.Rows {
		if len(row.Cells) == 0 || row.Cells[0] != name {
			continue
		}
		out := map[string]string{}
		for i, c := range table.ColumnDefinitions {
			if i < len(row.Cells) && row.Cells[i] != nil {
				out[c.Name] = fmt.Sprint(row.Cells[i])
			}
		}
		return out
	}
	Fail("no row " + name + " in the table")
	return nil
}

// gaugeValue is the value of gauge name for member_cluster member; nil when
// there is no such series.
func gaugeValue(name, member string) *float64 {
	f := gathered(name)
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "member_cluster" && l.GetValue() == member {
				return ptr.To(m.GetGauge().GetValue())
			}
		}
	}
	return nil
}
