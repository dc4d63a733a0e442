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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetjob/fleetjob/pkg/plan"
)

// When a previewed cluster would start (ClusterPreview.Start).
const (
	// StartNow: the hub would admit the cluster at once.
	StartNow = "Now"
	// StartAwaitingApproval: spec.approval holds the cluster until a
	// person approves the run: it is not in the canary.
	StartAwaitingApproval = "AwaitingApproval"
	// StartAwaitingSlot: clusterRollout.maxConcurrentClusters holds the
	// cluster until earlier ones finish.
	StartAwaitingSlot = "AwaitingSlot"
	// StartSuspended: spec.suspend is true; nothing starts until resumed.
	StartSuspended = "Suspended"
	// StartStopped: the run would stop before any cluster starts (a
	// rejection already written in spec.approval.decision).
	StartStopped = "Stopped"
)

// Verdicts of a previewed cluster's set (PodSecurityVerdict.Verdict,
// DrainVerdict.Verdict).
const (
	// VerdictAllowed: the template meets the set's level and runs as a
	// ServiceAccount the set allows; of a drain, the set allows drains.
	VerdictAllowed = "Allowed"
	// VerdictRefused: the hub would fail the cluster before creating any
	// Job; Reason and Message say why, as the hub would.
	VerdictRefused = "Refused"
	// VerdictNotChecked: tenancy is off, and the hub checks only that the
	// template does not run as its reserved ServiceAccount, and no set's
	// allowDrain.
	VerdictNotChecked = "NotChecked"
	// VerdictUnknown: the set's policy could not be read.
	VerdictUnknown = "Unknown"
)

// Window states of a previewed cluster (WindowState.State).
const (
	// WindowAny: neither the run nor the cluster's set names a window.
	WindowAny = "Any"
	// WindowOpen: the windows are open now.
	WindowOpen = "Open"
	// WindowWaiting: the windows are closed now; NextOpen says when they
	// open.
	WindowWaiting = "Waiting"
	// WindowNone: no window opens within spec.maxWindowWait: the hub would
	// fail the cluster with reason NoMaintenanceWindow.
	WindowNone = "None"
	// WindowInvalid: a window cannot be read; the hub would fail the
	// cluster with reason NoMaintenanceWindow.
	WindowInvalid = "Invalid"
	// WindowUnknown: the set's windows could not be read.
	WindowUnknown = "Unknown"
)

// PodSecurityVerdict is what the hub's check of the pod template against
// the cluster's set would say.
type PodSecurityVerdict struct {
	// Level is the set's Pod Security level; empty when not checked or
	// unknown.
	Level string `json:"level,omitempty"`
	// Verdict is Allowed, Refused, NotChecked or Unknown.
	Verdict string `json:"verdict"`
	// Reason is the hub's reason when Refused: PodSecurityViolation or
	// ServiceAccountNotAllowed.
	Reason string `json:"reason,omitempty"`
	// Message says what failed, or why the verdict is unknown.
	Message string `json:"message,omitempty"`
}

// DrainVerdict is what the hub's check of the cluster's set would say of
// a run that drains (spec.nodePreparation.drain): with tenancy, the set
// must allow drains (ClusterSet spec.allowDrain). Whether the hub's
// identity in the member may drain, the hub alone can ask the member.
type DrainVerdict struct {
	// Verdict is Allowed, Refused, NotChecked or Unknown.
	Verdict string `json:"verdict"`
	// Reason is the hub's reason when Refused: DrainNotAllowed.
	Reason string `json:"reason,omitempty"`
	// Message says what the hub would refuse, or why the verdict is
	// unknown.
	Message string `json:"message,omitempty"`
}

// WindowState is whether the maintenance windows of the run and of the
// cluster's set would let a group start now.
type WindowState struct {
	// State is Any, Open, Waiting, None, Invalid or Unknown.
	State string `json:"state"`
	// NextOpen is when the windows open next, while Waiting.
	NextOpen *metav1.Time `json:"nextOpen,omitempty"`
	// Message says why for None, Invalid and Unknown.
	Message string `json:"message,omitempty"`
}

