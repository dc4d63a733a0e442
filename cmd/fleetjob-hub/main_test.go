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
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/controller"
)

func TestValidate(t *testing.T) {
	good := func() (clusters.Options, controller.Options) {
		return clusters.Options{Namespace: "fleetjob-system", QPS: 100, Burst: 200, RequestTimeout: 30 * time.Second,
				ConnectTimeout: time.Minute, HealthInterval: 10 * time.Second},
			controller.Options{UnreachableTimeout: 10 * time.Minute, MemberTimeout: 30 * time.Second,
				MemberErrorTimeout: 10 * time.Minute, EmptySelectionGrace: time.Minute, MemberWorkers: 16, Parallelism: 16, GCInterval: 5 * time.Minute}
	}
	testCases := map[string]struct {
		mutate  func(*clusters.Options, *controller.Options)
		wantErr string
	}{
		"defaults":                 {mutate: func(*clusters.Options, *controller.Options) {}},
		"health interval 0":        {mutate: func(m *clusters.Options, _ *controller.Options) { m.HealthInterval = 0 }, wantErr: "--member-health-interval must be positive"},
		"error timeout negative":   {mutate: func(_ *clusters.Options, o *controller.Options) { o.MemberErrorTimeout = -time.Second }, wantErr: "--member-error-timeout must be positive"},
		"no grace is fine":         {mutate: func(_ *clusters.Options, o *controller.Options) { o.EmptySelectionGrace = 0 }},
		"ended-run TTL negative":   {mutate: func(_ *clusters.Options, o *controller.Options) { o.EndedRunTTL = -time.Hour }, wantErr: "--ended-run-ttl must not be negative"},
		"ended-run TTL a day":      {mutate: func(_ *clusters.Options, o *controller.Options) { o.EndedRunTTL = 24 * time.Hour }},
		"parallelism 0":            {mutate: func(_ *clusters.Options, o *controller.Options) { o.Parallelism = 0 }, wantErr: "--parallelism must be at least 1"},
		"member workers 0":         {mutate: func(_ *clusters.Options, o *controller.Options) { o.MemberWorkers = 0 }, wantErr: "--member-workers must be at least 1"},
		"qps 0":                    {mutate: func(m *clusters.Options, _ *controller.Options) { m.QPS = 0 }, wantErr: "--member-qps must be positive"},
		"hub id not a label value": {mutate: func(_ *clusters.Options, o *controller.Options) { o.HubID = "prod/eu" }, wantErr: `--hub-id "prod/eu" is not a valid label value`},
		"hub id":                   {mutate: func(_ *clusters.Options, o *controller.Options) { o.HubID = "prod-eu-1" }},
		"no namespace":             {mutate: func(m *clusters.Options, _ *controller.Options) { m.Namespace = "" }, wantErr: "--registration-namespace must not be empty"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			m, o := good()
			tc.mutate(&m, &o)
			err := validate(m, o)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("validate() error = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("validate() error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// TestKlogIsJSON: what client-go and the leader election log through klog
// comes out of the hub's own logger, one JSON object a line, like the
// hub's lines.
func TestKlogIsJSON(t *testing.T) {
	var out bytes.Buffer
	setLogger(zap.New(zap.WriteTo(&out), zap.JSONEncoder()))
	t.Cleanup(klog.ClearLogger)
	klog.InfoS("Watch close", "reflector", "pkg/mod/k8s.io/client-go/tools/cache/reflector.go:1", "type", "*v1.Job")
	klog.Warningf("unable to sync caches for %s", "member-a")
	klog.ErrorS(nil, "Failed to update lock", "lease", "fleetjob-system/fleetjob-hub.fleetjob.io")
	klog.Flush()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var entry struct {
			Msg string `json:"msg"`
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("a klog line is not JSON: %q: %v", line, err)
		}
		got = append(got, entry.Msg)
	}
	want := []string{"Watch close", "unable to sync caches for member-a", "Failed to update lock"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("klog messages (-want +got):\n%s", diff)
	}
}

// TestValidateShard: --shard is refused, naming what is missing, without a
// leader or a replica name.
func TestValidateShard(t *testing.T) {
	testCases := map[string]struct {
		serve   serving
		podName string
		want    []string // substrings of the error; none: valid
	}{
		"not sharded":          {serve: serving{}},
		"sharded":              {serve: serving{shard: true, leaderElect: true}, podName: "fleetjob-hub-7d9f-x2x"},
		"no leader":            {serve: serving{shard: true}, podName: "fleetjob-hub-0", want: []string{"--shard needs --leader-elect"}},
		"no name":              {serve: serving{shard: true, leaderElect: true}, want: []string{"--shard needs POD_NAME"}},
		"neither":              {serve: serving{shard: true}, want: []string{"--leader-elect", "POD_NAME"}},
		"not a name":           {serve: serving{shard: true, leaderElect: true}, podName: "Hub_0", want: []string{`POD_NAME "Hub_0" is not a valid name`}},
		"no name, not sharded": {serve: serving{leaderElect: true}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			err := validateShard(tc.serve, tc.podName)
			if (err != nil) != (len(tc.want) > 0) {
				t.Fatalf("validateShard() = %v, want an error: %t", err, len(tc.want) > 0)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("validateShard() = %q, want it to say %q", err, w)
				}
			}
		})
	}
}
