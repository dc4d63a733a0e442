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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetjob/fleetjob/pkg/plan"
)

func TestPreviews(t *testing.T) {
	var many []string
	for i := range 8 {
		many = append(many, fmt.Sprintf("w%d", i))
	}
	var groups []plan.Group
	for i := range 12 {
		groups = append(groups, plan.Group{Name: fmt.Sprintf("batch-%d", i+1), Nodes: []string{fmt.Sprintf("n%02d", i)}})
	}
	var skipped []plan.SkippedNode
	for i := range 6 {
		skipped = append(skipped, plan.SkippedNode{Node: fmt.Sprintf("c%d", i), Reason: "Unschedulable", Message: "node is cordoned"})
	}
	refused := PodSecurityVerdict{Level: "restricted", Verdict: VerdictRefused, Reason: "PodSecurityViolation", Message: "does not meet restricted"}
	next := &metav1.Time{Time: time.Date(2026, 12, 2, 22, 0, 0, 0, time.UTC)}
	p := Preview{
		Namespace: "ops", Name: "clean", Validated: true, Tenancy: true, BoundSets: []string{"team-a"}, MemberClusters: 9,
		Unbound: []string{"lab-1 (labs)"}, LeftOut: 0, Notes: []string{"Approval: the canary is eu-1."},
		Clusters: []ClusterPreview{
			{Cluster: "eu-1", ClusterSet: "team-a", Start: StartNow, Canary: true, MemberContext: "kind-eu-1",
				PodSecurity: PodSecurityVerdict{Level: "baseline", Verdict: VerdictAllowed}, Window: WindowState{State: WindowOpen},
				Plan: &plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: many}}, Skipped: skipped, MoreSkipped: map[string]int{"NotReady": 3}}},
			{Cluster: "eu-2", ClusterSet: "team-a", Start: StartAwaitingApproval, PodSecurity: refused,
				Window: WindowState{State: WindowWaiting, NextOpen: next}, NotPlanned: "pass --member-context eu-2=CONTEXT"},
			{Cluster: "eu-3", ClusterSet: "team-a", Start: StartNow, PodSecurity: refused, Window: WindowState{State: WindowAny},
				Plan: &plan.Plan{Groups: groups}},
			{Cluster: "eu-4", ClusterSet: "team-b", Start: StartNow, PodSecurity: PodSecurityVerdict{Verdict: VerdictUnknown, Message: "cluster set team-b: forbidden"},
				Window: WindowState{State: WindowNone, Message: "no window within 840h"}, Plan: &plan.Plan{}},
			{Cluster: "eu-5", ClusterSet: "team-a", Start: StartAwaitingSlot, MaxConcurrentClusters: 2, PodSecurity: PodSecurityVerdict{Verdict: VerdictNotChecked},
				NotReady: "Unauthorized: the token expired",
				Window:   WindowState{State: WindowWaiting, NextOpen: next}, NotPlanned: "listing nodes: forbidden"},
		},
	}
	want := `Preview of clusterjob ops/clean: nothing was created; the hub accepted it in a server dry run.
Selected 5 clusters by spec.clusterSelector in the cluster sets bound to namespace ops (team-a), of the 9 MemberClusters on the hub (their labels are the registrations'). Matched, in sets not bound: lab-1 (labs).
Approval: the canary is eu-1.

eu-1   set team-a   pod security baseline: allowed   window: open now   canary, starts now
  8 nodes in 1 group, 9 skipped (nodes read with context kind-eu-1)
  GROUP   NODES   NAMES
  all     8       w0, w1, w2, w3, w4 and 3 more
  SKIPPED   REASON          MESSAGE
  c0        Unschedulable   node is cordoned
  c1        Unschedulable   node is cordoned
  c2        Unschedulable   node is cordoned
  c3        Unschedulable   node is cordoned
  c4        Unschedulable   node is cordoned
  and 4 more skipped: NotReady 3, Unschedulable 1

eu-2   set team-a   pod security restricted: refused   window: closed, next opens 2026-12-02T22:00:00Z   waits for approval
  PodSecurityViolation: does not meet restricted
  nodes not read: pass --member-context eu-2=CONTEXT

eu-3   set team-a   pod security restricted: refused   window: any time   fails PodSecurityViolation
  PodSecurityViolation: as for eu-2
  12 nodes in 12 groups, 0 skipped
  GROUP      NODES   NAMES
  batch-1    1       n00
  batch-2    1       n01
  batch-3    1       n02
  batch-4    1       n03
  batch-5    1       n04
  batch-6    1       n05
  batch-7    1       n06
  batch-8    1       n07
  batch-9    1       n08
  batch-10   1       n09
  and 2 more groups of 2 nodes

eu-4   set team-b   pod security: unknown   window: none within maxWindowWait   fails NoMaintenanceWindow
  cluster set team-b: forbidden
  no window within 840h
  no node to run: none matches spec.nodeSelector

eu-5   set team-a   pod security: not checked (tenancy off)   window: closed, next opens 2026-12-02T22:00:00Z   waits for a slot (maxConcurrentClusters 2)
  the hub's connection is not Ready: Unauthorized: the token expired
  nodes not read: listing nodes: forbidden
`
	if diff := cmp.Diff(want, Previews(p, Options{})); diff != "" {
		t.Errorf("Previews (-want +got):\n%s", diff)
	}
	if got := ansi.ReplaceAllString(Previews(p, Options{Palette: Palette{Enabled: true}}), ""); got != want {
		t.Errorf("Previews in colour, without its escapes, differs:\n%s", cmp.Diff(want, got))
	}

	noHeaders := Previews(Preview{Namespace: "ops", Name: "clean", MemberClusters: 1, Clusters: []ClusterPreview{{Cluster: "eu-1", ClusterSet: "default", Start: StartSuspended,
		PodSecurity: PodSecurityVerdict{Verdict: VerdictNotChecked}, Window: WindowState{State: WindowAny},
		Plan: &plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"n1"}}}}}}}, Options{NoHeaders: true})
	wantNoHeaders := `Preview of clusterjob ops/clean: nothing was created; not validated (--validate=false).
Selected 1 cluster by spec.clusterSelector with --tenancy=off, among the 1 MemberClusters on the hub (their labels are the registrations').

eu-1   set default   pod security: not checked (tenancy off)   window: any time   suspended
  1 node in 1 group, 0 skipped
  all   1   n1
`
	if diff := cmp.Diff(wantNoHeaders, noHeaders); diff != "" {
		t.Errorf("Previews without headers (-want +got):\n%s", diff)
	}
}