// BudgetCap is one FleetDisruptionBudget selecting a previewed cluster of
// a disruptive run, its caps resolved as the hub resolves them now: a
// percentage against the MemberClusters' status.nodeCount, never below 1
// node. The caps are shared with every other disruptive run; what those
// disrupt now only the hub knows.
type BudgetCap struct {
	// Budget is the FleetDisruptionBudget's name.
	Budget string `json:"budget"`
	// PerCluster is the most nodes of this cluster that the disruptive
	// runs together may disrupt at once (spec.maxDisruptedNodesPerCluster);
	// 0 when the budget sets no such cap.
	PerCluster int `json:"perCluster,omitempty"`
	// Total is the most nodes of all the budget's clusters together that
	// the disruptive runs may disrupt at once (spec.maxDisruptedNodes); 0
	// when the budget sets no such cap.
	Total int `json:"total,omitempty"`
	// Clusters is how many registered clusters the budget selects, this
	// one among them: those Total is shared across.
	Clusters int `json:"clusters,omitempty"`
}

// ClusterPreview is what a ClusterJob not created yet would do in one
// member cluster if it were created now.
type ClusterPreview struct {
	Cluster    string `json:"cluster"`
	ClusterSet string `json:"clusterSet"`
	// Start is when the hub would admit the cluster: Now,
	// AwaitingApproval, AwaitingSlot, Suspended or Stopped.
	Start string `json:"start"`
	// Canary tells that the cluster is in spec.approval's canary.
	Canary bool `json:"canary,omitempty"`
	// MaxConcurrentClusters is clusterRollout's, for AwaitingSlot.
	MaxConcurrentClusters int32              `json:"maxConcurrentClusters,omitempty"`
	PodSecurity           PodSecurityVerdict `json:"podSecurity"`
	Window                WindowState        `json:"window"`
	// Drain is, for a run that drains (spec.nodePreparation.drain),
	// whether the cluster's set allows drains; absent for a run that does
	// not drain.
	Drain *DrainVerdict `json:"drain,omitempty"`
	// Budgets are, for a disruptive run (spec.disruptive), the
	// FleetDisruptionBudgets selecting the cluster, in name order: its
	// nodes start only as every one of them has room. None for a run that
	// is not disruptive, or when no budget selects the cluster.
	Budgets []BudgetCap `json:"budgets,omitempty"`
	// BudgetError says, for a disruptive run, which budget the hub cannot
	// read (a selector it cannot parse, a cap it cannot resolve): the hub
	// would hold the cluster's starts and retry, and fail the cluster past
	// its --member-error-timeout.
	BudgetError string `json:"budgetError,omitempty"`
	// BudgetsUnknown tells, for a disruptive run, that the budgets could
	// not be read (you may not list fleetdisruptionbudgets).
	BudgetsUnknown bool `json:"budgetsUnknown,omitempty"`
	// NotReady is the reason and message of the MemberCluster's Ready
	// condition when it is not True: the hub cannot run anything there
	// now.
	NotReady string `json:"notReady,omitempty"`
	// MemberContext is the kubeconfig context the nodes were read with.
	MemberContext string `json:"memberContext,omitempty"`
	// Plan is the hub's planner's answer for the nodes read; absent when
	// none were.
	Plan *plan.Plan `json:"plan,omitempty"`
	// NotPlanned says why there is no Plan.
	NotPlanned string `json:"notPlanned,omitempty"`
}

// Preview is a ClusterJob not created yet, as `plan -f` previews it.
type Preview struct {
	Namespace, Name string
	// Validated tells that the hub accepted the ClusterJob in a server
	// dry run.
	Validated bool
	// Disruptive tells that the ClusterJob is spec.disruptive: each
	// cluster tells the budgets that would hold it.
	Disruptive bool
	// Tenancy tells that only the clusters of BoundSets are reachable.
	Tenancy   bool
	BoundSets []string
	// MemberClusters is how many MemberClusters the hub publishes, the
	// clusters selected from.
	MemberClusters int
	// Unbound are clusters the clusterSelector matches in sets not bound
	// to the namespace, "name (set)".
	Unbound []string
	// LeftOut counts the clusters selected beyond the hub's limit.
	LeftOut int
	// Notes are run-wide remarks, one line each.
	Notes    []string
	Clusters []ClusterPreview
}

