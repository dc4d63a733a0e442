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

package gzjson

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoundTrip(t *testing.T) {
	want := map[string][]string{"all": {"ip-10-0-0-1.eu-west-1.compute.internal", "ip-10-0-0-2.eu-west-1.compute.internal"}}
	data, err := Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string][]string
	if err := Decode(data, 1<<20, &got); err != nil {
		t.Fatalf("Decode() error = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode(Encode(v)) mismatch (-want +got):\n%s", diff)
	}
}

// TestDecodeReadsMembersAsOneDocument: a document compressed in pieces,
// each its own gzip member, decodes as the whole.
func TestDecodeReadsMembersAsOneDocument(t *testing.T) {
	var doc []byte
	for _, piece := range []string{`{"nodes":{`, `"a":1`, `,"b":2`, `}}`} {
		member, err := Compress([]byte(piece))
		if err != nil {
			t.Fatal(err)
		}
		doc = append(doc, member...)
	}
	var got map[string]map[string]int
	if err := Decode(doc, 1<<20, &got); err != nil {
		t.Fatalf("Decode() error = %v", err)
	}
	if diff := cmp.Diff(map[string]map[string]int{"nodes": {"a": 1, "b": 2}}, got); diff != "" {
		t.Errorf("Decode() mismatch (-want +got):\n%s", diff)
	}
}

func TestDecodeRefusesGarbageAndBombs(t *testing.T) {
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	if _, err := zw.Write(bytes.Repeat([]byte(" "), 1025)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		data    []byte
		wantErr string
	}{
		"not gzip":               {data: []byte(`{"nodes": "plain JSON"}`), wantErr: "gzip: invalid header"},
		"over the inflate bound": {data: bomb.Bytes(), wantErr: "more than 1024 bytes once decompressed"},
	} {
		t.Run(name, func(t *testing.T) {
			var v any
			if err := Decode(tc.data, 1024, &v); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Decode() error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
