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

package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
)

// noObject marks the level of a set without a ClusterSet object: the
// default, which creating one would change.
const noObject = "(no ClusterSet object)"

// ClusterSetWarnings warns of each set whose members do not all enforce
// its level: lines for stderr, beside a table or -o output.
func ClusterSetWarnings(sets []hub.SetInfo, p Palette) string {
	var b strings.Builder
	for _, s := range sets {
		if s.Warning != "" {
			fmt.Fprintf(&b, "%s cluster set %s: %s\n", p.paint(yellow, "warning:"), Escape(s.Name), Escape(s.Warning))
		}
	}
	return b.String()
}

// ClusterSets is the table of cluster sets; wide adds their clusters.
func ClusterSets(sets []hub.SetInfo, o Options) string {
	p := o.Palette
	header := []string{"NAME", "POD-SECURITY", "CLUSTERS", "BINDINGS"}
	if o.Wide {
		header = append(header, "CLUSTER-NAMES")
	}
	rows := make([][]Cell, 0, len(sets))
	for _, s := range sets {
		level := Text(Escape(string(s.PodSecurity)))
		if !s.Defined {
			level = Cell{Plain: level.Plain + " " + noObject, Styled: level.Plain + " " + p.paint(faint, noObject)}
		}
		row := []Cell{
			Text(Escape(s.Name)), level, Text(strconv.Itoa(len(s.Clusters))),
			Text(orNone(Escape(strings.Join(s.Bindings, ",")))),
		}
		if o.Wide {
			row = append(row, Text(orNone(Escape(strings.Join(s.Clusters, ",")))))
		}
		rows = append(rows, row)
	}
	return Tabulate(header, rows, o.NoHeaders)
}
