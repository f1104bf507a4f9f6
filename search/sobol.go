package search

import "fmt"

// Sobol suggests the points of a Sobol' sequence (Joe and Kuo's direction
// numbers, new-joe-kuo-6.21201), scrambled by a random digital shift drawn
// from the seed: suggestion i is point i of the sequence in Gray-code
// order, each coordinate mapped to its parameter as Random maps a uniform
// draw. Up to MaxSobolDims parameters.
type Sobol struct{}

// MaxSobolDims is the number of dimensions the direction numbers cover.
const MaxSobolDims = 32 // len(joeKuo) + 1

// joeKuo holds, for dimensions 2, 3, ..., the degree s of the primitive
// polynomial, its coefficients a and the initial direction numbers m_1..m_s
// (Joe and Kuo 2008, file new-joe-kuo-6.21201). Dimension 1 is van der
// Corput's sequence (every m = 1).
var joeKuo = []struct {
	s, a uint32
	m    []uint32
}{
	{1, 0, []uint32{1}},
	{2, 1, []uint32{1, 3}},
	{3, 1, []uint32{1, 3, 1}},
	{3, 2, []uint32{1, 1, 1}},
	{4, 1, []uint32{1, 1, 3, 3}},
	{4, 4, []uint32{1, 3, 5, 13}},
	{5, 2, []uint32{1, 1, 5, 5, 17}},
	{5, 4, []uint32{1, 1, 5, 5, 5}},
	{5, 7, []uint32{1, 1, 7, 11, 19}},
	{5, 11, []uint32{1, 1, 5, 1, 1}},
	{5, 13, []uint32{1, 1, 1, 3, 11}},
	{5, 14, []uint32{1, 3, 5, 5, 31}},
	{6, 1, []uint32{1, 3, 3, 9, 7, 49}},
	{6, 13, []uint32{1, 1, 1, 15, 21, 21}},
	{6, 16, []uint32{1, 3, 1, 13, 27, 49}},
	{6, 19, []uint32{1, 1, 1, 15, 7, 5}},
	{6, 22, []uint32{1, 3, 1, 15, 13, 25}},
	{6, 25, []uint32{1, 1, 5, 5, 19, 61}},
	{7, 1, []uint32{1, 3, 7, 11, 23, 15, 103}},
	{7, 4, []uint32{1, 3, 7, 13, 13, 15, 69}},
	{7, 7, []uint32{1, 1, 3, 13, 7, 35, 63}},
	{7, 8, []uint32{1, 3, 5, 9, 1, 25, 53}},
	{7, 14, []uint32{1, 3, 1, 13, 9, 35, 107}},
	{7, 19, []uint32{1, 3, 1, 5, 27, 61, 31}},
	{7, 21, []uint32{1, 1, 5, 11, 19, 41, 61}},
	{7, 28, []uint32{1, 3, 5, 3, 3, 13, 69}},
	{7, 31, []uint32{1, 1, 7, 13, 1, 19, 1}},
	{7, 32, []uint32{1, 3, 7, 5, 13, 19, 59}},
	{7, 37, []uint32{1, 1, 3, 9, 25, 29, 41}},
	{7, 41, []uint32{1, 3, 5, 13, 23, 1, 55}},
	{7, 42, []uint32{1, 3, 7, 3, 13, 59, 17}},
}

// directions returns the 32 direction numbers V_1..V_32 of dimension d
// (0-based), scaled to 32 bits.
func directions(d int) [32]uint32 {
	var v [32]uint32
	if d == 0 {
		for k := range v {
			v[k] = 1 << (31 - k)
		}
		return v
	}
	jk := joeKuo[d-1]
	s := int(jk.s)
	for k := 0; k < s; k++ {
		v[k] = jk.m[k] << (31 - k)
	}
	for k := s; k < 32; k++ {
		v[k] = v[k-s] ^ (v[k-s] >> jk.s)
		for j := 1; j < s; j++ {
			v[k] ^= ((jk.a >> (s - 1 - j)) & 1) * v[k-j]
		}
	}
	return v
}

// SobolPoint returns coordinate d of point i of the unscrambled sequence
// in Gray-code order, as 32 bits (the value times 2^32).
func SobolPoint(i uint32, d int) uint32 {
	v := directions(d)
	g := i ^ (i >> 1)
	var x uint32
	for k := 0; g != 0; k, g = k+1, g>>1 {
		if g&1 != 0 {
			x ^= v[k]
		}
	}
	return x
}

// Suggest implements Sampler.
func (Sobol) Suggest(sp *Space, seed uint64, _ []Observation, start, n int) ([]Point, error) {
	dims := len(sp.Params)
	if dims > MaxSobolDims {
		return nil, fmt.Errorf("the Sobol sampler covers at most %d parameters, the space has %d", MaxSobolDims, dims)
	}
	shift := stream(seed, 0, 2)
	shifts := make([]uint32, dims)
	for d := range shifts {
		shifts[d] = uint32(shift.Uint64() >> 32)
	}
	dirs := make([][32]uint32, dims)
	for d := range dirs {
		dirs[d] = directions(d)
	}
	out := make([]Point, n)
	for i := range out {
		g := uint32(start+i) ^ uint32(start+i)>>1
		us := make([]float64, dims)
		for d := range us {
			var x uint32
			for k, h := 0, g; h != 0; k, h = k+1, h>>1 {
				if h&1 != 0 {
					x ^= dirs[d][k]
				}
			}
			us[d] = float64(x^shifts[d]) * 0x1p-32
		}
		out[i] = fromUnits(sp, us)
	}
	return out, nil
}
