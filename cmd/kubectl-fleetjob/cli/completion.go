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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
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

// completionLimit bounds a completion's list: no shell offers more
// suggestions than this usefully, and a hub with many more objects must
// not be read whole for a TAB.
const completionLimit = 500

// names lists the names of up to completionLimit objects of the list kind
// gvk, metadata only.
func names(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, opts ...client.ListOption) ([]string, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk)
	if err := c.List(ctx, list, append(opts, client.Limit(completionLimit))...); err != nil {
		return nil, err
	}
	out := make([]string, len(list.Items))
	for i, o := range list.Items {
		out[i] = o.Name
	}
	return out, nil
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
	return names(ctx, c, fleetv1.GroupVersion.WithKind("ClusterJobList"), client.InNamespace(ns))
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
			clusters := make([]string, len(cj.Status.Clusters))
			for i, r := range cj.Status.Clusters {
				clusters[i] = r.Name
			}
			return clusters, nil
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
		sets, err := names(ctx, c, fleetv1.GroupVersion.WithKind("ClusterSetList"))
		return append(sets, fleetv1.DefaultClusterSet), err
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
		// A binding is named for the set it binds (the API refuses another name).
		return names(ctx, c, fleetv1.GroupVersion.WithKind("ClusterSetBindingList"), client.InNamespace(ns))
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
		return names(ctx, c, fleetv1.GroupVersion.WithKind("MemberClusterList"))
	})
}

// registerFlagCompletions completes the kubeconfig flags every command
// has, as kubectl does: -n with the hub's namespaces, --context with the
// kubeconfig's contexts.
func registerFlagCompletions(root *cobra.Command, o *options) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeWith(cmd, func(ctx context.Context) ([]string, error) {
			c, err := o.hubClient()
			if err != nil {
				return nil, err
			}
			return names(ctx, c, corev1.SchemeGroupVersion.WithKind("NamespaceList"))
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
