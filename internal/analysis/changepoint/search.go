package changepoint

import (
	"math"
	"sort"
)

// The (τ, κ) search of E-Divisive. Within a window [s, e) Matteson and
// James's candidate is the pair s < τ < κ ≤ e that maximises
//
//	Q̂(τ, κ) = 2/(n+m)·Σ|x−y| − 2m/((n+m)(n−1))·Σ_{i<j}|xᵢ−xⱼ| − 2n/((n+m)(m−1))·Σ_{i<j}|yᵢ−yⱼ|
//
// with X = z[s:τ) (n points) and Y = z[τ:κ) (m points): nm/(n+m) times
// the energy distance of X and Y. τ is the change point; searching κ
// lets Y end before the window does, so a short stretch at another level
// in the middle of a long window (a dip of 10 runs between two stretches
// of 15) is compared with what came before it alone, not diluted by the
// return to the old level after it. Apache Otava's compute_change_points_orig
// searches the same pairs (its PairDistanceCalculator).
//
// Every pair is O(n²) per window, and the permutation test asks for the
// maximum of each of its R permuted series. Exact search with pruning
// keeps that affordable: the window is cut into blocks of about √(2n)
// points, and for every pair of blocks (τ in one, κ in the other) an upper
// bound of Q̂ comes from the blocks' end points alone. Only blocks whose
// bound reaches the value sought (the best found so far, or the observed
// statistic a permutation must reach) are computed pair by pair. The bound
// rests on 1-D energy distance being a squared norm: with μ the window's
// empirical measure and Gₖ = Σ_{i<k} δ(zᵢ) − (k−s)·μ (a signed measure of
// mass 0),
//
//	Q̂_V(τ, κ) = ‖N·G_τ − n·G_κ‖² / (n·m·N),   N = n + m,
//
// where Q̂_V uses n² and m² in place of n(n−1) and m(m−1) and so is at
// least Q̂, and ‖ν‖² = −ΣΣ ν(x)ν(y)|x−y| (= 2∫F_ν², F_ν its cumulative).
// For τ in a block starting at a and κ in one starting at c, G_τ = G_a +
// Δ with ‖Δ‖ ≤ r (the block's largest drift, computed exactly), so by the
// triangle inequality ‖N·G_τ − n·G_κ‖ ≤ ‖N·G_a − n·G_c‖ + N·r_a + n·r_c,
// and the first term, a convex quadratic in (N, n), is largest at a
// corner of the block pair's ranges. All of it comes from the within-block
// and block-to-block distance sums (sorted blocks, merged: O(n²/b)).

// qhat is Q̂ of n points before and m after, with cross sum c and within
// sums wx and wy.
func qhat(n, m int, c, wx, wy float64) float64 {
	fn, fm := float64(n), float64(m)
	return (2*c - 2*fm/(fn-1)*wx - 2*fn/(fm-1)*wy) / (fn + fm)
}

// fenBelow is the count and sum of the inserted values ranked below rk.
func (d *detector) fenBelow(rk int) (c, s float64) {
	for i := rk - 1; i > 0; i &= i - 1 {
		c += d.tree[i].c
		s += d.tree[i].s
	}
	return c, s
}

func (d *detector) fenAdd(rk int, x float64) {
	for i := rk; i < len(d.tree); i += i & -i {
		d.tree[i].c++
		d.tree[i].s += x
	}
}

// fenClear empties the tree of the values ranked r: the whole tree when
// they are most of it, else their paths.
func (d *detector) fenClear(r []int32) {
	if 8*len(r) > len(d.tree) {
		clear(d.tree)
		return
	}
	for _, rk := range r {
		for i := int(rk); i < len(d.tree); i += i & -i {
			d.tree[i] = node{}
		}
	}
}

// prep fills, for window [s, e) of v (ranks r): pre[k−s], the distance
// of v[k] to the points before it in the window; wpre[k−s] = W(s, k),
// the within sum of [s, k); and tpre[k−s], the sum of tot over [s, k)
// (totals(s, e) must have been called).
func (d *detector) prep(v []float64, r []int32, s, e int) {
	L := e - s
	pre, wpre, tpre := d.pre[:L], d.wpre[:L+1], d.tpre[:L+1]
	wpre[0], tpre[0] = 0, 0
	var ins, insSum float64
	for k := s; k < e; k++ {
		x, rk := v[k], int(r[k])
		cl, sl := d.fenBelow(rk)
		dk := x*cl - sl + (insSum - sl) - x*(ins-cl)
		d.fenAdd(rk, x)
		ins++
		insSum += x
		pre[k-s] = dk
		wpre[k-s+1] = wpre[k-s] + dk
		tpre[k-s+1] = tpre[k-s] + d.tot[rk]
	}
	d.fenClear(r[s:e])
}

