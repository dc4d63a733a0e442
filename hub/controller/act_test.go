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
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// TestHeldNotes: the notes of a reconcile whose status write failed are
// sent by the next one, once, and a MemberRun that keeps failing holds a
// bounded number.
func TestHeldNotes(t *testing.T) {
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	started := note{corev1.EventTypeNormal, fleetv1.EventReasonGroupStarted, "cluster a: started group 0"}
	var h heldNotes
	if got := h.take(a); len(got) != 0 {
		t.Fatalf("take of nothing = %v", got)
	}
	h.hold(a, []note{started})
	h.hold(b, nil)
	if diff := cmp.Diff([]note{started}, h.take(a), cmp.AllowUnexported(note{})); diff != "" {
		t.Errorf("take after a failed write (-want +got):\n%s", diff)
	}
	if got := h.take(a); len(got) != 0 {
		t.Errorf("second take = %v, want nothing: a note is sent once", got)
	}
	var want []note
	for i := range 40 {
		n := note{corev1.EventTypeWarning, fleetv1.ReasonMemberError, fmt.Sprintf("retry %d", i)}
		h.hold(b, []note{n})
		want = append(want, n)
	}
	if diff := cmp.Diff(want[40-maxHeldNotes:], h.take(b), cmp.AllowUnexported(note{})); diff != "" {
		t.Errorf("held after 40 failed writes, the latest kept (-want +got):\n%s", diff)
	}
}

// TestFencedStartDeadline: a start under a fence ends a third of the time
// left before it, so that the write taking back the nodes not created
// still goes out before the fence refuses it.
func TestFencedStartDeadline(t *testing.T) {
	now := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		until, want time.Time
	}{
		"a renewed claim":  {until: now.Add(15 * time.Second), want: now.Add(10 * time.Second)},
		"a claim near out": {until: now.Add(3 * time.Second), want: now.Add(2 * time.Second)},
		"a fence passed":   {until: now.Add(-time.Second), want: now.Add(-time.Second)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := fencedStartDeadline(now, tc.until); !got.Equal(tc.want) {
				t.Errorf("fencedStartDeadline() = %s, want %s", got, tc.want)
			}
		})
	}
}
