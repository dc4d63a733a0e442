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
	"strings"
	"testing"
	"time"

	// The controller's binaries embed the zone database; the tests must not
	// depend on the machine's.
	_ "time/tzdata"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// at reads an RFC 3339 instant; the offset in it says which pass of a
// repeated hour is meant.
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func win(schedule string, d time.Duration, zone string, blackouts ...fleetv1.Date) fleetv1.MaintenanceWindow {
	return fleetv1.MaintenanceWindow{
		Schedule:      schedule,
		Duration:      metav1.Duration{Duration: d},
		TimeZone:      zone,
		BlackoutDates: blackouts,
	}
}

func schedule(t testing.TB, sets ...[]fleetv1.MaintenanceWindow) Schedule {
	t.Helper()
	parsed := make([]Set, 0, len(sets))
	for _, ws := range sets {
		s, err := Parse("spec.maintenanceWindows", ws)
		if err != nil {
			t.Fatalf("Parse() = %v", err)
		}
		parsed = append(parsed, s)
	}
	return All(parsed...)
}

type answerAt struct {
	Open bool
	Next time.Time
	OK   bool
}

type openCase struct {
	sets [][]fleetv1.MaintenanceWindow
	t    time.Time
	// limit is t + DefaultMaxWindowWait when zero.
	limit    time.Time
	wantOpen bool
	wantNext time.Time
	wantOK   bool
}

func runOpenCases(t *testing.T, testCases map[string]openCase) {
	t.Helper()
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			s := schedule(t, tc.sets...)
			limit := tc.limit
			if limit.IsZero() {
				limit = tc.t.Add(fleetv1.DefaultMaxWindowWait)
			}
			next, ok := s.NextOpen(tc.t, limit)
			got := answerAt{Open: s.Open(tc.t), Next: next, OK: ok}
			want := answerAt{Open: tc.wantOpen, Next: tc.wantNext, OK: tc.wantOK}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("at %s (-want +got):\n%s", tc.t, diff)
			}
			if ok && !s.Open(next) {
				t.Errorf("NextOpen() = %s, where the schedule is closed", next)
			}
		})
	}
}

