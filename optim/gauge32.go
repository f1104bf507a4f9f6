package optim

// The gauge rounds in the float32 mode. A round reads the blocks only
// through roundX: the overlaps M_e, ||Z_t||^2 and psi are accumulated in
// float64 from the float32 entries widened one by one (into the overlap's
// panels, which exist in the float64 mode too), every d x d computation
// (the fields, exp(Gamma), the SVDs, the prediction) is float64 as in the
// float64 mode, and a map R_t is applied to a float32 block ovCols
// columns at a time: the columns widened into the rotation's scratch, the
// same GemmAcc FMA chains as the float64 rotation, each entry rounded
// back to float32 once. No round copies the parameter vector.

// Gauge32 is a Gauge that also runs on float32 parameters
// (DriverOf[float32]); Goldstone and Procrustes are.
type Gauge32 interface {
	Gauge
	// Round32 performs one gauge round on the float32 parameters x in
	// place.
	Round32(x []float32) RoundStats
}

var (
	_ Gauge32 = (*Goldstone)(nil)
	_ Gauge32 = (*Procrustes)(nil)
)

// roundX is the parameter vector of a running round: x (float64) or x32
// (float32); the other is nil.
type roundX struct {
	x   []float64
	x32 []float32
}

func (r *roundX) release() { r.x, r.x32 = nil, nil }

// block32 returns the slice of x holding Z_t.
func block32(b Blocks, x []float32, t int) []float32 {
	n := b.N * b.D
	start := b.Offset + t*n
	return x[start : start+n : start+n]
}

// overlap is overlap on blocks s and t of the round's x.
func (r *roundX) overlap(b Blocks, m []float64, s, t int, buf []float64) (dist, ss, st float64) {
	if r.x32 != nil {
		return overlap32(m, block32(b, r.x32, s), block32(b, r.x32, t), b.N, b.D, buf)
	}
	return overlap(m, b.Block(r.x, s), b.Block(r.x, t), b.N, b.D, buf)
}

// rotate is rotate on block t of the round's x.
func (r *roundX) rotate(b Blocks, t int, rot, buf []float64) {
	if r.x32 != nil {
		rotate32(block32(b, r.x32, t), b.N, b.D, rot, buf)
		return
	}
	rotate(b.Block(r.x, t), b.N, b.D, rot, buf)
}

// halfSqDist is 1/2 ||Z_s - Z_t||^2 of the round's x.
func (r *roundX) halfSqDist(b Blocks, s, t int) float64 {
	if r.x32 != nil {
		return halfSqDistOf(block32(b, r.x32, s), block32(b, r.x32, t))
	}
	return halfSqDist(b.Block(r.x, s), b.Block(r.x, t))
}

// sumSq is ||Z_t||^2 of the round's x.
func (r *roundX) sumSq(b Blocks, t int) float64 {
	if r.x32 != nil {
		return sumSqOf(block32(b, r.x32, t))
	}
	return sumSqOf(b.Block(r.x, t))
}

// sumSqOf returns sum v^2 in float64 (the entries widened).
func sumSqOf[F Float](z []F) float64 {
	var s float64
	for _, v := range z {
		w := float64(v)
		s += float64(w * w)
	}
	return s
}

// halfSqDistOf returns 1/2 ||a - b||^2 in float64, each difference taken
// between the widened entries (exact for float32 entries of like
// magnitude). On float64 it is halfSqDist.
func halfSqDistOf[F Float](a, b []F) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		e := float64(v) - float64(b[i])
		s += float64(e * e)
	}
	return 0.5 * s
}

// overlap32 is overlap on float32 blocks: the entries are widened into
// the panels, so m, dist, ss and st are the float64 overlap's of the
// widened blocks (the same FMA chains, the same order).
func overlap32(m []float64, zs, zt []float32, n, d int, buf []float64) (dist, ss, st float64) {
	dp := padD(d)
	m = m[:d*d]
	zs, zt = zs[:n*d], zt[:n*d]
	acc := buf[:dp*dp]
	as := buf[dp*dp : dp*dp+ovCols*dp]
	bs := buf[dp*dp+ovCols*dp : dp*dp+2*ovCols*dp]
	clear(acc)
	clear(as)
	clear(bs)
	var d0, d1, s0, s1, t0, t1 float64
	for lo := 0; lo < n; lo += ovCols {
		c := min(ovCols, n-lo)
		a := zs[lo*d : (lo+c)*d]
		b := zt[lo*d : (lo+c)*d]
		for i := 0; i < c; i++ {
			ra := a[i*d : (i+1)*d]
			rb := b[i*d : (i+1)*d][:len(ra)]
			pa := as[i*dp : i*dp+len(ra)]
			pb := bs[i*dp : i*dp+len(ra)]
			j := 0
			for ; j+1 < len(ra); j += 2 {
				v, w := float64(ra[j]), float64(rb[j])
				pa[j], pb[j] = v, w
				e := v - w
				d0 += float64(e * e)
				s0 += float64(v * v)
				t0 += float64(w * w)
				v, w = float64(ra[j+1]), float64(rb[j+1])
				pa[j+1], pb[j+1] = v, w
				e = v - w
				d1 += float64(e * e)
				s1 += float64(v * v)
				t1 += float64(w * w)
			}
			if j < len(ra) {
				v, w := float64(ra[j]), float64(rb[j])
				pa[j], pb[j] = v, w
				e := v - w
				d0 += float64(e * e)
				s0 += float64(v * v)
				t0 += float64(w * w)
			}
		}
		GemmAcc(acc, dp, as, 1, dp, bs, dp, dp, dp, c)
	}
	for i := 0; i < d; i++ {
		copy(m[i*d:(i+1)*d], acc[i*dp:i*dp+d])
	}
	dist, ss, st = d0+d1, s0+s1, t0+t1
	return 0.5 * dist, ss, st
}

// rotate32 is rotate on a float32 block: rotRows columns at a time are
// widened into buf (zero rows pad the last group to a multiple of 4),
// multiplied by R on GemmAcc's FMA chains in float64 as rotate does, and
// rounded back to float32 once per entry. buf must hold scratchLen(d)
// values (d*dp + rotRows*dp + rotRows*d <= scratchLen(d) since d <= dp and
// rotRows = ovCols).
func rotate32(z []float32, n, d int, r, buf []float64) {
	dp := padD(d)
	z, r = z[:n*d], r[:d*d]
	rt := buf[:d*dp]
	out := buf[d*dp : d*dp+rotRows*dp]
	in := buf[d*dp+rotRows*dp : d*dp+rotRows*dp+rotRows*d]
	for p := 0; p < d; p++ {
		row := rt[p*dp : (p+1)*dp]
		for j := 0; j < d; j++ {
			row[j] = r[j*d+p]
		}
		clear(row[d:])
	}
	for i := 0; i < n; i += rotRows {
		rows := min(rotRows, n-i)
		padded := (rows + 3) &^ 3
		zi := z[i*d : (i+rows)*d]
		for k, v := range zi {
			in[k] = float64(v)
		}
		clear(in[rows*d : padded*d])
		clear(out[:padded*dp])
		GemmAcc(out, dp, in, d, 1, rt, dp, padded, dp, d)
		for k := 0; k < rows; k++ {
			o := out[k*dp : k*dp+d]
			zk := zi[k*d : (k+1)*d][:len(o)]
			for j, v := range o {
				zk[j] = float32(v)
			}
		}
	}
}
