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

// Package disruption keeps the fleet's count of disrupted nodes and grants
// node starts under FleetDisruptionBudgets. Member reconciles of different
// runs run in parallel, so the count that decides a grant cannot be read
// from the MemberRuns' rows (a reconcile behind, and written after the
// start): it is a ledger in the hub's memory, which every disruptive run
// updates from what it observed in its member, and in which a grant is
// reserved in the same critical section that decides it. On a sharded
// hub each replica's ledger counts its own members' runs and shares its
// counts with the other replicas (Shared).
package disruption

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// publishAttempts bounds how often a grant or a publication reads and
// writes again after losing the shared record to another replica's write.
const publishAttempts = 8

// Key names one disruptive run in one cluster: its MemberRun.
type Key struct {
	// Run is the MemberRun.
	Run types.NamespacedName
	// ClusterJob is the run's ClusterJob, in Run's namespace: rows name it.
	ClusterJob string
	// Cluster is the member cluster.
	Cluster string
}

// Cap is one budget's limits as they bear on a start in one cluster.
type Cap struct {
	// Budget is the FleetDisruptionBudget's name.
	Budget string
	// PerCluster caps the disrupted nodes of the cluster; 0 when the
	// budget sets no per-cluster cap.
	PerCluster int
	// Total caps the disrupted nodes of every cluster in Clusters
	// together; 0 when the budget sets no total.
	Total int
	// Clusters are the clusters the budget selects.
	Clusters map[string]bool
}

// Request asks for node starts in one cluster.
type Request struct {
	Key
	// Want is how many nodes the run would start now.
	Want int
	// Caps are the budgets selecting Key.Cluster.
	Caps []Cap
	// StandIns are the disrupted nodes of runs the ledger has not observed
	// since the hub started, as their last written rows say: used where
	// the ledger has no entry of the run.
	StandIns map[Key]int
}

// Grant is the answer to a Request.
type Grant struct {
	// Nodes is how many nodes may start now, at most Want: all of them
	// when no cap binds.
	Nodes int
	// Hold, when Nodes < Want, says which budget holds the rest and who
	// has its room: the cluster's row shows it. Budget names it.
	Hold, Budget string
}

// entry is one run's count in one cluster: the nodes it was seen to have
// disrupted, and those it was granted and has not been seen to start yet.
type entry struct {
	key                Key
	observed, reserved int
}

func (e entry) count() int { return e.observed + e.reserved }

// Ledger is the hub's count of disrupted nodes, per run and cluster. It is
// safe for concurrent use; its zero value is not: use NewLedger.
type Ledger struct {
	mu sync.Mutex
	// entries are by MemberRun: a MemberRun gone is forgotten by name.
	entries map[types.NamespacedName]entry
	// waiting are the runs a grant held back, to be woken when room frees,
	// and the budget that held each.
	waiting map[types.NamespacedName]held
	freed   chan struct{}
	// changed is signalled on any change of a count or a wait, for the
	// budgets' status.
	changed chan struct{}

	// shared, when set, is where this replica's counts meet the other
	// replicas'. Grants and publications hold publishing, one at a time,
	// from the read of the record to the write of this replica's section.
	shared     Shared
	publishing sync.Mutex
	// peers are the other replicas' counts as last read; published is
	// what this replica last published, unpublished signalled when its
	// counts changed since.
	peers       Usage
	published   string
	unpublished chan struct{}
	// session counts Republish calls; publishedIn is the count the last
	// publication was made at: a publication under an older one is
	// written again even if unchanged.
	session, publishedIn atomic.Int64
}

// held is a run a grant held back, and the budget that held it.
type held struct {
	key    Key
	budget string
}

// NewLedger returns an empty ledger: after a hub start, grants count the
// runs not observed yet at their stand-ins.
func NewLedger() *Ledger {
	return &Ledger{entries: map[types.NamespacedName]entry{}, waiting: map[types.NamespacedName]held{},
		freed: make(chan struct{}, 1), changed: make(chan struct{}, 1), unpublished: make(chan struct{}, 1)}
}

// Share makes the ledger one replica's of a sharded hub: its grants count
// what the other replicas publish in shared, and are published there
// before they are made. Call it before any grant.
func (l *Ledger) Share(shared Shared) { l.shared = shared }

// Observe sets the nodes the run disrupts in its cluster as its member
// reconcile derived them (Jobs created and not finished, nodes awaiting
// their health verdict), and releases what it had reserved: a node
// granted and started is among them now, one granted and not started never
// will be without another grant.
func (l *Ledger) Observe(k Key, disrupted int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old, seen := l.entries[k.Run]
	l.entries[k.Run] = entry{key: k, observed: disrupted}
	if !seen || disrupted < old.count() {
		l.signal()
	}
	if !seen || disrupted != old.count() {
		l.touched()
	}
}

// Forget drops the run's entry: it finished, or its MemberRun or
// ClusterJob is gone.
func (l *Ledger) Forget(run types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, waited := l.waiting[run]
	delete(l.waiting, run)
	e, ok := l.entries[run]
	if ok {
		delete(l.entries, run)
		if e.count() > 0 {
			l.signal()
		}
	}
	if ok || waited {
		l.touched()
	}
}

