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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
// naming what to fix.
func TestUsageErrors(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"register"}, "register takes exactly one argument, NAME (the cluster name); got 0"},
		{[]string{"register", "a", "b"}, "got 2"},
		{[]string{"register", "eu-1", "--member-context", "member", "--work-namespace", "Bad", "--dry-run"}, `--work-namespace "Bad" is not a valid namespace name`},
		{[]string{"register", "eu-1", "--member-context", "member", "--work-namespace", "fleetjob-hub", "--dry-run"}, "--work-namespace fleetjob-hub holds the hub's identities, where no Job may run"},
		{[]string{"register", "eu-1", "--member-context", "nope", "--dry-run"}, `member context "nope" is not in the kubeconfig`},
		{[]string{"status", "x", "-w", "--nodes"}, "-w redraws the cluster table: it does not combine with --nodes or -o"},
		{[]string{"status", "x", "--cluster", "a"}, "--cluster and --failed select what --nodes lists: add --nodes"},
		{[]string{"status", "x", "--failed"}, "--cluster and --failed select what --nodes lists: add --nodes"},
		{[]string{"status", "x", "-o", "wide"}, "-o wide is not supported here: use one of yaml, json"},
		{[]string{"plan", "x", "-o", "name"}, "-o name is not supported here"},
		{[]string{"clusters", "-o", "name"}, "-o name is not supported here: use one of wide, yaml, json"},
		{[]string{"suspend"}, "suspend takes exactly one argument, NAME (the ClusterJob name)"},
		{[]string{"logs", "x", "--cluster", "eu-1"}, "--cluster and --node are required"},
		{[]string{"retry"}, "retry takes exactly one argument, NAME (the ClusterJob name)"},
		{[]string{"retry", "x", "--include", "failed,lost"}, `--include "lost" is not a kind of node to retry: use failed, skipped, unreachable or notrun`},
		{[]string{"retry", "x", "--name", "x"}, `--name "x" is the ClusterJob to retry: a run cannot retry itself`},
		{[]string{"retry", "x", "--name", "Again"}, `--name "Again" is not a valid ClusterJob name`},
		{[]string{"register", "eu-1", "--member-context", "member", "--cluster-set", "Team_A", "--dry-run"}, `--cluster-set "Team_A" is not a valid cluster set name`},
		{[]string{"register", "eu-1", "--member-context", "member", "--cluster-set", "team-a", "--label", "fleetjob.io/cluster-set=team-b", "--dry-run"}, "--label fleetjob.io/cluster-set=team-b conflicts with --cluster-set team-a"},
		{[]string{"register", "eu-1", "--member-context", "member", "--label", "fleetjob.io/cluster-set=", "--dry-run"}, `--label fleetjob.io/cluster-set "" is not a valid cluster set name`},
		{[]string{"clustersets", "x"}, `unknown command "x"`},
		{[]string{"clustersets", "-o", "name"}, "-o name is not supported here: use one of wide, yaml, json"},
		{[]string{"bind"}, "bind takes exactly one argument, SET (the cluster set name); got 0"},
		{[]string{"bind", "Team_A"}, `SET "Team_A" is not a valid cluster set name`},
		{[]string{"bind", "team-a", "-o", "yaml"}, "-o prints the ClusterSetBinding --dry-run would create: add --dry-run"},
		{[]string{"bind", "team-a", "--dry-run", "-o", "wide"}, "-o wide is not supported here: use one of yaml, json"},
		{[]string{"unbind", "a", "b"}, "unbind takes exactly one argument, SET (the cluster set name); got 2"},
		{[]string{"unbind", "Team_A"}, `SET "Team_A" is not a valid cluster set name`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := execute(t, append([]string{"--kubeconfig", kubeconfig}, tc.args...)...)
			if diff := cmp.Diff(tc.want, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApproximately(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{8760 * time.Hour, "365d"},
		{8760*time.Hour - 3*time.Second, "365d"},
		{72 * time.Hour, "3d"},
		{47*time.Hour + 59*time.Minute + 40*time.Second, "48h0m0s"},
		{10 * time.Minute, "10m0s"},
	} {
		if got := approximately(tc.d); got != tc.want {
			t.Errorf("approximately(%s) = %s, want %s", tc.d, got, tc.want)
		}
	}
}
