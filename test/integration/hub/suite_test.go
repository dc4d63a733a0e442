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
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/controller"
	"github.com/fleetjob/fleetjob/hub/shard"
)

const workNamespace = fleetv1.DefaultWorkNamespace

// member is one member API server and a stand-in for its Job controller.
type member struct {
	name   string
	env    *envtest.Environment
	client client.Client
	runner *jobRunner
}

var (
	scheme  = runtime.NewScheme()
	hubEnv  *envtest.Environment
	hubC    client.Client
	members = map[string]*member{}
	ctx     context.Context
	cancel  context.CancelFunc
	// registry is the registry of the hub startHub started last, for specs
	// that must wait for a registration to be tried.
	registry *clusters.Provider
)

func TestHub(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Hub integration suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// Engaging a member and a few reconciles take seconds on a loaded
	// 2-core CI machine; a spec's own deadlines are set where they matter.
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); assets == "" || err != nil {
		Fail("KUBEBUILDER_ASSETS must point at kube-apiserver and etcd: run `make k8s-bins` and use `make test`")
	}
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(fleetv1.AddToScheme(scheme)).To(Succeed())
	ctx, cancel = context.WithCancel(context.Background())

	// Three API servers start in parallel: a hub and two members.
	hubEnv = newHubEnv()
	envs := []*envtest.Environment{hubEnv, {}, {}}
	var wg sync.WaitGroup
	errs := make([]error, len(envs))
	for i, env := range envs {
		wg.Go(func() { _, errs[i] = env.Start() })
	}
	wg.Wait()
	for _, err := range errs {
		Expect(err).NotTo(HaveOccurred())
	}
	var err error
	hubC, err = client.New(hubEnv.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	prepareHub(hubC)
	for i, name := range []string{"member-a", "member-b"} {
		m := &member{name: name, env: envs[i+1]}
		m.client, err = client.New(m.env.Config, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		Expect(m.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workNamespace}})).To(Succeed())
		m.runner = newJobRunner(m.client)
		go m.runner.run(ctx)
		members[name] = m
	}
	// Different node counts, zone labels for perNodeGroup.
	createNodes(members["member-a"], "a", 4)
	createNodes(members["member-b"], "b", 7)
})

var _ = AfterSuite(func() {
	// Across every spec (nodes deleted, records written by other hubs,
	// hubs restarted, members reconnected), no Job change escaped the
	// change feed: each whole derive found what the feed had said.
	Expect(counterValue("fleetjob_derive_feed_misses_total", nil)).To(BeZero(), "nodes whose Job changed without the change feed naming them")
	cancel()
	for _, env := range []*envtest.Environment{hubEnv, members["member-a"].env, members["member-b"].env} {
		Expect(env.Stop()).To(Succeed())
	}
})

// newHubEnv is a hub API server: fleetjob's CRDs installed.
func newHubEnv() *envtest.Environment {
	return &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
}

// prepareHub creates what a fresh hub needs in its API server: the
// registration namespace, and the set default, which holds every cluster
// registered without a set, bound to namespace default.
func prepareHub(c client.Client) {
	Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workNamespace}})).To(Succeed())
	Expect(c.Create(ctx, &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: fleetv1.DefaultClusterSet}})).To(Succeed())
	Expect(c.Create(ctx, binding("default", fleetv1.DefaultClusterSet))).To(Succeed())
}

// createNodes creates n Ready nodes named <prefix>-node-<i>, zoned round robin.
func createNodes(m *member, prefix string, n int) {
	recreateNodes(m, prefix, seq(1, n)...)
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// recreateNodes creates the Ready nodes <prefix>-node-<i> for each i.
func recreateNodes(m *member, prefix string, ids ...int) {
	for _, i := range ids {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("%s-node-%d", prefix, i),
			Labels: map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%2)},
		}}
		Expect(m.client.Create(ctx, node)).To(Succeed())
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		Expect(m.client.Status().Update(ctx, node)).To(Succeed())
		// The TaintNodesByCondition admission plugin taints new nodes
		// not-ready; the node lifecycle controller, absent here, lifts it.
		node.Spec.Taints = nil
		Expect(m.client.Update(ctx, node)).To(Succeed())
	}
}

// setReady sets node's Ready condition, as its kubelet would.
func setReady(m *member, node string, ready bool) {
	GinkgoHelper()
	n := &corev1.Node{}
	Expect(m.client.Get(ctx, client.ObjectKey{Name: node}, n)).To(Succeed())
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	Expect(m.client.Status().Update(ctx, n)).To(Succeed())
}

