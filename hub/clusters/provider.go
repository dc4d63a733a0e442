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

// Package clusters is the hub's registry of member clusters: it reads the
// registration Secrets, checks each member before engaging it, engages
// members independently of one another, watches their health, and tells the
// hub when a member's state changes.
//
// It replaces the stock kubeconfig provider of multicluster-runtime, which
// engages members one at a time and hangs for good on a member whose
// credentials connect but may not list a watched kind, so that one bad
// registration stopped every later one.
package clusters

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	"github.com/fleetjob/fleetjob/hub/shard"
)

// Options configure how the hub talks to members.
type Options struct {
	// Namespace is the hub namespace holding registration Secrets.
	Namespace string
	// QPS and Burst limit each member client. client-go's defaults (5/10)
	// would make a 1,000-node group take minutes to start.
	QPS   float32
	Burst int
	// RequestTimeout bounds each probe of a member; other calls are bounded
	// by the caller's context.
	RequestTimeout time.Duration
	// ConnectTimeout bounds checking, syncing and engaging a member; a member
	// that takes longer is retried with backoff and blocks no other.
	ConnectTimeout time.Duration
	// HealthInterval is how often an engaged member is probed. Watches alone
	// do not tell a stopped API server from a quiet one; the probe does.
	HealthInterval time.Duration
	// Recorder, when set, receives Warning events on registration Secrets
	// that cannot be engaged.
	Recorder events.EventRecorder
	// Shard, when set, divides the members among the hub's replicas: this
	// one connects only the members it owns and has claimed, and writes to
	// them only through the shard's fence. Nil: this replica serves every
	// member.
	Shard *shard.Shard
}

// Member is a snapshot of one registered member cluster.
type Member struct {
	// Name is the cluster name: the registration Secret's name.
	Name string
	// Labels are the registration Secret's labels, matched by
	// spec.clusterSelector.
	Labels map[string]string
	// Namespace is the member namespace where Jobs run.
	Namespace string
	// Engaged is true once the member's caches synced and the controllers
	// watch it; it stays true while the member is briefly unreachable.
	Engaged bool
	// Reachable is true when the last probe of the member succeeded.
	Reachable bool
	// Reason and Message tell why a member is not reachable or not engaged.
	Reason, Message string
	// LastReachable is when the member last answered.
	LastReachable time.Time
	// UnreachableSince is when the member stopped answering, or when it was
	// first seen, if it never answered; zero while reachable, and while
	// another hub replica serves it (ServedByPeer).
	UnreachableSince time.Time
	// ClusterID identifies the member cluster (the UID of its kube-system
	// namespace), once engaged.
	ClusterID string
}

// member is the registry's record of one cluster.
type member struct {
	snapshot Member
	// clusterID is the identity of the cluster the registration points at,
	// claimed before it connects: one cluster engages under one name only.
	clusterID string
	hash      string
	cluster   cluster.Cluster
	cancel    context.CancelFunc
	attempts  int
	// created is the registration Secret's creationTimestamp.
	created time.Time
	// lostTo is the registration that runs the cluster this one points at,
	// when another does (see owner).
	lostTo claimant
	// seen is what the hub saw of the cluster besides its connection, for
	// its MemberCluster.
	seen observation
}

// Provider is a multicluster-runtime provider over registration Secrets.
type Provider struct {
	opts Options
	// notifier tells the hub's reconcilers of connection changes;
	// published tells the MemberCluster publisher of those and of what a
	// member's inventory probe read.
	notifier, published notifier

	mu       sync.RWMutex
	members  map[string]*member
	aware    multicluster.Aware
	baseCtx  context.Context
	ready    chan struct{}
	indexers []indexer
	now      func() time.Time
	// hub reads the MemberRuns' rows and registration Secrets, to decide
	// between registrations of one cluster.
	hub client.Reader
	// wakeups has a registration reconciled before its backoff ends, when
	// another registration of its cluster took it over or let it go.
	wakeups chan event.GenericEvent
	// done is closed when the provider stops; pending wake-ups give up.
	done chan struct{}
	// startedAt is when the provider started: registrations connect in no
	// set order until ConnectTimeout after it.
	startedAt time.Time
}

type indexer struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

var (
	_ multicluster.Provider         = &Provider{}
	_ multicluster.ProviderRunnable = &Provider{}
)

// New returns a Provider; SetupWithManager wires it into a manager.
func New(opts Options) *Provider {
	p := &Provider{
		opts:      opts,
		notifier:  newNotifier(),
		published: newNotifier(),
		members:   map[string]*member{},
		ready:     make(chan struct{}),
		now:       time.Now,
		wakeups:   make(chan event.GenericEvent),
		done:      make(chan struct{}),
	}
	p.notifier.also = &p.published
	return p
}

