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

package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// TestPodSecurityCondition: a set whose podSecurity changed after its
// clusters were registered says which clusters' namespaces still enforce
// another level, and how to bring them in line.
func TestPodSecurityCondition(t *testing.T) {
	rerun := "; run `kubectl fleetjob register` again for them so that the members enforce it too"
	testCases := map[string]struct {
		level    fleetv1.PodSecurityLevel
		recorded map[string]string
		want     metav1.Condition
	}{
		"no cluster": {
			level: fleetv1.PodSecurityBaseline,
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: fleetv1.ReasonPodSecurityEnforced,
				Message: "every cluster's work namespace enforces baseline (0 clusters)"},
		},
		"every namespace labelled with the set's level": {
			level:    fleetv1.PodSecurityRestricted,
			recorded: map[string]string{"eu-1": "restricted", "eu-2": "restricted"},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: fleetv1.ReasonPodSecurityEnforced,
				Message: "every cluster's work namespace enforces restricted (2 clusters)"},
		},
		"the set was made restricted after its clusters were registered": {
			level:    fleetv1.PodSecurityRestricted,
			recorded: map[string]string{"eu-2": "baseline", "eu-1": "restricted", "eu-3": "privileged"},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: fleetv1.ReasonPodSecurityMismatch,
				Message: "work namespaces labelled with another Pod Security level than the set's restricted: eu-2 (baseline), eu-3 (privileged); " +
					"the hub holds templates to restricted all the same" + rerun},
		},
		"a mismatch and registrations that record nothing": {
			level:    fleetv1.PodSecurityBaseline,
			recorded: map[string]string{"a": "restricted", "b": ""},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: fleetv1.ReasonPodSecurityMismatch,
				Message: "work namespaces labelled with another Pod Security level than the set's baseline: a (restricted); the hub holds templates to baseline all the same; " +
					"registrations that do not record what their work namespace enforces (written by an older kubectl fleetjob, or a Kubernetes namespace register leaves alone): b" + rerun},
		},
		"only registrations that record nothing, a few named": {
			level:    fleetv1.PodSecurityBaseline,
			recorded: map[string]string{"a": "", "b": "", "c": "", "d": "", "e": "", "f": "", "g": "", "ok": "baseline"},
			want: metav1.Condition{Status: metav1.ConditionUnknown, Reason: fleetv1.ReasonPodSecurityNotRecorded,
				Message: "registrations that do not record what their work namespace enforces (written by an older kubectl fleetjob, or a Kubernetes namespace register leaves alone): a, b, c, d, e and 2 more" + rerun},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			tc.want.Type = fleetv1.ConditionMembersEnforcePodSecurity
			if diff := cmp.Diff(tc.want, podSecurityCondition(tc.level, tc.recorded)); diff != "" {
				t.Errorf("podSecurityCondition (-want +got):\n%s", diff)
			}
		})
	}
}
