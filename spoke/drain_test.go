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
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// ownMark is the cordon mark of the test run, from testHub.
var ownMark = testHub + "/" + string(testUID)

// pdbRefusal is what the API server says when a PodDisruptionBudget
// refuses an eviction.
const pdbRefusal = "Cannot evict pod as it would violate the pod's disruption budget."

// Drain sets spec.nodePreparation.drain.
func (w *clusterJobWrapper) Drain(d fleetv1.Drain) *clusterJobWrapper {
	w.Spec.NodePreparation = &fleetv1.NodePreparation{Drain: &d}
	return w
}

// drainRun is the test run of a ClusterJob that drains each node with d.
func drainRun(d fleetv1.Drain) Run {
	return testRun(makeClusterJob("disk-clean").Drain(d).Obj())
}

// stamp is t as the drain-started annotation holds it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// nodeWrapper builds test nodes: makeNode("a").CordonedBy(ownMark, t0.Time).Obj().
type nodeWrapper struct{ corev1.Node }

// makeNode returns a Ready, schedulable node.
func makeNode(name string) *nodeWrapper { return &nodeWrapper{readyNode(name)} }

// Unschedulable sets spec.unschedulable, as kubectl cordon does.
func (w *nodeWrapper) Unschedulable() *nodeWrapper { w.Spec.Unschedulable = true; return w }

// CordonedBy sets spec.unschedulable and the cordon mark: annotations
// fleetjob.io/cordoned-by owner and fleetjob.io/drain-started started.
func (w *nodeWrapper) CordonedBy(owner string, started time.Time) *nodeWrapper {
	return w.Unschedulable().Annotation(fleetv1.CordonedByAnnotation, owner).Annotation(fleetv1.DrainStartedAnnotation, stamp(started))
}

// Evicted sets the drain's count of evicted pods: annotation
// fleetjob.io/drain-evicted.
func (w *nodeWrapper) Evicted(count string) *nodeWrapper {
	return w.Annotation(fleetv1.DrainEvictedAnnotation, count)
}

// Annotation sets metadata.annotations[key].
func (w *nodeWrapper) Annotation(key, value string) *nodeWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[key] = value
	return w
}

// Taint adds a spec.taints entry.
func (w *nodeWrapper) Taint(key string, effect corev1.TaintEffect) *nodeWrapper {
	w.Spec.Taints = append(w.Spec.Taints, corev1.Taint{Key: key, Effect: effect})
	return w
}

// Obj returns the node.
func (w *nodeWrapper) Obj() corev1.Node { return *w.Node.DeepCopy() }

// Ptr returns a pointer to a copy of the node, for a fake client.
func (w *nodeWrapper) Ptr() *corev1.Node { return w.Node.DeepCopy() }

// podWrapper builds test pods: makePod("web", "a").Bare().Obj().
type podWrapper struct{ corev1.Pod }

// makePod returns a Running pod in namespace team-a on node, labelled
// app=name and controlled by a ReplicaSet.
func makePod(name, node string) *podWrapper {
	return &podWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "team-a", UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": name},
		},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}}
}

// OwnedBy sets metadata.ownerReferences to one owner of kind, its
// controller when controller is set.
func (w *podWrapper) OwnedBy(kind string, controller bool) *podWrapper {
	w.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: w.Name + "-owner", UID: "owner-" + w.UID, Controller: ptr.To(controller)}}
	return w
}

// Bare removes metadata.ownerReferences: no controller recreates the pod.
func (w *podWrapper) Bare() *podWrapper { w.OwnerReferences = nil; return w }

// Phase sets status.phase.
func (w *podWrapper) Phase(p corev1.PodPhase) *podWrapper { w.Status.Phase = p; return w }

// Mirror sets the mirror pod annotation, as the kubelet does on a static
// pod's mirror.
func (w *podWrapper) Mirror() *podWrapper {
	w.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "5ba2f4e1"}
	return w
}

// FleetJob sets the managed-by label fleetjob sets on its Job pods, and a
// Job as the controller.
func (w *podWrapper) FleetJob() *podWrapper {
	w.Labels[fleetv1.ManagedByLabel] = fleetv1.ManagedByValue
	return w.OwnedBy("Job", true)
}

// EmptyDir adds an emptyDir volume to spec.volumes.
func (w *podWrapper) EmptyDir() *podWrapper {
	w.Spec.Volumes = append(w.Spec.Volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	return w
}

// Terminating sets metadata.deletionTimestamp, with a finalizer that holds
// the pod as a real kubelet's shutdown would.
func (w *podWrapper) Terminating() *podWrapper {
	w.DeletionTimestamp = &t0
	w.Finalizers = []string{"example.com/hold"}
	return w
}

// Obj returns the pod.
func (w *podWrapper) Obj() corev1.Pod { return *w.Pod.DeepCopy() }

// Ptr returns a pointer to a copy of the pod, for a fake client.
func (w *podWrapper) Ptr() *corev1.Pod { return w.Pod.DeepCopy() }

// fakeMember is a fake member API server holding objs, whose pods are
// listed by spec.nodeName as the API server lists them.
func fakeMember(objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithObjects(objs...).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).
		Build()
}

// refuseEvictions makes the eviction of the named pods fail 429, as a
// PodDisruptionBudget refuses it, while refusing reports true.
func refuseEvictions(refusing func() bool, pods ...string) interceptor.Funcs {
	return interceptor.Funcs{SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
		if sub == "eviction" && refusing() && slices.Contains(pods, obj.GetName()) {
			return apierrors.NewTooManyRequests(pdbRefusal, 10)
		}
		return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
	}}
}

func always() bool { return true }

// failEvictions makes every eviction fail with err.
func failEvictions(err error) interceptor.Funcs {
	return interceptor.Funcs{SubResourceCreate: func(context.Context, client.Client, string, client.Object, client.Object, ...client.SubResourceCreateOption) error {
		return err
	}}
}

// failEvictionsOf makes the eviction of the named pods fail with err.
func failEvictionsOf(err error, pods ...string) interceptor.Funcs {
	return interceptor.Funcs{SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
		if sub == "eviction" && slices.Contains(pods, obj.GetName()) {
			return err
		}
		return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
	}}
}

// failNodePatches makes every Patch of a node fail with err.
func failNodePatches(err error) interceptor.Funcs {
	return interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if _, ok := obj.(*corev1.Node); ok {
			return err
		}
		return c.Patch(ctx, obj, patch, opts...)
	}}
}

var nodeConflict = apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "a", errors.New("the object has been modified"))

// cordonState is what a drain reads and writes on a node.
type cordonState struct {
	Unschedulable bool
	Annotations   map[string]string
}

// cordonOf is node name's cordonState in c, nil when it is gone.
func cordonOf(t *testing.T, c client.Reader, name string) *cordonState {
	t.Helper()
	var node corev1.Node
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, &node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	s := &cordonState{Unschedulable: node.Spec.Unschedulable, Annotations: node.Annotations}
	if len(s.Annotations) == 0 {
		s.Annotations = nil
	}
	return s
}

// evicted adds the drain's count of evicted pods to s: annotation
// fleetjob.io/drain-evicted.
func (s *cordonState) evicted(count string) *cordonState {
	s.Annotations[fleetv1.DrainEvictedAnnotation] = count
	return s
}

// cordonsOf are the cordonStates of the named nodes in c.
func cordonsOf(t *testing.T, c client.Reader, names ...string) map[string]*cordonState {
	t.Helper()
	out := map[string]*cordonState{}
	for _, n := range names {
		out[n] = cordonOf(t, c, n)
	}
	return out
}

// marked is the cordonState of a node owner cordoned at started.
func marked(owner string, started time.Time) *cordonState {
	return &cordonState{Unschedulable: true, Annotations: map[string]string{
		fleetv1.CordonedByAnnotation: owner, fleetv1.DrainStartedAnnotation: stamp(started),
	}}
}

// podsLeft lists every pod in c as "namespace/name", sorted.
func podsLeft(t *testing.T, c client.Reader) []string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out
}

