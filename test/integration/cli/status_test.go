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
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/cli"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/noderesults"
	"github.com/fleetjob/fleetjob/pkg/plan"
	"github.com/fleetjob/fleetjob/spoke"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// runsNamespace is the work namespace of the cluster these specs register,
// apart from the register specs' own.
const runsNamespace = "fleetjob-runs"

// list is a v1 List as -o json prints it.
type list[T any] struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      []T    `json:"items"`
}

// createNode creates a Ready node, cordoned if asked.
func createNode(name string, cordoned bool) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(memberC.Create(ctx, node)).To(Succeed())
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	Expect(memberC.Status().Update(ctx, node)).To(Succeed())
	// The TaintNodesByCondition admission plugin taints new nodes
	// not-ready; the node lifecycle controller, absent here, lifts it.
	node.Spec.Taints, node.Spec.Unschedulable = nil, cordoned
	Expect(memberC.Update(ctx, node)).To(Succeed())
}

// finish writes the terminal status the Job controller would.
func finish(job *batchv1.Job, fail bool) {
	now := metav1.Now()
	job.Status.StartTime = &now
	cond := func(t batchv1.JobConditionType, reason, msg string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastProbeTime: now, LastTransitionTime: now}
	}
	if fail {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			cond(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit"),
			cond(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit")}
	} else {
		job.Status.Succeeded, job.Status.CompletionTime = 1, &now
		job.Status.Conditions = []batchv1.JobCondition{
			cond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods"),
			cond(batchv1.JobComplete, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods")}
	}
	Expect(memberC.Status().Update(ctx, job)).To(Succeed())
}

// setStatus writes a ClusterJob status as the hub controller would.
func setStatus(cj *fleetv1.ClusterJob, phase fleetv1.Phase, row fleetv1.ClusterStatus, conditions ...metav1.Condition) {
	Eventually(func(g Gomega) {
		g.Expect(hubC.Get(ctx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
		for i := range conditions {
			conditions[i].LastTransitionTime = metav1.Now()
		}
		cj.Status = fleetv1.ClusterJobStatus{
			Phase: phase, Conditions: conditions, Clusters: []fleetv1.ClusterStatus{row},
			Summary: fleetv1.Summary{
				Clusters:        fleetv1.ClusterCounts{Total: 1},
				Nodes:           row.Nodes,
				ClusterProgress: "0/1",
				NodeProgress:    row.Nodes.Progress(),
			},
		}
		g.Expect(hubC.Status().Update(ctx, cj)).To(Succeed())
	}).Should(Succeed())
}

// publishResults writes the MemberRun of cj in cluster with the node
// results the hub would publish from st (nil: a MemberRun the hub has not
// written yet).
func publishResults(cj *fleetv1.ClusterJob, cluster string, st *spoke.State) {
	GinkgoHelper()
	mr := &fleetv1.MemberRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: cj.Namespace, Name: naming.MemberRunName(cj.Name, cluster),
			Labels: map[string]string{fleetv1.ClusterJobLabel: cj.Name, fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID))}},
		Spec: fleetv1.MemberRunSpec{ClusterJob: cj.Name, ClusterJobUID: string(cj.UID), Cluster: cluster},
	}
	Expect(hubC.Create(ctx, mr)).To(Succeed())
	if st == nil {
		return
	}
	data, omitted, err := noderesults.Encode(st.Published())
	Expect(err).NotTo(HaveOccurred())
	Expect(omitted).To(BeZero())
	mr.Status.Name, mr.Status.Phase = cluster, fleetv1.ClusterRunning
	mr.Status.NodeResults = &fleetv1.NodeResults{ObservedTime: metav1.Now(), Data: data}
	Expect(hubC.Status().Update(ctx, mr)).To(Succeed())
}

var _ = Describe("kubectl fleetjob on a run", Ordered, func() {
	var (
		cj     *fleetv1.ClusterJob
		frozen plan.Plan
		row    = fleetv1.ClusterStatus{
			Name: "runner", Phase: fleetv1.ClusterRunning, Reachable: true, CurrentGroup: ptr.To[int32](0), CurrentGroupName: "batch-1",
			Groups: fleetv1.GroupCounts{Total: 2, Completed: 1, Failed: 1},
			Nodes:  fleetv1.NodeCounts{Total: 4, Succeeded: 1, Failed: 1, Pending: 1, Skipped: 1},
		}
	)

	BeforeAll(func() {
		Expect(run("register", "runner", "--member-context", "member", "--work-namespace", runsNamespace, "--label", "env=ci").err).To(Succeed())
		for i := 1; i <= 3; i++ {
			createNode(fmt.Sprintf("node-%d", i), false)
		}
		createNode("node-4", true)

		// The hub controller does not run here: what it would do is done
		// with the same spoke functions, and the status written by hand.
		cj = wrappers.MakeClusterJob("clean", "default").Batch(2, fleetv1.BatchOrderAlphabetical).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		work := spoke.Run{ClusterJob: cj, Cluster: "runner", Namespace: runsNamespace}
		nodes, err := spoke.ListNodes(ctx, memberC)
		Expect(err).NotTo(HaveOccurred())
		m := spoke.Member{Client: memberC, Live: memberC, Run: work}
		frozen, err = m.EnsurePlan(ctx, nodes)
		Expect(err).NotTo(HaveOccurred())
		st, err := m.Observe(ctx)
		Expect(err).NotTo(HaveOccurred())
		jobs, _, err := m.StartGroup(ctx, &st, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(jobs).To(HaveLen(2))
		finish(&jobs[0], false)
		finish(&jobs[1], true)
		st, err = m.Observe(ctx)
		Expect(err).NotTo(HaveOccurred())
		publishResults(cj, "runner", &st)
		setStatus(cj, fleetv1.PhaseRunning, row)
		// The member is gone from here on: every read below is of the hub.
		Expect(run("unregister", "runner", "--purge", "--member-context", "member").err).To(Succeed())
	})

	It("shows the frozen plan of every cluster, published on the hub", func() {
		r := run("plan", "clean", "--cluster", "runner")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`runner\s+0\s+batch-1\s+2\s+node-1,node-2`))
		Expect(r.out).To(MatchRegexp(`runner\s+1\s+batch-2\s+1\s+node-3`))
		Expect(r.out).To(MatchRegexp(`runner\s+node-4\s+Unschedulable`))

		r = run("plan", "clean", "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var got list[struct {
			Kind     string
			Metadata struct{ Name string }
			Cluster  string
			Plan     plan.Plan
		}]
		Expect(json.Unmarshal([]byte(r.out), &got)).To(Succeed())
		Expect(got.APIVersion).To(Equal("v1"))
		Expect(got.Kind).To(Equal("List"))
		Expect(got.Items).To(HaveLen(1))
		Expect(got.Items[0].Kind).To(Equal("ClusterPlan"))
		Expect(got.Items[0].Metadata.Name).To(Equal("runner"))
		Expect(got.Items[0].Cluster).To(Equal("runner"))
		Expect(got.Items[0].Plan).To(Equal(frozen))

		r = run("plan", "clean", "--no-headers")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(HavePrefix("runner   0   batch-1   2   node-1,node-2\n"))
		Expect(r.out).NotTo(ContainSubstring("CLUSTER"))
	})

	It("lists per-node results of every cluster, published on the hub", func() {
		r := run("status", "clean", "--nodes", "--cluster", "runner")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`runner\s+node-1\s+batch-1\s+clean-node-1-\S+\s+Succeeded\s+<none>\s+<none>\s+\S+Z\s+\S+Z`), "no reason, no exit code")
		Expect(r.out).To(MatchRegexp(`runner\s+node-2\s+batch-1\s+clean-node-2-\S+\s+Failed\s+BackoffLimitExceeded`))
		Expect(r.out).To(MatchRegexp(`runner\s+node-3\s+batch-2\s+<none>\s+Pending`))

		r = run("status", "clean", "--nodes", "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var nodes list[struct{ Kind, Cluster, Node, Phase, Reason string }]
		Expect(json.Unmarshal([]byte(r.out), &nodes)).To(Succeed())
		Expect(nodes.Items).To(Equal([]struct{ Kind, Cluster, Node, Phase, Reason string }{
			{"NodeResult", "runner", "node-1", "Succeeded", ""}, {"NodeResult", "runner", "node-2", "Failed", "BackoffLimitExceeded"}, {"NodeResult", "runner", "node-3", "Pending", ""},
		}))

		r = run("status", "clean", "--nodes", "-o", "name")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("noderesult.cli.fleetjob.io/runner/node-1\nnoderesult.cli.fleetjob.io/runner/node-2\nnoderesult.cli.fleetjob.io/runner/node-3\n"))

		r = run("status", "clean", "--nodes", "-o", `jsonpath={range .items[?(@.phase=="Failed")]}{.node}{"\n"}{end}`)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("node-2\n"))

		r = run("status", "clean", "--nodes", "-o", "custom-columns=NODE:.node,JOB:.job", "--no-headers")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`^node-1   clean-node-1-\S+\nnode-2   clean-node-2-\S+\nnode-3   <none>\n$`))

		r = run("status", "clean", "--nodes", "--failed")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`runner\s+node-2\s+batch-1\s+clean-node-2-\S+\s+Failed`))
		Expect(r.out).NotTo(ContainSubstring("node-1"))
		Expect(r.out).NotTo(ContainSubstring("node-3"))
	})

	It("shows the clusters it could read and names the one it could not, exiting non-zero", func() {
		r := run("status", "clean", "--nodes", "--cluster", "runner", "--cluster", "nowhere")
		Expect(r.err).To(MatchError(ContainSubstring(`cluster nowhere is not in the run of clusterjob default/clean`)))
		Expect(r.out).To(MatchRegexp(`runner\s+node-1\s+batch-1`))
	})

	It("names what is missing when a cluster has no plan", func() {
		other := wrappers.MakeClusterJob("not-started", "default").Obj()
		Expect(hubC.Create(ctx, other)).To(Succeed())
		publishResults(other, "runner", nil)
		r := run("plan", "not-started", "--cluster", "runner")
		Expect(r.err).To(MatchError(ContainSubstring(`cluster runner has no node results of clusterjob default/not-started yet: the run has not started there (not yet reconciled)`)))
		r = run("status", "not-started", "--nodes", "--cluster", "nowhere")
		Expect(r.err).To(MatchError(ContainSubstring(`cluster nowhere is not in the run of clusterjob default/not-started (no memberrun)`)))
		r = run("status", "missing")
		Expect(r.err).To(MatchError(ContainSubstring("clusterjob default/missing not found on the hub")))
	})

	It("draws one line per cluster with progress bars", func() {
		r := run("status", "clean")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("clusterjob default/clean: Running   clusters 0/1   nodes 1/3, 1 skipped   failed 1"))
		Expect(r.out).To(MatchRegexp(`runner\s+Running\s+\[x{10}\.{10}\] 1/2\s+\[#{5}x{5}-{5}\.{5}\] 1/3, 1 skipped\s+1\s+yes`))
		Expect(r.out).NotTo(ContainSubstring("\x1b["), "no colour off a terminal")

		r = run("status", "clean", "-o", "yaml")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("kind: ClusterJob"))
	})

	It("prints the run with kubectl's printers, and its table without headers", func() {
		r := run("status", "clean", "-o", "jsonpath={.status.phase} {.status.summary.nodes.failed}")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("Running 1"))

		r = run("status", "clean", "-o", "name")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("clusterjob.fleetjob.io/clean\n"))

		r = run("status", "clean", "--no-headers")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`^runner +Running +\[x{10}\.{10}\] 1/2 +\[#{5}x{5}-{5}\.{5}\] 1/3, 1 skipped +1 +yes\n$`), "one line: the cluster's")

		r = run("status", "clean", "-o", "wide")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`CLUSTER +PHASE +GROUPS +NODES +FAILED +REACHABLE +CURRENT-GROUP +CLUSTER-ID +MESSAGE`))
		Expect(r.out).To(MatchRegexp(`runner +Running .* yes +batch-1 +<none>`))

		r = run("status", "missing", "-o", "name")
		Expect(cli.ExitCode(r.err)).To(Equal(cli.ExitAPI), "a run the hub does not have")
	})

	It("follows the run with -w until it ends, and fails when it Failed", func() {
		out, errOut := &syncBuffer{}, &syncBuffer{}
		done := make(chan error, 1)
		watchCtx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { done <- runTo(watchCtx, out, errOut, "status", "clean", "-w") }()
		Eventually(out.String).Should(ContainSubstring("runner"))
		Consistently(done, "300ms").ShouldNot(Receive(), "-w returned while the run goes on")

		ended := row
		ended.Phase, ended.Reason, ended.Message = fleetv1.ClusterFailed, "NodeFailed", "1 of 4 nodes failed: node-2"
		setStatus(cj, fleetv1.PhaseFailed, ended, metav1.Condition{Type: fleetv1.ConditionFailed, Status: metav1.ConditionTrue, Reason: "NodeFailed", Message: "1 node failed"})
		var err error
		Eventually(done).Should(Receive(&err))
		var failed *cli.RunFailedError
		Expect(err).To(BeAssignableToTypeOf(failed))
		Expect(err).To(MatchError("clusterjob default/clean Failed: 1 node failed"))
		Expect(cli.ExitCode(err)).To(Equal(cli.ExitRunFailed))
		Expect(strings.Count(out.String(), "clusterjob default/clean:")).To(Equal(2), "a summary per change:\n%s", out)
		Expect(out.String()).To(ContainSubstring("NodeFailed: 1 of 4 nodes failed: node-2"))
	})

	It("gives up waiting with -w --timeout, exit code 4", func() {
		running := wrappers.MakeClusterJob("still-running", "default").Obj()
		Expect(hubC.Create(ctx, running)).To(Succeed())
		setStatus(running, fleetv1.PhaseRunning, fleetv1.ClusterStatus{Name: "runner", Phase: fleetv1.ClusterRunning, Reachable: true})
		r := run("status", "still-running", "-w", "--timeout", "1s")
		Expect(r.err).To(MatchError("timed out after 1s waiting for clusterjob default/still-running to end: it is Running"))
		Expect(cli.ExitCode(r.err)).To(Equal(cli.ExitTimeout))
		Expect(r.out).To(HavePrefix("clusterjob default/still-running: Running"))
	})

	It("returns at once with -w on a run that completed", func() {
		completed := wrappers.MakeClusterJob("completed", "default").Obj()
		Expect(hubC.Create(ctx, completed)).To(Succeed())
		setStatus(completed, fleetv1.PhaseCompleted, fleetv1.ClusterStatus{Name: "runner", Phase: fleetv1.ClusterCompleted, Reachable: true})
		Expect(run("status", "completed", "-w").err).NotTo(HaveOccurred())
	})

	It("suspends and resumes a run", func() {
		r := run("suspend", "clean")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(Equal("clusterjob.fleetjob.io/clean suspended\n"))
		Expect(hubC.Get(ctx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
		Expect(cj.Spec.Suspend).To(Equal(ptr.To(true)))
		Expect(run("resume", "clean").err).NotTo(HaveOccurred())
		Expect(hubC.Get(ctx, client.ObjectKeyFromObject(cj), cj)).To(Succeed())
		Expect(cj.Spec.Suspend).To(Equal(ptr.To(false)))
		Expect(run("suspend", "missing").err).To(MatchError(ContainSubstring("clusterjob default/missing not found")))
	})
})
