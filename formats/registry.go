// Package formats holds the registry that every family of input formats uses (ratings
// tables in formats/ratings, corpora in formats/corpus): a format is registered once
// under its name, with what it needs to be recognised, checked and read, and code that
// chooses a format by name asks its family's registry instead of switching on the name.
package formats

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry holds the formats of one family (F is the family's format type), by name, in
// registration order. Register from package variables or init functions; the first
// lookup freezes the registry, so a late registration panics at start-up instead of
// leaving a name unknown to some callers.
type Registry[F any] struct {
	what   string // the family's setting, for errors: "corpus_format", "layout"
	mu     sync.Mutex
	names  []string
	byName map[string]F
	frozen bool
}

// NewRegistry returns an empty registry whose errors name the setting what.
func NewRegistry[F any](what string) *Registry[F] {
	return &Registry[F]{what: what, byName: map[string]F{}}
}

// Register adds format f under name. It panics on an empty or duplicate name and after
// the first lookup: both are programming errors.
func (r *Registry[F]) Register(name string, f F) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case name == "":
		panic(fmt.Sprintf("formats: %s: empty name", r.what))
	case r.frozen:
		panic(fmt.Sprintf("formats: %s %q registered after the registry was read", r.what, name))
	}
	if _, dup := r.byName[name]; dup {
		panic(fmt.Sprintf("formats: %s %q registered twice", r.what, name))
	}
	r.byName[name] = f
	r.names = append(r.names, name)
}

// Names returns the registered names in registration order.
func (r *Registry[F]) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frozen = true
	return slices.Clone(r.names)
}

// Lookup returns the format registered under name; an unknown name is an error naming
// the setting, the nearest registered name and all of them.
func (r *Registry[F]) Lookup(name string) (F, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frozen = true
	if f, ok := r.byName[name]; ok {
		return f, nil
	}
	var zero F
	hint := ""
	if s := nearest(name, r.names); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	return zero, fmt.Errorf("unknown %s %q%s; want one of %s", r.what, name, hint, strings.Join(r.names, ", "))
}

// All returns the registered formats in registration order.
func (r *Registry[F]) All() []F {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frozen = true
	out := make([]F, len(r.names))
	for i, n := range r.names {
		out[i] = r.byName[n]
	}
	return out
}

// nearest is the candidate at the smallest edit distance below 3 from word ("" when
// none is that near).
func nearest(word string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
