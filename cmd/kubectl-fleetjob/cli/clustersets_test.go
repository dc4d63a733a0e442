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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func bindingOf(ns, set string) *fleetv1.ClusterSetBinding {
	return &fleetv1.ClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set}, Spec: fleetv1.ClusterSetBindingSpec{ClusterSet: set}}
}

// memberOf is the MemberCluster the hub publishes for a registration in
// set (default when empty).
func memberOf(name, set string) *fleetv1.MemberCluster {
	labels := map[string]string{}
	if set != "" {
		labels[fleetv1.ClusterSetLabel] = set
	}
	return &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: fleetv1.MemberClusterStatus{ClusterSet: fleetv1.SetOf(labels)}}
}

func TestClusterSetsCommand(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	fleet := []client.Object{
		clusterSetOf("team-a", fleetv1.PodSecurityRestricted), clusterSetOf("spare", fleetv1.PodSecurityPrivileged),
		memberOf("us-1", "team-a"), memberOf("us-2", "team-a"), memberOf("eu-1", ""),
		bindingOf("team-a", "team-a"), bindingOf("ops", "team-a"), bindingOf("default", "default"),
	}
	for _, tc := range []struct {
		name    string
		objs    []client.Object
		args    []string
		wantOut string
		wantErr string
	}{
		{
			name: "table",
			objs: fleet,
			wantOut: `NAME      POD-SECURITY                      CLUSTERS   BINDINGS
default   baseline (no ClusterSet object)   1          default
spare     privileged                        0          <none>
team-a    restricted                        2          ops,team-a
`,
		},
		{
			name: "wide",
			objs: fleet,
			args: []string{"-o", "wide"},
			wantOut: `NAME      POD-SECURITY                      CLUSTERS   BINDINGS     CLUSTER-NAMES
default   baseline (no ClusterSet object)   1          default      eu-1
spare     privileged                        0          <none>       <none>
team-a    restricted                        2          ops,team-a   us-1,us-2
`,
		},
		{
			name: "yaml: a List of ClusterSetSummary",
			objs: []client.Object{memberOf("eu-1", "")},
			args: []string{"-o", "yaml"},
			wantOut: `apiVersion: v1
items:
- apiVersion: cli.fleetjob.io/v1alpha1
  bindings: []
  clusters:
  - eu-1
  defined: false
  kind: ClusterSetSummary
  metadata:
    name: default
  podSecurity: baseline
kind: List
`,
		},
		{
			name:    "name",
			objs:    fleet,
			args:    []string{"-o", "name"},
			wantOut: "clustersetsummary.cli.fleetjob.io/default\nclustersetsummary.cli.fleetjob.io/spare\nclustersetsummary.cli.fleetjob.io/team-a\n",
		},
		{
			name:    "jsonpath",
			objs:    fleet,
			args:    []string{"-o", "jsonpath={range .items[*]}{.metadata.name}={.podSecurity}{\"\\n\"}{end}"},
			wantOut: "default=baseline\nspare=privileged\nteam-a=restricted\n",
		},
		{
			name:    "custom-columns without headers",
			objs:    fleet,
			args:    []string{"-o", "custom-columns=SET:.metadata.name,CLUSTERS:.clusters,BOUND:.bindings[*]", "--no-headers"},
			wantOut: "default   [\"eu-1\"]" + strings.Repeat(" ", 10) + "default\nspare     []" + strings.Repeat(" ", 16) + "<none>\nteam-a    [\"us-1\",\"us-2\"]   ops,team-a\n",
		},
		{
			name: "table without headers",
			objs: fleet,
			args: []string{"--no-headers"},
			wantOut: `default   baseline (no ClusterSet object)   1   default
spare     privileged                        0   <none>
team-a    restricted                        2   ops,team-a
`,
		},
		{name: "nothing", wantOut: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hubC := fakeHub(t, interceptor.Funcs{}, tc.objs...)
			out, _, err := runOn(t, kubeconfig, func(o *options) *cobra.Command {
				o.hub = hubC
				return newClusterSets(o)
			}, tc.args...)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// forbiddenByPolicy refuses every create as the hub's binding policy does.
var forbiddenByPolicy = interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
	return apierrors.NewForbidden(schema.GroupResource{Group: "fleetjob.io", Resource: "clustersetbindings"}, "team-a",
		errors.New("ValidatingAdmissionPolicy 'fleetjob-clusterset-bind' with binding 'fleetjob-clusterset-bind' denied request"))
}}

func TestBindCommand(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		name         string
		unbind       bool
		funcs        interceptor.Funcs
		objs         []client.Object
		args         []string
		wantOut      string
		wantErr      string
		wantBindings []string // namespace/name afterwards
	}{
		{
			name:         "bind",
			args:         []string{"team-a"},
			wantOut:      "clustersetbinding.fleetjob.io/team-a created in namespace ops: its ClusterJobs may select the clusters of cluster set team-a\n",
			wantBindings: []string{"ops/team-a"},
		},
		{
			name:         "bound already",
			objs:         []client.Object{bindingOf("ops", "team-a")},
			args:         []string{"team-a"},
			wantOut:      "clustersetbinding.fleetjob.io/team-a already exists in namespace ops: cluster set team-a is bound there, nothing changed\n",
			wantBindings: []string{"ops/team-a"},
		},
		{
			name:  "without the bind verb",
			funcs: forbiddenByPolicy,
			args:  []string{"team-a"},
			wantErr: "binding cluster set team-a to namespace ops needs the bind verb on clustersets/team-a in group fleetjob.io: ask a platform admin " +
				`(the hub said: clustersetbindings.fleetjob.io "team-a" is forbidden: ValidatingAdmissionPolicy 'fleetjob-clusterset-bind' with binding 'fleetjob-clusterset-bind' denied request)`,
		},
		{
			name:    "dry run asks the hub nothing",
			funcs:   forbiddenByPolicy,
			args:    []string{"team-a", "--dry-run=client"},
			wantOut: "clustersetbinding.fleetjob.io/team-a created in namespace ops: its ClusterJobs may select the clusters of cluster set team-a (dry run)\n",
		},
		{
			name:    "server dry run: the hub's policy refuses",
			funcs:   forbiddenByPolicy,
			args:    []string{"team-a", "--dry-run=server"},
			wantErr: "binding cluster set team-a to namespace ops needs the bind verb",
		},
		{
			name:    "server dry run: admitted, nothing stored",
			args:    []string{"team-a", "--dry-run=server"},
			wantOut: "clustersetbinding.fleetjob.io/team-a created in namespace ops: its ClusterJobs may select the clusters of cluster set team-a (server dry run)\n",
		},
		{
			name:         "created, printed by name",
			args:         []string{"team-a", "-o", "name"},
			wantOut:      "clustersetbinding.fleetjob.io/team-a\n",
			wantBindings: []string{"ops/team-a"},
		},
		{
			name:         "unbind, server dry run",
			unbind:       true,
			objs:         []client.Object{bindingOf("ops", "team-a")},
			args:         []string{"team-a", "--dry-run=server"},
			wantOut:      "clustersetbinding.fleetjob.io/team-a deleted from namespace ops: its new runs may no longer select the clusters of cluster set team-a (started runs keep theirs) (server dry run)\n",
			wantBindings: []string{"ops/team-a"},
		},
		{
			name:         "unbind, client dry run",
			unbind:       true,
			objs:         []client.Object{bindingOf("ops", "team-a")},
			args:         []string{"team-a", "--dry-run=client"},
			wantOut:      "clustersetbinding.fleetjob.io/team-a deleted from namespace ops: its new runs may no longer select the clusters of cluster set team-a (started runs keep theirs) (dry run)\n",
			wantBindings: []string{"ops/team-a"},
		},
		{
			name: "dry run as yaml",
			args: []string{"team-a", "--dry-run=client", "-o", "yaml"},
			wantOut: `apiVersion: fleetjob.io/v1alpha1
kind: ClusterSetBinding
metadata:
  name: team-a
  namespace: ops
spec:
  clusterSet: team-a
`,
		},
		{
			name:         "unbind",
			unbind:       true,
			objs:         []client.Object{bindingOf("ops", "team-a"), bindingOf("team-a", "team-a")},
			args:         []string{"team-a"},
			wantOut:      "clustersetbinding.fleetjob.io/team-a deleted from namespace ops: its new runs may no longer select the clusters of cluster set team-a (started runs keep theirs)\n",
			wantBindings: []string{"team-a/team-a"},
		},
		{
			name:    "unbound already",
			unbind:  true,
			args:    []string{"team-a"},
			wantOut: "cluster set team-a is not bound to namespace ops: there is no clustersetbinding ops/team-a on the hub, nothing changed\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hubC := fakeHub(t, tc.funcs, tc.objs...)
			build := func(o *options) *cobra.Command { o.hub = hubC; return newBind(o) }
			if tc.unbind {
				build = func(o *options) *cobra.Command { o.hub = hubC; return newUnbind(o) }
			}
			out, _, err := runOn(t, kubeconfig, build, tc.args...)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBindings, bindings(t, hubC)); diff != "" {
				t.Errorf("bindings on the hub (-want +got):\n%s", diff)
			}
		})
	}
}

// bindings are the ClusterSetBindings on the hub, as namespace/name.
func bindings(t *testing.T, hubC func() (client.WithWatch, error)) []string {
	t.Helper()
	c, _ := hubC()
	ctx, cancel := context.WithTimeout(context.Background(), hubTimeout)
	defer cancel()
	list := &fleetv1.ClusterSetBindingList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range list.Items {
		if b.Spec.ClusterSet != b.Name {
			t.Errorf("binding %s/%s binds %s, want its name", b.Namespace, b.Name, b.Spec.ClusterSet)
		}
		out = append(out, b.Namespace+"/"+b.Name)
	}
	return out
}

// TestBindDryRunJSON: -o json is one ClusterSetBinding kubectl can apply.
func TestBindDryRunJSON(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	out, _, err := execute(t, "--kubeconfig", kubeconfig, "bind", "team-a", "-n", "team-a", "--dry-run=client", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got fleetv1.ClusterSetBinding
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	want := *bindingOf("team-a", "team-a")
	want.APIVersion, want.Kind = "fleetjob.io/v1alpha1", "ClusterSetBinding"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-o json (-want +got):\n%s", diff)
	}
}
