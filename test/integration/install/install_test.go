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

package install

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fleetjob/fleetjob/hub/controller"
	"github.com/fleetjob/fleetjob/hub/shard"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// The hub's namespace and ServiceAccount in install.yaml.
const (
	hubNamespace = "fleetjob-system"
	hubUser      = "system:serviceaccount:" + hubNamespace + ":fleetjob-hub"
)

// The specs run in order on one API server: the dry runs see an empty
// cluster, as a first install does, and the real install comes last.
var _ = Describe("Installing a release", Ordered, func() {
	var install string

	BeforeAll(func() {
		install = manifests("registry.example.com/fleetjob-hub:v0.1.0", "v0.1.0")
	})

	It("renders install.yaml with the release's image and version label, and the PodDisruptionBudget", func() {
		objs := objects(string(readFile(install)))
		deploy := objs["Deployment/"+hubNamespace+"/fleetjob-hub"]
		Expect(deploy).NotTo(BeNil(), "install.yaml has no hub Deployment: %v", keys(objs))
		Expect(lookup(deploy, "metadata", "labels", "app.kubernetes.io/version")).To(Equal("v0.1.0"))
		Expect(lookup(deploy, "spec", "template", "metadata", "labels", "app.kubernetes.io/version")).To(Equal("v0.1.0"))
		container := lookup(deploy, "spec", "template", "spec", "containers").([]any)[0]
		Expect(lookup(container, "image")).To(Equal("registry.example.com/fleetjob-hub:v0.1.0"))
		Expect(objs).To(HaveKey("PodDisruptionBudget/" + hubNamespace + "/fleetjob-hub"))
	})

	It("passes a server-side dry-run apply on an empty cluster once its namespace exists", func() {
		kubectlRun("create", "namespace", hubNamespace)
		out := kubectlRun("apply", "--server-side", "--dry-run=server", "-f", install)
		Expect(out).To(ContainSubstring("deployment.apps/fleetjob-hub serverside-applied (server dry run)"))
		Expect(out).To(ContainSubstring("customresourcedefinition.apiextensions.k8s.io/clusterjobs.fleetjob.io serverside-applied (server dry run)"))
		Expect(kubectlRun("get", "crd", "-o", "name")).NotTo(ContainSubstring("fleetjob.io"), "a dry run created a CRD")
	})

	It("installs the Helm chart into its release namespace: a server-side dry-run apply", func() {
		const ns = "fleetjob-chart"
		kubectlRun("create", "namespace", ns)
		crds, templates := renderChart(filepath.Join(repoRoot, "charts", "fleetjob"), ns, nil)
		Expect(templates).NotTo(ContainSubstring(hubNamespace), "the chart names the kustomize namespace, not its release namespace")
		for _, o := range objects(templates) {
			if meta := o["metadata"].(map[string]any); meta["namespace"] != nil {
				Expect(meta["namespace"]).To(Equal(ns), "%v %v", o["kind"], meta["name"])
			}
		}
		Expect(kubectlRun("apply", "--server-side", "--dry-run=server", "-f", writeFile(crds))).To(ContainSubstring("clusterjobs.fleetjob.io serverside-applied (server dry run)"))
		out := kubectlRun("apply", "--server-side", "--dry-run=server", "-f", writeFile(templates))
		Expect(out).To(ContainSubstring("deployment.apps/fleetjob-hub serverside-applied (server dry run)"))
		Expect(out).To(ContainSubstring("rolebinding.rbac.authorization.k8s.io/fleetjob-hub-secrets serverside-applied (server dry run)"))
	})

	It("installs the Helm chart sharded into its release namespace: a server-side dry-run apply", func() {
		const ns = "fleetjob-chart-sharded"
		kubectlRun("create", "namespace", ns)
		_, templates := renderChart(filepath.Join(repoRoot, "charts", "fleetjob"), ns, map[string]any{
			"sharding": map[string]any{"enabled": true},
			"replicas": 2,
		})
		out := kubectlRun("apply", "--server-side", "--dry-run=server", "-f", writeFile(templates))
		Expect(out).To(ContainSubstring("role.rbac.authorization.k8s.io/fleetjob-hub-shard serverside-applied (server dry run)"))
		Expect(out).To(ContainSubstring("rolebinding.rbac.authorization.k8s.io/fleetjob-hub-shard serverside-applied (server dry run)"))
		Expect(out).To(ContainSubstring("deployment.apps/fleetjob-hub serverside-applied (server dry run)"))
	})

	It("installs for real with the README's command: CRDs Established with their scopes; the upgrade command re-applies it", func() {
		kubectlRun("apply", "--server-side", "-f", install)
		kubectlRun("wait", "--for=condition=Established", "--timeout=30s",
			"crd/clusterjobs.fleetjob.io", "crd/memberruns.fleetjob.io", "crd/clustersets.fleetjob.io", "crd/clustersetbindings.fleetjob.io",
			"crd/memberclusters.fleetjob.io", "crd/fleetdisruptionbudgets.fleetjob.io")
		scopes := kubectlRun("get", "crd", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.scope}{"\n"}{end}`)
		Expect(strings.Fields(scopes)).To(ConsistOf("clusterjobs.fleetjob.io=Namespaced", "memberruns.fleetjob.io=Namespaced", "memberclusters.fleetjob.io=Cluster",
			"clustersets.fleetjob.io=Cluster", "clustersetbindings.fleetjob.io=Namespaced", "fleetdisruptionbudgets.fleetjob.io=Cluster"))
		// The upgrade: a newer release's install.yaml over this one.
		newer := manifests("registry.example.com/fleetjob-hub:v0.2.0", "v0.2.0")
		kubectlRun("apply", "--server-side", "--force-conflicts", "-f", newer)
		Expect(kubectlRun("get", "deployment", "-n", hubNamespace, "fleetjob-hub", "-o",
			`jsonpath={.metadata.labels.app\.kubernetes\.io/version} {.spec.template.spec.containers[0].image}`)).
			To(Equal("v0.2.0 registry.example.com/fleetjob-hub:v0.2.0"))
	})

	It("lets the hub's ServiceAccount elect a leader with the hub's own code", func() {
		// The real leader election of cmd/fleetjob-hub, as the installed
		// ServiceAccount: it takes the Lease, records its event and
		// releases the Lease on stop, with the Role of install.yaml only.
		mgrCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		opts := ctrl.Options{Scheme: runtime.NewScheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"}
		Expect(clientgoscheme.AddToScheme(opts.Scheme)).To(Succeed())
		controller.ElectLeader(&opts, hubNamespace)
		mgr, err := ctrl.NewManager(asHub(), opts)
		Expect(err).NotTo(HaveOccurred())
		done := make(chan error, 1)
		go func() { done <- mgr.Start(mgrCtx) }()
		Eventually(mgr.Elected()).WithTimeout(20*time.Second).Should(BeClosed(), "the hub's ServiceAccount never led: see the leader-election Role")
		cancel()
		// Bound: the hub's grace for its runnables (5 s) plus client-go's
		// bound on the release (RenewDeadline, 10 s), with room for a
		// loaded CI machine. The error is received first, so that a
		// failure says why the stop failed rather than only that it did.
		var stopErr error
		Eventually(done).WithTimeout(25*time.Second).Should(Receive(&stopErr), "the hub did not stop")
		Expect(stopErr).NotTo(HaveOccurred(), "the hub's stop")
		Expect(kubectlRun("get", "lease", "-n", hubNamespace, controller.LeaderElectionID, "-o", "jsonpath={.spec.holderIdentity}")).
			To(BeEmpty(), "the stopped leader did not release its Lease")
	})

	DescribeTable("what the hub's ServiceAccount may do on the hub, beyond its runs",
		func(attrs authorizationv1.ResourceAttributes, allowed bool) {
			cs, err := kubernetes.NewForConfig(cfg)
			Expect(err).NotTo(HaveOccurred())
			review, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: hubUser,
					Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + hubNamespace, "system:authenticated"},
					ResourceAttributes: &attrs}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(review.Status.Allowed).To(Equal(allowed), "%+v: %s", attrs, review.Status.Reason)
		},
		Entry("read the kube-system namespace (the hub's identity)", authorizationv1.ResourceAttributes{Verb: "get", Resource: "namespaces", Name: "kube-system"}, true),
		Entry("read another namespace", authorizationv1.ResourceAttributes{Verb: "get", Resource: "namespaces", Name: "default"}, false),
		Entry("list namespaces", authorizationv1.ResourceAttributes{Verb: "list", Resource: "namespaces"}, false),
		Entry("update its Lease", authorizationv1.ResourceAttributes{Namespace: hubNamespace, Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: controller.LeaderElectionID}, true),
		Entry("update another Lease", authorizationv1.ResourceAttributes{Namespace: hubNamespace, Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Name: "other"}, false),
		Entry("delete its Lease", authorizationv1.ResourceAttributes{Namespace: hubNamespace, Verb: "delete", Group: "coordination.k8s.io", Resource: "leases", Name: controller.LeaderElectionID}, false),
		Entry("write ConfigMaps (the old leader-election lock)", authorizationv1.ResourceAttributes{Namespace: hubNamespace, Verb: "update", Resource: "configmaps"}, false),
		Entry("read ConfigMaps", authorizationv1.ResourceAttributes{Namespace: hubNamespace, Verb: "get", Resource: "configmaps"}, false),
	)

	It("applies config/sharded, whose Role lets the hub's ServiceAccount keep a shard's session and claim a member", func() {
		sharded := writeFile(string(run(nil, kustomize, "build", filepath.Join("config", "sharded"))))
		deploy := objects(string(readFile(sharded)))["Deployment/"+hubNamespace+"/fleetjob-hub"]
		Expect(deploy).NotTo(BeNil(), "config/sharded renders no hub Deployment")
		Expect(lookup(deploy, "spec", "replicas")).To(BeNumerically("==", 2))
		container := lookup(deploy, "spec", "template", "spec", "containers").([]any)[0]
		Expect(lookup(container, "args")).To(ContainElements("--leader-elect=true", "--shard"))
		Expect(lookup(container, "env")).To(ContainElement(HaveKeyWithValue("name", "POD_NAME")))
		kubectlRun("apply", "--server-side", "--force-conflicts", "-f", sharded)
		DeferCleanup(func() {
			kubectlRun("delete", "role,rolebinding", "-n", hubNamespace, "fleetjob-hub-shard", "--ignore-not-found")
		})

		// The shard of cmd/fleetjob-hub, as the installed ServiceAccount:
		// its session, a claim, and the hand-back when it leaves.
		scheme := runtime.NewScheme()
		Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
		hub, err := client.New(asHub(), client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		s, err := shard.New(hub, hub, shard.Options{Namespace: hubNamespace, Identity: "fleetjob-hub-0"}, logr.Discard())
		Expect(err).NotTo(HaveOccurred())
		session, leave := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- s.Run(session) }()
		Eventually(func() bool { return s.Owns("member-x") }).WithTimeout(20*time.Second).Should(BeTrue(), "the replica never joined: see the shard's Role")
		Expect(s.Claim(ctx, "member-x")).To(Succeed())
		claim := naming.MemberLeaseName("member-x")
		Expect(kubectlRun("get", "lease", "-n", hubNamespace, claim, "-o", "jsonpath={.spec.holderIdentity}")).NotTo(BeEmpty())
		leave()
		Eventually(done).WithTimeout(20 * time.Second).Should(Receive(BeNil()))
		Expect(kubectlRun("get", "lease", "-n", hubNamespace, claim, "-o", "jsonpath={.spec.holderIdentity}")).
			To(BeEmpty(), "the leaving replica did not hand its claim back")
	})

	It("uninstalls as the README says, and shows what a ClusterJob left without its hub does", func() {
		// No hub runs here: a ClusterJob that the hub had taken (its
		// finalizer set) is what remains when the hub goes first.
		sample := filepath.Join("config", "samples", "fleetjob_v1alpha1_clusterjob_batch.yaml")
		kubectlRun("apply", "--server-side", "-f", sample)
		kubectlRun("patch", "clusterjob", "clean-disks", "-n", "default", "--type=merge",
			"-p", `{"metadata":{"finalizers":["`+controller.Finalizer+`"]}}`)
		Expect(kubectlFails("delete", "clusterjobs", "--all", "--all-namespaces", "--timeout=2s")).To(ContainSubstring("timed out"))
		Expect(kubectlRun("get", "clusterjob", "clean-disks", "-n", "default", "-o", "jsonpath={.metadata.deletionTimestamp}")).
			NotTo(BeEmpty(), "the ClusterJob is not held by its finalizer")

		kubectlRun("patch", "clusterjob", "clean-disks", "-n", "default", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		Expect(kubectlRun("get", "clusterjobs", "--all-namespaces", "-o", "name")).To(BeEmpty())
		// --wait=false: envtest runs no namespace controller, so the
		// Namespace would never go; the CRDs go (kube-apiserver removes them).
		// The API server's CRD finalizer lists a CRD's objects to delete
		// them first. Here, where no hub ever read them, one CRD of the
		// six was held for minutes, every time, on "could not list
		// instances: storage is (re)initializing" (kube-apiserver 1.36);
		// once each kind was read, never. The README says so.
		kubectlRun("get", "clusterjobs,memberruns,memberclusters,clustersets,clustersetbindings,fleetdisruptionbudgets", "--all-namespaces")
		kubectlRun("delete", "-f", install, "--ignore-not-found", "--wait=false")
		Eventually(func() string {
			return kubectlRun("get", "crd", "-o", `jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Terminating")].message}{"\n"}{end}`)
		}).WithTimeout(2 * time.Minute).ShouldNot(ContainSubstring("fleetjob.io"))
	})
})

