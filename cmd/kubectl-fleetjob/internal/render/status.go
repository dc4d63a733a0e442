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
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/spoke"
)

// Status is a ClusterJob's summary line, then one line per cluster with
// progress bars of its groups and nodes; wide adds each cluster's current
// group and cluster ID. Without headers it is the clusters' lines only,
// for scripts. now dates unreachable members.
func Status(cj *fleetv1.ClusterJob, o Options, now time.Time) string {
	if o.NoHeaders {
		return clusterTable(cj.Status.Clusters, o, now)
	}
	if len(cj.Status.Clusters) == 0 {
		return summary(cj, o.Palette) + "\nNo clusters yet: the hub has not selected any.\n"
	}
	return summary(cj, o.Palette) + "\n" + clusterTable(cj.Status.Clusters, o, now)
}

func summary(cj *fleetv1.ClusterJob, p Palette) string {
	st := cj.Status
	phase := string(st.Phase)
	if phase == "" {
		phase = "Pending"
	}
	// Nodes from the counts, not nodeProgress: an older hub's counted
	// skipped nodes as not done.
	line := fmt.Sprintf("clusterjob %s/%s: %s   clusters %s   nodes %s   failed %d",
		cj.Namespace, cj.Name, paintPhase(p, phase), orZero(st.Summary.ClusterProgress), st.Summary.Nodes.Progress(), st.Summary.Nodes.Failed)
	if meta.IsStatusConditionTrue(st.Conditions, fleetv1.ConditionSuspended) {
		line += "   " + p.paint(yellow, "suspended")
	}
	if c := meta.FindStatusCondition(st.Conditions, fleetv1.ConditionApproved); c != nil && !st.Phase.IsFinished() {
		switch c.Reason {
		case fleetv1.ReasonCanaryRunning:
			line += "   canary running"
		case fleetv1.ReasonAwaitingApproval:
			line += "   " + p.paint(yellow, "awaiting approval") + " (kubectl fleetjob approve|reject " + cj.Name + ")"
		}
	}
	return line + "\n"
}

func orZero(progress string) string {
	if progress == "" {
		return "0/0"
	}
	return progress
}

func clusterTable(rows []fleetv1.ClusterStatus, o Options, now time.Time) string {
	p := o.Palette
	out := make([][]Cell, 0, len(rows))
	for _, r := range rows {
		phase := string(r.Phase)
		if phase == "" {
			phase = "Pending"
		}
		row := []Cell{
			Text(Escape(r.Name)),
			{Plain: phase, Styled: paintPhase(p, phase)},
			progress(GroupBar(r.Groups, p), fmt.Sprintf("%d/%d", r.Groups.Completed, r.Groups.Total)),
			progress(NodeBar(r.Nodes, p), r.Nodes.Progress()),
			failedCell(r.Nodes.Failed, p),
			Text(reachable(r, now)),
		}
		if o.Wide {
			row = append(row, Text(orNone(Escape(r.CurrentGroupName))), Text(orNone(Escape(r.ClusterID))))
		}
		out = append(out, append(row, Text(Escape(reason(r)))))
	}
	header := []string{"CLUSTER", "PHASE", "GROUPS", "NODES", "FAILED", "REACHABLE"}
	if o.Wide {
		header = append(header, "CURRENT-GROUP", "CLUSTER-ID")
	}
	return Tabulate(append(header, "MESSAGE"), out, o.NoHeaders)
}

// GroupBar is a cluster's groups: completed, and failed among them.
func GroupBar(g fleetv1.GroupCounts, p Palette) Cell {
	return Bar(BarWidth, int(g.Total), []Segment{Succeeded(int(g.Completed - g.Failed)), Failed(int(g.Failed))}, p)
}

// NodeBar is a cluster's nodes by state; pending ones are the rest.
func NodeBar(n fleetv1.NodeCounts, p Palette) Cell {
	return Bar(BarWidth, int(n.Total), []Segment{
		Succeeded(int(n.Succeeded)), Failed(int(n.Failed)), Skipped(int(n.Skipped)), Running(int(n.Running)),
	}, p)
}

// progress is a bar and its count: "done/total" of groups, or
// NodeCounts.Progress, the skipped nodes apart.
func progress(bar Cell, count string) Cell {
	return Cell{Plain: bar.Plain + " " + count, Styled: bar.styled() + " " + count}
}

func failedCell(n int32, p Palette) Cell {
	s := strconv.Itoa(int(n))
	if n > 0 {
		return Cell{Plain: s, Styled: p.paint(red, s)}
	}
	return Text(s)
}

func reachable(r fleetv1.ClusterStatus, now time.Time) string {
	if r.Reachable {
		return "yes"
	}
	if r.UnreachableSince != nil {
		return "no (" + duration.HumanDuration(now.Sub(r.UnreachableSince.Time)) + ")"
	}
	return "no"
}

func reason(r fleetv1.ClusterStatus) string {
	switch {
	case r.Reason == "":
		return r.Message
	case r.Message == "":
		return r.Reason
	default:
		return r.Reason + ": " + r.Message
	}
}

func paintPhase(p Palette, phase string) string {
	switch phase {
	case string(fleetv1.PhaseCompleted):
		return p.paint(green, phase)
	case string(fleetv1.PhaseFailed):
		return p.paint(red, phase)
	case string(fleetv1.PhaseRunning):
		return p.paint(yellow, phase)
	}
	return phase
}

