package fmacheck

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
)

// Build is one way of compiling the module.
type Build struct {
	Name string   // e.g. "amd64-v3"
	Env  []string // GOARCH, GOAMD64, CGO_ENABLED, ...
	Tags string   // -tags value, e.g. "purego"
}

// Builds are the builds whose results must agree bit for bit: the reference
// (amd64 GOAMD64=v1, where the compiler never fuses) first. (GOAMD64=v4
// fuses exactly as v3.) The amd64 ones keep the environment's cgo setting,
// as .ci/run's test runs under them do (they share its build cache); arm64
// builds without cgo (no cross C compiler needed; cgo only swaps SQLite for
// a stub, which does no arithmetic).
var Builds = []Build{
	{Name: "amd64-v1", Env: []string{"GOARCH=amd64", "GOAMD64=v1"}},
	{Name: "amd64-v3", Env: []string{"GOARCH=amd64", "GOAMD64=v3"}},
	{Name: "amd64-v3-purego", Env: []string{"GOARCH=amd64", "GOAMD64=v3"}, Tags: "purego"},
	{Name: "arm64", Env: []string{"GOARCH=arm64", "CGO_ENABLED=0"}},
}

// Exempt lists the packages whose floating-point values never reach a
// stored result, with the reason. Their code is compiled and listed, but
// neither fusion nor build-dependent calls are reported.
var Exempt = map[string]string{
	"goldstone/report/figures": "plots' axes, ticks and layout (gonum/plot): pixels, not results",
}

// Listing is what one build's assembly listing says about goldstone's code.
type Listing struct {
	// FMA counts the fused multiply-add instructions per function and source
	// position ("file:line").
	FMA map[string]map[string]int
	// Calls lists, per function, the build-dependent callees it references
	// (with the source position of the reference).
	Calls map[string][]string
}

var (
	textRE  = regexp.MustCompile(`^(\S+) STEXT`)
	instRE  = regexp.MustCompile(`^\s+0x[0-9a-f]+ \d+ \(([^)]*)\)\s+(\S+)\s*(.*)$`)
	fmaAMD  = regexp.MustCompile(`^VFN?M(ADD|SUB)`)
	fmaARM  = regexp.MustCompile(`^FN?M(ADD|SUB)[SD]$`)
	symRE   = regexp.MustCompile(`([^\s,()]+(?:\(\*?[^\s()]+\))?\.[^\s(),]+?)(·f)?\(SB\)`)
	exactFn = map[string]bool{
		// Correctly rounded or exact: the same bits on every build. Names
		// are matched without an "arch" prefix and with a lower-case first
		// letter (math.Ldexp calls math.ldexp, math.Floor math.archFloor).
		"sqrt": true, "abs": true, "floor": true, "ceil": true, "trunc": true,
		"round": true, "roundToEven": true, "ldexp": true, "frexp": true,
		"modf": true, "mod": true, "remainder": true, "fMA": true, "copysign": true,
		"signbit": true, "isNaN": true, "isInf": true, "inf": true, "naN": true,
		"float64bits": true, "float64frombits": true, "float32bits": true,
		"float32frombits": true, "nextafter": true, "nextafter32": true,
		"max": true, "min": true, "dim": true, "ilogb": true, "logb": true,
		"normalize": true,
	}
)

// Forbidden reports whether a call to sym (as the listing spells it, e.g.
// "math.Exp", "math/rand/v2.(*Rand).NormFloat64",
// "gonum.org/v1/gonum/mat.(*SVD).Factorize") has build-dependent bits.
func Forbidden(sym string) bool {
	switch {
	case strings.HasPrefix(sym, "math."):
		name := strings.TrimPrefix(strings.TrimPrefix(sym, "math."), "arch")
		if name == "" {
			return true
		}
		return !exactFn[strings.ToLower(name[:1])+name[1:]]
	case strings.HasPrefix(sym, "math/rand"):
		return strings.HasSuffix(sym, "NormFloat64") || strings.HasSuffix(sym, "ExpFloat64") || strings.Contains(sym, "Zipf")
	case strings.HasPrefix(sym, "gonum.org/v1/gonum/"):
		return true
	}
	return false
}

