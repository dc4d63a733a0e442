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
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/spoke"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		name  string
		width int
		total int
		segs  []Segment
		want  string
	}{
		{name: "nothing to do", width: 10, total: 0, want: "[..........]"},
		{name: "not started", width: 10, total: 4, segs: []Segment{Succeeded(0), Running(0)}, want: "[..........]"},
		{name: "half", width: 10, total: 4, segs: []Segment{Succeeded(2)}, want: "[#####.....]"},
		{name: "done", width: 10, total: 3, segs: []Segment{Succeeded(3)}, want: "[##########]"},
		{name: "rounds down until done", width: 10, total: 1000, segs: []Segment{Succeeded(999)}, want: "[#########.]"},
		{name: "one failure in a thousand shows", width: 10, total: 1000, segs: []Segment{Succeeded(500), Failed(1)}, want: "[#####x....]"},
		{name: "one failure when the rest is full", width: 10, total: 1000, segs: []Segment{Succeeded(999), Failed(1)}, want: "[#########x]"},
		{name: "full bar makes room for a failure", width: 10, total: 1000, segs: []Segment{Succeeded(950), Skipped(49), Failed(1)}, want: "[########-x]"},
		{name: "every kind", width: 12, total: 12, segs: []Segment{Succeeded(4), Failed(2), Skipped(1), Running(3)}, want: "[####xx->>>..]"},
		{name: "counts past total are capped", width: 4, total: 2, segs: []Segment{Succeeded(3)}, want: "[####]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Bar(tc.width, tc.total, tc.segs, Palette{})
			if got.Plain != tc.want {
				t.Errorf("Bar = %s, want %s", got.Plain, tc.want)
			}
			coloured := Bar(tc.width, tc.total, tc.segs, Palette{Enabled: true})
			if stripped := ansi.ReplaceAllString(coloured.Styled, ""); stripped != tc.want {
				t.Errorf("coloured Bar without escapes = %s, want %s", stripped, tc.want)
			}
		})
	}
}

func TestTableAlignsColouredCells(t *testing.T) {
	rows := func(p Palette) [][]Cell {
		return [][]Cell{
			{Text("a"), {Plain: "Failed", Styled: p.paint(red, "Failed")}, Text("x")},
			{Text("longer-name"), Text("Ok"), Text("")},
		}
	}
	want := "NAME          STATE    NOTE\n" +
		"a             Failed   x\n" +
		"longer-name   Ok\n"
	if got := Table([]string{"NAME", "STATE", "NOTE"}, rows(Palette{})); got != want {
		t.Errorf("Table:\n%s\nwant:\n%s", got, want)
	}
	coloured := Table([]string{"NAME", "STATE", "NOTE"}, rows(Palette{Enabled: true}))
	if !strings.Contains(coloured, "\x1b[31mFailed\x1b[0m") {
		t.Errorf("coloured table has no colour:\n%q", coloured)
	}
	if got := ansi.ReplaceAllString(coloured, ""); got != want {
		t.Errorf("coloured Table without escapes:\n%s\nwant:\n%s", got, want)
	}
}

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func fixture() *fleetv1.ClusterJob {
	cj := wrappers.MakeClusterJob("clean-disks", "default").Batch(3, fleetv1.BatchOrderAlphabetical).Obj()
	cj.Status = fleetv1.ClusterJobStatus{
		Phase: fleetv1.PhaseRunning,
		Summary: fleetv1.Summary{ClusterProgress: "1/3", NodeProgress: "14/26, 1 skipped",
			Nodes: fleetv1.NodeCounts{Total: 27, Succeeded: 14, Failed: 1, Running: 7, Pending: 4, Skipped: 1}},
		Clusters: []fleetv1.ClusterStatus{
			{
				Name: "eu-1", Phase: fleetv1.ClusterCompleted, Reachable: true, Reason: "Completed", Message: "10 of 10 nodes succeeded",
				Groups: fleetv1.GroupCounts{Total: 4, Completed: 4}, Nodes: fleetv1.NodeCounts{Total: 10, Succeeded: 10},
			},
			{
				Name: "eu-2", Phase: fleetv1.ClusterRunning, Reachable: true, CurrentGroup: ptr.To[int32](2),
				Groups: fleetv1.GroupCounts{Total: 5, Completed: 2, Failed: 1},
				Nodes:  fleetv1.NodeCounts{Total: 12, Succeeded: 4, Failed: 1, Running: 2, Pending: 4, Skipped: 1},
			},
			{
				Name: "us-1", Phase: fleetv1.ClusterRunning, Reason: "Unreachable", Message: "dial tcp 10.0.0.9:6443: connection refused",
				UnreachableSince: &metav1.Time{Time: now.Add(-3 * time.Minute)},
				Groups:           fleetv1.GroupCounts{Total: 1}, Nodes: fleetv1.NodeCounts{Total: 5, Running: 5},
			},
		},
	}
	return cj
}

