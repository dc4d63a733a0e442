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
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"

	"github.com/fleetjob/fleetjob/cmd/kubectl-fleetjob/internal/render"
)

// Column is one column of -o custom-columns: a header and the JSONPath
// expression of its cells.
type Column struct {
	Header string
	Path   string
	parsed *jsonpath.JSONPath
}

// CustomColumns prints a table with one row per object (per item of a
// List), each cell what its column's JSONPath finds there: several values
// joined by commas, "<none>" for nothing.
type CustomColumns struct {
	Columns   []Column
	NoHeaders bool
}

// ParseCustomColumns parses the spec of -o custom-columns=SPEC:
// "HEADER:PATH,HEADER:PATH", each PATH a JSONPath with or without its
// braces and leading dot (".metadata.name", "{.metadata.name}",
// "metadata.name").
func ParseCustomColumns(spec string) ([]Column, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("-o custom-columns needs columns: custom-columns=HEADER:JSONPATH[,HEADER:JSONPATH...]")
	}
	var cols []Column
	for part := range strings.SplitSeq(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		if !ok || header == "" || path == "" {
			return nil, fmt.Errorf("-o custom-columns: %q is not HEADER:JSONPATH", part)
		}
		col, err := newColumn(header, path)
		if err != nil {
			return nil, err
		}
		cols = append(cols, col)
	}
	return cols, nil
}

// ReadCustomColumns reads the file of -o custom-columns-file=FILE: a line
// of headers and a line of as many JSONPath expressions, separated by
// blanks.
func ReadCustomColumns(r io.Reader) ([]Column, error) {
	sc := bufio.NewScanner(r)
	var lines [][]string
	for sc.Scan() && len(lines) < 2 {
		if fields := strings.Fields(sc.Text()); len(fields) > 0 {
			lines = append(lines, fields)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(lines) != 2 || len(lines[0]) != len(lines[1]) {
		return nil, fmt.Errorf("-o custom-columns-file: want a line of headers and a line of as many JSONPath expressions")
	}
	cols := make([]Column, len(lines[0]))
	for i := range cols {
		col, err := newColumn(lines[0][i], lines[1][i])
		if err != nil {
			return nil, err
		}
		cols[i] = col
	}
	return cols, nil
}

func newColumn(header, path string) (Column, error) {
	expr := relaxed(path)
	jp := jsonpath.New(header).AllowMissingKeys(true)
	if err := jp.Parse(expr); err != nil {
		return Column{}, fmt.Errorf("-o custom-columns: column %s: JSONPath %q: %w", header, path, err)
	}
	return Column{Header: header, Path: expr, parsed: jp}, nil
}

// relaxed is path as a JSONPath template: in braces, from the root.
func relaxed(path string) string {
	p := strings.TrimSpace(path)
	if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
		p = p[1 : len(p)-1]
	}
	if !strings.HasPrefix(p, ".") && !strings.HasPrefix(p, "[") {
		p = "." + p
	}
	return "{" + p + "}"
}

// PrintObj prints obj, or the items of a List, as a table.
func (p *CustomColumns) PrintObj(obj runtime.Object, w io.Writer) error {
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return err
		}
	}
	header := make([]string, len(p.Columns))
	for i, c := range p.Columns {
		header[i] = c.Header
	}
	rows := make([][]render.Cell, 0, len(items))
	for _, it := range items {
		m, err := content(it)
		if err != nil {
			return err
		}
		row := make([]render.Cell, len(p.Columns))
		for i, c := range p.Columns {
			text, err := cell(c.parsed, m)
			if err != nil {
				return fmt.Errorf("-o custom-columns: column %s: %w", c.Header, err)
			}
			row[i] = render.Text(render.Escape(text))
		}
		rows = append(rows, row)
	}
	_, err := io.WriteString(w, render.Tabulate(header, rows, p.NoHeaders))
	return err
}

// cell is what jp finds in m: values joined by commas, objects and lists
// as JSON, "<none>" for nothing.
func cell(jp *jsonpath.JSONPath, m map[string]any) (string, error) {
	results, err := jp.FindResults(m)
	if err != nil {
		return "", err
	}
	var out []string
	for _, set := range results {
		for _, v := range set {
			if v.Kind() == reflect.Interface {
				v = v.Elem()
			}
			if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
				continue
			}
			s, err := text(v)
			if err != nil {
				return "", err
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "<none>", nil
	}
	return strings.Join(out, ","), nil
}

func text(v reflect.Value) (string, error) {
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Struct:
		data, err := json.Marshal(v.Interface())
		return string(data), err
	}
	return fmt.Sprint(v.Interface()), nil
}
