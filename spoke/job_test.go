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
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// The test run builds node-1's Job in group 1, "batch-2".
const (
	testNode      = "node-1.example.com"
	testGroup     = 1
	testGroupName = "batch-2"
)

// fleetLabels are the labels BuildJob sets on the Job and its pods.
var fleetLabels = map[string]string{
	fleetv1.ManagedByLabel:     fleetv1.ManagedByValue,
	fleetv1.ClusterJobUIDLabel: string(testUID),
	fleetv1.ClusterLabel:       testCluster,
	fleetv1.HubLabel:           testHub,
	fleetv1.NodeLabel:          testNode,
	fleetv1.GroupIndexLabel:    "1",
}

// fleetAnnotations are the annotations BuildJob sets on the Job.
var fleetAnnotations = map[string]string{
	fleetv1.ClusterJobAnnotation: "team-a/disk-clean",
	fleetv1.ClusterAnnotation:    testCluster,
	fleetv1.NodeAnnotation:       testNode,
	fleetv1.GroupAnnotation:      testGroupName,
}

var fleetEnv = []corev1.EnvVar{
	{Name: fleetv1.NodeNameEnv, Value: testNode},
	{Name: fleetv1.ClusterNameEnv, Value: testCluster},
	{Name: fleetv1.GroupEnv, Value: testGroupName},
}

// with returns m plus the key/value pairs kv.
func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func pinTerm(exprs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{
		MatchExpressions: exprs,
		MatchFields:      []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{testNode}}},
	}
}

func requiredAffinity(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
}

func zoneIn(zone string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}
}

func podTemplate(spec corev1.PodSpec) batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: spec}}}
}

