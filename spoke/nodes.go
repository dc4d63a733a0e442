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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
)

// TrimNodeMetadata keeps of a node's metadata what fleetjob reads from a
// cache, for a metadata-only Node cache: the name (whether the node exists)
// and what identifies the object. Planning and group starts read full
// Nodes from the API server; a cache only answers "is it there", and real
// nodes carry dozens of labels and annotations per node, thousands of nodes
// per member. The one annotation kept is a drain's cordon mark: which
// nodes a run drains, and must release, is read from the cache. Anything
// else is returned as it is.
func TrimNodeMetadata(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion, DeletionTimestamp: m.DeletionTimestamp,
	}}
	if mark, ok := m.Annotations[fleetv1.CordonedByAnnotation]; ok {
		out.Annotations = map[string]string{fleetv1.CordonedByAnnotation: mark}
	}
	return out, nil
}
