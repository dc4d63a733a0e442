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
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// parser reads the five cron fields the API documents. Descriptors are
// accepted because @daily and friends are plain five-field schedules;
// @every is turned away in parseSchedule.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// zones keeps the locations Parse loaded: LoadLocation reads and decodes
// the zone's data on every call, and the controller parses windows on
// every reconcile. Only names that load are kept, so it holds at most the
// IANA database's few hundred zones; a Location is safe to share.
var zones sync.Map // name → *time.Location

// maxRounds bounds the alternation in Schedule.NextOpen. A round that does
// not end the search moves the candidate past the close of an open stretch
// of some set; with two sets (a run's and its cluster's) it passes one of
// each, so the search takes about as many rounds as the set opening less
// often has openings before limit: 35 for a nightly window across
// DefaultMaxWindowWait (35 days), 840 for an hourly one. 1024 covers that
// and caps the pathological pair (eight windows open at minute 59 of every
// hour against eight open at minute 0) at about 20 milliseconds.
const maxRounds = 1024

// Set is the union of one object's windows (a ClusterJob's or a
// ClusterSet's): it is open while any of them is. The zero Set (no windows)
// is always open, as an object that names no window is not restricted.
type Set struct {
	windows []window
}

// window is one parsed MaintenanceWindow.
type window struct {
	// spec has its Location set to the window's time zone, so that Next
	// reads the fields there whatever zone the instant it is handed is in.
	spec *cron.SpecSchedule
	dur  time.Duration
	// blackouts are sorted and disjoint, so that one binary search finds
	// the day holding an instant.
	blackouts []span
}

// span is the half-open interval [start, end).
type span struct {
	start, end time.Time
}

// Parse reads one object's windows into a Set. path names the field, so
// that an error points at the item a user has to fix:
// Parse("spec.maintenanceWindows", ws) fails with
// "spec.maintenanceWindows[1].schedule: <why>",
// `spec.maintenanceWindows[0].timeZone: unknown time zone "Mars/Base"` or
// "spec.maintenanceWindows[2].blackoutDates[3]: <why>". An empty ws gives
// the zero Set, which is always open.
func Parse(path string, ws []fleetv1.MaintenanceWindow) (Set, error) {
	if len(ws) == 0 {
		return Set{}, nil
	}
	s := Set{windows: make([]window, 0, len(ws))}
	for i := range ws {
		w, err := parseWindow(fmt.Sprintf("%s[%d]", path, i), &ws[i])
		if err != nil {
			return Set{}, err
		}
		s.windows = append(s.windows, w)
	}
	return s, nil
}

func parseWindow(path string, mw *fleetv1.MaintenanceWindow) (window, error) {
	spec, err := parseSchedule(mw.Schedule)
	if err != nil {
		return window{}, fmt.Errorf("%s.schedule: %w", path, err)
	}
	// The CRD keeps duration within 1m..168h; only a non-positive one would
	// break the arithmetic below (a window that can never be open), so that
	// is all Parse repeats, leaving the range to the CRD alone.
	if mw.Duration.Duration <= 0 {
		return window{}, fmt.Errorf("%s.duration: %s is not a positive duration", path, mw.Duration.Duration)
	}
	loc, err := parseTimeZone(mw.TimeZone)
	if err != nil {
		return window{}, fmt.Errorf("%s.timeZone: %w", path, err)
	}
	spec.Location = loc
	w := window{spec: spec, dur: mw.Duration.Duration}
	for j, d := range mw.BlackoutDates {
		day, err := time.Parse(time.DateOnly, string(d))
		if err != nil {
			return window{}, fmt.Errorf("%s.blackoutDates[%d]: %q is not a day (YYYY-MM-DD)", path, j, d)
		}
		y, m, dd := day.Date()
		// Midnight to midnight by the calendar, not start plus 24h: the
		// days the clocks change last 23 or 25 hours.
		w.blackouts = append(w.blackouts, span{
			start: time.Date(y, m, dd, 0, 0, 0, 0, loc),
			end:   time.Date(y, m, dd+1, 0, 0, 0, 0, loc),
		})
	}
	slices.SortFunc(w.blackouts, func(a, b span) int { return a.start.Compare(b.start) })
	// The CRD makes the list a set, but a repeated day must not break the
	// disjointness blackoutAt relies on.
	w.blackouts = slices.CompactFunc(w.blackouts, func(a, b span) bool { return a.start.Equal(b.start) })
	return w, nil
}

