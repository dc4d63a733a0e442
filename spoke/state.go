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
	"fmt"
	"iter"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
)

// NodePhase is the state of one planned node's Job.
type NodePhase string

const (
	// NodePending means the node has no Job yet.
	NodePending NodePhase = "Pending"
	// NodeRunning means the node's Job exists and has not finished.
	NodeRunning NodePhase = "Running"
	// NodeSucceeded means the node's Job completed.
	NodeSucceeded NodePhase = "Succeeded"
	// NodeFailed means the node's Job failed, or the node was deleted while
	// its Job ran.
	NodeFailed NodePhase = "Failed"
	// NodeSkipped means the node was deleted before its Job was created.
	NodeSkipped NodePhase = "Skipped"
)

// NodeState is one planned node's result.
type NodeState struct {
	// Node is the node name.
	Node string
	// Job is the name of the node's Job, empty while it has none.
	Job string
	// Group is the index of the node's group in the plan.
	Group int
	// GroupName is the name of the node's group.
	GroupName string
	// Phase is the node's state.
	Phase NodePhase
	// Reason and Message tell why a node failed or was skipped.
	Reason, Message string
	// StartTime is the Job's status.startTime.
	StartTime *metav1.Time
	// CompletionTime is when the Job's terminal condition became True;
	// once its final result is recorded, the record's finish time, which
	// is by the hub's clock (OnHubClock).
	CompletionTime *metav1.Time
	// For a running node: Created is when its Job was created, Started
	// whether its pod started (Ready) or finished once, and Pods how many
	// pods the Job has. They decide the node start timeout.
	Created *metav1.Time
	Started bool
	Pods    int32
	// Unconfirmed tells, for a running node, that its Job has a pod that
	// has not finished (active or terminating) and none that is Ready: what
	// a started pod on a lost node looks like, since the node lifecycle
	// controller marks its pods not Ready. LostSince is when the hub first
	// read the node lost, by the hub's clock; nil while it is not known
	// lost. They decide spec.nodeLostTimeout.
	Unconfirmed bool
	LostSince   *metav1.Time
	// ExitCode and Output are a failed node's container exit code and the
	// start of its termination message (its last log lines when it wrote
	// none), when its pod could be read.
	ExitCode *int32
	Output   string
	// Drain is what the node's drain came to, as its record says.
	Drain noderesults.Drain
}

// GroupState counts the nodes of one group by phase.
type GroupState struct {
	// Name is the group's name in the plan.
	Name string
	// Nodes is the number of planned nodes in the group.
	Nodes int
	// Pending, Running, Succeeded, Failed and Skipped count the nodes by
	// phase; they add up to Nodes.
	Pending, Running, Succeeded, Failed, Skipped int
}

// GroupNodes is group g's nodes: Nodes holds them group by group, in plan
// order, so a pass over one group costs that group, not the run. A state
// whose Nodes are not laid out so (one made by hand) gets them filtered.
// They are the state's own, to read: not copied, for a pass over
// thousands of them costs their copies.
func (s State) GroupNodes(g int) iter.Seq[*NodeState] {
	return func(yield func(*NodeState) bool) {
		start := 0
		for _, gs := range s.Groups[:g] {
			start += gs.Nodes
		}
		end := start + s.Groups[g].Nodes
		if end > len(s.Nodes) || end > start && (s.Nodes[start].Group != g || s.Nodes[end-1].Group != g) {
			for i := range s.Nodes {
				if s.Nodes[i].Group == g && !yield(&s.Nodes[i]) {
					return
				}
			}
			return
		}
		for i := start; i < end; i++ {
			if !yield(&s.Nodes[i]) {
				return
			}
		}
	}
}

// NodesWhere yields, read-only like GroupNodes, the nodes of the groups
// whose counts keep accepts: a pass for nodes of one phase skips the
// groups with none.
func (s State) NodesWhere(keep func(GroupState) bool) iter.Seq[*NodeState] {
	return func(yield func(*NodeState) bool) {
		for g := range s.Groups {
			if !keep(s.Groups[g]) {
				continue
			}
			for n := range s.GroupNodes(g) {
				if !yield(n) {
					return
				}
			}
		}
	}
}

// Started tells whether some node of the group is not Pending.
func (g GroupState) Started() bool { return g.Pending < g.Nodes }

