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
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/controller"
	"github.com/fleetjob/fleetjob/hub/shard"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// Short sessions, so that a killed replica's members move within seconds.
var testShard = shard.Options{Namespace: workNamespace, LeaseDuration: 6 * time.Second, RenewPeriod: time.Second, Margin: 2 * time.Second}

// replica is one hub replica's registry, sharded.
type replica struct {
	id       string
	shard    *shard.Shard
	registry *clusters.Provider
	// stop stops the replica as a deleted pod stops: its claims are
	// handed back. kill stops it as a killed one: its session just
	// stops being renewed.
	stop, kill func()
}

// newTestShard is the shard of replica id, on the suite's hub API server
// (testShard's short sessions); dead, once set, cuts it off the hub, as a
// killed process is.
func newTestShard(id string, dead *atomic.Bool) *shard.Shard {
	opts := testShard
	opts.Identity = id
	refuse := func() error {
		if dead.Load() {
			return errors.New("the replica was killed")
		}
		return nil
	}
	direct, err := client.NewWithWatch(hubEnv.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	hub := interceptor.NewClient(direct, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, o ...client.GetOption) error {
			return cmp.Or(refuse(), c.Get(ctx, key, obj, o...))
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, o ...client.ListOption) error {
			return cmp.Or(refuse(), c.List(ctx, list, o...))
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.CreateOption) error {
			return cmp.Or(refuse(), c.Create(ctx, obj, o...))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.UpdateOption) error {
			return cmp.Or(refuse(), c.Update(ctx, obj, o...))
		},
	})
	s, err := shard.New(hub, hub, opts, logf.Log.WithName("shard").WithValues("replica", id))
	Expect(err).NotTo(HaveOccurred())
	return s
}

// startReplica runs the registry of one hub replica with its shard, on a
// manager that elects no leader: every replica connects its own members.
func startReplica(id string) *replica {
	dead := &atomic.Bool{}
	s := newTestShard(id, dead)
	provider := clusters.New(clusters.Options{
		Namespace: workNamespace, QPS: 100, Burst: 200,
		RequestTimeout: 5 * time.Second, ConnectTimeout: 10 * time.Second, HealthInterval: 500 * time.Millisecond,
		Shard: s,
	})
	mgr, err := mcmanager.New(hubEnv.Config, provider.ForManager(), mcmanager.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  controller.CacheOptions(workNamespace),
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(provider.SetupWithManager(mgr)).To(Succeed())

	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(mgrDone)
		Expect(mgr.Start(mgrCtx)).To(Succeed())
	}()
	// The session, renewed until the replica stops; Run's end hands the
	// claims back, unless the replica was killed: then none of its calls
	// reaches the hub any more.
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		_ = s.Run(runCtx)
	}()
	r := &replica{id: id, shard: s, registry: provider}
	stopped := false
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		stopMgr()
		<-mgrDone
		stopRun()
		<-runDone
	}
	r.kill = func() {
		if stopped {
			return
		}
		stopped = true
		dead.Store(true)
		stopMgr()
		<-mgrDone
		stopRun()
		<-runDone
	}
	return r
}

// engaged says whether name is engaged in r.
func (r *replica) engaged(name string) bool {
	m, ok := r.registry.Member(name)
	return ok && m.Engaged
}

// claimedBy is the replica whose session member's claim names, "" for none.
func claimedBy(g Gomega, member string) string {
	l := &coordinationv1.Lease{}
	g.Expect(hubC.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: naming.MemberLeaseName(member)}, l)).To(Succeed())
	if ptr.Deref(l.Spec.HolderIdentity, "") == "" {
		return ""
	}
	return l.Annotations[shard.ReplicaAnnotation]
}

// deleteShardLeases deletes the sessions and claims of the replicas a spec
// ran, so that the next spec's replicas start from none.
func deleteShardLeases() {
	leases := &coordinationv1.LeaseList{}
	Expect(hubC.List(ctx, leases, client.InNamespace(workNamespace))).To(Succeed())
	for i := range leases.Items {
		if l := &leases.Items[i]; l.Labels[shard.PeerLabel] == "true" || l.Labels[shard.ClaimLabel] == "true" {
			Expect(client.IgnoreNotFound(hubC.Delete(ctx, l))).To(Succeed())
		}
	}
	grants := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, Name: naming.DisruptionGrants}}
	Expect(client.IgnoreNotFound(hubC.Delete(ctx, grants))).To(Succeed())
}

// splitting returns two replica identities that own one member each.
func splitting(a, b string) (string, string) {
	for i := 0; i < 100; i++ {
		x, y := fmt.Sprintf("replica-%d", i), fmt.Sprintf("replica-%d", i+1)
		if oa := shard.OwnerOf(a, []string{x, y}); oa != shard.OwnerOf(b, []string{x, y}) {
			if oa == x {
				return x, y
			}
			return y, x
		}
	}
	Fail("no two replica names split the members")
	return "", ""
}

