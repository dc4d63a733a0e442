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

package spoke

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// staleGet makes c answer NotFound for every Get, like a cache that has not
// seen an object yet.
var staleGet = interceptor.Funcs{
	Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	},
}

// missingNamespace answers NotFound to Creates in the work namespace until
// the namespace is created; creating it fails with nsErr when set.
func missingNamespace(nsErr error) interceptor.Funcs {
	created := false
	return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if _, ok := obj.(*corev1.Namespace); ok {
			if nsErr != nil {
				return nsErr
			}
			created = true
			return c.Create(ctx, obj, opts...)
		}
		if !created {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, obj.GetNamespace())
		}
		return c.Create(ctx, obj, opts...)
	}}
}

func foreignConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: naming.PlanName(testUID), Namespace: testNamespace},
		Data:       map[string]string{planKey: `{"groups":[]}`},
	}
}

func allOf(nodes ...string) plan.Plan {
	return plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: nodes}}}
}

func TestEnsurePlan(t *testing.T) {
	testCases := map[string]struct {
		objs     []client.Object
		funcs    interceptor.Funcs
		cj       *fleetv1.ClusterJob
		nodes    []corev1.Node
		wantPlan plan.Plan
		wantErr  string
	}{
		"computes and stores a new plan": {
			cj:       makeClusterJob("disk-clean").Batch(2).Obj(),
			nodes:    readyNodes("c", "a", "b"),
			wantPlan: plan.Plan{Groups: []plan.Group{{Name: "batch-1", Nodes: []string{"a", "b"}}, {Name: "batch-2", Nodes: []string{"c"}}}},
		},
		"stored plan wins over the nodes now": {
			objs:     []client.Object{planObject(allOf("a"))},
			cj:       makeClusterJob("disk-clean").Obj(),
			nodes:    readyNodes("a", "b"),
			wantPlan: allOf("a"),
		},
		"AlreadyExists reads the stored plan live": {
			objs:     []client.Object{planObject(allOf("a"))},
			funcs:    staleGet,
			cj:       makeClusterJob("disk-clean").Obj(),
			nodes:    readyNodes("a", "b"),
			wantPlan: allOf("a"),
		},
		"foreign ConfigMap under the plan's name": {
			objs:    []client.Object{foreignConfigMap()},
			cj:      makeClusterJob("disk-clean").Obj(),
			nodes:   readyNodes("a"),
			wantErr: "ConfigMap fleetjob-system/" + naming.PlanName(testUID) + " exists but does not belong to ClusterJob " + string(testUID),
		},
		"foreign ConfigMap found on AlreadyExists": {
			objs:    []client.Object{foreignConfigMap()},
			funcs:   staleGet,
			cj:      makeClusterJob("disk-clean").Obj(),
			nodes:   readyNodes("a"),
			wantErr: "ConfigMap fleetjob-system/" + naming.PlanName(testUID) + " exists but does not belong to ClusterJob " + string(testUID),
		},
		"namespace missing: created, then the plan": {
			funcs:    missingNamespace(nil),
			cj:       makeClusterJob("disk-clean").Obj(),
			nodes:    readyNodes("a"),
			wantPlan: allOf("a"),
		},
		"namespace missing and may not be created": {
			funcs:   missingNamespace(apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, testNamespace, nil)),
			cj:      makeClusterJob("disk-clean").Obj(),
			nodes:   readyNodes("a"),
			wantErr: "namespace fleetjob-system is missing in cluster member-1 and the registered identity may not create it: run `kubectl fleetjob register member-1` again",
		},
		"namespace missing, creating it fails otherwise": {
			funcs:   missingNamespace(apierrors.NewServiceUnavailable("etcd down")),
			cj:      makeClusterJob("disk-clean").Obj(),
			nodes:   readyNodes("a"),
			wantErr: "creating the work namespace fleetjob-system: etcd down",
		},
		"other create error": {
			funcs: interceptor.Funcs{Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, obj.GetName(), nil)
			}},
			cj:      makeClusterJob("disk-clean").Obj(),
			nodes:   readyNodes("a"),
			wantErr: "is forbidden",
		},
		"invalid spec": {
			cj:      makeClusterJob("disk-clean").Batch(0).Obj(),
			nodes:   readyNodes("a"),
			wantErr: "planning cluster member-1: spec.strategy.batch.size",
		},
		"plan too large for 16 ConfigMaps": {
			cj: makeClusterJob("disk-clean").Obj(),
			// Random names do not compress: 90,000 of 253 characters are
			// more than 16 ConfigMaps hold.
			nodes:   readyNodes(randomNames(90000, 253)...),
			wantErr: "compressed, more than the 14745600 that 16 ConfigMaps hold",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithObjects(tc.objs...).Build()
			c := interceptor.NewClient(live, tc.funcs)
			got, err := Member{Client: c, Live: live, Run: testRun(tc.cj)}.EnsurePlan(context.Background(), tc.nodes)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("EnsurePlan() error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("EnsurePlan() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantPlan, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("EnsurePlan() mismatch (-want +got):\n%s", diff)
			}
			stored, found, err := ReadPlan(context.Background(), live, testRun(tc.cj))
			if err != nil || !found {
				t.Fatalf("reading the stored plan: found %v, error %v", found, err)
			}
			if diff := cmp.Diff(tc.wantPlan, stored, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("stored plan mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEnsurePlanFreezes runs EnsurePlan twice: a node that joins between the
// calls never changes the started run.
func TestEnsurePlanFreezes(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	run := testRun(makeClusterJob("disk-clean").Obj())
	first, err := Member{Client: c, Live: c, Run: run}.EnsurePlan(context.Background(), readyNodes("a", "b"))
	if err != nil {
		t.Fatalf("first EnsurePlan() error = %v", err)
	}
	second, err := Member{Client: c, Live: c, Run: run}.EnsurePlan(context.Background(), readyNodes("a", "b", "c"))
	if err != nil {
		t.Fatalf("second EnsurePlan() error = %v", err)
	}
	if diff := cmp.Diff(allOf("a", "b"), first); diff != "" {
		t.Errorf("first plan mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second plan differs from the first (-first +second):\n%s", diff)
	}
}

func TestEnsurePlanConfigMap(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	run := testRun(makeClusterJob("disk-clean").Obj())
	if _, err := (Member{Client: c, Live: c, Run: run}).EnsurePlan(context.Background(), readyNodes("a")); err != nil {
		t.Fatalf("EnsurePlan() error = %v", err)
	}
	var got corev1.ConfigMap
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: naming.PlanName(testUID)}, &got); err != nil {
		t.Fatalf("getting the plan ConfigMap: %v", err)
	}
	want := corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      naming.PlanName(testUID),
			Namespace: testNamespace,
			Labels: map[string]string{
				fleetv1.ManagedByLabel:     fleetv1.ManagedByValue,
				fleetv1.ClusterJobUIDLabel: string(testUID),
				fleetv1.ComponentLabel:     "plan",
				fleetv1.ClusterLabel:       testCluster,
				fleetv1.HubLabel:           testHub,
			},
			Annotations: map[string]string{
				fleetv1.ClusterJobAnnotation: "team-a/disk-clean",
				fleetv1.ClusterAnnotation:    testCluster,
			},
		},
		Immutable: ptr.To(true),
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion"), cmpopts.IgnoreFields(metav1.TypeMeta{}, "Kind", "APIVersion"),
		cmpopts.IgnoreFields(corev1.ConfigMap{}, "BinaryData")); diff != "" {
		t.Errorf("plan ConfigMap mismatch (-want +got):\n%s", diff)
	}
	if keys := slices.Collect(maps.Keys(got.BinaryData)); !slices.Equal(keys, []string{"plan.json.gz"}) {
		t.Errorf("plan ConfigMap binaryData keys = %v, want [plan.json.gz]", keys)
	}
	var stored plan.Plan
	if err := decodeDocument(&got, planKey, &stored); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(allOf("a"), stored); diff != "" {
		t.Errorf("stored plan (-want +got):\n%s", diff)
	}
}

