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
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
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

// memberReadTimeout bounds a read in a member cluster with the user's own
// credentials (logs).
const memberReadTimeout = 30 * time.Second

// clusterResults is a run's plan and node results in one cluster, as the
// hub published them on its MemberRun.
type clusterResults struct {
	cluster string
	doc     noderesults.Document
}

// runResults reads the node results the hub published for cj in each of
// clusters, from cj's MemberRuns on the hub: no credential for any member
// is needed. It returns those it read, in the order of clusters, and one
// error naming every cluster it could not.
func runResults(ctx context.Context, c client.Reader, cj *fleetv1.ClusterJob, clusters []string) ([]clusterResults, error) {
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	list := &fleetv1.MemberRunList{}
	if err := c.List(ctx, list, client.InNamespace(cj.Namespace),
		client.MatchingLabels{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID))}); err != nil {
		return nil, fmt.Errorf("listing the memberruns of clusterjob %s/%s on the hub: %w", cj.Namespace, cj.Name, err)
	}
	runs := map[string]*fleetv1.MemberRun{}
	for i := range list.Items {
		if mr := &list.Items[i]; mr.Spec.ClusterJobUID == string(cj.UID) {
			runs[mr.Spec.Cluster] = mr
		}
	}
	var out []clusterResults
	var errs []error
	for _, cluster := range clusters {
		mr, ok := runs[cluster]
		var published *fleetv1.NodeResults
		if ok {
			published = mr.Status.NodeResults
		}
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("cluster %s is not in the run of clusterjob %s/%s (no memberrun)", cluster, cj.Namespace, cj.Name))
			continue
		case published == nil:
			errs = append(errs, fmt.Errorf("cluster %s has no node results of clusterjob %s/%s yet: the run has not started there (%s)",
				cluster, cj.Namespace, cj.Name, orPhase(mr)))
			continue
		case len(published.Data) == 0:
			errs = append(errs, fmt.Errorf("cluster %s: the hub could not publish its node results: %s", cluster, published.Message))
			continue
		}
		doc, err := noderesults.Decode(published.Data)
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: memberrun %s/%s: %w", cluster, mr.Namespace, mr.Name, err))
			continue
		}
		out = append(out, clusterResults{cluster: cluster, doc: doc})
	}
	return out, errors.Join(errs...)
}

// orPhase says where a MemberRun without results is.
func orPhase(mr *fleetv1.MemberRun) string {
	switch {
	case mr.Status.Reason != "":
		return fmt.Sprintf("%s: %s", mr.Status.Reason, mr.Status.Message)
	case mr.Status.Phase != "":
		return string(mr.Status.Phase)
	}
	return "not yet reconciled"
}