// Parse reads an assembly listing (the output of go build -gcflags=-S) and
// collects the fused multiply-adds and build-dependent references of the
// functions whose names start with prefix ("goldstone/").
func Parse(r io.Reader, prefix string) (*Listing, error) {
	l := &Listing{FMA: map[string]map[string]int{}, Calls: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	fn := ""
	for sc.Scan() {
		line := sc.Text()
		if m := textRE.FindStringSubmatch(line); m != nil {
			fn = ""
			if strings.HasPrefix(m[1], prefix) {
				fn = m[1]
			}
			continue
		}
		if fn == "" {
			continue
		}
		m := instRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pos, op, args := m[1], m[2], m[3]
		if fmaAMD.MatchString(op) || fmaARM.MatchString(op) {
			if l.FMA[fn] == nil {
				l.FMA[fn] = map[string]int{}
			}
			l.FMA[fn][pos]++
		}
		for _, s := range symRE.FindAllStringSubmatch(args, -1) {
			// Calls, and function values (a name with ·f); not type
			// descriptors or data.
			if (op == "CALL" || s[2] != "") && Forbidden(s[1]) {
				l.Calls[fn] = append(l.Calls[fn], s[1]+" at "+pos)
			}
		}
	}
	return l, sc.Err()
}

// Compile builds the packages (patterns, relative to dir) under b with the
// assembly listing of the packages matching listPattern, and parses it.
func Compile(goCmd, dir string, b Build, listPattern string, patterns ...string) (*Listing, error) {
	args := []string{"build", "-gcflags=" + listPattern + "=-S"}
	if b.Tags != "" {
		args = append(args, "-tags", b.Tags)
	}
	args = append(args, patterns...)
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), b.Env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: go %s: %v\n%s", b.Name, strings.Join(args, " "), err, tail(out.String(), 4000))
	}
	return Parse(&out, "goldstone")
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Fused compares a build's listing with the reference build's and returns,
// sorted, one line per function and source position with more fused
// multiply-adds than the reference has there.
func Fused(ref, got *Listing, name string, exempt func(fn string) bool) []string {
	var out []string
	for fn, byPos := range got.FMA {
		if exempt(fn) {
			continue
		}
		for pos, n := range byPos {
			if r := ref.FMA[fn][pos]; n > r {
				out = append(out, fmt.Sprintf("%s: %s: %d fused multiply-add(s), %d under the reference build: compiler fusion (round the product: float64(x*y) + z; or write math.FMA where fusion is the contract)", pos, fn, n-r, r))
			}
		}
	}
	slices.Sort(out)
	return out
}

// BuildDependent returns, sorted, the build-dependent calls of a listing.
func BuildDependent(got *Listing, name string, exempt func(fn string) bool) []string {
	var out []string
	for fn, calls := range got.Calls {
		if exempt(fn) {
			continue
		}
		for _, c := range calls {
			out = append(out, fmt.Sprintf("%s calls %s: its bits depend on the build (use optim's Exp, Log, Log1p, Pow, NormFloat64, ExpFloat64, SVD, Cholesky)", fn, c))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Package returns the import path of a listed function name
// ("goldstone/optim.(*Goldstone).Round.func1" -> "goldstone/optim").
func Package(fn string) string {
	slash := strings.LastIndex(fn, "/")
	dot := strings.Index(fn[slash+1:], ".")
	if dot < 0 {
		return fn
	}
	return fn[:slash+1+dot]
}

// Report collects findings across builds: each finding once, with the
// builds that have it.
type Report struct {
	builds map[string][]string
	order  []string
}

// Add records the findings of one build.
func (r *Report) Add(build string, findings []string) {
	if r.builds == nil {
		r.builds = map[string][]string{}
	}
	for _, f := range findings {
		if _, ok := r.builds[f]; !ok {
			r.order = append(r.order, f)
		}
		r.builds[f] = append(r.builds[f], build)
	}
}

// Lines returns the findings, sorted, each with its builds.
func (r *Report) Lines() []string {
	out := make([]string, 0, len(r.order))
	for _, f := range r.order {
		out = append(out, f+" ["+strings.Join(r.builds[f], ", ")+"]")
	}
	slices.Sort(out)
	return out
}
