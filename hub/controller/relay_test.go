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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// TestClusterJobGone checks what garbage collection may take for gone: a
// ClusterJob the cache has not seen yet, created during the pass, is alive
// as the API server says; one recreated under the same name is not the run.
func TestClusterJobGone(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := fleetv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: "team-a", Name: "disk-clean"}
	cj := &fleetv1.ClusterJob{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "uid-1"}}
	empty := func() client.Client { return fake.NewClientBuilder().WithScheme(scheme).Build() }
	with := func() client.Client {
		return fake.NewClientBuilder().WithScheme(scheme).WithObjects(cj.DeepCopy()).Build()
	}
	testCases := map[string]struct {
		cache, live client.Client
		uid         string
		want        bool
		wantErr     bool
	}{
		"in the cache with its UID: alive, the API server is not asked":    {cache: with(), live: nil, uid: "uid-1"},
		"created during the pass: not cached yet, alive on the API server": {cache: empty(), live: with(), uid: "uid-1"},
		"gone from both":                {cache: empty(), live: empty(), uid: "uid-1", want: true},
		"recreated under the same name": {cache: with(), live: with(), uid: "uid-0", want: true},
		"the API server does not answer": {cache: empty(), uid: "uid-1", wantErr: true, live: interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).Build(), interceptor.Funcs{
			Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return errors.New("connection refused")
			},
		})},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			r := &MemberRunReconciler{shared: &shared{Hub: tc.cache}}
			if tc.live != nil {
				r.HubReader = tc.live
			}
			got, err := r.clusterJobGone(context.Background(), key, tc.uid)
			if (err != nil) != tc.wantErr {
				t.Fatalf("clusterJobGone() error = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("clusterJobGone() = %v, want %v", got, tc.want)
			}
		})
	}
}
