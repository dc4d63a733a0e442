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
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/cert"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const adminToken = "member-admin-token-never-printed"

// testKubeconfig writes a kubeconfig with an unreachable hub (current
// context) and a member context whose user runs a plugin: the CLI may use
// any credential of the user's own, and a dry run contacts no cluster.
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

func execute(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestRegisterDryRun(t *testing.T) {
	kubeconfig, ca := testKubeconfig(t)
	for _, tc := range []struct {
		name   string
		args   []string
		golden string
	}{
		{
			name:   "yaml",
			args:   []string{"register", "eu-1", "--member-context", "member", "--label", "env=prod", "--label", "region=eu", "--dry-run", "-o", "yaml"},
			golden: "register-dry-run.yaml",
		},
		{
			name:   "json, work namespace and server",
			args:   []string{"register", "eu-1", "--member-context", "member-sso", "--work-namespace", "jobs", "--server", "https://eu-1-control-plane:6443", "--dry-run", "-o", "json"},
			golden: "register-dry-run.json",
		},
		{
			name:   "text",
			args:   []string{"register", "eu-1", "--member-context", "member", "--dry-run"},
			golden: "register-dry-run.txt",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := execute(t, append([]string{"--kubeconfig", kubeconfig}, tc.args...)...)
			if err != nil {
				t.Fatalf("register --dry-run: %v\n%s", err, errOut)
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

func TestRegisterDryRunJSONIsAList(t *testing.T) {
	kubeconfig, _ := testKubeconfig(t)
	out, _, err := execute(t, "--kubeconfig", kubeconfig, "register", "eu-1", "--member-context", "member", "--dry-run", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind string `json:"kind"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	var kinds []string
	for _, it := range list.Items {
		kinds = append(kinds, it.Kind)
	}
	want := []string{"Namespace", "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Secret"}
	if list.Kind != "List" || !cmp.Equal(want, kinds) {
		t.Errorf("-o json is a %s of %v, want a List of %v", list.Kind, kinds, want)
	}
}
