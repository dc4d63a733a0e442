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

package fleet

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/spoke"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from what the tests produce")

// maxSteps bounds a simulated run: 15 nodes in batches of 3 finish in far
// fewer steps, so reaching it means the run is stuck.
const maxSteps = 200

// Test_RollingUpdateSequences runs a two-cluster fleet (6 and 9 nodes,
// alphabetical batches of 3) against a fake world, reconcile after
// reconcile: Decide, act on the world as the reconciler does, Status, then a
// seeded random subset of the running Jobs finishes, some failing. Each step
// is logged and compared with a golden file; invariants are checked at every
// step.
func Test_RollingUpdateSequences(t *testing.T) {
	seeds := []struct {
		seed uint64
		// failOneIn makes one finished Job in failOneIn fail; 0 never.
		failOneIn uint64
	}{
		{seed: 1, failOneIn: 0},
		{seed: 2, failOneIn: 4},
		{seed: 3, failOneIn: 9},
	}
	for _, s := range seeds {
		for _, strategy := range []fleetv1.FailureStrategy{fleetv1.FailureStrategyKeepGoing, fleetv1.FailureStrategyExit} {
			for _, maxClusters := range []int32{0, 1} {
				name := fmt.Sprintf("seed-%d-%s-max-%d", s.seed, strategy, maxClusters)
				if maxClusters == 0 {
					name = fmt.Sprintf("seed-%d-%s-max-none", s.seed, strategy)
				}
				t.Run(name, func(t *testing.T) {
					w := newFakeWorld(strategy, maxClusters, s.seed, s.failOneIn)
					log := w.run(t)
					compareGolden(t, filepath.Join("testdata", "rollingupdate", name+".golden"), log)
				})
			}
		}
	}
}

// fakeWorld is the member clusters of a simulated run: their nodes, frozen
// plans and Jobs, and the status the hub last wrote.
type fakeWorld struct {
	cj        *fleetv1.ClusterJob
	members   []*fakeMember // sorted by name
	status    fleetv1.ClusterJobStatus
	now       time.Time
	rng       *rand.Rand
	failOneIn uint64
	failed    bool // some Job of the run has failed
}

// fakeMember is one member cluster of the fake world.
type fakeMember struct {
	name  string
	nodes []corev1.Node
	plan  *plan.Plan
	jobs  map[string]*batchv1.Job // by node
}

func newFakeWorld(strategy fleetv1.FailureStrategy, maxClusters int32, seed, failOneIn uint64) *fakeWorld {
	cj := makeClusterJob().FailureStrategy(strategy)
	if maxClusters > 0 {
		cj.MaxConcurrent(maxClusters)
	}
	w := &fakeWorld{cj: cj.Obj(), now: now, rng: rand.New(rand.NewPCG(seed, seed)), failOneIn: failOneIn}
	for _, m := range []struct {
		name  string
		nodes int
	}{{"member-a", 6}, {"member-b", 9}} {
		fm := &fakeMember{name: m.name, jobs: map[string]*batchv1.Job{}}
		for _, n := range wrappers.NodeNames(m.name, m.nodes) {
			fm.nodes = append(fm.nodes, wrappers.ReadyNode(n))
		}
		w.members = append(w.members, fm)
	}
	return w
}

// run reconciles until the run is done and returns the log.
func (w *fakeWorld) run(t *testing.T) []string {
	t.Helper()
	var log []string
	for step := 1; step <= maxSteps; step++ {
		in := w.observe()
		failedBefore := w.failed
		d := decideWorld(in)
		w.checkDecision(t, step, d, failedBefore)
		w.act(t, &in, d)
		w.checkWorld(t, step)
		st := statusWorld(in, &w.status, 1)
		w.checkStatus(t, step, st)
		w.status = st
		line := fmt.Sprintf("%03d decide %s | status %s", step, formatDecision(d), formatStatus(st))
		if st.Phase.IsFinished() {
			log = append(log, line)
			w.checkEnd(t, st)
			return log
		}
		log = append(log, line+" | finished "+w.finishSome())
		w.now = w.now.Add(time.Minute)
	}
	t.Fatalf("The run did not end in %d steps; last status %s", maxSteps, formatStatus(w.status))
	return nil
}

