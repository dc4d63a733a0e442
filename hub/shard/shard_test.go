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

package shard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/fleetjob/fleetjob/pkg/naming"
)

const ns = "fleetjob-system"

// fleet is several replicas sharing one hub API server, each with its own
// clock so that one can stop renewing while the others go on.
type fleet struct {
	t      *testing.T
	hub    client.Client
	shards map[string]*Shard
	clocks map[string]*clocktesting.FakeClock
}

func newFleet(t *testing.T, ids ...string) *fleet {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	f := &fleet{t: t, hub: fake.NewClientBuilder().WithScheme(scheme).Build(), shards: map[string]*Shard{}, clocks: map[string]*clocktesting.FakeClock{}}
	// The fence becomes a request's deadline, which the transport compares
	// with the wall clock: the fake clocks start at the real time.
	start := time.Now()
	for _, id := range ids {
		f.clocks[id] = clocktesting.NewFakeClock(start)
		s, err := New(f.hub, f.hub, Options{Namespace: ns, Identity: id, Clock: f.clocks[id]}, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		f.shards[id] = s
	}
	return f
}

// step advances the given replicas' clocks by d and has each renew, twice,
// so that each has read the others' renewals.
func (f *fleet) step(d time.Duration, ids ...string) {
	for _, id := range ids {
		f.clocks[id].Step(d)
	}
	for range 2 {
		for _, id := range ids {
			f.shards[id].Step(context.Background())
		}
	}
}

func (f *fleet) claimHolder(member string) string {
	f.t.Helper()
	l := &coordinationv1.Lease{}
	if err := f.hub.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: naming.MemberLeaseName(member)}, l); err != nil {
		f.t.Fatal(err)
	}
	return identityOf(ptr.Deref(l.Spec.HolderIdentity, ""))
}

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("member-%03d", i)
	}
	return out
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{name: "defaults", opts: Options{Namespace: ns, Identity: "hub-0"}},
		{name: "no namespace", opts: Options{Identity: "hub-0"}, want: "namespace"},
		{name: "no identity", opts: Options{Namespace: ns}, want: "identity"},
		{name: "margin eats the lease", opts: Options{Namespace: ns, Identity: "hub-0", LeaseDuration: 8 * time.Second}, want: "lease duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// Every member has exactly one owner, the same in every replica's view, and
// the members are spread over the replicas.
func TestOwnersAgreeAndSpread(t *testing.T) {
	f := newFleet(t, "hub-a", "hub-b", "hub-c")
	f.step(0, "hub-a", "hub-b", "hub-c")
	count := map[string]int{}
	for _, m := range members(300) {
		owners := map[string]bool{}
		for _, s := range f.shards {
			owners[s.Owner(m)] = true
		}
		if len(owners) != 1 {
			t.Fatalf("replicas disagree on the owner of %s: %v", m, owners)
		}
		n := 0
		for id, s := range f.shards {
			if s.Owns(m) {
				n++
				count[id]++
			}
		}
		if n != 1 {
			t.Fatalf("%s is owned by %d replicas, want 1", m, n)
		}
	}
	for id, n := range count {
		if n < 60 {
			t.Errorf("replica %s owns %d of 300 members, want a share near 100: %v", id, n, count)
		}
	}
}

// A replica that comes moves only the members it takes; one that goes
// moves only its own.
func TestOwnersMoveOnlyWithTheirReplica(t *testing.T) {
	before := map[string]string{}
	after := map[string]string{}
	for _, m := range members(200) {
		before[m] = OwnerOf(m, []string{"hub-a", "hub-b"})
		after[m] = OwnerOf(m, []string{"hub-a", "hub-b", "hub-c"})
	}
	for m, was := range before {
		if now := after[m]; now != was && now != "hub-c" {
			t.Errorf("%s moved from %s to %s when hub-c came", m, was, now)
		}
	}
	if got := OwnerOf("x", nil); got != "" {
		t.Errorf("owner with no replicas = %q, want none", got)
	}
}

func TestClaimIsExclusive(t *testing.T) {
	f := newFleet(t, "hub-a", "hub-b")
	f.step(0, "hub-a", "hub-b")
	a, b := f.shards["hub-a"], f.shards["hub-b"]
	ctx := context.Background()
	if err := a.Claim(ctx, "prod"); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	var held *HeldError
	if err := b.Claim(ctx, "prod"); !errors.As(err, &held) || held.Replica != "hub-a" {
		t.Fatalf("claim of a member another live replica holds = %v, want a HeldError naming hub-a", err)
	}
	if !a.Holds("prod") || b.Holds("prod") {
		t.Errorf("Holds: hub-a %v, hub-b %v; want only hub-a", a.Holds("prod"), b.Holds("prod"))
	}
	// Handed back, it is free at once, without waiting for a's session.
	if err := a.Release(ctx, "prod"); err != nil {
		t.Fatal(err)
	}
	if a.Holds("prod") {
		t.Errorf("hub-a still holds prod after releasing it")
	}
	if err := b.Claim(ctx, "prod"); err != nil {
		t.Fatalf("claim of a released member: %v", err)
	}
	if got := f.claimHolder("prod"); got != "hub-b" {
		t.Errorf("claim Lease names %q, want hub-b", got)
	}
}

// A replica hands back, on every change of replicas, each member it does
// not serve: for a member it never claimed that costs no hub call. A claim
// whose write went through but whose answer was lost is one it holds
// without knowing: it is handed back at the next renewal, or the owner would
// wait for the whole session.
func TestReleaseOfWhatMayHaveBeenWritten(t *testing.T) {
	f := newFleet(t, "hub-a", "hub-b")
	f.step(0, "hub-a", "hub-b")
	ctx := context.Background()
	calls := 0
	lost := true
	a := f.shards["hub-a"]
	a.reader = interceptor.NewClient(f.hub.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			calls++
			return c.Get(ctx, key, obj, opts...)
		},
	})
	a.writer = interceptor.NewClient(f.hub.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := c.Create(ctx, obj, opts...); err != nil || !lost {
				return err
			}
			return apierrors.NewTimeoutError("the answer was lost", 1)
		},
	})
	if err := a.Release(ctx, "never-claimed"); err != nil || calls != 0 {
		t.Fatalf("Release of a member never claimed: err %v, %d hub reads; want none", err, calls)
	}
	if err := a.Claim(ctx, "prod"); err == nil {
		t.Fatal("a claim whose answer was lost succeeded")
	}
	if a.Holds("prod") || f.claimHolder("prod") != "hub-a" {
		t.Fatalf("after the lost answer: hub-a holds %v, the Lease names %q; want not held, written by hub-a", a.Holds("prod"), f.claimHolder("prod"))
	}
	var held *HeldError
	if err := f.shards["hub-b"].Claim(ctx, "prod"); !errors.As(err, &held) {
		t.Fatalf("hub-b's claim while hub-a's session names prod = %v, want HeldError", err)
	}
	lost = false
	f.step(0, "hub-a")
	if err := f.shards["hub-b"].Claim(ctx, "prod"); err != nil {
		t.Fatalf("hub-b's claim after hub-a's next renewal: %v (the claim was never handed back)", err)
	}
}

