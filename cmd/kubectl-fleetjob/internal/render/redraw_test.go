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

package render

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedrawer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		terminal bool
		columns  int
		height   int
		blocks   []string
		want     string
	}{
		{
			name:   "log: the changed lines of each change appended",
			blocks: []string{"sum 1\n\nH\na 1\nb 1\n", "sum 1\n\nH\na 1\nb 1\n", "sum 2\n\nH\na 1\nb 2\n", "sum 2\n\nH\na 1\nb 2\n"},
			want:   "sum 1\n\nH\na 1\nb 1\nsum 2\nb 2\n",
		},
		{
			name:     "terminal: drawn in place",
			terminal: true, columns: 80, height: 24,
			blocks: []string{"a\nb\n", "a\nb\n", "a\nc\n", "d\n"},
			want:   "a\nb\n\x1b[2A\x1b[Ja\nc\n\x1b[2A\x1b[Jd\n",
		},
		{
			name:     "terminal: lines cut to the width, colour reset",
			terminal: true, columns: 4, height: 24,
			blocks: []string{"abcdefghij\n\x1b[31mxyzzy\x1b[0m\n", "z\n"},
			want:   "abcd\n\x1b[31mxyzz\x1b[0m\n\x1b[2A\x1b[Jz\n",
		},
		{
			name:     "terminal: a block taller than the screen cut to fit",
			terminal: true, columns: 80, height: 4,
			blocks: []string{"1\n2\n3\n4\n5\n", "1\n"},
			want:   "1\n2\n... 3 more lines: the terminal is 4 rows high\n\x1b[3A\x1b[J1\n",
		},
		{
			name:     "terminal of unknown size: drawn whole",
			terminal: true,
			blocks:   []string{"1\n2\n3\n", "1\n"},
			want:     "1\n2\n3\n\x1b[3A\x1b[J1\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			d := NewRedrawer(&out, tc.terminal, func() (int, int) { return tc.columns, tc.height })
			for _, b := range tc.blocks {
				d.Draw(b)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		name            string
		block           string
		columns, height int
		want            string
	}{
		{name: "fits", block: "ab\ncd\n", columns: 2, height: 3, want: "ab\ncd\n"},
		{name: "one row too many: the cursor's row is kept free", block: "a\nb\nc\n", height: 3, want: "a\n... 2 more lines: the terminal is 3 rows high\n"},
		{name: "wide characters count once", block: "héllo\n", columns: 3, want: "hél\n"},
		{name: "escapes are not cut", block: "\x1b[32mok\x1b[0m-more\n", columns: 3, want: "\x1b[32mok\x1b[0m-\x1b[0m\n"},
		{name: "unbounded", block: "abc\n", want: "abc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Fit(tc.block, tc.columns, tc.height)); diff != "" {
				t.Errorf("Fit (-want +got):\n%s", diff)
			}
		})
	}
}
