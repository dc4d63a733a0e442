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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReplicaSetRestarts runs two fake replicas: one that keeps running,
// and one that exits at once every time. The second is restarted, each
// time as a new process with its own log, until it used up its restarts
// and the set reports it; the first is never touched, and stop ends both.
func TestReplicaSetRestarts(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	hub := "#!/bin/sh\n[ \"$1\" = -help ] && exit 2\n[ \"$POD_NAME\" = steady ] && exec sleep 60\nexit 3\n"
	if err := os.WriteFile(filepath.Join(root, "bin", "fleetjob-hub"), []byte(hub), 0o755); err != nil {
		t.Fatal(err)
	}
	b := &bench{root: root, artifacts: t.TempDir()}
	rs, err := b.startReplicasWith(&fleet{dir: t.TempDir()}, []string{"steady", "flaky"}, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	steady := rs.current()["steady"]
	deadline := time.Now().Add(30 * time.Second)
	for rs.err() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	err = rs.err()
	if err == nil || !strings.Contains(err.Error(), "hub replica flaky exited 6 times") {
		t.Fatalf("err() = %v, want the flaky replica's %d restarts used up", err, maxRestarts)
	}
	if total, byReplica := rs.restartCount(); total != maxRestarts+1 || byReplica != "[flaky 6]" {
		t.Errorf("restartCount() = %d, %s; want %d, [flaky 6]", total, byReplica, maxRestarts+1)
	}
	if got := rs.current()["steady"]; got != steady {
		t.Error("the steady replica was replaced")
	}
	select {
	case <-steady.exited:
		t.Error("the steady replica exited")
	default:
	}
	logs, _ := filepath.Glob(filepath.Join(b.artifacts, "hub-flaky*.log"))
	if len(logs) != maxRestarts+1 {
		t.Errorf("the flaky replica has %d logs, want one per process (%d): %v", len(logs), maxRestarts+1, logs)
	}
	stopped := make(chan struct{})
	go func() { rs.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(15 * time.Second):
		t.Fatal("stop() did not return")
	}
	select {
	case <-steady.exited:
	default:
		t.Error("stop() left the steady replica running")
	}
}
