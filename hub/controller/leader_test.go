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
	"testing"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mccontroller "sigs.k8s.io/multicluster-runtime/pkg/controller"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
)

// TestEveryReplicaRunsOutsideElection: a multicluster controller asked not
// to need leader election still reaches the manager as a runnable the
// manager gates on leadership (if this ever changes upstream, the wrapper
// can go); wrapped, it runs on every replica.
func TestEveryReplicaRunsOutsideElection(t *testing.T) {
	c, err := mccontroller.NewUnmanaged("every-replica", nil, mccontroller.Options{
		Reconciler:         mcreconcile.Func(func(context.Context, mcreconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }),
		SkipNameValidation: ptr.To(true), NeedLeaderElection: ptr.To(false),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := any(c).(manager.LeaderElectionRunnable); ok {
		t.Error("a multicluster controller exposes NeedLeaderElection now: everyReplica may be unneeded")
	}
	wrapped, ok := any(newEveryReplica(c)).(manager.LeaderElectionRunnable)
	if !ok || wrapped.NeedLeaderElection() {
		t.Errorf("everyReplica is a LeaderElectionRunnable needing election: %v, %v; want one that does not", ok, ok && wrapped.NeedLeaderElection())
	}
}

// engageRecorder is a multicluster runnable that records its engagements.
type engageRecorder struct{ engaged chan multicluster.ClusterName }

func (engageRecorder) Start(ctx context.Context) error { <-ctx.Done(); return nil }

func (e engageRecorder) Engage(_ context.Context, name multicluster.ClusterName, _ cluster.Cluster) error {
	e.engaged <- name
	return nil
}

// TestEveryReplicaEngagesOnlyOnceStarted: a member engaged before the
// controller started reaches it only once it starts, and an engagement
// whose member goes away before then ends with it.
func TestEveryReplicaEngagesOnlyOnceStarted(t *testing.T) {
	rec := engageRecorder{engaged: make(chan multicluster.ClusterName, 2)}
	e := newEveryReplica(rec)

	gone, cancelGone := context.WithCancel(context.Background())
	goneErr := make(chan error, 1)
	go func() { goneErr <- e.Engage(gone, "gone", nil) }()
	engageErr := make(chan error, 1)
	go func() { engageErr <- e.Engage(context.Background(), "eu-1", nil) }()
	select {
	case name := <-rec.engaged:
		t.Fatalf("%s engaged before Start", name)
	case <-time.After(100 * time.Millisecond):
	}
	cancelGone()
	if err := <-goneErr; err == nil {
		t.Error("the engagement of a member gone before Start = nil, want its context's error")
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = e.Start(ctx) }()
	if err := <-engageErr; err != nil {
		t.Errorf("Engage after Start = %v", err)
	}
	if name := <-rec.engaged; name != "eu-1" {
		t.Errorf("engaged %s, want eu-1", name)
	}
	select {
	case name := <-rec.engaged:
		t.Errorf("%s engaged, want only eu-1", name)
	default:
	}
}

// TestEveryReplicaManagerWraps: what is added through the manager runs on
// every replica.
func TestEveryReplicaManagerWraps(t *testing.T) {
	var added mcmanager.Runnable
	m := everyReplicaManager{Manager: addRecorder{added: &added}}
	if err := m.Add(engageRecorder{}); err != nil {
		t.Fatal(err)
	}
	if r, ok := added.(manager.LeaderElectionRunnable); !ok || r.NeedLeaderElection() {
		t.Errorf("added %T, want a runnable that needs no election", added)
	}
}

// addRecorder is a manager that records what is added to it.
type addRecorder struct {
	mcmanager.Manager
	added *mcmanager.Runnable
}

func (a addRecorder) Add(r mcmanager.Runnable) error {
	*a.added = r
	return nil
}
