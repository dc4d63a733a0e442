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
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
	"github.com/fleetjob/fleetjob/hub/fleet"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// hubTimeout bounds each step a command asks of the hub: what retry does
// before it follows the run (reading the parent, listing its MemberRuns,
// up to MaxClusters of them, and creating the retry); register's read of
// the set's ClusterSet, its namespace check and its Secret write, each on
// its own, as the member work between them may take longer; the lists of
// clustersets; bind's create and unbind's delete. Each takes well under a
// second on a healthy hub; 30s leaves room for a busy one, and past it the
// hub is down or overloaded, which the user learns instead of waiting on a
// hung command.
const hubTimeout = 30 * time.Second

// retryKinds are the values of --include, in the canonical order the
// retry's spec.retry.include lists them.
var retryKinds = []fleetv1.RetryInclude{fleetv1.RetryFailed, fleetv1.RetrySkipped, fleetv1.RetryUnreachable, fleetv1.RetryNotRun}

// maxNamedClusters is how many of the parent's clusters an unknown
// --cluster error lists: enough to spot a typo, few enough for one line.
const maxNamedClusters = 10

type retryOptions struct {
	*options
	include    []string
	clusters   []string
	name       string
	watch      bool
	timeout    time.Duration
	dryRunFlag string
	dryRun     dryRun
	out        *outputFlags
}

// newRetry is `retry`: a new ClusterJob that runs again the nodes of an
// ended run that did not succeed, which the hub plans from the parent's
// frozen plan and record.
func newRetry(o *options) *cobra.Command {
	r := &retryOptions{options: o, out: newObjectOutputFlags()}
	cmd := &cobra.Command{
		Use:   "retry NAME [--include KIND,...] [--cluster CLUSTER]... [--name NAME] [-w [--timeout DURATION]] [--dry-run=client|server] [-o FORMAT]",
		Short: "Run the failed nodes of an ended ClusterJob again, as a new ClusterJob",
		Long: `Create a ClusterJob that runs again nodes of an ended run (Completed or
Failed), group by group in the run's order, in the clusters where the run
planned them, with the same Job template: by default the nodes that
failed. --include (comma-separated, repeatable) chooses the kinds of node:
failed; skipped (left out as cordoned, NotReady or with an untolerated
taint); unreachable (no Job because the cluster could not be reached);
notrun (no Job because the run stopped first). --cluster (repeatable)
narrows the retry to some clusters of the run.

The new ClusterJob copies the run's spec without suspend, and without
the decision of spec.approval (the retry waits for its own), sets
spec.retryOf and spec.retry, and is named NAME-retry-<random>, or --name.
Before creating it, the command counts the nodes it will run in each
cluster, as the run's MemberRuns count them, and refuses when there are
none. -o prints the created ClusterJob (-o name its generated name). With
-w, follow the retry as status -w does, until it ends or --timeout passes.
--dry-run=client counts the nodes and creates nothing; --dry-run=server
sends the create with dryRun=All, so the hub's validation checks it.

` + exitCodesHelp,
		Example: `  kubectl fleetjob retry clean-disks
  kubectl fleetjob retry clean-disks --include failed,unreachable --cluster eu-1 -w --timeout 1h
  kubectl fleetjob retry clean-disks --name clean-disks-again
  kubectl fleetjob retry clean-disks --dry-run=server
  kubectl fleetjob status "$(kubectl fleetjob retry clean-disks -o jsonpath='{.metadata.name}')" -w`,
		Args:              exactlyOne("NAME", "the ClusterJob name"),
		ValidArgsFunction: completeClusterJobs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			include, err := r.validate(args[0])
			if err != nil {
				return err
			}
			return r.run(cmd.Context(), args[0], include)
		},
	}
	flags := cmd.Flags()
	flags.StringSliceVar(&r.include, "include", nil, "Kinds of node to run again: failed, skipped, unreachable, notrun (default: failed)")
	flags.StringSliceVar(&r.clusters, "cluster", nil, "A cluster of the run to retry in (repeatable; default: every cluster of the run)")
	flags.StringVar(&r.name, "name", "", "Name of the new ClusterJob (default: NAME-retry-<random>)")
	flags.BoolVarP(&r.watch, "watch", "w", false, "Follow the retry until it ends, as status -w; exit 1 if it Failed")
	flags.DurationVar(&r.timeout, "timeout", 0, "With -w, how long to wait for the retry to end (0: no limit); exit 4 when it passes")
	_ = cmd.RegisterFlagCompletionFunc("cluster", completeRunClusters(o))
	addDryRunFlag(cmd, &r.dryRunFlag, "count the nodes the retry would run and create nothing")
	r.out.addFlags(cmd)
	return cmd
}