func podNames(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestDrainTargets(t *testing.T) {
	web := makePod("web", "a").OwnedBy("ReplicaSet", true)
	bare := makePod("bare", "a").Bare()
	scratch := makePod("scratch", "a").OwnedBy("ReplicaSet", true).EmptyDir()
	testCases := map[string]struct {
		pods        []corev1.Pod
		drain       fleetv1.Drain
		wantEvict   []string
		wantWait    []string
		wantBlocked string
		wantErr     string
	}{
		"no pods": {},
		"a controlled pod is evicted": {
			pods:      []corev1.Pod{web.Obj(), makePod("sts-0", "a").OwnedBy("StatefulSet", true).Obj()},
			wantEvict: []string{"web", "sts-0"},
		},
		"finished pods stay": {
			pods: []corev1.Pod{
				makePod("done", "a").Bare().Phase(corev1.PodSucceeded).Obj(),
				makePod("crashed", "a").Bare().EmptyDir().Phase(corev1.PodFailed).Obj(),
			},
		},
		"mirror pods stay": {
			pods: []corev1.Pod{makePod("etcd-a", "a").Bare().Mirror().Obj()},
		},
		"DaemonSet pods stay": {
			pods: []corev1.Pod{makePod("agent", "a").OwnedBy("DaemonSet", true).EmptyDir().Obj()},
		},
		"fleetjob Job pods stay, this run's or another's": {
			pods: []corev1.Pod{makePod("disk-clean-a", "a").FleetJob().Obj(), makePod("bare-fleetjob", "a").Bare().FleetJob().Bare().Obj()},
		},
		"another Job's pod is evicted": {
			pods:      []corev1.Pod{makePod("batch", "a").OwnedBy("Job", true).Obj()},
			wantEvict: []string{"batch"},
		},
		"pods podSelector does not select stay, even bare ones": {
			pods: []corev1.Pod{web.Obj(), makePod("agent", "a").Bare().EmptyDir().Obj()},
			drain: fleetv1.Drain{PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"agent"}},
			}}},
			wantEvict: []string{"web"},
		},
		"a terminating pod is waited for, bare or not": {
			pods:      []corev1.Pod{makePod("old", "a").OwnedBy("ReplicaSet", true).Terminating().Obj(), makePod("old-bare", "a").Bare().EmptyDir().Terminating().Obj(), web.Obj()},
			wantEvict: []string{"web"},
			wantWait:  []string{"old", "old-bare"},
		},
		"a bare pod blocks": {
			pods:        []corev1.Pod{web.Obj(), bare.Obj()},
			wantBlocked: "pod team-a/bare has no controller: nothing would recreate it (spec.nodePreparation.drain.force evicts it)",
		},
		"an owner that is not the controller does not count": {
			pods:        []corev1.Pod{makePod("adopted", "a").OwnedBy("ReplicaSet", false).Obj()},
			wantBlocked: "pod team-a/adopted has no controller: nothing would recreate it (spec.nodePreparation.drain.force evicts it)",
		},
		"force evicts a bare pod": {
			pods:      []corev1.Pod{bare.Obj()},
			drain:     fleetv1.Drain{Force: true},
			wantEvict: []string{"bare"},
		},
		"an emptyDir pod blocks": {
			pods:        []corev1.Pod{scratch.Obj()},
			wantBlocked: "pod team-a/scratch has emptyDir data that eviction would delete (spec.nodePreparation.drain.deleteEmptyDirData evicts it)",
		},
		"deleteEmptyDirData evicts it": {
			pods:      []corev1.Pod{scratch.Obj()},
			drain:     fleetv1.Drain{DeleteEmptyDirData: true},
			wantEvict: []string{"scratch"},
		},
		"force does not evict a bare pod's emptyDir data": {
			pods:        []corev1.Pod{makePod("bare-scratch", "a").Bare().EmptyDir().Obj()},
			drain:       fleetv1.Drain{Force: true},
			wantBlocked: "pod team-a/bare-scratch has emptyDir data that eviction would delete (spec.nodePreparation.drain.deleteEmptyDirData evicts it)",
		},
		"the first pod that blocks is named": {
			pods:        []corev1.Pod{scratch.Obj(), bare.Obj()},
			wantBlocked: "pod team-a/scratch has emptyDir data that eviction would delete (spec.nodePreparation.drain.deleteEmptyDirData evicts it)",
		},
		"an invalid podSelector is an error": {
			pods:    []corev1.Pod{web.Obj()},
			drain:   fleetv1.Drain{PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}},
			wantErr: `spec.nodePreparation.drain.podSelector: "Near" is not a valid label selector operator`,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			evict, wait, blocked, err := drainTargets(tc.pods, &tc.drain)
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("drainTargets() error mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantBlocked, blocked); diff != "" {
				t.Errorf("drainTargets() blocked mismatch (-want +got):\n%s", diff)
			}
			if blocked != "" {
				return // a blocked drain evicts nothing: the lists do not matter
			}
			if diff := cmp.Diff(tc.wantEvict, podNames(evict)); diff != "" {
				t.Errorf("drainTargets() evict mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWait, podNames(wait)); diff != "" {
				t.Errorf("drainTargets() wait mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// cordonMeanwhile has someone else cordon the node right before the first
// node patch goes out, as an administrator racing the drain would.
func cordonMeanwhile() interceptor.Funcs {
	return interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if _, ok := obj.(*corev1.Node); ok {
			var now corev1.Node
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &now); err != nil {
				return err
			}
			now.Spec.Unschedulable = true
			if err := c.Update(ctx, &now); err != nil {
				return err
			}
		}
		return c.Patch(ctx, obj, patch, opts...)
	}}
}