func TestOpenAndNextOpen(t *testing.T) {
	// March 2026: the 2nd and the 9th are Mondays, the 6th a Friday.
	weeknights := []fleetv1.MaintenanceWindow{win("0 22 * * 1-5", 4*time.Hour, "")}
	nightly := []fleetv1.MaintenanceWindow{win("0 22 * * *", 4*time.Hour, "")}
	weekends := []fleetv1.MaintenanceWindow{win("0 0 * * 6", 48*time.Hour, "")}
	overlapping := []fleetv1.MaintenanceWindow{win("0 0,1 * * *", 90*time.Minute, "")}
	runOpenCases(t, map[string]openCase{
		"no windows: always open": {
			t: at("2026-03-04T12:00:00Z"), wantOpen: true, wantNext: at("2026-03-04T12:00:00Z"), wantOK: true,
		},
		"no windows: but not at the limit": {
			t: at("2026-03-04T12:00:00Z"), limit: at("2026-03-04T12:00:00Z"), wantOpen: true,
		},
		"weeknights: Friday 23:00 is open": {
			sets: [][]fleetv1.MaintenanceWindow{weeknights},
			t:    at("2026-03-06T23:00:00Z"), wantOpen: true, wantNext: at("2026-03-06T23:00:00Z"), wantOK: true,
		},
		"weeknights: Saturday 01:30 is in Friday's window": {
			sets: [][]fleetv1.MaintenanceWindow{weeknights},
			t:    at("2026-03-07T01:30:00Z"), wantOpen: true, wantNext: at("2026-03-07T01:30:00Z"), wantOK: true,
		},
		"weeknights: Saturday 03:00 waits for Monday 22:00": {
			sets: [][]fleetv1.MaintenanceWindow{weeknights},
			t:    at("2026-03-07T03:00:00Z"), wantNext: at("2026-03-09T22:00:00Z"), wantOK: true,
		},
		"weeknights: open at the opening": {
			sets: [][]fleetv1.MaintenanceWindow{weeknights},
			t:    at("2026-03-06T22:00:00Z"), wantOpen: true, wantNext: at("2026-03-06T22:00:00Z"), wantOK: true,
		},
		"weeknights: closed at the closing": {
			sets: [][]fleetv1.MaintenanceWindow{weeknights},
			t:    at("2026-03-07T02:00:00Z"), wantNext: at("2026-03-09T22:00:00Z"), wantOK: true,
		},
		"weeknights: half a second before the opening": {
			sets: [][]fleetv1.MaintenanceWindow{weeknights},
			t:    at("2026-03-05T21:59:59.5Z"), wantNext: at("2026-03-05T22:00:00Z"), wantOK: true,
		},
		"weeknights: asked in another zone": {
			sets: [][]fleetv1.MaintenanceWindow{weeknights},
			t:    at("2026-03-07T04:00:00+01:00"), wantNext: at("2026-03-09T22:00:00Z"), wantOK: true,
		},
		"overlapping openings: 01:15 is in both": {
			sets: [][]fleetv1.MaintenanceWindow{overlapping},
			t:    at("2026-03-04T01:15:00Z"), wantOpen: true, wantNext: at("2026-03-04T01:15:00Z"), wantOK: true,
		},
		"overlapping openings: 02:00 is in the second only": {
			sets: [][]fleetv1.MaintenanceWindow{overlapping},
			t:    at("2026-03-04T02:00:00Z"), wantOpen: true, wantNext: at("2026-03-04T02:00:00Z"), wantOK: true,
		},
		"overlapping openings: closed when the second closes": {
			sets: [][]fleetv1.MaintenanceWindow{overlapping},
			t:    at("2026-03-04T02:30:00Z"), wantNext: at("2026-03-05T00:00:00Z"), wantOK: true,
		},
		"overlapping openings: 15 minutes every 10 never close": {
			sets: [][]fleetv1.MaintenanceWindow{{win("*/10 * * * *", 15*time.Minute, "")}},
			t:    at("2026-03-04T00:09:30Z"), wantOpen: true, wantNext: at("2026-03-04T00:09:30Z"), wantOK: true,
		},
		"blackout: the evening before is open to the last second": {
			sets: [][]fleetv1.MaintenanceWindow{{win("0 22 * * *", 4*time.Hour, "", "2026-03-07")}},
			t:    at("2026-03-06T23:59:59Z"), wantOpen: true, wantNext: at("2026-03-06T23:59:59Z"), wantOK: true,
		},
		"blackout: closed from midnight, open again at the next midnight in that evening's window": {
			sets: [][]fleetv1.MaintenanceWindow{{win("0 22 * * *", 4*time.Hour, "", "2026-03-07")}},
			t:    at("2026-03-07T00:00:00Z"), wantNext: at("2026-03-08T00:00:00Z"), wantOK: true,
		},
		"blackout on the day of the opening: closed that evening, open after midnight": {
			sets: [][]fleetv1.MaintenanceWindow{{win("0 22 * * *", 4*time.Hour, "", "2026-03-06")}},
			t:    at("2026-03-06T22:30:00Z"), wantNext: at("2026-03-07T00:00:00Z"), wantOK: true,
		},
		"blackout: the day is the window's zone's day": {
			// Saturday in New York is 05:00Z to 05:00Z; Saturday 22:00
			// EST's window is open again at Sunday's midnight there.
			sets: [][]fleetv1.MaintenanceWindow{{win("0 22 * * *", 4*time.Hour, "America/New_York", "2026-03-07")}},
			t:    at("2026-03-07T04:30:00Z"), wantOpen: true, wantNext: at("2026-03-07T04:30:00Z"), wantOK: true,
		},
		"blackout: the zone's day, closed from its midnight": {
			sets: [][]fleetv1.MaintenanceWindow{{win("0 22 * * *", 4*time.Hour, "America/New_York", "2026-03-07")}},
			t:    at("2026-03-07T05:00:00Z"), wantNext: at("2026-03-08T05:00:00Z"), wantOK: true,
		},
		"two windows: the union": {
			sets: [][]fleetv1.MaintenanceWindow{{win("0 22 * * 1-5", 4*time.Hour, ""), win("0 10 * * 6", time.Hour, "")}},
			t:    at("2026-03-07T03:00:00Z"), wantNext: at("2026-03-07T10:00:00Z"), wantOK: true,
		},
		"intersection: from Wednesday, Saturday's first hours": {
			sets: [][]fleetv1.MaintenanceWindow{nightly, weekends},
			t:    at("2026-03-04T12:00:00Z"), wantNext: at("2026-03-07T00:00:00Z"), wantOK: true,
		},
		"intersection: Saturday 03:00 waits for Saturday night": {
			sets: [][]fleetv1.MaintenanceWindow{nightly, weekends},
			t:    at("2026-03-07T03:00:00Z"), wantNext: at("2026-03-07T22:00:00Z"), wantOK: true,
		},
		"intersection: Sunday 23:30 is open": {
			sets: [][]fleetv1.MaintenanceWindow{nightly, weekends},
			t:    at("2026-03-08T23:30:00Z"), wantOpen: true, wantNext: at("2026-03-08T23:30:00Z"), wantOK: true,
		},
		"intersection: Monday 00:30, the run's window is open but the set's is not": {
			sets: [][]fleetv1.MaintenanceWindow{nightly, weekends},
			t:    at("2026-03-09T00:30:00Z"), wantNext: at("2026-03-14T00:00:00Z"), wantOK: true,
		},
		"intersection: the set's weekend starts an hour earlier in Berlin": {
			sets: [][]fleetv1.MaintenanceWindow{nightly, {win("0 0 * * 6", 48*time.Hour, "Europe/Berlin")}},
			t:    at("2026-03-04T12:00:00Z"), wantNext: at("2026-03-06T23:00:00Z"), wantOK: true,
		},
		"intersection: a set without windows changes nothing": {
			sets: [][]fleetv1.MaintenanceWindow{weeknights, nil},
			t:    at("2026-03-07T03:00:00Z"), wantNext: at("2026-03-09T22:00:00Z"), wantOK: true,
		},
		"intersection: nights and noons never meet": {
			sets: [][]fleetv1.MaintenanceWindow{nightly, {win("0 12 * * *", time.Hour, "")}},
			t:    at("2026-03-04T12:30:00Z"),
		},
		"never: February 30": {
			sets: [][]fleetv1.MaintenanceWindow{{win("0 0 30 2 *", time.Hour, "")}},
			t:    at("2026-03-04T12:00:00Z"),
		},
		"never: blackouts cover every opening before the limit": {
			sets:  [][]fleetv1.MaintenanceWindow{{win("0 22 * * 6", time.Hour, "", "2026-03-07", "2026-03-14")}},
			t:     at("2026-03-02T00:00:00Z"),
			limit: at("2026-03-20T00:00:00Z"),
		},
		"blackouts cover every opening but the one after them": {
			sets:  [][]fleetv1.MaintenanceWindow{{win("0 22 * * 6", time.Hour, "", "2026-03-07", "2026-03-14")}},
			t:     at("2026-03-02T00:00:00Z"),
			limit: at("2026-03-22T00:00:00Z"), wantNext: at("2026-03-21T22:00:00Z"), wantOK: true,
		},
		"the limit comes before the next opening": {
			sets:  [][]fleetv1.MaintenanceWindow{weeknights},
			t:     at("2026-03-07T03:00:00Z"),
			limit: at("2026-03-09T21:59:00Z"),
		},
		"the limit is not included": {
			sets:  [][]fleetv1.MaintenanceWindow{weeknights},
			t:     at("2026-03-07T03:00:00Z"),
			limit: at("2026-03-09T22:00:00Z"),
		},
		"the limit a minute after the opening": {
			sets:  [][]fleetv1.MaintenanceWindow{weeknights},
			t:     at("2026-03-07T03:00:00Z"),
			limit: at("2026-03-09T22:01:00Z"), wantNext: at("2026-03-09T22:00:00Z"), wantOK: true,
		},
		"open, but t is the limit": {
			sets:  [][]fleetv1.MaintenanceWindow{weeknights},
			t:     at("2026-03-06T23:00:00Z"),
			limit: at("2026-03-06T23:00:00Z"), wantOpen: true,
		},
	})
}

