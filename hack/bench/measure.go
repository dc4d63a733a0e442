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
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// p1FanOut is P1: strategy all on one member against the raw limit, in
// interleaved pairs (see pairs).
func (s *session) p1FanOut(ctx context.Context, p *phaseResult) error {
	m := s.fleet.members[0]
	raw := func(i int) (time.Duration, string, error) {
		d, err := s.raw(ctx, m, fmt.Sprintf("raw-%d", i), m.nodes)
		return d, fmt.Sprintf("%d Jobs, %d workers, QPS %.0f", len(m.nodes), s.b.rawWorkers, s.b.rawQPS), err
	}
	fleetjob := func(i int) (*fleetjobRun, error) {
		return s.runClusterJob(ctx, clusterJob(fmt.Sprintf("p1-all-%d", i), strategyAll()), len(m.nodes))
	}
	return s.pairs(ctx, p, "raw limit", "fleetjob all", raw, fleetjob)
}

// pairs measures fleetjob against raw in interleaved pairs. The member's
// own speed drifts by ±20-30% within minutes on a small machine, so it runs
// s.b.pairs fleetjob runs between s.b.pairs+1 raw runs, takes each fleetjob
// run's ratio to the mean of the raw runs either side of it, and reports
// the median with the spread, and the hub's CPU per run the same way.
func (s *session) pairs(ctx context.Context, p *phaseResult, rawWhat, fleetjobWhat string,
	raw func(i int) (time.Duration, string, error), fleetjob func(i int) (*fleetjobRun, error)) error {
	var raws []float64
	runRaw := func() error {
		d, detail, err := raw(len(raws) + 1)
		if err != nil {
			return err
		}
		raws = append(raws, d.Seconds())
		p.add(fmt.Sprintf("%s %d", rawWhat, len(raws)), d.Seconds(), "s", detail)
		return nil
	}
	if err := runRaw(); err != nil {
		return err
	}
	var ratios, cpu []float64
	for i := range s.b.pairs {
		run, err := fleetjob(i + 1)
		if err != nil {
			return err
		}
		if err := s.cleanupClusterJob(ctx, run); err != nil {
			return err
		}
		if err := runRaw(); err != nil {
			return err
		}
		mean := (raws[i] + raws[i+1]) / 2
		ratios, cpu = append(ratios, run.Seconds/mean), append(cpu, run.HubCPUSeconds)
		p.add(fmt.Sprintf("%s %d: create → Completed", fleetjobWhat, i+1), run.Seconds, "s", fmt.Sprintf("ratio %.2f to the mean %.1f s of raw %d and %d", ratios[i], mean, i+1, i+2))
		p.addRun(run)
	}
	p.add("ratio fleetjob / mean(raw either side), median", median(ratios), "×", fmt.Sprintf("%d pairs, spread %.2f-%.2f", len(ratios), slices.Min(ratios), slices.Max(ratios)))
	p.add("hub CPU per run, median", median(cpu), "s", fmt.Sprintf("spread %.1f-%.1f s", slices.Min(cpu), slices.Max(cpu)))
	return nil
}

// median is the middle value of xs (the mean of the two middle ones when
// their number is even); xs is not modified.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// p3Makespan is P3 (with P2 inside): a batch run of s.b.groups groups on
// one member against as many sequential raw waves, in interleaved pairs
// (see pairs), and the hub's group hand-off times from its own histogram
// over every fleetjob run.
func (s *session) p3Makespan(ctx context.Context, p *phaseResult) error {
	m := s.fleet.members[0]
	size := len(m.nodes) / s.b.groups
	if size < 1 {
		return fmt.Errorf("%d nodes cannot make %d groups", len(m.nodes), s.b.groups)
	}
	nodes := m.nodes[:size*s.b.groups]
	raw := func(int) (time.Duration, string, error) {
		d, err := s.rawWaves(ctx, m, nodes, size)
		return d, "each wave waits for its Jobs to Complete", err
	}
	fleetjob := func(i int) (*fleetjobRun, error) {
		return s.runClusterJob(ctx, clusterJob(fmt.Sprintf("p3-batch-%d", i), strategyBatch(size)), len(nodes))
	}
	before, _ := s.hub.scrape(ctx)
	if err := s.pairs(ctx, p, fmt.Sprintf("raw: %d sequential waves of %d", s.b.groups, size), fmt.Sprintf("fleetjob batch %d × %d groups", size, s.b.groups), raw, fleetjob); err != nil {
		return err
	}
	after, _ := s.hub.scrape(ctx)
	addHandoff(p, before, after)
	return nil
}

