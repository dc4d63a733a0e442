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
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// LeaderElectionID names the Lease the hub's replicas elect a leader with.
const LeaderElectionID = "fleetjob-hub.fleetjob.io"

// shutdownGrace is how long a stopping hub waits for its reconciles and
// watches to end before it releases its lease and exits. With the group
// starts' wait after it (startsGrace) and a sharded replica's hand-back
// (a renewal), it is shorter than the hub pod's
// terminationGracePeriodSeconds (15 s in config/manager), or the kubelet
// would kill the process before the release and the next leader would wait
// out the lease (15 s). A reconcile cut short is safe: every step is
// idempotent, and the next leader redoes it from what the members hold;
// a group start is not cut (Hub.Start).
const shutdownGrace = 5 * time.Second

// leaderRetry is how often a waiting replica tries to take the lease, and
// the leader renews it: client-go waits 1 to 2.2 times this between tries,
// so a released lease is taken within 2.2 s (controller-runtime's 2 s made
// that up to 4.4 s). The cost is one lease write a second on the hub.
const leaderRetry = time.Second

// ElectLeader makes the manager of o elect a leader among the hub's
// replicas, in namespace (empty: the pod's own), before it acts on
// members. A leader that stops releases its lease at once, so that the next
// replica takes over within a retry (leaderRetry) instead of a lease
// duration (15 s) after the last renewal: without it, a new hub pod waited
// 18 s, Ready and blind, after the old one was deleted.
func ElectLeader(o *mcmanager.Options, namespace string) {
	o.LeaderElection = true
	o.LeaderElectionID = LeaderElectionID
	o.LeaderElectionNamespace = namespace
	o.LeaderElectionReleaseOnCancel = true
	o.RetryPeriod = ptr.To(leaderRetry)
	o.GracefulShutdownTimeout = ptr.To(shutdownGrace)
}

// everyReplica runs a multicluster runnable on every replica of the hub,
// elected or not. A multicluster controller reaches the manager as
// multicluster-runtime's wrapper of controller-runtime's, which embeds the
// controller interface and so hides the inner controller's
// NeedLeaderElection: whatever its options say, the manager would run it
// on the leader only. This type says false, and forwards Start and Engage.
type everyReplica struct {
	mcmanager.Runnable
	// started is closed when Start is called.
	started chan struct{}
}

func newEveryReplica(r mcmanager.Runnable) *everyReplica {
	return &everyReplica{Runnable: r, started: make(chan struct{})}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (*everyReplica) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (e *everyReplica) Start(ctx context.Context) error {
	close(e.started)
	return e.Runnable.Start(ctx)
}

// Engage waits for Start before it hands a member to the controller. A
// controller that has not started queues the member's sources, and one
// queued for a member disengaged meanwhile fails the controller's Start,
// and with it the hub. The wait is bounded by the member's engagement
// (the registry's connect timeout).
func (e *everyReplica) Engage(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster) error {
	select {
	case <-e.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	return e.Runnable.Engage(ctx, name, cl)
}

// everyReplicaManager is a manager whose runnables, controllers built on
// it among them, run on every replica of the hub.
type everyReplicaManager struct{ mcmanager.Manager }

// Add implements mcmanager.Manager.
func (m everyReplicaManager) Add(r mcmanager.Runnable) error {
	return m.Manager.Add(newEveryReplica(r))
}
