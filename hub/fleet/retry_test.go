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

package fleet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

func TestRetryTargets(t *testing.T) {
	ended := func(phase fleetv1.Phase) *fleetv1.ClusterJob {
		p := makeClusterJob().Obj()
		p.Name, p.Status.Phase = "parent", phase
		return p
	}
	lost := fleetv1.ClusterStatus{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonUnreachableTimeout}
	neverConnected := fleetv1.ClusterStatus{Phase: fleetv1.ClusterFailed, Reason: fleetv1.ReasonNotRegistered}
	parentRuns := []MemberRun{runOf("a", true, failedRow), runOf("b", true, lost), runOf("c", true, neverConnected), runOf("d", true, stoppedRow)}
	retry := func(clusters ...string) *fleetv1.ClusterJobSpec {
		spec := makeClusterJob().Obj().Spec
		spec.RetryOf = &fleetv1.RetryOf{Name: "parent"}
		if len(clusters) > 0 {
			spec.Retry = &fleetv1.Retry{Clusters: clusters}
		}
		return &spec
	}
	otherImage := retry()
	otherImage.JobTemplate.Spec.Template.Spec.Containers[0].Image = "busybox:other"
	deleting := ended(fleetv1.PhaseFailed)
	deleting.DeletionTimestamp = mt(ago(time.Second))

	tests := []struct {
		name        string
		spec        *fleetv1.ClusterJobSpec
		parent      *fleetv1.ClusterJob
		runs        []MemberRun
		want        []RetryTarget
		wantRefusal string
	}{{
		name:   "every cluster of the parent, the unreachable ones told apart",
		spec:   retry(),
		parent: ended(fleetv1.PhaseFailed),
		runs:   parentRuns,
		want:   []RetryTarget{{Cluster: "a"}, {Cluster: "b", Unreachable: true}, {Cluster: "c", Unreachable: true}, {Cluster: "d"}},
	}, {
		name:   "retry.clusters narrows",
		spec:   retry("d", "b"),
		parent: ended(fleetv1.PhaseFailed),
		runs:   parentRuns,
		want:   []RetryTarget{{Cluster: "b", Unreachable: true}, {Cluster: "d"}},
	}, {
		name:        "a cluster the parent did not run in",
		spec:        retry("a", "z"),
		parent:      ended(fleetv1.PhaseFailed),
		runs:        parentRuns,
		wantRefusal: "spec.retry.clusters[1]: cluster z did not run in ClusterJob parent",
	}, {
		name:        "a missing parent",
		spec:        retry(),
		wantRefusal: "spec.retryOf.name: ClusterJob team-a/parent not found",
	}, {
		name:        "a running parent",
		spec:        retry(),
		parent:      ended(fleetv1.PhaseRunning),
		runs:        parentRuns,
		wantRefusal: "spec.retryOf.name: ClusterJob team-a/parent is still Running; retry it once it has ended",
	}, {
		name:        "a parent not started yet",
		spec:        retry(),
		parent:      ended(""),
		wantRefusal: "spec.retryOf.name: ClusterJob team-a/parent is still Pending; retry it once it has ended",
	}, {
		name:        "a parent being deleted",
		spec:        retry(),
		parent:      deleting,
		runs:        parentRuns,
		wantRefusal: "spec.retryOf.name: ClusterJob team-a/parent is being deleted, and its record with it",
	}, {
		name:        "another jobTemplate",
		spec:        otherImage,
		parent:      ended(fleetv1.PhaseCompleted),
		runs:        parentRuns,
		wantRefusal: "spec.jobTemplate: differs from the jobTemplate of ClusterJob parent: a retry runs the same Job again (kubectl fleetjob retry copies it)",
	}, {
		name:        "a parent that ran nowhere",
		spec:        retry(),
		parent:      ended(fleetv1.PhaseFailed),
		wantRefusal: "spec.retryOf.name: ClusterJob parent ran in no cluster: there is nothing to retry",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, refusal := RetryTargets(tt.spec, "team-a", tt.parent, tt.runs)
			if refusal != tt.wantRefusal {
				t.Errorf("RetryTargets() refusal = %q, want %q", refusal, tt.wantRefusal)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RetryTargets() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRefusedRetryFailsAtOnce(t *testing.T) {
	cj := makeClusterJob().Obj()
	cj.Spec.RetryOf = &fleetv1.RetryOf{Name: "parent"}
	in := Input{Spec: &cj.Spec, Refused: "spec.retryOf.name: ClusterJob team-a/parent not found", Now: now, Created: now,
		EmptySelectionGrace: time.Minute}
	d := Decide(in)
	if d.Admit != nil || d.RequeueAfter != 0 {
		t.Errorf("Decide() = %+v, want nothing to do", d)
	}
	st := Status(in, d, &fleetv1.ClusterJobStatus{}, 1)
	failed := meta.FindStatusCondition(st.Conditions, fleetv1.ConditionFailed)
	if st.Phase != fleetv1.PhaseFailed || failed == nil || failed.Reason != fleetv1.ReasonRetryRefused || failed.Message != in.Refused {
		t.Errorf("phase %s, Failed condition %+v; want Failed, reason %s, message %q", st.Phase, failed, fleetv1.ReasonRetryRefused, in.Refused)
	}
}

func TestUnreachable(t *testing.T) {
	for reason, want := range map[string]bool{
		fleetv1.ReasonUnreachableTimeout:         true,
		fleetv1.ClusterReasonUnreachable:         true,
		fleetv1.ClusterReasonConnecting:          true,
		fleetv1.ClusterReasonUnauthorized:        true,
		fleetv1.ClusterReasonForbidden:           true,
		fleetv1.ClusterReasonInvalidRegistration: true,
		fleetv1.ClusterReasonDuplicateCluster:    true,
		fleetv1.ReasonNotRegistered:              true,
		fleetv1.ReasonNodeFailed:                 false,
		fleetv1.ReasonStopped:                    false,
		fleetv1.ReasonFailureBudgetExceeded:      false,
		fleetv1.ReasonCompleted:                  false,
	} {
		if got := Unreachable(fleetv1.ClusterStatus{Reason: reason}); got != want {
			t.Errorf("Unreachable(reason %s) = %t, want %t", reason, got, want)
		}
	}
}
