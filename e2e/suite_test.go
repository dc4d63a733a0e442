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

// Package e2e is fleetjob's end-to-end suite: a real hub and two real
// member clusters (kwok or kind, brought up by hack/fleet.sh), the hub
// controller as the project ships it, and assertions on the objects in
// the members. Run it with `make e2e`; it only builds with the e2e tag.
package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var (
	ctx = context.Background()
	f   *fleet
	hub hubController
	// recorders watch each member's Jobs during a spec, by member name.
	recorders map[string]*jobRecorder
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "fleetjob e2e suite")
}

var _ = BeforeSuite(func() {
	// A real fleet answers in milliseconds, but a 2-core CI machine running
	// four control planes can stall for seconds.
	SetDefaultEventuallyTimeout(time.Minute)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	SetDefaultConsistentlyDuration(3 * time.Second)
	f = loadFleet()
	By("installing the ClusterJob CRD on the hub")
	f.installCRDs()
	// The hub's registration namespace: register expects an installed hub.
	ensureNamespace(f.hub, workNamespace)
	for _, m := range f.members {
		By("registering " + m.name + " with kubectl fleetjob")
		f.register(m)
	}
	By("starting the hub controller")
	hub = newHubController(f)
	hub.start()
})

var _ = AfterSuite(func() {
	if hub != nil {
		hub.kill()
	}
})

var _ = BeforeEach(func() {
	recorders = map[string]*jobRecorder{}
	for _, m := range f.members {
		recorders[m.name] = startRecorder(m)
	}
	DeferCleanup(func() {
		for _, r := range recorders {
			r.stop()
		}
	})
})

// Before cleanup: what a failed spec leaves is what explains it.
var _ = JustAfterEach(func() {
	if report := CurrentSpecReport(); report.Failed() {
		dumpArtifacts(report, "")
	}
})

// Every spec starts from an empty fleet: no ClusterJob on the hub, no
// fleetjob object in a member. The controller must run for ClusterJobs to
// go: its finalizer empties the members first.
var _ = AfterEach(func() {
	restoreFleet()
	list := &fleetv1.ClusterJobList{}
	Expect(f.hub.List(ctx, list, client.InNamespace(testNamespace))).To(Succeed())
	for i := range list.Items {
		Expect(client.IgnoreNotFound(f.hub.Delete(ctx, &list.Items[i]))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		g.Expect(f.hub.List(ctx, list, client.InNamespace(testNamespace))).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}).Should(Succeed(), "every ClusterJob is deleted")
	managed := client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue}
	for _, m := range f.members {
		Eventually(func(g Gomega) {
			jobs, cms, pods := &batchv1.JobList{}, &corev1.ConfigMapList{}, &corev1.PodList{}
			g.Expect(m.client.List(ctx, jobs, client.InNamespace(workNamespace), managed)).To(Succeed())
			g.Expect(m.client.List(ctx, cms, client.InNamespace(workNamespace), managed)).To(Succeed())
			g.Expect(m.client.List(ctx, pods, client.InNamespace(workNamespace), managed)).To(Succeed())
			g.Expect(jobs.Items).To(BeEmpty())
			g.Expect(cms.Items).To(BeEmpty())
			g.Expect(pods.Items).To(BeEmpty())
		}).Should(Succeed(), "%s has no fleetjob object left", m.name)
	}
})

// What cleanup left, for a failure in cleanup (or an interrupted spec).
var _ = ReportAfterEach(func(report SpecReport) {
	if report.Failed() {
		dumpArtifacts(report, "after-cleanup")
	}
})

// restoreFleet undoes what a spec that failed half-way may have left: a
// member stopped or unregistered, the controller killed. A member still
// registered is left as it is: registering it again would rotate its token
// and make the hub reconnect to it.
func restoreFleet() {
	GinkgoHelper()
	for _, m := range f.members {
		probe, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := m.client.List(probe, &corev1.NodeList{}, client.Limit(1))
		cancel()
		if err != nil {
			GinkgoWriter.Printf("Starting %s again: %v\n", m.name, err)
			f.startAPIServer(m)
		}
		if !f.registered(m) {
			GinkgoWriter.Printf("Registering %s again\n", m.name)
			f.register(m)
		}
	}
	if !hub.running() {
		hub.start()
	}
}
