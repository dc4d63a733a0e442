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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTrimNodeMetadata(t *testing.T) {
	gone := metav1.Unix(1764600000, 0)
	node := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "u1", ResourceVersion: "42", DeletionTimestamp: &gone,
			Labels:        map[string]string{"topology.kubernetes.io/zone": "a"},
			Annotations:   map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
		},
	}
	got, err := TrimNodeMetadata(node)
	if err != nil {
		t.Fatal(err)
	}
	want := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "u1", ResourceVersion: "42", DeletionTimestamp: &gone},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TrimNodeMetadata() (-want +got):\n%s", diff)
	}
	full := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"a": "b"}}}
	if got, _ := TrimNodeMetadata(full); got != any(full) {
		t.Errorf("TrimNodeMetadata() changed a %T; it trims node metadata only", full)
	}
}
