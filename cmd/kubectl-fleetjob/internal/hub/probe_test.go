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

package hub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func registrationWith(name, kubeconfig string) corev1.Secret {
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{regLabel: "true", "env": "dev"}},
		Data:       map[string][]byte{"kubeconfig": []byte(kubeconfig)},
	}
}

const kubeconfigTemplate = `apiVersion: v1
kind: Config
current-context: m
contexts: [{name: m, context: {cluster: m, user: m}}]
clusters: [{name: m, cluster: {server: %q}}]
users: [{name: m, user: %s}]
`

// TestProbeNeverRunsPlugins: a registration with an exec plugin is
// reported, and the plugin never runs.
func TestProbeNeverRunsPlugins(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "plugin.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	exec := fmt.Sprintf(`{exec: {apiVersion: client.authentication.k8s.io/v1, command: %q, interactiveMode: Never}}`, script)
	authProvider := `{auth-provider: {name: oidc, config: {idp-issuer-url: "https://127.0.0.1:1"}}}`
	secrets := []corev1.Secret{
		registrationWith("exec", fmt.Sprintf(kubeconfigTemplate, "https://127.0.0.1:1", exec)),
		registrationWith("auth-provider", fmt.Sprintf(kubeconfigTemplate, "https://127.0.0.1:1", authProvider)),
		registrationWith("token-file", fmt.Sprintf(kubeconfigTemplate, "https://127.0.0.1:1", `{tokenFile: /var/run/token}`)),
		registrationWith("garbage", "not: [a kubeconfig"),
	}
	got := ProbeAll(context.Background(), secrets)
	want := []ClusterInfo{
		{Name: "exec", Labels: map[string]string{"env": "dev"}, Namespace: "fleetjob-system", Reason: "InvalidRegistration", Message: "users[m].exec is not allowed"},
		{Name: "auth-provider", Labels: map[string]string{"env": "dev"}, Namespace: "fleetjob-system", Reason: "InvalidRegistration", Message: "users[m].auth-provider is not allowed"},
		{Name: "token-file", Labels: map[string]string{"env": "dev"}, Namespace: "fleetjob-system", Reason: "InvalidRegistration", Message: "users[m].tokenFile is not allowed"},
		{Name: "garbage", Labels: map[string]string{"env": "dev"}, Namespace: "fleetjob-system", Reason: "InvalidRegistration", Message: "not a valid kubeconfig"},
	}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Message" }, substring)); diff != "" {
		t.Errorf("ProbeAll (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the exec plugin of a registration ran")
	}
}

func TestProbeUnreachable(t *testing.T) {
	// Nothing listens on port 1: the connection is refused at once.
	s := registrationWith("down", fmt.Sprintf(kubeconfigTemplate, "https://127.0.0.1:1", `{token: abc}`))
	got := Probe(context.Background(), &s)
	want := ClusterInfo{Name: "down", Labels: map[string]string{"env": "dev"}, Namespace: "fleetjob-system", Reason: "Unreachable"}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(ClusterInfo{}, "Message")); diff != "" {
		t.Errorf("Probe (-want +got):\n%s", diff)
	}
	if got.Message == "" || strings.Contains(got.Message, "abc") {
		t.Errorf("Message %q is empty or shows the token", got.Message)
	}
}