// refine computes Q̂(τ, κ) for τ in [tlo, thi] and κ in [kfrom, kto]
// (κ − τ ≥ MinSegment) of window [s, e) after prep, keeping the best in
// d.bestTau, d.bestQ; it stops as soon as one reaches stop and reports
// whether it did. τ runs down from thi: h[j−s] holds the distance of v[j]
// to v[τ:j), one point added per step.
func (d *detector) refine(v []float64, r []int32, s, tlo, thi, kfrom, kto int, stop float64) bool {
	ms := d.o.MinSegment
	h, pre, wpre, inv := d.h, d.pre, d.wpre, d.inv
	// h[j−s] starts as the distance of v[j] to v[thi+1:j); each row adds
	// its τ's own distance as it goes.
	var ins, insSum float64
	for j := thi + 1; j < kto; j++ {
		x, rk := v[j], int(r[j])
		cl, sl := d.fenBelow(rk)
		h[j-s] = x*cl - sl + (insSum - sl) - x*(ins-cl)
		d.fenAdd(rk, x)
		ins++
		insSum += x
	}
	d.fenClear(r[thi+1 : kto])
	for tau := thi; tau >= tlo; tau-- {
		xt := v[tau]
		n := tau - s
		fn := float64(n)
		ax := 2 * inv[n-1] * wpre[n]
		hs, vs, ps := h[tau+1-s:kto-s], v[tau+1:kto], pre[tau+1-s:kto-s]
		if len(hs) > 0 {
			hs[0] = 0 // v[τ+1] joins: nothing of v[τ+1:τ+1) before it
		}
		// Y = v[τ:j+1) for j = τ+1+i; the first whose Q̂ counts.
		f := min(max(tau+ms, kfrom)-tau-2, len(hs))
		c, wy := pre[tau-s], 0.0
		for i := 0; i < f; i++ {
			hj := hs[i] + math.Abs(xt-vs[i])
			hs[i] = hj
			c += ps[i] - hj
			wy += hj
		}
		for i := max(f, 0); i < len(hs); i++ {
			hj := hs[i] + math.Abs(xt-vs[i])
			hs[i] = hj
			c += ps[i] - hj
			wy += hj
			m := i + 2 // Y = v[τ : τ+i+2)
			// qhat(n, m, c, wx, wy), with the reciprocals from a table.
			if q := (2*c - float64(m)*ax - 2*fn*inv[m-1]*wy) * inv[n+m]; q > d.bestQ {
				d.bestQ, d.bestTau = q, tau
				if q >= stop {
					return true
				}
			}
		}
	}
	return false
}

// refineShare is the share of the window's pairs that the bounds in
// d.ub leave to compute for a value sought of stop (+Inf: the best
// found so far).
func (d *detector) refineShare(B int, stop float64) float64 {
	need := stop
	if math.IsInf(stop, 1) {
		need = d.bestQ
	}
	bnd := d.bnd
	L := float64(bnd[B] - bnd[0])
	var pairs float64
	for I := 0; I < B; I++ {
		if d.blockMax[I] < need {
			continue
		}
		for J := I; J < B; J++ {
			if d.ub[I*B+J] >= need {
				pairs += float64(bnd[I+1]-bnd[I]) * float64(bnd[J+1]-bnd[J])
			}
		}
	}
	return pairs / (L * L / 2)
}

// blockSize is the block length for a window of L points: √(2L), which
// balances the block-to-block sums (L²/b) against the drifts (L·b/2).
func blockSize(L int) int {
	return max(8, int(math.Sqrt(2*float64(L))))
}

