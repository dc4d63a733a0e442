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
	"io"
	"os"
	"time"

	"github.com/moby/term"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/output"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/spoke"
)

type statusOptions struct {
	*options
	name     string
	watch    bool
	timeout  time.Duration
	nodes    bool
	failed   bool
	clusters []string
	out      *outputFlags
}

func newStatus(o *options) *cobra.Command {
	s := &statusOptions{options: o, out: newOutputFlags(true)}
	cmd := &cobra.Command{
		Use:   "status NAME [-w [--timeout DURATION]] [--nodes [--failed] [--cluster CLUSTER]...]",
		Short: "Show a ClusterJob run: one line per cluster, or per node",
		Long: `Show a ClusterJob run with one line per member cluster: phase, progress bars
of its groups and nodes (# succeeded, x failed, - skipped, > running,
. pending), failed nodes, reachability and the reason of its state; -o wide
adds the current group and the cluster ID, --no-headers leaves the clusters'
lines only. -o json|yaml|name|jsonpath|go-template|custom-columns print the
ClusterJob as the hub holds it.

With -w, redraw on every change of the ClusterJob until the run ends, or
--timeout passes. On a terminal the table is redrawn in place, cut to fit
the screen; elsewhere (a CI log, a pipe) the lines that changed are
appended, and nothing when nothing did.

With --nodes, list the per-node results of every cluster of the run
(--cluster, repeatable, narrows; --failed keeps the failed nodes), as the
hub publishes them on the run's MemberRuns (refreshed when they change, at
most every 5 s while a cluster runs): read access to memberruns
is all it needs. -o prints a List of NodeResult (cli.fleetjob.io/v1alpha1,
named CLUSTER/NODE). A cluster whose results are not there is named, and
the command exits non-zero after showing the others.

` + exitCodesHelp,
		Example: `  kubectl fleetjob status clean-disks
  kubectl fleetjob status clean-disks -w --timeout 30m
  kubectl fleetjob status clean-disks -o jsonpath='{.status.phase}'
  kubectl fleetjob status clean-disks --no-headers
  kubectl fleetjob status clean-disks --nodes --failed
  kubectl fleetjob status clean-disks --nodes -o custom-columns=NODE:.node,EXIT:.exitCode`,
		Args:              exactlyOne("NAME", "the ClusterJob name"),
		ValidArgsFunction: completeClusterJobs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			s.name = args[0]
			if err := s.validate(); err != nil {
				return err
			}
			return s.run(cmd.Context())
		},
	}
	flags := cmd.Flags()
	flags.BoolVarP(&s.watch, "watch", "w", false, "Redraw until the run ends; exit 1 if it Failed")
	flags.DurationVar(&s.timeout, "timeout", 0, "With -w, how long to wait for the run to end (0: no limit); exit 4 when it passes")
	flags.BoolVar(&s.nodes, "nodes", false, "List the per-node results the hub published on the run's MemberRuns")
	flags.BoolVar(&s.failed, "failed", false, "With --nodes, list the failed nodes only")
	flags.StringSliceVar(&s.clusters, "cluster", nil, "With --nodes, a cluster to list (repeatable; default: every cluster of the run)")
	_ = cmd.RegisterFlagCompletionFunc("cluster", completeRunClusters(o))
	s.out.addFlags(cmd)
	return cmd
}

func (s *statusOptions) validate() error {
	switch {
	case s.watch && s.nodes:
		return usagef("-w redraws the cluster table: it does not combine with --nodes")
	case s.watch && !s.out.human():
		return usagef("-w redraws the cluster table: it does not combine with -o %s (use -o wide, or leave -o out)", s.out.format())
	case s.timeout < 0:
		return usagef("--timeout %s is negative: use a duration such as 30m, or 0 for no limit", s.timeout)
	case s.timeout > 0 && !s.watch:
		return usagef("--timeout bounds how long -w waits: add -w")
	case (len(s.clusters) > 0 || s.failed) && !s.nodes:
		return usagef("--cluster and --failed select what --nodes lists: add --nodes")
	}
	return s.out.validate()
}

