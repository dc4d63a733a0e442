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

package member

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fleetjob/fleetjob/pkg/kubeconfig"
)

const testCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func TestServerURL(t *testing.T) {
	for _, tc := range []struct {
		name, host, override string
		want, wantErr        string
	}{
		{name: "context server", host: "https://10.0.0.1:6443", want: "https://10.0.0.1:6443"},
		{name: "override", host: "https://127.0.0.1:38211", override: "https://member-control-plane:6443", want: "https://member-control-plane:6443"},
		{name: "http context", host: "http://10.0.0.1:8080", wantErr: `the member context's server "http://10.0.0.1:8080" is not https`},
		{name: "http override", host: "https://10.0.0.1", override: "http://m:6443", wantErr: `--server "http://m:6443" is not https`},
		{name: "not a URL", host: "https://10.0.0.1", override: "member:6443", wantErr: `--server "member:6443" is not a URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ServerURL(&rest.Config{Host: tc.host}, tc.override)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got != tc.want {
				t.Errorf("ServerURL = %q, want %q", got, tc.want)
			}
		})
	}
}

// substring compares an expected error fragment with an error string.
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

func TestCAData(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, []byte("from-file"), 0o600); err != nil {
		t.Fatal(err)
	}
	rootCA := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: "default"}, Data: map[string]string{"ca.crt": "published"}}
	for _, tc := range []struct {
		name    string
		cfg     rest.Config
		objects []runtime.Object
		want    string
		wantErr string
	}{
		{name: "inline", cfg: rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: []byte("inline"), CAFile: caFile}}, want: "inline"},
		{name: "file", cfg: rest.Config{TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}}, want: "from-file"},
		{name: "missing file", cfg: rest.Config{TLSClientConfig: rest.TLSClientConfig{CAFile: "/nonexistent/ca.crt"}}, wantErr: "reading the member context's certificate-authority"},
		{name: "publicly trusted", cfg: rest.Config{}, want: ""},
		{name: "insecure, published root CA", cfg: rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, objects: []runtime.Object{rootCA}, want: "published"},
		{name: "insecure, nothing published", cfg: rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, wantErr: "use a member context with certificate-authority-data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CAData(context.Background(), &tc.cfg, fake.NewClientset(tc.objects...))
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if string(got) != tc.want {
				t.Errorf("CAData = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBuildKubeconfig(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ep        Endpoint
		token     Secret
		wantHost  string
		wantCA    []byte
		wantError string
	}{
		{name: "CA inline", ep: Endpoint{Server: "https://10.0.0.1:6443", CAData: []byte(testCA)}, token: "tok", wantHost: "https://10.0.0.1:6443", wantCA: []byte(testCA)},
		{name: "server override", ep: Endpoint{Server: "https://member-control-plane:6443", CAData: []byte(testCA)}, token: "tok", wantHost: "https://member-control-plane:6443", wantCA: []byte(testCA)},
		{name: "publicly trusted server", ep: Endpoint{Server: "https://k8s.example.com"}, token: "tok", wantHost: "https://k8s.example.com"},
		{name: "no server", ep: Endpoint{CAData: []byte(testCA)}, token: "tok", wantError: "server is empty"},
		{name: "no token", ep: Endpoint{Server: "https://10.0.0.1:6443"}, wantError: "has no token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := BuildKubeconfig("eu-1", "fleetjob-system", tc.ep, tc.token)
			if diff := cmp.Diff(tc.wantError, errString(err), substring); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			cfg, err := kubeconfig.Parse(data)
			if err != nil {
				t.Fatalf("the hub's parser refuses the kubeconfig: %v", err)
			}
			got := struct {
				Host, Token string
				CA          []byte
			}{cfg.Host, cfg.BearerToken, cfg.CAData}
			want := struct {
				Host, Token string
				CA          []byte
			}{tc.wantHost, string(tc.token), tc.wantCA}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("REST config (-want +got):\n%s", diff)
			}
			raw, err := clientcmd.Load(data)
			if err != nil {
				t.Fatal(err)
			}
			ctx := raw.Contexts[raw.CurrentContext]
			if raw.CurrentContext != "eu-1" || ctx.Namespace != "fleetjob-system" {
				t.Errorf("context %q namespace %q, want eu-1 and fleetjob-system", raw.CurrentContext, ctx.Namespace)
			}
			if c := raw.Clusters[ctx.Cluster]; c.CertificateAuthority != "" || c.InsecureSkipTLSVerify {
				t.Errorf("cluster entry refers to a file or skips verification: %+v", c)
			}
		})
	}
}

func TestSecretNeverPrints(t *testing.T) {
	tok := Token{Value: "s3cr3t-value", Expires: time.Unix(0, 0)}
	for _, format := range []string{"%v", "%+v", "%s", "%#v", "%q"} {
		if got := fmt.Sprintf(format, tok); strings.Contains(got, "s3cr3t") {
			t.Errorf("Sprintf(%q) shows the token: %s", format, got)
		}
	}
}

func TestMintToken(t *testing.T) {
	cs := fake.NewClientset()
	expires := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	var asked int64
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		req := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest)
		asked = *req.Spec.ExpirationSeconds
		name := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).Name
		if a.GetSubresource() != "token" || a.GetNamespace() != "fleetjob-hub" {
			t.Errorf("asked %s %s of %s in %s, want a token in fleetjob-hub, where no Job runs", a.GetVerb(), a.GetSubresource(), name, a.GetNamespace())
		}
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "t", ExpirationTimestamp: metav1.NewTime(expires)}}, nil
	})
	tok, err := MintToken(context.Background(), cs, "w", 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if asked != 48*3600 || string(tok.Value) != "t" || !tok.Expires.Equal(expires) {
		t.Errorf("MintToken asked %ds and got %q expiring %s; want 172800s, t, %s", asked, string(tok.Value), tok.Expires, expires)
	}
}
