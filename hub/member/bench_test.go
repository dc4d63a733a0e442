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

package member_test

import (
	"fmt"
	"testing"
	"time"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/member"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// BenchmarkDecideAndStatus is the hub's pure share of one member
// reconcile of an `all` run whose nodes all run: decide, requeue, and the
// cluster's row. With BenchmarkMemberReconcile in spoke, it is how a
// reconcile's cost grows with the run's size.
func BenchmarkDecideAndStatus(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			cj := wrappers.MakeClusterJob("disk-clean", "team-a").All().Obj()
			r := wrappers.MakeRun(cj, "a", n)
			in := member.Input{Spec: &cj.Spec, Cluster: r.Start(r.Group(0)...).Cluster().Previous(started()).Obj(), Admitted: true, Now: wrappers.Now,
				UnreachableTimeout: time.Hour, MemberErrorTimeout: 10 * time.Minute, NodeStartTimeout: fleetv1.DefaultNodeStartTimeout}
			b.ReportAllocs()
			for b.Loop() {
				d := member.Decide(in)
				_ = member.RequeueAfter(in)
				if row := member.Status(in, d); row.Phase != fleetv1.ClusterRunning {
					b.Fatalf("row phase %s, want Running", row.Phase)
				}
			}
		})
	}
}
