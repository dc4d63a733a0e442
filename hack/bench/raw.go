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

package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// The raw baseline: what a plain client-go program gets out of a member
// when it creates the same node-pinned Jobs itself, as fast as the member
// lets it. fleetjob's times are reported against it.
const (
	// rawNamespace is apart from fleetjob's work namespace, so that the
	// hub never sees (or garbage-collects) a raw Job.
	rawNamespace = "bench-raw"
	// rawRunLabel is on every raw Job and its pod: one value per run.
	rawRunLabel = "bench.fleetjob.io/run"
)

// rawRun is one raw run in one member.
type rawRun struct {
	cs      kubernetes.Interface
	cluster string
	id      string
	workers int
}

// rawJob is the raw Job for node: fleetjob's template, pinned like
// fleetjob pins it.
func (r rawRun) rawJob(node string) *batchv1.Job {
	tmpl := jobTemplate()
	labels := map[string]string{rawRunLabel: r.id}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: r.id + "-" + node, Namespace: rawNamespace, Labels: labels},
		Spec:       tmpl.Spec,
	}
	pod := &job.Spec.Template
	pod.Labels = labels
	setEnv(&pod.Spec, node, r.cluster, "raw")
	pinToNode(&pod.Spec, node)
	return job
}

// run creates one Job per node with r.workers parallel creates and returns
// the time from the first create to the last Job seen Complete (a watch).
func (r rawRun) run(ctx context.Context, nodes []string) (time.Duration, error) {
	if err := ensureNamespace(ctx, r.cs, rawNamespace); err != nil {
		return 0, err
	}
	start := time.Now()
	// The watch starts with the creates, so each completion is seen when
	// it happens, not when a late list catches up.
	done := make(chan error, 1)
	go func() { done <- r.waitComplete(ctx, len(nodes)) }()
	if err := r.create(ctx, nodes); err != nil {
		return 0, err
	}
	if err := <-done; err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func (r rawRun) create(ctx context.Context, nodes []string) error {
	var firstErr atomic.Pointer[error]
	workqueue.ParallelizeUntil(ctx, r.workers, len(nodes), func(i int) {
		_, err := r.cs.BatchV1().Jobs(rawNamespace).Create(ctx, r.rawJob(nodes[i]), metav1.CreateOptions{})
		if err != nil {
			err = fmt.Errorf("creating raw Job for %s: %w", nodes[i], err)
			firstErr.CompareAndSwap(nil, &err)
		}
	})
	if err := firstErr.Load(); err != nil {
		return *err
	}
	return ctx.Err()
}

// waitComplete watches the run's Jobs until want of them are Complete; a
// Failed Job fails the run (the template cannot fail under kwok).
func (r rawRun) waitComplete(ctx context.Context, want int) error {
	selector := rawRunLabel + "=" + r.id
	jobs := r.cs.BatchV1().Jobs(rawNamespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return jobs.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return jobs.Watch(ctx, o)
		},
	}
	complete := map[string]bool{}
	_, err := watchtools.UntilWithSync(ctx, lw, &batchv1.Job{}, nil, func(e watch.Event) (bool, error) {
		job, ok := e.Object.(*batchv1.Job)
		if !ok || e.Type == watch.Deleted {
			return false, nil
		}
		switch {
		case jobCondition(job, batchv1.JobFailed):
			return false, fmt.Errorf("raw Job %s failed", job.Name)
		case jobCondition(job, batchv1.JobComplete):
			complete[job.Name] = true
		}
		return len(complete) >= want, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d raw Jobs (%d Complete): %w", want, len(complete), err)
	}
	return nil
}

// cleanup deletes the run's Jobs with their pods and waits until the pods
// are gone, so that the next run starts on an idle member.
func (r rawRun) cleanup(ctx context.Context) error {
	selector := rawRunLabel + "=" + r.id
	err := r.cs.BatchV1().Jobs(rawNamespace).DeleteCollection(ctx,
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)},
		metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("deleting raw Jobs %s: %w", selector, err)
	}
	return waitPodsGone(ctx, r.cs, rawNamespace, selector)
}

// waitPodsGone lists (once a second) until namespace has no pod matching
// selector: the Job controller deletes them in the background.
func waitPodsGone(ctx context.Context, cs kubernetes.Interface, namespace, selector string) error {
	for {
		pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: 1})
		if err == nil && len(pods.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the pods %s in %s to be gone: %w", selector, namespace, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, name string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
