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

package fleet

import (
	"slices"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
)

// world is one look at a whole run, as the fleet and member controllers
// together see it: the ClusterJob, every member's view with its last row,
// and the selection. The tables of this package are written over worlds, so
// they check what the two controllers converge to, not either alone.
type world struct {
	Spec                 *fleetv1.ClusterJobSpec
	Clusters             []member.Cluster // sorted by name
	LeftOut              []string
	Now, Created         time.Time
	UnreachableTimeout   time.Duration
	MemberErrorTimeout   time.Duration
	NodeStartTimeout     time.Duration
	EmptySelectionGrace  time.Duration
	ConnectingGraceUntil time.Time
}

// worldDecision is what both controllers decide for a world.
type worldDecision struct {
	// Freeze names the clusters whose plan is frozen now.
	Freeze []string
	// Start maps a cluster to the group whose Jobs are created now.
	Start map[string]int
	// Stopped is true when failureStrategy exit stops the run.
	Stopped bool
	// RequeueAfter is the soonest either controller must look again.
	RequeueAfter time.Duration
}

// converged is the outcome of converge.
type converged struct {
	decision worldDecision
	// rows are the clusters' rows, as their MemberRuns hold them.
	rows  []fleetv1.ClusterStatus
	fleet Input
	halt  *fleetv1.Halt
}

// converge runs the fleet's decision over the clusters' last rows, then
// each member's with the fleet's admission and halt, then the fleet's again
// over the new rows, until the fleet has nothing more to say: a halt that a
// member's failure raises, or a slot that a finished member frees, reaches
// the other members on the next pass, as it does on their next reconcile.
func converge(w world) converged {
	runs := make([]MemberRun, len(w.Clusters))
	for i, c := range w.Clusters {
		runs[i] = MemberRun{Cluster: c.Name, Row: fleetv1.ClusterStatus{Name: c.Name}}
		if c.Previous != nil {
			runs[i].Row = *c.Previous.DeepCopy()
		}
	}
	fin := Input{Spec: w.Spec, Runs: runs, LeftOut: w.LeftOut, Now: w.Now, Created: w.Created, EmptySelectionGrace: w.EmptySelectionGrace}
	first := Decide(fin)
	halt, admitted := first.Halt, first.Admit
	var out converged
	for range len(w.Clusters) + 2 {
		out = converged{decision: worldDecision{Start: map[string]int{}, Stopped: halt != nil, RequeueAfter: first.RequeueAfter}, halt: halt}
		next := fin
		next.Runs = slices.Clone(fin.Runs)
		for i, c := range w.Clusters {
			in := member.Input{
				Spec: w.Spec, Cluster: c, Admitted: slices.Contains(admitted, c.Name), Halt: halt, Now: w.Now,
				UnreachableTimeout: w.UnreachableTimeout, MemberErrorTimeout: w.MemberErrorTimeout,
				NodeStartTimeout: w.NodeStartTimeout, ConnectingGraceUntil: w.ConnectingGraceUntil,
			}
			d := member.Decide(in)
			if d.Freeze {
				out.decision.Freeze = append(out.decision.Freeze, c.Name)
			}
			if d.Start != member.NoGroup {
				out.decision.Start[c.Name] = d.Start
			}
			out.decision.Stopped = out.decision.Stopped || d.Stopped
			if r := d.RequeueAfter; r > 0 && (out.decision.RequeueAfter == 0 || r < out.decision.RequeueAfter) {
				out.decision.RequeueAfter = r
			}
			var mr fleetv1.MemberRunStatus
			mr.SetRow(member.Status(in, d))
			out.rows = append(out.rows, mr.Row())
			next.Runs[i] = MemberRun{Cluster: c.Name, Admitted: in.Admitted, Row: mr.Row()}
		}
		out.fleet = next
		then := Decide(next)
		if (then.Halt == nil) == (halt == nil) && len(then.Admit) == 0 {
			break
		}
		halt, admitted = then.Halt, append(admitted, then.Admit...)
	}
	return out
}

// decideWorld is what the two controllers decide for w.
func decideWorld(w world) worldDecision { return converge(w).decision }

// statusWorld is the ClusterJob status the fleet controller writes for w,
// with Clusters holding every row (as the MemberRuns do), so that a table
// can check any cluster's row.
func statusWorld(w world, prev *fleetv1.ClusterJobStatus, generation int64) fleetv1.ClusterJobStatus {
	c := converge(w)
	st := Status(c.fleet, Decision{Halt: c.halt}, prev, generation)
	st.Clusters = c.rows
	return st
}
