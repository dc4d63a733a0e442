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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// ConflictError reports a Job under one of the run's names that belongs to
// someone else. It is never adopted: the node is not run, and the conflict
// is reported.
type ConflictError struct {
	// Job is the Job's name.
	Job string
	// Namespace is the Job's namespace.
	Namespace string
}

// Error implements error.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("Job %s/%s exists and does not belong to this ClusterJob", e.Namespace, e.Job)
}

// createParallelism is how many Job creations run at once: enough that a
// group of 1,000 nodes starts in about a second rather than a minute of
// sequential round trips (a create takes 10-30 ms), few enough not to
// flood a member API server; the member client's rate limit still applies.
const createParallelism = 32

// StartGroup creates the Jobs of the group-th group for its nodes that are
// Pending in st, and returns the Jobs it created, in plan order, and the
// nodes it skipped. Each node is checked again first, as the API server has
// it now: one cordoned, tainted, NotReady or deleted since the plan was made
// is skipped with the reason, never started. A Job that already exists and
// carries the run's UID label was created before, by this or another
// writer, and counts as started but not as created; one that does not is a
// *ConflictError (find it with errors.As: several are joined), and the
// other nodes are still started. live must read from the API server. On any
// other error StartGroup stops creating and returns it.
func StartGroup(ctx context.Context, c client.Client, live client.Reader, run Run, st State, group int) ([]batchv1.Job, []plan.SkippedNode, error) {
	if group < 0 || group >= len(st.Groups) {
		return nil, nil, fmt.Errorf("group %d is not in the plan of cluster %s, which has %d groups", group, run.Cluster, len(st.Groups))
	}
	var pending []string
	for _, n := range st.Nodes {
		if n.Group == group && n.Phase == NodePending {
			pending = append(pending, n.Node)
		}
	}
	if len(pending) == 0 {
		return nil, nil, nil
	}
	nodes, err := ListNodes(ctx, live)
	if err != nil {
		return nil, nil, err
	}
	ready, skipped := recheck(pending, nodes, &run.ClusterJob.Spec)
	var jobs []*batchv1.Job
	for _, n := range st.Nodes {
		if n.Group == group && ready[n.Node] {
			jobs = append(jobs, BuildJob(run, n.Node, group, n.GroupName))
		}
	}
	made, errs := createAll(ctx, c, live, run, jobs)
	var created []batchv1.Job
	var conflicts, failures []error
	for i, job := range jobs {
		var conflict *ConflictError
		switch err := errs[i]; {
		case errors.As(err, &conflict):
			conflicts = append(conflicts, err)
		case err != nil:
			failures = append(failures, err)
		case made[i]:
			created = append(created, *job)
		}
	}
	return created, skipped, errors.Join(append(conflicts, rootCause(failures))...)
}

// recheck splits pending into the nodes that can run the Job now and those
// to skip, as nodes (the cluster's nodes now) say. It is pure.
func recheck(pending []string, nodes []corev1.Node, spec *fleetv1.ClusterJobSpec) (ready map[string]bool, skipped []plan.SkippedNode) {
	ready = make(map[string]bool, len(pending))
	byName := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	for _, name := range pending {
		node, ok := byName[name]
		if !ok {
			skipped = append(skipped, plan.SkippedNode{Node: name, Reason: fleetv1.NodeReasonNodeDeleted, Message: "node was deleted before its Job started"})
			continue
		}
		if reason, msg := plan.Ineligible(node, spec); reason != "" {
			skipped = append(skipped, plan.SkippedNode{Node: name, Reason: reason, Message: msg + " when its group started"})
			continue
		}
		ready[name] = true
	}
	return ready, skipped
}

// rootCause is the failure that stopped the creations: the others were
// cancelled because of it, and would hide it from the cluster's row.
func rootCause(failures []error) error {
	for _, err := range failures {
		if !errors.Is(err, context.Canceled) {
			return err
		}
	}
	if len(failures) > 0 {
		return failures[0]
	}
	return nil
}

// createAll creates jobs, createParallelism at a time, and stops starting
// new creations after the first error that is not a conflict: a creation
// not started returns the error that stopped them.
func createAll(ctx context.Context, c client.Client, live client.Reader, run Run, jobs []*batchv1.Job) ([]bool, []error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	made, errs := make([]bool, len(jobs)), make([]error, len(jobs))
	// Not ctx: pieces after the cancel still run, to say they did not start.
	workqueue.ParallelizeUntil(context.Background(), createParallelism, len(jobs), func(i int) {
		if ctx.Err() != nil {
			errs[i] = context.Cause(ctx)
			return
		}
		made[i], errs[i] = createJob(ctx, c, live, run, jobs[i])
		var conflict *ConflictError
		if errs[i] != nil && !errors.As(errs[i], &conflict) {
			cancel(errs[i])
		}
	})
	return made, errs
}

// createJob creates job. made is false when it already existed as the run's
// own: st may come from a cache that has not seen it yet.
func createJob(ctx context.Context, c client.Client, live client.Reader, run Run, job *batchv1.Job) (bool, error) {
	err := c.Create(ctx, job)
	if err == nil {
		return true, nil
	}
	if apierrors.IsInvalid(err) {
		// The template is valid on the hub but not for this member (an
		// older API server, a field it does not know): retrying cannot help.
		return false, &PermanentError{Reason: fleetv1.ReasonInvalidJob, Err: fmt.Errorf("creating Job %s/%s: %w", job.Namespace, job.Name, err)}
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("creating Job %s/%s: %w", job.Namespace, job.Name, namespaceError(err, job.Namespace))
	}
	var existing batchv1.Job
	if err := live.Get(ctx, client.ObjectKeyFromObject(job), &existing); err != nil {
		return false, fmt.Errorf("reading the existing Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	if !ownedBy(&existing, run.ClusterJob.UID) {
		return false, &ConflictError{Job: job.Name, Namespace: job.Namespace}
	}
	return false, nil
}