func TestStatus(t *testing.T) {
	suspended := fixture()
	suspended.Status.Conditions = []metav1.Condition{{Type: fleetv1.ConditionSuspended, Status: metav1.ConditionTrue}}
	fresh := wrappers.MakeClusterJob("fresh", "ops").Obj()
	for _, tc := range []struct {
		name string
		cj   *fleetv1.ClusterJob
		want string
	}{
		{
			name: "running",
			cj:   fixture(),
			want: `clusterjob default/clean-disks: Running   clusters 1/3   nodes 14/26, 1 skipped   failed 1

CLUSTER   PHASE       GROUPS                       NODES                                    FAILED   REACHABLE   MESSAGE
eu-1      Completed   [####################] 4/4   [####################] 10/10             0        yes         Completed: 10 of 10 nodes succeeded
eu-2      Running     [####xxxx............] 2/5   [######xx-->>>.......] 4/11, 1 skipped   1        yes
us-1      Running     [....................] 0/1   [>>>>>>>>>>>>>>>>>>>>] 0/5               0        no (3m)     Unreachable: dial tcp 10.0.0.9:6443: connection refused
`,
		},
		{
			name: "suspended",
			cj:   suspended,
			want: "clusterjob default/clean-disks: Running   clusters 1/3   nodes 14/26, 1 skipped   failed 1   suspended\n",
		},
		{
			name: "awaiting approval",
			cj: func() *fleetv1.ClusterJob {
				cj := fixture()
				cj.Status.Clusters = cj.Status.Clusters[:1]
				cj.Status.Conditions = []metav1.Condition{{Type: fleetv1.ConditionApproved, Status: metav1.ConditionUnknown, Reason: fleetv1.ReasonAwaitingApproval}}
				return cj
			}(),
			want: `clusterjob default/clean-disks: Running   clusters 1/3   nodes 14/26, 1 skipped   failed 1   awaiting approval (kubectl fleetjob approve|reject clean-disks)

CLUSTER   PHASE       GROUPS                       NODES                          FAILED   REACHABLE   MESSAGE
eu-1      Completed   [####################] 4/4   [####################] 10/10   0        yes         Completed: 10 of 10 nodes succeeded
`,
		},
		{
			name: "no status yet",
			cj:   fresh,
			want: "clusterjob ops/fresh: Pending   clusters 0/0   nodes 0/0   failed 0\n\nNo clusters yet: the hub has not selected any.\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Status(tc.cj, Options{}, now)
			if tc.name == "suspended" {
				got = strings.SplitAfter(got, "\n")[0]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Status (-want +got):\n%s", diff)
			}
			if coloured := Status(tc.cj, Options{Palette: Palette{Enabled: true}}, now); ansi.ReplaceAllString(coloured, "") != Status(tc.cj, Options{}, now) {
				t.Errorf("colour changes the layout:\n%s", coloured)
			}
		})
	}
}

