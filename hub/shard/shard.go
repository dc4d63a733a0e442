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

// Package shard divides the member clusters among the hub's replicas.
//
// Each replica holds a session: a Lease of its own that it renews. A member
// belongs to the live replica that rendezvous hashing (multicluster-runtime's
// HRW sharder) picks over the live sessions, and a replica writes to a
// member only while it holds both its session and the member's claim, a
// Lease that names the session. A claim is never renewed: it lives as long
// as the session it names. A hub of thousands of members so renews one Lease
// per replica, where a Lease per member (multicluster-runtime's sharded
// coordinator) would renew thousands.
//
// The fence is the session's deadline: a replica stops writing to its
// members Margin before its session could look expired to a peer, and every
// write carries that deadline, so that no write of the old owner is in
// flight when a new owner may claim the member (docs/design/sharding.md).
package shard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/multicluster-runtime/pkg/manager/coordinator/sharded/sharder"

	"github.com/fleetjob/fleetjob/pkg/naming"
)

const (
	// PeerLabel marks the Lease of a hub replica's session.
	PeerLabel = "fleetjob.io/hub-peer"
	// ClaimLabel marks the Lease that says which replica serves a member.
	ClaimLabel = "fleetjob.io/member-claim"
	// ReplicaAnnotation holds the replica's identity on its session Lease and
	// on the claims it holds (a pod name may be longer than a label value).
	ReplicaAnnotation = "fleetjob.io/hub-replica"
	// ClusterAnnotation holds the member's name on its claim.
	ClusterAnnotation = "fleetjob.io/cluster"
)

// Options configure a replica's session.
type Options struct {
	// Namespace holds the session and claim Leases: the hub's namespace.
	Namespace string
	// Identity names the replica (its pod's name); it must differ between
	// replicas and should survive nothing: a restarted replica is a new
	// session either way.
	Identity string
	// LeaseDuration is how long a session lives after its last renewal,
	// as its peers see it. Default 15 s.
	LeaseDuration time.Duration
	// RenewPeriod is how often the session is renewed and the peers read.
	// Default 2 s.
	RenewPeriod time.Duration
	// Margin is how long before its session could look expired the
	// replica stops writing to its members: it covers a write already at a
	// member's API server and the clocks' skew. Default 5 s.
	Margin time.Duration
	// Clock defaults to the real clock.
	Clock clock.WithTicker
}

