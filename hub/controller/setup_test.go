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
	"testing"
	"time"

	"sigs.k8s.io/multicluster-runtime/pkg/reconcile"
)

func TestRetryLimiterBoundsTheBackoff(t *testing.T) {
	limiter := retryLimiter()
	failing := runRequest("team-a", "disk-clean-member-1-abc", "member-1")
	var longest time.Duration
	// controller-runtime's default limiter would wait 1,000 s by now.
	for range 30 {
		longest = max(longest, limiter.When(failing))
	}
	if longest != maxRetryDelay {
		t.Errorf("longest wait after 30 failures = %s, want %s", longest, maxRetryDelay)
	}
	// Another request is not held back by the first one's failures.
	if d := limiter.When(reconcile.Request{ClusterName: "member-2"}); d > time.Second {
		t.Errorf("first wait of another request = %s, want at most 1s", d)
	}
	limiter.Forget(failing)
	if d := limiter.When(failing); d > time.Second {
		t.Errorf("first wait after a success = %s, want at most 1s", d)
	}
}
