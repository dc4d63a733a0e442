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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// otherPlan is the plan ConfigMap of another run in the work namespace.
func otherPlan() *corev1.ConfigMap {
	cm, err := planConfigMap(testRun(makeClusterJob("other").UID(otherUID).Obj()), allOf("a"))
	if err != nil {
		panic(err)
	}
	return cm
}

func inNamespace(ns string, j *batchv1.Job) *batchv1.Job { j.Namespace = ns; return j }

// userConfigMap is a ConfigMap fleetjob did not create.
func userConfigMap(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, Labels: labels}}
}

// leftOver lists every Job and ConfigMap as "Kind ns/name", sorted.
func leftOver(t *testing.T, c client.Reader) []string {
	t.Helper()
	var out []string
	var jobs batchv1.JobList
	var cms corev1.ConfigMapList
	if err := c.List(context.Background(), &jobs); err != nil {
		t.Fatal(err)
	}
	if err := c.List(context.Background(), &cms); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		out = append(out, "Job "+j.Namespace+"/"+j.Annotations[fleetv1.NodeAnnotation])
	}
	for _, cm := range cms.Items {
		out = append(out, "ConfigMap "+cm.Namespace+"/"+cm.Name)
	}
	slices.Sort(out)
	return out
}

func TestCleanup(t *testing.T) {
	testCases := map[string]struct {
		objs         []client.Object
		funcs        interceptor.Funcs
		wantDone     bool
		wantLeftOver []string
		wantErr      string
	}{
		"deletes the run's Jobs and plan, nothing else": {
			objs: []client.Object{
				makeJob("a").Ptr(), makeJob("b").Ptr(), planObject(allOf("a", "b")),
				makeJob("c").Owner(otherUID).Ptr(), otherPlan(),
				makeJob("d").Unmanaged().Ptr(),
				inNamespace("elsewhere", makeJob("e").Ptr()),
				userConfigMap("settings", nil),
			},
			wantDone: true,
			wantLeftOver: []string{
				"ConfigMap fleetjob-system/" + otherPlan().Name,
				"ConfigMap fleetjob-system/settings",
				"Job elsewhere/e",
				"Job fleetjob-system/c",
				"Job fleetjob-system/d",
			},
		},
		"nothing of the run": {
			objs:         []client.Object{otherPlan()},
			wantDone:     true,
			wantLeftOver: []string{"ConfigMap fleetjob-system/" + otherPlan().Name},
		},
		"a Job held by a finalizer is not done yet": {
			objs: []client.Object{func() *batchv1.Job {
				j := makeJob("a").Ptr()
				j.Finalizers = []string{"example.com/hold"}
				return j
			}()},
			wantDone:     false,
			wantLeftOver: []string{"Job fleetjob-system/a"},
		},
		"delete error": {
			objs: []client.Object{makeJob("a").Ptr()},
			funcs: interceptor.Funcs{DeleteAllOf: func(context.Context, client.WithWatch, client.Object, ...client.DeleteAllOfOption) error {
				return errors.New("connection refused")
			}},
			wantLeftOver: []string{"Job fleetjob-system/a"},
			wantErr:      "deleting the Jobs of ClusterJob " + string(testUID) + " in namespace fleetjob-system: connection refused",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithObjects(tc.objs...).Build()
			c := interceptor.NewClient(live, tc.funcs)
			done, err := Cleanup(context.Background(), c, testNamespace, testUID)
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("Cleanup() error mismatch (-want +got):\n%s", diff)
			}
			if done != tc.wantDone {
				t.Errorf("Cleanup() = %v, want %v", done, tc.wantDone)
			}
			if diff := cmp.Diff(tc.wantLeftOver, leftOver(t, live)); diff != "" {
				t.Errorf("left over mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCleanupDeletesPods checks Jobs are deleted with background
// propagation: without it the API server orphans their pods.
func TestCleanupDeletesPods(t *testing.T) {
	var got []metav1.DeletionPropagation
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			o := &client.DeleteAllOfOptions{}
			o.ApplyOptions(opts)
			if _, ok := obj.(*batchv1.Job); ok && o.PropagationPolicy != nil {
				got = append(got, *o.PropagationPolicy)
			}
			return c.DeleteAllOf(ctx, obj, opts...)
		},
	}).Build()
	if _, err := Cleanup(context.Background(), c, testNamespace, testUID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]metav1.DeletionPropagation{metav1.DeletePropagationBackground}, got); diff != "" {
		t.Errorf("Job deletion propagation mismatch (-want +got):\n%s", diff)
	}
}