// A replica that stops renewing stops writing Margin before its peers may
// take its members, and they take them once its session expired.
func TestDeadReplicasMembersMove(t *testing.T) {
	f := newFleet(t, "hub-a", "hub-b")
	f.step(0, "hub-a", "hub-b")
	a, b := f.shards["hub-a"], f.shards["hub-b"]
	ctx := context.Background()
	if err := a.Claim(ctx, "prod"); err != nil {
		t.Fatal(err)
	}
	lease, margin := a.opts.LeaseDuration, a.opts.Margin

	// hub-a hangs: its clock runs, it renews nothing.
	f.clocks["hub-a"].Step(lease - margin - time.Millisecond)
	if !a.Holds("prod") {
		t.Fatalf("hub-a stopped writing before its fence")
	}
	f.clocks["hub-a"].Step(time.Millisecond)
	if a.Holds("prod") {
		t.Fatalf("hub-a still writes at its fence, %s before its session may expire", margin)
	}

	// hub-b, renewing, sees the session live until it expires.
	f.step(lease-time.Second, "hub-b")
	var held *HeldError
	if err := b.Claim(ctx, "prod"); !errors.As(err, &held) {
		t.Fatalf("claim before hub-a's session expired = %v, want HeldError", err)
	}
	if got := b.Owner("prod"); got != OwnerOf("prod", []string{"hub-a", "hub-b"}) {
		t.Errorf("owner while hub-a lives = %s", got)
	}
	f.step(time.Second, "hub-b")
	if got := b.Owner("prod"); got != "hub-b" {
		t.Fatalf("owner after hub-a's session expired = %q, want hub-b", got)
	}
	if err := b.Claim(ctx, "prod"); err != nil {
		t.Fatalf("claim after hub-a's session expired: %v", err)
	}

	// hub-a wakes: its session lapsed, so it starts a new one holding
	// nothing, and writes nothing to prod.
	f.step(0, "hub-a")
	if a.Holds("prod") {
		t.Errorf("hub-a writes to prod again after its session lapsed")
	}
	if err := a.Claim(ctx, "prod"); !errors.As(err, &held) || held.Replica != "hub-b" {
		t.Errorf("hub-a's claim after waking = %v, want a HeldError naming hub-b", err)
	}
}

