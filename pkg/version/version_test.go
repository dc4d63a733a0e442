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

package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDescribe(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	cases := []struct {
		name     string
		stamped  string
		bi       *debug.BuildInfo
		want     Info
		wantLine string
	}{
		{
			name:     "stamped release wins over the module version",
			stamped:  "v0.1.0",
			bi:       &debug.BuildInfo{Main: debug.Module{Version: "v0.0.9"}, Settings: vcs("0123456789abcdef0123", "false")},
			want:     Info{Version: "v0.1.0", Commit: "0123456789ab", GoVersion: "go1.26.3"},
			wantLine: "v0.1.0 (0123456789ab) go1.26.3",
		},
		{
			name:     "go install of a tagged module",
			bi:       &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}},
			want:     Info{Version: "v0.2.0", GoVersion: "go1.26.3"},
			wantLine: "v0.2.0 go1.26.3",
		},
		{
			name:     "checkout with changes",
			bi:       &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("abc", "true")},
			want:     Info{Version: "devel", Commit: "abc-dirty", GoVersion: "go1.26.3"},
			wantLine: "devel (abc-dirty) go1.26.3",
		},
		{
			name:     "no build info",
			want:     Info{Version: "devel", GoVersion: "go1.26.3"},
			wantLine: "devel go1.26.3",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := describe(tc.stamped, tc.bi, "go1.26.3")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("describe() mismatch (-want +got):\n%s", diff)
			}
			if line := got.String(); line != tc.wantLine {
				t.Errorf("String() = %q, want %q", line, tc.wantLine)
			}
		})
	}
}
