package slurmexec

import (
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
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
	if err != nil || v < 0 || math.IsInf(v, 0) || v*mult > math.MaxInt32 {
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
