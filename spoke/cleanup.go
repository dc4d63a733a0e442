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
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// Leftovers counts what is left of a run in a member.
type Leftovers struct {
	Jobs, ConfigMaps int
	// Cordoned counts the nodes the run cordoned to drain them and that
	// are not uncordoned yet.
	Cordoned int
}

// None tells whether nothing is left.
func (l Leftovers) None() bool { return l.Jobs == 0 && l.ConfigMaps == 0 && l.Cordoned == 0 }

// String says what is left, for an event.
func (l Leftovers) String() string {
	if l.Cordoned > 0 {
		return fmt.Sprintf("%d Jobs, %d ConfigMaps and %d nodes cordoned", l.Jobs, l.ConfigMaps, l.Cordoned)
	}
	return fmt.Sprintf("%d Jobs and %d ConfigMaps", l.Jobs, l.ConfigMaps)
}

// Cleanup deletes the Jobs, with their pods, and the plan that hub created
// for ClusterJob uid in namespace, uncordons the nodes it cordoned for a
// drain, and returns what is left: call again until nothing
// is (deletion takes time, and a cached c sees it late). Only objects with
// hub's label, and nodes with its mark, are touched. It deletes by
// collection, one call per kind however many nodes ran, so the member's
// credentials need the deletecollection verb on Jobs and ConfigMaps.
// live reads nodes from the API server.
func Cleanup(ctx context.Context, c client.Client, live client.Reader, namespace string, uid types.UID, hub string) (Leftovers, error) {
	sel := ownLabels(uid, hub)
	// First: a node left cordoned is what a person would miss most.
	cordoned, err := releaseAll(ctx, c, live, hub+"/"+string(uid))
	if err != nil {
		return Leftovers{}, fmt.Errorf("uncordoning the nodes ClusterJob %s cordoned: %w", uid, err)
	}
	if err := deleteRun(ctx, c, namespace, sel); err != nil {
		return Leftovers{}, fmt.Errorf("deleting the objects of ClusterJob %s in namespace %s: %w", uid, namespace, err)
	}
	left, err := leftovers(ctx, c, namespace, sel)
	left.Cordoned = cordoned
	return left, err
}

// deleteRun deletes a run's Jobs, then its ConfigMaps: while any Job is
// left, the plan still explains it.
func deleteRun(ctx context.Context, c client.Client, namespace string, sel client.MatchingLabels) error {
	if err := c.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(namespace), sel, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		return fmt.Errorf("deleting Jobs: %w", err)
	}
	if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(namespace), sel); err != nil {
		return fmt.Errorf("deleting ConfigMaps: %w", err)
	}
	return nil
}

func leftovers(ctx context.Context, c client.Reader, namespace string, sel client.MatchingLabels) (Leftovers, error) {
	var jobs batchv1.JobList
	var cms corev1.ConfigMapList
	for _, list := range []client.ObjectList{&jobs, &cms} {
		if err := c.List(ctx, list, client.InNamespace(namespace), sel, client.UnsafeDisableDeepCopy); err != nil {
			return Leftovers{}, fmt.Errorf("listing what is left in namespace %s: %w", namespace, err)
		}
	}
	return Leftovers{Jobs: len(jobs.Items), ConfigMaps: len(cms.Items)}, nil
}

// GCOptions say whose garbage may be collected, and when.
type GCOptions struct {
	// Hub is this hub's identity: only objects with its label are touched.
	Hub string
	// Now is the time of the pass.
	Now time.Time
	// MinAge spares the objects of a run until its youngest object is this
	// old: a ClusterJob created while the pass runs is not in the caches the
	// pass started from, and its first objects must not be taken for
	// orphans.
	MinAge time.Duration
	// Gone tells whether the ClusterJob key, whose UID label is uid, is gone
	// from the hub, as the hub's API server says (not a cache): absent, or
	// present with another UID.
	Gone func(ctx context.Context, key types.NamespacedName, uid string) (bool, error)
	// Live reads nodes from the member's API server, to uncordon those a
	// gone run cordoned for a drain; nil: nodes are left as they are.
	Live client.Reader
}

