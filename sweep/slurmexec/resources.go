package slurmexec

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"goldstone/experiment"
)

// Resources per task, derived from the bytes of a trial's inputs (the data
// set after the shared stages) when the experiment does not set them: the
// models hold their data and a few parameter-sized buffers in memory, a
// small multiple of their inputs; cores help once there is enough to split.
func derive(inputBytes int64) (cpus, memMB int) {
	const mib = 1 << 20
	mem := 512 + 8*inputBytes/mib
	memMB = int((mem + 255) / 256 * 256)
	switch {
	case inputBytes < 16*mib:
		cpus = 1
	case inputBytes < 256*mib:
		cpus = 2
	case inputBytes < 2048*mib:
		cpus = 4
	default:
		cpus = 8
	}
	return cpus, memMB
}

// MinBaseMB is the memory a task needs before any data: the runner's Go
// runtime, its binary and the SQLite and Arrow libraries linked in.
const MinBaseMB = 128

// minMem is the least memory in MiB that a trial (or the shared job) of a
// data set of dataBytes needs: MinBaseMB and the data held twice (its
// parsed arrays and the bytes read). Below it a task is killed for memory
// before it has done anything; derive asks for 4x more per byte.
func minMem(dataBytes int64) int {
	const mib = 1 << 20
	return MinBaseMB + int((2*dataBytes+mib-1)/mib)
}

// checkMem refuses a memory request below the least a task of a data set
// of dataBytes needs (minMem), naming the flag, the value and the least.
func checkMem(flag string, memMB int, dataBytes int64) error {
	if memMB <= 0 {
		return nil
	}
	if least := minMem(dataBytes); memMB < least {
		return fmt.Errorf("%s %dM is below the least a task needs, %dM (%d MiB for the runner and twice the data set's %d MiB): want at least %dM",
			flag, memMB, least, MinBaseMB, (dataBytes+(1<<20)-1)>>20, least)
	}
	return nil
}

// dataBytes is the size of the data set's files: the external inputs of
// the stages every trial shares.
func dataBytes(built *experiment.Built) int64 {
	var raw int64
	seen := map[string]bool{}
	for _, n := range sharedGraph(built).Nodes {
		for _, r := range n.Inputs {
			if r.External() && !seen[r.Path] {
				seen[r.Path] = true
				raw += sizeOf(r.Path)
			}
		}
	}
	return raw
}

// sizeOf is the total size of the files under path (a file or directory).
func sizeOf(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// ParseMem reads a memory size as sbatch's --mem takes it: a number of
// MiB, or one with the suffix K, M, G or T (binary units); it returns MiB
// (at least 1 for a positive size).
func ParseMem(s string) (int, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			mult, t = 1.0/1024, t[:len(t)-1]
		case 'M':
			t = t[:len(t)-1]
		case 'G':
			mult, t = 1024, t[:len(t)-1]
		case 'T':
			mult, t = 1024*1024, t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) || v*mult > math.MaxInt32 { // !(v >= 0): NaN too
		return 0, fmt.Errorf("memory %q: want MiB, or a size with K, M, G or T (4096, 4G)", s)
	}
	mb := int(math.Ceil(v * mult))
	return mb, nil
}

// extraResources returns the cpus per task and memory that the further
// sbatch arguments set (they come last on sbatch's command line, so they
// win): --cpus-per-task=N or -c N, --mem=SIZE. ok* say whether each is set.
func extraResources(extra []string) (cpus int, okCPUs bool, memMB int, okMem bool) {
	for i := 0; i < len(extra); i++ {
		a, val, hasVal := extra[i], "", false
		if k, v, found := strings.Cut(a, "="); found {
			a, val, hasVal = k, v, true
		}
		next := func() string {
			if hasVal {
				return val
			}
			if i+1 < len(extra) {
				i++
				return extra[i]
			}
			return ""
		}
		switch a {
		case "--cpus-per-task", "-c":
			if n, err := strconv.Atoi(next()); err == nil && n > 0 {
				cpus, okCPUs = n, true
			}
		case "--mem":
			if n, err := ParseMem(next()); err == nil && n > 0 {
				memMB, okMem = n, true
			}
		}
	}
	return cpus, okCPUs, memMB, okMem
}

// ParseTime reads a time limit as sbatch's --time takes it (MM, MM:SS,
// HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) and returns it in seconds.
func ParseTime(s string) (int64, error) {
	bad := fmt.Errorf("time %q: want MM, HH:MM:SS or D-HH:MM:SS", s)
	if !timeRE.MatchString(s) {
		return 0, bad
	}
	var days int64
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n > math.MaxInt32 { // bounded: the product below must not wrap around
			return 0, bad
		}
		days, rest = n, r
	}
	var f []int64
	for _, p := range strings.Split(rest, ":") {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n > math.MaxInt32 {
			return 0, bad
		}
		f = append(f, n)
	}
	var h, m, sec int64
	switch {
	case strings.Contains(s, "-"): // D-HH[:MM[:SS]]
		h = f[0]
		if len(f) > 1 {
			m = f[1]
		}
		if len(f) > 2 {
			sec = f[2]
		}
	case len(f) == 1: // MM
		m = f[0]
	case len(f) == 2: // MM:SS
		m, sec = f[0], f[1]
	default: // HH:MM:SS
		h, m, sec = f[0], f[1], f[2]
	}
	t := ((days*24+h)*60+m)*60 + sec
	if t < 0 || t > math.MaxInt32 {
		return 0, bad
	}
	return t, nil
}

// FormatTime writes seconds as sbatch's --time: HH:MM:SS, or D-HH:MM:SS
// from a day on.
func FormatTime(sec int64) string {
	d, h, m, s := sec/86400, sec/3600%24, sec/60%60, sec%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// extraTime is the time limit the further sbatch arguments set (--time=T,
// --time T or -t T; the last wins), else def.
func extraTime(extra []string, def string) string {
	for i := 0; i < len(extra); i++ {
		a := extra[i]
		if v, ok := strings.CutPrefix(a, "--time="); ok {
			def = v
		} else if (a == "--time" || a == "-t") && i+1 < len(extra) {
			i++
			def = extra[i]
		}
	}
	return def
}
