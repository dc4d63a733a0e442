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

package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	testCases := map[string]struct {
		in   string
		n    int
		want string
	}{
		"short stays":          {"abc", 5, "abc"},
		"exact stays":          {"abcde", 5, "abcde"},
		"long is marked":       {"abcdefgh", 6, "abc..."},
		"multi-byte not split": {"ab" + "€€", 7, "ab..."},
		"tiny limit":           {"abcdef", 2, "ab"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got := Truncate(tc.in, tc.n)
			if got != tc.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Truncate(%q, %d) = %q is not valid UTF-8", tc.in, tc.n, got)
			}
		})
	}
	if got := Truncate(strings.Repeat("é", 300), 256); len(got) > 256 || !utf8.ValidString(got) {
		t.Errorf("Truncate of 600 bytes to 256 = %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