// TestLargeClusterFits checks that a 10,000-node cluster with random
// 63-character node names fits: its plan and its full results record.
func TestLargeClusterFits(t *testing.T) {
	names := randomNames(10000, 63)
	p := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: names}}}
	cm, err := onePlanConfigMap(testRun(makeClusterJob("disk-clean").Obj()), p)
	if err != nil {
		t.Fatalf("onePlanConfigMap() error = %v", err)
	}
	nodes := map[string]NodeResult{}
	for _, n := range names {
		nodes[n] = NodeResult{Phase: NodeSucceeded, Start: 1764600000, Finish: 1764600042, Started: true}
	}
	res := ResultsOf(nodes)
	enc, err := encodeRecord(res) // in segments, as the hub writes it
	if err != nil {
		t.Fatal(err)
	}
	record := map[string][]byte{resultsKey + compressedSuffix: enc.document()}
	for what, size := range map[string]int{"plan": documentSize(cm.BinaryData), "results record": documentSize(record)} {
		t.Logf("%s of 10,000 nodes: %d KiB", what, size>>10)
		if size > maxPartBytes {
			t.Errorf("the %s takes %d bytes, more than the %d a ConfigMap holds", what, size, maxPartBytes)
		}
	}
}

// TestDecodePlan checks how a stored plan is read: compressed, or as a hub
// before compression stored it (its run goes on after an upgrade), and
// never when it is another run's or damaged.
func TestDecodePlan(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	stored := allOf("a", "b")
	with := func(edit func(cm *corev1.ConfigMap)) *corev1.ConfigMap {
		cm := planObject(stored)
		edit(cm)
		return cm
	}
	bomb, err := encodeDocument(planKey, strings.Repeat(" ", maxDocumentBytes))
	if err != nil {
		t.Fatal(err)
	}
	testCases := map[string]struct {
		cm      *corev1.ConfigMap
		want    plan.Plan
		wantErr string
	}{
		"compressed": {cm: planObject(stored), want: stored},
		"uncompressed, from an older hub": {cm: with(func(cm *corev1.ConfigMap) {
			cm.BinaryData, cm.Data = nil, map[string]string{planKey: `{"groups":[{"name":"all","nodes":["a","b"]}]}`}
		}), want: stored},
		"another run's": {cm: with(func(cm *corev1.ConfigMap) { cm.Labels[fleetv1.ClusterJobUIDLabel] = "other" }),
			wantErr: "does not belong to ClusterJob " + string(testUID)},
		"no plan in it":      {cm: with(func(cm *corev1.ConfigMap) { cm.BinaryData = nil }), wantErr: "has no plan.json"},
		"not JSON":           {cm: with(func(cm *corev1.ConfigMap) { cm.BinaryData, cm.Data = nil, map[string]string{planKey: "{"} }), wantErr: "decoding plan.json"},
		"not gzip":           {cm: with(func(cm *corev1.ConfigMap) { cm.BinaryData[planKey+".gz"] = []byte("{}") }), wantErr: "decoding plan.json"},
		"huge once inflated": {cm: with(func(cm *corev1.ConfigMap) { cm.BinaryData = bomb }), wantErr: "more than 67108864 bytes once decompressed"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got, err := decodePlan(context.Background(), nil, tc.cm, run, nil)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("decodePlan() error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decodePlan() (-want +got):\n%s", diff)
			}
		})
	}
}

