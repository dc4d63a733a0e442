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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// served is what a MetricsServing's options make the metrics server do.
type served struct {
	Secure, Filtered           bool
	Protocols                  []string
	CertDir, CertName, KeyName string
}

// TestMetricsServingOptions: secure serving is HTTPS behind the
// authentication and authorization filter, HTTP/1.1 only; a certificate
// directory must hold the files it names, and plain HTTP takes none.
func TestMetricsServingOptions(t *testing.T) {
	certs := t.TempDir()
	for _, f := range []string{"tls.crt", "tls.key"} {
		if err := os.WriteFile(filepath.Join(certs, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	testCases := map[string]struct {
		s       MetricsServing
		want    served
		wantErr string
	}{
		"secure, self-signed": {
			s:    MetricsServing{BindAddress: ":8443", Secure: true, CertName: "tls.crt", KeyName: "tls.key"},
			want: served{Secure: true, Filtered: true, Protocols: []string{"http/1.1"}},
		},
		"secure, a mounted certificate": {
			s:    MetricsServing{BindAddress: ":8443", Secure: true, CertDir: certs, CertName: "tls.crt", KeyName: "tls.key"},
			want: served{Secure: true, Filtered: true, Protocols: []string{"http/1.1"}, CertDir: certs, CertName: "tls.crt", KeyName: "tls.key"},
		},
		"secure, the key is not where the flags say": {
			s:       MetricsServing{BindAddress: ":8443", Secure: true, CertDir: certs, CertName: "tls.crt", KeyName: "key.pem"},
			wantErr: "--metrics-cert-key key.pem",
		},
		"plain HTTP": {
			s:    MetricsServing{BindAddress: "127.0.0.1:8080"},
			want: served{},
		},
		"plain HTTP with a certificate": {
			s:       MetricsServing{BindAddress: ":8080", CertDir: certs},
			wantErr: "--metrics-cert-path needs --metrics-secure",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			o, err := tc.s.Options()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Options() error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Options() error = %v", err)
			}
			if o.BindAddress != tc.s.BindAddress {
				t.Errorf("BindAddress = %q, want %q", o.BindAddress, tc.s.BindAddress)
			}
			got := served{Secure: o.SecureServing, Filtered: o.FilterProvider != nil, CertDir: o.CertDir, CertName: o.CertName, KeyName: o.KeyName}
			cfg := &tls.Config{}
			for _, f := range o.TLSOpts {
				f(cfg)
			}
			got.Protocols = cfg.NextProtos
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}