func TestCollectGarbage(t *testing.T) {
	objs := []client.Object{
		makeJob("live").Ptr(), planObject(allOf("live")),
		makeJob("dead-1").Owner(otherUID).Ptr(), makeJob("dead-2").Owner(otherUID).Ptr(), otherPlan(),
		makeJob("hand-made").Owner(otherUID).Unmanaged().Ptr(),
		makeJob("no-uid").Owner("").Ptr(),
		func() *batchv1.Job {
			j := makeJob("dead-deleting").Owner(otherUID).Ptr()
			j.DeletionTimestamp, j.Finalizers = &t0, []string{"example.com/hold"}
			return j
		}(),
		inNamespace("elsewhere", makeJob("dead-elsewhere").Owner(otherUID).Ptr()),
		userConfigMap("not-a-plan", map[string]string{fleetv1.ManagedByLabel: fleetv1.ManagedByValue, fleetv1.ClusterJobUIDLabel: string(otherUID)}),
	}
	kept := []string{
		"ConfigMap fleetjob-system/" + planObject(plan.Plan{}).Name,
		"ConfigMap fleetjob-system/not-a-plan",
		"Job elsewhere/dead-elsewhere",
		"Job fleetjob-system/dead-deleting",
		"Job fleetjob-system/hand-made",
		"Job fleetjob-system/live",
		"Job fleetjob-system/no-uid",
	}
	errDelete := errors.New("connection refused")
	testCases := map[string]struct {
		funcs        interceptor.Funcs
		wantDeleted  int
		wantLeftOver []string
		wantErr      string
	}{
		"deletes only the objects of runs that are gone": {
			wantDeleted:  3,
			wantLeftOver: kept,
		},
		"already deleted is fine": {
			funcs: interceptor.Funcs{Delete: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.DeleteOption) error {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "jobs"}, obj.GetName())
			}},
			wantDeleted:  0,
			wantLeftOver: append(slices.Clone(kept), "ConfigMap fleetjob-system/"+otherPlan().Name, "Job fleetjob-system/dead-1", "Job fleetjob-system/dead-2"),
		},
		"delete error stops": {
			funcs: interceptor.Funcs{Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error {
				return errDelete
			}},
			wantLeftOver: append(slices.Clone(kept), "ConfigMap fleetjob-system/"+otherPlan().Name, "Job fleetjob-system/dead-1", "Job fleetjob-system/dead-2"),
			wantErr:      "deleting orphaned Job fleetjob-system/" + jobName("dead-1") + ": connection refused",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithObjects(objs...).Build()
			c := interceptor.NewClient(live, tc.funcs)
			got, err := CollectGarbage(context.Background(), c, testNamespace, func(uid string) bool { return uid == string(testUID) })
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("CollectGarbage() error mismatch (-want +got):\n%s", diff)
			}
			if got != tc.wantDeleted {
				t.Errorf("CollectGarbage() = %d, want %d", got, tc.wantDeleted)
			}
			want := slices.Sorted(slices.Values(tc.wantLeftOver))
			if diff := cmp.Diff(want, leftOver(t, live)); diff != "" {
				t.Errorf("left over mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCollectGarbageReadsWholeLists checks the lists can be served by a
// controller-runtime cache, which truncates at a limit and refuses continue
// tokens.
func TestCollectGarbageReadsWholeLists(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(makeJob("a").Owner(otherUID).Ptr(), otherPlan()).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if o := (&client.ListOptions{}).ApplyOptions(opts); o.Limit != 0 || o.Continue != "" {
				return errors.New("continue list option is not supported by the cache")
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	got, err := CollectGarbage(context.Background(), c, testNamespace, func(string) bool { return false })
	if err != nil {
		t.Fatalf("CollectGarbage() error = %v", err)
	}
	if got != 2 {
		t.Errorf("CollectGarbage() = %d, want 2", got)
	}
}
