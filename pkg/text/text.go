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

// Package text shortens what goes into bounded API fields and events.
package text

import "unicode/utf8"

// MaxEventNote is the most bytes the API server accepts in an event's note;
// a longer one is rejected and the event lost.
const MaxEventNote = 1024

// Truncate cuts s to at most n bytes, on a rune boundary, and marks the cut
// with "...": status strings have byte limits, and a message cut in the
// middle of a character would be invalid UTF-8.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	mark := "..."
	if n < len(mark) {
		mark = ""
	}
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