// A replica that stops hands its claims back and ends its session: its
// peers own its members at their next renewal, not when the session
// would have expired.
func TestStoppedReplicaLeavesAtOnce(t *testing.T) {
	f := newFleet(t, "hub-a", "hub-b")
	f.step(0, "hub-a", "hub-b")
	a, b := f.shards["hub-a"], f.shards["hub-b"]
	var mine string
	for _, m := range members(50) {
		if a.Owns(m) {
			mine = m
			break
		}
	}
	if err := a.Claim(context.Background(), mine); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Run(ctx); err != nil {
		t.Fatal(err)
	}
	f.step(time.Second, "hub-b")
	if !b.Owns(mine) {
		t.Fatalf("a second after hub-a stopped, hub-b does not own its member %s (owner %q)", mine, b.Owner(mine))
	}
	if err := b.Claim(context.Background(), mine); err != nil {
		t.Errorf("hub-b claiming the member hub-a handed back: %v", err)
	}
	if a.Holds(mine) {
		t.Errorf("the stopped replica may still write to %s", mine)
	}
}

func TestSubscribersToldOfChanges(t *testing.T) {
	f := newFleet(t, "hub-a", "hub-b")
	told := 0
	f.shards["hub-a"].Subscribe(func() { told++ })
	f.step(0, "hub-a")
	if told == 0 {
		t.Fatalf("not told of the first session")
	}
	told = 0
	f.step(time.Second, "hub-a")
	if told != 0 {
		t.Errorf("told %d times of a renewal that changed nothing", told)
	}
	f.step(0, "hub-b")
	f.step(time.Second, "hub-a")
	if told != 1 {
		t.Errorf("told %d times of a replica that came, want 1", told)
	}
}

// The fence: writes need the claim, carry the session's fence as deadline,
// and a release waits for the writes under way.
func TestFence(t *testing.T) {
	f := newFleet(t, "hub-a")
	f.step(0, "hub-a")
	a := f.shards["hub-a"]
	ctx := context.Background()

	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/slow" {
			<-gate
		}
		_, _ = io.WriteString(w, "{}")
	}))
	defer srv.Close()
	defer open()
	sent := &deadlines{next: http.DefaultTransport}
	hc := &http.Client{Transport: a.Fence("prod")(sent)}
	do := func(method, path string) error {
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}

	if err := do(http.MethodGet, "/"); err != nil {
		t.Errorf("a read without the claim: %v", err)
	}
	var notHeld *NotHeldError
	var unsent interface{ NotSent() bool }
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		err := do(m, "/")
		if !errors.As(err, &notHeld) {
			t.Errorf("%s without the claim = %v, want NotHeldError", m, err)
		}
		if !errors.As(err, &unsent) || !unsent.NotSent() {
			t.Errorf("%s without the claim = %v, which does not say it was never sent", m, err)
		}
	}
	if err := a.Claim(ctx, "prod"); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	fence := a.heldUntil()
	a.mu.Unlock()
	if err := do(http.MethodPost, "/"); err != nil {
		t.Fatalf("a write with the claim: %v", err)
	}
	if diff := cmp.Diff([]time.Time{fence}, sent.writes()); diff != "" {
		t.Errorf("write deadlines (-fence +sent):\n%s", diff)
	}

	// A release waits for the write under way, and refuses new ones at once.
	written := make(chan error, 1)
	go func() { written <- do(http.MethodPost, "/slow") }()
	eventually(t, "the slow write is under way", func() bool { return a.inflight("prod") > 0 })
	released := make(chan error, 1)
	go func() { released <- a.Release(ctx, "prod") }()
	eventually(t, "the release began", func() bool { return a.closing("prod") || len(released) > 0 })
	if err := do(http.MethodPost, "/"); !errors.As(err, &notHeld) {
		t.Errorf("a write while releasing = %v, want NotHeldError", err)
	}
	select {
	case err := <-released:
		t.Fatalf("released with a write under way: %v", err)
	default:
	}
	open()
	if err := <-written; err != nil {
		t.Errorf("the write under way: %v", err)
	}
	if err := <-released; err != nil {
		t.Errorf("release: %v", err)
	}
	if a.Holds("prod") {
		t.Errorf("still held after the release")
	}
}