// hubOptions are the controller's options in the suite: a fast health
// probe so that a stopped member is noticed within seconds.
type hubOptions struct {
	unreachableTimeout time.Duration
	// errorTimeout is --member-error-timeout (default 10 minutes).
	errorTimeout time.Duration
	// emptySelectionGrace is --empty-selection-grace (default 1 minute).
	emptySelectionGrace time.Duration
	// gcInterval is --gc-interval (default 5 minutes).
	gcInterval time.Duration
	// hubID is --hub-id (default testHubID).
	hubID string
	// calls, when set, counts the reconcilers' calls through each member's
	// clients.
	calls *callCounter
	// config is the hub's API server and identity there; default: the
	// suite's hub, as the envtest admin. A config of another hub API server
	// (newHubEnv) runs a second hub.
	config *rest.Config
	// tenancyOff is --tenancy=off; the suite's hub runs with it on, and
	// namespace default has the set default bound.
	tenancyOff bool
	// wrapMember, when set, wraps each member the reconcilers get, to
	// inject faults in their calls.
	wrapMember func(cluster.Cluster) cluster.Cluster
	// leaderElect is --leader-elect, with the lease in the registration
	// namespace: several such hubs may run on one hub API server, as the
	// replicas of one hub do.
	leaderElect bool
	// endedRunTTL is --ended-run-ttl (default 0, off).
	endedRunTTL time.Duration
	// clock, when set, is the hub's clock (default the real one).
	clock clock.PassiveClock
	// metrics, when set, serves /metrics as the --metrics-* flags say
	// (default: no metrics server).
	metrics *controller.MetricsServing
	// shard, when set, runs the hub as one replica of a sharded hub
	// (--shard): it runs the runs of the members its shard owns. Needs
	// leaderElect, as --shard does.
	shard *hubShard
	// collector, when set, is where the hub's Collector is registered, as
	// cmd/fleetjob-hub registers it with controller-runtime's registry:
	// each hub of a spec has its own, the hubs share one process.
	collector prometheus.Registerer
}

// hubShard is a replica's identity in a sharded hub; dead, once set, cuts
// its shard off the hub, as a killed process is (then stop it).
type hubShard struct {
	id   string
	dead atomic.Bool
}

// testHubID is the identity of the suite's hub.
const testHubID = "hub-under-test"

// liveHubs counts the hubs running per hub API server, and those of them
// that elect a leader. A hub an earlier spec failed to stop goes on as the
// suite's hub beside the next spec's and takes its runs; startHub refuses to
// start another then, naming the cause. Hubs that elect a leader may run
// together: only one of them acts.
var liveHubs = struct {
	sync.Mutex
	n, electing map[*rest.Config]int
}{n: map[*rest.Config]int{}, electing: map[*rest.Config]int{}}

