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
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// A MemberCluster's status is computed from the registry's record of the
// member by the pure functions below, one per condition, and written only
// when it differs from what the object holds.

// observation is what the hub saw of a member besides its connection.
type observation struct {
	// reviewed is true once the member answered an access review of the
	// registered identity; denied is what it refused, described for people.
	reviewed bool
	denied   []string
	// version and nodes are what the last inventory probe read, at
	// probedAt; probedAt is zero before the first.
	version  string
	nodes    int32
	probedAt time.Time
	// tokenExpiry is when the registered bearer token expires; zero when
	// unknown.
	tokenExpiry time.Time
	// clusterID is the identity of the cluster the registration points at,
	// once read (also for a registration refused as a duplicate).
	clusterID string
}

// memberClusterStatus is the status a MemberCluster should have for member
// m, observed as o, at now.
func memberClusterStatus(m Member, o observation, now time.Time) fleetv1.MemberClusterStatus {
	connected := connectedCondition(m)
	access := accessReviewedCondition(o, m.Namespace)
	st := fleetv1.MemberClusterStatus{
		Conditions: []metav1.Condition{
			connected, access, readyCondition(connected, access), tokenExpiringCondition(o.tokenExpiry, now),
		},
		KubernetesVersion: o.version,
		ClusterID:         o.clusterID,
		ClusterSet:        fleetv1.SetOf(m.Labels),
		WorkNamespace:     m.Namespace,
		TokenExpiry:       apiTime(o.tokenExpiry),
		LastProbeTime:     apiTime(o.probedAt),
	}
	if !o.probedAt.IsZero() {
		st.NodeCount = ptr.To(o.nodes)
	}
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	}
	return st
}

// apiTime is t as the API stores it, to the second, so that a value read
// back compares equal to the one written; nil for the zero time.
func apiTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t.Truncate(time.Second)}
}

// connectedCondition: whether the hub reaches and watches the cluster.
func connectedCondition(m Member) metav1.Condition {
	c := metav1.Condition{Type: fleetv1.MemberClusterConnected}
	switch {
	case m.Engaged && m.Reachable:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, fleetv1.ClusterReasonConnected, "the hub reaches the cluster's API server and watches it"
	case m.Reason == fleetv1.ClusterReasonConnecting || m.Reason == fleetv1.ClusterReasonConnected || m.Reason == "":
		// Connected but not (yet) engaged: a changed registration connects
		// again.
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, fleetv1.ClusterReasonConnecting, "the hub is checking and engaging the cluster"
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, m.Reason, m.Message
	}
	return c
}

// accessReviewedCondition: whether the member allows the registered
// identity everything fleetjob needs in work namespace ns, at the last
// review; the refused permissions are named, at most
// MaxMemberClusterMissingPermissions of them.
func accessReviewedCondition(o observation, ns string) metav1.Condition {
	c := metav1.Condition{Type: fleetv1.MemberClusterAccessReviewed}
	switch {
	case !o.reviewed:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, fleetv1.ReasonAccessNotReviewed, "the member has not answered an access review of the registered identity yet"
	case len(o.denied) == 0:
		c.Status, c.Reason = metav1.ConditionTrue, fleetv1.ReasonAccessGranted
		c.Message = fmt.Sprintf("the registered identity may do everything fleetjob needs (work namespace %s)", ns)
	default:
		c.Status, c.Reason = metav1.ConditionFalse, fleetv1.ReasonAccessDenied
		c.Message = "the registered identity may not: " + nameSome(o.denied, fleetv1.MaxMemberClusterMissingPermissions) +
			"; run `kubectl fleetjob register` for the cluster again to grant it"
	}
	return c
}

// nameSome joins the first n of items with "; " and counts the rest.
func nameSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:n], "; "), len(items)-n)
}

