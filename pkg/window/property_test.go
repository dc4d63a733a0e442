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

package window

import (
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// TestNextOpenAgreesWithAScan checks NextOpen against Open asked minute by
// minute. Every opening, duration and midnight here falls on a whole
// minute, so from a whole minute the first open minute is exactly NextOpen.
func TestNextOpenAgreesWithAScan(t *testing.T) {
	const horizon = 14 * 24 * time.Hour
	testCases := map[string]struct {
		sets [][]fleetv1.MaintenanceWindow
		// Start instants are drawn from [from, from+days).
		from    time.Time
		days    int
		samples int
	}{
		"every 7 minutes for 3": {
			sets: [][]fleetv1.MaintenanceWindow{{win("*/7 * * * *", 3*time.Minute, "")}},
			from: at("2026-01-01T00:00:00Z"), days: 365, samples: 60,
		},
		"weeknights in New York with blackouts, across the spring change": {
			sets: [][]fleetv1.MaintenanceWindow{{win("0 22 * * 1-5", 4*time.Hour, "America/New_York",
				"2026-03-06", "2026-03-09", "2026-03-10", "2026-03-11", "2026-03-12", "2026-03-13", "2026-03-20")}},
			from: at("2026-02-25T00:00:00-05:00"), days: 30, samples: 60,
		},
		"two Berlin windows with a blackout, across the spring change": {
			sets: [][]fleetv1.MaintenanceWindow{{
				win("30 2 * * *", 90*time.Minute, "Europe/Berlin", "2026-03-30"),
				win("*/20 1-3 * * 0", 10*time.Minute, "Europe/Berlin"),
			}},
			from: at("2026-03-20T00:00:00+01:00"), days: 20, samples: 60,
		},
		"two Berlin windows with a blackout, across the autumn change": {
			sets: [][]fleetv1.MaintenanceWindow{{
				win("30 2 * * *", 90*time.Minute, "Europe/Berlin", "2026-10-26"),
				win("*/20 1-3 * * 0", 10*time.Minute, "Europe/Berlin"),
			}},
			from: at("2026-10-15T00:00:00+02:00"), days: 20, samples: 60,
		},
		"Berlin weeknights and UTC weekends, which meet only in winter time": {
			// Friday 22:00 to 02:00 in Berlin reaches past Saturday 00:00
			// UTC only when Berlin is one hour ahead, not two.
			sets: [][]fleetv1.MaintenanceWindow{
				{win("0 22 * * 1-5", 4*time.Hour, "Europe/Berlin", "2026-11-06")},
				{win("0 0 * * 6", 48*time.Hour, "")},
			},
			from: at("2026-10-01T00:00:00Z"), days: 45, samples: 20,
		},
		"two dense sets and a sparse one": {
			sets: [][]fleetv1.MaintenanceWindow{
				{win("*/7 * * * *", 3*time.Minute, "")},
				{win("*/5 * * * *", 2*time.Minute, "Asia/Kolkata")},
				{win("0 9-17 * * 1-5", 20*time.Minute, "America/New_York", "2026-07-03")},
			},
			from: at("2026-06-20T00:00:00Z"), days: 30, samples: 50,
		},
		"two sets that never meet": {
			sets: [][]fleetv1.MaintenanceWindow{
				{win("0 * * * *", 5*time.Minute, "")},
				{win("30 * * * *", 10*time.Minute, "")},
			},
			from: at("2026-06-20T00:00:00Z"), days: 30, samples: 2,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			// Seeded by the name, so that a case draws the same instants
			// whichever order the map gives.
			seed := fnv.New64a()
			seed.Write([]byte(name))
			rng := rand.New(rand.NewPCG(2026, seed.Sum64()))
			s := schedule(t, tc.sets...)
			for range tc.samples {
				from := tc.from.Add(time.Duration(rng.Int64N(int64(tc.days)*24*60)) * time.Minute)
				limit := from.Add(horizon)
				next, ok := s.NextOpen(from, limit)
				wantNext, wantOK := scan(s, from, limit)
				if diff := cmp.Diff(answerAt{Next: wantNext, OK: wantOK}, answerAt{Next: next, OK: ok}); diff != "" {
					t.Fatalf("NextOpen(%s) (-scan +NextOpen):\n%s", from, diff)
				}
				if ok && !s.Open(next) {
					t.Fatalf("NextOpen(%s) = %s, where the schedule is closed", from, next)
				}
			}
		})
	}
}

func scan(s Schedule, from, limit time.Time) (time.Time, bool) {
	for m := from; m.Before(limit); m = m.Add(time.Minute) {
		if s.Open(m) {
			return m, true
		}
	}
	return time.Time{}, false
}
