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

package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/output"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
)

func newClusters(o *options) *cobra.Command {
	out := newOutputFlags(true)
	cmd := &cobra.Command{
		Use:   "clusters",
		Short: "List registered member clusters and probe each with its registered credentials",
		Long: `List the member clusters registered on the hub, with their labels and work
namespace, and probe each (at most 5 seconds, several at once) with the
credentials the hub stores: reachable from here, Kubernetes version, node
count, and the reason when something is wrong. A registration the hub would
refuse (an exec plugin, a file path, no TLS verification) is reported as
InvalidRegistration and never used. -o wide adds the message; -o prints a
List of ClusterProbe (cli.fleetjob.io/v1alpha1, named for the cluster, with
the registration's labels).`,
		Example: `  kubectl fleetjob clusters
  kubectl fleetjob clusters -o wide
  kubectl fleetjob clusters -o name
  kubectl fleetjob clusters -o custom-columns=NAME:.metadata.name,REACHABLE:.reachable,NODES:.nodes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			cs, err := o.hubClientset()
			if err != nil {
				return err
			}
			secrets, err := hub.List(cmd.Context(), cs, o.registrationNamespace)
			if err != nil {
				return err
			}
			if len(secrets) == 0 && out.human() {
				fmt.Fprintf(o.streams.ErrOut, "No clusters registered in namespace %s (see kubectl fleetjob register --help).\n", o.registrationNamespace)
				return nil
			}
			infos := hub.ProbeAll(cmd.Context(), secrets)
			if !out.human() {
				return printList(out, clusterProbes(infos), o.streams.Out)
			}
			_, err = fmt.Fprint(o.streams.Out, render.Clusters(infos, out.options(o.streams.Out)))
			return err
		},
	}
	out.addFlags(cmd)
	return cmd
}

// clusterProbes are infos as ClusterProbe objects.
func clusterProbes(infos []hub.ClusterInfo) []output.ClusterProbe {
	out := make([]output.ClusterProbe, len(infos))
	for i, c := range infos {
		p := output.NewClusterProbe(c.Name, c.Labels)
		p.WorkNamespace, p.ClusterSet, p.Reachable = c.Namespace, fleetv1.SetOf(c.Labels), c.Reachable
		p.Version, p.Nodes, p.Reason, p.Message = c.Version, c.Nodes, c.Reason, c.Message
		out[i] = p
	}
	return out
}
