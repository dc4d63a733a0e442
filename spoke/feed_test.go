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
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// feedFixture is a run in a member whose Jobs and nodes live in informer
// stores, with the derivations' change feed told of changes as the hub's
// event handlers tell it.
type feedFixture struct {
	t       *testing.T
	run     Run
	c       *memClient
	ix      *Informers
	ds      Derivations
	records Records
	now     time.Time
	names   []string
}

func newFeedFixture(t *testing.T, nodes int) *feedFixture {
	f := &feedFixture{t: t, run: testRun(makeClusterJob("disk-clean").Obj()), now: t0.Time}
	f.names = make([]string, nodes)
	for i := range f.names {
		f.names[i] = fmt.Sprintf("node-%02d", i)
	}
	half := nodes / 2
	p := plan.Plan{Groups: []plan.Group{{Name: "batch-1", Nodes: f.names[:half]}, {Name: "batch-2", Nodes: f.names[half:]}}}
	planCM, parts, err := planConfigMaps(f.run, p)
	if err != nil {
		t.Fatal(err)
	}
	f.c = newMemClient(planCM)
	for _, part := range parts {
		if err := f.c.Create(context.Background(), part); err != nil {
			t.Fatal(err)
		}
	}
	var objs []client.Object
	for _, n := range readyNodes(f.names...) {
		objs = append(objs, &n)
	}
	f.ix = informersWith(t, objs...)
	return f
}

// member is the run as the hub has it: the member's stores, and the
// records it keeps, without derivations.
func (f *feedFixture) member() Member {
	return Member{Client: f.c, Live: liveMember{f.c, f.ix}, Run: f.run, Informers: f.ix, Caches: Caches{Records: &f.records}}
}

// observe is Observe as the hub calls it, from the feed (incremental) or
// without derivations (whole).
func (f *feedFixture) observe(incremental bool) State {
	f.t.Helper()
	m := f.member()
	if incremental {
		m.Caches.Derivations = &f.ds
	}
	st, err := m.Observe(context.Background(), At(f.now))
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

// liveMember reads the member's API server, which the stores are not
// behind: ConfigMaps from the client, the Jobs' metadata from the store.
type liveMember struct {
	*memClient
	ix *Informers
}

func (l liveMember) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	jobs := list.(*metav1.PartialObjectMetadataList)
	for _, o := range l.ix.jobs.List() {
		jobs.Items = append(jobs.Items, metav1.PartialObjectMetadata{ObjectMeta: o.(*batchv1.Job).ObjectMeta})
	}
	return nil
}

// setJob stores job (nil: deletes node's Job) and, unless silent, tells
// the feed, as the hub's Job event handler does.
func (f *feedFixture) setJob(node string, job *batchv1.Job, silent bool) {
	f.t.Helper()
	old := f.job(node)
	var err error
	switch {
	case job == nil && old == nil:
		return
	case job == nil:
		err = f.ix.jobs.Delete(old)
		job = old
	case old == nil:
		err = f.ix.jobs.Add(job)
	default:
		err = f.ix.jobs.Update(job)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	if !silent {
		f.ds.JobChanged(f.run.Cluster, job)
	}
}

func (f *feedFixture) job(node string) *batchv1.Job {
	j := makeJob(node).Ptr()
	obj, ok, _ := f.ix.jobs.GetByKey(j.Namespace + "/" + j.Name)
	if !ok {
		return nil
	}
	return obj.(*batchv1.Job)
}

// toggleNode deletes node, or creates it again, and tells the feed.
func (f *feedFixture) toggleNode(node string) {
	f.t.Helper()
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: node}}
	var err error
	if _, exists, _ := f.ix.nodes.GetByKey(node); exists {
		err = f.ix.nodes.Delete(meta)
	} else {
		err = f.ix.nodes.Add(meta)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	f.ds.NodesChanged(f.run.Cluster)
}

