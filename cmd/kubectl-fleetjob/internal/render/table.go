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

// Package render draws what `kubectl fleetjob` prints: kubectl-style tables
// whose cells may be coloured, and progress bars. Colour is decided by the
// caller (only on a terminal) and never changes the layout.
package render

import (
	"strings"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/printers"
)

// Palette colours text with ANSI escapes when enabled, and leaves it as is
// otherwise.
type Palette struct{ Enabled bool }

const (
	red    = "31"
	green  = "32"
	yellow = "33"
	faint  = "2"
)

func (p Palette) paint(code, s string) string {
	if !p.Enabled || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Cell is one table cell: Plain measures it, Styled (Plain when empty) is
// printed. Both must show the same characters.
type Cell struct{ Plain, Styled string }

// Options are how a table is drawn: kubectl's -o wide and --no-headers,
// and colour.
type Options struct {
	Palette   Palette
	Wide      bool
	NoHeaders bool
}

// Text is a cell without colour.
func Text(s string) Cell { return Cell{Plain: s} }

func (c Cell) styled() string {
	if c.Styled != "" {
		return c.Styled
	}
	return c.Plain
}

// columnGap separates columns, as kubectl's tables do.
const columnGap = "   "

// Table renders a header and rows, columns padded to their widest plain
// text. Colour escapes do not count as width, which text/tabwriter cannot
// do. Cell text from the API is escaped so that it cannot drive the
// terminal.
func Table(header []string, rows [][]Cell) string { return Tabulate(header, rows, false) }

// Tabulate is Table, without the header line when noHeaders (kubectl's
// --no-headers): the columns are then as wide as their cells only.
func Tabulate(header []string, rows [][]Cell, noHeaders bool) string {
	all := make([][]Cell, 0, len(rows)+1)
	if !noHeaders {
		hdr := make([]Cell, len(header))
		for i, h := range header {
			hdr[i] = Text(h)
		}
		all = append(all, hdr)
	}
	all = append(all, rows...)
	widths := make([]int, len(header))
	for _, row := range all {
		for i, c := range row {
			widths[i] = max(widths[i], width(c.Plain))
		}
	}
	var b strings.Builder
	for _, row := range all {
		var line strings.Builder
		for i, c := range row {
			line.WriteString(c.styled())
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-width(c.Plain)) + columnGap)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

func width(s string) int { return utf8.RuneCountInString(s) }

// Escape makes text that came from an API object safe to print.
func Escape(s string) string { return printers.EscapeTerminal(s) }

// orNone is kubectl's "<none>" for an empty cell.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