// observe is what the reconciler sees: every member engaged and reachable,
// its state derived from its plan and Jobs, and its last written row.
func (w *fakeWorld) observe() world {
	in := world{Spec: &w.cj.Spec, Now: w.now, UnreachableTimeout: timeout}
	for _, m := range w.members {
		c := member.Cluster{Name: m.name, Engaged: true, Reachable: true, State: m.state()}
		for i := range w.status.Clusters {
			if w.status.Clusters[i].Name == m.name {
				c.Previous = w.status.Clusters[i].DeepCopy()
			}
		}
		in.Clusters = append(in.Clusters, c)
	}
	return in
}

// state is spoke.Derive over the member's plan and Jobs.
func (m *fakeMember) state() spoke.State {
	if m.plan == nil {
		return spoke.Derive(nil, nil, nil, spoke.Results{})
	}
	var jobs []batchv1.Job
	for _, n := range m.nodeOrder() {
		if j, ok := m.jobs[n]; ok {
			jobs = append(jobs, *j)
		}
	}
	present := map[string]bool{}
	for _, n := range m.nodes {
		present[n.Name] = true
	}
	return spoke.Derive(m.plan, jobs, present, spoke.Results{})
}

// nodeOrder is the member's planned nodes in plan order.
func (m *fakeMember) nodeOrder() []string {
	var out []string
	if m.plan != nil {
		for _, g := range m.plan.Groups {
			out = append(out, g.Nodes...)
		}
	}
	return out
}

// act does what the reconciler does with a decision: freeze the plans of
// the clusters to plan (and show them as planned to Status, as the
// reconciler does), and create the Jobs of the groups to start.
func (w *fakeWorld) act(t *testing.T, in *world, d worldDecision) {
	t.Helper()
	for i := range in.Clusters {
		c, m := &in.Clusters[i], w.members[i]
		if g, ok := d.Start[c.Name]; ok {
			for _, n := range c.State.Nodes {
				if n.Group == g && n.Phase == spoke.NodePending {
					job := spoke.BuildJob(spoke.Run{ClusterJob: w.cj, Cluster: m.name, Namespace: wrappers.WorkNamespace}, n.Node, g, n.GroupName)
					job.Status.StartTime = &metav1.Time{Time: w.now}
					m.jobs[n.Node] = job
				}
			}
		} else if slices.Contains(d.Freeze, c.Name) {
			p, err := plan.Compute(m.nodes, &w.cj.Spec, w.cj.UID, m.name)
			if err != nil {
				t.Fatalf("Planning %s: %v", m.name, err)
			}
			m.plan = &p
			c.State = m.state()
		}
	}
}

// finishSome lets a seeded random half of the running Jobs finish, one in
// failOneIn of them failed, and tells which.
func (w *fakeWorld) finishSome() string {
	var done []string
	for _, m := range w.members {
		for _, n := range m.nodeOrder() {
			j, ok := m.jobs[n]
			if !ok || len(j.Status.Conditions) > 0 || w.rng.Uint64()%2 == 0 {
				continue
			}
			cond := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached",
				LastTransitionTime: metav1.Time{Time: w.now}}
			result := "ok"
			if w.failOneIn > 0 && w.rng.Uint64()%w.failOneIn == 0 {
				cond.Type, cond.Reason, cond.Message = batchv1.JobFailed, wrappers.FailReason, wrappers.FailMessage
				result, w.failed = "FAILED", true
			}
			j.Status.Conditions = append(j.Status.Conditions, cond)
			done = append(done, n+" "+result)
		}
	}
	if len(done) == 0 {
		return "-"
	}
	return strings.Join(done, ", ")
}

// checkDecision: with exit, nothing new starts once a Job has failed.
func (w *fakeWorld) checkDecision(t *testing.T, step int, d worldDecision, failedBefore bool) {
	t.Helper()
	if w.cj.Spec.FailureStrategy != fleetv1.FailureStrategyExit || !failedBefore {
		return
	}
	if !d.Stopped || len(d.Start) > 0 || len(d.Freeze) > 0 {
		t.Errorf("Step %d: a Job failed under exit, yet the decision is %s", step, formatDecision(d))
	}
}

