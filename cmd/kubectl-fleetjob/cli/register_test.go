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
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const adminToken = "member-admin-token-never-printed"

// testKubeconfig writes a kubeconfig with an unreachable hub (current
// context) and a member context whose user runs a plugin: the CLI may use
// any credential of the user's own, and a dry run contacts no member.
// What a command reads from the hub, tests give it with a fake client.
func testKubeconfig(t *testing.T) (path string, ca []byte) {
	t.Helper()
	ca, _, err := cert.GenerateSelfSignedCertKey("member.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", CertificateAuthorityData: ca}
	cfg.Clusters["member"] = &clientcmdapi.Cluster{Server: "https://member.example:6443", CertificateAuthorityData: ca}
	cfg.AuthInfos["hub"] = &clientcmdapi.AuthInfo{Token: "hub-token"}
	cfg.AuthInfos["member"] = &clientcmdapi.AuthInfo{Token: adminToken}
	cfg.AuthInfos["sso"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "/nonexistent/sso-login", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "hub"}
	cfg.Contexts["member"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "member"}
	cfg.Contexts["member-sso"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "sso"}
	cfg.CurrentContext = "hub"
	path = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, ca
}

// execute runs the whole command, args after the command name, against
// the unreachable hub of kubeconfig: for what fails before the hub is
// asked anything.
func execute(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// runOn runs one subcommand, built by build on the options of kubeconfig
// (its hub context, namespace ops, the default registration namespace),
// with args; like the root command it prints no usage and returns errors.
func runOn(t *testing.T, kubeconfig string, build func(*options) *cobra.Command, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	o := &options{config: genericclioptions.NewConfigFlags(true), streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, registrationNamespace: hub.DefaultNamespace}
	o.config.KubeConfig, o.config.Namespace = ptr.To(kubeconfig), ptr.To("ops")
	cmd := build(o)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// fakeHub is a hub holding objs, whose every request must come with a
// deadline, as each command bounds what it asks of the hub.
func fakeHub(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) func() (client.WithWatch, error) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	bounded := func(ctx context.Context) {
		if _, ok := ctx.Deadline(); !ok {
			t.Errorf("a request to the hub without a deadline")
		}
	}
	return func() (client.WithWatch, error) {
		return interceptor.NewClient(interceptor.NewClient(c, funcs), interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				bounded(ctx)
				return c.Get(ctx, key, obj, opts...)
			},
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				bounded(ctx)
				return c.List(ctx, list, opts...)
			},
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				bounded(ctx)
				return c.Create(ctx, obj, opts...)
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				bounded(ctx)
				return c.Delete(ctx, obj, opts...)
			},
		}), nil
	}
}

func clusterSetOf(name string, level fleetv1.PodSecurityLevel) *fleetv1.ClusterSet {
	return &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: fleetv1.ClusterSetSpec{PodSecurity: level}}
}

// registerOn is `register` against a hub holding ClusterSet team-a at
// level restricted, ClusterSet maintenance that allows drains, and no
// ClusterSet default.
func registerOn(t *testing.T, kubeconfig string, funcs interceptor.Funcs) func(*options) *cobra.Command {
	maintenance := clusterSetOf("maintenance", fleetv1.PodSecurityBaseline)
	maintenance.Spec.AllowDrain = true
	hubC := fakeHub(t, funcs, clusterSetOf("team-a", fleetv1.PodSecurityRestricted), maintenance)
	return func(o *options) *cobra.Command { o.hub = hubC; return newRegister(o) }
}

