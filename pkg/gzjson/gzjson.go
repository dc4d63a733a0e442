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

// Package gzjson encodes the documents fleetjob stores in objects (a run's
// plan and results record in a member, its published node results on the
// hub) as gzip-compressed JSON, and decodes them with a bound. Node names
// are most of such a document and compress several times over.
package gzjson

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// writers are reused: each holds about a megabyte of compressor state, and
// a run's record is encoded again on every change. They compress for speed
// over the last tenth of size: a 5 x 1,000 run spent 5% of the hub's CPU in
// deflate at the default level.
var writers = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // fails only for an invalid level
	return zw
}}

// Encode returns v as gzip-compressed JSON.
func Encode(v any) ([]byte, error) {
	return compress(func(w io.Writer) error { return json.NewEncoder(w).Encode(v) })
}

// compress returns what write writes, compressed as one gzip member.
func compress(write func(io.Writer) error) ([]byte, error) {
	var buf bytes.Buffer
	zw := writers.Get().(*gzip.Writer)
	defer writers.Put(zw)
	zw.Reset(&buf)
	if err := write(zw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode inflates data, at most limit bytes of it, and decodes the JSON
// into v: an object someone crafted must not make its reader inflate
// gigabytes.
func Decode(data []byte, limit int, v any) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return err
	}
	if len(raw) > limit {
		return fmt.Errorf("more than %d bytes once decompressed", limit)
	}
	return json.Unmarshal(raw, v)
}

// Compress returns raw gzip-compressed, as one gzip member. Members
// concatenated are one gzip stream to a reader (Decode reads them so), which
// lets a writer compress the parts of a large document apart and compress
// again only the parts that changed.
func Compress(raw []byte) ([]byte, error) {
	return compress(func(w io.Writer) error {
		_, err := w.Write(raw)
		return err
	})
}
