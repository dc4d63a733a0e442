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

package clusters

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/shard"
)

// shardedHub is a hub holding testName's registration, whose server no
// connect reaches, and the Leases of the replicas' shards.
func shardedHub(t *testing.T) (*corev1.Secret, client.Client) {
	t.Helper()
	secret := makeSecret(testName, kubeconfigData(t, func(c *clientcmdapi.Config) {
		c.Clusters["c"].Server = "https://127.0.0.1:1" // any connect fails at once
	})).Obj()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, coordinationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build()
	return secret, hub
}

// A member moves between replicas as they come: the replica that served it
// disengages it and hands its claim back at once; the one that now owns it
// waits for that hand-over, then connects it.
func TestShardedRegistrationMoves(t *testing.T) {
	secret, hub := shardedHub(t)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	shards := map[string]*shard.Shard{}
	for _, id := range []string{"hub-a", "hub-b"} {
		s, err := shard.New(hub, hub, shard.Options{Namespace: testNamespace, Identity: id, Clock: clk}, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		shards[id] = s
	}
	// The replica that will lose the member serves it alone first.
	later := shard.OwnerOf(testName, []string{"hub-a", "hub-b"})
	first := map[string]string{"hub-a": "hub-b", "hub-b": "hub-a"}[later]
	shards[first].Step(ctx)
	if !shards[first].Owns(testName) {
		t.Fatalf("%s alone does not own %s", first, testName)
	}
	if err := shards[first].Claim(ctx, testName); err != nil {
		t.Fatal(err)
	}
	old := newTestProvider(&fakeClock{t: t0})
	old.opts.Shard, old.opts.ConnectTimeout = shards[first], 5*time.Second
	close(old.ready)
	stop := &cancelRecorder{}
	claimed(old, testName, t0, &fakeCluster{id: 1}, stop.cancel)

	// The other replica comes; both see it.
	for range 2 {
		shards[later].Step(ctx)
		shards[first].Step(ctx)
	}
	next := newTestProvider(&fakeClock{t: t0})
	next.opts.Shard = shards[later]
	next.opts.ConnectTimeout = 5 * time.Second
	close(next.ready)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(secret)}

	// The new owner waits: the old one has not handed the member over.
	res, err := (&secretReconciler{provider: next, hub: hub}).Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := next.Member(testName)
	if res.RequeueAfter != claimRetry || m.Reason != fleetv1.ClusterReasonConnecting || !strings.Contains(m.Message, first) {
		t.Errorf("new owner before the hand-over: requeue %s, row %s %q; want requeue %s, Connecting naming %s", res.RequeueAfter, m.Reason, m.Message, claimRetry, first)
	}

	// The old owner, woken by the change of replicas, lets go.
	res, err = (&secretReconciler{provider: old, hub: hub}).Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	m, _ = old.Member(testName)
	if res.RequeueAfter != 0 || m.Engaged || m.Reason != fleetv1.ClusterReasonServedByPeer || !strings.Contains(m.Message, later) {
		t.Errorf("old owner: requeue %s, engaged %t, row %s %q; want no requeue, disengaged, ServedByPeer naming %s", res.RequeueAfter, m.Engaged, m.Reason, m.Message, later)
	}
	if stop.calls != 1 {
		t.Errorf("old owner stopped the member's caches %d times, want 1", stop.calls)
	}
	if shards[first].Holds(testName) {
		t.Errorf("old owner may still write to the member")
	}

	// The new owner claims it without waiting for the old one's session,
	// and connects (here failing: nothing listens).
	if _, err := (&secretReconciler{provider: next, hub: hub}).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	m, _ = next.Member(testName)
	if !shards[later].Holds(testName) || m.Reason != fleetv1.ClusterReasonUnreachable {
		t.Errorf("new owner after the hand-over: holds %t, row %s %q; want held and a connect tried (Unreachable)", shards[later].Holds(testName), m.Reason, m.Message)
	}
}

