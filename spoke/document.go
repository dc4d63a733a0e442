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
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetjob/fleetjob/pkg/gzjson"
)

// The plan and the results record of a run are documents: JSON, stored
// gzip-compressed under "<key>.gz" in a ConfigMap's binaryData. Node names
// are most of a document and compress several times over, so that a
// 10,000-node cluster with 63-character names fits in one ConfigMap (and
// member caches and watches carry a fraction of the bytes).
const (
	compressedSuffix = ".gz"
	// maxDocumentBytes bounds a document once decompressed: a ConfigMap
	// someone crafted must not make the hub inflate gigabytes.
	maxDocumentBytes = 64 << 20
)

// encodeDocument returns the binaryData that stores v under key.
func encodeDocument(key string, v any) (map[string][]byte, error) {
	data, err := gzjson.Encode(v)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{key + compressedSuffix: data}, nil
}

// documentSize is the number of bytes a document takes in its ConfigMap.
func documentSize(binaryData map[string][]byte) int {
	n := 0
	for k, v := range binaryData {
		n += len(k) + len(v)
	}
	return n
}

// errNoDocument reports a ConfigMap without the document asked for.
var errNoDocument = errors.New("no document")

// decodeDocument reads the document stored under key in cm into v: the
// compressed form, or the plain JSON in data that hubs before compression
// wrote (runs they started go on after an upgrade).
func decodeDocument(cm *corev1.ConfigMap, key string, v any) error {
	name := client.ObjectKeyFromObject(cm)
	if data, ok := cm.BinaryData[key+compressedSuffix]; ok {
		if err := decodeCompressed(data, v); err != nil {
			return fmt.Errorf("decoding %s of ConfigMap %s: %w", key, name, err)
		}
		return nil
	}
	data, ok := cm.Data[key]
	if !ok {
		return fmt.Errorf("ConfigMap %s has no %s: %w", name, key, errNoDocument)
	}
	if err := json.Unmarshal([]byte(data), v); err != nil {
		return fmt.Errorf("decoding %s of ConfigMap %s: %w", key, name, err)
	}
	return nil
}

// decodeCompressed inflates a compressed document, at most
// maxDocumentBytes of it, into v.
func decodeCompressed(data []byte, v any) error {
	return gzjson.Decode(data, maxDocumentBytes, v)
}
