package movielens

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"goldstone/formats/ratings"

	"goldstone/internal/atomicfile"
	"goldstone/optim"
	"goldstone/trialio"
)

// PlantedConfig configures Generate. Zero Growth means its default.
type PlantedConfig struct {
	Users, Items int   // userId 1..Users, movieId 1..Items
	Ratings      int64 // ratings written, including the ones at the median; >= Bins+1
	Bins         int   // generator bins, of equal duration over [Start, End] (see BinRange)
	D            int   // latent dimension
	Seed         uint64
	Start, End   time.Time // timestamps span exactly [Start.Unix(), End.Unix()]; End-Start >= Bins s
	// Drift in [0, 1] is the per-bin innovation of the vectors: z_{t+1} = sqrt(1-Drift^2) z_t +
	// Drift * s * e_t (e_t of unit variance, see Generate), a random walk whose marginal
	// scale s stays constant; 0 is static.
	Drift float64
	// Growth is the ratio of the rating volume of the last bin to the first, growing
	// exponentially in between; 0 means DefaultGrowth, 1 constant.
	Growth float64
	// ActiveBinsMean > 0 makes users bursty, as real ones are: each user is active in
	// 1 + Geometric bins with this mean (ActiveBinsSmall is ml-latest-small's), chosen by
	// rating volume, and rates only there; 0 spreads every user over all bins.
	ActiveBinsMean float64
	// Scale > 0 is the standard deviation s of the vectors' entries, which sets the
	// signal strength (see OracleGain, ScaleForGain); 0 means PlantedScale(D).
	Scale float64
	// Pool runs the generator's loops (nil: inline on the caller); the
	// generate stage's is a pool of the sweep's core budget. The output
	// does not depend on its workers.
	Pool *optim.Pool
}

// DefaultGrowth is the planted data set's volume growth from the first bin
// to the last (planted_growth's default), which every key made before the
// setting existed assumes.
const DefaultGrowth = 10

// Fixed parameters of the planted model, documented in Generate.
const (
	plantedMidFraction = 0.2 // fraction of ratings written as the median 3.5
	plantedUserSigma   = 1.2 // log-normal sigma of user activity
	plantedZipfS       = 1.1 // item popularity ~ 1/(rank+plantedZipfQ)^plantedZipfS
	plantedZipfQ       = 50
	plantedChunk       = 1 << 16 // ratings per generation chunk
	plantedRowBlock    = 1024    // vector rows per random stream
	plantedPosMedian   = 3.5
)

// RNG stream tags (the high byte of the PCG stream), so every random quantity has its own
// stream keyed by its position, never by the worker that computes it.
const (
	streamWeights = uint64(1) << 56
	streamVectors = uint64(2) << 56
	streamChunks  = uint64(3) << 56
)

var (
	negStars   = []string{"0.5", "1.0", "1.5", "2.0", "2.5", "3.0"}
	negWeights = []float64{0.04, 0.10, 0.06, 0.22, 0.18, 0.40}
	posStars   = []string{"4.0", "4.5", "5.0"}
	posWeights = []float64{0.50, 0.20, 0.30}
)

// GenStats describes a generated data set.
type GenStats struct {
	Ratings  int64   // lines written after the header
	Positive int64   // ratings above the median (x = +1)
	Negative int64   // ratings below the median (x = -1)
	Mid      int64   // ratings of exactly 3.5 (dropped by Binarize)
	PerBin   []int64 // ratings per generator bin, including Mid ones
	Bytes    int64   // bytes written to w
}

