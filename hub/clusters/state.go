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
	"maps"
	"strings"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/fleetjob/fleetjob/pkg/text"
)

// The registry's state transitions. Each takes the lock, changes one member,
// and notifies the hub when what the hub sees changed.

// upsert records a registration's labels and namespace, and reports whether
// the member is already engaged with this kubeconfig and namespace.
func (p *Provider) upsert(reg registration) (upToDate bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.members[reg.name]
	if !ok {
		m = &member{snapshot: Member{Name: reg.name, Reason: fleetv1.ClusterReasonConnecting, Message: "the hub has not connected to it yet", UnreachableSince: p.now()}}
		p.members[reg.name] = m
		defer p.notifier.notify(reg.name)
	}
	if !maps.Equal(m.snapshot.Labels, reg.labels) {
		defer p.notifier.notify(reg.name)
	}
	m.snapshot.Labels, m.created = reg.labels, reg.created
	if !m.seen.tokenExpiry.Equal(reg.tokenExpiry) {
		m.seen.tokenExpiry = reg.tokenExpiry
		defer p.published.notify(reg.name)
	}
	// The namespace follows the cluster: an engaged cluster's caches cover
	// its old namespace until a reconnect with the new one succeeds.
	if m.cluster == nil {
		m.snapshot.Namespace = reg.namespace
	}
	return m.hash == reg.hash && m.snapshot.Engaged
}

// invalid records a registration the hub cannot use until its Secret
// changes, and disengages what the old Secret engaged.
func (p *Provider) invalid(reg registration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.members[reg.name]
	if !ok {
		m = &member{snapshot: Member{Name: reg.name, UnreachableSince: p.now()}}
		p.members[reg.name] = m
	}
	if m.cancel != nil {
		m.cancel()
	}
	// The claim on the cluster stays: a Secret briefly broken by an edit
	// must not hand its cluster, and its started runs, to another
	// registration of it. It moves when the Secret connects again.
	m.cluster, m.cancel, m.hash = nil, nil, ""
	m.snapshot.Engaged, m.snapshot.ClusterID = false, ""
	m.snapshot.Labels, m.snapshot.Namespace, m.created = reg.labels, reg.namespace, reg.created
	// Nothing was reviewed with credentials the hub cannot use.
	m.seen.tokenExpiry, m.seen.reviewed, m.seen.denied = time.Time{}, false, nil
	p.setUnreachable(m, fleetv1.ClusterReasonInvalidRegistration, err.Error())
	p.notifier.notify(reg.name)
}

// replace installs a newly connected cluster, stopping the one it replaces.
func (p *Provider) replace(reg registration, cl cluster.Cluster, stop context.CancelFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.members[reg.name]
	if m == nil {
		m = &member{snapshot: Member{Name: reg.name, Labels: reg.labels, Namespace: reg.namespace}}
		p.members[reg.name] = m
	}
	if m.cancel != nil {
		m.cancel()
	}
	m.cluster, m.cancel, m.hash = cl, stop, reg.hash
	m.snapshot.Labels, m.snapshot.Namespace = reg.labels, reg.namespace
	m.snapshot.Engaged = false
}

// disengage stops cl if it is still the member's cluster.
func (p *Provider) disengage(name string, cl cluster.Cluster) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.members[name]; ok && m.cluster == cl {
		m.cancel()
		m.cluster, m.cancel, m.hash = nil, nil, ""
		m.snapshot.Engaged = false
	}
}

// engaged records a member the controllers now watch, unless another
// registration took its cluster over while it connected: then it returns
// that one, and cl was stopped already.
func (p *Provider) engaged(name string, cl cluster.Cluster) (lostTo claimant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.members[name]
	if !ok {
		return claimant{}
	}
	if m.lostTo.name != "" {
		if m.cluster == cl {
			m.cancel()
			m.cluster, m.cancel, m.hash = nil, nil, ""
		}
		return m.lostTo
	}
	if m.cluster == cl {
		m.snapshot.Engaged, m.snapshot.ClusterID = true, m.clusterID
		p.setReachable(m)
		p.notifier.notify(name)
	}
	return claimant{}
}

// failed records a failed connection and returns when to try again.
func (p *Provider) failed(name string, err error) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.members[name]
	if !ok {
		return backoff(1)
	}
	m.attempts++
	if p.setUnreachable(m, classify(err), err.Error()) {
		p.notifier.notify(name)
	}
	return backoff(m.attempts)
}

// probed records the result of a health probe of cl.
func (p *Provider) probed(name string, cl cluster.Cluster, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.members[name]
	if !ok || m.cluster != cl {
		return
	}
	changed := false
	if err == nil {
		changed = !m.snapshot.Reachable
		p.setReachable(m)
	} else {
		changed = p.setUnreachable(m, classify(err), err.Error())
	}
	if changed {
		p.notifier.notify(name)
	}
}

func (p *Provider) setReachable(m *member) {
	m.attempts = 0
	m.snapshot.Reachable, m.snapshot.Reason, m.snapshot.Message = true, fleetv1.ClusterReasonConnected, ""
	m.snapshot.LastReachable, m.snapshot.UnreachableSince = p.now(), time.Time{}
}

// setUnreachable reports whether the member's visible state changed.
func (p *Provider) setUnreachable(m *member, reason, message string) bool {
	message = text.Truncate(strings.TrimSpace(message), 480)
	changed := m.snapshot.Reachable || m.snapshot.Reason != reason || m.snapshot.Message != message
	m.snapshot.Reachable, m.snapshot.Reason, m.snapshot.Message = false, reason, message
	if m.snapshot.UnreachableSince.IsZero() {
		m.snapshot.UnreachableSince = p.now()
	}
	return changed
}

// probeLoop probes an engaged member every HealthInterval until its context
// ends. Informers retry on their own and recover when the member returns;
// the probe is what tells the hub, quickly, that a member is gone or back.
func (p *Provider) probeLoop(ctx context.Context, name string, cl cluster.Cluster, namespace string) {
	ticker := time.NewTicker(p.opts.HealthInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			err := probe(ctx, cl, namespace, p.opts.RequestTimeout)
			if err != nil {
				log.FromContext(ctx).V(2).Info("Probing member failed", "cluster", name, "err", err)
			}
			p.probed(name, cl, err)
		}
	}
}

// probe lists one Job's metadata: it proves the API server answers and the
// credentials still work, at the cost of one small request.
func probe(ctx context.Context, cl cluster.Cluster, namespace string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	jobs := &metav1.PartialObjectMetadataList{}
	jobs.SetGroupVersionKind(jobListGVK)
	return cl.GetAPIReader().List(ctx, jobs, client.InNamespace(namespace), client.Limit(1))
}

var jobListGVK = batchv1.SchemeGroupVersion.WithKind("JobList")
