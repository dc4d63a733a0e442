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
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/spoke"
)

// Guarantee 3 with two real hubs: each touches only what it created, for
// that run, from that hub, when both run over one member.
var _ = Describe("Two hubs sharing a member", func() {
	// The suite's hub is hub 2, restarted mid-run; hub 1 has an API server
	// and a manager of its own, and its run is deleted mid-run.
	var (
		stopHub, stopHub1 func()
		env1              *envtest.Environment
		hub1              client.Client
	)

	BeforeEach(func() { stopHub = func() {} })
	AfterEach(func() {
		// Each step runs even if the one before failed: a hub left running
		// would take later specs' runs.
		defer cleanUp(stopHub)
		defer func() { hub1, env1, stopHub1 = nil, nil, nil }()
		if env1 != nil {
			defer func() { Expect(env1.Stop()).To(Succeed()) }()
		}
		if stopHub1 != nil {
			defer stopHub1()
		}
		if hub1 != nil {
			stopSecondHub(hub1, nil)
		}
	})

	It("deletes only the deleted run's objects, and the other hub's run, restarted mid-run, completes whole", func() {
		a := members["member-a"]
		env1 = newHubEnv()
		_, err := env1.Start()
		Expect(err).NotTo(HaveOccurred())
		hub1, err = client.New(env1.Config, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		prepareHub(hub1)
		// Each hub's identity is what a real one defaults to: its own
		// kube-system namespace's UID.
		id1, id2 := kubeSystemUID(hub1), kubeSystemUID(hubC)
		Expect(id1).NotTo(Equal(id2))

		// Both hubs name the cluster member-a, with the same work namespace.
		u, err := a.env.AddUser(admin, nil)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig, err := u.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		Expect(hub1.Create(ctx, registration(a.name, kubeconfig, nil, ""))).To(Succeed())
		registerKubeconfig(a.name, kubeconfig, nil)
		deletions := watchDeletions(a)
		a.runner.hold(true)
		// A sweep every second (5 minutes by default): a hub that took the
		// other's objects for its orphans deletes them within the spec.
		o1 := hubOptions{config: env1.Config, hubID: id1, gcInterval: time.Second}
		o2 := hubOptions{hubID: id2, gcInterval: time.Second}
		stopHub1 = startHub(o1)
		stopHub = startHub(o2)

		// Hub 1's run to delete has the namespace and name of hub 2's run:
		// to hub 2's garbage collection it is a ClusterJob "present with
		// another UID", the very shape of an orphan. Hub 1's other run goes
		// on across hub 2's restart and its connect-time sweep.
		deleted := makeClusterJob("shared").Batch(2).Obj()
		kept := makeClusterJob("kept").Batch(2).Obj()
		run2 := makeClusterJob("shared").Batch(2).Obj()
		Expect(hub1.Create(ctx, deleted)).To(Succeed())
		Expect(hub1.Create(ctx, kept)).To(Succeed())
		Expect(hubC.Create(ctx, run2)).To(Succeed())
		for _, cj := range []*fleetv1.ClusterJob{deleted, kept, run2} {
			Eventually(func() int { return len(jobNodes(a, cj)) }).Should(Equal(2), "the first group of %s runs", cj.UID)
		}
		Expect(phaseOf(run2)(Default)).To(Equal(fleetv1.PhaseRunning))
		planKey := client.ObjectKey{Namespace: workNamespace, Name: naming.PlanName(run2.UID)}
		recordKey := client.ObjectKey{Namespace: workNamespace, Name: naming.ResultsName(run2.UID)}
		plan, rec := &corev1.ConfigMap{}, &corev1.ConfigMap{}
		Expect(a.client.Get(ctx, planKey, plan)).To(Succeed())
		Expect(a.client.Get(ctx, recordKey, rec)).To(Succeed())
		Expect(plan.Labels).To(HaveKeyWithValue(fleetv1.HubLabel, id2))

		By("deleting hub 1's run and restarting hub 2 while every run's first group runs")
		Expect(hub1.Delete(ctx, deleted)).To(Succeed())
		stopHub()
		// The first groups finish while hub 2 is down.
		a.runner.hold(false)
		stopHub = startHub(o2)
		Eventually(func() error { return hub1.Get(ctx, client.ObjectKeyFromObject(deleted), &fleetv1.ClusterJob{}) }).
			Should(Satisfy(isNotFound))
		Eventually(func() []string { return runObjects(a, deleted) }).Should(BeEmpty(), "hub 1's deleted run left nothing")
		ended := BeElementOf(fleetv1.PhaseCompleted, fleetv1.PhaseFailed)
		Eventually(phaseOf(run2)).WithTimeout(30 * time.Second).Should(ended)
		Eventually(phaseOfOn(hub1, kept)).WithTimeout(30 * time.Second).Should(ended)
		// What was deleted first: it explains a failed run.
		ofDeleted := And(HaveField("Hub", id1), HaveField("UID", naming.LabelValue(string(deleted.UID))))
		Expect(deletions.all()).To(HaveEach(ofDeleted), "only hub 1's deleted run lost objects")
		Expect(phaseOf(run2)(Default)).To(Equal(fleetv1.PhaseCompleted))
		Expect(phaseOfOn(hub1, kept)(Default)).To(Equal(fleetv1.PhaseCompleted))
		Expect(jobNodes(a, run2)).To(Equal(nodeNames("a", 4)), "one Job per node")
		Expect(jobNodes(a, kept)).To(Equal(nodeNames("a", 4)), "one Job per node")
		after := &corev1.ConfigMap{}
		Expect(a.client.Get(ctx, planKey, after)).To(Succeed())
		Expect(after.UID).To(Equal(plan.UID))
		Expect(after.ResourceVersion).To(Equal(plan.ResourceVersion), "the plan was never written again")
		Expect(after.Data).To(Equal(plan.Data))
		Expect(after.BinaryData).To(Equal(plan.BinaryData))
		Expect(a.client.Get(ctx, recordKey, after)).To(Succeed())
		Expect(after.UID).To(Equal(rec.UID), "the record is the one written before the restart")
		for node, r := range recorded(Default, a, run2).Nodes.All() {
			Expect(r.Phase).To(Equal(spoke.NodeSucceeded), node)
		}
		Expect(recorded(Default, a, run2).Nodes.Len()).To(Equal(4))

		By("sweeping for two more seconds: every deletion the member saw was of hub 1's deleted run")
		Expect(deletions.all()).To(ContainElement(ofDeleted), "the watch saw hub 1's cleanup")
		Consistently(deletions.all).WithTimeout(2 * time.Second).Should(HaveEach(ofDeleted))
	})
})

// kubeSystemUID is the UID of the kube-system namespace of the hub API
// server c: the identity a hub takes when --hub-id is not set.
func kubeSystemUID(c client.Client) string {
	GinkgoHelper()
	ns := &corev1.Namespace{}
	// kube-apiserver creates kube-system shortly after it starts serving.
	Eventually(func() error { return c.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns) }).Should(Succeed())
	return string(ns.UID)
}

