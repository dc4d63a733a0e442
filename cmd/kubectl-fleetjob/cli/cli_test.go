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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

var substring = cmp.Comparer(func(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	return strings.Contains(a, b) || strings.Contains(b, a)
})

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func withClusters(names ...string) *fleetv1.ClusterJob {
	cj := wrappers.MakeClusterJob("clean", "default").Obj()
	for _, n := range names {
		cj.Status.Clusters = append(cj.Status.Clusters, fleetv1.ClusterStatus{Name: n})
	}
	return cj
}

func TestPickClusters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cj      *fleetv1.ClusterJob
		flag    []string
		want    []string
		wantErr string
	}{
		{name: "flags win, sorted, once each", cj: withClusters("a", "b", "c"), flag: []string{"c", "b", "c"}, want: []string{"b", "c"}},
		{name: "every cluster of the run", cj: withClusters("a", "b"), want: []string{"a", "b"}},
		{name: "none yet", cj: withClusters(), wantErr: "clusterjob default/clean has no cluster yet: its run has not started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pickClusters(tc.cj, tc.flag)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pickClusters mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUsageErrors: mistakes are refused before any cluster is contacted,
// naming what to fix, with exit code 2.
func TestUsageErrors(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"register"}, "register takes exactly one argument, NAME (the cluster name); got 0"},
		{[]string{"register", "a", "b"}, "got 2"},
		{[]string{"register", "eu-1", "--member-context", "member", "--work-namespace", "Bad", "--dry-run=client"}, `--work-namespace "Bad" is not a valid namespace name`},
		{[]string{"register", "eu-1", "--member-context", "member", "--work-namespace", "fleetjob-hub", "--dry-run=client"}, "--work-namespace fleetjob-hub holds the hub's identities, where no Job may run"},
		{[]string{"register", "eu-1", "--member-context", "nope", "--dry-run=client"}, `member context "nope" is not in the kubeconfig`},
		{[]string{"register", "eu-1", "--member-context", "member", "--dry-run=maybe"}, `Invalid dry-run value (maybe). Must be "none", "server", or "client".`},
		{[]string{"status", "x", "-w", "--nodes"}, "-w redraws the cluster table: it does not combine with --nodes"},
		{[]string{"status", "x", "-w", "-o", "json"}, "-w redraws the cluster table: it does not combine with -o json (use -o wide, or leave -o out)"},
		{[]string{"status", "x", "--timeout", "1m"}, "--timeout bounds how long -w waits: add -w"},
		{[]string{"status", "x", "-w", "--timeout", "-1s"}, "--timeout -1s is negative"},
		{[]string{"status", "x", "--cluster", "a"}, "--cluster and --failed select what --nodes lists: add --nodes"},
		{[]string{"status", "x", "--failed"}, "--cluster and --failed select what --nodes lists: add --nodes"},
		{[]string{"status", "x", "-o", "table"}, "-o table is not an output format here: use one of json, yaml"},
		{[]string{"status", "x", "-o", "custom-columns="}, "-o custom-columns needs columns: custom-columns=HEADER:JSONPATH"},
		{[]string{"status", "x", "-o", "custom-columns=NAME"}, `-o custom-columns: "NAME" is not HEADER:JSONPATH`},
		{[]string{"status", "x", "-o", "jsonpath={.status"}, "unclosed action"},
		{[]string{"plan", "x", "-o", "wide"}, "-o wide is not an output format here"},
		{[]string{"clusters", "-o", "table"}, "-o table is not an output format here: use one of json, yaml"},
		{[]string{"suspend"}, "suspend takes exactly one argument, NAME (the ClusterJob name)"},
		{[]string{"resume", "x", "--dry-run=later"}, `Invalid dry-run value (later)`},
		{[]string{"approve"}, "approve takes exactly one argument, NAME (the ClusterJob name); got 0"},
		{[]string{"approve", "x", "--dry-run=maybe"}, `Invalid dry-run value (maybe)`},
		{[]string{"approve", "x", "-o", "wide"}, "-o wide is not an output format here"},
		{[]string{"reject", "x"}, "reject needs --reason: say why the run stops"},
		{[]string{"reject", "x", "y", "--reason", "no"}, "reject takes exactly one argument, NAME (the ClusterJob name); got 2"},
		{[]string{"logs", "x", "--cluster", "eu-1"}, "--cluster and --node are required"},
		{[]string{"retry"}, "retry takes exactly one argument, NAME (the ClusterJob name)"},
		{[]string{"retry", "x", "--include", "failed,lost"}, `--include "lost" is not a kind of node to retry: use failed, skipped, unreachable or notrun`},
		{[]string{"retry", "x", "--name", "x"}, `--name "x" is the ClusterJob to retry: a run cannot retry itself`},
		{[]string{"retry", "x", "--name", "Again"}, `--name "Again" is not a valid ClusterJob name`},
		{[]string{"retry", "x", "-w", "--dry-run=server"}, "-w follows the retry it created: a dry run creates none"},
		{[]string{"retry", "x", "-w", "-o", "name"}, "-w follows the retry with a table: it does not combine with -o name"},
		{[]string{"retry", "x", "--timeout", "1m"}, "--timeout bounds how long -w waits: add -w"},
		{[]string{"register", "eu-1", "--member-context", "member", "--cluster-set", "Team_A", "--dry-run=client"}, `--cluster-set "Team_A" is not a valid cluster set name`},
		{[]string{"register", "eu-1", "--member-context", "member", "--cluster-set", "team-a", "--label", "fleetjob.io/cluster-set=team-b", "--dry-run=client"}, "--label fleetjob.io/cluster-set=team-b conflicts with --cluster-set team-a"},
		{[]string{"register", "eu-1", "--member-context", "member", "--label", "fleetjob.io/cluster-set=", "--dry-run=client"}, `--label fleetjob.io/cluster-set "" is not a valid cluster set name`},
		{[]string{"clustersets", "x"}, `unknown command "x"`},
		{[]string{"clustersets", "-o", "wider"}, "-o wider is not an output format here"},
		{[]string{"bind"}, "bind takes exactly one argument, SET (the cluster set name); got 0"},
		{[]string{"bind", "Team_A"}, `SET "Team_A" is not a valid cluster set name`},
		{[]string{"bind", "team-a", "--dry-run=client", "-o", "wide"}, "-o wide is not an output format here"},
		{[]string{"unbind", "a", "b"}, "unbind takes exactly one argument, SET (the cluster set name); got 2"},
		{[]string{"unbind", "Team_A"}, `SET "Team_A" is not a valid cluster set name`},
		{[]string{"unregister", "eu-1", "--purge"}, "--purge needs --member-context"},
		{[]string{"version", "-o", "name"}, "-o name is not supported here: use one of json, yaml"},
		{[]string{"nonsense"}, `unknown command "nonsense" for "kubectl fleetjob"`},
		{[]string{"status", "x", "--bogus"}, "unknown flag: --bogus"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, code := runMain(t, append([]string{"--kubeconfig", kubeconfig}, tc.args...)...)
			if code != ExitUsage {
				t.Errorf("exit code %d, want %d (usage); stderr:\n%s", code, ExitUsage, errOut)
			}
			if diff := cmp.Diff(tc.want, errOut, substring); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// runMain runs the plugin as main does, args after its name, against the
// hub of the kubeconfig args name.
func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), code
}
