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

package hub

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// jobRunner plays the Job controller envtest does not have: it finishes
// every fleetjob Job it has seen running, failing those on failNodes, the
// way the real one writes conditions (SuccessCriteriaMet then Complete,
// FailureTarget then Failed). It also records whether Jobs of two groups of
// one run were ever unfinished at the same time.
type jobRunner struct {
	c client.Client

	mu        sync.Mutex
	failNodes map[string]bool
	// stallNodes are nodes whose Jobs never get a pod, as when a quota or
	// an admission policy refuses it: they stay without status.
	stallNodes map[string]bool
	held       bool
	seen       map[string]bool
	overlaps   []string
	// firstSeen and lastDone time each group of each run (key uid/index),
	// to measure how soon a group starts after the previous one ended.
	firstSeen map[string]time.Time
	lastDone  map[string]time.Time
}

func newJobRunner(c client.Client) *jobRunner {
	return &jobRunner{c: c, failNodes: map[string]bool{}, stallNodes: map[string]bool{}, seen: map[string]bool{},
		firstSeen: map[string]time.Time{}, lastDone: map[string]time.Time{}}
}

// failOn makes Jobs on these nodes fail from now on.
func (r *jobRunner) failOn(nodes ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range nodes {
		r.failNodes[n] = true
	}
}

// heal makes Jobs on these nodes succeed again from now on.
func (r *jobRunner) heal(nodes ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range nodes {
		delete(r.failNodes, n)
	}
}

// stallOn makes Jobs on these nodes never get a pod.
func (r *jobRunner) stallOn(nodes ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range nodes {
		r.stallNodes[n] = true
	}
}

// unstall lets Jobs on these nodes finish again.
func (r *jobRunner) unstall(nodes ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range nodes {
		delete(r.stallNodes, n)
	}
}

// hold keeps Jobs running until release.
func (r *jobRunner) hold(h bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held = h
}

// overlapsSeen returns the runs in which two groups ran together.
func (r *jobRunner) overlapsSeen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.overlaps...)
}

// handoffs returns, for each group after the first of run uid, the time
// from the previous group's last Job finishing to this group's first Job
// being seen (within the runner's 100ms tick).
func (r *jobRunner) handoffs(uid string, groups int) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for g := 1; g < groups; g++ {
		done, ok1 := r.lastDone[fmt.Sprintf("%s/%d", uid, g-1)]
		seen, ok2 := r.firstSeen[fmt.Sprintf("%s/%d", uid, g)]
		if ok1 && ok2 {
			out = append(out, seen.Sub(done))
		}
	}
	return out
}

func (r *jobRunner) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failNodes, r.stallNodes, r.held, r.overlaps = map[string]bool{}, map[string]bool{}, false, nil
}

// run ticks every 100ms: a Job runs for at least one tick, long enough for
// the hub to see a group running.
func (r *jobRunner) run(ctx context.Context) {
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			r.tick(ctx)
		}
	}
}

func (r *jobRunner) tick(ctx context.Context) {
	jobs := &batchv1.JobList{}
	if err := r.c.List(ctx, jobs, client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue}); err != nil {
		return
	}
	nodes := &corev1.NodeList{}
	if err := r.c.List(ctx, nodes); err != nil {
		return
	}
	present := map[string]bool{}
	for _, n := range nodes.Items {
		present[n.Name] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	groups := map[string]map[string]bool{}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if finished(job) || !job.DeletionTimestamp.IsZero() {
			continue
		}
		uid := job.Labels[fleetv1.ClusterJobUIDLabel]
		if groups[uid] == nil {
			groups[uid] = map[string]bool{}
		}
		groups[uid][job.Labels[fleetv1.GroupIndexLabel]] = true
		group := uid + "/" + job.Labels[fleetv1.GroupIndexLabel]
		if !r.seen[job.Name+string(job.UID)] {
			r.seen[job.Name+string(job.UID)] = true
			if _, ok := r.firstSeen[group]; !ok {
				r.firstSeen[group] = time.Now()
			}
			continue
		}
		// A Job whose node is gone never finishes: its pod cannot be placed.
		if !r.held && present[job.Annotations[fleetv1.NodeAnnotation]] && !r.stallNodes[job.Annotations[fleetv1.NodeAnnotation]] {
			if r.finish(ctx, job, r.failNodes[job.Annotations[fleetv1.NodeAnnotation]]) == nil {
				r.lastDone[group] = time.Now()
			}
		}
	}
	for uid, g := range groups {
		if len(g) > 1 {
			r.overlaps = append(r.overlaps, uid)
		}
	}
}

// finish writes the terminal status the Job controller would.
func (r *jobRunner) finish(ctx context.Context, job *batchv1.Job, fail bool) error {
	now := metav1.Now()
	start := now
	if job.Status.StartTime != nil {
		start = *job.Status.StartTime
	}
	job.Status.StartTime = &start
	// A finished Job has no pod left running.
	job.Status.Active = 0
	if job.Status.Ready != nil {
		job.Status.Ready = new(int32)
	}
	cond := func(t batchv1.JobConditionType, reason, msg string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastProbeTime: now, LastTransitionTime: now}
	}
	if fail {
		if err := r.failedPod(ctx, job); err != nil {
			return err
		}
		job.Status.Failed = 1
		job.Status.Conditions = append(job.Status.Conditions,
			cond(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit"),
			cond(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit"))
	} else {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = append(job.Status.Conditions,
			cond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods"),
			cond(batchv1.JobComplete, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods"))
	}
	return r.c.Status().Update(ctx, job)
}

// failedPod leaves the pod a kubelet would have of a Job that failed: its
// container exited 3 with a termination message naming the node.
func (r *jobRunner) failedPod(ctx context.Context, job *batchv1.Job) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: job.Namespace}}
	if err := r.c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	node := job.Annotations[fleetv1.NodeAnnotation]
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-pod", Namespace: job.Namespace, Labels: job.Spec.Template.Labels},
		Spec:       *job.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = node
	if err := r.c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: pod.Spec.Containers[0].Name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 3, Reason: "Error", Message: "disk /var is full on " + node}},
	}}}
	return r.c.Status().Update(ctx, pod)
}

func finished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
