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

package validation

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/hub/fleet"
)

// maxObjectBytes is the API server's request (and etcd value) limit for one
// object; the status must leave room for the spec, its ~700 KB-in-the-CRD Job
// template and managedFields, so it is held to a third.
const maxObjectBytes = 3 * 1024 * 1024 / 2

var _ = Describe("Writing a ClusterJob status", func() {
	var cj *fleetv1.ClusterJob

	BeforeEach(func() {
		cj = makeClusterJob().Batch(3, "").Obj()
		Expect(createGenerated(cj)).To(Succeed())
	})

	It("accepts 100 clusters with every field at its maximum, well under the object limit", func() {
		size := writeMaximalStatus(cj, 100)
		Expect(cj.Status.Clusters).To(HaveLen(100))
		Expect(size).To(BeNumerically("<", maxObjectBytes/2))
	})

	It("keeps 100 clusters with every field at its maximum under a third of the object limit", func() {
		Expect(writeMaximalStatus(cj, 100)).To(BeNumerically("<", maxObjectBytes/3))
	})

	It("keeps MaxClusterRows clusters with every field at its maximum under two thirds of the object limit", func() {
		Expect(writeMaximalStatus(cj, fleetv1.MaxClusterRows)).To(BeNumerically("<", 2*maxObjectBytes/3))
	})

	It("rejects 6 failedNodes, naming the field", func() {
		cj.Status = maximalStatus(2)
		cj.Status.Clusters[1].FailedNodes = append(cj.Status.Clusters[1].FailedNodes, fleetv1.NodeFailure{Node: "node-6"})
		expectInvalid(k8sClient.Status().Update(ctx, cj),
			"status.clusters", "failedNodes must have at most 5 items")
	})

	It("rejects an over-long cluster message, naming the field", func() {
		cj.Status = maximalStatus(2)
		cj.Status.Clusters[0].Message = repeat("m", fleetv1.MaxClusterMessageLength+1)
		expectInvalid(k8sClient.Status().Update(ctx, cj),
			"status.clusters[0].message", "Too long", fmt.Sprint(fleetv1.MaxClusterMessageLength))
	})

	It("rejects an over-long failed-node message, naming the field", func() {
		cj.Status = maximalStatus(1)
		cj.Status.Clusters[0].FailedNodes[4].Message = repeat("m", fleetv1.MaxFailureMessageLength+1)
		expectInvalid(k8sClient.Status().Update(ctx, cj),
			"status.clusters[0].failedNodes[4].message", "Too long", fmt.Sprint(fleetv1.MaxFailureMessageLength))
	})

	It("rejects MaxClusterRows+1 clusters, naming the field", func() {
		cj.Status.Clusters = make([]fleetv1.ClusterStatus, fleetv1.MaxClusterRows+1)
		for i := range cj.Status.Clusters {
			cj.Status.Clusters[i] = fleetv1.ClusterStatus{Name: fmt.Sprintf("member-%03d", i)}
		}
		expectInvalid(k8sClient.Status().Update(ctx, cj),
			"status.clusters", fmt.Sprintf("must have at most %d items", fleetv1.MaxClusterRows))
	})

	It("keeps a run of MaxClusters (2,000) clusters, every row at its maximum, under 64 KiB stored", func() {
		rows := maximalStatus(fleetv1.MaxClusters).Clusters
		runs := make([]fleet.MemberRun, len(rows))
		for i, row := range rows {
			row.Phase = []fleetv1.ClusterPhase{fleetv1.ClusterFailed, fleetv1.ClusterRunning, fleetv1.ClusterCompleted}[i%3]
			runs[i] = fleet.MemberRun{Cluster: row.Name, Admitted: true, Row: row}
		}
		in := fleet.Input{Spec: &cj.Spec, Runs: runs, Now: time.Now(), Created: time.Now()}
		prev := maximalStatus(0)
		cj.Status = fleet.Status(in, fleet.Decide(in), &prev, 1)
		Expect(cj.Status.NotableClusters).To(HaveLen(fleet.MaxNotableClusters))
		Expect(cj.Status.Summary.Clusters.Total).To(BeEquivalentTo(fleetv1.MaxClusters))
		Expect(k8sClient.Status().Update(ctx, cj)).To(Succeed())
		raw := storedJSON(cj)
		report := fmt.Sprintf("%d bytes (%.1f KiB) for %d clusters: status %d, managedFields %d",
			len(raw), float64(len(raw))/1024, fleetv1.MaxClusters, partSize(raw, "status"), partSize(raw, "metadata", "managedFields"))
		AddReportEntry("ClusterJob size of a 2,000-cluster run", report)
		GinkgoWriter.Println("ClusterJob size of a 2,000-cluster run:", report)
		Expect(len(raw)).To(BeNumerically("<", 64*1024))
	})

	It("ignores a spec change sent through the status subresource", func() {
		cj.Spec.Strategy.Batch.Size = 7
		cj.Status.Phase = fleetv1.PhaseRunning
		Expect(k8sClient.Status().Update(ctx, cj)).To(Succeed())
		Expect(cj.Spec.Strategy.Batch.Size).To(BeEquivalentTo(3))
		Expect(cj.Status.Phase).To(Equal(fleetv1.PhaseRunning))
	})
})

