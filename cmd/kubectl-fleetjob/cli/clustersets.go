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

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/output"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
)

type clusterSetsOptions struct {
	*options
	out *outputFlags
}

// newClusterSets is `clustersets`: the sets, their policy, clusters and
// bindings.
func newClusterSets(o *options) *cobra.Command {
	c := &clusterSetsOptions{options: o, out: newOutputFlags(true)}
	cmd := &cobra.Command{
		Use:   "clustersets",
		Short: "List cluster sets: their Pod Security level, clusters and bound namespaces",
		Long: `List the cluster sets of the hub: every ClusterSet, and every set that
member clusters or ClusterSetBindings name without one, shown with the
default Pod Security level and "(no ClusterSet object)". For each set: the
Pod Security level its clusters hold pod templates to, how many member
clusters are in it (the MemberClusters whose status.clusterSet names it),
and the hub namespaces bound to it, whose ClusterJobs may select its
clusters. Needs list on clustersets and memberclusters (no registration
Secret is read) and on clustersetbindings: everywhere, or else the
bindings of -n's namespace alone are shown, and said so on stderr.
-o wide adds the clusters' names; -o prints a List of ClusterSetSummary
(cli.fleetjob.io/v1alpha1, named for the set). A set whose clusters do not
all enforce its level is warned of on stderr.`,
		Example: `  kubectl fleetjob clustersets
  kubectl fleetjob clustersets -o wide
  kubectl fleetjob clustersets -o json
  kubectl fleetjob clustersets -o jsonpath='{.items[?(@.defined==false)].metadata.name}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.out.validate(); err != nil {
				return err
			}
			sets, err := c.list(cmd.Context())
			if err != nil {
				return err
			}
			return c.print(sets)
		},
	}
	c.out.addFlags(cmd)
	return cmd
}

// list reads the sets from the hub, within hubTimeout.
func (c *clusterSetsOptions) list(ctx context.Context) ([]hub.SetInfo, error) {
	hc, err := c.hubClient()
	if err != nil {
		return nil, err
	}
	ns, err := c.namespace()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	sets, err := hub.ListSets(ctx, hc, ns)
	if sets.BindingsOf != "" {
		fmt.Fprintf(c.streams.ErrOut, "Bindings of namespace %s only: you may not list clustersetbindings in every namespace.\n", sets.BindingsOf)
	}
	return sets.Sets, err
}

func (c *clusterSetsOptions) print(sets []hub.SetInfo) error {
	fmt.Fprint(c.streams.ErrOut, render.ClusterSetWarnings(sets, colour(c.streams.ErrOut)))
	switch {
	case !c.out.human():
		return printList(c.out, setSummaries(sets), c.streams.Out)
	case len(sets) == 0:
		fmt.Fprintf(c.streams.ErrOut, "No cluster sets: the hub has no ClusterSet, no MemberCluster and no ClusterSetBinding (see kubectl fleetjob register --help).\n")
		return nil
	}
	_, err := fmt.Fprint(c.streams.Out, render.ClusterSets(sets, c.out.options(c.streams.Out)))
	return err
}

// setSummaries are sets as ClusterSetSummary objects.
func setSummaries(sets []hub.SetInfo) []output.ClusterSetSummary {
	out := make([]output.ClusterSetSummary, len(sets))
	for i, s := range sets {
		sum := output.NewClusterSetSummary(s.Name)
		sum.PodSecurity, sum.Defined, sum.Clusters, sum.Bindings, sum.Warning = string(s.PodSecurity), s.Defined, s.Clusters, s.Bindings, s.Warning
		out[i] = sum
	}
	return out
}
