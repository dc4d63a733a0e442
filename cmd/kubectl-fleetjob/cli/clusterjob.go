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
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/hub"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/spoke"
)

// getClusterJob reads ClusterJob name from the hub, in the -n namespace.
func (o *options) getClusterJob(ctx context.Context, c client.Reader, name string) (*fleetv1.ClusterJob, error) {
	ns, err := o.namespace()
	if err != nil {
		return nil, err
	}
	cj := &fleetv1.ClusterJob{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cj)
	if apierrors.IsNotFound(err) {
		return nil, explain(err, "clusterjob %s/%s not found on the hub (see kubectl get clusterjobs -n %s)", ns, name, ns)
	}
	if err != nil {
		return nil, fmt.Errorf("reading clusterjob %s/%s on the hub: %w", ns, name, err)
	}
	return cj, nil
}

// withRows fills cj's status.clusters with its clusters' rows, read from its
// MemberRuns, where the hub keeps them; a ClusterJob whose status was
// written by a hub older than MemberRuns carries its rows itself. A
// MemberRun the hub has not written yet shows as its cluster's name.
func withRows(ctx context.Context, c client.Reader, cj *fleetv1.ClusterJob) error {
	if len(cj.Status.Clusters) > 0 {
		return nil
	}
	list := &fleetv1.MemberRunList{}
	if err := c.List(ctx, list, client.InNamespace(cj.Namespace),
		client.MatchingLabels{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID))}); err != nil {
		return fmt.Errorf("listing the memberruns of clusterjob %s/%s on the hub: %w", cj.Namespace, cj.Name, err)
	}
	for i := range list.Items {
		mr := &list.Items[i]
		if mr.Spec.ClusterJobUID != string(cj.UID) {
			continue
		}
		row := mr.Status.Row()
		row.Name = mr.Spec.Cluster
		cj.Status.Clusters = append(cj.Status.Clusters, row)
	}
	slices.SortFunc(cj.Status.Clusters, func(a, b fleetv1.ClusterStatus) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// pickClusters is --cluster, or every cluster of the run, by name.
func pickClusters(cj *fleetv1.ClusterJob, clusters []string) ([]string, error) {
	if len(clusters) > 0 {
		return slices.Compact(slices.Sorted(slices.Values(clusters))), nil
	}
	names := make([]string, len(cj.Status.Clusters))
	for i, c := range cj.Status.Clusters {
		names[i] = c.Name
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("clusterjob %s/%s has no cluster yet: its run has not started", cj.Namespace, cj.Name)
	}
	return names, nil
}

// Reading many members: a bounded number at once, each within a deadline,
// so that one slow member neither holds the others nor the command.
const (
	memberReads       = 8
	memberReadTimeout = 30 * time.Second
)

// fromMembers runs read in each of clusters, with the run there, and
// returns the results in the order of clusters and one error naming every
// cluster that failed (nil when none did).
func fromMembers[T any](ctx context.Context, o *options, cj *fleetv1.ClusterJob, clusters []string,
	read func(ctx context.Context, c client.Reader, run spoke.Run) (T, error)) ([]T, []bool, error) {
	out, ok := make([]T, len(clusters)), make([]bool, len(clusters))
	errs := make([]error, len(clusters))
	workqueue.ParallelizeUntil(ctx, memberReads, len(clusters), func(i int) {
		ctx, cancel := context.WithTimeout(ctx, memberReadTimeout)
		defer cancel()
		mc, reg, err := o.memberClient(ctx, clusters[i])
		if err == nil {
			out[i], err = read(ctx, mc, spoke.Run{ClusterJob: cj, Cluster: clusters[i], Namespace: reg.Namespace})
		}
		if err != nil {
			errs[i] = fmt.Errorf("cluster %s: %w", clusters[i], err)
			return
		}
		ok[i] = true
	})
	if err := ctx.Err(); err != nil {
		return out, ok, err
	}
	return out, ok, errors.Join(errs...)
}

// memberClient connects to a member with its registered credentials.
func (o *options) memberClient(ctx context.Context, cluster string) (client.Client, hub.Registration, error) {
	cs, err := o.hubClientset()
	if err != nil {
		return nil, hub.Registration{}, err
	}
	reg, err := hub.Get(ctx, cs, o.registrationNamespace, cluster)
	if err != nil {
		return nil, reg, err
	}
	cfg, err := hub.RESTConfig(reg)
	if err != nil {
		return nil, reg, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	return c, reg, err
}
