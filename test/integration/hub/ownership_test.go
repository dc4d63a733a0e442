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

package hub

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// Guarantee 3: fleetjob touches only what it created, for that run, from
// that hub; and deleting a run ends, whatever the members do.
var _ = Describe("Ownership of member objects", func() {
	var stopHub func()

	AfterEach(func() { cleanUp(stopHub) })

	It("never deletes another hub's Jobs or plans, across reconnects and periodic sweeps, and sweeps its own orphans", func() {
		a := members["member-a"]
		register(a, admin, nil)
		foreign := []client.Object{
			// Another hub's run in the same work namespace.
			memberJob("other-hub-job", "4b0f6e1a-0000-4000-8000-000000000001", "other-hub"),
			memberPlan("other-hub-plan", "4b0f6e1a-0000-4000-8000-000000000001", "other-hub"),
			// An object without a hub label: from before it, or hand-made.
			memberJob("no-hub-job", "4b0f6e1a-0000-4000-8000-000000000002", ""),
		}
		own := []client.Object{
			memberJob("own-orphan-job", "4b0f6e1a-0000-4000-8000-000000000003", testHubID),
			memberPlan("own-orphan-plan", "4b0f6e1a-0000-4000-8000-000000000003", testHubID),
		}
		for _, o := range foreign {
			Expect(a.client.Create(ctx, o)).To(Succeed())
		}
		DeferCleanup(func() {
			for _, o := range foreign {
				Expect(client.IgnoreNotFound(a.client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)))).To(Succeed())
			}
		})
		stopHub = startHub(hubOptions{gcInterval: time.Second})
		cj := makeClusterJob("beside-another-hub").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		// This hub's orphans, made after it connected (so the pass at
		// connect time cannot be what removes them), go without any change
		// of the member's connection: the sweep runs every second here
		// (every 5 minutes by default).
		for _, o := range own {
			Expect(a.client.Create(ctx, o)).To(Succeed())
		}
		for _, o := range own {
			Eventually(func() error {
				return a.client.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))
			}).
				WithTimeout(15 * time.Second).Should(Satisfy(isNotFound))
		}
		// A reconnect runs garbage collection too.
		unregister("member-a")
		register(a, admin, nil)
		Eventually(func(g Gomega) { g.Expect(rowOf(g, cj, 0).Phase).To(Equal(fleetv1.ClusterCompleted)) }).Should(Succeed())
		Consistently(func(g Gomega) {
			for _, o := range foreign {
				g.Expect(a.client.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))).To(Succeed())
			}
			g.Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)))
		}).WithTimeout(3 * time.Second).Should(Succeed())
		for _, o := range foreign {
			Expect(a.client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		}
	})

	It("refuses a second registration of one cluster, DuplicateCluster, and runs each node once", func() {
		a := members["member-a"]
		register(a, admin, map[string]string{"env": "a"})
		stopHub = startHub(hubOptions{})
		warmUp := makeClusterJob("before-alias").Clusters(map[string]string{"env": "a"}).Obj()
		Expect(hubC.Create(ctx, warmUp)).To(Succeed())
		Eventually(phaseOf(warmUp)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))

		// creationTimestamp counts seconds and the older registration runs
		// the cluster: the alias must be younger, or the first name wins.
		original := &corev1.Secret{}
		Expect(hubC.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: "member-a"}, original)).To(Succeed())
		Eventually(time.Now).Should(BeTemporally(">", original.CreationTimestamp.Add(time.Second)))
		register(&member{name: "alias-a", env: a.env}, admin, map[string]string{"env": "a"})
		DeferCleanup(unregister, "alias-a")
		Eventually(memberReason("alias-a")).Should(Equal(fleetv1.ClusterReasonDuplicateCluster))
		cj := makeClusterJob("with-alias").Clusters(map[string]string{"env": "a"}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		rows := get(cj)(Default).Status.Clusters
		Expect(rows).To(HaveLen(2))
		Expect(rows[0].Name).To(Equal("alias-a"))
		Expect(rows[0].Reason).To(Equal(fleetv1.ClusterReasonDuplicateCluster))
		Expect(rows[0].Message).To(ContainSubstring("registered already as member-a"))
		Expect(rows[1].Phase).To(Equal(fleetv1.ClusterCompleted))
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)), "one Job per node")
		Eventually(func(g Gomega) {
			g.Expect(eventNotes(g, workNamespace, "alias-a", fleetv1.ClusterReasonDuplicateCluster)).NotTo(BeEmpty())
		}).Should(Succeed())
	})

	It("decides between two registrations of one cluster the same way across hub restarts, whichever connects first", func() {
		a := members["member-a"]
		proxy := newOutage(a.env.Config.Host)
		registerThrough(a, proxy, map[string]string{"env": "original"})
		a.runner.hold(true)
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("duplicate-restart").Batch(2).Clusters(map[string]string{"env": "original"}).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(a, cj)) }).Should(Equal(2))
		// creationTimestamp counts seconds: the alias must be younger.
		original := &corev1.Secret{}
		Expect(hubC.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: "member-a"}, original)).To(Succeed())
		Eventually(time.Now).Should(BeTemporally(">", original.CreationTimestamp.Add(time.Second)))
		register(&member{name: "alias-a", env: a.env}, admin, map[string]string{"env": "alias"})
		DeferCleanup(unregister, "alias-a")
		Eventually(memberReason("alias-a")).Should(Equal(fleetv1.ClusterReasonDuplicateCluster))

		By("restarting the hub while the original registration cannot connect, so the alias is tried first")
		stopHub()
		proxy.cut()
		stopHub = startHub(hubOptions{})
		Eventually(memberReason("alias-a")).ShouldNot(BeElementOf("", fleetv1.ClusterReasonConnecting))
		proxy.restore()
		a.runner.hold(false)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)), "one Job per node")
		Expect(memberReason("alias-a")()).To(Equal(fleetv1.ClusterReasonDuplicateCluster))
		Eventually(func(g Gomega) {
			g.Expect(eventNotes(g, workNamespace, "alias-a", fleetv1.ClusterReasonDuplicateCluster)).
				To(ContainElement(ContainSubstring("registered already as member-a")))
		}).Should(Succeed())

		By("restarting again with no run in the cluster: the alias connects first, and the older registration takes the cluster back")
		stopHub()
		proxy.cut()
		stopHub = startHub(hubOptions{})
		Eventually(memberReason("alias-a")).Should(Equal(fleetv1.ClusterReasonConnected))
		proxy.restore()
		Eventually(memberReason("member-a")).WithTimeout(30 * time.Second).Should(Equal(fleetv1.ClusterReasonConnected))
		Expect(memberReason("alias-a")()).To(Equal(fleetv1.ClusterReasonDuplicateCluster))
		viaAlias := makeClusterJob("duplicate-via-alias").Clusters(map[string]string{"env": "alias"}).Obj()
		Expect(hubC.Create(ctx, viaAlias)).To(Succeed())
		Eventually(phaseOf(viaAlias)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Expect(rowOf(Default, viaAlias, 0).Reason).To(Equal(fleetv1.ClusterReasonDuplicateCluster))
		Expect(jobNodes(a, viaAlias)).To(BeEmpty())
	})

	It("fails a cluster whose registration is re-pointed at another cluster mid-run, ClusterChanged, creating nothing there", func() {
		a, b := members["member-a"], members["member-b"]
		register(a, admin, nil)
		a.runner.hold(true)
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("re-pointed").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(a, cj)) }).Should(Equal(2))
		Expect(rowOf(Default, cj, 0).ClusterID).NotTo(BeEmpty(), "the row records the cluster the plan was frozen in")

		u, err := b.env.AddUser(admin, nil)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig, err := u.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		secret := &corev1.Secret{}
		Expect(hubC.Get(ctx, client.ObjectKey{Namespace: workNamespace, Name: "member-a"}, secret)).To(Succeed())
		secret.Data[fleetv1.KubeconfigKey] = kubeconfig
		Expect(hubC.Update(ctx, secret)).To(Succeed())

		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseFailed))
		Expect(rowOf(Default, cj, 0).Reason).To(Equal(fleetv1.ReasonClusterChanged))
		Consistently(func() []batchv1.Job { return memberJobs(b) }).WithTimeout(2 * time.Second).Should(BeEmpty())
		cms := &corev1.ConfigMapList{}
		Expect(b.client.List(ctx, cms, client.MatchingLabels{fleetv1.ManagedByLabel: fleetv1.ManagedByValue})).To(Succeed())
		Expect(cms.Items).To(BeEmpty(), "no plan or record in the new cluster")
		a.runner.hold(false)
		Expect(jobNodes(a, cj)).To(HaveLen(2))

		// The run left its first group's Jobs in the old cluster; once the
		// run is deleted and the registration points back there, garbage
		// collection removes them.
		Expect(hubC.Delete(ctx, cj)).To(Succeed())
		Eventually(func() error { return hubC.Get(ctx, client.ObjectKeyFromObject(cj), &fleetv1.ClusterJob{}) }).Should(Satisfy(isNotFound))
		unregister("member-a")
		register(a, admin, nil)
		Eventually(func() []batchv1.Job { return memberJobs(a) }).Should(BeEmpty())
	})

	It("ends a deletion held by a foreign finalizer at the deadline, with a Warning naming the cluster", func() {
		a := members["member-a"]
		register(a, admin, nil)
		stopHub = startHub(hubOptions{unreachableTimeout: 3 * time.Second})
		cj := makeClusterJob("held-deletion").Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		held := &memberJobs(a)[0]
		patch := client.MergeFrom(held.DeepCopy())
		held.Finalizers = append(held.Finalizers, "example.com/audit")
		Expect(a.client.Patch(ctx, held, patch)).To(Succeed())
		release := func() {
			j := &batchv1.Job{}
			if a.client.Get(ctx, client.ObjectKeyFromObject(held), j) == nil {
				patch := client.MergeFrom(j.DeepCopy())
				j.Finalizers = nil
				Expect(a.client.Patch(ctx, j, patch)).To(Succeed())
			}
		}
		DeferCleanup(release)

		Expect(hubC.Delete(ctx, cj)).To(Succeed())
		Eventually(func() error { return hubC.Get(ctx, client.ObjectKeyFromObject(cj), &fleetv1.ClusterJob{}) }).
			WithTimeout(15 * time.Second).Should(Satisfy(isNotFound))
		Eventually(func(g Gomega) {
			g.Expect(eventNotes(g, cj.Namespace, cj.Name, fleetv1.EventReasonCleanupAbandoned)).To(ContainElement(And(
				ContainSubstring("cluster member-a"), ContainSubstring("1 Jobs and 0 ConfigMaps left behind"))))
		}).Should(Succeed())
		// Someone else's finalizer is theirs to remove.
		Expect(a.client.Get(ctx, client.ObjectKeyFromObject(held), &batchv1.Job{})).To(Succeed())
		release()
	})

	It("does not time out a member because of the hub's own downtime, past both timeouts, with failingSince across it", func() {
		a := members["member-a"]
		user, revoke := revocable(a, "revoked-hub-down")
		register(a, user, nil)
		a.runner.hold(true)
		// Shorter than the downtime below, long enough for the spec to stop
		// the hub while the member's work fails.
		o := hubOptions{unreachableTimeout: 3 * time.Second, errorTimeout: 6 * time.Second}
		stopHub = startHub(o)
		cj := makeClusterJob("hub-down").Batch(2).Obj()
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func() int { return len(jobNodes(a, cj)) }).Should(Equal(2))
		// The second group's Jobs are refused: the row fails from now on.
		revoke()
		a.runner.hold(false)
		Eventually(func(g Gomega) {
			row := rowOf(g, cj, 0)
			g.Expect(row.Reason).To(Equal(fleetv1.ClusterReasonForbidden))
			g.Expect(row.FailingSince).NotTo(BeNil())
		}).Should(Succeed())
		stopHub()
		downSince := time.Now()
		// Fixed while the hub is down.
		role := &rbacv1.ClusterRole{}
		Expect(a.client.Get(ctx, client.ObjectKey{Name: "revoked-hub-down"}, role)).To(Succeed())
		role.Rules[0].Verbs = []string{"*"}
		Expect(a.client.Update(ctx, role)).To(Succeed())
		// A hub that crash-looped while connecting left this row behind: the
		// member unreachable for far longer than the timeout.
		mr := &memberRuns(Default, get(cj)(Default))[0]
		patch := client.MergeFromWithOptions(mr.DeepCopy(), client.MergeFromWithOptimisticLock{})
		mr.Status.Reachable, mr.Status.Reason = false, fleetv1.ClusterReasonConnecting
		mr.Status.UnreachableSince = ptr.To(metav1.NewTime(time.Now().Add(-time.Hour)))
		Expect(hubC.Status().Patch(ctx, mr, patch)).To(Succeed())

		// A real downtime longer than both timeouts: the row's failingSince
		// and unreachableSince are older than them when the hub returns.
		Eventually(time.Now).WithTimeout(10 * time.Second).Should(BeTemporally(">", downSince.Add(7*time.Second)))
		stopHub = startHub(o)
		Eventually(phaseOf(cj)).WithTimeout(30 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
		row := get(cj)(Default).Status.Clusters[0]
		Expect(row.Reason).NotTo(BeElementOf(fleetv1.ReasonUnreachableTimeout, fleetv1.ClusterReasonForbidden))
		Expect(row.FailingSince).To(BeNil())
		Expect(jobNodes(a, cj)).To(Equal(nodeNames("a", 4)))
	})
})

