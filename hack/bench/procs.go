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
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// otherFleetProcesses are the command lines of kwok cluster processes
// (what `pgrep -fa /kwok/clusters/` finds) that do not mention ownDir.
func otherFleetProcesses(ownDir string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(raw, []byte("/kwok/clusters/")) || bytes.Contains(raw, []byte(ownDir)) {
			continue
		}
		cmdline := strings.ReplaceAll(strings.TrimRight(string(raw), "\x00"), "\x00", " ")
		found = append(found, e.Name()+" "+truncate(cmdline, 120))
	}
	return found
}

// component is a control-plane process of the fleet.
type component struct {
	pid           int
	cluster, name string
}

// components finds the processes of the fleet in dir: kube-apiserver,
// etcd, kube-controller-manager, kube-scheduler and kwok-controller of
// each cluster, by the binary path kwokctl runs them from.
func components(dir string) []component {
	prefix := filepath.Join(dir, "kwok", "clusters") + "/"
	entries, _ := os.ReadDir("/proc")
	var found []component
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		bin, _, _ := bytes.Cut(raw, []byte{0})
		rest, ok := strings.CutPrefix(string(bin), prefix)
		if !ok {
			continue
		}
		// <cluster>/bin/<component>
		parts := strings.Split(rest, "/")
		if len(parts) == 3 && parts[1] == "bin" {
			found = append(found, component{pid: pid, cluster: parts[0], name: parts[2]})
		}
	}
	return found
}

// watchComponents checks every 5 s that every component still runs, and
// cancels the session with the reason when one exited: kwokctl does not
// restart it, and the run waiting on that member would only time out.
func (f *fleet) watchComponents(ctx context.Context, cancel context.CancelCauseFunc) {
	comps := components(f.dir)
	logf("fleet: watching %d control-plane processes", len(comps))
	for sleep(ctx, 5*time.Second) {
		for _, c := range comps {
			if processGone(c.pid) {
				cancel(fmt.Errorf("the %s of %s exited (pid %d; log %s)", c.name, c.cluster, c.pid,
					filepath.Join(f.dir, "kwok", "clusters", c.cluster, "logs", c.name+".log")))
				return
			}
		}
	}
}

// processGone tells whether pid has exited (a zombie has).
func processGone(pid int) bool {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return err != nil || bytes.Contains(status, []byte("\nState:\tZ"))
}