var _ = Describe("Hub replicas sharing the members", func() {
	var replicas []*replica

	BeforeEach(func() {
		register(members["member-a"], admin, nil)
		register(members["member-b"], admin, nil)
	})

	AfterEach(func() {
		for _, r := range replicas {
			r.stop()
		}
		replicas = nil
		unregister("member-a")
		unregister("member-b")
		deleteShardLeases()
	})

	It("connects each member in one replica only, fences the others' writes, and moves members when a replica stops or dies", func() {
		idA, idB := splitting("member-a", "member-b") // idA owns member-a, idB member-b
		a, b := startReplica(idA), startReplica(idB)
		replicas = []*replica{a, b}

		By("each member engaged by its owner only, the other's row naming it")
		Eventually(func(g Gomega) {
			g.Expect(a.engaged("member-a")).To(BeTrue(), "member-a in its owner")
			g.Expect(b.engaged("member-b")).To(BeTrue(), "member-b in its owner")
			g.Expect(claimedBy(g, "member-a")).To(Equal(idA))
			g.Expect(claimedBy(g, "member-b")).To(Equal(idB))
			for _, c := range []struct {
				r    *replica
				name string
				by   string
			}{{a, "member-b", idB}, {b, "member-a", idA}} {
				m, ok := c.r.registry.Member(c.name)
				g.Expect(ok).To(BeTrue())
				g.Expect(m.Engaged).To(BeFalse(), "%s engaged in %s too", c.name, c.r.id)
				g.Expect(m.Reason).To(Equal(fleetv1.ClusterReasonServedByPeer))
				g.Expect(m.Message).To(ContainSubstring(c.by))
			}
		}).WithTimeout(30 * time.Second).Should(Succeed())

		By("the owner writes through the fence on a real member client")
		clA, err := a.registry.Get(ctx, multicluster.ClusterName("member-a"))
		Expect(err).NotTo(HaveOccurred())
		probe := func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: workNamespace, GenerateName: "fence-probe-"}}
			return clA.GetClient().Create(ctx, cm)
		}
		Expect(probe()).To(Succeed())

		By("a replica that stops hands its member over within seconds, and writes nothing after")
		stopped := time.Now()
		a.stop()
		var notHeld *shard.NotHeldError
		Expect(errors.As(probe(), &notHeld)).To(BeTrue(), "a write of the stopped replica was not refused by the fence")
		Eventually(func() bool { return b.engaged("member-a") }).WithTimeout(10*time.Second).WithPolling(100*time.Millisecond).
			Should(BeTrue(), "member-a moves to the remaining replica")
		AddReportEntry("member hand-over on a clean stop", time.Since(stopped).String())
		// The stop hands the claim back and ends the session: the other
		// replica takes the member at its next renewal (1 s) and connects
		// it, without waiting for the session to expire (6 s).
		Expect(time.Since(stopped)).To(BeNumerically("<", 5*time.Second), "hand-over within a renewal and a connect")

		By("a replica that comes back takes its share back")
		a = startReplica(idA)
		replicas = append(replicas, a)
		Eventually(func(g Gomega) {
			g.Expect(a.engaged("member-a")).To(BeTrue())
			g.Expect(b.engaged("member-a")).To(BeFalse())
			g.Expect(claimedBy(g, "member-a")).To(Equal(idA))
		}).WithTimeout(20 * time.Second).Should(Succeed())

		By("a replica killed mid-flight: its member moves once its session expired, not before")
		killed := time.Now()
		a.kill()
		Consistently(func() bool { return b.engaged("member-a") }).WithTimeout(testShard.LeaseDuration-2*time.Second).WithPolling(100*time.Millisecond).
			Should(BeFalse(), "member-a taken while the killed replica's session could still be live")
		Eventually(func() bool { return b.engaged("member-a") }).WithTimeout(15*time.Second).WithPolling(100*time.Millisecond).
			Should(BeTrue(), "member-a moves once the session expired")
		AddReportEntry("member move after a kill", time.Since(killed).String())
		Expect(time.Since(killed)).To(BeNumerically("<", testShard.LeaseDuration+8*time.Second), "within the session, a renewal and a connect")
		Expect(b.engaged("member-b")).To(BeTrue(), "the survivor kept its own member throughout")
	})
})

// addMembers starts a member API server for each name, with the given
// number of Ready nodes named <prefix>-node-<i> (prefix: the name's last
// letter), and adds them to the suite's members until the container
// ends: then they are stopped, and their registrations and MemberClusters
// go.
func addMembers(nodes map[string]int) {
	envs := map[string]*envtest.Environment{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for name := range nodes {
		env := &envtest.Environment{}
		envs[name] = env
		wg.Go(func() {
			if _, err := env.Start(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	DeferCleanup(func() {
		for name, env := range envs {
			delete(members, name)
			Expect(client.IgnoreNotFound(hubC.Delete(ctx, &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}))).To(Succeed())
			unregister(name)
			Expect(env.Stop()).To(Succeed())
		}
	})
	Expect(errs).To(BeEmpty())
	for name, env := range envs {
		c, err := client.New(env.Config, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		m := &member{name: name, env: env, client: c, runner: newJobRunner(c)}
		Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workNamespace}})).To(Succeed())
		runCtx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go m.runner.run(runCtx)
		members[name] = m
		createNodes(m, name[len(name)-1:], nodes[name])
	}
}

// memberNodes are the nodes of m, each once: what one Job per node of a
// run over all of them gives.
func memberNodes(m *member) map[string]int {
	GinkgoHelper()
	nodes := &corev1.NodeList{}
	Expect(m.client.List(ctx, nodes)).To(Succeed())
	out := map[string]int{}
	for i := range nodes.Items {
		out[nodes.Items[i].Name] = 1
	}
	return out
}
