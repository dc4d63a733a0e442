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

package spoke

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unique"

	apiequality "k8s.io/apimachinery/pkg/api/equality"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/pkg/podsecurity"
)

// BuildJob is the Job that runs run's template on node, the group-th group
// of the plan, named groupName. It is pure: the same inputs always give the
// same Job, under a name a restarted controller finds again.
func BuildJob(run Run, node string, group int, groupName string) *batchv1.Job {
	cj := run.ClusterJob
	tmpl := cj.Spec.JobTemplate.DeepCopy()
	labels := jobLabels(run, node, group)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        naming.JobName(cj.Name, cj.UID, run.Cluster, node),
			Namespace:   run.Namespace,
			Labels:      merged(tmpl.Labels, labels),
			Annotations: merged(tmpl.Annotations, jobAnnotations(run, node, groupName)),
		},
		Spec: tmpl.Spec,
	}
	// The run decides when its Jobs go away: a Job deleted by its TTL would
	// look like a node never started, and run again.
	job.Spec.TTLSecondsAfterFinished = nil
	pod := &job.Spec.Template
	pod.Labels = merged(pod.Labels, labels)
	setEnv(&pod.Spec, []corev1.EnvVar{
		{Name: fleetv1.NodeNameEnv, Value: node},
		{Name: fleetv1.ClusterNameEnv, Value: run.Cluster},
		{Name: fleetv1.GroupEnv, Value: groupName},
	})
	pinToNode(&pod.Spec, node)
	if cj.Spec.Drains() {
		tolerateCordon(&pod.Spec)
	}
	logsOnError(&pod.Spec)
	limitToken(&pod.Spec, run.ServiceAccounts)
	return job
}

// tolerateCordon lets the pod of a drain run schedule on its node, which
// the run cordoned: the scheduler keeps pods off a node with
// spec.unschedulable unless they tolerate the taint that stands for it.
func tolerateCordon(spec *corev1.PodSpec) {
	t := corev1.Toleration{Key: fleetv1.UnschedulableTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	if !slices.ContainsFunc(spec.Tolerations, func(have corev1.Toleration) bool {
		return have.ToleratesTaint(klog.Background(), &corev1.Taint{Key: t.Key, Effect: t.Effect}, true)
	}) {
		spec.Tolerations = append(spec.Tolerations, t)
	}
}

// limitToken keeps the token of the pod's ServiceAccount out of the pod
// unless it is one of allowed (only default when allowed is empty): the
// hub refuses such a template before any Job, and this holds even for a
// Job created without that check. The hub's reserved name never gets it.
func limitToken(spec *corev1.PodSpec, allowed []string) {
	name, _ := podsecurity.ServiceAccount(spec)
	if len(allowed) == 0 {
		allowed = []string{fleetv1.DefaultServiceAccount}
	}
	if name == fleetv1.ReservedServiceAccount || !slices.Contains(allowed, name) {
		spec.AutomountServiceAccountToken = ptr.To(false)
	}
}

// logsOnError makes a container that leaves its terminationMessagePolicy
// unset report its last log lines as its termination message when it
// fails without writing one: the hub records a failed node's message.
func logsOnError(spec *corev1.PodSpec) {
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if cs[i].TerminationMessagePolicy == "" {
				cs[i].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
			}
		}
	}
}

// jobLabels are on the Job and its pods, so both can be selected per run,
// cluster, node and group.
func jobLabels(run Run, node string, group int) map[string]string {
	l := runLabels(run)
	l[fleetv1.NodeLabel] = naming.LabelValue(node)
	l[fleetv1.GroupIndexLabel] = strconv.Itoa(group)
	return l
}

func jobAnnotations(run Run, node, groupName string) map[string]string {
	a := runAnnotations(run)
	a[fleetv1.NodeAnnotation] = node
	a[fleetv1.GroupAnnotation] = groupName
	return a
}

// merged is base with ours on top: fleetjob's keys win, since the run finds
// its objects by them.
func merged(base, ours map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(ours))
	maps.Copy(out, base)
	maps.Copy(out, ours)
	return out
}

// setEnv sets vars in every container and init container, replacing a
// variable of the same name in place, so the work always sees where it runs.
func setEnv(spec *corev1.PodSpec, vars []corev1.EnvVar) {
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			for _, v := range vars {
				containers[i].Env = withEnv(containers[i].Env, v)
			}
		}
	}
}

