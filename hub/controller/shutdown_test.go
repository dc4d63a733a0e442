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
	"errors"
	"testing"
	"time"

	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
)

// lostLeader is a manager that stops at once, as one whose leader lost
// its lease does (controller-runtime skips its grace then).
type lostLeader struct{ mcmanager.Manager }

var errLost = errors.New("leader election lost")

func (lostLeader) Start(context.Context) error { return errLost }

// TestHubStartWaitsForStartsUnderWay: a hub whose manager stopped at once
// returns only once the group start under way ended: exiting before would
// leave its nodes recorded without a Job, failed though they never ran.
func TestHubStartWaitsForStartsUnderWay(t *testing.T) {
	h := &Hub{mgr: lostLeader{}, starts: &inFlight{}}
	h.starts.begin()
	returned := make(chan error, 1)
	go func() { returned <- h.Start(context.Background()) }()
	select {
	case err := <-returned:
		t.Fatalf("Start() = %v while a group start was under way, want it to wait", err)
	case <-time.After(200 * time.Millisecond):
	}
	h.starts.end()
	select {
	case err := <-returned:
		if !errors.Is(err, errLost) {
			t.Errorf("Start() = %v, want the manager's %v", err, errLost)
		}
	case <-time.After(time.Second):
		t.Fatal("Start() did not return within a second of the group start's end")
	}
}

// TestHubStartWaitsBounded: a group start that does not end holds the
// hub's exit startsGrace, no longer.
func TestHubStartWaitsBounded(t *testing.T) {
	h := &Hub{mgr: lostLeader{}, starts: &inFlight{}}
	h.starts.begin()
	began := time.Now()
	if err := h.Start(context.Background()); !errors.Is(err, errLost) {
		t.Errorf("Start() = %v, want the manager's %v", err, errLost)
	}
	if took := time.Since(began); took < startsGrace || took > startsGrace+time.Second {
		t.Errorf("Start() returned after %s, want startsGrace (%s)", took, startsGrace)
	}
}

// TestInFlightWaitReturnsWhatIsLeft: wait returns at once with no start
// under way, and counts those left when its context ends.
func TestInFlightWaitReturnsWhatIsLeft(t *testing.T) {
	var f inFlight
	if n := f.wait(context.Background()); n != 0 {
		t.Errorf("wait() with none begun = %d, want 0", n)
	}
	f.begin()
	f.begin()
	f.end()
	f.begin()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n := f.wait(ctx); n != 2 {
		t.Errorf("wait() on an ended context = %d, want the 2 starts under way", n)
	}
	f.end()
	f.end()
	if n := f.wait(context.Background()); n != 0 {
		t.Errorf("wait() after every start ended = %d, want 0", n)
	}
}
