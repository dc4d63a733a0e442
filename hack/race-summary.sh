#!/usr/bin/env bash
# race-summary.sh DIR: print, compactly, the data races the race detector
# logged in DIR (GORACE=log_path=DIR/race), and fail if it logged any. CI
# shows only the end of a failed run's output: a race report printed
# mid-suite scrolls out of it, this summary does not. Each access, and
# where its goroutine was created, is one line of its first frames
# (function file:line, innermost first); the whole reports stay in DIR.
set -euo pipefail

dir=${1:?usage: race-summary.sh DIR}
shopt -s nullglob
logs=("$dir"/race*)
((${#logs[@]} == 0)) && exit 0

echo "=== data races the race detector logged (${#logs[@]} process(es); whole reports in $dir) ==="
awk '
  function flush() { if (head != "") print "  " head line; head = ""; line = "" }
  /^WARNING: DATA RACE/ { flush(); print "--- race"; next }
  /^(Read|Write|Previous read|Previous write|Goroutine) / && /:$/ {
    flush(); head = $0; frames = 0; fn = ""; next
  }
  /^==================/ { flush(); next }
  /^  [^ ]/ { fn = $1; sub(/\(\)$/, "", fn); n = split(fn, parts, "/"); fn = parts[n]; next }
  /^      \// {
    if (head != "" && fn != "" && frames < 5) {
      f = $1; sub(/ \+0x[0-9a-f]+$/, "", f); n = split(f, parts, "/"); f = parts[n]
      line = line (frames ? " < " : " ") fn " " f; frames++
    }
    fn = ""; next
  }
  END { flush() }
' "${logs[@]}"
exit 1