func (s *Shard) inflight(member string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.claims[member]; ok {
		return c.inflight
	}
	return 0
}

func (s *Shard) closing(member string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.claims[member]
	return ok && c.closing
}

// deadlines records the deadlines of the requests sent through it.
type deadlines struct {
	next http.RoundTripper
	mu   sync.Mutex
	sent []time.Time
}

func (d *deadlines) RoundTrip(req *http.Request) (*http.Response, error) {
	if t, ok := req.Context().Deadline(); ok {
		d.mu.Lock()
		d.sent = append(d.sent, t)
		d.mu.Unlock()
	}
	return d.next.RoundTrip(req)
}

func (d *deadlines) writes() []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.sent)
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
	}
}

// What a replica publishes for its peers counts while its session lives:
// each sees the other's session live until it expires, and its own while
// it holds it.
func TestLiveSessions(t *testing.T) {
	f := newFleet(t, "hub-a", "hub-b")
	a, b := f.shards["hub-a"], f.shards["hub-b"]
	if a.Session() != "" || a.LiveSession("") {
		t.Fatalf("a replica that never renewed has session %q", a.Session())
	}
	f.step(0, "hub-a", "hub-b")
	sa, sb := a.Session(), b.Session()
	if sa == "" || sb == "" || sa == sb {
		t.Fatalf("sessions %q and %q, want two", sa, sb)
	}
	for _, s := range []string{sa, sb} {
		if !a.LiveSession(s) {
			t.Errorf("hub-a sees session %s dead", s)
		}
	}
	if a.LiveSession("hub-b/000000000000") {
		t.Error("hub-a sees a session hub-b never held live")
	}
	// hub-b stops renewing: its session dies for hub-a once expired.
	f.step(a.opts.LeaseDuration, "hub-a")
	if a.LiveSession(sb) {
		t.Errorf("hub-a sees hub-b's expired session live")
	}
	// hub-b's clock ran too: past its fence it publishes under no session.
	f.clocks["hub-b"].Step(b.opts.LeaseDuration)
	if b.Session() != "" {
		t.Errorf("hub-b past its fence still has session %q", b.Session())
	}
}

// A renewal on a slow hub API server may take as long as the session
// still holds, not only RenewPeriod: cut short, every renewal slower than
// RenewPeriod would fail, and the session lapse though each came in time.
func TestSlowRenewalMayTakeWhatTheSessionHolds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var allowed []time.Duration
	hub := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).Build(), interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if deadline, ok := ctx.Deadline(); ok {
				mu.Lock()
				allowed = append(allowed, time.Until(deadline))
				mu.Unlock()
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	clock := clocktesting.NewFakeClock(time.Now())
	s, err := New(hub, hub, Options{Namespace: ns, Identity: "hub-a", Clock: clock}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	s.Step(context.Background()) // creates the session
	clock.Step(time.Second)
	s.Step(context.Background()) // renews it, 9 s before its fence
	if len(allowed) != 1 {
		t.Fatalf("%d renewals sent, want 1", len(allowed))
	}
	if lease, margin := s.opts.LeaseDuration, s.opts.Margin; allowed[0] < lease-margin-2*time.Second {
		t.Errorf("the renewal was allowed %s, want about the %s the session still held", allowed[0], lease-margin-time.Second)
	}
}

// Until is the fence a start's deadline is cut to: the session's, for a
// member claimed and not being handed back; none otherwise.
func TestUntil(t *testing.T) {
	f := newFleet(t, "hub-a")
	f.step(0, "hub-a")
	a := f.shards["hub-a"]
	if _, ok := a.Until("prod"); ok {
		t.Fatal("a fence for a member never claimed")
	}
	if err := a.Claim(context.Background(), "prod"); err != nil {
		t.Fatal(err)
	}
	until, ok := a.Until("prod")
	if want := f.clocks["hub-a"].Now().Add(a.opts.LeaseDuration - a.opts.Margin); !ok || !until.Equal(want) {
		t.Errorf("Until(prod) = %s, %v; want the session's fence %s", until, ok, want)
	}
	f.clocks["hub-a"].Step(a.opts.LeaseDuration - a.opts.Margin)
	if _, ok := a.Until("prod"); ok {
		t.Error("a fence past the session's deadline")
	}
	f.step(0, "hub-a") // a new session, holding no claim
	if _, ok := a.Until("prod"); ok {
		t.Error("a fence for a member of a lapsed session")
	}
}
