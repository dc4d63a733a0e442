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

// Package version tells which fleetjob a binary is: the release it was built
// for, stamped by the linker, or else what the Go toolchain recorded.
package version

import (
	"runtime"
	"runtime/debug"
)

// version is set at link time by `make build VERSION=v0.1.0`
// (-X github.com/fleetjob/fleetjob/pkg/version.version=v0.1.0). Left empty by
// a plain `go build`, which Get then describes from the build info.
var version string

// Info identifies a build: its version, the commit it was built from and
// the Go release that built it.
type Info struct {
	// Version is the release, like v0.1.0, or "devel" for an unstamped build.
	Version string `json:"version"`
	// Commit is the VCS revision, with "-dirty" when the tree had changes;
	// empty when the toolchain recorded none (a build outside a checkout).
	Commit string `json:"commit,omitempty"`
	// GoVersion is the Go release that built the binary.
	GoVersion string `json:"goVersion"`
}

// String is the one-line form printed by --version.
func (i Info) String() string {
	s := i.Version
	if i.Commit != "" {
		s += " (" + i.Commit + ")"
	}
	return s + " " + i.GoVersion
}

// Get describes this binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return describe(version, bi, runtime.Version())
}

// describe is Get without the process globals: the stamped version wins;
// without one, the main module's version when built from a module (go
// install …@v0.1.0), else "devel".
func describe(stamped string, bi *debug.BuildInfo, goVersion string) Info {
	info := Info{Version: stamped, GoVersion: goVersion}
	if bi == nil {
		if info.Version == "" {
			info.Version = "devel"
		}
		return info
	}
	if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	var revision, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if revision != "" {
		info.Commit = revision[:min(len(revision), 12)]
		if modified == "true" {
			info.Commit += "-dirty"
		}
	}
	return info
}
