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

// Package naming derives the names and label values of the objects fleetjob
// creates in member clusters. Every name is a pure function of its inputs,
// so a restarted controller finds the objects it created before instead of
// creating them again.
package naming

import (
	"crypto/sha256"
	"encoding/base32"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// hashLen characters of base32 carry 50 bits: the chance that two of
	// 10,000 nodes of one run share a Job name is about 4e-8.
	hashLen = 10
	// prefixMax keeps the ClusterJob's name short enough that the node's
	// name stays readable in `kubectl get jobs`.
	prefixMax = 20
)

// lowerBase32 has only characters valid in a DNS-1123 label.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// hash returns n base32 characters of the SHA-256 of parts joined by a
// separator that cannot occur in a Kubernetes name, so ("a/b", "c") and
// ("a", "b/c") differ.
func hash(n int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return lowerBase32.EncodeToString(sum[:])[:n]
}

// JobName is the name of the Job that runs ClusterJob uid on node in cluster.
// It reads `<clusterjob>-<node>-<hash>`, is a valid DNS-1123 label of at most
// 63 characters (a Job's name becomes a pod label value), and differs for
// every (uid, cluster, node); the readable parts are truncated, the hash is
// not.
func JobName(clusterJob string, uid types.UID, cluster, node string) string {
	suffix := "-" + hash(hashLen, string(uid), cluster, node)
	prefix := truncate(sanitize(clusterJob), prefixMax)
	readable := truncate(sanitize(prefix+"-"+sanitize(node)), validation.DNS1123LabelMaxLength-len(suffix))
	if readable == "" {
		readable = "fleetjob"
	}
	return readable + suffix
}

// MemberRunName is the name of the hub MemberRun of ClusterJob clusterJob in
// cluster. It reads `<clusterjob>-<cluster>-<hash>`, is a valid DNS-1123
// subdomain, and differs for every (clusterJob, cluster): the hash keeps
// ("a-b", "c") apart from ("a", "b-c").
func MemberRunName(clusterJob, cluster string) string {
	suffix := "-" + hash(hashLen, clusterJob, cluster)
	readable := truncate(sanitize(sanitize(clusterJob)+"-"+sanitize(cluster)), validation.DNS1123SubdomainMaxLength-len(suffix))
	if readable == "" {
		readable = "fleetjob"
	}
	return readable + suffix
}

// DisruptionGrants is the ConfigMap, in the hub's namespace, where the
// replicas of a sharded hub publish the nodes their runs disrupt, for
// FleetDisruptionBudgets spanning members of several replicas.
const DisruptionGrants = "fleetjob-disruption-grants"

// PeerLeaseName is the name of the Lease hub replica identity renews to
// say it is alive and serves its share of the members: a valid DNS-1123
// subdomain, distinct for every identity.
func PeerLeaseName(identity string) string {
	return leaseName("fleetjob-peer-", identity)
}

// MemberLeaseName is the name of the Lease that says which hub replica
// serves member cluster: a valid DNS-1123 subdomain, distinct for every
// cluster name.
func MemberLeaseName(cluster string) string {
	return leaseName("fleetjob-member-", cluster)
}

// leaseName is prefix, the readable part of name and a hash of name, so
// that names that sanitize alike ("a.b", "a-b") stay apart.
func leaseName(prefix, name string) string {
	suffix := "-" + hash(hashLen, name)
	return truncate(prefix+sanitize(name), validation.DNS1123SubdomainMaxLength-len(suffix)) + suffix
}

// PlanName is the name of the ConfigMap that stores the frozen plan of
// ClusterJob uid in a member. A UID is 36 characters, so the name is short.
func PlanName(uid types.UID) string {
	return "fleetjob-plan-" + sanitize(string(uid))
}

// PlanPartName is the name of the i-th ConfigMap (from 1) of a plan too
// large for one, the plan ConfigMap being the 0-th.
func PlanPartName(uid types.UID, i int) string {
	return PlanName(uid) + "-part-" + strconv.Itoa(i)
}

// ResultsName is the name of the ConfigMap that records the per-node
// results of ClusterJob uid in a member: the record that outlives the Jobs.
func ResultsName(uid types.UID) string {
	return "fleetjob-results-" + sanitize(string(uid))
}

// ResultsPartName is the name of the i-th ConfigMap (from 1) of a results
// record too large for one, written as version (a prefix of its digest):
// each write of a split record makes parts under new names.
func ResultsPartName(uid types.UID, version string, i int) string {
	return ResultsName(uid) + "-" + sanitize(version) + "-" + strconv.Itoa(i)
}

// LabelValue returns v when it is a valid label value, and otherwise a
// stable hash of it that is, so that any string can be selected on. The full
// value belongs in an annotation.
func LabelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	return "h-" + hash(40, v)
}

// sanitize maps a Kubernetes name (a DNS-1123 subdomain, or anything) onto the
// DNS-1123 label alphabet: lower case, [a-z0-9-], no leading, trailing or
// repeated '-'.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	dash := true // drops leading dashes
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// truncate cuts s to at most n bytes and drops the dashes the cut exposes.
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.TrimRight(s, "-")
}