// runObjects names the Jobs and ConfigMaps of cj's run left in m.
func runObjects(m *member, cj *fleetv1.ClusterJob) []string {
	sel := client.MatchingLabels{fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID))}
	jobs, cms := &batchv1.JobList{}, &corev1.ConfigMapList{}
	Expect(m.client.List(ctx, jobs, sel)).To(Succeed())
	Expect(m.client.List(ctx, cms, sel)).To(Succeed())
	var out []string
	for _, j := range jobs.Items {
		out = append(out, "Job "+j.Name)
	}
	for _, cm := range cms.Items {
		out = append(out, "ConfigMap "+cm.Name)
	}
	return out
}

func phaseOfOn(c client.Client, cj *fleetv1.ClusterJob) func(Gomega) fleetv1.Phase {
	return func(g Gomega) fleetv1.Phase { return getOn(c, cj)(g).Status.Phase }
}

// stopSecondHub deletes every ClusterJob of the hub API server c, waits
// until its hub cleaned up after them, and stops that hub.
func stopSecondHub(c client.Client, stop func()) {
	list := &fleetv1.ClusterJobList{}
	Expect(c.List(ctx, list)).To(Succeed())
	for i := range list.Items {
		Expect(client.IgnoreNotFound(c.Delete(ctx, &list.Items[i]))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		g.Expect(c.List(ctx, list)).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}).WithTimeout(30 * time.Second).Should(Succeed())
	if stop != nil {
		stop()
	}
}

// deletion is an object of a member seen deleted, or marked for deletion.
type deletion struct {
	Kind, Name string
	// Hub and UID are its fleetjob.io hub and ClusterJob UID labels.
	Hub, UID string
}

// deletionLog collects the deletions a member's watch saw.
type deletionLog struct {
	mu   sync.Mutex
	seen []deletion
}

func (l *deletionLog) all() []deletion {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]deletion(nil), l.seen...)
}

func (l *deletionLog) add(kind string, obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, deletion{Kind: kind, Name: o.GetName(), Hub: o.GetLabels()[fleetv1.HubLabel], UID: o.GetLabels()[fleetv1.ClusterJobUIDLabel]})
}

// watchDeletions watches m's fleetjob Jobs and ConfigMaps in the work
// namespace until the spec ends, and logs every deletion: an informer, so a
// deletion missed while its watch restarts still shows on the relist.
func watchDeletions(m *member) *deletionLog {
	GinkgoHelper()
	cs, err := kubernetes.NewForConfig(m.env.Config)
	Expect(err).NotTo(HaveOccurred())
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(workNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = fleetv1.ManagedByLabel + "=" + fleetv1.ManagedByValue
		}))
	log := &deletionLog{}
	for kind, inf := range map[string]toolscache.SharedIndexInformer{
		"Job": factory.Batch().V1().Jobs().Informer(), "ConfigMap": factory.Core().V1().ConfigMaps().Informer(),
	} {
		_, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, obj any) {
				if o, ok := obj.(metav1.Object); ok && o.GetDeletionTimestamp() != nil && old.(metav1.Object).GetDeletionTimestamp() == nil {
					log.add(kind, obj)
				}
			},
			DeleteFunc: func(obj any) { log.add(kind, obj) },
		})
		Expect(err).NotTo(HaveOccurred())
	}
	watchCtx, stop := context.WithCancel(ctx)
	DeferCleanup(func() { stop(); factory.Shutdown() })
	factory.Start(watchCtx.Done())
	for typ, synced := range factory.WaitForCacheSync(watchCtx.Done()) {
		Expect(synced).To(BeTrue(), "the watch of %v started", typ)
	}
	return log
}
