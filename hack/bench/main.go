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

// Command bench measures fleetjob on a local kwok fleet against the raw
// limit of the same member clusters, in one run, and prints one markdown
// table (and writes the same results as JSON):
//
//   - P1 fan-out: strategy all on 1 member × --nodes nodes, against a
//     plain client-go program creating the same node-pinned Jobs (run
//     before and after, to bracket the noise);
//   - P3 makespan: batch of --nodes/--groups in --groups groups against as
//     many sequential raw waves; P2, the hub's group hand-off p50 and p99
//     from its fleetjob_group_handoff_seconds histogram, over that run;
//   - P4 hub cost: on --p4-members × --p4-nodes, the hub's RSS idle and
//     after two all runs (the first retained), its CPU per 1,000
//     node-runs, a CPU and a heap profile;
//   - P5 width: --p5-members × --p5-nodes, an all and a batch run;
//   - P6 width per member: --p6-members × --p6-nodes, the hub started
//     with no member and then engaging them all, one all run: hub RSS
//     and CPU per engaged member; then two sharded replicas (--shard) in
//     its place over the same members, the same rows per replica.
//
// Every fleet is brought up by hack/fleet.sh in --fleet-dir and deleted at
// the end, also on failure or interrupt. `make bench` runs it; `make
// bench-smoke` runs --smoke (P1 and P3 on 100 nodes, a few minutes). It is
// not a test: its numbers depend on the machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// bench holds the knobs of a run and what it measured.
type bench struct {
	root, k8sVersion     string
	fleetDir, artifacts  string
	out                  string
	phases               []string
	nodes, pairs, groups int
	p4Members, p4Nodes   int
	p5Members, p5Nodes   int
	p5Batch              int
	p6Members, p6Nodes   int
	rawWorkers           int
	rawQPS               float64
	rawBurst             int
	keepFleet, build     bool
	smoke                bool
	hubArgs              stringList
	waitFleet            time.Duration
	phaseTimeout         time.Duration
	runTimeout           time.Duration
	settle               time.Duration

	results results
	failed  bool
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

var allPhases = []string{"p1", "p2", "p3", "p4", "p5", "p6"}

func main() {
	b := &bench{}
	phases := b.flags()
	if err := b.validate(phases); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		// A second interrupt kills at once; the first lets the fleet go down.
		stop()
	}()
	if err := b.run(ctx); err != nil {
		logf("bench: %v", err)
		b.failed = true
	}
	b.report()
	if b.failed {
		os.Exit(1)
	}
}

