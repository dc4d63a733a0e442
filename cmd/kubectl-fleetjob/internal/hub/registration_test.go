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
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

const (
	regLabel = "sigs.k8s.io/multicluster-runtime-kubeconfig"
	nsAnno   = "fleetjob.io/namespace"
)

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

func TestParseLabels(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    map[string]string
		wantErr string
	}{
		{in: nil, want: map[string]string{}},
		{in: []string{"env=prod", "topology.kubernetes.io/region=eu", "empty="}, want: map[string]string{"env": "prod", "topology.kubernetes.io/region": "eu", "empty": ""}},
		{in: []string{"env"}, wantErr: `--label "env": want key=value`},
		{in: []string{"bad key=x"}, wantErr: `--label "bad key=x": key`},
		{in: []string{"env=no spaces"}, wantErr: `--label "env=no spaces": value`},
		{in: []string{regLabel + "=false"}, wantErr: "is set by register itself"},
	} {
		t.Run(strings.Join(tc.in, ","), func(t *testing.T) {
			got, err := ParseLabels(tc.in)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("labels (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestSecret(t *testing.T) {
	r := Registration{Name: "eu-1", Labels: map[string]string{"env": "prod"}, Namespace: "jobs", Kubeconfig: []byte("kc")}
	data, err := json.Marshal(Secret("fleetjob-system", r))
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Secret
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "eu-1", Namespace: "fleetjob-system",
			Labels:      map[string]string{regLabel: "true", "env": "prod"},
			Annotations: map[string]string{nsAnno: "jobs"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"kubeconfig": []byte("kc")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Secret (-want +got):\n%s", diff)
	}
	if r.Labels[regLabel] != "" {
		t.Errorf("Secret changed the caller's labels: %v", r.Labels)
	}
}

func TestRead(t *testing.T) {
	secret := func(annotations map[string]string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Labels: map[string]string{regLabel: "true", "env": "prod"}, Annotations: annotations}, Data: data}
	}
	kc := map[string][]byte{"kubeconfig": []byte("kc")}
	for _, tc := range []struct {
		name    string
		in      *corev1.Secret
		want    Registration
		wantErr string
	}{
		{name: "default namespace", in: secret(nil, kc), want: Registration{Name: "eu-1", Labels: map[string]string{"env": "prod"}, Namespace: "fleetjob-system", Kubeconfig: []byte("kc")}},
		{name: "annotated namespace", in: secret(map[string]string{nsAnno: "jobs"}, kc), want: Registration{Name: "eu-1", Labels: map[string]string{"env": "prod"}, Namespace: "jobs", Kubeconfig: []byte("kc")}},
		{name: "bad namespace", in: secret(map[string]string{nsAnno: "Not_A_Namespace"}, kc), wantErr: "is not a valid namespace name"},
		{name: "no kubeconfig", in: secret(nil, nil), wantErr: "data.kubeconfig is missing or empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(tc.in)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("Read (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestApply(t *testing.T) {
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-password", Namespace: "fleetjob-system"}, Data: map[string][]byte{"password": []byte("x")}}
	handMade := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Namespace: "fleetjob-system", Labels: map[string]string{regLabel: "true"}}, Data: map[string][]byte{"kubeconfig": []byte("old")}}
	for _, tc := range []struct {
		name        string
		objects     []runtime.Object
		reg         string
		wantCreated bool
		wantErr     string
	}{
		{name: "new", reg: "eu-1", wantCreated: true},
		{name: "hand-made registration taken over", objects: []runtime.Object{handMade}, reg: "eu-1"},
		{name: "foreign secret refused", objects: []runtime.Object{foreign}, reg: "db-password", wantErr: "is not a cluster registration: choose another cluster name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset(tc.objects...)
			created, err := Apply(context.Background(), cs, "fleetjob-system", Registration{Name: tc.reg, Namespace: "fleetjob-system", Kubeconfig: []byte("new")}, "test", nil)
			if diff := cmp.Diff(tc.wantErr, errString(err), substring); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if created != tc.wantCreated {
				t.Errorf("created = %v, want %v", created, tc.wantCreated)
			}
			if err != nil {
				return
			}
			got, err := cs.CoreV1().Secrets("fleetjob-system").Get(context.Background(), tc.reg, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Data["kubeconfig"]) != "new" || got.Labels[regLabel] != "true" {
				t.Errorf("stored Secret %v %q, want the label and the new kubeconfig", got.Labels, got.Data["kubeconfig"])
			}
		})
	}
}

func TestCheckNamespace(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-system"}}
	if err := CheckNamespace(context.Background(), fake.NewClientset(ns), "fleetjob-system"); err != nil {
		t.Errorf("CheckNamespace = %v, want nil", err)
	}
	err := CheckNamespace(context.Background(), fake.NewClientset(), "fleetjob-system")
	if diff := cmp.Diff("namespace fleetjob-system does not exist on the hub: install fleetjob", errString(err), substring); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}
