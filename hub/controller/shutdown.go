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

	ctrl "sigs.k8s.io/controller-runtime"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/fleetjob/fleetjob/hub/shard"
)

// Hub is the hub controller SetupHub wired on a manager.
type Hub struct {
	mgr    mcmanager.Manager
	share  *shard.Shard
	starts *inFlight
}

// startsGrace is how long a stopped hub waits for the group starts under
// way before it exits. A start outlives its reconcile's cancellation (its
// nodes are recorded before their Jobs are created, and a node recorded
// without a Job fails though it never ran), and winds down once told: the
// creates under way are answered and the nodes not sent taken off the
// record again. A leader that lost its lease stops without the manager's
// grace, and the next one may take the lease 5 s later (lease duration
// less renew deadline): the starts end before. After a SIGTERM the
// manager already waited shutdownGrace for them, and the pod's grace
// (10 s) holds both.
const startsGrace = 4 * time.Second

// Start runs the hub until ctx ends or its manager stops (a leader that
// lost its lease), then waits for the group starts under way, at most
// startsGrace, and returns the manager's error. Sharded, the replica's
// session outlives the manager and those starts: it is renewed while they
// finish (the fence of its member writes stays open), and only then does
// the replica hand its members back and end its session, so that their
// next owner takes them at once rather than a session's lifetime later.
func (h *Hub) Start(ctx context.Context) error {
	ended := make(chan struct{})
	session, end := context.WithCancel(context.WithoutCancel(ctx))
	defer end()
	if h.share != nil {
		go func() {
			defer close(ended)
			_ = h.share.Run(session)
		}()
	} else {
		close(ended)
	}
	err := h.mgr.Start(ctx)
	wait, cancel := context.WithTimeout(context.Background(), startsGrace)
	defer cancel()
	if n := h.starts.wait(wait); n > 0 {
		ctrl.Log.Info("Exiting with group starts under way: their nodes recorded without a Job fail", "starts", n, "waited", startsGrace)
	}
	end()
	<-ended
	return err
}

// inFlight counts the group starts under way.
type inFlight struct {
	mu sync.Mutex
	n  int
	// idle is closed when n falls to 0.
	idle chan struct{}
}

func (f *inFlight) begin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
}

func (f *inFlight) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 {
		close(f.idle)
	}
}

// wait waits until no start is under way or ctx ends, and returns how
// many still are.
func (f *inFlight) wait(ctx context.Context) int {
	f.mu.Lock()
	idle, n := f.idle, f.n
	f.mu.Unlock()
	if n == 0 {
		return 0
	}
	select {
	case <-idle:
		return 0
	case <-ctx.Done():
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.n
	}
}
