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
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
)

type clustersOptions struct {
	*options
	out      *outputFlags
	selector string
}

// newClusters is `clusters`: the MemberClusters, what the hub sees of its
// members. There is no probe from the user's machine: it needed the
// registration Secrets (every member's token) and answered for the wrong
// network (a member registered with --server for the hub's reach looked
// unreachable from a laptop); `kubectl fleetjob register` checks a member
// from here when it is registered.
func newClusters(o *options) *cobra.Command {
	c := &clustersOptions{options: o, out: newOutputFlags(true)}
	cmd := &cobra.Command{
		Use:   "clusters",
		Short: "List the member clusters as the hub sees them (its MemberClusters)",
		Long: `List the MemberClusters the hub publishes, one per registered cluster: whether
the hub's connection is Ready (and why not), Kubernetes version, node count,
cluster set, when the registered token expires (with how long is left once
it is within 30 days, and a warning on stderr), age. -o wide adds the
cluster ID, the work namespace, when the hub last read the version and
nodes, and what is wrong: the permissions the registered identity lacks,
or why the hub cannot connect. -o json|yaml|name|jsonpath=... prints the
MemberClusters themselves (a v1 List), as kubectl get memberclusters does.
Needs get/list on memberclusters.fleetjob.io; no registration Secret is read.`,
		Example: `  kubectl fleetjob clusters
  kubectl fleetjob clusters -o wide -l env=prod
  kubectl fleetjob clusters -o name
  kubectl fleetjob clusters -o jsonpath='{range .items[*]}{.metadata.name} {.status.nodeCount}{"\n"}{end}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.out.validate(); err != nil {
				return err
			}
			members, err := c.list(cmd.Context())
			if err != nil {
				return err
			}
			return c.print(members)
		},
	}
	c.out.addFlags(cmd)
	cmd.Flags().StringVarP(&c.selector, "selector", "l", "", "Selector (label query) to filter on, as kubectl get: the registrations' labels (e.g. -l env=prod,fleetjob.io/cluster-set=team-a)")
	return cmd
}

// list reads the MemberClusters from the hub, within hubTimeout.
func (c *clustersOptions) list(ctx context.Context) ([]fleetv1.MemberCluster, error) {
	selector, err := labels.Parse(c.selector)
	if err != nil {
		return nil, usage(fmt.Errorf("-l %q: %w", c.selector, err))
	}
	hc, err := c.hubClient()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	return hub.ListMemberClusters(ctx, hc, selector)
}

func (c *clustersOptions) print(members []fleetv1.MemberCluster) error {
	fmt.Fprint(c.streams.ErrOut, render.ClusterWarnings(members, colour(c.streams.ErrOut)))
	switch {
	case !c.out.human():
		return printList(c.out, asPrinted(members), c.streams.Out)
	case len(members) == 0:
		fmt.Fprintln(c.streams.ErrOut, "No member clusters found: the hub publishes one per registration once it runs (see kubectl fleetjob register --help).")
		return nil
	}
	_, err := fmt.Fprint(c.streams.Out, render.Clusters(members, time.Now(), c.out.options(c.streams.Out)))
	return err
}

// asPrinted are members as kubectl get prints them: with their apiVersion
// and kind (a typed list leaves them out), without managed fields.
func asPrinted(members []fleetv1.MemberCluster) []fleetv1.MemberCluster {
	out := make([]fleetv1.MemberCluster, len(members))
	for i := range members {
		m := members[i].DeepCopy()
		m.APIVersion, m.Kind = fleetv1.GroupVersion.String(), "MemberCluster"
		m.ManagedFields = nil
		out[i] = *m
	}
	return out
}
