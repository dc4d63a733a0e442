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
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

// startWatches keeps each run's spoke.StartWatch per member between
// reconciles, in memory: a watch holds only the nodes whose pod has not
// started, and goes once none waits. After a hub restart every watch starts
// again from what the hub sees then, so a start bound may run up to once
// more after a restart, never from a member's clock.
type startWatches struct {
	mu      sync.Mutex
	watches map[string]spoke.StartWatch
}

func (s *startWatches) get(key string) spoke.StartWatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watches[key]
}

func (s *startWatches) put(key string, w spoke.StartWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !w.Needed() {
		delete(s.watches, key)
		return
	}
	if s.watches == nil {
		s.watches = map[string]spoke.StartWatch{}
	}
	s.watches[key] = w
}

// forget drops the watch of key: its run ended in the member, or is gone.
func (s *startWatches) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watches, key)
}

// watchKey names the watch of a run (by its ClusterJob's UID) in cluster.
func watchKey(uid, cluster string) string { return uid + "/" + cluster }

// watchStarts updates the run's StartWatch in its member with st, and has
// st time its groups and finished Jobs by the hub's clock.
func (r *MemberRunReconciler) watchStarts(cj *fleetv1.ClusterJob, run spoke.Run, st *spoke.State) spoke.StartWatch {
	key := watchKey(string(cj.UID), run.Cluster)
	w := st.Watch(r.starts.get(key), r.Clock.Now())
	r.starts.put(key, w)
	st.OnHubClock(w)
	return w
}

// timeOutStarts reads what keeps the waiting pods from starting (the reads
// due, noted in the run's watch so that each is rate-bounded), shows it on
// their nodes, fails the nodes refused for good at once and those whose pod
// did not start within spec.nodeStartTimeout of when the hub first saw it,
// refused or in a member that makes no progress (see
// spoke.State.TimeOutStarts), and returns the Jobs to delete, how many
// failed now, how many of them for the member's lack of progress, and when
// to look again. A pod that cannot be read leaves its node to what was
// read before, or the progress rule.
func (r *MemberRunReconciler) timeOutStarts(ctx context.Context, sm spoke.Member, cj *fleetv1.ClusterJob, st *spoke.State, w spoke.StartWatch) (jobs []string, failed, stalled int, next time.Time) {
	now, timeout := r.Clock.Now(), nodeStartTimeout(cj)
	reads := st.RefusalReads(now, timeout, w, spoke.MaxRefusalReads)
	refusals, err := sm.ReadRefusals(ctx, reads)
	if err != nil {
		log.FromContext(ctx).V(1).Info("Reading what keeps pods from starting", "cluster", sm.Run.Cluster, "error", err.Error())
	}
	w = w.Noted(reads, now)
	r.starts.put(watchKey(string(cj.UID), sm.Run.Cluster), w)
	stalled = st.Stalled(now, timeout, w, refusals)
	jobs, failed = st.TimeOutStarts(now, timeout, w, refusals)
	next, _ = st.StartDeadline(now, timeout, w)
	return jobs, failed, stalled, next
}
