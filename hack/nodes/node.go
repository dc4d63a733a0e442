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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeName is the i-th (from 1) node of member m: m1-node-01, m1-node-02,
// ... m1-node-1000. The e2e suite and the samples name nodes this way, so
// the format (at least two digits) must not change.
func nodeName(m, i int) string { return fmt.Sprintf("m%d-node-%02d", m, i) }

// fakeNode is the i-th fake node of member m. Zone and pool are assigned
// round robin, so every (zone, pool) pair and groups of different sizes
// exist. The annotation kwok.x-k8s.io/node: fake makes kwok adopt the node:
// it keeps it Ready and runs its pods.
func fakeNode(m, i int, zones, pools []string) *corev1.Node {
	name := nodeName(m, i)
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl": "0",
				"kwok.x-k8s.io/node":           "fake",
			},
			Labels: map[string]string{
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/hostname":        name,
				"kubernetes.io/os":              "linux",
				"kubernetes.io/role":            "agent",
				"node-role.kubernetes.io/agent": "",
				"type":                          "kwok",
				"topology.kubernetes.io/zone":   zones[(i-1)%len(zones)],
				"fleetjob.io/pool":              pools[(i-1)%len(pools)],
				"fleetjob.io/member":            fmt.Sprintf("member-%d", m),
			},
		},
		Status: corev1.NodeStatus{
			Allocatable: resources,
			Capacity:    resources.DeepCopy(),
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:     "amd64",
				KubeletVersion:   "fake",
				KubeProxyVersion: "fake", //nolint:staticcheck // deprecated, but fleet.sh's nodes always set it: the shape stays the same
				OperatingSystem:  "linux",
			},
		},
	}
}

// ready tells whether node's Ready condition is True.
func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
