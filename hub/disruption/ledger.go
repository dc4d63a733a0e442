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
// reserved in the same critical section that decides it.
package disruption

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

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
		freed: make(chan struct{}, 1), changed: make(chan struct{}, 1)}
}

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
		notify(l.changed)
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
		notify(l.changed)
	}
}

// Grant decides how many of the nodes asked for may start now under every
// cap, and reserves them at once: a grant to a parallel reconcile of
// another run counts them. A run granted less than it asked for is woken
// (Freed) when room frees.
func (l *Ledger) Grant(req Request) Grant {
	l.mu.Lock()
	defer l.mu.Unlock()
	usage := maps.Clone(req.StandIns)
	if usage == nil {
		usage = map[Key]int{}
	}
	for _, e := range l.entries {
		usage[e.key] = e.count()
	}
	g := Decide(req.Key, req.Want, req.Caps, usage)
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
		notify(l.changed)
	}
	return g
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
	// seen started yet.
	Usage map[Key]int
	// Waiting counts the runs each budget holds back, by budget.
	Waiting map[string]int
}

// Snapshot returns the counts now.
func (l *Ledger) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Snapshot{Usage: make(map[Key]int, len(l.entries)), Waiting: map[string]int{}}
	for _, e := range l.entries {
		s.Usage[e.key] = e.count()
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
