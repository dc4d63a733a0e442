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
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

func TestSplitBytes(t *testing.T) {
	testCases := map[string]struct {
		in   string
		n    int
		want []string
	}{
		"empty":           {"", 3, []string{""}},
		"shorter":         {"ab", 3, []string{"ab"}},
		"exactly":         {"abc", 3, []string{"abc"}},
		"one more":        {"abcd", 3, []string{"abc", "d"}},
		"several, uneven": {"abcdefgh", 3, []string{"abc", "def", "gh"}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, b := range splitBytes([]byte(tc.in), tc.n) {
				got = append(got, string(b))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("splitBytes() (-want +got):\n%s", diff)
			}
		})
	}
}

// splitNodes are more random 63-character names than one ConfigMap's plan
// holds: 30,000 take about 1.3 MiB compressed.
var splitNodes = randomNames(30000, 63)

// TestSplitPlan: a plan too large for one ConfigMap is stored across
// several, and read back whole; a part lost or changed is an error, never
// another plan.
func TestSplitPlan(t *testing.T) {
	cj := makeClusterJob("disk-clean").Obj()
	run := testRun(cj)
	c := fake.NewClientBuilder().Build()
	want, err := Member{Client: c, Live: c, Run: run}.EnsurePlan(context.Background(), readyNodes(splitNodes...))
	if err != nil {
		t.Fatalf("EnsurePlan() error = %v", err)
	}
	if want.NodeCount() != len(splitNodes) {
		t.Fatalf("planned %d nodes, want %d", want.NodeCount(), len(splitNodes))
	}
	var cms corev1.ConfigMapList
	if err := c.List(context.Background(), &cms, client.InNamespace(testNamespace), ownLabels(cj.UID, testHub)); err != nil {
		t.Fatal(err)
	}
	var primary *corev1.ConfigMap
	for i := range cms.Items {
		if cms.Items[i].Name == naming.PlanName(cj.UID) {
			primary = &cms.Items[i]
		}
	}
	if primary == nil || primary.Annotations[fleetv1.PlanPartsAnnotation] != fmt.Sprint(len(cms.Items)) || len(cms.Items) < 2 {
		t.Fatalf("stored %d ConfigMaps, plan ConfigMap %v; want it to name every part", len(cms.Items), primary)
	}
	t.Logf("%d nodes: %d ConfigMaps", len(splitNodes), len(cms.Items))
	got, found, err := ReadPlan(context.Background(), c, run)
	if err != nil || !found {
		t.Fatalf("ReadPlan() = found %v, error %v", found, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadPlan() (-stored +read):\n%s", diff)
	}

	part := &corev1.ConfigMap{}
	partKey := client.ObjectKey{Namespace: testNamespace, Name: naming.PlanPartName(cj.UID, 1)}
	if err := c.Get(context.Background(), partKey, part); err != nil {
		t.Fatal(err)
	}
	part.BinaryData[planKey+compressedSuffix][10] ^= 0xff
	if err := c.Update(context.Background(), part); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadPlan(context.Background(), c, run); err == nil || !strings.Contains(err.Error(), "do not make the plan it was stored as") {
		t.Errorf("ReadPlan() of a changed part: error = %v", err)
	}
	if err := c.Delete(context.Background(), part); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadPlan(context.Background(), c, run); err == nil || !strings.Contains(err.Error(), "reading plan part") {
		t.Errorf("ReadPlan() of a lost part: error = %v", err)
	}
}

// TestSplitPlanStalePart: a part left by an attempt that died before it
// stored the plan ConfigMap is replaced; once the plan ConfigMap exists,
// the stored plan wins and no part is touched.
func TestSplitPlanStalePart(t *testing.T) {
	cj := makeClusterJob("disk-clean").Obj()
	run := testRun(cj)
	nodes := readyNodes(splitNodes...)
	died, parts, err := planConfigMaps(run, plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: append([]string{"another-node"}, splitNodes...)}}})
	if err != nil || len(parts) == 0 {
		t.Fatalf("planConfigMaps() = %d parts, %v", len(parts), err)
	}

	c := fake.NewClientBuilder().WithObjects(parts[0]).Build()
	got, err := Member{Client: c, Live: c, Run: run}.EnsurePlan(context.Background(), nodes)
	if err != nil {
		t.Fatalf("EnsurePlan() over a stale part: %v", err)
	}
	read, _, err := ReadPlan(context.Background(), c, run)
	if err != nil || read.NodeCount() != len(splitNodes) || got.NodeCount() != len(splitNodes) {
		t.Fatalf("over a stale part: planned %d, read %d nodes (%v), want %d", got.NodeCount(), read.NodeCount(), err, len(splitNodes))
	}

	// The other attempt stored its plan after all, unseen by the cache.
	live := fake.NewClientBuilder().WithObjects(died, parts[0]).Build()
	cache := fake.NewClientBuilder().WithObjects(parts[0]).Build()
	got, err = Member{Client: cache, Live: live, Run: run}.EnsurePlan(context.Background(), nodes)
	if err != nil {
		t.Fatalf("EnsurePlan() with a stored plan: %v", err)
	}
	if got.NodeCount() != len(splitNodes)+1 {
		t.Errorf("EnsurePlan() = %d nodes, want the stored plan's %d", got.NodeCount(), len(splitNodes)+1)
	}
	var kept corev1.ConfigMap
	if err := cache.Get(context.Background(), client.ObjectKeyFromObject(parts[0]), &kept); err != nil ||
		!bytes.Equal(kept.BinaryData[planKey+compressedSuffix], parts[0].BinaryData[planKey+compressedSuffix]) {
		t.Errorf("the stored plan's part was replaced (%v)", err)
	}
}

