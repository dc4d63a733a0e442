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

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// previewNow is the clock of the previews: a Wednesday, 04:00 UTC.
var previewNow = time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)

// previewNode is a Ready node with labels k=v pairs.
func previewNode(name string, kv ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Labels[kv[i]] = kv[i+1]
	}
	return n
}

// previewMember is a MemberCluster in set with labels k=v pairs.
func previewMember(name, set string, kv ...string) *fleetv1.MemberCluster {
	m := memberOf(name, set)
	for i := 0; i+1 < len(kv); i += 2 {
		m.Labels[kv[i]] = kv[i+1]
	}
	return m
}

// previewFleet is the hub of the previews: eu-1, eu-2 and eu-3 in set
// team-a (baseline, bound to ops), lab-1 in set labs (restricted, not
// bound), us-1 in team-a without the env=prod label.
func previewFleet() []client.Object {
	return []client.Object{
		previewMember("eu-1", "team-a", "env", "prod"), previewMember("eu-2", "team-a", "env", "prod"), previewMember("eu-3", "team-a", "env", "prod"),
		previewMember("lab-1", "labs", "env", "prod"), previewMember("us-1", "team-a", "env", "dev"),
		clusterSetOf("team-a", fleetv1.PodSecurityBaseline), clusterSetOf("labs", fleetv1.PodSecurityRestricted),
		bindingOf("ops", "team-a"),
	}
}

// previewMembers are the members' nodes: eu-1 has three nodes to run, one
// cordoned, one NotReady and one the nodeSelector leaves out; eu-2 two.
func previewMembers() map[string][]client.Object {
	cordoned, notReady := previewNode("n4", "role", "worker"), previewNode("n5", "role", "worker")
	cordoned.Spec.Unschedulable = true
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	return map[string][]client.Object{
		"eu-1": {previewNode("n1", "role", "worker"), previewNode("n2", "role", "worker"), previewNode("n3", "role", "worker"), cordoned, notReady, previewNode("gpu-1", "role", "gpu")},
		"eu-2": {previewNode("m1", "role", "worker"), previewNode("m2", "role", "worker")},
	}
}

// prodJob is the ClusterJob previewed: the env=prod clusters, worker
// nodes, batches of two.
func prodJob() *wrappers.ClusterJobWrapper {
	return wrappers.MakeClusterJob("clean-disks", "").ClusterLabels(map[string]string{"env": "prod"}).
		NodeLabels(map[string]string{"role": "worker"}).Batch(2, fleetv1.BatchOrderAlphabetical)
}

// writeClusterJob writes cj as YAML and returns its path.
func writeClusterJob(t *testing.T, cj *fleetv1.ClusterJob) string {
	t.Helper()
	cj.APIVersion, cj.Kind = fleetv1.GroupVersion.String(), "ClusterJob"
	data, err := yaml.Marshal(cj)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, string(data))
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clusterjob.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// previewOn builds plan on a fake hub holding objs, whose every create
// must be a dry run, and members holding nodes, each read with a deadline
// and the context's own config; a member whose nodes are nil refuses to
// list them.
func previewOn(t *testing.T, objs []client.Object, members map[string][]client.Object, funcs interceptor.Funcs) func(*options) *cobra.Command {
	if funcs.Create == nil {
		funcs.Create = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			o := &client.CreateOptions{}
			o.ApplyOptions(opts)
			if len(o.DryRun) != 1 || o.DryRun[0] != metav1.DryRunAll {
				t.Errorf("create %s without dryRun=All", obj.GetName())
			}
			return c.Create(ctx, obj, opts...)
		}
	}
	hubC := fakeHub(t, funcs, objs...)
	return func(o *options) *cobra.Command {
		o.hub = hubC
		pv := newPreviewOptions(o)
		pv.now = func() time.Time { return previewNow }
		pv.memberReader = func(cluster string, cfg *rest.Config) (client.Reader, error) {
			if cfg == nil || cfg.Timeout != memberReadTimeout {
				t.Errorf("cluster %s: a member config without the read timeout", cluster)
			}
			nodes, ok := members[cluster]
			if !ok {
				return nil, errors.New("no such member")
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(nodes...).Build()
			return interceptor.NewClient(c, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := ctx.Deadline(); !ok {
					t.Errorf("cluster %s: a read without a deadline", cluster)
				}
				if nodes == nil {
					return apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("RBAC: access denied"))
				}
				return c.List(ctx, list, opts...)
			}}), nil
		}
		return newPlanCommand(o, pv)
	}
}

