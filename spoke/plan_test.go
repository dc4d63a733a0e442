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
	"encoding/json"
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
		"namespace missing": {
			funcs: interceptor.Funcs{Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, obj.GetNamespace())
			}},
			cj:      makeClusterJob("disk-clean").Obj(),
			nodes:   readyNodes("a"),
			wantErr: "namespace fleetjob-system does not exist in the member cluster",
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
		"plan too large for a ConfigMap": {
			cj: makeClusterJob("disk-clean").Obj(),
			nodes: func() []corev1.Node {
				nodes := make([]corev1.Node, 4000)
				for i := range nodes {
					nodes[i] = readyNode(strings.Repeat("n", 240) + string(rune('a'+i%26)) + strings.Repeat("x", i/26))
				}
				return nodes
			}(),
			wantErr: "more than the 921600 a ConfigMap can hold",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithObjects(tc.objs...).Build()
			c := interceptor.NewClient(live, tc.funcs)
			got, err := EnsurePlan(context.Background(), c, live, testRun(tc.cj), tc.nodes)
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
			stored, found, err := readPlan(context.Background(), live, testNamespace, testUID)
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
	first, err := EnsurePlan(context.Background(), c, c, run, readyNodes("a", "b"))
	if err != nil {
		t.Fatalf("first EnsurePlan() error = %v", err)
	}
	second, err := EnsurePlan(context.Background(), c, c, run, readyNodes("a", "b", "c"))
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
	if _, err := EnsurePlan(context.Background(), c, c, run, readyNodes("a")); err != nil {
		t.Fatalf("EnsurePlan() error = %v", err)
	}
	var got corev1.ConfigMap
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: naming.PlanName(testUID)}, &got); err != nil {
		t.Fatalf("getting the plan ConfigMap: %v", err)
	}
	data, _ := json.Marshal(allOf("a"))
	want := corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      naming.PlanName(testUID),
			Namespace: testNamespace,
			Labels: map[string]string{
				fleetv1.ManagedByLabel:     fleetv1.ManagedByValue,
				fleetv1.ClusterJobUIDLabel: string(testUID),
				fleetv1.ComponentLabel:     "plan",
				fleetv1.ClusterLabel:       testCluster,
			},
			Annotations: map[string]string{
				fleetv1.ClusterJobAnnotation: "team-a/disk-clean",
				fleetv1.ClusterAnnotation:    testCluster,
			},
		},
		Immutable: ptr.To(true),
		Data:      map[string]string{"plan.json": string(data)},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion"), cmpopts.IgnoreFields(metav1.TypeMeta{}, "Kind", "APIVersion")); diff != "" {
		t.Errorf("plan ConfigMap mismatch (-want +got):\n%s", diff)
	}
}

// planObject is the plan ConfigMap EnsurePlan stores for the test run.
func planObject(p plan.Plan) *corev1.ConfigMap {
	cm, err := planConfigMap(testRun(makeClusterJob("disk-clean").Obj()), p)
	if err != nil {
		panic(err)
	}
	return cm
}
