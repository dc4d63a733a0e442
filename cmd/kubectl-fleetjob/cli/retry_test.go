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
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

const parentUID = "5b0c7e2a-9d41-4f3e-8a6b-1c2d3e4f5a6b"

func nodes(total, succeeded, failed, skipped, running int32) fleetv1.NodeCounts {
	return fleetv1.NodeCounts{Total: total, Succeeded: succeeded, Failed: failed, Skipped: skipped, Running: running,
		Pending: max(0, total-succeeded-failed-skipped-running)}
}

func row(cluster string, phase fleetv1.ClusterPhase, reason string, n fleetv1.NodeCounts) fleetv1.ClusterStatus {
	return fleetv1.ClusterStatus{Name: cluster, Phase: phase, Reason: reason, Nodes: n}
}

func TestRetryNodes(t *testing.T) {
	all := retryKinds
	for _, tc := range []struct {
		name    string
		row     fleetv1.ClusterStatus
		include []fleetv1.RetryInclude
		want    retryCount
	}{
		{
			name:    "failed nodes only, by default",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, nodes(10, 7, 2, 1, 0)),
			include: []fleetv1.RetryInclude{fleetv1.RetryFailed},
			want:    retryCount{Cluster: "a", Nodes: 2},
		},
		{
			name:    "skipped nodes are at most what the status counts",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, nodes(10, 7, 2, 1, 0)),
			include: []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetrySkipped},
			want:    retryCount{Cluster: "a", Nodes: 3, AtMost: true},
		},
		{
			name:    "no skipped node: an exact count",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, nodes(10, 8, 2, 0, 0)),
			include: []fleetv1.RetryInclude{fleetv1.RetrySkipped},
			want:    retryCount{Cluster: "a"},
		},
		{
			name:    "a reachable cluster the run stopped: never started nodes are NotRun",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ReasonStopped, nodes(10, 3, 1, 0, 0)),
			include: []fleetv1.RetryInclude{fleetv1.RetryNotRun},
			want:    retryCount{Cluster: "a", Nodes: 6},
		},
		{
			name:    "NotRun nodes are not Unreachable",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ReasonStopped, nodes(10, 3, 1, 0, 0)),
			include: []fleetv1.RetryInclude{fleetv1.RetryUnreachable},
			want:    retryCount{Cluster: "a"},
		},
		{
			name:    "a cluster lost mid-run: never started nodes are Unreachable, a running one is not retried",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ReasonUnreachableTimeout, nodes(10, 4, 0, 0, 1)),
			include: []fleetv1.RetryInclude{fleetv1.RetryUnreachable},
			want:    retryCount{Cluster: "a", Nodes: 5},
		},
		{
			name:    "Unreachable nodes are not NotRun",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ReasonUnreachableTimeout, nodes(10, 4, 0, 0, 1)),
			include: []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetryNotRun},
			want:    retryCount{Cluster: "a"},
		},
		{
			name:    "a cluster never reached: the retry plans it, its nodes unknown",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ReasonNotRegistered, fleetv1.NodeCounts{}),
			include: []fleetv1.RetryInclude{fleetv1.RetryUnreachable},
			want:    retryCount{Cluster: "a", Unknown: true},
		},
		{
			name:    "a cluster never reached, Unreachable not included",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ClusterReasonForbidden, fleetv1.NodeCounts{}),
			include: []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetrySkipped, fleetv1.RetryNotRun},
			want:    retryCount{Cluster: "a"},
		},
		{
			name:    "every kind",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ClusterReasonUnreachable, nodes(20, 10, 3, 2, 0)),
			include: all,
			want:    retryCount{Cluster: "a", Nodes: 10, AtMost: true},
		},
		{
			name:    "a completed cluster has nothing to retry",
			row:     row("a", fleetv1.ClusterCompleted, fleetv1.ReasonCompleted, nodes(4, 4, 0, 0, 0)),
			include: all,
			want:    retryCount{Cluster: "a"},
		},
		{
			name:    "counts that do not add up never make a negative count",
			row:     row("a", fleetv1.ClusterFailed, fleetv1.ReasonStopped, fleetv1.NodeCounts{Total: 3, Succeeded: 3, Failed: 2}),
			include: []fleetv1.RetryInclude{fleetv1.RetryNotRun},
			want:    retryCount{Cluster: "a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, retryNodes(tc.row, tc.include)); diff != "" {
				t.Errorf("retryNodes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnreachableRow: the reasons that make never started nodes
// Unreachable are the hub's.
func TestParseInclude(t *testing.T) {
	for _, tc := range []struct {
		name    string
		values  []string
		want    []fleetv1.RetryInclude
		wantErr string
	}{
		{name: "not given: the CRD's default", values: nil, want: nil},
		{name: "any case, once each, in canonical order", values: []string{"notrun", "FAILED", "failed", " Unreachable"},
			want: []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetryUnreachable, fleetv1.RetryNotRun}},
		{name: "every kind", values: []string{"skipped", "notrun", "unreachable", "failed"}, want: retryKinds},
		{name: "unknown kind", values: []string{"failed", "lost"},
			wantErr: `--include "lost" is not a kind of node to retry: use failed, skipped, unreachable or notrun (comma-separated)`},
		{name: "empty item", values: []string{"failed", ""}, wantErr: `--include "" is not a kind of node to retry`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseInclude(tc.values)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseInclude mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// fullSpec is a ClusterJob named name with every field of the spec a retry
// copies set.
func fullSpec(name string) *wrappers.ClusterJobWrapper {
	w := wrappers.MakeClusterJob(name, "ops").
		Batch(2, fleetv1.BatchOrderRandom).
		NodeLabels(map[string]string{"pool": "disk"}).
		ClusterLabels(map[string]string{"env": "prod"}).
		FailurePolicy(fleetv1.FailurePolicy{MaxFailedNodes: ptr.To(intstr.FromString("5%")), OnExceeded: fleetv1.OnExceededSuspend}).
		Gates(fleetv1.Gates{Soak: &metav1.Duration{Duration: time.Minute}, BetweenClusters: &fleetv1.BetweenClustersGate{Soak: metav1.Duration{Duration: 5 * time.Minute}}}).
		MaxConcurrentClusters(2).
		Image("registry.example/disk-cleaner:1.2")
	w.Spec.NodeStartTimeout = &metav1.Duration{Duration: 3 * time.Minute}
	return w
}

func ended(phase fleetv1.Phase) fleetv1.ClusterJobStatus {
	return fleetv1.ClusterJobStatus{Phase: phase}
}

// retryOf is the ClusterJob buildRetry returns for a parent of fullSpec:
// generateName, namespace and spec.
func retryOf(w *wrappers.ClusterJobWrapper) *fleetv1.ClusterJob {
	cj := w.Obj()
	cj.Name, cj.GenerateName = "", "clean-disks-retry-"
	return cj
}

func TestBuildRetry(t *testing.T) {
	rows := []fleetv1.ClusterStatus{{Name: "eu-1"}, {Name: "eu-2"}, {Name: "us-1"}}
	for _, tc := range []struct {
		name     string
		parent   *fleetv1.ClusterJob
		rows     []fleetv1.ClusterStatus
		include  []fleetv1.RetryInclude
		clusters []string
		child    string
		want     *fleetv1.ClusterJob
		wantErr  string
	}{
		{
			name:   "the spec copied without suspend; retry left to the CRD's default",
			parent: fullSpec("clean-disks").Suspend(true).Status(ended(fleetv1.PhaseFailed)).Obj(),
			rows:   rows,
			want:   retryOf(fullSpec("clean-disks").RetryOf("clean-disks")),
		},
		{
			name:     "include and clusters set, clusters sorted once each",
			parent:   fullSpec("clean-disks").Status(ended(fleetv1.PhaseCompleted)).Obj(),
			rows:     rows,
			include:  []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetryNotRun},
			clusters: []string{"us-1", "eu-1", "us-1"},
			want: retryOf(fullSpec("clean-disks").RetryOf("clean-disks").
				Retry(fleetv1.Retry{Include: []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetryNotRun}, Clusters: []string{"eu-1", "us-1"}})),
		},
		{
			name:     "clusters alone leave include to the CRD's default",
			parent:   fullSpec("clean-disks").Status(ended(fleetv1.PhaseFailed)).Obj(),
			rows:     rows,
			clusters: []string{"eu-2"},
			want:     retryOf(fullSpec("clean-disks").RetryOf("clean-disks").Retry(fleetv1.Retry{Clusters: []string{"eu-2"}})),
		},
		{
			name: "a parent that is a retry: the child retries the parent, not the grandparent",
			parent: fullSpec("clean-disks").RetryOf("clean-disks-0").
				Retry(fleetv1.Retry{Include: []fleetv1.RetryInclude{fleetv1.RetryUnreachable}, Clusters: []string{"eu-1"}}).
				Status(ended(fleetv1.PhaseFailed)).Obj(),
			rows: rows,
			want: retryOf(fullSpec("clean-disks").RetryOf("clean-disks")),
		},
		{
			name: "an approval copied without the parent's decision: the retry waits for its own",
			parent: func() *fleetv1.ClusterJob {
				cj := fullSpec("clean-disks").Status(ended(fleetv1.PhaseFailed)).Obj()
				cj.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1),
					Decision: &fleetv1.ApprovalDecision{Approved: false, User: "alice", Reason: "canary failed"}}
				return cj
			}(),
			rows: rows,
			want: func() *fleetv1.ClusterJob {
				cj := retryOf(fullSpec("clean-disks").RetryOf("clean-disks"))
				cj.Spec.Approval = &fleetv1.Approval{CanaryClusters: ptr.To[int32](1)}
				return cj
			}(),
		},
		{
			name:   "--name",
			parent: fullSpec("clean-disks").Status(ended(fleetv1.PhaseFailed)).Obj(),
			rows:   rows,
			child:  "clean-disks-again",
			want:   fullSpec("clean-disks-again").RetryOf("clean-disks").Obj(),
		},
		{
			name:   "a long parent name is cut so that generateName leaves room for the random part",
			parent: wrappers.MakeClusterJob(strings.Repeat("a", 50)+"-b", "ops").Status(ended(fleetv1.PhaseFailed)).Obj(),
			rows:   rows,
			want: func() *fleetv1.ClusterJob {
				cj := wrappers.MakeClusterJob("", "ops").RetryOf(strings.Repeat("a", 50) + "-b").Obj()
				cj.GenerateName = strings.Repeat("a", 50) + "-retry-"
				return cj
			}(),
		},
		{
			name:     "a cluster that did not run",
			parent:   fullSpec("clean-disks").Status(ended(fleetv1.PhaseFailed)).Obj(),
			rows:     rows,
			clusters: []string{"eu-1", "eu-3"},
			wantErr:  `--cluster "eu-3" did not run in clusterjob ops/clean-disks: its clusters are eu-1, eu-2, us-1`,
		},
		{
			name:    "a running parent is refused",
			parent:  fullSpec("clean-disks").Status(ended(fleetv1.PhaseRunning)).Obj(),
			rows:    rows,
			wantErr: "clusterjob ops/clean-disks is still Running: retry it once it has ended",
		},
		{
			name:    "a parent the hub has not started is refused",
			parent:  fullSpec("clean-disks").Obj(),
			wantErr: "clusterjob ops/clean-disks is still Pending: retry it once it has ended",
		},
		{
			name: "a parent being deleted is refused",
			parent: func() *fleetv1.ClusterJob {
				cj := fullSpec("clean-disks").Status(ended(fleetv1.PhaseFailed)).Obj()
				cj.DeletionTimestamp = &metav1.Time{Time: t0}
				return cj
			}(),
			rows:    rows,
			wantErr: "clusterjob ops/clean-disks is being deleted",
		},
		{
			name:    "a parent that ran nowhere is refused",
			parent:  fullSpec("clean-disks").Status(ended(fleetv1.PhaseFailed)).Obj(),
			wantErr: "clusterjob ops/clean-disks ran in no cluster: there is nothing to retry",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buildRetry(tc.parent, tc.rows, tc.include, tc.clusters, tc.child)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("buildRetry mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterNames(t *testing.T) {
	var rows []fleetv1.ClusterStatus
	for _, n := range wrappers.NodeNames("c", 12) {
		rows = append(rows, fleetv1.ClusterStatus{Name: n})
	}
	got := clusterNames(rows)
	if !strings.HasSuffix(got, " and 2 more") || strings.Count(got, ",") != maxNamedClusters-1 {
		t.Errorf("clusterNames of 12 clusters = %q, want %d names and 2 more", got, maxNamedClusters)
	}
}

// hubWith is a fake hub holding a parent run clean-disks (Failed) in ops,
// with its MemberRuns and one of another run, that honours a metadata.name
// field selector as the API server does (the fake client does not), and
// that reports each watch started on watching.
func hubWith(t *testing.T, watching chan<- struct{}) client.WithWatch {
	t.Helper()
	parent := fullSpec("clean-disks").Suspend(true).Status(ended(fleetv1.PhaseFailed)).Obj()
	parent.UID = parentUID
	mr := func(cluster string, r fleetv1.ClusterStatus) client.Object {
		return wrappers.MakeMemberRun("ops", "clean-disks", parentUID, cluster).Status(fleetv1.MemberRunStatus{ClusterStatus: r}).Obj()
	}
	objs := []client.Object{
		parent,
		mr("member-b", row("", fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, nodes(5, 3, 1, 1, 0))),
		mr("member-a", row("", fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, nodes(10, 8, 2, 0, 0))),
		mr("member-c", row("", fleetv1.ClusterCompleted, fleetv1.ReasonCompleted, nodes(4, 4, 0, 0, 0))),
		mr("member-d", row("", fleetv1.ClusterFailed, fleetv1.ReasonUnreachableTimeout, fleetv1.NodeCounts{})),
		// Another run's, whose failed nodes are not the parent's.
		wrappers.MakeMemberRun("ops", "clean-disks", "another-run", "member-e").
			Status(fleetv1.MemberRunStatus{ClusterStatus: row("", fleetv1.ClusterFailed, fleetv1.ReasonNodeFailed, nodes(9, 0, 9, 0, 0))}).Obj(),
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&fleetv1.ClusterJob{}, &fleetv1.MemberRun{}).Build()
	return interceptor.NewClient(c, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if cjs, ok := list.(*fleetv1.ClusterJobList); ok && selectedName(opts) != "" {
				cjs.Items = slices.DeleteFunc(cjs.Items, func(cj fleetv1.ClusterJob) bool { return cj.Name != selectedName(opts) })
			}
			return nil
		},
		Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			w, err := c.Watch(ctx, list, opts...)
			if err != nil {
				return nil, err
			}
			select {
			case watching <- struct{}{}:
			default:
			}
			name := selectedName(opts)
			w = watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
				o, ok := ev.Object.(client.Object)
				return ev, name == "" || !ok || o.GetName() == name
			})
			if lo := listOptions(opts); lo.Raw != nil && ptr.Deref(lo.Raw.SendInitialEvents, false) {
				return streamingList(ctx, c, name, w)
			}
			return w, nil
		},
	})
}