// TestPreview: plan -f previews a ClusterJob as the hub would run it now.
func TestPreview(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	file := writeClusterJob(t, prodJob().Obj())
	out, errOut, err := runOn(t, kubeconfig, previewOn(t, previewFleet(), previewMembers(), interceptor.Funcs{}),
		"-f", file, "--member-context", "eu-1=member", "--member-context", "eu-2=member-sso")
	if err != nil {
		t.Fatalf("plan -f: %v\n%s", err, errOut)
	}
	want := `Preview of clusterjob ops/clean-disks: nothing was created; the hub accepted it in a server dry run.
Selected 3 clusters by spec.clusterSelector in the cluster sets bound to namespace ops (team-a), of the 5 MemberClusters on the hub (their labels are the registrations'). Matched, in sets not bound: lab-1 (labs).

eu-1   set team-a   pod security baseline: allowed   window: any time   starts now
  3 nodes in 2 groups, 2 skipped (nodes read with context member)
  GROUP     NODES   NAMES
  batch-1   2       n1, n2
  batch-2   1       n3
  SKIPPED   REASON          MESSAGE
  n4        Unschedulable   node is cordoned
  n5        NotReady        node is not Ready

eu-2   set team-a   pod security baseline: allowed   window: any time   starts now
  2 nodes in 1 group, 0 skipped (nodes read with context member-sso)
  GROUP     NODES   NAMES
  batch-1   2       m1, m2

eu-3   set team-a   pod security baseline: allowed   window: any time   starts now
  nodes not read: pass --member-context eu-3=CONTEXT
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if errOut != "" {
		t.Errorf("stderr %q, want nothing", errOut)
	}
}

// previewItems runs plan -f -o json on a hub holding objs and decodes
// the items; it returns stderr too.
func previewItems(t *testing.T, cj *fleetv1.ClusterJob, objs []client.Object, funcs interceptor.Funcs, args ...string) ([]render.ClusterPreview, string) {
	t.Helper()
	kubeconfig, _ := testKubeconfig(t)
	out, errOut, err := runOn(t, kubeconfig, previewOn(t, objs, previewMembers(), funcs),
		append([]string{"-f", writeClusterJob(t, cj), "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("plan -f: %v\n%s", err, errOut)
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			APIVersion string         `json:"apiVersion"`
			Kind       string         `json:"kind"`
			Metadata   map[string]any `json:"metadata"`
			render.ClusterPreview
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	var items []render.ClusterPreview
	for _, it := range list.Items {
		if list.Kind != "List" || it.APIVersion != "cli.fleetjob.io/v1alpha1" || it.Kind != "ClusterPreview" || it.Metadata["name"] != it.Cluster {
			t.Errorf("item %s: a %s %s named %v in a %s, want a ClusterPreview of cli.fleetjob.io/v1alpha1 named for its cluster in a List",
				it.Cluster, it.APIVersion, it.Kind, it.Metadata["name"], list.Kind)
		}
		items = append(items, it.ClusterPreview)
	}
	return items, errOut
}

// TestPreviewVerdicts: each cluster says what would hold it, as the hub
// decides: its set's Pod Security level, the windows, the approval.
func TestPreviewVerdicts(t *testing.T) {
	restricted := clusterSetOf("team-a", fleetv1.PodSecurityRestricted)
	nightly := fleetv1.MaintenanceWindow{Schedule: "0 22 * * *", Duration: metav1.Duration{Duration: time.Hour}}
	june := fleetv1.MaintenanceWindow{Schedule: "0 0 1 6 *", Duration: metav1.Duration{Duration: time.Hour}}
	eu1Plan := &plan.Plan{
		Groups:  []plan.Group{{Name: "batch-1", Nodes: []string{"n1", "n2"}}, {Name: "batch-2", Nodes: []string{"n3"}}},
		Skipped: []plan.SkippedNode{{Node: "n4", Reason: "Unschedulable", Message: "node is cordoned"}, {Node: "n5", Reason: "NotReady", Message: "node is not Ready"}},
	}
	baseline := render.PodSecurityVerdict{Level: "baseline", Verdict: render.VerdictAllowed}
	anyTime := render.WindowState{State: render.WindowAny}
	notRead := func(c string) string { return "pass --member-context " + c + "=CONTEXT" }
	forbiddenSets := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*fleetv1.ClusterSetList); ok {
			return apierrors.NewForbidden(schema.GroupResource{Group: "fleetjob.io", Resource: "clustersets"}, "", errors.New("RBAC: access denied"))
		}
		return c.List(ctx, list, opts...)
	}}
	for _, tc := range []struct {
		name       string
		cj         *fleetv1.ClusterJob
		objs       []client.Object
		funcs      interceptor.Funcs
		args       []string
		want       []render.ClusterPreview
		wantErrOut string
	}{
		{
			name: "a template the set's level refuses",
			cj:   prodJob().Obj(),
			objs: []client.Object{previewMember("eu-1", "team-a", "env", "prod"), restricted, bindingOf("ops", "team-a")},
			args: []string{"--member-context", "eu-1=member"},
			want: []render.ClusterPreview{
				{Cluster: "eu-1", ClusterSet: "team-a", Start: render.StartNow, MemberContext: "member", Plan: eu1Plan, Window: anyTime,
					PodSecurity: render.PodSecurityVerdict{Level: "restricted", Verdict: render.VerdictRefused, Reason: fleetv1.ReasonPodSecurityViolation,
						Message: `spec.jobTemplate.spec.template does not meet Pod Security level "restricted" of cluster set team-a, no Job would be created: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile: container "work" must set securityContext.allowPrivilegeEscalation=false; container "work" must set securityContext.capabilities.drop=["ALL"]; pod or container "work" must set securityContext.runAsNonRoot=true; pod or container "work" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`}},
			},
		},
		{
			name: "a ServiceAccount the set does not allow",
			cj: func() *fleetv1.ClusterJob {
				cj := prodJob().Obj()
				cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName = "builder"
				cj.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}
				return cj
			}(),
			objs: previewFleet(),
			want: []render.ClusterPreview{
				{Cluster: "us-1", ClusterSet: "team-a", Start: render.StartNow, NotPlanned: notRead("us-1"), Window: anyTime,
					PodSecurity: render.PodSecurityVerdict{Level: "baseline", Verdict: render.VerdictRefused, Reason: fleetv1.ReasonServiceAccountNotAllowed,
						Message: `spec.jobTemplate.spec.template.spec.serviceAccountName: ServiceAccount "builder" is not in allowedServiceAccounts of cluster set team-a (default); no Job would be created`}},
			},
		},
		{
			name: "windows: the run's closed now, the set's none within maxWindowWait",
			cj:   prodJob().Windows(nightly).Obj(),
			objs: func() []client.Object {
				labs := clusterSetOf("labs", fleetv1.PodSecurityBaseline)
				labs.Spec.MaintenanceWindows = []fleetv1.MaintenanceWindow{june}
				return append(previewFleet()[:5:5], clusterSetOf("team-a", fleetv1.PodSecurityBaseline), labs)
			}(),
			args: []string{"--tenancy=off"},
			want: []render.ClusterPreview{
				{Cluster: "eu-1", ClusterSet: "team-a", Start: render.StartNow, NotPlanned: notRead("eu-1"), PodSecurity: render.PodSecurityVerdict{Verdict: render.VerdictNotChecked},
					Window: render.WindowState{State: render.WindowWaiting, NextOpen: &metav1.Time{Time: time.Date(2026, 12, 2, 22, 0, 0, 0, time.UTC)}}},
				{Cluster: "eu-2", ClusterSet: "team-a", Start: render.StartNow, NotPlanned: notRead("eu-2"), PodSecurity: render.PodSecurityVerdict{Verdict: render.VerdictNotChecked},
					Window: render.WindowState{State: render.WindowWaiting, NextOpen: &metav1.Time{Time: time.Date(2026, 12, 2, 22, 0, 0, 0, time.UTC)}}},
				{Cluster: "eu-3", ClusterSet: "team-a", Start: render.StartNow, NotPlanned: notRead("eu-3"), PodSecurity: render.PodSecurityVerdict{Verdict: render.VerdictNotChecked},
					Window: render.WindowState{State: render.WindowWaiting, NextOpen: &metav1.Time{Time: time.Date(2026, 12, 2, 22, 0, 0, 0, time.UTC)}}},
				{Cluster: "lab-1", ClusterSet: "labs", Start: render.StartNow, NotPlanned: notRead("lab-1"), PodSecurity: render.PodSecurityVerdict{Verdict: render.VerdictNotChecked},
					Window: render.WindowState{State: render.WindowNone,
						Message: "no maintenance window of the run or of cluster set labs opens within 840h0m0s (spec.maxWindowWait) of 2026-12-02T04:00:00Z: the hub would fail the cluster NoMaintenanceWindow"}},
			},
		},
		{
			name: "a window open now",
			cj:   prodJob().Windows(fleetv1.MaintenanceWindow{Schedule: "0 3 * * *", Duration: metav1.Duration{Duration: 2 * time.Hour}}).ClusterLabels(map[string]string{"env": "dev"}).Obj(),
			objs: previewFleet(),
			want: []render.ClusterPreview{{Cluster: "us-1", ClusterSet: "team-a", Start: render.StartNow, NotPlanned: notRead("us-1"), PodSecurity: baseline,
				Window: render.WindowState{State: render.WindowOpen}}},
		},
		{
			name: "a canary of one cluster, two clusters at a time",
			cj: func() *fleetv1.ClusterJob {
				cj := prodJob().Obj()
				cj.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1)}
				return cj
			}(),
			objs: previewFleet(),
			args: []string{"--member-context", "eu-1=member"},
			want: []render.ClusterPreview{
				{Cluster: "eu-1", ClusterSet: "team-a", Start: render.StartNow, Canary: true, MemberContext: "member", Plan: eu1Plan, PodSecurity: baseline, Window: anyTime},
				{Cluster: "eu-2", ClusterSet: "team-a", Start: render.StartAwaitingApproval, NotPlanned: notRead("eu-2"), PodSecurity: baseline, Window: anyTime},
				{Cluster: "eu-3", ClusterSet: "team-a", Start: render.StartAwaitingApproval, NotPlanned: notRead("eu-3"), PodSecurity: baseline, Window: anyTime},
			},
		},
		{
			name: "a canary by selector, under maxConcurrentClusters",
			cj: func() *fleetv1.ClusterJob {
				cj := prodJob().MaxConcurrentClusters(1).Obj()
				cj.Spec.Approval = &fleetv1.Approval{CanarySelector: &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}}
				return cj
			}(),
			objs: append(previewFleet()[1:], previewMember("eu-1", "team-a", "env", "prod", "canary", "true"), previewMember("eu-0", "team-a", "env", "prod", "canary", "true")),
			want: []render.ClusterPreview{
				{Cluster: "eu-0", ClusterSet: "team-a", Start: render.StartNow, Canary: true, NotPlanned: notRead("eu-0"), PodSecurity: baseline, Window: anyTime},
				{Cluster: "eu-1", ClusterSet: "team-a", Start: render.StartAwaitingSlot, MaxConcurrentClusters: 1, Canary: true, NotPlanned: notRead("eu-1"), PodSecurity: baseline, Window: anyTime},
				{Cluster: "eu-2", ClusterSet: "team-a", Start: render.StartAwaitingApproval, NotPlanned: notRead("eu-2"), PodSecurity: baseline, Window: anyTime},
				{Cluster: "eu-3", ClusterSet: "team-a", Start: render.StartAwaitingApproval, NotPlanned: notRead("eu-3"), PodSecurity: baseline, Window: anyTime},
			},
		},
		{
			name: "a cluster the hub cannot reach",
			cj:   prodJob().ClusterLabels(map[string]string{"env": "dev"}).Obj(),
			objs: func() []client.Object {
				us1 := previewMember("us-1", "team-a", "env", "dev")
				us1.Status.Conditions = []metav1.Condition{{Type: fleetv1.MemberClusterReady, Status: metav1.ConditionFalse, Reason: "Unauthorized", Message: "the token expired"}}
				return append(previewFleet()[:4:4], us1, clusterSetOf("team-a", fleetv1.PodSecurityBaseline), bindingOf("ops", "team-a"))
			}(),
			want: []render.ClusterPreview{{Cluster: "us-1", ClusterSet: "team-a", Start: render.StartNow, NotPlanned: notRead("us-1"), PodSecurity: baseline, Window: anyTime,
				NotReady: "Unauthorized: the token expired"}},
		},
		{
			name: "suspended",
			cj:   prodJob().Suspend(true).ClusterLabels(map[string]string{"env": "dev"}).Obj(),
			objs: previewFleet(),
			want: []render.ClusterPreview{{Cluster: "us-1", ClusterSet: "team-a", Start: render.StartSuspended, NotPlanned: notRead("us-1"), PodSecurity: baseline, Window: anyTime}},
		},
		{
			name:  "the sets cannot be read",
			cj:    prodJob().ClusterLabels(map[string]string{"env": "dev"}).Obj(),
			objs:  previewFleet(),
			funcs: forbiddenSets,
			args:  []string{"--validate=false"},
			want: []render.ClusterPreview{{Cluster: "us-1", ClusterSet: "team-a", Start: render.StartNow, NotPlanned: notRead("us-1"),
				PodSecurity: render.PodSecurityVerdict{Verdict: render.VerdictUnknown, Message: `cluster set team-a: you may not list clustersets on the hub: clustersets.fleetjob.io is forbidden: RBAC: access denied`},
				Window:      render.WindowState{State: render.WindowUnknown, Message: "the run names no window; those of cluster set team-a are unknown"}}},
			wantErrOut: "The sets' Pod Security levels and windows are unknown: you may not list clustersets on the hub",
		},
		{
			name: "a drain, the sets cannot be read",
			cj: func() *fleetv1.ClusterJob {
				cj := drainJob()
				cj.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}
				return cj
			}(),
			objs:  previewFleet(),
			funcs: forbiddenSets,
			args:  []string{"--validate=false"},
			want: []render.ClusterPreview{{Cluster: "us-1", ClusterSet: "team-a", Start: render.StartNow, NotPlanned: notRead("us-1"),
				PodSecurity: render.PodSecurityVerdict{Verdict: render.VerdictUnknown, Message: `cluster set team-a: you may not list clustersets on the hub: clustersets.fleetjob.io is forbidden: RBAC: access denied`},
				Window:      render.WindowState{State: render.WindowUnknown, Message: "the run names no window; those of cluster set team-a are unknown"},
				Drain:       &render.DrainVerdict{Verdict: render.VerdictUnknown, Message: "whether cluster set team-a allows drains (spec.allowDrain) is unknown"}}},
			wantErrOut: "The sets' Pod Security levels, windows and whether they allow drains are unknown: you may not list clustersets on the hub",
		},
		{
			name: "a drain with tenancy off: the hub checks no set's allowDrain",
			cj: func() *fleetv1.ClusterJob {
				cj := drainJob()
				cj.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}
				return cj
			}(),
			objs: previewFleet(),
			args: []string{"--tenancy=off"},
			want: []render.ClusterPreview{{Cluster: "us-1", ClusterSet: "team-a", Start: render.StartNow, NotPlanned: notRead("us-1"), Window: anyTime,
				PodSecurity: render.PodSecurityVerdict{Verdict: render.VerdictNotChecked}, Drain: &render.DrainVerdict{Verdict: render.VerdictNotChecked}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errOut := previewItems(t, tc.cj, tc.objs, tc.funcs, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("previews (-want +got):\n%s", diff)
			}
			if !strings.Contains(errOut, tc.wantErrOut) {
				t.Errorf("stderr:\n%s\nwant it to hold %q", errOut, tc.wantErrOut)
			}
		})
	}
}

// TestPreviewNotes: the run-wide notes, on stdout with the table and on
// stderr with -o.
func TestPreviewNotes(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	canary := prodJob().Obj()
	canary.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1)}
	for _, tc := range []struct {
		name    string
		cj      *fleetv1.ClusterJob
		objs    []client.Object
		args    []string
		wantOut string
		wantErr string
	}{
		{
			name:    "the canary",
			cj:      canary,
			objs:    previewFleet(),
			wantOut: "Approval: the canary is eu-1 (spec.approval.canaryClusters 1, the first in name order); the others (2) wait for kubectl fleetjob approve clean-disks, and without a decision within 24h0m0s of the canary's end the run fails ApprovalTimeout.\n",
		},
		{
			name:    "no binding",
			cj:      prodJob().Obj(),
			objs:    previewFleet()[:7],
			wantOut: "Namespace ops has no ClusterSetBinding: with tenancy on, the run selects no cluster and fails (kubectl fleetjob bind SET -n ops).\n",
		},
		{
			name:    "a random order",
			cj:      prodJob().Batch(2, fleetv1.BatchOrderRandom).Obj(),
			objs:    previewFleet(),
			args:    []string{"-o", "name"},
			wantErr: "spec.strategy.batch.order random: the run draws its batches from its UID; it makes as many batches of the same sizes, of other nodes.\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runOn(t, kubeconfig, previewOn(t, tc.objs, previewMembers(), interceptor.Funcs{}), append([]string{"-f", writeClusterJob(t, tc.cj)}, tc.args...)...)
			if err != nil {
				t.Fatalf("plan -f: %v\n%s", err, errOut)
			}
			if !strings.Contains(out, tc.wantOut) {
				t.Errorf("stdout:\n%s\nwant it to hold %q", out, tc.wantOut)
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr:\n%s\nwant it to hold %q", errOut, tc.wantErr)
			}
		})
	}
}

// budgetOf is a FleetDisruptionBudget over the clusters with labels
// match, capping per cluster and in total (nil: no such cap).
func budgetOf(name string, match map[string]string, perCluster, total *intstr.IntOrString) *fleetv1.FleetDisruptionBudget {
	return &fleetv1.FleetDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: fleetv1.FleetDisruptionBudgetSpec{
		ClusterSelector: &metav1.LabelSelector{MatchLabels: match}, MaxDisruptedNodesPerCluster: perCluster, MaxDisruptedNodes: total}}
}

// countedFleet is previewFleet with node counts: eu-1 8, eu-2 4, eu-3 not
// known yet, lab-1 10, us-1 3.
func countedFleet() []client.Object {
	objs := previewFleet()
	for i, n := range []*int32{ptr.To[int32](8), ptr.To[int32](4), nil, ptr.To[int32](10), ptr.To[int32](3)} {
		objs[i].(*fleetv1.MemberCluster).Status.NodeCount = n
	}
	return objs
}

// budgetFleet is countedFleet with budgets: prod, 2 nodes per cluster and
// 50% in total over the env=prod clusters, lab-1 of an unbound set among
// them; team-a, 25% of each cluster of set team-a.
func budgetFleet() []client.Object {
	return append(countedFleet(),
		budgetOf("team-a", map[string]string{fleetv1.ClusterSetLabel: "team-a"}, ptr.To(intstr.FromString("25%")), nil),
		budgetOf("prod", map[string]string{"env": "prod"}, ptr.To(intstr.FromInt32(2)), ptr.To(intstr.FromString("50%"))))
}

// disruptiveJob is prodJob with spec.disruptive.
func disruptiveJob() *fleetv1.ClusterJob {
	cj := prodJob().Obj()
	cj.Spec.Disruptive = true
	return cj
}

// TestPreviewBudgets: a disruptive run tells, per cluster, the
// FleetDisruptionBudgets that would hold it, their caps resolved by the
// hub's own code against the MemberClusters' node counts.
func TestPreviewBudgets(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	out, errOut, err := runOn(t, kubeconfig, previewOn(t, budgetFleet(), previewMembers(), interceptor.Funcs{}),
		"-f", writeClusterJob(t, disruptiveJob()), "--member-context", "eu-2=member-sso")
	if err != nil {
		t.Fatalf("plan -f: %v\n%s", err, errOut)
	}
	want := `Preview of clusterjob ops/clean-disks: nothing was created; the hub accepted it in a server dry run.
Selected 3 clusters by spec.clusterSelector in the cluster sets bound to namespace ops (team-a), of the 5 MemberClusters on the hub (their labels are the registrations'). Matched, in sets not bound: lab-1 (labs).
spec.disruptive: nodes start only as the FleetDisruptionBudgets below have room, shared with every other disruptive run; what the others disrupt now only the hub knows.

eu-1   set team-a   pod security baseline: allowed   window: any time   starts now
  disruption budgets: prod (2 nodes in this cluster, 11 across its 4 clusters), team-a (2 nodes in this cluster)
  nodes not read: pass --member-context eu-1=CONTEXT

eu-2   set team-a   pod security baseline: allowed   window: any time   starts now
  disruption budgets: prod (2 nodes in this cluster, 11 across its 4 clusters), team-a (1 node in this cluster)
  2 nodes in 1 group, 0 skipped (nodes read with context member-sso)
  GROUP     NODES   NAMES
  batch-1   2       m1, m2

eu-3   set team-a   pod security baseline: allowed   window: any time   starts now
  disruption budgets: prod (2 nodes in this cluster, 11 across its 4 clusters), team-a (1 node in this cluster)
  nodes not read: pass --member-context eu-3=CONTEXT
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if errOut != "" {
		t.Errorf("stderr %q, want nothing", errOut)
	}

	items, _ := previewItems(t, disruptiveJob(), budgetFleet(), interceptor.Funcs{})
	got := map[string][]render.BudgetCap{}
	for _, it := range items {
		got[it.Cluster] = it.Budgets
	}
	prod := render.BudgetCap{Budget: "prod", PerCluster: 2, Total: 11, Clusters: 4}
	wantItems := map[string][]render.BudgetCap{
		"eu-1": {prod, {Budget: "team-a", PerCluster: 2, Clusters: 4}},
		"eu-2": {prod, {Budget: "team-a", PerCluster: 1, Clusters: 4}},
		"eu-3": {prod, {Budget: "team-a", PerCluster: 1, Clusters: 4}},
	}
	if diff := cmp.Diff(wantItems, got); diff != "" {
		t.Errorf("-o json budgets (-want +got):\n%s", diff)
	}
}

// TestPreviewBudgetsHeld: what a disruptive run shows when no budget
// selects a cluster, when the budgets cannot be read, and when the hub
// cannot read one; a run that is not disruptive shows none.
func TestPreviewBudgetsHeld(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	dev := disruptiveJob()
	dev.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev", fleetv1.ClusterSetLabel: "team-a"}}
	forbiddenBudgets := interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*fleetv1.FleetDisruptionBudgetList); ok {
			return apierrors.NewForbidden(schema.GroupResource{Group: "fleetjob.io", Resource: "fleetdisruptionbudgets"}, "", errors.New("RBAC: access denied"))
		}
		return c.List(ctx, list, opts...)
	}}
	near := budgetOf("near-eu", nil, ptr.To(intstr.FromInt32(1)), nil)
	near.Spec.ClusterSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: "Near", Values: []string{"eu"}}}}
	for _, tc := range []struct {
		name    string
		cj      *fleetv1.ClusterJob
		objs    []client.Object
		funcs   interceptor.Funcs
		wantOut []string
		notOut  string
		// wantFirst is the first cluster's -o json, its budget fields
		// only; wantErrOut is in the notes -o prints on stderr.
		wantFirst  render.ClusterPreview
		wantErrOut string
	}{
		{
			name: "not disruptive: the budgets are not read",
			cj:   prodJob().Obj(),
			objs: budgetFleet(),
			funcs: interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*fleetv1.FleetDisruptionBudgetList); ok {
					t.Errorf("a run that is not disruptive listed the FleetDisruptionBudgets")
				}
				return c.List(ctx, list, opts...)
			}},
			notOut: "disrupt",
		},
		{
			name: "no budget selects the cluster",
			cj:   dev,
			objs: append(countedFleet(), budgetOf("prod", map[string]string{"env": "prod"}, ptr.To(intstr.FromInt32(2)), nil)),
			wantOut: []string{"spec.disruptive: nodes start only as the FleetDisruptionBudgets below have room",
				"us-1   set team-a   pod security baseline: allowed   window: any time   starts now\n  disruptive: no FleetDisruptionBudget selects this cluster\n"},
			wantErrOut: "spec.disruptive: nodes start only as the FleetDisruptionBudgets below have room",
		},
		{
			name:  "the budgets cannot be read",
			cj:    disruptiveJob(),
			objs:  budgetFleet(),
			funcs: forbiddenBudgets,
			wantOut: []string{"The FleetDisruptionBudgets are unknown: you may not list fleetdisruptionbudgets on the hub: fleetdisruptionbudgets.fleetjob.io is forbidden: RBAC: access denied.\n",
				"eu-1   set team-a   pod security baseline: allowed   window: any time   starts now\n  disruption budgets: unknown\n"},
			wantFirst:  render.ClusterPreview{BudgetsUnknown: true},
			wantErrOut: "The FleetDisruptionBudgets are unknown: you may not list fleetdisruptionbudgets on the hub",
		},
		{
			name: "a budget the hub cannot read",
			cj:   disruptiveJob(),
			objs: append(budgetFleet(), near),
			wantOut: []string{
				"eu-1   set team-a   pod security baseline: allowed   window: any time   held: a disruption budget is invalid\n" +
					`  disruption budgets: invalid: FleetDisruptionBudget near-eu: spec.clusterSelector: "Near" is not a valid label selector operator: the hub would hold the cluster's starts and retry` + "\n",
				"eu-2   set team-a   pod security baseline: allowed   window: any time   held: a disruption budget is invalid\n  disruption budgets: invalid: as for eu-1\n"},
			wantFirst: render.ClusterPreview{BudgetError: `FleetDisruptionBudget near-eu: spec.clusterSelector: "Near" is not a valid label selector operator`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runOn(t, kubeconfig, previewOn(t, tc.objs, previewMembers(), tc.funcs), "-f", writeClusterJob(t, tc.cj))
			if err != nil {
				t.Fatalf("plan -f: %v\n%s", err, errOut)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout:\n%s\nwant it to hold %q", out, w)
				}
			}
			if tc.notOut != "" && strings.Contains(out, tc.notOut) {
				t.Errorf("stdout:\n%s\nwant nothing of %q", out, tc.notOut)
			}

			items, errOut := previewItems(t, tc.cj, tc.objs, tc.funcs)
			if len(items) == 0 {
				t.Fatal("-o json printed no cluster")
			}
			first := items[0]
			got := render.ClusterPreview{Budgets: first.Budgets, BudgetError: first.BudgetError, BudgetsUnknown: first.BudgetsUnknown}
			if diff := cmp.Diff(tc.wantFirst, got); diff != "" {
				t.Errorf("-o json, cluster %s's budgets (-want +got):\n%s", first.Cluster, diff)
			}
			if !strings.Contains(errOut, tc.wantErrOut) {
				t.Errorf("stderr:\n%s\nwant it to hold %q", errOut, tc.wantErrOut)
			}
		})
	}
}

