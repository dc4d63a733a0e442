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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// A member that keeps failing to connect, here for as many attempts as 8
// minutes of failures make, is retried at least every 30 s: a fix is picked
// up within the README's bound, not after a 5-minute backoff.
func TestReconcileRetriesWithin30s(t *testing.T) {
	// Nothing listens on port 1 of the loopback: every attempt fails at
	// once, as a member whose API server is down does.
	secret := makeSecret(testName, kubeconfigData(t, func(c *clientcmdapi.Config) {
		c.Clusters["c"].Server = "https://127.0.0.1:1"
	})).Obj()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build()
	p := newTestProvider(&fakeClock{t: t0})
	p.opts.ConnectTimeout = 5 * time.Second
	close(p.ready)
	r := &secretReconciler{provider: p, hub: hub}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(secret)}
	var got []time.Duration
	for range 20 {
		res, err := r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatalf("Reconcile() error = %v", err)
		}
		got = append(got, res.RequeueAfter)
	}
	for i, d := range got {
		if d <= 0 || d > 30*time.Second {
			t.Errorf("attempt %d: RequeueAfter = %s, want within (0, 30s]; all: %v", i+1, d, got)
		}
	}
	m, _ := p.Member(testName)
	if m.Engaged || m.Reason != fleetv1.ClusterReasonUnreachable {
		t.Errorf("member = engaged %t, reason %q; want not engaged, %s", m.Engaged, m.Reason, fleetv1.ClusterReasonUnreachable)
	}
}