// checkWorld: one group at a time per cluster, and one cluster at a time
// under maxConcurrentClusters 1.
func (w *fakeWorld) checkWorld(t *testing.T, step int) {
	t.Helper()
	active := 0
	for _, m := range w.members {
		st := m.state()
		running := 0
		for _, g := range st.Groups {
			if g.Running > 0 {
				running++
			}
		}
		if running > 1 {
			t.Errorf("Step %d: %d groups of %s run at once: %+v", step, running, m.name, st.Groups)
		}
		if st.Planned && !st.Finished() {
			active++
		}
	}
	if w.cj.Spec.ClusterRollout != nil && active > int(w.cj.Spec.ClusterRollout.MaxConcurrentClusters) {
		t.Errorf("Step %d: %d clusters are started and unfinished under maxConcurrentClusters %d",
			step, active, w.cj.Spec.ClusterRollout.MaxConcurrentClusters)
	}
}

// checkStatus: the counts add up, and under maxConcurrentClusters 1 at most
// one row is Running.
func (w *fakeWorld) checkStatus(t *testing.T, step int, st fleetv1.ClusterJobStatus) {
	t.Helper()
	checkCounts(t, st)
	if r := w.cj.Spec.ClusterRollout; r != nil && st.Summary.Clusters.Running > r.MaxConcurrentClusters {
		t.Errorf("Step %d: %d clusters Running under maxConcurrentClusters %d", step, st.Summary.Clusters.Running, r.MaxConcurrentClusters)
	}
	if st.Phase.IsFinished() != (st.CompletionTime != nil) {
		t.Errorf("Step %d: phase %s with completionTime %v", step, st.Phase, st.CompletionTime)
	}
}

// checkEnd: the run ends Failed exactly when a Job failed, with nothing
// running; under keepgoing every node ran.
func (w *fakeWorld) checkEnd(t *testing.T, st fleetv1.ClusterJobStatus) {
	t.Helper()
	wantPhase := fleetv1.PhaseCompleted
	if w.failed {
		wantPhase = fleetv1.PhaseFailed
	}
	if st.Phase != wantPhase {
		t.Errorf("The run ended %s, want %s", st.Phase, wantPhase)
	}
	for _, m := range w.members {
		for n, j := range m.jobs {
			if len(j.Status.Conditions) == 0 {
				t.Errorf("The run ended while the Job of %s still runs", n)
			}
		}
		keepGoing := w.cj.Spec.FailureStrategy == fleetv1.FailureStrategyKeepGoing
		if (keepGoing || !w.failed) && len(m.jobs) != len(m.nodes) {
			t.Errorf("The run ended with %d of the %d nodes of %s run", len(m.jobs), len(m.nodes), m.name)
		}
	}
}

func formatDecision(d worldDecision) string {
	var b strings.Builder
	b.WriteString("plan ")
	b.WriteString(orDash(strings.Join(d.Freeze, ",")))
	var starts []string
	for _, c := range slices.Sorted(maps.Keys(d.Start)) {
		starts = append(starts, fmt.Sprintf("%s/%d", c, d.Start[c]))
	}
	b.WriteString(" start ")
	b.WriteString(orDash(strings.Join(starts, ",")))
	if d.Stopped {
		b.WriteString(" stopped")
	}
	return b.String()
}

func formatStatus(st fleetv1.ClusterJobStatus) string {
	rows := make([]string, 0, len(st.Clusters))
	for _, r := range st.Clusters {
		rows = append(rows, fmt.Sprintf("%s %s/%s %d/%d groups", r.Name, r.Phase, r.Reason, r.Groups.Completed, r.Groups.Total))
	}
	return fmt.Sprintf("%s clusters %s nodes %s failed %d [%s]", st.Phase, st.Summary.ClusterProgress,
		st.Summary.NodeProgress, st.Summary.Nodes.Failed, strings.Join(rows, "; "))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// compareGolden compares log with the golden file at path, or rewrites it
// with -update.
func compareGolden(t *testing.T, path string, log []string) {
	t.Helper()
	got := strings.Join(log, "\n") + "\n"
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("Reading the golden file (run with -update to write it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("The sequence differs from %s (-want +got); run with -update if the change is intended:\n%s", path, diff)
	}
}
