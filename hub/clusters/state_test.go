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
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

var (
	errRefused      = &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 6443}, Err: syscall.ECONNREFUSED}
	errUnauthorized = apierrors.NewUnauthorized("token expired")
	errForbidden    = apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "", errors.New("no RBAC policy matched"))
	errDenied       = &accessError{denied: []string{"list nodes"}}
	errInvalid      = errors.New("data.kubeconfig is missing or empty")
)

// testReg is a parsed registration of testName with kubeconfig hash.
func testReg(hash string, labels map[string]string) registration {
	return registration{name: testName, labels: labels, namespace: testNamespace, hash: hash}
}

// engagedMember is testName engaged on cl since t0, with stop as its
// cancel func.
func engagedMember(cl cluster.Cluster, stop context.CancelFunc) *member {
	return &member{hash: "h1", cluster: cl, cancel: stop, snapshot: Member{
		Name: testName, Labels: map[string]string{"env": "prod"}, Namespace: testNamespace,
		Engaged: true, Reachable: true, Reason: fleetv1.ClusterReasonConnected, LastReachable: t0,
	}}
}

// connectingMember is testName first seen at t0 and not yet connected.
func connectingMember() Member {
	return Member{Name: testName, Labels: map[string]string{"env": "prod"}, Namespace: testNamespace,
		Reason: fleetv1.ClusterReasonConnecting, Message: "the hub has not connected to it yet", UnreachableSince: t0}
}

// step is one transition of a sequence, at a time after t0, and what the
// registry shows after it.
type step struct {
	name string
	at   time.Duration
	// do runs the transition and returns its result, if any.
	do         func(p *Provider) any
	wantResult any
	// wantMember is Member(testName); nil if not registered.
	wantMember  *Member
	wantCluster cluster.Cluster
	wantChanges []string
}

func runSteps(t *testing.T, p *Provider, clk *fakeClock, steps []step) {
	t.Helper()
	for i, s := range steps {
		clk.t = at(s.at)
		got := s.do(p)
		if diff := cmp.Diff(s.wantResult, got); diff != "" {
			t.Errorf("step %d (%s): result (-want +got):\n%s", i, s.name, diff)
		}
		checkMember(t, p, s.wantMember, s.wantCluster, s.name)
		if diff := cmp.Diff(s.wantChanges, takeChanges(t, p), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step %d (%s): changes (-want +got):\n%s", i, s.name, diff)
		}
	}
}

// checkMember compares Member(testName) with want and Get(testName) with
// wantCluster (nil: not found).
func checkMember(t *testing.T, p *Provider, want *Member, wantCluster cluster.Cluster, step string) {
	t.Helper()
	got, ok := p.Member(testName)
	var gotPtr *Member
	if ok {
		gotPtr = &got
	}
	if diff := cmp.Diff(want, gotPtr); diff != "" {
		t.Errorf("%s: Member(%s) (-want +got):\n%s", step, testName, diff)
	}
	cl, err := p.Get(context.Background(), testName)
	switch {
	case wantCluster == nil && !errors.Is(err, multicluster.ErrClusterNotFound):
		t.Errorf("%s: Get(%s) = %v, %v; want ErrClusterNotFound", step, testName, cl, err)
	case wantCluster != nil && (err != nil || cl != wantCluster):
		t.Errorf("%s: Get(%s) = %v, %v; want %v", step, testName, cl, err, wantCluster)
	}
}

