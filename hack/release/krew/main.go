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

// Command krew renders the krew manifest template (plugins/fleetjob.yaml)
// for a release, with one platform per plugin archive it is given:
//
//	go run ./hack/release/krew -template plugins/fleetjob.yaml -version v0.1.0 \
//	  -url https://github.com/fleetjob/fleetjob/releases/download/v0.1.0 dist/kubectl-fleetjob_*.tar.gz
//
// An archive is named kubectl-fleetjob_<os>_<arch>.tar.gz; its sha256 is
// computed here, so the manifest cannot name another file than the one
// released.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

func main() {
	tmpl := flag.String("template", "plugins/fleetjob.yaml", "The krew manifest template.")
	version := flag.String("version", "", "The release, like v0.1.0.")
	url := flag.String("url", "", "Where the archives are downloaded from (the URI of each is URL/<archive name>).")
	flag.Parse()
	if err := run(*tmpl, *version, *url, flag.Args(), os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "krew: %v\n", err)
		os.Exit(1)
	}
}

func run(tmplPath, version, url string, archives []string, out io.Writer) error {
	if version == "" || url == "" {
		return errors.New("-version and -url are required")
	}
	if len(archives) == 0 {
		return errors.New("no plugin archive given (kubectl-fleetjob_<os>_<arch>.tar.gz)")
	}
	text, err := os.ReadFile(tmplPath)
	if err != nil {
		return err
	}
	m := manifest{Version: version}
	for _, a := range archives {
		p, err := platformOf(a, strings.TrimSuffix(url, "/"))
		if err != nil {
			return err
		}
		m.Platforms = append(m.Platforms, p)
	}
	sort.Slice(m.Platforms, func(i, j int) bool { return m.Platforms[i].URI < m.Platforms[j].URI })
	rendered, err := render(string(text), m)
	if err != nil {
		return err
	}
	_, err = out.Write(rendered)
	return err
}

// manifest is what the template is executed with.
type manifest struct {
	// Version is the release.
	Version string
	// Platforms has one entry per archive, sorted by URI.
	Platforms []platform
}

// platform is one archive of the plugin.
type platform struct {
	OS, Arch, URI, SHA256, Bin string
}

// archiveName is how `make release` names the plugin's archives.
var archiveName = regexp.MustCompile(`^kubectl-fleetjob_([a-z0-9]+)_([a-z0-9]+)\.tar\.gz$`)

func platformOf(path, url string) (platform, error) {
	name := filepath.Base(path)
	m := archiveName.FindStringSubmatch(name)
	if m == nil {
		return platform{}, fmt.Errorf("%s: want an archive named kubectl-fleetjob_<os>_<arch>.tar.gz", path)
	}
	sum, err := sha256File(path)
	if err != nil {
		return platform{}, err
	}
	bin := "kubectl-fleetjob"
	if m[1] == "windows" {
		bin += ".exe"
	}
	return platform{OS: m[1], Arch: m[2], URI: url + "/" + name, SHA256: sum, Bin: bin}, nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// render executes the template and checks that the result is a krew
// manifest naming every platform, so that a broken template fails the
// release rather than krew install.
func render(text string, m manifest) ([]byte, error) {
	t, err := template.New("krew").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("the krew template: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, m); err != nil {
		return nil, fmt.Errorf("the krew template: %w", err)
	}
	var got struct {
		Kind string `json:"kind"`
		Spec struct {
			Version   string `json:"version"`
			Platforms []struct {
				URI    string `json:"uri"`
				SHA256 string `json:"sha256"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b.Bytes(), &got); err != nil {
		return nil, fmt.Errorf("the rendered krew manifest is not YAML: %w", err)
	}
	if got.Kind != "Plugin" || got.Spec.Version != m.Version || len(got.Spec.Platforms) != len(m.Platforms) {
		return nil, fmt.Errorf("the rendered krew manifest has kind %q, version %q and %d platforms; want Plugin, %s and %d",
			got.Kind, got.Spec.Version, len(got.Spec.Platforms), m.Version, len(m.Platforms))
	}
	for i, p := range got.Spec.Platforms {
		if p.URI != m.Platforms[i].URI || p.SHA256 != m.Platforms[i].SHA256 {
			return nil, fmt.Errorf("the rendered krew manifest's platform %d has uri %q and sha256 %q; want %q and %q",
				i, p.URI, p.SHA256, m.Platforms[i].URI, m.Platforms[i].SHA256)
		}
	}
	return b.Bytes(), nil
}
