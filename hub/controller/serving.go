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

package controller

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The metrics filter asks the hub's API server who a scraper is and whether
// it may get /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// MetricsServing is how the hub serves /metrics: the flags
// --metrics-bind-address, --metrics-secure and --metrics-cert-*.
type MetricsServing struct {
	// BindAddress is where /metrics listens; "0" turns it off.
	BindAddress string
	// Secure serves HTTPS and lets through only requests whose bearer
	// token the hub's API server authenticates (TokenReview) and allows to
	// get the non-resource URL /metrics (SubjectAccessReview). Off, it is
	// plain HTTP for anyone who reaches the port: for a hub on a laptop.
	Secure bool
	// CertDir holds the serving certificate and key, reloaded when they
	// change; empty: a self-signed certificate made at start, in memory.
	CertDir string
	// CertName and KeyName are the file names in CertDir.
	CertName, KeyName string
}

// Options are controller-runtime's metrics server options for s; an error
// names the flag that is wrong.
func (s MetricsServing) Options() (metricsserver.Options, error) {
	o := metricsserver.Options{BindAddress: s.BindAddress}
	if !s.Secure {
		if s.CertDir != "" {
			return o, errors.New("--metrics-cert-path needs --metrics-secure: plain HTTP has no certificate")
		}
		return o, nil
	}
	o.SecureServing = true
	o.FilterProvider = filters.WithAuthenticationAndAuthorization
	// HTTP/2 stays off: its stream reset flood (CVE-2023-44487) costs a
	// server more than a scrape is worth, and Prometheus scrapes over
	// HTTP/1.1 anyway.
	o.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	if s.CertDir == "" {
		return o, nil
	}
	// controller-runtime falls back to a self-signed certificate when the
	// files are missing: a typo in the mount would go unnoticed until a
	// scraper that verifies certificates fails.
	o.CertDir, o.CertName, o.KeyName = s.CertDir, s.CertName, s.KeyName
	var errs []error
	for _, f := range []struct{ flag, name string }{{"--metrics-cert-name", s.CertName}, {"--metrics-cert-key", s.KeyName}} {
		if _, err := os.Stat(filepath.Join(s.CertDir, f.name)); err != nil {
			errs = append(errs, fmt.Errorf("--metrics-cert-path %s with %s %s: %w", s.CertDir, f.flag, f.name, err))
		}
	}
	return o, errors.Join(errs...)
}
