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
	"maps"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// record is a shared record in memory with the API server's optimistic
// concurrency: a write names the version it read, and loses to any write
// since.
type record struct {
	mu      sync.Mutex
	version int
	data    map[string]string
	live    map[string]bool
	// refuse fails that many writes with a conflict before any succeeds.
	refuse int
	writes int
}

func newRecord() *record { return &record{data: map[string]string{}, live: map[string]bool{}} }

// replica is one hub replica's view of rec.
type replica struct {
	rec     *record
	id      string
	session string
}

func (rec *record) replica(id string) replica {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	session := id + "/1"
	rec.live[session] = true
	return replica{rec: rec, id: id, session: session}
}

func (r replica) Read(context.Context) (Usage, string, error) {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	u, _, err := Sections(maps.Clone(r.rec.data), r.id, func(s string) bool { return r.rec.live[s] })
	return u, strconv.Itoa(r.rec.version), err
}

func (r replica) Publish(_ context.Context, u Usage, version string) error {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	if r.rec.refuse > 0 || version != strconv.Itoa(r.rec.version) {
		r.rec.refuse = max(0, r.rec.refuse-1)
		return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "grants", nil)
	}
	v, err := EncodeSection(r.session, u)
	if err != nil {
		return err
	}
	r.rec.data[r.id] = v
	r.rec.version++
	r.rec.writes++
	return nil
}

func sharedLedger(rec *record, id string) *Ledger {
	l := NewLedger()
	l.Share(rec.replica(id))
	return l
}

// TestSharedGrantsCountPeers: two replicas, each serving one member of a
// budget, grant its total together, never each in full.
func TestSharedGrantsCountPeers(t *testing.T) {
	fdb := []Cap{{Budget: "fdb", Total: 4, Clusters: set("a", "b")}}
	onA, onB := key("reboot", "a"), key("reboot", "b")
	rec := newRecord()
	a, b := sharedLedger(rec, "hub-0"), sharedLedger(rec, "hub-1")

	// A replica that counts nothing writes nothing, even in a new session.
	a.Republish()
	if err := a.Publish(context.Background()); err != nil || rec.writes != 0 {
		t.Fatalf("publishing nothing wrote %d times (%v)", rec.writes, err)
	}
	if g := grant(t, a, Request{Key: onA, Want: 3, Caps: fdb}); g.Nodes != 3 {
		t.Fatalf("first replica's grant = %d, want 3", g.Nodes)
	}
	if g := grant(t, b, Request{Key: onB, Want: 3, Caps: fdb}); g.Nodes != 1 || g.Budget != "fdb" {
		t.Fatalf("second replica's grant = %+v, want 1 held by fdb (the first published 3)", g)
	}
	if err := b.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Every replica's status counts both.
	if err := a.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap := a.Snapshot()
	if diff := cmp.Diff(Snapshot{Usage: map[Key]int{onA: 3, onB: 1}, Waiting: map[string]int{"fdb": 1}}, snap); diff != "" {
		t.Errorf("snapshot on the first replica (-want +got):\n%s", diff)
	}

	// Two of the first replica's nodes finished: published, they free room
	// on the second.
	a.Observe(onA, 1)
	select {
	case <-a.Unpublished():
	default:
		t.Fatal("a count that fell is not marked unpublished")
	}
	if err := a.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Observe(onB, 1)
	if g := grant(t, b, Request{Key: onB, Want: 2, Caps: fdb}); g.Nodes != 2 {
		t.Fatalf("grant after the peer's nodes finished = %d, want 2", g.Nodes)
	}
	// Nothing changed since: publishing again writes nothing.
	writes := rec.writes
	if err := b.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec.writes != writes {
		t.Errorf("an unchanged count was written again (%d writes, was %d)", rec.writes, writes)
	}
	b.Republish()
	if err := b.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rec.writes != writes+1 {
		t.Errorf("a new session's publication wrote %d times, want once", rec.writes-writes)
	}
}

// TestSharedGrantsDeadReplica: a replica whose session died counts at its
// runs' rows (the stand-ins), not at what it last published.
func TestSharedGrantsDeadReplica(t *testing.T) {
	fdb := []Cap{{Budget: "fdb", Total: 4, Clusters: set("a", "b")}}
	onA, onB := key("reboot", "a"), key("reboot", "b")
	rec := newRecord()
	a, b := sharedLedger(rec, "hub-0"), sharedLedger(rec, "hub-1")
	grant(t, a, Request{Key: onA, Want: 4, Caps: fdb})
	rec.live["hub-0/1"] = false
	if g := grant(t, b, Request{Key: onB, Want: 4, Caps: fdb, StandIns: map[Key]int{onA: 1}}); g.Nodes != 3 {
		t.Fatalf("grant beside a dead replica whose run's row says 1 = %d, want 3", g.Nodes)
	}
}