// asHub is a config of the API server as the hub's ServiceAccount.
func asHub() *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: hubUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + hubNamespace, "system:authenticated"}}
	return c
}

var _ = Describe("The Helm chart", func() {
	It("renders, with its defaults, the objects of install.yaml but the Namespace, managed by Helm", func() {
		want := asChart(manifests("fleetjob-hub:dev", "dev"))
		crds, templates := renderChart(filepath.Join(repoRoot, "charts", "fleetjob"), hubNamespace, nil)
		got := objects(crds + "\n" + templates)
		Expect(cmp.Diff(want, got)).To(BeEmpty(),
			"charts/fleetjob differs from config/ (-install.yaml +chart): run `make chart`, or change hack/release/chart")
	})

	It("renders, with sharding.enabled and two replicas, the objects of config/sharded but the Namespace", func() {
		want := asChart(manifests("fleetjob-hub:dev", "dev", "sharded"))
		Expect(want).To(HaveKey("Role/"+hubNamespace+"/fleetjob-hub-shard"), "config/sharded no longer adds the shard's Role: this spec checks nothing")
		crds, templates := renderChart(filepath.Join(repoRoot, "charts", "fleetjob"), hubNamespace, map[string]any{
			"sharding": map[string]any{"enabled": true},
			"replicas": 2,
		})
		got := objects(crds + "\n" + templates)
		Expect(cmp.Diff(want, got)).To(BeEmpty(),
			"charts/fleetjob with sharding differs from config/sharded (-kustomize +chart): run `make chart`, or change hack/release/chart")
	})

	It("sets what its values say", func() {
		_, templates := renderChart(filepath.Join(repoRoot, "charts", "fleetjob"), "fleetjob-chart", map[string]any{
			"image":          map[string]any{"repository": "registry.example.com/hub", "tag": "v9", "pullPolicy": "Always"},
			"replicas":       2,
			"leaderElection": false,
			"resources":      map[string]any{"requests": map[string]any{"memory": "1Gi"}},
			"goMemLimit":     "900MiB",
		})
		deploy := objects(templates)["Deployment/fleetjob-chart/fleetjob-hub"]
		Expect(deploy).NotTo(BeNil())
		container := lookup(deploy, "spec", "template", "spec", "containers").([]any)[0]
		Expect(lookup(deploy, "spec", "replicas")).To(BeNumerically("==", 2))
		Expect(lookup(container, "image")).To(Equal("registry.example.com/hub:v9"))
		Expect(lookup(container, "imagePullPolicy")).To(Equal("Always"))
		Expect(lookup(container, "resources")).To(Equal(map[string]any{"requests": map[string]any{"memory": "1Gi"}}))
		Expect(lookup(container, "args")).To(ContainElement("--leader-elect=false"))
		Expect(lookup(container, "env")).To(ContainElement(map[string]any{"name": "GOMEMLIMIT", "value": "900MiB"}))
	})
})

// asChart is the objects of the manifests in path as the chart should
// render them: without the Namespace, managed by Helm.
func asChart(path string) map[string]map[string]any {
	GinkgoHelper()
	want := objects(string(readFile(path)))
	delete(want, "Namespace/<nil>/"+hubNamespace)
	for _, o := range want {
		if labels, ok := lookup(o, "metadata", "labels").(map[string]any); ok && labels["app.kubernetes.io/managed-by"] == "kustomize" {
			labels["app.kubernetes.io/managed-by"] = "Helm"
		}
	}
	return want
}

// lookup walks nested maps by keys; nil where one is missing.
func lookup(o any, keys ...string) any {
	for _, k := range keys {
		m, ok := o.(map[string]any)
		if !ok {
			return nil
		}
		o = m[k]
	}
	return o
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
