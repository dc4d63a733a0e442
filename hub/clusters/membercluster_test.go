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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// hubWrites counts the writes a client makes, by kind of write.
type hubWrites map[string]int

func (w hubWrites) interceptor() interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			w["create"]++
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			w["patch"]++
			return c.Patch(ctx, obj, patch, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			w["update"]++
			return c.Update(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			w["delete"]++
			return c.Delete(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			w["status patch"]++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			w["status update"]++
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}
}

// TestMemberClusterReconcile follows one registration from before the
// registry read it to its deletion, and checks what each reconcile writes
// to the hub: a MemberCluster is written once per change, never when
// nothing changed, and goes with its registration.
func TestMemberClusterReconcile(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := fleetv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	const name = "reconciled"
	secret := makeSecret(name, kubeconfigData(t, nil)).Label("env", "prod").Obj()
	orphan := &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "unregistered-while-no-hub-ran"}}
	writes := hubWrites{}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret, orphan).
		WithStatusSubresource(&fleetv1.MemberCluster{}).WithInterceptorFuncs(writes.interceptor()).Build()
	clk := &fakeClock{t: t0}
	p := newTestProvider(clk)
	recorder := events.NewFakeRecorder(10)
	p.opts.Recorder = recorder
	r := &memberClusterReconciler{provider: p, hub: hub}
	cl := &fakeCluster{id: 1}
	var stop cancelRecorder
	reg := registration{name: name, labels: secret.Labels, namespace: testNamespace, hash: "h1", tokenExpiry: at(10 * day)}
	expiry := float64(at(10 * day).Unix())

	type want struct {
		writes hubWrites
		// requeue is the reconcile's RequeueAfter.
		requeue time.Duration
		// exists: the MemberCluster exists after; ready and labels are its
		// Ready status and labels then.
		exists bool
		ready  metav1.ConditionStatus
		labels map[string]string
		events []string
		// readySeries and tokenSeries are the values of
		// fleetjob_member_cluster_ready and
		// fleetjob_member_cluster_token_expiry_seconds for the member; -1
		// when there is no such series.
		readySeries, tokenSeries float64
	}
	steps := []struct {
		name string
		at   time.Duration
		key  string
		do   func()
		want want
	}{
		{name: "the registry has not read the Secret yet: nothing", key: name, do: func() {},
			want: want{readySeries: -1, tokenSeries: -1}},
		{name: "a MemberCluster without registration, at start: deleted", key: orphan.Name, do: func() {},
			want: want{writes: hubWrites{"delete": 1}, readySeries: -1, tokenSeries: -1}},
		{name: "registered: created, and warned of its token", at: time.Second, key: name, do: func() { p.upsert(reg) },
			want: want{writes: hubWrites{"create": 1, "status patch": 1}, requeue: 10*day - time.Second, exists: true, ready: metav1.ConditionUnknown,
				labels: map[string]string{"env": "prod"}, tokenSeries: expiry, events: []string{"Warning TokenExpiresSoon cluster reconciled: the registered token expires at 2026-05-16T07:08:09Z: " +
					"run `kubectl fleetjob register` for the cluster again before then to rotate it"}}},
		{name: "nothing changed: no write", at: 2 * time.Second, key: name, do: func() {},
			want: want{requeue: 10*day - 2*time.Second, exists: true, ready: metav1.ConditionUnknown, labels: map[string]string{"env": "prod"}, tokenSeries: expiry}},
		{name: "an hour later, nothing changed: no write", at: time.Hour, key: name, do: func() {},
			want: want{requeue: 10*day - time.Hour, exists: true, ready: metav1.ConditionUnknown, labels: map[string]string{"env": "prod"}, tokenSeries: expiry}},
		{name: "engaged: one status write", at: time.Hour, key: name, do: func() {
			p.reviewed(name, nil)
			p.replace(reg, cl, stop.cancel)
			p.engaged(name, cl)
		}, want: want{writes: hubWrites{"status patch": 1}, requeue: 10*day - time.Hour, exists: true, ready: metav1.ConditionTrue,
			labels: map[string]string{"env": "prod"}, readySeries: 1, tokenSeries: expiry}},
		{name: "probed healthy again: no write", at: 2 * time.Hour, key: name, do: func() { p.probed(name, cl, nil) },
			want: want{requeue: 10*day - 2*time.Hour, exists: true, ready: metav1.ConditionTrue, labels: map[string]string{"env": "prod"}, readySeries: 1, tokenSeries: expiry}},
		{name: "relabelled: one label write", at: 2 * time.Hour, key: name, do: func() {
			reg.labels = map[string]string{fleetv1.RegistrationLabel: "true", "env": "staging"}
			p.upsert(reg)
		}, want: want{writes: hubWrites{"patch": 1}, requeue: 10*day - 2*time.Hour, exists: true, ready: metav1.ConditionTrue,
			labels: map[string]string{"env": "staging"}, readySeries: 1, tokenSeries: expiry}},
		{name: "the token expires: one write, one event", at: 10 * day, key: name, do: func() {},
			want: want{writes: hubWrites{"status patch": 1}, exists: true, ready: metav1.ConditionTrue, labels: map[string]string{"env": "staging"}, readySeries: 1, tokenSeries: expiry,
				events: []string{"Warning TokenExpired cluster reconciled: the registered token expired at 2026-05-16T07:08:09Z: " +
					"run `kubectl fleetjob register` for the cluster again to rotate it"}}},
		{name: "unregistered: deleted, series gone", at: 11 * day, key: name, do: func() {
			if err := hub.Delete(context.Background(), secret); err != nil {
				t.Fatal(err)
			}
			p.remove(name)
		}, want: want{writes: hubWrites{"delete": 1}, readySeries: -1, tokenSeries: -1}},
	}
	for i, s := range steps {
		clk.t = at(s.at)
		s.do()
		clear(writes)
		res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: s.key}})
		if err != nil {
			t.Fatalf("step %d (%s): Reconcile error = %v", i, s.name, err)
		}
		got := want{writes: writes, requeue: res.RequeueAfter}
		mc := &fleetv1.MemberCluster{}
		switch err := hub.Get(context.Background(), client.ObjectKey{Name: s.key}, mc); {
		case err == nil:
			got.exists, got.labels = true, mc.Labels
			if c := meta.FindStatusCondition(mc.Status.Conditions, fleetv1.MemberClusterReady); c != nil {
				got.ready = c.Status
			}
		case !apierrors.IsNotFound(err):
			t.Fatal(err)
		}
		for len(recorder.Events) > 0 {
			got.events = append(got.events, <-recorder.Events)
		}
		got.readySeries, got.tokenSeries = series(t, memberClusterReady, s.key), series(t, memberClusterTokenExpiry, s.key)
		opts := []cmp.Option{cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()}
		if diff := cmp.Diff(s.want, got, opts...); diff != "" {
			t.Errorf("step %d (%s) (-want +got):\n%s", i, s.name, diff)
		}
	}
}