func TestBuildJob(t *testing.T) {
	wantMeta := metav1.ObjectMeta{
		Name:        naming.JobName("disk-clean", testUID, testCluster, testNode),
		Namespace:   testNamespace,
		Labels:      fleetLabels,
		Annotations: fleetAnnotations,
	}
	testCases := map[string]struct {
		template batchv1.JobTemplateSpec
		wantJob  *batchv1.Job
	}{
		"plain template gets labels, env and a new affinity term": {
			template: podTemplate(corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}),
			wantJob: &batchv1.Job{
				ObjectMeta: wantMeta,
				Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2), Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: fleetLabels},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "main", Env: fleetEnv}},
						Affinity:   requiredAffinity(pinTerm()),
					},
				}},
			},
		},
		"template labels and annotations kept, fleetjob's win": {
			template: func() batchv1.JobTemplateSpec {
				t := podTemplate(corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}})
				t.Labels = map[string]string{"app": "clean", fleetv1.NodeLabel: "spoofed"}
				t.Annotations = map[string]string{"owner": "ops", fleetv1.NodeAnnotation: "spoofed"}
				t.Spec.Template.Labels = map[string]string{"app": "clean-pod"}
				t.Spec.Template.Annotations = map[string]string{"pod": "note"}
				return t
			}(),
			wantJob: &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{
					Name:        wantMeta.Name,
					Namespace:   testNamespace,
					Labels:      with(fleetLabels, "app", "clean"),
					Annotations: with(fleetAnnotations, "owner", "ops"),
				},
				Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2), Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: with(fleetLabels, "app", "clean-pod"), Annotations: map[string]string{"pod": "note"}},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "main", Env: fleetEnv}},
						Affinity:   requiredAffinity(pinTerm()),
					},
				}},
			},
		},
		"env set in every container and init container, existing var replaced in place": {
			template: podTemplate(corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init"}},
				Containers: []corev1.Container{
					{Name: "main", Env: []corev1.EnvVar{
						{Name: fleetv1.NodeNameEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
						{Name: "KEEP", Value: "1"},
					}},
					{Name: "side", Env: []corev1.EnvVar{{Name: fleetv1.GroupEnv, Value: "old"}}},
				},
			}),
			wantJob: &batchv1.Job{
				ObjectMeta: wantMeta,
				Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2), Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: fleetLabels},
					Spec: corev1.PodSpec{
						InitContainers: []corev1.Container{{Name: "init", Env: fleetEnv}},
						Containers: []corev1.Container{
							{Name: "main", Env: []corev1.EnvVar{fleetEnv[0], {Name: "KEEP", Value: "1"}, fleetEnv[1], fleetEnv[2]}},
							{Name: "side", Env: []corev1.EnvVar{fleetEnv[2], fleetEnv[0], fleetEnv[1]}},
						},
						Affinity: requiredAffinity(pinTerm()),
					},
				}},
			},
		},
		"pin ANDed into each of two existing terms, other affinity kept": {
			template: podTemplate(corev1.PodSpec{
				Containers:   []corev1.Container{{Name: "main"}},
				NodeSelector: map[string]string{"disk": "ssd"},
				Affinity: &corev1.Affinity{
					NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
							{MatchExpressions: []corev1.NodeSelectorRequirement{zoneIn("a")}},
							{MatchExpressions: []corev1.NodeSelectorRequirement{zoneIn("b")}},
						}},
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zoneIn("c")}}}},
					},
					PodAntiAffinity: &corev1.PodAntiAffinity{},
				},
			}),
			wantJob: &batchv1.Job{
				ObjectMeta: wantMeta,
				Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2), Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: fleetLabels},
					Spec: corev1.PodSpec{
						Containers:   []corev1.Container{{Name: "main", Env: fleetEnv}},
						NodeSelector: map[string]string{"disk": "ssd"},
						Affinity: &corev1.Affinity{
							NodeAffinity: &corev1.NodeAffinity{
								RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
									pinTerm(zoneIn("a")), pinTerm(zoneIn("b")),
								}},
								PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zoneIn("c")}}}},
							},
							PodAntiAffinity: &corev1.PodAntiAffinity{},
						},
					},
				}},
			},
		},
		"affinity without required node terms gets one": {
			template: podTemplate(corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main"}},
				Affinity:   &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}},
			}),
			wantJob: &batchv1.Job{
				ObjectMeta: wantMeta,
				Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2), Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: fleetLabels},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "main", Env: fleetEnv}},
						Affinity:   requiredAffinity(pinTerm()),
					},
				}},
			},
		},
		"ttlSecondsAfterFinished dropped, the rest of the spec kept": {
			template: func() batchv1.JobTemplateSpec {
				t := podTemplate(corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}})
				t.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
				t.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
				return t
			}(),
			wantJob: &batchv1.Job{
				ObjectMeta: wantMeta,
				Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](2), ActiveDeadlineSeconds: ptr.To[int64](600), Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: fleetLabels},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "main", Env: fleetEnv}},
						Affinity:   requiredAffinity(pinTerm()),
					},
				}},
			},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			cj := makeClusterJob("disk-clean").Template(tc.template).Obj()
			before := cj.DeepCopy()
			got := BuildJob(testRun(cj), testNode, testGroup, testGroupName)
			// TestBuildJobLogsOnError checks the termination message policy.
			if diff := cmp.Diff(tc.wantJob, got, cmpopts.IgnoreFields(corev1.Container{}, "TerminationMessagePolicy")); diff != "" {
				t.Errorf("BuildJob() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, cj); diff != "" {
				t.Errorf("BuildJob() changed the ClusterJob (-before +after):\n%s", diff)
			}
			if again := BuildJob(testRun(cj), testNode, testGroup, testGroupName); !cmp.Equal(got, again) {
				t.Errorf("BuildJob() is not stable:\n%s", cmp.Diff(got, again))
			}
		})
	}
}

