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
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/fleet"
)

// TestUnboundTarget: a retry reaches a cluster only if its registration,
// read now, puts it in a set bound to the retry's namespace. The registry
// is empty here, as at hub start-up or while a cluster moves between sets:
// it must not be what decides.
func TestUnboundTarget(t *testing.T) {
	const regNS = "fleetjob-system"
	registration := func(name, set string) *corev1.Secret {
		labels := map[string]string{fleetv1.RegistrationLabel: "true"}
		if set != "" {
			labels[fleetv1.ClusterSetLabel] = set
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: regNS, Name: name, Labels: labels}}
	}
	bound := &fleetv1.ClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "set-a"}, Spec: fleetv1.ClusterSetBindingSpec{ClusterSet: "set-a"}}
	testCases := map[string]struct {
		objs        []client.Object
		getErr      error
		wantRefused string // a substring; "" when the retry may go on
		wantErr     bool
	}{
		"registered in a bound set": {
			objs: []client.Object{registration("eu", "set-a")},
		},
		"moved to a set not bound": {
			objs:        []client.Object{registration("eu", "set-b")},
			wantRefused: "cluster eu of the parent run is in cluster set set-b, which is not bound to namespace team-a",
		},
		"registration gone: refused, not skipped": {
			wantRefused: "cluster eu of the parent run is not registered now",
		},
		"registration unreadable: an error, retried": {
			objs: []client.Object{registration("eu", "set-a")}, getErr: errors.New("etcdserver: request timed out"), wantErr: true,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			_ = fleetv1.AddToScheme(scheme)
			hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(tc.objs, bound)...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*corev1.Secret); ok && tc.getErr != nil {
						return tc.getErr
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			r := &ClusterJobReconciler{shared: &shared{Hub: hub, Members: clusters.New(clusters.Options{Namespace: regNS}),
				Options: Options{Tenancy: true, RegistrationNamespace: regNS}}}
			refused, err := r.unboundTarget(context.Background(), "team-a", []fleet.RetryTarget{{Cluster: "eu"}})
			if (err != nil) != tc.wantErr {
				t.Fatalf("unboundTarget() error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantRefused == "" && refused != "" || !strings.Contains(refused, tc.wantRefused) {
				t.Errorf("unboundTarget() = %q, want %q", refused, tc.wantRefused)
			}
		})
	}
}
