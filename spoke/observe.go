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
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

const (
	// nodePageSize keeps each page of a full Node list to a few MiB.
	nodePageSize = 500
	// maxNodes is the most nodes ListNodes returns. Kubernetes supports 5,000
	// nodes per cluster; far above that, something is wrong, and holding
	// every full Node in memory would hurt the caller.
	maxNodes = 100000
)

// ObserveOption tunes one call of Observe or StartGroup: the time it
// takes as now, and for a group start its limit and drain report.
type ObserveOption func(*observeOptions)

type observeOptions struct {
	indexed     bool
	plans       *Plans
	derivations *Derivations
	records     *Records
	informers   *Informers
	limit       int
	limited     bool
	now         time.Time
	drain       *DrainReport
}

// clock is the time At set, else the time now.
func (o observeOptions) clock() time.Time {
	if o.now.IsZero() {
		return time.Now()
	}
	return o.now
}

// At has Observe and StartGroup take now as the time: for a drain's
// timeout, and for how long a run is derived from the change feed alone.
func At(now time.Time) ObserveOption {
	return func(o *observeOptions) { o.now = now }
}

// WithDrainReport has StartGroup report its drain steps in r.
func WithDrainReport(r *DrainReport) ObserveOption {
	return func(o *observeOptions) { o.drain = r }
}

// WithLimit has StartGroup start at most k of the group's Pending nodes,
// the first in plan order: a disruption budget's grant. The others stay
// Pending and the group current, for a later start. k <= 0 starts none.
func WithLimit(k int) ObserveOption {
	return func(o *observeOptions) { o.limit, o.limited = k, true }
}

// Observe reads the run's frozen plan, its Jobs, its results record and the
// names of the nodes that exist, and derives the run's state, through
// Client. When the record names a running node whose Job Client does not
// have, it reads the record as stored from Live (when set), and tells a Job
// the cache has not seen yet from one that is gone. opts may hold At.
func (m Member) Observe(ctx context.Context, opts ...ObserveOption) (State, error) {
	return observe(ctx, m.Client, m.Live, m.Run, m.options(opts))
}

// observe is Observe reading through c and live (nil: none), with o.
func observe(ctx context.Context, c, live client.Reader, run Run, o observeOptions) (State, error) {
	p, planUID, found, err := readPlan(ctx, c, run, o.plans)
	if err != nil || !found {
		return State{}, err
	}
	rec, cm, err := readResults(ctx, c, run, o.records)
	if err != nil {
		return State{}, err
	}
	last := o.derivations.of(run, planUID, p.NodeCount())
	f := feed{now: o.clock()}
	var byNode map[string]*batchv1.Job
	if last != nil {
		defer last.mu.Unlock()
		store, stored := o.informers.jobStore()
		if f = o.derivations.feedFor(last, run, versionOf(cm), o.records, stored, f.now); f.partial {
			byNode = last.refreshJobs(run, store, f.marked)
		}
	}
	if byNode == nil {
		if byNode, err = runJobsByNode(ctx, c, run, o); err != nil {
			return State{}, err
		}
		if last != nil {
			last.jobs = byNode
		}
	}
	present, err := nodePresence(ctx, c, o)
	if err != nil {
		return State{}, err
	}
	st, missing := derive(&p, byNode, present, rec, last, f)
	if last != nil && last.missed > 0 {
		o.derivations.misses.Add(int64(last.missed))
	}
	if live != nil && missing {
		// The cache may be behind the record too: nodes a group start took
		// off again (their creates never sent) are still Starting in the
		// version before, and would be judged lost. Judge from the record
		// as stored.
		if rec, cm, err = readResults(ctx, live, run, o.records); err != nil {
			return State{}, err
		}
		if jobsMissing(rec, byNode) {
			unseen, err := liveJobs(ctx, live, run)
			if err != nil {
				return State{}, err
			}
			byNode = maps.Clone(byNode) // the derivation's are the store's
			addJobs(byNode, unseen)
		}
		if last != nil {
			// Whole, from Jobs the store does not hold yet: not a miss.
			last.record, last.complete = versionOf(cm), false
		}
		st, _ = derive(&p, byNode, present, rec, last, feed{now: f.now})
	}
	st.Recorded, st.RecordObject = rec, cm
	if run.ClusterJob.Spec.Drains() {
		if st.Cordoned, err = cordonedNodes(ctx, c, run, st, o); err != nil {
			return State{}, err
		}
	}
	return st, nil
}

