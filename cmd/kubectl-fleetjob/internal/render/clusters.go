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
	"strconv"

	"k8s.io/apimachinery/pkg/labels"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
)

// Clusters is the table of registered clusters; wide adds the message.
func Clusters(infos []hub.ClusterInfo, o Options) string {
	p := o.Palette
	header := []string{"NAME", "CLUSTER-SET", "LABELS", "NAMESPACE", "REACHABLE", "VERSION", "NODES", "REASON"}
	if o.Wide {
		header = append(header, "MESSAGE")
	}
	rows := make([][]Cell, 0, len(infos))
	for _, c := range infos {
		reach := Cell{Plain: "yes", Styled: p.paint(green, "yes")}
		if !c.Reachable {
			reach = Cell{Plain: "no", Styled: p.paint(red, "no")}
		}
		nodes := "<unknown>"
		if c.Nodes != nil {
			nodes = strconv.Itoa(*c.Nodes)
		}
		reason := Text(orNone(c.Reason))
		if c.Reason != "" {
			reason.Styled = p.paint(red, c.Reason)
		}
		row := []Cell{
			Text(Escape(c.Name)), Text(Escape(fleetv1.SetOf(c.Labels))), Text(orNone(Escape(labels.Set(c.Labels).String()))), Text(Escape(c.Namespace)),
			reach, Text(orNone(Escape(c.Version))), Text(nodes), reason,
		}
		if o.Wide {
			row = append(row, Text(Escape(oneLine(c.Message))))
		}
		rows = append(rows, row)
	}
	return Tabulate(header, rows, o.NoHeaders)
}
