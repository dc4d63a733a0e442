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

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

const (
	testName      = "member-a"
	testNamespace = "fleetjob-system"
	testServer    = "https://10.0.0.1:6443"
	// refusedMessage is what client-go reports for a member whose API
	// server is down.
	refusedMessage = "dial tcp 10.0.0.1:6443: connection refused"
)

// t0 is the fake clock's start; at(d) is d after it.
var t0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// fakeClock is injected as Provider.now.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// newTestProvider returns a Provider whose clock reads clk.
func newTestProvider(clk *fakeClock) *Provider {
	p := New(Options{Namespace: testNamespace, QPS: 50, Burst: 100, RequestTimeout: 10 * time.Second,
		ConnectTimeout: 30 * time.Second, HealthInterval: 10 * time.Second})
	p.now = clk.now
	return p
}

// fakeCluster stands for a connected member; only its identity matters.
type fakeCluster struct {
	cluster.Cluster
	id int
}

// cancelRecorder counts calls of its cancel func, a member's stop.
type cancelRecorder struct{ calls int }

func (c *cancelRecorder) cancel() { c.calls++ }

var _ context.CancelFunc = (&cancelRecorder{}).cancel

// takeChanges returns the names notified since the last call, or nil if
// nothing was notified. Every transition notifies synchronously, so a
// pending wake-up is already in the channel when it returns.
func takeChanges(t *testing.T, p *Provider) []string {
	t.Helper()
	if len(p.notifier.signal) == 0 {
		return nil
	}
	names, err := p.WaitForChanges(context.Background())
	if err != nil {
		t.Fatalf("WaitForChanges() error = %v", err)
	}
	return names
}

// kubeconfigData is an inline token kubeconfig for testServer, changed by
// mutate, as a registration Secret carries it.
func kubeconfigData(t *testing.T, mutate func(*clientcmdapi.Config)) []byte {
	t.Helper()
	cfg := &clientcmdapi.Config{
		CurrentContext: "member",
		Contexts:       map[string]*clientcmdapi.Context{"member": {Cluster: "c", AuthInfo: "u"}},
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: testServer, CertificateAuthorityData: []byte("ca")}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": {Token: "token-1"}},
	}
	if mutate != nil {
		mutate(cfg)
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// secretWrapper builds registration Secrets.
type secretWrapper struct{ corev1.Secret }

// makeSecret is a registration Secret named name in testNamespace carrying
// kubeconfig in data.kubeconfig.
func makeSecret(name string, kubeconfig []byte) *secretWrapper {
	return &secretWrapper{corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, Labels: map[string]string{fleetv1.RegistrationLabel: "true"}},
		Data:       map[string][]byte{fleetv1.KubeconfigKey: kubeconfig},
	}}
}

// Label sets metadata.labels[key].
func (w *secretWrapper) Label(key, value string) *secretWrapper {
	w.Labels[key] = value
	return w
}

// Annotation sets metadata.annotations[key].
func (w *secretWrapper) Annotation(key, value string) *secretWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[key] = value
	return w
}

// WithData sets data[key].
func (w *secretWrapper) WithData(key string, value []byte) *secretWrapper {
	w.Secret.Data[key] = value
	return w
}

// WithoutData removes data[key].
func (w *secretWrapper) WithoutData(key string) *secretWrapper {
	delete(w.Secret.Data, key)
	return w
}

// Obj returns the Secret.
func (w *secretWrapper) Obj() *corev1.Secret { return &w.Secret }