// streamingList is a watch that starts, as the API server's watch-list
// does and the fake client's watch does not, with the ClusterJobs that
// exist (named name, when set) and a bookmark that marks their end; then w.
// The reflector of status -w asks for it.
func streamingList(ctx context.Context, c client.WithWatch, name string, w watch.Interface) (watch.Interface, error) {
	list := &fleetv1.ClusterJobList{}
	if err := c.List(ctx, list); err != nil {
		w.Stop()
		return nil, err
	}
	events := make(chan watch.Event)
	proxy := watch.NewProxyWatcher(events)
	send := func(ev watch.Event) bool {
		select {
		case events <- ev:
			return true
		case <-proxy.StopChan():
			return false
		}
	}
	go func() {
		defer close(events)
		defer w.Stop()
		rv := "1"
		for i := range list.Items {
			if cj := &list.Items[i]; name == "" || cj.Name == name {
				if !send(watch.Event{Type: watch.Added, Object: cj}) {
					return
				}
				rv = cj.ResourceVersion
			}
		}
		if !send(watch.Event{Type: watch.Bookmark, Object: &fleetv1.ClusterJob{ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: rv, Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"},
		}}}) {
			return
		}
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok || !send(ev) {
					return
				}
			case <-proxy.StopChan():
				return
			}
		}
	}()
	return proxy, nil
}

