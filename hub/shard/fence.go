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

package shard

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// Fence returns a transport wrapper for the clients of member (rest.Config's
// Wrap): every request that may change the member (any verb but GET, HEAD
// and OPTIONS) is sent only while this replica holds the member's claim and
// its session, and carries the session's fence as its deadline. Reads and
// watches pass: a replica that lost a member may still read it while it
// stops.
//
// The fence sits on the transport, under every client the hub builds for a
// member, so that no code path (Job creates, record writes, cordons,
// evictions) can write around it.
func (s *Shard) Fence(member string) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return &fenced{next: next, shard: s, member: member}
	}
}

type fenced struct {
	next   http.RoundTripper
	shard  *Shard
	member string
}

func (f *fenced) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return f.next.RoundTrip(req)
	}
	deadline, done, err := f.shard.begin(f.member)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithDeadline(req.Context(), deadline)
	end := sync.OnceFunc(func() { cancel(); done() })
	// A response never closed still ends at the fence: the request's
	// context ends there, and with it the write on this side.
	context.AfterFunc(ctx, end)
	resp, err := f.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		end()
		return nil, err
	}
	// The write ends when its response is read: until then it may still
	// be in flight, and the claim is not released.
	resp.Body = &endOnClose{ReadCloser: resp.Body, end: end}
	return resp, nil
}

// endOnClose ends a fenced write when its response body is closed.
type endOnClose struct {
	io.ReadCloser
	end func()
}

func (b *endOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}