// TestBuildJobLogsOnError: a container that leaves terminationMessagePolicy
// unset reports its last log lines when it fails without a message; one
// that sets it keeps its own.
func TestBuildJobLogsOnError(t *testing.T) {
	cj := makeClusterJob("disk-clean").Template(podTemplate(corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers:     []corev1.Container{{Name: "main"}, {Name: "own", TerminationMessagePolicy: corev1.TerminationMessageReadFile}},
	})).Obj()
	spec := BuildJob(testRun(cj), testNode, testGroup, testGroupName).Spec.Template.Spec
	got := map[string]corev1.TerminationMessagePolicy{}
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		got[c.Name] = c.TerminationMessagePolicy
	}
	want := map[string]corev1.TerminationMessagePolicy{
		"init": corev1.TerminationMessageFallbackToLogsOnError, "main": corev1.TerminationMessageFallbackToLogsOnError, "own": corev1.TerminationMessageReadFile,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("termination message policies (-want +got):\n%s", diff)
	}
}

// TestBuildJobSharesNothing checks the Job is a deep copy: changing it, as
// a client's Create does, leaves the template alone.
func TestBuildJobSharesNothing(t *testing.T) {
	cj := makeClusterJob("disk-clean").Template(podTemplate(corev1.PodSpec{
		Containers: []corev1.Container{{Name: "main", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}},
		Affinity:   requiredAffinity(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zoneIn("a")}}),
	})).Obj()
	cj.Spec.JobTemplate.Labels = map[string]string{"app": "clean"}
	before := cj.DeepCopy()
	job := BuildJob(testRun(cj), testNode, testGroup, testGroupName)
	job.Labels["app"] = "changed"
	job.Spec.BackoffLimit = ptr.To[int32](9)
	pod := &job.Spec.Template.Spec
	pod.Containers[0].Env[0].Value = "changed"
	pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] = "changed"
	if diff := cmp.Diff(before, cj); diff != "" {
		t.Errorf("changing the Job changed the ClusterJob (-before +after):\n%s", diff)
	}
}

