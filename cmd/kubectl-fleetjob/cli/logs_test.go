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

package cli

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
	"github.com/fleetjob/fleetjob/test/util/wrappers"
)

var t0 = time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)

func runPod(cj *fleetv1.ClusterJob, name, cluster, node, scheduledOn string, created time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "fleetjob-system", CreationTimestamp: metav1.NewTime(created), Labels: map[string]string{
			fleetv1.ClusterJobUIDLabel: naming.LabelValue(string(cj.UID)), fleetv1.ClusterLabel: naming.LabelValue(cluster), fleetv1.NodeLabel: naming.LabelValue(node),
		}},
		Spec: corev1.PodSpec{NodeName: scheduledOn},
	}
}

func TestNodeLogs(t *testing.T) {
	cj := wrappers.MakeClusterJob("clean", "default").Obj()
	cj.UID = types.UID("6c9d0f4e-1f2a-4b7c-9d3e-5a6b7c8d9e0f")
	other := cj.DeepCopy()
	other.UID = "another-run"
	cs := fake.NewClientset(
		runPod(cj, "clean-n1-abc", "eu-1", "n1", "n1", t0),
		runPod(other, "other-n1-def", "eu-1", "n1", "n1", t0.Add(time.Minute)),
	)
	var out bytes.Buffer
	opts := &corev1.PodLogOptions{Follow: true, Previous: true, TailLines: ptr.To[int64](10)}
	if err := nodeLogs(context.Background(), cs, "fleetjob-system", cj, "eu-1", "n1", opts, &out); err != nil {
		t.Fatalf("nodeLogs() error = %v", err)
	}
	if got := out.String(); got != "fake logs" {
		t.Errorf("nodeLogs() printed %q, want the pod's logs", got)
	}
	var asked []*corev1.PodLogOptions
	for _, a := range cs.Actions() {
		if a.GetSubresource() == "log" {
			asked = append(asked, a.(clienttesting.GenericAction).GetValue().(*corev1.PodLogOptions))
		}
	}
	if diff := cmp.Diff([]*corev1.PodLogOptions{opts}, asked); diff != "" {
		t.Errorf("log requests mismatch (-want +got):\n%s", diff)
	}

	err := nodeLogs(context.Background(), cs, "fleetjob-system", cj, "eu-1", "n2", opts, &out)
	want := "no pod of clusterjob default/clean on node n2 in cluster eu-1 (namespace fleetjob-system): its group has not started there, or the pod is gone"
	if diff := cmp.Diff(want, errString(err), substring); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}
