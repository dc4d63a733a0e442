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

package disruption

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func key(cj, cluster string) Key {
	return Key{Run: types.NamespacedName{Namespace: "ns", Name: cj + "-" + cluster}, ClusterJob: cj, Cluster: cluster}
}

func set(names ...string) map[string]bool {
	s := map[string]bool{}
	for _, n := range names {
		s[n] = true
	}
	return s
}

func TestDecide(t *testing.T) {
	a, b := key("reboot", "a"), key("patch", "a")
	otherCluster := key("patch", "b")
	cases := map[string]struct {
		k     Key
		want  int
		caps  []Cap
		usage map[Key]int
		grant Grant
	}{
		"no budget: every node": {k: a, want: 5, grant: Grant{Nodes: 5}},
		"room for all": {k: a, want: 2, caps: []Cap{{Budget: "fdb", PerCluster: 3, Clusters: set("a")}},
			grant: Grant{Nodes: 2}},
		"a partial grant under the per-cluster cap, counting another run": {k: a, want: 5,
			caps:  []Cap{{Budget: "fdb", PerCluster: 3, Clusters: set("a", "b")}},
			usage: map[Key]int{b: 1, otherCluster: 2},
			grant: Grant{Nodes: 2, Hold: "FleetDisruptionBudget fdb caps cluster a at 3 disrupted nodes; 1 are (ns/patch 1)", Budget: "fdb"}},
		"its own running nodes count": {k: a, want: 4,
			caps:  []Cap{{Budget: "fdb", PerCluster: 2, Clusters: set("a")}},
			usage: map[Key]int{a: 2},
			grant: Grant{Nodes: 0, Hold: "FleetDisruptionBudget fdb caps cluster a at 2 disrupted nodes; 2 are (ns/reboot 2)", Budget: "fdb"}},
		"the total counts every selected cluster": {k: a, want: 3,
			caps:  []Cap{{Budget: "fleet", Total: 4, Clusters: set("a", "b")}},
			usage: map[Key]int{otherCluster: 3},
			grant: Grant{Nodes: 1, Hold: "FleetDisruptionBudget fleet caps its 2 clusters at 4 disrupted nodes together; 3 are (ns/patch in b 3)", Budget: "fleet"}},
		"a cluster the budget does not select does not count": {k: a, want: 3,
			caps:  []Cap{{Budget: "fleet", Total: 4, Clusters: set("a")}},
			usage: map[Key]int{otherCluster: 3},
			grant: Grant{Nodes: 3}},
		"the tightest of several budgets holds": {k: a, want: 3,
			caps: []Cap{
				{Budget: "loose", PerCluster: 10, Clusters: set("a")},
				{Budget: "tight", Total: 2, Clusters: set("a", "b")},
			},
			usage: map[Key]int{otherCluster: 1},
			grant: Grant{Nodes: 1, Hold: "FleetDisruptionBudget tight caps its 2 clusters at 2 disrupted nodes together; 1 are (ns/patch in b 1)", Budget: "tight"}},
		"over the cap (lowered under running nodes): none, never negative": {k: a, want: 1,
			caps:  []Cap{{Budget: "fdb", PerCluster: 1, Clusters: set("a")}},
			usage: map[Key]int{b: 3},
			grant: Grant{Nodes: 0, Hold: "FleetDisruptionBudget fdb caps cluster a at 1 disrupted nodes; 3 are (ns/patch 3)", Budget: "fdb"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.grant, Decide(tc.k, tc.want, tc.caps, tc.usage), cmp.AllowUnexported(Grant{})); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHoldersName(t *testing.T) {
	usage := map[Key]int{}
	for i, cj := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		usage[key(cj, "x")] = i + 1
	}
	got := inCluster(usage, "x").String()
	want := "ns/g 7, ns/f 6, ns/e 5, ns/d 4, ns/c 3, 2 more"
	if got != want {
		t.Errorf("holders = %q, want %q", got, want)
	}
}

func TestLedger(t *testing.T) {
	fdb := []Cap{{Budget: "fdb", PerCluster: 3, Clusters: set("a")}}
	reboot, patch := key("reboot", "a"), key("patch", "a")

	l := NewLedger()
	if g := grant(t, l, Request{Key: reboot, Want: 2, Caps: fdb}); g.Nodes != 2 {
		t.Fatalf("first grant = %d, want 2", g.Nodes)
	}
	// Reserved at once: a parallel reconcile of another run sees them
	// before reboot's Jobs are observed.
	if g := grant(t, l, Request{Key: patch, Want: 2, Caps: fdb}); g.Nodes != 1 {
		t.Fatalf("grant beside a reservation = %d, want 1", g.Nodes)
	}
	if g := grant(t, l, Request{Key: patch, Want: 1, Caps: fdb}); g.Nodes != 0 {
		t.Fatalf("grant at the cap = %d, want 0", g.Nodes)
	}
	select {
	case <-l.Freed():
		t.Fatal("freed before any node finished")
	default:
	}
	// reboot started both; the observation replaces its reservation.
	l.Observe(reboot, 2)
	if g := grant(t, l, Request{Key: patch, Want: 1, Caps: fdb}); g.Nodes != 0 {
		t.Fatalf("grant after an observation at the same count = %d, want 0", g.Nodes)
	}
	// One of reboot's nodes finished: the held run is woken.
	l.Observe(reboot, 1)
	select {
	case <-l.Freed():
	default:
		t.Fatal("not freed when a node finished")
	}
	if diff := cmp.Diff([]Key{patch}, l.Waiting()); diff != "" {
		t.Errorf("waiting (-want +got):\n%s", diff)
	}
	l.Observe(patch, 1) // its earlier grant started
	if g := grant(t, l, Request{Key: patch, Want: 1, Caps: fdb}); g.Nodes != 1 {
		t.Fatalf("grant after a node finished = %d, want 1", g.Nodes)
	}
	// A finished run gives its nodes back.
	l.Forget(reboot.Run)
	if g := grant(t, l, Request{Key: patch, Want: 5, Caps: fdb}); g.Nodes != 1 {
		t.Fatalf("grant after the other run ended = %d, want 1 (patch holds 1 observed and 1 reserved)", g.Nodes)
	}
}

func TestLedgerStandIns(t *testing.T) {
	fdb := []Cap{{Budget: "fdb", Total: 4, Clusters: set("a", "b")}}
	reboot, patch := key("reboot", "a"), key("patch", "b")
	l := NewLedger()
	// After a restart patch has not been observed: its row's 3 count.
	standIns := map[Key]int{patch: 3}
	if g := grant(t, l, Request{Key: reboot, Want: 4, Caps: fdb, StandIns: standIns}); g.Nodes != 1 {
		t.Fatalf("grant beside a stand-in = %d, want 1", g.Nodes)
	}
	// Once observed, the ledger's count wins over the (stale) row.
	l.Observe(patch, 0)
	l.Observe(reboot, 1)
	if g := grant(t, l, Request{Key: reboot, Want: 4, Caps: fdb, StandIns: standIns}); g.Nodes != 3 {
		t.Fatalf("grant once observed = %d, want 3", g.Nodes)
	}
}

// TestLedgerParallelGrants has many runs ask at once, each starting what
// it was granted and observing it: the cap holds at every moment.
func TestLedgerParallelGrants(t *testing.T) {
	const runs, cap = 16, 5
	caps := []Cap{{Budget: "fdb", PerCluster: cap, Clusters: set("a")}}
	l := NewLedger()
	var mu sync.Mutex
	running, peak := 0, 0
	var wg sync.WaitGroup
	for i := range runs {
		k := key(string(rune('a'+i)), "a")
		wg.Go(func() {
			for range 50 {
				g := grant(t, l, Request{Key: k, Want: 2, Caps: caps})
				mu.Lock()
				running += g.Nodes
				peak = max(peak, running)
				mu.Unlock()
				l.Observe(k, g.Nodes) // started
				mu.Lock()
				running -= g.Nodes
				mu.Unlock()
				l.Observe(k, 0) // finished
			}
		})
	}
	wg.Wait()
	if peak > cap {
		t.Errorf("%d nodes disrupted at once under a cap of %d", peak, cap)
	}
	if peak == 0 {
		t.Error("no node was ever granted")
	}
}

// grant asks l for req; a ledger of its own never fails to grant.
func grant(t *testing.T, l *Ledger, req Request) Grant {
	t.Helper()
	g, err := l.Grant(context.Background(), req)
	if err != nil {
		t.Errorf("Grant(%+v) failed: %v", req, err)
	}
	return g
}