func (o Options) withDefaults() Options {
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.RenewPeriod == 0 {
		o.RenewPeriod = 2 * time.Second
	}
	if o.Margin == 0 {
		o.Margin = 5 * time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

// Validate names the option at fault.
func (o Options) Validate() error {
	o = o.withDefaults()
	switch {
	case o.Namespace == "":
		return errors.New("shard: the namespace of the replicas' Leases is empty")
	case o.Identity == "":
		return errors.New("shard: the replica's identity is empty")
	case o.Margin+2*o.RenewPeriod >= o.LeaseDuration:
		return fmt.Errorf("shard: the lease duration (%s) must exceed the margin (%s) and two renew periods (%s)", o.LeaseDuration, o.Margin, o.RenewPeriod)
	}
	return nil
}

// Shard is one replica's view of the fleet's division: its session, the
// live peers, and the members it claimed.
type Shard struct {
	opts Options
	// writer writes Leases; reader reads them live, never from a cache: a
	// stale read of a peer's session could take a member it still serves.
	writer client.Client
	reader client.Reader
	log    logr.Logger

	mu sync.Mutex
	// session is the holder identity of the current session; empty
	// before the first renewal.
	session string
	// renewed is when the last successful renewal was sent: the session
	// is held until renewed + LeaseDuration - Margin.
	renewed time.Time
	// peers are the live replicas' identities, sorted, this one included.
	peers []string
	// sessions are the live replicas' sessions as last read, this one's
	// excluded: what the replicas publish is theirs only while these live.
	sessions map[string]bool
	// claims are the members claimed in this session.
	claims map[string]*claim
	// releasing are members to hand back, retried every renewal until
	// their claims say so.
	releasing map[string]bool
	// subscribers are told when the peers or the session change: which
	// replica owns which member may have changed.
	subscribers []func()
}

// claim is a member this replica may write to.
type claim struct {
	// inflight counts writes under way; a claim is released once none is.
	inflight int
	// closing refuses new writes; drained is closed when inflight falls
	// to zero after that.
	closing bool
	drained chan struct{}
}

// New returns the shard of one replica; Run keeps it.
func New(writer client.Client, reader client.Reader, opts Options, log logr.Logger) (*Shard, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Shard{
		opts:      opts.withDefaults(),
		writer:    writer,
		reader:    reader,
		log:       log,
		claims:    map[string]*claim{},
		releasing: map[string]bool{},
	}, nil
}

// Identity is this replica's identity.
func (s *Shard) Identity() string { return s.opts.Identity }

// Subscribe has f called, from Run's goroutine, whenever the ownership of
// members may have changed.
func (s *Shard) Subscribe(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subscribers = append(s.subscribers, f)
}

// Run renews the session and reads the peers every RenewPeriod until ctx
// ends, then hands back every claim and ends the session, so that the
// members move at the peers' next renewal rather than when the session
// expires.
func (s *Shard) Run(ctx context.Context) error {
	t := s.opts.Clock.NewTicker(s.opts.RenewPeriod)
	defer t.Stop()
	for {
		s.Step(ctx)
		select {
		case <-ctx.Done():
			s.leave()
			return nil
		case <-t.C():
		}
	}
}

// Step renews the session, reads the peers, retries pending releases and
// tells the subscribers when ownership may have changed. Run calls it every
// RenewPeriod; tests call it directly.
func (s *Shard) Step(ctx context.Context) {
	// A renewal may take as long as the session it renews still holds:
	// cut at RenewPeriod, a slow hub API server would lapse sessions whose
	// renewals each came in time.
	rctx, cancel := context.WithTimeout(ctx, s.renewTimeout())
	changed, err := s.renew(rctx)
	cancel()
	ctx, cancel = context.WithTimeout(ctx, s.opts.RenewPeriod)
	defer cancel()
	if err != nil {
		s.log.Error(err, "Renewing the replica's session failed; retrying", "identity", s.opts.Identity)
	}
	peers, sessions, err := s.livePeers(ctx)
	if err != nil {
		s.log.Error(err, "Reading the hub replicas failed; retrying", "identity", s.opts.Identity)
	} else {
		s.mu.Lock()
		s.sessions = sessions
		if !slices.Equal(peers, s.peers) {
			s.log.Info("Hub replicas changed", "replicas", peers)
			s.peers, changed = peers, true
		}
		s.mu.Unlock()
	}
	s.retryReleases(ctx)
	if changed {
		s.mu.Lock()
		subs := slices.Clone(s.subscribers)
		s.mu.Unlock()
		for _, f := range subs {
			f()
		}
	}
}

// renewTimeout bounds a renewal: RenewPeriod, or longer while the session
// holds longer.
func (s *Shard) renewTimeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.opts.RenewPeriod, s.heldUntil().Sub(s.opts.Clock.Now()))
}

// heldUntil is when this replica stops writing: Margin before its session
// could look expired to a peer. Called with s.mu held.
func (s *Shard) heldUntil() time.Time {
	if s.session == "" {
		return time.Time{}
	}
	return s.renewed.Add(s.opts.LeaseDuration - s.opts.Margin)
}

// renew renews the session Lease. A session that lapsed (its fence passed
// before a renewal succeeded) is never revived: a peer may have taken its
// members meanwhile, so a new session starts, holding no claim.
func (s *Shard) renew(ctx context.Context) (restarted bool, err error) {
	now := s.opts.Clock.Now()
	s.mu.Lock()
	if s.session == "" || !now.Before(s.heldUntil()) {
		if s.session != "" {
			s.log.Info("The replica's session lapsed: its members are claimed again under a new one", "identity", s.opts.Identity, "claims", len(s.claims))
		}
		s.session, s.renewed, restarted = newSession(s.opts.Identity), time.Time{}, true
		for name, c := range s.claims {
			c.closing = true
			delete(s.claims, name)
		}
		clear(s.releasing)
	}
	session := s.session
	s.mu.Unlock()

	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: s.opts.Namespace, Name: naming.PeerLeaseName(s.opts.Identity)}
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(session),
		LeaseDurationSeconds: ptr.To(int32(s.opts.LeaseDuration / time.Second)),
		RenewTime:            &metav1.MicroTime{Time: now},
	}
	switch err := s.reader.Get(ctx, key, lease); {
	case apierrors.IsNotFound(err):
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:   key.Namespace,
				Name:        key.Name,
				Labels:      map[string]string{PeerLabel: "true"},
				Annotations: map[string]string{ReplicaAnnotation: s.opts.Identity},
			},
			Spec: spec,
		}
		if err := s.writer.Create(ctx, lease); err != nil {
			return restarted, fmt.Errorf("creating session Lease %s: %w", key.Name, err)
		}
	case err != nil:
		return restarted, fmt.Errorf("reading session Lease %s: %w", key.Name, err)
	default:
		if lease.Spec.AcquireTime == nil || ptr.Deref(lease.Spec.HolderIdentity, "") != session {
			spec.AcquireTime = &metav1.MicroTime{Time: now}
		} else {
			spec.AcquireTime = lease.Spec.AcquireTime
		}
		lease.Spec = spec
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[ReplicaAnnotation] = s.opts.Identity
		if err := s.writer.Update(ctx, lease); err != nil {
			return restarted, fmt.Errorf("renewing session Lease %s: %w", key.Name, err)
		}
	}
	s.mu.Lock()
	if s.session == session {
		s.renewed = now
	}
	s.mu.Unlock()
	return restarted, nil
}