func (c *PlantedConfig) validate() error {
	switch {
	case c.Users < 1 || c.Items < 1 || c.D < 1 || c.Bins < 1:
		return fmt.Errorf("generate: Users %d, Items %d, D %d, Bins %d: all must be >= 1", c.Users, c.Items, c.D, c.Bins)
	case c.Users > math.MaxInt32 || c.Items > math.MaxInt32:
		return fmt.Errorf("generate: ids must fit in int32")
	case !validActiveBins(c.ActiveBinsMean):
		return fmt.Errorf("generate: ActiveBinsMean %v: want 0 or a finite value >= 1", c.ActiveBinsMean)
	case c.Ratings < int64(c.Bins)+1:
		return fmt.Errorf("generate: Ratings %d, want >= Bins+1 = %d", c.Ratings, c.Bins+1)
	case c.End.Unix()-c.Start.Unix() < int64(c.Bins):
		return fmt.Errorf("generate: [Start, End] spans %d s, want >= Bins = %d", c.End.Unix()-c.Start.Unix(), c.Bins)
	case !(c.Scale >= 0) || math.IsInf(c.Scale, 0):
		return fmt.Errorf("generate: Scale %v, want a finite value >= 0", c.Scale)
	case !(c.Drift >= 0 && c.Drift <= 1):
		return fmt.Errorf("generate: Drift %v, want in [0, 1]", c.Drift)
	case !(c.Growth >= 0) || math.IsInf(c.Growth, 0):
		return fmt.Errorf("generate: Growth %v, want finite >= 0", c.Growth)
	}
	return nil
}

// PlantedScale returns s, the standard deviation of each entry of the planted vectors,
// chosen so that u.v has standard deviation 2: s = (4/D)^(1/4).
func PlantedScale(D int) float64 { return optim.Pow(4/float64(D), 0.25) }

// BinCounts returns the number of ratings Generate writes in each generator bin: one each,
// then the remaining Ratings-Bins split by largest remainder proportionally to
// Growth^(t/(Bins-1)).
func (c PlantedConfig) BinCounts() []int64 {
	g := c.Growth
	if g == 0 {
		g = DefaultGrowth
	}
	T := c.Bins
	w := make([]float64, T)
	sum := 0.0
	for t := range w {
		e := 0.0
		if T > 1 {
			e = float64(t) / float64(T-1)
		}
		w[t] = optim.Pow(g, e)
		sum += w[t]
	}
	rest := c.Ratings - int64(T)
	counts := make([]int64, T)
	frac := make([]float64, T)
	var given int64
	for t := range counts {
		x := float64(rest) * w[t] / sum
		f := math.Floor(x)
		counts[t] = 1 + int64(f)
		frac[t] = x - f
		given += int64(f)
	}
	for ; given < rest; given++ { // hand out the remainder, largest fraction first, ties by bin
		best := 0
		for t := range frac {
			if frac[t] > frac[best] {
				best = t
			}
		}
		counts[best]++
		frac[best] = -1
	}
	return counts
}

