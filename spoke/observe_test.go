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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
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
	// Each case three ways: from a plain reader, from a cache with the run
	// index, and from the cache's informers, as the hub reads; all must see
	// the same run.
	for name, tc := range testCases {
		for _, mode := range []string{"list", "indexed", "informers"} {
			if mode == "informers" && tc.wantErr != "" {
				continue // the informers are not listed: the error cases are the List's
			}
			t.Run(fmt.Sprintf("%s/%s", name, mode), func(t *testing.T) {
				b := fake.NewClientBuilder().WithObjects(tc.objs...).WithInterceptorFuncs(tc.funcs)
				var m Member
				switch mode {
				case "indexed":
					b, m.Indexed = b.WithIndex(&batchv1.Job{}, RunIndex, RunIndexValue), true
				case "informers":
					m.Informers = informersWith(t, tc.objs...)
					// Nothing is listed: the informers' stores are read.
					b = b.WithInterceptorFuncs(interceptor.Funcs{List: func(_ context.Context, _ client.WithWatch, list client.ObjectList, _ ...client.ListOption) error {
						return fmt.Errorf("listed %T", list)
					}})
				}
				c := b.Build()
				m.Client, m.Live, m.Run = c, c, testRun(makeClusterJob("disk-clean").Obj())
				got, err := m.Observe(context.Background())
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

// informersWith are Informers whose Job and Node informers hold the Jobs
// and the nodes' metadata of objs, as a member cache's would.
func informersWith(t testing.TB, objs ...client.Object) *Informers {
	t.Helper()
	ix := &Informers{}
	lw := &toolscache.ListWatch{}
	node := &metav1.PartialObjectMetadata{}
	node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	jobs := ix.NewInformer(lw, &batchv1.Job{}, 0, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}).GetIndexer()
	nodes := ix.NewInformer(lw, node, 0, toolscache.Indexers{}).GetIndexer()
	_ = ix.NewInformer(lw, &corev1.ConfigMap{}, 0, toolscache.Indexers{}) // neither kept nor read
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *batchv1.Job:
			err = jobs.Add(o)
		case *corev1.Node:
			err = nodes.Add(&metav1.PartialObjectMetadata{ObjectMeta: o.ObjectMeta})
		}
		if err != nil {
			t.Fatalf("adding %s to its informer: %v", o.GetName(), err)
		}
	}
	return ix
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
