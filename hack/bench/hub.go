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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/shard"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go runs on.
const clockTicks = 100

// engageTimeout bounds how long the hub may take to engage every member:
// a connection, an access review and a cache sync each, seconds per
// member on a loaded 2-core machine, even for 20 members.
const engageTimeout = 3 * time.Minute

// hubProcess is bin/fleetjob-hub running as our child process.
type hubProcess struct {
	cmd     *exec.Cmd
	logPath string
	// metricsURL is the hub's Prometheus endpoint.
	metricsURL string
	// pprofURL is the base of the hub's net/http/pprof endpoints; empty
	// when the hub binary has no --pprof-bind-address flag.
	pprofURL string
	exited   chan struct{}
}

var errNoPprof = errors.New("the hub binary has no --pprof-bind-address flag")

// startHub starts the hub against f's hub cluster, with its metrics,
// probes and (when it has the flag) pprof on free loopback ports, and,
// unless f registers its members late, waits until it engaged every
// member. tag names its log.
func (b *bench) startHub(ctx context.Context, f *fleet, tag string) (*hubProcess, error) {
	h, err := b.launchHub(f, tag, nil, nil)
	if err != nil || f.spec.registerLate {
		return h, err
	}
	if err := h.waitEngaged(ctx, f); err != nil {
		h.stop()
		return nil, err
	}
	return h, nil
}

// startReplica starts one replica of a sharded hub (--leader-elect
// --shard) named identity, as its pod name would name it, its log named
// by tag; it waits for nothing.
func (b *bench) startReplica(f *fleet, identity, tag string) (*hubProcess, error) {
	return b.launchHub(f, tag, []string{"--leader-elect", "--shard"}, []string{"POD_NAME=" + identity})
}

// launchHub starts bin/fleetjob-hub with the bench's flags, extra flags
// and environment, and its log in the artifacts.
func (b *bench) launchHub(f *fleet, tag string, extraArgs, env []string) (*hubProcess, error) {
	bin := filepath.Join(b.root, "bin", "fleetjob-hub")
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	h := &hubProcess{
		logPath:    filepath.Join(b.artifacts, "hub-"+tag+".log"),
		metricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[0]),
		exited:     make(chan struct{}),
	}
	args := []string{"--kubeconfig", f.kubeconfig("hub"),
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0]),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[1])}
	// Plain HTTP on loopback: the bench scrapes without a token. A hub
	// built before --metrics-secure serves plain HTTP anyway.
	if hasFlag(bin, "metrics-secure") {
		args = append(args, "--metrics-secure=false")
	}
	if hasFlag(bin, "pprof-bind-address") {
		args = append(args, "--pprof-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[2]))
		h.pprofURL = fmt.Sprintf("http://127.0.0.1:%d", ports[2])
	} else {
		logf("hub: %v: no profiles will be taken", errNoPprof)
	}
	args = append(append(args, b.hubArgs...), extraArgs...)
	logFile, err := os.Create(h.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	h.cmd = exec.Command(bin, args...)
	h.cmd.Stdout, h.cmd.Stderr = logFile, logFile
	h.cmd.Env = append(os.Environ(), env...)
	// The hub dies with the bench, even when the bench is killed.
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (built by `make build`): %w", bin, err)
	}
	go func() {
		_ = h.cmd.Wait()
		close(h.exited)
	}()
	logf("hub: started pid %d (%s), log %s", h.cmd.Process.Pid, strings.Join(args, " "), h.logPath)
	return h, nil
}

// hasFlag tells whether bin's -help mentions --name: followed by its
// value's name, or by a line break for a bool flag.
func hasFlag(bin, name string) bool {
	out, _ := exec.Command(bin, "-help").CombinedOutput()
	return bytes.Contains(out, []byte("-"+name+" ")) || bytes.Contains(out, []byte("-"+name+"\n"))
}

