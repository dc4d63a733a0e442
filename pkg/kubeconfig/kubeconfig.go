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

// Package kubeconfig turns a member's registration kubeconfig into a REST
// config, refusing what the hub must never act on: credentials that run a
// program on the hub (exec and auth-provider plugins), TLS without
// verification, and paths to files that exist only on the machine the
// kubeconfig was written on; and any path the credentials could travel in
// clear or through a third party (http:// servers, proxy-url).
package kubeconfig

import (
	"errors"
	"fmt"
	"net/url"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Parse validates data and returns the REST config of its current context.
// The kubeconfig must name one current context whose cluster and user are
// inline: server URL with certificate-authority-data (or a publicly trusted
// server), and token or client-certificate-data/client-key-data.
func Parse(data []byte) (*rest.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: not a valid kubeconfig: %w", err)
	}
	if err := Validate(cfg); err != nil {
		return nil, err
	}
	return clientcmd.NewNonInteractiveClientConfig(*cfg, cfg.CurrentContext, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
}

// Validate checks the current context of cfg against the rules of Parse and
// names the offending kubeconfig field.
func Validate(cfg *clientcmdapi.Config) error {
	if cfg.CurrentContext == "" {
		return errors.New("kubeconfig: current-context is not set")
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return fmt.Errorf("kubeconfig: current-context %q has no contexts entry", cfg.CurrentContext)
	}
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return fmt.Errorf("kubeconfig: context %q names cluster %q, which has no clusters entry", cfg.CurrentContext, ctx.Cluster)
	}
	user, ok := cfg.AuthInfos[ctx.AuthInfo]
	if !ok {
		return fmt.Errorf("kubeconfig: context %q names user %q, which has no users entry", cfg.CurrentContext, ctx.AuthInfo)
	}
	return errors.Join(validateCluster(ctx.Cluster, cluster), validateUser(ctx.AuthInfo, user))
}

func validateCluster(name string, c *clientcmdapi.Cluster) error {
	var errs []error
	switch u, err := url.Parse(c.Server); {
	case c.Server == "":
		errs = append(errs, fmt.Errorf("kubeconfig: clusters[%s].server is empty", name))
	case err != nil:
		errs = append(errs, fmt.Errorf("kubeconfig: clusters[%s].server is not a URL: %w", name, err))
	case u.Scheme != "https":
		errs = append(errs, fmt.Errorf("kubeconfig: clusters[%s].server must be an https:// URL, not %q: the credentials would travel in clear", name, u.Scheme+"://"))
	}
	if c.ProxyURL != "" {
		errs = append(errs, fmt.Errorf("kubeconfig: clusters[%s].proxy-url is not allowed: the hub talks to members directly, never through a proxy it did not choose", name))
	}
	if c.InsecureSkipTLSVerify {
		errs = append(errs, fmt.Errorf("kubeconfig: clusters[%s].insecure-skip-tls-verify is not allowed: the hub would send credentials to any server", name))
	}
	if c.CertificateAuthority != "" {
		errs = append(errs, fmt.Errorf("kubeconfig: clusters[%s].certificate-authority is a file path; use certificate-authority-data", name))
	}
	return errors.Join(errs...)
}

func validateUser(name string, u *clientcmdapi.AuthInfo) error {
	var errs []error
	refuse := func(field, why string) {
		errs = append(errs, fmt.Errorf("kubeconfig: users[%s].%s is not allowed: %s", name, field, why))
	}
	if u.Exec != nil {
		refuse("exec", "the hub never runs credential plugins")
	}
	if u.AuthProvider != nil {
		refuse("auth-provider", "the hub never runs credential plugins")
	}
	if u.TokenFile != "" {
		refuse("tokenFile", "a file path; use token")
	}
	if u.ClientCertificate != "" {
		refuse("client-certificate", "a file path; use client-certificate-data")
	}
	if u.ClientKey != "" {
		refuse("client-key", "a file path; use client-key-data")
	}
	if u.Username != "" || u.Password != "" {
		refuse("username/password", "basic authentication; use a token or a client certificate")
	}
	if u.Impersonate != "" || len(u.ImpersonateGroups) > 0 {
		refuse("as", "impersonation; register the identity itself")
	}
	hasCert := len(u.ClientCertificateData) > 0 && len(u.ClientKeyData) > 0
	if u.Token == "" && !hasCert && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("kubeconfig: users[%s] has no token and no client-certificate-data/client-key-data", name))
	}
	return errors.Join(errs...)
}
