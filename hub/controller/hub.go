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

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
)

// DefaultOptions are the hub's options as fleetjob-hub's flags default
// them. The envtest suites start from them too, and shorten the timeouts
// they wait on.
func DefaultOptions() Options {
	return Options{
		RegistrationNamespace: fleetv1.DefaultWorkNamespace,
		UnreachableTimeout:    10 * time.Minute,
		MemberErrorTimeout:    10 * time.Minute,
		EmptySelectionGrace:   time.Minute,
		ConnectTimeout:        time.Minute,
		MemberTimeout:         30 * time.Second,
		MemberWorkers:         16,
		Parallelism:           16,
		GCInterval:            5 * time.Minute,
		// A minute after the youngest of a run's member objects was
		// created: long past any cache lag, short enough that orphans go
		// within one sweep.
		GCMinAge: time.Minute,
		Tenancy:  true,
	}
}

// SetupHub wires the whole hub controller on mgr: the registry's
// controllers (provider), the ClusterJob and MemberRun reconcilers, and
// the ClusterSet reconciler. The reconcilers reach member clusters through
// members: mgr itself, or a wrapper of it in tests. Run it with the Hub's
// Start rather than mgr's. cmd/fleetjob-hub and the envtest suites both
// wire and run the hub with it, so that what main runs is what envtest
// covers.
func SetupHub(ctx context.Context, mgr, members mcmanager.Manager, provider *clusters.Provider, opts Options) (*Hub, error) {
	local := mgr.GetLocalManager()
	recorder := local.GetEventRecorder("fleetjob-hub")
	provider.SetRecorder(recorder)
	h := &shared{
		Manager: members, Hub: local.GetClient(), HubReader: local.GetAPIReader(), Members: provider,
		Recorder: recorder, Clock: opts.Clock, Options: opts,
	}
	if h.Clock == nil {
		h.Clock = clock.RealClock{}
	}
	runs := &MemberRunReconciler{shared: h}
	// Unsharded, the member registry's changes wake the ClusterJobs
	// through the member reconciler's relay.
	var wakeJobs chan event.TypedGenericEvent[client.Object]
	s := provider.Sharded()
	if s != nil {
		runs.Shard = s
		runs.grants = newSharedGrants(local.GetClient(), local.GetAPIReader(), opts.RegistrationNamespace, s)
	} else {
		wakeJobs = make(chan event.TypedGenericEvent[client.Object])
	}
	if err := runs.SetupWithManager(ctx, wakeJobs); err != nil {
		return nil, err
	}
	if err := (&ClusterJobReconciler{shared: h, members: runs}).SetupWithManager(ctx, wakeJobs); err != nil {
		return nil, err
	}
	if s != nil {
		// A new session is published anew: the old one's section no
		// longer counts for the other replicas.
		s.Subscribe(runs.ledger.Republish)
	}
	if err := provider.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	sets := &ClusterSetReconciler{Hub: local.GetClient(), RegistrationNamespace: opts.RegistrationNamespace}
	if err := sets.SetupWithManager(local); err != nil {
		return nil, err
	}
	return &Hub{mgr: mgr, share: s, starts: &runs.underWay}, nil
}
