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

package clusters

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

func TestParseRegistration(t *testing.T) {
	good := kubeconfigData(t, nil)
	exec := kubeconfigData(t, func(c *clientcmdapi.Config) {
		c.AuthInfos["u"].Exec = &clientcmdapi.ExecConfig{Command: "aws", APIVersion: "client.authentication.k8s.io/v1"}
	})
	testCases := map[string]struct {
		secret        *corev1.Secret
		wantNamespace string
		wantLabels    map[string]string
		wantError     string
	}{
		"default namespace": {
			secret:        makeSecret(testName, good).Label("env", "prod").Obj(),
			wantNamespace: fleetv1.DefaultWorkNamespace,
			wantLabels:    map[string]string{fleetv1.RegistrationLabel: "true", "env": "prod"},
		},
		"namespace annotation": {
			secret:        makeSecret(testName, good).Annotation(fleetv1.NamespaceAnnotation, "team-a").Obj(),
			wantNamespace: "team-a",
			wantLabels:    map[string]string{fleetv1.RegistrationLabel: "true"},
		},
		"invalid namespace annotation": {
			secret:    makeSecret(testName, good).Annotation(fleetv1.NamespaceAnnotation, "Team_A").Obj(),
			wantError: `annotation fleetjob.io/namespace: "Team_A" is not a valid namespace name`,
		},
		"empty namespace annotation": {
			secret:    makeSecret(testName, good).Annotation(fleetv1.NamespaceAnnotation, "").Obj(),
			wantError: `annotation fleetjob.io/namespace: "" is not a valid namespace name`,
		},
		"missing kubeconfig": {
			secret:    makeSecret(testName, good).WithoutData(fleetv1.KubeconfigKey).Obj(),
			wantError: "data.kubeconfig is missing or empty",
		},
		"empty kubeconfig": {
			secret:    makeSecret(testName, nil).Obj(),
			wantError: "data.kubeconfig is missing or empty",
		},
		"kubeconfig under another key": {
			secret:    makeSecret(testName, good).WithoutData(fleetv1.KubeconfigKey).WithData("config", good).Obj(),
			wantError: "data.kubeconfig is missing or empty",
		},
		"not a kubeconfig": {
			secret:    makeSecret(testName, []byte("{not yaml")).Obj(),
			wantError: "data.kubeconfig: kubeconfig: not a valid kubeconfig",
		},
		"exec plugin": {
			secret:    makeSecret(testName, exec).Obj(),
			wantError: "data.kubeconfig: kubeconfig: users[u].exec is not allowed",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			reg, err := parseRegistration(tc.secret)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("parseRegistration() error = %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseRegistration() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantNamespace, reg.namespace); diff != "" {
				t.Errorf("namespace (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLabels, reg.labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if reg.name != testName {
				t.Errorf("name = %q, want %q", reg.name, testName)
			}
			if reg.config == nil || reg.config.Host != testServer || reg.config.BearerToken != "token-1" {
				t.Errorf("config = %+v, want host %s with the registered token", reg.config, testServer)
			}
			if len(reg.hash) != 64 {
				t.Errorf("hash = %q, want a hex SHA-256", reg.hash)
			}
		})
	}
}

// The hash decides whether an engaged member must reconnect: it must change
// with what the connection is built from, and with nothing else.
func TestParseRegistrationHash(t *testing.T) {
	base := func() *secretWrapper { return makeSecret(testName, kubeconfigData(t, nil)).Label("env", "prod") }
	testCases := map[string]struct {
		secret     *corev1.Secret
		wantChange bool
	}{
		"same Secret": {secret: base().Obj()},
		"labels changed": {
			secret: base().Label("env", "staging").Label("zone", "b").Obj(),
		},
		"default namespace named explicitly": {
			secret: base().Annotation(fleetv1.NamespaceAnnotation, fleetv1.DefaultWorkNamespace).Obj(),
		},
		"unrelated annotation": {
			secret: base().Annotation("example.com/owner", "team-a").Obj(),
		},
		"token rotated": {
			secret: base().WithData(fleetv1.KubeconfigKey, kubeconfigData(t, func(c *clientcmdapi.Config) {
				c.AuthInfos["u"].Token = "token-2"
			})).Obj(),
			wantChange: true,
		},
		"server moved": {
			secret: base().WithData(fleetv1.KubeconfigKey, kubeconfigData(t, func(c *clientcmdapi.Config) {
				c.Clusters["c"].Server = "https://10.0.0.2:6443"
			})).Obj(),
			wantChange: true,
		},
		"namespace changed": {
			secret:     base().Annotation(fleetv1.NamespaceAnnotation, "team-a").Obj(),
			wantChange: true,
		},
	}
	want, err := parseRegistration(base().Obj())
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got, err := parseRegistration(tc.secret)
			if err != nil {
				t.Fatal(err)
			}
			if changed := got.hash != want.hash; changed != tc.wantChange {
				t.Errorf("hash changed = %t, want %t (base %s, got %s)", changed, tc.wantChange, want.hash, got.hash)
			}
		})
	}
}