// cordonedNodes are the planned nodes that carry run's cordon mark, from
// the Node informer when o has it, else from a metadata list of the nodes.
func cordonedNodes(ctx context.Context, c client.Reader, run Run, st State, o observeOptions) (map[string]bool, error) {
	annotations, ok := o.informers.nodeAnnotations()
	if !ok {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
		if err := c.List(ctx, &list); err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
		byName := make(map[string]map[string]string, len(list.Items))
		for _, n := range list.Items {
			byName[n.Name] = n.Annotations
		}
		annotations = func(name string) map[string]string { return byName[name] }
	}
	owner := DrainOwner(run)
	var marked map[string]bool
	for _, n := range st.Nodes {
		if CordonedBy(annotations(n.Node), owner) {
			if marked == nil {
				marked = map[string]bool{}
			}
			marked[n.Node] = true
		}
	}
	return marked, nil
}

// jobsMissing tells whether the record has a running node without a Job.
func jobsMissing(rec Results, byNode map[string]*batchv1.Job) bool {
	for node, r := range rec.Nodes.All() {
		if !r.final() && byNode[node] == nil {
			return true
		}
	}
	return false
}

// addJobs adds to byNode the Jobs of more for nodes it lacks.
func addJobs(byNode map[string]*batchv1.Job, more []batchv1.Job) {
	for i := range more {
		if node := more[i].Annotations[fleetv1.NodeAnnotation]; byNode[node] == nil {
			byNode[node] = &more[i]
		}
	}
}

// RecordResults writes the run's results record when this reconcile adds
// to it: Jobs seen or just created (created names their nodes), and nodes
// that finished. st is the state Observe read, including its record. A
// state Observe derived from the change feed looks only at the nodes
// derived again since the last RecordResults and those a verdict changed.
func (m Member) RecordResults(ctx context.Context, st State, created []string, skipped []plan.SkippedNode) error {
	next, changed := recordChangesOf(st.Recorded, st, st.recordCandidates(), created, skipped)
	if len(changed) > 0 {
		if _, err := m.writeResultsMerging(ctx, st.Recorded, next, changed, st.RecordObject); err != nil {
			return err
		}
	}
	st.recordSynced()
	return nil
}

// listRunJobs lists the run's Jobs from c, by the RunIndex when c has it.
func listRunJobs(ctx context.Context, c client.Reader, run Run, o observeOptions) (batchv1.JobList, error) {
	var jobs batchv1.JobList
	opts := []client.ListOption{client.InNamespace(run.Namespace), runSelector(run)}
	if o.indexed {
		opts = []client.ListOption{client.InNamespace(run.Namespace), client.MatchingFields{RunIndex: runIndexKey(run)}, client.UnsafeDisableDeepCopy}
	}
	if err := c.List(ctx, &jobs, opts...); err != nil {
		return batchv1.JobList{}, fmt.Errorf("listing the Jobs of the run in namespace %s: %w", run.Namespace, err)
	}
	return jobs, nil
}

// runJobsByNode are the run's Jobs by node: from the informer when o has
// it, else listed from c.
func runJobsByNode(ctx context.Context, c client.Reader, run Run, o observeOptions) (map[string]*batchv1.Job, error) {
	if jobs, ok := o.informers.runJobs(run); ok {
		byNode := make(map[string]*batchv1.Job, len(jobs))
		for _, j := range jobs {
			byNode[j.Annotations[fleetv1.NodeAnnotation]] = j
		}
		return byNode, nil
	}
	jobs, err := listRunJobs(ctx, c, run, o)
	if err != nil {
		return nil, err
	}
	return jobsByNode(jobs.Items), nil
}

// nodePresence tells which nodes exist now: from the informer when o has
// it, else from a list of their names.
func nodePresence(ctx context.Context, c client.Reader, o observeOptions) (func(string) bool, error) {
	if present, ok := o.informers.nodePresent(); ok {
		return present, nil
	}
	names, err := nodeNames(ctx, c, o)
	if err != nil {
		return nil, err
	}
	return func(n string) bool { return names[n] }, nil
}

