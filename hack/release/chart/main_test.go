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
	"errors"
	"sort"
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"
)

// manifests is a small install.yaml of the shape manifests.sh prints.
const manifests = `apiVersion: v1
kind: Namespace
metadata:
  labels:
    app.kubernetes.io/managed-by: kustomize
  name: fleetjob-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterjobs.fleetjob.io
spec:
  scope: Namespaced
---
apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
    app.kubernetes.io/managed-by: kustomize
  name: fleetjob-hub
  namespace: fleetjob-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app.kubernetes.io/managed-by: kustomize
    app.kubernetes.io/version: v0.1.0
  name: fleetjob-hub
  namespace: fleetjob-system
spec:
  replicas: 1
  template:
    metadata:
      labels:
        app.kubernetes.io/version: v0.1.0
    spec:
      containers:
      - args:
        - --leader-elect=true
        env:
        - name: GOMEMLIMIT
          value: 460MiB
        image: example.com:5000/fleetjob-hub:v0.1.0
        imagePullPolicy: IfNotPresent
        resources:
          limits:
            memory: 512Mi
        securityContext:
          runAsNonRoot: true
`

// sharded is manifests as config/sharded changes them: two replicas,
// --shard, POD_NAME, an anti-affinity, and the shard's Role.
var sharded = strings.NewReplacer(
	"  replicas: 1\n", "  replicas: 2\n",
	"        - --leader-elect=true\n", "        - --leader-elect=true\n        - --shard\n",
	"          value: 460MiB\n", "          value: 460MiB\n        - name: POD_NAME\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.name\n",
	"    spec:\n      containers:\n", "    spec:\n      affinity:\n        podAntiAffinity: {}\n      containers:\n",
).Replace(manifests) + `---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  labels:
    app.kubernetes.io/managed-by: kustomize
  name: fleetjob-hub-shard
  namespace: fleetjob-system
`

const wantDeployment = header + needsLeader + `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app.kubernetes.io/managed-by: {{ .Release.Service }}
    app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
  name: fleetjob-hub
  namespace: {{ .Release.Namespace }}
spec:
  replicas: {{ .Values.replicas }}
  template:
    metadata:
      labels:
        app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
    spec:
{{- if .Values.sharding.enabled }}
      affinity:
        podAntiAffinity: {}
{{- end }}
      containers:
      - args:
        - --leader-elect={{ .Values.leaderElection }}
{{- if .Values.sharding.enabled }}
        - --shard
{{- end }}
        env:
        - name: GOMEMLIMIT
          value: {{ .Values.goMemLimit | quote }}
{{- if .Values.sharding.enabled }}
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
{{- end }}
        image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
        imagePullPolicy: {{ .Values.image.pullPolicy }}
        resources:
          {{- toYaml .Values.resources | nindent 10 }}
        securityContext:
          runAsNonRoot: true
`

const wantShardRole = ifSharded + header + `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  labels:
    app.kubernetes.io/managed-by: {{ .Release.Service }}
  name: fleetjob-hub-shard
  namespace: {{ .Release.Namespace }}
` + endIf

