// Package checkpoint stores the state of a long computation (a trial's
// training loop) so that a process stopped part-way (Ctrl-C, a Slurm time
// limit or preemption, a killed node) continues where it stopped instead of
// from the start.
//
// A Dir holds one computation's checkpoints, one file per saved step,
// "<step>.ckpt", written atomically (internal/atomicfile: a temporary file
// renamed into place), of which the newest Keep (2) are kept. A checkpoint
// carries the Key it was written under; Load never returns one of another
// key, of another format, or whose checksum does not match (a damaged
// newest file falls back to the one before it). The key is the caller's
// promise that the code and settings that wrote the state are those that
// read it: the pipeline uses the stage's cache key, which holds the stage's
// version, its parameters and the digests of its inputs.
//
// File format (Format 1), little-endian:
//
//	"GSCKPT01"            8 bytes of magic, the format in its last two
//	header length         uint64
//	header                JSON: key, step, created, sections (name, kind, count)
//	sections              in the header's order: f64 and i64 as 8 bytes each, bytes as they are
//	checksum              uint32 CRC-32C of everything before it
//
// Floating-point values are stored as their bits, so a resumed computation
// sees exactly the values it saved.
package checkpoint

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"goldstone/internal/atomicfile"
	"goldstone/internal/fault"
)

// Format is the version of the file layout.
const Format = 1

// magic starts every checkpoint file; its last two characters are Format.
const magic = "GSCKPT01"

// Keep is how many checkpoints a Dir keeps: the newest and the one before
// it (should the newest be damaged).
const Keep = 2

// Section kinds.
const (
	kindF64   = "f64"
	kindF32   = "f32"
	kindI64   = "i64"
	kindBytes = "bytes"
)

// DefaultInterval is the time between two checkpoints of a policy that sets
// neither Every nor Interval: a long trial loses at most this much work (and
// one step) when it is stopped without warning; a trial shorter than it
// writes none.
const DefaultInterval = 10 * time.Minute

// Policy says when a computation writes a checkpoint. The zero value
// writes one every DefaultInterval.
type Policy struct {
	// Every writes a checkpoint every this many steps; 0: by time only.
	Every int
	// Interval writes a checkpoint when this much time has passed since
	// the last one (or the start); 0 with Every 0 means DefaultInterval,
	// 0 with Every > 0 means by steps only.
	Interval time.Duration
	// Off writes none (and reads none).
	Off bool
}

// Due reports whether a checkpoint is due after steps steps since the last
// one (or the start), elapsed time since then.
func (p Policy) Due(steps int, elapsed time.Duration) bool {
	if p.Off || steps <= 0 {
		return false
	}
	if p.Every > 0 && steps >= p.Every {
		return true
	}
	iv := p.Interval
	if iv == 0 && p.Every == 0 {
		iv = DefaultInterval
	}
	return iv > 0 && elapsed >= iv
}

// String describes p for logs and help texts.
func (p Policy) String() string {
	switch {
	case p.Off:
		return "off"
	case p.Every > 0 && p.Interval > 0:
		return fmt.Sprintf("every %d steps or %v", p.Every, p.Interval)
	case p.Every > 0:
		return fmt.Sprintf("every %d steps", p.Every)
	case p.Interval > 0:
		return fmt.Sprintf("every %v", p.Interval)
	}
	return fmt.Sprintf("every %v", DefaultInterval)
}

// Dir is the directory of one computation's checkpoints.
type Dir struct {
	Path string
	// Key identifies what wrote the state: Load skips checkpoints of
	// another key.
	Key string
}

// section is one named array of a checkpoint.
type section struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Count int64  `json:"count"`

	f64 []float64
	f32 []float32
	i64 []int64
	b   []byte
}

func (s *section) size() int64 {
	return int64(s.width()) * s.Count
}

// width is the bytes per value of the section's kind.
func (s *section) width() int {
	switch s.Kind {
	case kindBytes:
		return 1
	case kindF32:
		return 4
	}
	return 8
}

// header is the JSON header of a checkpoint file.
type header struct {
	Key      string    `json:"key"`
	Step     int       `json:"step"`
	Created  time.Time `json:"created"`
	Sections []section `json:"sections"`
}

// State is what a checkpoint holds: named arrays, gathered for Save (the
// Writer side) or read back from a file (Load). Names are unique; the
// arrays added for Save are not copied, so they must not change until Save
// returns.
type State struct {
	Step     int
	sections []section
	byName   map[string]int

	// Read side.
	path    string
	created time.Time
	offsets []int64 // of each section's data in the file
}

