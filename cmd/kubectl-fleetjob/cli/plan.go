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
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/output"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
)

func newPlan(o *options) *cobra.Command { return newPlanCommand(o, newPreviewOptions(o)) }

// newPlanCommand is plan, previewing -f with pv.
func newPlanCommand(o *options, pv *previewOptions) *cobra.Command {
	var clusters []string
	out := newOutputFlags(false)
	cmd := &cobra.Command{
		Use:   "plan (NAME [--cluster CLUSTER]... | -f FILE [--member-context CLUSTER=CONTEXT]...)",
		Short: "Show the frozen plans of a ClusterJob, or preview one from a file before it exists",
		Long: `Show the plan a ClusterJob froze in each member cluster when the run started
there: its groups in run order with their nodes, and the nodes left out
(cordoned, NotReady, an untolerated taint, ...) with the reason. Every
cluster of the run by default; --cluster (repeatable) narrows. Plans are
read from the run's MemberRuns on the hub, where the hub publishes them:
read access to memberruns is all it needs. A cluster whose plan is not
there is named, and the command exits non-zero after showing the others. -o prints a List of ClusterPlan
(cli.fleetjob.io/v1alpha1, named for the cluster).

With -f FILE (- for stdin), preview the one ClusterJob in FILE, which does
not exist yet: what the hub would do if it were created now. Nothing is
created. The hub first checks it in a server dry run of its create (CRD
validation, admission policies; --validate=false skips it), and the
preview is of the ClusterJob as the hub defaults it. Then, with the hub's
own decision code: the clusters selected (spec.clusterSelector over the
MemberClusters' labels, which are the registrations'; with --tenancy=on,
the hub's default, only in the cluster sets bound to the namespace); per
cluster, its set's Pod Security verdict on the pod template, whether the
maintenance windows of the run and of the set are open now or when they
open next, whether it starts at once or waits (spec.approval's canary,
clusterRollout, suspend), for a run with spec.disruptive the
FleetDisruptionBudgets selecting it and their caps (shared with every
other disruptive run: what those disrupt now only the hub knows); and, for
each cluster given a --member-context CLUSTER=CONTEXT, its nodes read with
your own credentials for the member and planned by the hub's planner: the
groups with their nodes, and the nodes skipped and why. A plan freezes
when its cluster starts: nodes that change before then change it. The
nodes of at most 50 clusters are read. Needs list on memberclusters,
clustersetbindings and clustersets (and fleetdisruptionbudgets for a
disruptive run) and, with --validate, create on clusterjobs on the hub;
list on nodes in each member. -o prints a List of ClusterPreview
(cli.fleetjob.io/v1alpha1, named for the cluster); run-wide notes go to
stderr.`,
		Example: `  kubectl fleetjob plan clean-disks
  kubectl fleetjob plan clean-disks --cluster eu-1 -o json
  kubectl fleetjob plan clean-disks -o jsonpath='{range .items[*]}{.cluster}{"\t"}{.plan.groups[*].name}{"\n"}{end}'

  # Preview a ClusterJob before creating it, reading eu-1's and eu-2's nodes
  kubectl fleetjob plan -f clean-disks.yaml --member-context eu-1=kind-eu-1 --member-context eu-2=kind-eu-2
  kubectl fleetjob plan -f clean-disks.yaml -o yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if pv.file != "" {
				if len(args) > 0 {
					return usagef("%s -f previews the ClusterJob of a file; it takes no NAME (got %s): use NAME or -f", cmd.CommandPath(), strings.Join(args, " "))
				}
				return nil
			}
			if len(args) != 1 {
				return usagef("%s takes exactly one argument, NAME (the ClusterJob name), or -f FILE; got %d", cmd.CommandPath(), len(args))
			}
			return nil
		},
		ValidArgsFunction: completeClusterJobs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if pv.file != "" {
				if len(clusters) > 0 {
					return usagef("--cluster narrows the plans of a run NAME; -f previews every cluster the file selects")
				}
				return pv.run(cmd.Context(), out)
			}
			for _, f := range previewFlags {
				if cmd.Flags().Changed(f) {
					return usagef("--%s goes with -f FILE: it previews a ClusterJob not created yet", f)
				}
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
	pv.addFlags(cmd)
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