// freePorts asks the kernel for n free loopback ports. Another process
// could take one before the hub binds it; the hub would then exit and
// the bench say so.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitEngaged waits until the hub's log says every member is engaged, as
// the e2e suite does. A hub that exits fails it at once, with its last
// log lines.
func (h *hubProcess) waitEngaged(ctx context.Context, f *fleet) error {
	ctx, cancel := context.WithTimeout(ctx, engageTimeout)
	defer cancel()
	for {
		log, _ := os.ReadFile(h.logPath)
		missing := 0
		for _, m := range f.members {
			if !engaged(log, m.name) {
				missing++
			}
		}
		if missing == 0 {
			logf("hub: engaged all %d member(s)", len(f.members))
			return nil
		}
		select {
		case <-h.exited:
			return fmt.Errorf("the hub exited (%v); its last log lines:\n%s", h.cmd.ProcessState, lastLines(string(log), 20))
		case <-ctx.Done():
			return fmt.Errorf("the hub engaged %d of %d members in %s (log %s): %w", len(f.members)-missing, len(f.members), engageTimeout, h.logPath, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitSharded waits until every member of f is claimed by one of the
// replicas and engaged by it, each replica serving some: replicas started
// together may each engage members first that move at the next renewal.
// It returns how many members each replica serves.
func waitSharded(ctx context.Context, f *fleet, rs *replicaSet) (map[string]int, error) {
	ctx, cancel := context.WithTimeout(ctx, engageTimeout)
	defer cancel()
	for {
		replicas := rs.current()
		served, pending, err := shardedState(ctx, f, replicas)
		if err == nil && pending == 0 && len(served) == len(replicas) {
			logf("hub replicas: serve %v", served)
			return served, nil
		}
		if err := rs.err(); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("after %s the replicas serve %v and %d members wait (last error: %v): %w", engageTimeout, served, pending, err, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// shardedState counts the members each replica serves (claimed by it and
// engaged in its log) and those not served yet.
func shardedState(ctx context.Context, f *fleet, replicas map[string]*hubProcess) (map[string]int, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var leases coordinationv1.LeaseList
	if err := f.hub.List(ctx, &leases, client.InNamespace(fleetv1.DefaultWorkNamespace), client.MatchingLabels{shard.ClaimLabel: "true"}); err != nil {
		return nil, len(f.members), fmt.Errorf("listing the members' claims: %w", err)
	}
	claims := map[string]string{}
	for i := range leases.Items {
		if l := &leases.Items[i]; ptr.Deref(l.Spec.HolderIdentity, "") != "" {
			claims[l.Annotations[shard.ClusterAnnotation]] = l.Annotations[shard.ReplicaAnnotation]
		}
	}
	logs := map[string][]byte{}
	for id, h := range replicas {
		logs[id], _ = os.ReadFile(h.logPath)
	}
	served, pending := map[string]int{}, 0
	for _, m := range f.members {
		id := claims[m.name]
		if _, ok := replicas[id]; !ok || !engaged(logs[id], m.name) {
			pending++
			continue
		}
		served[id]++
	}
	return served, pending, nil
}

func engaged(log []byte, member string) bool {
	for line := range bytes.SplitSeq(log, []byte("\n")) {
		if bytes.Contains(line, []byte("Engaged member cluster")) && bytes.Contains(line, []byte(strconv.Quote(member))) {
			return true
		}
	}
	return false
}

// stop ends the hub: SIGTERM for a graceful shutdown, SIGKILL after 10 s.
func (h *hubProcess) stop() {
	if h == nil || h.cmd.Process == nil {
		return
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
	case <-time.After(10 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.exited
	}
}

// rss is the hub's resident set size in bytes (VmRSS).
func (h *hubProcess) rss() (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/<hub>/status")
}

// cpuSeconds is the CPU time the hub used so far, user and system.
func (h *hubProcess) cpuSeconds() (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", h.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: the fields
	// proper start after its closing parenthesis, with field 3 (state).
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("cannot parse /proc/<hub>/stat")
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return 0, errors.New("cannot parse /proc/<hub>/stat")
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64) // field 14
	stime, err2 := strconv.ParseFloat(fields[12], 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (utime + stime) / clockTicks, nil
}

// scrape reads the hub's metrics.
func (h *hubProcess) scrape(ctx context.Context) (samples, error) {
	body, err := get(ctx, h.metricsURL, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("scraping the hub's metrics: %w", err)
	}
	return parseMetrics(body)
}

// profile saves the hub's pprof profile kind (e.g. "profile?seconds=30",
// "heap") to path.
func (h *hubProcess) profile(ctx context.Context, kind, path string, timeout time.Duration) error {
	if h.pprofURL == "" {
		return errNoPprof
	}
	body, err := get(ctx, h.pprofURL+"/debug/pprof/"+kind, timeout)
	if err != nil {
		return fmt.Errorf("taking the hub's %s profile: %w", kind, err)
	}
	return os.WriteFile(path, body, 0o644)
}

func get(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", url, resp.Status, truncate(string(body), 200))
	}
	return body, err
}