const (
	// previewNames is how many node names a group's line shows, and how
	// many skipped nodes a cluster lists: the rest are counted.
	previewNames = 5
	// previewGroups is how many groups a cluster lists: the rest are
	// counted.
	previewGroups = 10
)

// Previews draws p: what was selected and why, then a block per cluster:
// a header line with its set, Pod Security verdict, window and start,
// what refuses it, for a run that drains whether its set allows drains,
// for a disruptive run the disruption budgets that would hold it, then
// its groups and skipped nodes, a few named. A message told for an
// earlier cluster is not told again. Times are in UTC.
func Previews(p Preview, o Options) string {
	var b strings.Builder
	validated := "not validated (--validate=false)"
	if p.Validated {
		validated = "the hub accepted it in a server dry run"
	}
	fmt.Fprintf(&b, "Preview of clusterjob %s/%s: nothing was created; %s.\n", Escape(p.Namespace), Escape(p.Name), validated)
	b.WriteString(selectionLine(p) + "\n")
	for _, n := range p.Notes {
		b.WriteString(Escape(n) + "\n")
	}
	told := map[string]string{}
	for _, c := range p.Clusters {
		b.WriteString("\n" + clusterPreview(c, p.Disruptive, o, told))
	}
	return b.String()
}

func selectionLine(p Preview) string {
	where := "with --tenancy=off, among"
	if p.Tenancy {
		sets := "none"
		if len(p.BoundSets) > 0 {
			sets = strings.Join(p.BoundSets, ", ")
		}
		where = fmt.Sprintf("in the cluster sets bound to namespace %s (%s), of", p.Namespace, sets)
	}
	line := fmt.Sprintf("Selected %d %s by spec.clusterSelector %s the %d MemberClusters on the hub (their labels are the registrations').",
		len(p.Clusters)+p.LeftOut, plural(len(p.Clusters)+p.LeftOut, "cluster"), where, p.MemberClusters)
	if p.LeftOut > 0 {
		line += fmt.Sprintf(" The hub runs the first %d: %d left out.", len(p.Clusters), p.LeftOut)
	}
	if len(p.Unbound) > 0 {
		line += fmt.Sprintf(" Matched, in sets not bound: %s.", namesAndMore(p.Unbound))
	}
	return Escape(line)
}

// clusterPreview is one cluster's block; disruptive tells the budgets.
// told maps the messages told already to the cluster they were told for.
func clusterPreview(c ClusterPreview, disruptive bool, o Options, told map[string]string) string {
	pal := o.Palette
	header := []string{Escape(c.Cluster), "set " + Escape(c.ClusterSet), podSecurityText(c.PodSecurity, pal), windowText(c.Window, pal), startText(c, pal)}
	var b strings.Builder
	b.WriteString(strings.Join(header, columnGap) + "\n")
	// tellAs writes msg after prefix, drawn already, or names the cluster
	// msg was told for.
	tellAs := func(prefix, msg string) {
		if msg == "" {
			return
		}
		if first, ok := told[msg]; ok {
			b.WriteString("  " + prefix + "as for " + Escape(first) + "\n")
			return
		}
		told[msg] = c.Cluster
		b.WriteString("  " + prefix + Escape(oneLine(msg)) + "\n")
	}
	tell := func(reason, msg string) {
		prefix := ""
		if reason != "" {
			prefix = Escape(reason) + ": "
		}
		tellAs(prefix, msg)
	}
	if c.NotReady != "" {
		b.WriteString("  " + pal.paint(red, "the hub's connection is not Ready") + ": " + Escape(oneLine(c.NotReady)) + "\n")
	}
	tell(c.PodSecurity.Reason, c.PodSecurity.Message)
	if c.Drain != nil {
		text, msg := drainText(*c.Drain, c.ClusterSet, pal)
		if msg == "" {
			b.WriteString("  " + text + "\n")
		} else {
			tellAs(text+": ", msg)
		}
	}
	tell("", c.Window.Message)
	if disruptive {
		switch {
		case c.BudgetError != "":
			tellAs("disruption budgets: "+pal.paint(red, "invalid")+": ", c.BudgetError+": the hub would hold the cluster's starts and retry")
		case c.BudgetsUnknown:
			b.WriteString("  disruption budgets: " + pal.paint(yellow, "unknown") + "\n")
		case len(c.Budgets) == 0:
			b.WriteString("  disruptive: no FleetDisruptionBudget selects this cluster\n")
		default:
			b.WriteString("  disruption budgets: " + budgetsText(c.Budgets) + "\n")
		}
	}
	if c.Plan == nil {
		b.WriteString("  nodes not read: " + Escape(oneLine(c.NotPlanned)) + "\n")
		return b.String()
	}
	b.WriteString(indent(planPreview(*c.Plan, c.MemberContext, o.NoHeaders)))
	return b.String()
}

