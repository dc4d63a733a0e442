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

import "strings"

// BarWidth is the number of cells inside a progress bar's brackets: wide
// enough to see 5% steps, narrow enough for two bars and a message on one
// line.
const BarWidth = 20

// Segment is a run of items of one kind in a bar, drawn with Char.
type Segment struct {
	N     int
	Char  byte
	color string
}

// Bar characters.
const (
	charDone    = '#'
	charFailed  = 'x'
	charSkipped = '-'
	charRunning = '>'
	charPending = '.'
)

// Succeeded, Failed, Skipped and Running are the segments of a bar; what
// they leave is drawn pending.
func Succeeded(n int) Segment { return Segment{N: n, Char: charDone, color: green} }

// Failed is a segment of failed items.
func Failed(n int) Segment { return Segment{N: n, Char: charFailed, color: red} }

// Skipped is a segment of skipped items.
func Skipped(n int) Segment { return Segment{N: n, Char: charSkipped, color: faint} }

// Running is a segment of running items.
func Running(n int) Segment { return Segment{N: n, Char: charRunning, color: yellow} }

// Bar draws segs out of total in width cells, as "[##>>....]". Cells are
// given in proportion, rounded down, so the bar is full only when every
// item is accounted for; a non-empty segment always gets a cell, so that one
// failure among a thousand nodes still shows.
func Bar(width, total int, segs []Segment, p Palette) Cell {
	cells := allocate(width, total, segs)
	var plain, styled strings.Builder
	plain.WriteByte('[')
	styled.WriteByte('[')
	used := 0
	for i, s := range segs {
		run := strings.Repeat(string(s.Char), cells[i])
		plain.WriteString(run)
		styled.WriteString(p.paint(s.color, run))
		used += cells[i]
	}
	rest := strings.Repeat(string(charPending), width-used)
	plain.WriteString(rest + "]")
	styled.WriteString(p.paint(faint, rest) + "]")
	return Cell{Plain: plain.String(), Styled: styled.String()}
}

// allocate gives each segment its cells: cumulative counts scaled and
// rounded down, then a cell for every non-empty segment that got none,
// taken from the pending rest, or else from the largest segment.
func allocate(width, total int, segs []Segment) []int {
	cells := make([]int, len(segs))
	if total <= 0 || width <= 0 {
		return cells
	}
	cum, prev := 0, 0
	for i, s := range segs {
		cum += max(s.N, 0)
		edge := min(cum, total) * width / total
		cells[i], prev = edge-prev, edge
	}
	for i, s := range segs {
		if s.N <= 0 || cells[i] > 0 {
			continue
		}
		if prev < width {
			cells[i], prev = 1, prev+1
			continue
		}
		if j := largest(cells); cells[j] > 1 {
			cells[i], cells[j] = 1, cells[j]-1
		}
	}
	return cells
}

func largest(cells []int) int {
	j := 0
	for i, c := range cells {
		if c > cells[j] {
			j = i
		}
	}
	return j
}
