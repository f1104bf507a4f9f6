package movielens

import (
	"math"
	"math/rand/v2"
)

// streamActive is the random stream of the users' active bins.
const streamActive = uint64(4) << 56

// ActiveBinsSmall is the mean number of active bins (of 100) per user
// measured on ml-latest-small (TestActivityRealVsPlanted: 2.55; median 1,
// p90 4): the value PlantedConfig.ActiveBinsMean is calibrated to.
const ActiveBinsSmall = 2.55

// burstyUsers gives every user k active generator bins, k = 1 + a geometric
// number with mean ActiveBinsMean (capped at Bins), drawn without
// replacement with probability proportional to the bins' rating volumes,
// and returns for each bin the users active in it (ascending) and an alias
// table over their activity weights uw. A bin left without a user gets one
// uniformly at random, so every bin can hold its ratings.
func burstyUsers(cfg PlantedConfig, uw []float64, counts []int64) (ids [][]int32, tables []*alias) {
	rng := rand.New(rand.NewPCG(cfg.Seed, streamActive))
	vol := make([]float64, len(counts))
	for t, c := range counts {
		vol[t] = float64(c)
	}
	bins := newAlias(vol)
	p := 1 / cfg.ActiveBinsMean // P(stop) of 1 + Geometric: mean 1/p
	ids = make([][]int32, cfg.Bins)
	seen := make(map[int]bool)
	for u := range cfg.Users {
		k := 1
		for k < cfg.Bins && rng.Float64() >= p {
			k++
		}
		clear(seen)
		for len(seen) < k {
			t := bins.sample(rng)
			if !seen[t] {
				seen[t] = true
				ids[t] = append(ids[t], int32(u))
			}
		}
	}
	tables = make([]*alias, cfg.Bins)
	for t := range ids {
		if len(ids[t]) == 0 {
			ids[t] = []int32{int32(rng.IntN(cfg.Users))}
		}
		w := make([]float64, len(ids[t]))
		for i, u := range ids[t] {
			w[i] = uw[u]
		}
		tables[t] = newAlias(w)
	}
	return ids, tables
}

// validActiveBins checks ActiveBinsMean: 0 (users spread over all bins) or >= 1.
func validActiveBins(m float64) bool {
	return m == 0 || (m >= 1 && !math.IsInf(m, 0))
}