// budgetsText is each budget with its caps: "prod (2 nodes in this
// cluster, 20 across its 3 clusters)".
func budgetsText(caps []BudgetCap) string {
	texts := make([]string, len(caps))
	for i, c := range caps {
		var limits []string
		if c.PerCluster > 0 {
			limits = append(limits, fmt.Sprintf("%d %s in this cluster", c.PerCluster, plural(c.PerCluster, "node")))
		}
		if c.Total > 0 {
			total := fmt.Sprintf("%d across its %d %s", c.Total, c.Clusters, plural(c.Clusters, "cluster"))
			if len(limits) == 0 {
				total = fmt.Sprintf("%d %s across its %d %s", c.Total, plural(c.Total, "node"), c.Clusters, plural(c.Clusters, "cluster"))
			}
			limits = append(limits, total)
		}
		if len(limits) == 0 {
			// The API requires a cap; one without reads as none.
			limits = append(limits, "no cap")
		}
		texts[i] = Escape(c.Budget) + " (" + strings.Join(limits, ", ") + ")"
	}
	return strings.Join(texts, ", ")
}

func podSecurityText(v PodSecurityVerdict, p Palette) string {
	switch v.Verdict {
	case VerdictAllowed:
		return "pod security " + Escape(v.Level) + ": " + p.paint(green, "allowed")
	case VerdictRefused:
		level := ""
		if v.Level != "" {
			level = " " + Escape(v.Level)
		}
		return "pod security" + level + ": " + p.paint(red, "refused")
	case VerdictNotChecked:
		return "pod security: not checked (tenancy off)"
	}
	return "pod security: " + p.paint(yellow, "unknown")
}

// drainText is a run that drains' verdict on the cluster's set, and the
// message to tell after it, if any.
func drainText(v DrainVerdict, set string, p Palette) (string, string) {
	switch v.Verdict {
	case VerdictAllowed:
		return "drain: " + p.paint(green, "allowed") + " by set " + Escape(set) + " (spec.allowDrain)", ""
	case VerdictRefused:
		return "drain: " + p.paint(red, "refused") + ": " + Escape(v.Reason), v.Message
	case VerdictNotChecked:
		return "drain: not checked (tenancy off)", ""
	}
	return "drain: " + p.paint(yellow, "unknown"), v.Message
}

func windowText(w WindowState, p Palette) string {
	switch w.State {
	case WindowAny:
		return "window: any time"
	case WindowOpen:
		return "window: " + p.paint(green, "open now")
	case WindowWaiting:
		opens := "later"
		if w.NextOpen != nil {
			opens = w.NextOpen.UTC().Format(time.RFC3339)
		}
		return "window: " + p.paint(yellow, "closed, next opens "+opens)
	case WindowNone:
		return "window: " + p.paint(red, "none within maxWindowWait")
	case WindowInvalid:
		return "window: " + p.paint(red, "invalid")
	}
	return "window: " + p.paint(yellow, "unknown")
}

