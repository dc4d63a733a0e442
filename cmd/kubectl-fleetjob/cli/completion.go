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
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
)

// completionTimeout bounds what a completion asks the hub: a TAB that
// hangs on a hub that does not answer is worse than no suggestion, and a
// healthy hub lists a namespace's objects well within it.
const completionTimeout = 5 * time.Second

// noFiles completes nothing, and no file names either.
const noFiles = cobra.ShellCompDirectiveNoFileComp

// completeFirst completes the first argument with what list returns,
// filtered by what has been typed; later arguments get nothing. An error
// of the hub suggests nothing rather than failing the shell's completion.
func completeFirst(list func(ctx context.Context) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, noFiles
		}
		return completeWith(cmd, list, toComplete)
	}
}

func completeWith(cmd *cobra.Command, list func(ctx context.Context) ([]string, error), toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	names, err := list(ctx)
	if err != nil {
		cobra.CompDebugln("listing completions on the hub: "+err.Error(), false)
		return nil, noFiles
	}
	var out []cobra.Completion
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, noFiles
}

// completeClusterJobs completes a ClusterJob name of the namespace.
func completeClusterJobs(o *options) cobra.CompletionFunc {
	return completeFirst(o.clusterJobNames)
}

func (o *options) clusterJobNames(ctx context.Context) ([]string, error) {
	c, err := o.hubClient()
	if err != nil {
		return nil, err
	}
	ns, err := o.namespace()
	if err != nil {
		return nil, err
	}
	list := &fleetv1.ClusterJobList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	names := make([]string, len(list.Items))
	for i, cj := range list.Items {
		names[i] = cj.Name
	}
	return names, nil
}

// completeRunClusters completes --cluster with the clusters of the run
// named by the first argument, as its MemberRuns list them: no
// registration Secret is read.
func completeRunClusters(o *options) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, noFiles
		}
		return completeWith(cmd, func(ctx context.Context) ([]string, error) {
			c, err := o.hubClient()
			if err != nil {
				return nil, err
			}
			cj, err := o.getClusterJob(ctx, c, args[0])
			if err != nil {
				return nil, err
			}
			if err := withRows(ctx, c, cj); err != nil {
				return nil, err
			}
			names := make([]string, len(cj.Status.Clusters))
			for i, r := range cj.Status.Clusters {
				names[i] = r.Name
			}
			return names, nil
		}, toComplete)
	}
}

// completeClusterSets completes a cluster set: each ClusterSet, and the
// set default, which has none until someone creates it.
func completeClusterSets(o *options) cobra.CompletionFunc {
	return completeFirst(func(ctx context.Context) ([]string, error) {
		c, err := o.hubClient()
		if err != nil {
			return nil, err
		}
		list := &fleetv1.ClusterSetList{}
		if err := c.List(ctx, list); err != nil {
			return nil, err
		}
		names := []string{fleetv1.DefaultClusterSet}
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		return names, nil
	})
}

// completeBoundSets completes a cluster set bound to the namespace.
func completeBoundSets(o *options) cobra.CompletionFunc {
	return completeFirst(func(ctx context.Context) ([]string, error) {
		c, err := o.hubClient()
		if err != nil {
			return nil, err
		}
		ns, err := o.namespace()
		if err != nil {
			return nil, err
		}
		list := &fleetv1.ClusterSetBindingList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		names := make([]string, len(list.Items))
		for i, b := range list.Items {
			names[i] = b.Spec.ClusterSet
		}
		return names, nil
	})
}

// completeRegistrations completes a registered cluster with the names of
// the MemberClusters the hub publishes, one per registration: no
// registration Secret (a member's token) is read to suggest a name.
func completeRegistrations(o *options) cobra.CompletionFunc {
	return completeFirst(func(ctx context.Context) ([]string, error) {
		c, err := o.hubClient()
		if err != nil {
			return nil, err
		}
		members, err := hub.ListMemberClusters(ctx, c, labels.Everything())
		if err != nil {
			return nil, err
		}
		names := make([]string, len(members))
		for i, m := range members {
			names[i] = m.Name
		}
		return names, nil
	})
}

// registerFlagCompletions completes the kubeconfig flags every command
// has, as kubectl does: -n with the hub's namespaces, --context with the
// kubeconfig's contexts.
func registerFlagCompletions(root *cobra.Command, o *options) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeWith(cmd, func(ctx context.Context) ([]string, error) {
			cs, err := o.hubClientset()
			if err != nil {
				return nil, err
			}
			list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			return namespaceNames(list.Items), nil
		}, toComplete)
	})
	_ = root.RegisterFlagCompletionFunc("context", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeWith(cmd, func(context.Context) ([]string, error) {
			raw, err := o.config.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, err
			}
			var names []string
			for name := range raw.Contexts {
				names = append(names, name)
			}
			return names, nil
		}, toComplete)
	})
}

func namespaceNames(items []corev1.Namespace) []string {
	names := make([]string, len(items))
	for i, ns := range items {
		names[i] = ns.Name
	}
	return names
}
