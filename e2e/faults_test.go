//go:build e2e

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

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// Faults a member's own controllers bring about, on real control planes:
// every run still ends, and no node runs twice.
var _ = Describe("Faults in a real member", func() {
	It("fails nodes whose pods a ResourceQuota refuses, PodCreateFailed, within nodeStartTimeout, and deletes their Jobs", func() {
		m := f.member("member-1")
		quota := &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-no-pods", Namespace: workNamespace},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
		}
		Expect(m.client.Create(ctx, quota)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(m.client.Delete(ctx, quota))).To(Succeed()) })
		// The member's quota controller must have counted the namespace
		// before the run, or the first pods slip through.
		Eventually(func(g Gomega) {
			g.Expect(m.client.Get(ctx, client.ObjectKeyFromObject(quota), quota)).To(Succeed())
			g.Expect(quota.Status.Hard).To(HaveKey(corev1.ResourcePods))
		}).Should(Succeed())

		cj := makeClusterJob("no-pods").OnlyMember(m.name).Obj()
		cj.Spec.NodeStartTimeout = &metav1.Duration{Duration: 5 * time.Second}
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseFailed)
		r := row(got, m.name)
		Expect(r.Nodes.Failed).To(BeEquivalentTo(len(eligibleNodes(m))))
		Expect(r.FailedNodes).NotTo(BeEmpty())
		for _, n := range r.FailedNodes {
			Expect(n.Reason).To(Equal(fleetv1.NodeReasonPodCreateFailed), "node %s", n.Node)
		}
		Eventually(func() []batchv1.Job { return runJobs(m, cj.UID) }).Should(BeEmpty(), "the Jobs that could not run are deleted")
		Expect(runPods(m, cj.UID)).To(BeEmpty())
		for node, js := range recorders[m.name].jobsPerNode(cj.UID) {
			Expect(js).To(HaveLen(1), "node %s had one Job", node)
		}
	})

	It("keeps the results of nodes whose finished Jobs a TTL deletes, and runs none of them again", func() {
		m := f.member("member-2")
		cj := makeClusterJob("ttl").Batch(3).OnlyMember(m.name).Obj()
		create(cj)
		// A member policy that adds ttlSecondsAfterFinished to every Job,
		// applied here to each Job once it exists; the member's TTL
		// controller deletes them 3 s after they finish.
		done := make(chan struct{})
		DeferCleanup(func() { close(done) })
		go func() {
			defer GinkgoRecover()
			for {
				select {
				case <-done:
					return
				case <-time.After(200 * time.Millisecond):
				}
				list := &batchv1.JobList{}
				if m.client.List(ctx, list, client.InNamespace(workNamespace), client.MatchingLabels{fleetv1.ClusterJobUIDLabel: string(cj.UID)}) != nil {
					continue
				}
				for i := range list.Items {
					j := &list.Items[i]
					if j.Spec.TTLSecondsAfterFinished == nil && j.DeletionTimestamp.IsZero() {
						patch := client.MergeFrom(j.DeepCopy())
						j.Spec.TTLSecondsAfterFinished = ptr.To[int32](3)
						_ = m.client.Patch(ctx, j, patch)
					}
				}
			}
		}()
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		r := row(got, m.name)
		Expect(r.Nodes.Succeeded).To(BeEquivalentTo(len(eligibleNodes(m))))
		Eventually(func() []batchv1.Job { return runJobs(m, cj.UID) }).Should(BeEmpty(), "the TTL controller deleted the finished Jobs")
		perNode := recorders[m.name].jobsPerNode(cj.UID)
		Expect(perNode).To(HaveLen(len(eligibleNodes(m))))
		for node, js := range perNode {
			Expect(js).To(HaveLen(1), "node %s ran once", node)
		}
	})

	It("fails a member whose plan is deleted mid-run, PlanLost, without running a node twice", func() {
		m, other := f.member("member-1"), f.member("member-2")
		cj := makeClusterJob("plan-lost").Batch(2).RunFor(3 * time.Second).Obj()
		create(cj)
		Eventually(func() int { return len(runJobs(m, cj.UID)) }).Should(BeNumerically(">", 0), "%s started", m.name)
		plans := runPlans(m, cj.UID)
		Expect(plans).To(HaveLen(1))
		Expect(m.client.Delete(ctx, &plans[0])).To(Succeed())
		got := waitPhase(cj, fleetv1.PhaseFailed)
		Expect(row(got, m.name).Reason).To(Equal("PlanLost"))
		Expect(row(got, other.name).Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(jobsByGroup(m, cj.UID)).To(HaveLen(1), "no group started after the plan was lost")
		for node, js := range recorders[m.name].jobsPerNode(cj.UID) {
			Expect(js).To(HaveLen(1), "node %s ran once", node)
		}
	})

	It("picks a run up within 30 s of a least-privilege member's work namespace coming back", func() {
		m := f.member("member-2")
		// Deleting the namespace takes the registered identity's Role and
		// ServiceAccount with it: the hub can no longer act there.
		f.kubectlOK(m.name, "delete", "namespace", workNamespace, "--wait=true", "--timeout=60s")
		cj := makeClusterJob("namespace-back").OnlyMember(m.name).Obj()
		create(cj)
		Eventually(func(g Gomega) {
			rows := latest(cj)(g).Status.Clusters
			g.Expect(rows).To(HaveLen(1))
			g.Expect(rows[0].Phase).To(Equal(fleetv1.ClusterPending))
			g.Expect(rows[0].Reason).NotTo(BeElementOf("", "Running", "Pending"))
		}).Should(Succeed(), "the row names what is wrong")
		Consistently(func() []batchv1.Job { return runJobs(m, cj.UID) }).WithTimeout(5 * time.Second).Should(BeEmpty())
		// The fix a user runs: register again, which makes the namespace,
		// the identity and its permissions.
		fixed := time.Now()
		f.register(m)
		Eventually(func(g Gomega) {
			rows := latest(cj)(g).Status.Clusters
			g.Expect(rows).To(HaveLen(1))
			g.Expect(rows[0].Phase).NotTo(Equal(fleetv1.ClusterPending))
		}).WithTimeout(30*time.Second).WithPolling(250*time.Millisecond).Should(Succeed(), "started within 30 s of the fix")
		AddReportEntry("run picked up after the fix", time.Since(fixed).String())
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		Expect(row(got, m.name).Nodes.Succeeded).To(BeEquivalentTo(len(eligibleNodes(m))))
	})

	It("runs on a member registered by a plain Secret with an admin kubeconfig, creating the missing work namespace", func() {
		m := f.member("member-1")
		const ns = "e2e-plain-secret"
		f.unregister(m) // one registration per cluster
		cfg, err := clientcmd.LoadFromFile(m.kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		cfg.CurrentContext = m.name
		if m.server != "" {
			cfg.Clusters[cfg.Contexts[m.name].Cluster].Server = m.server
		}
		data, err := clientcmd.Write(*cfg)
		Expect(err).NotTo(HaveOccurred())
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: m.name, Namespace: workNamespace,
				Labels:      map[string]string{fleetv1.RegistrationLabel: "true", memberNameLabel: m.name},
				Annotations: map[string]string{fleetv1.NamespaceAnnotation: ns}},
			Data: map[string][]byte{fleetv1.KubeconfigKey: data},
		}
		Expect(f.hub.Create(ctx, secret)).To(Succeed())
		DeferCleanup(func() {
			// Only this Secret: cleanup registers the member again under
			// the same name before this runs.
			err := f.hub.Delete(ctx, secret, client.Preconditions{UID: &secret.UID})
			Expect(apierrors.IsNotFound(err) || apierrors.IsConflict(err) || err == nil).To(BeTrue(), "deleting the plain Secret: %v", err)
			Expect(client.IgnoreNotFound(m.client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		})
		Expect(m.client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})).NotTo(Succeed(), "the namespace is absent before the run")

		// This registration lacks the suite's label, so that a spec failing
		// half-way leaves the member to be registered again by cleanup.
		cj := makeClusterJob("plain-secret").Obj()
		cj.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: map[string]string{memberNameLabel: m.name}}
		create(cj)
		got := waitPhase(cj, fleetv1.PhaseCompleted)
		Expect(row(got, m.name).Nodes.Succeeded).To(BeEquivalentTo(len(eligibleNodes(m))))
		Expect(m.client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})).To(Succeed())
		jobs := &batchv1.JobList{}
		Expect(m.client.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{fleetv1.ClusterJobUIDLabel: string(cj.UID)})).To(Succeed())
		Expect(jobs.Items).To(HaveLen(len(eligibleNodes(m))))
		// Deleting the run empties the namespace, while this registration
		// is the member's.
		Expect(f.hub.Delete(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(m.client.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue})).To(Succeed())
			g.Expect(jobs.Items).To(BeEmpty())
		}).Should(Succeed())
		Eventually(func() error { return f.hub.Get(ctx, client.ObjectKeyFromObject(cj), &fleetv1.ClusterJob{}) }).Should(Satisfy(apierrors.IsNotFound))
		Expect(f.hub.Delete(ctx, secret)).To(Succeed())
	})
})