func TestRegisterDryRun(t *testing.T) {
	kubeconfig, ca := testKubeconfig(t)
	const noObject = "cluster set default has no ClusterSet object: its clusters get the default Pod Security level baseline\n"
	for _, tc := range []struct {
		name       string
		args       []string
		golden     string
		wantErrOut string
	}{
		{
			name:       "yaml",
			args:       []string{"eu-1", "--member-context", "member", "--label", "env=prod", "--label", "region=eu", "--dry-run=client", "-o", "yaml"},
			golden:     "register-dry-run.yaml",
			wantErrOut: noObject,
		},
		{
			name:       "json, work namespace and server",
			args:       []string{"eu-1", "--member-context", "member-sso", "--work-namespace", "jobs", "--server", "https://eu-1-control-plane:6443", "--dry-run=client", "-o", "json"},
			golden:     "register-dry-run.json",
			wantErrOut: noObject,
		},
		{
			name:   "text",
			args:   []string{"eu-1", "--member-context", "member", "--dry-run=client"},
			golden: "register-dry-run.txt",
		},
		{
			name:   "yaml, a cluster set with a ClusterSet",
			args:   []string{"eu-2", "--member-context", "member", "--cluster-set", "team-a", "--dry-run=client", "-o", "yaml"},
			golden: "register-dry-run-cluster-set.yaml",
		},
		{
			name:   "text, a cluster set with a ClusterSet",
			args:   []string{"eu-2", "--member-context", "member", "--cluster-set", "team-a", "--dry-run=client"},
			golden: "register-dry-run-cluster-set.txt",
		},
		{
			name:   "text, a cluster set that allows drains",
			args:   []string{"eu-4", "--member-context", "member", "--cluster-set", "maintenance", "--dry-run=client"},
			golden: "register-dry-run-drain.txt",
		},
		{
			name:   "yaml, a cluster set that allows drains",
			args:   []string{"eu-4", "--member-context", "member", "--cluster-set", "maintenance", "--dry-run=client", "-o", "yaml"},
			golden: "register-dry-run-drain.yaml",
		},
		{
			name:       "yaml, Kubernetes' own namespace",
			args:       []string{"eu-3", "--member-context", "member", "--work-namespace", "default", "--dry-run=client", "-o", "yaml"},
			golden:     "register-dry-run-default-namespace.yaml",
			wantErrOut: "namespace default is Kubernetes' own: register leaves its Pod Security labels alone; the hub still holds pod templates to level baseline of cluster set default\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runOn(t, kubeconfig, registerOn(t, kubeconfig, interceptor.Funcs{}), tc.args...)
			if err != nil {
				t.Fatalf("register --dry-run: %v\n%s", err, errOut)
			}
			if diff := cmp.Diff(tc.wantErrOut, errOut); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			for _, secret := range []string{adminToken, "hub-token"} {
				if strings.Contains(out+errOut, secret) {
					t.Errorf("the output shows a token of the user's kubeconfig:\n%s", out)
				}
			}
			// The CA is new on every run; the golden file names it <CA>.
			got := strings.ReplaceAll(out, base64.StdEncoding.EncodeToString(ca), "<CA>")
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("output (-%s +got):\n%s", path, diff)
			}
		})
	}
}

// TestRegisterDryRunJSONIsAList: -o json is a List of the objects, the
// drain ClusterRole and its binding among them only where the set allows
// drains.
func TestRegisterDryRunJSONIsAList(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	for _, tc := range []struct {
		set       string
		wantNames []string
	}{
		{set: "default", wantNames: []string{
			"Namespace/fleetjob-system", "Namespace/fleetjob-hub", "ServiceAccount/for-fleetjob-system", "Role/fleetjob-hub", "RoleBinding/fleetjob-hub",
			"ClusterRole/fleetjob-hub-nodes", "ClusterRoleBinding/fleetjob-hub-nodes-fleetjob-system", "Secret/eu-1"}},
		{set: "maintenance", wantNames: []string{
			"Namespace/fleetjob-system", "Namespace/fleetjob-hub", "ServiceAccount/for-fleetjob-system", "Role/fleetjob-hub", "RoleBinding/fleetjob-hub",
			"ClusterRole/fleetjob-hub-nodes", "ClusterRoleBinding/fleetjob-hub-nodes-fleetjob-system",
			"ClusterRole/fleetjob-hub-drain", "ClusterRoleBinding/fleetjob-hub-drain-fleetjob-system", "Secret/eu-1"}},
	} {
		t.Run(tc.set, func(t *testing.T) {
			out, _, err := runOn(t, kubeconfig, registerOn(t, kubeconfig, interceptor.Funcs{}), "eu-1", "--member-context", "member", "--cluster-set", tc.set, "--dry-run=client", "-o", "json")
			if err != nil {
				t.Fatal(err)
			}
			var list struct {
				Kind  string `json:"kind"`
				Items []struct {
					Kind     string `json:"kind"`
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
				} `json:"items"`
			}
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("-o json is not JSON: %v\n%s", err, out)
			}
			var names []string
			for _, it := range list.Items {
				names = append(names, it.Kind+"/"+it.Metadata.Name)
			}
			if list.Kind != "List" || !cmp.Equal(tc.wantNames, names) {
				t.Errorf("-o json is a %s of %v, want a List of %v", list.Kind, names, tc.wantNames)
			}
		})
	}
}

// TestRegisterNeedsTheSetLevel: without the set's level from the hub,
// register prints nothing, even in a dry run.
func TestRegisterNeedsTheSetLevel(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	refused := interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
		return errors.New("connection refused")
	}}
	out, _, err := runOn(t, kubeconfig, registerOn(t, kubeconfig, refused), "eu-2", "--member-context", "member", "--cluster-set", "team-a", "--dry-run=client", "-o", "yaml")
	if diff := cmp.Diff("reading clusterset team-a on the hub: connection refused", errString(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if out != "" {
		t.Errorf("printed %q after an error, want nothing", out)
	}
}
