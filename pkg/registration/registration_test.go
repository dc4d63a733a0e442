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

package registration

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func kubeconfigData(t *testing.T, exec bool) []byte {
	t.Helper()
	cfg := &clientcmdapi.Config{
		CurrentContext: "member",
		Contexts:       map[string]*clientcmdapi.Context{"member": {Cluster: "c", AuthInfo: "u"}},
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: "https://10.0.0.1:6443", CertificateAuthorityData: []byte("ca")}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": {Token: "secret-token"}},
	}
	if exec {
		cfg.AuthInfos["u"].Exec = &clientcmdapi.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1"}
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParse(t *testing.T) {
	secret := func(annotations map[string]string, data []byte) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Labels: map[string]string{fleetv1.RegistrationLabel: "true", "env": "prod"}, Annotations: annotations},
			Data:       map[string][]byte{fleetv1.KubeconfigKey: data},
		}
	}
	good := kubeconfigData(t, false)
	testCases := map[string]struct {
		secret  *corev1.Secret
		want    Registration
		wantErr string
	}{
		"default work namespace": {
			secret: secret(nil, good),
			want:   Registration{Name: "eu-1", Labels: map[string]string{fleetv1.RegistrationLabel: "true", "env": "prod"}, Namespace: fleetv1.DefaultWorkNamespace, Kubeconfig: good},
		},
		"work namespace annotation": {
			secret: secret(map[string]string{fleetv1.NamespaceAnnotation: "jobs"}, good),
			want:   Registration{Name: "eu-1", Labels: map[string]string{fleetv1.RegistrationLabel: "true", "env": "prod"}, Namespace: "jobs", Kubeconfig: good},
		},
		"invalid work namespace": {secret: secret(map[string]string{fleetv1.NamespaceAnnotation: "Jobs!"}, good), wantErr: `annotation fleetjob.io/namespace: "Jobs!" is not a valid namespace name`},
		"no kubeconfig":          {secret: secret(nil, nil), wantErr: "data.kubeconfig is missing or empty"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.secret)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse() (-want +got):\n%s", diff)
			}
			got.Labels["env"] = "changed"
			if tc.secret.Labels["env"] != "prod" {
				t.Error("Parse() shares the Secret's labels: changing its result changed the Secret")
			}
		})
	}
}

func TestRESTConfig(t *testing.T) {
	limits := Limits{QPS: 50, Burst: 100, Timeout: 30 * time.Second}
	cfg, err := Registration{Name: "eu-1", Kubeconfig: kubeconfigData(t, false)}.RESTConfig(limits)
	if err != nil {
		t.Fatal(err)
	}
	if got := (Limits{QPS: cfg.QPS, Burst: cfg.Burst, Timeout: cfg.Timeout}); got != limits {
		t.Errorf("RESTConfig() limits = %+v, want %+v", got, limits)
	}
	if cfg.Host != "https://10.0.0.1:6443" || cfg.BearerToken != "secret-token" {
		t.Errorf("RESTConfig() = host %q, token %q; want the kubeconfig's", cfg.Host, cfg.BearerToken)
	}
	_, err = Registration{Name: "eu-1", Kubeconfig: kubeconfigData(t, true)}.RESTConfig(limits)
	if err == nil || !strings.Contains(err.Error(), "data.kubeconfig: kubeconfig: users[u].exec is not allowed") {
		t.Errorf("RESTConfig() of an exec kubeconfig: error = %v, want it refused naming the field", err)
	}
}