// rawWaves runs nodes in sequential waves of size, each waiting for its
// Jobs to Complete (as fleetjob's groups do), and returns the makespan.
// The Jobs stay until every wave is done, as fleetjob's do.
func (s *session) rawWaves(ctx context.Context, m *member, nodes []string, size int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, s.b.runTimeout)
	defer cancel()
	var waves []rawRun
	logf("raw waves: %d waves of %d on %s", len(nodes)/size, size, m.name)
	start := time.Now()
	for i := 0; i*size < len(nodes); i++ {
		r := rawRun{cs: m.cs, cluster: m.name, id: fmt.Sprintf("raw-wave-%02d", i+1), workers: s.b.rawWorkers}
		waves = append(waves, r)
		if _, err := r.run(ctx, nodes[i*size:(i+1)*size]); err != nil {
			return 0, fmt.Errorf("raw wave %d: %w", i+1, err)
		}
	}
	makespan := time.Since(start)
	logf("raw waves: done in %.1fs; deleting", makespan.Seconds())
	for _, r := range waves {
		if err := r.cleanup(ctx); err != nil {
			return 0, err
		}
	}
	return makespan, nil
}

// addHandoff adds P2: the p50 and p99 of the hub's group hand-off
// histogram over the observations between two scrapes.
func addHandoff(p *phaseResult, before, after samples) {
	buckets := delta(before.buckets(handoffMetric), after.buckets(handoffMetric))
	why := "hub has no " + handoffMetric
	if len(buckets) > 0 {
		why = "no hand-off observed"
		p.add("P2 hand-offs observed", buckets[len(buckets)-1].count, "", handoffMetric+" count delta")
	}
	for _, q := range []float64{0.5, 0.99} {
		what := fmt.Sprintf("P2 hand-off p%.0f", q*100)
		if v, ok := quantile(q, buckets); ok {
			p.add(what, v, "s", "last Job of group k finished → first Job of k+1 created; bucket interpolation")
		} else {
			p.addNA(what, "s", why)
		}
	}
}

// p4HubCost is P4: the hub's memory idle, after one all run across every
// member and after a second run with the first retained, its CPU per
// 1,000 node-runs, and a CPU profile of the second run.
func (s *session) p4HubCost(ctx context.Context, p *phaseResult) error {
	// Let the caches sync and the first sweeps end before "idle".
	if !sleep(ctx, s.b.settle) {
		return ctx.Err()
	}
	if err := s.addRSS(p, "hub RSS idle", fmt.Sprintf("%d members engaged, %s after", len(s.fleet.members), s.b.settle)); err != nil {
		return err
	}
	nodes := len(s.fleet.members) * s.fleet.spec.nodes
	first, err := s.runClusterJob(ctx, clusterJob("p4-all-1", strategyAll()), nodes)
	if err != nil {
		return err
	}
	p.add("run 1 (all): create → Completed", first.Seconds, "s", fmt.Sprintf("%d members × %d nodes", len(s.fleet.members), s.fleet.spec.nodes))
	p.add("hub RSS after run 1", float64(first.HubRSSBytes), "bytes", "")
	p.addRun(first)
	// The CPU profile must be asked for a length up front: the second run
	// should take about as long as the first.
	seconds := min(max(int(math.Ceil(first.Seconds)), 5), 300)
	profile := s.startCPUProfile(ctx, p, seconds)
	second, err := s.runClusterJob(ctx, clusterJob("p4-all-2", strategyAll()), nodes)
	if err != nil {
		return err
	}
	profile()
	p.add("run 2 (all, run 1 retained): create → Completed", second.Seconds, "s", "")
	p.add("hub RSS after run 2", float64(second.HubRSSBytes), "bytes", "run 1 not deleted")
	p.addRun(second)
	s.heapProfile(ctx, p)
	cpu := first.HubCPUSeconds + second.HubCPUSeconds
	p.add("hub CPU per 1,000 node-runs", cpu/(float64(2*nodes)/1000), "s", fmt.Sprintf("%.1f CPU s over %d node-runs", cpu, 2*nodes))
	return nil
}

