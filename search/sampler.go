package search

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Sampler suggests points of a space. Suggest returns the suggestions of
// indices start, ..., start+n-1 of a search: a pure function of the space,
// the seed, those indices and the observations so far (history, in the
// order they were suggested). It may return fewer than n (a grid that is
// exhausted).
type Sampler interface {
	Suggest(sp *Space, seed uint64, history []Observation, start, n int) ([]Point, error)
}

// samplers is the registry of samplers by name.
var samplers = map[string]func() Sampler{
	"grid":   func() Sampler { return Grid{} },
	"random": func() Sampler { return Random{} },
	"sobol":  func() Sampler { return Sobol{} },
	"tpe":    func() Sampler { return NewTPE() },
}

// Names lists the samplers, sorted.
func Names() []string {
	var out []string
	for k := range samplers {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Lookup returns the sampler of that name.
func Lookup(name string) (Sampler, error) {
	f, ok := samplers[name]
	if !ok {
		return nil, fmt.Errorf("unknown sampler %q; want one of %s", name, strings.Join(Names(), ", "))
	}
	return f(), nil
}

// stream is the random source of suggestion index of a search: a PCG
// generator of its own, so that each suggestion's draws depend on nothing
// but the seed and its index; its two seed words are the SplitMix64 hashes
// of (seed, purpose) and of the index, so that neighbouring indices start
// from unrelated states.
func stream(seed uint64, index int, purpose uint64) *rand.Rand {
	return rand.New(rand.NewPCG(splitmix(seed^purpose*0x9e3779b97f4a7c15), splitmix(uint64(index))))
}

// splitmix is SplitMix64's output function of x (Steele et al. 2014).
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// unit is a float in [0, 1) from the top 53 bits of a draw.
func unit(r *rand.Rand) float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// Random draws every parameter independently and uniformly (in its
// internal space: log for log ranges).
type Random struct{}

// Suggest implements Sampler.
func (Random) Suggest(sp *Space, seed uint64, _ []Observation, start, n int) ([]Point, error) {
	out := make([]Point, n)
	for i := range out {
		r := stream(seed, start+i, 1)
		us := make([]float64, len(sp.Params))
		for j := range us {
			us[j] = unit(r) // every parameter draws, active or not: stable streams
		}
		out[i] = fromUnits(sp, us)
	}
	return out, nil
}

// fromUnits maps one u in [0, 1) per parameter to a point, leaving out the
// parameters whose condition fails.
func fromUnits(sp *Space, us []float64) Point {
	pt := Point{}
	for j := range sp.Params {
		p := &sp.Params[j]
		if p.Active(pt) {
			pt[p.Key] = p.fromUnit(us[j])
		}
	}
	return pt
}

// Grid enumerates the space's points in order: every choice and every
// integer of an int range (the first parameter varying slowest), a
// conditional parameter only under the values it exists for. A uniform
// range has no grid: Size refuses it.
type Grid struct{}

// maxGrid bounds the points a grid sampler enumerates.
const maxGrid = 100_000

// Suggest implements Sampler.
func (Grid) Suggest(sp *Space, _ uint64, _ []Observation, start, n int) ([]Point, error) {
	all, err := GridPoints(sp)
	if err != nil {
		return nil, err
	}
	if start >= len(all) {
		return nil, nil
	}
	return all[start:min(start+n, len(all))], nil
}

// GridPoints enumerates the grid of a space (see Grid).
func GridPoints(sp *Space) ([]Point, error) {
	for _, p := range sp.Params {
		if p.Dist == Uniform {
			return nil, &ParamError{p.Key, errors.New("the grid sampler needs a choice or an int range, not a uniform range")}
		}
		if p.Dist == Int && p.Hi-p.Lo >= maxGrid {
			return nil, &ParamError{p.Key, fmt.Errorf("int range of more than %d values for the grid sampler", maxGrid)}
		}
	}
	out := []Point{{}}
	for j := range sp.Params {
		p := &sp.Params[j]
		var next []Point
		for _, pt := range out {
			if !p.Active(pt) {
				next = append(next, pt)
				continue
			}
			for _, v := range gridValues(p) {
				q := Point{}
				for k, x := range pt {
					q[k] = x
				}
				q[p.Key] = v
				next = append(next, q)
			}
			if len(next) > maxGrid {
				return nil, fmt.Errorf("the grid has more than %d points", maxGrid)
			}
		}
		out = next
	}
	return out, nil
}

func gridValues(p *Param) []any {
	if p.Dist == Choice {
		return p.Choices
	}
	var vs []any
	for x := int64(p.Lo); x <= int64(p.Hi); x++ {
		vs = append(vs, x)
	}
	return vs
}
