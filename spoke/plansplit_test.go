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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

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
	want, err := EnsurePlan(context.Background(), c, c, run, readyNodes(splitNodes...))
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
	got, err := EnsurePlan(context.Background(), c, c, run, nodes)
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
	got, err = EnsurePlan(context.Background(), cache, live, run, nodes)
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
