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
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// jobTemplate is the one Job template both sides run: fleetjob's
// ClusterJobs and the raw baseline. kwok's built-in pod stages (the fleet
// runs without FLEET_KWOK_CRDS) mark a scheduled pod Running and then
// Succeeded at once and ignore the delay annotations, so a node's work
// costs no time: what is measured is creating, scheduling and finishing
// Jobs, which is all fleetjob adds to.
func jobTemplate() batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		BackoffLimit: ptr.To[int32](0),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			// Deleted pods go at once, not after 30 s: the runs wait for
			// the previous run's pods to be gone.
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{
				Name:    "work",
				Image:   "busybox:1.36",
				Command: []string{"sh", "-c", `echo "working on $FLEETJOB_NODE_NAME"`},
			}},
		}},
	}}
}

// pinToNode pins a pod to node the way fleetjob does (spoke/job.go): a
// required node affinity term `metadata.name In [node]`, which goes
// through the scheduler, never spec.nodeName.
func pinToNode(spec *corev1.PodSpec, node string) {
	spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
				Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node},
			}}}},
		},
	}}
}

// setEnv gives every container the variables fleetjob sets, so that a raw
// Job's pod is the same size as fleetjob's.
func setEnv(spec *corev1.PodSpec, node, cluster, group string) {
	for i := range spec.Containers {
		spec.Containers[i].Env = append(spec.Containers[i].Env,
			corev1.EnvVar{Name: fleetv1.NodeNameEnv, Value: node},
			corev1.EnvVar{Name: fleetv1.ClusterNameEnv, Value: cluster},
			corev1.EnvVar{Name: fleetv1.GroupEnv, Value: group},
		)
	}
}
