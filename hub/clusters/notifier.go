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
	"slices"
	"sync"
)

// notifier coalesces member changes: producers never block and no change is
// lost, however slowly the hub consumes them.
type notifier struct {
	mu      sync.Mutex
	pending map[string]struct{}
	signal  chan struct{}
	// also, when set, is told of every change this one is: a second
	// consumer that wants more changes than this one's (the MemberClusters
	// also show what a member's probe read, which wakes no run).
	also *notifier
}

func newNotifier() notifier {
	return notifier{pending: map[string]struct{}{}, signal: make(chan struct{}, 1)}
}

func (n *notifier) notify(name string) {
	n.mu.Lock()
	n.pending[name] = struct{}{}
	n.mu.Unlock()
	select {
	case n.signal <- struct{}{}:
	default: // a wake-up is already pending; it will see this name too
	}
	if n.also != nil {
		n.also.notify(name)
	}
}

func (n *notifier) wait(ctx context.Context) ([]string, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-n.signal:
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	names := slices.Sorted(maps.Keys(n.pending))
	clear(n.pending)
	return names, nil
}