// TestPreviewsBudgets: a disruptive run's clusters tell the budgets that
// would hold them, one line each; a budget error is told once.
func TestPreviewsBudgets(t *testing.T) {
	allowed := PodSecurityVerdict{Verdict: VerdictNotChecked}
	anyTime := WindowState{State: WindowAny}
	cluster := func(name string) ClusterPreview {
		return ClusterPreview{Cluster: name, ClusterSet: "team-a", Start: StartNow, PodSecurity: allowed, Window: anyTime, NotPlanned: "not asked"}
	}
	budgets, none, unknown, invalid, again := cluster("eu-1"), cluster("eu-2"), cluster("eu-3"), cluster("eu-4"), cluster("eu-5")
	budgets.Budgets = []BudgetCap{{Budget: "prod", PerCluster: 2, Total: 20, Clusters: 3}, {Budget: "night", PerCluster: 1, Clusters: 5}, {Budget: "fleet", Total: 1, Clusters: 1}}
	unknown.BudgetsUnknown = true
	invalid.BudgetError = `FleetDisruptionBudget near: spec.clusterSelector: "Near" is not a valid label selector operator`
	again.BudgetError = invalid.BudgetError
	p := Preview{Namespace: "ops", Name: "reboot", Disruptive: true, MemberClusters: 5, Clusters: []ClusterPreview{budgets, none, unknown, invalid, again}}
	want := `Preview of clusterjob ops/reboot: nothing was created; not validated (--validate=false).
Selected 5 clusters by spec.clusterSelector with --tenancy=off, among the 5 MemberClusters on the hub (their labels are the registrations').

eu-1   set team-a   pod security: not checked (tenancy off)   window: any time   starts now
  disruption budgets: prod (2 nodes in this cluster, 20 across its 3 clusters), night (1 node in this cluster), fleet (1 node across its 1 cluster)
  nodes not read: not asked

eu-2   set team-a   pod security: not checked (tenancy off)   window: any time   starts now
  disruptive: no FleetDisruptionBudget selects this cluster
  nodes not read: not asked

eu-3   set team-a   pod security: not checked (tenancy off)   window: any time   starts now
  disruption budgets: unknown
  nodes not read: not asked

eu-4   set team-a   pod security: not checked (tenancy off)   window: any time   held: a disruption budget is invalid
  disruption budgets: invalid: FleetDisruptionBudget near: spec.clusterSelector: "Near" is not a valid label selector operator: the hub would hold the cluster's starts and retry
  nodes not read: not asked

eu-5   set team-a   pod security: not checked (tenancy off)   window: any time   held: a disruption budget is invalid
  disruption budgets: invalid: as for eu-4
  nodes not read: not asked
`
	if diff := cmp.Diff(want, Previews(p, Options{})); diff != "" {
		t.Errorf("Previews (-want +got):\n%s", diff)
	}
	if got := ansi.ReplaceAllString(Previews(p, Options{Palette: Palette{Enabled: true}}), ""); got != want {
		t.Errorf("Previews in colour, without its escapes, differs:\n%s", cmp.Diff(want, got))
	}

	p.Disruptive = false
	p.Clusters = []ClusterPreview{cluster("eu-1")}
	if got := Previews(p, Options{}); strings.Contains(got, "disrupt") {
		t.Errorf("a run that is not disruptive tells budgets:\n%s", got)
	}
}

