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
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// otherPlan is the plan ConfigMap of another run in the work namespace.
func otherPlan() *corev1.ConfigMap {
	cm, err := onePlanConfigMap(testRun(makeClusterJob("other").UID(otherUID).Obj()), allOf("a"))
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
		objs          []client.Object
		funcs         interceptor.Funcs
		wantLeftovers Leftovers
		wantLeftOver  []string
		wantErr       string
	}{
		"deletes the run's Jobs and plan this hub made, nothing else": {
			objs: []client.Object{
				makeJob("a").Ptr(), makeJob("b").Ptr(), planObject(allOf("a", "b")),
				makeJob("c").Owner(otherUID).Ptr(), otherPlan(),
				makeJob("d").Unmanaged().Ptr(),
				makeJob("other-hub").Hub(otherHub).Ptr(),
				makeJob("no-hub").Hub("").Ptr(),
				inNamespace("elsewhere", makeJob("e").Ptr()),
				userConfigMap("settings", nil),
			},
			wantLeftOver: []string{
				"ConfigMap fleetjob-system/" + otherPlan().Name,
				"ConfigMap fleetjob-system/settings",
				"Job elsewhere/e",
				"Job fleetjob-system/c",
				"Job fleetjob-system/d",
				"Job fleetjob-system/no-hub",
				"Job fleetjob-system/other-hub",
			},
		},
		"nothing of the run": {
			objs:         []client.Object{otherPlan()},
			wantLeftOver: []string{"ConfigMap fleetjob-system/" + otherPlan().Name},
		},
		"a Job held by a finalizer is left": {
			objs: []client.Object{func() *batchv1.Job {
				j := makeJob("a").Ptr()
				j.Finalizers = []string{"example.com/hold"}
				return j
			}()},
			wantLeftovers: Leftovers{Jobs: 1},
			wantLeftOver:  []string{"Job fleetjob-system/a"},
		},
		"delete error": {
			objs: []client.Object{makeJob("a").Ptr()},
			funcs: interceptor.Funcs{DeleteAllOf: func(context.Context, client.WithWatch, client.Object, ...client.DeleteAllOfOption) error {
				return errors.New("connection refused")
			}},
			wantLeftOver: []string{"Job fleetjob-system/a"},
			wantErr:      "deleting the objects of ClusterJob " + string(testUID) + " in namespace fleetjob-system: deleting Jobs: connection refused",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithObjects(tc.objs...).Build()
			c := interceptor.NewClient(live, tc.funcs)
			left, err := Cleanup(context.Background(), c, c, testNamespace, testUID, testHub)
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("Cleanup() error mismatch (-want +got):\n%s", diff)
			}
			if left != tc.wantLeftovers {
				t.Errorf("Cleanup() = %+v, want %+v", left, tc.wantLeftovers)
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
	if _, err := Cleanup(context.Background(), c, c, testNamespace, testUID, testHub); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]metav1.DeletionPropagation{metav1.DeletePropagationBackground}, got); diff != "" {
		t.Errorf("Job deletion propagation mismatch (-want +got):\n%s", diff)
	}
}

// gone is a GCOptions.Gone that knows the live ClusterJobs by UID, and
// records what it was asked.
type gone struct {
	live  map[string]bool
	err   error
	asked []string
}

func (g *gone) check(_ context.Context, key types.NamespacedName, uid string) (bool, error) {
	g.asked = append(g.asked, key.String())
	return !g.live[uid], g.err
}