// Finished tells whether every node of the group is Succeeded, Failed or
// Skipped.
func (g GroupState) Finished() bool { return g.Succeeded+g.Failed+g.Skipped == g.Nodes }

// State is the run in one member, derived from what exists there.
type State struct {
	// Planned tells whether the frozen plan exists.
	Planned bool
	// Plan is the frozen plan.
	Plan plan.Plan
	// Groups are in the order of Plan.Groups.
	Groups []GroupState
	// Nodes are the planned nodes in plan order, group by group.
	Nodes []NodeState
	// Recorded is the run's results record as read, and RecordObject the
	// ConfigMap it was read from (nil when there is none yet): the next
	// write of the record starts from them.
	Recorded     Results
	RecordObject *corev1.ConfigMap
	// GroupsSeen, when set, maps each running group to when the hub first
	// saw a Job of it, by the hub's clock (StartWatch.Groups): GroupStart
	// takes it over the member's timestamps.
	GroupsSeen map[int]time.Time
	// Cordoned, for a run that drains, holds the planned nodes that carry
	// its cordon mark: draining while Pending, to be released once done.
	Cordoned map[string]bool
	// Derived is the derivation the state came from, none for a state
	// not derived with Derivations: it tells RecordResults which nodes may
	// differ from the record.
	Derived Derivation
}

// Derivation is a handle on the derivation a State came from. shared
// tells that the State's Nodes are the derivation's own states: a derive
// from the feed (deriveChanged) hands them over rather than copying every
// node each reconcile, and the State's verdicts edit them through edit,
// which keeps what they were for the next derive to put back.
type Derivation struct {
	d      *derivation
	shared bool
}

// edit returns node i of s to change. When s shares its nodes with its
// derivation, the node as derived is kept first: the next derive puts it
// back before comparing with it, and RecordResults looks at the nodes
// edited rather than comparing every node with the derivation's.
func (s *State) edit(i int) *NodeState {
	if d := s.Derived.d; d != nil && s.Derived.shared {
		d.mu.Lock()
		if _, kept := d.edited[i]; !kept {
			if d.edited == nil {
				d.edited = map[int]NodeState{}
			}
			d.edited[i] = s.Nodes[i]
		}
		d.mu.Unlock()
	}
	return &s.Nodes[i]
}

// Equal tells that two handles are alike whatever they point at: a
// handle says how a state was made, not what it is, and states compare
// by what they are.
func (Derivation) Equal(Derivation) bool { return true }

// Draining counts the Pending nodes the run cordoned: their drain goes
// on, and they are disrupted though their Job does not exist yet.
func (s State) Draining() int {
	n := 0
	for _, ns := range s.Nodes {
		if ns.Phase == NodePending && s.Cordoned[ns.Node] {
			n++
		}
	}
	return n
}

// Releasable are the nodes the run cordoned that are done with it:
// succeeded, failed or skipped; every one of them when all is set (the
// run ends in the cluster). keep tells, for each, whether it stays
// cordoned (the drain's keepCordoned for a node that succeeded, onTimeout
// Leave for one whose drain failed) rather than being uncordoned.
func (s State) Releasable(drain *fleetv1.Drain, all bool) (nodes []string, keep []bool) {
	for _, ns := range s.Nodes {
		if !s.Cordoned[ns.Node] || !all && (ns.Phase == NodePending || ns.Phase == NodeRunning) {
			continue
		}
		nodes = append(nodes, ns.Node)
		keep = append(keep, ns.Phase == NodeSucceeded && drain.KeepCordoned || DrainFailed(ns.Reason) && drain.OnTimeout == fleetv1.DrainLeave)
	}
	return nodes, keep
}

// Finished tells whether the run is planned and every group finished. A plan
// with no group is finished: there is nothing to run.
func (s State) Finished() bool { return s.Planned && s.Current() == len(s.Groups) }

// AnyFailed tells whether some node failed.
func (s State) AnyFailed() bool {
	for _, g := range s.Groups {
		if g.Failed > 0 {
			return true
		}
	}
	return false
}

// Current is the index of the first group not finished, len(Groups) when all
// finished, or -1 when the run is not planned.
func (s State) Current() int {
	if !s.Planned {
		return -1
	}
	for i, g := range s.Groups {
		if !g.Finished() {
			return i
		}
	}
	return len(s.Groups)
}

