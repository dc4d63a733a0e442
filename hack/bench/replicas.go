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
	"fmt"
	"sort"
	"sync"
	"time"
)

// Restarts of a replica, as its Deployment's kubelet would: a replica that
// exits (a leader that lost its Lease exits by design) comes back after a
// pause, at most maxRestarts times in a phase, so a replica that cannot
// start fails the bench instead of looping.
const (
	defaultRestartDelay = 2 * time.Second
	maxRestarts         = 5
)

// replicaSet is a sharded hub's replicas, each restarted when it exits.
// Its CPU counts every process a replica ran, the exited ones from their
// final usage.
type replicaSet struct {
	b *bench
	f *fleet
	// restartDelay is the pause before a restart.
	restartDelay time.Duration

	mu       sync.Mutex
	procs    map[string]*hubProcess
	restarts map[string]int
	// exitedCPU is the CPU seconds of each replica's exited processes.
	exitedCPU map[string]float64
	failed    error
	stopping  bool
	wg        sync.WaitGroup
}

// startReplicas starts one replica per identity and supervises them.
func (b *bench) startReplicas(f *fleet, ids []string) (*replicaSet, error) {
	return b.startReplicasWith(f, ids, defaultRestartDelay)
}

func (b *bench) startReplicasWith(f *fleet, ids []string, restartDelay time.Duration) (*replicaSet, error) {
	rs := &replicaSet{b: b, f: f, restartDelay: restartDelay, procs: map[string]*hubProcess{}, restarts: map[string]int{}, exitedCPU: map[string]float64{}}
	for _, id := range ids {
		h, err := b.startReplica(f, id, id)
		if err != nil {
			rs.stop()
			return nil, err
		}
		rs.procs[id] = h
		rs.wg.Add(1)
		go rs.supervise(id, h)
	}
	return rs, nil
}

// supervise restarts replica id whenever its process exits, until the set
// stops or the replica used up its restarts.
func (rs *replicaSet) supervise(id string, h *hubProcess) {
	defer rs.wg.Done()
	for {
		<-h.exited
		rs.mu.Lock()
		if rs.stopping {
			rs.mu.Unlock()
			return
		}
		if st := h.cmd.ProcessState; st != nil {
			rs.exitedCPU[id] += (st.UserTime() + st.SystemTime()).Seconds()
		}
		rs.restarts[id]++
		n := rs.restarts[id]
		rs.mu.Unlock()
		if n > maxRestarts {
			rs.fail(fmt.Errorf("hub replica %s exited %d times (last %v, log %s)", id, n, h.cmd.ProcessState, h.logPath))
			return
		}
		logf("hub replica %s exited (%v, log %s): restarting it in %s, as its Deployment would (restart %d)", id, h.cmd.ProcessState, h.logPath, rs.restartDelay, n)
		time.Sleep(rs.restartDelay)
		rs.mu.Lock()
		if rs.stopping {
			rs.mu.Unlock()
			return
		}
		next, err := rs.b.startReplica(rs.f, id, fmt.Sprintf("%s-restart%d", id, n))
		if err != nil {
			rs.mu.Unlock()
			rs.fail(fmt.Errorf("restarting hub replica %s: %w", id, err))
			return
		}
		rs.procs[id] = next
		rs.mu.Unlock()
		h = next
	}
}

func (rs *replicaSet) fail(err error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.failed == nil {
		rs.failed = err
	}
}

// err is why the set cannot go on: a replica that kept exiting.
func (rs *replicaSet) err() error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.failed
}

// current is each replica's running process.
func (rs *replicaSet) current() map[string]*hubProcess {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make(map[string]*hubProcess, len(rs.procs))
	for id, h := range rs.procs {
		out[id] = h
	}
	return out
}

// restartCount is how many times the replicas were restarted, in all.
func (rs *replicaSet) restartCount() (int, string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	total := 0
	var ids []string
	for id, n := range rs.restarts {
		total += n
		ids = append(ids, fmt.Sprintf("%s %d", id, n))
	}
	sort.Strings(ids)
	return total, fmt.Sprint(ids)
}

// usage is each replica's CPU seconds so far, its exited processes'
// included, and its running process's RSS. A replica between a restart's
// exit and start reads as the CPU of its exited processes and no RSS.
func (rs *replicaSet) usage() (map[string]float64, map[string]int64, error) {
	cpu, rss := map[string]float64{}, map[string]int64{}
	for id, h := range rs.current() {
		c, err1 := h.cpuSeconds()
		r, err2 := h.rss()
		select {
		case <-h.exited:
			c, r = 0, 0 // being restarted: its CPU is in exitedCPU once supervise saw it
		default:
			if err := err1; err != nil {
				return nil, nil, fmt.Errorf("replica %s: %w", id, err)
			}
			if err := err2; err != nil {
				return nil, nil, fmt.Errorf("replica %s: %w", id, err)
			}
		}
		rs.mu.Lock()
		cpu[id], rss[id] = c+rs.exitedCPU[id], r
		rs.mu.Unlock()
	}
	return cpu, rss, nil
}

// stop ends every replica and their supervision.
func (rs *replicaSet) stop() {
	rs.mu.Lock()
	rs.stopping = true
	procs := make([]*hubProcess, 0, len(rs.procs))
	for _, h := range rs.procs {
		procs = append(procs, h)
	}
	rs.mu.Unlock()
	for _, h := range procs {
		h.stop()
	}
	rs.wg.Wait()
}
