package models

// The blocked layout of the sparse matrix factorisations (SparseMF): the training ratings sorted by (bin, block, user, item, input
// order) and every bin cut into a grid of blocks run in phases, so that the
// blocks of a phase share no column and every gradient column receives its
// terms in the same order whatever the grid and the worker count.

// ratingGrid is the training ratings in block order: rating p has the user
// column ucol[p] = t*N+user and the item column icol[p] = t*N+Users+item.
type ratingGrid struct {
	ucol, icol []int32
	blocks     []lmfBlock // in (t, i, j) order
	phases     [][]int32  // phases[s]: the indices of the blocks with i+j = s
}

// lmfBlock is block (i, j) of bin t: the ratings lo..hi of users
// ulo..uhi and items ilo..ihi of the bin.
type lmfBlock struct {
	t, i, j  int32
	lo, hi   int32
	ulo, uhi int32
	ilo, ihi int32
}

// The target cost of a block, in units of one column visit (a rating costs
// ratingCost units), is the larger of defaultChunkCost (or chunkCost) and
// the total cost over minBlocks, so that there are enough blocks for any
// number of workers without cutting cheap bins.
const (
	defaultChunkCost = 1 << 16
	ratingCost       = 4
	minBlocks        = 64
)

// newRatingGrid sorts the ratings r (bins 0..T-1) into the columns of a
// model with the given users and items and cuts every bin into its blocks
// and phases. It returns the grid and the order of the ratings: the
// rating at position p is r's rating order[p]. Everything depends on the
// data and chunkCost only.
func newRatingGrid(r *Ratings, T, users, items, chunkCost int) (g ratingGrid, order []int32) {
	nr := r.Len()
	// Stable counting sorts: by item, then by (t, user): the order is
	// (t, user, item, input order).
	byItem := countingSort(identity(nr), items, func(k int32) int { return int(r.Item[k]) })
	uptr := make([]int32, T*users+1)
	byUser := countingSortPtr(byItem, uptr, func(k int32) int { return int(r.T[k])*users + int(r.User[k]) })
	byItem = nil
	iptr := make([]int32, T*items+1) // counts only
	for k := range nr {
		iptr[int(r.T[k])*items+int(r.Item[k])+1]++
	}
	total := 0
	binCost := make([]int, T)
	for t := range T {
		n := int(uptr[(t+1)*users] - uptr[t*users])
		binCost[t] = ratingCost*n + users + items
		total += binCost[t]
	}
	target := max(chunkCost, total/minBlocks)
	// Blocks: a user range and an item range per block, ratings assigned by
	// a stable counting sort on the block index.
	blockOf := make([]int32, T*users) // user range of every (t, user), then block base added below
	itemRange := make([]int32, T*items)
	g.blocks = g.blocks[:0]
	var maxP int
	for t := range T {
		p := 1
		for p*p*target < binCost[t] && p < min(users, items) {
			p++
		}
		maxP = max(maxP, p)
		ub := splitCost(uptr[t*users:(t+1)*users+1], p)
		cnt := make([]int32, items+1)
		for it := range items {
			cnt[it+1] = cnt[it] + iptr[t*items+it+1]
		}
		ib := splitCost(cnt, p)
		base := int32(len(g.blocks))
		for i := range p {
			for u := ub[i]; u < ub[i+1]; u++ {
				blockOf[t*users+u] = base + int32(i*p)
			}
			for it := ib[i]; it < ib[i+1]; it++ {
				itemRange[t*items+it] = int32(i)
			}
		}
		for i := range p {
			for j := range p {
				g.blocks = append(g.blocks, lmfBlock{
					t: int32(t), i: int32(i), j: int32(j),
					ulo: int32(ub[i]), uhi: int32(ub[i+1]), ilo: int32(ib[j]), ihi: int32(ib[j+1]),
				})
			}
		}
	}
	uptr, iptr = nil, nil
	bptr := make([]int32, len(g.blocks)+1)
	order = countingSortPtr(byUser, bptr, func(k int32) int {
		t := int(r.T[k])
		return int(blockOf[t*users+int(r.User[k])] + itemRange[t*items+int(r.Item[k])])
	})
	byUser, blockOf, itemRange = nil, nil, nil
	for b := range g.blocks {
		g.blocks[b].lo, g.blocks[b].hi = bptr[b], bptr[b+1]
	}
	n := int32(users + items)
	g.ucol, g.icol = make([]int32, nr), make([]int32, nr)
	for p, k := range order {
		t := r.T[k]
		g.ucol[p] = t*n + r.User[k]
		g.icol[p] = t*n + int32(users) + r.Item[k]
	}
	g.phases = make([][]int32, 2*maxP-1)
	for b, blk := range g.blocks {
		s := blk.i + blk.j
		g.phases[s] = append(g.phases[s], int32(b))
	}
	return g, order
}