func (b *bench) flags() string {
	var phases string
	flag.StringVar(&phases, "phases", strings.Join(allPhases, ","), "Phases to run, comma separated: p1 (fan-out), p2 (hand-off, measured in p3), p3 (makespan), p4 (hub cost), p5 (width), p6 (cost per engaged member).")
	flag.IntVar(&b.nodes, "nodes", 1000, "Nodes of the single member of P1 and P3.")
	flag.IntVar(&b.pairs, "pairs", 3, "fleetjob runs of P1 and of P3, each between two raw runs: P1 and P3 report the median ratio.")
	flag.IntVar(&b.groups, "groups", 10, "Groups of the P3 batch run (batch size = --nodes / --groups).")
	flag.IntVar(&b.p4Members, "p4-members", 5, "Members of P4.")
	flag.IntVar(&b.p4Nodes, "p4-nodes", 1000, "Nodes per member in P4.")
	flag.IntVar(&b.p5Members, "p5-members", 20, "Members of P5.")
	flag.IntVar(&b.p5Nodes, "p5-nodes", 100, "Nodes per member in P5.")
	flag.IntVar(&b.p5Batch, "p5-batch", 50, "Batch size of the P5 batch run.")
	flag.IntVar(&b.p6Members, "p6-members", 30, "Members of P6 (a 2-core AMD EPYC stops at 35-37: see README).")
	flag.IntVar(&b.p6Nodes, "p6-nodes", 10, "Nodes per member in P6.")
	flag.BoolVar(&b.smoke, "smoke", false, "A quick check: P1 and P3 on 1 member × 100 nodes (overrides --phases and --nodes).")
	flag.IntVar(&b.rawWorkers, "raw-workers", 32, "Parallel creates of the raw baseline.")
	flag.Float64Var(&b.rawQPS, "raw-qps", 500, "Client QPS of the raw baseline (and of the bench's other member clients).")
	flag.IntVar(&b.rawBurst, "raw-burst", 1000, "Client burst of the raw baseline.")
	flag.Var(&b.hubArgs, "hub-arg", "An extra flag for the hub, e.g. --hub-arg=--member-qps=500 (repeatable).")
	flag.BoolVar(&b.keepFleet, "keep-fleet", false, "Keep the last fleet (and print how to delete it); earlier ones are always deleted.")
	flag.BoolVar(&b.build, "build", true, "Run `make build` first (make bench does, and passes --build=false).")
	flag.StringVar(&b.out, "out", "bench-results.json", "Where to write the results as JSON.")
	flag.StringVar(&b.artifacts, "artifacts", "bench-artifacts", "Directory for logs (hub, fleet.sh, kubectl) and profiles.")
	flag.StringVar(&b.fleetDir, "fleet-dir", "/tmp/fleetjob-bench", "State directory of the bench's fleets (FLEET_DIR).")
	flag.StringVar(&b.k8sVersion, "k8s-version", "v1.36.3", "Kubernetes version of the binaries in bin/k8s/<version> (make k8s-bins).")
	flag.DurationVar(&b.waitFleet, "wait-fleet", 20*time.Minute, "How long to wait for another kwok fleet on the machine (e.g. the e2e suite's) to end.")
	flag.DurationVar(&b.phaseTimeout, "phase-timeout", 30*time.Minute, "Time allowed for one phase (fleet setup not included).")
	flag.DurationVar(&b.runTimeout, "run-timeout", 15*time.Minute, "Time allowed for one run (raw or fleetjob) or one cleanup.")
	flag.DurationVar(&b.settle, "settle", 15*time.Second, "Idle time after the hub engaged the members before its idle RSS is read (P4, P5).")
	flag.Parse()
	if b.smoke {
		phases, b.nodes, b.pairs = "p1,p3", 100, 1
	}
	return phases
}

func (b *bench) validate(phases string) error {
	var errs []error
	for p := range strings.SplitSeq(phases, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		if !slices.Contains(allPhases, p) {
			errs = append(errs, fmt.Errorf("--phases: unknown phase %q (want %s)", p, strings.Join(allPhases, ",")))
		}
		b.phases = append(b.phases, p)
	}
	if b.nodes < 1 || b.pairs < 1 || b.groups < 1 || b.p4Members < 1 || b.p4Nodes < 1 || b.p5Members < 1 || b.p5Nodes < 1 || b.p5Batch < 1 || b.p6Members < 1 || b.p6Nodes < 1 {
		errs = append(errs, errors.New("--nodes, --pairs, --groups, the member, node and batch counts must be positive"))
	}
	if b.rawWorkers < 1 || b.rawQPS <= 0 || b.rawBurst < 1 {
		errs = append(errs, errors.New("--raw-workers, --raw-qps and --raw-burst must be positive"))
	}
	if b.waitFleet < 0 || b.phaseTimeout <= 0 || b.runTimeout <= 0 || b.settle < 0 {
		errs = append(errs, errors.New("timeouts must be positive"))
	}
	return errors.Join(errs...)
}

func (b *bench) want(phase string) bool { return slices.Contains(b.phases, phase) }

