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

package render

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Redrawer shows successive versions of a block of text. On a terminal it
// draws each in place of the last; elsewhere (a CI log, a pipe) it appends
// each block that differs from the last, after a blank line.
type Redrawer struct {
	w        io.Writer
	terminal bool
	// columns is the terminal's width now, 0 when unknown: a line wider
	// than the terminal takes several rows to erase.
	columns func() int
	last    string
	rows    int
}

// NewRedrawer draws on w; terminal says whether w is one, and columns
// tells its width.
func NewRedrawer(w io.Writer, terminal bool, columns func() int) *Redrawer {
	return &Redrawer{w: w, terminal: terminal, columns: columns}
}

// Draw shows block unless it is the one shown last.
func (d *Redrawer) Draw(block string) {
	if block == d.last {
		return
	}
	switch {
	case d.last == "":
	case d.terminal:
		// Cursor up over the last block, then clear to the end of screen.
		fmt.Fprintf(d.w, "\x1b[%dA\x1b[J", d.rows)
	default:
		fmt.Fprintln(d.w)
	}
	fmt.Fprint(d.w, block)
	d.last, d.rows = block, rows(block, d.columns())
}

var escapes = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// rows is how many terminal rows block takes at the given width.
func rows(block string, columns int) int {
	n := 0
	for line := range strings.Lines(block) {
		w := width(escapes.ReplaceAllString(strings.TrimSuffix(line, "\n"), ""))
		if columns > 0 && w > columns {
			n += (w + columns - 1) / columns
		} else {
			n++
		}
	}
	return n
}