// Grant decides how many of the nodes asked for may start now under every
// cap, and reserves them at once: a grant to a parallel reconcile of
// another run counts them. A run granted less than it asked for is woken
// (Freed) when room frees. Shared, the grant counts the other replicas'
// runs too, and is published before it is made: it fails when the shared
// record cannot be read or written, and then grants nothing.
func (l *Ledger) Grant(ctx context.Context, req Request) (Grant, error) {
	if l.shared == nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		g := Decide(req.Key, req.Want, req.Caps, l.usage(req.StandIns))
		l.commit(req, g)
		return g, nil
	}
	l.publishing.Lock()
	defer l.publishing.Unlock()
	session := l.session.Load()
	for attempt := 1; ; attempt++ {
		peers, version, err := l.shared.Read(ctx)
		if err != nil {
			return Grant{}, fmt.Errorf("reading the other hub replicas' disruption counts: %w", err)
		}
		l.mu.Lock()
		l.peers = peers
		g := Decide(req.Key, req.Want, req.Caps, l.usage(req.StandIns))
		mine := l.own()
		l.mu.Unlock()
		if g.Nodes > 0 {
			mine.Nodes[req.Key] += g.Nodes
			delete(mine.Held, req.Key)
			err := l.shared.Publish(ctx, mine, version)
			if apierrors.IsConflict(err) && attempt < publishAttempts {
				continue
			}
			if err != nil {
				return Grant{}, fmt.Errorf("publishing a disruption grant to the other hub replicas: %w", err)
			}
			l.published, _ = EncodeSection("", mine)
			l.publishedIn.Store(session)
		}
		l.mu.Lock()
		l.commit(req, g)
		l.mu.Unlock()
		return g, nil
	}
}

// usage is every run's count as this ledger knows it: the stand-ins, the
// peers' counts over them, its own over both. Called with l.mu held.
func (l *Ledger) usage(standIns map[Key]int) map[Key]int {
	usage := maps.Clone(standIns)
	if usage == nil {
		usage = map[Key]int{}
	}
	maps.Copy(usage, l.peers.Nodes)
	for _, e := range l.entries {
		usage[e.key] = e.count()
	}
	return usage
}

// own is what this ledger counts, to publish. Called with l.mu held.
func (l *Ledger) own() Usage {
	u := Usage{Nodes: make(map[Key]int, len(l.entries)), Held: make(map[Key]string, len(l.waiting))}
	for _, e := range l.entries {
		u.Nodes[e.key] = e.count()
	}
	for _, h := range l.waiting {
		u.Held[h.key] = h.budget
	}
	return u
}

// commit reserves what g grants and notes whether req's run waits. Called
// with l.mu held.
func (l *Ledger) commit(req Request, g Grant) {
	if g.Nodes > 0 {
		e := l.entries[req.Run]
		e.key = req.Key
		e.reserved += g.Nodes
		l.entries[req.Run] = e
	}
	before, waited := l.waiting[req.Run]
	if g.Nodes < req.Want {
		l.waiting[req.Run] = held{key: req.Key, budget: g.Budget}
	} else {
		delete(l.waiting, req.Run)
	}
	if g.Nodes > 0 || waited != (g.Nodes < req.Want) || waited && before.budget != g.Budget {
		l.touched()
	}
}

// Publish writes this replica's counts to the shared record if they
// changed since it last did: a count that fell frees room for the other
// replicas' runs. Unpublished says when to call it; a new session
// (Republish) publishes again whatever changed.
func (l *Ledger) Publish(ctx context.Context) error {
	if l.shared == nil {
		return nil
	}
	l.publishing.Lock()
	defer l.publishing.Unlock()
	session := l.session.Load()
	for attempt := 1; ; attempt++ {
		l.mu.Lock()
		mine := l.own()
		l.mu.Unlock()
		encoded, err := EncodeSection("", mine)
		if err != nil || encoded == l.published && session == l.publishedIn.Load() {
			return err
		}
		// Nothing counted, and nothing that counts published: a hub that
		// runs no disruptive run never writes the record.
		if len(mine.Nodes) == 0 && len(mine.Held) == 0 && (l.published == "" || l.published == encoded) {
			return nil
		}
		peers, version, err := l.shared.Read(ctx)
		if err != nil {
			return fmt.Errorf("reading the other hub replicas' disruption counts: %w", err)
		}
		l.mu.Lock()
		l.peers = peers
		l.mu.Unlock()
		err = l.shared.Publish(ctx, mine, version)
		if apierrors.IsConflict(err) && attempt < publishAttempts {
			continue
		}
		if err != nil {
			return fmt.Errorf("publishing disruption counts to the other hub replicas: %w", err)
		}
		l.published = encoded
		l.publishedIn.Store(session)
		return nil
	}
}

// Republish has the next Publish write this replica's counts even if
// unchanged: its session may have changed, and what it published under
// the old one no longer counts. It never blocks.
func (l *Ledger) Republish() {
	l.session.Add(1)
	notify(l.unpublished)
}

