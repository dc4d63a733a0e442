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
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// results is everything one bench run measured: the JSON file, and the
// source of the markdown table.
type results struct {
	Machine machine        `json:"machine"`
	Args    []string       `json:"args"`
	Fleets  []fleetResult  `json:"fleets"`
	Phases  []*phaseResult `json:"phases"`
}

// machine describes where the numbers were taken.
type machine struct {
	CPUs      int     `json:"cpus"`
	CPUModel  string  `json:"cpuModel"`
	MemoryGiB float64 `json:"memoryGiB"`
	Go        string  `json:"go"`
	Kernel    string  `json:"kernel"`
	K8s       string  `json:"kubernetes"`
	// Commit is the fleetjob commit measured (`git describe --dirty`).
	Commit string    `json:"commit"`
	Date   time.Time `json:"date"`
}

// fleetResult is one fleet the bench brought up.
type fleetResult struct {
	Shape     string  `json:"shape"`
	UpSeconds float64 `json:"upSeconds"`
}

// phaseResult is one phase (P1..P5): its table rows, the fleetjob runs it
// made, and the profiles it took.
type phaseResult struct {
	Phase    string         `json:"phase"`
	Title    string         `json:"title"`
	Seconds  float64        `json:"seconds"`
	Error    string         `json:"error,omitempty"`
	Rows     []row          `json:"rows"`
	Runs     []*fleetjobRun `json:"runs,omitempty"`
	Profiles []string       `json:"profiles,omitempty"`
}

// row is one line of the table: a number in Unit, or a Text (a file), or
// neither, "n/a", with the reason in Detail.
type row struct {
	What   string   `json:"what"`
	Value  *float64 `json:"value"`
	Unit   string   `json:"unit,omitempty"`
	Text   string   `json:"text,omitempty"`
	Detail string   `json:"detail,omitempty"`
}

// add appends a row with a value.
func (p *phaseResult) add(what string, value float64, unit, detail string) {
	p.Rows = append(p.Rows, row{What: what, Value: &value, Unit: unit, Detail: detail})
}

// addNA appends a row whose value could not be measured, saying why.
func (p *phaseResult) addNA(what, unit, why string) {
	p.Rows = append(p.Rows, row{What: what, Unit: unit, Detail: why})
}

// addText appends a row whose value is a text.
func (p *phaseResult) addText(what, text, detail string) {
	p.Rows = append(p.Rows, row{What: what, Text: text, Detail: detail})
}

// addRun appends the rows every fleetjob run has: its object size and
// the member watches the hub made.
func (p *phaseResult) addRun(run *fleetjobRun) {
	p.Runs = append(p.Runs, run)
	p.add(run.Name+": ClusterJob size", float64(run.ObjectBytes), "bytes", "JSON of a GET once Completed")
	if run.WatchRequests != nil {
		p.add(run.Name+": member watch requests", *run.WatchRequests, "", strings.TrimSpace(watchRequestsMetric+" delta "+formatCounts(run.WatchRequestsByResource)))
	} else {
		p.addNA(run.Name+": member watch requests", "", "hub has no "+watchRequestsMetric)
	}
	if n := run.MemberReconciles; n != nil && *n > 0 {
		p.add(run.Name+": member reconciles", *n, "", fmt.Sprintf("mean %.0f ms each (%s of the memberrun controller)", 1000**run.MemberReconcileSeconds / *n, reconcilesMetric))
	}
}

func (r *results) writeJSON(path string) error {
	body, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(body, '\n'), 0o644)
}

// writeMarkdown writes the machine, the fleets and one table of every
// phase's rows, ready to paste into the README.
func (r *results) writeMarkdown(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "Machine: %d CPUs (%s), %.1f GiB, %s, Linux %s, Kubernetes %s (kwok), fleetjob %s, %s\n\n",
		m.CPUs, m.CPUModel, m.MemoryGiB, m.Go, m.Kernel, m.K8s, m.Commit, m.Date.Format("2006-01-02 15:04 MST"))
	for _, f := range r.Fleets {
		fmt.Fprintf(w, "- fleet %s: up in %.0f s\n", f.Shape, f.UpSeconds)
	}
	fmt.Fprintf(w, "\n| phase | measurement | value | detail |\n|---|---|---:|---|\n")
	for _, p := range r.Phases {
		// The phase names its first row only: the table stays readable.
		phase := fmt.Sprintf("**%s** %s", p.Phase, p.Title)
		for _, row := range p.Rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", phase, row.What, formatValue(row), row.Detail)
			phase = ""
		}
		status := fmt.Sprintf("%.0f s", p.Seconds)
		if p.Error != "" {
			status += ", FAILED: " + strings.ReplaceAll(truncate(p.Error, 300), "\n", " ")
		}
		fmt.Fprintf(w, "| %s | phase wall time | %s | |\n", phase, status)
	}
}

// formatCounts is "(jobs 3, nodes 1)", in name order; "" when empty.
func formatCounts(counts map[string]float64) string {
	if len(counts) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, counts[k]))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func formatValue(r row) string {
	if r.Value == nil {
		if r.Text != "" {
			return r.Text
		}
		return "n/a"
	}
	v := *r.Value
	switch r.Unit {
	case "bytes":
		if v >= 1<<20 {
			return fmt.Sprintf("%.1f MiB", v/(1<<20))
		}
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	case "s":
		if v < 1 {
			return fmt.Sprintf("%.1f ms", v*1000)
		}
		return fmt.Sprintf("%.1f s", v)
	case "":
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f %s", v, r.Unit)
}

// describeMachine reads the machine's facts from /proc, the toolchain and
// the repository at root.
func describeMachine(root, k8sVersion string) machine {
	m := machine{CPUs: runtime.NumCPU(), Go: goVersion(), K8s: k8sVersion, Date: time.Now(), Commit: "unknown"}
	if out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	var kb float64
	if _, err := fmt.Sscanf(procField("/proc/meminfo", "MemTotal"), "%f", &kb); err == nil {
		m.MemoryGiB = kb / (1 << 20)
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	m.Kernel = strings.TrimSpace(string(kernel))
	return m
}

// goVersion is `go version` of the toolchain that builds the hub; the
// bench's own runtime.Version() if go cannot be run.
func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

// procField is the value of the first "key: value" line of file.
func procField(file, key string) string {
	body, _ := os.ReadFile(file)
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