// TestPreviewsDrain: a run that drains tells, per cluster, whether its
// set allows drains; a set that does not fails the cluster
// DrainNotAllowed, after Pod Security, as the hub checks them.
func TestPreviewsDrain(t *testing.T) {
	baseline := PodSecurityVerdict{Level: "baseline", Verdict: VerdictAllowed}
	cluster := func(name, set string, drain DrainVerdict) ClusterPreview {
		return ClusterPreview{Cluster: name, ClusterSet: set, Start: StartNow, PodSecurity: baseline, Window: WindowState{State: WindowAny},
			Drain: &drain, NotPlanned: "not asked"}
	}
	refused := func(c string) DrainVerdict {
		return DrainVerdict{Verdict: VerdictRefused, Reason: "DrainNotAllowed",
			Message: "ClusterSet labs does not allow drains (spec.allowDrain): spec.nodePreparation.drain cannot run in cluster " + c}
	}
	unknown := DrainVerdict{Verdict: VerdictUnknown, Message: "whether cluster set team-b allows drains (spec.allowDrain) is unknown"}
	podSecurity := cluster("lab-3", "labs", refused("lab-3"))
	podSecurity.PodSecurity = PodSecurityVerdict{Level: "restricted", Verdict: VerdictRefused, Reason: "PodSecurityViolation", Message: "does not meet restricted"}
	waiting := cluster("lab-2", "labs", refused("lab-2"))
	waiting.Start = StartAwaitingApproval
	p := Preview{Namespace: "ops", Name: "reboot", Tenancy: true, BoundSets: []string{"labs", "maint", "team-b"}, MemberClusters: 6, Clusters: []ClusterPreview{
		cluster("eu-1", "maint", DrainVerdict{Verdict: VerdictAllowed}), cluster("lab-1", "labs", refused("lab-1")), waiting, podSecurity,
		cluster("tb-1", "team-b", unknown), cluster("tb-2", "team-b", unknown),
	}}
	want := `Preview of clusterjob ops/reboot: nothing was created; not validated (--validate=false).
Selected 6 clusters by spec.clusterSelector in the cluster sets bound to namespace ops (labs, maint, team-b), of the 6 MemberClusters on the hub (their labels are the registrations').

eu-1   set maint   pod security baseline: allowed   window: any time   starts now
  drain: allowed by set maint (spec.allowDrain)
  nodes not read: not asked

lab-1   set labs   pod security baseline: allowed   window: any time   fails DrainNotAllowed
  drain: refused: DrainNotAllowed: ClusterSet labs does not allow drains (spec.allowDrain): spec.nodePreparation.drain cannot run in cluster lab-1
  nodes not read: not asked

lab-2   set labs   pod security baseline: allowed   window: any time   waits for approval
  drain: refused: DrainNotAllowed: ClusterSet labs does not allow drains (spec.allowDrain): spec.nodePreparation.drain cannot run in cluster lab-2
  nodes not read: not asked

lab-3   set labs   pod security restricted: refused   window: any time   fails PodSecurityViolation
  PodSecurityViolation: does not meet restricted
  drain: refused: DrainNotAllowed: ClusterSet labs does not allow drains (spec.allowDrain): spec.nodePreparation.drain cannot run in cluster lab-3
  nodes not read: not asked

tb-1   set team-b   pod security baseline: allowed   window: any time   starts now
  drain: unknown: whether cluster set team-b allows drains (spec.allowDrain) is unknown
  nodes not read: not asked

tb-2   set team-b   pod security baseline: allowed   window: any time   starts now
  drain: unknown: as for tb-1
  nodes not read: not asked
`
	if diff := cmp.Diff(want, Previews(p, Options{})); diff != "" {
		t.Errorf("Previews (-want +got):\n%s", diff)
	}
	if got := ansi.ReplaceAllString(Previews(p, Options{Palette: Palette{Enabled: true}}), ""); got != want {
		t.Errorf("Previews in colour, without its escapes, differs:\n%s", cmp.Diff(want, got))
	}

	off := cluster("eu-1", "maint", DrainVerdict{Verdict: VerdictNotChecked})
	p = Preview{Namespace: "ops", Name: "reboot", MemberClusters: 1, Clusters: []ClusterPreview{off}}
	if got, want := Previews(p, Options{}), "starts now\n  drain: not checked (tenancy off)\n  nodes not read"; !strings.Contains(got, want) {
		t.Errorf("with tenancy off:\n%s\nwant it to hold %q", got, want)
	}
	p.Clusters[0].Drain = nil
	if got := Previews(p, Options{}); strings.Contains(got, "drain") {
		t.Errorf("a run that does not drain tells drains:\n%s", got)
	}
}
