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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
)

type bindOptions struct {
	*options
	dryRunFlag string
	dryRun     dryRun
	out        *outputFlags
}

// newBind is `bind`: the ClusterSetBinding of a set in a namespace.
func newBind(o *options) *cobra.Command {
	b := &bindOptions{options: o, out: newObjectOutputFlags()}
	cmd := &cobra.Command{
		Use:   "bind SET [-n NAMESPACE] [--dry-run=client|server] [-o FORMAT]",
		Short: "Bind a cluster set to a namespace: its ClusterJobs may select the set's clusters",
		Long: `Create the ClusterSetBinding SET in the namespace (-n, or the context's): the
ClusterJobs of that namespace may then select the clusters of cluster set
SET, and no others but those of the sets bound there too.

The hub admits the binding only from someone with the bind verb on
clustersets/SET in group fleetjob.io, which a namespace's own admin does not
have unless a platform admin granted it. Binding a set that is bound
already changes nothing. --dry-run=client prints what would be created and
asks the hub nothing; --dry-run=server sends the create with dryRun=All,
so the hub's admission policy checks your bind verb and nothing is stored.
-o prints the ClusterSetBinding.`,
		Example: `  kubectl fleetjob bind team-a -n team-a
  kubectl fleetjob bind team-a -n team-a --dry-run=server
  kubectl fleetjob bind team-a -n team-a --dry-run=client -o yaml`,
		Args:              exactlyOne("SET", "the cluster set name"),
		ValidArgsFunction: completeClusterSets(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := b.validate(args[0]); err != nil {
				return err
			}
			ns, err := b.namespace()
			if err != nil {
				return err
			}
			binding := clusterSetBinding(ns, args[0])
			if b.dryRun == dryRunClient {
				return b.report(binding, "created", "its ClusterJobs may select the clusters of cluster set "+binding.Spec.ClusterSet)
			}
			return b.bind(cmd.Context(), binding)
		},
	}
	addDryRunFlag(cmd, &b.dryRunFlag, "print the ClusterSetBinding that would be created, asking the hub nothing")
	b.out.addFlags(cmd)
	return cmd
}

// newUnbind is `unbind`: deletes that binding.
func newUnbind(o *options) *cobra.Command {
	b := &bindOptions{options: o, out: newObjectOutputFlags()}
	cmd := &cobra.Command{
		Use:   "unbind SET [-n NAMESPACE] [--dry-run=client|server]",
		Short: "Unbind a cluster set from a namespace: delete its ClusterSetBinding",
		Long: `Delete the ClusterSetBinding SET in the namespace (-n, or the context's): the
ClusterJobs of that namespace may no longer select the clusters of cluster
set SET. Bindings are read when a run starts: runs started already keep
their clusters. A set that is not bound there is not an error.
--dry-run=client reads the binding and deletes nothing; --dry-run=server
sends the delete with dryRun=All.`,
		Example: `  kubectl fleetjob unbind team-a -n team-a
  kubectl fleetjob unbind team-a -n team-a --dry-run=server`,
		Args:              exactlyOne("SET", "the cluster set name"),
		ValidArgsFunction: completeBoundSets(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := hub.ValidateSetName("SET", args[0]); err != nil {
				return usage(err)
			}
			var err error
			if b.dryRun, err = parseDryRun(b.dryRunFlag, b.streams.ErrOut); err != nil {
				return err
			}
			ns, err := b.namespace()
			if err != nil {
				return err
			}
			return b.unbind(cmd.Context(), clusterSetBinding(ns, args[0]))
		},
	}
	addDryRunFlag(cmd, &b.dryRunFlag, "read the ClusterSetBinding and delete nothing")
	return cmd
}

func (b *bindOptions) validate(set string) error {
	if err := hub.ValidateSetName("SET", set); err != nil {
		return usage(err)
	}
	var err error
	if b.dryRun, err = parseDryRun(b.dryRunFlag, b.streams.ErrOut); err != nil {
		return err
	}
	return b.out.validate()
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

// report prints binding with -o, else a line: what was done to it, and
// what that means, marked as a dry run if it was one.
func (b *bindOptions) report(binding *fleetv1.ClusterSetBinding, done, means string) error {
	if !b.out.human() {
		binding.SetGroupVersionKind(fleetv1.GroupVersion.WithKind("ClusterSetBinding"))
		return b.out.printObject(binding, b.streams.Out)
	}
	_, err := fmt.Fprintf(b.streams.Out, "clustersetbinding.fleetjob.io/%s %s in namespace %s: %s%s\n", binding.Name, done, binding.Namespace, means, b.dryRun.suffix())
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
	err = c.Create(ctx, binding, &client.CreateOptions{DryRun: b.dryRun.options()})
	switch {
	case apierrors.IsAlreadyExists(err):
		if !b.out.human() {
			if err := c.Get(ctx, client.ObjectKeyFromObject(binding), binding); err != nil {
				return fmt.Errorf("reading clustersetbinding %s/%s on the hub: %w", ns, set, err)
			}
		}
		return b.report(binding, "already exists", "cluster set "+set+" is bound there, nothing changed")
	case apierrors.IsForbidden(err):
		return fmt.Errorf("binding cluster set %s to namespace %s needs the %s verb on clustersets/%s in group %s: ask a platform admin (the hub said: %w)",
			set, ns, fleetv1.BindVerb, set, fleetv1.GroupVersion.Group, err)
	case err != nil:
		return fmt.Errorf("creating clustersetbinding %s/%s on the hub: %w", ns, set, err)
	}
	return b.report(binding, "created", "its ClusterJobs may select the clusters of cluster set "+set)
}

// unbind deletes the binding within hubTimeout; one that does not exist
// is unbound already. A client dry run reads it.
func (b *bindOptions) unbind(ctx context.Context, binding *fleetv1.ClusterSetBinding) error {
	c, err := b.hubClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	set, ns := binding.Spec.ClusterSet, binding.Namespace
	if b.dryRun == dryRunClient {
		err = c.Get(ctx, client.ObjectKeyFromObject(binding), &fleetv1.ClusterSetBinding{})
	} else {
		err = c.Delete(ctx, binding, &client.DeleteOptions{DryRun: b.dryRun.options()})
	}
	switch {
	case apierrors.IsNotFound(err):
		_, err = fmt.Fprintf(b.streams.Out, "cluster set %s is not bound to namespace %s: there is no clustersetbinding %s/%s on the hub, nothing changed%s\n", set, ns, ns, set, b.dryRun.suffix())
		return err
	case err != nil:
		return fmt.Errorf("deleting clustersetbinding %s/%s on the hub: %w", ns, set, err)
	}
	_, err = fmt.Fprintf(b.streams.Out, "clustersetbinding.fleetjob.io/%s deleted from namespace %s: its new runs may no longer select the clusters of cluster set %s (started runs keep theirs)%s\n", set, ns, set, b.dryRun.suffix())
	return err
}
