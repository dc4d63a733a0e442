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
	"regexp"
	"strings"
)

// The chart's sharded mode (.Values.sharding.enabled) is config/sharded:
// what that overlay adds to config/default, and only that, behind the
// value. Its objects that config/default lacks become templates rendered
// only when sharding is on; the lines it adds to the hub's Deployment go
// in behind the same condition, where the overlay put them. Anything else
// the overlay changes fails the generation: the chart would not say it.

const (
	ifSharded = "{{- if .Values.sharding.enabled }}\n"
	endIf     = "{{- end }}\n"
	// needsLeader fails a release with sharding on and no leader, as the
	// hub would at start (--shard needs --leader-elect). It renders to
	// nothing, not even its newline, and leaves the line before it alone.
	needsLeader = `{{ if and .Values.sharding.enabled (not .Values.leaderElection) }}{{ fail "sharding.enabled needs leaderElection: one replica decides for the fleet" }}{{ end -}}` + "\n"
)

// replicasLine is the one line of the Deployment the overlay may change:
// the chart's replicas value stands for it either way.
var replicasLine = regexp.MustCompile(`^  replicas: \d+$`)

// shardedObjects compares the two renders. It returns the objects of
// sharded that base lacks, and puts into base's Deployment the lines the
// overlay adds to it, each run of them behind the sharding condition.
func shardedObjects(base, sharded []*object) ([]*object, error) {
	byKey := map[string]*object{}
	for _, o := range base {
		byKey[o.kind+"/"+o.name] = o
	}
	var added []*object
	seen := map[string]bool{}
	for _, o := range sharded {
		key := o.kind + "/" + o.name
		seen[key] = true
		b, ok := byKey[key]
		switch {
		case !ok && (o.kind == "Namespace" || o.kind == "CustomResourceDefinition"):
			return nil, fmt.Errorf("config/sharded adds %s %s: the chart adds only namespaced objects when sharding is on", o.kind, o.name)
		case !ok:
			added = append(added, o)
		case o.kind == "Deployment":
			text, err := conditionalLines(b.text, o.text)
			if err != nil {
				return nil, fmt.Errorf("config/sharded's %s %s: %w", o.kind, o.name, err)
			}
			b.text = needsLeader + text
		case o.text != b.text:
			return nil, fmt.Errorf("config/sharded changes %s %s: the chart's sharded mode only adds objects and lines to the hub's Deployment", o.kind, o.name)
		}
	}
	for key := range byKey {
		if !seen[key] {
			return nil, fmt.Errorf("config/sharded drops %s: the chart's sharded mode only adds", key)
		}
	}
	return added, nil
}

// conditionalLines is base with the lines overlay adds to it, each run
// of them behind the sharding condition, so that the template renders
// base with sharding off and overlay with it on (the replicas line aside).
func conditionalLines(base, overlay string) (string, error) {
	a, b := strings.SplitAfter(base, "\n"), strings.SplitAfter(overlay, "\n")
	var out strings.Builder
	inserting := false
	closeRun := func() {
		if inserting {
			out.WriteString(endIf)
			inserting = false
		}
	}
	for _, op := range lineDiff(a, b) {
		switch {
		case op.kind == same:
			closeRun()
			out.WriteString(op.line)
		case op.kind == added:
			if !inserting {
				out.WriteString(ifSharded)
				inserting = true
			}
			out.WriteString(op.line)
		case replicasLine.MatchString(strings.TrimSuffix(op.line, "\n")):
			// Removed from base: kept, with its value the chart's; the
			// overlay's own replicas line is an added one, dropped below.
			closeRun()
			out.WriteString(op.line)
		default:
			return "", fmt.Errorf("it changes or removes the line %q: the chart's sharded mode only adds lines", strings.TrimSpace(op.line))
		}
	}
	closeRun()
	return dropAddedReplicas(out.String()), nil
}

// dropAddedReplicas removes the overlay's replicas line, and the
// condition around it when it was alone there: replicas is a value of its
// own, whatever the mode.
func dropAddedReplicas(text string) string {
	lines := strings.SplitAfter(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == ifSharded && i+2 < len(lines) && replicasLine.MatchString(strings.TrimSuffix(lines[i+1], "\n")) && lines[i+2] == endIf {
			i += 2
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

type opKind int

const (
	same opKind = iota
	added
	removed
)

type lineOp struct {
	kind opKind
	line string
}

// lineDiff is an edit script from a to b along their longest common
// subsequence of lines (a Deployment is a hundred lines: the quadratic
// table costs nothing). Removals come before the additions that replace
// them.
func lineDiff(a, b []string) []lineOp {
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []lineOp
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, lineOp{same, a[i]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, lineOp{removed, a[i]})
			i++
		default:
			ops = append(ops, lineOp{added, b[j]})
			j++
		}
	}
	return ops
}
