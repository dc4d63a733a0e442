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

package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/disruption"
	"github.com/fleetjob/fleetjob/hub/fleet"
)

// fleetHub is a hub with registrations eu-1 (a canary, 4 nodes published)
// and eu-2 (no MemberCluster yet), one being deleted, a Secret that is
// no registration, and the MemberCluster of a cluster no longer registered;
// listErr, when set, fails every list of Secrets.
func fleetHub(t *testing.T, listErr error) *shared {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := fleetv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	secret := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testRegistrationNamespace, Name: name, Labels: labels}}
	}
	deleting := secret("eu-3", map[string]string{fleetv1.RegistrationLabel: "true", "tier": "canary"})
	deleting.Finalizers, deleting.DeletionTimestamp = []string{"example.com/hold"}, ptr.To(metav1.Now())
	published := func(name string, nodes int32) *fleetv1.MemberCluster {
		return &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: fleetv1.MemberClusterStatus{NodeCount: ptr.To(nodes)}}
	}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		secret("eu-1", map[string]string{fleetv1.RegistrationLabel: "true", "tier": "canary"}), published("eu-1", 4),
		secret("eu-2", map[string]string{fleetv1.RegistrationLabel: "true", "tier": "prod"}),
		deleting,
		secret("not-a-cluster", map[string]string{"tier": "canary"}),
		published("gone", 9),
	).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.SecretList); ok && listErr != nil {
				return listErr
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	// The registry knows no cluster: as on a replica of a sharded hub that
	// serves none of them, or on a hub that just started.
	return &shared{Hub: hub, Members: clusters.New(clusters.Options{Namespace: testRegistrationNamespace}),
		Options: Options{RegistrationNamespace: testRegistrationNamespace}}
}

// TestCanaryLabelsFromRegistrations: the canary is picked by the labels of
// the clusters' registration Secrets, whatever this replica's registry
// knows; a cluster whose registration is being deleted has none, and a
// failed read is an error, retried, never a run without labels.
func TestCanaryLabelsFromRegistrations(t *testing.T) {
	canary := &fleetv1.ClusterJob{Spec: fleetv1.ClusterJobSpec{Approval: &fleetv1.Approval{
		CanarySelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "canary"}}}}}
	runs := func() []fleet.MemberRun {
		return []fleet.MemberRun{{Cluster: "eu-1"}, {Cluster: "eu-2"}, {Cluster: "eu-3"}}
	}

	got := runs()
	if err := (&ClusterJobReconciler{shared: fleetHub(t, nil)}).withCanaryLabels(context.Background(), canary, got); err != nil {
		t.Fatalf("withCanaryLabels() = %v", err)
	}
	want := []fleet.MemberRun{
		{Cluster: "eu-1", Labels: map[string]string{fleetv1.RegistrationLabel: "true", "tier": "canary"}},
		{Cluster: "eu-2", Labels: map[string]string{fleetv1.RegistrationLabel: "true", "tier": "prod"}},
		{Cluster: "eu-3"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}

	got = runs()
	if err := (&ClusterJobReconciler{shared: fleetHub(t, nil)}).withCanaryLabels(context.Background(), &fleetv1.ClusterJob{}, got); err != nil || got[0].Labels != nil {
		t.Errorf("without a canary selector: error %v, labels %v; want none", err, got[0].Labels)
	}
	if err := (&ClusterJobReconciler{shared: fleetHub(t, errors.New("the cache is gone"))}).withCanaryLabels(context.Background(), canary, runs()); err == nil {
		t.Error("withCanaryLabels() with the registrations unreadable = nil, want the error")
	}
}

// TestDisruptionClustersFromRegistrations: a budget's clusters are the
// registration Secrets with their labels, each with the node count its
// MemberCluster shows (0 before one is published), whatever this replica's
// registry knows; a MemberCluster without a registration is no cluster.
func TestDisruptionClustersFromRegistrations(t *testing.T) {
	got, err := (&MemberRunReconciler{shared: fleetHub(t, nil)}).disruptionClusters(context.Background())
	if err != nil {
		t.Fatalf("disruptionClusters() = %v", err)
	}
	want := map[string]disruption.Cluster{
		"eu-1": {Labels: map[string]string{fleetv1.RegistrationLabel: "true", "tier": "canary"}, Nodes: 4},
		"eu-2": {Labels: map[string]string{fleetv1.RegistrationLabel: "true", "tier": "prod"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if _, err := (&MemberRunReconciler{shared: fleetHub(t, errors.New("the cache is gone"))}).disruptionClusters(context.Background()); err == nil {
		t.Error("disruptionClusters() with the registrations unreadable = nil, want the error")
	}
}