func TestUpsert(t *testing.T) {
	c1 := &fakeCluster{id: 1}
	prod := map[string]string{"env": "prod"}
	testCases := map[string]struct {
		existing     *member
		reg          registration
		wantUpToDate bool
		wantMember   Member
		wantCluster  cluster.Cluster
		wantChanges  []string
	}{
		"new registration": {
			reg:         testReg("h1", prod),
			wantMember:  connectingMember(),
			wantChanges: []string{testName},
		},
		"engaged, same kubeconfig": {
			existing:     engagedMember(c1, nil),
			reg:          testReg("h1", prod),
			wantUpToDate: true,
			wantMember:   engagedMember(c1, nil).snapshot,
			wantCluster:  c1,
		},
		"engaged, labels changed": {
			existing:     engagedMember(c1, nil),
			reg:          testReg("h1", map[string]string{"env": "staging"}),
			wantUpToDate: true,
			wantMember: func() Member {
				m := engagedMember(c1, nil).snapshot
				m.Labels = map[string]string{"env": "staging"}
				return m
			}(),
			wantCluster: c1,
			wantChanges: []string{testName},
		},
		"engaged, labels removed": {
			existing:     engagedMember(c1, nil),
			reg:          testReg("h1", nil),
			wantUpToDate: true,
			wantMember: func() Member {
				m := engagedMember(c1, nil).snapshot
				m.Labels = nil
				return m
			}(),
			wantCluster: c1,
			wantChanges: []string{testName},
		},
		"engaged, kubeconfig changed": {
			existing:    engagedMember(c1, nil),
			reg:         testReg("h2", prod),
			wantMember:  engagedMember(c1, nil).snapshot,
			wantCluster: c1,
		},
		// Until the new connection replaces it, the engaged cluster's
		// caches and probe serve the old namespace; the row must say so, or
		// the hub creates and looks for Jobs where that cluster cannot see.
		"engaged, namespace changed": {
			existing: engagedMember(c1, nil),
			reg: registration{name: testName, labels: prod, namespace: "team-b",
				hash: "h2"},
			wantMember:  engagedMember(c1, nil).snapshot,
			wantCluster: c1,
		},
		"not engaged, same kubeconfig": {
			existing: &member{hash: "h1", attempts: 2, snapshot: Member{
				Name: testName, Labels: prod, Namespace: testNamespace,
				Reason: fleetv1.ClusterReasonUnreachable, Message: refusedMessage, UnreachableSince: at(-time.Minute),
			}},
			reg: testReg("h1", prod),
			wantMember: Member{Name: testName, Labels: prod, Namespace: testNamespace,
				Reason: fleetv1.ClusterReasonUnreachable, Message: refusedMessage, UnreachableSince: at(-time.Minute)},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			p := newTestProvider(&fakeClock{t: t0})
			if tc.existing != nil {
				p.members[testName] = tc.existing
			}
			if got := p.upsert(tc.reg); got != tc.wantUpToDate {
				t.Errorf("upsert() = %t, want %t", got, tc.wantUpToDate)
			}
			checkMember(t, p, &tc.wantMember, tc.wantCluster, "after upsert")
			if diff := cmp.Diff(tc.wantChanges, takeChanges(t, p)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalid(t *testing.T) {
	c1 := &fakeCluster{id: 1}
	testCases := map[string]struct {
		existing    func(stop context.CancelFunc) *member
		wantMember  Member
		wantCancels int
	}{
		"new registration": {
			wantMember: Member{Name: testName, Labels: map[string]string{"env": "prod"}, Namespace: testNamespace,
				Reason: fleetv1.ClusterReasonInvalidRegistration, Message: errInvalid.Error(), UnreachableSince: at(time.Minute)},
		},
		"engaged member": {
			existing: func(stop context.CancelFunc) *member { return engagedMember(c1, stop) },
			wantMember: Member{Name: testName, Labels: map[string]string{"env": "prod"}, Namespace: testNamespace,
				Reason: fleetv1.ClusterReasonInvalidRegistration, Message: errInvalid.Error(), LastReachable: t0, UnreachableSince: at(time.Minute)},
			wantCancels: 1,
		},
		"unreachable since earlier": {
			existing: func(context.CancelFunc) *member {
				return &member{hash: "h1", snapshot: Member{Name: testName, Namespace: testNamespace,
					Reason: fleetv1.ClusterReasonUnreachable, Message: refusedMessage, UnreachableSince: at(-time.Hour)}}
			},
			wantMember: Member{Name: testName, Labels: map[string]string{"env": "prod"}, Namespace: testNamespace,
				Reason: fleetv1.ClusterReasonInvalidRegistration, Message: errInvalid.Error(), UnreachableSince: at(-time.Hour)},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			clk := &fakeClock{t: t0}
			p := newTestProvider(clk)
			var stop cancelRecorder
			if tc.existing != nil {
				p.members[testName] = tc.existing(stop.cancel)
			}
			clk.t = at(time.Minute)
			p.invalid(registration{name: testName, labels: map[string]string{"env": "prod"}, namespace: testNamespace}, errInvalid)
			checkMember(t, p, &tc.wantMember, nil, "after invalid")
			if stop.calls != tc.wantCancels {
				t.Errorf("cancel called %d times, want %d", stop.calls, tc.wantCancels)
			}
			if diff := cmp.Diff([]string{testName}, takeChanges(t, p)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			// The fixed Secret must connect again, whatever its hash.
			if p.upsert(testReg("h1", map[string]string{"env": "prod"})) {
				t.Error("upsert() after invalid = true, want a reconnect")
			}
		})
	}
}

func TestFailed(t *testing.T) {
	long := errors.New(strings.Repeat("x", 1000))
	unreachable := func(reason, message string) *Member {
		m := connectingMember()
		m.Reason, m.Message = reason, message
		return &m
	}
	upsert := func(p *Provider) any { return p.upsert(testReg("h1", map[string]string{"env": "prod"})) }
	failed := func(err error) func(p *Provider) any {
		return func(p *Provider) any { return p.failed(testName, err) }
	}
	attempts := func(p *Provider) any { return p.members[testName].attempts }
	steps := []step{
		{name: "registered", do: upsert, wantResult: false, wantMember: unreachable(fleetv1.ClusterReasonConnecting, "the hub has not connected to it yet"), wantChanges: []string{testName}},
		{name: "refused", at: time.Second, do: failed(errRefused), wantResult: 2 * time.Second,
			wantMember: unreachable(fleetv1.ClusterReasonUnreachable, refusedMessage), wantChanges: []string{testName}},
		{name: "refused again", at: 3 * time.Second, do: failed(errRefused), wantResult: 4 * time.Second,
			wantMember: unreachable(fleetv1.ClusterReasonUnreachable, refusedMessage)},
		{name: "attempts", at: 3 * time.Second, do: attempts, wantResult: 2,
			wantMember: unreachable(fleetv1.ClusterReasonUnreachable, refusedMessage)},
		{name: "forbidden", at: 7 * time.Second, do: failed(errForbidden), wantResult: 8 * time.Second,
			wantMember: unreachable(fleetv1.ClusterReasonForbidden, errForbidden.Error()), wantChanges: []string{testName}},
		{name: "access denied", at: 15 * time.Second, do: failed(errDenied), wantResult: 16 * time.Second,
			wantMember: unreachable(fleetv1.ClusterReasonForbidden, errDenied.Error()), wantChanges: []string{testName}},
		{name: "unauthorized", at: 31 * time.Second, do: failed(errUnauthorized), wantResult: 30 * time.Second,
			wantMember: unreachable(fleetv1.ClusterReasonUnauthorized, errUnauthorized.Error()), wantChanges: []string{testName}},
		{name: "long message", at: time.Minute, do: failed(long), wantResult: 30 * time.Second,
			wantMember: unreachable(fleetv1.ClusterReasonUnreachable, strings.Repeat("x", 477)+"..."), wantChanges: []string{testName}},
		{name: "attempts", at: time.Minute, do: attempts, wantResult: 6,
			wantMember: unreachable(fleetv1.ClusterReasonUnreachable, strings.Repeat("x", 477)+"...")},
		{name: "removed meanwhile", at: 2 * time.Minute, do: func(p *Provider) any { p.remove(testName); return p.failed(testName, errRefused) },
			wantResult: 2 * time.Second, wantChanges: []string{testName}},
	}
	clk := &fakeClock{t: t0}
	runSteps(t, newTestProvider(clk), clk, steps)
}

// A member whose new kubeconfig fails keeps its engaged cluster; the row
// shows the failure from its first moment.
func TestFailedWhileEngaged(t *testing.T) {
	c1 := &fakeCluster{id: 1}
	clk := &fakeClock{t: t0}
	p := newTestProvider(clk)
	p.members[testName] = engagedMember(c1, nil)
	want := engagedMember(c1, nil).snapshot
	want.Reachable, want.Reason, want.Message, want.UnreachableSince = false, fleetv1.ClusterReasonForbidden, errDenied.Error(), at(time.Minute)
	runSteps(t, p, clk, []step{
		{name: "forbidden", at: time.Minute, do: func(p *Provider) any { return p.failed(testName, errDenied) },
			wantResult: 2 * time.Second, wantMember: &want, wantCluster: c1, wantChanges: []string{testName}},
		{name: "forbidden again", at: 2 * time.Minute, do: func(p *Provider) any { return p.failed(testName, errDenied) },
			wantResult: 4 * time.Second, wantMember: &want, wantCluster: c1},
	})
}

func TestProbed(t *testing.T) {
	c1, stale := &fakeCluster{id: 1}, &fakeCluster{id: 2}
	probed := func(name string, cl cluster.Cluster, err error) func(p *Provider) any {
		return func(p *Provider) any { p.probed(name, cl, err); return nil }
	}
	state := func(reachable bool, reason, message string, lastReachable, since time.Duration) *Member {
		m := engagedMember(c1, nil).snapshot
		m.Reachable, m.Reason, m.Message = reachable, reason, message
		m.LastReachable = at(lastReachable)
		if since >= 0 {
			m.UnreachableSince = at(since)
		}
		return &m
	}
	const none = -1 // no UnreachableSince
	steps := []step{
		{name: "answers", at: 10 * time.Second, do: probed(testName, c1, nil),
			wantMember: state(true, fleetv1.ClusterReasonConnected, "", 10*time.Second, none), wantCluster: c1},
		{name: "refused", at: 20 * time.Second, do: probed(testName, c1, errRefused),
			wantMember: state(false, fleetv1.ClusterReasonUnreachable, refusedMessage, 10*time.Second, 20*time.Second), wantCluster: c1,
			wantChanges: []string{testName}},
		{name: "refused again", at: 30 * time.Second, do: probed(testName, c1, errRefused),
			wantMember: state(false, fleetv1.ClusterReasonUnreachable, refusedMessage, 10*time.Second, 20*time.Second), wantCluster: c1},
		{name: "unauthorized", at: 40 * time.Second, do: probed(testName, c1, errUnauthorized),
			wantMember: state(false, fleetv1.ClusterReasonUnauthorized, errUnauthorized.Error(), 10*time.Second, 20*time.Second), wantCluster: c1,
			wantChanges: []string{testName}},
		{name: "stale cluster answers", at: 50 * time.Second, do: probed(testName, stale, nil),
			wantMember: state(false, fleetv1.ClusterReasonUnauthorized, errUnauthorized.Error(), 10*time.Second, 20*time.Second), wantCluster: c1},
		{name: "other member", at: 50 * time.Second, do: probed("member-b", c1, nil),
			wantMember: state(false, fleetv1.ClusterReasonUnauthorized, errUnauthorized.Error(), 10*time.Second, 20*time.Second), wantCluster: c1},
		{name: "back", at: 60 * time.Second, do: probed(testName, c1, nil),
			wantMember: state(true, fleetv1.ClusterReasonConnected, "", 60*time.Second, none), wantCluster: c1,
			wantChanges: []string{testName}},
		{name: "still there", at: 70 * time.Second, do: probed(testName, c1, nil),
			wantMember: state(true, fleetv1.ClusterReasonConnected, "", 70*time.Second, none), wantCluster: c1},
		{name: "stale cluster fails", at: 80 * time.Second, do: probed(testName, stale, errRefused),
			wantMember: state(true, fleetv1.ClusterReasonConnected, "", 70*time.Second, none), wantCluster: c1},
		{name: "timeout", at: 90 * time.Second, do: probed(testName, c1, context.DeadlineExceeded),
			wantMember: state(false, fleetv1.ClusterReasonUnreachable, context.DeadlineExceeded.Error(), 70*time.Second, 90*time.Second), wantCluster: c1,
			wantChanges: []string{testName}},
	}
	clk := &fakeClock{t: t0}
	p := newTestProvider(clk)
	p.members[testName] = engagedMember(c1, nil)
	runSteps(t, p, clk, steps)
	if _, ok := p.Member("member-b"); ok {
		t.Error("probed() of an unregistered member registered it")
	}
}

// connect's transitions: install a cluster, engage it, replace it with the
// one of a new kubeconfig, and drop it when engaging fails.
func TestConnectTransitions(t *testing.T) {
	c1, c2 := &fakeCluster{id: 1}, &fakeCluster{id: 2}
	var stop1, stop2 cancelRecorder
	prod := map[string]string{"env": "prod"}
	reg2 := registration{name: testName, labels: prod, namespace: "team-b", hash: "h2"}
	engaged := func(namespace string, lastReachable time.Duration) *Member {
		return &Member{Name: testName, Labels: prod, Namespace: namespace, Engaged: true, Reachable: true,
			Reason: fleetv1.ClusterReasonConnected, LastReachable: at(lastReachable)}
	}
	installed := func(m *Member) *Member { m.Engaged = false; return m }
	refused := func() *Member {
		m := connectingMember()
		m.Reason, m.Message = fleetv1.ClusterReasonUnreachable, refusedMessage
		return &m
	}
	stops := func() any { return []int{stop1.calls, stop2.calls} }
	steps := []step{
		{name: "registered", do: func(p *Provider) any { return p.upsert(testReg("h1", prod)) }, wantResult: false,
			wantMember: ptr.To(connectingMember()), wantChanges: []string{testName}},
		{name: "refused", at: time.Second, do: func(p *Provider) any { return p.failed(testName, errRefused) }, wantResult: 2 * time.Second,
			wantMember:  refused(),
			wantChanges: []string{testName}},
		{name: "installed", at: 3 * time.Second, do: func(p *Provider) any { p.replace(testReg("h1", prod), c1, stop1.cancel); return nil },
			wantMember: refused()},
		{name: "stale cluster engaged", at: 4 * time.Second, do: func(p *Provider) any { p.engaged(testName, c2); return nil },
			wantMember: refused()},
		{name: "engaged", at: 5 * time.Second, do: func(p *Provider) any { p.engaged(testName, c1); return nil },
			wantMember: engaged(testNamespace, 5*time.Second), wantCluster: c1, wantChanges: []string{testName}},
		{name: "attempts reset", at: 5 * time.Second, do: func(p *Provider) any { return p.members[testName].attempts }, wantResult: 0,
			wantMember: engaged(testNamespace, 5*time.Second), wantCluster: c1},
		{name: "up to date", at: 6 * time.Second, do: func(p *Provider) any { return p.upsert(testReg("h1", prod)) }, wantResult: true,
			wantMember: engaged(testNamespace, 5*time.Second), wantCluster: c1},
		{name: "new kubeconfig", at: 7 * time.Second, do: func(p *Provider) any { return p.upsert(reg2) }, wantResult: false,
			wantMember: engaged(testNamespace, 5*time.Second), wantCluster: c1},
		{name: "new kubeconfig installed", at: 7 * time.Second, do: func(p *Provider) any { p.replace(reg2, c2, stop2.cancel); return stops() },
			wantResult: []int{1, 0}, wantMember: installed(engaged("team-b", 5*time.Second))},
		{name: "old cluster disengaged late", at: 8 * time.Second, do: func(p *Provider) any { p.disengage(testName, c1); return stops() },
			wantResult: []int{1, 0}, wantMember: installed(engaged("team-b", 5*time.Second))},
		{name: "engaging failed", at: 9 * time.Second, do: func(p *Provider) any { p.disengage(testName, c2); return stops() },
			wantResult: []int{1, 1}, wantMember: installed(engaged("team-b", 5*time.Second))},
		{name: "retried", at: 10 * time.Second, do: func(p *Provider) any { return p.upsert(reg2) }, wantResult: false,
			wantMember: installed(engaged("team-b", 5*time.Second))},
	}
	clk := &fakeClock{t: t0}
	runSteps(t, newTestProvider(clk), clk, steps)
}
