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

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
)

func newClusters(o *options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "clusters",
		Short: "List registered member clusters and probe each with its registered credentials",
		Long: `List the member clusters registered on the hub, with their labels and work
namespace, and probe each (at most 5 seconds, several at once) with the
credentials the hub stores: reachable from here, Kubernetes version, node
count, and the reason when something is wrong. A registration the hub would
refuse (an exec plugin, a file path, no TLS verification) is reported as
InvalidRegistration and never used.`,
		Example: `  kubectl fleetjob clusters
  kubectl fleetjob clusters -o wide
  kubectl fleetjob clusters -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "wide", "yaml", "json"); err != nil {
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
			if len(secrets) == 0 && output == "" {
				fmt.Fprintf(o.streams.ErrOut, "No clusters registered in namespace %s (see kubectl fleetjob register --help).\n", o.registrationNamespace)
				return nil
			}
			infos := hub.ProbeAll(cmd.Context(), secrets)
			if output == "yaml" || output == "json" {
				return printData(o.streams.Out, output, infos)
			}
			_, err = fmt.Fprint(o.streams.Out, render.Clusters(infos, output == "wide", colour(o.streams.Out)))
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: wide, yaml or json")
	return cmd
}