// maxQ is the best (τ, Q̂) over all pairs (τ, κ) of window [s, e) of v
// (ranks r; totals(s, e) must have been called); τ is −1 when the window
// is too short. With stop finite it may return as soon as it finds a Q̂ ≥
// stop (then q ≥ stop; q < stop means none reaches it), which is all a
// permutation needs to know.
func (d *detector) maxQ(v []float64, r []int32, s, e int, stop float64) (tau int, q float64) {
	ms := d.o.MinSegment
	d.bestTau, d.bestQ = -1, math.Inf(-1)
	L := e - s
	if L < 2*ms {
		return -1, math.Inf(-1)
	}
	// the bounds need the window's prefix sums of tot only; prep's pass
	// (the distances to earlier points) waits until a block is refined,
	// which a permutation of a series with a clear change seldom needs.
	tpre := d.tpre[:L+1]
	tpre[0] = 0
	for k := s; k < e; k++ {
		tpre[k-s+1] = tpre[k-s] + d.tot[r[k]]
	}
	if tpre[L] == 0 {
		// every value of the window the same: Q̂ is 0 for every pair,
		// and the window has no split (a run of equal values is common
		// in an error % or a fuzzer's input).
		return -1, 0
	}
	b := blockSize(L)
	if L <= 4*b {
		d.prep(v, r, s, e)
		d.refine(v, r, s, s+ms, e-ms, s+2*ms, e, stop)
		return d.bestTau, d.bestQ
	}
	B, reached := d.bound(v, r, s, e, b, stop)
	if reached {
		return d.bestTau, d.bestQ
	}
	// Where the value sought is near what noise gives (a flat window),
	// blocks of √(2L) leave much to compute pair by pair; blocks of
	// √(L/2) bound closer (a block's drift grows with √b) at twice the
	// cost of the sums, which is then well spent.
	if b2 := max(8, int(math.Sqrt(float64(L)/2))); b2 < b && d.refineShare(B, stop) > 0.15 {
		if B, reached = d.bound(v, r, s, e, b2, stop); reached {
			return d.bestTau, d.bestQ
		}
	}
	ub, blockMax, bnd := d.ub, d.blockMax, d.bnd
	order := grow32(&d.order, B)
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(a, b int) bool { return blockMax[order[a]] > blockMax[order[b]] })
	prepped := false
	for _, i := range order {
		I := int(i)
		// a permutation asks whether any pair reaches stop; the observed
		// series, which pair is best.
		need := stop
		if math.IsInf(stop, 1) {
			need = d.bestQ
		}
		if blockMax[I] < need {
			break
		}
		jlo, jhi := -1, -1
		for J := I; J < B; J++ {
			if ub[I*B+J] >= need {
				if jlo < 0 {
					jlo = J
				}
				jhi = J
			}
		}
		tlo, thi := max(bnd[I], s+ms), min(bnd[I+1]-1, e-ms)
		if tlo > thi {
			continue
		}
		if !prepped {
			d.prep(v, r, s, e)
			prepped = true
		}
		if d.refine(v, r, s, tlo, thi, max(bnd[jlo], tlo+ms), bnd[jhi+1], stop) {
			break
		}
	}
	return d.bestTau, d.bestQ
}

