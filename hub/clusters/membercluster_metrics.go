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
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// One series per registration and metric, set from the MemberCluster the
// hub just reconciled and deleted with the registration: their number is
// bounded by the registrations, and an alert can name the member.
// member_cluster, not cluster: Prometheus Operator targets carry a label
// of that name already.
var (
	memberClusterReady = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fleetjob_member_cluster_ready",
		Help: "1 when the member cluster's MemberCluster is Ready (connected, access reviewed), 0 otherwise.",
	}, []string{"member_cluster"})
	memberClusterTokenExpiry = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fleetjob_member_cluster_token_expiry_seconds",
		Help: "When the member cluster's registered bearer token expires, in seconds since the epoch; absent when unknown.",
	}, []string{"member_cluster"})
)

func init() {
	metrics.Registry.MustRegister(memberClusterReady, memberClusterTokenExpiry)
}

// setMemberClusterMetrics exports the status of member's MemberCluster.
func setMemberClusterMetrics(member string, st fleetv1.MemberClusterStatus) {
	ready := 0.0
	if meta.IsStatusConditionTrue(st.Conditions, fleetv1.MemberClusterReady) {
		ready = 1
	}
	memberClusterReady.WithLabelValues(member).Set(ready)
	if st.TokenExpiry == nil {
		memberClusterTokenExpiry.DeleteLabelValues(member)
		return
	}
	memberClusterTokenExpiry.WithLabelValues(member).Set(float64(st.TokenExpiry.Unix()))
}

// forgetMemberClusterMetrics deletes member's series, once its
// registration is gone.
func forgetMemberClusterMetrics(member string) {
	memberClusterReady.DeleteLabelValues(member)
	memberClusterTokenExpiry.DeleteLabelValues(member)
}
