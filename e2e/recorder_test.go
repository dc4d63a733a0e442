//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// jobRecorder watches the fleetjob Jobs of one member for the whole of a
// spec and checks, at every change, that the unfinished Jobs of a run all
// belong to one group. A watch delivers every change of a namespace's Jobs
// in resourceVersion order, so the state rebuilt from it is the member's
// state after each change: a group that started before the previous one
// finished is caught however briefly they overlapped, which polling
// cannot promise.
type jobRecorder struct {
	m      *member
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	jobs map[string]*batchv1.Job
	// created is every Job ever seen, by UID: a Job deleted and made again
	// under its (stable) name shows up as a second Job of its node.
	created map[types.UID]seenJob
	// overlaps are the violations, one line each.
	overlaps []string
	// events is a readable log of the watch, for the artifacts.
	events []string
	// counted are runs (by UID) whose unfinished Jobs are summed at every
	// change, and peak the largest sum seen: the nodes they disrupt
	// together in this member, which a disruption budget bounds.
	counted map[string]bool
	peak    int
}

// seenJob is what the recorder keeps of a Job it saw once.
type seenJob struct {
	name, uid, node, group, groupIndex string
}

// startRecorder starts watching m's fleetjob Jobs; stop ends it.
func startRecorder(m *member) *jobRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	r := &jobRecorder{m: m, cancel: cancel, done: make(chan struct{}), jobs: map[string]*batchv1.Job{}, created: map[types.UID]seenJob{}}
	listed := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(r.done)
		r.run(ctx, listed)
	}()
	<-listed
	return r
}

func (r *jobRecorder) stop() {
	r.cancel()
	<-r.done
}

// run lists, then watches from the list's resourceVersion; when the watch
// ends (the API server closes watches every few minutes) it lists again.
func (r *jobRecorder) run(ctx context.Context, listed chan struct{}) {
	opts := []client.ListOption{client.InNamespace(workNamespace), client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue}}
	first := true
	for ctx.Err() == nil {
		list := &batchv1.JobList{}
		if err := r.m.client.List(ctx, list, opts...); err != nil {
			r.logf("list failed: %v", err)
			// Retry soon, as an informer would, but stop with the recorder.
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		r.reset(list.Items)
		if first {
			close(listed)
			first = false
		}
		w, err := r.m.client.Watch(ctx, &batchv1.JobList{}, append(opts, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})...)
		if err != nil {
			r.logf("watch failed: %v", err)
			continue
		}
		r.consume(ctx, w)
		w.Stop()
	}
}

func (r *jobRecorder) consume(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			job, isJob := ev.Object.(*batchv1.Job)
			if !isJob {
				r.logf("watch ended: %v", ev.Object)
				return
			}
			r.observe(ev.Type, job)
		}
	}
}

func (r *jobRecorder) reset(jobs []batchv1.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = map[string]*batchv1.Job{}
	for i := range jobs {
		r.record(watch.Added, &jobs[i])
	}
}

func (r *jobRecorder) observe(t watch.EventType, job *batchv1.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record(t, job)
}

// record applies one change and checks the run it belongs to. r.mu is held.
func (r *jobRecorder) record(t watch.EventType, job *batchv1.Job) {
	if t == watch.Deleted {
		delete(r.jobs, job.Name)
	} else {
		r.jobs[job.Name] = job
	}
	s := seenJob{
		name: job.Name, uid: job.Labels[fleetv1.ClusterJobUIDLabel], node: job.Annotations[fleetv1.NodeAnnotation],
		group: job.Annotations[fleetv1.GroupAnnotation], groupIndex: job.Labels[fleetv1.GroupIndexLabel],
	}
	if _, ok := r.created[job.UID]; !ok {
		r.created[job.UID] = s
	}
	r.events = append(r.events, fmt.Sprintf("%s rv=%s %s %s node=%s group=%s(%s) finished=%v",
		time.Now().Format("15:04:05.000"), job.ResourceVersion, t, job.Name, s.node, s.group, s.groupIndex, jobFinished(job)))
	groups := map[string][]string{}
	for _, j := range r.jobs {
		if j.Labels[fleetv1.ClusterJobUIDLabel] == s.uid && !jobFinished(j) {
			g := j.Labels[fleetv1.GroupIndexLabel]
			groups[g] = append(groups[g], j.Name)
		}
	}
	if len(groups) > 1 {
		r.overlaps = append(r.overlaps, fmt.Sprintf("%s at resourceVersion %s: unfinished Jobs of groups %v", r.m.name, job.ResourceVersion, groups))
	}
	if r.counted[s.uid] {
		n := 0
		for _, j := range r.jobs {
			if r.counted[j.Labels[fleetv1.ClusterJobUIDLabel]] && !jobFinished(j) {
				n++
			}
		}
		r.peak = max(r.peak, n)
	}
}

// countUnfinished starts summing the unfinished Jobs of these runs at
// every change, from a peak of 0.
func (r *jobRecorder) countUnfinished(uids ...types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counted, r.peak = map[string]bool{}, 0
	for _, uid := range uids {
		r.counted[string(uid)] = true
	}
}

// unfinishedPeak is the most unfinished Jobs of the counted runs seen at
// once since countUnfinished.
func (r *jobRecorder) unfinishedPeak() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}

func (r *jobRecorder) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
}

// overlapsSeen are the moments Jobs of two groups of one run were
// unfinished together.
func (r *jobRecorder) overlapsSeen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.overlaps)
}

// jobsPerNode maps every node that ever had a Job of run uid to those
// Jobs, as name/UID.
func (r *jobRecorder) jobsPerNode(uid types.UID) map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for jobUID, s := range r.created {
		if s.uid == string(uid) {
			out[s.node] = append(out[s.node], s.name+"/"+string(jobUID))
		}
	}
	return out
}

// groupIndicesSeen are the group indices of every Job of run uid ever seen.
func (r *jobRecorder) groupIndicesSeen(uid types.UID) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.created {
		if s.uid == string(uid) && !slices.Contains(out, s.groupIndex) {
			out = append(out, s.groupIndex)
		}
	}
	slices.Sort(out)
	return out
}

// eventLog is the watch as the recorder saw it.
func (r *jobRecorder) eventLog() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "\n") + "\n"
}

// jobFinished tells whether a Job reached its end, the way the Job
// controller says it: a terminal condition, or the condition that
// precedes it while the last pods terminate.
func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobFailed, batchv1.JobSuccessCriteriaMet, batchv1.JobFailureTarget:
			if c.Status == "True" {
				return true
			}
		}
	}
	return false
}