// run runs the selected phases, one fleet per fleet shape.
func (b *bench) run(ctx context.Context) error {
	if err := b.prepare(ctx); err != nil {
		return err
	}
	type stage struct {
		spec fleetSpec
		tag  string
		fn   func(context.Context, *session) error
	}
	var stages []stage
	if b.want("p1") || b.want("p2") || b.want("p3") {
		stages = append(stages, stage{fleetSpec{members: 1, nodes: b.nodes}, "p1-p3", func(ctx context.Context, s *session) error {
			if b.want("p1") {
				s.phase(ctx, "P1", fmt.Sprintf("fan-out (all, 1 member × %d nodes)", b.nodes), s.p1FanOut)
			}
			if b.want("p2") || b.want("p3") {
				s.phase(ctx, "P3", fmt.Sprintf("makespan (batch, %d groups, 1 member × %d nodes) and P2 hand-off", b.groups, b.nodes), s.p3Makespan)
			}
			return nil
		}})
	}
	if b.want("p4") {
		stages = append(stages, stage{fleetSpec{members: b.p4Members, nodes: b.p4Nodes}, "p4", func(ctx context.Context, s *session) error {
			s.phase(ctx, "P4", fmt.Sprintf("hub cost (all, %d members × %d nodes)", b.p4Members, b.p4Nodes), s.p4HubCost)
			return nil
		}})
	}
	if b.want("p5") {
		stages = append(stages, stage{fleetSpec{members: b.p5Members, nodes: b.p5Nodes}, "p5", func(ctx context.Context, s *session) error {
			s.phase(ctx, "P5", fmt.Sprintf("width (%d members × %d nodes)", b.p5Members, b.p5Nodes), s.p5Width)
			return nil
		}})
	}
	if b.want("p6") {
		stages = append(stages, stage{fleetSpec{members: b.p6Members, nodes: b.p6Nodes, registerLate: true}, "p6", func(ctx context.Context, s *session) error {
			s.phase(ctx, "P6", fmt.Sprintf("cost per engaged member (all, %d members × %d nodes)", b.p6Members, b.p6Nodes), s.p6Width)
			return nil
		}})
	}
	var errs []error
	for i, st := range stages {
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		keep := b.keepFleet && i == len(stages)-1
		if err := b.withFleet(ctx, st.spec, st.tag, keep, st.fn); err != nil {
			errs = append(errs, fmt.Errorf("fleet %s: %w", st.spec, err))
		}
	}
	return errors.Join(errs...)
}

// prepare finds the repository, checks the binaries and builds the hub
// and the plugin.
func (b *bench) prepare(ctx context.Context) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	b.root = root
	if !filepath.IsAbs(b.artifacts) {
		b.artifacts = filepath.Join(mustGetwd(), b.artifacts)
	}
	if err := os.MkdirAll(b.artifacts, 0o755); err != nil {
		return err
	}
	b.results.Machine = describeMachine(b.root, b.k8sVersion)
	b.results.Args = os.Args[1:]
	for _, bin := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "etcd", "kwok", "kwokctl"} {
		if _, err := os.Stat(filepath.Join(b.k8sBin(), bin)); err != nil {
			return fmt.Errorf("%s is missing: run `make k8s-bins`", filepath.Join(b.k8sBin(), bin))
		}
	}
	if b.build {
		logf("bench: make build")
		if err := b.runLogged(ctx, "build", nil, "make", "-C", b.root, "build"); err != nil {
			return err
		}
	}
	for _, bin := range []string{"fleetjob-hub", "kubectl-fleetjob"} {
		if _, err := os.Stat(filepath.Join(b.root, "bin", bin)); err != nil {
			return fmt.Errorf("bin/%s is missing: run `make build`", bin)
		}
	}
	logf("bench: phases %s; artifacts in %s", strings.Join(b.phases, ","), b.artifacts)
	return nil
}

// repoRoot is the directory of go.mod above the working directory: the
// bench runs hack/fleet.sh and bin/ from there.
func repoRoot() (string, error) {
	dir := mustGetwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "fleet.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the bench from the fleetjob repository (no hack/fleet.sh above the working directory)")
		}
		dir = parent
	}
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return wd
}

// report prints the table to stdout and writes the JSON, whatever ran.
func (b *bench) report() {
	if len(b.results.Phases) == 0 {
		return
	}
	fmt.Println()
	b.results.writeMarkdown(os.Stdout)
	if err := b.results.writeJSON(b.out); err != nil {
		logf("bench: writing %s: %v", b.out, err)
		b.failed = true
		return
	}
	logf("bench: results in %s", b.out)
}

// logf prints a progress line to stderr with the time.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
