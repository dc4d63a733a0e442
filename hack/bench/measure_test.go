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

package main

import (
	"slices"
	"testing"
)

// TestMedian: the middle of an odd count, the mean of the two middle
// values of an even one, whatever the order; the input stays as it was.
func TestMedian(t *testing.T) {
	testCases := map[string]struct {
		in   []float64
		want float64
	}{
		"one":                     {in: []float64{1.2}, want: 1.2},
		"odd, unsorted":           {in: []float64{1.3, 1.05, 1.1}, want: 1.1},
		"even: the middle two":    {in: []float64{4, 1, 3, 2}, want: 2.5},
		"an outlier moves it not": {in: []float64{1.0, 9.0, 1.1}, want: 1.1},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			in := slices.Clone(tc.in)
			if got := median(in); got != tc.want {
				t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("median reordered its input: %v, was %v", in, tc.in)
			}
		})
	}
}
