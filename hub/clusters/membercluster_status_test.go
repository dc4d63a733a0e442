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
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

const day = 24 * time.Hour

// cond is a condition of type typ as the status functions return it,
// without lastTransitionTime.
func cond(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message}
}

func TestConnectedCondition(t *testing.T) {
	const typ = fleetv1.MemberClusterConnected
	cases := map[string]struct {
		member Member
		want   metav1.Condition
	}{
		"engaged and reachable": {
			member: Member{Engaged: true, Reachable: true, Reason: fleetv1.ClusterReasonConnected},
			want:   cond(typ, metav1.ConditionTrue, fleetv1.ClusterReasonConnected, "the hub reaches the cluster's API server and watches it"),
		},
		"first seen, connecting": {
			member: connectingMember(),
			want:   cond(typ, metav1.ConditionUnknown, fleetv1.ClusterReasonConnecting, "the hub is checking and engaging the cluster"),
		},
		"reachable, connecting again with a changed registration": {
			member: Member{Reachable: true, Reason: fleetv1.ClusterReasonConnected},
			want:   cond(typ, metav1.ConditionUnknown, fleetv1.ClusterReasonConnecting, "the hub is checking and engaging the cluster"),
		},
		"refused its access": {
			member: Member{Reason: fleetv1.ClusterReasonForbidden, Message: errDenied.Error()},
			want:   cond(typ, metav1.ConditionFalse, fleetv1.ClusterReasonForbidden, "the registered credentials may not: list nodes"),
		},
		"engaged, stopped answering": {
			member: Member{Engaged: true, Reason: fleetv1.ClusterReasonUnreachable, Message: refusedMessage},
			want:   cond(typ, metav1.ConditionFalse, fleetv1.ClusterReasonUnreachable, refusedMessage),
		},
		"credentials rejected": {
			member: Member{Reason: fleetv1.ClusterReasonUnauthorized, Message: "Unauthorized"},
			want:   cond(typ, metav1.ConditionFalse, fleetv1.ClusterReasonUnauthorized, "Unauthorized"),
		},
		"invalid registration": {
			member: Member{Reason: fleetv1.ClusterReasonInvalidRegistration, Message: errInvalid.Error()},
			want:   cond(typ, metav1.ConditionFalse, fleetv1.ClusterReasonInvalidRegistration, "data.kubeconfig is missing or empty"),
		},
		"a duplicate of another registration": {
			member: Member{Reason: fleetv1.ClusterReasonDuplicateCluster, Message: "registered already as member-b"},
			want:   cond(typ, metav1.ConditionFalse, fleetv1.ClusterReasonDuplicateCluster, "registered already as member-b"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, connectedCondition(tc.member)); diff != "" {
				t.Errorf("connectedCondition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAccessReviewedCondition(t *testing.T) {
	const typ = fleetv1.MemberClusterAccessReviewed
	var many []string
	for i := range 11 {
		many = append(many, fmt.Sprintf("verb-%d jobs.batch", i))
	}
	cases := map[string]struct {
		seen observation
		want metav1.Condition
	}{
		"never reviewed": {
			want: cond(typ, metav1.ConditionUnknown, fleetv1.ReasonAccessNotReviewed, "the member has not answered an access review of the registered identity yet"),
		},
		"everything allowed": {
			seen: observation{reviewed: true},
			want: cond(typ, metav1.ConditionTrue, fleetv1.ReasonAccessGranted, "the registered identity may do everything fleetjob needs (work namespace team-a)"),
		},
		"some refused, every one named": {
			seen: observation{reviewed: true, denied: []string{"list nodes", "watch nodes", "get pods in namespace team-a"}},
			want: cond(typ, metav1.ConditionFalse, fleetv1.ReasonAccessDenied,
				"the registered identity may not: list nodes; watch nodes; get pods in namespace team-a; run `kubectl fleetjob register` for the cluster again to grant it"),
		},
		"many refused: the first 8 named, the others counted": {
			seen: observation{reviewed: true, denied: many},
			want: cond(typ, metav1.ConditionFalse, fleetv1.ReasonAccessDenied,
				"the registered identity may not: verb-0 jobs.batch; verb-1 jobs.batch; verb-2 jobs.batch; verb-3 jobs.batch; verb-4 jobs.batch; "+
					"verb-5 jobs.batch; verb-6 jobs.batch; verb-7 jobs.batch; and 3 more; run `kubectl fleetjob register` for the cluster again to grant it"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, accessReviewedCondition(tc.seen, "team-a")); diff != "" {
				t.Errorf("accessReviewedCondition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadyCondition(t *testing.T) {
	const typ = fleetv1.MemberClusterReady
	connected := cond(fleetv1.MemberClusterConnected, metav1.ConditionTrue, fleetv1.ClusterReasonConnected, "reached")
	connecting := cond(fleetv1.MemberClusterConnected, metav1.ConditionUnknown, fleetv1.ClusterReasonConnecting, "the hub has not connected to it yet")
	unreachable := cond(fleetv1.MemberClusterConnected, metav1.ConditionFalse, fleetv1.ClusterReasonUnreachable, refusedMessage)
	forbidden := cond(fleetv1.MemberClusterConnected, metav1.ConditionFalse, fleetv1.ClusterReasonForbidden, "the registered credentials may not: list nodes; watch nodes")
	granted := cond(fleetv1.MemberClusterAccessReviewed, metav1.ConditionTrue, fleetv1.ReasonAccessGranted, "granted")
	denied := cond(fleetv1.MemberClusterAccessReviewed, metav1.ConditionFalse, fleetv1.ReasonAccessDenied, "may not: list nodes; watch nodes")
	notReviewed := cond(fleetv1.MemberClusterAccessReviewed, metav1.ConditionUnknown, fleetv1.ReasonAccessNotReviewed, "not yet")
	cases := map[string]struct {
		connected, access metav1.Condition
		want              metav1.Condition
	}{
		"connected and granted": {connected: connected, access: granted,
			want: cond(typ, metav1.ConditionTrue, fleetv1.ReasonReady, "ClusterJobs run in the cluster")},
		"connecting, not reviewed yet": {connected: connecting, access: notReviewed,
			want: cond(typ, metav1.ConditionUnknown, fleetv1.ClusterReasonConnecting, "the hub has not connected to it yet")},
		"refused its access: the bounded list of the review": {connected: forbidden, access: denied,
			want: cond(typ, metav1.ConditionFalse, fleetv1.ClusterReasonForbidden, "may not: list nodes; watch nodes")},
		"unreachable before any review": {connected: unreachable, access: notReviewed,
			want: cond(typ, metav1.ConditionFalse, fleetv1.ClusterReasonUnreachable, refusedMessage)},
		"unreachable after a denial: the connection says why now": {connected: unreachable, access: denied,
			want: cond(typ, metav1.ConditionFalse, fleetv1.ClusterReasonUnreachable, refusedMessage)},
		"reconnecting after a denial": {connected: connecting, access: denied,
			want: cond(typ, metav1.ConditionFalse, fleetv1.ReasonAccessDenied, "may not: list nodes; watch nodes")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, readyCondition(tc.connected, tc.access)); diff != "" {
				t.Errorf("readyCondition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTokenExpiringCondition(t *testing.T) {
	const typ = fleetv1.MemberClusterTokenExpiring
	expiry := time.Date(2027, time.March, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		expiry, now time.Time
		want        metav1.Condition
	}{
		"unknown": {now: expiry,
			want: cond(typ, metav1.ConditionUnknown, fleetv1.ReasonTokenExpiryUnknown,
				"the registered credentials record no expiry the hub can read (a client certificate, an opaque token, or a token that never expires)")},
		"a year left": {expiry: expiry, now: expiry.Add(-365 * day),
			want: cond(typ, metav1.ConditionFalse, fleetv1.ReasonTokenValid, "the registered token expires at 2027-03-01T12:00:00Z")},
		"a second more than 30 days left": {expiry: expiry, now: expiry.Add(-30*day - time.Second),
			want: cond(typ, metav1.ConditionFalse, fleetv1.ReasonTokenValid, "the registered token expires at 2027-03-01T12:00:00Z")},
		"30 days left": {expiry: expiry, now: expiry.Add(-30 * day),
			want: cond(typ, metav1.ConditionTrue, fleetv1.ReasonTokenExpiresSoon,
				"the registered token expires at 2027-03-01T12:00:00Z: run `kubectl fleetjob register` for the cluster again before then to rotate it")},
		"a day left, the same message": {expiry: expiry, now: expiry.Add(-day),
			want: cond(typ, metav1.ConditionTrue, fleetv1.ReasonTokenExpiresSoon,
				"the registered token expires at 2027-03-01T12:00:00Z: run `kubectl fleetjob register` for the cluster again before then to rotate it")},
		"expiring now": {expiry: expiry, now: expiry,
			want: cond(typ, metav1.ConditionTrue, fleetv1.ReasonTokenExpired,
				"the registered token expired at 2027-03-01T12:00:00Z: run `kubectl fleetjob register` for the cluster again to rotate it")},
		"expired, expiry in another zone": {expiry: expiry.In(time.FixedZone("CET", 3600)), now: expiry.Add(day),
			want: cond(typ, metav1.ConditionTrue, fleetv1.ReasonTokenExpired,
				"the registered token expired at 2027-03-01T12:00:00Z: run `kubectl fleetjob register` for the cluster again to rotate it")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tokenExpiringCondition(tc.expiry, tc.now)); diff != "" {
				t.Errorf("tokenExpiringCondition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextTokenCheck(t *testing.T) {
	expiry := time.Date(2027, time.March, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		expiry, now time.Time
		want        time.Duration
	}{
		"unknown: never":                     {now: expiry, want: 0},
		"before the warning: when it starts": {expiry: expiry, now: expiry.Add(-40 * day), want: 10 * day},
		"warning: when it expires":           {expiry: expiry, now: expiry.Add(-2 * day), want: 2 * day},
		"at the warning's start":             {expiry: expiry, now: expiry.Add(-30 * day), want: 30 * day},
		"expired: never":                     {expiry: expiry, now: expiry.Add(time.Second), want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := nextTokenCheck(tc.expiry, tc.now); got != tc.want {
				t.Errorf("nextTokenCheck = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMemberClusterStatus follows one member through the registry's
// transitions and checks the MemberCluster status each leaves.
func TestMemberClusterStatus(t *testing.T) {
	c1 := &fakeCluster{id: 1}
	var stop cancelRecorder
	expiry := at(20 * day)
	reg := testReg("h1", map[string]string{"env": "prod", fleetv1.ClusterSetLabel: "team-a"})
	reg.tokenExpiry = expiry
	type view struct {
		Connected, AccessReviewed, Ready, TokenExpiring string // status/reason
		Version                                         string
		Nodes                                           *int32
		ClusterID, Set, Namespace                       string
		TokenExpiry, LastProbeTime                      *metav1.Time
	}
	summary := func(st fleetv1.MemberClusterStatus) view {
		byType := map[string]string{}
		for _, c := range st.Conditions {
			byType[c.Type] = string(c.Status) + "/" + c.Reason
		}
		return view{
			Connected: byType[fleetv1.MemberClusterConnected], AccessReviewed: byType[fleetv1.MemberClusterAccessReviewed],
			Ready: byType[fleetv1.MemberClusterReady], TokenExpiring: byType[fleetv1.MemberClusterTokenExpiring],
			Version: st.KubernetesVersion, Nodes: st.NodeCount, ClusterID: st.ClusterID, Set: st.ClusterSet, Namespace: st.WorkNamespace,
			TokenExpiry: st.TokenExpiry, LastProbeTime: st.LastProbeTime,
		}
	}
	tokenAt := &metav1.Time{Time: expiry}
	steps := []struct {
		name string
		at   time.Duration
		do   func(p *Provider)
		want view
	}{
		{name: "registered", do: func(p *Provider) { p.upsert(reg) }, want: view{
			Connected: "Unknown/Connecting", AccessReviewed: "Unknown/NotReviewed", Ready: "Unknown/Connecting", TokenExpiring: "True/TokenExpiresSoon",
			Set: "team-a", Namespace: testNamespace, TokenExpiry: tokenAt}},
		{name: "refused its access", at: time.Second, do: func(p *Provider) {
			p.reviewed(testName, []string{"list nodes"})
			p.failed(testName, errDenied)
		}, want: view{
			Connected: "False/Forbidden", AccessReviewed: "False/AccessDenied", Ready: "False/Forbidden", TokenExpiring: "True/TokenExpiresSoon",
			Set: "team-a", Namespace: testNamespace, TokenExpiry: tokenAt}},
		{name: "granted, identity read, engaged", at: time.Minute, do: func(p *Provider) {
			p.reviewed(testName, nil)
			p.noteID(testName, "uid-1")
			p.replace(reg, c1, stop.cancel)
			p.engaged(testName, c1)
		}, want: view{
			Connected: "True/Connected", AccessReviewed: "True/AccessGranted", Ready: "True/Ready", TokenExpiring: "True/TokenExpiresSoon",
			ClusterID: "uid-1", Set: "team-a", Namespace: testNamespace, TokenExpiry: tokenAt}},
		{name: "inventory read", at: time.Minute + 500*time.Millisecond, do: func(p *Provider) { p.inventoried(testName, c1, "v1.36.3", 4) }, want: view{
			Connected: "True/Connected", AccessReviewed: "True/AccessGranted", Ready: "True/Ready", TokenExpiring: "True/TokenExpiresSoon",
			Version: "v1.36.3", Nodes: ptr.To[int32](4), ClusterID: "uid-1", Set: "team-a", Namespace: testNamespace, TokenExpiry: tokenAt,
			LastProbeTime: &metav1.Time{Time: at(time.Minute)}}},
		{name: "a stale cluster's inventory is dropped", at: 2 * time.Minute, do: func(p *Provider) { p.inventoried(testName, &fakeCluster{id: 2}, "v1.0.0", 1) }, want: view{
			Connected: "True/Connected", AccessReviewed: "True/AccessGranted", Ready: "True/Ready", TokenExpiring: "True/TokenExpiresSoon",
			Version: "v1.36.3", Nodes: ptr.To[int32](4), ClusterID: "uid-1", Set: "team-a", Namespace: testNamespace, TokenExpiry: tokenAt,
			LastProbeTime: &metav1.Time{Time: at(time.Minute)}}},
		{name: "stopped answering: the last inventory stays", at: 3 * time.Minute, do: func(p *Provider) { p.probed(testName, c1, errRefused) }, want: view{
			Connected: "False/Unreachable", AccessReviewed: "True/AccessGranted", Ready: "False/Unreachable", TokenExpiring: "True/TokenExpiresSoon",
			Version: "v1.36.3", Nodes: ptr.To[int32](4), ClusterID: "uid-1", Set: "team-a", Namespace: testNamespace, TokenExpiry: tokenAt,
			LastProbeTime: &metav1.Time{Time: at(time.Minute)}}},
		{name: "token expired", at: 21 * day, do: func(p *Provider) {}, want: view{
			Connected: "False/Unreachable", AccessReviewed: "True/AccessGranted", Ready: "False/Unreachable", TokenExpiring: "True/TokenExpired",
			Version: "v1.36.3", Nodes: ptr.To[int32](4), ClusterID: "uid-1", Set: "team-a", Namespace: testNamespace, TokenExpiry: tokenAt,
			LastProbeTime: &metav1.Time{Time: at(time.Minute)}}},
		{name: "registration broken by an edit", at: 22 * day, do: func(p *Provider) { p.invalid(reg, errInvalid) }, want: view{
			Connected: "False/InvalidRegistration", AccessReviewed: "Unknown/NotReviewed", Ready: "False/InvalidRegistration", TokenExpiring: "Unknown/TokenExpiryUnknown",
			Version: "v1.36.3", Nodes: ptr.To[int32](4), ClusterID: "uid-1", Set: "team-a", Namespace: testNamespace,
			LastProbeTime: &metav1.Time{Time: at(time.Minute)}}},
	}
	clk := &fakeClock{t: t0}
	p := newTestProvider(clk)
	for i, s := range steps {
		clk.t = at(s.at)
		s.do(p)
		m, o, ok := p.observed(testName)
		if !ok {
			t.Fatalf("step %d (%s): no record of %s", i, s.name, testName)
		}
		if diff := cmp.Diff(s.want, summary(memberClusterStatus(m, o, clk.t))); diff != "" {
			t.Errorf("step %d (%s): status (-want +got):\n%s", i, s.name, diff)
		}
	}
}

func TestMergeStatus(t *testing.T) {
	now := time.Date(2026, time.June, 1, 10, 0, 0, 123456789, time.UTC)
	m := Member{Name: testName, Engaged: true, Reachable: true, Reason: fleetv1.ClusterReasonConnected, Namespace: testNamespace}
	o := observation{reviewed: true, version: "v1.36.3", nodes: 4, probedAt: now, clusterID: "uid-1"}
	written := memberClusterStatus(m, o, now)
	// What the API server returns: times to the second.
	roundTrip := func(st fleetv1.MemberClusterStatus) fleetv1.MemberClusterStatus {
		st = *st.DeepCopy()
		for i := range st.Conditions {
			st.Conditions[i].LastTransitionTime = metav1.NewTime(st.Conditions[i].LastTransitionTime.Truncate(time.Second).Local())
		}
		st.LastProbeTime = &metav1.Time{Time: st.LastProbeTime.Local()}
		return st
	}
	stored := roundTrip(written)
	later := now.Add(time.Hour)
	unreachable := m
	unreachable.Engaged, unreachable.Reachable, unreachable.Reason, unreachable.Message = true, false, fleetv1.ClusterReasonUnreachable, refusedMessage
	stillUnreachable := unreachable
	stillUnreachable.Message = "i/o timeout"
	cases := map[string]struct {
		cur         fleetv1.MemberClusterStatus
		want        fleetv1.MemberClusterStatus
		wantChanged bool
		// wantTransitions are the conditions' lastTransitionTimes after.
		wantTransitions map[string]time.Time
	}{
		"nothing yet": {want: written, wantChanged: true, wantTransitions: transitions(now, now, now, now)},
		"the same, read back from the API server: no write": {cur: stored, want: memberClusterStatus(m, o, later),
			wantTransitions: transitions(now, now, now, now)},
		"a condition turned: only it moves": {cur: stored, want: memberClusterStatus(unreachable, o, later), wantChanged: true,
			wantTransitions: transitions(later, now, later, now)},
		"a message changed: no transition": {cur: roundTrip(memberClusterStatus(unreachable, o, now)), want: memberClusterStatus(stillUnreachable, o, later),
			wantChanged: true, wantTransitions: transitions(now, now, now, now)},
		"a new probe time": {cur: stored, want: memberClusterStatus(m, observation{reviewed: true, version: "v1.36.3", nodes: 4, probedAt: later, clusterID: "uid-1"}, later),
			wantChanged: true, wantTransitions: transitions(now, now, now, now)},
		"a node more": {cur: stored, want: memberClusterStatus(m, observation{reviewed: true, version: "v1.36.3", nodes: 5, probedAt: now, clusterID: "uid-1"}, later),
			wantChanged: true, wantTransitions: transitions(now, now, now, now)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, changed := mergeStatus(tc.cur, tc.want)
			if changed != tc.wantChanged {
				t.Errorf("mergeStatus changed = %v, want %v", changed, tc.wantChanged)
			}
			gotTransitions := map[string]time.Time{}
			for _, c := range got.Conditions {
				gotTransitions[c.Type] = c.LastTransitionTime.UTC()
			}
			if diff := cmp.Diff(tc.wantTransitions, gotTransitions); diff != "" {
				t.Errorf("lastTransitionTimes (-want +got):\n%s", diff)
			}
		})
	}
}

// transitions are the lastTransitionTimes of Connected, AccessReviewed,
// Ready and TokenExpiring, to the second.
func transitions(connected, access, ready, token time.Time) map[string]time.Time {
	s := func(t time.Time) time.Time { return t.Truncate(time.Second) }
	return map[string]time.Time{
		fleetv1.MemberClusterConnected: s(connected), fleetv1.MemberClusterAccessReviewed: s(access),
		fleetv1.MemberClusterReady: s(ready), fleetv1.MemberClusterTokenExpiring: s(token),
	}
}

func TestTokenWarning(t *testing.T) {
	status := func(c metav1.Condition) fleetv1.MemberClusterStatus {
		return fleetv1.MemberClusterStatus{Conditions: []metav1.Condition{c}}
	}
	const typ = fleetv1.MemberClusterTokenExpiring
	valid := status(cond(typ, metav1.ConditionFalse, fleetv1.ReasonTokenValid, "expires at X"))
	soon := status(cond(typ, metav1.ConditionTrue, fleetv1.ReasonTokenExpiresSoon, "expires at X: rotate"))
	expired := status(cond(typ, metav1.ConditionTrue, fleetv1.ReasonTokenExpired, "expired at X: rotate"))
	unknown := status(cond(typ, metav1.ConditionUnknown, fleetv1.ReasonTokenExpiryUnknown, "no expiry"))
	cases := map[string]struct {
		prev, next fleetv1.MemberClusterStatus
		wantReason string // "" for no event
	}{
		"a new MemberCluster with a token expiring soon": {next: soon, wantReason: fleetv1.ReasonTokenExpiresSoon},
		"the warning starts":                             {prev: valid, next: soon, wantReason: fleetv1.ReasonTokenExpiresSoon},
		"the token expires":                              {prev: soon, next: expired, wantReason: fleetv1.ReasonTokenExpired},
		"still expiring soon: no second event":           {prev: soon, next: soon},
		"still valid":                                    {prev: valid, next: valid},
		"rotated":                                        {prev: soon, next: valid},
		"expiry no longer known":                         {prev: soon, next: unknown},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, ok := tokenWarning(tc.prev, tc.next)
			if ok != (tc.wantReason != "") || c.Reason != tc.wantReason {
				t.Errorf("tokenWarning = %q, %v; want %q", c.Reason, ok, tc.wantReason)
			}
		})
	}
}

func TestMemberClusterLabels(t *testing.T) {
	cases := map[string]struct {
		registration map[string]string
		want         map[string]string
	}{
		"only the registration label": {registration: map[string]string{fleetv1.RegistrationLabel: "true"}},
		"selection labels and the set": {
			registration: map[string]string{fleetv1.RegistrationLabel: "true", "env": "prod", fleetv1.ClusterSetLabel: "team-a"},
			want:         map[string]string{"env": "prod", fleetv1.ClusterSetLabel: "team-a"},
		},
		"none": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, memberClusterLabels(tc.registration)); diff != "" {
				t.Errorf("memberClusterLabels (-want +got):\n%s", diff)
			}
		})
	}
}