// TestSharedGrantConflicts: a grant that loses the record to other writes
// decides again on what they wrote; one that keeps losing grants nothing
// and says so, reserving nothing.
func TestSharedGrantConflicts(t *testing.T) {
	fdb := []Cap{{Budget: "fdb", Total: 4, Clusters: set("a")}}
	k := key("reboot", "a")
	rec := newRecord()
	l := sharedLedger(rec, "hub-0")
	rec.refuse = publishAttempts - 1
	if g := grant(t, l, Request{Key: k, Want: 1, Caps: fdb}); g.Nodes != 1 {
		t.Fatalf("grant after %d conflicts = %d, want 1", publishAttempts-1, g.Nodes)
	}
	rec.refuse = publishAttempts
	g, err := l.Grant(context.Background(), Request{Key: k, Want: 2, Caps: fdb})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "publishing a disruption grant") || g.Nodes != 0 {
		t.Fatalf("grant that always loses = %+v, %v; want nothing and a conflict", g, err)
	}
	if got := l.Snapshot().Usage[k]; got != 1 {
		t.Errorf("after a failed grant the run counts %d, want its earlier 1", got)
	}
}

// TestSharedParallelGrants has the runs of three replicas ask at once,
// each starting what it was granted, then finishing and publishing: the
// total cap holds across the replicas at every moment.
func TestSharedParallelGrants(t *testing.T) {
	const cap = 5
	caps := []Cap{{Budget: "fdb", Total: cap, Clusters: set("a", "b", "c")}}
	rec := newRecord()
	var mu sync.Mutex
	running, peak := 0, 0
	var wg sync.WaitGroup
	for _, cluster := range []string{"a", "b", "c"} {
		l := sharedLedger(rec, "hub-"+cluster)
		for i := range 4 {
			k := key(strconv.Itoa(i), cluster)
			wg.Go(func() {
				for range 20 {
					g, err := l.Grant(context.Background(), Request{Key: k, Want: 2, Caps: caps})
					if err != nil && !apierrors.IsConflict(err) {
						t.Error(err)
						return
					}
					mu.Lock()
					running += g.Nodes
					peak = max(peak, running)
					mu.Unlock()
					l.Observe(k, g.Nodes) // started
					for range 20 {
						runtime.Gosched() // the nodes run a while
					}
					mu.Lock()
					running -= g.Nodes
					mu.Unlock()
					l.Observe(k, 0) // finished
					if err := l.Publish(context.Background()); err != nil && !apierrors.IsConflict(err) {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if peak > cap {
		t.Errorf("%d nodes disrupted at once across the replicas under a cap of %d", peak, cap)
	}
	if peak == 0 {
		t.Error("no node was ever granted")
	}
}

func TestSections(t *testing.T) {
	onA, onB := key("reboot", "a"), key("patch", "b")
	section := func(session string, u Usage) string {
		v, err := EncodeSection(session, u)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	live := func(s string) bool { return !strings.HasSuffix(s, "/dead") }
	cases := []struct {
		name     string
		data     map[string]string
		want     Usage
		wantDead []string
		wantErr  string
	}{{
		name: "its own section is not a peer's",
		data: map[string]string{"self": section("self/1", Usage{Nodes: map[Key]int{onA: 3}})},
		want: Usage{Nodes: map[Key]int{}, Held: map[Key]string{}},
	}, {
		name: "live peers merged, a run published twice at its higher count, held runs named",
		data: map[string]string{
			"hub-0": section("hub-0/1", Usage{Nodes: map[Key]int{onA: 1}}),
			"hub-1": section("hub-1/1", Usage{Nodes: map[Key]int{onA: 2, onB: 0}, Held: map[Key]string{onB: "fdb"}}),
		},
		want: Usage{Nodes: map[Key]int{onA: 2, onB: 0}, Held: map[Key]string{onB: "fdb"}},
	}, {
		name:     "a dead session's section does not count, and is named to drop",
		data:     map[string]string{"hub-0": section("hub-0/dead", Usage{Nodes: map[Key]int{onA: 4}})},
		want:     Usage{Nodes: map[Key]int{}, Held: map[Key]string{}},
		wantDead: []string{"hub-0"},
	}, {
		name:    "a section that cannot be read is an error naming its replica",
		data:    map[string]string{"hub-0": "{"},
		wantErr: "hub replica hub-0 cannot be read",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, dead, err := Sections(tc.data, "self", live)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDead, dead); diff != "" {
				t.Errorf("dead (-want +got):\n%s", diff)
			}
		})
	}
}