// NewState returns an empty state of step step, to fill and Save.
func NewState(step int) *State { return &State{Step: step, byName: map[string]int{}} }

func (s *State) add(sec section) {
	if _, dup := s.byName[sec.Name]; dup {
		panic(fmt.Sprintf("checkpoint: section %q added twice", sec.Name))
	}
	if sec.Name == "" || strings.ContainsAny(sec.Name, "\x00\n") {
		panic(fmt.Sprintf("checkpoint: bad section name %q", sec.Name))
	}
	s.byName[sec.Name] = len(s.sections)
	s.sections = append(s.sections, sec)
}

// Floats adds an array of float64 values (stored as their bits).
func (s *State) Floats(name string, v []float64) {
	s.add(section{Name: name, Kind: kindF64, Count: int64(len(v)), f64: v})
}

// Float32s adds an array of float32 values (stored as their bits: a
// float32 trial's parameters and optimizer state). ReadFloats refuses it.
func (s *State) Float32s(name string, v []float32) {
	s.add(section{Name: name, Kind: kindF32, Count: int64(len(v)), f32: v})
}

// Ints adds an array of int64 values.
func (s *State) Ints(name string, v ...int64) {
	s.add(section{Name: name, Kind: kindI64, Count: int64(len(v)), i64: v})
}

// Bytes adds bytes (a random source's MarshalBinary, an encoded record).
func (s *State) Bytes(name string, b []byte) {
	s.add(section{Name: name, Kind: kindBytes, Count: int64(len(b)), b: b})
}

// Strings adds strings (stored as bytes, each a uvarint length and its bytes).
func (s *State) Strings(name string, v []string) {
	var b []byte
	for _, x := range v {
		b = binary.AppendUvarint(b, uint64(len(x)))
		b = append(b, x...)
	}
	s.Bytes(name, b)
}

// Names returns the names of the sections, in order.
func (s *State) Names() []string {
	out := make([]string, len(s.sections))
	for i, sec := range s.sections {
		out[i] = sec.Name
	}
	return out
}

// Created is when a loaded checkpoint was written.
func (s *State) Created() time.Time { return s.created }

// Path is the file a loaded checkpoint was read from.
func (s *State) Path() string { return s.path }

// ErrMismatch is wrapped by the errors of reading a section that is
// missing or of another kind or length than the reader expects: the
// checkpoint was written by other code.
var ErrMismatch = errors.New("checkpoint does not match")

func (s *State) find(name, kind string) (int, error) {
	i, ok := s.byName[name]
	if !ok {
		return -1, fmt.Errorf("%s: no section %q: %w", s.path, name, ErrMismatch)
	}
	if k := s.sections[i].Kind; k != kind {
		return -1, fmt.Errorf("%s: section %q is %s, want %s: %w", s.path, name, k, kind, ErrMismatch)
	}
	return i, nil
}

// Has reports whether the state has a section name.
func (s *State) Has(name string) bool { _, ok := s.byName[name]; return ok }

// Len returns the count of section name's values (bytes for Bytes), or -1.
func (s *State) Len(name string) int {
	i, ok := s.byName[name]
	if !ok {
		return -1
	}
	return int(s.sections[i].Count)
}

// ReadFloats reads section name into dst, which must have its length.
func (s *State) ReadFloats(name string, dst []float64) error {
	i, err := s.find(name, kindF64)
	if err != nil {
		return err
	}
	if n := s.sections[i].Count; n != int64(len(dst)) {
		return fmt.Errorf("%s: section %q has %d values, want %d: %w", s.path, name, n, len(dst), ErrMismatch)
	}
	return s.read(i, func(b []byte, k int) {
		for j := range len(b) / 8 {
			dst[k+j] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*j:]))
		}
	})
}

