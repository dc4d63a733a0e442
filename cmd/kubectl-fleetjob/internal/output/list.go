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

package output

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object converts obj, which carries its apiVersion and kind, to the
// unstructured form every printer takes.
func Object(obj any) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("printing %T: %w", obj, err)
	}
	return u, nil
}

// List is items as a v1 List, as kubectl get prints several objects: -o
// json and yaml print one document, -o name one line per item, and
// jsonpath and custom-columns reach each item.
func List[T any](items []T) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	list.Items = make([]unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		u, err := Object(it)
		if err != nil {
			return nil, err
		}
		list.Items = append(list.Items, *u)
	}
	return list, nil
}

// content is obj as JSON-shaped maps, what jsonpath walks.
func content(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}