func parseTimeZone(name string) (*time.Location, error) {
	switch name {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		// LoadLocation would give the controller's own zone, which changes
		// with where it runs.
		return nil, fmt.Errorf("unknown time zone %q: name an IANA zone such as Europe/Berlin", name)
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	zones.Store(name, loc)
	return loc, nil
}

func parseSchedule(schedule string) (*cron.SpecSchedule, error) {
	trimmed := strings.TrimSpace(schedule)
	switch {
	case strings.HasPrefix(trimmed, "CRON_TZ=") || strings.HasPrefix(trimmed, "TZ="):
		// One place for the zone: it also decides the blackout days.
		return nil, fmt.Errorf("a CRON_TZ= or TZ= prefix is not accepted: set the window's timeZone instead")
	case strings.HasPrefix(trimmed, "@every"):
		// @every counts from whenever it is asked, not from the clock, so
		// it would open at different times for every question.
		return nil, fmt.Errorf("@every is not accepted: it ignores the clock and the time zone; write the five cron fields")
	}
	// Trimmed, so that "@daily " is read as @daily as the checks above
	// read it.
	parsed, err := parser.Parse(trimmed)
	if err != nil {
		return nil, err
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("%q is not a cron schedule", trimmed)
	}
	return spec, nil
}

// Open tells whether t is inside one of the set's windows.
func (s Set) Open(t time.Time) bool {
	if len(s.windows) == 0 {
		return true
	}
	for i := range s.windows {
		if s.windows[i].open(t) {
			return true
		}
	}
	return false
}

// NextOpen is the earliest time at or after t, and before limit, at which
// s is open (t itself when Open(t)), in t's location, and false when s does
// not open before limit. Its work is bounded by the number of windows and
// blackout dates, however often the windows open and however far limit is.
func (s Set) NextOpen(t, limit time.Time) (time.Time, bool) {
	at, ok := s.nextOpen(t, limit, nil)
	if !ok {
		return time.Time{}, false
	}
	// Answers come in the zone of whichever window found them; one zone,
	// the caller's, reads better in logs and messages.
	return at.In(t.Location()), true
}

// nextOpen is NextOpen remembering each window's answer in memo (one entry
// per window) when memo is not nil.
func (s Set) nextOpen(t, limit time.Time, memo []answer) (time.Time, bool) {
	if len(s.windows) == 0 {
		return always(t, limit)
	}
	var best time.Time
	found := false
	for i := range s.windows {
		var at time.Time
		var ok bool
		if memo != nil {
			at, ok = memo[i].nextOpen(&s.windows[i], t, limit)
		} else {
			at, ok = s.windows[i].nextOpen(t, limit)
		}
		if ok && (!found || at.Before(best)) {
			best, found = at, true
			if !best.After(t) {
				break // nothing can open earlier than t
			}
		}
	}
	return best, found
}

// always is NextOpen for no windows.
func always(t, limit time.Time) (time.Time, bool) {
	if t.Before(limit) {
		return t, true
	}
	return time.Time{}, false
}

// open tells whether an opening covers t and no blackout day holds it.
func (w *window) open(t time.Time) bool {
	a := w.activationAfter(t.Add(-w.dur))
	return !a.IsZero() && !a.After(t) && !w.blackedOut(t)
}

// nextOpen is the earliest instant in [t, limit) at which w is open.
func (w *window) nextOpen(t, limit time.Time) (time.Time, bool) {
	u := t
	// A pass either answers or moves u to the end of the blackout day
	// holding its candidate, which is at or after u. The days are disjoint,
	// so no pass meets a day an earlier pass left: at most one pass per
	// blackout date and one to answer, however often the schedule fires.
	for range len(w.blackouts) + 1 {
		if !u.Before(limit) {
			return time.Time{}, false
		}
		// The first opening after u-dur covers u when it is at or before
		// u (an opening exactly at u-dur has just closed); otherwise none
		// does, and it is the next to come. Overlapping openings need no
		// more: the first of them decides.
		a := w.activationAfter(u.Add(-w.dur))
		if a.IsZero() {
			return time.Time{}, false
		}
		candidate := u
		if a.After(u) {
			candidate = a
		}
		if !candidate.Before(limit) {
			return time.Time{}, false
		}
		if day, in := w.blackoutAt(candidate); in {
			u = day.end
			continue
		}
		return candidate, true
	}
	// Unreachable by the argument above.
	return time.Time{}, false
}

// activationAfter is the first opening strictly after x, or the zero time
// when there is none within robfig's five years.
func (w *window) activationAfter(x time.Time) time.Time {
	// Next first steps second by second to the next whole minute; openings
	// fall on whole minutes, so hand it the second before the first whole
	// minute after x and it goes straight to the fields. Whole minutes are
	// read on x's wall clock in the window's zone, as robfig reads them.
	l := x.In(w.spec.Location)
	toMinute := time.Minute - time.Duration(l.Second())*time.Second - time.Duration(l.Nanosecond())
	return w.spec.Next(l.Add(toMinute - time.Second))
}

func (w *window) blackedOut(t time.Time) bool {
	_, in := w.blackoutAt(t)
	return in
}

// blackoutAt is the blackout day holding t, if any.
func (w *window) blackoutAt(t time.Time) (span, bool) {
	i, _ := slices.BinarySearchFunc(w.blackouts, t, func(s span, t time.Time) int {
		if s.end.After(t) {
			return 1
		}
		return -1
	})
	if i < len(w.blackouts) && !t.Before(w.blackouts[i].start) {
		return w.blackouts[i], true
	}
	return span{}, false
}

// answer remembers a window's reply within one Schedule.NextOpen, whose
// limit does not change: the window is closed on [from, at), so a question
// from anywhere in that stretch has the same reply. Without it, each round
// would make every window jump its blackout days again.
type answer struct {
	from, at time.Time
	ok, set  bool
}

func (a *answer) nextOpen(w *window, u, limit time.Time) (time.Time, bool) {
	if a.set && !u.Before(a.from) && (!a.ok || !u.After(a.at)) {
		return a.at, a.ok
	}
	at, ok := w.nextOpen(u, limit)
	*a = answer{from: u, at: at, ok: ok, set: true}
	return at, ok
}

// Schedule is when every one of its sets is open: a run's windows and its
// cluster's ClusterSet's windows both have to allow a group to start. The
// zero Schedule is always open.
type Schedule struct {
	sets []Set
	// windows counts the sets' windows, to size NextOpen's memo.
	windows int
}

// All is the Schedule open when every one of sets is.
func All(sets ...Set) Schedule {
	var s Schedule
	for _, set := range sets {
		// A zero Set is always open and changes no intersection.
		if len(set.windows) > 0 {
			s.sets = append(s.sets, set)
			s.windows += len(set.windows)
		}
	}
	return s
}

// Open tells whether t is inside the schedule.
func (s Schedule) Open(t time.Time) bool {
	for _, set := range s.sets {
		if !set.Open(t) {
			return false
		}
	}
	return true
}

// NextOpen is the earliest time at or after t, and before limit, at which
// s is open (t itself when Open(t)), in t's location, and false when s does
// not open before limit.
//
// The sets take turns moving the candidate to their next opening until all
// agree or one has none before limit. Sets whose windows keep missing each
// other take a turn per opening; after maxRounds (1024) rounds NextOpen
// gives up and answers false, as if they never met: the caller fails the
// cluster rather than wait, and a wait that is always bounded matters
// more than windows that meet only after a thousand of their openings.
func (s Schedule) NextOpen(t, limit time.Time) (time.Time, bool) {
	switch len(s.sets) {
	case 0:
		return always(t, limit)
	case 1:
		return s.sets[0].NextOpen(t, limit)
	}
	// Two sets of at most MaxMaintenanceWindows windows fit on the stack.
	var buf [2 * fleetv1.MaxMaintenanceWindows]answer
	memo := buf[:]
	if s.windows > len(buf) {
		memo = make([]answer, s.windows)
	}
	u := t
	for range maxRounds {
		moved := false
		offset := 0
		for _, set := range s.sets {
			// Each set is closed from u until v, so the intersection is
			// closed from t until the candidate throughout.
			v, ok := set.nextOpen(u, limit, memo[offset:offset+len(set.windows)])
			offset += len(set.windows)
			if !ok {
				return time.Time{}, false
			}
			if v.After(u) {
				u, moved = v, true
			}
		}
		if !moved {
			return u.In(t.Location()), true
		}
	}
	return time.Time{}, false
}

// ForCluster is when a run's groups may start in a cluster of set: while
// one of the run's windows (those of ClusterJob job) and one of the set's
// are open. An error names the object and the field of a window that
// cannot be read. The hub and the preview both read windows so.
func ForCluster(job string, run []fleetv1.MaintenanceWindow, set string, setWindows []fleetv1.MaintenanceWindow) (Schedule, error) {
	own, err := Parse("spec.maintenanceWindows", run)
	if err != nil {
		return Schedule{}, fmt.Errorf("ClusterJob %s: %w", job, err)
	}
	theirs, err := Parse("spec.maintenanceWindows", setWindows)
	if err != nil {
		return Schedule{}, fmt.Errorf("ClusterSet %s: %w", set, err)
	}
	return All(own, theirs), nil
}
