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

package hub

import (
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// gathered returns the hub's metric family name as its /metrics would: the
// hub runs in this process and registers with controller-runtime's
// registry.
func gathered(name string) *dto.MetricFamily {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() == name {
			return f
		}
	}
	return nil
}

// histogramCount is the number of observations of histogram name.
func histogramCount(name string) uint64 {
	var n uint64
	if f := gathered(name); f != nil {
		for _, m := range f.GetMetric() {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}

// counterValue is the value of counter name with exactly labels.
func counterValue(name string, labels map[string]string) float64 {
	f := gathered(name)
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		if len(have) == len(labels) && matches(have, labels) {
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func matches(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
