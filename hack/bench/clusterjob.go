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
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

const (
	// benchLabel is on every registration the bench makes; its
	// ClusterJobs select on it.
	benchLabel = "bench"
	// benchNamespace holds the bench's ClusterJobs on the hub.
	benchNamespace = "default"

	watchRequestsMetric = "fleetjob_member_watch_requests_total"
	// reconcilesMetric and reconcileTimeMetric are controller-runtime's,
	// read for the member controller: how often a run's members were
	// looked at, and for how long.
	reconcilesMetric    = "controller_runtime_reconcile_total"
	reconcileTimeMetric = "controller_runtime_reconcile_time_seconds"
	memberController    = "memberrun"
	handoffMetric       = "fleetjob_group_handoff_seconds"
)

// clusterJob is a ClusterJob over every registered member running the
// shared template with strategy.
func clusterJob(name string, strategy fleetv1.Strategy) *fleetv1.ClusterJob {
	return &fleetv1.ClusterJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: benchNamespace},
		Spec: fleetv1.ClusterJobSpec{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{benchLabel: "true"}},
			Strategy:        strategy,
			FailureStrategy: fleetv1.FailureStrategyExit,
			JobTemplate:     jobTemplate(),
		},
	}
}

func strategyAll() fleetv1.Strategy { return fleetv1.Strategy{Type: fleetv1.StrategyAll} }

func strategyBatch(size int) fleetv1.Strategy {
	return fleetv1.Strategy{Type: fleetv1.StrategyBatch,
		Batch: &fleetv1.BatchStrategy{Size: int32(size), Order: fleetv1.BatchOrderAlphabetical}}
}

// fleetjobRun is what one ClusterJob run measured.
type fleetjobRun struct {
	Name     string `json:"name"`
	Strategy string `json:"strategy"`
	Clusters int    `json:"clusters"`
	Nodes    int    `json:"nodes"`
	// Seconds is from the create to the hub's status saying Completed.
	Seconds float64 `json:"seconds"`
	// ObjectBytes is the length of the ClusterJob's JSON once Completed.
	ObjectBytes int `json:"objectBytes"`
	// WatchRequests are the watch requests the hub sent to members during
	// the run; nil when the hub has no such metric.
	WatchRequests *float64 `json:"watchRequests"`
	// MemberReconciles and MemberReconcileSeconds are the member
	// controller's reconciles during the run and their summed wall time.
	MemberReconciles       *float64 `json:"memberReconciles,omitempty"`
	MemberReconcileSeconds *float64 `json:"memberReconcileSeconds,omitempty"`
	// WatchRequestsByResource splits WatchRequests by member resource.
	WatchRequestsByResource map[string]float64 `json:"watchRequestsByResource,omitempty"`
	// HubCPUSeconds is the hub's CPU time during the run.
	HubCPUSeconds float64 `json:"hubCPUSeconds"`
	// HubRSSBytes is the hub's RSS once the run Completed.
	HubRSSBytes int64 `json:"hubRSSBytes"`

	uid string
}

// runClusterJob creates cj, waits until its phase is Completed, and
// measures the run. The ClusterJob stays: cleanupClusterJob removes it.
func (s *session) runClusterJob(ctx context.Context, cj *fleetv1.ClusterJob, wantNodes int) (*fleetjobRun, error) {
	ctx, cancel := context.WithTimeout(ctx, s.b.runTimeout)
	defer cancel()
	run := &fleetjobRun{Name: cj.Name, Strategy: strategyName(cj.Spec.Strategy), Clusters: len(s.fleet.members), Nodes: wantNodes}
	before, _ := s.hub.scrape(ctx)
	cpuBefore, err := s.hub.cpuSeconds()
	if err != nil {
		return nil, err
	}
	done, seconds, err := s.createAndWait(ctx, cj, wantNodes)
	if err != nil {
		return nil, fmt.Errorf("%w (hub log %s)", err, s.hub.logPath)
	}
	run.uid, run.Seconds = string(cj.UID), seconds
	if done.Status.Phase != fleetv1.PhaseCompleted {
		return nil, fmt.Errorf("run %s ended %s, not Completed: %s; %s (hub log %s)", cj.Name, done.Status.Phase, conditionMessages(done), s.saveFailedRun(ctx, done), s.hub.logPath)
	}
	if got := int(done.Status.Summary.Nodes.Succeeded); got != wantNodes {
		return nil, fmt.Errorf("run %s Completed with %d nodes succeeded, want %d", cj.Name, got, wantNodes)
	}
	if err := s.measureRun(ctx, run, before, cpuBefore); err != nil {
		return nil, err
	}
	logf("run %s: Completed in %.1fs", cj.Name, run.Seconds)
	return run, nil
}

