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
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/clock"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

// maxFinishes bounds the hand-off log: one entry per run and cluster that
// saw a Job finish, forgotten when the next group starts or the run ends.
// Past it the log starts over, which loses a few samples, never memory.
const maxFinishes = 10_000

// finishKey is one run in one member, by the labels its Jobs carry.
type finishKey struct{ uid, cluster string }

// finishLog remembers when the hub last saw a Job of a run finish in each
// member: the moment the watch delivered it, which Job timestamps (1 s
// resolution) cannot tell. The next group's start reads it to measure the
// hand-off the hub adds between groups.
type finishLog struct {
	clock clock.PassiveClock
	mu    sync.Mutex
	last  map[finishKey]time.Time
}

func newFinishLog(c clock.PassiveClock) *finishLog {
	return &finishLog{clock: c, last: map[finishKey]time.Time{}}
}

// observe records the update if it is a Job of a run reaching its final
// condition.
func (l *finishLog) observe(old, updated *batchv1.Job) {
	if spoke.JobFinished(old) || !spoke.JobFinished(updated) {
		return
	}
	labels := updated.Labels
	k := finishKey{labels[fleetv1.ClusterJobUIDLabel], labels[fleetv1.ClusterLabel]}
	if k.uid == "" {
		return
	}
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.last) >= maxFinishes {
		clear(l.last)
	}
	l.last[k] = now
}

// take returns and forgets when a Job of the run last finished in the
// cluster (both as their labels hold them).
func (l *finishLog) take(uid, cluster string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := finishKey{uid, cluster}
	t, ok := l.last[k]
	delete(l.last, k)
	return t, ok
}

// forget drops what is known of the run (by its UID label): it ended.
func (l *finishLog) forget(uid string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.last {
		if k.uid == uid {
			delete(l.last, k)
		}
	}
}
