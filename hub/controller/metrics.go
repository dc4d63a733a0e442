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

package controller

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/spoke"
)

// Metrics never carry a node name as a label: a fleet has too many.
var (
	jobsCreated = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "fleetjob_jobs_created_total",
		Help: "Jobs created in member clusters.",
	})
	groupDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "fleetjob_group_duration_seconds",
		Help:    "Time from the first Job of a group starting to its last Job finishing.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14), // 1s to about 4.5h
	})
	groupHandoff = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "fleetjob_group_handoff_seconds",
		Help: "Time from the hub seeing the last Job of a group finish in a member (or from the end of a spec.gates.soak after it) to its creating the first Job of the next group there.",
		// The hand-off is a watch event, a reconcile and one create away:
		// milliseconds, unless the hub is overloaded.
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})
)

// budgetsExceeded counts failure budgets exceeded: scope is "cluster" (a
// per-group or per-cluster budget, counted when its cluster's row first
// says so) or "run" (a run-wide budget, counted when the hub halts or
// suspends the run for it); action is onExceeded.
var budgetsExceeded = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "fleetjob_failure_budget_exceeded_total",
	Help: "Failure budgets of spec.failurePolicy exceeded, by scope (cluster, run) and onExceeded action (Stop, Suspend).",
}, []string{"scope", "action"})

// deriveMisses counts the nodes whose Job changed without the change feed
// being told within 10 s (spoke/feed.go): the periodic whole derive caught
// them, up to 30 s late. It must stay 0.
var deriveMisses = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "fleetjob_derive_feed_misses_total",
	Help: "Nodes whose Job changed without the hub's change feed naming them within 10 s, found by a whole derive of their run (a bug if not 0).",
})

func init() {
	metrics.Registry.MustRegister(jobsCreated, groupDuration, groupHandoff, budgetsExceeded, deriveMisses)
}

// countDeriveMisses adds to deriveMisses the misses r's derivations found
// since the last call.
func (r *MemberRunReconciler) countDeriveMisses() {
	n := r.derivations.Misses()
	if old := r.deriveMisses.Swap(n); n > old {
		deriveMisses.Add(float64(n - old))
	}
}

// onExceeded is the action of cj's failurePolicy, defaulted.
func onExceeded(cj *fleetv1.ClusterJob) string {
	if cj.Spec.FailurePolicy == nil || cj.Spec.FailurePolicy.OnExceeded == "" {
		return string(fleetv1.OnExceededStop)
	}
	return string(cj.Spec.FailurePolicy.OnExceeded)
}

// firstCreate is a member client that notes when its first create
// of a Job succeeded: the end of a group hand-off (the record written
// ahead of the Jobs is part of it).
type firstCreate struct {
	client.Client
	clock clock.PassiveClock
	once  sync.Once
	at    time.Time
}

// Create implements client.Writer.
func (c *firstCreate) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	err := c.Client.Create(ctx, obj, opts...)
	if _, job := obj.(*batchv1.Job); err == nil && job {
		c.once.Do(func() { c.at = c.clock.Now() })
	}
	return err
}

// observeGroupDuration records how long group g took, from its nodes' Job
// start and completion times; it is called when the next group starts, and
// for the last group that started when the cluster finishes
// (observeLastGroup). Job times have one-second resolution: a group done
// within a second is observed as 0, not left out.
func observeGroupDuration(st spoke.State, g int) {
	if d, ok := groupDurationOf(st, g); ok {
		groupDuration.Observe(d.Seconds())
	}
}

// groupDurationOf is the time from the first start to the last completion
// among group g's nodes; false when none of them has both.
func groupDurationOf(st spoke.State, g int) (time.Duration, bool) {
	var first, last time.Time
	for _, n := range st.Nodes {
		if n.Group != g || n.StartTime == nil || n.CompletionTime == nil {
			continue
		}
		if first.IsZero() || n.StartTime.Time.Before(first) {
			first = n.StartTime.Time
		}
		if n.CompletionTime.Time.After(last) {
			last = n.CompletionTime.Time
		}
	}
	if first.IsZero() {
		return 0, false
	}
	return max(0, last.Sub(first)), true
}

// observeLastGroup records the duration of the last group that started in
// a cluster whose run just finished: no later group start records it, and
// an `all` run has no other.
func observeLastGroup(st spoke.State) {
	for g := len(st.Groups) - 1; g >= 0; g-- {
		if st.Groups[g].Started() {
			observeGroupDuration(st, g)
			return
		}
	}
}

// Collector reports ClusterJobs by phase and member clusters by
// reachability at scrape time, from the hub cache: gauges kept by the
// reconciler would drift when objects are deleted. The member clusters are
// the registration Secrets, each as reachable as its MemberCluster says,
// not this replica's registry: a replica of a sharded hub connects only to
// the clusters it serves.
//
// Only the leader reports: every replica of the hub would otherwise export
// the same gauges, and a sum over the hub's pods would count each run once
// per replica.
type Collector struct {
	Hub client.Reader
	// RegistrationNamespace holds the registration Secrets.
	RegistrationNamespace string
	// Elected is closed once this replica leads (the manager's Elected);
	// until then the collector reports nothing, and reads no cache.
	Elected <-chan struct{}
}

// NewCollector is the Collector of the hub run by mgr, whose registration
// Secrets are in namespace.
func NewCollector(mgr mcmanager.Manager, namespace string) *Collector {
	local := mgr.GetLocalManager()
	return &Collector{Hub: local.GetClient(), RegistrationNamespace: namespace, Elected: local.Elected()}
}

