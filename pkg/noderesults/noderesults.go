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

// Package noderesults is the document in which the hub publishes a run's
// frozen plan and per-node results in one member on its MemberRun, so that
// whoever may read MemberRuns sees them without any credential for the
// member (`kubectl fleetjob status --nodes`, `kubectl fleetjob plan`).
//
// It is gzip-compressed JSON, bounded by MaxBytes: a document that would be
// larger is shrunk, the least telling first (the messages of nodes that did
// not fail, then every output, then the succeeded and skipped nodes, which
// are counted in Omitted).
package noderesults

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fleetjob/fleetjob/pkg/gzjson"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// MaxBytes bounds a compressed document: with the rest of its MemberRun it
// stays well under the API server's 1.5 MiB request limit once base64
// encoded, and a 30,000-node cluster with 63-character names fits.
const MaxBytes = 512 << 10

// maxInflated bounds a document once decompressed: a MemberRun someone
// crafted must not make a client inflate gigabytes.
const maxInflated = 64 << 20

// The phases a node is published in.
const (
	Pending   = "Pending"
	Running   = "Running"
	Succeeded = "Succeeded"
	Failed    = "Failed"
	Skipped   = "Skipped"
)

// Document is a run's plan and node results in one member cluster.
type Document struct {
	// Plan is the plan the run froze in the cluster.
	Plan plan.Plan `json:"plan"`
	// Nodes are the planned nodes in plan order, group by group, but for
	// the Omitted ones.
	Nodes []Node `json:"nodes,omitempty"`
	// Omitted counts the planned nodes left out of Nodes to keep the
	// document within MaxBytes: succeeded and skipped ones only.
	Omitted int `json:"omitted,omitempty"`
}

// Node is one planned node's result.
type Node struct {
	// Name and Group (the index of the node's group in the plan) are not
	// stored: Index, the node's position in plan order, names it in the
	// plan, so that each name is in the document once.
	Name  string `json:"-"`
	Group int    `json:"-"`
	Index int    `json:"i"`
	// Phase is Pending, Running, Succeeded, Failed or Skipped.
	Phase string `json:"p"`
	// Reason and Message tell why a node failed or was skipped, or what
	// keeps a running one from starting.
	Reason  string `json:"r,omitempty"`
	Message string `json:"m,omitempty"`
	// Start and Finish are Unix seconds, 0 when unknown.
	Start  int64 `json:"s,omitempty"`
	Finish int64 `json:"f,omitempty"`
	// ExitCode and Output are a failed node's container exit code and the
	// start of its termination message.
	ExitCode *int32 `json:"x,omitempty"`
	Output   string `json:"o,omitempty"`
	// Drain is what the node's drain came to, for a run that drains.
	Drain Drain `json:"d,omitzero"`
}

// Drain is what a node's drain (spec.nodePreparation.drain) came to.
type Drain struct {
	// Start is when the hub cordoned the node, Unix seconds.
	Start int64 `json:"s,omitempty"`
	// Seconds is how long the drain took: to the node's Job, or to its
	// failure.
	Seconds int64 `json:"t,omitempty"`
	// Evicted counts the pods whose eviction the API server accepted.
	Evicted int32 `json:"e,omitempty"`
}

// ErrTooLarge reports a document that does not fit MaxBytes even with
// every node but the failed and running ones omitted.
var ErrTooLarge = errors.New("the node results do not fit the MemberRun")

// Encode compresses d, shrunk as the package says when it does not fit
// MaxBytes. Each node's Index is where its Name is in the plan; it returns
// the bytes and the number of nodes omitted.
func Encode(d Document) ([]byte, int, error) {
	d.Nodes = slices.Clone(d.Nodes) // shrinking must not change the caller's
	index := map[string]int{}
	for i, name := range planOrder(d.Plan) {
		index[name] = i
	}
	for i := range d.Nodes {
		at, ok := index[d.Nodes[i].Name]
		if !ok {
			return nil, 0, fmt.Errorf("node %s is not in the plan", d.Nodes[i].Name)
		}
		d.Nodes[i].Index = at
	}
	for _, shrink := range []func(*Document){
		func(*Document) {},
		func(d *Document) { dropText(d, false) },
		func(d *Document) { dropText(d, true) },
		omitFinished,
	} {
		shrink(&d)
		data, err := gzjson.Encode(d)
		if err != nil {
			return nil, 0, err
		}
		if len(data) <= MaxBytes {
			return data, d.Omitted, nil
		}
	}
	return nil, 0, fmt.Errorf("%w: %d nodes, %d failed or running, over %d KiB compressed", ErrTooLarge, len(d.Nodes)+d.Omitted, len(d.Nodes), MaxBytes>>10)
}

// Decode inflates a document Encode made, each node named from the plan.
func Decode(data []byte) (Document, error) {
	var d Document
	if err := gzjson.Decode(data, maxInflated, &d); err != nil {
		return d, fmt.Errorf("decoding the node results: %w", err)
	}
	names, groups := planOrder(d.Plan), make([]int, 0, d.Plan.NodeCount())
	for g, group := range d.Plan.Groups {
		for range group.Nodes {
			groups = append(groups, g)
		}
	}
	for i := range d.Nodes {
		n := &d.Nodes[i]
		if n.Index < 0 || n.Index >= len(names) {
			return d, fmt.Errorf("decoding the node results: node %d of a %d-node plan", n.Index, len(names))
		}
		n.Name, n.Group = names[n.Index], groups[n.Index]
	}
	return d, nil
}

// planOrder is the plan's nodes, group by group.
func planOrder(p plan.Plan) []string {
	names := make([]string, 0, p.NodeCount())
	for _, g := range p.Groups {
		names = append(names, g.Nodes...)
	}
	return names
}

// dropText drops the message and output of every node that did not fail,
// and the output of the failed ones too when outputs is set.
func dropText(d *Document, outputs bool) {
	for i := range d.Nodes {
		n := &d.Nodes[i]
		if n.Phase != Failed {
			n.Message, n.Output = "", ""
		}
		if outputs {
			n.Output = ""
		}
	}
}

// omitFinished leaves out the succeeded and skipped nodes.
func omitFinished(d *Document) {
	kept := d.Nodes[:0:0]
	for _, n := range d.Nodes {
		if n.Phase == Succeeded || n.Phase == Skipped {
			d.Omitted++
			continue
		}
		kept = append(kept, n)
	}
	d.Nodes = kept
}
