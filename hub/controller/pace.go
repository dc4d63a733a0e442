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
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

// Reconciles of one MemberRun are spaced while its member's objects keep
// changing. A 1,000-node group makes thousands of Job updates, and each
// reconcile reads and derives every node of the run: unpaced, a 1,000-node
// run took 906 reconciles of 55 ms each, one after the other for the whole
// run. The spacing grows with the run, by memberReconcileInterval for every
// nodesPerInterval planned nodes up to maxMemberReconcileInterval, so that
// the hub's work on a busy member stays about the same per second whatever
// its size, and a row is never more than that interval old. The event that
// can end a group, its last Job finishing, is never delayed, so a group
// still hands off at once.
const (
	memberReconcileInterval    = 250 * time.Millisecond
	nodesPerInterval           = 250
	maxMemberReconcileInterval = 2 * time.Second
)

// maxPaced bounds what the pacer remembers; past it, it starts over, which
// only makes some events immediate again.
const maxPaced = 10_000

// groupKey is one group of one run in one member, by its Jobs' labels.
type groupKey struct{ uid, cluster, group string }

// pacer decides whether a member event reconciles its MemberRun now or a
// little later: now when nothing of the run was reconciled within the
// interval, or when the event may end the group; otherwise at the end of
// the interval, when one reconcile takes in every event since.
type pacer struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	// last is when each MemberRun's last reconcile started, and how long
	// its events wait after that.
	last map[types.NamespacedName]paced
	// open counts the Jobs of each started group not seen finished yet.
	open map[groupKey]int
}

type paced struct {
	start    time.Time
	interval time.Duration
}

func newPacer(c clock.PassiveClock) *pacer {
	return &pacer{clock: c, last: map[types.NamespacedName]paced{}, open: map[groupKey]int{}}
}

// reconciling records that run's reconcile starts now. It keeps the
// interval its last reconcile learnt.
func (p *pacer) reconciling(run types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.last) >= maxPaced {
		clear(p.last)
	}
	last, ok := p.last[run]
	if !ok {
		last.interval = memberReconcileInterval
	}
	p.last[run] = paced{start: p.clock.Now(), interval: last.interval}
}

// planned records how many nodes run plans, which sets its interval.
func (p *pacer) planned(run types.NamespacedName, nodes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if last, ok := p.last[run]; ok {
		last.interval = reconcileInterval(nodes)
		p.last[run] = last
	}
}

// reconcileInterval is how far apart reconciles of a run of nodes are.
func reconcileInterval(nodes int) time.Duration {
	steps := max(1, (nodes+nodesPerInterval-1)/nodesPerInterval)
	return min(maxMemberReconcileInterval, time.Duration(steps)*memberReconcileInterval)
}

// delay is how long an event of run waits before its reconcile.
func (p *pacer) delay(run types.NamespacedName) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, ok := p.last[run]
	if !ok {
		return 0
	}
	return max(0, last.start.Add(last.interval).Sub(p.clock.Now()))
}

// groupStarting records that n Jobs of group g of run (uid and cluster as
// their labels hold them) will run, before they are created: their first
// finishes may come before the creation returns.
func (p *pacer) groupStarting(uid, cluster string, g, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.open) >= maxPaced {
		clear(p.open)
	}
	p.open[groupKey{uid, cluster, strconv.Itoa(g)}] = n
}

// notCreated takes back n Jobs of group g that groupStarting counted but
// were not created (skipped, or their creation failed).
func (p *pacer) notCreated(uid, cluster string, g, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := groupKey{uid, cluster, strconv.Itoa(g)}
	if left, ok := p.open[k]; ok {
		p.open[k] = left - n
	}
}

// urgent tells whether a Job update may end its group: the Job finished
// and no other Job of its group is known to be open. A group the pacer does
// not know (the hub restarted, or forgot) is always urgent.
func (p *pacer) urgent(old, updated *batchv1.Job) bool {
	if spoke.JobFinished(old) || !spoke.JobFinished(updated) {
		return false
	}
	l := updated.Labels
	k := groupKey{l[fleetv1.ClusterJobUIDLabel], l[fleetv1.ClusterLabel], l[fleetv1.GroupIndexLabel]}
	p.mu.Lock()
	defer p.mu.Unlock()
	left, ok := p.open[k]
	if !ok || left <= 1 {
		delete(p.open, k)
		return true
	}
	p.open[k] = left - 1
	return false
}
