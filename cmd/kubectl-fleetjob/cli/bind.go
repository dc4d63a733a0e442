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
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
)

type bindOptions struct {
	*options
	dryRun bool
	output string
}

// newBind is `bind`: the ClusterSetBinding of a set in a namespace.
func newBind(o *options) *cobra.Command {
	b := &bindOptions{options: o}
	cmd := &cobra.Command{
		Use:   "bind SET [-n NAMESPACE]",
		Short: "Bind a cluster set to a namespace: its ClusterJobs may select the set's clusters",
		Long: `Create the ClusterSetBinding SET in the namespace (-n, or the context's): the
ClusterJobs of that namespace may then select the clusters of cluster set
SET, and no others but those of the sets bound there too.

The hub admits the binding only from someone with the bind verb on
clustersets/SET in group fleetjob.io, which a namespace's own admin does not
have unless a platform admin granted it. Binding a set that is bound
already changes nothing. --dry-run prints what would be created, and asks
the hub nothing.`,
		Example: `  kubectl fleetjob bind team-a -n team-a
  kubectl fleetjob bind team-a -n team-a --dry-run -o yaml`,
		Args: exactlyOne("SET", "the cluster set name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := b.validate(args[0]); err != nil {
				return err
			}
			ns, err := b.namespace()
			if err != nil {
				return err
			}
			binding := clusterSetBinding(ns, args[0])
			if b.dryRun {
				return b.printDryRun(binding)
			}
			return b.bind(cmd.Context(), binding)
		},
	}
	flags := cmd.Flags()
	flags.BoolVar(&b.dryRun, "dry-run", false, "Print what would be created; ask the hub nothing")
	flags.StringVarP(&b.output, "output", "o", "", "With --dry-run, print the ClusterSetBinding as yaml or json")
	return cmd
}

// newUnbind is `unbind`: deletes that binding.
func newUnbind(o *options) *cobra.Command {
	b := &bindOptions{options: o}
	return &cobra.Command{
		Use:   "unbind SET [-n NAMESPACE]",
		Short: "Unbind a cluster set from a namespace: delete its ClusterSetBinding",
		Long: `Delete the ClusterSetBinding SET in the namespace (-n, or the context's): the
ClusterJobs of that namespace may no longer select the clusters of cluster
set SET. Bindings are read when a run starts: runs started already keep
their clusters. A set that is not bound there is not an error.`,
		Example: "  kubectl fleetjob unbind team-a -n team-a",
		Args:    exactlyOne("SET", "the cluster set name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := hub.ValidateSetName("SET", args[0]); err != nil {
				return err
			}
			ns, err := b.namespace()
			if err != nil {
				return err
			}
			return b.unbind(cmd.Context(), clusterSetBinding(ns, args[0]))
		},
	}
}

func (b *bindOptions) validate(set string) error {
	if err := hub.ValidateSetName("SET", set); err != nil {
		return err
	}
	if err := checkOutput(b.output, "yaml", "json"); err != nil {
		return err
	}
	if b.output != "" && !b.dryRun {
		return errors.New("-o prints the ClusterSetBinding --dry-run would create: add --dry-run")
	}
	return nil
}

// clusterSetBinding is the binding of set to namespace ns: named for its
// set, as the API requires.
func clusterSetBinding(ns, set string) *fleetv1.ClusterSetBinding {
	return &fleetv1.ClusterSetBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: fleetv1.GroupVersion.String(), Kind: "ClusterSetBinding"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set},
		Spec:       fleetv1.ClusterSetBindingSpec{ClusterSet: set},
	}
}

func (b *bindOptions) printDryRun(binding *fleetv1.ClusterSetBinding) error {
	if b.output != "" {
		return printData(b.streams.Out, b.output, binding)
	}
	_, err := fmt.Fprintf(b.streams.Out, "clustersetbinding.fleetjob.io/%s would be created in namespace %s (dry run)\n", binding.Name, binding.Namespace)
	return err
}

// bind creates the binding within hubTimeout; one that exists is bound
// already.
func (b *bindOptions) bind(ctx context.Context, binding *fleetv1.ClusterSetBinding) error {
	c, err := b.hubClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	set, ns := binding.Spec.ClusterSet, binding.Namespace
	err = c.Create(ctx, binding)
	switch {
	case apierrors.IsAlreadyExists(err):
		_, err = fmt.Fprintf(b.streams.Out, "clustersetbinding.fleetjob.io/%s already exists in namespace %s: cluster set %s is bound there, nothing changed\n", set, ns, set)
		return err
	case apierrors.IsForbidden(err):
		return fmt.Errorf("binding cluster set %s to namespace %s needs the %s verb on clustersets/%s in group %s: ask a platform admin (the hub said: %w)",
			set, ns, fleetv1.BindVerb, set, fleetv1.GroupVersion.Group, err)
	case err != nil:
		return fmt.Errorf("creating clustersetbinding %s/%s on the hub: %w", ns, set, err)
	}
	_, err = fmt.Fprintf(b.streams.Out, "clustersetbinding.fleetjob.io/%s created in namespace %s: its ClusterJobs may select the clusters of cluster set %s\n", set, ns, set)
	return err
}

// unbind deletes the binding within hubTimeout; one that does not exist
// is unbound already.
func (b *bindOptions) unbind(ctx context.Context, binding *fleetv1.ClusterSetBinding) error {
	c, err := b.hubClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	set, ns := binding.Spec.ClusterSet, binding.Namespace
	err = c.Delete(ctx, binding)
	switch {
	case apierrors.IsNotFound(err):
		_, err = fmt.Fprintf(b.streams.Out, "cluster set %s is not bound to namespace %s: there is no clustersetbinding %s/%s on the hub, nothing changed\n", set, ns, ns, set)
		return err
	case err != nil:
		return fmt.Errorf("deleting clustersetbinding %s/%s on the hub: %w", ns, set, err)
	}
	_, err = fmt.Fprintf(b.streams.Out, "clustersetbinding.fleetjob.io/%s deleted from namespace %s: its new runs may no longer select the clusters of cluster set %s (started runs keep theirs)\n", set, ns, set)
	return err
}