func withEnv(env []corev1.EnvVar, v corev1.EnvVar) []corev1.EnvVar {
	for i := range env {
		if env[i].Name == v.Name {
			env[i] = v
			return env
		}
	}
	return append(env, v)
}

// pinToNode makes node the only node the pod can be scheduled on, the way
// the DaemonSet controller does: a required `metadata.name In [node]` field
// term ANDed into every term of the template's required node affinity (the
// terms are ORed, so each must carry it), or one new term if there is none.
// Unlike spec.nodeName, this goes through the scheduler, so resources,
// taints and preemption are honoured and an unfit pod stays Pending with a
// reason.
func pinToNode(spec *corev1.PodSpec, node string) {
	req := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	required := na.RequiredDuringSchedulingIgnoredDuringExecution
	if len(required.NodeSelectorTerms) == 0 {
		required.NodeSelectorTerms = []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{req}}}
		return
	}
	for i := range required.NodeSelectorTerms {
		required.NodeSelectorTerms[i].MatchFields = append(required.NodeSelectorTerms[i].MatchFields, req)
	}
}

// TrimJob keeps of a Job what fleetjob reads of it, for a cache: its
// metadata (without managedFields, and of its labels and annotations only
// fleetjob's own) and the status fields Derive and the start timeout look
// at. The spec, with its pod template, is most of a Job's size and is never
// read back, and the labels and annotations a template brings were most of
// the rest (a 5 x 1,000-node run's heap): a hub caching thousands of Jobs
// per member holds a fraction of the memory. What every Job of a run
// repeats (its namespace, the keys and the values of its labels and
// annotations but the node's) is kept once, interned: 10,000 Jobs decoded
// held 10,000 copies of each. Anything that is not a Job is returned as it
// is.
func TrimJob(obj any) (any, error) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return obj, nil
	}
	trimmed := &batchv1.Job{TypeMeta: job.TypeMeta, ObjectMeta: job.ObjectMeta, Status: trimStatus(job.Status)}
	trimmed.ManagedFields = nil
	trimmed.Namespace = intern(job.Namespace)
	trimmed.Labels, trimmed.Annotations = ownKeys(job.Labels, fleetv1.NodeLabel), ownKeys(job.Annotations, fleetv1.NodeAnnotation)
	return trimmed, nil
}

// ownKeys is the entries of m that fleetjob sets and reads, interned but
// for the value of key distinct, which no two Jobs of a run share.
func ownKeys(m map[string]string, distinct string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if k == fleetv1.ManagedByLabel || strings.HasPrefix(k, fleetv1.GroupVersion.Group+"/") {
			if out == nil {
				out = make(map[string]string, 8)
			}
			if k != distinct {
				v = intern(v)
			}
			out[intern(k)] = v
		}
	}
	return out
}

// intern is s, shared with every other string equal to it that was
// interned and is still referenced.
func intern(s string) string { return unique.Make(s).Value() }

// JobChanged tells whether an update changed anything fleetjob reads of a
// Job: a status that only moves uncounted pods or a resync wakes nobody.
func JobChanged(old, updated *batchv1.Job) bool {
	a, b := *old, *updated
	return !a.DeletionTimestamp.Equal(b.DeletionTimestamp) ||
		!maps.Equal(a.Annotations, b.Annotations) || !maps.Equal(a.Labels, b.Labels) ||
		!apiequality.Semantic.DeepEqual(trimStatus(a.Status), trimStatus(b.Status))
}

// trimStatus keeps of a Job's status its counters, times and final
// condition (Complete or Failed, as jobOutcome reads it): the conditions
// before it (SuccessCriteriaMet, FailureTarget) are never read, nor is why
// a Job completed, only why it failed.
func trimStatus(s batchv1.JobStatus) batchv1.JobStatus {
	out := batchv1.JobStatus{StartTime: s.StartTime, CompletionTime: s.CompletionTime,
		Active: s.Active, Ready: s.Ready, Terminating: s.Terminating, Succeeded: s.Succeeded, Failed: s.Failed}
	for _, c := range s.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			out.Conditions = append(out.Conditions, batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
				LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
		case batchv1.JobComplete:
			out.Conditions = append(out.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue,
				LastTransitionTime: c.LastTransitionTime})
		}
	}
	return out
}
