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

package spoke

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/fleetjob/fleetjob/pkg/gzjson"
)

// A results record is stored compressed in segments: its nodes sorted by
// name, in runs of recordSegmentNodes, each run's entries compressed as a
// gzip member of its own. Members concatenated are one gzip stream of one
// JSON document to any reader, so the stored form is the one every fleetjob
// reads; but a write compresses again only the segments whose nodes
// changed, and a run's record costs what changed, not its size (at 10,000
// nodes, encoding the whole record was a quarter of a reconcile).
const recordSegmentNodes = 128

var (
	// recordHead and recordTail open and close the record's JSON around
	// the segments' entries.
	recordHead = []byte(`{"nodes":{`)
	recordTail = []byte("}}\n")
)

// encodedRecord is a results record as stored, segment by segment. It is
// never changed once built: update returns a new one sharing what did not
// change, so that the one cached for a stored version stays true when a
// write fails.
type encodedRecord struct {
	// segments are the layout's runs of nodes, in name order, then one of
	// the nodes recorded since the layout was made.
	segments []*recordSegment
	// index places each node of the layout: its segment and its position
	// there. It is shared by every version built from one layout.
	index map[string]segmentPos
	// nodes is how many nodes the record holds.
	nodes int
	// head and tail are the compressed recordHead and recordTail.
	head, tail []byte
}

type segmentPos struct{ segment, pos int }

// recordSegment is one run of nodes: their names, each one's JSON entry
// (nil when the record does not hold the node), and the entries compressed.
type recordSegment struct {
	names   []string
	entries [][]byte
	// comma tells that member starts with a comma: some segment before it
	// has entries.
	comma  bool
	member []byte
}

// encodeRecord encodes res whole, with a layout of its own nodes.
func encodeRecord(res Results) (*encodedRecord, error) {
	names := make([]string, 0, res.Nodes.Len())
	for n := range res.Nodes.All() {
		names = append(names, n)
	}
	sort.Strings(names)
	e := &encodedRecord{index: make(map[string]segmentPos, len(names))}
	for start := 0; start < len(names); start += recordSegmentNodes {
		s := &recordSegment{names: names[start:min(start+recordSegmentNodes, len(names))]}
		s.entries = make([][]byte, len(s.names))
		for i, n := range s.names {
			e.index[n] = segmentPos{segment: len(e.segments), pos: i}
		}
		e.segments = append(e.segments, s)
	}
	e.segments = append(e.segments, &recordSegment{}) // the nodes recorded later
	var err error
	if e.head, err = gzjson.Compress(recordHead); err != nil {
		return nil, err
	}
	if e.tail, err = gzjson.Compress(recordTail); err != nil {
		return nil, err
	}
	return e.update(res, names)
}

// update returns the record res, which differs from e's only in the nodes
// changed (added, changed or removed). A later node goes to the last
// segment; when that holds more than a segment's worth, the record is
// encoded whole again with a new layout.
func (e *encodedRecord) update(res Results, changed []string) (*encodedRecord, error) {
	next := &encodedRecord{segments: slices.Clone(e.segments), index: e.index, nodes: e.nodes, head: e.head, tail: e.tail}
	copied := make(map[int]bool)
	dirty := make(map[int]bool)
	own := func(i int) *recordSegment {
		if !copied[i] {
			s := *next.segments[i]
			s.names, s.entries = slices.Clone(s.names), slices.Clone(s.entries)
			next.segments[i], copied[i] = &s, true
		}
		dirty[i] = true
		return next.segments[i]
	}
	last := len(next.segments) - 1
	for _, node := range changed {
		r, recorded := res.Nodes.Lookup(node)
		var entry []byte
		if recorded {
			var err error
			if entry, err = recordEntry(node, r); err != nil {
				return nil, err
			}
		}
		if p, ok := e.index[node]; ok {
			s := own(p.segment)
			next.nodes += count(entry) - count(s.entries[p.pos])
			s.entries[p.pos] = entry
			continue
		}
		s := own(last)
		i, found := slices.BinarySearch(s.names, node)
		switch {
		case found:
			next.nodes += count(entry) - count(s.entries[i])
			s.entries[i] = entry
		case recorded:
			s.names, s.entries = slices.Insert(s.names, i, node), slices.Insert(s.entries, i, entry)
			next.nodes++
		}
	}
	if len(next.segments[last].names) > recordSegmentNodes {
		return encodeRecord(res)
	}
	comma := false
	for i, s := range next.segments {
		if !dirty[i] && s.comma == comma {
			comma = comma || s.member != nil
			continue
		}
		s = own(i)
		var err error
		if s.member, err = compressSegment(s.entries, comma); err != nil {
			return nil, err
		}
		s.comma = comma
		comma = comma || s.member != nil
	}
	return next, nil
}

// count is 1 for an entry the record holds.
func count(entry []byte) int {
	if entry == nil {
		return 0
	}
	return 1
}

// recordEntry is node's entry in the record's JSON: "node":{...}.
func recordEntry(node string, r NodeResult) ([]byte, error) {
	key, err := json.Marshal(node)
	if err != nil {
		return nil, err
	}
	value, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encoding the result of node %s: %w", node, err)
	}
	return append(append(key, ':'), value...), nil
}

// compressSegment compresses entries, comma-separated, with a leading comma
// when comma is set; nil when there is no entry.
func compressSegment(entries [][]byte, comma bool) ([]byte, error) {
	var raw []byte
	for _, entry := range entries {
		if entry == nil {
			continue
		}
		if comma || len(raw) > 0 {
			raw = append(raw, ',')
		}
		raw = append(raw, entry...)
	}
	if raw == nil {
		return nil, nil
	}
	return gzjson.Compress(raw)
}

// document is the whole record, compressed, as stored.
func (e *encodedRecord) document() []byte {
	n := len(e.head) + len(e.tail)
	for _, s := range e.segments {
		n += len(s.member)
	}
	doc := make([]byte, 0, n)
	doc = append(doc, e.head...)
	for _, s := range e.segments {
		doc = append(doc, s.member...)
	}
	return append(doc, e.tail...)
}
