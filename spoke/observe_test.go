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
	"strings"
	"testing"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestObserve(t *testing.T) {
	errList := errors.New("connection refused")
	testCases := map[string]struct {
		objs      []client.Object
		funcs     interceptor.Funcs
		wantState State
		wantErr   string
	}{
		"no plan": {
			objs:      append(nodeObjects("a"), makeJob("a").Ptr()),
			wantState: State{},
		},
		"plan, own Jobs, a deleted node": {
			objs: append(nodeObjects("a", "b"),
				planObject(twoGroups),
				makeJob("a").Started(t0).Complete(t1).Ptr(),
				makeJob("b").Owner(otherUID).Started(t0).Ptr(),
			),
			wantState: State{
				Planned: true, Plan: twoGroups,
				Groups: []GroupState{{Name: "batch-1", Nodes: 2, Pending: 1, Succeeded: 1}, {Name: "batch-2", Nodes: 1, Skipped: 1}},
				Nodes: []NodeState{
					{Node: "a", Job: jobName("a"), GroupName: "batch-1", Phase: NodeSucceeded, StartTime: &t0, CompletionTime: &t1},
					pending("b", 0),
					{Node: "c", Group: 1, GroupName: "batch-2", Phase: NodeSkipped, Reason: fleetv1.NodeReasonNodeDeleted, Message: "node was deleted before its Job started"},
				},
			},
		},
		"Jobs outside the work namespace are not the run's": {
			objs: append(nodeObjects("a", "b", "c"), planObject(twoGroups),
				func() *batchv1.Job { j := makeJob("a").Ptr(); j.Namespace = "elsewhere"; return j }()),
			wantState: Derive(&twoGroups, nil, present("a", "b", "c"), Results{}),
		},
		"another cluster's Jobs of the same ClusterJob": {
			objs: append(nodeObjects("a", "b", "c"), planObject(twoGroups),
				func() *batchv1.Job { j := makeJob("a").Ptr(); j.Labels[fleetv1.ClusterLabel] = "member-2"; return j }()),
			wantState: Derive(&twoGroups, nil, present("a", "b", "c"), Results{}),
		},
		"list error": {
			objs: []client.Object{planObject(twoGroups)},
			funcs: interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
				return errList
			}},
			wantErr: "listing the Jobs of the run in namespace fleetjob-system: connection refused",
		},
	}
	// Each case twice: from a plain reader, and from a cache with the run
	// index, as the hub reads; both must see the same run.
	for name, tc := range testCases {
		for _, indexed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/indexed=%v", name, indexed), func(t *testing.T) {
				b := fake.NewClientBuilder().WithObjects(tc.objs...).WithInterceptorFuncs(tc.funcs)
				var opts []ObserveOption
				if indexed {
					b, opts = b.WithIndex(&batchv1.Job{}, RunIndex, RunIndexValue), []ObserveOption{FromIndexedCache()}
				}
				c := b.Build()
				got, err := Observe(context.Background(), c, c, testRun(makeClusterJob("disk-clean").Obj()), opts...)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("Observe() error = %v, want it to contain %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatalf("Observe() error = %v", err)
				}
				if diff := cmp.Diff(tc.wantState, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Observe() mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// pagedNodes serves nodes in pages of two, and records the continue tokens
// it was asked for.
func pagedNodes(names []string, remaining *int64, asked *[]string) interceptor.Funcs {
	return interceptor.Funcs{List: func(_ context.Context, _ client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		o := (&client.ListOptions{}).ApplyOptions(opts)
		*asked = append(*asked, o.Continue)
		start := 0
		if o.Continue != "" {
			start = int(o.Continue[0] - '0')
		}
		end := min(start+2, len(names))
		nl := list.(*corev1.NodeList)
		nl.Items = readyNodes(names[start:end]...)
		nl.RemainingItemCount = remaining
		if end < len(names) {
			nl.Continue = string(rune('0' + end))
		}
		return nil
	}}
}

func TestListNodes(t *testing.T) {
	testCases := map[string]struct {
		nodes     []string
		remaining *int64
		wantNodes []string
		wantAsked []string
		wantErr   string
	}{
		"one page":    {nodes: []string{"a"}, wantNodes: []string{"a"}, wantAsked: []string{""}},
		"three pages": {nodes: []string{"a", "b", "c", "d", "e"}, wantNodes: []string{"a", "b", "c", "d", "e"}, wantAsked: []string{"", "2", "4"}},
		"too many nodes fails before the rest is listed": {
			nodes: []string{"a", "b", "c"}, remaining: ptr.To[int64](maxNodes - 1),
			wantAsked: []string{""}, wantErr: "more than 100000 nodes",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			var asked []string
			c := fake.NewClientBuilder().WithInterceptorFuncs(pagedNodes(tc.nodes, tc.remaining, &asked)).Build()
			got, err := ListNodes(context.Background(), c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("ListNodes() error = %v, want it to contain %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("ListNodes() error = %v", err)
			}
			var gotNames []string
			for _, n := range got {
				gotNames = append(gotNames, n.Name)
			}
			if diff := cmp.Diff(tc.wantNodes, gotNames); diff != "" {
				t.Errorf("ListNodes() nodes mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAsked, asked); diff != "" {
				t.Errorf("ListNodes() continue tokens mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListNodesFake(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(nodeObjects("b", "a")...).Build()
	got, err := ListNodes(context.Background(), c)
	if err != nil {
		t.Fatalf("ListNodes() error = %v", err)
	}
	if diff := cmp.Diff(readyNodes("a", "b"), got, cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion"), cmpopts.IgnoreFields(metav1.TypeMeta{}, "Kind", "APIVersion")); diff != "" {
		t.Errorf("ListNodes() mismatch (-want +got):\n%s", diff)
	}
}