// startHub runs the hub controller as cmd/fleetjob-hub wires it, and
// returns a function that stops it and waits until it stopped.
func startHub(o hubOptions) func() {
	if o.unreachableTimeout == 0 {
		o.unreachableTimeout = 10 * time.Minute
	}
	if o.errorTimeout == 0 {
		o.errorTimeout = 10 * time.Minute
	}
	if o.emptySelectionGrace == 0 {
		o.emptySelectionGrace = time.Minute
	}
	if o.gcInterval == 0 {
		o.gcInterval = 5 * time.Minute
	}
	if o.hubID == "" {
		o.hubID = testHubID
	}
	var share *shard.Shard
	if o.shard != nil {
		Expect(o.leaderElect).To(BeTrue(), "a sharded hub elects a leader")
		share = newTestShard(o.shard.id, &o.shard.dead)
	}
	provider := clusters.New(clusters.Options{
		Namespace: workNamespace, QPS: 100, Burst: 200,
		RequestTimeout: 5 * time.Second, ConnectTimeout: 10 * time.Second, HealthInterval: 500 * time.Millisecond,
		Shard: share,
	})
	registry = provider
	cfg := hubEnv.Config
	if o.config != nil {
		cfg = o.config
	}
	liveHubs.Lock()
	live, electing := liveHubs.n[cfg], liveHubs.electing[cfg]
	free := live == 0 || o.leaderElect && live == electing
	if free {
		liveHubs.n[cfg]++
		if o.leaderElect {
			liveHubs.electing[cfg]++
		}
	}
	liveHubs.Unlock()
	Expect(free).To(BeTrue(), "a hub is still running on this hub API server: an earlier spec did not stop it")
	mgrOpts := mcmanager.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  controller.CacheOptions(workNamespace),
	}
	if o.metrics != nil {
		var err error
		mgrOpts.Metrics, err = o.metrics.Options()
		Expect(err).NotTo(HaveOccurred())
	}
	if o.leaderElect {
		controller.ElectLeader(&mgrOpts, workNamespace)
	}
	mgr, err := mcmanager.New(cfg, provider.ForManager(), mgrOpts)
	Expect(err).NotTo(HaveOccurred())
	members := mgr
	if o.calls != nil {
		members = &countingManager{Manager: mgr, calls: o.calls}
	}
	if o.wrapMember != nil {
		members = &wrappingManager{Manager: members, wrap: o.wrapMember}
	}
	opts := controller.DefaultOptions()
	opts.RegistrationNamespace, opts.UnreachableTimeout, opts.MemberTimeout, opts.Parallelism, opts.MemberWorkers = workNamespace, o.unreachableTimeout, 10*time.Second, 4, 4
	opts.MemberErrorTimeout, opts.EmptySelectionGrace, opts.ConnectTimeout = o.errorTimeout, o.emptySelectionGrace, 10*time.Second
	// No minimum age: specs create orphans and want them gone at once; the
	// live check of each ClusterJob still guards runs.
	opts.GCMinAge = 0
	opts.HubID, opts.GCInterval, opts.Tenancy, opts.EndedRunTTL, opts.Clock = o.hubID, o.gcInterval, !o.tenancyOff, o.endedRunTTL, o.clock
	hub, err := controller.SetupHub(ctx, mgr, members, provider, opts)
	Expect(err).NotTo(HaveOccurred())
	var collector *controller.Collector
	if o.collector != nil {
		collector = controller.NewCollector(mgr, workNamespace)
		Expect(o.collector.Register(collector)).To(Succeed())
	}
	mgrCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		if err := hub.Start(mgrCtx); err != nil {
			// Say what did not stop: a stuck shutdown is a bug worth a stack.
			_ = pprof.Lookup("goroutine").WriteTo(GinkgoWriter, 1)
			Fail(err.Error())
		}
	}()
	var once sync.Once
	return func() {
		stop()
		<-done
		once.Do(func() {
			if collector != nil {
				o.collector.Unregister(collector)
			}
			liveHubs.Lock()
			defer liveHubs.Unlock()
			liveHubs.n[cfg]--
			if o.leaderElect {
				liveHubs.electing[cfg]--
			}
		})
	}
}

// binding is the ClusterSetBinding of set in namespace.
func binding(namespace, set string) *fleetv1.ClusterSetBinding {
	return &fleetv1.ClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: set}, Spec: fleetv1.ClusterSetBindingSpec{ClusterSet: set}}
}

// register creates the hub Secret of a member as `user`, with labels.
func register(m *member, user envtest.User, labels map[string]string) {
	u, err := m.env.AddUser(user, nil)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	registerKubeconfig(m.name, kubeconfig, labels)
}

func registerKubeconfig(name string, kubeconfig []byte, labels map[string]string) {
	registerSecret(name, kubeconfig, labels, "")
}

// registerIn registers m as user with namespace as its work namespace.
func registerIn(m *member, user envtest.User, namespace string) {
	u, err := m.env.AddUser(user, nil)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	registerSecret(m.name, kubeconfig, nil, namespace)
}

// registerSecret creates a registration Secret, as a user would by hand;
// workNS, when set, is its fleetjob.io/namespace annotation.
func registerSecret(name string, kubeconfig []byte, labels map[string]string, workNS string) {
	Expect(hubC.Create(ctx, registration(name, kubeconfig, labels, workNS))).To(Succeed())
}

// registration is the registration Secret registerSecret creates.
func registration(name string, kubeconfig []byte, labels map[string]string, workNS string) *corev1.Secret {
	l := map[string]string{fleetv1.RegistrationLabel: "true"}
	for k, v := range labels {
		l[k] = v
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workNamespace, Labels: l},
		Data:       map[string][]byte{fleetv1.KubeconfigKey: kubeconfig},
	}
	if workNS != "" {
		secret.Annotations = map[string]string{fleetv1.NamespaceAnnotation: workNS}
	}
	return secret
}

func unregister(name string) {
	Expect(client.IgnoreNotFound(hubC.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workNamespace}}))).To(Succeed())
}

var admin = envtest.User{Name: "fleetjob-admin", Groups: []string{"system:masters"}}

// memberJobs lists the fleetjob Jobs of a member, in every namespace.
func memberJobs(m *member) []batchv1.Job {
	jobs := &batchv1.JobList{}
	Expect(m.client.List(ctx, jobs, client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue})).To(Succeed())
	return jobs.Items
}