// CollectGarbage deletes from namespace the Jobs and ConfigMaps that this
// hub created for ClusterJobs that are gone, after uncordoning the nodes
// those runs cordoned for a drain (with o.Live), and returns how many
// objects there were. Objects of other hubs, hand-made ones and those of runs that Gone
// does not confirm are never touched. c may be a cache: lists are not paged.
func CollectGarbage(ctx context.Context, c client.Client, namespace string, o GCOptions) (int, error) {
	var jobs batchv1.JobList
	var cms corev1.ConfigMapList
	own := client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue, fleetv1.HubLabel: o.Hub}
	for _, list := range []client.ObjectList{&jobs, &cms} {
		if err := c.List(ctx, list, client.InNamespace(namespace), own, client.HasLabels{fleetv1.ClusterJobUIDLabel}, client.UnsafeDisableDeepCopy); err != nil {
			return 0, fmt.Errorf("listing fleetjob objects in namespace %s: %w", namespace, err)
		}
	}
	var objs []metav1.Object
	for i := range jobs.Items {
		objs = append(objs, &jobs.Items[i])
	}
	for i := range cms.Items {
		objs = append(objs, &cms.Items[i])
	}
	deleted := 0
	for _, r := range OrphanCandidates(objs, o.Now, o.MinAge) {
		gone, err := o.Gone(ctx, r.ClusterJob, r.UID)
		if err != nil {
			return deleted, fmt.Errorf("checking ClusterJob %s on the hub: %w", r.ClusterJob, err)
		}
		if !gone {
			continue
		}
		// Its nodes first, as Cleanup does: once its objects are gone,
		// nothing would name the run again.
		if o.Live != nil {
			left, err := releaseAll(ctx, c, o.Live, o.Hub+"/"+r.UID)
			if err != nil {
				return deleted, fmt.Errorf("uncordoning the nodes orphaned ClusterJob %s cordoned: %w", r.ClusterJob, err)
			}
			if left > 0 {
				continue // the next pass releases more, then deletes
			}
		}
		sel := client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue, fleetv1.HubLabel: o.Hub, fleetv1.ClusterJobUIDLabel: r.UID}
		if err := deleteRun(ctx, c, namespace, sel); err != nil {
			return deleted, fmt.Errorf("deleting the orphans of ClusterJob %s in namespace %s: %w", r.ClusterJob, namespace, err)
		}
		deleted += r.Objects
	}
	return deleted, nil
}

// OrphanRun is a run whose objects may be orphans.
type OrphanRun struct {
	// UID is the run's ClusterJob UID label value.
	UID string
	// ClusterJob is the run's ClusterJob on the hub.
	ClusterJob types.NamespacedName
	// Objects counts the run's objects.
	Objects int
}

// OrphanCandidates groups objs by run and returns the runs whose ClusterJob
// should be checked, sorted by UID: those whose every object is older than
// minAge and name one ClusterJob. It is pure. An object that does not say
// which ClusterJob it belongs to never makes its run a candidate: what
// cannot be confirmed is not deleted.
func OrphanCandidates(objs []metav1.Object, now time.Time, minAge time.Duration) []OrphanRun {
	type run struct {
		OrphanRun
		young, unknown bool
	}
	runs := map[string]*run{}
	for _, o := range objs {
		uid := o.GetLabels()[fleetv1.ClusterJobUIDLabel]
		r, ok := runs[uid]
		if !ok {
			r = &run{OrphanRun: OrphanRun{UID: uid}}
			runs[uid] = r
		}
		r.Objects++
		r.young = r.young || now.Sub(o.GetCreationTimestamp().Time) < minAge
		ns, name, ok := strings.Cut(o.GetAnnotations()[fleetv1.ClusterJobAnnotation], "/")
		switch key := (types.NamespacedName{Namespace: ns, Name: name}); {
		case !ok || ns == "" || name == "" || r.ClusterJob.Name != "" && r.ClusterJob != key:
			r.unknown = true
		default:
			r.ClusterJob = key
		}
	}
	var out []OrphanRun
	for _, uid := range slices.Sorted(maps.Keys(runs)) {
		if r := runs[uid]; uid != "" && !r.young && !r.unknown {
			out = append(out, r.OrphanRun)
		}
	}
	return out
}

// DeleteJobs deletes the run's Jobs of these names, with their pods.
func (m Member) DeleteJobs(ctx context.Context, names []string) error {
	for _, name := range names {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: m.Run.Namespace, Name: name}}
		if err := m.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Job %s/%s: %w", m.Run.Namespace, name, err)
		}
	}
	return nil
}

// DeleteFailedJobs deletes names, the Jobs of nodes st says the hub failed
// (TimeOutStarts returns them), with their pods, once their verdicts are
// in the run's results record: written ahead, as a group's starts are. A
// Job deleted before its verdict was stored would leave the node JobDeleted
// at best; with its node back (a kubelet that kept running, a node
// registered again) and the write failing, the node would run on and
// succeed after the hub had counted it failed. When the write fails no Job
// is deleted, and the error says so. st's record becomes the one written.
func (m Member) DeleteFailedJobs(ctx context.Context, st *State, names []string) error {
	if err := m.recordVerdicts(ctx, st, names); err != nil {
		return err
	}
	return m.DeleteJobs(ctx, names)
}

// recordVerdicts writes the results of the failed nodes of st whose Jobs
// are names, and nothing else st holds: a failed Job's exit code is read
// before its result is recorded.
func (m Member) recordVerdicts(ctx context.Context, st *State, names []string) error {
	doomed := make(map[string]bool, len(names))
	for _, name := range names {
		doomed[name] = true
	}
	var verdicts State
	for _, n := range st.Nodes {
		if n.Phase == NodeFailed && doomed[n.Job] {
			verdicts.Nodes = append(verdicts.Nodes, n)
		}
	}
	next, changed := recordChanges(st.Recorded, verdicts, nil, nil)
	if len(changed) == 0 {
		return nil
	}
	w, err := m.writeResultsMerging(ctx, st.Recorded, next, changed, st.RecordObject)
	if err != nil {
		return fmt.Errorf("recording the verdicts of the nodes whose Jobs the hub deletes, before deleting them: %w", err)
	}
	st.Recorded, st.RecordObject = w.res, w.cm
	return nil
}
