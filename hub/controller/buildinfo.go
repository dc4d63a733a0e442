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

package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/fleetjob/fleetjob/pkg/version"
)

// newBuildInfo is the gauge fleetjob_build_info: 1, labelled with what
// binary info describes, so that a query can tell which version each
// replica runs during a rollout. Every replica exports it, leader or not.
func newBuildInfo(info version.Info) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "fleetjob_build_info",
		Help:        "The hub binary: 1, labelled with its version, commit and the Go version that built it.",
		ConstLabels: prometheus.Labels{"version": info.Version, "commit": info.Commit, "go_version": info.GoVersion},
	})
	g.Set(1)
	return g
}

func init() {
	metrics.Registry.MustRegister(newBuildInfo(version.Get()))
}