func identity(n int) []int32 {
	p := make([]int32, n)
	for k := range p {
		p[k] = int32(k)
	}
	return p
}

// countingSort returns the entries of perm stably sorted by key in [0, nkeys).
func countingSort(perm []int32, nkeys int, key func(k int32) int) []int32 {
	return countingSortPtr(perm, make([]int32, nkeys+1), key)
}

// countingSortPtr is countingSort with the key range given by ptr (len
// nkeys+1, zero), which it leaves holding the start of every key: the
// entries of key k are out[ptr[k]:ptr[k+1]].
func countingSortPtr(perm, ptr []int32, key func(k int32) int) []int32 {
	for _, k := range perm {
		ptr[key(k)+1]++
	}
	for k := 1; k < len(ptr); k++ {
		ptr[k] += ptr[k-1]
	}
	out := make([]int32, len(perm))
	cur := append([]int32(nil), ptr[:len(ptr)-1]...)
	for _, k := range perm {
		c := key(k)
		out[cur[c]] = k
		cur[c]++
	}
	return out
}

// splitCost splits the keys of ptr (len nkeys+1, ratings of key k are
// ptr[k]..ptr[k+1]) into p consecutive ranges of about equal cost (one unit
// per key, ratingCost per rating) and returns the p+1 boundaries.
func splitCost(ptr []int32, p int) []int {
	nkeys := len(ptr) - 1
	b := make([]int, p+1)
	b[p] = nkeys
	if p == 1 {
		return b
	}
	total := nkeys + ratingCost*int(ptr[nkeys]-ptr[0])
	acc, r := 0, 1
	for k := 0; k < nkeys && r < p; k++ {
		acc += 1 + ratingCost*int(ptr[k+1]-ptr[k])
		for r < p && acc*p >= r*total {
			b[r] = k + 1
			r++
		}
	}
	for ; r < p; r++ {
		b[r] = nkeys
	}
	return b
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// sampler decides which ratings a minibatch keeps: each independently with
// probability p = size/total, by a hash of the seed, the batch number and
// the rating's columns, so that the minibatch loss scaled by 1/p is unbiased.
type sampler struct {
	on    bool    // false: every rating (full batch)
	thr   uint64  // keep a rating when its hash < thr
	scale float64 // 1/p (1 for the full batch)
	key   uint64  // hash key of the batch
}

// newSampler is the sampler of minibatch number batch of expected size
// size out of total ratings (size 0 or >= total: the full batch).
func newSampler(size, total int, seed, batch uint64) sampler {
	if size <= 0 || size >= total {
		return sampler{scale: 1}
	}
	p := float64(size) / float64(total)
	return sampler{on: true, thr: uint64(p * (1 << 64)), scale: float64(total) / float64(size),
		key: mix64(seed ^ mix64(batch+0x9e3779b97f4a7c15))}
}

// keep reports whether the rating of columns (ucol, icol) is in the
// minibatch.
func (s *sampler) keep(ucol, icol int32) bool {
	return mix64(s.key^(uint64(uint32(ucol))<<32|uint64(uint32(icol)))) < s.thr
}
