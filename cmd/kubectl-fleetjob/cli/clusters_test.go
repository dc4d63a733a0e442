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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// noSecrets fails the test on any read of a Secret.
func noSecrets(t *testing.T) interceptor.Funcs {
	return interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*corev1.SecretList); ok {
			t.Errorf("listed Secrets")
		}
		return c.List(ctx, list, opts...)
	}}
}

func TestClustersCommand(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	ready := memberOf("us-1", "team-a")
	ready.Labels["env"] = "prod"
	ready.Status.NodeCount = ptr.To[int32](3)
	ready.Status.Conditions = []metav1.Condition{{Type: fleetv1.MemberClusterReady, Status: metav1.ConditionTrue, Reason: fleetv1.ReasonReady}}
	fleet := []client.Object{ready, memberOf("eu-1", "")}
	for _, tc := range []struct {
		name       string
		objs       []client.Object
		args       []string
		wantOut    string
		wantErrOut string
		wantErr    string
	}{
		{
			name: "table without headers, filtered by -l",
			objs: fleet,
			args: []string{"--no-headers", "-l", "env=prod"},
			// AGE: the fake client sets no creation time.
			wantOut: "us-1   True   Ready   <none>   3   team-a   <none>   <unknown>\n",
		},
		{
			name:    "name",
			objs:    fleet,
			args:    []string{"-o", "name"},
			wantOut: "membercluster.fleetjob.io/eu-1\nmembercluster.fleetjob.io/us-1\n",
		},
		{
			name:    "jsonpath on the MemberClusters themselves",
			objs:    fleet,
			args:    []string{"-o", `jsonpath={range .items[*]}{.apiVersion}/{.kind} {.metadata.name} {.status.nodeCount}{"\n"}{end}`},
			wantOut: "fleetjob.io/v1alpha1/MemberCluster eu-1 \nfleetjob.io/v1alpha1/MemberCluster us-1 3\n",
		},
		{
			name:       "nothing published",
			wantErrOut: "No member clusters found: the hub publishes one per registration once it runs (see kubectl fleetjob register --help).\n",
		},
		{
			name:    "a bad selector",
			args:    []string{"-l", "env in (prod"},
			wantErr: `-l "env in (prod"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hubC := fakeHub(t, noSecrets(t), tc.objs...)
			out, errOut, err := runOn(t, kubeconfig, func(o *options) *cobra.Command {
				o.hub = hubC
				return newClusters(o)
			}, tc.args...)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOut, out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErrOut, errOut); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
