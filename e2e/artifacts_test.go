//go:build e2e

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

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

var unsafePath = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// dumpArtifacts writes what a failed spec saw into
// ARTIFACTS/<spec>/<sub>: the hub controller's log, the ClusterJobs and
// hub events, and per member the fleetjob Jobs, pods, plans, nodes and
// events, plus the recorders' watch logs. It never fails the spec.
func dumpArtifacts(report SpecReport, sub string) {
	name := strings.Trim(unsafePath.ReplaceAllString(report.FullText(), "-"), "-")
	if len(name) > 120 {
		name = name[:120]
	}
	dir := filepath.Join(f.artifacts, name, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		GinkgoWriter.Printf("Cannot write artifacts: %v\n", err)
		return
	}
	write := func(file, content string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			GinkgoWriter.Printf("Cannot write %s: %v\n", file, err)
		}
	}
	kubectl := func(file, cluster string, args ...string) {
		out, err := f.run(cluster, "", args...)
		if err != nil {
			out += "\n# " + err.Error() + "\n"
		}
		write(file, out)
	}
	if hub != nil {
		write("hub-controller.log", hub.logs())
	}
	kubectl("hub-clusterjobs.yaml", "hub", "get", "clusterjobs", "-A", "-o", "yaml")
	kubectl("hub-events.txt", "hub", "get", "events", "-A", "--sort-by=.lastTimestamp")
	kubectl("hub-registrations.txt", "hub", "-n", workNamespace, "get", "secrets", "--show-labels")
	for _, m := range f.members {
		for _, kind := range []string{"jobs", "pods", "configmaps"} {
			kubectl(m.name+"-"+kind+".yaml", m.name, "-n", workNamespace, "get", kind, "-l", "app.kubernetes.io/managed-by=fleetjob", "-o", "yaml")
		}
		kubectl(m.name+"-nodes.txt", m.name, "get", "nodes", "-o", "wide", "--show-labels")
		kubectl(m.name+"-events.txt", m.name, "-n", workNamespace, "get", "events", "--sort-by=.lastTimestamp")
		if r := recorders[m.name]; r != nil {
			write(m.name+"-job-watch.log", r.eventLog())
		}
	}
	GinkgoWriter.Printf("Artifacts of the failed spec are in %s\n", dir)
}
