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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func TestOwner(t *testing.T) {
	old, young := claimant{name: "b-original", created: t0}, claimant{name: "a-alias", created: at(time.Hour)}
	startedYoung := young
	startedYoung.started = true
	startedOld := old
	startedOld.started = true
	testCases := map[string]struct {
		claimants []claimant
		want      string
	}{
		"alone":                                {claimants: []claimant{young}, want: "a-alias"},
		"the oldest Secret, whatever the name": {claimants: []claimant{young, old}, want: "b-original"},
		"in any order":                         {claimants: []claimant{old, young}, want: "b-original"},
		"a started run holds the younger":      {claimants: []claimant{old, startedYoung}, want: "a-alias"},
		"both started: the oldest":             {claimants: []claimant{startedYoung, startedOld}, want: "b-original"},
		"same second: the first name": {
			claimants: []claimant{{name: "b", created: t0}, {name: "a", created: t0}, {name: "c", created: t0}}, want: "a",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, owner(tc.claimants).name); diff != "" {
				t.Errorf("owner() (-want +got):\n%s", diff)
			}
			// The decision must not depend on the order claimants are met in:
			// that is the order of connecting, which a restart changes.
			rev := slices.Clone(tc.claimants)
			slices.Reverse(rev)
			if got := owner(rev).name; got != tc.want {
				t.Errorf("owner() of the reversed list = %q, want %q", got, tc.want)
			}
		})
	}
}

// claimed is a member named name whose Secret was created at created, in the
// registry, engaged on cl (nil: not connected) with stop as its cancel func.
func claimed(p *Provider, name string, created time.Time, cl *fakeCluster, stop func()) {
	m := &member{created: created, snapshot: Member{Name: name, Reason: fleetv1.ClusterReasonConnecting}}
	if cl != nil {
		m.cluster, m.cancel, m.hash = cl, stop, "h1"
		m.snapshot.Engaged, m.snapshot.Reachable, m.snapshot.Reason = true, true, fleetv1.ClusterReasonConnected
	}
	p.members[name] = m
}

// woken collects the registrations woken within a short wait.
func woken(p *Provider) []string {
	var names []string
	timeout := time.After(200 * time.Millisecond)
	for {
		select {
		case ev := <-p.wakeups:
			names = append(names, ev.Object.GetName())
		case <-timeout:
			slices.Sort(names)
			return names
		}
	}
}

// After a restart the younger registration may connect first; once the
// older one connects it takes the cluster over, stopping the younger's, and
// the younger's row says DuplicateCluster at once.
func TestClaimOldestWins(t *testing.T) {
	p := newTestProvider(&fakeClock{t: t0})
	var stopAlias cancelRecorder
	claimed(p, "alias", at(time.Hour), nil, nil)
	claimed(p, "original", t0, nil, nil)
	alias := registration{name: "alias", created: at(time.Hour)}
	original := registration{name: "original", created: t0}

	if w := p.claim(alias, "uid-1", nil); w.name != "alias" {
		t.Fatalf("alias claims first: winner %q, want alias (nothing else is known)", w.name)
	}
	p.members["alias"].cluster, p.members["alias"].cancel = &fakeCluster{id: 1}, stopAlias.cancel
	p.members["alias"].snapshot.Engaged = true
	if w := p.claim(original, "uid-1", nil); w.name != "original" {
		t.Fatalf("original claims: winner %q, want original (older)", w.name)
	}
	if stopAlias.calls != 1 {
		t.Errorf("alias's cluster stopped %d times, want 1", stopAlias.calls)
	}
	got, _ := p.Member("alias")
	if got.Engaged || got.Reason != fleetv1.ClusterReasonDuplicateCluster || !strings.Contains(got.Message, "registered already as original") {
		t.Errorf("alias = engaged %t, %s %q; want not engaged, DuplicateCluster naming original", got.Engaged, got.Reason, got.Message)
	}
	if diff := cmp.Diff([]string{"alias"}, woken(p)); diff != "" {
		t.Errorf("woken (-want +got):\n%s", diff)
	}
	// The alias retries, and is refused by the same rule.
	if w := p.claim(alias, "uid-1", nil); w.name != "original" {
		t.Errorf("alias again: winner %q, want original", w.name)
	}
	// The original goes: the alias is woken to take the cluster.
	p.remove("original")
	if diff := cmp.Diff([]string{"alias"}, woken(p)); diff != "" {
		t.Errorf("woken after the original is removed (-want +got):\n%s", diff)
	}
	if w := p.claim(alias, "uid-1", nil); w.name != "alias" {
		t.Errorf("alias after the original is gone: winner %q, want alias", w.name)
	}
}

// A registration that a started run froze its plan in keeps the cluster,
// even against an older one, and even before it connected again.
func TestClaimStartedRunHolds(t *testing.T) {
	p := newTestProvider(&fakeClock{t: t0})
	claimed(p, "original", t0, nil, nil)
	original := registration{name: "original", created: t0}
	alias := registration{name: "alias", created: at(time.Hour)}
	started := map[string]time.Time{"alias": at(time.Hour)}
	claimed(p, "alias", at(time.Hour), nil, nil)
	if w := p.claim(original, "uid-1", started); w.name != "alias" || !w.started {
		t.Errorf("original claims: winner %+v, want alias, started", w)
	}
	if w := p.claim(alias, "uid-1", started); w.name != "alias" {
		t.Errorf("alias claims: winner %q, want alias", w.name)
	}
	// Its run ended: the oldest takes over at its next attempt.
	if w := p.claim(original, "uid-1", nil); w.name != "original" {
		t.Errorf("original, no run started: winner %q, want original", w.name)
	}
}