// bound cuts window [s, e) into blocks of b points (d.bnd) and computes
// an upper bound of Q̂ for every pair of blocks (d.ub, and each τ block's
// largest, d.blockMax), raising d.bestQ to the exact Q̂ at pairs of block
// starts on the way; reached says one reached stop. tpre must hold the
// window's prefix sums of tot.
func (d *detector) bound(v []float64, r []int32, s, e, b int, stop float64) (B int, reached bool) {
	ms := d.o.MinSegment
	L := e - s
	tpre := d.tpre[:L+1]
	// a block's drift by brute force is O(b²); large blocks use the
	// Fenwick tree instead.
	fen := b > 64
	B = (L + b - 1) / b
	bnd := d.bnd[:0]
	for i := 0; i < B; i++ {
		bnd = append(bnd, s+i*b)
	}
	bnd = append(bnd, e)
	d.bnd = bnd
	wb := d.blockSums(r, bnd)
	B1 := B + 1
	wtot := wb[B]
	Lf := float64(L)
	// the exact Q̂ at pairs of block starts: a first best, for free.
	for i := 1; i < B; i++ {
		n := bnd[i] - s
		if n < ms {
			continue
		}
		for j := i + 1; j <= B; j++ {
			m := bnd[j] - bnd[i]
			if m < ms {
				continue
			}
			wij := wb[i*B1+j]
			if q := qhat(n, m, wb[j]-wb[i]-wij, wb[i], wij); q > d.bestQ {
				d.bestQ, d.bestTau = q, bnd[i]
				if q >= stop {
					return B, true
				}
			}
		}
	}
	// the Gram matrix of the G's at block starts, and each block's drift.
	gram := grow(&d.gram, B1*B1)
	for i := 0; i <= B; i++ {
		ni, ti := float64(bnd[i]-s), tpre[bnd[i]-s]
		for j := i; j <= B; j++ {
			nj, tj := float64(bnd[j]-s), tpre[bnd[j]-s]
			S := wb[i] + wb[j] - wb[i*B1+j]
			gram[i*B1+j] = -S + nj/Lf*ti + ni/Lf*tj - 2*ni*nj*wtot/(Lf*Lf)
		}
	}
	// per block: its largest drift r = max ‖G_τ − G_a‖, so ‖G_τ‖ ≤ ‖G_a‖ +
	// r, and ‖G_τ‖/√n ≤ that over the block's least n.
	drift, gmax, hmax := grow(&d.drift, B), grow(&d.gmax, B), grow(&d.hmax, B)
	tbar := grow(&d.tbar, B)
	wtotL2 := 2 * wtot / (Lf * Lf)
	for I := 0; I < B; I++ {
		a, end := bnd[I], bnd[I+1]
		var w, worst, tb, cnt, ins float64
		for tau := a + 1; tau <= end; tau++ {
			x := v[tau-1]
			tb = max(tb, d.tot[r[tau-1]])
			if fen {
				rk := int(r[tau-1])
				cl, sl := d.fenBelow(rk)
				w += x*cl - sl + (ins - sl) - x*(cnt-cl)
				d.fenAdd(rk, x)
				cnt++
				ins += x
			} else {
				for _, y := range v[a : tau-1] {
					w += math.Abs(y - x)
				}
			}
			k := float64(tau - a)
			dt := tpre[tau-s] - tpre[a-s]
			n2 := -2*w + 2*k/Lf*dt - k*k*wtotL2
			// the terms' rounding, so the bound stays a bound.
			n2 += 1e-11 * (2*w + 2*k/Lf*math.Abs(dt) + k*k*wtotL2)
			worst = max(worst, n2)
		}
		if fen {
			d.fenClear(r[a:end])
		}
		gII := gram[I*B1+I]
		g := math.Sqrt(max(gII, 0) + 1e-11*math.Abs(gII))
		drift[I], tbar[I] = math.Sqrt(worst), tb/Lf*(1+1e-12)
		gmax[I] = g + drift[I]
		hmax[I] = gmax[I] / math.Sqrt(float64(max(a-s, ms)))
	}
	// bounds per pair of blocks (τ in I, κ in J ≥ I), the smaller of two:
	// the triangle inequality from the blocks' starts (above), and, from
	// N·G_τ − n·G_κ = m·G_τ − n·(G_κ − G_τ),
	//
	//	√Q̂_V ≤ √(m/(nN))·‖G_τ‖ + √(n/(mN))·‖G_κ − G_τ‖
	//
	// with ‖G_κ − G_τ‖ ≤ ‖G_κ‖ + ‖G_τ‖, or ≤ ρ = r_I + ‖G_c − G_a‖ + r_J,
	// which holds where the first is loose: τ near the window's start, κ
	// near τ. For short Y also ‖G_κ − G_τ‖² ≤ 2m/L·Σ_{[τ,κ)} tot ≤ 2m²·t̄
	// (t̄ the largest mean distance of a point of blocks I…J to the
	// window), so the second term is at most √(2t̄·m₀) for m ≤ m₀ and
	// ρ·√(n/(m₀N)) above: m₀ is chosen to make the larger of the two least.
	ub := grow(&d.ub, B*B)
	blockMax := grow(&d.blockMax, B)
	for I := 0; I < B; I++ {
		blockMax[I] = math.Inf(-1)
		tlo, thi := max(bnd[I], s+ms), min(bnd[I+1], e-ms)
		tb := 0.0
		for J := I; J < B; J++ {
			ub[I*B+J] = math.Inf(-1)
			tb = max(tb, tbar[J])
			klo, khi := max(bnd[J], tlo+ms), bnd[J+1]
			if tlo > thi || klo > khi {
				continue
			}
			nlo, nhi := float64(tlo-s), float64(thi-s)
			Nlo, Nhi := float64(klo-s), float64(khi-s)
			mlo, mhi := float64(max(ms, klo-thi)), float64(khi-tlo)
			gII, gIJ, gJJ := gram[I*B1+I], gram[I*B1+J], gram[J*B1+J]
			base := math.Inf(-1)
			for _, N := range [2]float64{Nlo, Nhi} {
				for _, n := range [2]float64{nlo, nhi} {
					base = max(base, N*N*gII-2*N*n*gIJ+n*n*gJJ)
				}
			}
			base = max(base, 0) + 1e-11*(Nhi*Nhi*math.Abs(gII)+2*Nhi*nhi*math.Abs(gIJ)+nhi*nhi*math.Abs(gJJ))
			num := math.Sqrt(base) + Nhi*drift[I] + nhi*drift[J]
			u := num * num / (nlo * mlo * Nlo)
			first := hmax[I] * math.Sqrt(mhi/(nlo+mhi))
			gap := math.Sqrt(max(0, gII-2*gIJ+gJJ) + 1e-11*(math.Abs(gII)+2*math.Abs(gIJ)+math.Abs(gJJ)))
			rho := math.Min(gmax[I]+gmax[J], drift[I]+gap+drift[J])
			second := rho * math.Sqrt(nhi/(mlo*Nlo))
			if tb > 0 {
				m0 := min(max(rho*math.Sqrt(nhi/(2*tb*Nlo)), mlo), mhi)
				second = math.Min(second, math.Max(math.Sqrt(2*tb*m0), rho*math.Sqrt(nhi/(m0*Nlo))))
			}
			u = math.Min(u, (first+second)*(first+second))
			u += 1e-9 * math.Max(1, u)
			ub[I*B+J] = u
			blockMax[I] = max(blockMax[I], u)
		}
	}
	return B, false
}