// series is the value of vec's series for member, -1 when it has none.
func series(t *testing.T, vec *prometheus.GaugeVec, member string) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	vec.Collect(ch)
	close(ch)
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		for _, l := range d.GetLabel() {
			if l.GetName() == "member_cluster" && l.GetValue() == member {
				return d.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// TestPublishedChanges checks who hears of which change: the MemberCluster
// publisher hears of every connection change and of what a probe read; the
// hub's reconcilers only of the former, for a probe every few minutes per
// member must not wake every unfinished run.
func TestPublishedChanges(t *testing.T) {
	clk := &fakeClock{t: t0}
	p := newTestProvider(clk)
	cl := &fakeCluster{id: 1}
	var stop cancelRecorder
	published := func() []string {
		if len(p.published.signal) == 0 {
			return nil
		}
		names, err := p.published.wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	reg := testReg("h1", nil)
	steps := []struct {
		name                    string
		do                      func()
		wantChanges, wantPublic []string
	}{
		{name: "registered", do: func() { p.upsert(reg) }, wantChanges: []string{testName}, wantPublic: []string{testName}},
		{name: "access reviewed", do: func() { p.reviewed(testName, []string{"list nodes"}) }, wantPublic: []string{testName}},
		{name: "the same review again", do: func() { p.reviewed(testName, []string{"list nodes"}) }},
		{name: "refused", do: func() { p.failed(testName, errDenied) }, wantChanges: []string{testName}, wantPublic: []string{testName}},
		{name: "engaged", do: func() {
			p.reviewed(testName, nil)
			p.replace(reg, cl, stop.cancel)
			p.engaged(testName, cl)
		}, wantChanges: []string{testName}, wantPublic: []string{testName}},
		{name: "inventory read", do: func() { p.inventoried(testName, cl, "v1.36.3", 3) }, wantPublic: []string{testName}},
		{name: "a new token", do: func() {
			reg.tokenExpiry = at(day)
			p.upsert(reg)
		}, wantPublic: []string{testName}},
	}
	for i, s := range steps {
		s.do()
		if diff := cmp.Diff(s.wantChanges, takeChanges(t, p), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step %d (%s): the reconcilers' changes (-want +got):\n%s", i, s.name, diff)
		}
		if diff := cmp.Diff(s.wantPublic, published(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step %d (%s): the publisher's changes (-want +got):\n%s", i, s.name, diff)
		}
	}
}