// validate checks the flags before the hub is asked anything, and returns
// --include as spec.retry.include.
func (r *retryOptions) validate(parent string) ([]fleetv1.RetryInclude, error) {
	include, err := parseInclude(r.include)
	if err != nil {
		return nil, usage(err)
	}
	if err := checkRetryName(r.name, parent); err != nil {
		return nil, usage(err)
	}
	if r.dryRun, err = parseDryRun(r.dryRunFlag, r.streams.ErrOut); err != nil {
		return nil, err
	}
	switch {
	case r.watch && r.dryRun != dryRunNone:
		return nil, usagef("-w follows the retry it created: a dry run creates none")
	case r.watch && !r.out.human():
		return nil, usagef("-w follows the retry with a table: it does not combine with -o %s", r.out.format())
	case r.timeout < 0:
		return nil, usagef("--timeout %s is negative: use a duration such as 30m, or 0 for no limit", r.timeout)
	case r.timeout > 0 && !r.watch:
		return nil, usagef("--timeout bounds how long -w waits: add -w")
	}
	return include, r.out.validate()
}

// parseInclude maps --include onto spec.retry.include: nil when the flag
// is not given, so that the CRD's default applies, else once each in the
// canonical order, whatever the case and order the user typed.
func parseInclude(values []string) ([]fleetv1.RetryInclude, error) {
	if len(values) == 0 {
		return nil, nil
	}
	seen := map[fleetv1.RetryInclude]bool{}
	for _, v := range values {
		i := slices.IndexFunc(retryKinds, func(k fleetv1.RetryInclude) bool { return strings.EqualFold(string(k), strings.TrimSpace(v)) })
		if i < 0 {
			return nil, fmt.Errorf("--include %q is not a kind of node to retry: use failed, skipped, unreachable or notrun (comma-separated)", v)
		}
		seen[retryKinds[i]] = true
	}
	var out []fleetv1.RetryInclude
	for _, k := range retryKinds {
		if seen[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

// checkRetryName refuses a --name the API server would, before the hub is
// asked anything.
func checkRetryName(name, parent string) error {
	switch name {
	case "":
		return nil
	case parent:
		return fmt.Errorf("--name %q is the ClusterJob to retry: a run cannot retry itself", name)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("--name %q is not a valid ClusterJob name: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// run creates the retry, tells what it will run, and with -w follows it.
func (r *retryOptions) run(ctx context.Context, name string, include []fleetv1.RetryInclude) error {
	c, err := r.hubClient()
	if err != nil {
		return err
	}
	child, counts, err := r.create(ctx, c, name, include)
	if err != nil {
		return err
	}
	if !r.out.human() {
		child.SetGroupVersionKind(fleetv1.GroupVersion.WithKind("ClusterJob"))
		return r.out.printObject(child, r.streams.Out)
	}
	if _, err := fmt.Fprint(r.streams.Out, retrySummary(child, counts, r.dryRun)); err != nil {
		return err
	}
	if !r.watch {
		return nil
	}
	if _, err := fmt.Fprintln(r.streams.Out); err != nil {
		return err
	}
	// status -w's own loop, so that the two redraw and exit alike.
	s := &statusOptions{options: r.options, name: child.Name, watch: true, timeout: r.timeout, out: newOutputFlags(true)}
	return s.follow(ctx, c, child)
}

// create reads the parent and its MemberRuns, builds the retry and creates
// it when it has nodes to run, within hubTimeout. It returns the created
// ClusterJob, named, and what it runs per cluster. A client dry run
// returns it uncreated, named by --name or not at all.
func (r *retryOptions) create(ctx context.Context, c client.Client, name string, include []fleetv1.RetryInclude) (*fleetv1.ClusterJob, []retryCount, error) {
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	parent, err := r.getClusterJob(ctx, c, name)
	if err != nil {
		return nil, nil, err
	}
	rows, err := memberRows(ctx, c, parent)
	if err != nil {
		return nil, nil, err
	}
	child, err := buildRetry(parent, rows, include, r.clusters, r.name)
	if err != nil {
		return nil, nil, err
	}
	counts := retryCounts(rows, &child.Spec)
	if len(counts) == 0 {
		return nil, nil, nothingToRetry(parent, &child.Spec)
	}
	if r.dryRun == dryRunClient {
		return child, counts, nil
	}
	err = c.Create(ctx, child, &client.CreateOptions{DryRun: r.dryRun.options()})
	if apierrors.IsAlreadyExists(err) && r.name != "" {
		return nil, nil, fmt.Errorf("--name %q: clusterjob %s/%s already exists", r.name, child.Namespace, r.name)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("creating the retry of clusterjob %s/%s on the hub: %w", parent.Namespace, parent.Name, err)
	}
	return child, counts, nil
}

// memberRows are the parent's clusters as its MemberRuns report them,
// sorted by cluster: what the hub retries and what its counts come from.
func memberRows(ctx context.Context, c client.Reader, parent *fleetv1.ClusterJob) ([]fleetv1.ClusterStatus, error) {
	list := &fleetv1.MemberRunList{}
	if err := c.List(ctx, list, client.InNamespace(parent.Namespace),
		client.MatchingLabels{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(parent.UID))}); err != nil {
		return nil, fmt.Errorf("listing the memberruns of clusterjob %s/%s on the hub: %w", parent.Namespace, parent.Name, err)
	}
	var rows []fleetv1.ClusterStatus
	for i := range list.Items {
		mr := &list.Items[i]
		// The label is a hash for a long UID: the spec is the proof.
		if mr.Spec.ClusterJobUID != string(parent.UID) {
			continue
		}
		row := mr.Status.ClusterStatus
		row.Name = mr.Spec.Cluster
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b fleetv1.ClusterStatus) int { return strings.Compare(a.Name, b.Name) })
	return rows, nil
}

// buildRetry is the ClusterJob that retries parent, whose clusters are
// rows: the parent's spec without suspend nor an approval's decision, and
// retryOf and retry for the parent (never those of a parent that is itself
// a retry, which would retry the grandparent). include nil leaves
// spec.retry.include to the CRD's default; name "" lets the API server name
// it after the parent. It refuses what the hub would refuse with
// RetryRefused, so that nothing is created to fail at once.
func buildRetry(parent *fleetv1.ClusterJob, rows []fleetv1.ClusterStatus, include []fleetv1.RetryInclude, clusters []string, name string) (*fleetv1.ClusterJob, error) {
	if err := retriable(parent, rows); err != nil {
		return nil, err
	}
	clusters = slices.Compact(slices.Sorted(slices.Values(clusters)))
	for _, c := range clusters {
		if !slices.ContainsFunc(rows, func(r fleetv1.ClusterStatus) bool { return r.Name == c }) {
			return nil, fmt.Errorf("--cluster %q did not run in clusterjob %s/%s: its clusters are %s", c, parent.Namespace, parent.Name, clusterNames(rows))
		}
	}
	child := &fleetv1.ClusterJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: parent.Namespace, Name: name},
		Spec:       *parent.Spec.DeepCopy(),
	}
	if name == "" {
		child.GenerateName = retryPrefix(parent.Name)
	}
	child.Spec.Suspend = nil
	// A retry is a run of its own: it holds after its canary until a
	// person decides on it, the parent's decision aside.
	if child.Spec.Approval != nil {
		child.Spec.Approval.Decision = nil
	}
	child.Spec.RetryOf = &fleetv1.RetryOf{Name: parent.Name}
	child.Spec.Retry = nil
	if include != nil || clusters != nil {
		child.Spec.Retry = &fleetv1.Retry{Include: include, Clusters: clusters}
	}
	return child, nil
}

// retriable refuses a parent that has not ended, is being deleted (its
// record in the members goes with it) or ran in no cluster.
func retriable(parent *fleetv1.ClusterJob, rows []fleetv1.ClusterStatus) error {
	switch {
	case !parent.DeletionTimestamp.IsZero():
		return fmt.Errorf("clusterjob %s/%s is being deleted, and its record in the members with it: there is nothing to retry", parent.Namespace, parent.Name)
	case !parent.Status.Phase.IsFinished():
		return fmt.Errorf("clusterjob %s/%s is still %s: retry it once it has ended", parent.Namespace, parent.Name, cmp.Or(parent.Status.Phase, fleetv1.PhasePending))
	case len(rows) == 0:
		return fmt.Errorf("clusterjob %s/%s ran in no cluster: there is nothing to retry", parent.Namespace, parent.Name)
	}
	return nil
}

// clusterNames lists rows' clusters for an error, the first
// maxNamedClusters of them.
func clusterNames(rows []fleetv1.ClusterStatus) string {
	names := make([]string, 0, min(len(rows), maxNamedClusters))
	for _, r := range rows[:min(len(rows), maxNamedClusters)] {
		names = append(names, r.Name)
	}
	s := strings.Join(names, ", ")
	if more := len(rows) - len(names); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// retryPrefix is the generateName of a retry of parent, "<parent>-retry-",
// the parent's part cut so that the API server's 5 random characters fit
// in 63: it would cut a longer prefix itself, through "-retry-".
func retryPrefix(parent string) string {
	const suffix = "-retry-"
	const maxPrefix = validation.DNS1123LabelMaxLength - 5
	if len(parent) > maxPrefix-len(suffix) {
		// A cut may expose a '-' or '.', which may not end a name's part.
		parent = strings.TrimRight(parent[:maxPrefix-len(suffix)], "-.")
	}
	return parent + suffix
}

// retryCount is what a retry runs in one cluster of its parent.
type retryCount struct {
	Cluster string
	// Nodes is how many nodes the retry runs there.
	Nodes int32
	// AtMost tells that Nodes counts skipped nodes: the parent's status
	// counts too the nodes not meant to run (the Job template's affinity,
	// no perNodeGroup label), which a retry leaves out.
	AtMost bool
	// Unknown tells that the parent never reached the cluster to count
	// its nodes: the retry plans it from its spec, with nodes unknown yet.
	Unknown bool
}

// retryNodes counts what a retry including include runs in the cluster of
// row, as the parent's MemberRun counts its nodes: failed and skipped
// nodes as counted, and the nodes that never got a Job as Unreachable when
// the parent could not reach the cluster (the hub's test on the row's
// reason), else as NotRun. It is pure.
func retryNodes(row fleetv1.ClusterStatus, include []fleetv1.RetryInclude) retryCount {
	n := row.Nodes
	out := retryCount{Cluster: row.Name}
	want := func(k fleetv1.RetryInclude) bool { return slices.Contains(include, k) }
	if want(fleetv1.RetryFailed) {
		out.Nodes += n.Failed
	}
	if want(fleetv1.RetrySkipped) && n.Skipped > 0 {
		out.Nodes += n.Skipped
		out.AtMost = true
	}
	neverStarted := max(0, n.Total-n.Succeeded-n.Failed-n.Skipped-n.Running)
	switch {
	case !fleet.Unreachable(row):
		if want(fleetv1.RetryNotRun) {
			out.Nodes += neverStarted
		}
	case want(fleetv1.RetryUnreachable) && n.Total == 0:
		out.Unknown = true
	case want(fleetv1.RetryUnreachable):
		out.Nodes += neverStarted
	}
	return out
}

// retryCounts is what the retry spec runs in each of its clusters, rows
// being the parent's: only the clusters where it runs something.
func retryCounts(rows []fleetv1.ClusterStatus, spec *fleetv1.ClusterJobSpec) []retryCount {
	var only []string
	if spec.Retry != nil {
		only = spec.Retry.Clusters
	}
	var out []retryCount
	for _, row := range rows {
		if len(only) > 0 && !slices.Contains(only, row.Name) {
			continue
		}
		if n := retryNodes(row, spec.RetryIncludes()); n.Nodes > 0 || n.Unknown {
			out = append(out, n)
		}
	}
	return out
}

// nothingToRetry tells that spec would run no node, and what might.
func nothingToRetry(parent *fleetv1.ClusterJob, spec *fleetv1.ClusterJobSpec) error {
	include := spec.RetryIncludes()
	where := ""
	if spec.Retry != nil && len(spec.Retry.Clusters) > 0 {
		where = " in " + strings.Join(spec.Retry.Clusters, ", ")
	}
	msg := fmt.Sprintf("clusterjob %s/%s has no %s node%s to retry, as its memberruns count them: nothing was created", parent.Namespace, parent.Name, kindList(include), where)
	if len(include) < len(retryKinds) {
		msg += " (--include failed,skipped,unreachable,notrun takes every kind)"
	}
	return errors.New(msg)
}

// kindList is include for a person: "Failed" or "Failed, Skipped".
func kindList(include []fleetv1.RetryInclude) string {
	s := make([]string, len(include))
	for i, k := range include {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// retrySummary tells what the created retry runs: a line, then a table of
// the clusters where it runs something, in name order.
func retrySummary(child *fleetv1.ClusterJob, counts []retryCount, dryRun dryRun) string {
	var total int32
	atMost, unknown := false, 0
	rows := make([][]render.Cell, 0, len(counts))
	for _, n := range counts {
		cell := strconv.Itoa(int(n.Nodes))
		if n.Unknown {
			cell, unknown = "<unknown>", unknown+1
		}
		total += n.Nodes
		atMost = atMost || n.AtMost
		rows = append(rows, []render.Cell{render.Text(render.Escape(n.Cluster)), render.Text(cell)})
	}
	nodes := plural(int(total), "node")
	if atMost {
		nodes = "up to " + nodes
	}
	var b strings.Builder
	name := child.Name
	if name == "" {
		name = child.GenerateName + "<random>"
	}
	fmt.Fprintf(&b, "clusterjob %s/%s created%s: retrying %s (%s) of %s", child.Namespace, name, dryRun.suffix(), nodes, kindList(child.Spec.RetryIncludes()), child.Spec.RetryOf.Name)
	if unknown > 0 {
		fmt.Fprintf(&b, ", and the nodes of %s it never reached", plural(unknown, "cluster"))
	}
	b.WriteString("\n")
	for line := range strings.Lines(render.Table([]string{"CLUSTER", "NODES"}, rows)) {
		b.WriteString("  " + line)
	}
	return b.String()
}

// plural is "1 node" or "3 nodes".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
