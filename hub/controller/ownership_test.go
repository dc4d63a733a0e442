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

package controller

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/disruption"
)

// owning is a replica serving the clusters set true.
type owning map[string]bool

func (o owning) Owns(cluster string) bool { return o[cluster] }

// memberRun is an unfinished MemberRun of ClusterJob clean in cluster.
func memberRun(cluster string, phase fleetv1.ClusterPhase) *fleetv1.MemberRun {
	mr := &fleetv1.MemberRun{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "clean-" + cluster},
		Spec: fleetv1.MemberRunSpec{ClusterJob: "clean", Cluster: cluster}}
	mr.Status.SetRow(fleetv1.ClusterStatus{Name: cluster, Phase: phase})
	return mr
}

// TestRunRequestsOnlyOwned: a replica of a sharded hub enqueues the runs
// of the clusters it serves only, from every source; unsharded, all.
func TestRunRequestsOnlyOwned(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := fleetv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		memberRun("eu-1", fleetv1.ClusterRunning), memberRun("eu-2", fleetv1.ClusterRunning), memberRun("eu-3", fleetv1.ClusterCompleted),
	).Build()
	testCases := map[string]struct {
		shard Ownership
		want  []string
	}{
		"unsharded":         {want: []string{"eu-1", "eu-2"}},
		"serving eu-1":      {shard: owning{"eu-1": true}, want: []string{"eu-1"}},
		"serving eu-2 only": {shard: owning{"eu-2": true, "eu-3": true}, want: []string{"eu-2"}},
		"serving none":      {shard: owning{}, want: nil},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			r := &MemberRunReconciler{shared: &shared{Hub: hub}, Shard: tc.shard}
			var got []string
			for _, req := range r.runRequests(context.Background()) {
				got = append(got, string(req.ClusterName))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("runRequests (-want +got):\n%s", diff)
			}
			got = nil
			for _, c := range []string{"eu-1", "eu-2"} {
				for _, req := range r.memberRunRequest(context.Background(), memberRun(c, fleetv1.ClusterRunning)) {
					got = append(got, string(req.ClusterName))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("memberRunRequest (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReconcileMemberRunOfAnotherReplica: the reconcile of a run in a
// cluster another replica serves reads and writes nothing, and drops what
// this replica kept of the run, so that its budget is not held here.
func TestReconcileMemberRunOfAnotherReplica(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := fleetv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	calls := 0
	count := func() { calls++ }
	mr := memberRun("eu-2", fleetv1.ClusterRunning)
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mr).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			count()
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			count()
			return c.List(ctx, list, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			count()
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	r := &MemberRunReconciler{shared: &shared{Hub: hub}, Shard: owning{"eu-1": true}, ledger: disruption.NewLedger()}
	key := disruptionKey(mr)
	r.ledger.Observe(key, 2)
	r.held.hold(key.Run, []note{{reason: "Held"}})

	res, err := r.reconcileMemberRun(context.Background(), runRequest(mr.Namespace, mr.Name, "eu-2"))
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("reconcileMemberRun() = %v, %v; want nothing to do", res, err)
	}
	if calls != 0 {
		t.Errorf("%d hub calls, want none", calls)
	}
	if r.ledger.Observed(key) {
		t.Error("the ledger still counts the run's disrupted nodes here")
	}
	if notes := r.held.take(types.NamespacedName{Namespace: mr.Namespace, Name: mr.Name}); notes != nil {
		t.Errorf("held notes %v, want none", notes)
	}
}

// TestMemberClusterChanged: the leader's ClusterJobs wake on a member
// registered, gone, relabelled, connected or lost, not on the inventory's
// periodic writes.
func TestMemberClusterChanged(t *testing.T) {
	base := func() *fleetv1.MemberCluster {
		mc := &fleetv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Labels: map[string]string{"env": "prod"}}}
		mc.Status.Conditions = []metav1.Condition{
			{Type: fleetv1.MemberClusterConnected, Status: metav1.ConditionTrue, Reason: fleetv1.ClusterReasonConnected},
			{Type: fleetv1.MemberClusterReady, Status: metav1.ConditionTrue, Reason: fleetv1.ReasonReady},
		}
		return mc
	}
	testCases := map[string]struct {
		change func(*fleetv1.MemberCluster)
		want   bool
	}{
		"node count and probe time": {change: func(mc *fleetv1.MemberCluster) {
			n := int32(7)
			mc.Status.NodeCount = &n
			mc.Status.Conditions[0].Message = "probed again"
			mc.Status.Conditions[0].LastTransitionTime = metav1.Now()
		}, want: false},
		"relabelled": {change: func(mc *fleetv1.MemberCluster) { mc.Labels["env"] = "staging" }, want: true},
		"lost": {change: func(mc *fleetv1.MemberCluster) {
			mc.Status.Conditions[0].Status, mc.Status.Conditions[0].Reason = metav1.ConditionFalse, fleetv1.ClusterReasonUnreachable
		}, want: true},
		"not ready for another reason": {change: func(mc *fleetv1.MemberCluster) {
			mc.Status.Conditions[1].Status, mc.Status.Conditions[1].Reason = metav1.ConditionFalse, fleetv1.ReasonAccessDenied
		}, want: true},
		"first published": {change: func(mc *fleetv1.MemberCluster) {}, want: true},
	}
	p := memberClusterChanged()
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			old, cur := base(), base()
			if name == "first published" {
				old.Status.Conditions = nil
			}
			tc.change(cur)
			if got := p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: cur}); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
		})
	}
	if !p.Create(event.CreateEvent{Object: base()}) || !p.Delete(event.DeleteEvent{Object: base()}) || p.Generic(event.GenericEvent{Object: base()}) {
		t.Error("want every create and delete, no generic event")
	}
}
