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
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/spoke"
)

// planKey is the data key of the plan ConfigMap (spoke/plan.go writes it).

func newPlan(o *options) *cobra.Command {
	var cluster, output string
	cmd := &cobra.Command{
		Use:   "plan NAME --cluster CLUSTER",
		Short: "Show the frozen plan of a ClusterJob in one cluster",
		Long: `Show the plan a ClusterJob froze in one member cluster when the run started
there: its groups in run order with their nodes, and the nodes left out
(cordoned, NotReady, an untolerated taint, ...) with the reason. It is read
from the member, with the credentials the hub stores.`,
		Example: `  kubectl fleetjob plan clean-disks --cluster eu-1
  kubectl fleetjob plan clean-disks --cluster eu-1 -o json`,
		Args: exactlyOne("NAME", "the ClusterJob name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "yaml", "json"); err != nil {
				return err
			}
			p, err := o.readPlan(cmd.Context(), args[0], cluster)
			if err != nil {
				return err
			}
			if output != "" {
				return printData(o.streams.Out, output, p)
			}
			_, err = fmt.Fprint(o.streams.Out, render.Plan(p))
			return err
		},
	}
	cmd.Flags().StringVar(&cluster, "cluster", "", "Member cluster (default: the run's only cluster)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: yaml or json")
	return cmd
}

func (o *options) readPlan(ctx context.Context, name, cluster string) (plan.Plan, error) {
	c, err := o.hubClient()
	if err != nil {
		return plan.Plan{}, err
	}
	cj, err := o.getClusterJob(ctx, c, name)
	if err != nil {
		return plan.Plan{}, err
	}
	if cluster == "" {
		if err := withRows(ctx, c, cj); err != nil {
			return plan.Plan{}, err
		}
	}
	if cluster, err = pickCluster(cj, cluster); err != nil {
		return plan.Plan{}, err
	}
	mc, reg, err := o.memberClient(ctx, cluster)
	if err != nil {
		return plan.Plan{}, err
	}
	// The hub's own reader: the same ownership checks and formats.
	run := spoke.Run{ClusterJob: cj, Cluster: cluster, Namespace: reg.Namespace}
	p, found, err := spoke.ReadPlan(ctx, mc, run)
	if err != nil {
		return plan.Plan{}, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	if !found {
		return plan.Plan{}, fmt.Errorf("cluster %q has no plan for clusterjob %s/%s (no configmap %s/%s): the run has not started there",
			cluster, cj.Namespace, cj.Name, reg.Namespace, naming.PlanName(cj.UID))
	}
	return p, nil
}