// RunningGroup is the index of a group with Running nodes, or -1.
func (s State) RunningGroup() int {
	for i, g := range s.Groups {
		if g.Running > 0 {
			return i
		}
	}
	return -1
}

// Derive is the state of a run from its frozen plan p (nil when there is
// none), the run's Jobs, the names of the nodes that exist now and the
// run's results record. It is pure. Jobs are matched to nodes by their node
// annotation; Jobs of nodes not in the plan are ignored. A node without a
// Job takes its recorded result: it finished and its Job is gone, or its
// Job was deleted before it finished (JobDeleted); either way it never runs
// again.
func Derive(p *plan.Plan, jobs []batchv1.Job, nodesPresent map[string]bool, rec Results) State {
	st, _ := derive(p, jobsByNode(jobs), func(n string) bool { return nodesPresent[n] }, rec, nil, feed{})
	return st
}

// jobsByNode indexes jobs by their node annotation.
func jobsByNode(jobs []batchv1.Job) map[string]*batchv1.Job {
	byNode := make(map[string]*batchv1.Job, len(jobs))
	for i := range jobs {
		byNode[jobs[i].Annotations[fleetv1.NodeAnnotation]] = &jobs[i]
	}
	return byNode
}

// derive is Derive with the Jobs indexed by node and node presence as a
// function. last (nil: none) is what the run's last derive made of each
// node and from what: a node whose Job, presence and record entry are the
// ones it was derived from last time is not derived again. derive updates
// last to this one. f names the nodes whose inputs may have changed since
// last (feed.go): when it is partial and last holds a whole derive, only
// they are looked at, so that the cost follows what changed. missing
// tells that the record has a node that has not finished and has no Job:
// lost, or a Job the cache has not seen yet.
func derive(p *plan.Plan, byNode map[string]*batchv1.Job, present func(string) bool, rec Results, last *derivation, f feed) (st State, missing bool) {
	if p == nil {
		return State{}, false
	}
	n := p.NodeCount()
	if last != nil {
		last.restore()
	}
	if last != nil && f.partial && last.complete && len(last.from) == n {
		return deriveChanged(p, byNode, present, rec, last, f.nodes)
	}
	st = State{Planned: true, Plan: *p, Groups: make([]GroupState, len(p.Groups)), Nodes: make([]NodeState, 0, n)}
	if last != nil && len(last.from) != n {
		last.from, last.states, last.complete = make([]derivedFrom, n), make([]NodeState, n), false
	}
	var missed, unseen int
	if last != nil {
		missed = last.judgeSuspects(f.now)
	}
	for i, g := range p.Groups {
		st.Groups[i] = GroupState{Name: g.Name, Nodes: len(g.Nodes)}
		for _, node := range g.Nodes {
			job := byNode[node]
			r, recorded := rec.Nodes.Lookup(node)
			from := derivedFrom{job: job, present: present(node), recorded: recorded, rec: r, valid: true}
			if from.missing() {
				unseen++
			}
			k := len(st.Nodes)
			var ns NodeState
			if last != nil && last.from[k] == from {
				ns = last.states[k]
			} else {
				ns = deriveNode(node, from, i, g.Name)
				if last != nil {
					if last.complete && f.unnamed(node, last.from[k], from) && !apiequality.Semantic.DeepEqual(ns, last.states[k]) {
						last.suspect(node, f.now)
					}
					last.from[k], last.states[k] = from, ns
				}
			}
			st.Groups[i].count(ns.Phase, 1)
			st.Nodes = append(st.Nodes, ns)
		}
	}
	if last != nil {
		if len(last.index) != n {
			last.index = make(map[string]int, n)
			for k, ns := range st.Nodes {
				last.index[ns.Node] = k
			}
		}
		last.groups, last.missing, last.missed, last.complete = slices.Clone(st.Groups), unseen, missed, true
		last.unsynced, last.allUnsynced = nil, true
		st.Derived = Derivation{d: last}
	}
	return st, unseen > 0
}

