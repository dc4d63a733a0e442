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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1 "github.com/fleetjob/fleetjob/api/v1alpha1"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// A document too large for one ConfigMap (a plan, a results record) is
// split: its compressed bytes are cut into parts of maxPartBytes, the first
// ConfigMap holds the first part and annotations saying how many there are
// and the SHA-256 of the whole, and the others are named after it.
const (
	// maxPartBytes leaves room under the 1 MiB ConfigMap limit for the
	// object's metadata. Compressed, 10,000 nodes with random 63-character
	// names take about half of it.
	maxPartBytes = 900 << 10
	// maxParts bounds a document to 16 ConfigMaps, 14 MiB compressed: far
	// more than the 100,000 nodes a cluster may have need.
	maxParts = 16
)

// layout is how one kind of document is split.
type layout struct {
	// what names the document in errors.
	what string
	// key names the document in its ConfigMaps.
	key string
	// parts and digest are the annotations of its first ConfigMap.
	parts, digest string
	// partName names its i-th part (from 1) when its digest is digest.
	partName func(digest string, i int) string
}

// planLayout is how run's plan is split: its parts are named by index only,
// as a plan never changes.
func planLayout(run Run) layout {
	uid := run.ClusterJob.UID
	return layout{what: "plan", key: planKey, parts: fleetv1.PlanPartsAnnotation, digest: fleetv1.PlanDigestAnnotation,
		partName: func(_ string, i int) string { return naming.PlanPartName(uid, i) }}
}

// recordVersionLen is how much of its digest names a version of a split
// record: 64 bits, so that two versions of one run never share a name.
const recordVersionLen = 16

// recordLayout is how run's results record is split: its parts are named
// after the digest, as each write of the record makes new ones.
func recordLayout(run Run) layout {
	uid := run.ClusterJob.UID
	return layout{what: "results record", key: resultsKey, parts: fleetv1.RecordPartsAnnotation, digest: fleetv1.RecordDigestAnnotation,
		partName: func(digest string, i int) string { return naming.ResultsPartName(uid, digest[:recordVersionLen], i) }}
}

// split cuts the compressed document doc into the chunks its ConfigMaps
// hold, and returns the annotations of the first: none when it fits in one.
func (l layout) split(doc []byte) ([][]byte, map[string]string, error) {
	chunks := splitBytes(doc, maxPartBytes)
	if len(chunks) > maxParts {
		return nil, nil, fmt.Errorf("the %s is %d bytes compressed, more than the %d that %d ConfigMaps hold", l.what, len(doc), maxParts*maxPartBytes, maxParts)
	}
	if len(chunks) == 1 {
		return chunks, nil, nil
	}
	sum := sha256.Sum256(doc)
	return chunks, map[string]string{l.parts: strconv.Itoa(len(chunks)), l.digest: hex.EncodeToString(sum[:])}, nil
}

// isSplit tells whether cm is the first of several ConfigMaps.
func (l layout) isSplit(cm *corev1.ConfigMap) bool {
	_, ok := cm.Annotations[l.parts]
	return ok
}

// partNames are the names of the parts cm's annotations say it has; nil
// when it has none.
func (l layout) partNames(cm *corev1.ConfigMap) ([]string, error) {
	if !l.isSplit(cm) {
		return nil, nil
	}
	key := client.ObjectKeyFromObject(cm)
	n, err := strconv.Atoi(cm.Annotations[l.parts])
	if err != nil || n < 2 || n > maxParts {
		return nil, fmt.Errorf("%s ConfigMap %s: %s %q is not a number of parts from 2 to %d", l.what, key, l.parts, cm.Annotations[l.parts], maxParts)
	}
	digest := cm.Annotations[l.digest]
	if _, err := hex.DecodeString(digest); err != nil || len(digest) != 2*sha256.Size {
		return nil, fmt.Errorf("%s ConfigMap %s: %s %q is not a SHA-256", l.what, key, l.digest, digest)
	}
	names := make([]string, 0, n-1)
	for i := 1; i < n; i++ {
		names = append(names, l.partName(digest, i))
	}
	return names, nil
}

// join reads the parts of the split document whose first ConfigMap is cm
// and returns the whole compressed document, checked against the digest cm
// holds: a part lost, replaced or another run's is an error, never a
// different document.
func (l layout) join(ctx context.Context, r client.Reader, cm *corev1.ConfigMap, run Run) ([]byte, error) {
	key := client.ObjectKeyFromObject(cm)
	names, err := l.partNames(cm)
	if err != nil {
		return nil, err
	}
	doc := slices.Clone(cm.BinaryData[l.key+compressedSuffix])
	for _, name := range names {
		var part corev1.ConfigMap
		partKey := client.ObjectKey{Namespace: cm.Namespace, Name: name}
		if err := r.Get(ctx, partKey, &part); err != nil {
			return nil, fmt.Errorf("reading %s part %s: %w", l.what, partKey, err)
		}
		if !ownedBy(&part, run.ClusterJob.UID) {
			return nil, fmt.Errorf("ConfigMap %s exists but does not belong to ClusterJob %s", partKey, run.ClusterJob.UID)
		}
		doc = append(doc, part.BinaryData[l.key+compressedSuffix]...)
	}
	sum := sha256.Sum256(doc)
	if got := hex.EncodeToString(sum[:]); got != cm.Annotations[l.digest] {
		return nil, fmt.Errorf("%s ConfigMap %s and its %d parts do not make the %s it was stored as (SHA-256 %s, want %s)", l.what, key, len(names), l.what, got, cm.Annotations[l.digest])
	}
	return doc, nil
}

// decode reads the document cm holds into v: with the parts r reads when
// it is split.
func (l layout) decode(ctx context.Context, r client.Reader, cm *corev1.ConfigMap, run Run, v any) error {
	if !l.isSplit(cm) {
		return decodeDocument(cm, l.key, v)
	}
	doc, err := l.join(ctx, r, cm, run)
	if err != nil {
		return err
	}
	if err := decodeCompressed(doc, v); err != nil {
		return fmt.Errorf("decoding the %s of ConfigMap %s and its parts: %w", l.what, client.ObjectKeyFromObject(cm), err)
	}
	return nil
}

// splitBytes cuts b into pieces of at most n bytes; an empty b is one
// empty piece.
func splitBytes(b []byte, n int) [][]byte {
	out := [][]byte{b[:min(len(b), n)]}
	for b = b[min(len(b), n):]; len(b) > 0; b = b[min(len(b), n):] {
		out = append(out, b[:min(len(b), n)])
	}
	return out
}
