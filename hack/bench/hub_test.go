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

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHasFlag: a flag with a value and a bool flag, which Go's -help
// prints without a value name, are both found; a prefix of one is not.
func TestHasFlag(t *testing.T) {
	help := `Usage of fleetjob-hub:
  -metrics-bind-address string
    	Address of the metrics endpoint; 0 disables it. (default ":8443")
  -metrics-secure
    	Serve metrics over HTTPS. (default true)
  -pprof-bind-address string
    	Address of the Go profiler.
`
	bin := filepath.Join(t.TempDir(), "hub")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ncat <<'EOF' >&2\n"+help+"EOF\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	testCases := map[string]struct {
		flag string
		want bool
	}{
		"with a value":          {flag: "pprof-bind-address", want: true},
		"bool":                  {flag: "metrics-secure", want: true},
		"a prefix of a flag":    {flag: "metrics", want: false},
		"not a flag of the hub": {flag: "leader-elect", want: false},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			if got := hasFlag(bin, tc.flag); got != tc.want {
				t.Errorf("hasFlag(%q) = %v, want %v", tc.flag, got, tc.want)
			}
		})
	}
}