// Generate writes a synthetic ratings file in the ml-20m CSV format (header
// userId,movieId,rating,timestamp, half stars) to w, drawn from a planted dynamic logistic
// model, and, when vectors is not nil, the planted vectors.
//
// Model. Each generator bin t in 0..Bins-1 has user vectors u_{t,i} and item vectors v_{t,j}
// in R^D: at t = 0 every entry is N(0, s^2) with s = PlantedScale(D); then
// z_{t+1} = sqrt(1-Drift^2) z_t + Drift s e_t, where the innovations e_t have independent
// entries of mean 0 and variance 1 (standardised Irwin-Hall sums of four uniforms, a bounded
// near-Gaussian, for speed), so every entry keeps variance s^2. Bin t gets BinCounts()[t] ratings (volume
// growing exponentially by the factor Growth). Each rating draws a user from a log-normal
// activity weight (sigma 1.2), an item from a Zipf-Mandelbrot popularity 1/(rank+50)^1.1 over
// a random ranking, a timestamp uniform over the integer seconds of the bin (BinRange over
// [Start, End]) (with ActiveBinsMean > 0 the user is drawn among those active in the bin,
// see burstyUsers), and x = +1 with probability sigmoid(u_{t,i}.v_{t,j}), else -1. The star
// value is 4.0/4.5/5.0 (weights .5/.2/.3) for +1 and 0.5..3.0 (weights .04 .10 .06 .22 .18
// .40) for -1, except that with probability 0.2, independently of x, it is 3.5. The median of
// the file is then 3.5 whenever between 37.5% and 62.5% of the ratings have x = +1 (always in
// practice: u.v is symmetric about 0), so Binarize recovers x exactly on the ratings it keeps.
// The first rating of bin 0 is at Start and the last of the last bin at End, neither at 3.5,
// so after Binarize, Bin(T = Bins) uses the same span and therefore the same bins. A user or
// item may rate the same pair more than once. The same config gives the same bytes at any
// Workers.
//
// Vectors. For t = 0..Bins-1, vectors receives U_t (Users x D, row r is userId r+1) then V_t
// (Items x D, row r is movieId r+1), row-major float64 little-endian; see ReadPlanted and
// AlignRows to put them in Bin's dense order.
func Generate(ctx context.Context, w io.Writer, vectors io.Writer, cfg PlantedConfig) (GenStats, error) {
	if err := cfg.validate(); err != nil {
		return GenStats{}, err
	}
	workers := max(1, cfg.Pool.Workers())
	D := cfg.D
	s := PlantedScale(D)
	if cfg.Scale > 0 {
		s = cfg.Scale
	}
	start, end := cfg.Start.Unix(), cfg.End.Unix()

	// Activity and popularity.
	wr := rand.New(rand.NewPCG(cfg.Seed, streamWeights))
	uw := make([]float64, cfg.Users)
	for i := range uw {
		uw[i] = optim.Exp(plantedUserSigma * optim.NormFloat64(wr))
	}
	iw := make([]float64, cfg.Items)
	for r, j := range wr.Perm(cfg.Items) {
		iw[j] = optim.Pow(float64(r+plantedZipfQ), -plantedZipfS)
	}
	g := &generator{cfg: cfg, D: D, start: start, end: end, users: newAlias(uw), items: newAlias(iw),
		neg: newAlias(negWeights), pos: newAlias(posWeights), U: make([]float64, cfg.Users*D), V: make([]float64, cfg.Items*D),
		counts: cfg.BinCounts()}
	if cfg.ActiveBinsMean > 0 {
		g.activeIDs, g.activeUsers = burstyUsers(cfg, uw, g.counts)
	}
	st := GenStats{PerBin: g.counts}
	n, err := io.WriteString(w, ratings.CSVHeader+"\n")
	st.Bytes += int64(n)
	if err != nil {
		return st, fmt.Errorf("generate: write: %w", err)
	}
	var vbuf []byte
	chunk := uint64(0)
	batch := make([]genChunk, 2*workers)
	for t := 0; t < cfg.Bins; t++ {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := evolve(ctx, cfg.Pool, g.U, 0, t, D, s, cfg.Drift, cfg.Seed); err != nil {
			return st, err
		}
		if err := evolve(ctx, cfg.Pool, g.V, 1, t, D, s, cfg.Drift, cfg.Seed); err != nil {
			return st, err
		}
		if vectors != nil {
			for _, m := range [][]float64{g.U, g.V} {
				vbuf = vbuf[:0]
				for _, x := range m {
					vbuf = binary.LittleEndian.AppendUint64(vbuf, math.Float64bits(x))
				}
				if _, err := vectors.Write(vbuf); err != nil {
					return st, fmt.Errorf("generate: write vectors: %w", err)
				}
			}
		}
		nChunks := int((g.counts[t] + plantedChunk - 1) / plantedChunk)
		for c0 := 0; c0 < nChunks; c0 += len(batch) {
			k := min(len(batch), nChunks-c0)
			cfg.Pool.Chunks(k, 1, func(c, _, _ int) {
				if ctx.Err() == nil {
					g.chunk(&batch[c], t, c0+c, chunk+uint64(c0+c))
				}
			})
			if err := ctx.Err(); err != nil {
				return st, err
			}
			for c := range k {
				r := &batch[c]
				n, err := w.Write(r.text)
				st.Bytes += int64(n)
				if err != nil {
					return st, fmt.Errorf("generate: write: %w", err)
				}
				st.Positive += r.pos
				st.Negative += r.neg
				st.Mid += r.mid
			}
		}
		chunk += uint64(nChunks)
		st.Ratings += g.counts[t]
	}
	return st, nil
}

// generator is Generate's model: the activity and popularity samplers,
// the planted vectors of the current bin, the ratings per bin.
type generator struct {
	cfg          PlantedConfig
	D            int
	start, end   int64
	users, items *alias
	neg, pos     *alias
	U, V         []float64
	counts       []int64
	activeIDs    [][]int32 // per bin, with ActiveBinsMean > 0
	activeUsers  []*alias
}

