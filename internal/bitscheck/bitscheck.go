// Package bitscheck is a test helper: it compares floating-point values a
// test computes with the values recorded in a testdata file, bit for bit.
// The file is the same for every build (GOAMD64=v1, v3, v4, the purego tag,
// arm64; .ci/run runs the tests under each), so a test that passes on all of
// them proves that the code gives the same bits everywhere: the assembly
// kernels and their Go twins, fused and unfused CPUs, both architectures.
//
// Run a package's tests with -update-bits to rewrite its file, after a
// change of results that is meant (and bump the pipelines' Versions).
package bitscheck

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

var update = flag.Bool("update-bits", false, "rewrite the testdata bits files (bitscheck)")

// headLen is the number of values of a group recorded one by one (the rest
// only through the group's digest).
const headLen = 64

// Values collects named groups of values.
type Values struct {
	groups map[string][]float64
}

// Add appends values to a group.
func (v *Values) Add(group string, xs ...float64) {
	if v.groups == nil {
		v.groups = map[string][]float64{}
	}
	v.groups[group] = append(v.groups[group], xs...)
}

// record is a group as stored: its length, the SHA-256 of its values' bits
// (little-endian), the first headLen values as exact text (with the bits in
// hex, for NaNs and signed zeros) and a short digest of every block of
// headLen values, so that a difference is located to a block.
type record struct {
	N      int      `json:"n"`
	SHA256 string   `json:"sha256"`
	Head   []string `json:"head"`
	Blocks []string `json:"blocks,omitempty"`
}

func digest(xs []float64) string {
	h := sha256.New()
	var b [8]byte
	for _, x := range xs {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func encode(xs []float64) record {
	r := record{N: len(xs), SHA256: digest(xs)}
	for _, x := range xs[:min(len(xs), headLen)] {
		r.Head = append(r.Head, text(x))
	}
	if len(xs) > headLen {
		for lo := 0; lo < len(xs); lo += headLen {
			r.Blocks = append(r.Blocks, digest(xs[lo:min(lo+headLen, len(xs))])[:16])
		}
	}
	return r
}

func text(x float64) string {
	return strconv.FormatFloat(x, 'g', -1, 64) + " (" + strconv.FormatUint(math.Float64bits(x), 16) + ")"
}

// Check compares the groups of v with testdata/<name>.bits.json and fails
// the test naming, per differing group, the first differing value (or,
// beyond the recorded head, the digest). With -update-bits it rewrites the
// file instead.
func Check(t *testing.T, name string, v *Values) {
	t.Helper()
	path := filepath.Join("testdata", name+".bits.json")
	got := map[string]record{}
	for g, xs := range v.groups {
		got[g] = encode(xs)
	}
	if *update {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: create it with go test -run %s -update-bits", err, t.Name())
	}
	var want map[string]record
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	for g := range got {
		names = append(names, g)
	}
	for g := range want {
		if _, ok := got[g]; !ok {
			names = append(names, g)
		}
	}
	slices.Sort(names)
	for _, g := range names {
		if d := diff(want[g], got[g], v.groups[g]); d != "" {
			t.Errorf("%s: group %q: %s (the bits differ from %s's: a build-dependent result, or a change of results: then rerun with -update-bits)", path, g, d, path)
		}
	}
}

func diff(w, g record, xs []float64) string {
	switch {
	case w.N == 0 && g.N == 0 && w.SHA256 == "":
		return "not recorded"
	case w.SHA256 == "":
		return "not in the file"
	case g.SHA256 == "" && g.N == 0 && xs == nil:
		return "no longer computed"
	}
	for i := range min(len(w.Head), len(g.Head)) {
		if w.Head[i] != g.Head[i] {
			return fmt.Sprintf("first differing value #%d: recorded %s, now %s", i, w.Head[i], g.Head[i])
		}
	}
	if w.N != g.N {
		return fmt.Sprintf("%d values recorded, %d now", w.N, g.N)
	}
	if w.SHA256 != g.SHA256 {
		for k := range min(len(w.Blocks), len(g.Blocks)) {
			if w.Blocks[k] != g.Blocks[k] {
				lo := k * headLen
				hi := min(lo+headLen, len(xs))
				return fmt.Sprintf("first differing value among #%d..#%d of %d (the values now: %s ... %s)", lo, hi-1, w.N, text(xs[lo]), text(xs[hi-1]))
			}
		}
		return fmt.Sprintf("digest %s, now %s", w.SHA256[:12], g.SHA256[:12])
	}
	return ""
}