// TestFeedDerivesAsWhole changes a run at random as a member and the hub
// do between reconciles (Jobs created, running, finished, failed, deleted;
// updates that change nothing derived and that the hub's predicate drops;
// nodes deleted and created again; the record written by this hub, from
// the state it derived or with its verdicts, and by another writer; time
// passing) and checks
// after each change that the state derived from the change feed is the
// state a whole derive gives, that the record written from it is the one
// every node would give, and that the feed missed nothing.
func TestFeedDerivesAsWhole(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			f := newFeedFixture(t, 40)
			rng := rand.New(rand.NewPCG(seed, 7))
			for step := range 400 {
				n := f.names[rng.IntN(len(f.names))]
				switch rng.IntN(11) {
				case 0:
					f.setJob(n, makeJob(n).Created(t0).Ptr(), false)
				case 1:
					// Ready, or no longer: a started pod whose node may be lost.
					f.setJob(n, makeJob(n).Created(t0).Started(t0).Pods(1, int32(rng.IntN(2)), 0).Ptr(), false)
				case 2:
					f.setJob(n, makeJob(n).Created(t0).Started(t0).Complete(t1).Ptr(), false)
				case 3:
					f.setJob(n, makeJob(n).Created(t0).Started(t0).Failed("BackoffLimitExceeded", "exit 1", t1).Ptr(), false)
				case 4:
					f.setJob(n, nil, false)
				case 5:
					if j := f.job(n); j != nil { // a new object, nothing derived changed: no event passes the predicate
						again := j.DeepCopy()
						again.ResourceVersion += "1"
						f.setJob(n, again, true)
					}
				case 6:
					f.toggleNode(n)
				case 7, 8:
					st := f.observe(true)
					st.OnHubClock(st.Watch(StartWatch{}, f.now)) // as the hub times every finished Job
					// Now and then the hub's verdict, which the record carries over the Jobs.
					switch rng.IntN(6) {
					case 0:
						st.TimeOutGroup(f.now.Add(time.Hour), time.Minute)
					case 1: // every node read gone: the running ones are lost, then failed
						gone := map[string]NodeHealth{}
						for _, name := range f.names {
							gone[name] = NodeHealth{}
						}
						st.TimeOutLost(f.now, time.Minute, gone)
						st.TimeOutLost(f.now.Add(2*time.Minute), time.Minute, gone)
					case 2:
						st.TimeOutStarts(f.now.Add(time.Hour), time.Minute, st.Watch(StartWatch{}, f.now), nil)
					}
					want, _ := recordChanges(st.Recorded, st, nil, nil)
					got, _ := recordChangesOf(st.Recorded, st, st.recordCandidates(), nil, nil)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("step %d: record (-from every node +from the candidates):\n%s", step, diff)
					}
					if rng.IntN(4) == 0 {
						break // the reconcile ended before its write: its verdicts are not kept
					}
					if err := f.member().RecordResults(context.Background(), st, nil, nil); err != nil {
						t.Fatal(err)
					}
				case 9: // another writer: its write is not in Records
					rec, cm, err := ReadResults(context.Background(), f.c, f.run)
					if err != nil {
						t.Fatal(err)
					}
					next := Results{Nodes: rec.Nodes.With(map[string]NodeResult{n: {Phase: NodeStarting, Attempt: "other"}})}
					if err := (Member{Client: f.c, Live: f.c, Run: f.run}).WriteResults(context.Background(), next, cm); err != nil {
						t.Fatal(err)
					}
				case 10:
					f.now = f.now.Add(time.Duration(rng.IntN(20)) * time.Second)
				}
				want := f.observe(false)
				got := f.observe(true)
				if diff := cmp.Diff(want.Nodes, got.Nodes); diff != "" {
					t.Fatalf("step %d: nodes (-whole +from the feed):\n%s", step, diff)
				}
				if diff := cmp.Diff(want.Groups, got.Groups); diff != "" {
					t.Fatalf("step %d: groups (-whole +from the feed):\n%s", step, diff)
				}
			}
			if m := f.ds.Misses(); m != 0 {
				t.Errorf("the feed missed %d changes", m)
			}
		})
	}
}

