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
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/spoke"
)

// maxLogRead bounds reading a pod's logs without --follow: long enough
// for the largest log a kubelet keeps, short of a hung connection.
const maxLogRead = 5 * time.Minute

type logsOptions struct {
	*options
	member    memberFlags
	cluster   string
	node      string
	container string
	follow    bool
	previous  bool
	tail      int64
}

func newLogs(o *options) *cobra.Command {
	l := &logsOptions{options: o}
	cmd := &cobra.Command{
		Use:   "logs NAME --cluster CLUSTER --node NODE --member-context CTX [-f] [--previous]",
		Short: "Print the logs of a ClusterJob's pod on one node of one cluster",
		Long: `Print the logs of the pod a ClusterJob ran on one node of a member cluster.
The logs are read with your own credentials for the member (--member-context,
--member-kubeconfig), not the hub's: the identity the hub stores may not read
logs. The work namespace comes from the cluster's MemberCluster on the hub
(get on memberclusters): no registration Secret is read.`,
		Example: `  kubectl fleetjob logs clean-disks --cluster eu-1 --node node-7 --member-context kind-eu-1
  kubectl fleetjob logs clean-disks --cluster eu-1 --node node-7 --member-context kind-eu-1 -f`,
		Args:              exactlyOne("NAME", "the ClusterJob name"),
		ValidArgsFunction: completeClusterJobs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if l.cluster == "" || l.node == "" {
				return usage(errors.New("--cluster and --node are required: the member cluster and the node whose pod to read"))
			}
			return l.run(cmd.Context(), args[0])
		},
	}
	flags := cmd.Flags()
	l.member.addFlags(flags)
	flags.StringVar(&l.cluster, "cluster", "", "Member cluster (its registration name)")
	_ = cmd.RegisterFlagCompletionFunc("cluster", completeRunClusters(o))
	flags.StringVar(&l.node, "node", "", "Node whose pod to read")
	flags.StringVarP(&l.container, "container", "c", "", "Container (default: the pod's only or first container)")
	flags.BoolVarP(&l.follow, "follow", "f", false, "Stream the logs until the pod's container ends")
	flags.BoolVarP(&l.previous, "previous", "p", false, "The logs of the container's previous instance")
	flags.Int64Var(&l.tail, "tail", -1, "Lines from the end to show (-1: all)")
	return cmd
}

func (l *logsOptions) run(ctx context.Context, name string) error {
	c, err := l.hubClient()
	if err != nil {
		return err
	}
	lookup, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	cj, err := l.getClusterJob(lookup, c, name)
	if err != nil {
		return err
	}
	ns, err := workNamespace(lookup, c, l.cluster)
	if err != nil {
		return err
	}
	cfg, _, err := l.member.restConfig(l.options)
	if err != nil {
		return err
	}
	mcs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	opts := &corev1.PodLogOptions{Container: l.container, Follow: l.follow, Previous: l.previous}
	if l.tail >= 0 {
		opts.TailLines = &l.tail
	}
	return nodeLogs(ctx, mcs, ns, cj, l.cluster, l.node, opts, l.streams.Out)
}

// workNamespace is the member namespace where the hub runs Jobs in
// cluster, as its MemberCluster on the hub says.
func workNamespace(ctx context.Context, c client.Reader, cluster string) (string, error) {
	m := &fleetv1.MemberCluster{}
	err := c.Get(ctx, client.ObjectKey{Name: cluster}, m)
	switch {
	case apierrors.IsNotFound(err):
		return "", explain(err, "cluster %s is not registered on the hub (see kubectl fleetjob clusters)", cluster)
	case err != nil:
		return "", fmt.Errorf("reading membercluster %s on the hub: %w", cluster, err)
	case m.Status.WorkNamespace == "":
		return "", fmt.Errorf("membercluster %s has no work namespace yet: the hub has not read its registration", cluster)
	}
	return m.Status.WorkNamespace, nil
}

// nodeLogs copies to out the logs of the newest pod cj's run in cluster
// created on node, in the work namespace ns.
func nodeLogs(ctx context.Context, cs kubernetes.Interface, ns string, cj *fleetv1.ClusterJob, cluster, node string, opts *corev1.PodLogOptions, out io.Writer) error {
	selector := labels.SelectorFromSet(labels.Set{
		fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID)),
		fleetv1.ClusterLabel:       naming.LabelValue(cluster),
		fleetv1.NodeLabel:          naming.LabelValue(node),
	})
	lookup, cancel := context.WithTimeout(ctx, memberReadTimeout)
	defer cancel()
	pods, err := cs.CoreV1().Pods(ns).List(lookup, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return fmt.Errorf("listing the pods of clusterjob %s/%s in cluster %s, namespace %s: %w", cj.Namespace, cj.Name, cluster, ns, err)
	}
	newest, ok := spoke.NewestPod(pods.Items, node)
	if !ok {
		return fmt.Errorf("no pod of clusterjob %s/%s on node %s in cluster %s (namespace %s): its group has not started there, or the pod is gone (see kubectl fleetjob status %s --nodes --cluster %s)",
			cj.Namespace, cj.Name, node, cluster, ns, cj.Name, cluster)
	}
	// Following ends with the container or the user; a plain read of the
	// logs so far is bounded.
	if !opts.Follow {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, maxLogRead)
		defer cancel()
	}
	stream, err := cs.CoreV1().Pods(ns).GetLogs(newest.Name, opts).Stream(ctx)
	if err != nil {
		return fmt.Errorf("reading the logs of pod %s/%s in cluster %s: %w", ns, newest.Name, cluster, err)
	}
	defer func() { _ = stream.Close() }()
	if _, err := io.Copy(out, stream); err != nil {
		return fmt.Errorf("reading the logs of pod %s/%s in cluster %s: %w", ns, newest.Name, cluster, err)
	}
	return nil
}