// newSession names a session of identity: the identity, so that a claim
// leads to its holder's session Lease, and a random part, so that a lapsed
// session's claims never pass for a later one's.
func newSession(identity string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return identity + "/" + hex.EncodeToString(b)
}

// identityOf is the replica identity a session names.
func identityOf(session string) string {
	i := strings.LastIndexByte(session, '/')
	if i < 0 {
		return session
	}
	return session[:i]
}

// livePeers lists the replicas whose sessions have not expired by this
// replica's clock, and this one while its session is held; and the other
// replicas' live sessions.
func (s *Shard) livePeers(ctx context.Context) ([]string, map[string]bool, error) {
	leases := &coordinationv1.LeaseList{}
	if err := s.reader.List(ctx, leases, client.InNamespace(s.opts.Namespace), client.MatchingLabels{PeerLabel: "true"}); err != nil {
		return nil, nil, fmt.Errorf("listing session Leases: %w", err)
	}
	now := s.opts.Clock.Now()
	live, sessions := map[string]bool{}, map[string]bool{}
	for i := range leases.Items {
		if id := leases.Items[i].Annotations[ReplicaAnnotation]; id != "" && id != s.opts.Identity && alive(&leases.Items[i], now) {
			live[id] = true
			sessions[*leases.Items[i].Spec.HolderIdentity] = true
		}
	}
	s.mu.Lock()
	live[s.opts.Identity] = now.Before(s.heldUntil())
	s.mu.Unlock()
	var out []string
	for id, ok := range live {
		if ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, sessions, nil
}

// Session is this replica's session while it is held, "" otherwise: what
// it publishes for its peers names it.
func (s *Shard) Session() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opts.Clock.Now().Before(s.heldUntil()) {
		return ""
	}
	return s.session
}

