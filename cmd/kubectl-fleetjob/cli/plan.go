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

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/output"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
)

func newPlan(o *options) *cobra.Command {
	var clusters []string
	out := newOutputFlags(false)
	cmd := &cobra.Command{
		Use:   "plan NAME [--cluster CLUSTER]...",
		Short: "Show the frozen plans of a ClusterJob, in every cluster or some",
		Long: `Show the plan a ClusterJob froze in each member cluster when the run started
there: its groups in run order with their nodes, and the nodes left out
(cordoned, NotReady, an untolerated taint, ...) with the reason. Every
cluster of the run by default; --cluster (repeatable) narrows. Plans are
read from the run's MemberRuns on the hub, where the hub publishes them:
read access to memberruns is all it needs. A cluster whose plan is not
there is named, and the command exits non-zero after showing the others. -o prints a List of ClusterPlan
(cli.fleetjob.io/v1alpha1, named for the cluster).`,
		Example: `  kubectl fleetjob plan clean-disks
  kubectl fleetjob plan clean-disks --cluster eu-1 -o json
  kubectl fleetjob plan clean-disks -o jsonpath='{range .items[*]}{.cluster}{"\t"}{.plan.groups[*].name}{"\n"}{end}'`,
		Args:              exactlyOne("NAME", "the ClusterJob name"),
		ValidArgsFunction: completeClusterJobs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			plans, readErr := o.readPlans(cmd.Context(), args[0], clusters)
			if len(plans) == 0 {
				return readErr
			}
			if !out.human() {
				items := make([]output.ClusterPlan, len(plans))
				for i, p := range plans {
					items[i] = output.NewClusterPlan(p.Cluster, p.Plan)
				}
				if err := printList(out, items, o.streams.Out); err != nil {
					return err
				}
				return readErr
			}
			if _, err := fmt.Fprint(o.streams.Out, render.Plans(plans, out.options(o.streams.Out))); err != nil {
				return err
			}
			return readErr
		},
	}
	cmd.Flags().StringSliceVar(&clusters, "cluster", nil, "Member cluster (repeatable; default: every cluster of the run)")
	_ = cmd.RegisterFlagCompletionFunc("cluster", completeRunClusters(o))
	out.addFlags(cmd)
	return cmd
}

// readPlans reads the run's plan in each cluster asked for (every one of
// the run when none is). It returns those it read, by cluster name, and
// an error naming the clusters it could not read.
func (o *options) readPlans(ctx context.Context, name string, clusters []string) ([]render.ClusterPlan, error) {
	c, err := o.hubClient()
	if err != nil {
		return nil, err
	}
	lookup, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	cj, err := o.getClusterJob(lookup, c, name)
	if err != nil {
		return nil, err
	}
	if err := withRows(lookup, c, cj); err != nil {
		return nil, err
	}
	if clusters, err = pickClusters(cj, clusters); err != nil {
		return nil, err
	}
	results, err := runResults(ctx, c, cj, clusters)
	out := make([]render.ClusterPlan, len(results))
	for i, r := range results {
		out[i] = render.ClusterPlan{Cluster: r.cluster, Plan: r.doc.Plan}
	}
	return out, err
}