// startText says when the cluster starts: at once, or when what holds it
// lets go; one the hub would admit at once but fail says so.
func startText(c ClusterPreview, p Palette) string {
	canary := ""
	if c.Canary {
		canary = "canary, "
	}
	switch c.Start {
	case StartNow:
		switch {
		case c.PodSecurity.Verdict == VerdictRefused:
			return canary + p.paint(red, "fails "+Escape(c.PodSecurity.Reason))
		case c.Drain != nil && c.Drain.Verdict == VerdictRefused:
			return canary + p.paint(red, "fails "+Escape(c.Drain.Reason))
		case c.Window.State == WindowNone || c.Window.State == WindowInvalid:
			return canary + p.paint(red, "fails NoMaintenanceWindow")
		case c.BudgetError != "":
			// The hub admits the cluster, but starts none of its nodes
			// while the budget cannot be read.
			return canary + p.paint(red, "held: a disruption budget is invalid")
		case c.Window.State == WindowWaiting:
			return canary + p.paint(yellow, "starts when the window opens")
		}
		return canary + "starts now"
	case StartAwaitingApproval:
		return p.paint(yellow, "waits for approval")
	case StartAwaitingSlot:
		return canary + p.paint(yellow, fmt.Sprintf("waits for a slot (maxConcurrentClusters %d)", c.MaxConcurrentClusters))
	case StartSuspended:
		return canary + p.paint(yellow, "suspended")
	case StartStopped:
		return p.paint(red, "never starts: the run stops")
	}
	return Escape(c.Start)
}

// planPreview is a plan's summary line, its groups with a few node names
// each, and its first skipped nodes, the others counted by reason.
func planPreview(p plan.Plan, context string, noHeaders bool) string {
	var b strings.Builder
	from := ""
	if context != "" {
		from = " (nodes read with context " + Escape(context) + ")"
	}
	if p.NodeCount() == 0 && p.SkippedCount() == 0 {
		return "no node to run: none matches spec.nodeSelector" + from + "\n"
	}
	fmt.Fprintf(&b, "%d %s in %d %s, %d skipped%s\n", p.NodeCount(), plural(p.NodeCount(), "node"), len(p.Groups), plural(len(p.Groups), "group"), p.SkippedCount(), from)
	if len(p.Groups) > 0 {
		shown := p.Groups[:min(len(p.Groups), previewGroups)]
		rows := make([][]Cell, len(shown))
		for i, g := range shown {
			rows[i] = []Cell{Text(Escape(g.Name)), Text(strconv.Itoa(len(g.Nodes))), Text(Escape(namesAndMore(g.Nodes)))}
		}
		b.WriteString(Tabulate([]string{"GROUP", "NODES", "NAMES"}, rows, noHeaders))
		if rest := p.Groups[len(shown):]; len(rest) > 0 {
			nodes := 0
			for _, g := range rest {
				nodes += len(g.Nodes)
			}
			fmt.Fprintf(&b, "and %d more %s of %d %s\n", len(rest), plural(len(rest), "group"), nodes, plural(nodes, "node"))
		}
	}
	if p.SkippedCount() == 0 {
		return b.String()
	}
	shown := p.Skipped[:min(len(p.Skipped), previewNames)]
	rows := make([][]Cell, len(shown))
	for i, s := range shown {
		rows[i] = []Cell{Text(Escape(s.Node)), Text(Escape(s.Reason)), Text(Escape(oneLine(s.Message)))}
	}
	b.WriteString(Tabulate([]string{"SKIPPED", "REASON", "MESSAGE"}, rows, noHeaders))
	more := maps.Clone(p.MoreSkipped)
	if more == nil {
		more = map[string]int{}
	}
	for _, s := range p.Skipped[len(shown):] {
		more[s.Reason]++
	}
	if len(more) == 0 {
		return b.String()
	}
	counts := make([]string, 0, len(more))
	total := 0
	for _, reason := range slices.Sorted(maps.Keys(more)) {
		counts = append(counts, fmt.Sprintf("%s %d", Escape(reason), more[reason]))
		total += more[reason]
	}
	fmt.Fprintf(&b, "and %d more skipped: %s\n", total, strings.Join(counts, ", "))
	return b.String()
}

// namesAndMore names the first previewNames and counts the others.
func namesAndMore(names []string) string {
	if len(names) <= previewNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:previewNames], ", "), len(names)-previewNames)
}

// indent indents every line of s by two spaces.
func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
