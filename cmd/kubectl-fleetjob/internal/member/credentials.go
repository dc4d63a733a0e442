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
	"net/url"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/fleetjob/fleetjob/pkg/kubeconfig"
)

// Secret is a credential. It prints as <redacted>, so that no format verb
// ever shows it by mistake; string(s) is the value.
type Secret string

// String redacts the credential.
func (Secret) String() string { return "<redacted>" }

// GoString redacts the credential for %#v.
func (Secret) GoString() string { return "<redacted>" }

// Token is a ServiceAccount token and when the member says it expires.
type Token struct {
	Value   Secret
	Expires time.Time
}

// MinTokenDuration is the shortest token the TokenRequest API issues.
const MinTokenDuration = 10 * time.Minute

// MintToken asks the member for a token of the hub's ServiceAccount for
// work namespace ns (in HubNamespace), valid for d. The member may shorten it (--service-account-max-token-expiration);
// Expires is what it granted.
func MintToken(ctx context.Context, cs kubernetes.Interface, ns string, d time.Duration) (Token, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(d / time.Second))}}
	got, err := cs.CoreV1().ServiceAccounts(HubNamespace).CreateToken(ctx, ServiceAccountName(ns), req, metav1.CreateOptions{})
	if err != nil {
		return Token{}, fmt.Errorf("minting a token for serviceaccount %s/%s with the TokenRequest API: %w", HubNamespace, ServiceAccountName(ns), err)
	}
	return Token{Value: Secret(got.Status.Token), Expires: got.Status.ExpirationTimestamp.Time}, nil
}

// Endpoint is where and how the hub reaches a member.
type Endpoint struct {
	// Server is the member API server URL as the hub sees it.
	Server string
	// CAData is the PEM bundle that verifies the server; empty for a
	// publicly trusted server.
	CAData []byte
}

// ServerURL is override when set, and otherwise the server of the member
// context cfg. It must be https: the hub sends a bearer token.
func ServerURL(cfg *rest.Config, override string) (string, error) {
	server, what := cfg.Host, "the member context's server"
	if override != "" {
		server, what = override, "--server"
	}
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%s %q is not a URL like https://host:6443", what, server)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("%s %q is not https: the hub would send its token in clear", what, server)
	}
	return server, nil
}

// rootCANamespace holds the kube-root-ca.crt ConfigMap the member's
// controller manager publishes in every namespace.
const rootCANamespace = "default"

// CAData is the certificate authority of the member context cfg, inline. A
// context that skips verification has none to give: the member's published
// kube-root-ca.crt is used then, read with cs.
func CAData(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface) ([]byte, error) {
	switch {
	case len(cfg.CAData) > 0:
		return cfg.CAData, nil
	case cfg.CAFile != "":
		data, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the member context's certificate-authority: %w", err)
		}
		return data, nil
	case !cfg.Insecure:
		return nil, nil // a publicly trusted server: the system roots verify it
	}
	cm, err := cs.CoreV1().ConfigMaps(rootCANamespace).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	if err == nil && cm.Data["ca.crt"] != "" {
		return []byte(cm.Data["ca.crt"]), nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading the member's kube-root-ca.crt: %w", err)
	}
	return nil, fmt.Errorf("the member context skips TLS verification (insecure-skip-tls-verify) and the member publishes no kube-root-ca.crt in namespace %s: use a member context with certificate-authority-data", rootCANamespace)
}

// BuildKubeconfig is the kubeconfig the hub stores for cluster: server and
// CA inline, the token, and the work namespace as the context's namespace.
// It is checked with pkg/kubeconfig.Parse, the hub's own rules.
func BuildKubeconfig(cluster, namespace string, ep Endpoint, token Secret) ([]byte, error) {
	user := HubNamespace + "@" + cluster
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{Server: ep.Server, CertificateAuthorityData: ep.CAData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: string(token)}
	cfg.Contexts[cluster] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: user, Namespace: namespace}
	cfg.CurrentContext = cluster
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig: %w", err)
	}
	if _, err := kubeconfig.Parse(data); err != nil {
		return nil, fmt.Errorf("the kubeconfig built for the hub breaks its rules: %w", err)
	}
	return data, nil
}
