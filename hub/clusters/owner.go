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
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// One member cluster registered under two names would run every node twice,
// so one registration runs it and the others are refused DuplicateCluster.
// Which one must not depend on which connected first: that changes with
// every hub restart, and with it the cluster's set and so its tenants, and a
// started run would fail DuplicateCluster in the cluster it froze its plan in.

// claimant is a registration that points at a cluster.
type claimant struct {
	name string
	// created is the registration Secret's creationTimestamp.
	created time.Time
	// started: a run that has not ended froze its plan in the cluster
	// under this name.
	started bool
}

// owner is the registration that runs a cluster several point at: one a
// started run froze its plan in under its name, for the run must end where
// it started; otherwise, and among several such, the oldest registration
// Secret, then the first name. Every input survives a restart: the runs'
// rows and the Secrets are on the hub.
func owner(cs []claimant) claimant {
	return slices.MinFunc(cs, func(a, b claimant) int {
		if a.started != b.started {
			if a.started {
				return -1
			}
			return 1
		}
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
}

// why says why c owns its cluster, for the others' rows.
func (c claimant) why() string {
	if c.started {
		return "a run started there under that name"
	}
	return "the oldest registration of it"
}

// startedIn returns the registrations, with their Secrets' creation times,
// under which a run that has not ended froze its plan in cluster id,
// read from the MemberRuns' rows. A name whose registration is gone does not
// count: nothing can run there under it.
func (p *Provider) startedIn(ctx context.Context, id string) (map[string]time.Time, error) {
	if p.hub == nil {
		return nil, nil
	}
	runs := &fleetv1.MemberRunList{}
	if err := p.hub.List(ctx, runs); err != nil {
		return nil, fmt.Errorf("listing MemberRuns: %w", err)
	}
	out := map[string]time.Time{}
	for _, mr := range runs.Items {
		if mr.Status.ClusterID != id || mr.Status.Phase.IsFinished() {
			continue
		}
		if _, seen := out[mr.Spec.Cluster]; seen {
			continue
		}
		created, ok, err := p.registered(ctx, mr.Spec.Cluster)
		if err != nil {
			return nil, err
		}
		if ok {
			out[mr.Spec.Cluster] = created
		}
	}
	return out, nil
}

// registered returns when the registration Secret of name was created, and
// whether it registers a cluster now.
func (p *Provider) registered(ctx context.Context, name string) (time.Time, bool, error) {
	s := &corev1.Secret{}
	err := p.hub.Get(ctx, client.ObjectKey{Namespace: p.opts.Namespace, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("reading registration %s: %w", name, err)
	}
	ok := s.DeletionTimestamp.IsZero() && s.Labels[fleetv1.RegistrationLabel] == "true"
	return s.CreationTimestamp.Time, ok, nil
}

// noteID records that the registration name points at cluster id, before
// it is decided whether it runs it: the others then know, and it counts as
// tried for untriedOlder.
func (p *Provider) noteID(name, id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.members[name]; ok {
		p.moveClaim(m, id)
	}
}

// untriedOlder returns a registration older than reg that the hub has not
// tried since it started, while the start-up grace (ConnectTimeout after
// Start) lasts. After a restart every registration connects again in no set
// order; waiting for the older ones, which all connect at once, lets owner
// decide from every claim instead of handing the cluster to whichever
// connected first, where a run could start and hold it. An older
// registration that fails to connect counts as tried: it keeps no one out.
func (p *Provider) untriedOlder(ctx context.Context, reg registration) (string, error) {
	if p.hub == nil || !p.now().Before(p.startedAt.Add(p.opts.ConnectTimeout)) {
		return "", nil
	}
	secrets := &corev1.SecretList{}
	if err := p.hub.List(ctx, secrets, client.InNamespace(p.opts.Namespace), client.MatchingLabels{fleetv1.RegistrationLabel: "true"}); err != nil {
		return "", fmt.Errorf("listing registrations: %w", err)
	}
	self := claimant{name: reg.name, created: reg.created}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, s := range secrets.Items {
		other := claimant{name: s.Name, created: s.CreationTimestamp.Time}
		if s.Name == reg.name || !s.DeletionTimestamp.IsZero() || owner([]claimant{self, other}).name == reg.name {
			continue
		}
		m, ok := p.members[s.Name]
		if !ok || (m.clusterID == "" && m.attempts == 0 && m.snapshot.Reason == fleetv1.ClusterReasonConnecting) {
			return s.Name, nil
		}
	}
	return "", nil
}

// claim records that reg points at cluster id and decides, by owner, which
// registration runs it. When reg loses it returns the winner; when it wins,
// the registrations it displaces are disengaged, marked DuplicateCluster
// and woken, so that their rows and Secrets say so at once.
func (p *Provider) claim(reg registration, id string, started map[string]time.Time) (winner claimant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rivals := map[string]claimant{}
	for name, created := range started {
		rivals[name] = claimant{name: name, created: created, started: true}
	}
	for name, m := range p.members {
		if name != reg.name && m.clusterID == id {
			_, s := started[name]
			rivals[name] = claimant{name: name, created: m.created, started: s}
		}
	}
	_, s := started[reg.name]
	self := claimant{name: reg.name, created: reg.created, started: s}
	rivals[reg.name] = self
	winner = owner(slices.Collect(maps.Values(rivals)))
	if m, ok := p.members[reg.name]; ok {
		p.moveClaim(m, id)
		m.lostTo = claimant{}
		if winner.name != reg.name {
			m.lostTo = winner
		}
	}
	if winner.name != reg.name {
		return winner
	}
	for _, name := range slices.Sorted(maps.Keys(rivals)) {
		if m, ok := p.members[name]; ok && name != reg.name {
			p.displace(m, id, winner)
		}
	}
	return winner
}

// moveClaim points m at cluster id, waking the registrations it may have
// kept out of the cluster it pointed at before.
func (p *Provider) moveClaim(m *member, id string) {
	if m.clusterID != "" && m.clusterID != id {
		p.wakeSharing(m.snapshot.Name, m.clusterID)
	}
	m.clusterID = id
}

// displace refuses m its cluster, which winner runs.
func (p *Provider) displace(m *member, id string, winner claimant) {
	m.lostTo = winner
	if m.cancel != nil {
		m.cancel()
	}
	m.cluster, m.cancel, m.hash = nil, nil, ""
	m.snapshot.Engaged, m.snapshot.ClusterID = false, ""
	err := &duplicateError{other: winner.name, id: id, why: winner.why()}
	if p.setUnreachable(m, fleetv1.ClusterReasonDuplicateCluster, err.Error()) {
		p.notifier.notify(m.snapshot.Name)
	}
	p.wake(m.snapshot.Name)
}

// wakeSharing wakes every registration but name pointing at cluster id: the
// one that kept them out may be gone.
func (p *Provider) wakeSharing(name, id string) {
	for n, m := range p.members {
		if n != name && m.clusterID == id {
			p.wake(n)
		}
	}
}

// wake has the registration of name reconciled again, without waiting for
// its backoff. It never blocks: the caller holds the registry's lock.
func (p *Provider) wake(name string) {
	s := &corev1.Secret{}
	s.Name, s.Namespace = name, p.opts.Namespace
	go func() {
		select {
		case p.wakeups <- event.GenericEvent{Object: s}:
		case <-p.done:
		}
	}()
}