// Start records where to engage members; the manager calls it once.
func (p *Provider) Start(ctx context.Context, aware multicluster.Aware) error {
	p.mu.Lock()
	p.aware, p.baseCtx, p.startedAt = aware, ctx, p.now()
	p.mu.Unlock()
	close(p.ready)
	<-ctx.Done()
	close(p.done)
	return nil
}

// ForManager is p as mcmanager.New must be given it. Unsharded, p itself:
// the manager starts it with its leader-election group, as it does every
// runnable that does not say otherwise, and only the leader connects to
// members. Sharded, p without its Start, which the manager would likewise
// run on the leader only: SetupWithManager starts it on every replica.
func (p *Provider) ForManager() multicluster.Provider {
	if p.opts.Shard == nil {
		return p
	}
	return providerView{p}
}

// Sharded is the shard of the hub's replicas p serves its share of, nil
// when it serves every member.
func (p *Provider) Sharded() *shard.Shard { return p.opts.Shard }

// providerView is a Provider without Start.
type providerView struct{ p *Provider }

func (v providerView) Get(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	return v.p.Get(ctx, name)
}

func (v providerView) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	return v.p.IndexField(ctx, obj, field, extract)
}

// startOnEveryReplica starts a sharded provider on every replica of the
// hub: each connects to the members it serves, elected or not.
type startOnEveryReplica struct {
	p     *Provider
	aware multicluster.Aware
}

func (r startOnEveryReplica) Start(ctx context.Context) error { return r.p.Start(ctx, r.aware) }

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (startOnEveryReplica) NeedLeaderElection() bool { return false }

// Get returns an engaged member cluster.
func (p *Provider) Get(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if m, ok := p.members[string(name)]; ok && m.cluster != nil && m.snapshot.Engaged {
		return m.cluster, nil
	}
	return nil, multicluster.ErrClusterNotFound
}

// IndexField adds an index to every member's cache, now and later.
func (p *Provider) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	p.mu.Lock()
	p.indexers = append(p.indexers, indexer{obj: obj, field: field, extract: extract})
	clusters := make([]cluster.Cluster, 0, len(p.members))
	for _, m := range p.members {
		if m.cluster != nil {
			clusters = append(clusters, m.cluster)
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, cl := range clusters {
		errs = append(errs, cl.GetFieldIndexer().IndexField(ctx, obj, field, extract))
	}
	return errors.Join(errs...)
}

// Members returns every registered member, sorted by name.
func (p *Provider) Members() []Member {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]Member, 0, len(p.members))
	for _, name := range slices.Sorted(maps.Keys(p.members)) {
		out = append(out, p.members[name].snapshot.clone())
	}
	return out
}

// Member returns one registered member.
func (p *Provider) Member(name string) (Member, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	m, ok := p.members[name]
	if !ok {
		return Member{}, false
	}
	return m.snapshot.clone(), true
}

// WaitForChanges blocks until members changed (registered, engaged,
// reachable again, unreachable, removed) and returns their names.
func (p *Provider) WaitForChanges(ctx context.Context) ([]string, error) {
	return p.notifier.wait(ctx)
}

func (m Member) clone() Member {
	m.Labels = maps.Clone(m.Labels)
	return m
}

// remove disengages and forgets a member, and wakes the registrations of its
// cluster it kept out.
func (p *Provider) remove(name string) {
	p.mu.Lock()
	m, ok := p.members[name]
	delete(p.members, name)
	if ok && m.clusterID != "" {
		p.wakeSharing(name, m.clusterID)
	}
	p.mu.Unlock()
	forgetWatches(name)
	if ok {
		if m.cancel != nil {
			m.cancel()
		}
		p.notifier.notify(name)
	}
}

// restConfig applies the hub's limits to a member's REST config.
func (p *Provider) restConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	// No rest.Config.Timeout: client-go applies it to watches too, and the
	// member caches built from this config would have every watch cut after
	// that long. Every single call is bounded by its context instead.
	cfg.QPS, cfg.Burst, cfg.Timeout = p.opts.QPS, p.opts.Burst, 0
	cfg.UserAgent = "fleetjob-hub"
	return cfg
}

// SetRecorder sets where Warning events about registrations go; the
// manager that owns the recorder is built after the provider.
func (p *Provider) SetRecorder(r events.EventRecorder) { p.opts.Recorder = r }
