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
	"strings"
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

// TestFencedStart: a start under a fence keeps a third of its room for
// taking unsent nodes off the record again, and none begins once the
// session has missed more than a renewal.
func TestFencedStart(t *testing.T) {
	now := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		until   time.Time
		want    time.Time
		wantErr bool
	}{
		"a renewed session":           {until: now.Add(10 * time.Second), want: now.Add(10*time.Second - 10*time.Second/3)},
		"one renewal missed":          {until: now.Add(6 * time.Second), want: now.Add(4 * time.Second)},
		"renewals missed for a while": {until: now.Add(3 * time.Second), wantErr: true},
		"a fence passed":              {until: now.Add(-time.Second), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := fencedStart(now, tc.until, 6*time.Second, "eu-1")
			if (err != nil) != tc.wantErr {
				t.Fatalf("fencedStart() error = %v, want error %t", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "cluster eu-1") {
				t.Errorf("fencedStart() error = %q, want it to name the cluster", err)
			}
			if !got.Equal(tc.want) {
				t.Errorf("fencedStart() = %s, want %s", got, tc.want)
			}
		})
	}
}