// nodeNames is the set of the names of the nodes that exist now.
func nodeNames(ctx context.Context, c client.Reader, o observeOptions) (map[string]bool, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NodeList"))
	var opts []client.ListOption
	if o.indexed {
		opts = append(opts, client.UnsafeDisableDeepCopy)
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	names := make(map[string]bool, len(list.Items))
	for _, n := range list.Items {
		names[n.Name] = true
	}
	return names, nil
}

// ReadPlan reads the run's frozen plan. found is false when there is none. A
// ConfigMap of the plan's name that does not carry the run's UID label is an
// error: it is someone else's and is never read as ours.
func ReadPlan(ctx context.Context, r client.Reader, run Run) (plan.Plan, bool, error) {
	p, _, found, err := readPlan(ctx, r, run, nil)
	return p, found, err
}

// readPlan is ReadPlan, taking the plan from plans (nil: none) when it was
// decoded before, and returning the UID of its ConfigMap too.
func readPlan(ctx context.Context, r client.Reader, run Run, plans *Plans) (plan.Plan, types.UID, bool, error) {
	var cm corev1.ConfigMap
	key := client.ObjectKey{Namespace: run.Namespace, Name: naming.PlanName(run.ClusterJob.UID)}
	if err := r.Get(ctx, key, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return plan.Plan{}, "", false, nil
		}
		return plan.Plan{}, "", false, fmt.Errorf("reading the plan ConfigMap %s: %w", key, err)
	}
	p, err := decodePlan(ctx, r, &cm, run, plans)
	return p, cm.UID, err == nil, err
}

// decodePlan checks that cm is run's plan and decodes it, with the parts r
// reads when it is split, or takes it from plans (nil: none) decoded
// before.
func decodePlan(ctx context.Context, r client.Reader, cm *corev1.ConfigMap, run Run, plans *Plans) (plan.Plan, error) {
	key := client.ObjectKeyFromObject(cm)
	if !ownedBy(cm, run.ClusterJob.UID) {
		return plan.Plan{}, fmt.Errorf("ConfigMap %s exists but does not belong to ClusterJob %s", key, run.ClusterJob.UID)
	}
	// One member registered under two names shares the work namespace: the
	// plan is the first registration's, and the second must not run it.
	if c, ok := cm.Labels[fleetv1.ClusterLabel]; ok && c != naming.LabelValue(run.Cluster) {
		return plan.Plan{}, &PermanentError{Reason: fleetv1.ClusterReasonDuplicateCluster, Err: fmt.Errorf(
			"plan ConfigMap %s was made for cluster %s: the same member is registered as %s too", key, cm.Annotations[fleetv1.ClusterAnnotation], run.Cluster)}
	}
	if p, ok := plans.get(cm.UID); ok {
		return p, nil
	}
	var p plan.Plan
	if err := planLayout(run).decode(ctx, r, cm, run, &p); err != nil {
		return plan.Plan{}, err
	}
	plans.put(cm.UID, run, p)
	return p, nil
}

// ListNodes lists every Node, full objects, in pages so that no single
// response is huge. r should read from the API server: a cache does not
// page. It fails when the cluster has more than 100,000 nodes.
func ListNodes(ctx context.Context, r client.Reader) ([]corev1.Node, error) {
	var nodes []corev1.Node
	opts := []client.ListOption{client.Limit(nodePageSize)}
	for {
		var page corev1.NodeList
		if err := r.List(ctx, &page, opts...); err != nil {
			return nil, fmt.Errorf("listing nodes: %w", err)
		}
		nodes = append(nodes, page.Items...)
		if err := checkNodeCount(len(nodes), page.RemainingItemCount); err != nil {
			return nil, err
		}
		if page.Continue == "" {
			return nodes, nil
		}
		opts = []client.ListOption{client.Limit(nodePageSize), client.Continue(page.Continue)}
	}
}

// checkNodeCount fails as soon as the nodes listed, plus those the server
// says remain, pass maxNodes, before the rest are downloaded.
func checkNodeCount(listed int, remaining *int64) error {
	total := int64(listed)
	if remaining != nil {
		total += *remaining
	}
	if total > maxNodes {
		return fmt.Errorf("the cluster has more than %d nodes (at least %d), more than fleetjob plans", maxNodes, total)
	}
	return nil
}

// CountJobs counts the run's Jobs in the member, from Client: best a
// cache's, whose Jobs informer exists already.
func (m Member) CountJobs(ctx context.Context) (int, error) {
	jobs, err := listRunJobs(ctx, m.Client, m.Run, m.options(nil))
	return len(jobs.Items), err
}