// drainJob is prodJob draining each node first.
func drainJob() *fleetv1.ClusterJob {
	cj := prodJob().Obj()
	cj.Spec.NodePreparation = &fleetv1.NodePreparation{Drain: &fleetv1.Drain{}}
	return cj
}

// drainFleet is previewFleet with both sets bound to ops and at level
// baseline: team-a allows drains, labs does not.
func drainFleet() []client.Object {
	teamA := clusterSetOf("team-a", fleetv1.PodSecurityBaseline)
	teamA.Spec.AllowDrain = true
	return append(previewFleet()[:5:5], teamA, clusterSetOf("labs", fleetv1.PodSecurityBaseline), bindingOf("ops", "team-a"), bindingOf("ops", "labs"))
}

// TestPreviewDrain: a run that drains tells, per cluster, whether its set
// allows drains; where it does not, the hub would fail the cluster
// DrainNotAllowed, and the preview says so as the hub would.
func TestPreviewDrain(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	out, errOut, err := runOn(t, kubeconfig, previewOn(t, drainFleet(), previewMembers(), interceptor.Funcs{}),
		"-f", writeClusterJob(t, drainJob()), "--member-context", "eu-2=member-sso")
	if err != nil {
		t.Fatalf("plan -f: %v\n%s", err, errOut)
	}
	want := `Preview of clusterjob ops/clean-disks: nothing was created; the hub accepted it in a server dry run.
Selected 4 clusters by spec.clusterSelector in the cluster sets bound to namespace ops (labs, team-a), of the 5 MemberClusters on the hub (their labels are the registrations').
spec.disruptive: nodes start only as the FleetDisruptionBudgets below have room, shared with every other disruptive run; what the others disrupt now only the hub knows.

eu-1   set team-a   pod security baseline: allowed   window: any time   starts now
  drain: allowed by set team-a (spec.allowDrain)
  disruptive: no FleetDisruptionBudget selects this cluster
  nodes not read: pass --member-context eu-1=CONTEXT

eu-2   set team-a   pod security baseline: allowed   window: any time   starts now
  drain: allowed by set team-a (spec.allowDrain)
  disruptive: no FleetDisruptionBudget selects this cluster
  2 nodes in 1 group, 0 skipped (nodes read with context member-sso)
  GROUP     NODES   NAMES
  batch-1   2       m1, m2

eu-3   set team-a   pod security baseline: allowed   window: any time   starts now
  drain: allowed by set team-a (spec.allowDrain)
  disruptive: no FleetDisruptionBudget selects this cluster
  nodes not read: pass --member-context eu-3=CONTEXT

lab-1   set labs   pod security baseline: allowed   window: any time   fails DrainNotAllowed
  drain: refused: DrainNotAllowed: ClusterSet labs does not allow drains (spec.allowDrain): spec.nodePreparation.drain cannot run in cluster lab-1
  disruptive: no FleetDisruptionBudget selects this cluster
  nodes not read: pass --member-context lab-1=CONTEXT
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if errOut != "" {
		t.Errorf("stderr %q, want nothing", errOut)
	}

	items, _ := previewItems(t, drainJob(), drainFleet(), interceptor.Funcs{})
	got := map[string]*render.DrainVerdict{}
	for _, it := range items {
		got[it.Cluster] = it.Drain
	}
	allowed := &render.DrainVerdict{Verdict: render.VerdictAllowed}
	wantItems := map[string]*render.DrainVerdict{"eu-1": allowed, "eu-2": allowed, "eu-3": allowed,
		"lab-1": {Verdict: render.VerdictRefused, Reason: fleetv1.ReasonDrainNotAllowed,
			Message: "ClusterSet labs does not allow drains (spec.allowDrain): spec.nodePreparation.drain cannot run in cluster lab-1"}}
	if diff := cmp.Diff(wantItems, got); diff != "" {
		t.Errorf("-o json drains (-want +got):\n%s", diff)
	}
}

// TestPreviewErrors: what plan -f refuses, and how it says so.
func TestPreviewErrors(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	job := writeClusterJob(t, prodJob().Obj())
	invalid := interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
		return apierrors.NewInvalid(schema.GroupKind{Group: "fleetjob.io", Kind: "ClusterJob"}, "clean-disks",
			field.ErrorList{field.Invalid(field.NewPath("spec", "strategy", "batch", "size"), 0, "should be greater than or equal to 1")})
	}}
	for _, tc := range []struct {
		name     string
		args     []string
		members  map[string][]client.Object
		funcs    interceptor.Funcs
		wantErr  string
		wantCode int
		wantOut  string
	}{
		{name: "two documents", args: []string{"-f", writeFile(t, "apiVersion: fleetjob.io/v1alpha1\nkind: ClusterJob\n---\napiVersion: fleetjob.io/v1alpha1\nkind: ClusterJob\n")},
			wantErr: "-f " + "%s holds 2 objects: plan -f previews one ClusterJob; put each in its own file", wantCode: ExitUsage},
		{name: "another kind", args: []string{"-f", writeFile(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n")},
			wantErr: "holds Deployment (apps/v1): want a ClusterJob (fleetjob.io/v1alpha1)", wantCode: ExitUsage},
		{name: "nothing", args: []string{"-f", writeFile(t, "# nothing\n---\n")},
			wantErr: "holds no object: want one ClusterJob (fleetjob.io/v1alpha1)", wantCode: ExitUsage},
		{name: "an unknown field", args: []string{"-f", writeFile(t, "apiVersion: fleetjob.io/v1alpha1\nkind: ClusterJob\nspec:\n  stratgy: {}\n")},
			wantErr: `unknown field "spec.stratgy"`, wantCode: ExitUsage},
		{name: "a missing file", args: []string{"-f", "/nonexistent/clusterjob.yaml"},
			wantErr: "-f: open /nonexistent/clusterjob.yaml: no such file or directory", wantCode: ExitUsage},
		{name: "a retry", args: []string{"-f", writeClusterJob(t, prodJob().RetryOf("clean-disks-1").Obj())},
			wantErr: "spec.retryOf: a retry runs the frozen plans of clusterjob clean-disks-1 again, not new ones: see kubectl fleetjob plan clean-disks-1", wantCode: ExitUsage},
		{name: "another namespace than -n", args: []string{"-f", writeClusterJob(t, wrappers.MakeClusterJob("x", "other").Obj())},
			wantErr: "the namespace of the file (other) does not match -n ops", wantCode: ExitUsage},
		{name: "NAME and -f", args: []string{"clean-disks", "-f", job},
			wantErr: "-f previews the ClusterJob of a file; it takes no NAME (got clean-disks): use NAME or -f", wantCode: ExitUsage},
		{name: "neither NAME nor -f", wantErr: "takes exactly one argument, NAME (the ClusterJob name), or -f FILE; got 0", wantCode: ExitUsage},
		{name: "--member-context without -f", args: []string{"clean-disks", "--member-context", "eu-1=member"},
			wantErr: "--member-context goes with -f FILE: it previews a ClusterJob not created yet", wantCode: ExitUsage},
		{name: "--cluster with -f", args: []string{"-f", job, "--cluster", "eu-1"},
			wantErr: "--cluster narrows the plans of a run NAME; -f previews every cluster the file selects", wantCode: ExitUsage},
		{name: "--member-context without a cluster", args: []string{"-f", job, "--member-context", "member"},
			wantErr: `--member-context "member": want CLUSTER=CONTEXT`, wantCode: ExitUsage},
		{name: "a cluster named twice", args: []string{"-f", job, "--member-context", "eu-1=member", "--member-context", "eu-1=member-sso"},
			wantErr: "--member-context names cluster eu-1 twice (contexts member and member-sso)", wantCode: ExitUsage},
		{name: "a context not in the kubeconfig", args: []string{"-f", job, "--member-context", "eu-1=nope"},
			wantErr: `--member-context eu-1=nope: member context "nope" is not in the kubeconfig`, wantCode: ExitUsage},
		{name: "a bad --tenancy", args: []string{"-f", job, "--tenancy", "maybe"},
			wantErr: `--tenancy must be on or off (the hub's --tenancy), not "maybe"`, wantCode: ExitUsage},
		{name: "--member-context for a cluster the hub does not know", args: []string{"-f", job, "--member-context", "eu-9=member"},
			wantErr: "--member-context eu-9=member: no cluster eu-9 is registered on the hub (see kubectl fleetjob clusters)", wantCode: ExitError},
		{name: "the hub refuses it", args: []string{"-f", job}, funcs: invalid,
			wantErr:  `the hub refuses clusterjob ops/clean-disks (server dry run, nothing was created): ClusterJob.fleetjob.io "clean-disks" is invalid: spec.strategy.batch.size: Invalid value: 0: should be greater than or equal to 1`,
			wantCode: ExitAPI},
		{name: "a member that cannot be read, after the others", args: []string{"-f", job, "--member-context", "eu-1=member", "--member-context", "eu-2=member-sso"},
			members: map[string][]client.Object{"eu-1": previewMembers()["eu-1"], "eu-2": nil},
			wantErr: `cluster eu-2 (--member-context eu-2=member-sso): listing nodes: nodes is forbidden: RBAC: access denied`, wantCode: ExitAPI,
			wantOut: "eu-2   set team-a   pod security baseline: allowed   window: any time   starts now\n  nodes not read: listing nodes: nodes is forbidden: RBAC: access denied\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			members := tc.members
			if members == nil {
				members = previewMembers()
			}
			out, _, err := runOn(t, kubeconfig, previewOn(t, previewFleet(), members, tc.funcs), tc.args...)
			want := tc.wantErr
			if strings.Contains(want, "%s") && len(tc.args) > 1 {
				want = strings.Replace(want, "%s", tc.args[1], 1)
			}
			if diff := cmp.Diff(want, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got := ExitCode(err); got != tc.wantCode {
				t.Errorf("exit code %d, want %d", got, tc.wantCode)
			}
			if !strings.Contains(out, tc.wantOut) {
				t.Errorf("stdout:\n%s\nwant it to hold %q", out, tc.wantOut)
			}
		})
	}
}

