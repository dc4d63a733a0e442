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
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// notifyTimeout bounds how long notify may take in total before the test
// calls it blocked; 10,000 non-blocking notifies take milliseconds.
const notifyTimeout = 10 * time.Second

func TestNotifier(t *testing.T) {
	testCases := map[string]struct {
		notifications []string
		wantNames     []string
	}{
		"one": {
			notifications: []string{"b"},
			wantNames:     []string{"b"},
		},
		"coalesced and sorted": {
			notifications: []string{"c", "a", "c", "b", "a", "c"},
			wantNames:     []string{"a", "b", "c"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			n := newNotifier()
			for _, name := range tc.notifications {
				n.notify(name)
			}
			got, err := n.wait(context.Background())
			if err != nil {
				t.Fatalf("wait() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantNames, got); diff != "" {
				t.Errorf("wait() (-want +got):\n%s", diff)
			}
			assertNothingPending(t, &n)
		})
	}
}

// Producers run under the registry's lock and in probe loops: notify must
// never wait for the hub, however far behind it is.
func TestNotifierNeverBlocks(t *testing.T) {
	const notifications, members, producers = 10_000, 100, 4
	n := newNotifier()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for p := range producers {
			wg.Go(func() {
				for i := p; i < notifications; i += producers {
					n.notify(fmt.Sprintf("member-%03d", i%members))
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(notifyTimeout):
		t.Fatalf("%d notifications with no reader did not return within %v", notifications, notifyTimeout)
	}
	var wantNames []string
	for i := range members {
		wantNames = append(wantNames, fmt.Sprintf("member-%03d", i))
	}
	got, err := n.wait(context.Background())
	if err != nil {
		t.Fatalf("wait() error = %v", err)
	}
	if diff := cmp.Diff(wantNames, got); diff != "" {
		t.Errorf("wait() (-want +got):\n%s", diff)
	}
	assertNothingPending(t, &n)
}

// A change notified while the hub handles the previous batch is returned by
// the next wait.
func TestNotifierKeepsLaterChanges(t *testing.T) {
	n := newNotifier()
	n.notify("a")
	first, err := n.wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n.notify("b")
	n.notify("a")
	second, err := n.wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"a"}, {"a", "b"}}, [][]string{first, second}); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
}

func TestNotifierWaitCancelled(t *testing.T) {
	testCases := map[string]struct {
		ctx     func() (context.Context, context.CancelFunc)
		wantErr error
	}{
		"cancelled": {
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			wantErr: context.Canceled,
		},
		"deadline": {
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 10*time.Millisecond)
			},
			wantErr: context.DeadlineExceeded,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			n := newNotifier()
			ctx, cancel := tc.ctx()
			defer cancel()
			got, err := n.wait(ctx)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("wait() error = %v, want %v", err, tc.wantErr)
			}
			if got != nil {
				t.Errorf("wait() = %v, want nil", got)
			}
		})
	}
}

// A wait blocked with nothing pending returns when a change arrives.
func TestNotifierWakesWaiter(t *testing.T) {
	n := newNotifier()
	got := make(chan []string, 1)
	go func() {
		names, _ := n.wait(context.Background())
		got <- names
	}()
	n.notify("a")
	select {
	case names := <-got:
		if diff := cmp.Diff([]string{"a"}, names); diff != "" {
			t.Errorf("wait() (-want +got):\n%s", diff)
		}
	case <-time.After(notifyTimeout):
		t.Fatal("wait() did not return after notify")
	}
}

func assertNothingPending(t *testing.T, n *notifier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if got, err := n.wait(ctx); err == nil {
		t.Errorf("wait() after draining = %v, want nothing pending", got)
	}
}