// ReadFloat32s reads a section written by Float32s into dst, which must
// have its length.
func (s *State) ReadFloat32s(name string, dst []float32) error {
	i, err := s.find(name, kindF32)
	if err != nil {
		return err
	}
	if n := s.sections[i].Count; n != int64(len(dst)) {
		return fmt.Errorf("%s: section %q has %d values, want %d: %w", s.path, name, n, len(dst), ErrMismatch)
	}
	return s.read(i, func(b []byte, k int) {
		for j := range len(b) / 4 {
			dst[k+j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		}
	})
}

// Kind returns the kind of section name's values ("f64", "f32", "i64",
// "bytes"), or "" when there is none.
func (s *State) Kind(name string) string {
	i, ok := s.byName[name]
	if !ok {
		return ""
	}
	return s.sections[i].Kind
}

// ReadInts reads section name, which must have n values (n < 0: any).
func (s *State) ReadInts(name string, n int) ([]int64, error) {
	i, err := s.find(name, kindI64)
	if err != nil {
		return nil, err
	}
	if c := s.sections[i].Count; n >= 0 && c != int64(n) {
		return nil, fmt.Errorf("%s: section %q has %d values, want %d: %w", s.path, name, c, n, ErrMismatch)
	}
	out := make([]int64, s.sections[i].Count)
	err = s.read(i, func(b []byte, k int) {
		for j := range len(b) / 8 {
			out[k+j] = int64(binary.LittleEndian.Uint64(b[8*j:]))
		}
	})
	return out, err
}

// ReadAllFloats reads section name, of any length.
func (s *State) ReadAllFloats(name string) ([]float64, error) {
	n := s.Len(name)
	if n < 0 {
		return nil, fmt.Errorf("%s: no section %q: %w", s.path, name, ErrMismatch)
	}
	out := make([]float64, n)
	return out, s.ReadFloats(name, out)
}

// ReadBytes reads section name.
func (s *State) ReadBytes(name string) ([]byte, error) {
	i, err := s.find(name, kindBytes)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, s.sections[i].Count)
	err = s.read(i, func(b []byte, _ int) { out = append(out, b...) })
	return out, err
}

// ReadStrings reads a section written by Strings.
func (s *State) ReadStrings(name string) ([]string, error) {
	b, err := s.ReadBytes(name)
	if err != nil {
		return nil, err
	}
	var out []string
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, fmt.Errorf("%s: section %q: malformed strings: %w", s.path, name, ErrMismatch)
		}
		out = append(out, string(b[k:k+int(n)]))
		b = b[k+int(n):]
	}
	return out, nil
}

// read streams section i's data from the file to fn in pieces whose length
// is a multiple of the kind's width; k is the index of the piece's first
// value.
func (s *State) read(i int, fn func(b []byte, k int)) error {
	sec := &s.sections[i]
	if s.path == "" {
		panic("checkpoint: reading a state that was not loaded")
	}
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := io.NewSectionReader(f, s.offsets[i], sec.size())
	buf := make([]byte, 1<<20)
	k := 0
	for left := sec.size(); left > 0; {
		n := int(min(left, int64(len(buf))))
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return fmt.Errorf("%s: section %q: %w", s.path, sec.Name, err)
		}
		fn(buf[:n], k)
		k += n / sec.width()
		left -= int64(n)
	}
	return nil
}

// fileName is the name of the checkpoint of step.
func fileName(step int) string { return fmt.Sprintf("%012d.ckpt", step) }

// Save writes st as the checkpoint of step st.Step, atomically, and removes
// all but the newest Keep checkpoints. It returns the file's size.
func (d Dir) Save(st *State) (int64, error) {
	if err := os.MkdirAll(d.Path, 0o777); err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	h := header{Key: d.Key, Step: st.Step, Created: time.Now().UTC(), Sections: st.sections}
	hj, err := json.Marshal(h)
	if err != nil {
		return 0, err
	}
	dst := filepath.Join(d.Path, fileName(st.Step))
	var size int64
	err = atomicfile.Write(dst, func(w io.Writer) error {
		cw := &crcWriter{w: w, h: crc32.New(castagnoli)}
		bw := bufio.NewWriterSize(cw, 1<<20)
		bw.WriteString(magic)
		binary.Write(bw, binary.LittleEndian, uint64(len(hj)))
		bw.Write(hj)
		buf := make([]byte, 0, 1<<16)
		for i := range st.sections {
			sec := &st.sections[i]
			switch sec.Kind {
			case kindF64:
				for _, v := range sec.f64 {
					buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
					if len(buf) == cap(buf) {
						bw.Write(buf)
						buf = buf[:0]
					}
				}
			case kindF32:
				for _, v := range sec.f32 {
					buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
					if len(buf) == cap(buf) {
						bw.Write(buf)
						buf = buf[:0]
					}
				}
			case kindI64:
				for _, v := range sec.i64 {
					buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
					if len(buf) == cap(buf) {
						bw.Write(buf)
						buf = buf[:0]
					}
				}
			default:
				bw.Write(buf)
				buf = buf[:0]
				bw.Write(sec.b)
			}
		}
		bw.Write(buf)
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write checkpoint %s: %w", dst, err)
		}
		sum := cw.h.Sum32()
		if err := binary.Write(w, binary.LittleEndian, sum); err != nil {
			return fmt.Errorf("write checkpoint %s: %w", dst, err)
		}
		size = cw.n + 4
		return nil
	})
	if err != nil {
		return 0, err
	}
	fault.Point("checkpoint:saved")
	d.prune()
	return size, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type crcWriter struct {
	w io.Writer
	h hash.Hash32
	n int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	return c.w.Write(p)
}