// TestFeedLooksOnlyAtWhatChanged: with nothing told, a derive from the
// feed does not look at a Job even when it changed (so its cost follows
// the feed, not the run's size); the whole derive wholeDeriveEvery later
// finds the change, so that a change the feed did not get delays the run
// by that much at most, and, once the feed has not named it within
// suspectGrace, counts it a miss.
// A derive from the feed hands its nodes to the State without a copy; the
// reconcile's verdicts then edit them. A reconcile that ends before
// writing its record (an error, a conflict) must leave nothing of its
// verdicts to the next derive: it judges again from what the member holds.
func TestFeedKeepsNoVerdict(t *testing.T) {
	f := newFeedFixture(t, 8)
	ctx := context.Background()
	f.observe(true) // whole: the derivation is complete from here
	// node-00's pod started (recorded so), then is no longer Ready: its
	// node may be lost. node-01's Job waits for a pod; node-02's finished.
	f.setJob("node-00", makeJob("node-00").Created(t0).Started(t0).Pods(1, 1, 0).Ptr(), false)
	f.setJob("node-01", makeJob("node-01").Created(t0).Ptr(), false)
	f.setJob("node-02", makeJob("node-02").Created(t0).Started(t0).Complete(t1).Ptr(), false)
	if err := f.member().RecordResults(ctx, f.observe(true), nil, nil); err != nil {
		t.Fatal(err)
	}
	f.setJob("node-00", makeJob("node-00").Created(t0).Started(t0).Pods(1, 0, 0).Ptr(), false)
	f.setJob("node-03", makeJob("node-03").Created(t0).Started(t0).Complete(t1).Ptr(), false)

	st := f.observe(true)
	if !st.Derived.shared {
		t.Fatal("the derive was not from the feed: nothing here is shared")
	}
	gone := map[string]NodeHealth{}
	for _, n := range f.names {
		gone[n] = NodeHealth{}
	}
	w, later := st.Watch(StartWatch{}, f.now), f.now.Add(time.Hour)
	st.OnHubClock(w)
	st.TimeOutLost(later, time.Minute, gone)
	st.TimeOutLost(later.Add(2*time.Minute), time.Minute, gone)
	st.TimeOutStarts(later, time.Minute, w, map[string]Refusal{"node-01": {Reason: "Unschedulable", Message: "0/1 nodes"}})
	verdicts := map[string]string{}
	for _, n := range st.Nodes {
		if n.Phase == NodeFailed {
			verdicts[n.Node] = n.Reason
		}
	}
	if diff := cmp.Diff(map[string]string{"node-00": fleetv1.NodeReasonNodeLost, "node-01": fleetv1.NodeReasonPodCreateFailed}, verdicts); diff != "" {
		t.Fatalf("the verdicts this test relies on (-want +got):\n%s", diff)
	}

	// No record written: the next derive sees none of it.
	want, got := f.observe(false), f.observe(true)
	if diff := cmp.Diff(want.Nodes, got.Nodes); diff != "" {
		t.Errorf("nodes after a reconcile that wrote nothing (-whole +from the feed):\n%s", diff)
	}
	if diff := cmp.Diff(want.Groups, got.Groups); diff != "" {
		t.Errorf("groups after a reconcile that wrote nothing (-whole +from the feed):\n%s", diff)
	}
}

func TestFeedLooksOnlyAtWhatChanged(t *testing.T) {
	f := newFeedFixture(t, 10)
	for _, n := range f.names {
		f.setJob(n, makeJob(n).Created(t0).Started(t0).Pods(1, 1, 0).Ptr(), false)
	}
	f.observe(true) // whole: the first
	f.setJob(f.names[0], makeJob(f.names[0]).Created(t0).Started(t0).Complete(t1).Ptr(), false)
	f.setJob(f.names[1], makeJob(f.names[1]).Created(t0).Started(t0).Complete(t1).Ptr(), true) // an event lost
	f.now = f.now.Add(wholeDeriveEvery - time.Second)
	st := f.observe(true)
	if got := []NodePhase{st.Nodes[0].Phase, st.Nodes[1].Phase}; got[0] != NodeSucceeded || got[1] != NodeRunning {
		t.Fatalf("from the feed: phases %v, want [Succeeded Running]: the node told of derived again, the other not looked at", got)
	}
	f.now = f.now.Add(time.Second)
	st = f.observe(true)
	if st.Nodes[1].Phase != NodeSucceeded {
		t.Fatalf("%s is %s %s after the whole derive, want Succeeded", f.names[1], st.Nodes[1].Phase, wholeDeriveEvery)
	}
	if m := f.ds.Misses(); m != 0 {
		t.Fatalf("misses = %d right after the whole derive found it, want 0: its event may be on its way", m)
	}
	f.now = f.now.Add(wholeDeriveEvery)
	f.observe(true)
	if m := f.ds.Misses(); m != 1 {
		t.Fatalf("misses = %d a whole derive later, want 1", m)
	}
}

// TestFeedLateEventIsNoMiss: a whole derive that reads a change before
// the handler's call for it arrives (client-go notifies handlers after
// the store changed) counts no miss once the call arrives.
func TestFeedLateEventIsNoMiss(t *testing.T) {
	f := newFeedFixture(t, 4)
	for _, n := range f.names {
		f.setJob(n, makeJob(n).Created(t0).Started(t0).Pods(1, 1, 0).Ptr(), false)
	}
	f.observe(true)
	done := makeJob(f.names[2]).Created(t0).Started(t0).Complete(t1).Ptr()
	f.setJob(f.names[2], done, true) // in the store; the handler not called yet
	f.ds.NodesChanged(f.run.Cluster) // something else makes the next derive whole
	f.observe(true)
	f.now = f.now.Add(time.Second)
	f.ds.NodesChanged(f.run.Cluster) // and the next, a second later
	f.observe(true)
	f.ds.JobChanged(f.run.Cluster, done) // the handler's call, late
	f.observe(true)
	f.now = f.now.Add(wholeDeriveEvery)
	f.observe(true)
	if m := f.ds.Misses(); m != 0 {
		t.Fatalf("misses = %d, want 0: the change was named, late", m)
	}
}