func TestStepDrain(t *testing.T) {
	web := makePod("web", "a").OwnedBy("ReplicaSet", true)
	elsewhere := makePod("elsewhere", "b").OwnedBy("ReplicaSet", true)
	now := t0.Add(time.Minute)
	testCases := map[string]struct {
		node     *nodeWrapper
		pods     []client.Object
		drain    fleetv1.Drain
		funcs    interceptor.Funcs
		now      time.Time
		want     DrainStep
		wantErr  string
		wantNode *cordonState
		wantPods []string
	}{
		"first step cordons with the run's mark and the time, evicts, and counts the evictions on the node": {
			node:     makeNode("a"),
			pods:     []client.Object{web.Ptr(), elsewhere.Ptr()},
			want:     DrainStep{Evicted: 1, Left: 1, Started: now, EvictedTotal: 1},
			wantNode: marked(ownMark, now).evicted("1"),
			wantPods: []string{"team-a/elsewhere"},
		},
		"other annotations are kept": {
			node: makeNode("a").Annotation("team", "storage"),
			want: DrainStep{Drained: true, Started: now},
			wantNode: &cordonState{Unschedulable: true, Annotations: map[string]string{
				"team": "storage", fleetv1.CordonedByAnnotation: ownMark, fleetv1.DrainStartedAnnotation: stamp(now),
			}},
		},
		"an empty node is drained at once, nothing counted": {
			node:     makeNode("a"),
			pods:     []client.Object{elsewhere.Ptr()},
			want:     DrainStep{Drained: true, Started: now},
			wantNode: marked(ownMark, now),
			wantPods: []string{"team-a/elsewhere"},
		},
		"pods a drain leaves do not hold it": {
			node: makeNode("a"),
			pods: []client.Object{
				makePod("agent", "a").OwnedBy("DaemonSet", true).Ptr(),
				makePod("disk-clean-a", "a").FleetJob().Ptr(),
				makePod("done", "a").Bare().Phase(corev1.PodSucceeded).Ptr(),
			},
			want:     DrainStep{Drained: true, Started: now},
			wantNode: marked(ownMark, now),
			wantPods: []string{"team-a/agent", "team-a/disk-clean-a", "team-a/done"},
		},
		"a PodDisruptionBudget refuses: draining, waiting on the pod": {
			node:     makeNode("a"),
			pods:     []client.Object{web.Ptr()},
			funcs:    refuseEvictions(always, "web"),
			want:     DrainStep{Left: 1, Waiting: "the eviction of pod team-a/web is refused for now: " + pdbRefusal, Started: now},
			wantNode: marked(ownMark, now),
			wantPods: []string{"team-a/web"},
		},
		"a terminating pod is waited for, the others evicted": {
			node:     makeNode("a"),
			pods:     []client.Object{makePod("old", "a").OwnedBy("ReplicaSet", true).Terminating().Ptr(), web.Ptr()},
			want:     DrainStep{Evicted: 1, Left: 2, Waiting: "pod team-a/old is terminating", Started: now, EvictedTotal: 1},
			wantNode: marked(ownMark, now).evicted("1"),
			wantPods: []string{"team-a/old"},
		},
		"a later step keeps the mark and its time": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time),
			pods:     []client.Object{web.Ptr()},
			now:      t0.Add(5 * time.Minute),
			want:     DrainStep{Evicted: 1, Left: 1, Started: t0.Time, EvictedTotal: 1},
			wantNode: marked(ownMark, t0.Time).evicted("1"),
		},
		"a later step adds its evictions to the count on the node": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time).Evicted("1"),
			pods:     []client.Object{web.Ptr()},
			now:      t0.Add(5 * time.Minute),
			want:     DrainStep{Evicted: 1, Left: 1, Started: t0.Time, EvictedTotal: 2},
			wantNode: marked(ownMark, t0.Time).evicted("2"),
		},
		"a later step that evicts nothing leaves the count": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time).Evicted("1"),
			pods:     []client.Object{web.Ptr()},
			funcs:    refuseEvictions(always, "web"),
			want:     DrainStep{Left: 1, Waiting: "the eviction of pod team-a/web is refused for now: " + pdbRefusal, Started: t0.Time, EvictedTotal: 1},
			wantNode: marked(ownMark, t0.Time).evicted("1"),
			wantPods: []string{"team-a/web"},
		},
		"a count that does not parse counts from zero": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time).Evicted("many"),
			pods:     []client.Object{web.Ptr()},
			want:     DrainStep{Evicted: 1, Left: 1, Started: t0.Time, EvictedTotal: 1},
			wantNode: marked(ownMark, t0.Time).evicted("1"),
		},
		"just before the timeout, it still evicts": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time),
			pods:     []client.Object{web.Ptr()},
			now:      t0.Add(fleetv1.DefaultDrainTimeout - time.Second),
			want:     DrainStep{Evicted: 1, Left: 1, Started: t0.Time, EvictedTotal: 1},
			wantNode: marked(ownMark, t0.Time).evicted("1"),
		},
		"the default timeout passed since the cordon: DrainTimeout, nothing evicted": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time),
			pods:     []client.Object{makePod("old", "a").OwnedBy("ReplicaSet", true).Terminating().Ptr(), web.Ptr()},
			now:      t0.Add(fleetv1.DefaultDrainTimeout),
			want:     DrainStep{Reason: fleetv1.NodeReasonDrainTimeout, Message: "2 pods were still on the node 10m0s after its drain began (spec.nodePreparation.drain.timeout), pod team-a/web first", Started: t0.Time},
			wantNode: marked(ownMark, t0.Time),
			wantPods: []string{"team-a/old", "team-a/web"},
		},
		"the drain's own timeout, with the pods it evicted before": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time).Evicted("2"),
			pods:     []client.Object{web.Ptr()},
			drain:    fleetv1.Drain{Timeout: &metav1.Duration{Duration: 30 * time.Second}},
			now:      t0.Add(30 * time.Second),
			want:     DrainStep{Reason: fleetv1.NodeReasonDrainTimeout, Message: "1 pods were still on the node 30s after its drain began (spec.nodePreparation.drain.timeout), pod team-a/web first", Started: t0.Time, EvictedTotal: 2},
			wantNode: marked(ownMark, t0.Time).evicted("2"),
			wantPods: []string{"team-a/web"},
		},
		"drained after the timeout: drained, not failed": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time).Evicted("3"),
			now:      t0.Add(time.Hour),
			want:     DrainStep{Drained: true, Started: t0.Time, EvictedTotal: 3},
			wantNode: marked(ownMark, t0.Time).evicted("3"),
		},
		"a pod the drain may not evict fails it DrainBlocked, after the cordon, evicting nothing": {
			node:     makeNode("a"),
			pods:     []client.Object{web.Ptr(), makePod("bare", "a").Bare().Ptr()},
			want:     DrainStep{Reason: fleetv1.NodeReasonDrainBlocked, Message: "pod team-a/bare has no controller: nothing would recreate it (spec.nodePreparation.drain.force evicts it)", Started: now},
			wantNode: marked(ownMark, now),
			wantPods: []string{"team-a/bare", "team-a/web"},
		},
		"cordoned by someone else: an error, never marked": {
			node:     makeNode("a").Unschedulable(),
			pods:     []client.Object{web.Ptr()},
			wantErr:  "node a was cordoned by someone else: fleetjob drains only nodes it cordons",
			wantNode: &cordonState{Unschedulable: true},
			wantPods: []string{"team-a/web"},
		},
		"cordoned by another run of this hub: an error": {
			node:     makeNode("a").CordonedBy(testHub+"/"+string(otherUID), t0.Time),
			pods:     []client.Object{web.Ptr()},
			wantErr:  "node a was cordoned by someone else: fleetjob drains only nodes it cordons",
			wantNode: marked(testHub+"/"+string(otherUID), t0.Time),
			wantPods: []string{"team-a/web"},
		},
		"cordoned by this run from another hub: an error": {
			node:     makeNode("a").CordonedBy(otherHub+"/"+string(testUID), t0.Time),
			wantErr:  "node a was cordoned by someone else: fleetjob drains only nodes it cordons",
			wantNode: marked(otherHub+"/"+string(testUID), t0.Time),
		},
		"cordoned by someone else meanwhile: the conditional patch loses, never marked": {
			node:     makeNode("a"),
			pods:     []client.Object{web.Ptr()},
			funcs:    cordonMeanwhile(),
			wantErr:  `cordoning node a: Operation cannot be fulfilled on nodes "a": object was modified`,
			wantNode: &cordonState{Unschedulable: true},
			wantPods: []string{"team-a/web"},
		},
		"an eviction error is returned": {
			node:     makeNode("a"),
			pods:     []client.Object{web.Ptr()},
			funcs:    failEvictions(errors.New("connection refused")),
			want:     DrainStep{Left: 1, Started: now},
			wantErr:  "evicting pod team-a/web: connection refused",
			wantNode: marked(ownMark, now),
			wantPods: []string{"team-a/web"},
		},
		"an eviction error stops the step; the evictions accepted before it are counted": {
			node:     makeNode("a"),
			pods:     []client.Object{makePod("api", "a").OwnedBy("ReplicaSet", true).Ptr(), web.Ptr(), makePod("worker", "a").OwnedBy("ReplicaSet", true).Ptr()},
			funcs:    failEvictionsOf(errors.New("connection refused"), "web"),
			want:     DrainStep{Evicted: 1, Left: 3, Started: now, EvictedTotal: 1},
			wantErr:  "evicting pod team-a/web: connection refused",
			wantNode: marked(ownMark, now).evicted("1"),
			wantPods: []string{"team-a/web", "team-a/worker"},
		},
		"a count that cannot be stored is an error; the step still counts it": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time),
			pods:     []client.Object{web.Ptr()},
			funcs:    failNodePatches(errors.New("connection refused")),
			want:     DrainStep{Evicted: 1, Left: 1, Started: t0.Time, EvictedTotal: 1},
			wantErr:  "counting the pods evicted from node a: connection refused",
			wantNode: marked(ownMark, t0.Time),
		},
		"a pod gone before its eviction counts as evicted": {
			node:     makeNode("a"),
			pods:     []client.Object{web.Ptr()},
			funcs:    failEvictions(apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web")),
			want:     DrainStep{Evicted: 1, Left: 1, Started: now, EvictedTotal: 1},
			wantNode: marked(ownMark, now).evicted("1"),
			wantPods: []string{"team-a/web"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			live := fakeMember(append(tc.pods, tc.node.Ptr())...)
			c := interceptor.NewClient(live, tc.funcs)
			var node corev1.Node
			if err := live.Get(ctx, client.ObjectKey{Name: tc.node.Name}, &node); err != nil {
				t.Fatal(err)
			}
			at := tc.now
			if at.IsZero() {
				at = now
			}
			got, err := Member{Client: c, Live: live, Run: drainRun(tc.drain)}.StepDrain(ctx, &node, at)
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("StepDrain() error mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("StepDrain() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNode, cordonOf(t, live, "a")); diff != "" {
				t.Errorf("node afterwards mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPods, podsLeft(t, live)); diff != "" {
				t.Errorf("pods afterwards mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStepDrainSequence drains a node over steps: a PodDisruptionBudget
// refuses the eviction, then allows it, then the pod is gone.
func TestStepDrainSequence(t *testing.T) {
	ctx := context.Background()
	live := fakeMember(makeNode("a").Ptr(), makePod("web", "a").OwnedBy("ReplicaSet", true).Ptr())
	var refusing atomic.Bool
	refusing.Store(true)
	c := interceptor.NewClient(live, refuseEvictions(refusing.Load, "web"))
	run := drainRun(fleetv1.Drain{})
	var got []DrainStep
	for i, allow := range []bool{false, true, true} {
		refusing.Store(!allow)
		var node corev1.Node
		if err := live.Get(ctx, client.ObjectKey{Name: "a"}, &node); err != nil {
			t.Fatal(err)
		}
		step, err := Member{Client: c, Live: live, Run: run}.StepDrain(ctx, &node, t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatalf("step %d: StepDrain() error = %v", i, err)
		}
		got = append(got, step)
	}
	want := []DrainStep{
		{Left: 1, Waiting: "the eviction of pod team-a/web is refused for now: " + pdbRefusal, Started: t0.Time},
		{Left: 1, Evicted: 1, Started: t0.Time, EvictedTotal: 1},
		{Drained: true, Started: t0.Time, EvictedTotal: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(marked(ownMark, t0.Time).evicted("1"), cordonOf(t, live, "a")); diff != "" {
		t.Errorf("node afterwards mismatch (-want +got):\n%s", diff)
	}
}

// TestStepDrainCountsAcrossSteps drains a node of two pods over steps, one
// eviction each (a PodDisruptionBudget refuses the second pod's at first):
// the count on the node adds up to both, and the drain's result says so.
func TestStepDrainCountsAcrossSteps(t *testing.T) {
	ctx := context.Background()
	live := fakeMember(makeNode("a").Ptr(), makePod("api", "a").OwnedBy("ReplicaSet", true).Ptr(), makePod("web", "a").OwnedBy("ReplicaSet", true).Ptr())
	var refusing atomic.Bool
	c := interceptor.NewClient(live, refuseEvictions(refusing.Load, "web"))
	run := drainRun(fleetv1.Drain{})
	var got []DrainStep
	var counts []*cordonState
	for i, refuse := range []bool{true, false, false} {
		refusing.Store(refuse)
		var node corev1.Node
		if err := live.Get(ctx, client.ObjectKey{Name: "a"}, &node); err != nil {
			t.Fatal(err)
		}
		step, err := Member{Client: c, Live: live, Run: run}.StepDrain(ctx, &node, t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatalf("step %d: StepDrain() error = %v", i, err)
		}
		got = append(got, step)
		counts = append(counts, cordonOf(t, live, "a"))
	}
	want := []DrainStep{
		{Left: 2, Evicted: 1, Waiting: "the eviction of pod team-a/web is refused for now: " + pdbRefusal, Started: t0.Time, EvictedTotal: 1},
		{Left: 1, Evicted: 1, Started: t0.Time, EvictedTotal: 2},
		{Drained: true, Started: t0.Time, EvictedTotal: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps mismatch (-want +got):\n%s", diff)
	}
	wantCounts := []*cordonState{marked(ownMark, t0.Time).evicted("1"), marked(ownMark, t0.Time).evicted("2"), marked(ownMark, t0.Time).evicted("2")}
	if diff := cmp.Diff(wantCounts, counts); diff != "" {
		t.Errorf("node after each step mismatch (-want +got):\n%s", diff)
	}
	wantResult := noderesults.Drain{Start: t0.Unix(), Seconds: 120, Evicted: 2}
	if diff := cmp.Diff(wantResult, got[2].Result(t0.Add(2*time.Minute))); diff != "" {
		t.Errorf("Result() of the last step mismatch (-want +got):\n%s", diff)
	}
}

func TestDrainStepResult(t *testing.T) {
	testCases := map[string]struct {
		step DrainStep
		now  time.Time
		want noderesults.Drain
	}{
		"drained at its cordon": {
			step: DrainStep{Drained: true, Started: t0.Time},
			now:  t0.Time,
			want: noderesults.Drain{Start: t0.Unix()},
		},
		"failed after evicting": {
			step: DrainStep{Reason: fleetv1.NodeReasonDrainTimeout, Started: t0.Time, EvictedTotal: 4},
			now:  t0.Add(10 * time.Minute),
			want: noderesults.Drain{Start: t0.Unix(), Seconds: 600, Evicted: 4},
		},
		"part of a second is not counted": {
			step: DrainStep{Drained: true, Started: t0.Time},
			now:  t0.Add(1999 * time.Millisecond),
			want: noderesults.Drain{Start: t0.Unix(), Seconds: 1},
		},
		"a clock behind the cordon's: no time, never negative": {
			step: DrainStep{Drained: true, Started: t0.Time},
			now:  t0.Add(-time.Minute),
			want: noderesults.Drain{Start: t0.Unix()},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.step.Result(tc.now)); diff != "" {
				t.Errorf("Result() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStepDrainTimesOutWithAnUnreadableMark: the run's mark with a
// drain-started time that does not parse (someone edited it) must still
// let the drain's timeout end a drain a PodDisruptionBudget holds forever,
// as cordon's comment promises ("its timeout still bounds it").
func TestStepDrainTimesOutWithAnUnreadableMark(t *testing.T) {
	ctx := context.Background()
	node := makeNode("a").CordonedBy(ownMark, t0.Time).Annotation(fleetv1.DrainStartedAnnotation, "yesterday")
	live := fakeMember(node.Ptr(), makePod("web", "a").OwnedBy("ReplicaSet", true).Ptr())
	c := interceptor.NewClient(live, refuseEvictions(always, "web"))
	run := drainRun(fleetv1.Drain{Timeout: &metav1.Duration{Duration: time.Minute}})
	var last DrainStep
	for i := range 5 {
		var n corev1.Node
		if err := live.Get(ctx, client.ObjectKey{Name: "a"}, &n); err != nil {
			t.Fatal(err)
		}
		step, err := Member{Client: c, Live: live, Run: run}.StepDrain(ctx, &n, t0.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatalf("step %d: StepDrain() error = %v", i, err)
		}
		last = step
	}
	if last.Reason != fleetv1.NodeReasonDrainTimeout {
		t.Errorf("after 4m of a 1m drain, the last step = %+v, want it failed %s: the drain never times out", last, fleetv1.NodeReasonDrainTimeout)
	}
}

func TestReleaseNode(t *testing.T) {
	otherRun := testHub + "/" + string(otherUID)
	otherHubs := otherHub + "/" + string(testUID)
	testCases := map[string]struct {
		node     *nodeWrapper // nil: deleted
		keep     bool
		funcs    interceptor.Funcs
		wantNode *cordonState
		wantErr  string
	}{
		"the run's mark: uncordoned, mark and count removed, other annotations kept": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time).Evicted("3").Annotation("team", "storage"),
			wantNode: &cordonState{Annotations: map[string]string{"team": "storage"}},
		},
		"keep: stays cordoned, mark and count removed": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time).Evicted("3"),
			keep:     true,
			wantNode: &cordonState{Unschedulable: true},
		},
		"the run's mark on a node uncordoned by hand: the mark is removed": {
			node:     makeNode("a").Annotation(fleetv1.CordonedByAnnotation, ownMark).Annotation(fleetv1.DrainStartedAnnotation, stamp(t0.Time)),
			keep:     true,
			wantNode: &cordonState{},
		},
		"cordoned by someone else: untouched": {
			node:     makeNode("a").Unschedulable(),
			wantNode: &cordonState{Unschedulable: true},
		},
		"cordoned by another run of this hub: untouched, its count too": {
			node:     makeNode("a").CordonedBy(otherRun, t0.Time).Evicted("3"),
			wantNode: marked(otherRun, t0.Time).evicted("3"),
		},
		"cordoned by this ClusterJob from another hub: untouched": {
			node:     makeNode("a").CordonedBy(otherHubs, t0.Time),
			wantNode: marked(otherHubs, t0.Time),
		},
		"the node is gone: released": {},
		"deleted between the read and the patch: released": {
			node:  makeNode("a").CordonedBy(ownMark, t0.Time),
			funcs: failNodePatches(apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "a")),
			// The fake still has it: the interceptor said it was gone.
			wantNode: marked(ownMark, t0.Time),
		},
		"a conflict is an error, the node untouched": {
			node:     makeNode("a").CordonedBy(ownMark, t0.Time).Evicted("3"),
			funcs:    failNodePatches(nodeConflict),
			wantNode: marked(ownMark, t0.Time).evicted("3"),
			wantErr:  `uncordoning node a: Operation cannot be fulfilled on nodes "a": the object has been modified`,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			var objs []client.Object
			if tc.node != nil {
				objs = append(objs, tc.node.Ptr())
			}
			live := fakeMember(objs...)
			c := interceptor.NewClient(live, tc.funcs)
			err := Member{Client: c, Live: live, Run: drainRun(fleetv1.Drain{})}.ReleaseNode(context.Background(), "a", tc.keep)
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("ReleaseNode() error mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNode, cordonOf(t, live, "a")); diff != "" {
				t.Errorf("node afterwards mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// releaseState is a run's state with nodes in the given phases (a node's
// reason after a colon: "Failed:DrainTimeout"), the run having cordoned
// those in cordoned.
func releaseState(phases map[string]string, cordoned ...string) *State {
	st := &State{Cordoned: present(cordoned...)}
	for _, n := range slices.Sorted(maps.Keys(phases)) {
		phase, reason, _ := strings.Cut(phases[n], ":")
		st.Nodes = append(st.Nodes, NodeState{Node: n, Phase: NodePhase(phase), Reason: reason})
	}
	return st
}

func TestReleaseNodes(t *testing.T) {
	phases := map[string]string{
		"succeeded": "Succeeded",
		"failed":    "Failed:BackoffLimitExceeded",
		"timedout":  "Failed:" + fleetv1.NodeReasonDrainTimeout,
		"blocked":   "Failed:" + fleetv1.NodeReasonDrainBlocked,
		"skipped":   "Skipped:" + fleetv1.NodeReasonNodeDeleted,
		"pending":   "Pending",
		"running":   "Running",
	}
	names := []string{"blocked", "failed", "pending", "running", "skipped", "succeeded", "timedout"}
	uncordoned := &cordonState{}
	kept := &cordonState{Unschedulable: true}
	ours := marked(ownMark, t0.Time)
	testCases := map[string]struct {
		drain        fleetv1.Drain
		all          bool
		funcs        interceptor.Funcs
		foreign      map[string]string // nodes someone else cordoned since, by mark
		wantLeft     int
		wantErr      string
		wantNodes    map[string]*cordonState
		wantCordoned map[string]bool
	}{
		"nodes done are uncordoned; pending and running ones stay": {
			wantNodes: map[string]*cordonState{
				"blocked": uncordoned, "failed": uncordoned, "succeeded": uncordoned, "timedout": uncordoned, "skipped": nil,
				"pending": ours, "running": ours,
			},
			wantCordoned: present("pending", "running"),
		},
		"all: every node is uncordoned": {
			all: true,
			wantNodes: map[string]*cordonState{
				"blocked": uncordoned, "failed": uncordoned, "succeeded": uncordoned, "timedout": uncordoned, "skipped": nil,
				"pending": uncordoned, "running": uncordoned,
			},
			wantCordoned: map[string]bool{},
		},
		"keepCordoned keeps a succeeded node cordoned, without the mark; a failed one is uncordoned": {
			drain: fleetv1.Drain{KeepCordoned: true},
			wantNodes: map[string]*cordonState{
				"blocked": uncordoned, "failed": uncordoned, "succeeded": kept, "timedout": uncordoned, "skipped": nil,
				"pending": ours, "running": ours,
			},
			wantCordoned: present("pending", "running"),
		},
		"onTimeout Leave keeps the nodes whose drain failed cordoned, without the mark": {
			drain: fleetv1.Drain{OnTimeout: fleetv1.DrainLeave},
			wantNodes: map[string]*cordonState{
				"blocked": kept, "failed": uncordoned, "succeeded": uncordoned, "timedout": kept, "skipped": nil,
				"pending": ours, "running": ours,
			},
			wantCordoned: present("pending", "running"),
		},
		"onTimeout Uncordon uncordons them": {
			drain: fleetv1.Drain{OnTimeout: fleetv1.DrainUncordon},
			all:   true,
			wantNodes: map[string]*cordonState{
				"blocked": uncordoned, "failed": uncordoned, "succeeded": uncordoned, "timedout": uncordoned, "skipped": nil,
				"pending": uncordoned, "running": uncordoned,
			},
			wantCordoned: map[string]bool{},
		},
		"a node someone else cordoned since is left alone, and forgotten": {
			foreign: map[string]string{"succeeded": otherHub + "/" + string(testUID), "failed": testHub + "/" + string(otherUID)},
			wantNodes: map[string]*cordonState{
				"blocked": uncordoned, "timedout": uncordoned, "skipped": nil, "pending": ours, "running": ours,
				"succeeded": marked(otherHub+"/"+string(testUID), t0.Time), "failed": marked(testHub+"/"+string(otherUID), t0.Time),
			},
			wantCordoned: present("pending", "running"),
		},
		"a release that fails stays to do": {
			funcs:    failNodePatches(nodeConflict),
			wantLeft: 4,
			wantErr:  `uncordoning node ` + "blocked" + `: Operation cannot be fulfilled on nodes "a": the object has been modified (and 3 more)`,
			wantNodes: map[string]*cordonState{
				"blocked": ours, "failed": ours, "succeeded": ours, "timedout": ours, "skipped": nil, "pending": ours, "running": ours,
			},
			wantCordoned: present("blocked", "failed", "pending", "running", "succeeded", "timedout"),
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			var objs []client.Object
			for _, n := range names {
				if n == "skipped" {
					continue // deleted
				}
				owner := ownMark
				if f, ok := tc.foreign[n]; ok {
					owner = f
				}
				objs = append(objs, makeNode(n).CordonedBy(owner, t0.Time).Ptr())
			}
			live := fakeMember(objs...)
			c := interceptor.NewClient(live, tc.funcs)
			st := releaseState(phases, names...)
			left, err := Member{Client: c, Live: live, Run: drainRun(tc.drain)}.ReleaseNodes(context.Background(), st, tc.all)
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("ReleaseNodes() error mismatch (-want +got):\n%s", diff)
			}
			if left != tc.wantLeft {
				t.Errorf("ReleaseNodes() left = %d, want %d", left, tc.wantLeft)
			}
			if diff := cmp.Diff(tc.wantNodes, cordonsOf(t, live, names...)); diff != "" {
				t.Errorf("nodes afterwards mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCordoned, st.Cordoned); diff != "" {
				t.Errorf("State.Cordoned afterwards mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReleaseNodesBounded: one call patches at most maxReleasesPerCall
// nodes and says how many are left; the next releases them.
func TestReleaseNodesBounded(t *testing.T) {
	var objs []client.Object
	phases := map[string]string{}
	var names []string
	for i := range maxReleasesPerCall + 10 {
		n := fmt.Sprintf("n%03d", i)
		names = append(names, n)
		phases[n] = "Succeeded"
		objs = append(objs, makeNode(n).CordonedBy(ownMark, t0.Time).Ptr())
	}
	c := fakeMember(objs...)
	st := releaseState(phases, names...)
	run := drainRun(fleetv1.Drain{})
	var lefts []int
	for range 2 {
		left, err := Member{Client: c, Live: c, Run: run}.ReleaseNodes(context.Background(), st, false)
		if err != nil {
			t.Fatal(err)
		}
		lefts = append(lefts, left)
	}
	if diff := cmp.Diff([]int{10, 0}, lefts); diff != "" {
		t.Errorf("left after each call (-want +got):\n%s", diff)
	}
	for _, n := range names {
		if s := cordonOf(t, c, n); s.Unschedulable || s.Annotations != nil {
			t.Errorf("node %s = %+v, want it uncordoned and unmarked", n, s)
		}
	}
}

// TestReleaseNodesCancelled: a call whose context is done (the reconcile's
// deadline passed, the hub stops) releases nothing, and must not say it
// did: the nodes are still cordoned, so they are left to release and stay
// in State.Cordoned, or the call fails.
func TestReleaseNodesCancelled(t *testing.T) {
	c := fakeMember(makeNode("a").CordonedBy(ownMark, t0.Time).Ptr(), makeNode("b").CordonedBy(ownMark, t0.Time).Ptr())
	st := releaseState(map[string]string{"a": "Succeeded", "b": "Succeeded"}, "a", "b")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	left, err := Member{Client: c, Live: c, Run: drainRun(fleetv1.Drain{})}.ReleaseNodes(ctx, st, false)
	if diff := cmp.Diff(map[string]*cordonState{"a": marked(ownMark, t0.Time), "b": marked(ownMark, t0.Time)}, cordonsOf(t, c, "a", "b")); diff != "" {
		t.Fatalf("nodes afterwards mismatch (-want +got):\n%s", diff)
	}
	if err == nil && left != 2 {
		t.Errorf("ReleaseNodes() = %d, nil; want 2 left (or an error): both nodes are still cordoned", left)
	}
	if diff := cmp.Diff(present("a", "b"), st.Cordoned); diff != "" {
		t.Errorf("State.Cordoned afterwards mismatch (-want +got): nodes still cordoned were forgotten\n%s", diff)
	}
}

func TestStateDrainingAndReleasable(t *testing.T) {
	st := releaseState(map[string]string{
		"pending-ours": "Pending", "pending": "Pending", "running": "Running", "succeeded": "Succeeded",
		"timedout": "Failed:" + fleetv1.NodeReasonDrainTimeout, "failed": "Failed:BackoffLimitExceeded", "skipped": "Skipped:NodeDeleted",
	}, "pending-ours", "running", "succeeded", "timedout", "failed", "skipped")
	if got := st.Draining(); got != 1 {
		t.Errorf("Draining() = %d, want 1 (the Pending node the run cordoned)", got)
	}
	type release struct {
		Nodes []string
		Keep  []bool
	}
	testCases := map[string]struct {
		drain fleetv1.Drain
		all   bool
		want  release
	}{
		"defaults: every node done is uncordoned": {
			want: release{Nodes: []string{"failed", "skipped", "succeeded", "timedout"}, Keep: []bool{false, false, false, false}},
		},
		"keepCordoned and onTimeout Leave": {
			drain: fleetv1.Drain{KeepCordoned: true, OnTimeout: fleetv1.DrainLeave},
			want:  release{Nodes: []string{"failed", "skipped", "succeeded", "timedout"}, Keep: []bool{false, false, true, true}},
		},
		"all": {
			all:  true,
			want: release{Nodes: []string{"failed", "pending-ours", "running", "skipped", "succeeded", "timedout"}, Keep: []bool{false, false, false, false, false, false}},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			nodes, keep := st.Releasable(&tc.drain, tc.all)
			if diff := cmp.Diff(tc.want, release{Nodes: nodes, Keep: keep}); diff != "" {
				t.Errorf("Releasable() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// startState is the state of run p in c now, with its record, as Observe
// reads it.
func startState(t *testing.T, c client.Reader, run Run, p *plan.Plan, nodes ...string) State {
	t.Helper()
	var jobs batchv1.JobList
	if err := c.List(context.Background(), &jobs); err != nil {
		t.Fatal(err)
	}
	rec, cm, err := ReadResults(context.Background(), c, run)
	if err != nil {
		t.Fatal(err)
	}
	st := Derive(p, jobs.Items, present(nodes...), rec)
	st.Recorded, st.RecordObject = rec, cm
	return st
}

// recordedNodes is the run's record in c, without the write attempts.
func recordedNodes(t *testing.T, c client.Reader, run Run) map[string]NodeResult {
	t.Helper()
	rec, _, err := ReadResults(context.Background(), c, run)
	if err != nil {
		t.Fatal(err)
	}
	nodes := rec.Nodes.Map()
	for n, r := range nodes {
		r.Attempt = ""
		nodes[n] = r
	}
	return nodes
}

// TestStartGroupDrains starts a drain run's group of three nodes, three
// times, a minute apart, as reconciles do: an empty node gets its Job at
// once; one whose pod a PodDisruptionBudget holds stays Pending, draining,
// until the pod is evicted and gone; one with a pod the drain may not evict
// fails DrainBlocked and never gets a Job. Each node's record says what its
// drain came to, and the run's state and published results show it.
func TestStartGroupDrains(t *testing.T) {
	p := allOf("empty", "held", "blocked")
	nodes := []string{"empty", "held", "blocked"}
	live := fakeMember(append(nodeObjects(nodes...),
		makePod("web", "held").OwnedBy("ReplicaSet", true).Ptr(),
		makePod("bare", "blocked").Bare().Ptr(),
	)...)
	var refusing atomic.Bool
	c := interceptor.NewClient(live, refuseEvictions(refusing.Load, "web"))
	run := drainRun(fleetv1.Drain{})
	blocked := plan.SkippedNode{Node: "blocked", Reason: fleetv1.NodeReasonDrainBlocked,
		Message: "pod team-a/bare has no controller: nothing would recreate it (spec.nodePreparation.drain.force evicts it)"}
	// Every node is cordoned at the first start. The empty one is drained
	// then, the blocked one fails then; the held one is drained at the
	// third, two minutes on, its pod evicted.
	emptyDrain := noderesults.Drain{Start: t0.Unix(), Seconds: 0, Evicted: 0}
	blockedDrain := noderesults.Drain{Start: t0.Unix(), Seconds: 0, Evicted: 0}
	heldDrain := noderesults.Drain{Start: t0.Unix(), Seconds: 120, Evicted: 1}
	type start struct {
		Created []string
		Skipped []plan.SkippedNode
		Report  DrainReport
		Jobs    []string
	}
	steps := []struct {
		pdbRefuses bool
		want       start
	}{
		{pdbRefuses: true, want: start{
			Created: []string{"empty"},
			Skipped: []plan.SkippedNode{blocked},
			Report: DrainReport{Draining: 1, Waiting: "node held: the eviction of pod team-a/web is refused for now: " + pdbRefusal, Failed: []plan.SkippedNode{blocked},
				Results: map[string]noderesults.Drain{"empty": emptyDrain, "blocked": blockedDrain}},
			Jobs: []string{"empty"},
		}},
		{want: start{Report: DrainReport{Draining: 1, Evicted: 1, Results: map[string]noderesults.Drain{}}, Jobs: []string{"empty"}}},
		{want: start{Created: []string{"held"}, Report: DrainReport{Results: map[string]noderesults.Drain{"held": heldDrain}}, Jobs: []string{"empty", "held"}}},
	}
	for i, step := range steps {
		refusing.Store(step.pdbRefuses)
		st := startState(t, live, run, &p, nodes...)
		var report DrainReport
		created, skipped, err := Member{Client: c, Live: live, Run: run}.StartGroup(context.Background(), &st, 0, At(t0.Add(time.Duration(i)*time.Minute)), WithDrainReport(&report))
		if err != nil {
			t.Fatalf("start %d: StartGroup() error = %v", i, err)
		}
		var jobs batchv1.JobList
		if err := live.List(context.Background(), &jobs); err != nil {
			t.Fatal(err)
		}
		got := start{Created: jobNodes(created), Skipped: skipped, Report: report, Jobs: jobNodes(jobs.Items)}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("start %d mismatch (-want +got):\n%s", i, diff)
		}
		if i == 0 {
			want := map[string]NodeResult{
				"empty":   {Phase: NodeStarting, Drain: emptyDrain},
				"blocked": {Phase: NodeFailed, Reason: fleetv1.NodeReasonDrainBlocked, Message: blocked.Message, Drain: blockedDrain},
			}
			if diff := cmp.Diff(want, recordedNodes(t, live, run)); diff != "" {
				t.Errorf("record after the first start mismatch (-want +got):\n%s", diff)
			}
		}
	}
	want := map[string]NodeResult{
		"empty":   {Phase: NodeStarting, Drain: emptyDrain},
		"held":    {Phase: NodeStarting, Drain: heldDrain},
		"blocked": {Phase: NodeFailed, Reason: fleetv1.NodeReasonDrainBlocked, Message: blocked.Message, Drain: blockedDrain},
	}
	if diff := cmp.Diff(want, recordedNodes(t, live, run)); diff != "" {
		t.Errorf("record afterwards mismatch (-want +got):\n%s", diff)
	}
	wantNodes := map[string]*cordonState{"empty": marked(ownMark, t0.Time), "held": marked(ownMark, t0.Time).evicted("1"), "blocked": marked(ownMark, t0.Time)}
	if diff := cmp.Diff(wantNodes, cordonsOf(t, live, nodes...)); diff != "" {
		t.Errorf("nodes afterwards mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"team-a/bare"}, podsLeft(t, live)); diff != "" {
		t.Errorf("pods afterwards mismatch (-want +got):\n%s", diff)
	}
	wantDrains := map[string]noderesults.Drain{"empty": emptyDrain, "held": heldDrain, "blocked": blockedDrain}
	st := startState(t, live, run, &p, nodes...)
	stateDrains := map[string]noderesults.Drain{}
	for _, n := range st.Nodes {
		stateDrains[n.Node] = n.Drain
	}
	if diff := cmp.Diff(wantDrains, stateDrains); diff != "" {
		t.Errorf("NodeState.Drain by node, as the record is read back, mismatch (-want +got):\n%s", diff)
	}
	publishedDrains := map[string]noderesults.Drain{}
	for _, n := range st.Published().Nodes {
		publishedDrains[n.Name] = n.Drain
	}
	if diff := cmp.Diff(wantDrains, publishedDrains); diff != "" {
		t.Errorf("State.Published() drains by node mismatch (-want +got):\n%s", diff)
	}
}

// TestStartGroupDrainsSkipsNodesCordonedByOthers: a node someone else
// cordoned is skipped Unschedulable and never drained, marked or run.
func TestStartGroupDrainsSkipsNodesCordonedByOthers(t *testing.T) {
	other := makeNode("other").CordonedBy(testHub+"/"+string(otherUID), t0.Time)
	c := fakeMember(makeNode("a").Ptr(), makeNode("cordoned").Unschedulable().Ptr(), other.Ptr(),
		makePod("web", "cordoned").OwnedBy("ReplicaSet", true).Ptr())
	p := allOf("a", "cordoned", "other")
	run := drainRun(fleetv1.Drain{})
	st := startState(t, c, run, &p, "a", "cordoned", "other")
	created, skipped, err := Member{Client: c, Live: c, Run: run}.StartGroup(context.Background(), &st, 0, At(t0.Time))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a"}, jobNodes(created)); diff != "" {
		t.Errorf("StartGroup() created mismatch (-want +got):\n%s", diff)
	}
	wantSkipped := []plan.SkippedNode{
		{Node: "cordoned", Reason: fleetv1.NodeReasonUnschedulable, Message: "node is cordoned when its group started"},
		{Node: "other", Reason: fleetv1.NodeReasonUnschedulable, Message: "node is cordoned when its group started"},
	}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("StartGroup() skipped mismatch (-want +got):\n%s", diff)
	}
	wantNodes := map[string]*cordonState{
		"a": marked(ownMark, t0.Time), "cordoned": {Unschedulable: true}, "other": marked(testHub+"/"+string(otherUID), t0.Time),
	}
	if diff := cmp.Diff(wantNodes, cordonsOf(t, c, "a", "cordoned", "other")); diff != "" {
		t.Errorf("nodes afterwards mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"team-a/web"}, podsLeft(t, c)); diff != "" {
		t.Errorf("pods afterwards mismatch (-want +got):\n%s", diff)
	}
}

// TestStartGroupDrainsUnderADeadlineWithAnInjectedClock: the hub starts
// groups under a deadline, and takes its time from a clock it is given
// (At): a fake one in tests, whose time is not the wall clock's. The drain
// of an empty node must still happen, and its Job be created.
func TestStartGroupDrainsUnderADeadlineWithAnInjectedClock(t *testing.T) {
	c := fakeMember(makeNode("a").Ptr())
	p := allOf("a")
	run := drainRun(fleetv1.Drain{})
	st := startState(t, c, run, &p, "a")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var report DrainReport
	created, _, err := Member{Client: c, Live: c, Run: run}.StartGroup(ctx, &st, 0, At(t0.Time), WithDrainReport(&report))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a"}, jobNodes(created)); diff != "" {
		t.Errorf("StartGroup() created mismatch (-want +got), drain report %+v, node %+v:\n%s", report, cordonOf(t, c, "a"), diff)
	}
}

func TestRecheckDrainOwner(t *testing.T) {
	spec := makeClusterJob("disk-clean").Drain(fleetv1.Drain{}).Obj().Spec
	otherRun := testHub + "/" + string(otherUID)
	testCases := map[string]struct {
		node        corev1.Node
		owner       string
		wantReady   bool
		wantSkipped []plan.SkippedNode
	}{
		"cordoned by the run, and tainted for it: ready": {
			node:      makeNode("a").CordonedBy(ownMark, t0.Time).Taint(fleetv1.UnschedulableTaint, corev1.TaintEffectNoSchedule).Obj(),
			owner:     ownMark,
			wantReady: true,
		},
		"schedulable: ready": {
			node:      makeNode("a").Obj(),
			owner:     ownMark,
			wantReady: true,
		},
		"cordoned by someone else: Unschedulable": {
			node:        makeNode("a").Unschedulable().Taint(fleetv1.UnschedulableTaint, corev1.TaintEffectNoSchedule).Obj(),
			owner:       ownMark,
			wantSkipped: []plan.SkippedNode{{Node: "a", Reason: fleetv1.NodeReasonUnschedulable, Message: "node is cordoned when its group started"}},
		},
		"cordoned by another run: Unschedulable": {
			node:        makeNode("a").CordonedBy(otherRun, t0.Time).Obj(),
			owner:       ownMark,
			wantSkipped: []plan.SkippedNode{{Node: "a", Reason: fleetv1.NodeReasonUnschedulable, Message: "node is cordoned when its group started"}},
		},
		"a run that does not drain: its mark does not count": {
			node:        makeNode("a").CordonedBy(ownMark, t0.Time).Obj(),
			wantSkipped: []plan.SkippedNode{{Node: "a", Reason: fleetv1.NodeReasonUnschedulable, Message: "node is cordoned when its group started"}},
		},
		"cordoned by the run, another taint still counts": {
			node:  makeNode("a").CordonedBy(ownMark, t0.Time).Taint(fleetv1.UnschedulableTaint, corev1.TaintEffectNoSchedule).Taint("maintenance", corev1.TaintEffectNoExecute).Obj(),
			owner: ownMark,
			wantSkipped: []plan.SkippedNode{{Node: "a", Reason: fleetv1.NodeReasonUntoleratedTaint,
				Message: "taint maintenance:NoExecute is not tolerated by the Job template when its group started"}},
		},
		"cordoned by the run and NotReady: NotReady": {
			node: func() corev1.Node {
				n := makeNode("a").CordonedBy(ownMark, t0.Time).Obj()
				n.Status.Conditions[0].Status = corev1.ConditionFalse
				return n
			}(),
			owner:       ownMark,
			wantSkipped: []plan.SkippedNode{{Node: "a", Reason: fleetv1.NodeReasonNotReady, Message: "node is not Ready when its group started"}},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			before := tc.node.DeepCopy()
			ready, skipped := recheck([]string{"a"}, []corev1.Node{tc.node}, &spec, tc.owner)
			if ready["a"] != tc.wantReady {
				t.Errorf("recheck() ready = %v, want a ready: %v", ready, tc.wantReady)
			}
			if diff := cmp.Diff(tc.wantSkipped, skipped); diff != "" {
				t.Errorf("recheck() skipped mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, &tc.node); diff != "" {
				t.Errorf("recheck() changed the node (-before +after):\n%s", diff)
			}
		})
	}
}

func TestBuildJobDrainTolerates(t *testing.T) {
	cordon := corev1.Toleration{Key: fleetv1.UnschedulableTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	gpu := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	testCases := map[string]struct {
		drains      bool
		tolerations []corev1.Toleration
		want        []corev1.Toleration
	}{
		"a run that does not drain: none added": {
			tolerations: []corev1.Toleration{gpu},
			want:        []corev1.Toleration{gpu},
		},
		"a drain run tolerates the cordon": {
			drains: true,
			want:   []corev1.Toleration{cordon},
		},
		"added after the template's own": {
			drains:      true,
			tolerations: []corev1.Toleration{gpu},
			want:        []corev1.Toleration{gpu, cordon},
		},
		"a template that tolerates it already: not added again": {
			drains:      true,
			tolerations: []corev1.Toleration{cordon},
			want:        []corev1.Toleration{cordon},
		},
		"a template that tolerates it for every effect: not added": {
			drains:      true,
			tolerations: []corev1.Toleration{{Key: fleetv1.UnschedulableTaint, Operator: corev1.TolerationOpExists}},
			want:        []corev1.Toleration{{Key: fleetv1.UnschedulableTaint, Operator: corev1.TolerationOpExists}},
		},
		"a template that tolerates every taint: not added": {
			drains:      true,
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			want:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
		"a template that tolerates it for NoExecute only: added": {
			drains:      true,
			tolerations: []corev1.Toleration{{Key: fleetv1.UnschedulableTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			want:        []corev1.Toleration{{Key: fleetv1.UnschedulableTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}, cordon},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			tolerations := make([]corev1.Toleration, len(tc.tolerations), len(tc.tolerations)+1) // room to append into
			copy(tolerations, tc.tolerations)
			w := makeClusterJob("disk-clean").Template(podTemplate(corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}, Tolerations: tolerations}))
			if tc.drains {
				w.Drain(fleetv1.Drain{})
			}
			cj := w.Obj()
			before := cj.DeepCopy()
			job := BuildJob(testRun(cj), testNode, testGroup, testGroupName)
			if diff := cmp.Diff(tc.want, job.Spec.Template.Spec.Tolerations); diff != "" {
				t.Errorf("BuildJob() tolerations mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, cj); diff != "" {
				t.Errorf("BuildJob() changed the ClusterJob (-before +after):\n%s", diff)
			}
			if got := BuildJob(testRun(cj), testNode, testGroup, testGroupName); !cmp.Equal(job, got) {
				t.Errorf("BuildJob() is not the same Job twice:\n%s", cmp.Diff(job, got))
			}
		})
	}
}

func TestCleanupUncordons(t *testing.T) {
	otherRun := testHub + "/" + string(otherUID)
	otherHubs := otherHub + "/" + string(testUID)
	names := []string{"ours", "ours-by-hand", "other-run", "other-hub", "cordoned", "plain"}
	objs := []client.Object{
		makeNode("ours").CordonedBy(ownMark, t0.Time).Annotation("team", "storage").Ptr(),
		makeNode("ours-by-hand").Annotation(fleetv1.CordonedByAnnotation, ownMark).Ptr(),
		makeNode("other-run").CordonedBy(otherRun, t0.Time).Ptr(),
		makeNode("other-hub").CordonedBy(otherHubs, t0.Time).Ptr(),
		makeNode("cordoned").Unschedulable().Ptr(),
		makeNode("plain").Ptr(),
		makeJob("ours").Ptr(),
	}
	untouched := map[string]*cordonState{
		"other-run": marked(otherRun, t0.Time), "other-hub": marked(otherHubs, t0.Time),
		"cordoned": {Unschedulable: true}, "plain": {},
	}
	testCases := map[string]struct {
		funcs         interceptor.Funcs
		wantLeftovers Leftovers
		wantErr       string
		wantNodes     map[string]*cordonState
		wantLeftOver  []string
	}{
		"uncordons the nodes the run marked from this hub, nothing else": {
			wantNodes: map[string]*cordonState{
				"ours": {Annotations: map[string]string{"team": "storage"}}, "ours-by-hand": {},
				"other-run": untouched["other-run"], "other-hub": untouched["other-hub"], "cordoned": untouched["cordoned"], "plain": untouched["plain"],
			},
		},
		"a release that fails fails the cleanup, before anything is deleted": {
			funcs:   failNodePatches(nodeConflict),
			wantErr: "uncordoning the nodes ClusterJob " + string(testUID) + ` cordoned: uncordoning node ours: Operation cannot be fulfilled on nodes "a": the object has been modified (and 1 more)`,
			wantNodes: map[string]*cordonState{
				"ours":         {Unschedulable: true, Annotations: map[string]string{"team": "storage", fleetv1.CordonedByAnnotation: ownMark, fleetv1.DrainStartedAnnotation: stamp(t0.Time)}},
				"ours-by-hand": {Annotations: map[string]string{fleetv1.CordonedByAnnotation: ownMark}},
				"other-run":    untouched["other-run"], "other-hub": untouched["other-hub"], "cordoned": untouched["cordoned"], "plain": untouched["plain"],
			},
			wantLeftOver: []string{"Job fleetjob-system/ours"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fakeMember(objs...)
			c := interceptor.NewClient(live, tc.funcs)
			left, err := Cleanup(context.Background(), c, live, testNamespace, testUID, testHub)
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("Cleanup() error mismatch (-want +got):\n%s", diff)
			}
			if left != tc.wantLeftovers {
				t.Errorf("Cleanup() = %+v, want %+v", left, tc.wantLeftovers)
			}
			if diff := cmp.Diff(tc.wantNodes, cordonsOf(t, live, names...)); diff != "" {
				t.Errorf("nodes afterwards mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLeftOver, leftOver(t, live)); diff != "" {
				t.Errorf("left over mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCleanupUncordonsBounded: a run that cordoned more nodes than one
// call releases says so, and the next call releases the rest.
func TestCleanupUncordonsBounded(t *testing.T) {
	var objs []client.Object
	for i := range maxReleasesPerCall + 10 {
		objs = append(objs, makeNode(fmt.Sprintf("n%03d", i)).CordonedBy(ownMark, t0.Time).Ptr())
	}
	c := fakeMember(objs...)
	var got []Leftovers
	for range 2 {
		left, err := Cleanup(context.Background(), c, c, testNamespace, testUID, testHub)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, left)
	}
	if diff := cmp.Diff([]Leftovers{{Cordoned: 10}, {}}, got); diff != "" {
		t.Errorf("Cleanup() after each call (-want +got):\n%s", diff)
	}
	if s := (Leftovers{Cordoned: 10}).String(); s != "0 Jobs, 0 ConfigMaps and 10 nodes cordoned" {
		t.Errorf("Leftovers.String() = %q", s)
	}
}

// trimmedNodeLists serves metadata lists of nodes as the hub's member
// cache holds them: hub/clusters/connect.go watches nodes metadata-only,
// trimmed by TrimNodeMetadata.
func trimmedNodeLists() interceptor.Funcs {
	return interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if err := c.List(ctx, list, opts...); err != nil {
			return err
		}
		if l, ok := list.(*metav1.PartialObjectMetadataList); ok && l.GroupVersionKind().Kind == "NodeList" {
			for i := range l.Items {
				trimmed, err := TrimNodeMetadata(&l.Items[i])
				if err != nil {
					return err
				}
				l.Items[i] = *trimmed.(*metav1.PartialObjectMetadata)
			}
		}
		return nil
	}}
}

// TestCleanupUncordonsThroughTheMemberCache runs Cleanup as the hub does
// (hub/controller/finalize.go): c is the member's cached client, whose
// node metadata is trimmed by TrimNodeMetadata. A node the run cordoned
// must still be uncordoned, or at least reported left: otherwise the hub
// drops the run's finalizer and the node stays cordoned for good.
func TestCleanupUncordonsThroughTheMemberCache(t *testing.T) {
	live := fakeMember(makeNode("a").CordonedBy(ownMark, t0.Time).Ptr())
	cached := interceptor.NewClient(live, trimmedNodeLists())
	left, err := Cleanup(context.Background(), cached, live, testNamespace, testUID, testHub)
	if err != nil {
		t.Fatal(err)
	}
	if got := cordonOf(t, live, "a"); got.Unschedulable && left.None() {
		t.Errorf("Cleanup() = %+v (nothing left) but node a is still cordoned: %+v", left, got)
	}
}

// trimmedInformers are Informers holding objs as the hub's member cache
// does: node metadata trimmed by TrimNodeMetadata.
func trimmedInformers(t *testing.T, objs ...client.Object) *Informers {
	t.Helper()
	var out []client.Object
	for _, o := range objs {
		if n, ok := o.(*corev1.Node); ok {
			trimmed, err := TrimNodeMetadata(&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: n.ObjectMeta})
			if err != nil {
				t.Fatal(err)
			}
			o = &corev1.Node{ObjectMeta: trimmed.(*metav1.PartialObjectMetadata).ObjectMeta}
		}
		out = append(out, o)
	}
	return informersWith(t, out...)
}

// TestObserveCordoned: Observe fills State.Cordoned, for a drain run, with
// the planned nodes that carry the run's mark, however the hub reads the
// member: from a plain reader, through its cache's List, or from its
// cache's informers.
func TestObserveCordoned(t *testing.T) {
	run := drainRun(fleetv1.Drain{})
	objs := []client.Object{
		planObject(allOf("a", "b", "c", "d")),
		makeNode("a").CordonedBy(ownMark, t0.Time).Ptr(),
		makeNode("b").CordonedBy(testHub+"/"+string(otherUID), t0.Time).Ptr(),
		makeNode("c").Unschedulable().Ptr(),
		makeNode("d").Ptr(),
		makeNode("unplanned").CordonedBy(ownMark, t0.Time).Ptr(),
	}
	testCases := map[string]struct {
		funcs     interceptor.Funcs
		informers func(t *testing.T) *Informers
	}{
		"list":              {},
		"member cache list": {funcs: trimmedNodeLists()},
		"member cache store": {informers: func(t *testing.T) *Informers {
			return trimmedInformers(t, objs...)
		}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			live := fakeMember(objs...)
			c := interceptor.NewClient(live, tc.funcs)
			m := Member{Client: c, Live: live, Run: run}
			if tc.informers != nil {
				m.Informers = tc.informers(t)
			}
			st, err := m.Observe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(present("a"), st.Cordoned); diff != "" {
				t.Errorf("State.Cordoned mismatch (-want +got):\n%s", diff)
			}
			if got := st.Draining(); got != 1 {
				t.Errorf("Draining() = %d, want 1", got)
			}
		})
	}
	t.Run("a run that does not drain", func(t *testing.T) {
		c := fakeMember(objs...)
		st, err := Member{Client: c, Live: c, Run: testRun(makeClusterJob("disk-clean").Obj())}.Observe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Cordoned != nil {
			t.Errorf("State.Cordoned = %v, want nil", st.Cordoned)
		}
	})
}

// TestNoEvictionWait: a PodDisruptionBudget's 429 to an eviction reaches
// the drain at once, without the Retry-After client-go would sleep on;
// every other answer, a 429 to another request included, is untouched.
func TestNoEvictionWait(t *testing.T) {
	testCases := map[string]struct {
		method, path string
		code         int
		wantRetry    string
	}{
		"an eviction refused":            {method: http.MethodPost, path: "/api/v1/namespaces/web/pods/api-1/eviction", code: http.StatusTooManyRequests},
		"an eviction accepted":           {method: http.MethodPost, path: "/api/v1/namespaces/web/pods/api-1/eviction", code: http.StatusCreated, wantRetry: "10"},
		"another request throttled":      {method: http.MethodPost, path: "/apis/batch/v1/namespaces/fleetjob-system/jobs", code: http.StatusTooManyRequests, wantRetry: "10"},
		"a read of a pod named eviction": {method: http.MethodGet, path: "/api/v1/namespaces/web/pods/eviction", code: http.StatusTooManyRequests, wantRetry: "10"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", "10")
				w.WriteHeader(tc.code)
			}))
			defer server.Close()
			req, err := http.NewRequest(tc.method, server.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := NoEvictionWait(http.DefaultTransport).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			if got := resp.Header.Get("Retry-After"); got != tc.wantRetry {
				t.Errorf("Retry-After = %q, want %q", got, tc.wantRetry)
			}
			if resp.StatusCode != tc.code {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.code)
			}
		})
	}
}

// TestStartGroupDrainsInTurns: a group larger than maxDraining is drained
// in turns: one start cordons and steps no more than maxDraining nodes,
// the others stay Pending and untouched, and the next start takes them.
func TestStartGroupDrainsInTurns(t *testing.T) {
	const n = maxDraining + 5
	var objs []client.Object
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("n%03d", i)
		objs = append(objs, makeNode(names[i]).Ptr())
	}
	c := fakeMember(objs...)
	p := allOf(names...)
	run := drainRun(fleetv1.Drain{})
	st := startState(t, c, run, &p, names...)
	created, _, err := Member{Client: c, Live: c, Run: run}.StartGroup(context.Background(), &st, 0, At(t0.Time))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(names[:maxDraining], jobNodes(created)); diff != "" {
		t.Errorf("first start created mismatch (-want +got):\n%s", diff)
	}
	for _, name := range names[maxDraining:] {
		if got := cordonOf(t, c, name); got.Unschedulable || len(got.Annotations) > 0 {
			t.Errorf("node %s past the first turn was touched: %+v", name, got)
		}
	}
	st = startState(t, c, run, &p, names...)
	created, _, err = Member{Client: c, Live: c, Run: run}.StartGroup(context.Background(), &st, 0, At(t0.Time))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(names[maxDraining:], jobNodes(created)); diff != "" {
		t.Errorf("second start created mismatch (-want +got):\n%s", diff)
	}
}

// TestCollectGarbageUncordons: a run whose ClusterJob went without its
// finalizer (its objects orphans) has its nodes uncordoned by the
// collector before its objects go; the nodes of a live run, of another
// hub and a person's cordon are left. A release that fails keeps the
// run's objects, so that the next pass finds the run again.
func TestCollectGarbageUncordons(t *testing.T) {
	old := metav1.NewTime(t0.Add(-time.Hour))
	deadRun := testHub + "/" + string(otherUID)
	otherHubs := otherHub + "/" + string(otherUID)
	objs := func() []client.Object {
		return []client.Object{
			makeNode("dead").CordonedBy(deadRun, old.Time).Ptr(),
			makeNode("live").CordonedBy(ownMark, old.Time).Ptr(),
			makeNode("other-hub").CordonedBy(otherHubs, old.Time).Ptr(),
			makeNode("cordoned").Unschedulable().Ptr(),
			makeJob("dead-1").Owner(otherUID).OfClusterJob("team-a/other").Created(old).Ptr(),
			makeJob("live").Created(old).Ptr(),
		}
	}
	untouched := map[string]*cordonState{
		"live": marked(ownMark, old.Time), "other-hub": marked(otherHubs, old.Time), "cordoned": {Unschedulable: true},
	}
	testCases := map[string]struct {
		funcs        interceptor.Funcs
		wantDeleted  int
		wantErr      string
		wantDead     *cordonState
		wantLeftOver []string
	}{
		"the gone run's nodes are uncordoned, then its objects deleted": {
			wantDeleted: 1, wantDead: &cordonState{}, wantLeftOver: []string{"Job fleetjob-system/live"},
		},
		"a release that fails keeps the run's objects for the next pass": {
			funcs:        failNodePatches(nodeConflict),
			wantErr:      "uncordoning the nodes orphaned ClusterJob team-a/other cordoned: uncordoning node dead: " + `Operation cannot be fulfilled on nodes "a": the object has been modified`,
			wantDead:     marked(deadRun, old.Time),
			wantLeftOver: []string{"Job fleetjob-system/dead-1", "Job fleetjob-system/live"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			base := fakeMember(objs()...)
			c := interceptor.NewClient(base, tc.funcs)
			g := &gone{live: map[string]bool{string(testUID): true}}
			got, err := CollectGarbage(context.Background(), c, testNamespace, GCOptions{Hub: testHub, Now: t0.Time, MinAge: time.Minute, Gone: g.check, Live: c})
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("CollectGarbage() error mismatch (-want +got):\n%s", diff)
			}
			if got != tc.wantDeleted {
				t.Errorf("CollectGarbage() = %d, want %d", got, tc.wantDeleted)
			}
			want := map[string]*cordonState{"dead": tc.wantDead}
			maps.Copy(want, untouched)
			if diff := cmp.Diff(want, cordonsOf(t, base, "dead", "live", "other-hub", "cordoned")); diff != "" {
				t.Errorf("nodes afterwards mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLeftOver, leftOver(t, base)); diff != "" {
				t.Errorf("left over mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReleaseNodesAtTheEndReadsTheMarks: when the run ends (all), the
// marks are read from the API server, not taken from a cache that may not
// have seen the last cordon: a node whose drain failed in the run's last
// step is uncordoned all the same; without all, only what st says is done.
func TestReleaseNodesAtTheEndReadsTheMarks(t *testing.T) {
	phases := map[string]string{"late": "Failed:" + fleetv1.NodeReasonDrainTimeout, "plain": "Succeeded"}
	for name, tc := range map[string]struct {
		all  bool
		want map[string]*cordonState
	}{
		"the run ends: the late cordon is released": {all: true, want: map[string]*cordonState{"late": {}, "plain": {}}},
		"the run goes on: only what the cache saw":  {want: map[string]*cordonState{"late": marked(ownMark, t0.Time), "plain": {}}},
	} {
		t.Run(name, func(t *testing.T) {
			c := fakeMember(makeNode("late").CordonedBy(ownMark, t0.Time).Ptr(), makeNode("plain").Ptr())
			st := releaseState(phases) // the cache has not seen late's mark
			left, err := Member{Client: c, Live: c, Run: drainRun(fleetv1.Drain{})}.ReleaseNodes(context.Background(), st, tc.all)
			if err != nil || left != 0 {
				t.Fatalf("ReleaseNodes() = %d, %v; want 0, nil", left, err)
			}
			if diff := cmp.Diff(tc.want, cordonsOf(t, c, "late", "plain")); diff != "" {
				t.Errorf("nodes afterwards mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStepDrainTimeoutNotEarly: a drain begun within a second times out
// its whole timeout after its cordon, not up to a second early: the start
// is kept on the node to the nanosecond.
func TestStepDrainTimeoutNotEarly(t *testing.T) {
	begun := t0.Add(900 * time.Millisecond)
	timeout := 10 * time.Second
	base := fakeMember(makeNode("a").Ptr(), makePod("web", "a").OwnedBy("ReplicaSet", true).Ptr())
	c := interceptor.NewClient(base, refuseEvictions(func() bool { return true }, "web"))
	run := drainRun(fleetv1.Drain{Timeout: &metav1.Duration{Duration: timeout}})
	node := func() *corev1.Node {
		n := &corev1.Node{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: "a"}, n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := (Member{Client: c, Live: c, Run: run}).StepDrain(context.Background(), node(), begun); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at         time.Time
		wantReason string
	}{
		{at: begun.Add(timeout - time.Millisecond)},
		{at: begun.Add(timeout), wantReason: fleetv1.NodeReasonDrainTimeout},
	} {
		step, err := Member{Client: c, Live: c, Run: run}.StepDrain(context.Background(), node(), tc.at)
		if err != nil {
			t.Fatal(err)
		}
		if step.Reason != tc.wantReason {
			t.Errorf("StepDrain() at %s after the cordon: reason %q, want %q", tc.at.Sub(begun), step.Reason, tc.wantReason)
		}
	}
}
