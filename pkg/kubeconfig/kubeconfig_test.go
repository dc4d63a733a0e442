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

package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// goodConfig is an inline kubeconfig with a token; tests break one field.
func goodConfig() *clientcmdapi.Config {
	return &clientcmdapi.Config{
		CurrentContext: "member",
		Contexts:       map[string]*clientcmdapi.Context{"member": {Cluster: "c", AuthInfo: "u"}},
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: "https://10.0.0.1:6443", CertificateAuthorityData: []byte("ca")}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": {Token: "secret-token"}},
	}
}

func TestParse(t *testing.T) {
	testCases := map[string]struct {
		mutate    func(*clientcmdapi.Config)
		wantError string
	}{
		"inline token": {mutate: func(*clientcmdapi.Config) {}},
		"inline client cert": {mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: []byte("c"), ClientKeyData: []byte("k")}
		}},
		"no current context": {mutate: func(c *clientcmdapi.Config) { c.CurrentContext = "" }, wantError: "current-context is not set"},
		"dangling context":   {mutate: func(c *clientcmdapi.Config) { c.CurrentContext = "other" }, wantError: `current-context "other" has no contexts entry`},
		"dangling cluster":   {mutate: func(c *clientcmdapi.Config) { c.Contexts["member"].Cluster = "x" }, wantError: `names cluster "x"`},
		"dangling user":      {mutate: func(c *clientcmdapi.Config) { c.Contexts["member"].AuthInfo = "x" }, wantError: `names user "x"`},
		"empty server":       {mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].Server = "" }, wantError: "clusters[c].server is empty"},
		"http server":        {mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].Server = "http://10.0.0.1:8080" }, wantError: `clusters[c].server must be an https:// URL, not "http://"`},
		"bare host":          {mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].Server = "10.0.0.1:6443" }, wantError: "clusters[c].server"},
		"proxy url":          {mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].ProxyURL = "http://proxy:3128" }, wantError: "clusters[c].proxy-url is not allowed"},
		"insecure":           {mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].InsecureSkipTLSVerify = true }, wantError: "clusters[c].insecure-skip-tls-verify is not allowed"},
		"CA file":            {mutate: func(c *clientcmdapi.Config) { c.Clusters["c"].CertificateAuthority = "/etc/ca.crt" }, wantError: "clusters[c].certificate-authority is a file path"},
		"exec plugin": {mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["u"].Exec = &clientcmdapi.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1"}
		}, wantError: "users[u].exec is not allowed"},
		"auth provider": {mutate: func(c *clientcmdapi.Config) {
			c.AuthInfos["u"].AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc"}
		}, wantError: "users[u].auth-provider is not allowed"},
		"token file":       {mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].TokenFile = "/var/run/token" }, wantError: "users[u].tokenFile is not allowed"},
		"client cert file": {mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].ClientCertificate = "/c.crt" }, wantError: "users[u].client-certificate is not allowed"},
		"client key file":  {mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].ClientKey = "/c.key" }, wantError: "users[u].client-key is not allowed"},
		"basic auth":       {mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].Username = "admin" }, wantError: "users[u].username/password is not allowed"},
		"impersonation":    {mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].Impersonate = "system:admin" }, wantError: "users[u].as is not allowed"},
		"no credentials":   {mutate: func(c *clientcmdapi.Config) { c.AuthInfos["u"].Token = "" }, wantError: "users[u] has no token"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			cfg := goodConfig()
			tc.mutate(cfg)
			data, err := clientcmd.Write(*cfg)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := Parse(data)
			if tc.wantError == "" {
				if err != nil {
					t.Fatalf("Parse() error = %v", err)
				}
				if rc.Host != "https://10.0.0.1:6443" {
					t.Errorf("Parse() host = %q", rc.Host)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantError) {
				t.Fatalf("Parse() error = %v, want it to contain %q", err, tc.wantError)
			}
			if strings.Contains(err.Error(), "secret-token") {
				t.Errorf("Parse() error leaks the token: %v", err)
			}
		})
	}
}

func TestParseNeverRunsExecPlugin(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	cfg := goodConfig()
	cfg.AuthInfos["u"].Exec = &clientcmdapi.ExecConfig{
		Command: "/bin/sh", Args: []string{"-c", "touch " + marker},
		APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(data); err == nil {
		t.Fatal("Parse() accepted an exec plugin")
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("exec plugin ran: %s exists (stat error %v)", marker, err)
	}
}

func TestParseGarbage(t *testing.T) {
	if _, err := Parse([]byte("{not yaml")); err == nil || !strings.Contains(err.Error(), "not a valid kubeconfig") {
		t.Errorf("Parse(garbage) error = %v", err)
	}
}
