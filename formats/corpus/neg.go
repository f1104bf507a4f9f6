package corpus

import (
	"fmt"
	"math"

	"goldstone/optim"
)

// NegPower is the exponent of the negative-sampling distribution P_t(j)^NegPower.
const NegPower = 0.75

// NegFactors writes the rank-one factors of the negative counts
//
//	n-_{ij,t} = eta * (sum_ij n+_{ij,t}) * P_t(i) * P_t(j)^0.75 / sum_j P_t(j)^0.75 = a_i * b_j,
//
// with P_t(i) = unigram[i] / sum(unigram), into a (over i) and b (over j), reusing their
// storage, and returns them. A step without words gets zero factors.
func NegFactors(a, b, unigram []float64, posTotal, eta float64) ([]float64, []float64) {
	a, b = resize(a, len(unigram)), resize(b, len(unigram))
	var tot, z float64
	for _, u := range unigram {
		if u < 0 || math.IsNaN(u) {
			panic(fmt.Sprintf("corpus: NegFactors with unigram count %v", u))
		}
		tot += u
	}
	if tot == 0 {
		clear(a)
		clear(b)
		return a, b
	}
	for j, u := range unigram {
		b[j] = optim.Pow(u/tot, NegPower)
		z += b[j]
	}
	s := eta * posTotal / tot
	for i, u := range unigram {
		a[i] = s * u
		b[i] /= z
	}
	return a, b
}

// NegFactors returns the factors a, b of the negative counts of the step,
// n-_{ij} = a_i * b_j (see the package function NegFactors), reusing a and b.
func (s *Step) NegFactors(a, b []float64, eta float64) ([]float64, []float64) {
	return NegFactors(a, b, s.Unigram, s.PosTotal, eta)
}