// blockSums returns W between block starts: wb[i·(B+1)+j] = W(bnd[i],
// bnd[j]), the within sum of v[bnd[i]:bnd[j]) (wb[j] = W(s, bnd[j])), from
// each block's within sum and each pair of blocks' cross sum. One pass
// over the window's values in order (sorted[s:e], which a permutation
// within the window does not change) adds each value's distance to the
// smaller values of every block: O(n·B).
func (d *detector) blockSums(r []int32, bnd []int) []float64 {
	B := len(bnd) - 1
	B1 := B + 1
	s, e := bnd[0], bnd[B]
	for I := 0; I < B; I++ {
		for k := bnd[I]; k < bnd[I+1]; k++ {
			d.blockOf[r[k]] = int32(I)
		}
	}
	cnt, sum := grow(&d.bcnt, B), grow(&d.bsum, B)
	clear(cnt)
	clear(sum)
	acc := grow(&d.dm, B*B)
	clear(acc)
	for _, rk := range d.sorted[s:e] {
		x, I := d.byRank[rk], int(d.blockOf[rk])
		row := acc[I*B : I*B+B]
		for J, c := range cnt {
			row[J] += x*c - sum[J]
		}
		cnt[I]++
		sum[I] += x
	}
	// D(I, J) for I ≤ J: pairs with the larger value in J, then in I.
	dm := acc
	for I := 0; I < B; I++ {
		for J := I + 1; J < B; J++ {
			dm[I*B+J] += acc[J*B+I]
		}
	}
	wb := grow(&d.wb, B1*B1)
	for j := 1; j <= B; j++ {
		J := j - 1
		col := dm[J*B+J]
		wb[J*B1+J] = 0
		wb[J*B1+j] = col
		for i := J - 1; i >= 0; i-- {
			col += dm[i*B+J]
			wb[i*B1+j] = wb[i*B1+j-1] + col
		}
	}
	wb[B*B1+B] = 0
	return wb
}

// grow returns (*p)[:n], reallocating when it is too short.
func grow(p *[]float64, n int) []float64 {
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	*p = (*p)[:n]
	return *p
}

func grow32(p *[]int32, n int) []int32 {
	if cap(*p) < n {
		*p = make([]int32, n)
	}
	*p = (*p)[:n]
	return *p
}
