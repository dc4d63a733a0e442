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

package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/fleetjob/fleetjob/hub/clusters"
	"github.com/fleetjob/fleetjob/hub/disruption"
	"github.com/fleetjob/fleetjob/hub/shard"
	"github.com/fleetjob/fleetjob/pkg/naming"
)

// sharedGrants keeps a sharded hub's disruption counts in one ConfigMap of
// the hub's namespace, a section per replica (disruption.Shared); the
// Role in config/sharded lets the hub read, watch and write it. Reads
// are live: the write is conditional on the version read, and a cache
// behind would lose every write until it caught up.
type sharedGrants struct {
	writer client.Client
	reader client.Reader
	key    client.ObjectKey
	shard  *shard.Shard

	mu sync.Mutex
	// read is the record as last read, and dead the sections in it of
	// replicas whose sessions ended: the next write drops them.
	read *corev1.ConfigMap
	dead []string
}

// errNoSession refuses a publication while this replica holds no session:
// peers would not count it. Its next session publishes again (Republish).
var errNoSession = errors.New("this hub replica holds no session: it grants nothing until it renews one")

// sharedGrantsTimeout bounds each read and write of the record.
const sharedGrantsTimeout = 10 * time.Second

func newSharedGrants(writer client.Client, reader client.Reader, namespace string, s *shard.Shard) *sharedGrants {
	return &sharedGrants{writer: writer, reader: reader, key: client.ObjectKey{Namespace: namespace, Name: naming.DisruptionGrants}, shard: s}
}

// section is this replica's key in the record.
func (g *sharedGrants) section() string { return naming.PeerLeaseName(g.shard.Identity()) }

// Read returns the other live replicas' counts and the record's version.
func (g *sharedGrants) Read(ctx context.Context) (disruption.Usage, string, error) {
	ctx, cancel := context.WithTimeout(ctx, sharedGrantsTimeout)
	defer cancel()
	cm := &corev1.ConfigMap{}
	if err := g.reader.Get(ctx, g.key, cm); apierrors.IsNotFound(err) {
		g.remember(nil, nil)
		return disruption.Usage{}, "", nil
	} else if err != nil {
		return disruption.Usage{}, "", fmt.Errorf("reading ConfigMap %s: %w", g.key, err)
	}
	u, dead, err := disruption.Sections(cm.Data, g.section(), g.shard.LiveSession)
	if err != nil {
		return disruption.Usage{}, "", fmt.Errorf("ConfigMap %s: %w", g.key, err)
	}
	g.remember(cm, dead)
	return u, cm.ResourceVersion, nil
}

func (g *sharedGrants) remember(cm *corev1.ConfigMap, dead []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.read, g.dead = cm, dead
}

// Publish writes this replica's section, and drops the dead replicas',
// if the record is still at version.
func (g *sharedGrants) Publish(ctx context.Context, u disruption.Usage, version string) error {
	session := g.shard.Session()
	if session == "" {
		return errNoSession
	}
	value, err := disruption.EncodeSection(session, u)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, sharedGrantsTimeout)
	defer cancel()
	g.mu.Lock()
	read, dead := g.read, g.dead
	g.mu.Unlock()
	conflict := apierrors.NewConflict(corev1.Resource("configmaps"), g.key.Name, errors.New("written by another hub replica since it was read"))
	if version == "" {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: g.key.Namespace, Name: g.key.Name, Labels: map[string]string{"app.kubernetes.io/name": "fleetjob", "app.kubernetes.io/component": "hub"}},
			Data:       map[string]string{g.section(): value},
		}
		if err := g.writer.Create(ctx, cm); apierrors.IsAlreadyExists(err) {
			return conflict
		} else if err != nil {
			return fmt.Errorf("creating ConfigMap %s: %w", g.key, err)
		}
		return nil
	}
	if read == nil || read.ResourceVersion != version {
		return conflict
	}
	cm := &corev1.ConfigMap{ObjectMeta: *read.ObjectMeta.DeepCopy(), Data: maps.Clone(read.Data)}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	for _, replica := range dead {
		delete(cm.Data, replica)
	}
	cm.Data[g.section()] = value
	if err := g.writer.Update(ctx, cm); err != nil {
		if apierrors.IsConflict(err) {
			return err
		}
		return fmt.Errorf("updating ConfigMap %s: %w", g.key, err)
	}
	return nil
}

// CacheOptions restrict the hub's cache to what it reads of the two kinds
// it must not cache whole: the registration Secrets of namespace, and of
// ConfigMaps only the record sharded replicas share there.
func CacheOptions(namespace string) cache.Options {
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}: clusters.RegistrationSecrets(namespace),
		&corev1.ConfigMap{}: {
			Namespaces: map[string]cache.Config{namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", naming.DisruptionGrants),
		},
	}}
}

// grantsPublisher publishes this replica's counts when they changed, at
// most every grantsPublishInterval, so that room a run frees reaches the
// other replicas' held runs within about a second; a failed publication
// is retried with backoff.
type grantsPublisher struct {
	ledger *disruption.Ledger
}

const (
	grantsPublishInterval = 500 * time.Millisecond
	grantsRetryMax        = 10 * time.Second
)

// Start publishes until ctx ends.
func (p *grantsPublisher) Start(ctx context.Context) error {
	retry := grantsPublishInterval
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.ledger.Unpublished():
		}
		for {
			err := p.ledger.Publish(ctx)
			if errors.Is(err, errNoSession) {
				log.FromContext(ctx).V(1).Info("Not publishing this hub replica's disruption counts until it holds a session")
				err = nil
			}
			if err == nil {
				retry = grantsPublishInterval
				break
			}
			log.FromContext(ctx).Error(err, "Publishing this hub replica's disruption counts; retrying", "after", retry)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(retry):
			}
			retry = min(2*retry, grantsRetryMax)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(grantsPublishInterval):
		}
	}
}

// NeedLeaderElection: every replica publishes its own counts.
func (p *grantsPublisher) NeedLeaderElection() bool { return false }

// wakeOnPeerGrants wakes this replica's held runs and budget status when
// another replica's section of the shared record changes: room it freed
// may be theirs. Its own writes wake nothing.
func wakeOnPeerGrants(ctx context.Context, c cache.Cache, ledger *disruption.Ledger, self string) error {
	inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return err
	}
	peers := func(obj any) map[string]string {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || cm.Name != naming.DisruptionGrants {
			return nil
		}
		data := maps.Clone(cm.Data)
		delete(data, self)
		return data
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { ledger.Wake() },
		UpdateFunc: func(old, obj any) {
			if !maps.Equal(peers(old), peers(obj)) {
				ledger.Wake()
			}
		},
		DeleteFunc: func(obj any) { ledger.Wake() },
	})
	return err
}
