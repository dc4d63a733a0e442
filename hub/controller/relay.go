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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/spoke"
)

// changeRelay turns member connection changes into work: it collects the
// garbage of deleted ClusterJobs in members that are (again) reachable, and
// wakes every unfinished ClusterJob so its rows show the change. Reacting to
// changes, rather than polling members, is what keeps the hub quiet; a
// garbage collection pass over every reachable member every GCInterval
// catches orphans in members that never reconnect.
type changeRelay struct {
	r *MemberRunReconciler
	// clusterJobs wakes the fleet reconciler (nil: not from here),
	// memberRuns the member one.
	clusterJobs, memberRuns chan<- event.TypedGenericEvent[client.Object]
	// everyReplica runs the relay on every replica of a sharded hub, for
	// the members each serves.
	everyReplica bool
}

// Start relays changes until ctx ends.
func (c *changeRelay) Start(ctx context.Context) error {
	changes := make(chan []string)
	go func() {
		for {
			names, err := c.r.Members.WaitForChanges(ctx)
			if err != nil {
				return // the manager is stopping
			}
			select {
			case changes <- names:
			case <-ctx.Done():
				return
			}
		}
	}()
	ticker := time.NewTicker(c.r.Options.GCInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			c.r.collectGarbage(ctx, c.r.memberNames())
		case names := <-changes:
			c.r.collectGarbage(ctx, names)
			if !c.wake(ctx, names) {
				return nil
			}
		}
	}
}

// wake enqueues every unfinished ClusterJob, for runs that wait for a
// first cluster, and the unfinished MemberRuns of the clusters that changed;
// false once ctx ended.
func (c *changeRelay) wake(ctx context.Context, clusters []string) bool {
	send := func(out chan<- event.TypedGenericEvent[client.Object], o client.Object) bool {
		select {
		case out <- event.TypedGenericEvent[client.Object]{Object: o}:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for _, req := range c.unfinished(ctx) {
		cj := &fleetv1.ClusterJob{}
		cj.Namespace, cj.Name = req.Namespace, req.Name
		if !send(c.clusterJobs, cj) {
			return false
		}
	}
	for _, name := range clusters {
		for _, req := range c.r.runRequests(ctx, client.MatchingFields{runsInCluster: name}) {
			mr := &fleetv1.MemberRun{Spec: fleetv1.MemberRunSpec{Cluster: string(req.ClusterName)}}
			mr.Namespace, mr.Name = req.Namespace, req.Name
			if !send(c.memberRuns, mr) {
				return false
			}
		}
	}
	return true
}

// unfinished are the ClusterJobs to wake: none when they wake otherwise.
func (c *changeRelay) unfinished(ctx context.Context) []mcreconcile.Request {
	if c.clusterJobs == nil {
		return nil
	}
	return c.r.unfinished(ctx)
}

// NeedLeaderElection: only the leader acts on members, unless sharded.
func (c *changeRelay) NeedLeaderElection() bool { return !c.everyReplica }

func (r *MemberRunReconciler) memberNames() []string {
	members := r.Members.Members()
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.Name
	}
	return names
}

// collectGarbage deletes, in each named reachable member, the Jobs and plans
// this hub made for ClusterJobs that no longer exist on it: owner references
// cannot cross clusters, so this is how a run deleted while a member was
// away ends. Another hub's objects are never touched, and a run is deleted
// only once the hub's API server confirms its ClusterJob is gone.
func (r *MemberRunReconciler) collectGarbage(ctx context.Context, names []string) {
	r.forEach(len(names), func(i int) {
		m, ok := r.Members.Member(names[i])
		if !ok || !m.Engaged || !m.Reachable {
			return
		}
		cl, ok := r.engaged(ctx, m)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
		defer cancel()
		n, err := spoke.CollectGarbage(ctx, cl.GetClient(), m.Namespace, spoke.GCOptions{
			Hub: r.Options.HubID, Now: r.Clock.Now(), MinAge: r.Options.GCMinAge, Gone: r.clusterJobGone, Live: cl.GetAPIReader(),
		})
		if err != nil || n > 0 {
			log.FromContext(ctx).Info("Collected garbage in member", "cluster", m.Name, "deleted", n, "err", err)
		}
	})
}

// clusterJobGone tells whether ClusterJob key with UID label uid is gone:
// the cache answers for the live ones; absence is confirmed with the hub's
// API server, because a ClusterJob created a moment ago may not be cached.
func (r *MemberRunReconciler) clusterJobGone(ctx context.Context, key types.NamespacedName, uid string) (bool, error) {
	cj := &fleetv1.ClusterJob{}
	if err := r.Hub.Get(ctx, key, cj); err == nil && naming.LabelValue(string(cj.UID)) == uid {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, hubWriteTimeout)
	defer cancel()
	switch err := r.HubReader.Get(ctx, key, cj); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return naming.LabelValue(string(cj.UID)) != uid, nil
}