func listOptions(opts []client.ListOption) *client.ListOptions {
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	return lo
}

// selectedName is the metadata.name a list's raw field selector asks for.
func selectedName(opts []client.ListOption) string {
	lo := listOptions(opts)
	if lo.Raw == nil {
		return ""
	}
	sel, err := fields.ParseSelector(lo.Raw.FieldSelector)
	if err != nil {
		return ""
	}
	name, _ := sel.RequiresExactMatch("metadata.name")
	return name
}

// runRetry runs `retry args` in namespace ops against hub c.
func runRetry(t *testing.T, ctx context.Context, c client.WithWatch, args ...string) (string, error) {
	t.Helper()
	kubeconfig, _ := testKubeconfig(t)
	var out bytes.Buffer
	o := &options{config: genericclioptions.NewConfigFlags(true), streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}}
	o.config.KubeConfig, o.config.Namespace = ptr.To(kubeconfig), ptr.To("ops")
	o.hub = func() (client.WithWatch, error) { return c, nil }
	cmd := newRetry(o)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as the root command does
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

func TestRetryCommand(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		wantOut   string
		wantErr   string
		wantRetry *fleetv1.Retry // nil: no spec.retry
	}{
		{
			name: "failed nodes, in every cluster",
			args: []string{"clean-disks", "--name", "clean-disks-again"},
			wantOut: `clusterjob ops/clean-disks-again created: retrying 3 nodes (Failed) of clean-disks
  CLUSTER    NODES
  member-a   2
  member-b   1
`,
		},
		{
			name: "skipped and unreachable, in some clusters",
			args: []string{"clean-disks", "--name", "clean-disks-again", "--include", "Skipped,failed", "--include", "unreachable", "--cluster", "member-d", "--cluster", "member-b"},
			wantOut: `clusterjob ops/clean-disks-again created: retrying up to 2 nodes (Failed, Skipped, Unreachable) of clean-disks, and the nodes of 1 cluster it never reached
  CLUSTER    NODES
  member-b   2
  member-d   <unknown>
`,
			wantRetry: &fleetv1.Retry{Include: []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetrySkipped, fleetv1.RetryUnreachable}, Clusters: []string{"member-b", "member-d"}},
		},
		{
			name:    "nothing to retry creates nothing",
			args:    []string{"clean-disks", "--cluster", "member-c", "--include", "failed,notrun"},
			wantErr: "clusterjob ops/clean-disks has no Failed, NotRun node in member-c to retry, as its memberruns count them: nothing was created (--include failed,skipped,unreachable,notrun takes every kind)",
		},
		{
			name:    "a cluster of another run",
			args:    []string{"clean-disks", "--cluster", "member-e"},
			wantErr: `--cluster "member-e" did not run in clusterjob ops/clean-disks: its clusters are member-a, member-b, member-c, member-d`,
		},
		{
			name:    "a parent that does not exist",
			args:    []string{"clean-disk"},
			wantErr: "clusterjob ops/clean-disk not found on the hub (see kubectl get clusterjobs -n ops)",
		},
		{
			name:    "a name taken",
			args:    []string{"clean-disks", "--name", "taken"},
			wantErr: `--name "taken": clusterjob ops/taken already exists`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hubWith(t, nil)
			taken := wrappers.MakeClusterJob("taken", "ops").Obj()
			if err := c.Create(context.Background(), taken); err != nil {
				t.Fatal(err)
			}
			out, err := runRetry(t, context.Background(), c, tc.args...)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			created := retriesOf(t, c, "clean-disks")
			if tc.wantErr != "" {
				if len(created) > 0 {
					t.Errorf("created %d ClusterJobs after an error, want none", len(created))
				}
				return
			}
			want := fullSpec("clean-disks").RetryOf("clean-disks").Obj().Spec
			want.Retry = tc.wantRetry
			if len(created) != 1 {
				t.Fatalf("created %d retries, want 1", len(created))
			}
			if diff := cmp.Diff(want, created[0].Spec); diff != "" {
				t.Errorf("the retry's spec (-want +got):\n%s", diff)
			}
			if len(created[0].Labels)+len(created[0].Annotations) > 0 {
				t.Errorf("the retry has labels %v and annotations %v, want none", created[0].Labels, created[0].Annotations)
			}
		})
	}
}

