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

package hub

import (
	"io"
	"net"
	"net/url"
	"strings"
	"sync"

	. "github.com/onsi/gomega"
)

// outage is a TCP proxy in front of a member API server: cut() drops every
// connection and refuses new ones, as a stopped API server or a network
// partition would; restore() serves again on the same address. The member
// keeps running behind it, as a real one would.
type outage struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func newOutage(server string) *outage {
	u, err := url.Parse(server)
	Expect(err).NotTo(HaveOccurred())
	o := &outage{target: u.Host}
	o.restore()
	return o
}

// url is the proxy's https URL, to put in a kubeconfig.
func (o *outage) url() string { return "https://" + o.addr }

func (o *outage) restore() {
	addr := o.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	Expect(err).NotTo(HaveOccurred())
	o.mu.Lock()
	o.ln, o.addr = ln, ln.Addr().String()
	o.mu.Unlock()
	go o.serve(ln)
}

func (o *outage) serve(ln net.Listener) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", o.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		o.mu.Lock()
		o.conns = append(o.conns, in, out)
		o.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

func (o *outage) cut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.ln.Close()
	for _, c := range o.conns {
		_ = c.Close()
	}
	o.conns = nil
}

// registerThrough registers m with a kubeconfig whose server is the proxy.
func registerThrough(m *member, o *outage, labels map[string]string) {
	u, err := m.env.AddUser(admin, nil)
	Expect(err).NotTo(HaveOccurred())
	kubeconfig, err := u.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	direct := u.Config().Host
	registerKubeconfig(m.name, []byte(strings.ReplaceAll(string(kubeconfig), strings.TrimSuffix(direct, "/"), o.url())), labels)
}