func TestBuildJobNames(t *testing.T) {
	long := "ip-10-0-0-1.a-very-long-node-name-that-does-not-fit-in-a-label-value.example.internal"
	testCases := map[string]struct {
		cluster, node    string
		wantNodeLabel    string
		wantClusterLabel string
	}{
		"short names are label values": {cluster: "eu-1", node: "node-1", wantNodeLabel: "node-1", wantClusterLabel: "eu-1"},
		"long node name is hashed in the label, whole in the annotation": {
			cluster: "eu-1", node: long, wantNodeLabel: naming.LabelValue(long), wantClusterLabel: "eu-1",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			cj := makeClusterJob("disk-clean").Obj()
			job := BuildJob(Run{ClusterJob: cj, Cluster: tc.cluster, Namespace: testNamespace}, tc.node, 0, "all")
			if errs := validation.IsDNS1123Label(job.Name); len(errs) != 0 {
				t.Errorf("Job name %q is not a DNS-1123 label: %v", job.Name, errs)
			}
			got := [4]string{job.Labels[fleetv1.NodeLabel], job.Labels[fleetv1.ClusterLabel], job.Annotations[fleetv1.NodeAnnotation], job.Annotations[fleetv1.ClusterAnnotation]}
			want := [4]string{tc.wantNodeLabel, tc.wantClusterLabel, tc.node, tc.cluster}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("node and cluster labels/annotations mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrimJob(t *testing.T) {
	full := makeJob("a").Started(t0).Complete(t1).Obj()
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	full.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"p1"}}
	// What the Job template brought: a team's labels and annotations.
	full.Labels["team.example.com/owner"], full.Annotations["team.example.com/runbook"] = "disks", "https://runbooks.example.com/disk"
	own := func(m map[string]string) map[string]string {
		out := maps.Clone(m)
		maps.DeleteFunc(out, func(k, _ string) bool { return strings.HasPrefix(k, "team.example.com/") })
		return out
	}
	wantLabels, wantAnnotations := own(full.Labels), own(full.Annotations)
	got, err := TrimJob(&full)
	if err != nil {
		t.Fatal(err)
	}
	job := got.(*batchv1.Job)
	if diff := cmp.Diff(batchv1.JobSpec{}, job.Spec); diff != "" {
		t.Errorf("TrimJob() kept the spec (-want +got):\n%s", diff)
	}
	if job.ManagedFields != nil || job.Status.UncountedTerminatedPods != nil {
		t.Errorf("TrimJob() kept managedFields or uncounted pods: %+v", job)
	}
	if diff := cmp.Diff(wantLabels, job.Labels); diff != "" {
		t.Errorf("TrimJob() labels: fleetjob's own and no others (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantAnnotations, job.Annotations); diff != "" {
		t.Errorf("TrimJob() annotations: fleetjob's own and no others (-want +got):\n%s", diff)
	}
	if len(wantLabels) < 4 || len(wantAnnotations) < 3 {
		t.Fatalf("the test Job lacks fleetjob's labels (%v) or annotations (%v)", wantLabels, wantAnnotations)
	}
	cm := &corev1.ConfigMap{}
	if same, _ := TrimJob(cm); same != cm {
		t.Errorf("TrimJob() changed a ConfigMap")
	}
}

// TestTrimJobKeepsWhatDeriveReads: of a Job's conditions only its final
// one is kept (Complete without its reason, Failed with it), and a trimmed
// Job derives the same node state as the full one, in every state a Job
// goes through.
func TestTrimJobKeepsWhatDeriveReads(t *testing.T) {
	complete := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: t1}
	failed := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: t1,
		Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}
	testCases := map[string]struct {
		job  batchv1.Job
		want []batchv1.JobCondition
	}{
		"created":  {job: makeJob("a").Obj()},
		"running":  {job: makeJob("a").Started(t0).Pods(1, 1, 0).Obj()},
		"starting": {job: makeJob("a").Started(t0).Pods(1, 0, 0).Obj()},
		"succeeding": {job: makeJob("a").Started(t0).Pods(0, 0, 1).
			Condition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "CompletionsReached", "Reached expected number of succeeded pods", t1).Obj()},
		"complete": {job: makeJob("a").Started(t0).
			Condition(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "CompletionsReached", "Reached expected number of succeeded pods", t1).
			Complete(t1).Obj(), want: []batchv1.JobCondition{complete}},
		"failing": {job: makeJob("a").Started(t0).Pods(0, 0, 1).
			Condition(batchv1.JobFailureTarget, corev1.ConditionTrue, "BackoffLimitExceeded", "Job has reached the specified backoff limit", t1).Obj()},
		"failed": {job: makeJob("a").Started(t0).
			Condition(batchv1.JobFailureTarget, corev1.ConditionTrue, "BackoffLimitExceeded", "Job has reached the specified backoff limit", t1).
			Failed(failed.Reason, failed.Message, t1).Obj(), want: []batchv1.JobCondition{failed}},
		"suspended": {job: makeJob("a").Condition(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", t0).Obj()},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got, err := TrimJob(tc.job.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			job := got.(*batchv1.Job)
			if diff := cmp.Diff(tc.want, job.Status.Conditions); diff != "" {
				t.Errorf("TrimJob() conditions mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(Derive(&twoGroups, []batchv1.Job{tc.job}, present("a", "b", "c"), Results{}),
				Derive(&twoGroups, []batchv1.Job{*job}, present("a", "b", "c"), Results{})); diff != "" {
				t.Errorf("state from a trimmed Job differs (-full +trimmed):\n%s", diff)
			}
		})
	}
}