// deriveChanged is derive from last, which holds a whole derive, looking
// only at the nodes named.
func deriveChanged(p *plan.Plan, byNode map[string]*batchv1.Job, present func(string) bool, rec Results, last *derivation, nodes []string) (State, bool) {
	last.missed = 0
	for _, node := range nodes {
		k, planned := last.index[node]
		if !planned {
			continue
		}
		r, recorded := rec.Nodes.Lookup(node)
		job := byNode[node]
		from := derivedFrom{job: job, present: present(node), recorded: recorded, rec: r, valid: true}
		old := last.from[k]
		if old == from {
			continue
		}
		g := last.states[k].Group
		ns := deriveNode(node, from, g, p.Groups[g].Name)
		last.groups[g].count(last.states[k].Phase, -1)
		last.groups[g].count(ns.Phase, 1)
		last.missing += btoi(from.missing()) - btoi(old.missing())
		last.from[k], last.states[k] = from, ns
		if last.unsynced == nil {
			last.unsynced = map[int]struct{}{}
		}
		last.unsynced[k] = struct{}{}
	}
	st := State{Planned: true, Plan: *p, Groups: slices.Clone(last.groups), Nodes: last.states, Derived: Derivation{d: last, shared: true}}
	return st, last.missing > 0
}

// deriveNode is the state of node of group g, named groupName, from what
// from holds.
func deriveNode(node string, from derivedFrom, g int, groupName string) NodeState {
	ns := nodeState(node, from.job, from.present)
	ns = withRecord(ns, from.rec, from.job != nil)
	if from.recorded && from.job == nil {
		ns = from.rec.state(node)
	}
	ns.Group, ns.GroupName = g, groupName
	return ns
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// count adds d to the count of phase p.
func (g *GroupState) count(p NodePhase, d int) {
	switch p {
	case NodePending:
		g.Pending += d
	case NodeRunning:
		g.Running += d
	case NodeSucceeded:
		g.Succeeded += d
	case NodeFailed:
		g.Failed += d
	case NodeSkipped:
		g.Skipped += d
	}
}

// withRecord lets a node's recorded result speak where the Job does not: a
// final result wins over a Job that has not finished (the hub failed the
// node, and deletes the Job), a start once seen is not forgotten, and a
// pod that has not started shows what its member said refuses it.
func withRecord(ns NodeState, r NodeResult, hasJob bool) NodeState {
	ns.Drain = r.Drain
	if hasJob && r.Phase == NodeFailed && (failedByHub(r.Reason) || r.Reason == fleetv1.NodeReasonNodeUnhealthy) {
		out := r.state(ns.Node) // the hub's verdict, even on a Job that finished before its deletion
		out.Job = ns.Job
		return out
	}
	if hasJob && ns.Phase == NodeFailed && r.Phase == NodeFailed && ns.ExitCode == nil && ns.Output == "" {
		ns.ExitCode, ns.Output = r.ExitCode, r.Output // read from its pod when it failed
	}
	if !hasJob || ns.Phase != NodeRunning {
		if hasJob && ns.CompletionTime != nil && r.final() && r.Finish != 0 {
			ns.CompletionTime = unixTime(r.Finish) // the hub's clock, as recorded (OnHubClock)
		}
		return ns
	}
	if r.final() {
		out := r.state(ns.Node)
		out.Job = ns.Job
		return out
	}
	ns.Started = ns.Started || r.Started
	ns.LostSince = unixTime(r.Lost)
	if !ns.Started {
		ns.Reason, ns.Message = r.Reason, r.Message
	}
	return ns
}

// nodeState is one node's state from its Job (nil when it has none) and
// whether the node still exists. A deleted node's Job can never finish, so
// it counts as failed rather than running forever.
func nodeState(node string, job *batchv1.Job, present bool) NodeState {
	if job == nil {
		if present {
			return NodeState{Node: node, Phase: NodePending}
		}
		return NodeState{Node: node, Phase: NodeSkipped, Reason: fleetv1.NodeReasonNodeDeleted, Message: "node was deleted before its Job started"}
	}
	ns := NodeState{Node: node, Job: job.Name, StartTime: job.Status.StartTime.DeepCopy()}
	phase, cond := jobOutcome(job)
	switch {
	case cond != nil:
		ns.Phase, ns.CompletionTime = phase, cond.LastTransitionTime.DeepCopy()
		if phase == NodeFailed {
			ns.Reason, ns.Message = cond.Reason, cond.Message
		}
	case present:
		ns.Phase = NodeRunning
		if !job.CreationTimestamp.IsZero() {
			ns.Created = job.CreationTimestamp.DeepCopy()
		}
		s := job.Status
		ns.Started = ptr.Deref(s.Ready, 0) > 0 || s.Succeeded > 0 || s.Failed > 0
		ns.Pods = s.Active + s.Succeeded + s.Failed
		ns.Unconfirmed = ptr.Deref(s.Ready, 0) == 0 && (s.Active > 0 || ptr.Deref(s.Terminating, 0) > 0)
	default:
		ns.Phase, ns.Reason, ns.Message = NodeFailed, fleetv1.NodeReasonNodeDeleted, "node was deleted while its Job ran"
	}
	return ns
}

// jobOutcome reads a Job's result from its conditions only: counters lag
// the conditions and depend on the Job's policies. Only Complete and Failed
// are final: FailureTarget and SuccessCriteriaMet come first, while the
// Job's last pods still terminate, and a group is not over, nor may the next
// one start on other nodes, until they are gone. It returns NodeRunning and
// nil for a Job that has not finished.
func jobOutcome(job *batchv1.Job) (NodePhase, *batchv1.JobCondition) {
	if c := trueCondition(job, batchv1.JobFailed); c != nil {
		return NodeFailed, c
	}
	if c := trueCondition(job, batchv1.JobComplete); c != nil {
		return NodeSucceeded, c
	}
	return NodeRunning, nil
}

// JobFinished tells whether job has its final condition, Complete or Failed.
func JobFinished(job *batchv1.Job) bool {
	phase, _ := jobOutcome(job)
	return phase != NodeRunning
}

func trueCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// failedByHub tells whether a node's failure is the hub's verdict on a Job
// that may still exist (its pod never started or cannot, its group ran out
// of time, its node was lost or deleted): the verdict is recorded, then the
// Job is deleted, until it is gone (DeleteFailedJobs), and the verdict
// stands even if the Job finishes first. A deleted node's Job is deleted
// too: its kubelet may run on, or a node registered again under the same
// name would run its pod, after the run counted the node failed.
func failedByHub(reason string) bool {
	switch reason {
	case fleetv1.NodeReasonPodCreateFailed, fleetv1.NodeReasonNotStarted, fleetv1.NodeReasonContainerConfigError, fleetv1.NodeReasonInvalidImage,
		fleetv1.NodeReasonGroupDeadlineExceeded, fleetv1.NodeReasonNodeLost, fleetv1.NodeReasonNodeDeleted:
		return true
	}
	return false
}

// GroupStart is when group g started: when the hub first saw a Job of it
// (GroupsSeen), else the creation (or start) of its first Job by the
// member's clock; zero when none of its nodes has a Job.
func (s State) GroupStart(g int) time.Time {
	if t, ok := s.GroupsSeen[g]; ok {
		return t
	}
	var first time.Time
	for _, n := range s.Nodes {
		if n.Group != g {
			continue
		}
		for _, t := range []*metav1.Time{n.Created, n.StartTime} {
			if t != nil && (first.IsZero() || t.Time.Before(first)) {
				first = t.Time
			}
		}
	}
	return first
}

// GroupDeadline is when the running group times out under deadline;
// false when no group runs or deadline is 0.
func (s State) GroupDeadline(deadline time.Duration) (time.Time, bool) {
	g := s.RunningGroup()
	if g < 0 || deadline <= 0 {
		return time.Time{}, false
	}
	start := s.GroupStart(g)
	return start.Add(deadline), !start.IsZero()
}

// TimeOutGroup fails the running nodes of the running group once it has
// run longer than deadline (0: no deadline), and returns their Jobs, to be
// deleted, and how many it failed: a group that cannot finish must not hold
// the cluster forever. It is pure; TimeOutStarts returns the Jobs of nodes
// failed so before.
func (s *State) TimeOutGroup(now time.Time, deadline time.Duration) (jobs []string, failed int) {
	at, ok := s.GroupDeadline(deadline)
	if !ok || now.Before(at) {
		return nil, 0
	}
	g := s.RunningGroup()
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Group != g || n.Phase != NodeRunning {
			continue
		}
		n = s.edit(i)
		s.Groups[g].Running--
		s.Groups[g].Failed++
		n.Phase, n.CompletionTime = NodeFailed, &metav1.Time{Time: now}
		n.Reason, n.Message = fleetv1.NodeReasonGroupDeadlineExceeded, fmt.Sprintf("the node's group did not finish within spec.gates.progressDeadline (%s)", deadline)
		jobs = append(jobs, n.Job)
		failed++
	}
	return jobs, failed
}
