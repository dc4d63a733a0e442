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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/spoke"
)

// observeCluster reads the run in one member: the registry's view of it and
// the run's plan, Jobs and record from its cache.
func (r *MemberRunReconciler) observeCluster(ctx context.Context, cj *fleetv1.ClusterJob, name string, prev *fleetv1.ClusterStatus) member.Cluster {
	c := member.Cluster{Name: name, Previous: prev}
	m, ok := r.Members.Member(name)
	if !ok {
		c.Reason, c.UnreachableSince = r.unknownMember(ctx, name), r.Clock.Now()
		c.Message = fmt.Sprintf("no registration Secret %s/%s", r.Options.RegistrationNamespace, name)
		if c.Reason == fleetv1.ClusterReasonConnecting {
			c.Message = "the hub has not connected to the cluster yet"
		}
		return c
	}
	c.Engaged, c.Reachable, c.Reason, c.Message, c.UnreachableSince = m.Engaged, m.Reachable, m.Reason, m.Message, m.UnreachableSince
	c.ClusterID = m.ClusterID
	c.Windows, c.WindowError, c.Error = r.windows(ctx, cj, m.Labels)
	if c.Error != nil {
		return c
	}
	sm, ok := r.member(ctx, cj, m)
	if !ok {
		c.Engaged = false
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, r.Options.MemberTimeout)
	defer cancel()
	c.State, c.Error = sm.Observe(ctx, spoke.At(r.Clock.Now()))
	r.countDeriveMisses()
	c.Draining = c.State.Draining()
	var w spoke.StartWatch
	if c.Error == nil && c.State.Planned {
		w = r.watchStarts(cj, sm.Run, &c.State)
	}
	if g := cj.Spec.Gates; c.Error == nil && c.State.Planned && g != nil && g.NodeHealth != nil {
		c.HealthRecheck, c.Error = gateHealth(ctx, sm.Live, cj, &c.State, w, r.Clock.Now())
	}
	if c.Error == nil && c.State.Planned {
		var late []string
		if g := cj.Spec.Gates; g != nil && g.ProgressDeadline != nil {
			late, c.DeadlineExceeded = c.State.TimeOutGroup(r.Clock.Now(), g.ProgressDeadline.Duration)
		}
		c.StartTimedOut, c.NotStarted, c.Stalled, c.StartRecheck = r.timeOutStarts(ctx, sm, cj, &c.State, w)
		c.StartTimedOut = append(c.StartTimedOut, late...)
	}
	if c.Error == nil && c.State.Planned {
		var lost []string
		lost, c.Lost, c.LostRecheck, c.Error = timeOutLost(ctx, sm.Live, cj, &c.State, r.Clock.Now())
		c.StartTimedOut = append(c.StartTimedOut, lost...)
	}
	if c.Error == nil && !c.State.Planned && prev != nil && prev.StartTime != nil && m.Reachable {
		c.PlanLost, c.LeftJobs, c.Error = planLost(ctx, sm)
	}
	return c
}

// maxHealthReads bounds the Nodes read per reconcile for
// spec.gates.nodeHealth: a large group whose Jobs all succeeded at once is
// read over a few reconciles, in turns of this many (State.HealthReads),
// rather than in one burst.
const maxHealthReads = 100

// gateHealth reads the health of the nodes whose Job succeeded and holds
// them back until they prove it (spec.gates.nodeHealth). next is when to
// look again.
func gateHealth(ctx context.Context, r client.Reader, cj *fleetv1.ClusterJob, st *spoke.State, w spoke.StartWatch, now time.Time) (next time.Time, err error) {
	gate := *cj.Spec.Gates.NodeHealth
	reads, err := spoke.ReadNodeHealth(ctx, r, st.HealthReads(now, gate, maxHealthReads), cj.Spec.JobTemplate.Spec.Template.Spec.Tolerations)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading node health: %w", err)
	}
	for node, h := range reads {
		h.ReadySince = w.HubTime(node, h.ReadySince) // as its Job's end is: by the hub's clock
		reads[node] = h
	}
	return st.GateHealth(now, gate, reads), nil
}

// maxLostReads bounds the Nodes read per reconcile for
// spec.nodeLostTimeout, as maxHealthReads does for the health gate: a
// member whose kubelets all died is read over a few reconciles.
const maxLostReads = 100

