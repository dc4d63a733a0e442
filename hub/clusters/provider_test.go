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
	"testing"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

func TestRemove(t *testing.T) {
	c1 := &fakeCluster{id: 1}
	testCases := map[string]struct {
		existing    func(stop context.CancelFunc) *member
		wantCancels int
		wantChanges []string
	}{
		"engaged": {
			existing:    func(stop context.CancelFunc) *member { return engagedMember(c1, stop) },
			wantCancels: 1,
			wantChanges: []string{testName},
		},
		"connecting": {
			existing: func(context.CancelFunc) *member {
				return &member{snapshot: connectingMember()}
			},
			wantChanges: []string{testName},
		},
		"not registered": {},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			p := newTestProvider(&fakeClock{t: t0})
			var stop cancelRecorder
			if tc.existing != nil {
				p.members[testName] = tc.existing(stop.cancel)
			}
			p.members["member-b"] = &member{snapshot: Member{Name: "member-b"}}
			p.remove(testName)
			checkMember(t, p, nil, nil, "after remove")
			if stop.calls != tc.wantCancels {
				t.Errorf("cancel called %d times, want %d", stop.calls, tc.wantCancels)
			}
			if diff := cmp.Diff(tc.wantChanges, takeChanges(t, p)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"member-b"}, memberNames(p.Members())); diff != "" {
				t.Errorf("Members() after remove (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGet(t *testing.T) {
	c1 := &fakeCluster{id: 1}
	testCases := map[string]struct {
		existing    *member
		wantCluster cluster.Cluster
	}{
		"engaged":     {existing: engagedMember(c1, nil), wantCluster: c1},
		"not engaged": {existing: &member{cluster: c1, snapshot: connectingMember()}},
		"no cluster":  {existing: &member{snapshot: Member{Name: testName, Engaged: true}}},
		"unknown":     {},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			p := newTestProvider(&fakeClock{t: t0})
			if tc.existing != nil {
				p.members[testName] = tc.existing
			}
			got, err := p.Get(context.Background(), multicluster.ClusterName(testName))
			if tc.wantCluster == nil {
				if !errors.Is(err, multicluster.ErrClusterNotFound) || got != nil {
					t.Errorf("Get() = %v, %v; want ErrClusterNotFound", got, err)
				}
				return
			}
			if err != nil || got != tc.wantCluster {
				t.Errorf("Get() = %v, %v; want %v", got, err, tc.wantCluster)
			}
		})
	}
}

func TestMembers(t *testing.T) {
	p := newTestProvider(&fakeClock{t: t0})
	for _, name := range []string{"member-c", "member-a", "member-b"} {
		p.upsert(registration{name: name, labels: map[string]string{"env": "prod"}, namespace: testNamespace, hash: "h1"})
	}
	got := p.Members()
	if diff := cmp.Diff([]string{"member-a", "member-b", "member-c"}, memberNames(got)); diff != "" {
		t.Errorf("Members() names (-want +got):\n%s", diff)
	}

	// Callers own what they get: changing it changes nothing registered.
	got[0].Labels["env"] = "changed"
	got[0].Reason = "Changed"
	one, _ := p.Member("member-b")
	one.Labels["env"] = "changed"
	wantLabels := []map[string]string{{"env": "prod"}, {"env": "prod"}, {"env": "prod"}}
	var gotLabels []map[string]string
	for _, m := range p.Members() {
		gotLabels = append(gotLabels, m.Labels)
		if m.Reason != fleetv1.ClusterReasonConnecting {
			t.Errorf("Members() %s reason = %q, want %q", m.Name, m.Reason, fleetv1.ClusterReasonConnecting)
		}
	}
	if diff := cmp.Diff(wantLabels, gotLabels); diff != "" {
		t.Errorf("labels after changing returned copies (-want +got):\n%s", diff)
	}
}

func TestMembersEmpty(t *testing.T) {
	got := newTestProvider(&fakeClock{t: t0}).Members()
	if got == nil || len(got) != 0 {
		t.Errorf("Members() = %#v, want an empty list", got)
	}
}

func memberNames(ms []Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

func TestRestConfig(t *testing.T) {
	p := newTestProvider(&fakeClock{t: t0})
	// A kubeconfig's own timeout is dropped too: member caches are built
	// from this config, and client-go would cut every watch after it.
	in := &rest.Config{Host: testServer, BearerToken: "token-1", QPS: 5, Burst: 10, UserAgent: "kubectl", Timeout: 30 * time.Second}
	got := p.restConfig(in)
	want := &rest.Config{Host: testServer, BearerToken: "token-1", QPS: 50, Burst: 100, UserAgent: "fleetjob-hub"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restConfig() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&rest.Config{Host: testServer, BearerToken: "token-1", QPS: 5, Burst: 10, UserAgent: "kubectl", Timeout: 30 * time.Second}, in); diff != "" {
		t.Errorf("restConfig() changed its argument (-want +got):\n%s", diff)
	}
}
