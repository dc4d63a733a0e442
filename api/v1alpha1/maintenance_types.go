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

package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxMaintenanceWindows bounds the windows a ClusterJob or a ClusterSet
// names.
const MaxMaintenanceWindows = 8

// DefaultMaxWindowWait is a ClusterJob's spec.maxWindowWait when it sets
// none: 35 days, so that a monthly window (the first Sunday of the month)
// always opens within it.
const DefaultMaxWindowWait = 35 * 24 * time.Hour

// Date is a calendar day, YYYY-MM-DD.
// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$`
type Date string

// MaintenanceWindow is a recurring time during which groups may start.
// +kubebuilder:validation:XValidation:rule="duration(self.duration) >= duration('1m') && duration(self.duration) <= duration('168h')",message="duration must be from 1m to 168h"
type MaintenanceWindow struct {
	// schedule is when the window opens, in cron's five fields (minute,
	// hour, day of month, month, day of week) read in timeZone: for
	// example `0 22 * * 1-5` opens it at 22:00 on weekdays, `30 1 * * 6`
	// at 01:30 on Saturdays. @daily, @weekly and @monthly are accepted. An
	// opening that daylight saving skips (02:30 on the night the clocks go
	// from 02:00 to 03:00) does not happen that day; one in the hour the
	// clocks repeat happens in both passes, so that window stays open an
	// hour longer.
	// +kubebuilder:validation:MinLength=6
	// +kubebuilder:validation:MaxLength=128
	// +required
	Schedule string `json:"schedule"`

	// duration is how long the window stays open after each opening, as
	// elapsed time: a window across a daylight-saving change closes an
	// hour earlier or later by the wall clock. From 1m to 168h.
	// +required
	Duration metav1.Duration `json:"duration"`

	// timeZone is the IANA name of the time zone schedule and blackoutDates
	// are read in, for example `Europe/Berlin`. Default UTC.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*$`
	// +optional
	TimeZone string `json:"timeZone,omitempty"`

	// blackoutDates are days, in timeZone, on which this window is closed
	// from midnight to midnight, whatever schedule says: a freeze before a
	// holiday, a release day.
	// +kubebuilder:validation:MaxItems=64
	// +listType=set
	// +optional
	BlackoutDates []Date `json:"blackoutDates,omitempty"`
}