// steps lists the steps of the checkpoint files in d, newest first.
func (d Dir) steps() []int {
	ents, err := os.ReadDir(d.Path)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		s, ok := strings.CutSuffix(e.Name(), ".ckpt")
		if !ok || strings.HasPrefix(s, ".") {
			continue
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// prune removes all but the newest Keep checkpoints (and temporary files a
// killed writer left).
func (d Dir) prune() {
	for i, s := range d.steps() {
		if i >= Keep {
			os.Remove(filepath.Join(d.Path, fileName(s)))
		}
	}
	atomicfile.RemoveStale(d.Path)
}

// Skipped is a checkpoint Load did not use, and why.
type Skipped struct {
	Path   string
	Reason string
}

// Load returns the newest checkpoint of d that is whole (its checksum
// matches) and of d's key, or nil when there is none; the ones it passed
// over are listed with the reason. The sections are read on demand
// (State.ReadFloats, ...).
func (d Dir) Load() (*State, []Skipped, error) { return d.LoadAtMost(math.MaxInt) }

// LoadAtMost is Load among the checkpoints of step at most max (a run
// with a budget of max steps cannot use a longer run's); those past it are
// passed over without a word.
func (d Dir) LoadAtMost(max int) (*State, []Skipped, error) {
	var skipped []Skipped
	for _, s := range d.steps() {
		if s > max {
			continue
		}
		p := filepath.Join(d.Path, fileName(s))
		st, err := open(p)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			skipped = append(skipped, Skipped{p, err.Error()})
			continue
		}
		if st.key != d.Key {
			skipped = append(skipped, Skipped{p, fmt.Sprintf("written under key %q, not %q", st.key, d.Key)})
			continue
		}
		return st.State, skipped, nil
	}
	return nil, skipped, nil
}

// Remove deletes d and every checkpoint in it.
func (d Dir) Remove() error { return os.RemoveAll(d.Path) }

type opened struct {
	*State
	key string
}

// maxHeader bounds a header's length (a damaged file can say anything).
const maxHeader = 64 << 20

// open reads and verifies the checkpoint file p: its magic, header and
// checksum (one pass over the file).
func open(p string) (*opened, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < int64(len(magic))+8+4 {
		return nil, errors.New("truncated")
	}
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size-4)); err != nil {
		return nil, err
	}
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], size-4); err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(tail[:]) != h.Sum32() {
		return nil, errors.New("checksum mismatch (damaged)")
	}
	var pre [len(magic) + 8]byte
	if _, err := f.ReadAt(pre[:], 0); err != nil {
		return nil, err
	}
	if string(pre[:len(magic)-2]) != magic[:len(magic)-2] {
		return nil, errors.New("not a checkpoint file")
	}
	if string(pre[:len(magic)]) != magic {
		return nil, fmt.Errorf("checkpoint format %q, this runner reads %q", pre[len(magic)-2:len(magic)], magic[len(magic)-2:])
	}
	hl := binary.LittleEndian.Uint64(pre[len(magic):])
	if hl > maxHeader || int64(hl) > size {
		return nil, errors.New("bad header length")
	}
	hb := make([]byte, hl)
	if _, err := f.ReadAt(hb, int64(len(pre))); err != nil {
		return nil, err
	}
	var hd header
	if err := json.Unmarshal(hb, &hd); err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	st := &State{Step: hd.Step, byName: map[string]int{}, path: p, created: hd.Created}
	off := int64(len(pre)) + int64(hl)
	for _, sec := range hd.Sections {
		if sec.Count < 0 || (sec.Kind != kindF64 && sec.Kind != kindF32 && sec.Kind != kindI64 && sec.Kind != kindBytes) {
			return nil, fmt.Errorf("header: bad section %q (%s, %d)", sec.Name, sec.Kind, sec.Count)
		}
		if _, dup := st.byName[sec.Name]; dup || sec.Name == "" {
			return nil, fmt.Errorf("header: section %q repeated or unnamed", sec.Name)
		}
		st.byName[sec.Name] = len(st.sections)
		st.sections = append(st.sections, section{Name: sec.Name, Kind: sec.Kind, Count: sec.Count})
		st.offsets = append(st.offsets, off)
		off += st.sections[len(st.sections)-1].size()
		if off > size-4 {
			return nil, errors.New("sections run past the end of the file")
		}
	}
	if off != size-4 {
		return nil, errors.New("trailing bytes after the sections")
	}
	return &opened{State: st, key: hd.Key}, nil
}
