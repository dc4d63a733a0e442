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
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
	"github.com/fleetjob/fleetjob/spoke"
)

type statusOptions struct {
	*options
	name     string
	watch    bool
	nodes    bool
	failed   bool
	clusters []string
	output   string
}

func newStatus(o *options) *cobra.Command {
	s := &statusOptions{options: o}
	cmd := &cobra.Command{
		Use:   "status NAME [-w] [--nodes [--failed] [--cluster CLUSTER]...]",
		Short: "Show a ClusterJob run: one line per cluster, or per node",
		Long: `Show a ClusterJob run with one line per member cluster: phase, progress bars
of its groups and nodes (# succeeded, x failed, - skipped, > running,
. pending), failed nodes, reachability and the reason of its state.

With -w, redraw on every change of the ClusterJob until the run ends; the
command then exits non-zero if the run Failed, so scripts and CI can wait on
it. With --nodes, list the per-node results of every cluster of the run
(--cluster, repeatable, narrows; --failed keeps the failed nodes), read from
the members, a few at once, with the credentials the hub stores; a cluster
that cannot be read is named, and the command exits non-zero after showing
the others.`,
		Example: `  kubectl fleetjob status clean-disks
  kubectl fleetjob status clean-disks -w
  kubectl fleetjob status clean-disks --nodes --failed
  kubectl fleetjob status clean-disks --nodes --cluster eu-1 -o json`,
		Args: exactlyOne("NAME", "the ClusterJob name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s.name = args[0]
			if err := s.validate(); err != nil {
				return err
			}
			return s.run(cmd.Context())
		},
	}
	flags := cmd.Flags()
	flags.BoolVarP(&s.watch, "watch", "w", false, "Redraw until the run ends; exit non-zero if it Failed")
	flags.BoolVar(&s.nodes, "nodes", false, "List the per-node results, read from the members")
	flags.BoolVar(&s.failed, "failed", false, "With --nodes, list the failed nodes only")
	flags.StringSliceVar(&s.clusters, "cluster", nil, "With --nodes, a cluster to list (repeatable; default: every cluster of the run)")
	flags.StringVarP(&s.output, "output", "o", "", "Output format: yaml or json")
	return cmd
}

func (s *statusOptions) validate() error {
	if s.watch && (s.nodes || s.output != "") {
		return errors.New("-w redraws the cluster table: it does not combine with --nodes or -o")
	}
	if (len(s.clusters) > 0 || s.failed) && !s.nodes {
		return errors.New("--cluster and --failed select what --nodes lists: add --nodes")
	}
	return checkOutput(s.output, "yaml", "json")
}

func (s *statusOptions) run(ctx context.Context) error {
	c, err := s.hubClient()
	if err != nil {
		return err
	}
	cj, err := s.getClusterJob(ctx, c, s.name)
	if err != nil {
		return err
	}
	if s.output == "" || s.nodes {
		if err := withRows(ctx, c, cj); err != nil {
			return err
		}
	}
	switch {
	case s.nodes:
		return s.showNodes(ctx, cj)
	case s.watch:
		return s.follow(ctx, c, cj)
	case s.output != "":
		// As kubectl get -o shows it: with its kind, without managedFields.
		cj.SetGroupVersionKind(fleetv1.GroupVersion.WithKind("ClusterJob"))
		cj.ManagedFields = nil
		return printData(s.streams.Out, s.output, cj)
	}
	_, err = fmt.Fprint(s.streams.Out, render.Status(cj, colour(s.streams.Out), time.Now()))
	return err
}

