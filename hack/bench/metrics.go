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
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A small reader of the Prometheus text format, for the few hub metrics
// the bench reads: it saves go.mod a direct dependency on
// prometheus/common for forty lines.

// sample is one line of the text format: name{labels} value.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

type samples []sample

// parseMetrics reads the Prometheus text format (comments skipped).
func parseMetrics(body []byte) (samples, error) {
	var out samples
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return s, fmt.Errorf("no value")
	}
	s.name, line = line[:end], line[end:]
	if line[0] == '{' {
		var err error
		if line, err = parseLabels(line[1:], s.labels); err != nil {
			return s, err
		}
	}
	// The value, then an optional timestamp.
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	s.value = v
	return s, err
}

// parseLabels reads `a="x",b="y"}` into labels and returns what follows
// the closing brace. Values are Go-quoted strings in the text format.
func parseLabels(in string, labels map[string]string) (string, error) {
	for {
		in = strings.TrimLeft(in, ", ")
		if strings.HasPrefix(in, "}") {
			return in[1:], nil
		}
		eq := strings.IndexByte(in, '=')
		if eq < 0 || eq+1 >= len(in) || in[eq+1] != '"' {
			return "", fmt.Errorf("bad label")
		}
		name := in[:eq]
		quoted, err := strconv.QuotedPrefix(in[eq+1:])
		if err != nil {
			return "", fmt.Errorf("label %s: %w", name, err)
		}
		if labels[name], err = strconv.Unquote(quoted); err != nil {
			return "", err
		}
		in = in[eq+1+len(quoted):]
	}
}

// sum adds the values of every sample called name; ok is false when there
// is none (the metric does not exist in this hub).
func (ss samples) sum(name string) (total float64, ok bool) {
	for _, s := range ss {
		if s.name == name {
			total, ok = total+s.value, true
		}
	}
	return total, ok
}

// sumWhere is sum over the series of name whose label is value.
func (ss samples) sumWhere(name, label, value string) (total float64, ok bool) {
	for _, s := range ss {
		if s.name == name && s.labels[label] == value {
			total, ok = total+s.value, true
		}
	}
	return total, ok
}

// bucket is a cumulative histogram bucket: count observations ≤ le.
type bucket struct {
	le    float64
	count float64
}

// buckets returns the histogram name's cumulative buckets in le order,
// summed over label sets other than le.
func (ss samples) buckets(name string) []bucket {
	byLe := map[float64]float64{}
	for _, s := range ss {
		if s.name != name+"_bucket" {
			continue
		}
		le, err := strconv.ParseFloat(s.labels["le"], 64)
		if err != nil {
			continue
		}
		byLe[le] += s.value
	}
	var out []bucket
	for le, n := range byLe {
		out = append(out, bucket{le: le, count: n})
	}
	slices.SortFunc(out, func(a, b bucket) int { return compareFloat(a.le, b.le) })
	return out
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// delta is after minus before, bucket by bucket: the observations made
// between two scrapes. A bucket missing before counts zero.
func delta(before, after []bucket) []bucket {
	prev := map[float64]float64{}
	for _, b := range before {
		prev[b.le] = b.count
	}
	out := make([]bucket, len(after))
	for i, b := range after {
		out[i] = bucket{le: b.le, count: b.count - prev[b.le]}
	}
	return out
}

// quantile estimates the q-quantile of cumulative buckets the way
// Prometheus' histogram_quantile does: find the bucket the rank falls
// in and interpolate linearly inside it (from 0 for the first bucket);
// a rank in the +Inf bucket returns the highest finite bound. ok is
// false without observations.
func quantile(q float64, bs []bucket) (v float64, ok bool) {
	if len(bs) < 2 || !math.IsInf(bs[len(bs)-1].le, 1) {
		return 0, false
	}
	total := bs[len(bs)-1].count
	if total <= 0 {
		return 0, false
	}
	rank := q * total
	i, _ := slices.BinarySearchFunc(bs, rank, func(b bucket, r float64) int { return compareFloat(b.count, r) })
	if i == len(bs)-1 {
		return bs[len(bs)-2].le, true
	}
	lower, prevCount := 0.0, 0.0
	if i > 0 {
		lower, prevCount = bs[i-1].le, bs[i-1].count
	}
	inBucket := bs[i].count - prevCount
	if inBucket <= 0 {
		return bs[i].le, true
	}
	return lower + (bs[i].le-lower)*(rank-prevCount)/inBucket, true
}