// leading tells whether c's replica leads; a Collector with no Elected
// channel always does.
func (c *Collector) leading() bool {
	if c.Elected == nil {
		return true
	}
	select {
	case <-c.Elected:
		return true
	default:
		return false
	}
}

var (
	clusterJobsDesc = prometheus.NewDesc("fleetjob_clusterjobs", "ClusterJobs by phase.", []string{"phase"}, nil)
	membersDesc     = prometheus.NewDesc("fleetjob_member_clusters", "Registered member clusters by reachability.", []string{"reachable", "reason"}, nil)
	runNodesDesc    = prometheus.NewDesc("fleetjob_run_nodes", "Nodes of a ClusterJob's run in one cluster, by phase, from its MemberRun.",
		[]string{"clusterjob_namespace", "clusterjob", "member_cluster", "phase"}, nil)
	runFailedDesc = prometheus.NewDesc("fleetjob_run_failed_nodes", "Failed nodes of a ClusterJob's run in one cluster, by reason, from its MemberRun's sample of up to 500 failed nodes.",
		[]string{"clusterjob_namespace", "clusterjob", "member_cluster", "reason"}, nil)
	runClusterDesc = prometheus.NewDesc("fleetjob_run_cluster_info", "A ClusterJob's run in one cluster: 1, with the cluster's phase and reason.",
		[]string{"clusterjob_namespace", "clusterjob", "member_cluster", "phase", "reason"}, nil)
)

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clusterJobsDesc
	ch <- membersDesc
	ch <- runNodesDesc
	ch <- runFailedDesc
	ch <- runClusterDesc
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if !c.leading() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list := &fleetv1.ClusterJobList{}
	if err := c.Hub.List(ctx, list); err == nil {
		byPhase := map[fleetv1.Phase]int{fleetv1.PhasePending: 0, fleetv1.PhaseRunning: 0, fleetv1.PhaseCompleted: 0, fleetv1.PhaseFailed: 0}
		for _, cj := range list.Items {
			p := cj.Status.Phase
			if p == "" {
				p = fleetv1.PhasePending
			}
			byPhase[p]++
		}
		for p, n := range byPhase {
			ch <- prometheus.MustNewConstMetric(clusterJobsDesc, prometheus.GaugeValue, float64(n), string(p))
		}
	}
	runs := &fleetv1.MemberRunList{}
	// Read-only, and thousands at a fleet's scale: no copies of the cache's.
	if err := c.Hub.List(ctx, runs, client.UnsafeDisableDeepCopy); err == nil {
		for i := range runs.Items {
			collectRun(ch, &runs.Items[i])
		}
	}
	c.collectMembers(ctx, ch)
}

// collectMembers reports the registered clusters by reachability; nothing
// when either list fails, rather than a count that drops clusters.
func (c *Collector) collectMembers(ctx context.Context, ch chan<- prometheus.Metric) {
	secrets := &corev1.SecretList{}
	if err := c.Hub.List(ctx, secrets, client.InNamespace(c.RegistrationNamespace),
		client.MatchingLabels{fleetv1.RegistrationLabel: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	mcs := &fleetv1.MemberClusterList{}
	if err := c.Hub.List(ctx, mcs, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	connected := make(map[string]*metav1.Condition, len(mcs.Items))
	for i := range mcs.Items {
		connected[mcs.Items[i].Name] = meta.FindStatusCondition(mcs.Items[i].Status.Conditions, fleetv1.MemberClusterConnected)
	}
	type key struct{ reachable, reason string }
	counts := map[key]int{}
	for _, s := range secrets.Items {
		if !s.DeletionTimestamp.IsZero() {
			continue
		}
		reachable, reason := reachability(connected[s.Name])
		counts[key{strconv.FormatBool(reachable), reason}]++
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(membersDesc, prometheus.GaugeValue, float64(n), k.reachable, k.reason)
	}
}

// reachability is whether a registered cluster is reachable, and why,
// from the Connected condition of its MemberCluster: what the replica
// serving it last published. A cluster none has published yet is
// Connecting, as is one whose condition is Unknown.
func reachability(connected *metav1.Condition) (bool, string) {
	switch {
	case connected == nil || connected.Status == metav1.ConditionUnknown:
		return false, fleetv1.ClusterReasonConnecting
	case connected.Status == metav1.ConditionTrue:
		return true, fleetv1.ClusterReasonConnected
	default:
		return false, connected.Reason
	}
}

// collectRun reports one MemberRun: its nodes by phase, its failed nodes by
// reason, and its phase. Node names are never labels.
func collectRun(ch chan<- prometheus.Metric, mr *fleetv1.MemberRun) {
	if mr.Status.Name == "" {
		return // not written yet
	}
	ns, cj, cluster := mr.Namespace, mr.Spec.ClusterJob, mr.Spec.Cluster
	n := mr.Status.Nodes
	for phase, count := range map[string]int32{"Pending": n.Pending, "Running": n.Running, "Succeeded": n.Succeeded, "Failed": n.Failed, "Skipped": n.Skipped} {
		ch <- prometheus.MustNewConstMetric(runNodesDesc, prometheus.GaugeValue, float64(count), ns, cj, cluster, phase)
	}
	byReason := map[string]int{}
	for _, f := range mr.Status.FailedNodes {
		byReason[f.Reason]++
	}
	for reason, count := range byReason {
		ch <- prometheus.MustNewConstMetric(runFailedDesc, prometheus.GaugeValue, float64(count), ns, cj, cluster, reason)
	}
	ch <- prometheus.MustNewConstMetric(runClusterDesc, prometheus.GaugeValue, 1, ns, cj, cluster, string(mr.Status.Phase), mr.Status.Reason)
}