// follow redraws the status on every change of the ClusterJob, from a watch
// that relists when it expires, until the run ends.
func (s *statusOptions) follow(ctx context.Context, c client.WithWatch, cj *fleetv1.ClusterJob) error {
	palette := colour(s.streams.Out)
	// Redraw in place on any terminal that moves its cursor, with or
	// without colour (NO_COLOR).
	inPlace := printers.IsTerminal(s.streams.Out) && os.Getenv("TERM") != "dumb"
	d := render.NewRedrawer(s.streams.Out, inPlace, terminalColumns(s.streams.Out))
	lw := clusterJobListWatch(c, cj.Namespace, cj.Name)
	var last *fleetv1.ClusterJob
	_, err := watchtools.UntilWithSync(ctx, lw, &fleetv1.ClusterJob{}, exists(cj), func(ev watch.Event) (bool, error) {
		if ev.Type == watch.Deleted {
			return false, fmt.Errorf("clusterjob %s/%s was deleted", cj.Namespace, cj.Name)
		}
		got, ok := ev.Object.(*fleetv1.ClusterJob)
		if !ok {
			return false, nil
		}
		if err := withRows(ctx, c, got); err != nil {
			return false, err
		}
		last = got
		d.Draw(render.Status(got, palette, time.Now()))
		return got.Status.Phase.IsFinished(), nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("stopped following clusterjob %s/%s: %w", cj.Namespace, cj.Name, ctx.Err())
		}
		return err
	}
	if last != nil && last.Status.Phase == fleetv1.PhaseFailed {
		return &RunFailedError{Namespace: cj.Namespace, Name: cj.Name, Message: failedMessage(last)}
	}
	return nil
}

// RunFailedError is returned by status -w when the run ended Failed.
type RunFailedError struct{ Namespace, Name, Message string }

func (e *RunFailedError) Error() string {
	msg := fmt.Sprintf("clusterjob %s/%s Failed", e.Namespace, e.Name)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
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

// terminalColumns reads the width of the terminal w, 0 when w is not one.
func terminalColumns(w io.Writer) func() int {
	return func() int {
		fd, ok := term.GetFdInfo(w)
		if !ok {
			return 0
		}
		size, err := term.GetWinsize(fd)
		if err != nil {
			return 0
		}
		return int(size.Width)
	}
}

// nodeResult is one node's result for -o yaml|json.
type nodeResult struct {
	Cluster    string       `json:"cluster"`
	Node       string       `json:"node"`
	Group      string       `json:"group"`
	GroupIndex int          `json:"groupIndex"`
	Job        string       `json:"job,omitempty"`
	Phase      string       `json:"phase"`
	Reason     string       `json:"reason,omitempty"`
	Message    string       `json:"message,omitempty"`
	ExitCode   *int32       `json:"exitCode,omitempty"`
	Output     string       `json:"output,omitempty"`
	StartTime  *metav1.Time `json:"startTime,omitempty"`
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
}

func (s *statusOptions) showNodes(ctx context.Context, cj *fleetv1.ClusterJob) error {
	clusters, err := pickClusters(cj, s.clusters)
	if err != nil {
		return err
	}
	states, ok, readErr := fromMembers(ctx, s.options, cj, clusters, func(ctx context.Context, mc client.Reader, run spoke.Run) (spoke.State, error) {
		st, err := spoke.Observe(ctx, mc, nil, run)
		if err == nil && !st.Planned {
			err = fmt.Errorf("cluster %q has no plan for clusterjob %s/%s in namespace %s: the run has not started there", run.Cluster, cj.Namespace, cj.Name, run.Namespace)
		}
		return st, err
	})
	var read []render.ClusterNodes
	for i, st := range states {
		if ok[i] {
			read = append(read, render.ClusterNodes{Cluster: clusters[i], State: st})
		}
	}
	if len(read) == 0 {
		return readErr
	}
	if s.output != "" {
		out := []nodeResult{}
		for _, c := range read {
			for _, n := range c.State.Nodes {
				if s.failed && n.Phase != spoke.NodeFailed {
					continue
				}
				out = append(out, nodeResult{Cluster: c.Cluster, Node: n.Node, Group: n.GroupName, GroupIndex: n.Group, Job: n.Job, Phase: string(n.Phase),
					Reason: n.Reason, Message: n.Message, ExitCode: n.ExitCode, Output: n.Output, StartTime: n.StartTime, FinishTime: n.CompletionTime})
			}
		}
		if err := printData(s.streams.Out, s.output, out); err != nil {
			return err
		}
		return readErr
	}
	if _, err := fmt.Fprint(s.streams.Out, render.Nodes(read, s.failed, colour(s.streams.Out))); err != nil {
		return err
	}
	return readErr
}
