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
	"maps"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/fleetjob/fleetjob/hub/disruption"
	"github.com/fleetjob/fleetjob/hub/shard"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// TestSharedGrantsRecord runs two replicas' stores over one hub: the
// record is created by the first write, each reads the other's section,
// a write on a version read before another's loses, and the section of
// a replica whose session ended is dropped by the next write.
func TestSharedGrantsRecord(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	hub := fake.NewClientBuilder().WithScheme(scheme).Build()
	replica := func(id string) (*sharedGrants, *shard.Shard) {
		s, err := shard.New(hub, hub, shard.Options{Namespace: "fleetjob-system", Identity: id}, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		return newSharedGrants(hub, hub, "fleetjob-system", s), s
	}
	a, shardA := replica("hub-0")
	b, shardB := replica("hub-1")
	for range 2 { // each reads the other's renewal
		shardA.Step(ctx)
		shardB.Step(ctx)
	}
	run := disruption.Key{Run: types.NamespacedName{Namespace: "team", Name: "reboot-a"}, ClusterJob: "reboot", Cluster: "a"}

	u, version, err := a.Read(ctx)
	if err != nil || version != "" || len(u.Nodes) != 0 {
		t.Fatalf("read before any write = %+v, %q, %v; want nothing", u, version, err)
	}
	if err := a.Publish(ctx, disruption.Usage{Nodes: map[disruption.Key]int{run: 2}}, version); err != nil {
		t.Fatalf("first write: %v", err)
	}
	// b read before a's write: its write loses.
	if err := b.Publish(ctx, disruption.Usage{}, ""); !apierrors.IsConflict(err) {
		t.Fatalf("write on a version read before another's = %v, want a conflict", err)
	}
	u, version, err = b.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[disruption.Key]int{run: 2}, u.Nodes); diff != "" {
		t.Errorf("hub-1 reads hub-0's counts (-want +got):\n%s", diff)
	}
	if err := b.Publish(ctx, disruption.Usage{Held: map[disruption.Key]string{run: "fdb"}}, version); err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(ctx, disruption.Usage{}, version); !apierrors.IsConflict(err) {
		t.Fatalf("write on a version another replica wrote since = %v, want a conflict", err)
	}

	// hub-1 is gone: hub-0 renews past its session's expiry, and its next
	// write drops hub-1's section.
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "fleetjob-system", Name: naming.PeerLeaseName("hub-1")}}
	if err := hub.Delete(ctx, lease); err != nil {
		t.Fatal(err)
	}
	shardA.Step(ctx)
	u, version, err = a.Read(ctx)
	if err != nil || len(u.Nodes) != 0 || len(u.Held) != 0 {
		t.Fatalf("read after hub-1 left = %+v, %v; want nothing of hub-1", u, err)
	}
	if err := a.Publish(ctx, disruption.Usage{}, version); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: "fleetjob-system", Name: naming.DisruptionGrants}, cm); err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Data[naming.PeerLeaseName("hub-1")]; ok || len(cm.Data) != 1 {
		t.Errorf("record after hub-1 left has sections %v, want hub-0's only", slices.Sorted(maps.Keys(cm.Data)))
	}
}
