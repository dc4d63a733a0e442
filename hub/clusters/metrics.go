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
	"path"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/transport"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// memberWatches counts the watches the hub opens in each member. Each one
// after the first of a kind is a restart, and a restart that relists costs
// the member a list of everything the cache holds: a hub whose count grows
// with time, not with registrations, is cutting its own watches.
var memberWatches = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "fleetjob_member_watch_requests_total",
	Help: "Watch requests the hub sent to member API servers, by member cluster and resource.",
}, []string{"member_cluster", "resource"})

func init() {
	metrics.Registry.MustRegister(memberWatches)
}

// countWatches wraps a member's transport to count its watch requests.
func countWatches(cluster string) transport.WrapperFunc {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("watch") == "true" {
				memberWatches.WithLabelValues(cluster, path.Base(req.URL.Path)).Inc()
			}
			return rt.RoundTrip(req)
		})
	}
}

// forgetWatches deletes cluster's series of memberWatches: a fleet's
// registrations come and go, and their series must not pile up.
func forgetWatches(cluster string) int {
	return memberWatches.DeletePartialMatch(prometheus.Labels{"member_cluster": cluster})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