// readyCondition: whether ClusterJobs run in the cluster, from the
// Connected and AccessReviewed conditions. A cluster refused for its
// access says which permissions it lacks, as AccessReviewed does, rather
// than the longer list of the connection error.
func readyCondition(connected, access metav1.Condition) metav1.Condition {
	c := metav1.Condition{Type: fleetv1.MemberClusterReady}
	switch {
	case connected.Status == metav1.ConditionTrue && access.Status == metav1.ConditionTrue:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, fleetv1.ReasonReady, "ClusterJobs run in the cluster"
	case connected.Status == metav1.ConditionFalse:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, connected.Reason, connected.Message
		if access.Status == metav1.ConditionFalse && connected.Reason == fleetv1.ClusterReasonForbidden {
			c.Message = access.Message
		}
	case access.Status == metav1.ConditionFalse:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, access.Reason, access.Message
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, connected.Reason, connected.Message
	}
	return c
}

// tokenExpiringCondition: whether the registered token expires within
// MemberClusterTokenWarning of now. Its message names the expiry, never
// the time left, which would change it, and so the object, every day.
func tokenExpiringCondition(expiry, now time.Time) metav1.Condition {
	c := metav1.Condition{Type: fleetv1.MemberClusterTokenExpiring}
	at := expiry.UTC().Format(time.RFC3339)
	switch {
	case expiry.IsZero():
		c.Status, c.Reason = metav1.ConditionUnknown, fleetv1.ReasonTokenExpiryUnknown
		c.Message = "the registered credentials record no expiry the hub can read (a client certificate, an opaque token, or a token that never expires)"
	case !now.Before(expiry):
		c.Status, c.Reason = metav1.ConditionTrue, fleetv1.ReasonTokenExpired
		c.Message = "the registered token expired at " + at + ": run `kubectl fleetjob register` for the cluster again to rotate it"
	case expiry.Sub(now) <= fleetv1.MemberClusterTokenWarning:
		c.Status, c.Reason = metav1.ConditionTrue, fleetv1.ReasonTokenExpiresSoon
		c.Message = "the registered token expires at " + at + ": run `kubectl fleetjob register` for the cluster again before then to rotate it"
	default:
		c.Status, c.Reason = metav1.ConditionFalse, fleetv1.ReasonTokenValid
		c.Message = "the registered token expires at " + at
	}
	return c
}

// nextTokenCheck is how long until the TokenExpiring condition of a token
// expiring at expiry changes on its own (the warning starts, or the token
// expires), zero when it never will.
func nextTokenCheck(expiry, now time.Time) time.Duration {
	if expiry.IsZero() {
		return 0
	}
	for _, t := range []time.Time{expiry.Add(-fleetv1.MemberClusterTokenWarning), expiry} {
		if now.Before(t) {
			return t.Sub(now)
		}
	}
	return 0
}

// mergeStatus is want written over cur: conditions whose status holds keep
// their lastTransitionTime. changed is false when writing it would change
// nothing, and then nothing is written.
func mergeStatus(cur, want fleetv1.MemberClusterStatus) (merged fleetv1.MemberClusterStatus, changed bool) {
	conds := slices.Clone(cur.Conditions)
	for _, c := range want.Conditions {
		meta.SetStatusCondition(&conds, c)
	}
	want.Conditions = conds
	return want, !equality.Semantic.DeepEqual(cur, want)
}

// tokenWarning is the Warning event to send after status next replaced
// prev: when the TokenExpiring condition turned True, or from expiring to
// expired. ok is false when there is none.
func tokenWarning(prev, next fleetv1.MemberClusterStatus) (c metav1.Condition, ok bool) {
	now := meta.FindStatusCondition(next.Conditions, fleetv1.MemberClusterTokenExpiring)
	if now == nil || now.Status != metav1.ConditionTrue {
		return metav1.Condition{}, false
	}
	before := meta.FindStatusCondition(prev.Conditions, fleetv1.MemberClusterTokenExpiring)
	if before != nil && before.Status == metav1.ConditionTrue && before.Reason == now.Reason {
		return metav1.Condition{}, false
	}
	return *now, true
}

// memberClusterLabels are a registration's labels, which a MemberCluster
// carries so that a label selector lists the clusters a clusterSelector
// matches; not the registration label itself, which every one has.
func memberClusterLabels(registration map[string]string) map[string]string {
	out := maps.Clone(registration)
	delete(out, fleetv1.RegistrationLabel)
	if len(out) == 0 {
		return nil
	}
	return out
}