// TestPreviewStdin: -f - reads the ClusterJob from stdin, and
// --validate=false asks the hub for no dry run.
func TestPreviewStdin(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	cj := prodJob().Obj()
	cj.APIVersion, cj.Kind = fleetv1.GroupVersion.String(), "ClusterJob"
	data, err := yaml.Marshal(cj)
	if err != nil {
		t.Fatal(err)
	}
	noCreate := interceptor.Funcs{Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
		t.Errorf("--validate=false sent %s to the hub", obj.GetName())
		return nil
	}}
	build := previewOn(t, previewFleet(), previewMembers(), noCreate)
	out, _, err := runOn(t, kubeconfig, func(o *options) *cobra.Command {
		o.streams.In = strings.NewReader(string(data))
		return build(o)
	}, "-f", "-", "--validate=false", "-o", "name")
	if err != nil {
		t.Fatal(err)
	}
	if want := "clusterpreview.cli.fleetjob.io/eu-1\nclusterpreview.cli.fleetjob.io/eu-2\nclusterpreview.cli.fleetjob.io/eu-3\n"; out != want {
		t.Errorf("-o name printed %q, want %q", out, want)
	}
}

// TestPreviewCompletion: --member-context completes CLUSTER= with the
// registered clusters, then the kubeconfig's contexts.
func TestPreviewCompletion(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		toComplete string
		want       []string
		directive  cobra.ShellCompDirective
	}{
		{toComplete: "eu", want: []string{"eu-1=", "eu-2=", "eu-3="}, directive: cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace},
		{toComplete: "eu-1=mem", want: []string{"eu-1=member", "eu-1=member-sso"}, directive: cobra.ShellCompDirectiveNoFileComp},
	} {
		t.Run(tc.toComplete, func(t *testing.T) {
			build := previewOn(t, previewFleet(), nil, interceptor.Funcs{})
			_, _, err := runOn(t, kubeconfig, func(o *options) *cobra.Command {
				plan := build(o)
				return &cobra.Command{Use: "x", RunE: func(cmd *cobra.Command, _ []string) error {
					complete, ok := plan.GetFlagCompletionFunc("member-context")
					if !ok {
						t.Fatal("--member-context has no completion")
					}
					got, directive := complete(cmd, nil, tc.toComplete)
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Errorf("completions (-want +got):\n%s", diff)
					}
					if directive != tc.directive {
						t.Errorf("directive %d, want %d", directive, tc.directive)
					}
					return nil
				}}
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
