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
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/pkg/version"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

var notFound = apierrors.NewNotFound(schema.GroupResource{Group: "fleetjob.io", Resource: "clusterjobs"}, "x")

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{name: "done", err: nil, want: ExitOK},
		{name: "the run failed", err: &RunFailedError{Namespace: "ops", Name: "x"}, want: ExitRunFailed},
		{name: "the run failed, wrapped", err: fmt.Errorf("following: %w", &RunFailedError{}), want: ExitRunFailed},
		{name: "usage", err: usagef("--bad"), want: ExitUsage},
		{name: "an API status", err: fmt.Errorf("reading clusterjob ops/x: %w", notFound), want: ExitAPI},
		{name: "an API status told in our words", err: explain(notFound, "clusterjob ops/x not found on the hub"), want: ExitAPI},
		{name: "connection refused", err: fmt.Errorf("listing: %w", &url.Error{Op: "Get", URL: "https://hub:6443", Err: errors.New("connection refused")}), want: ExitAPI},
		{name: "a request past its deadline", err: fmt.Errorf("listing: %w", context.DeadlineExceeded), want: ExitAPI},
		{name: "a kubeconfig that cannot be used", err: &apiError{errors.New("hub kubeconfig: context nope not found")}, want: ExitAPI},
		{name: "a member among several that could not be read", err: errors.Join(errors.New("cluster a: no plan"), fmt.Errorf("cluster b: %w", notFound)), want: ExitAPI},
		{name: "timed out waiting", err: &WaitTimeoutError{Namespace: "ops", Name: "x", Timeout: time.Minute}, want: ExitTimeout},
		{name: "a check that did not hold", err: errors.New("clusterjob ops/x has no Failed node to retry"), want: ExitError},
		{name: "interrupted", err: fmt.Errorf("stopped following clusterjob ops/x: %w", context.Canceled), want: ExitInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ExitCode(tc.err); got != tc.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

// TestExitCodesDocumented: --help lists every exit code ExitCode returns.
func TestExitCodesDocumented(t *testing.T) {
	out, _, err := execute(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{ExitOK, ExitRunFailed, ExitUsage, ExitAPI, ExitTimeout, ExitError, ExitInterrupted} {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^  %d +\S`, code)).MatchString(out) {
			t.Errorf("--help does not document exit code %d:\n%s", code, out)
		}
	}
}

// TestHubUnreachable: a hub that does not answer is exit code 3, told on
// stderr.
func TestHubUnreachable(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	out, errOut, code := runMain(t, "--kubeconfig", kubeconfig, "status", "clean-disks")
	if code != ExitAPI {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, ExitAPI, errOut)
	}
	if out != "" || !strings.HasPrefix(errOut, "error: reading clusterjob default/clean-disks on the hub: ") {
		t.Errorf("stdout %q, stderr %q: want nothing, and an error naming the read", out, errOut)
	}
}

// onHub builds a command on the options of a kubeconfig whose namespace
// is ops, against hub c.
func onHub(c client.WithWatch, build func(*options) *cobra.Command) func(*options) *cobra.Command {
	return func(o *options) *cobra.Command {
		o.hub = func() (client.WithWatch, error) { return c, nil }
		return build(o)
	}
}

// TestStatusPrinting: status prints the ClusterJob with kubectl's
// printers, and its table with kubectl's table flags.
func TestStatusPrinting(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		name    string
		args    []string
		want    string
		wantRow *regexp.Regexp // with want "": every line matches
	}{
		{name: "jsonpath", args: []string{"-o", "jsonpath={.status.phase}"}, want: "Failed"},
		{name: "name", args: []string{"-o", "name"}, want: "clusterjob.fleetjob.io/clean-disks\n"},
		{name: "go-template", args: []string{"-o", "go-template={{.metadata.namespace}}/{{.metadata.name}}"}, want: "ops/clean-disks"},
		{name: "custom-columns", args: []string{"-o", "custom-columns=NAME:.metadata.name,PHASE:.status.phase"}, want: "NAME          PHASE\nclean-disks   Failed\n"},
		{name: "no headers: one line per cluster", args: []string{"--no-headers"}, wantRow: regexp.MustCompile(`^member-[abcd] +(Failed|Completed) +\[`)},
		{name: "wide", args: []string{"-o", "wide"}, wantRow: regexp.MustCompile(`^(clusterjob ops/clean-disks: Failed |$|CLUSTER .* REACHABLE +CURRENT-GROUP +CLUSTER-ID +MESSAGE$|member-[abcd] )`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runOn(t, kubeconfig, onHub(hubWith(t, nil), newStatus), append([]string{"clean-disks"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantRow == nil {
				if diff := cmp.Diff(tc.want, out); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
				return
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) < 4 {
				t.Errorf("output has %d lines, want one per cluster at least:\n%s", len(lines), out)
			}
			for _, l := range lines {
				if !tc.wantRow.MatchString(l) {
					t.Errorf("line %q does not match %s", l, tc.wantRow)
				}
			}
		})
	}
}

// TestStatusYAML: -o yaml is the ClusterJob as kubectl get prints it.
func TestStatusYAML(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	c := hubWith(t, nil)
	cj := &fleetv1.ClusterJob{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ops", Name: "clean-disks"}, cj); err != nil {
		t.Fatal(err)
	}
	cj.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	if err := c.Update(context.Background(), cj); err != nil {
		t.Fatal(err)
	}
	out, _, err := runOn(t, kubeconfig, onHub(c, newStatus), "clean-disks", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "apiVersion: fleetjob.io/v1alpha1\nkind: ClusterJob\n") || strings.Contains(out, "managedFields") {
		t.Errorf("-o yaml:\n%s\nwant the ClusterJob with its kind, without managedFields", out)
	}
}

// TestWaitExitCodes: status -w exits 0 on a completed run, 1 on a failed
// one, 4 when --timeout passes first, and 3 when the run does not exist.
func TestWaitExitCodes(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{name: "completed", args: []string{"completed", "-w"}, wantCode: ExitOK},
		{name: "failed", args: []string{"clean-disks", "-w", "--timeout", "1m"}, wantCode: ExitRunFailed, wantErr: "clusterjob ops/clean-disks Failed"},
		{name: "still running when --timeout passes", args: []string{"running", "-w", "--timeout", "200ms"}, wantCode: ExitTimeout,
			wantErr: "timed out after 200ms waiting for clusterjob ops/running to end: it is Running"},
		{name: "no such run", args: []string{"missing", "-w"}, wantCode: ExitAPI, wantErr: "clusterjob ops/missing not found on the hub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hubWith(t, nil)
			ctx := context.Background()
			completed := wrappers.MakeClusterJob("completed", "ops").Obj()
			running := wrappers.MakeClusterJob("running", "ops").Obj()
			for _, cj := range []*fleetv1.ClusterJob{completed, running} {
				if err := c.Create(ctx, cj); err != nil {
					t.Fatal(err)
				}
			}
			completed.Status.Phase, running.Status.Phase = fleetv1.PhaseCompleted, fleetv1.PhaseRunning
			for _, cj := range []*fleetv1.ClusterJob{completed, running} {
				if err := c.Status().Update(ctx, cj); err != nil {
					t.Fatal(err)
				}
			}
			out, _, err := runOn(t, kubeconfig, onHub(c, newStatus), tc.args...)
			if got := ExitCode(err); got != tc.wantCode {
				t.Errorf("exit code %d (error %v), want %d", got, err, tc.wantCode)
			}
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if tc.wantCode != ExitAPI && !strings.HasPrefix(out, "clusterjob ops/"+tc.args[0]+": ") {
				t.Errorf("-w printed %q, want the run's status", out)
			}
		})
	}
}

func TestParseDryRun(t *testing.T) {
	for _, tc := range []struct {
		value    string
		want     dryRun
		wantWarn string
		wantErr  string
	}{
		{value: "none", want: dryRunNone},
		{value: "client", want: dryRunClient},
		{value: "server", want: dryRunServer},
		{value: bareDryRun, want: dryRunClient, wantWarn: "warning: --dry-run is deprecated and can be replaced with --dry-run=client.\n"},
		{value: "true", want: dryRunClient, wantWarn: "warning: --dry-run=true is deprecated (boolean value) and can be replaced with --dry-run=client.\n"},
		{value: "false", want: dryRunNone, wantWarn: "warning: --dry-run=false is deprecated (boolean value) and can be replaced with --dry-run=none.\n"},
		{value: "all", wantErr: `Invalid dry-run value (all). Must be "none", "server", or "client".`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			var warn strings.Builder
			got, err := parseDryRun(tc.value, &warn)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if err != nil && ExitCode(err) != ExitUsage {
				t.Errorf("a bad --dry-run exits %d, want %d", ExitCode(err), ExitUsage)
			}
			if got != tc.want {
				t.Errorf("parseDryRun(%q) = %d, want %d", tc.value, got, tc.want)
			}
			if diff := cmp.Diff(tc.wantWarn, warn.String()); diff != "" {
				t.Errorf("warning (-want +got):\n%s", diff)
			}
			if (got == dryRunServer) != (len(got.options()) == 1 && got.options()[0] == metav1.DryRunAll) {
				t.Errorf("options() = %v: want [All] for the server strategy only", got.options())
			}
		})
	}
}

// dryRunSeen records whether every write to the hub asked for dryRun=All.
func dryRunSeen(t *testing.T, c client.WithWatch, wantDryRun bool) client.WithWatch {
	check := func(verb string, dryRun []string) {
		if got := len(dryRun) == 1 && dryRun[0] == metav1.DryRunAll; got != wantDryRun {
			t.Errorf("%s with dryRun %v, want dry run %t", verb, dryRun, wantDryRun)
		}
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			o := &client.CreateOptions{}
			o.ApplyOptions(opts)
			check("create", o.DryRun)
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			o := &client.PatchOptions{}
			o.ApplyOptions(opts)
			check("patch", o.DryRun)
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
}

// TestDryRunWrites: a client dry run writes nothing; a server dry run
// sends its writes with dryRun=All, and the hub stores nothing.
func TestDryRunWrites(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		name       string
		build      func(*options) *cobra.Command
		args       []string
		wantOut    string
		wantWrites bool
	}{
		{name: "suspend, client", build: func(o *options) *cobra.Command { return newSuspend(o, false) }, args: []string{"clean-disks", "--dry-run=client"},
			wantOut: "clusterjob.fleetjob.io/clean-disks resumed (dry run)\n"},
		{name: "suspend, server", build: func(o *options) *cobra.Command { return newSuspend(o, false) }, args: []string{"clean-disks", "--dry-run=server"},
			wantOut: "clusterjob.fleetjob.io/clean-disks resumed (server dry run)\n", wantWrites: true},
		{name: "suspend, server, printed", build: func(o *options) *cobra.Command { return newSuspend(o, false) },
			args: []string{"clean-disks", "--dry-run=server", "-o", "name"}, wantOut: "clusterjob.fleetjob.io/clean-disks\n", wantWrites: true},
		{name: "suspend, client, as it would be patched", build: func(o *options) *cobra.Command { return newSuspend(o, false) },
			args: []string{"clean-disks", "--dry-run=client", "-o", "jsonpath={.spec.suspend}"}, wantOut: "false"},
		{name: "retry, client", build: newRetry, args: []string{"clean-disks", "--dry-run=client"},
			wantOut: "clusterjob ops/clean-disks-retry-<random> created (dry run): retrying 3 nodes (Failed) of clean-disks\n  CLUSTER    NODES\n  member-a   2\n  member-b   1\n"},
		{name: "retry, server", build: newRetry, args: []string{"clean-disks", "--name", "again", "--dry-run=server", "-o", "name"},
			wantOut: "clusterjob.fleetjob.io/again\n", wantWrites: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := hubWith(t, nil)
			var writes int
			counted := interceptor.NewClient(dryRunSeen(t, c, true), interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					writes++
					return c.Create(ctx, obj, opts...)
				},
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					writes++
					return c.Patch(ctx, obj, patch, opts...)
				},
			})
			out, _, err := runOn(t, kubeconfig, onHub(counted, tc.build), tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if (writes > 0) != tc.wantWrites {
				t.Errorf("%d writes sent, want some: %t", writes, tc.wantWrites)
			}
			parent := &fleetv1.ClusterJob{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ops", Name: "clean-disks"}, parent); err != nil {
				t.Fatal(err)
			}
			if !ptr.Deref(parent.Spec.Suspend, false) {
				t.Error("a dry run resumed the run")
			}
			if got := retriesOf(t, c, "clean-disks"); len(got) > 0 {
				t.Errorf("a dry run created %d retries", len(got))
			}
		})
	}
}

// TestRetryPrintsTheCreated: retry -o prints the ClusterJob it created,
// so that a script learns its generated name.
func TestRetryPrintsTheCreated(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	c := hubWith(t, nil)
	out, _, err := runOn(t, kubeconfig, onHub(dryRunSeen(t, c, false), newRetry), "clean-disks", "-o", "jsonpath={.metadata.name}")
	if err != nil {
		t.Fatal(err)
	}
	created := retriesOf(t, c, "clean-disks")
	if len(created) != 1 || out != created[0].Name {
		t.Errorf("retry -o jsonpath printed %q; created %v", out, created)
	}
}

func TestCompletions(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	// A registration whose MemberCluster the hub has not published: not
	// suggested, since completion reads no Secret.
	registrations := k8sfake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hub.DefaultNamespace, Name: "secret-only",
		Labels: map[string]string{fleetv1.RegistrationLabel: "true"}}})
	withSets := func() (client.WithWatch, error) {
		c := hubWith(t, nil)
		for _, obj := range []client.Object{clusterSetOf("team-a", fleetv1.PodSecurityRestricted), clusterSetOf("labs", fleetv1.PodSecurityBaseline), bindingOf("ops", "team-a"), bindingOf("other", "labs"), memberOf("eu-1", ""), memberOf("us-1", "team-a")} {
			if err := c.Create(context.Background(), obj); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	down := func() (client.WithWatch, error) { return nil, errors.New("no hub") }
	for _, tc := range []struct {
		name       string
		hub        func() (client.WithWatch, error)
		complete   func(*options) cobra.CompletionFunc
		args       []string
		toComplete string
		want       []string
	}{
		{name: "clusterjobs of the namespace", hub: withSets, complete: completeClusterJobs, toComplete: "clean", want: []string{"clean-disks"}},
		{name: "clusterjobs: only the first argument", hub: withSets, complete: completeClusterJobs, args: []string{"clean-disks"}},
		{name: "clusters of the run, from its memberruns", hub: withSets, complete: completeRunClusters, args: []string{"clean-disks"}, toComplete: "member-",
			want: []string{"member-a", "member-b", "member-c", "member-d"}},
		{name: "clusters: no run named yet", hub: withSets, complete: completeRunClusters},
		{name: "cluster sets, and the default", hub: withSets, complete: completeClusterSets, want: []string{"default", "labs", "team-a"}},
		{name: "sets bound to the namespace", hub: withSets, complete: completeBoundSets, want: []string{"team-a"}},
		{name: "registered clusters", hub: withSets, complete: completeRegistrations, want: []string{"eu-1", "us-1"}},
		{name: "a hub that does not answer suggests nothing", hub: down, complete: completeClusterJobs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _ = runOn(t, kubeconfig, func(o *options) *cobra.Command {
				o.hub = tc.hub
				o.clientset = func() (kubernetes.Interface, error) { return registrations, nil }
				cmd := &cobra.Command{Use: "x", RunE: func(cmd *cobra.Command, _ []string) error {
					got, directive := tc.complete(o)(cmd, tc.args, tc.toComplete)
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Errorf("completions (-want +got):\n%s", diff)
					}
					if directive != cobra.ShellCompDirectiveNoFileComp {
						t.Errorf("directive %d, want no file completion", directive)
					}
					return nil
				}}
				return cmd
			})
		})
	}
}

// TestCompletionProtocol: the root command answers kubectl's plugin
// completion (cobra's __complete), as the kubectl_complete-fleetjob
// script asks it, and generates shell scripts.
func TestCompletionProtocol(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"__complete", "sta"}, want: "status\tShow a ClusterJob run: one line per cluster, or per node\n:4\n"},
		{args: []string{"__complete", "status", "x", "-o", "jsonpath"}, want: "jsonpath\njsonpath-as-json\njsonpath-file\n:4\n"},
		{args: []string{"__complete", "bind", "team-a", "--dry-run="}, want: "none\nclient\nserver\n:4\n"},
		{args: []string{"__complete", "register", ""}, want: ":4\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := runMain(t, append([]string{"--kubeconfig", kubeconfig}, tc.args...)...)
			if code != ExitOK {
				t.Fatalf("exit code %d: %s", code, errOut)
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("completions (-want +got):\n%s", diff)
			}
		})
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out, errOut, code := runMain(t, "completion", shell)
		if code != ExitOK || !strings.Contains(out, "kubectl-fleetjob") {
			t.Errorf("completion %s: exit code %d, %d bytes naming kubectl-fleetjob: %t; %s", shell, code, len(out), strings.Contains(out, "kubectl-fleetjob"), errOut)
		}
	}
	script, err := os.ReadFile("../kubectl_complete-fleetjob")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat("../kubectl_complete-fleetjob"); err != nil || info.Mode()&0o111 == 0 {
		t.Errorf("kubectl_complete-fleetjob is not executable: %v", err)
	}
	if !strings.HasPrefix(string(script), "#!/bin/sh\n") || !strings.HasSuffix(string(script), "\nexec kubectl-fleetjob __complete \"$@\"\n") {
		t.Errorf("kubectl_complete-fleetjob does not hand its arguments to kubectl-fleetjob __complete:\n%s", script)
	}
}

// hubDeploymentOf is the hub's Deployment with labels.
func hubDeploymentOf(ns string, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: hubDeployment, Labels: labels}}
}

func TestVersion(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	client := "Client Version: " + version.Get().String() + "\n"
	forbidden := k8sfake.NewClientset()
	forbidden.PrependReactor("get", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, hubDeployment, errors.New("RBAC: access denied"))
	})
	for _, tc := range []struct {
		name string
		cs   kubernetes.Interface
		args []string
		want string
	}{
		{name: "the hub's release", cs: k8sfake.NewClientset(hubDeploymentOf("fleetjob-system", map[string]string{versionLabel: "v0.1.0"})),
			want: client + "Hub Version: v0.1.0\n"},
		{name: "another hub namespace", cs: k8sfake.NewClientset(hubDeploymentOf("fleet", map[string]string{versionLabel: "v0.2.0"})), args: []string{"--hub-namespace", "fleet"},
			want: client + "Hub Version: v0.2.0\n"},
		{name: "no hub deployment", cs: k8sfake.NewClientset(),
			want: client + "Hub Version: unknown: no deployment fleetjob-system/fleetjob-hub on the hub: the hub runs in another namespace (--hub-namespace) or outside the cluster\n"},
		{name: "not allowed to read it", cs: forbidden,
			want: client + `Hub Version: unknown: you may not get deployment fleetjob-system/fleetjob-hub on the hub: deployments.apps "fleetjob-hub" is forbidden: RBAC: access denied` + "\n"},
		{name: "an unversioned hub", cs: k8sfake.NewClientset(hubDeploymentOf("fleetjob-system", nil)),
			want: client + "Hub Version: unknown: deployment fleetjob-system/fleetjob-hub has no label app.kubernetes.io/version: it was not installed from a release\n"},
		{name: "client only", args: []string{"--client"}, want: client},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runOn(t, kubeconfig, func(o *options) *cobra.Command {
				o.clientset = func() (kubernetes.Interface, error) {
					if tc.cs == nil {
						t.Error("--client asked the hub")
						return nil, errors.New("no hub")
					}
					return tc.cs, nil
				}
				return newVersion(o)
			}, tc.args...)
			if err != nil {
				t.Fatalf("version failed: %v", err)
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersionJSON(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	cs := k8sfake.NewClientset()
	out, _, err := runOn(t, kubeconfig, func(o *options) *cobra.Command {
		o.clientset = func() (kubernetes.Interface, error) { return cs, nil }
		return newVersion(o)
	}, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got versions
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	want := versions{ClientVersion: version.Get(), HubVersion: &hubVersion{Deployment: "fleetjob-system/fleetjob-hub",
		Unknown: "no deployment fleetjob-system/fleetjob-hub on the hub: the hub runs in another namespace (--hub-namespace) or outside the cluster"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-o json (-want +got):\n%s", diff)
	}
}