// TestDaylightSaving pins robfig/cron v3.0.1's reading of the changes and
// the elapsed-time durations. Berlin: 2026-03-29 02:00 CET becomes 03:00
// CEST, 2026-10-25 03:00 CEST becomes 02:00 CET. New York: 2026-03-08 02:00
// EST becomes 03:00 EDT, 2026-11-01 02:00 EDT becomes 01:00 EST.
func TestDaylightSaving(t *testing.T) {
	one := func(schedule string, d time.Duration, zone string, blackouts ...fleetv1.Date) [][]fleetv1.MaintenanceWindow {
		return [][]fleetv1.MaintenanceWindow{{win(schedule, d, zone, blackouts...)}}
	}
	runOpenCases(t, map[string]openCase{
		"Berlin: 02:30 does not happen on the spring-forward day": {
			sets: one("30 2 * * *", 10*time.Minute, "Europe/Berlin"),
			t:    at("2026-03-28T12:00:00+01:00"), wantNext: at("2026-03-30T02:30:00+02:00"), wantOK: true,
		},
		"Berlin: 02:30 on the fall-back day happens in summer time": {
			sets: one("30 2 * * *", 10*time.Minute, "Europe/Berlin"),
			t:    at("2026-10-25T00:00:00+02:00"), wantNext: at("2026-10-25T02:30:00+02:00"), wantOK: true,
		},
		"Berlin: and again in winter time": {
			sets: one("30 2 * * *", 10*time.Minute, "Europe/Berlin"),
			t:    at("2026-10-25T02:45:00+02:00"), wantNext: at("2026-10-25T02:30:00+01:00"), wantOK: true,
		},
		"Berlin: but not a third time": {
			sets: one("30 2 * * *", 10*time.Minute, "Europe/Berlin"),
			t:    at("2026-10-25T02:45:00+01:00"), wantNext: at("2026-10-26T02:30:00+01:00"), wantOK: true,
		},
		"Berlin: 4h from 01:00 on the fall-back day is open at 03:59 CET": {
			sets: one("0 1 * * *", 4*time.Hour, "Europe/Berlin"),
			t:    at("2026-10-25T03:59:00+01:00"), wantOpen: true, wantNext: at("2026-10-25T03:59:00+01:00"), wantOK: true,
		},
		"Berlin: and closes at 04:00 CET, 3h later by the wall clock": {
			sets: one("0 1 * * *", 4*time.Hour, "Europe/Berlin"),
			t:    at("2026-10-25T04:00:00+01:00"), wantNext: at("2026-10-26T01:00:00+01:00"), wantOK: true,
		},
		"Berlin: 4h from 01:00 on the spring-forward day is open at 05:59 CEST": {
			sets: one("0 1 * * *", 4*time.Hour, "Europe/Berlin"),
			t:    at("2026-03-29T05:59:00+02:00"), wantOpen: true, wantNext: at("2026-03-29T05:59:00+02:00"), wantOK: true,
		},
		"Berlin: and closes at 06:00 CEST, 5h later by the wall clock": {
			sets: one("0 1 * * *", 4*time.Hour, "Europe/Berlin"),
			t:    at("2026-03-29T06:00:00+02:00"), wantNext: at("2026-03-30T01:00:00+02:00"), wantOK: true,
		},
		"Berlin: the spring-forward blackout day lasts 23 hours": {
			sets: one("* * * * *", time.Minute, "Europe/Berlin", "2026-03-29"),
			t:    at("2026-03-29T00:00:00+01:00"), wantNext: at("2026-03-29T22:00:00Z"), wantOK: true,
		},
		"Berlin: open until the spring-forward blackout day": {
			sets: one("* * * * *", time.Minute, "Europe/Berlin", "2026-03-29"),
			t:    at("2026-03-28T23:59:00+01:00"), wantOpen: true, wantNext: at("2026-03-28T23:59:00+01:00"), wantOK: true,
		},
		"Berlin: the fall-back blackout day lasts 25 hours": {
			sets: one("* * * * *", time.Minute, "Europe/Berlin", "2026-10-25"),
			t:    at("2026-10-25T00:00:00+02:00"), wantNext: at("2026-10-25T23:00:00Z"), wantOK: true,
		},
		"New York: 02:30 does not happen on the spring-forward day": {
			sets: one("30 2 * * *", 10*time.Minute, "America/New_York"),
			t:    at("2026-03-07T12:00:00-05:00"), wantNext: at("2026-03-09T02:30:00-04:00"), wantOK: true,
		},
		"New York: 01:30 on the fall-back day happens in daylight time": {
			sets: one("30 1 * * *", 10*time.Minute, "America/New_York"),
			t:    at("2026-11-01T00:00:00-04:00"), wantNext: at("2026-11-01T01:30:00-04:00"), wantOK: true,
		},
		"New York: and again in standard time": {
			sets: one("30 1 * * *", 10*time.Minute, "America/New_York"),
			t:    at("2026-11-01T01:45:00-04:00"), wantNext: at("2026-11-01T01:30:00-05:00"), wantOK: true,
		},
		"New York: 4h from 01:00 on the fall-back day opens twice, so is open at 04:30 EST": {
			sets: one("0 1 * * *", 4*time.Hour, "America/New_York"),
			t:    at("2026-11-01T04:30:00-05:00"), wantOpen: true, wantNext: at("2026-11-01T04:30:00-05:00"), wantOK: true,
		},
		"New York: and closes at 05:00 EST, 4h after the second opening": {
			sets: one("0 1 * * *", 4*time.Hour, "America/New_York"),
			t:    at("2026-11-01T05:00:00-05:00"), wantNext: at("2026-11-02T01:00:00-05:00"), wantOK: true,
		},
		"New York: 4h from 01:00 on the spring-forward day closes at 06:00 EDT": {
			sets: one("0 1 * * *", 4*time.Hour, "America/New_York"),
			t:    at("2026-03-08T06:00:00-04:00"), wantNext: at("2026-03-09T01:00:00-04:00"), wantOK: true,
		},
	})
}