// createAndWait creates cj and waits until it ended: the ClusterJob then,
// and the seconds from its creation.
func (s *session) createAndWait(ctx context.Context, cj *fleetv1.ClusterJob, wantNodes int) (*fleetv1.ClusterJob, float64, error) {
	logf("run %s: creating the ClusterJob (%s, %d cluster(s), %d nodes)", cj.Name, strategyName(cj.Spec.Strategy), len(s.fleet.members), wantNodes)
	start := time.Now()
	if err := s.fleet.hub.Create(ctx, cj); err != nil {
		return nil, 0, fmt.Errorf("creating ClusterJob %s: %w", cj.Name, err)
	}
	done, err := s.waitFinished(ctx, cj.Name)
	if err != nil {
		return nil, 0, fmt.Errorf("run %s: %w", cj.Name, err)
	}
	return done, time.Since(start).Seconds(), nil
}

// measureRun fills in what is read after the run: the object's size,
// the watch requests and the hub's CPU and memory.
func (s *session) measureRun(ctx context.Context, run *fleetjobRun, before samples, cpuBefore float64) error {
	cpu, err := s.hub.cpuSeconds()
	if err != nil {
		return err
	}
	run.HubCPUSeconds = cpu - cpuBefore
	if run.HubRSSBytes, err = s.hub.rss(); err != nil {
		return err
	}
	// The size as a client sees it: a GET, with status and managedFields.
	raw := &fleetv1.ClusterJob{}
	if err := s.fleet.hub.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: run.Name}, raw); err != nil {
		return fmt.Errorf("reading ClusterJob %s: %w", run.Name, err)
	}
	body, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	run.ObjectBytes = len(body)
	after, _ := s.hub.scrape(ctx)
	b, okBefore := before.sum(watchRequestsMetric)
	a, okAfter := after.sum(watchRequestsMetric)
	if okBefore && okAfter {
		run.WatchRequests = ptr.To(a - b)
		run.WatchRequestsByResource = byResource(before, after)
	}
	rb, okBefore := before.sumWhere(reconcilesMetric, "controller", memberController)
	ra, okAfter := after.sumWhere(reconcilesMetric, "controller", memberController)
	tb, _ := before.sumWhere(reconcileTimeMetric+"_sum", "controller", memberController)
	ta, _ := after.sumWhere(reconcileTimeMetric+"_sum", "controller", memberController)
	if okBefore && okAfter {
		run.MemberReconciles, run.MemberReconcileSeconds = ptr.To(ra-rb), ptr.To(ta-tb)
	}
	return nil
}

// byResource is the growth of the watch request counter between two
// scrapes per resource label, summed over clusters; zeros left out.
func byResource(before, after samples) map[string]float64 {
	out := map[string]float64{}
	for _, s := range after {
		if s.name == watchRequestsMetric {
			out[s.labels["resource"]] += s.value
		}
	}
	for _, s := range before {
		if s.name == watchRequestsMetric {
			out[s.labels["resource"]] -= s.value
		}
	}
	for r, n := range out {
		if n == 0 {
			delete(out, r)
		}
	}
	return out
}

