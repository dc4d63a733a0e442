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

package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"text/template"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// renderChart renders the chart in dir as `helm template --namespace
// namespace` would, with values.yaml merged with overrides (top-level
// keys replaced), and returns its CRDs and its templates as two manifests.
//
// Helm renders templates with Go's text/template, which this uses too; of
// Helm's functions it offers only those the chart uses (default, quote,
// toYaml, nindent, fail), written as Helm and sprig define them, and a template
// that calls any other fails to parse here. So the chart keeps to what
// this suite can prove without building Helm (see hack/release/chart).
func renderChart(dir, namespace string, overrides map[string]any) (crds, templates string) {
	GinkgoHelper()
	var chart map[string]any
	Expect(yaml.Unmarshal(readFile(filepath.Join(dir, "Chart.yaml")), &chart)).To(Succeed())
	var values map[string]any
	Expect(yaml.Unmarshal(readFile(filepath.Join(dir, "values.yaml")), &values)).To(Succeed())
	for k, v := range overrides {
		values[k] = v
	}
	data := map[string]any{
		"Values":  values,
		"Release": map[string]any{"Name": "fleetjob", "Namespace": namespace, "Service": "Helm"},
		"Chart":   map[string]any{"Name": chart["name"], "Version": chart["version"], "AppVersion": chart["appVersion"]},
	}
	var out strings.Builder
	for _, path := range yamlFiles(filepath.Join(dir, "templates")) {
		t, err := template.New(filepath.Base(path)).Funcs(helmFuncs).Option("missingkey=error").Parse(string(readFile(path)))
		Expect(err).NotTo(HaveOccurred(), "parsing %s", path)
		out.WriteString("---\n")
		Expect(t.Execute(&out, data)).To(Succeed(), "rendering %s", path)
	}
	var crdOut strings.Builder
	for _, path := range yamlFiles(filepath.Join(dir, "crds")) {
		crdOut.WriteString("---\n")
		crdOut.Write(readFile(path))
	}
	return crdOut.String(), out.String()
}

// helmFuncs are the Helm template functions the chart uses, as Helm and
// sprig define them.
var helmFuncs = template.FuncMap{
	"default": func(d any, given ...any) any {
		if len(given) == 0 || isEmpty(given[0]) {
			return d
		}
		return given[0]
	},
	"quote": func(s any) string { return fmt.Sprintf("%q", fmt.Sprint(s)) },
	"fail":  func(msg string) (string, error) { return "", errors.New(msg) },
	"toYaml": func(v any) (string, error) {
		b, err := yaml.Marshal(v)
		return strings.TrimSuffix(string(b), "\n"), err
	},
	"nindent": func(spaces int, s string) string {
		pad := strings.Repeat(" ", spaces)
		return "\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	},
}

// isEmpty is sprig's empty: nil, a zero value, an empty collection.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return r.Len() == 0
	default:
		return r.IsZero()
	}
}

func yamlFiles(dir string) []string {
	GinkgoHelper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(paths).NotTo(BeEmpty(), "no YAML in %s", dir)
	sort.Strings(paths)
	return paths
}

func readFile(path string) []byte {
	GinkgoHelper()
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return b
}

func writeFile(content string) string {
	GinkgoHelper()
	f, err := os.CreateTemp(GinkgoT().TempDir(), "*.yaml")
	Expect(err).NotTo(HaveOccurred())
	_, err = f.WriteString(content)
	Expect(err).NotTo(HaveOccurred())
	Expect(f.Close()).To(Succeed())
	return f.Name()
}

// objects parses manifests into their objects by kind/namespace/name.
func objects(manifests string) map[string]map[string]any {
	GinkgoHelper()
	out := map[string]map[string]any{}
	for doc := range strings.SplitSeq(manifests, "\n---\n") {
		var o map[string]any
		Expect(yaml.Unmarshal([]byte(strings.TrimPrefix(doc, "---\n")), &o)).To(Succeed(), "%.200s", doc)
		if len(o) == 0 {
			continue
		}
		meta, _ := o["metadata"].(map[string]any)
		key := fmt.Sprintf("%v/%v/%v", o["kind"], meta["namespace"], meta["name"])
		Expect(out).NotTo(HaveKey(key), "two objects %s", key)
		out[key] = o
	}
	return out
}