// LiveSession says whether session is this replica's held session or a
// peer's live one, as the last read of the peers found them.
func (s *Shard) LiveSession(session string) bool {
	if session == "" {
		return false
	}
	if session == s.Session() {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[session]
}

// alive says whether a session Lease was renewed within its duration.
func alive(l *coordinationv1.Lease, now time.Time) bool {
	if ptr.Deref(l.Spec.HolderIdentity, "") == "" || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return false
	}
	return now.Before(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// Owner is the replica that serves member, by rendezvous hashing over the
// live replicas; empty while this replica holds no session, when it can
// tell nothing.
func (s *Shard) Owner(member string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return OwnerOf(member, s.peers)
}

// OwnerOf picks member's replica among the live replicas: HRW moves only
// the members of a replica that comes or goes, and every replica that sees
// the same replicas picks the same one.
func OwnerOf(member string, replicas []string) string {
	var hrw sharder.HRW
	infos := make([]sharder.PeerInfo, len(replicas))
	for i, p := range replicas {
		infos[i] = sharder.PeerInfo{ID: p, Weight: 1}
	}
	for _, p := range infos {
		if hrw.ShouldOwn(member, infos, p) {
			return p.ID
		}
	}
	return ""
}

// Owns says whether this replica serves member now.
func (s *Shard) Owns(member string) bool {
	return s.Owner(member) == s.opts.Identity
}

// Steady is the least time before its fence a replica whose session
// missed no more than one renewal has: LeaseDuration less Margin and two
// renewal periods (6 s by default). Less tells that the hub API server is
// not answering the renewals.
func (s *Shard) Steady() time.Duration {
	return s.opts.LeaseDuration - s.opts.Margin - 2*s.opts.RenewPeriod
}

// Until is when this replica's writes to member end (its fence), and
// whether it may write to member now at all.
func (s *Shard) Until(member string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	until := s.heldUntil()
	c, ok := s.claims[member]
	if !ok || c.closing || !s.opts.Clock.Now().Before(until) {
		return time.Time{}, false
	}
	return until, true
}

// HeldError says that another live replica serves a member.
type HeldError struct{ Member, Replica string }

func (e *HeldError) Error() string {
	return fmt.Sprintf("hub replica %s serves member %s until it hands it over or its session expires", e.Replica, e.Member)
}

// NotHeldError says that this replica may not write to a member: it holds
// no claim of it, or its session is too close to expiring.
type NotHeldError struct{ Member, Identity string }

// NotSent says that the write this error refused was never sent: the
// member surely did not make it (spoke's create path asks).
func (e *NotHeldError) NotSent() bool { return true }

func (e *NotHeldError) Error() string {
	return fmt.Sprintf("hub replica %s does not hold member %s now: the write was not sent", e.Identity, e.Member)
}

// Claim makes this replica the one that writes to member: it takes the
// member's claim Lease when it is free, its own, or names a session that
// expired; otherwise it returns a HeldError naming the replica that serves
// the member. Claim does not ask whether this replica should own member:
// the caller asks Owns first.
func (s *Shard) Claim(ctx context.Context, member string) error {
	s.mu.Lock()
	session, now := s.session, s.opts.Clock.Now()
	if c, ok := s.claims[member]; ok && !c.closing {
		s.mu.Unlock()
		return nil
	}
	held := now.Before(s.heldUntil())
	s.mu.Unlock()
	if !held {
		return &NotHeldError{Member: member, Identity: s.opts.Identity}
	}
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: s.opts.Namespace, Name: naming.MemberLeaseName(member)}
	switch err := s.reader.Get(ctx, key, lease); {
	case apierrors.IsNotFound(err):
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace,
			Name:      key.Name,
			Labels:    map[string]string{ClaimLabel: "true"},
		}}
		s.stamp(lease, member, session, now)
		if err := s.writer.Create(ctx, lease); err != nil {
			s.maybeWritten(member, err)
			return fmt.Errorf("claiming member %s (Lease %s): %w", member, key.Name, err)
		}
	case err != nil:
		return fmt.Errorf("reading the claim of member %s (Lease %s): %w", member, key.Name, err)
	default:
		if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); holder != "" && holder != session {
			live, err := s.sessionLive(ctx, holder, now)
			if err != nil {
				return err
			}
			if live {
				return &HeldError{Member: member, Replica: identityOf(holder)}
			}
		}
		s.stamp(lease, member, session, now)
		// The Lease's resourceVersion makes this conditional: of two
		// replicas taking one claim, one fails.
		if err := s.writer.Update(ctx, lease); err != nil {
			s.maybeWritten(member, err)
			return fmt.Errorf("claiming member %s (Lease %s): %w", member, key.Name, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != session {
		return &NotHeldError{Member: member, Identity: s.opts.Identity}
	}
	s.claims[member] = &claim{}
	delete(s.releasing, member)
	return nil
}

// maybeWritten marks member's claim to hand back when the write taking it
// failed with no answer saying it was not written (a timeout, a connection
// cut after the request was sent): a claim naming this live session that
// this replica does not know of would keep the member from its owner until
// the session ends. A conflict or an existing Lease wrote nothing.
func (s *Shard) maybeWritten(member string, err error) {
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.claims[member]; !ok {
		s.releasing[member] = true
	}
}

// stamp makes lease a claim of member by session.
func (s *Shard) stamp(lease *coordinationv1.Lease, member, session string, now time.Time) {
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[ClusterAnnotation] = member
	lease.Annotations[ReplicaAnnotation] = s.opts.Identity
	lease.Spec.HolderIdentity = ptr.To(session)
	lease.Spec.AcquireTime = &metav1.MicroTime{Time: now}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: now}
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(s.opts.LeaseDuration / time.Second))
}

// sessionLive says whether session is the current session of its replica
// and was renewed within its duration, read live.
func (s *Shard) sessionLive(ctx context.Context, session string, now time.Time) (bool, error) {
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: s.opts.Namespace, Name: naming.PeerLeaseName(identityOf(session))}
	if err := s.reader.Get(ctx, key, lease); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading session Lease %s: %w", key.Name, err)
	}
	return ptr.Deref(lease.Spec.HolderIdentity, "") == session && alive(lease, now), nil
}

// Release hands member back: new writes to it are refused at once, the
// writes under way are waited for (they end by the session's fence at the
// latest), and the claim Lease is cleared so that its next owner need not
// wait for this session to expire. A claim that cannot be cleared now is
// cleared by a later renewal. A member this replica neither holds nor
// may have written a claim for costs nothing: a replica calls Release for
// every member it does not serve, on every change of replicas.
func (s *Shard) Release(ctx context.Context, member string) error {
	s.mu.Lock()
	c, ok := s.claims[member]
	if !ok && !s.releasing[member] {
		s.mu.Unlock()
		return nil
	}
	if ok {
		c.closing = true
		if c.inflight > 0 && c.drained == nil {
			c.drained = make(chan struct{})
		}
	}
	drained := c.drainedOrNil()
	s.releasing[member] = true
	s.mu.Unlock()
	if drained != nil {
		select {
		case <-drained:
		case <-ctx.Done():
			return fmt.Errorf("releasing member %s: writes under way: %w", member, ctx.Err())
		}
	}
	s.mu.Lock()
	if s.claims[member] == c {
		delete(s.claims, member)
	}
	s.mu.Unlock()
	return s.clear(ctx, member)
}