// waitFinished watches the ClusterJob until its phase is Completed or
// Failed and returns it.
func (s *session) waitFinished(ctx context.Context, name string) (*fleetv1.ClusterJob, error) {
	hub := s.fleet.hub
	field := "metadata.name=" + name
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = field
			list := &fleetv1.ClusterJobList{}
			return list, hub.List(ctx, list, client.InNamespace(benchNamespace), &client.ListOptions{Raw: &o})
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = field
			return hub.Watch(ctx, &fleetv1.ClusterJobList{}, client.InNamespace(benchNamespace), &client.ListOptions{Raw: &o})
		},
	}
	var last *fleetv1.ClusterJob
	_, err := watchtools.UntilWithSync(ctx, lw, &fleetv1.ClusterJob{}, nil, func(e watch.Event) (bool, error) {
		cj, ok := e.Object.(*fleetv1.ClusterJob)
		if !ok {
			return false, nil
		}
		if e.Type == watch.Deleted {
			return false, fmt.Errorf("ClusterJob %s was deleted", name)
		}
		last = cj
		return cj.Status.Phase == fleetv1.PhaseCompleted || cj.Status.Phase == fleetv1.PhaseFailed, nil
	})
	if err != nil {
		progress := "no status yet"
		if last != nil {
			progress = fmt.Sprintf("phase %q, nodes %s", last.Status.Phase, last.Status.Summary.NodeProgress)
		}
		return nil, fmt.Errorf("waiting for ClusterJob %s to finish (%s): %w", name, progress, err)
	}
	return last, nil
}

// cleanupClusterJob deletes the ClusterJobs of runs (their finalizer
// deletes the Jobs and pods in the members), waits until they are gone
// and until no pod of theirs is left in any member.
func (s *session) cleanupClusterJob(ctx context.Context, runs ...*fleetjobRun) error {
	ctx, cancel := context.WithTimeout(ctx, s.b.runTimeout)
	defer cancel()
	for _, run := range runs {
		cj := &fleetv1.ClusterJob{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: run.Name}}
		if err := s.fleet.hub.Delete(ctx, cj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting ClusterJob %s: %w", run.Name, err)
		}
	}
	for _, run := range runs {
		if err := s.waitClusterJobGone(ctx, run.Name); err != nil {
			return err
		}
		for _, m := range s.fleet.members {
			if err := waitPodsGone(ctx, m.cs, fleetv1.DefaultWorkNamespace, fleetv1.ClusterJobUIDLabel+"="+run.uid); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
	}
	return nil
}

func (s *session) waitClusterJobGone(ctx context.Context, name string) error {
	for {
		err := s.fleet.hub.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: name}, &fleetv1.ClusterJob{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !sleep(ctx, time.Second) {
			return fmt.Errorf("waiting for ClusterJob %s to be deleted: %w", name, ctx.Err())
		}
	}
}

func strategyName(s fleetv1.Strategy) string {
	if s.Batch != nil {
		return fmt.Sprintf("batch %d", s.Batch.Size)
	}
	return string(s.Type)
}

func conditionMessages(cj *fleetv1.ClusterJob) string {
	var out string
	for _, c := range cj.Status.Conditions {
		out += fmt.Sprintf("[%s=%s %s: %s] ", c.Type, c.Status, c.Reason, truncate(c.Message, 200))
	}
	return out
}

// saveFailedRun writes a run that did not complete, with its MemberRuns, to
// <artifacts>/<run>.yaml, and tells how many failed nodes each reason has
// (from the MemberRuns' samples, up to MaxMemberRunFailedNodes a cluster):
// the fleet is deleted when the bench ends, and with it what a person
// needs to tell a slow member from a broken run.
func (s *session) saveFailedRun(ctx context.Context, cj *fleetv1.ClusterJob) string {
	runs := &fleetv1.MemberRunList{}
	if err := s.fleet.hub.List(ctx, runs, client.InNamespace(cj.Namespace), client.MatchingLabels{fleetv1.ClusterJobLabel: cj.Name}); err != nil {
		return fmt.Sprintf("listing its MemberRuns: %v", err)
	}
	reasons := map[string]int{}
	for _, mr := range runs.Items {
		for _, f := range mr.Status.FailedNodes {
			reasons[f.Reason]++
		}
	}
	var counts []string
	for _, r := range slices.Sorted(maps.Keys(reasons)) {
		counts = append(counts, fmt.Sprintf("%s %d", r, reasons[r]))
	}
	out, err := yaml.Marshal(map[string]any{"clusterJob": cj, "memberRuns": runs.Items})
	if err != nil {
		return fmt.Sprintf("failed nodes by reason: %s (not saved: %v)", strings.Join(counts, ", "), err)
	}
	path := filepath.Join(s.b.artifacts, cj.Name+".yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Sprintf("failed nodes by reason: %s (not saved: %v)", strings.Join(counts, ", "), err)
	}
	return fmt.Sprintf("failed nodes by reason: %s (run and MemberRuns in %s)", strings.Join(counts, ", "), path)
}