func TestCollectGarbage(t *testing.T) {
	old := metav1.NewTime(t0.Add(-time.Hour))
	objs := []client.Object{
		makeJob("live").Created(old).Ptr(), planObject(allOf("live")),
		makeJob("dead-1").Owner(otherUID).OfClusterJob("team-a/other").Created(old).Ptr(),
		makeJob("dead-2").Owner(otherUID).OfClusterJob("team-a/other").Created(old).Ptr(), otherPlan(),
		makeJob("hand-made").Owner(otherUID).Unmanaged().Created(old).Ptr(),
		makeJob("other-hub").Owner(thirdUID).Hub(otherHub).Created(old).Ptr(),
		makeJob("before-hub-label").Owner(thirdUID).Hub("").Created(old).Ptr(),
		makeJob("no-uid").Owner("").Created(old).Ptr(),
		makeJob("young").Owner(fourthUID).Created(t0).Ptr(),
		inNamespace("elsewhere", makeJob("dead-elsewhere").Owner(otherUID).OfClusterJob("team-a/other").Created(old).Ptr()),
	}
	for _, o := range objs {
		if o.GetCreationTimestamp().Time.IsZero() {
			o.SetCreationTimestamp(old)
		}
	}
	kept := []string{
		"ConfigMap fleetjob-system/" + planObject(plan.Plan{}).Name,
		"Job elsewhere/dead-elsewhere",
		"Job fleetjob-system/before-hub-label",
		"Job fleetjob-system/hand-made",
		"Job fleetjob-system/live",
		"Job fleetjob-system/no-uid",
		"Job fleetjob-system/other-hub",
		"Job fleetjob-system/young",
	}
	dead := []string{"ConfigMap fleetjob-system/" + otherPlan().Name, "Job fleetjob-system/dead-1", "Job fleetjob-system/dead-2"}
	testCases := map[string]struct {
		funcs        interceptor.Funcs
		goneErr      error
		wantDeleted  int
		wantAsked    []string
		wantLeftOver []string
		wantErr      string
	}{
		"deletes only this hub's objects of runs confirmed gone, old enough": {
			wantDeleted:  3,
			wantAsked:    []string{"team-a/other", "team-a/disk-clean"},
			wantLeftOver: kept,
		},
		"the hub cannot confirm: nothing is deleted": {
			goneErr:      errors.New("hub API server unavailable"),
			wantAsked:    []string{"team-a/other"},
			wantLeftOver: append(slices.Clone(kept), dead...),
			wantErr:      "checking ClusterJob team-a/other on the hub: hub API server unavailable",
		},
		"delete error stops": {
			funcs: interceptor.Funcs{DeleteAllOf: func(context.Context, client.WithWatch, client.Object, ...client.DeleteAllOfOption) error {
				return errors.New("connection refused")
			}},
			wantAsked:    []string{"team-a/other"},
			wantLeftOver: append(slices.Clone(kept), dead...),
			wantErr:      "deleting the orphans of ClusterJob team-a/other in namespace fleetjob-system: deleting Jobs: connection refused",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fake.NewClientBuilder().WithObjects(objs...).Build()
			c := interceptor.NewClient(live, tc.funcs)
			g := &gone{live: map[string]bool{string(testUID): true}, err: tc.goneErr}
			got, err := CollectGarbage(context.Background(), c, testNamespace, GCOptions{Hub: testHub, Now: t0.Time, MinAge: time.Minute, Gone: g.check})
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("CollectGarbage() error mismatch (-want +got):\n%s", diff)
			}
			if got != tc.wantDeleted {
				t.Errorf("CollectGarbage() = %d, want %d", got, tc.wantDeleted)
			}
			if diff := cmp.Diff(tc.wantAsked, g.asked); diff != "" {
				t.Errorf("ClusterJobs checked on the hub mismatch (-want +got):\n%s", diff)
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
	c := fake.NewClientBuilder().WithObjects(makeJob("a").Owner(otherUID).OfClusterJob("team-a/other").Ptr(), otherPlan()).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if o := (&client.ListOptions{}).ApplyOptions(opts); o.Limit != 0 || o.Continue != "" {
				return errors.New("continue list option is not supported by the cache")
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	g := &gone{}
	got, err := CollectGarbage(context.Background(), c, testNamespace, GCOptions{Hub: testHub, Gone: g.check})
	if err != nil {
		t.Fatalf("CollectGarbage() error = %v", err)
	}
	if got != 2 {
		t.Errorf("CollectGarbage() = %d, want 2", got)
	}
}

func TestOrphanCandidates(t *testing.T) {
	now := t0.Time
	obj := func(uid, owner string, created time.Duration) metav1.Object {
		o := &metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-created)),
			Labels: map[string]string{fleetv1.ClusterJobUIDLabel: uid}}
		if owner != "" {
			o.Annotations = map[string]string{fleetv1.ClusterJobAnnotation: owner}
		}
		return o
	}
	testCases := map[string]struct {
		objs []metav1.Object
		want []OrphanRun
	}{
		"none": {},
		"old objects of one run: a candidate": {
			objs: []metav1.Object{obj("u1", "ns/a", time.Hour), obj("u1", "ns/a", 2*time.Minute)},
			want: []OrphanRun{{UID: "u1", ClusterJob: types.NamespacedName{Namespace: "ns", Name: "a"}, Objects: 2}},
		},
		"one object younger than a minute spares the whole run": {
			objs: []metav1.Object{obj("u1", "ns/a", time.Hour), obj("u1", "ns/a", 59*time.Second)},
		},
		"exactly a minute old counts as old": {
			objs: []metav1.Object{obj("u1", "ns/a", time.Minute)},
			want: []OrphanRun{{UID: "u1", ClusterJob: types.NamespacedName{Namespace: "ns", Name: "a"}, Objects: 1}},
		},
		"an object that does not name its ClusterJob spares its run": {
			objs: []metav1.Object{obj("u1", "ns/a", time.Hour), obj("u1", "", time.Hour), obj("u2", "a-name-only", time.Hour)},
		},
		"objects of one UID naming two ClusterJobs spare it": {
			objs: []metav1.Object{obj("u1", "ns/a", time.Hour), obj("u1", "ns/b", time.Hour)},
		},
		"runs sorted by UID": {
			objs: []metav1.Object{obj("u2", "ns/b", time.Hour), obj("u1", "ns/a", time.Hour)},
			want: []OrphanRun{
				{UID: "u1", ClusterJob: types.NamespacedName{Namespace: "ns", Name: "a"}, Objects: 1},
				{UID: "u2", ClusterJob: types.NamespacedName{Namespace: "ns", Name: "b"}, Objects: 1},
			},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, OrphanCandidates(tc.objs, now, time.Minute)); diff != "" {
				t.Errorf("OrphanCandidates() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
