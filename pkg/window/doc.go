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

// Package window decides when maintenance windows are open, so that a
// group of nodes starts in a cluster only while both the ClusterJob's
// windows and its ClusterSet's windows allow it.
//
// A window opens at every activation of its cron schedule, read in its time
// zone, and stays open for its duration as elapsed time: across a
// daylight-saving change it closes an hour earlier or later by the wall
// clock. Openings may overlap; the window is open while any of them is.
// Each blackout date closes the window from that day's midnight to the
// next, in the window's time zone, whatever the openings say; an opening
// on the evening before a blackout date is cut at midnight, and one on a
// blackout evening that runs past midnight is open again from midnight.
//
// The openings are exactly those of github.com/robfig/cron/v3 v3.0.1, so
// daylight saving follows its reading: an opening in the hour the clocks
// skip does not happen that day; one in the hour the clocks repeat happens
// twice, once in each pass (at 01:30 EDT and at 01:30 EST in New York on
// the first Sunday of November). A window of an hour or more opened there
// thus stays open an hour longer than its duration that night; a shorter
// one opens twice.
//
// Two limits come from robfig/cron as well. A schedule that finds no
// activation within five years of the time asked about counts as never
// opening (only a February 29 schedule across 2100 could be wrong there).
// robfig steps days assuming the clocks change by whole hours: in the one
// zone that changes by half an hour, Australia/Lord_Howe, it may miss an
// opening on the day of a change.
//
// A Set is the union of one object's windows; a Schedule is the
// intersection of sets. Both are immutable once built and safe for
// concurrent use.
package window