// Refresh reads the other replicas' counts, for Snapshot.
func (l *Ledger) Refresh(ctx context.Context) error {
	if l.shared == nil {
		return nil
	}
	peers, _, err := l.shared.Read(ctx)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.peers = peers
	l.mu.Unlock()
	return nil
}

// Unpublished is signalled when this replica's counts changed since it
// last published them.
func (l *Ledger) Unpublished() <-chan struct{} { return l.unpublished }

// touched signals a change of a count or a wait. Called with l.mu held.
func (l *Ledger) touched() {
	notify(l.changed)
	notify(l.unpublished)
}

// Freed is signalled when room may have freed for a run a grant held
// back; Waiting then says which.
func (l *Ledger) Freed() <-chan struct{} { return l.freed }

// Waiting returns the runs a grant held back and forgets them: each asks
// again when woken, and is held again if there is still no room.
func (l *Ledger) Waiting() []Key {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]Key, 0, len(l.waiting))
	for _, h := range l.waiting {
		keys = append(keys, h.key)
	}
	// Not a change for the budgets' status: each run woken asks again at
	// once, and is counted again if still held.
	clear(l.waiting)
	return keys
}

// Wake signals Freed and Changed: a budget changed, any held run may have
// room, and the budget's status is to be counted again.
func (l *Ledger) Wake() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.signal()
	notify(l.changed)
}

// signal wakes the waiting runs' relay; one pending signal covers many.
func (l *Ledger) signal() {
	if len(l.waiting) > 0 {
		notify(l.freed)
	}
}

// notify signals ch without blocking: one pending signal covers many.
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Changed is signalled when a count or a wait changed.
func (l *Ledger) Changed() <-chan struct{} { return l.changed }

// Snapshot is the ledger's counts at one moment.
type Snapshot struct {
	// Usage is every observed run's disrupted nodes, with its grants not
	// seen started yet; shared, the other replicas' runs too, as last read.
	Usage map[Key]int
	// Waiting counts the runs each budget holds back, by budget (shared,
	// on every replica).
	Waiting map[string]int
}

// Snapshot returns the counts now.
func (l *Ledger) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Snapshot{Usage: l.usage(nil), Waiting: map[string]int{}}
	for k, budget := range l.peers.Held {
		if _, mine := l.waiting[k.Run]; !mine {
			s.Waiting[budget]++
		}
	}
	for _, h := range l.waiting {
		s.Waiting[h.budget]++
	}
	return s
}

// Decide is how many of want nodes of run k may start under caps, given
// every run's disrupted nodes (usage, k's own included): the least room
// any cap leaves, never below 0. It is pure.
func Decide(k Key, want int, caps []Cap, usage map[Key]int) Grant {
	g := Grant{Nodes: want}
	for _, c := range caps {
		if c.PerCluster > 0 {
			if room, held := fits(c.PerCluster, inCluster(usage, k.Cluster)); room < g.Nodes {
				g.Nodes, g.Budget = room, c.Budget
				g.Hold = fmt.Sprintf("FleetDisruptionBudget %s caps cluster %s at %d disrupted nodes; %d are (%s)", c.Budget, k.Cluster, c.PerCluster, held.total, held)
			}
		}
		if c.Total > 0 {
			if room, held := fits(c.Total, inClusters(usage, c.Clusters)); room < g.Nodes {
				g.Nodes, g.Budget = room, c.Budget
				g.Hold = fmt.Sprintf("FleetDisruptionBudget %s caps its %d clusters at %d disrupted nodes together; %d are (%s)", c.Budget, len(c.Clusters), c.Total, held.total, held)
			}
		}
	}
	return g
}

// fits is the room a cap leaves over the usage it covers.
func fits(limit int, held holders) (int, holders) { return max(0, limit-held.total), held }

// holders are the runs counted against one cap.
type holders struct {
	total int
	by    map[string]int
}

// String names the runs holding a cap, most nodes first, at most five.
func (h holders) String() string {
	names := slices.SortedFunc(maps.Keys(h.by), func(a, b string) int {
		if h.by[a] != h.by[b] {
			return h.by[b] - h.by[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, min(len(names), 6))
	for i, n := range names {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("%d more", len(names)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", n, h.by[n]))
	}
	return strings.Join(parts, ", ")
}

func inCluster(usage map[Key]int, cluster string) holders {
	return count(usage, func(k Key) bool { return k.Cluster == cluster }, false)
}

func inClusters(usage map[Key]int, clusters map[string]bool) holders {
	return count(usage, func(k Key) bool { return clusters[k.Cluster] }, true)
}

// count sums the usage of the keys in scope, by run (and cluster, when the
// scope spans several).
func count(usage map[Key]int, in func(Key) bool, withCluster bool) holders {
	h := holders{by: map[string]int{}}
	for k, n := range usage {
		if n <= 0 || !in(k) {
			continue
		}
		name := k.Run.Namespace + "/" + k.ClusterJob
		if withCluster {
			name += " in " + k.Cluster
		}
		h.total += n
		h.by[name] += n
	}
	return h
}

// Observed tells whether the run was observed since the hub started.
func (l *Ledger) Observed(k Key) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.entries[k.Run]
	return ok
}
