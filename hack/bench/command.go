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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// runLogged runs a command with env added to ours; its output goes to
// <artifacts>/<log>.log, and its last lines into the error.
func (b *bench) runLogged(ctx context.Context, log string, env []string, name string, args ...string) error {
	return b.runCommand(ctx, log, false, env, name, args...)
}

// runEchoed is runLogged that also prints fleet.sh's stderr lines as
// progress lines: they say which cluster it is at.
func (b *bench) runEchoed(ctx context.Context, log string, env []string, name string, args ...string) error {
	return b.runCommand(ctx, log, true, env, name, args...)
}

func (b *bench) runCommand(ctx context.Context, log string, echo bool, env []string, name string, args ...string) error {
	path := filepath.Join(b.artifacts, log+".log")
	out, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	fmt.Fprintf(out, "=== %s %s %s\n", time.Now().Format(time.RFC3339), name, strings.Join(args, " "))
	var tail bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = b.root
	cmd.Stdout, cmd.Stderr = out, &tailWriter{w: out, tail: &tail, echo: echo}
	// A grandchild that inherited the output must not hold us past the end.
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (log %s): %s", filepath.Base(name), err, path, lastLines(tail.String(), 5))
	}
	return nil
}

// tailWriter writes to w and keeps the last 8 KiB in tail; with echo, it
// also logs every complete line.
type tailWriter struct {
	w       *os.File
	tail    *bytes.Buffer
	echo    bool
	partial []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.tail.Write(p)
	if t.echo {
		t.partial = append(t.partial, p...)
		for {
			i := bytes.IndexByte(t.partial, '\n')
			if i < 0 {
				break
			}
			// fleet.sh's own lines, and hack/nodes', not kwokctl's JSON logs.
			if line := t.partial[:i]; bytes.HasPrefix(line, []byte("[fleet]")) || bytes.HasPrefix(line, []byte("nodes:")) {
				logf("%s", line)
			}
			t.partial = t.partial[i+1:]
		}
	}
	if over := t.tail.Len() - 8<<10; over > 0 {
		t.tail.Next(over)
	}
	return t.w.Write(p)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// sleep waits d or until ctx ends; it tells whether ctx is still alive.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
