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

package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
)

// clusterHeader and clusterWideHeader are the columns of Clusters: those
// of `kubectl get memberclusters`, and, wide, what a user looks at next.
var (
	clusterHeader     = []string{"NAME", "READY", "REASON", "VERSION", "NODES", "SET", "TOKEN-EXPIRY", "AGE"}
	clusterWideHeader = []string{"CLUSTER-ID", "NAMESPACE", "LAST-PROBE", "MESSAGE"}
)

// Clusters is the table of the MemberClusters the hub publishes, at now.
func Clusters(members []fleetv1.MemberCluster, now time.Time, o Options) string {
	header := clusterHeader
	if o.Wide {
		header = append(append([]string{}, clusterHeader...), clusterWideHeader...)
	}
	rows := make([][]Cell, 0, len(members))
	for i := range members {
		rows = append(rows, ClusterRow(&members[i], now, o))
	}
	return Tabulate(header, rows, o.NoHeaders)
}

// ClusterRow is the row of one MemberCluster at now.
func ClusterRow(m *fleetv1.MemberCluster, now time.Time, o Options) []Cell {
	p, st := o.Palette, &m.Status
	ready := meta.FindStatusCondition(st.Conditions, fleetv1.MemberClusterReady)
	readyCell, reason := Text(string(metav1.ConditionUnknown)), Text("<none>")
	if ready != nil {
		readyCell = Cell{Plain: string(ready.Status), Styled: p.paint(statusColour(ready.Status), string(ready.Status))}
		reason = Text(orNone(Escape(ready.Reason)))
	}
	nodes := "<unknown>"
	if st.NodeCount != nil {
		nodes = strconv.Itoa(int(*st.NodeCount))
	}
	row := []Cell{
		Text(Escape(m.Name)), readyCell, reason, Text(orNone(Escape(st.KubernetesVersion))), Text(nodes),
		Text(Escape(hub.SetOfMember(m))), tokenExpiry(m, now, p), Text(age(m.CreationTimestamp, now)),
	}
	if o.Wide {
		row = append(row, Text(orNone(Escape(st.ClusterID))), Text(orNone(Escape(st.WorkNamespace))),
			Text(ago(st.LastProbeTime, now)), Text(orNone(Escape(oneLine(clusterMessage(m))))))
	}
	return row
}

func statusColour(s metav1.ConditionStatus) string {
	switch s {
	case metav1.ConditionTrue:
		return green
	case metav1.ConditionFalse:
		return red
	}
	return yellow
}

// tokenExpiry is the token's expiry, and, once TokenExpiring is True, how
// long is left (or that it expired), in yellow (red): the cell a user
// scans for tokens to rotate.
func tokenExpiry(m *fleetv1.MemberCluster, now time.Time, p Palette) Cell {
	if m.Status.TokenExpiry == nil {
		return Text("<none>")
	}
	at := m.Status.TokenExpiry.UTC().Format(time.RFC3339)
	if !meta.IsStatusConditionTrue(m.Status.Conditions, fleetv1.MemberClusterTokenExpiring) {
		return Text(at)
	}
	left := m.Status.TokenExpiry.Sub(now)
	if left <= 0 {
		note := " (expired)"
		return Cell{Plain: at + note, Styled: at + p.paint(red, note)}
	}
	note := " (in " + duration.HumanDuration(left) + ")"
	return Cell{Plain: at + note, Styled: at + p.paint(yellow, note)}
}

// clusterMessage says what is wrong: the missing permissions when the
// access review failed, else the Ready condition's message when not
// Ready.
func clusterMessage(m *fleetv1.MemberCluster) string {
	if c := meta.FindStatusCondition(m.Status.Conditions, fleetv1.MemberClusterAccessReviewed); c != nil && c.Status == metav1.ConditionFalse {
		return c.Message
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, fleetv1.MemberClusterReady); c != nil && c.Status != metav1.ConditionTrue {
		return c.Message
	}
	return ""
}

// age is kubectl's age of an object created at t.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// ago is how long ago t was, "<never>" when it was not.
func ago(t *metav1.Time, now time.Time) string {
	if t == nil {
		return "<never>"
	}
	return duration.HumanDuration(now.Sub(t.Time)) + " ago"
}

// ClusterWarnings warns of each member whose token expires soon or has
// expired: lines for stderr, beside a table or -o output.
func ClusterWarnings(members []fleetv1.MemberCluster, p Palette) string {
	var b strings.Builder
	for i := range members {
		c := meta.FindStatusCondition(members[i].Status.Conditions, fleetv1.MemberClusterTokenExpiring)
		if c != nil && c.Status == metav1.ConditionTrue {
			fmt.Fprintf(&b, "%s member cluster %s: %s\n", p.paint(yellow, "warning:"), Escape(members[i].Name), Escape(oneLine(c.Message)))
		}
	}
	return b.String()
}