// TestStatusOptions: -o wide adds the current group and cluster ID before
// the message; --no-headers leaves the clusters' lines only, for scripts.
func TestStatusOptions(t *testing.T) {
	cj := fixture()
	cj.Status.Clusters[1].CurrentGroupName, cj.Status.Clusters[1].ClusterID = "batch-3", "5f1c"
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{
			name: "wide",
			opts: Options{Wide: true},
			want: `clusterjob default/clean-disks: Running   clusters 1/3   nodes 14/26, 1 skipped   failed 1

CLUSTER   PHASE       GROUPS                       NODES                                    FAILED   REACHABLE   CURRENT-GROUP   CLUSTER-ID   MESSAGE
eu-1      Completed   [####################] 4/4   [####################] 10/10             0        yes         <none>          <none>       Completed: 10 of 10 nodes succeeded
eu-2      Running     [####xxxx............] 2/5   [######xx-->>>.......] 4/11, 1 skipped   1        yes         batch-3         5f1c
us-1      Running     [....................] 0/1   [>>>>>>>>>>>>>>>>>>>>] 0/5               0        no (3m)     <none>          <none>       Unreachable: dial tcp 10.0.0.9:6443: connection refused
`,
		},
		{
			name: "no headers",
			opts: Options{NoHeaders: true},
			want: `eu-1   Completed   [####################] 4/4   [####################] 10/10             0   yes       Completed: 10 of 10 nodes succeeded
eu-2   Running     [####xxxx............] 2/5   [######xx-->>>.......] 4/11, 1 skipped   1   yes
us-1   Running     [....................] 0/1   [>>>>>>>>>>>>>>>>>>>>] 0/5               0   no (3m)   Unreachable: dial tcp 10.0.0.9:6443: connection refused
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Status(cj, tc.opts, now)); diff != "" {
				t.Errorf("Status (-want +got):\n%s", diff)
			}
		})
	}
	if got := Status(wrappers.MakeClusterJob("fresh", "ops").Obj(), Options{NoHeaders: true}, now); got != "" {
		t.Errorf("Status without headers of a run without clusters = %q, want nothing", got)
	}
}

// TestUnreachableAge: the age is kubectl's, from duration.HumanDuration.
func TestUnreachableAge(t *testing.T) {
	for _, tc := range []struct {
		since time.Duration
		want  string
	}{
		{since: 90 * time.Second, want: "no (90s)"},
		{since: 5*time.Minute + 30*time.Second, want: "no (5m30s)"},
		{since: 50 * time.Hour, want: "no (2d2h)"},
	} {
		row := fleetv1.ClusterStatus{UnreachableSince: &metav1.Time{Time: now.Add(-tc.since)}}
		if got := reachable(row, now); got != tc.want {
			t.Errorf("reachable after %s = %q, want %q", tc.since, got, tc.want)
		}
	}
}

func TestStatusEscapesTerminalControl(t *testing.T) {
	cj := fixture()
	cj.Status.Clusters[2].Message = "evil \x1b[2Jclear"
	if got := Status(cj, Options{}, now); strings.Contains(got, "\x1b") {
		t.Errorf("a message drove the terminal: %q", got)
	}
}

func TestNodes(t *testing.T) {
	start, end := metav1.NewTime(now.Add(-time.Minute)), metav1.NewTime(now)
	eu1 := spoke.State{Planned: true, Nodes: []spoke.NodeState{
		{Node: "n1", Job: "clean-disks-n1-abc", GroupName: "batch-1", Phase: spoke.NodeSucceeded, StartTime: &start, CompletionTime: &end},
		{Node: "n2", Job: "clean-disks-n2-def", GroupName: "batch-1", Phase: spoke.NodeFailed, Reason: "BackoffLimitExceeded", Message: "Job has reached\nthe specified backoff limit",
			ExitCode: ptr.To[int32](3), Output: "disk /var\nis full", StartTime: &start, CompletionTime: &end},
		{Node: "n3", GroupName: "batch-2", Group: 1, Phase: spoke.NodePending},
	}}
	eu2 := spoke.State{Planned: true, Nodes: []spoke.NodeState{
		{Node: "m1", Job: "clean-disks-m1-ghi", GroupName: "batch-1", Phase: spoke.NodeRunning, StartTime: &start},
	}}
	clusters := []ClusterNodes{{Cluster: "eu-1", State: eu1}, {Cluster: "eu-2", State: eu2}}
	want := `CLUSTER   NODE   GROUP     JOB                  PHASE       REASON                 EXIT     START                  FINISH                 MESSAGE
eu-1      n1     batch-1   clean-disks-n1-abc   Succeeded   <none>                 <none>   2026-05-01T11:59:00Z   2026-05-01T12:00:00Z
eu-1      n2     batch-1   clean-disks-n2-def   Failed      BackoffLimitExceeded   3        2026-05-01T11:59:00Z   2026-05-01T12:00:00Z   disk /var is full
eu-1      n3     batch-2   <none>               Pending     <none>                 <none>   <none>                 <none>
eu-2      m1     batch-1   clean-disks-m1-ghi   Running     <none>                 <none>   2026-05-01T11:59:00Z   <none>
`
	if diff := cmp.Diff(want, Nodes(clusters, false, Options{})); diff != "" {
		t.Errorf("Nodes (-want +got):\n%s", diff)
	}
	wantFailed := `CLUSTER   NODE   GROUP     JOB                  PHASE    REASON                 EXIT   START                  FINISH                 MESSAGE
eu-1      n2     batch-1   clean-disks-n2-def   Failed   BackoffLimitExceeded   3      2026-05-01T11:59:00Z   2026-05-01T12:00:00Z   disk /var is full
`
	if diff := cmp.Diff(wantFailed, Nodes(clusters, true, Options{})); diff != "" {
		t.Errorf("Nodes, failed only (-want +got):\n%s", diff)
	}
	wantWide := `eu-1   n2   batch-1   clean-disks-n2-def   Failed   BackoffLimitExceeded   3   2026-05-01T11:59:00Z   2026-05-01T12:00:00Z   Job has reached the specified backoff limit   disk /var is full
`
	if diff := cmp.Diff(wantWide, Nodes(clusters, true, Options{Wide: true, NoHeaders: true})); diff != "" {
		t.Errorf("Nodes, failed only, wide without headers (-want +got):\n%s", diff)
	}
}

// TestNodesDrained: a run that drains shows each node's drain, how long
// it took and how many pods it evicted, before MESSAGE.
func TestNodesDrained(t *testing.T) {
	start, end := metav1.NewTime(now.Add(-time.Minute)), metav1.NewTime(now)
	st := spoke.State{Planned: true, Nodes: []spoke.NodeState{
		{Node: "n1", Job: "kernel-n1-abc", GroupName: "batch-1", Phase: spoke.NodeSucceeded, StartTime: &start, CompletionTime: &end,
			Drain: noderesults.Drain{Start: now.Add(-2 * time.Minute).Unix(), Seconds: 45, Evicted: 3}},
		{Node: "n2", GroupName: "batch-1", Phase: spoke.NodeFailed, Reason: "DrainTimeout", Message: "1 pods were still on the node",
			Drain: noderesults.Drain{Start: now.Add(-12 * time.Minute).Unix(), Seconds: 600}},
		{Node: "n3", GroupName: "batch-2", Group: 1, Phase: spoke.NodePending},
	}}
	want := `CLUSTER   NODE   GROUP     JOB             PHASE       REASON         EXIT     START                  FINISH                 DRAIN              MESSAGE
eu-1      n1     batch-1   kernel-n1-abc   Succeeded   <none>         <none>   2026-05-01T11:59:00Z   2026-05-01T12:00:00Z   45s, 3 evicted
eu-1      n2     batch-1   <none>          Failed      DrainTimeout   <none>   <none>                 <none>                 10m0s, 0 evicted   1 pods were still on the node
eu-1      n3     batch-2   <none>          Pending     <none>         <none>   <none>                 <none>                 <none>
`
	if diff := cmp.Diff(want, Nodes([]ClusterNodes{{Cluster: "eu-1", State: st}}, false, Options{})); diff != "" {
		t.Errorf("Nodes (-want +got):\n%s", diff)
	}
}

func TestPlans(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		plans []ClusterPlan
		want  string
	}{
		{
			name: "groups and skipped nodes in two clusters",
			plans: []ClusterPlan{
				{Cluster: "eu-1", Plan: plan.Plan{
					Groups:  []plan.Group{{Name: "zone-a", Nodes: []string{"n1", "n2"}}, {Name: "<none>", Nodes: []string{"n4"}}},
					Skipped: []plan.SkippedNode{{Node: "n3", Reason: "Unschedulable", Message: "node is cordoned"}},
				}},
				{Cluster: "eu-2", Plan: plan.Plan{Groups: []plan.Group{{Name: "zone-a", Nodes: []string{"m1"}}}}},
			},
			want: `CLUSTER   INDEX   GROUP    NODES   NAMES
eu-1      0       zone-a   2       n1,n2
eu-1      1       <none>   1       n4
eu-2      0       zone-a   1       m1

CLUSTER   SKIPPED   REASON          MESSAGE
eu-1      n3        Unschedulable   node is cordoned
`,
		},
		{
			name: "more skipped than the plan names",
			plans: []ClusterPlan{{Cluster: "eu-1", Plan: plan.Plan{
				Groups:      []plan.Group{{Name: "all", Nodes: []string{"n1"}}},
				Skipped:     []plan.SkippedNode{{Node: "n2", Reason: "NotReady", Message: "node is not Ready"}},
				MoreSkipped: map[string]int{"Unschedulable": 40, "NotReady": 7},
			}}},
			want: `CLUSTER   INDEX   GROUP   NODES   NAMES
eu-1      0       all     1       n1

CLUSTER   SKIPPED   REASON     MESSAGE
eu-1      n2        NotReady   node is not Ready

CLUSTER   MORE SKIPPED    NODES
eu-1      NotReady        7
eu-1      Unschedulable   40
`,
		},
		{
			name: "without headers",
			opts: Options{NoHeaders: true},
			plans: []ClusterPlan{{Cluster: "eu-1", Plan: plan.Plan{
				Groups:  []plan.Group{{Name: "all", Nodes: []string{"n1"}}},
				Skipped: []plan.SkippedNode{{Node: "n2", Reason: "NotReady", Message: "node is not Ready"}},
			}}},
			want: "eu-1   0   all   1   n1\n\neu-1   n2   NotReady   node is not Ready\n",
		},
		{
			name:  "nothing skipped, without headers",
			opts:  Options{NoHeaders: true},
			plans: []ClusterPlan{{Cluster: "eu-1", Plan: plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"n1"}}}}}},
			want:  "eu-1   0   all   1   n1\n",
		},
		{
			name:  "nothing skipped",
			plans: []ClusterPlan{{Cluster: "eu-1", Plan: plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: []string{"n1"}}}}}},
			want:  "CLUSTER   INDEX   GROUP   NODES   NAMES\neu-1      0       all     1       n1\n\nNo node skipped.\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Plans(tc.plans, tc.opts)); diff != "" {
				t.Errorf("Plans (-want +got):\n%s", diff)
			}
		})
	}
}

// memberCluster is a MemberCluster created at created, with conditions.
func memberCluster(name string, created time.Time, st fleetv1.MemberClusterStatus, conds ...metav1.Condition) fleetv1.MemberCluster {
	st.Conditions = conds
	return fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)}, Status: st}
}

func cond(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
}

func TestClusterRow(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	probed := metav1.NewTime(now.Add(-90 * time.Second))
	soon, past := metav1.NewTime(now.Add(20*24*time.Hour)), metav1.NewTime(now.Add(-time.Hour))
	later := metav1.NewTime(now.Add(300 * 24 * time.Hour))
	ready := cond(fleetv1.MemberClusterReady, metav1.ConditionTrue, fleetv1.ReasonReady, "")
	for _, tc := range []struct {
		name     string
		member   fleetv1.MemberCluster
		wantRow  []string
		wantWide []string
	}{
		{
			name: "ready, token far from expiry",
			member: memberCluster("eu-1", now.Add(-48*time.Hour), fleetv1.MemberClusterStatus{KubernetesVersion: "v1.36.3", NodeCount: ptr.To[int32](12),
				ClusterID: "5f1c", ClusterSet: "prod", WorkNamespace: "jobs", TokenExpiry: &later, LastProbeTime: &probed},
				ready, cond(fleetv1.MemberClusterTokenExpiring, metav1.ConditionFalse, fleetv1.ReasonTokenValid, "")),
			wantRow:  []string{"eu-1", "True", "Ready", "v1.36.3", "12", "prod", "2027-09-28T12:00:00Z", "2d"},
			wantWide: []string{"5f1c", "jobs", "90s ago", "<none>"},
		},
		{
			name: "forbidden: the missing permissions",
			member: memberCluster("eu-2", now.Add(-time.Minute), fleetv1.MemberClusterStatus{KubernetesVersion: "v1.35.0"},
				cond(fleetv1.MemberClusterReady, metav1.ConditionFalse, "Forbidden", "the hub may not watch jobs"),
				cond(fleetv1.MemberClusterAccessReviewed, metav1.ConditionFalse, fleetv1.ReasonAccessDenied, "the registered identity may not: get nodes;\nlist nodes")),
			wantRow:  []string{"eu-2", "False", "Forbidden", "v1.35.0", "<unknown>", "default", "<none>", "60s"},
			wantWide: []string{"<none>", "<none>", "<never>", "the registered identity may not: get nodes; list nodes"},
		},
		{
			name: "unreachable: the Ready message",
			member: memberCluster("us-1", now.Add(-time.Hour), fleetv1.MemberClusterStatus{TokenExpiry: &soon},
				cond(fleetv1.MemberClusterReady, metav1.ConditionFalse, "Unreachable", "dial tcp: i/o timeout"),
				cond(fleetv1.MemberClusterTokenExpiring, metav1.ConditionTrue, fleetv1.ReasonTokenExpiresSoon, "expires in 20 days")),
			wantRow:  []string{"us-1", "False", "Unreachable", "<none>", "<unknown>", "default", "2026-12-22T12:00:00Z (in 20d)", "60m"},
			wantWide: []string{"<none>", "<none>", "<never>", "dial tcp: i/o timeout"},
		},
		{
			name:     "expired token; not yet seen by the hub",
			member:   memberCluster("ap-1", time.Time{}, fleetv1.MemberClusterStatus{TokenExpiry: &past}, cond(fleetv1.MemberClusterTokenExpiring, metav1.ConditionTrue, fleetv1.ReasonTokenExpired, "expired")),
			wantRow:  []string{"ap-1", "Unknown", "<none>", "<none>", "<unknown>", "default", "2026-12-02T11:00:00Z (expired)", "<unknown>"},
			wantWide: []string{"<none>", "<none>", "<never>", "<none>"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantRow, plain(ClusterRow(&tc.member, now, Options{}))); diff != "" {
				t.Errorf("ClusterRow (-want +got):\n%s", diff)
			}
			wantWide := append(append([]string{}, tc.wantRow...), tc.wantWide...)
			if diff := cmp.Diff(wantWide, plain(ClusterRow(&tc.member, now, Options{Wide: true}))); diff != "" {
				t.Errorf("wide ClusterRow (-want +got):\n%s", diff)
			}
		})
	}
}

func plain(row []Cell) []string {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = c.Plain
	}
	return out
}

func TestClustersTable(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	soon := metav1.NewTime(now.Add(20 * 24 * time.Hour))
	members := []fleetv1.MemberCluster{
		memberCluster("eu-1", now.Add(-time.Hour), fleetv1.MemberClusterStatus{KubernetesVersion: "v1.36.3", NodeCount: ptr.To[int32](4), ClusterSet: "default"},
			cond(fleetv1.MemberClusterReady, metav1.ConditionTrue, fleetv1.ReasonReady, "")),
		memberCluster("us-1", now.Add(-time.Hour), fleetv1.MemberClusterStatus{TokenExpiry: &soon, ClusterSet: "team-a"},
			cond(fleetv1.MemberClusterTokenExpiring, metav1.ConditionTrue, fleetv1.ReasonTokenExpiresSoon, "the token expires at 2026-12-22T12:00:00Z: run kubectl fleetjob register again")),
	}
	want := `NAME   READY     REASON   VERSION   NODES       SET       TOKEN-EXPIRY                    AGE
eu-1   True      Ready    v1.36.3   4           default   <none>                          60m
us-1   Unknown   <none>   <none>    <unknown>   team-a    2026-12-22T12:00:00Z (in 20d)   60m
`
	if diff := cmp.Diff(want, Clusters(members, now, Options{})); diff != "" {
		t.Errorf("Clusters (-want +got):\n%s", diff)
	}
	coloured := ansi.ReplaceAllString(Clusters(members, now, Options{Palette: Palette{Enabled: true}}), "")
	if diff := cmp.Diff(want, coloured); diff != "" {
		t.Errorf("coloured Clusters without escapes (-want +got):\n%s", diff)
	}
	wantWarn := "warning: member cluster us-1: the token expires at 2026-12-22T12:00:00Z: run kubectl fleetjob register again\n"
	if diff := cmp.Diff(wantWarn, ClusterWarnings(members, Palette{})); diff != "" {
		t.Errorf("ClusterWarnings (-want +got):\n%s", diff)
	}
}

func TestClusterSets(t *testing.T) {
	sets := []hub.SetInfo{
		{Name: "default", PodSecurity: fleetv1.PodSecurityBaseline, Clusters: []string{"eu-1", "eu-2"}},
		{Name: "team-a", PodSecurity: fleetv1.PodSecurityRestricted, Defined: true, Clusters: []string{"us-1"}, Bindings: []string{"ops", "team-a"}},
		{Name: "unused", PodSecurity: fleetv1.PodSecurityPrivileged, Defined: true},
	}
	sets[1].Warning = "work namespaces labelled with another Pod Security level than the set's restricted: us-1 (baseline)"
	warning := "warning: cluster set team-a: work namespaces labelled with another Pod Security level than the set's restricted: us-1 (baseline)\n"
	if diff := cmp.Diff(warning, ClusterSetWarnings(sets, Palette{})); diff != "" {
		t.Errorf("ClusterSetWarnings (-want +got):\n%s", diff)
	}
	want := `NAME      POD-SECURITY                      CLUSTERS   BINDINGS
default   baseline (no ClusterSet object)   2          <none>
team-a    restricted                        1          ops,team-a
unused    privileged                        0          <none>
`
	if diff := cmp.Diff(want, ClusterSets(sets, Options{})); diff != "" {
		t.Errorf("ClusterSets (-want +got):\n%s", diff)
	}
	wantWide := `NAME      POD-SECURITY                      CLUSTERS   BINDINGS     CLUSTER-NAMES
default   baseline (no ClusterSet object)   2          <none>       eu-1,eu-2
team-a    restricted                        1          ops,team-a   us-1
unused    privileged                        0          <none>       <none>
`
	if diff := cmp.Diff(wantWide, ClusterSets(sets, Options{Wide: true})); diff != "" {
		t.Errorf("ClusterSets wide (-want +got):\n%s", diff)
	}
	coloured := ansi.ReplaceAllString(ClusterSets(sets, Options{Wide: true, Palette: Palette{Enabled: true}}), "")
	if diff := cmp.Diff(wantWide, coloured); diff != "" {
		t.Errorf("coloured ClusterSets without escapes (-want +got):\n%s", diff)
	}
}
