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
	"time"
)

// session is one fleet with the hub running against it: the phases that
// need the same fleet shape share one.
type session struct {
	b     *bench
	fleet *fleet
	hub   *hubProcess
}

// withFleet brings up a fleet of spec, installs the CRDs, registers the
// members, starts the hub and runs fn; then it stops the hub and deletes
// the fleet, whatever happened, unless keep (--keep-fleet, last fleet).
// tag names the hub's log.
func (b *bench) withFleet(ctx context.Context, spec fleetSpec, tag string, keep bool, fn func(context.Context, *session) error) (err error) {
	start := time.Now()
	f, err := b.fleetUp(ctx, spec)
	defer func() {
		if keep {
			logf("fleet: kept; delete it with: FLEET_DIR=%s hack/fleet.sh down", b.fleetDir)
			return
		}
		if downErr := b.fleetDown(); downErr != nil && err == nil {
			err = downErr
		}
	}()
	if err != nil {
		return err
	}
	// A control-plane process of the fleet that exits ends the session
	// with the reason; the watch ends before the fleet goes down.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go f.watchComponents(ctx, cancel)
	if err := b.installCRDs(ctx, f); err != nil {
		return err
	}
	if !spec.registerLate {
		if err := b.register(ctx, f); err != nil {
			return err
		}
	}
	hub, err := b.startHub(ctx, f, tag)
	if err != nil {
		return err
	}
	defer hub.stop()
	b.results.Fleets = append(b.results.Fleets, fleetResult{Shape: spec.String(), UpSeconds: time.Since(start).Seconds()})
	return fn(ctx, &session{b: b, fleet: f, hub: hub})
}

// phase runs one phase within --phase-timeout and records its result,
// error included: a failed phase does not stop the others.
func (s *session) phase(ctx context.Context, name, title string, fn func(context.Context, *phaseResult) error) {
	ctx, cancel := context.WithTimeout(ctx, s.b.phaseTimeout)
	defer cancel()
	p := &phaseResult{Phase: name, Title: title}
	s.b.results.Phases = append(s.b.results.Phases, p)
	logf("%s: %s", name, title)
	start := time.Now()
	if err := fn(ctx, p); err != nil {
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			err = fmt.Errorf("%w: %w", err, cause)
		}
		p.Error = err.Error()
		s.b.failed = true
		logf("%s: FAILED after %s: %v", name, time.Since(start).Round(time.Second), err)
	}
	p.Seconds = time.Since(start).Seconds()
	logf("%s: done in %s", name, time.Since(start).Round(time.Second))
}

// raw runs one raw baseline over nodes of m, then deletes its Jobs and
// waits for their pods to be gone.
func (s *session) raw(ctx context.Context, m *member, id string, nodes []string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, s.b.runTimeout)
	defer cancel()
	r := rawRun{cs: m.cs, cluster: m.name, id: id, workers: s.b.rawWorkers}
	logf("raw %s: %d Jobs on %s", id, len(nodes), m.name)
	d, err := r.run(ctx, nodes)
	if err != nil {
		return 0, fmt.Errorf("raw %s: %w", id, err)
	}
	logf("raw %s: all Complete in %.1fs; deleting", id, d.Seconds())
	if err := r.cleanup(ctx); err != nil {
		return 0, fmt.Errorf("raw %s: %w", id, err)
	}
	return d, nil
}

// registerMembers registers every member of a fleet whose hub started
// without them (fleetSpec.registerLate) and waits until the hub engaged
// them all.
func (s *session) registerMembers(ctx context.Context) error {
	if err := s.b.register(ctx, s.fleet); err != nil {
		return err
	}
	return s.hub.waitEngaged(ctx, s.fleet)
}