func (c *claim) drainedOrNil() chan struct{} {
	if c == nil {
		return nil
	}
	return c.drained
}

// clear empties member's claim Lease if it names this replica's session.
func (s *Shard) clear(ctx context.Context, member string) error {
	s.mu.Lock()
	session := s.session
	_, reclaimed := s.claims[member]
	s.mu.Unlock()
	if reclaimed {
		return nil
	}
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: s.opts.Namespace, Name: naming.MemberLeaseName(member)}
	if err := s.reader.Get(ctx, key, lease); err != nil {
		if apierrors.IsNotFound(err) {
			s.doneReleasing(member)
			return nil
		}
		return fmt.Errorf("reading the claim of member %s: %w", member, err)
	}
	if ptr.Deref(lease.Spec.HolderIdentity, "") == session {
		lease.Spec.HolderIdentity = nil
		if err := s.writer.Update(ctx, lease); err != nil {
			return fmt.Errorf("handing member %s back (Lease %s): %w", member, key.Name, err)
		}
	}
	s.doneReleasing(member)
	return nil
}

func (s *Shard) doneReleasing(member string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.releasing, member)
}

// maxReleasesPerStep bounds the hub writes one renewal spends on claims
// that could not be handed back before.
const maxReleasesPerStep = 50

// retryReleases clears claims whose release failed.
func (s *Shard) retryReleases(ctx context.Context) {
	s.mu.Lock()
	pending := slices.Sorted(maps.Keys(s.releasing))
	s.mu.Unlock()
	for _, member := range pending[:min(len(pending), maxReleasesPerStep)] {
		if err := s.clear(ctx, member); err != nil {
			s.log.Error(err, "Handing a member back failed; retrying", "cluster", member)
		}
	}
}

// leave hands every claim back and ends the session as the replica stops,
// within one renew period: writes have stopped with the manager's context.
// The peers then see it gone at their next renewal. A claim that cannot be
// handed back keeps the session's Lease: the claim moves when it expires.
func (s *Shard) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.RenewPeriod)
	defer cancel()
	s.mu.Lock()
	members := slices.Sorted(maps.Keys(s.claims))
	s.mu.Unlock()
	kept := 0
	for _, member := range members {
		if err := s.Release(ctx, member); err != nil {
			kept++
			s.log.Error(err, "Handing a member back on stop failed: it moves when the session expires", "cluster", member)
		}
	}
	if kept > 0 {
		return
	}
	if err := s.endSession(ctx); err != nil {
		s.log.Error(err, "Ending the replica's session failed: its peers see it gone when it expires", "identity", s.opts.Identity)
	}
}

// endSession empties the session Lease, if it still holds this session.
func (s *Shard) endSession(ctx context.Context) error {
	s.mu.Lock()
	session := s.session
	s.session, s.renewed = "", time.Time{}
	s.mu.Unlock()
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: s.opts.Namespace, Name: naming.PeerLeaseName(s.opts.Identity)}
	if err := s.reader.Get(ctx, key, lease); err != nil {
		return client.IgnoreNotFound(err)
	}
	if session == "" || ptr.Deref(lease.Spec.HolderIdentity, "") != session {
		return nil
	}
	lease.Spec.HolderIdentity = nil
	return s.writer.Update(ctx, lease)
}

// begin admits one write to member: it returns the deadline the write must
// end by (the session's fence) and the function that ends it, or a
// NotHeldError.
func (s *Shard) begin(member string) (time.Time, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	until := s.heldUntil()
	c, ok := s.claims[member]
	if !ok || c.closing || !s.opts.Clock.Now().Before(until) {
		return time.Time{}, nil, &NotHeldError{Member: member, Identity: s.opts.Identity}
	}
	c.inflight++
	return until, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		c.inflight--
		if c.inflight == 0 && c.drained != nil {
			close(c.drained)
			c.drained = nil
		}
	}, nil
}

// Holds says whether this replica may write to member now.
func (s *Shard) Holds(member string) bool {
	_, done, err := s.begin(member)
	if err != nil {
		return false
	}
	done()
	return true
}
