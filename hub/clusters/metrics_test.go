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
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestCountWatches checks that only watch requests count, by member
// cluster and the resource they watch.
func TestCountWatches(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer server.Close()
	rt := countWatches("metrics-test")(http.DefaultTransport)
	for _, url := range []string{
		"/apis/batch/v1/namespaces/fleetjob-system/jobs?watch=true&resourceVersion=5",
		"/apis/batch/v1/namespaces/fleetjob-system/jobs?watch=true",
		"/apis/batch/v1/namespaces/fleetjob-system/jobs?limit=500",
		"/api/v1/nodes?watch=true",
		"/api/v1/nodes/node-1",
	} {
		req, err := http.NewRequest(http.MethodGet, server.URL+url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	for resource, want := range map[string]float64{"jobs": 2, "nodes": 1, "configmaps": 0} {
		// By name: member_cluster, not cluster, which the Prometheus
		// Operator sets on every series of a target.
		if got := testutil.ToFloat64(memberWatches.With(prometheus.Labels{"member_cluster": "metrics-test", "resource": resource})); got != want {
			t.Errorf("watches of %s = %v, want %v", resource, got, want)
		}
	}
}

// TestForgetWatches: a removed member's series go, by the label they carry,
// and no other member's.
func TestForgetWatches(t *testing.T) {
	memberWatches.WithLabelValues("forget-gone", "jobs").Inc()
	memberWatches.WithLabelValues("forget-gone", "nodes").Inc()
	memberWatches.WithLabelValues("forget-kept", "jobs").Inc()
	if n := forgetWatches("forget-gone"); n != 2 {
		t.Errorf("forgetWatches deleted %d series, want 2", n)
	}
	if memberWatches.DeleteLabelValues("forget-gone", "jobs") {
		t.Error("the removed member's jobs series is still there")
	}
	if !memberWatches.DeleteLabelValues("forget-kept", "jobs") {
		t.Error("another member's series was deleted")
	}
}
