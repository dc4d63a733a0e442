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
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/shard"
)

// A sharded hub decides who serves a member before it connects, not after
// (multicluster-runtime's sharded coordinator engages clusters whose caches
// already run): a replica holds the caches and watches of its own members
// only, so that memory and member watches divide with the replicas.

// claimRetry is how soon a registration whose claim another replica still
// holds is tried again: that replica hands the claim back as soon as it sees
// the peers change (a renew period), or its session expires.
const claimRetry = 2 * time.Second

// claimTimeout bounds the hub reads and the write of taking a claim.
const claimTimeout = 10 * time.Second

// releaseTimeout bounds handing a member back: its writes under way end by
// the session's fence, which is shorter.
const releaseTimeout = 20 * time.Second

// gate decides, on a sharded hub, whether this replica may connect reg now.
// It returns false, with when to look again (zero: when the peers change),
// for a member another replica serves or still holds; a member this
// replica served until now is disengaged and handed back first.
func (p *Provider) gate(ctx context.Context, reg registration) (connect bool, retry time.Duration) {
	s := p.opts.Shard
	if s == nil {
		return true, 0
	}
	if owner := s.Owner(reg.name); owner != s.Identity() {
		p.servedBy(ctx, reg.name, owner)
		return false, 0
	}
	claimCtx, cancel := context.WithTimeout(ctx, claimTimeout)
	defer cancel()
	err := s.Claim(claimCtx, reg.name)
	if err == nil {
		return true, 0
	}
	var held *shard.HeldError
	if errors.As(err, &held) {
		p.setWaiting(reg.name, fleetv1.ClusterReasonConnecting, fmt.Sprintf("waiting for hub replica %s to hand the cluster over", held.Replica))
	} else {
		p.setWaiting(reg.name, fleetv1.ClusterReasonConnecting, "claiming the cluster for this hub replica: "+err.Error())
	}
	log.FromContext(ctx).V(1).Info("Waiting to claim member cluster", "cluster", reg.name, "reason", err)
	return false, claimRetry
}

// servedBy disengages a member another replica serves (or no one, while
// this replica holds no session), hands its claim back and says so on its
// row.
func (p *Provider) servedBy(ctx context.Context, name, owner string) {
	p.mu.Lock()
	m, ok := p.members[name]
	engaged := ok && m.cluster != nil
	if engaged {
		m.cancel()
		m.cluster, m.cancel, m.hash = nil, nil, ""
		m.snapshot.Engaged, m.snapshot.ClusterID = false, ""
	}
	p.mu.Unlock()
	if engaged {
		log.FromContext(ctx).Info("Handing member cluster to another hub replica", "cluster", name, "replica", owner)
	}
	p.release(ctx, name)
	if owner == "" {
		p.setWaiting(name, fleetv1.ClusterReasonConnecting, "this hub replica has no session yet: it cannot tell which replica serves the cluster")
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok = p.members[name]
	if !ok {
		return
	}
	changed := p.setUnreachable(m, fleetv1.ClusterReasonServedByPeer, fmt.Sprintf("served by hub replica %s", owner))
	// Not unreachable from here: this replica does not try it. Were the
	// time kept, this replica, made its owner hours later, would count
	// those hours toward spec.unreachableTimeout and fail the member's
	// runs at its first reconcile, before it even claimed it.
	m.snapshot.UnreachableSince = time.Time{}
	if changed {
		p.notifier.notify(name)
	}
}

// release hands name's claim back, if this replica holds it. A release that
// fails is retried by the shard's renewals.
func (p *Provider) release(ctx context.Context, name string) {
	if p.opts.Shard == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	if err := p.opts.Shard.Release(ctx, name); err != nil {
		log.FromContext(ctx).Error(err, "Handing member cluster back failed; retrying", "cluster", name)
	}
}

// setWaiting records why a member is not connected, when not by a failure.
func (p *Provider) setWaiting(name, reason, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.members[name]; ok && p.setUnreachable(m, reason, message) {
		p.notifier.notify(name)
	}
}

// wakeAll has every registration reconciled again: which replica serves
// which member may have changed. One goroutine sends them in order, so that
// a fleet of thousands costs one goroutine, not thousands.
func (p *Provider) wakeAll() {
	p.mu.RLock()
	names := slices.Sorted(maps.Keys(p.members))
	p.mu.RUnlock()
	go func() {
		for _, name := range names {
			s := &corev1.Secret{}
			s.Name, s.Namespace = name, p.opts.Namespace
			select {
			case p.wakeups <- event.GenericEvent{Object: s}:
			case <-p.done:
				return
			}
		}
	}()
}
