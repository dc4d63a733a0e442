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

package hub

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

const setLabel = "fleetjob.io/cluster-set"

func TestJoinSet(t *testing.T) {
	for _, tc := range []struct {
		name       string
		labels     map[string]string
		set        string
		want       string
		wantLabels map[string]string
		wantErr    string
	}{
		{name: "no set: default", labels: map[string]string{"env": "prod"}, want: "default", wantLabels: map[string]string{"env": "prod"}},
		{name: "--cluster-set labels", labels: map[string]string{"env": "prod"}, set: "team-a", want: "team-a", wantLabels: map[string]string{"env": "prod", setLabel: "team-a"}},
		{name: "--cluster-set default is explicit", labels: map[string]string{}, set: "default", want: "default", wantLabels: map[string]string{setLabel: "default"}},
		{name: "--label alone names the set", labels: map[string]string{setLabel: "team-b"}, want: "team-b", wantLabels: map[string]string{setLabel: "team-b"}},
		{name: "--label agreeing with --cluster-set", labels: map[string]string{setLabel: "team-b"}, set: "team-b", want: "team-b", wantLabels: map[string]string{setLabel: "team-b"}},
		{
			name: "--label conflicting with --cluster-set", labels: map[string]string{setLabel: "team-b"}, set: "team-a",
			wantErr: "--label fleetjob.io/cluster-set=team-b conflicts with --cluster-set team-a", wantLabels: map[string]string{setLabel: "team-b"},
		},
		{name: "not a subdomain", labels: map[string]string{}, set: "Team_A", wantErr: `--cluster-set "Team_A" is not a valid cluster set name`, wantLabels: map[string]string{}},
		{name: "longer than a label value", labels: map[string]string{}, set: strings.Repeat("a", 64), wantErr: "must be no more than 63 bytes", wantLabels: map[string]string{}},
		{name: "bad set by --label", labels: map[string]string{setLabel: "a_b"}, wantErr: `--label fleetjob.io/cluster-set "a_b" is not a valid cluster set name`, wantLabels: map[string]string{setLabel: "a_b"}},
		{name: "empty set by --label", labels: map[string]string{setLabel: ""}, wantErr: `--label fleetjob.io/cluster-set "" is not a valid cluster set name`, wantLabels: map[string]string{setLabel: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JoinSet(tc.labels, tc.set)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got != tc.want {
				t.Errorf("JoinSet = %q, want %q", got, tc.want)
			}
			if diff := cmp.Diff(tc.wantLabels, tc.labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func clusterSet(name string, level fleetv1.PodSecurityLevel) fleetv1.ClusterSet {
	return fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: fleetv1.ClusterSetSpec{PodSecurity: level}}
}

// member is a MemberCluster with labels (as copied from its
// registration) and the set the hub wrote in its status, if any.
func member(name string, labels map[string]string, statusSet string) fleetv1.MemberCluster {
	return fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: fleetv1.MemberClusterStatus{ClusterSet: statusSet}}
}

func binding(ns, set string) fleetv1.ClusterSetBinding {
	return fleetv1.ClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: set, Namespace: ns}, Spec: fleetv1.ClusterSetBindingSpec{ClusterSet: set}}
}

func TestSummarizeSets(t *testing.T) {
	deleting := metav1.Now()
	gone := member("gone", map[string]string{setLabel: "team-a"}, "team-a")
	gone.DeletionTimestamp = &deleting
	unbinding := binding("old", "team-a")
	unbinding.DeletionTimestamp = &deleting
	teamA, dflt := clusterSet("team-a", fleetv1.PodSecurityRestricted), clusterSet("default", fleetv1.PodSecurityPrivileged)
	teamA.Status.Conditions = []metav1.Condition{{Type: fleetv1.ConditionMembersEnforcePodSecurity, Status: metav1.ConditionFalse,
		Reason: fleetv1.ReasonPodSecurityMismatch, Message: "us-1 (baseline)"}}
	dflt.Status.Conditions = []metav1.Condition{{Type: fleetv1.ConditionMembersEnforcePodSecurity, Status: metav1.ConditionTrue,
		Reason: fleetv1.ReasonPodSecurityEnforced, Message: "every cluster's work namespace enforces privileged (2 clusters)"}}
	got := SummarizeSets(
		[]fleetv1.ClusterSet{teamA, clusterSet("empty", ""), dflt},
		[]fleetv1.MemberCluster{
			member("us-1", map[string]string{setLabel: "team-a"}, "team-a"),
			member("eu-2", nil, "default"),
			member("eu-1", map[string]string{"env": "prod"}, ""),
			// Not yet filled by the hub: the label tells the set.
			member("ap-1", map[string]string{setLabel: "labs"}, ""),
			gone,
		},
		[]fleetv1.ClusterSetBinding{binding("team-a", "team-a"), binding("ops", "team-a"), binding("default", "default"), binding("x", "nowhere"), unbinding},
	)
	want := []SetInfo{
		{Name: "default", PodSecurity: fleetv1.PodSecurityPrivileged, Defined: true, Clusters: []string{"eu-1", "eu-2"}, Bindings: []string{"default"}},
		{Name: "empty", PodSecurity: fleetv1.PodSecurityBaseline, Defined: true, Clusters: []string{}, Bindings: []string{}},
		{Name: "labs", PodSecurity: fleetv1.PodSecurityBaseline, Clusters: []string{"ap-1"}, Bindings: []string{}},
		{Name: "nowhere", PodSecurity: fleetv1.PodSecurityBaseline, Clusters: []string{}, Bindings: []string{"x"}},
		{Name: "team-a", PodSecurity: fleetv1.PodSecurityRestricted, Defined: true, Clusters: []string{"us-1"}, Bindings: []string{"ops", "team-a"},
			Warning: "us-1 (baseline)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SummarizeSets (-want +got):\n%s", diff)
	}
	if got := SummarizeSets(nil, nil, nil); len(got) != 0 {
		t.Errorf("SummarizeSets of nothing = %v, want no set", got)
	}
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := fleetv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGetSetPolicy(t *testing.T) {
	restricted, unset, drains := clusterSet("team-a", fleetv1.PodSecurityRestricted), clusterSet("old", ""), clusterSet("maintenance", fleetv1.PodSecurityBaseline)
	drains.Spec.AllowDrain = true
	c := crfake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(&restricted, &unset, &drains).Build()
	for _, tc := range []struct {
		set  string
		want SetPolicy
	}{
		{set: "team-a", want: SetPolicy{Set: "team-a", PodSecurity: fleetv1.PodSecurityRestricted, Defined: true}},
		{set: "old", want: SetPolicy{Set: "old", PodSecurity: fleetv1.PodSecurityBaseline, Defined: true}},
		{set: "default", want: SetPolicy{Set: "default", PodSecurity: fleetv1.PodSecurityBaseline}},
		{set: "maintenance", want: SetPolicy{Set: "maintenance", PodSecurity: fleetv1.PodSecurityBaseline, Defined: true, AllowDrain: true}},
	} {
		got, err := GetSetPolicy(context.Background(), c, tc.set)
		if err != nil {
			t.Fatalf("GetSetPolicy(%s): %v", tc.set, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("GetSetPolicy(%s) (-want +got):\n%s", tc.set, diff)
		}
	}
	failing := interceptor.NewClient(c, interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
		return errors.New("connection refused")
	}})
	_, err := GetSetPolicy(context.Background(), failing, "team-a")
	if diff := cmp.Diff("reading clusterset team-a on the hub: connection refused", errString(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

// TestListSets: clusters come from the MemberClusters, and a user who may
// not list bindings in every namespace sees those of its own.
func TestListSets(t *testing.T) {
	team, bound, other := clusterSet("team-a", fleetv1.PodSecurityRestricted), binding("team-a", "team-a"), binding("ops", "team-a")
	us1, eu1 := member("us-1", map[string]string{setLabel: "team-a"}, "team-a"), member("eu-1", nil, "default")
	// A registration Secret without its MemberCluster (the hub has not
	// published it yet) is not read, so not counted.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultNamespace, Name: "us-2", Labels: map[string]string{regLabel: "true", setLabel: "team-a"}}}
	c := crfake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(&team, &bound, &other, &us1, &eu1, secret).Build()
	tenant := interceptor.NewClient(c, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		o := &client.ListOptions{}
		o.ApplyOptions(opts)
		if _, ok := list.(*fleetv1.ClusterSetBindingList); ok && o.Namespace == "" {
			return apierrors.NewForbidden(fleetv1.GroupVersion.WithResource("clustersetbindings").GroupResource(), "", errors.New("cluster-wide"))
		}
		if _, ok := list.(*corev1.SecretList); ok {
			t.Errorf("ListSets listed Secrets")
		}
		return c.List(ctx, list, opts...)
	}})
	for _, tc := range []struct {
		name           string
		c              client.Reader
		wantBindings   []string
		wantBindingsOf string
	}{
		{name: "every namespace", c: c, wantBindings: []string{"ops", "team-a"}},
		{name: "a tenant: its namespace", c: tenant, wantBindings: []string{"team-a"}, wantBindingsOf: "team-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ListSets(context.Background(), tc.c, "team-a")
			if err != nil {
				t.Fatal(err)
			}
			want := Sets{BindingsOf: tc.wantBindingsOf, Sets: []SetInfo{
				{Name: "default", PodSecurity: fleetv1.PodSecurityBaseline, Clusters: []string{"eu-1"}, Bindings: []string{}},
				{Name: "team-a", PodSecurity: fleetv1.PodSecurityRestricted, Defined: true, Clusters: []string{"us-1"}, Bindings: tc.wantBindings},
			}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ListSets (-want +got):\n%s", diff)
			}
		})
	}
}
