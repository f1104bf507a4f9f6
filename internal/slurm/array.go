package slurm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ArraySpec renders task indices as an sbatch --array value: sorted, runs of
// consecutive indices as ranges ("0-9", "3,7,19", "0-3,7"), with "%K" when
// maxParallel > 0 limits how many tasks run at once. It panics on no indices
// or a negative one (a programmer error).
func ArraySpec(indices []int, maxParallel int) string {
	if len(indices) == 0 {
		panic("slurm: ArraySpec of no indices")
	}
	xs := slices.Clone(indices)
	slices.Sort(xs)
	xs = slices.Compact(xs)
	if xs[0] < 0 {
		panic(fmt.Sprintf("slurm: negative array index %d", xs[0]))
	}
	var b strings.Builder
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(xs[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(xs[j]))
		}
		i = j + 1
	}
	if maxParallel > 0 {
		fmt.Fprintf(&b, "%%%d", maxParallel)
	}
	return b.String()
}

// maxArrayLen bounds ParseArraySpec (Slurm's MaxArraySize is at most 4000001).
const maxArrayLen = 4000001

// ParseArraySpec is the inverse of ArraySpec: it returns the indices of an
// --array value ("0-9%4", "3,7,19", "0-6:2" with a step) and its %K limit
// (0 when absent).
func ParseArraySpec(s string) (indices []int, maxParallel int, err error) {
	spec := s
	if i := strings.IndexByte(spec, '%'); i >= 0 {
		maxParallel, err = strconv.Atoi(spec[i+1:])
		if err != nil || maxParallel <= 0 {
			return nil, 0, fmt.Errorf("array %q: bad task limit %q", s, spec[i+1:])
		}
		spec = spec[:i]
	}
	if spec == "" {
		return nil, 0, fmt.Errorf("array %q: no indices", s)
	}
	for _, part := range strings.Split(spec, ",") {
		lo, hi, step := part, part, "1"
		if i := strings.IndexByte(part, ':'); i >= 0 {
			lo, step = part[:i], part[i+1:]
			hi = lo
		}
		if i := strings.IndexByte(lo, '-'); i >= 0 {
			lo, hi = lo[:i], lo[i+1:]
		}
		a, err1 := strconv.Atoi(lo)
		z, err2 := strconv.Atoi(hi)
		st, err3 := strconv.Atoi(step)
		if err1 != nil || err2 != nil || err3 != nil || a < 0 || z < a || st <= 0 {
			return nil, 0, fmt.Errorf("array %q: bad element %q", s, part)
		}
		if (z-a)/st+1 > maxArrayLen-len(indices) {
			return nil, 0, fmt.Errorf("array %q: more than %d tasks", s, maxArrayLen)
		}
		for k := a; k <= z; k += st {
			indices = append(indices, k)
		}
	}
	slices.Sort(indices)
	return slices.Compact(indices), maxParallel, nil
}