// apiServerSized refuses, as an API server does, a ConfigMap larger than
// 1 MiB.
var apiServerSized = interceptor.Funcs{
	Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if err := checkConfigMapSize(obj); err != nil {
			return err
		}
		return c.Create(ctx, obj, opts...)
	},
	Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
		if err := checkConfigMapSize(obj); err != nil {
			return err
		}
		return c.Update(ctx, obj, opts...)
	},
}

func checkConfigMapSize(obj client.Object) error {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil
	}
	size := documentSize(cm.BinaryData)
	for k, v := range cm.Data {
		size += len(k) + len(v)
	}
	if size > 1<<20 {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, cm.Name, field.ErrorList{field.TooLong(field.NewPath(""), "", 1<<20)})
	}
	return nil
}

// TestSplitRecord: the results record of a cluster of 30,000 nodes with
// 63-character names is larger than one ConfigMap: it is stored across
// several and every node's result is read back; a later write replaces its
// parts; a part changed is an error, never another record.
func TestSplitRecord(t *testing.T) {
	ctx := context.Background()
	cj := makeClusterJob("disk-clean").Obj()
	run := testRun(cj)
	p := plan.Plan{Groups: []plan.Group{{Name: "first", Nodes: splitNodes[:len(splitNodes)/2]}, {Name: "second", Nodes: splitNodes[len(splitNodes)/2:]}}}
	planCM, planParts, err := planConfigMaps(run, p)
	if err != nil {
		t.Fatal(err)
	}
	live := fake.NewClientBuilder().WithObjects(planCM).Build()
	for _, part := range planParts {
		if err := live.Create(ctx, part); err != nil {
			t.Fatal(err)
		}
	}
	c := interceptor.NewClient(live, apiServerSized)
	// Every Job ran and finished, each at its own time.
	var jobs []batchv1.Job
	for i, n := range splitNodes {
		start := metav1.NewTime(t0.Add(time.Duration(i) * time.Second))
		job := makeJob(n).Started(start)
		if i%7 == 0 {
			job.Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit", metav1.NewTime(start.Add(time.Minute+time.Duration(i%13)*time.Second)))
		} else {
			job.Complete(metav1.NewTime(start.Add(time.Minute + time.Duration(i%13)*time.Second)))
		}
		jobs = append(jobs, job.Obj())
	}
	half := len(jobs) / 2
	for _, step := range []struct {
		name string
		jobs []batchv1.Job
	}{{"first group", jobs[:half]}, {"both groups", jobs}} {
		st, err := Member{Client: live, Live: live, Run: run}.Observe(ctx)
		if err != nil {
			t.Fatalf("%s: Observe() error = %v", step.name, err)
		}
		st = Derive(&p, step.jobs, present(splitNodes...), st.Recorded) // the Jobs as the hub saw them
		st.Recorded, st.RecordObject = mustReadResults(t, live, run)
		if err := (Member{Client: c, Live: live, Run: run}).RecordResults(ctx, st, nil, nil); err != nil {
			t.Fatalf("%s: RecordResults() error = %v", step.name, err)
		}
		want, _ := Record(st.Recorded, st, nil, nil)
		got, _ := mustReadResults(t, live, run)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: read back (-written +read):\n%s", step.name, diff)
		}
		var cms corev1.ConfigMapList
		if err := live.List(ctx, &cms, client.InNamespace(testNamespace), client.MatchingLabels{fleetv1.ComponentLabel: resultsPartComponent}); err != nil {
			t.Fatal(err)
		}
		_, primary := mustReadResults(t, live, run)
		t.Logf("%s: %d results, %d parts besides the record ConfigMap", step.name, got.Nodes.Len(), len(cms.Items))
		if named := primary.Annotations[fleetv1.RecordPartsAnnotation]; named != "" && fmt.Sprint(len(cms.Items)+1) != named || named == "" && len(cms.Items) > 0 {
			t.Errorf("%s: %d parts stored, the record names %s: the parts it replaced are left", step.name, len(cms.Items), primary.Annotations[fleetv1.RecordPartsAnnotation])
		}
	}

	// No Job is left: every node has its result from the record alone.
	st, err := Member{Client: live, Live: live, Run: run}.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range st.Nodes {
		if wantPhase := map[bool]NodePhase{true: NodeFailed, false: NodeSucceeded}[i%7 == 0]; n.Phase != wantPhase || n.CompletionTime == nil {
			t.Fatalf("node %s = %s at %v from the record, want %s", n.Node, n.Phase, n.CompletionTime, wantPhase)
		}
	}

	var cms corev1.ConfigMapList
	if err := live.List(ctx, &cms, client.InNamespace(testNamespace), client.MatchingLabels{fleetv1.ComponentLabel: resultsPartComponent}); err != nil || len(cms.Items) == 0 {
		t.Fatalf("listing the parts: %d, %v", len(cms.Items), err)
	}
	if err := live.Delete(ctx, &cms.Items[0]); err != nil {
		t.Fatal(err)
	}
	cms.Items[0].ResourceVersion = ""
	cms.Items[0].BinaryData[resultsKey+compressedSuffix][10] ^= 0xff
	if err := live.Create(ctx, &cms.Items[0]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadResults(ctx, live, run); err == nil || !strings.Contains(err.Error(), "do not make the results record it was stored as") {
		t.Errorf("ReadResults() of a changed part: error = %v", err)
	}
}

func mustReadResults(t *testing.T, r client.Reader, run Run) (Results, *corev1.ConfigMap) {
	t.Helper()
	res, cm, err := ReadResults(context.Background(), r, run)
	if err != nil {
		t.Fatal(err)
	}
	return res, cm
}
