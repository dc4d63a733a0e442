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
	"unicode/utf8"
)

// Redrawer shows successive versions of a block of text. On a terminal it
// draws each in place of the last, cut to the terminal's size so that
// moving the cursor back over it always works. Elsewhere (a CI log, a
// pipe) it appends the lines of each block that the last did not have:
// what changed, and nothing when nothing did.
type Redrawer struct {
	w        io.Writer
	terminal bool
	// size is the terminal's width and height now, 0 when unknown.
	size func() (columns, rows int)
	last string
	// rows is how many terminal rows the last block took.
	rows int
}

// NewRedrawer draws on w; terminal says whether w is one, and size tells
// its width and height.
func NewRedrawer(w io.Writer, terminal bool, size func() (columns, rows int)) *Redrawer {
	return &Redrawer{w: w, terminal: terminal, size: size}
}

// Draw shows block unless it is the one shown last.
func (d *Redrawer) Draw(block string) {
	if block == d.last {
		return
	}
	if d.terminal {
		d.redraw(block)
	} else {
		d.appendChanged(block)
	}
	d.last = block
}

func (d *Redrawer) redraw(block string) {
	columns, height := d.size()
	fitted := Fit(block, columns, height)
	if d.rows > 0 {
		// Cursor up over the last block, then clear to the end of screen.
		fmt.Fprintf(d.w, "\x1b[%dA\x1b[J", d.rows)
	}
	fmt.Fprint(d.w, fitted)
	d.rows = rows(fitted, columns)
}

// appendChanged prints the lines of block that the last block did not
// have, all of them the first time; blank lines only the first time.
func (d *Redrawer) appendChanged(block string) {
	had := map[string]bool{}
	for line := range strings.Lines(d.last) {
		had[line] = true
	}
	var b strings.Builder
	for line := range strings.Lines(block) {
		if d.last != "" && (had[line] || strings.TrimSpace(line) == "") {
			continue
		}
		b.WriteString(line)
	}
	fmt.Fprint(d.w, b.String())
}

// Fit cuts block to a terminal of columns by height: each line to the
// width, and, when the block has more lines than the terminal has rows
// less one (the row the cursor ends on), the lines past that to a last line
// that counts them. A block taller than the screen would scroll, and the
// cursor could not move back over what scrolled away. 0 leaves a dimension
// unbounded.
func Fit(block string, columns, height int) string {
	lines := strings.SplitAfter(block, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if height > 1 && len(lines) > height-1 {
		keep := max(height-2, 0)
		more := fmt.Sprintf("... %d more lines: the terminal is %d rows high\n", len(lines)-keep, height)
		lines = append(lines[:keep], more)
	}
	if columns > 0 {
		for i, line := range lines {
			lines[i] = clip(line, columns)
		}
	}
	return strings.Join(lines, "")
}

var escapes = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// clip cuts line to columns visible characters; colour escapes count as
// none, and one is reset when the cut may have left it open.
func clip(line string, columns int) string {
	body, nl := strings.CutSuffix(line, "\n")
	if width(escapes.ReplaceAllString(body, "")) <= columns {
		return line
	}
	var b strings.Builder
	n, styled := 0, false
	for len(body) > 0 && n < columns {
		if loc := escapes.FindStringIndex(body); loc != nil && loc[0] == 0 {
			b.WriteString(body[:loc[1]])
			body, styled = body[loc[1]:], true
			continue
		}
		_, size := utf8.DecodeRuneInString(body)
		b.WriteString(body[:size])
		body = body[size:]
		n++
	}
	if styled {
		b.WriteString("\x1b[0m")
	}
	if nl {
		b.WriteString("\n")
	}
	return b.String()
}

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
