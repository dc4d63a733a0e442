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
	"encoding/json"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

// previewLabel marks the nodes of these specs: the previewed ClusterJob
// selects them only, whatever nodes other specs create in the member.
const previewLabel = "fleetjob.io/preview-spec"

// createPreviewNode creates a Ready node labelled previewLabel, cordoned
// if asked.
func createPreviewNode(name string, cordoned bool) {
	GinkgoHelper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{previewLabel: "yes"}}}
	Expect(memberC.Create(ctx, node)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(memberC.Delete(ctx, node))).To(Succeed()) })
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	Expect(memberC.Status().Update(ctx, node)).To(Succeed())
	// TaintNodesByCondition taints a new node not-ready; no node
	// lifecycle controller runs here to lift it.
	node.Spec.Taints, node.Spec.Unschedulable = nil, cordoned
	Expect(memberC.Update(ctx, node)).To(Succeed())
}

var _ = Describe("kubectl fleetjob plan -f", Ordered, func() {
	const ns, set = "preview-team", "preview-set"
	var file string

	writeJob := func(cj *fleetv1.ClusterJob) string {
		GinkgoHelper()
		cj.APIVersion, cj.Kind = fleetv1.GroupVersion.String(), "ClusterJob"
		data, err := yaml.Marshal(cj)
		Expect(err).NotTo(HaveOccurred())
		path := filepath.Join(GinkgoT().TempDir(), "clusterjob.yaml")
		Expect(os.WriteFile(path, data, 0o600)).To(Succeed())
		return path
	}

	BeforeAll(func() {
		Expect(hubC.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		cs := &fleetv1.ClusterSet{ObjectMeta: metav1.ObjectMeta{Name: set}, Spec: fleetv1.ClusterSetSpec{PodSecurity: fleetv1.PodSecurityBaseline}}
		b := &fleetv1.ClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: set}, Spec: fleetv1.ClusterSetBindingSpec{ClusterSet: set}}
		for _, obj := range []client.Object{cs, b} {
			Expect(hubC.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() { Expect(hubC.Delete(ctx, obj)).To(Succeed()) })
		}
		for _, name := range []string{"preview-1", "preview-2"} {
			m := publishMember(name, set, fleetv1.MemberClusterStatus{WorkNamespace: "jobs"})
			DeferCleanup(func() { Expect(hubC.Delete(ctx, m)).To(Succeed()) })
		}
		createPreviewNode("preview-node-1", false)
		createPreviewNode("preview-node-2", false)
		createPreviewNode("preview-node-3", true)
		file = writeJob(wrappers.MakeClusterJob("preview-run", ns).
			ClusterLabels(map[string]string{fleetv1.ClusterSetLabel: set}).
			NodeLabels(map[string]string{previewLabel: "yes"}).
			Batch(1, fleetv1.BatchOrderAlphabetical).Obj())
	})

	It("previews the run with the hub's planner on the member's real nodes, and creates nothing", func() {
		r := run("plan", "-f", file, "--member-context", "preview-1=member")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("Preview of clusterjob preview-team/preview-run: nothing was created; the hub accepted it in a server dry run.\n"))
		Expect(r.out).To(ContainSubstring("Selected 2 clusters by spec.clusterSelector in the cluster sets bound to namespace preview-team (preview-set)"))
		Expect(r.out).To(ContainSubstring("preview-1   set preview-set   pod security baseline: allowed   window: any time   starts now\n" +
			"  2 nodes in 2 groups, 1 skipped (nodes read with context member)\n"))
		Expect(r.out).To(MatchRegexp(`(?m)^  batch-1 +1 +preview-node-1$`))
		Expect(r.out).To(MatchRegexp(`(?m)^  batch-2 +1 +preview-node-2$`))
		Expect(r.out).To(MatchRegexp(`(?m)^  preview-node-3 +Unschedulable +node is cordoned$`))
		Expect(r.out).To(ContainSubstring("preview-2   set preview-set   pod security baseline: allowed   window: any time   starts now\n" +
			"  nodes not read: pass --member-context preview-2=CONTEXT\n"))

		jobs := &fleetv1.ClusterJobList{}
		Expect(hubC.List(ctx, jobs, client.InNamespace(ns))).To(Succeed())
		Expect(jobs.Items).To(BeEmpty(), "a preview created a ClusterJob")
	})

	It("prints the previews as a List for -o json, the ClusterJob as the hub defaulted it", func() {
		r := run("plan", "-f", file, "--member-context", "preview-1=member", "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		var got list[struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Start string `json:"start"`
			Plan  *struct {
				Groups []struct {
					Nodes []string `json:"nodes"`
				} `json:"groups"`
			} `json:"plan"`
		}]
		Expect(json.Unmarshal([]byte(r.out), &got)).To(Succeed())
		Expect(got.Items).To(HaveLen(2))
		Expect(got.Items[0].Kind).To(Equal("ClusterPreview"))
		Expect(got.Items[0].Metadata.Name).To(Equal("preview-1"))
		Expect(got.Items[0].Plan.Groups).To(HaveLen(2))
		Expect(got.Items[1].Plan).To(BeNil())
	})

	It("tells, for a run that drains, whether each cluster's set allows drains", func() {
		cj := wrappers.MakeClusterJob("preview-drain", ns).ClusterLabels(map[string]string{fleetv1.ClusterSetLabel: set}).
			NodeLabels(map[string]string{previewLabel: "yes"}).Batch(1, fleetv1.BatchOrderAlphabetical).Obj()
		cj.Spec.NodePreparation = &fleetv1.NodePreparation{Drain: &fleetv1.Drain{}}
		drain := writeJob(cj)
		r := run("plan", "-f", drain)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("preview-1   set preview-set   pod security baseline: allowed   window: any time   fails DrainNotAllowed\n" +
			"  drain: refused: DrainNotAllowed: ClusterSet preview-set does not allow drains (spec.allowDrain): spec.nodePreparation.drain cannot run in cluster preview-1\n"))

		cs := &fleetv1.ClusterSet{}
		Expect(hubC.Get(ctx, client.ObjectKey{Name: set}, cs)).To(Succeed())
		cs.Spec.AllowDrain = true
		Expect(hubC.Update(ctx, cs)).To(Succeed())
		DeferCleanup(func() {
			Expect(hubC.Get(ctx, client.ObjectKey{Name: set}, cs)).To(Succeed())
			cs.Spec.AllowDrain = false
			Expect(hubC.Update(ctx, cs)).To(Succeed())
		})
		r = run("plan", "-f", drain)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("preview-1   set preview-set   pod security baseline: allowed   window: any time   starts now\n" +
			"  drain: allowed by set preview-set (spec.allowDrain)\n"))
		Expect(r.out).NotTo(ContainSubstring("DrainNotAllowed"))
	})

	It("reports what the API server's validation refuses, naming the field", func() {
		bad := writeJob(wrappers.MakeClusterJob("preview-bad", ns).ClusterLabels(map[string]string{fleetv1.ClusterSetLabel: set}).
			Batch(0, fleetv1.BatchOrderAlphabetical).Obj())
		r := run("plan", "-f", bad)
		Expect(r.err).To(MatchError(And(ContainSubstring("the hub refuses clusterjob preview-team/preview-bad (server dry run, nothing was created)"),
			ContainSubstring("spec.strategy.batch.size"))))

		r = run("plan", "-f", bad, "--validate=false", "--member-context", "preview-1=member")
		Expect(r.err).To(MatchError(ContainSubstring("cluster preview-1 (--member-context preview-1=member): planning: spec.strategy.batch.size: must be at least 1")))
	})
})