// randomNames returns n distinct node names of length size, from a fixed
// seed: they compress as badly as real names ever would.
func randomNames(n, size int) []string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	rng := rand.New(rand.NewPCG(1, 2))
	names := make([]string, n)
	for i := range names {
		b := make([]byte, size)
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		names[i] = string(b)
	}
	return names
}

// onePlanConfigMap is the plan ConfigMap of p for run, which must fit in
// one.
func onePlanConfigMap(run Run, p plan.Plan) (*corev1.ConfigMap, error) {
	cm, parts, err := planConfigMaps(run, p)
	if err == nil && len(parts) > 0 {
		err = fmt.Errorf("the plan takes %d ConfigMaps", len(parts)+1)
	}
	return cm, err
}

// planObject is the plan ConfigMap EnsurePlan stores for the test run.
func planObject(p plan.Plan) *corev1.ConfigMap {
	cm, err := onePlanConfigMap(testRun(makeClusterJob("disk-clean").Obj()), p)
	if err != nil {
		panic(err)
	}
	return cm
}

func TestErrorReason(t *testing.T) {
	gr := schema.GroupResource{Resource: "jobs"}
	testCases := map[string]struct {
		err           error
		wantReason    string
		wantPermanent bool
	}{
		"namespace missing": {err: fmt.Errorf("storing the plan: %w", &NamespaceMissingError{Namespace: "ns", Cluster: "c"}), wantReason: fleetv1.ReasonWorkNamespaceMissing},
		"plan too large":    {err: fmt.Errorf("storing: %w", &PermanentError{Reason: fleetv1.ReasonPlanTooLarge, Err: errors.New("big")}), wantReason: fleetv1.ReasonPlanTooLarge, wantPermanent: true},
		"forbidden":         {err: fmt.Errorf("creating Job: %w", apierrors.NewForbidden(gr, "j", errors.New("RBAC"))), wantReason: fleetv1.ClusterReasonForbidden},
		"timeout":           {err: context.DeadlineExceeded, wantReason: fleetv1.ReasonMemberError},
		"server error":      {err: apierrors.NewInternalError(errors.New("boom")), wantReason: fleetv1.ReasonMemberError},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			reason, permanent := ErrorReason(tc.err)
			if reason != tc.wantReason || permanent != tc.wantPermanent {
				t.Errorf("ErrorReason() = %q, %v; want %q, %v", reason, permanent, tc.wantReason, tc.wantPermanent)
			}
		})
	}
}