// TestFeedWholeWhen: what makes the next derive whole rather than from
// the feed.
func TestFeedWholeWhen(t *testing.T) {
	run := testRun(makeClusterJob("disk-clean").Obj())
	var records Records
	records.put("rec", testRun(makeClusterJob("disk-clean").Obj()), "1", Results{}, nil, "", []string{"a"})
	records.put("rec", testRun(makeClusterJob("disk-clean").Obj()), "2", Results{}, nil, "1", []string{"b"})
	records.put("rec", testRun(makeClusterJob("disk-clean").Obj()), "3", Results{}, nil, "2", nil) // merged: not known
	v := func(rv string) recordVersion { return recordVersion{uid: "rec", resourceVersion: rv} }
	cases := []struct {
		name      string
		d         *derivation
		nodesSet  bool
		rec       recordVersion
		jobs      bool
		after     time.Duration
		wantWhole bool
		wantNodes []string
	}{
		{name: "from the feed", d: &derivation{complete: true, record: v("1")}, rec: v("1"), jobs: true, after: time.Second, wantNodes: []string{}},
		{name: "never derived whole", d: &derivation{record: v("1")}, rec: v("1"), jobs: true, wantWhole: true},
		{name: "no Job store", d: &derivation{complete: true, record: v("1")}, rec: v("1"), wantWhole: true},
		{name: "a node created or deleted", d: &derivation{complete: true, record: v("1")}, nodesSet: true, rec: v("1"), jobs: true, wantWhole: true},
		{name: "the last whole derive too old", d: &derivation{complete: true, record: v("1")}, rec: v("1"), jobs: true, after: wholeDeriveEvery, wantWhole: true},
		{name: "the clock went back", d: &derivation{complete: true, record: v("1")}, rec: v("1"), jobs: true, after: -time.Second, wantWhole: true},
		{name: "the record written by this hub", d: &derivation{complete: true, record: v("1")}, rec: v("2"), jobs: true, wantNodes: []string{"b"}},
		{name: "the record created by this hub", d: &derivation{complete: true}, rec: v("1"), jobs: true, wantNodes: []string{"a"}},
		{name: "two writes by this hub", d: &derivation{complete: true}, rec: v("2"), jobs: true, wantNodes: []string{"b", "a"}},
		{name: "a write not known", d: &derivation{complete: true, record: v("2")}, rec: v("3"), jobs: true, wantWhole: true},
		{name: "a record of another UID", d: &derivation{complete: true, record: recordVersion{uid: "old", resourceVersion: "1"}}, rec: v("2"), jobs: true, wantWhole: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ds Derivations
			if tc.nodesSet {
				ds.NodesChanged(run.Cluster)
			}
			d := tc.d
			d.wholeAt = t0.Time
			got := ds.feedFor(d, run, tc.rec, &records, tc.jobs, t0.Add(tc.after))
			if got.partial == tc.wantWhole {
				t.Fatalf("partial = %v, want %v", got.partial, !tc.wantWhole)
			}
			if !tc.wantWhole {
				if diff := cmp.Diff(tc.wantNodes, got.nodes); diff != "" {
					t.Errorf("nodes (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestJobChangedMarksItsRun: a Job event marks its node in its own run's
// derivation only; events of Jobs fleetjob does not know pass.
func TestJobChangedMarksItsRun(t *testing.T) {
	var ds Derivations
	run := testRun(makeClusterJob("disk-clean").Obj())
	d := ds.of(run, "plan", 2)
	d.mu.Unlock()
	ds.JobChanged(run.Cluster, makeJob("n1").Ptr())
	ds.JobChanged("another-cluster", makeJob("n2").Ptr())
	ds.JobChanged(run.Cluster, makeJob("n3").Owner(types.UID("another-run")).Ptr())
	ds.JobChanged(run.Cluster, &batchv1.Job{})
	if diff := cmp.Diff(map[string]struct{}{"n1": {}}, d.takeMarks()); diff != "" {
		t.Errorf("marks (-want +got):\n%s", diff)
	}
	if m := d.takeMarks(); m != nil {
		t.Errorf("marks taken twice: %v", m)
	}
}