// writeMaximalStatus writes maximalStatus(n) through the status subresource
// and returns the size of the stored object, reported with its parts.
func writeMaximalStatus(cj *fleetv1.ClusterJob, n int) int {
	GinkgoHelper()
	cj.Status = maximalStatus(n)
	Expect(k8sClient.Status().Update(ctx, cj)).To(Succeed())
	raw := storedJSON(cj)
	report := fmt.Sprintf("%d bytes (%.1f KiB, %.1f%% of limit/3 = %d) for %d clusters: status %d, managedFields %d",
		len(raw), float64(len(raw))/1024, 100*float64(len(raw))/(maxObjectBytes/3), maxObjectBytes/3, n,
		partSize(raw, "status"), partSize(raw, "metadata", "managedFields"))
	AddReportEntry("ClusterJob size with a maximal status", report)
	GinkgoWriter.Println("ClusterJob size with a maximal status:", report)
	return len(raw)
}

// maximalStatus returns a status for n clusters with every bounded string at
// its MaxLength, MaxFailedNodeSamples failed nodes per cluster, every time
// set, and the four condition types with full-length reasons and one-line
// messages (a condition names at most a few items, so its message is short).
func maximalStatus(n int) fleetv1.ClusterJobStatus {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	s := fleetv1.ClusterJobStatus{
		ObservedGeneration: 1,
		Phase:              fleetv1.PhaseRunning,
		StartTime:          &now,
		CompletionTime:     &now,
		Summary: fleetv1.Summary{
			Clusters:        fleetv1.ClusterCounts{Total: 1e6, Running: 1e6, Completed: 1e6, Failed: 1e6, Unreachable: 1e6},
			Nodes:           maxNodeCounts(),
			ClusterProgress: repeat("9", 32),
			NodeProgress:    repeat("9", 64),
		},
	}
	for _, t := range []string{fleetv1.ConditionProgressing, fleetv1.ConditionComplete, fleetv1.ConditionFailed, fleetv1.ConditionSuspended} {
		s.Conditions = append(s.Conditions, metav1.Condition{
			Type: t, Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: now,
			Reason:  "R" + repeat("r", 1023),
			Message: repeat("m", 256),
		})
	}
	for i := range n {
		c := fleetv1.ClusterStatus{
			Name:             fmt.Sprintf("member-%03d-", i) + repeat("c", 253-len("member-000-")),
			Phase:            fleetv1.ClusterRunning,
			Reachable:        true,
			Reason:           repeat("Reason", 64),
			Message:          repeat("message ", fleetv1.MaxClusterMessageLength),
			UnreachableSince: &now,
			Groups:           fleetv1.GroupCounts{Total: 1e6, Completed: 1e6, Failed: 1e6},
			CurrentGroup:     ptr.To[int32](1e6),
			CurrentGroupName: repeat("g", 63),
			Nodes:            maxNodeCounts(),
			StartTime:        &now,
			CompletionTime:   &now,
		}
		for j := range fleetv1.MaxFailedNodeSamples {
			c.FailedNodes = append(c.FailedNodes, fleetv1.NodeFailure{
				Node:    fmt.Sprintf("node-%d-", j) + repeat("n", 253-len("node-0-")),
				Group:   repeat("g", 63),
				Job:     repeat("j", 63),
				Reason:  repeat("BackoffLimitExceeded", 64),
				Message: repeat("Job has reached the specified backoff limit. ", fleetv1.MaxFailureMessageLength),
			})
		}
		s.Clusters = append(s.Clusters, c)
	}
	return s
}

func maxNodeCounts() fleetv1.NodeCounts {
	return fleetv1.NodeCounts{Total: 1e6, Pending: 1e6, Running: 1e6, Succeeded: 1e6, Failed: 1e6, Skipped: 1e6}
}

// storedJSON returns the object as the API server serializes it in JSON,
// managedFields included: the form a custom resource is stored in etcd and
// held to the object size limit.
func storedJSON(cj *fleetv1.ClusterJob) []byte {
	GinkgoHelper()
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	raw, err := cs.Discovery().RESTClient().Get().
		AbsPath("/apis", fleetv1.GroupVersion.Group, fleetv1.GroupVersion.Version,
			"namespaces", cj.Namespace, "clusterjobs", cj.Name).
		DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	return raw
}

// partSize returns the JSON length of the field at path in raw.
func partSize(raw []byte, path ...string) int {
	GinkgoHelper()
	var obj map[string]any
	Expect(json.Unmarshal(raw, &obj)).To(Succeed())
	part, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	Expect(err).NotTo(HaveOccurred())
	Expect(found).To(BeTrue(), "%v", path)
	b, err := json.Marshal(part)
	Expect(err).NotTo(HaveOccurred())
	return len(b)
}
