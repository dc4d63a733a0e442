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

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/spoke"
)

// changeRelay turns member connection changes into work: it collects the
// garbage of deleted ClusterJobs in members that are (again) reachable, and
// wakes every unfinished ClusterJob so its rows show the change. Reacting to
// changes, rather than polling members, is what keeps the hub quiet.
type changeRelay struct {
	r   *Reconciler
	out chan<- event.TypedGenericEvent[client.Object]
}

// Start relays changes until ctx ends.
func (c *changeRelay) Start(ctx context.Context) error {
	for {
		names, err := c.r.Members.WaitForChanges(ctx)
		if err != nil {
			return nil // the manager is stopping
		}
		c.r.collectGarbage(ctx, names)
		for _, req := range c.r.unfinished(ctx) {
			cj := &fleetv1.ClusterJob{}
			cj.Namespace, cj.Name = req.Namespace, req.Name
			select {
			case c.out <- event.TypedGenericEvent[client.Object]{Object: cj}:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// NeedLeaderElection: only the leader acts on members.
func (c *changeRelay) NeedLeaderElection() bool { return true }

// collectGarbage deletes, in each named reachable member, the Jobs and plans
// of ClusterJobs that no longer exist on the hub: owner references cannot
// cross clusters, so this is how a run deleted while a member was away ends.
func (r *Reconciler) collectGarbage(ctx context.Context, names []string) {
	list := &fleetv1.ClusterJobList{}
	if err := r.Hub.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "Listing ClusterJobs for garbage collection")
		return
	}
	live := make(map[string]bool, len(list.Items))
	for _, cj := range list.Items {
		live[naming.LabelValue(string(cj.UID))] = true
	}
	r.forEach(len(names), func(i int) {
		m, ok := r.Members.Member(names[i])
		if !ok || !m.Engaged || !m.Reachable {
			return
		}
		cl, _, ok := r.member(ctx, nil, m)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
		defer cancel()
		n, err := spoke.CollectGarbage(ctx, cl.GetClient(), m.Namespace, func(uid string) bool { return live[uid] })
		if err != nil || n > 0 {
			log.FromContext(ctx).Info("Collected garbage in member", "cluster", m.Name, "deleted", n, "err", err)
		}
	})
}