// memberJob is a Job labelled as fleetjob's, for run uid of hub ("" for
// none), belonging to ClusterJob default/ghost, which does not exist.
func memberJob(name, uid, hub string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: memberMeta(name, uid, hub),
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "work", Image: "busybox"}},
		}}},
	}
}

// memberPlan is a plan ConfigMap like memberJob.
func memberPlan(name, uid, hub string) *corev1.ConfigMap {
	meta := memberMeta(name, uid, hub)
	meta.Labels[fleetv1.ComponentLabel] = "plan"
	return &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"plan.json": `{"groups":[]}`}}
}

func memberMeta(name, uid, hub string) metav1.ObjectMeta {
	labels := map[string]string{fleetv1.ManagedByLabel: fleetv1.ManagedByValue, fleetv1.ClusterJobUIDLabel: uid, fleetv1.ClusterLabel: "member-a"}
	if hub != "" {
		labels[fleetv1.HubLabel] = hub
	}
	return metav1.ObjectMeta{Name: name, Namespace: workNamespace, Labels: labels,
		Annotations: map[string]string{fleetv1.ClusterJobAnnotation: "default/ghost", fleetv1.ClusterAnnotation: "member-a"}}
}

// eventNotes are the notes of the hub events with reason about object name
// in namespace.
func eventNotes(g Gomega, namespace, name, reason string) []string {
	events := &eventsv1.EventList{}
	g.Expect(hubC.List(ctx, events, client.InNamespace(namespace))).To(Succeed())
	var notes []string
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// memberReason is the reason the hub's registry gives for the registration
// name: Connected once engaged, "" while unknown.
func memberReason(name string) func() string {
	return func() string {
		m, _ := registry.Member(name)
		return m.Reason
	}
}

func isNotFound(err error) bool { return err != nil && client.IgnoreNotFound(err) == nil }
