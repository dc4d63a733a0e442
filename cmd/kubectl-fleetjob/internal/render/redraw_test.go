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
		blocks   []string
		want     string
	}{
		{
			name:   "log: each change appended",
			blocks: []string{"a\nb\n", "a\nb\n", "a\nc\n"},
			want:   "a\nb\n\na\nc\n",
		},
		{
			name:     "terminal: drawn in place",
			terminal: true, columns: 80,
			blocks: []string{"a\nb\n", "a\nb\n", "a\nc\n", "d\n"},
			want:   "a\nb\n\x1b[2A\x1b[Ja\nc\n\x1b[2A\x1b[Jd\n",
		},
		{
			name:     "terminal: wrapped lines take more rows",
			terminal: true, columns: 4,
			blocks: []string{"abcdefghij\n\x1b[31mxy\x1b[0m\n", "z\n"},
			want:   "abcdefghij\n\x1b[31mxy\x1b[0m\n\x1b[4A\x1b[Jz\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			d := NewRedrawer(&out, tc.terminal, func() int { return tc.columns })
			for _, b := range tc.blocks {
				d.Draw(b)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