func TestGenerate(t *testing.T) {
	files, err := generate(manifests, sharded, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	wantPaths := []string{"Chart.yaml", "crds/clusterjobs.fleetjob.io.yaml", "templates/deployment-fleetjob-hub.yaml",
		"templates/role-fleetjob-hub-shard.yaml", "templates/serviceaccount-fleetjob-hub.yaml", "values.yaml"}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDeployment, files["templates/deployment-fleetjob-hub.yaml"]); diff != "" {
		t.Errorf("the Deployment's template (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantShardRole, files["templates/role-fleetjob-hub-shard.yaml"]); diff != "" {
		t.Errorf("the shard Role's template (-want +got):\n%s", diff)
	}
	for _, want := range []string{"  repository: example.com:5000/fleetjob-hub\n", "  tag: \"\"\n", "replicas: 1\n",
		"leaderElection: true\n", "sharding:\n  enabled: false\n", "goMemLimit: 460MiB\n", "resources:\n  limits:\n    memory: 512Mi\n\n"} {
		if !strings.Contains(files["values.yaml"], want) {
			t.Errorf("values.yaml has no %q:\n%s", want, files["values.yaml"])
		}
	}
	for _, want := range []string{"version: 0.1.0\n", "appVersion: \"v0.1.0\"\n"} {
		if !strings.Contains(files["Chart.yaml"], want) {
			t.Errorf("Chart.yaml has no %q:\n%s", want, files["Chart.yaml"])
		}
	}
}

func TestGenerateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version string
		replace [2]string
		// shardedReplace edits only the sharded render.
		shardedReplace [2]string
		wantErrs       string
	}{
		{name: "manifests of another release", version: "v0.2.0",
			wantErrs: "labelled app.kubernetes.io/version=v0.1.0, not the chart's -version v0.2.0"},
		{name: "an image by digest", version: "v0.1.0", replace: [2]string{"fleetjob-hub:v0.1.0", "fleetjob-hub@sha256:0123"},
			wantErrs: "has a digest"},
		{name: "a GOMEMLIMIT the chart cannot find", version: "v0.1.0", replace: [2]string{"name: GOMEMLIMIT", "name: GOGC"},
			wantErrs: "the hub's GOMEMLIMIT: want 1 in the manifests, found 0"},
		{name: "a template marker in an object", version: "v0.1.0", replace: [2]string{"runAsNonRoot: true", "runAsNonRoot: '{{'"},
			wantErrs: "Deployment fleetjob-hub contains {{"},
		{name: "version labels that differ", version: "v0.1.0",
			replace:  [2]string{"      labels:\n        app.kubernetes.io/version: v0.1.0", "      labels:\n        app.kubernetes.io/version: v0.0.9"},
			wantErrs: "the hub's version labels differ"},
		{name: "no install namespace", version: "v0.1.0", replace: [2]string{"kind: Namespace", "kind: ConfigMap"},
			wantErrs: "want exactly one Namespace"},
		{name: "an overlay that changes a line of the Deployment", version: "v0.1.0",
			shardedReplace: [2]string{"          value: 460MiB\n", "          value: 900MiB\n"},
			wantErrs:       `config/sharded's Deployment fleetjob-hub: it changes or removes the line "value: 460MiB"`},
		{name: "an overlay that changes another object", version: "v0.1.0",
			shardedReplace: [2]string{"kind: ServiceAccount\nmetadata:\n  labels:\n", "kind: ServiceAccount\nmetadata:\n  labels:\n    extra: label\n"},
			wantErrs:       "config/sharded changes ServiceAccount fleetjob-hub"},
		{name: "an overlay that drops an object", version: "v0.1.0",
			shardedReplace: [2]string{"kind: ServiceAccount\n", "kind: ServiceAccountX\n"},
			wantErrs:       "config/sharded drops ServiceAccount/fleetjob-hub"},
		{name: "an overlay that adds a CRD", version: "v0.1.0",
			shardedReplace: [2]string{"kind: Role\n", "kind: CustomResourceDefinition\n"},
			wantErrs:       "config/sharded adds CustomResourceDefinition fleetjob-hub-shard"},
		{name: "a template marker in the overlay", version: "v0.1.0",
			shardedReplace: [2]string{"podAntiAffinity: {}", "podAntiAffinity: '{{'"},
			wantErrs:       "config/sharded's Deployment fleetjob-hub contains {{"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := manifests
			if tc.replace[0] != "" {
				if !strings.Contains(m, tc.replace[0]) {
					t.Fatalf("the fixture has no %q", tc.replace[0])
				}
				m = strings.Replace(m, tc.replace[0], tc.replace[1], 1)
			}
			sh := sharded
			if tc.replace[0] != "" {
				sh = strings.Replace(sh, tc.replace[0], tc.replace[1], 1)
			}
			if tc.shardedReplace[0] != "" {
				if !strings.Contains(sh, tc.shardedReplace[0]) {
					t.Fatalf("the sharded fixture has no %q", tc.shardedReplace[0])
				}
				sh = strings.Replace(sh, tc.shardedReplace[0], tc.shardedReplace[1], 1)
			}
			_, err := generate(m, sh, tc.version)
			if err == nil || !strings.Contains(err.Error(), tc.wantErrs) {
				t.Errorf("generate: got error %v, want one with %q", err, tc.wantErrs)
			}
		})
	}
}

func TestChartVersion(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"v0.1.0", "0.1.0"},
		{"1.2.3-rc.1", "1.2.3-rc.1"},
		{"v0.1.0-3-gaafcdc3", "0.1.0-3-gaafcdc3"},
		{"dev", "0.0.0-dev"},
		{"my_build.7", "0.0.0-my-build-7"},
	} {
		if got := chartVersion(tc.version); got != tc.want {
			t.Errorf("chartVersion(%q) = %q, want %q", tc.version, got, tc.want)
		}
	}
}

// TestConditionalLines renders what conditionalLines makes, as Helm would:
// base with sharding off, the overlay with it on (but for replicas, a value
// of its own), and a failure with sharding on and no leader.
func TestConditionalLines(t *testing.T) {
	base := deploymentOf(t, manifests)
	overlay := deploymentOf(t, sharded)
	text, err := conditionalLines(base, overlay)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := template.Must(template.New("").Funcs(template.FuncMap{
		"fail": func(msg string) (string, error) { return "", errors.New(msg) },
	}).Parse(needsLeader + text))
	render := func(enabled, leader bool) (string, error) {
		var b strings.Builder
		err := tmpl.Execute(&b, map[string]any{"Values": map[string]any{"sharding": map[string]any{"enabled": enabled}, "leaderElection": leader}})
		return b.String(), err
	}
	for _, tc := range []struct {
		enabled bool
		want    string
	}{
		{enabled: false, want: base},
		{enabled: true, want: strings.Replace(overlay, "  replicas: 2\n", "  replicas: 1\n", 1)},
	} {
		got, err := render(tc.enabled, true)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("sharding.enabled=%t renders (-want +got):\n%s", tc.enabled, diff)
		}
	}
	if _, err := render(true, false); err == nil || !strings.Contains(err.Error(), "sharding.enabled needs leaderElection") {
		t.Errorf("sharding without a leader: got error %v, want the chart to refuse it", err)
	}
	if _, err := render(false, false); err != nil {
		t.Errorf("no sharding, no leader: %v", err)
	}
}

func deploymentOf(t *testing.T, manifests string) string {
	t.Helper()
	objects, err := split(manifests)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objects {
		if o.kind == "Deployment" {
			return o.text
		}
	}
	t.Fatal("no Deployment")
	return ""
}