// genChunk is the text and the counts of one chunk of ratings.
type genChunk struct {
	text          []byte
	pos, neg, mid int64
}

// chunk writes chunk c of bin t, whose random stream is stream (its index
// over all bins), into res.
func (g *generator) chunk(res *genChunk, t, c int, stream uint64) {
	cfg, D := g.cfg, g.D
	first, last := BinRange(t, g.start, g.end, cfg.Bins)
	lo := int64(c) * plantedChunk
	hi := min(lo+plantedChunk, g.counts[t])
	rng := rand.New(rand.NewPCG(cfg.Seed, streamChunks|stream))
	res.text, res.pos, res.neg, res.mid = res.text[:0], 0, 0, 0
	for k := lo; k < hi; k++ {
		var i int
		if g.activeUsers != nil {
			i = int(g.activeIDs[t][g.activeUsers[t].sample(rng)])
		} else {
			i = g.users.sample(rng)
		}
		j := g.items.sample(rng)
		ts := first + rng.Int64N(last-first+1)
		dot := 0.0
		ui, vj := g.U[i*D:i*D+D], g.V[j*D:j*D+D]
		for d, a := range ui {
			dot += float64(a * vj[d])
		}
		plus := rng.Float64() < sigmoid(dot)
		mid := rng.Float64() < plantedMidFraction
		if t == 0 && k == 0 {
			ts, mid = g.start, false
		}
		if t == cfg.Bins-1 && k == g.counts[t]-1 {
			ts, mid = g.end, false
		}
		star := ""
		switch {
		case mid:
			star = "3.5"
			res.mid++
		case plus:
			star = posStars[g.pos.sample(rng)]
			res.pos++
		default:
			star = negStars[g.neg.sample(rng)]
			res.neg++
		}
		b := strconv.AppendInt(res.text, int64(i+1), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(j+1), 10)
		b = append(b, ',')
		b = append(b, star...)
		b = append(b, ',')
		b = strconv.AppendInt(b, ts, 10)
		res.text = append(b, '\n')
	}
}

// evolve sets the vectors of bin t in place: fresh N(0, s^2) at t = 0, otherwise one step of
// the stationary random walk. Rows are processed in blocks of plantedRowBlock, each with its
// own random stream (kind, t, block), in parallel on pool.
func evolve(ctx context.Context, pool *optim.Pool, z []float64, kind uint64, t, D int, s, drift float64, seed uint64) error {
	if t > 0 && drift == 0 {
		return nil
	}
	rows := len(z) / D
	blocks := (rows + plantedRowBlock - 1) / plantedRowBlock
	keep := math.Sqrt(1 - float64(drift*drift))
	pool.Chunks(blocks, 1, func(b, _, _ int) {
		if ctx.Err() != nil {
			return
		}
		rng := rand.New(rand.NewPCG(seed, streamVectors|kind<<48|uint64(t)<<24|uint64(b)))
		zb := z[b*plantedRowBlock*D : min((b+1)*plantedRowBlock, rows)*D]
		if t == 0 {
			for k := range zb {
				zb[k] = s * optim.NormFloat64(rng)
			}
			return
		}
		step := drift * s
		for k, x := range zb {
			zb[k] = float64(keep*x) + float64(step*irwinHall4(rng.Uint64()))
		}
	})
	return ctx.Err()
}

// irwinHall4 maps 64 random bits to a standardised sum of four 16-bit uniforms: mean 0,
// variance 1 (to 1e-9), support [-2*sqrt(3), 2*sqrt(3)]; a cheap stand-in for N(0, 1) as a
// random-walk innovation (several times faster than NormFloat64, which dominated Generate).
func irwinHall4(x uint64) float64 {
	sum := float64(x&0xffff+x>>16&0xffff+x>>32&0xffff+x>>48) + 2 // four (k+1/2)
	return (float64(sum/65536) - 2) * math.Sqrt(3)
}

func sigmoid(x float64) float64 { return 1 / (1 + optim.Exp(-x)) }

// alias is Walker's alias table for sampling an index with probability proportional to weight.
type alias struct {
	prob  []float64
	other []int32
}