// TestRetryGeneratedName: without --name the API server names the retry
// after the parent, and the output names it so.
func TestRetryGeneratedName(t *testing.T) {
	c := hubWith(t, nil)
	out, err := runRetry(t, context.Background(), c, "clean-disks")
	if err != nil {
		t.Fatal(err)
	}
	created := retriesOf(t, c, "clean-disks")
	if len(created) != 1 || !strings.HasPrefix(created[0].Name, "clean-disks-retry-") {
		t.Fatalf("created %v, want one clean-disks-retry-<random>", created)
	}
	if want := "clusterjob ops/" + created[0].Name + " created: retrying 3 nodes (Failed) of clean-disks\n"; !strings.HasPrefix(out, want) {
		t.Errorf("output %q, want it to start with %q", out, want)
	}
}

// TestRetryWatch: -w follows the retry as status -w does, and fails as it
// does when the retry fails.
func TestRetryWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	watching := make(chan struct{}, 1)
	c := hubWith(t, watching)
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := runRetry(t, ctx, c, "clean-disks", "--name", "clean-disks-again", "-w")
		done <- result{out, err}
	}()
	select {
	case <-watching:
	case <-ctx.Done():
		t.Fatal("retry -w never watched the retry")
	}
	child := &fleetv1.ClusterJob{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: "clean-disks-again"}, child); err != nil {
		t.Fatal(err)
	}
	child.Status = fleetv1.ClusterJobStatus{Phase: fleetv1.PhaseFailed, Conditions: []metav1.Condition{{
		Type: fleetv1.ConditionFailed, Status: metav1.ConditionTrue, Reason: fleetv1.ReasonNodeFailed, Message: "2 nodes failed", LastTransitionTime: metav1.Now(),
	}}}
	if err := c.Status().Update(ctx, child); err != nil {
		t.Fatal(err)
	}
	var got result
	select {
	case got = <-done:
	case <-ctx.Done():
		t.Fatal("retry -w did not end when the retry Failed")
	}
	var failed *RunFailedError
	if !errors.As(got.err, &failed) {
		t.Fatalf("retry -w error = %v, want a RunFailedError", got.err)
	}
	if diff := cmp.Diff(&RunFailedError{Namespace: "ops", Name: "clean-disks-again", Message: "2 nodes failed"}, failed); diff != "" {
		t.Errorf("RunFailedError (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got.out, "clusterjob ops/clean-disks-again created: retrying 3 nodes (Failed) of clean-disks\n") ||
		// The first frame is Pending, or already Failed when the watch
		// drew after the update (a loaded machine): either follows the table.
		!strings.Contains(got.out, "  member-b   1\n\nclusterjob ops/clean-disks-again: ") ||
		!strings.Contains(got.out, "clusterjob ops/clean-disks-again: Failed") {
		t.Errorf("retry -w printed:\n%s\nwant the created line and table, a blank line, then the status until it Failed", got.out)
	}
}

// retriesOf lists the ClusterJobs of ops that retry parent.
func retriesOf(t *testing.T, c client.Reader, parent string) []fleetv1.ClusterJob {
	t.Helper()
	list := &fleetv1.ClusterJobList{}
	if err := c.List(context.Background(), list, client.InNamespace("ops")); err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(list.Items, func(cj fleetv1.ClusterJob) bool {
		return cj.Spec.RetryOf == nil || cj.Spec.RetryOf.Name != parent
	})
}
