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
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// The template of the repository renders a manifest that names each
// archive with its URI and the sha256 of its bytes.
func TestRunRendersPluginsTemplate(t *testing.T) {
	dir := t.TempDir()
	archives := map[string]string{
		"kubectl-fleetjob_linux_amd64.tar.gz":  "linux bytes",
		"kubectl-fleetjob_darwin_arm64.tar.gz": "darwin bytes",
	}
	var paths []string
	for name, content := range archives {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var out bytes.Buffer
	if err := run(filepath.Join("..", "..", "..", "plugins", "fleetjob.yaml"), "v0.1.0", "https://example.com/dl/v0.1.0/", paths, &out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Version   string `json:"version"`
			Platforms []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				URI    string `json:"uri"`
				SHA256 string `json:"sha256"`
				Bin    string `json:"bin"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	type row struct{ OS, Arch, URI, SHA256, Bin string }
	var rows []row
	for _, p := range got.Spec.Platforms {
		rows = append(rows, row{p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"], p.URI, p.SHA256, p.Bin})
	}
	want := []row{
		// sha256 of "darwin bytes" and "linux bytes" (sha256sum agrees).
		{"darwin", "arm64", "https://example.com/dl/v0.1.0/kubectl-fleetjob_darwin_arm64.tar.gz",
			"0f80e6d0bb2324fe696ce672a002c78faefad1f59aecf5e73af2d45e8e889677", "kubectl-fleetjob"},
		{"linux", "amd64", "https://example.com/dl/v0.1.0/kubectl-fleetjob_linux_amd64.tar.gz",
			"80cefd43a542d6617c0580b2fa5783361652c004e7131645cc6423efb26be77e", "kubectl-fleetjob"},
	}
	if got.Metadata.Name != "fleetjob" || got.Spec.Version != "v0.1.0" {
		t.Errorf("name %q, version %q; want fleetjob, v0.1.0", got.Metadata.Name, got.Spec.Version)
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
}

func TestRunRefuses(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "fleetjob-linux.tgz")
	if err := os.WriteFile(odd, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(tmpl, []byte("kind: Plugin\nspec:\n  version: {{ .Version }}\n  platforms: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "kubectl-fleetjob_linux_amd64.tar.gz")
	if err := os.WriteFile(good, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		tmpl     string
		archives []string
		wantErr  string
	}{
		{name: "no archive", tmpl: tmpl, wantErr: "no plugin archive given"},
		{name: "an archive named otherwise", tmpl: tmpl, archives: []string{odd}, wantErr: "want an archive named kubectl-fleetjob_<os>_<arch>.tar.gz"},
		{name: "a template that lists no platform", tmpl: tmpl, archives: []string{good}, wantErr: "0 platforms; want Plugin, v0.1.0 and 1"},
		{name: "a missing archive", tmpl: tmpl, archives: []string{filepath.Join(dir, "kubectl-fleetjob_linux_arm64.tar.gz")}, wantErr: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.tmpl, "v0.1.0", "https://example.com", tc.archives, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("run: got error %v, want one with %q", err, tc.wantErr)
			}
		})
	}
}
