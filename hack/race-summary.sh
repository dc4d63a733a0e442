#!/usr/bin/env bash
# race-summary.sh DIR: print, compactly, the data races the race detector
# logged in DIR (GORACE=log_path=DIR/race), and fail if it logged any. CI
# shows the end of a failed run's output: a race report printed mid-suite
# scrolls out of it, this summary does not. Each access keeps its first
# frames (six; two of where its goroutine was created), function and
# file:line on one line.
set -euo pipefail

dir=${1:?usage: race-summary.sh DIR}
shopt -s nullglob
logs=("$dir"/race*)
((${#logs[@]} == 0)) && exit 0

echo "=== data races the race detector logged (${#logs[@]} process(es)) ==="
awk '
  /^WARNING: DATA RACE/ { print "--- race"; next }
  /^(Read|Write|Previous read|Previous write|Goroutine) .* (at|by goroutine [0-9]+):?$/ || /^Goroutine [0-9]+ .*created at:$/ {
    print "  " $0; frames = 0; fn = ""; limit = ($0 ~ /created at/) ? 2 : 6; next
  }
  /^  [^ ]/ { fn = $1; next }
  /^      \// {
    if (fn != "" && frames < limit) { sub(/ \+0x[0-9a-f]+$/, "", $1); print "    " fn "  " $1; frames++ }
    fn = ""; next
  }
' "${logs[@]}"
exit 1