// A replica that sees a member served by a peer does not count it
// unreachable: made its owner an hour later, the unreachable timeout counts
// from then, or its first reconcile would fail the member's runs.
func TestServedByPeerIsNotUnreachable(t *testing.T) {
	secret, hub := shardedHub(t)
	ctx := context.Background()
	clocks := map[string]*clocktesting.FakeClock{}
	shards := map[string]*shard.Shard{}
	for _, id := range []string{"hub-a", "hub-b"} {
		clocks[id] = clocktesting.NewFakeClock(time.Now())
		s, err := shard.New(hub, hub, shard.Options{Namespace: testNamespace, Identity: id, Clock: clocks[id]}, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		shards[id] = s
	}
	owner := shard.OwnerOf(testName, []string{"hub-a", "hub-b"})
	other := map[string]string{"hub-a": "hub-b", "hub-b": "hub-a"}[owner]
	for range 2 {
		shards[owner].Step(ctx)
		shards[other].Step(ctx)
	}
	clk := &fakeClock{t: t0}
	p := newTestProvider(clk)
	p.opts.Shard, p.opts.ConnectTimeout = shards[other], 5*time.Second
	close(p.ready)
	r := &secretReconciler{provider: p, hub: hub}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(secret)}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	m, _ := p.Member(testName)
	if m.Reason != fleetv1.ClusterReasonServedByPeer || !m.UnreachableSince.IsZero() {
		t.Fatalf("served by %s: row %s, unreachable since %v; want ServedByPeer, not unreachable", owner, m.Reason, m.UnreachableSince)
	}

	// An hour later the owner is gone (its session expired): this
	// replica takes the member, and fails to connect.
	clk.t = t0.Add(time.Hour)
	clocks[other].Step(time.Hour)
	shards[other].Step(ctx)
	shards[other].Step(ctx)
	if !shards[other].Owns(testName) {
		t.Fatalf("%s does not own %s once %s is gone", other, testName, owner)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	m, _ = p.Member(testName)
	if m.Reason != fleetv1.ClusterReasonUnreachable || !m.UnreachableSince.Equal(clk.t) {
		t.Errorf("owner after an hour served elsewhere: row %s, unreachable since %v; want Unreachable since %v (when it became the owner)", m.Reason, m.UnreachableSince, clk.t)
	}
}

// Only the replica serving a member publishes its MemberCluster: another
// one, which knows it as served elsewhere, writes nothing, not even the
// delete of a MemberCluster whose registration it no longer sees, and
// exports none of its series. The owner publishes it.
func TestMemberClusterPublishedByItsOwnerOnly(t *testing.T) {
	secret, _ := shardedHub(t)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, coordinationv1.AddToScheme, fleetv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	unregistered := &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "unregistered"}}
	writes := hubWrites{}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret, unregistered).
		WithStatusSubresource(&fleetv1.MemberCluster{}).WithInterceptorFuncs(writes.interceptor()).Build()
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	ids := []string{"hub-a", "hub-b"}
	shards := map[string]*shard.Shard{}
	for _, id := range ids {
		s, err := shard.New(hub, hub, shard.Options{Namespace: testNamespace, Identity: id, Clock: clk}, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		shards[id] = s
	}
	for range 2 {
		for _, id := range ids {
			shards[id].Step(ctx)
		}
	}
	clear(writes) // the sessions' Leases
	owner := shard.OwnerOf(testName, ids)
	other := map[string]string{"hub-a": "hub-b", "hub-b": "hub-a"}[owner]
	unregisteredOwner := shard.OwnerOf(unregistered.Name, ids)
	reconcile := func(id, name string) {
		t.Helper()
		p := newTestProvider(&fakeClock{t: t0})
		p.opts.Shard = shards[id]
		p.upsert(registration{name: testName, labels: secret.Labels, namespace: testNamespace, hash: "h1"})
		if _, err := (&memberClusterReconciler{provider: p, hub: hub}).Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}

	reconcile(other, testName)
	reconcile(map[string]string{"hub-a": "hub-b", "hub-b": "hub-a"}[unregisteredOwner], unregistered.Name)
	if len(writes) != 0 {
		t.Errorf("writes of the replica that serves neither: %v, want none", writes)
	}
	if got := series(t, memberClusterReady, testName); got != -1 {
		t.Errorf("fleetjob_member_cluster_ready of a member served elsewhere = %v, want no series", got)
	}

	reconcile(owner, testName)
	reconcile(unregisteredOwner, unregistered.Name)
	if writes["create"] != 1 || writes["delete"] != 1 {
		t.Errorf("writes of the owners: %v, want the MemberCluster of %s created and that of %s deleted", writes, testName, unregistered.Name)
	}
}

// A sharded registry is given to the manager without its Start, which the
// manager would run on the leader only (SetupWithManager runs it on every
// replica); an unsharded one is given whole.
func TestForManager(t *testing.T) {
	_, hub := shardedHub(t)
	p := newTestProvider(&fakeClock{t: t0})
	if _, ok := p.ForManager().(multicluster.ProviderRunnable); !ok {
		t.Error("unsharded: ForManager() has no Start; want the registry itself")
	}
	s, err := shard.New(hub, hub, shard.Options{Namespace: testNamespace, Identity: "hub-a"}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	p.opts.Shard = s
	view := p.ForManager()
	if _, ok := view.(multicluster.ProviderRunnable); ok {
		t.Error("sharded: ForManager() has a Start the manager would run on the leader only")
	}
	if _, err := view.Get(context.Background(), testName); err == nil {
		t.Errorf("sharded: Get of a member never engaged = nil error, want not found")
	}
}
