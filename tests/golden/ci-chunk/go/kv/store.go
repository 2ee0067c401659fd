// Package kv is a small in-memory key-value store with snapshots.
package kv

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"example.com/kv/codec"
)

// ErrNotFound is returned by Get for a missing key.
var ErrNotFound = errors.New("kv: not found")

const (
	// MaxKeyLen is the longest key Put accepts.
	MaxKeyLen     = 256
	defaultShards = 16
)

// Key names a value.
type Key = string

// Getter is what read-only callers need.
type Getter interface {
	Get(k Key) ([]byte, error)
}

// Store holds values by key; safe for concurrent use.
type Store struct {
	mu   sync.RWMutex
	data map[Key][]byte
	hits int
}

type (
	// Visitor is called for each pair by Each.
	Visitor func(k Key, v []byte) bool
	stats   struct{ gets, puts int }
)

// New returns an empty store.
func New() *Store {
	return &Store{data: make(map[Key][]byte, defaultShards)}
}

// Get returns a copy of the value of k.
func (s *Store) Get(k Key) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.data[k]
	if !ok {
		return nil, fmt.Errorf("get %q: %w", k, ErrNotFound)
	}
	s.hits++
	return append([]byte(nil), v...), nil
}

// Put stores the JSON encoding of v under k.
func (s *Store) Put(k Key, v any) error {
	if len(k) > MaxKeyLen {
		return fmt.Errorf("put: key of %d bytes", len(k))
	}
	b, err := codec.Encode(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.data[k] = b
	s.mu.Unlock()
	return nil
}

// Each visits the pairs in key order until fn returns false.
func (s Store) Each(fn Visitor) {
	keys := make([]Key, 0, len(s.data))
	for k := range s.data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn(k, s.data[k]) {
			return
		}
	}
}

// Keys returns the keys of m, sorted.
func Keys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