func (s *statusOptions) run(ctx context.Context) error {
	c, err := s.hubClient()
	if err != nil {
		return err
	}
	cj, err := s.read(ctx, c)
	if err != nil {
		return err
	}
	switch {
	case s.nodes:
		return s.showNodes(ctx, c, cj)
	case s.watch:
		return s.follow(ctx, c, cj)
	case !s.out.human():
		// As kubectl get -o shows it: with its kind, without managedFields.
		cj.SetGroupVersionKind(fleetv1.GroupVersion.WithKind("ClusterJob"))
		return s.out.printObject(cj, s.streams.Out)
	}
	_, err = fmt.Fprint(s.streams.Out, render.Status(cj, s.out.options(s.streams.Out), time.Now()))
	return err
}

// read reads the ClusterJob, with its clusters' rows for a table or
// --nodes, within hubTimeout.
func (s *statusOptions) read(ctx context.Context, c client.Reader) (*fleetv1.ClusterJob, error) {
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	cj, err := s.getClusterJob(ctx, c, s.name)
	if err != nil {
		return nil, err
	}
	if s.out.human() || s.nodes {
		if err := withRows(ctx, c, cj); err != nil {
			return nil, err
		}
	}
	return cj, nil
}

// follow redraws the status on every change of the ClusterJob, from a watch
// that relists when it expires, until the run ends or s.timeout passes.
func (s *statusOptions) follow(ctx context.Context, c client.WithWatch, cj *fleetv1.ClusterJob) error {
	opts := s.out.options(s.streams.Out)
	// Redraw in place on any terminal that moves its cursor, with or
	// without colour (NO_COLOR).
	inPlace := printers.IsTerminal(s.streams.Out) && os.Getenv("TERM") != "dumb"
	d := render.NewRedrawer(s.streams.Out, inPlace, terminalSize(s.streams.Out))
	waitCtx, cancel := ctx, context.CancelFunc(func() {})
	if s.timeout > 0 {
		waitCtx, cancel = context.WithTimeout(ctx, s.timeout)
	}
	defer cancel()
	lw := clusterJobListWatch(c, cj.Namespace, cj.Name)
	last := cj
	_, err := watchtools.UntilWithSync(waitCtx, lw, &fleetv1.ClusterJob{}, exists(cj), func(ev watch.Event) (bool, error) {
		if ev.Type == watch.Deleted {
			return false, fmt.Errorf("clusterjob %s/%s was deleted", cj.Namespace, cj.Name)
		}
		got, ok := ev.Object.(*fleetv1.ClusterJob)
		if !ok {
			return false, nil
		}
		if err := rowsWithin(waitCtx, c, got); err != nil {
			return false, err
		}
		last = got
		d.Draw(render.Status(got, opts, time.Now()))
		return got.Status.Phase.IsFinished(), nil
	})
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("stopped following clusterjob %s/%s: %w", cj.Namespace, cj.Name, ctx.Err())
	case err != nil && waitCtx.Err() != nil:
		return &WaitTimeoutError{Namespace: cj.Namespace, Name: cj.Name, Timeout: s.timeout, Phase: last.Status.Phase}
	case err != nil:
		return err
	case last.Status.Phase == fleetv1.PhaseFailed:
		return &RunFailedError{Namespace: cj.Namespace, Name: cj.Name, Message: failedMessage(last)}
	}
	return nil
}

// rowsWithin is withRows bounded by hubTimeout.
func rowsWithin(ctx context.Context, c client.Reader, cj *fleetv1.ClusterJob) error {
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	return withRows(ctx, c, cj)
}

func failedMessage(cj *fleetv1.ClusterJob) string {
	if c := meta.FindStatusCondition(cj.Status.Conditions, fleetv1.ConditionFailed); c != nil {
		return render.Escape(c.Message)
	}
	return ""
}

// exists fails the watch when the ClusterJob is gone by the time it synced.
func exists(cj *fleetv1.ClusterJob) watchtools.PreconditionFunc {
	return func(store cache.Store) (bool, error) {
		if _, found, err := store.Get(cj); err != nil || !found {
			return false, fmt.Errorf("clusterjob %s/%s was deleted", cj.Namespace, cj.Name)
		}
		return false, nil
	}
}