// TestTrimJobInterns: two Jobs of a run share their namespace and the keys
// and values of their labels and annotations, but for the node's, once
// trimmed.
func TestTrimJobInterns(t *testing.T) {
	trim := func(node string) *batchv1.Job {
		j := makeJob(node).Obj()
		// Decoded from separate responses: equal strings, separate bytes.
		j.Namespace = strings.Clone(j.Namespace)
		for _, m := range []map[string]string{j.Labels, j.Annotations} {
			for k, v := range maps.Clone(m) {
				delete(m, k)
				m[strings.Clone(k)] = strings.Clone(v)
			}
		}
		got, err := TrimJob(&j)
		if err != nil {
			t.Fatal(err)
		}
		return got.(*batchv1.Job)
	}
	a, b := trim("a"), trim("b")
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if !same(a.Namespace, b.Namespace) {
		t.Errorf("namespaces not shared")
	}
	for _, m := range [][2]map[string]string{{a.Labels, b.Labels}, {a.Annotations, b.Annotations}} {
		for k, v := range m[0] {
			for k2 := range m[1] {
				if k2 == k && !same(k, k2) {
					t.Errorf("key %s not shared", k)
				}
			}
			if k == fleetv1.NodeLabel || k == fleetv1.NodeAnnotation {
				continue
			}
			if !same(v, m[1][k]) {
				t.Errorf("value of %s not shared: %q and %q", k, v, m[1][k])
			}
		}
	}
}

func TestJobChanged(t *testing.T) {
	base := makeJob("a").Started(t0).Obj()
	testCases := map[string]struct {
		mutate func(*batchv1.Job)
		want   bool
	}{
		"nothing":              {mutate: func(*batchv1.Job) {}},
		"resourceVersion only": {mutate: func(j *batchv1.Job) { j.ResourceVersion = "99" }},
		"uncounted pods only":  {mutate: func(j *batchv1.Job) { j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{} }},
		"a condition":          {mutate: func(j *batchv1.Job) { *j = makeJob("a").Started(t0).Complete(t1).Obj() }, want: true},
		"ready pods":           {mutate: func(j *batchv1.Job) { j.Status.Ready = ptr.To[int32](1) }, want: true},
		"deletion":             {mutate: func(j *batchv1.Job) { j.DeletionTimestamp = &t2 }, want: true},
		"an annotation":        {mutate: func(j *batchv1.Job) { j.Annotations["x"] = "y" }, want: true},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			updated := base.DeepCopy()
			tc.mutate(updated)
			if got := JobChanged(&base, updated); got != tc.want {
				t.Errorf("JobChanged() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBuildJobServiceAccountToken: a Job pod mounts its ServiceAccount's
// token only when the run allows that account; the hub's reserved name
// never does.
func TestBuildJobServiceAccountToken(t *testing.T) {
	for _, tc := range []struct {
		name      string
		spec      corev1.PodSpec
		allowed   []string
		wantToken *bool
	}{
		{name: "default, nothing listed", wantToken: nil},
		{name: "default listed", allowed: []string{"default"}, wantToken: nil},
		{name: "named and listed", spec: corev1.PodSpec{ServiceAccountName: "builder"}, allowed: []string{"default", "builder"}, wantToken: nil},
		{name: "named and listed keeps the template's choice", spec: corev1.PodSpec{ServiceAccountName: "builder", AutomountServiceAccountToken: ptr.To(true)},
			allowed: []string{"builder"}, wantToken: ptr.To(true)},
		{name: "named, not listed", spec: corev1.PodSpec{ServiceAccountName: "builder", AutomountServiceAccountToken: ptr.To(true)}, wantToken: ptr.To(false)},
		{name: "default not listed", allowed: []string{"builder"}, wantToken: ptr.To(false)},
		{name: "the deprecated field counts", spec: corev1.PodSpec{DeprecatedServiceAccount: "builder"}, allowed: []string{"default"}, wantToken: ptr.To(false)},
		{name: "the hub's reserved name, even listed", spec: corev1.PodSpec{ServiceAccountName: fleetv1.ReservedServiceAccount},
			allowed: []string{fleetv1.ReservedServiceAccount}, wantToken: ptr.To(false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Containers = []corev1.Container{{Name: "main"}}
			run := testRun(makeClusterJob("disk-clean").Template(podTemplate(spec)).Obj())
			run.ServiceAccounts = tc.allowed
			got := BuildJob(run, testNode, testGroup, testGroupName).Spec.Template.Spec.AutomountServiceAccountToken
			if diff := cmp.Diff(tc.wantToken, got); diff != "" {
				t.Errorf("automountServiceAccountToken (-want +got):\n%s", diff)
			}
		})
	}
}