// Hashing must not write into the Secret's kubeconfig bytes, which may be
// shared with a cached object.
func TestParseRegistrationKeepsData(t *testing.T) {
	data := kubeconfigData(t, nil)
	spare := make([]byte, len(data), len(data)+64)
	copy(spare, data)
	if _, err := parseRegistration(makeSecret(testName, spare).Obj()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(make([]byte, 64), spare[len(data):cap(spare)]); diff != "" {
		t.Errorf("bytes past data.kubeconfig changed (-want +got):\n%s", diff)
	}
}

func TestAccessErrorNamesEveryDenial(t *testing.T) {
	denied := []string{"list jobs.batch in namespace team-a", "watch nodes"}
	msg := (&accessError{denied: denied}).Error()
	for _, d := range denied {
		if !strings.Contains(msg, d) {
			t.Errorf("Error() = %q, want it to name %q", msg, d)
		}
	}
}

func TestClassify(t *testing.T) {
	jobs := schema.GroupResource{Group: "batch", Resource: "jobs"}
	testCases := map[string]struct {
		err  error
		want string
	}{
		"access denied": {
			err:  &accessError{denied: []string{"list nodes"}},
			want: fleetv1.ClusterReasonForbidden,
		},
		"access denied, wrapped": {
			err:  fmt.Errorf("checking access: %w", &accessError{denied: []string{"list nodes"}}),
			want: fleetv1.ClusterReasonForbidden,
		},
		"API Forbidden": {
			err:  apierrors.NewForbidden(jobs, "", errors.New("no RBAC policy matched")),
			want: fleetv1.ClusterReasonForbidden,
		},
		"API Forbidden, wrapped": {
			err:  fmt.Errorf("syncing *v1.Job: %w", apierrors.NewForbidden(jobs, "", errors.New("no RBAC policy matched"))),
			want: fleetv1.ClusterReasonForbidden,
		},
		"Unauthorized": {
			err:  apierrors.NewUnauthorized("token expired"),
			want: fleetv1.ClusterReasonUnauthorized,
		},
		"connection refused": {
			err:  &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
			want: fleetv1.ClusterReasonUnreachable,
		},
		"deadline": {
			err:  context.DeadlineExceeded,
			want: fleetv1.ClusterReasonUnreachable,
		},
		"engage timeout": {
			err:  fmt.Errorf("engaging timed out: %w", context.DeadlineExceeded),
			want: fleetv1.ClusterReasonUnreachable,
		},
		"server error": {
			err:  apierrors.NewInternalError(errors.New("etcd down")),
			want: fleetv1.ClusterReasonUnreachable,
		},
		"cache sync": {
			err:  errors.New("caches did not sync within the connect timeout"),
			want: fleetv1.ClusterReasonUnreachable,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, classify(tc.err)); diff != "" {
				t.Errorf("classify(%v) (-want +got):\n%s", tc.err, diff)
			}
		})
	}
}

// A member refused or unreachable when it connects is retried at least every
// 30 s however long it has been failing, so that a fix made at any time is
// picked up within the README's 30 s.
func TestBackoff(t *testing.T) {
	testCases := map[string]struct {
		attempts int
		want     time.Duration
	}{
		"first failure":  {attempts: 1, want: 2 * time.Second},
		"second":         {attempts: 2, want: 4 * time.Second},
		"third":          {attempts: 3, want: 8 * time.Second},
		"fourth":         {attempts: 4, want: 16 * time.Second},
		"fifth, capped":  {attempts: 5, want: 30 * time.Second},
		"sixth":          {attempts: 6, want: 30 * time.Second},
		"eighth":         {attempts: 8, want: 30 * time.Second},
		"after 8 min":    {attempts: 20, want: 30 * time.Second},
		"hundredth":      {attempts: 100, want: 30 * time.Second},
		"largest int":    {attempts: math.MaxInt, want: 30 * time.Second},
		"none recorded":  {attempts: 0, want: 2 * time.Second},
		"negative count": {attempts: -1, want: 2 * time.Second},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, backoff(tc.attempts)); diff != "" {
				t.Errorf("backoff(%d) (-want +got):\n%s", tc.attempts, diff)
			}
		})
	}
}

// A member's caches hold only what fleetjob owns in the work namespace, and
// nodes.
func TestClusterOptions(t *testing.T) {
	var opts cluster.Options
	clusterOptions("team-a", &spoke.Informers{})(&opts)
	owned := labels.Set{fleetv1.ManagedByLabel: fleetv1.ManagedByValue}
	var sawJob, sawConfigMap, sawNode bool
	for obj, by := range opts.Cache.ByObject {
		switch obj.(type) {
		case *batchv1.Job, *corev1.ConfigMap:
			sawJob = sawJob || isJob(obj)
			sawConfigMap = sawConfigMap || !isJob(obj)
			if _, ok := by.Namespaces["team-a"]; !ok || len(by.Namespaces) != 1 {
				t.Errorf("%T namespaces = %v, want only team-a", obj, by.Namespaces)
			}
			if by.Label == nil || !by.Label.Matches(owned) || by.Label.Matches(labels.Set{}) {
				t.Errorf("%T label selector = %v, want %s", obj, by.Label, owned)
			}
		case *corev1.Node:
			sawNode = true
		default:
			t.Errorf("unexpected cached kind %T", obj)
		}
	}
	if !sawJob || !sawConfigMap || !sawNode {
		t.Errorf("cached kinds: Job %t, ConfigMap %t, Node %t; want all", sawJob, sawConfigMap, sawNode)
	}
	if opts.Cache.DefaultTransform == nil {
		t.Error("DefaultTransform is nil, want managed fields stripped")
	}
}

func isJob(obj any) bool {
	_, ok := obj.(*batchv1.Job)
	return ok
}