// clusterJobListWatch lists and watches the one ClusterJob, by name.
func clusterJobListWatch(c client.WithWatch, namespace, name string) cache.ListerWatcher {
	byName := func(opts metav1.ListOptions) *client.ListOptions {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		return &client.ListOptions{Namespace: namespace, Raw: &opts}
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list := &fleetv1.ClusterJobList{}
			return list, c.List(ctx, list, byName(opts))
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &fleetv1.ClusterJobList{}, byName(opts))
		},
	}
}

// terminalSize reads the width and height of the terminal w, 0 when w is
// not one.
func terminalSize(w io.Writer) func() (int, int) {
	return func() (int, int) {
		fd, ok := term.GetFdInfo(w)
		if !ok {
			return 0, 0
		}
		size, err := term.GetWinsize(fd)
		if err != nil {
			return 0, 0
		}
		return int(size.Width), int(size.Height)
	}
}

func (s *statusOptions) showNodes(ctx context.Context, c client.Reader, cj *fleetv1.ClusterJob) error {
	clusters, err := pickClusters(cj, s.clusters)
	if err != nil {
		return err
	}
	results, readErr := runResults(ctx, c, cj, clusters)
	read := make([]render.ClusterNodes, len(results))
	for i, r := range results {
		read[i] = render.ClusterNodes{Cluster: r.cluster, State: nodeStates(cj, r)}
		if r.doc.Omitted > 0 {
			_, _ = fmt.Fprintf(s.streams.ErrOut, "cluster %s: %d succeeded or skipped nodes are not listed: the hub keeps at most %d KiB of node results per cluster\n",
				r.cluster, r.doc.Omitted, noderesults.MaxBytes>>10)
		}
	}
	if len(read) == 0 {
		return readErr
	}
	if !s.out.human() {
		if err := printList(s.out, nodeResults(read, s.failed), s.streams.Out); err != nil {
			return err
		}
		return readErr
	}
	if _, err := fmt.Fprint(s.streams.Out, render.Nodes(read, s.failed, s.out.options(s.streams.Out))); err != nil {
		return err
	}
	return readErr
}

// nodeStates are a cluster's published node results as node states, each
// running or finished node with the name of the Job the hub gave it.
func nodeStates(cj *fleetv1.ClusterJob, r clusterResults) spoke.State {
	st := spoke.State{Planned: true, Plan: r.doc.Plan, Nodes: make([]spoke.NodeState, len(r.doc.Nodes))}
	for i, n := range r.doc.Nodes {
		ns := spoke.NodeState{Node: n.Name, Group: n.Group, GroupName: r.doc.Plan.Groups[n.Group].Name, Phase: spoke.NodePhase(n.Phase),
			Reason: n.Reason, Message: n.Message, StartTime: unixTime(n.Start), CompletionTime: unixTime(n.Finish), ExitCode: n.ExitCode, Output: n.Output, Drain: n.Drain}
		if ns.Phase != spoke.NodePending && ns.Phase != spoke.NodeSkipped {
			ns.Job = naming.JobName(cj.Name, cj.UID, r.cluster, n.Name)
		}
		st.Nodes[i] = ns
	}
	return st
}

// unixTime is Unix seconds as a time, nil for 0 (unknown).
func unixTime(s int64) *metav1.Time {
	if s == 0 {
		return nil
	}
	t := metav1.Unix(s, 0)
	return &t
}

// nodeResults are the nodes of clusters as NodeResult objects, the failed
// ones only when failedOnly.
func nodeResults(clusters []render.ClusterNodes, failedOnly bool) []output.NodeResult {
	out := []output.NodeResult{}
	for _, c := range clusters {
		for _, n := range c.State.Nodes {
			if failedOnly && n.Phase != spoke.NodeFailed {
				continue
			}
			r := output.NewNodeResult(c.Cluster, n.Node)
			r.Group, r.GroupIndex, r.Job, r.Phase = n.GroupName, n.Group, n.Job, string(n.Phase)
			r.Reason, r.Message, r.ExitCode, r.Output = n.Reason, n.Message, n.ExitCode, n.Output
			r.StartTime, r.FinishTime = n.StartTime, n.CompletionTime
			out = append(out, r)
		}
	}
	return out
}