// p5Width is P5: many small members, one all run and one batch run.
func (s *session) p5Width(ctx context.Context, p *phaseResult) error {
	if !sleep(ctx, s.b.settle) {
		return ctx.Err()
	}
	if err := s.addRSS(p, "hub RSS idle", fmt.Sprintf("%d members engaged", len(s.fleet.members))); err != nil {
		return err
	}
	nodes := len(s.fleet.members) * s.fleet.spec.nodes
	all, err := s.runClusterJob(ctx, clusterJob("p5-all", strategyAll()), nodes)
	if err != nil {
		return err
	}
	p.add("all: create → Completed", all.Seconds, "s", fmt.Sprintf("%d members × %d nodes", len(s.fleet.members), s.fleet.spec.nodes))
	p.add("hub RSS after all", float64(all.HubRSSBytes), "bytes", "")
	p.addRun(all)
	if err := s.cleanupClusterJob(ctx, all); err != nil {
		return err
	}
	batch, err := s.runClusterJob(ctx, clusterJob("p5-batch", strategyBatch(s.b.p5Batch)), nodes)
	if err != nil {
		return err
	}
	p.add(fmt.Sprintf("batch %d: create → Completed", s.b.p5Batch), batch.Seconds, "s", "")
	p.add(fmt.Sprintf("hub RSS after batch %d", s.b.p5Batch), float64(batch.HubRSSBytes), "bytes", "")
	p.addRun(batch)
	return nil
}

func (s *session) addRSS(p *phaseResult, what, detail string) error {
	rss, err := s.hub.rss()
	if err != nil {
		return err
	}
	p.add(what, float64(rss), "bytes", detail)
	return nil
}

// startCPUProfile starts a CPU profile of the hub for seconds in the
// background; the function it returns waits for it and records the file.
// A hub without pprof, or a failed profile, is noted, not fatal.
func (s *session) startCPUProfile(ctx context.Context, p *phaseResult, seconds int) func() {
	path := filepath.Join(s.b.artifacts, p.Phase+"-hub-cpu.pprof")
	done := make(chan error, 1)
	go func() {
		done <- s.hub.profile(ctx, fmt.Sprintf("profile?seconds=%d", seconds), path, time.Duration(seconds)*time.Second+time.Minute)
	}()
	logf("%s: taking a %ds CPU profile of the hub", p.Phase, seconds)
	return func() {
		s.recordProfile(p, "hub CPU profile", path, <-done)
	}
}

func (s *session) heapProfile(ctx context.Context, p *phaseResult) {
	path := filepath.Join(s.b.artifacts, p.Phase+"-hub-heap.pprof")
	s.recordProfile(p, "hub heap profile", path, s.hub.profile(ctx, "heap", path, time.Minute))
}

func (s *session) recordProfile(p *phaseResult, what, path string, err error) {
	if err != nil {
		logf("%s: no %s: %v", p.Phase, what, err)
		p.addNA(what, "", err.Error())
		return
	}
	p.Profiles = append(p.Profiles, path)
	p.addText(what, "saved", path)
	logf("%s: %s in %s", p.Phase, what, path)
}

// p6Width is P6: as many small members as the machine holds. The hub
// starts with none, then engages them all: its RSS and CPU with none,
// idle with all, and over one all run give the cost per engaged member.
func (s *session) p6Width(ctx context.Context, p *phaseResult) error {
	members := len(s.fleet.members)
	if !sleep(ctx, s.b.settle) {
		return ctx.Err()
	}
	rss0, err := s.hub.rss()
	if err != nil {
		return err
	}
	p.add("hub RSS, no member", float64(rss0), "bytes", s.b.settle.String()+" after start")
	start := time.Now()
	if err := s.registerMembers(ctx); err != nil {
		return err
	}
	p.add("register and engage every member", time.Since(start).Seconds(), "s", fmt.Sprintf("%d members, registered one after another with kubectl fleetjob register", members))
	cpu0, err := s.hub.cpuSeconds()
	if err != nil {
		return err
	}
	if !sleep(ctx, s.b.settle) {
		return ctx.Err()
	}
	cpu1, err := s.hub.cpuSeconds()
	if err != nil {
		return err
	}
	rss1, err := s.hub.rss()
	if err != nil {
		return err
	}
	p.add("hub RSS idle", float64(rss1), "bytes", fmt.Sprintf("%d members engaged", members))
	p.add("hub RSS per engaged member, idle", float64(rss1-rss0)/float64(members), "bytes", "(idle − no member) / members")
	p.add("hub CPU per engaged member, idle", 1000*(cpu1-cpu0)/float64(members)/s.b.settle.Minutes(), "ms/min", fmt.Sprintf("CPU ms per member per minute, over %s", s.b.settle))
	nodes := members * s.fleet.spec.nodes
	all, err := s.runClusterJob(ctx, clusterJob("p6-all", strategyAll()), nodes)
	if err != nil {
		return err
	}
	p.add("all: create → Completed", all.Seconds, "s", fmt.Sprintf("%d members × %d nodes", members, s.fleet.spec.nodes))
	p.add("hub RSS after all", float64(all.HubRSSBytes), "bytes", "")
	p.add("hub RSS per engaged member, after all", float64(all.HubRSSBytes-rss0)/float64(members), "bytes", "(after − no member) / members")
	p.add("hub CPU per engaged member, all run", all.HubCPUSeconds/float64(members), "s", fmt.Sprintf("%.1f CPU s over the run", all.HubCPUSeconds))
	p.addRun(all)
	return s.p6Replicas(ctx, p)
}

