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

import "github.com/fleetjob/fleetjob/pkg/noderesults"

// Published is the run's plan and node results as the hub publishes them
// outside the member: what the member's objects said when s was read.
func (s State) Published() noderesults.Document {
	d := noderesults.Document{Plan: s.Plan, Nodes: make([]noderesults.Node, len(s.Nodes))}
	for i, n := range s.Nodes {
		d.Nodes[i] = noderesults.Node{Name: n.Node, Group: n.Group, Index: i, Phase: string(n.Phase), Reason: n.Reason, Message: n.Message,
			Start: unix(n.StartTime), Finish: unix(n.CompletionTime), ExitCode: n.ExitCode, Output: n.Output, Drain: n.Drain}
	}
	return d
}