func newAlias(w []float64) *alias {
	n := len(w)
	a := &alias{prob: make([]float64, n), other: make([]int32, n)}
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	small, large := make([]int32, 0, n), make([]int32, 0, n)
	for i, x := range w {
		a.prob[i] = x * float64(n) / sum
		if a.prob[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.other[s] = l
		a.prob[l] -= 1 - a.prob[s]
		if a.prob[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range small {
		a.prob[i], a.other[i] = 1, i
	}
	for _, i := range large {
		a.prob[i], a.other[i] = 1, i
	}
	return a
}

func (a *alias) sample(rng *rand.Rand) int {
	i := rng.IntN(len(a.prob))
	if rng.Float64() < a.prob[i] {
		return i
	}
	return int(a.other[i])
}

// GenerateFile runs Generate into the file path and, unless vectorsPath is "", the vectors
// into vectorsPath as a .npy file of shape (Bins, Users+Items, D) (Generate's stream after a
// .npy header; read it with ReadPlanted or numpy.load), each written atomically (.tmp-* then
// rename).
func GenerateFile(ctx context.Context, path, vectorsPath string, cfg PlantedConfig) (GenStats, error) {
	var st GenStats
	gen := func(vw io.Writer) error {
		return atomicfile.Write(path, func(w io.Writer) error {
			var err error
			st, err = Generate(ctx, w, vw, cfg)
			return err
		})
	}
	if vectorsPath == "" {
		return st, gen(nil)
	}
	return st, atomicfile.Write(vectorsPath, func(vw io.Writer) error {
		if _, err := vw.Write(trialio.NpyHeader(cfg.Bins, cfg.Users+cfg.Items, cfg.D)); err != nil {
			return err
		}
		return gen(vw)
	})
}

// ReadPlanted reads the planted vectors of generator bin t from a vectors file written by
// GenerateFile with cfg (a .npy file whose shape must be (Bins, Users+Items, D)): u gets
// Users*D values (row r: userId r+1), v gets Items*D.
func ReadPlanted(r io.ReaderAt, cfg PlantedConfig, t int, u, v []float64) error {
	if len(u) != cfg.Users*cfg.D || len(v) != cfg.Items*cfg.D {
		panic(fmt.Sprintf("movielens: ReadPlanted: len(u), len(v) = %d, %d, want %d, %d", len(u), len(v), cfg.Users*cfg.D, cfg.Items*cfg.D))
	}
	if t < 0 || t >= cfg.Bins {
		return fmt.Errorf("read planted: bin %d out of [0, %d)", t, cfg.Bins)
	}
	shape, hdr, err := trialio.ReadNpyHeader(io.NewSectionReader(r, 0, 1<<20))
	if err != nil {
		return fmt.Errorf("read planted: %w", err)
	}
	if !slices.Equal(shape, []int{cfg.Bins, cfg.Users + cfg.Items, cfg.D}) {
		return fmt.Errorf("read planted: shape %v, the generator's settings say (%d, %d, %d)", shape, cfg.Bins, cfg.Users+cfg.Items, cfg.D)
	}
	off := hdr + int64(t)*int64(cfg.Users+cfg.Items)*int64(cfg.D)*8
	for _, m := range [][]float64{u, v} {
		buf := make([]byte, 8*len(m))
		if _, err := r.ReadAt(buf, off); err != nil {
			return fmt.Errorf("read planted bin %d: %w", t, err)
		}
		for k := range m {
			m[k] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*k:]))
		}
		off += int64(len(buf))
	}
	return nil
}

// AlignRows gathers rows of planted vectors into Bin's dense order: row k of dst (D values) is
// row ids[k]-1 of src, where ids is BinResult.Users (or .Items) and ids are 1-based as
// Generate writes them. It panics if a length or an id is out of range.
func AlignRows(dst, src []float64, ids []int32, D int) {
	if len(dst) != len(ids)*D {
		panic(fmt.Sprintf("movielens: AlignRows: len(dst) = %d, want %d", len(dst), len(ids)*D))
	}
	for k, id := range ids {
		r := int(id) - 1
		copy(dst[k*D:(k+1)*D], src[r*D:(r+1)*D])
	}
}