// TestPlansDecodeOnce checks that a plan is decoded once per ConfigMap, and
// that a plan taken from the cache is still checked to be the run's.
func TestPlansDecodeOnce(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	var plans Plans
	cm := planObject(allOf("a", "b"))
	cm.UID = "plan-uid-1"
	if _, err := decodePlan(context.Background(), nil, cm, run, &plans); err != nil {
		t.Fatal(err)
	}
	// The same ConfigMap (by UID) is not decoded again: damaging its data
	// changes nothing, which only a cache hit explains.
	cm.BinaryData[planKey+".gz"] = []byte("not gzip")
	got, err := decodePlan(context.Background(), nil, cm, run, &plans)
	if err != nil {
		t.Fatalf("decodePlan() from the cache: %v", err)
	}
	if diff := cmp.Diff(allOf("a", "b"), got); diff != "" {
		t.Errorf("decodePlan() from the cache (-want +got):\n%s", diff)
	}
	other := cm.DeepCopy()
	other.Labels[fleetv1.ClusterJobUIDLabel] = "other"
	if _, err := decodePlan(context.Background(), nil, other, run, &plans); err == nil {
		t.Error("decodePlan() took another run's ConfigMap for the run's, from the cache")
	}
	another := planObject(allOf("c"))
	another.UID = "plan-uid-2"
	if got, err := decodePlan(context.Background(), nil, another, run, &plans); err != nil || got.NodeCount() != 1 {
		t.Errorf("decodePlan() of another plan = %v, %v; want its own node", got, err)
	}
}

// TestPlansBounded checks that the cache starts over rather than grow past
// maxDecodedNodes.
func TestPlansBounded(t *testing.T) {
	var plans Plans
	big := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: make([]string, maxDecodedNodes/2+1)}}}
	plans.put("one", testRun(makeClusterJob("disk-clean").Obj()), big)
	plans.put("two", testRun(makeClusterJob("disk-clean").Obj()), big)
	if _, ok := plans.get("one"); ok {
		t.Error("the cache holds more than maxDecodedNodes nodes")
	}
	if _, ok := plans.get("two"); !ok {
		t.Error("the cache lost the plan it kept last")
	}
}