// timeOutLost reads the nodes of started pods that are not Ready and fails
// those lost for longer than spec.nodeLostTimeout (see
// spoke.State.TimeOutLost). A Node read that fails is the cluster's error:
// retried, and bounded by --member-error-timeout.
func timeOutLost(ctx context.Context, r client.Reader, cj *fleetv1.ClusterJob, st *spoke.State, now time.Time) (jobs []string, failed int, next time.Time, err error) {
	timeout := nodeLostTimeout(cj)
	reads, err := spoke.ReadNodeHealth(ctx, r, st.LostReads(now, timeout, maxLostReads), nil)
	if err != nil {
		return nil, 0, time.Time{}, fmt.Errorf("reading the nodes of pods not Ready: %w", err)
	}
	jobs, failed, next = st.TimeOutLost(now, timeout, reads)
	return jobs, failed, next, nil
}

// nodeLostTimeout is the run's spec.nodeLostTimeout, defaulted as the API
// server does for objects that predate it.
func nodeLostTimeout(cj *fleetv1.ClusterJob) time.Duration {
	if t := cj.Spec.NodeLostTimeout; t != nil && t.Duration > 0 {
		return t.Duration
	}
	return fleetv1.DefaultNodeLostTimeout
}

// planLost tells whether a started cluster's plan is really gone, as the
// member's API server says: the cache may just not have seen it yet. left
// counts the run's Jobs still there.
func planLost(ctx context.Context, sm spoke.Member) (lost bool, left int, err error) {
	_, found, err := spoke.ReadPlan(ctx, sm.Live, sm.Run)
	if err != nil || found {
		return false, 0, err
	}
	left, err = sm.CountJobs(ctx)
	return err == nil, left, err
}

// unknownMember tells a registration the registry has not seen yet (just
// created, or the controller just started) from one that is gone.
func (r *MemberRunReconciler) unknownMember(ctx context.Context, name string) string {
	secret := &corev1.Secret{}
	err := r.Hub.Get(ctx, client.ObjectKey{Namespace: r.Options.RegistrationNamespace, Name: name}, secret)
	if err == nil && secret.DeletionTimestamp.IsZero() && secret.Labels[fleetv1.RegistrationLabel] == "true" {
		return fleetv1.ClusterReasonConnecting
	}
	return fleetv1.ReasonNotRegistered
}

// engaged returns m's cluster while the hub has it engaged.
func (r *MemberRunReconciler) engaged(ctx context.Context, m clusters.Member) (cluster.Cluster, bool) {
	if !m.Engaged {
		return nil, false
	}
	cl, err := r.Manager.GetCluster(ctx, multicluster.ClusterName(m.Name))
	return cl, err == nil
}

// member returns cj's run in the engaged member m: read through the
// member's cache and its informers, written and read live through its API
// server, with the hub's caches of plans, records and derived states.
func (r *MemberRunReconciler) member(ctx context.Context, cj *fleetv1.ClusterJob, m clusters.Member) (spoke.Member, bool) {
	cl, ok := r.engaged(ctx, m)
	if !ok {
		return spoke.Member{}, false
	}
	return spoke.Member{
		Client:    cl.GetClient(),
		Live:      cl.GetAPIReader(),
		Run:       spoke.Run{ClusterJob: cj, Cluster: m.Name, Namespace: m.Namespace, Hub: r.Options.HubID, ClusterID: m.ClusterID},
		Caches:    r.caches(),
		Informers: clusters.InformersOf(cl),
		Indexed:   true,
	}, true
}

// caches are the hub's caches of its runs in the members.
func (r *MemberRunReconciler) caches() spoke.Caches {
	return spoke.Caches{Plans: &r.plans, Records: &r.records, Derivations: &r.derivations}
}

// forEach runs fn(0..n-1) with at most Parallelism at once: hundreds of
// MemberRuns or members are neither walked one by one nor all at once. Every
// fn runs, even once the reconcile's context is done: callers read a result
// for each, and fn bounds its own work.
func (r *shared) forEach(n int, fn func(i int)) {
	workqueue.ParallelizeUntil(context.Background(), max(1, r.Options.Parallelism), n, fn)
}