// ClusterNodes is a run's state in one cluster.
type ClusterNodes struct {
	Cluster string
	State   spoke.State
}

// Nodes is the per-node results of a run, cluster by cluster, in plan order
// within each; failedOnly keeps the Failed nodes. MESSAGE is what the
// container said, else what the Job controller did; wide shows both, as
// MESSAGE and OUTPUT. A run that drains has a DRAIN column: how long each
// node's drain took and how many pods it evicted.
func Nodes(clusters []ClusterNodes, failedOnly bool, o Options) string {
	p := o.Palette
	drains := slices.ContainsFunc(clusters, func(c ClusterNodes) bool {
		return slices.ContainsFunc(c.State.Nodes, func(n spoke.NodeState) bool { return n.Drain.Start != 0 })
	})
	var rows [][]Cell
	for _, c := range clusters {
		for _, n := range c.State.Nodes {
			if failedOnly && n.Phase != spoke.NodeFailed {
				continue
			}
			phase := string(n.Phase)
			styled := phase
			switch n.Phase {
			case spoke.NodeSucceeded:
				styled = p.paint(green, phase)
			case spoke.NodeFailed:
				styled = p.paint(red, phase)
			case spoke.NodeRunning:
				styled = p.paint(yellow, phase)
			}
			exit, msg := "", n.Message
			if n.ExitCode != nil {
				exit = strconv.Itoa(int(*n.ExitCode))
			}
			if n.Output != "" && !o.Wide {
				msg = n.Output // what the container said, rather than what the Job controller did
			}
			row := []Cell{
				Text(Escape(c.Cluster)), Text(Escape(n.Node)), Text(Escape(n.GroupName)), Text(orNone(n.Job)),
				{Plain: phase, Styled: styled}, Text(orNone(Escape(n.Reason))), Text(orNone(exit)),
				Text(timestamp(n.StartTime)), Text(timestamp(n.CompletionTime)), Text(Escape(oneLine(msg))),
			}
			if drains {
				row = append(row[:len(row)-1:len(row)-1], Text(drainCell(n.Drain)), row[len(row)-1])
			}
			if o.Wide {
				row = append(row, Text(Escape(oneLine(n.Output))))
			}
			rows = append(rows, row)
		}
	}
	header := []string{"CLUSTER", "NODE", "GROUP", "JOB", "PHASE", "REASON", "EXIT", "START", "FINISH", "MESSAGE"}
	if drains {
		header = slices.Insert(header, len(header)-1, "DRAIN")
	}
	if o.Wide {
		header = append(header, "OUTPUT")
	}
	return Tabulate(header, rows, o.NoHeaders)
}

// drainCell says what a node's drain came to: "45s, 3 evicted".
func drainCell(d noderesults.Drain) string {
	if d.Start == 0 {
		return "<none>"
	}
	return fmt.Sprintf("%s, %d evicted", time.Duration(d.Seconds)*time.Second, d.Evicted)
}

func timestamp(t *metav1.Time) string {
	if t == nil {
		return "<none>"
	}
	return t.UTC().Format(time.RFC3339)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ClusterPlan is a run's frozen plan in one cluster.
type ClusterPlan struct {
	Cluster string    `json:"cluster"`
	Plan    plan.Plan `json:"plan"`
}

// Plans are the frozen plans of a run, cluster by cluster: their groups in
// run order, then the nodes left out. Without headers, the tables follow
// one another, a blank line apart, and no note says that nothing was
// skipped.
func Plans(plans []ClusterPlan, o Options) string {
	var groups, skipped, more [][]Cell
	for _, cp := range plans {
		cluster := Text(Escape(cp.Cluster))
		for i, g := range cp.Plan.Groups {
			groups = append(groups, []Cell{
				cluster, Text(strconv.Itoa(i)), Text(Escape(g.Name)), Text(strconv.Itoa(len(g.Nodes))), Text(Escape(strings.Join(g.Nodes, ","))),
			})
		}
		for _, sk := range cp.Plan.Skipped {
			skipped = append(skipped, []Cell{cluster, Text(Escape(sk.Node)), Text(Escape(sk.Reason)), Text(Escape(oneLine(sk.Message)))})
		}
		// The plan names only the first nodes it skipped; it counts the rest.
		for _, reason := range slices.Sorted(maps.Keys(cp.Plan.MoreSkipped)) {
			more = append(more, []Cell{cluster, Text(Escape(reason)), Text(strconv.Itoa(cp.Plan.MoreSkipped[reason]))})
		}
	}
	out := Tabulate([]string{"CLUSTER", "INDEX", "GROUP", "NODES", "NAMES"}, groups, o.NoHeaders)
	switch {
	case len(skipped) == 0 && o.NoHeaders:
		return out
	case len(skipped) == 0:
		return out + "\nNo node skipped.\n"
	}
	out += "\n" + Tabulate([]string{"CLUSTER", "SKIPPED", "REASON", "MESSAGE"}, skipped, o.NoHeaders)
	if len(more) == 0 {
		return out
	}
	return out + "\n" + Tabulate([]string{"CLUSTER", "MORE SKIPPED", "NODES"}, more, o.NoHeaders)
}