// A connection that lost its cluster while it was being set up is stopped,
// and told who runs the cluster.
func TestEngagedAfterDisplaced(t *testing.T) {
	p := newTestProvider(&fakeClock{t: t0})
	claimed(p, "alias", at(time.Hour), nil, nil)
	claimed(p, "original", t0, nil, nil)
	p.claim(registration{name: "alias", created: at(time.Hour)}, "uid-1", nil)
	p.claim(registration{name: "original", created: t0}, "uid-1", nil)
	var stop cancelRecorder
	cl := &fakeCluster{id: 1}
	p.replace(registration{name: "alias", hash: "h1"}, cl, stop.cancel)
	if w := p.engaged("alias", cl); w.name != "original" {
		t.Errorf("engaged() = %q, want original", w.name)
	}
	if stop.calls != 1 {
		t.Errorf("cluster stopped %d times, want 1", stop.calls)
	}
	if m, _ := p.Member("alias"); m.Engaged {
		t.Error("alias engaged, want not")
	}
}

// A Secret briefly invalid keeps its claim: the other registration of its
// cluster does not take the cluster, and its runs, meanwhile.
func TestInvalidKeepsClaim(t *testing.T) {
	p := newTestProvider(&fakeClock{t: t0})
	claimed(p, "original", t0, nil, nil)
	claimed(p, "alias", at(time.Hour), nil, nil)
	p.claim(registration{name: "original", created: t0}, "uid-1", nil)
	p.invalid(registration{name: "original", created: t0}, errInvalid)
	if w := p.claim(registration{name: "alias", created: at(time.Hour)}, "uid-1", nil); w.name != "original" {
		t.Errorf("alias while the original is invalid: winner %q, want original", w.name)
	}
}

func TestStartedIn(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := fleetv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	secret := func(name string, created time.Time) client.Object {
		s := makeSecret(name, nil).Obj()
		s.CreationTimestamp = metav1.NewTime(created)
		return s
	}
	unlabelled := secret("unlabelled", t0).(*corev1.Secret)
	delete(unlabelled.Labels, fleetv1.RegistrationLabel)
	run := func(name, cluster, id string, phase fleetv1.ClusterPhase) client.Object {
		mr := &fleetv1.MemberRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"},
			Spec: fleetv1.MemberRunSpec{ClusterJob: "cj", ClusterJobUID: "uid", Cluster: cluster}}
		mr.Status.ClusterID, mr.Status.Phase = id, phase
		return mr
	}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		secret("running", t0), secret("finished", t0), secret("pending", t0), secret("elsewhere", t0), unlabelled,
		run("r1", "running", "uid-1", fleetv1.ClusterRunning),
		run("r2", "running", "uid-1", fleetv1.ClusterPending), // a second run, same registration
		run("r3", "finished", "uid-1", fleetv1.ClusterCompleted),
		run("r4", "pending", "", fleetv1.ClusterPending), // not planned: froze nothing
		run("r5", "elsewhere", "uid-2", fleetv1.ClusterRunning),
		run("r6", "gone", "uid-1", fleetv1.ClusterRunning),
		run("r7", "unlabelled", "uid-1", fleetv1.ClusterRunning),
	).Build()
	p := newTestProvider(&fakeClock{t: t0})
	p.hub = hub
	got, err := p.startedIn(context.Background(), "uid-1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{"running": t0}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("startedIn() (-want +got):\n%s", diff)
	}
}

// At start-up a registration waits for the older ones to be tried, and for
// no longer than the start-up grace.
func TestUntriedOlder(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	secret := func(name string, created time.Time) client.Object {
		s := makeSecret(name, nil).Obj()
		s.CreationTimestamp = metav1.NewTime(created)
		return s
	}
	self := registration{name: "self", created: t0}
	testCases := map[string]struct {
		other     client.Object
		member    *member // the other's record; nil: not seen yet
		now       time.Duration
		wantOlder string
	}{
		"older, not seen yet":      {other: secret("older", at(-time.Hour)), wantOlder: "older"},
		"older, connecting":        {other: secret("older", at(-time.Hour)), member: &member{snapshot: Member{Reason: fleetv1.ClusterReasonConnecting}}, wantOlder: "older"},
		"older, its cluster known": {other: secret("older", at(-time.Hour)), member: &member{clusterID: "uid-1", snapshot: Member{Reason: fleetv1.ClusterReasonConnecting}}},
		"older, failed to connect": {other: secret("older", at(-time.Hour)), member: &member{attempts: 1, snapshot: Member{Reason: fleetv1.ClusterReasonUnreachable}}},
		"older, invalid":           {other: secret("older", at(-time.Hour)), member: &member{snapshot: Member{Reason: fleetv1.ClusterReasonInvalidRegistration}}},
		"same second, first name":  {other: secret("a-first", t0), wantOlder: "a-first"},
		"same second, later name":  {other: secret("z-last", t0)},
		"younger":                  {other: secret("younger", at(time.Hour))},
		"after the grace":          {other: secret("older", at(-time.Hour)), now: 31 * time.Second},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			clk := &fakeClock{t: t0}
			p := newTestProvider(clk)
			p.startedAt = t0
			clk.t = at(tc.now)
			p.hub = fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.other, secret("self", t0)).Build()
			if tc.member != nil {
				p.members[tc.other.GetName()] = tc.member
			}
			got, err := p.untriedOlder(context.Background(), self)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.wantOlder {
				t.Errorf("untriedOlder() = %q, want %q", got, tc.wantOlder)
			}
		})
	}
}
