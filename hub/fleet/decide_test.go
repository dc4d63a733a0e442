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

package fleet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

func TestDecide(t *testing.T) {
	base := makeClusterJob().Obj()
	exit := makeClusterJob().Exit().Obj()
	one := makeClusterJob().MaxConcurrent(1).Obj()
	two := makeClusterJob().MaxConcurrent(2).Obj()
	suspended := makeClusterJob().Suspend(true).Obj()
	resumed := makeClusterJob().Suspend(false).Obj()

	// run is a fresh run of 6 nodes (groups of 3) in cluster.
	run := func(cluster string) *wrappers.RunWrapper { return wrappers.MakeRun(base, cluster, 6) }
	// between is cluster after group 0 succeeded, before group 1 starts.
	between := func(cluster string) member.Cluster {
		r := run(cluster)
		return r.Succeed(r.Group(0)...).Cluster().Obj()
	}
	// running is cluster with group 0 running.
	running := func(cluster string) member.Cluster {
		r := run(cluster)
		return r.Start(r.Group(0)...).Cluster().Obj()
	}
	// done is cluster with every group succeeded.
	done := func(cluster string) member.Cluster {
		r := run(cluster)
		return r.Succeed(r.Group(0)...).Succeed(r.Group(1)...).Cluster().Obj()
	}
	// failedFirst is cluster whose group 0 finished with its first node failed.
	failedFirst := func(cluster string) member.Cluster {
		r := run(cluster)
		return r.Fail(r.Group(0)[0]).Succeed(r.Group(0)[1:]...).Cluster().Obj()
	}
	unplanned := func(cluster string) member.Cluster { return wrappers.MakeCluster(cluster).Obj() }
	// away is a started cluster the hub lost at since and has no client for.
	away := func(cluster string, since time.Time) member.Cluster {
		return wrappers.MakeCluster(cluster).Previous(startedRow(ago(time.Hour))).Disengaged().Unreachable(since).Obj()
	}

	testCases := map[string]struct {
		cj           *fleetv1.ClusterJob
		clusters     []member.Cluster
		wantDecision worldDecision
	}{
		"no cluster: nothing to do": {
			cj: base,
		},
		"a cluster not planned is planned": {
			cj:           base,
			clusters:     []member.Cluster{unplanned("a")},
			wantDecision: worldDecision{Freeze: []string{"a"}},
		},
		"planned with group 0 pending: group 0 starts": {
			cj:           base,
			clusters:     []member.Cluster{run("a").Cluster().Obj()},
			wantDecision: worldDecision{Start: map[string]int{"a": 0}},
		},
		"group 0 running: nothing starts": {
			cj:       base,
			clusters: []member.Cluster{running("a")},
		},
		"group 0 finished: group 1 starts": {
			cj:           base,
			clusters:     []member.Cluster{between("a")},
			wantDecision: worldDecision{Start: map[string]int{"a": 1}},
		},
		"group 0 half started (a dead controller's work): the same group starts": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				r := run("a")
				return r.Start(r.Group(0)[0]).Cluster().Obj()
			}()},
			wantDecision: worldDecision{Start: map[string]int{"a": 0}},
		},
		"group 0 half started, its one Job finished: the same group starts": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				r := run("a")
				return r.Succeed(r.Group(0)[0]).Cluster().Obj()
			}()},
			wantDecision: worldDecision{Start: map[string]int{"a": 0}},
		},
		"group 1 half started after group 0: group 1 starts": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				r := run("a")
				return r.Succeed(r.Group(0)...).Start(r.Group(1)[:2]...).Cluster().Obj()
			}()},
			wantDecision: worldDecision{Start: map[string]int{"a": 1}},
		},
		"all groups finished: nothing": {
			cj:       base,
			clusters: []member.Cluster{done("a")},
		},
		"a plan with no group (every node cordoned) is finished: nothing": {
			cj:       base,
			clusters: []member.Cluster{wrappers.MakeRun(base, "a", 0, "a-cordoned").Cluster().Obj()},
		},
		"a node deleted before its Job started does not hold its group back": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				r := run("a")
				return r.Succeed(r.Group(0)[:2]...).Deleted(r.Group(0)[2]).Cluster().Obj()
			}()},
			wantDecision: worldDecision{Start: map[string]int{"a": 1}},
		},

		"maxConcurrentClusters 1, three clusters: only the first by name is planned": {
			cj:           one,
			clusters:     []member.Cluster{unplanned("a"), unplanned("b"), unplanned("c")},
			wantDecision: worldDecision{Freeze: []string{"a"}},
		},
		"maxConcurrentClusters 1, the first runs: no other is planned": {
			cj:       one,
			clusters: []member.Cluster{running("a"), unplanned("b"), unplanned("c")},
		},
		"maxConcurrentClusters 1, the first between groups: it goes on, no other is planned": {
			cj:           one,
			clusters:     []member.Cluster{between("a"), unplanned("b"), unplanned("c")},
			wantDecision: worldDecision{Start: map[string]int{"a": 1}},
		},
		"maxConcurrentClusters 1, the first finished: the second is planned": {
			cj:           one,
			clusters:     []member.Cluster{done("a"), unplanned("b"), unplanned("c")},
			wantDecision: worldDecision{Freeze: []string{"b"}},
		},
		"maxConcurrentClusters 1, the first finished with a failure under keepgoing: the second is planned": {
			cj: one,
			clusters: []member.Cluster{func() member.Cluster {
				r := run("a")
				return r.Fail(r.Group(0)...).Succeed(r.Group(1)...).Cluster().Obj()
			}(), unplanned("b"), unplanned("c")},
			wantDecision: worldDecision{Freeze: []string{"b"}},
		},
		"maxConcurrentClusters 1, the first started and unreachable: it holds its slot": {
			cj:           one,
			clusters:     []member.Cluster{away("a", ago(10*time.Minute)), unplanned("b"), unplanned("c")},
			wantDecision: worldDecision{RequeueAfter: 50 * time.Minute},
		},
		"maxConcurrentClusters 1, the first never started and is not reachable yet: it keeps its turn": {
			cj: one,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Disengaged().Unreachable(ago(10 * time.Minute)).Obj(),
				unplanned("b"), unplanned("c"),
			},
			wantDecision: worldDecision{RequeueAfter: 50 * time.Minute},
		},
		"maxConcurrentClusters 1, the first never started and timed out: the second is planned": {
			cj: one,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Disengaged().Unreachable(ago(2 * time.Hour)).Obj(),
				unplanned("b"), unplanned("c"),
			},
			wantDecision: worldDecision{Freeze: []string{"b"}},
		},
		"maxConcurrentClusters 1, an observation error on the first unstarted cluster: it keeps its turn": {
			cj:           one,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Error("reading the plan: forbidden").Obj(), unplanned("b")},
			wantDecision: worldDecision{RequeueAfter: time.Second},
		},
		"maxConcurrentClusters 2, the first not ready yet: it keeps its turn, the second is planned": {
			cj: two,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Disengaged().Unreachable(ago(time.Minute)).Obj(),
				unplanned("b"), unplanned("c"),
			},
			wantDecision: worldDecision{Freeze: []string{"b"}, RequeueAfter: 59 * time.Minute},
		},
		"maxConcurrentClusters 1, the first timed out: its slot is free": {
			cj:           one,
			clusters:     []member.Cluster{away("a", ago(2*time.Hour)), unplanned("b"), unplanned("c")},
			wantDecision: worldDecision{Freeze: []string{"b"}},
		},
		"maxConcurrentClusters 2, one runs: one more is planned": {
			cj:           two,
			clusters:     []member.Cluster{running("a"), unplanned("b"), unplanned("c")},
			wantDecision: worldDecision{Freeze: []string{"b"}},
		},
		"no clusterRollout: every cluster is planned": {
			cj:           base,
			clusters:     []member.Cluster{unplanned("a"), unplanned("b"), unplanned("c")},
			wantDecision: worldDecision{Freeze: []string{"a", "b", "c"}},
		},

		"exit, a failed node in a: stopped, nothing starts or is planned anywhere": {
			cj:           exit,
			clusters:     []member.Cluster{failedFirst("a"), between("b"), unplanned("c")},
			wantDecision: worldDecision{Stopped: true},
		},
		"exit, a node failed while its group still runs: stopped": {
			cj: exit,
			clusters: []member.Cluster{func() member.Cluster {
				r := run("a")
				return r.Fail(r.Group(0)[0]).Start(r.Group(0)[1:]...).Cluster().Obj()
			}(), between("b")},
			wantDecision: worldDecision{Stopped: true},
		},
		"exit, a node deleted while its Job ran counts as failed: stopped": {
			cj: exit,
			clusters: []member.Cluster{func() member.Cluster {
				r := run("a")
				return r.Start(r.Group(0)...).Deleted(r.Group(0)[0]).Cluster().Obj()
			}(), between("b")},
			wantDecision: worldDecision{Stopped: true},
		},
		"exit, a failure in the last row of a cluster the hub has no client for: stopped": {
			cj: exit,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(fleetv1.ClusterStatus{Phase: fleetv1.ClusterRunning, StartTime: mt(ago(time.Hour)),
					Nodes: fleetv1.NodeCounts{Total: 6, Failed: 1, Running: 2, Pending: 3}}).Disengaged().Unreachable(ago(time.Minute)).Obj(),
				between("b"),
			},
			wantDecision: worldDecision{Stopped: true, RequeueAfter: 59 * time.Minute},
		},
		"exit, no failure: the run goes on": {
			cj:           exit,
			clusters:     []member.Cluster{between("a"), between("b"), unplanned("c")},
			wantDecision: worldDecision{Freeze: []string{"c"}, Start: map[string]int{"a": 1, "b": 1}},
		},
		"keepgoing, a failed node in a: the run goes on": {
			cj:           base,
			clusters:     []member.Cluster{failedFirst("a"), between("b"), unplanned("c")},
			wantDecision: worldDecision{Freeze: []string{"c"}, Start: map[string]int{"a": 1, "b": 1}},
		},

		"suspended: nothing planned, nothing started": {
			cj:       suspended,
			clusters: []member.Cluster{between("a"), unplanned("b")},
		},
		"suspended: an unreachable cluster's deadline still requeues": {
			cj:           suspended,
			clusters:     []member.Cluster{between("a"), away("b", ago(15*time.Minute))},
			wantDecision: worldDecision{RequeueAfter: 45 * time.Minute},
		},
		"resumed: the run goes on": {
			cj:           resumed,
			clusters:     []member.Cluster{between("a"), unplanned("b")},
			wantDecision: worldDecision{Freeze: []string{"b"}, Start: map[string]int{"a": 1}},
		},

		"engaged but unreachable: no action on its stale state": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").State(run("a").State()).Previous(startedRow(ago(time.Hour))).Unreachable(ago(time.Minute)).Obj(),
				between("b"),
			},
			wantDecision: worldDecision{Start: map[string]int{"b": 1}, RequeueAfter: 59 * time.Minute},
		},
		"not engaged: not planned": {
			cj:       base,
			clusters: []member.Cluster{wrappers.MakeCluster("a").Disengaged().Obj()},
		},
		"an observation error on a started cluster: no action": {
			cj:           base,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Previous(startedRow(ago(time.Hour))).Error("listing Jobs: context deadline exceeded").Obj()},
			wantDecision: worldDecision{RequeueAfter: time.Second},
		},
		"an observation error on an unstarted cluster: not planned": {
			cj:           base,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Error("reading the plan: forbidden").Obj(), unplanned("b")},
			wantDecision: worldDecision{Freeze: []string{"b"}, RequeueAfter: time.Second},
		},

		"two started unreachable clusters: requeue at the earlier deadline": {
			cj:           base,
			clusters:     []member.Cluster{away("a", ago(10*time.Minute)), away("b", ago(40*time.Minute))},
			wantDecision: worldDecision{RequeueAfter: 20 * time.Minute},
		},
		"a never-started unreachable cluster times out too: requeue at its deadline": {
			cj:           base,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Disengaged().Unreachable(ago(10 * time.Minute)).Obj()},
			wantDecision: worldDecision{RequeueAfter: 50 * time.Minute},
		},
		"keepgoing, a never-started cluster past the timeout: timed out, the rest goes on": {
			cj:           base,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Disengaged().Unreachable(ago(2 * time.Hour)).Obj(), unplanned("b")},
			wantDecision: worldDecision{Freeze: []string{"b"}},
		},
		"exit, a never-started cluster past the timeout: stopped": {
			cj:           exit,
			clusters:     []member.Cluster{wrappers.MakeCluster("a").Disengaged().Unreachable(ago(2 * time.Hour)).Obj(), between("b")},
			wantDecision: worldDecision{Stopped: true},
		},
		"the last row's unreachableSince wins over the registry's": {
			cj: base,
			clusters: []member.Cluster{func() member.Cluster {
				row := startedRow(ago(2 * time.Hour))
				row.Reachable, row.UnreachableSince = false, mt(ago(50*time.Minute))
				return wrappers.MakeCluster("a").Previous(row).Disengaged().Unreachable(ago(time.Minute)).Obj()
			}()},
			wantDecision: worldDecision{RequeueAfter: 10 * time.Minute},
		},
		"keepgoing, a started cluster past the timeout: timed out, no requeue, the rest goes on": {
			cj:           base,
			clusters:     []member.Cluster{away("a", ago(2*time.Hour)), between("b")},
			wantDecision: worldDecision{Start: map[string]int{"b": 1}},
		},
		"keepgoing, a started cluster exactly at the timeout: timed out": {
			cj:           one,
			clusters:     []member.Cluster{away("a", ago(timeout)), unplanned("b")},
			wantDecision: worldDecision{Freeze: []string{"b"}},
		},
		"exit, a started cluster past the timeout: stopped": {
			cj:           exit,
			clusters:     []member.Cluster{away("a", ago(2*time.Hour)), between("b"), unplanned("c")},
			wantDecision: worldDecision{Stopped: true},
		},

		"maxConcurrentClusters 1, a cluster whose row is already Failed comes back: it gets no action": {
			cj: one,
			clusters: []member.Cluster{
				func() member.Cluster {
					r := run("a")
					return r.Succeed(r.Group(0)...).Cluster().Previous(fleetv1.ClusterStatus{
						Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonUnreachableTimeout,
						StartTime: mt(ago(3 * time.Hour)), CompletionTime: mt(ago(time.Hour)),
						Nodes: fleetv1.NodeCounts{Total: 6, Running: 3, Pending: 3},
					}).Obj()
				}(),
				running("b"),
			},
		},
		"a never-started cluster whose row is Failed (timed out) comes back: it is not planned": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(fleetv1.ClusterStatus{
					Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonUnreachableTimeout, CompletionTime: mt(ago(time.Hour)),
				}).Obj(),
				running("b"),
			},
		},

		// The cases below describe bugs in decide.go; see the report.
		"exit, a Completed cluster that goes away does not time out and stop the fleet": {
			cj: exit,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(fleetv1.ClusterStatus{
					Phase: fleetv1.ClusterCompleted, Reason: fleetv1.ReasonCompleted,
					StartTime: mt(ago(4 * time.Hour)), CompletionTime: mt(ago(3 * time.Hour)),
					Nodes: fleetv1.NodeCounts{Total: 6, Succeeded: 6},
				}).Disengaged().Unreachable(ago(2 * time.Hour)).Obj(),
				between("b"),
			},
			wantDecision: worldDecision{Start: map[string]int{"b": 1}},
		},
		"a Completed cluster that goes away has no deadline: no requeue": {
			cj: base,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(fleetv1.ClusterStatus{
					Phase: fleetv1.ClusterCompleted, Reason: fleetv1.ReasonCompleted,
					StartTime: mt(ago(4 * time.Hour)), CompletionTime: mt(ago(3 * time.Hour)),
					Nodes: fleetv1.NodeCounts{Total: 6, Succeeded: 6},
				}).Disengaged().Unreachable(ago(10 * time.Minute)).Obj(),
				running("b"),
			},
		},
		"exit, a failed cluster that cannot be read this time: still stopped": {
			cj: exit,
			clusters: []member.Cluster{
				wrappers.MakeCluster("a").Previous(fleetv1.ClusterStatus{
					Phase: fleetv1.ClusterRunning, Reason: fleetv1.ReasonRunning, Reachable: true, StartTime: mt(ago(time.Hour)),
					Nodes: fleetv1.NodeCounts{Total: 6, Failed: 1, Succeeded: 2, Pending: 3},
				}).Error("listing the Jobs of the run: context deadline exceeded").Obj(),
				between("b"),
				unplanned("c"),
			},
			wantDecision: worldDecision{Stopped: true, RequeueAfter: time.Second},
		},
		"exit, a cluster that timed out comes back: still stopped": {
			cj: exit,
			clusters: []member.Cluster{
				func() member.Cluster {
					r := run("a")
					return r.Succeed(r.Group(0)...).Cluster().Previous(fleetv1.ClusterStatus{
						Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonUnreachableTimeout,
						StartTime: mt(ago(3 * time.Hour)), CompletionTime: mt(ago(time.Hour)),
						Nodes: fleetv1.NodeCounts{Total: 6, Running: 3, Pending: 3},
					}).Obj()
				}(),
				between("b"),
			},
			wantDecision: worldDecision{Stopped: true},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got := decideWorld(input(tc.cj, tc.clusters...))
			if diff := cmp.Diff(tc.wantDecision, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