// replicaIDs name P6's sharded hub replicas, as their pods would.
var replicaIDs = []string{"bench-hub-0", "bench-hub-1"}

// p6Replicas is P6 again with two sharded replicas (--shard) in place of
// the one hub, over the same members: how they split the members, each
// one's RSS idle and after an all run, their CPU together, and how the
// run ended. A replica that exits is restarted, as its Deployment would
// (a leader that loses its Lease exits by design): the restarts are a row.
func (s *session) p6Replicas(ctx context.Context, p *phaseResult) error {
	s.hub.stop()
	rs, err := s.b.startReplicas(s.fleet, replicaIDs)
	if err != nil {
		return err
	}
	defer rs.stop()
	start := time.Now()
	served, err := waitSharded(ctx, s.fleet, rs)
	if err != nil {
		return err
	}
	members := len(s.fleet.members)
	p.add("2 replicas: every member engaged by its replica", time.Since(start).Seconds(), "s",
		fmt.Sprintf("%d members: %d and %d", members, served[replicaIDs[0]], served[replicaIDs[1]]))
	cpu0, _, err := rs.usage()
	if err != nil {
		return err
	}
	if !sleep(ctx, s.b.settle) {
		return ctx.Err()
	}
	cpu1, rss1, err := rs.usage()
	if err != nil {
		return err
	}
	for _, id := range replicaIDs {
		p.add(fmt.Sprintf("2 replicas: %s RSS idle", id), float64(rss1[id]), "bytes", fmt.Sprintf("serves %d members", served[id]))
	}
	p.add("2 replicas: hub CPU per engaged member, idle", 1000*(sum(cpu1)-sum(cpu0))/float64(members)/s.b.settle.Minutes(), "ms/min",
		fmt.Sprintf("both replicas' CPU ms per member per minute, over %s", s.b.settle))
	restarts0, _ := rs.restartCount()
	nodes := members * s.fleet.spec.nodes
	ctx, cancel := context.WithTimeout(ctx, s.b.runTimeout)
	defer cancel()
	done, seconds, err := s.createAndWait(ctx, clusterJob("p6-all-2", strategyAll()), nodes)
	if err != nil {
		return errors.Join(err, rs.err())
	}
	restarts, byReplica := rs.restartCount()
	cpu2, rss2, err := rs.usage()
	if err != nil {
		return err
	}
	summary := done.Status.Summary.Nodes
	p.add("2 replicas: all: create → "+string(done.Status.Phase), seconds, "s",
		fmt.Sprintf("%d members × %d nodes: %d succeeded, %d failed; %d replica restarts during the run (%s)",
			members, s.fleet.spec.nodes, summary.Succeeded, summary.Failed, restarts-restarts0, byReplica))
	p.add("2 replicas: hub CPU, all run", sum(cpu2)-sum(cpu1), "s", "both replicas, restarted processes included")
	for _, id := range replicaIDs {
		p.add(fmt.Sprintf("2 replicas: %s RSS after all", id), float64(rss2[id]), "bytes", fmt.Sprintf("served %d members at the start", served[id]))
	}
	if done.Status.Phase != fleetv1.PhaseCompleted || int(summary.Succeeded) != nodes {
		return fmt.Errorf("run p6-all-2 ended %s with %d of %d nodes succeeded: %s; %s", done.Status.Phase, summary.Succeeded, nodes,
			conditionMessages(done), s.saveFailedRun(ctx, done))
	}
	return nil
}

func sum(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}