// TestOpeningsAcrossDaylightSaving lists robfig/cron's activations, so that
// an upgrade changing them fails here first.
func TestOpeningsAcrossDaylightSaving(t *testing.T) {
	testCases := map[string]struct {
		schedule, zone string
		from           time.Time
		want           []string
	}{
		"Berlin: the skipped 02:30": {
			schedule: "30 2 * * *", zone: "Europe/Berlin", from: at("2026-03-28T00:00:00+01:00"),
			want: []string{"2026-03-28T02:30:00+01:00", "2026-03-30T02:30:00+02:00"},
		},
		"Berlin: the repeated 02:30": {
			schedule: "30 2 * * *", zone: "Europe/Berlin", from: at("2026-10-24T12:00:00+02:00"),
			want: []string{"2026-10-25T02:30:00+02:00", "2026-10-25T02:30:00+01:00", "2026-10-26T02:30:00+01:00"},
		},
		"Berlin: every 20 minutes through the repeated hour": {
			schedule: "*/20 2 * * *", zone: "Europe/Berlin", from: at("2026-10-24T12:00:00+02:00"),
			want: []string{
				"2026-10-25T02:00:00+02:00", "2026-10-25T02:20:00+02:00", "2026-10-25T02:40:00+02:00",
				"2026-10-25T02:00:00+01:00", "2026-10-25T02:20:00+01:00", "2026-10-25T02:40:00+01:00",
				"2026-10-26T02:00:00+01:00",
			},
		},
		"New York: the skipped 02:30": {
			schedule: "30 2 * * *", zone: "America/New_York", from: at("2026-03-07T00:00:00-05:00"),
			want: []string{"2026-03-07T02:30:00-05:00", "2026-03-09T02:30:00-04:00"},
		},
		"New York: the repeated 01:30": {
			schedule: "30 1 * * *", zone: "America/New_York", from: at("2026-10-31T12:00:00-04:00"),
			want: []string{"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"},
		},
		"New York: hourly through the skipped hour": {
			schedule: "0 * * * *", zone: "America/New_York", from: at("2026-03-08T00:30:00-05:00"),
			want: []string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			s, err := Parse("w", []fleetv1.MaintenanceWindow{win(tc.schedule, time.Minute, tc.zone)})
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			var want, got []time.Time
			for _, w := range tc.want {
				want = append(want, at(w))
			}
			for a := tc.from; len(got) < len(want); {
				a = s.windows[0].activationAfter(a)
				got = append(got, a)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("openings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	ok := win("0 22 * * 1-5", time.Hour, "Europe/Berlin")
	testCases := map[string]struct {
		ws []fleetv1.MaintenanceWindow
		// wantErr is the whole message, or its start when it ends in "…".
		wantErr string
	}{
		"four fields": {
			ws:      []fleetv1.MaintenanceWindow{win("0 22 * *", time.Hour, "")},
			wantErr: "spec.maintenanceWindows[0].schedule: expected exactly 5 fields…",
		},
		"six fields": {
			ws:      []fleetv1.MaintenanceWindow{win("0 0 22 * * *", time.Hour, "")},
			wantErr: "spec.maintenanceWindows[0].schedule: expected exactly 5 fields…",
		},
		"a minute out of range, in the second window": {
			ws:      []fleetv1.MaintenanceWindow{ok, win("61 * * * *", time.Hour, "")},
			wantErr: "spec.maintenanceWindows[1].schedule: …",
		},
		"empty": {
			ws:      []fleetv1.MaintenanceWindow{win("", time.Hour, "")},
			wantErr: "spec.maintenanceWindows[0].schedule: …",
		},
		"CRON_TZ=": {
			ws:      []fleetv1.MaintenanceWindow{win("CRON_TZ=Europe/Berlin 0 22 * * *", time.Hour, "")},
			wantErr: "spec.maintenanceWindows[0].schedule: a CRON_TZ= or TZ= prefix is not accepted: set the window's timeZone instead",
		},
		"TZ=": {
			ws:      []fleetv1.MaintenanceWindow{win("TZ=UTC 0 22 * * *", time.Hour, "")},
			wantErr: "spec.maintenanceWindows[0].schedule: a CRON_TZ= or TZ= prefix is not accepted: set the window's timeZone instead",
		},
		"@every": {
			ws:      []fleetv1.MaintenanceWindow{win("@every 1h", time.Hour, "")},
			wantErr: "spec.maintenanceWindows[0].schedule: @every is not accepted: it ignores the clock and the time zone; write the five cron fields",
		},
		"@every behind a space": {
			ws:      []fleetv1.MaintenanceWindow{win(" @every 1h", time.Hour, "")},
			wantErr: "spec.maintenanceWindows[0].schedule: @every is not accepted…",
		},
		"an unknown descriptor": {
			ws:      []fleetv1.MaintenanceWindow{win("@fortnightly", time.Hour, "")},
			wantErr: "spec.maintenanceWindows[0].schedule: unrecognized descriptor: @fortnightly",
		},
		"an unknown time zone": {
			ws:      []fleetv1.MaintenanceWindow{win("0 22 * * *", time.Hour, "Mars/Base")},
			wantErr: `spec.maintenanceWindows[0].timeZone: unknown time zone "Mars/Base"`,
		},
		"the controller's own zone": {
			ws:      []fleetv1.MaintenanceWindow{win("0 22 * * *", time.Hour, "Local")},
			wantErr: `spec.maintenanceWindows[0].timeZone: unknown time zone "Local"…`,
		},
		"no duration": {
			ws:      []fleetv1.MaintenanceWindow{win("0 22 * * *", 0, "")},
			wantErr: "spec.maintenanceWindows[0].duration: 0s is not a positive duration",
		},
		"February 30": {
			ws:      []fleetv1.MaintenanceWindow{win("0 22 * * *", time.Hour, "", "2026-03-01", "2026-02-30")},
			wantErr: `spec.maintenanceWindows[0].blackoutDates[1]: "2026-02-30" is not a day (YYYY-MM-DD)`,
		},
		"a day without its zero": {
			ws:      []fleetv1.MaintenanceWindow{ok, ok, win("0 22 * * *", time.Hour, "", "2026-03-01", "2026-04-01", "2026-3-1")},
			wantErr: `spec.maintenanceWindows[2].blackoutDates[2]: "2026-3-1" is not a day (YYYY-MM-DD)`,
		},
		"a time with the day": {
			ws:      []fleetv1.MaintenanceWindow{win("0 22 * * *", time.Hour, "", "2026-03-01T00:00:00Z")},
			wantErr: `spec.maintenanceWindows[0].blackoutDates[0]: "2026-03-01T00:00:00Z" is not a day (YYYY-MM-DD)`,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("spec.maintenanceWindows", tc.ws)
			if err == nil {
				t.Fatalf("Parse() gave no error, want %q", tc.wantErr)
			}
			if prefix, cut := strings.CutSuffix(tc.wantErr, "…"); cut {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("Parse() = %q, want it to start with %q", err, prefix)
				}
			} else if err.Error() != tc.wantErr {
				t.Errorf("Parse() = %q, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	from := at("2026-03-04T12:30:00Z") // a Wednesday
	testCases := map[string]struct {
		schedule string
		zone     string
		wantNext time.Time
	}{
		"@hourly":                     {schedule: "@hourly", wantNext: at("2026-03-04T13:00:00Z")},
		"@daily":                      {schedule: "@daily", wantNext: at("2026-03-05T00:00:00Z")},
		"@midnight":                   {schedule: "@midnight", wantNext: at("2026-03-05T00:00:00Z")},
		"@weekly: Sunday":             {schedule: "@weekly", wantNext: at("2026-03-08T00:00:00Z")},
		"@monthly":                    {schedule: "@monthly", wantNext: at("2026-04-01T00:00:00Z")},
		"@yearly":                     {schedule: "@yearly", wantNext: at("2027-01-01T00:00:00Z")},
		"@annually":                   {schedule: "@annually", wantNext: at("2027-01-01T00:00:00Z")},
		"@daily in Berlin":            {schedule: "@daily", zone: "Europe/Berlin", wantNext: at("2026-03-05T00:00:00+01:00")},
		"names of days":               {schedule: "0 22 * * sat", wantNext: at("2026-03-07T22:00:00Z")},
		"day of month or day of week": {schedule: "0 0 1 * fri", wantNext: at("2026-03-06T00:00:00Z")},
		"UTC by name":                 {schedule: "0 22 * * *", zone: "UTC", wantNext: at("2026-03-04T22:00:00Z")},
		"spaces around a descriptor":  {schedule: " @daily ", wantNext: at("2026-03-05T00:00:00Z")},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			s, err := Parse("spec.maintenanceWindows", []fleetv1.MaintenanceWindow{win(tc.schedule, time.Minute, tc.zone)})
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			got, ok := s.NextOpen(from, from.Add(fleetv1.DefaultMaxWindowWait*12))
			if !ok || !got.Equal(tc.wantNext) {
				t.Errorf("NextOpen() = %s, %v; want %s, true", got, ok, tc.wantNext)
			}
		})
	}
}

func TestParseNothingIsAlwaysOpen(t *testing.T) {
	s, err := Parse("spec.maintenanceWindows", nil)
	if err != nil {
		t.Fatalf("Parse() = %v", err)
	}
	now := at("2026-03-04T12:00:00Z")
	if got, ok := s.NextOpen(now, now.Add(time.Minute)); !s.Open(now) || !ok || !got.Equal(now) {
		t.Errorf("the zero Set: Open() = %v, NextOpen() = %s, %v; want open now", s.Open(now), got, ok)
	}
}

func TestNextOpenAnswersInTheZoneOfT(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 3, 4, 12, 0, 0, 0, berlin)
	for name, s := range map[string]Schedule{
		"one set":  schedule(t, []fleetv1.MaintenanceWindow{win("0 22 * * *", time.Hour, "America/New_York")}),
		"two sets": schedule(t, []fleetv1.MaintenanceWindow{win("0 22 * * *", time.Hour, "America/New_York")}, []fleetv1.MaintenanceWindow{win("0 * * * *", 2*time.Hour, "")}),
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := s.NextOpen(from, from.Add(fleetv1.DefaultMaxWindowWait))
			if want := at("2026-03-05T04:00:00+01:00"); !ok || !got.Equal(want) || got.Location() != berlin {
				t.Errorf("NextOpen() = %s, %v; want %s in Europe/Berlin, true", got, ok, want)
			}
		})
	}
}

// TestNextOpenGivesUpOnSetsThatKeepMissing: two sets that take turns for
// too long (even minutes against odd ones: they never meet) are answered
// false, as windows that never open, in bounded time: the caller fails the
// cluster rather than wait.
func TestNextOpenGivesUpOnSetsThatKeepMissing(t *testing.T) {
	s := schedule(t,
		[]fleetv1.MaintenanceWindow{win("*/2 * * * *", time.Minute, "")},
		[]fleetv1.MaintenanceWindow{win("1-59/2 * * * *", time.Minute, "")},
	)
	from := at("2026-03-04T12:00:00Z")
	if got, ok := s.NextOpen(from, from.Add(365*24*time.Hour)); ok {
		t.Errorf("NextOpen() = %s, true; want false", got)
	}
}

// worst is the costliest input for one window: an opening every minute,
// so that robfig's Next always has a match, and the maximum of 64 blackout
// days back to back, so that every one of them has to be jumped.
func worst(n int, from time.Time) []fleetv1.MaintenanceWindow {
	days := make([]fleetv1.Date, 0, 64)
	for i := range 64 {
		days = append(days, fleetv1.Date(from.AddDate(0, 0, i).Format(time.DateOnly)))
	}
	ws := make([]fleetv1.MaintenanceWindow, 0, n)
	for range n {
		ws = append(ws, win("* * * * *", time.Minute, "Europe/Berlin", days...))
	}
	return ws
}

func repeat(n int, w fleetv1.MaintenanceWindow) []fleetv1.MaintenanceWindow {
	ws := make([]fleetv1.MaintenanceWindow, n)
	for i := range ws {
		ws[i] = w
	}
	return ws
}

func BenchmarkNextOpen(b *testing.B) {
	from := at("2026-03-04T12:00:00+01:00")
	limit := from.Add(365 * 24 * time.Hour)
	benchmarks := map[string]struct {
		s        Schedule
		wantNext time.Time
		wantOK   bool
	}{
		"every minute with 64 blackout days": {
			s: schedule(b, worst(1, from)), wantNext: at("2026-05-07T00:00:00+02:00"), wantOK: true,
		},
		"eight such windows": {
			s: schedule(b, worst(fleetv1.MaxMaintenanceWindows, from)), wantNext: at("2026-05-07T00:00:00+02:00"), wantOK: true,
		},
		"two sets of eight such windows": {
			s: schedule(b, worst(fleetv1.MaxMaintenanceWindows, from), worst(fleetv1.MaxMaintenanceWindows, from)), wantNext: at("2026-05-07T00:00:00+02:00"), wantOK: true,
		},
		"two sets of eight windows that keep missing each other, until NextOpen gives up": {
			// Each round moves the candidate past every window, so that
			// none of the sixteen can answer from its memo, and each of
			// their Next calls steps through most of an hour's minutes.
			s: schedule(b,
				repeat(fleetv1.MaxMaintenanceWindows, win("59 * * * *", time.Minute, "Europe/Berlin")),
				repeat(fleetv1.MaxMaintenanceWindows, win("0 * * * *", time.Minute, "Europe/Berlin")),
			),
			wantOK: false,
		},
	}
	for name, bc := range benchmarks {
		b.Run(name, func(b *testing.B) {
			if got, ok := bc.s.NextOpen(from, limit); ok != bc.wantOK || !got.Equal(bc.wantNext) {
				b.Fatalf("NextOpen() = %s, %v; want %s, %v", got, ok, bc.wantNext, bc.wantOK)
			}
			b.ReportAllocs()
			for b.Loop() {
				bc.s.NextOpen(from, limit)
			}
		})
	}
}
