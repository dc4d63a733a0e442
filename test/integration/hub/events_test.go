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
	admissionv1 "k8s.io/api/admissionregistration/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

var _ = Describe("Events of a run across two members", func() {
	var stopHub func()

	BeforeEach(func() {
		register(members["member-a"], admin, nil)
		register(members["member-b"], admin, nil)
	})

	AfterEach(func() { cleanUp(stopHub) })

	// On a loaded hub both clusters start before the ClusterJob's status
	// changes, so their events regard one version of it; the recorder
	// folds events of one object, reason and action into a series that
	// keeps the first note. The test holds the ClusterJob's status still
	// to make that happen every time.
	It("keeps each cluster's events apart when both regard one version of the ClusterJob", func() {
		lift := holdStatus()
		DeferCleanup(lift)
		stopHub = startHub(hubOptions{})
		cj := makeClusterJob("events-per-cluster").Obj()
		cj.Labels = map[string]string{holdStatusLabel: "true"}
		Expect(hubC.Create(ctx, cj)).To(Succeed())
		Eventually(func(g Gomega) {
			versions := map[string]bool{}
			for _, reason := range []string{fleetv1.EventReasonClusterStarted, fleetv1.EventReasonGroupStarted} {
				events := eventsAbout(g, cj, reason)
				var notes []string
				for _, e := range events {
					notes = append(notes, e.Note)
					versions[e.Regarding.ResourceVersion] = true
				}
				g.Expect(notes).To(ContainElement(HavePrefix("cluster member-a: ")), reason)
				g.Expect(notes).To(ContainElement(HavePrefix("cluster member-b: ")), reason)
			}
			g.Expect(versions).To(HaveLen(1), "every event regards the one version of the ClusterJob")
		}).Should(Succeed())

		lift()
		// Nothing else changes: the hub's next try of the status write it
		// was refused comes within its longest backoff (30 s), however
		// many times it was refused while the status was held.
		Eventually(phaseOf(cj)).WithTimeout(60 * time.Second).Should(Equal(fleetv1.PhaseCompleted))
	})
})

// eventsAbout are the hub's events with reason about cj.
func eventsAbout(g Gomega, cj *fleetv1.ClusterJob, reason string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(hubC.List(ctx, list, client.InNamespace(cj.Namespace))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.UID == cj.UID && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// holdStatusLabel marks the ClusterJobs whose status holdStatus holds.
const holdStatusLabel = "test.fleetjob.io/hold-status"

// holdStatus makes the hub's API server refuse every status write of a
// labelled ClusterJob after the one that records its selected clusters,
// and returns a function that lifts the refusal.
func holdStatus() func() {
	GinkgoHelper()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "hold-clusterjob-status"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule: admissionv1.Rule{APIGroups: []string{fleetv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"clusterjobs/status"}}},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{Name: "labelled",
				Expression: "has(object.metadata.labels) && '" + holdStatusLabel + "' in object.metadata.labels"}},
			Validations: []admissionv1.Validation{{Expression: "!has(oldObject.status) || !has(oldObject.status.selectedClusters)",
				Message: "status held still by the test"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	Expect(hubC.Create(ctx, policy)).To(Succeed())
	Expect(hubC.Create(ctx, binding)).To(Succeed())
	// The policy takes a moment to be enforced: probe with a ClusterJob no
	// hub runs (none runs yet) whose selection is recorded.
	probe := makeClusterJob("hold-status-probe").Obj()
	probe.Labels = map[string]string{holdStatusLabel: "true"}
	Expect(hubC.Create(ctx, probe)).To(Succeed())
	probe.Status.SelectedClusters = []string{"none"}
	Expect(hubC.Status().Update(ctx, probe)).To(Succeed())
	Eventually(func() error {
		p := &fleetv1.ClusterJob{}
		if err := hubC.Get(ctx, client.ObjectKeyFromObject(probe), p); err != nil {
			return err
		}
		p.Status.Phase = fleetv1.PhaseFailed
		return hubC.Status().Update(ctx, p, client.DryRunAll)
	}).Should(MatchError(ContainSubstring("status held still by the test")))
	Expect(hubC.Delete(ctx, probe)).To(Succeed())
	lifted := false
	return func() {
		if lifted {
			return
		}
		lifted = true
		Expect(client.IgnoreNotFound(hubC.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(hubC.Delete(ctx, policy))).To(Succeed())
	}
}
