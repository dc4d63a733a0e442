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

package spoke

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// changedPerReconcile is how many of the run's Jobs change between two
// reconciles in BenchmarkMemberReconcile: a busy member's reconcile, once a
// second, sees a few Jobs finish, whatever the run's size.
const changedPerReconcile = 10

// BenchmarkMemberReconcile is the member's share of one reconcile of a
// run whose nodes all run: changedPerReconcile Jobs finished since the
// last one; the reconcile reads the run from the informers' stores and
// the caches of decoded plans and records, as the hub does (Observe), and
// adds the finished nodes to the record and writes it (RecordResults).
// The Job updates reach the derivations' change feed as the hub's event
// handler passes them. It is how the reconcile's cost grows with the run's
// size (issue 22: it should follow what changed).
func BenchmarkMemberReconcile(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) { benchmarkMemberReconcile(b, n) })
	}
}

func benchmarkMemberReconcile(b *testing.B, n int) {
	ctx := context.Background()
	run := testRun(makeClusterJob("disk-clean").Obj())
	nodes := make([]string, n)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", i/250, i%250)
	}
	p := plan.Plan{Groups: []plan.Group{{Name: "all", Nodes: nodes}}}
	planCM, parts, err := planConfigMaps(run, p)
	if err != nil {
		b.Fatal(err)
	}
	planCM.UID = "plan-uid" // an API server's, which Plans keys on
	objs := []client.Object{planCM}
	for _, part := range parts {
		objs = append(objs, part)
	}
	c := newMemClient(objs...)
	running := make([]*batchv1.Job, n)
	var jobObjs []client.Object
	for i, node := range nodes {
		j := BuildJob(run, node, 0, "all")
		j.CreationTimestamp, j.Status.StartTime = t0, &t0
		j.Status.Active, j.Status.Ready = 1, ptr.To[int32](1)
		running[i] = j
		jobObjs = append(jobObjs, j)
	}
	for _, node := range readyNodes(nodes...) {
		jobObjs = append(jobObjs, &node)
	}
	ix := informersWith(b, jobObjs...)
	jobs := ix.jobs
	var plans Plans
	var records Records
	var derivations Derivations
	m := Member{Client: c, Live: c, Run: run, Informers: ix, Caches: Caches{Plans: &plans, Records: &records, Derivations: &derivations}}
	reconcile := func() {
		st, err := m.Observe(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.RecordResults(ctx, st, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	// start is the run with every node running and recorded so.
	start := func() {
		for _, j := range running {
			if err := jobs.Update(j); err != nil {
				b.Fatal(err)
			}
			derivations.JobChanged(run.Cluster, j) // as the hub's Job event handler does
		}
		rec := &corev1.ConfigMap{}
		rec.Namespace, rec.Name = run.Namespace, naming.ResultsName(run.ClusterJob.UID)
		if err := c.Delete(ctx, rec); client.IgnoreNotFound(err) != nil {
			b.Fatal(err)
		}
		reconcile()
	}
	start()
	b.ReportAllocs()
	b.ResetTimer()
	next := 0
	for range b.N {
		if next+changedPerReconcile > n {
			b.StopTimer()
			start()
			next = 0
			b.StartTimer()
		}
		for _, j := range running[next : next+changedPerReconcile] {
			done := j.DeepCopy()
			done.Status.Active, done.Status.Ready, done.Status.Succeeded = 0, ptr.To[int32](0), 1
			done.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: t1}}
			if err := jobs.Update(done); err != nil {
				b.Fatal(err)
			}
			derivations.JobChanged(run.Cluster, done)
		}
		next += changedPerReconcile
		reconcile()
	}
}

// memClient is an in-memory client of ConfigMaps with an API server's
// create, update (conflicts on a stale resourceVersion) and delete, and
// nothing else: BenchmarkMemberReconcile measures fleetjob's work, not
// the fake client's object tracker, which builds a REST mapper on every
// write (more than half the time at 1,000 nodes).
type memClient struct {
	client.Client // other calls are not expected: they panic
	objs          map[client.ObjectKey]*corev1.ConfigMap
	version       int
}

func newMemClient(objs ...client.Object) *memClient {
	c := &memClient{objs: map[client.ObjectKey]*corev1.ConfigMap{}}
	for _, o := range objs {
		if err := c.Create(context.Background(), o); err != nil {
			panic(err)
		}
	}
	return c
}

func (c *memClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	stored, ok := c.objs[key]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
	}
	stored.DeepCopyInto(obj.(*corev1.ConfigMap))
	return nil
}

func (c *memClient) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	key := client.ObjectKeyFromObject(obj)
	if _, ok := c.objs[key]; ok {
		return apierrors.NewAlreadyExists(corev1.Resource("configmaps"), key.Name)
	}
	c.version++
	obj.SetUID(types.UID(fmt.Sprintf("uid-%d", c.version))) // Records and Plans key on it
	obj.SetResourceVersion(strconv.Itoa(c.version))
	c.objs[key] = obj.(*corev1.ConfigMap).DeepCopy()
	return nil
}

func (c *memClient) Update(_ context.Context, obj client.Object, _ ...client.UpdateOption) error {
	key := client.ObjectKeyFromObject(obj)
	stored, ok := c.objs[key]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
	}
	if stored.ResourceVersion != obj.GetResourceVersion() {
		return apierrors.NewConflict(corev1.Resource("configmaps"), key.Name, fmt.Errorf("stale"))
	}
	c.version++
	obj.SetResourceVersion(strconv.Itoa(c.version))
	c.objs[key] = obj.(*corev1.ConfigMap).DeepCopy()
	return nil
}

func (c *memClient) Delete(_ context.Context, obj client.Object, _ ...client.DeleteOption) error {
	key := client.ObjectKeyFromObject(obj)
	if _, ok := c.objs[key]; !ok {
		return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
	}
	delete(c.objs, key)
	return nil
}
