//! Dense integer distributions: the weights of the consecutive values `lo, lo + 1, …` in one
//! array, so the kernels of exact evaluation (sums, differences, comparisons, minimum and
//! maximum, pools) run over plain arrays instead of ordered maps of values.
//!
//! Totals and weights mean what they mean in [`crate::dist::Dist`]: `P(lo + i) = w[i] / total`,
//! and each kernel gives exactly the weights and total that the sparse product would (the
//! property tests below hold it to that), so callers can mix the two freely.
//!
//! Every kernel computes its total first with checked arithmetic: every weight it then builds
//! is at most that total (weights are non-negative and add up to it), so the inner loops use
//! [`Weight::mul_add_fit`] without checks.

use crate::dist::{Dist, Overflow, Weight};

/// Weights of `lo, lo + 1, …, lo + w.len() - 1` out of `total`. The first and last weights are
/// non-zero (weights in between may be zero: a die with faces 0, 1, 1, 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dense<W> {
    pub lo: i64,
    pub w: Vec<W>,
    pub total: W,
}

/// A kernel failed: a weight did not fit, or a value left the 64-bit range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fail {
    Weight,
    Value,
}

impl From<Overflow> for Fail {
    fn from(_: Overflow) -> Self {
        Fail::Weight
    }
}

/// Whether values spread over `width` consecutive integers, `len` of them present, are worth
/// an array: gaps cost memory and time, so a spread far wider than the count stays sparse
/// (`d6 * 1000`).
pub fn worth_dense(len: usize, width: u64) -> bool {
    width <= 2 * len as u64 + 16
}

impl<W: Weight> Dense<W> {
    pub fn point(v: i64) -> Self {
        Dense {
            lo: v,
            w: vec![W::one()],
            total: W::one(),
        }
    }

    /// No value at all (a placeholder: it allocates nothing).
    pub fn empty() -> Self {
        Dense {
            lo: 0,
            w: Vec::new(),
            total: W::zero(),
        }
    }

    /// Zeros at either end are dropped, so `lo` is the smallest possible value.
    pub fn new(lo: i64, mut w: Vec<W>, total: W) -> Self {
        let first = w.iter().position(|x| !x.is_zero()).unwrap_or(w.len());
        let last = w
            .iter()
            .rposition(|x| !x.is_zero())
            .map_or(first, |i| i + 1);
        w.truncate(last);
        w.drain(..first);
        Dense {
            lo: lo.saturating_add(first as i64),
            w,
            total,
        }
    }

    /// The largest possible value.
    pub fn hi(&self) -> i64 {
        // `lo + len` overflows when the largest value is `i64::MAX` (found by fuzzing:
        // `-(9223372036854775807)`); `lo + (len - 1)` is that value itself.
        self.lo.saturating_add(self.w.len() as i64 - 1)
    }

    /// How many values are possible.
    pub fn nnz(&self) -> usize {
        self.w.iter().filter(|x| !x.is_zero()).count()
    }

    /// The only value, when certain.
    pub fn as_point(&self) -> Option<i64> {
        (self.w.len() == 1).then_some(self.lo)
    }

    /// The possible values in ascending order, with their weights.
    pub fn iter(&self) -> impl Iterator<Item = (i64, &W)> {
        let lo = self.lo;
        self.w
            .iter()
            .enumerate()
            .filter(|(_, x)| !x.is_zero())
            .map(move |(i, x)| (lo + i as i64, x))
    }

    pub fn weight(&self, v: i64) -> Option<&W> {
        let i = v.checked_sub(self.lo)?;
        usize::try_from(i)
            .ok()
            .and_then(|i| self.w.get(i))
            .filter(|x| !x.is_zero())
    }

    pub fn to_dist(&self) -> Dist<i64, W> {
        Dist {
            weights: self.iter().map(|(v, w)| (v, w.clone())).collect(),
            total: self.total.clone(),
        }
    }

    /// The dense form of an integer distribution, when it is worth one.
    pub fn from_dist(d: &Dist<i64, W>) -> Option<Self> {
        let (&lo, _) = d.weights.first_key_value()?;
        let (&hi, _) = d.weights.last_key_value()?;
        let width = hi.checked_sub(lo)?.checked_add(1)?;
        if !worth_dense(d.weights.len(), u64::try_from(width).ok()?) {
            return None;
        }
        let mut w = vec![W::zero(); width as usize];
        for (v, x) in &d.weights {
            w[(v - lo) as usize] = x.clone();
        }
        Some(Dense::new(lo, w, d.total.clone()))
    }

    /// Divide weights and total by their common factor, as [`Dist::reduce`] does.
    pub fn reduce(&mut self) {
        let mut g = self.total.clone();
        for x in &self.w {
            if g.is_one() {
                return;
            }
            if !x.is_zero() {
                g = g.gcd(x);
            }
        }
        if !g.is_one() && !g.is_zero() {
            for x in &mut self.w {
                *x = x.div(&g);
            }
            self.total = self.total.div(&g);
        }
    }

    /// Every weight times `c` (`c` at most the factor the new total was multiplied by).
    fn scaled(&self, c: &W, total: W) -> Self {
        if c.is_one() {
            return Dense {
                lo: self.lo,
                w: self.w.clone(),
                total,
            };
        }
        let w = self
            .w
            .iter()
            .map(|x| {
                let mut y = W::zero();
                y.mul_add_fit(x, c);
                y
            })
            .collect();
        Dense {
            lo: self.lo,
            w,
            total,
        }
    }

    /// Whether every possible value has the same weight and none is missing (a `dN`).
    pub fn flat(&self) -> bool {
        self.w.iter().all(|x| *x == self.w[0])
    }
}

/// `-a`.
pub fn neg<W: Weight>(a: &Dense<W>) -> Result<Dense<W>, Fail> {
    let lo = a.hi().checked_neg().ok_or(Fail::Value)?;
    a.lo.checked_neg().ok_or(Fail::Value)?;
    Ok(Dense {
        lo,
        w: a.w.iter().rev().cloned().collect(),
        total: a.total.clone(),
    })
}

/// `a + k`.
pub fn shift<W: Weight>(a: &Dense<W>, k: i64) -> Result<Dense<W>, Fail> {
    a.hi().checked_add(k).ok_or(Fail::Value)?;
    Ok(Dense {
        lo: a.lo.checked_add(k).ok_or(Fail::Value)?,
        w: a.w.clone(),
        total: a.total.clone(),
    })
}

/// The distribution of `a + b` for independent `a` and `b`: a convolution, by a sliding window
/// when one side is flat (additions only), else by the schoolbook product.
pub fn add<W: Weight>(a: &Dense<W>, b: &Dense<W>) -> Result<Dense<W>, Fail> {
    let total = a.total.mul(&b.total)?;
    let lo = a.lo.checked_add(b.lo).ok_or(Fail::Value)?;
    a.hi().checked_add(b.hi()).ok_or(Fail::Value)?;
    if a.w.is_empty() || b.w.is_empty() {
        return Ok(Dense {
            lo,
            w: Vec::new(),
            total,
        });
    }
    // A certain side only moves the other.
    if b.w.len() == 1 {
        let mut r = a.scaled(&b.w[0], total);
        r.lo = lo;
        return Ok(r);
    }
    if a.w.len() == 1 {
        let mut r = b.scaled(&a.w[0], total);
        r.lo = lo;
        return Ok(r);
    }
    let (long, short) = if a.w.len() >= b.w.len() {
        (a, b)
    } else {
        (b, a)
    };
    let n = long.w.len() + short.w.len() - 1;
    let mut out = vec![W::zero(); n];
    if short.flat() {
        // out[t] = c · Σ long[t - m + 1 ..= t]: add the entering weight, drop the leaving one.
        let m = short.w.len();
        let c = &short.w[0];
        let mut window = W::zero();
        for (t, slot) in out.iter_mut().enumerate() {
            if t < long.w.len() {
                window.add_fit(&long.w[t]);
            }
            if t >= m {
                window.sub_assign(&long.w[t - m]);
            }
            slot.mul_add_fit(&window, c);
        }
    } else {
        for (i, x) in long.w.iter().enumerate() {
            if x.is_zero() {
                continue;
            }
            for (slot, y) in out[i..].iter_mut().zip(&short.w) {
                slot.mul_add_fit(x, y);
            }
        }
    }
    Ok(Dense::new(lo, out, total))
}

/// The distribution of `a − b`: `a + (−b)`, and when `a` is a certain value of weight one (a
/// constant, `hits − saved` on one branch of `hits`) the reflection of `b` moved, with one
/// array made instead of two.
pub fn sub<W: Weight>(a: &Dense<W>, b: &Dense<W>) -> Result<Dense<W>, Fail> {
    let mut r = neg(b)?;
    if a.w.len() == 1 && a.w[0].is_one() && a.total.is_one() {
        // The same checks as `add`, whose product with a unit point is this shift.
        a.hi().checked_add(r.hi()).ok_or(Fail::Value)?;
        r.lo = a.lo.checked_add(r.lo).ok_or(Fail::Value)?;
        return Ok(r);
    }
    add(a, &r)
}

/// A comparison of two independent integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// The weights of `a OP b` being false and true, out of `a.total · b.total`: one pass over
/// `a` against running sums of `b`.
pub fn compare<W: Weight>(op: Cmp, a: &Dense<W>, b: &Dense<W>) -> Result<(W, W, W), Fail> {
    let total = a.total.mul(&b.total)?;
    // at_least[j] = Σ b.w[j..]: the weight of b ≥ b.lo + j.
    let m = b.w.len();
    let mut at_least = vec![W::zero(); m + 1];
    for j in (0..m).rev() {
        let mut s = at_least[j + 1].clone();
        s.add_fit(&b.w[j]);
        at_least[j] = s;
    }
    let all = at_least[0].clone();
    // The weight of b ≥ y, for any y.
    let ge = |y: i64| -> W {
        let j = y.saturating_sub(b.lo).clamp(0, m as i64) as usize;
        at_least[j].clone()
    };
    // The weight of b > x: none when x is the largest integer (a saturated x + 1 would count
    // b = x as greater).
    let gt = |x: i64| -> W { x.checked_add(1).map_or_else(W::zero, &ge) };
    let zero = W::zero();
    let (mut yes, mut no) = (W::zero(), W::zero());
    for (x, wx) in a.iter() {
        // The weight of the b that make the comparison true for this x.
        let hit = match op {
            Cmp::Lt => gt(x),
            Cmp::Le => ge(x),
            Cmp::Gt => all.sub(&ge(x)),
            Cmp::Ge => all.sub(&gt(x)),
            Cmp::Eq | Cmp::Ne => {
                let e = b.weight(x).unwrap_or(&zero).clone();
                if op == Cmp::Eq { e } else { all.sub(&e) }
            }
        };
        let miss = all.sub(&hit);
        yes.mul_add_fit(wx, &hit);
        no.mul_add_fit(wx, &miss);
    }
    Ok((no, yes, total))
}

/// `max(a, b)` (or `min` when `!highest`) of independent integers, from their cumulative
/// weights: `P(max ≤ t) = P(a ≤ t) · P(b ≤ t)`.
pub fn extreme<W: Weight>(a: &Dense<W>, b: &Dense<W>, highest: bool) -> Result<Dense<W>, Fail> {
    let total = a.total.mul(&b.total)?;
    if a.w.is_empty() || b.w.is_empty() {
        return Ok(Dense {
            lo: 0,
            w: Vec::new(),
            total,
        });
    }
    let (lo, hi) = if highest {
        (a.lo.max(b.lo), a.hi().max(b.hi()))
    } else {
        (a.lo.min(b.lo), a.hi().min(b.hi()))
    };
    let width = (hi - lo + 1) as usize;
    let mut out = vec![W::zero(); width];
    // Walk from the end decided first (highest: upwards from `lo`; lowest: downwards from
    // `hi`), keeping each side's running weight: before `start` it is the weight each side puts
    // beyond the range (zero for the side that sets the range's end, possibly not the other).
    let (start, step): (i64, i64) = if highest { (lo, 1) } else { (hi, -1) };
    let before = |d: &Dense<W>| -> W {
        let mut s = W::zero();
        for (v, x) in d.iter() {
            if (highest && v < start) || (!highest && v > start) {
                s.add_fit(x);
            }
        }
        s
    };
    let mut ca = before(a);
    let mut cb = before(b);
    let mut prev = W::zero();
    prev.mul_add_fit(&ca, &cb);
    for k in 0..width {
        let v = start + step * k as i64;
        if let Some(x) = a.weight(v) {
            ca.add_fit(x);
        }
        if let Some(x) = b.weight(v) {
            cb.add_fit(x);
        }
        let mut now = W::zero();
        now.mul_add_fit(&ca, &cb);
        let idx = (v - lo) as usize;
        out[idx] = now.sub(&prev);
        prev = now;
    }
    Ok(Dense::new(lo, out, total))
}

/// `Σ (w_i / T) · D_i`, as [`crate::dist::mixture`] computes it (same total, reduced the same
/// way).
pub fn mixture<W: Weight>(branches: Vec<(W, Dense<W>)>, total: &W) -> Result<Dense<W>, Fail> {
    if branches.len() == 1 && branches[0].0 == *total {
        return Ok(branches
            .into_iter()
            .next()
            .map(|(_, d)| d)
            .expect("one branch"));
    }
    let mut l = W::one();
    for (_, d) in &branches {
        l = l.lcm(&d.total)?;
    }
    let out_total = total.mul(&l)?;
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for (_, d) in &branches {
        if !d.w.is_empty() {
            lo = lo.min(d.lo);
            hi = hi.max(d.hi());
        }
    }
    if lo > hi {
        return Ok(Dense {
            lo: 0,
            w: Vec::new(),
            total: out_total,
        });
    }
    let mut out = vec![W::zero(); (hi - lo + 1) as usize];
    for (w, d) in &branches {
        let scale = w.mul(&l.div(&d.total))?;
        let at = (d.lo - lo) as usize;
        for (slot, x) in out[at..].iter_mut().zip(&d.w) {
            slot.mul_add_fit(&scale, x);
        }
    }
    let mut r = Dense::new(lo, out, out_total);
    r.reduce();
    Ok(r)
}

/// The counts of a sum of dice as its kernel left them: a flat die's (a `dN`) still in 64-bit
/// words, one buffer however wide the weights (a session keeps that buffer, which copies in
/// one move, and makes the weights from it for each use: big integers only once, where they
/// are wanted), or any other die's as weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counts<W> {
    /// `words[i · limbs..(i + 1) · limbs]` is the count of `lo + i`, little-endian.
    Words {
        lo: i64,
        limbs: usize,
        words: Vec<u64>,
        total: W,
    },
    Weights(Dense<W>),
}

impl<W: Weight> Counts<W> {
    pub fn to_dense(&self) -> Result<Dense<W>, Fail> {
        match self {
            Counts::Words {
                lo,
                limbs,
                words,
                total,
            } => {
                let w = words
                    .chunks_exact(*limbs)
                    .map(W::from_limbs)
                    .collect::<Result<Vec<W>, _>>()?;
                Ok(Dense::new(*lo, w, total.clone()))
            }
            Counts::Weights(d) => Ok(d.clone()),
        }
    }

    pub fn into_dense(self) -> Result<Dense<W>, Fail> {
        match self {
            Counts::Weights(d) => Ok(d),
            c => c.to_dense(),
        }
    }
}

/// The sum of `n` independent copies of `one`: `n` sliding-window steps for a flat die (a
/// `dN`), schoolbook products otherwise. `charge` is told the size of each step first and may
/// refuse it.
pub fn sum_of<W: Weight, E: From<Fail>>(
    one: &Dense<W>,
    n: u64,
    charge: impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<Dense<W>, E> {
    Ok(sum_counts(one, n, charge)?.into_dense()?)
}

/// [`sum_of`], a flat die's counts left in words.
pub fn sum_counts<W: Weight, E: From<Fail>>(
    one: &Dense<W>,
    n: u64,
    mut charge: impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<Counts<W>, E> {
    // The total first: when it cannot be represented, give up before any work.
    let total = one.total.pow(n).map_err(Fail::from)?;
    let lo = i64::try_from(n)
        .ok()
        .and_then(|n| one.lo.checked_mul(n))
        .ok_or(Fail::Value)?;
    i64::try_from(n)
        .ok()
        .and_then(|n| one.hi().checked_mul(n))
        .ok_or(Fail::Value)?;
    let width = one.w.len() - 1;
    let flat = one.flat();
    if flat
        && width > 0
        && one.w[0].is_one()
        && let Some(d) = flat_sum_in_limbs(one.w.len() as u64, n, lo, &total, &mut charge)?
    {
        return Ok(d);
    }
    // Counts of (sum − k · lo) after k dice, in two buffers swapped each step: big weights keep
    // their allocations across steps.
    let mut acc: Vec<W> = vec![W::one()];
    let mut next: Vec<W> = Vec::new();
    for _ in 0..n {
        // Every weight of a step is at most that step's total, itself at most `total`, which
        // fits: the additions below need no checks.
        charge(acc.len(), width + 1)?;
        next.resize(acc.len() + width, W::zero());
        if flat {
            let c = &one.w[0];
            let mut window = W::zero();
            for (i, slot) in next.iter_mut().enumerate() {
                if i < acc.len() {
                    window.add_fit(&acc[i]);
                }
                if i > width {
                    window.sub_assign(&acc[i - width - 1]);
                }
                if c.is_one() {
                    slot.assign(&window);
                } else {
                    slot.assign(&W::zero());
                    slot.mul_add_fit(&window, c);
                }
            }
        } else {
            for slot in next.iter_mut() {
                slot.assign(&W::zero());
            }
            for (i, a) in acc.iter().enumerate() {
                if a.is_zero() {
                    continue;
                }
                for (slot, x) in next[i..].iter_mut().zip(&one.w) {
                    slot.mul_add_fit(a, x);
                }
            }
        }
        std::mem::swap(&mut acc, &mut next);
    }
    Ok(Counts::Weights(Dense::new(lo, acc, total)))
}

/// Buffers of the limb kernel past this many words (256 MiB) are not worth it: the general
/// path grows its buffers step by step, so the work limit stops it before memory runs out.
const MAX_LIMB_WORDS: usize = 1 << 25;

/// `n` dice of `f` equally likely consecutive faces (`total` = `f^n`, lowest sum `lo`) by the
/// fixed-width kernel of [`crate::limbs`], when its buffer is of a reasonable size.
fn flat_sum_in_limbs<W: Weight, E: From<Fail>>(
    f: u64,
    n: u64,
    lo: i64,
    total: &W,
    charge: &mut impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<Option<Counts<W>>, E> {
    let limbs = (total.to_big().bits() as usize).div_ceil(64).max(1);
    let Some(words) = usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_mul(f as usize - 1))
        .and_then(|c| c.checked_add(1))
        .and_then(|c| c.checked_mul(limbs))
        .filter(|w| *w <= MAX_LIMB_WORDS)
    else {
        return Ok(None);
    };
    let buf = crate::limbs::flat_sum(f, n, limbs, charge)?;
    debug_assert_eq!(buf.len(), words);
    Ok(Some(Counts::Words {
        lo,
        limbs,
        words: buf,
        total: total.clone(),
    }))
}

/// How many of `n` dice land on one of `s` of their `f` equally likely faces: `C(n, k) ·
/// s^k · (f − s)^(n − k)` ways out of `f^n`, built as `n` products by `[f − s, s]` so every
/// step is exact in the weight type.
pub fn binomial_count<W: Weight>(n: u64, s: u64, f: u64) -> Result<Dense<W>, Fail> {
    let total = W::from_u64(f).pow(n)?;
    let (ws, wf) = (W::from_u64(s), W::from_u64(f - s));
    let mut acc: Vec<W> = Vec::with_capacity(n as usize + 1);
    acc.push(W::one());
    for _ in 0..n {
        // acc'[k] = acc[k] · (f − s) + acc[k − 1] · s, from the top down in place.
        acc.push(W::zero());
        for k in (0..acc.len()).rev() {
            let mut v = W::zero();
            v.mul_add_fit(&acc[k], &wf);
            if k > 0 {
                let prev = acc[k - 1].clone();
                v.mul_add_fit(&prev, &ws);
            }
            acc[k] = v;
        }
    }
    Ok(Dense::new(0, acc, total))
}

/// The work [`keep`] does for `k` of `n` dice with `faces` distinct faces spread over
/// `spread` (largest minus smallest): state pairs times the sums each carries. Checked before
/// any work, so a huge keep is refused at once.
pub fn keep_work(k: u64, n: u64, faces: u64, spread: u64) -> u64 {
    let k = k.min(n);
    let pairs = faces.saturating_mul(k.max(1)).saturating_mul(n + 1);
    // Pascal's triangle up to n comes first.
    let triangle = n.saturating_mul(n) / 2 + 1;
    pairs
        .saturating_mul(k.saturating_mul(spread).saturating_add(1))
        .saturating_add(triangle)
}

/// The sum of the `k` highest (or lowest) of `n` dice whose distinct faces (ascending) show
/// with the given multiplicities, by the order-statistics walk: go through the faces from the
/// kept end, choosing how many dice show each; once `k` dice are placed the sum is decided,
/// and the other dice only need to show faces beyond the current one, `(faces beyond)^rest`
/// ways, so only states with fewer than `k` dice placed are carried.
pub fn keep<W: Weight>(
    k: u64,
    n: u64,
    faces: &[(i64, u64)],
    highest: bool,
) -> Result<Dense<W>, Fail> {
    let f: u64 = faces.iter().map(|(_, m)| m).sum();
    let total = W::from_u64(f).pow(n)?;
    let k = k.min(n);
    if k == 0 || faces.is_empty() {
        return Ok(Dense {
            lo: 0,
            w: vec![total.clone()],
            total,
        });
    }
    let (fmin, fmax) = (faces[0].0, faces[faces.len() - 1].0);
    let kk = i64::try_from(k).map_err(|_| Fail::Value)?;
    // Every partial kept sum lies in [base, top].
    let base = fmin.checked_mul(kk).ok_or(Fail::Value)?.min(0);
    let top = fmax.checked_mul(kk).ok_or(Fail::Value)?.max(0);
    let width = usize::try_from(top - base + 1).map_err(|_| Fail::Value)?;
    let nu = n as usize;
    let ku = k as usize;
    // The binomials the walk uses: C(n − p, c) for p, c below k (the dice left after `p` are
    // placed, of which `c` show the current face), each from the one before by one product
    // and one exact division, k² of them instead of Pascal's triangle up to n.
    let mut binom: Vec<W> = vec![W::zero(); ku * ku];
    for p in 0..ku {
        let r = (nu - p) as u64;
        binom[p * ku] = W::one();
        for c in 1..ku - p {
            // r + 1 − c ≥ 2: c < k − p ≤ n − p = r.
            let x = binom[p * ku + c - 1]
                .mul(&W::from_u64(r + 1 - c as u64))?
                .div(&W::from_u64(c as u64));
            binom[p * ku + c] = x;
        }
    }
    // states[p · width + s]: ways to have placed p < k dice on the faces walked so far with
    // kept sum base + s; each row's non-zero entries lie in [from[p], to[p]) (empty when equal),
    // so the walk skips the sums no state reaches yet. One buffer holds the rows for the faces
    // walked and those for the next face (swapped by halves), one the bounds of both.
    let mut rows: Vec<W> = vec![W::zero(); 2 * ku * width];
    let mut bounds = vec![0usize; 4 * ku];
    let start = (-base) as usize;
    rows[start] = W::one();
    (bounds[0], bounds[ku]) = (start, start + 1);
    let mut done = vec![W::zero(); width];
    // Dice not yet placed can show any face not yet walked: `beyond` of them.
    let mut beyond = f;
    // m^c for the counts below `k`, then rest^r and (m + rest)^r for every count that can
    // occur, in one buffer.
    let mut pows: Vec<W> = vec![W::zero(); ku + 2 * (nu + 1)];
    for walked in 0..faces.len() {
        let (value, mult) = faces[if highest {
            faces.len() - 1 - walked
        } else {
            walked
        }];
        beyond -= mult;
        // After the last face every die must be placed: only the transitions that decide the
        // sum matter (the others would be dropped, and their counts can exceed the total).
        let last = walked + 1 == faces.len();
        let m = W::from_u64(mult);
        let rest = W::from_u64(beyond);
        let open = W::from_u64(mult + beyond);
        let (mpow, tail) = pows.split_at_mut(ku);
        let (rpow, opow) = tail.split_at_mut(nu + 1);
        mpow[0] = W::one();
        for c in 1..ku {
            mpow[c] = mpow[c - 1].mul(&m)?;
        }
        rpow[0] = W::one();
        opow[0] = W::one();
        for c in 1..=nu {
            // `rest` may be 0, and its powers are then 0 past the first: ways that need the
            // other dice beyond the last face do not exist.
            rpow[c] = rpow[c - 1].mul(&rest)?;
            opow[c] = opow[c - 1].mul(&open)?;
        }
        // Which half holds the faces walked so far flips with every face.
        let flip = walked % 2 == 1;
        let (first, second) = rows.split_at_mut(ku * width);
        let (states, next) = if flip {
            (&*second, first)
        } else {
            (&*first, second)
        };
        for x in next.iter_mut() {
            x.assign(&W::zero());
        }
        let (first, second) = bounds.split_at_mut(2 * ku);
        let (cur, new) = if flip {
            (&*second, first)
        } else {
            (&*first, second)
        };
        let (from, to) = cur.split_at(ku);
        new.fill(0);
        let (nfrom, nto) = new.split_at_mut(ku);
        for p in 0..ku {
            if from[p] == to[p] {
                continue;
            }
            let left = nu - p;
            let (lo_s, hi_s) = (from[p], to[p]);
            let src = &states[p * width + lo_s..p * width + hi_s];
            let binom = &binom[p * ku..p * ku + ku - p];
            // Fewer than `k` dice placed with this face: the sum is not decided yet (after
            // the last face, every die must be placed, so there is no such state).
            if !last {
                for (c, b) in binom.iter().enumerate() {
                    let ways = b.mul(&mpow[c])?;
                    if ways.is_zero() {
                        continue;
                    }
                    let add = value
                        .checked_mul(i64::try_from(c).map_err(|_| Fail::Value)?)
                        .ok_or(Fail::Value)?;
                    let q = p + c;
                    let at = (lo_s as i64 + add) as usize;
                    let dst = &mut next[q * width + at..q * width + at + src.len()];
                    mul_add_rows(dst, src, &ways);
                    if nfrom[q] == nto[q] {
                        (nfrom[q], nto[q]) = (at, at + src.len());
                    } else {
                        nfrom[q] = nfrom[q].min(at);
                        nto[q] = nto[q].max(at + src.len());
                    }
                }
            }
            // `k` or more placed: the kept sum gains `value · (k − p)` whatever their number,
            // and the other dice show faces beyond this one. The ways of every such number,
            // Σ over c ≥ k − p of C(left, c) m^c rest^(left − c), are the whole binomial
            // expansion, (m + rest)^left, less its terms below k − p: a few products, and the
            // states are walked once.
            let mut below = W::zero();
            for (c, b) in binom.iter().enumerate() {
                let w = b.mul(&mpow[c])?.mul(&rpow[left - c])?;
                below.add_assign(&w)?;
            }
            let ways = opow[left].sub(&below);
            if !ways.is_zero() {
                let add = value
                    .checked_mul(i64::try_from(ku - p).map_err(|_| Fail::Value)?)
                    .ok_or(Fail::Value)?;
                let at = (lo_s as i64 + add) as usize;
                mul_add_rows(&mut done[at..at + src.len()], src, &ways);
            }
        }
    }
    Ok(Dense::new(base, done, total))
}

/// `to[i] += ways · from[i]`; every weight involved is bounded by the total.
fn mul_add_rows<W: Weight>(to: &mut [W], from: &[W], ways: &W) {
    for (t, x) in to.iter_mut().zip(from) {
        if !x.is_zero() {
            t.mul_add_fit(x, ways);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::product;
    use num_bigint::BigUint;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn sparse(d: &Dense<u128>) -> Dist<i64, u128> {
        d.to_dist()
    }

    fn dense_of(faces: &[i64]) -> Dense<u128> {
        let d: Dist<i64, u128> = Dist::uniform(faces.iter().copied());
        Dense::from_dist(&d).expect("small faces")
    }

    fn faces_strategy() -> impl Strategy<Value = Vec<i64>> {
        prop::collection::vec(-3i64..=6, 1..=6)
    }

    /// A small random distribution: a sum of one to three small dice.
    fn dist_strategy() -> impl Strategy<Value = Dense<u128>> {
        prop::collection::vec(faces_strategy(), 1..=3).prop_map(|dice| {
            let mut acc = Dense::point(0);
            for f in dice {
                acc = add(&acc, &dense_of(&f)).unwrap();
            }
            acc
        })
    }

    fn keep_sparse(k: u64, n: u64, faces: &[i64], highest: bool) -> Dist<i64, u128> {
        // Every roll of n dice, enumerated.
        let f = faces.len() as u64;
        let mut weights: BTreeMap<i64, u128> = BTreeMap::new();
        for mut code in 0..f.pow(n as u32) {
            let mut roll: Vec<i64> = Vec::new();
            for _ in 0..n {
                roll.push(faces[(code % f) as usize]);
                code /= f;
            }
            roll.sort_unstable();
            if highest {
                roll.reverse();
            }
            let s: i64 = roll.iter().take(k as usize).sum();
            *weights.entry(s).or_default() += 1;
        }
        Dist {
            weights,
            total: u128::from(f).pow(n as u32),
        }
    }

    #[test]
    fn the_largest_integer_is_a_value_like_any_other() {
        let max = Dense::<u128>::point(i64::MAX);
        assert_eq!(max.hi(), i64::MAX);
        let negated = neg(&max).unwrap();
        assert_eq!(negated.as_point(), Some(-i64::MAX));
        assert_eq!(neg(&negated).unwrap().as_point(), Some(i64::MAX));
        // A constant minus a distribution, at the edges: MAX − MAX is 0, −1 − MAX is the
        // smallest integer, −MAX − MAX and −2 − MAX leave the 64-bit range.
        assert_eq!(sub(&max, &max).unwrap().as_point(), Some(0));
        assert_eq!(sub(&negated, &max), Err(Fail::Value));
        let near = dense_of(&[i64::MAX - 1, i64::MAX]);
        assert_eq!(sub(&Dense::point(-1), &near).unwrap().lo, i64::MIN);
        assert_eq!(sub(&Dense::point(-2), &near), Err(Fail::Value));
        let d = sub(&Dense::point(0), &near).unwrap();
        assert_eq!((d.lo, d.hi()), (-i64::MAX, 1 - i64::MAX));
    }

    #[test]
    fn comparisons_with_the_largest_integer_are_exact() {
        // Found by the `resolve` fuzzer (2026-12-04): `x < y` read as `y >= x + 1` with a
        // saturating add, so `i64::MAX < i64::MAX` was true (and `>=` false).
        let max = Dense::<u128>::point(i64::MAX);
        let (no, yes, total) = compare(Cmp::Lt, &max, &max).unwrap();
        assert_eq!((no, yes, total), (1, 0, 1));
        let (no, yes, _) = compare(Cmp::Ge, &max, &max).unwrap();
        assert_eq!((no, yes), (0, 1));
        // d3 + (MAX - 3) < MAX holds for 1 and 2, not for 3.
        let near = dense_of(&[i64::MAX - 2, i64::MAX - 1, i64::MAX]);
        let (no, yes, total) = compare(Cmp::Lt, &near, &max).unwrap();
        assert_eq!((no, yes, total), (1, 2, 3));
    }

    #[test]
    fn two_d6_as_arrays() {
        let d6 = dense_of(&[1, 2, 3, 4, 5, 6]);
        let s = add(&d6, &d6).unwrap();
        assert_eq!(s.lo, 2);
        assert_eq!(s.w, vec![1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1]);
        assert_eq!(s.total, 36);
    }

    #[test]
    fn a_hundred_d6_keep_the_natural_denominator_and_need_big_weights() {
        let d6: Dense<BigUint> = Dense::from_dist(&Dist::uniform(1..=6i64)).unwrap();
        let s = sum_of(&d6, 100, |_, _| Ok::<_, Fail>(())).unwrap();
        assert_eq!(s.total, BigUint::from(6u32).pow(100));
        assert_eq!(s.lo, 100);
        assert_eq!(s.w.len(), 501);
        assert_eq!(
            s.weight(350).unwrap().to_string(),
            "15237092858379903128111407924086725562812976591205826140530848189030092709496"
        );
        let small: Dense<u128> = Dense::from_dist(&Dist::uniform(1..=6i64)).unwrap();
        assert_eq!(
            sum_of(&small, 100, |_, _| Ok::<_, Fail>(())),
            Err(Fail::Weight)
        );
    }

    #[test]
    fn highest_three_of_ten_d6_by_the_walk_matches_every_roll() {
        let faces: Vec<(i64, u64)> = (1..=6).map(|f| (f, 1)).collect();
        let got: Dense<u64> = keep(3, 10, &faces, true).unwrap();
        let want = keep_sparse(3, 6, &[1, 2, 3, 4, 5, 6], true);
        // Ten dice are too many to enumerate here: compare six, and check ten's total and
        // extremes (all sixes: 1 way; 3 is only all ones).
        let six: Dense<u128> = keep(3, 6, &faces, true).unwrap();
        assert_eq!(six.to_dist(), want);
        assert_eq!(got.total, 6u64.pow(10));
        assert_eq!(got.lo, 3);
        assert_eq!(got.w[0], 1);
        assert_eq!(got.hi(), 18);
        assert_eq!(got.w.iter().sum::<u64>(), got.total);
    }

    #[test]
    fn keeps_of_more_dice_match_every_roll() {
        // Every face, several dice decided at once, the kept count near both ends.
        for (k, n, faces, highest) in [
            (3, 7, vec![1, 2, 3, 4, 5, 6], true),
            (2, 6, vec![1, 2, 3, 4, 5], false),
            (1, 6, vec![0, 0, 1, 3], true),
            (5, 6, vec![-1, 0, 1], false),
            (6, 6, vec![1, 2, 3, 4], true),
        ] {
            let mut distinct: BTreeMap<i64, u64> = BTreeMap::new();
            for f in &faces {
                *distinct.entry(*f).or_default() += 1;
            }
            let distinct: Vec<(i64, u64)> = distinct.into_iter().collect();
            let got: Dense<u128> = keep(k, n, &distinct, highest).unwrap();
            assert_eq!(
                got.to_dist(),
                keep_sparse(k, n, &faces, highest),
                "{k} of {n}"
            );
        }
    }

    #[test]
    fn a_keep_past_64_bits_is_refused_in_u64_and_agrees_across_widths() {
        // 6^25 is past 2^64: u64 weights refuse, u128 and big integers agree.
        let faces: Vec<(i64, u64)> = (1..=6).map(|f| (f, 1)).collect();
        assert_eq!(keep::<u64>(4, 25, &faces, true), Err(Fail::Weight));
        let mid: Dense<u128> = keep(4, 25, &faces, true).unwrap();
        let big: Dense<BigUint> = keep(4, 25, &faces, true).unwrap();
        assert_eq!(mid.total, 6u128.pow(25));
        assert_eq!(mid.w.iter().sum::<u128>(), mid.total);
        assert_eq!(
            mid.w.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            big.w.iter().map(|x| x.to_string()).collect::<Vec<_>>()
        );
        // 6^24 < 2^64 still fits.
        let small: Dense<u64> = keep(2, 24, &faces, false).unwrap();
        assert_eq!(small.total, 6u64.pow(24));
        assert_eq!(
            small.w.iter().map(|x| u128::from(*x)).sum::<u128>(),
            u128::from(small.total)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn sum_and_difference_equal_the_sparse_product(a in dist_strategy(), b in dist_strategy()) {
            let want = product(&sparse(&a), &sparse(&b), |x, y| Ok::<_, Overflow>(x + y)).unwrap();
            prop_assert_eq!(add(&a, &b).unwrap().to_dist(), want);
            let want = product(&sparse(&a), &sparse(&b), |x, y| Ok::<_, Overflow>(x - y)).unwrap();
            prop_assert_eq!(add(&a, &neg(&b).unwrap()).unwrap().to_dist(), want.clone());
            prop_assert_eq!(sub(&a, &b).unwrap().to_dist(), want);
        }

        #[test]
        fn comparisons_equal_the_sparse_product(a in dist_strategy(), b in dist_strategy(), op in 0u8..6) {
            let (cmp, f): (Cmp, fn(i64, i64) -> bool) = match op {
                0 => (Cmp::Lt, |x, y| x < y),
                1 => (Cmp::Le, |x, y| x <= y),
                2 => (Cmp::Gt, |x, y| x > y),
                3 => (Cmp::Ge, |x, y| x >= y),
                4 => (Cmp::Eq, |x, y| x == y),
                _ => (Cmp::Ne, |x, y| x != y),
            };
            let want = product(&sparse(&a), &sparse(&b), |x, y| Ok::<_, Overflow>(f(*x, *y))).unwrap();
            let (no, yes, total) = compare(cmp, &a, &b).unwrap();
            prop_assert_eq!(total, want.total);
            prop_assert_eq!(no, want.weights.get(&false).copied().unwrap_or(0));
            prop_assert_eq!(yes, want.weights.get(&true).copied().unwrap_or(0));
        }

        #[test]
        fn max_and_min_equal_the_sparse_product(a in dist_strategy(), b in dist_strategy()) {
            let want = product(&sparse(&a), &sparse(&b), |x, y| Ok::<_, Overflow>(*x.max(y))).unwrap();
            prop_assert_eq!(extreme(&a, &b, true).unwrap().to_dist(), want);
            let want = product(&sparse(&a), &sparse(&b), |x, y| Ok::<_, Overflow>(*x.min(y))).unwrap();
            prop_assert_eq!(extreme(&a, &b, false).unwrap().to_dist(), want);
        }

        #[test]
        fn mixtures_equal_the_sparse_mixture(ds in prop::collection::vec((1u128..=5, dist_strategy()), 1..=4)) {
            let total: u128 = ds.iter().map(|(w, _)| w).sum();
            let want = crate::dist::mixture(
                ds.iter().map(|(w, d)| (*w, sparse(d))).collect(),
                &total,
            ).unwrap();
            let got = mixture(ds, &total).unwrap();
            prop_assert_eq!(got.to_dist(), want);
        }

        #[test]
        fn sums_of_dice_equal_repeated_products(faces in faces_strategy(), n in 0u64..=5) {
            let one = dense_of(&faces);
            let mut want: Dist<i64, u128> = Dist::point(0);
            for _ in 0..n {
                want = product(&want, &sparse(&one), |x, y| Ok::<_, Overflow>(x + y)).unwrap();
            }
            let got = sum_of(&one, n, |_, _| Ok::<_, Fail>(())).unwrap();
            prop_assert_eq!(got.to_dist(), want);
        }

        #[test]
        fn sums_of_flat_dice_in_words_equal_repeated_products(f in 1i64..=10, lo in -3i64..=3, n in 0u64..=8) {
            let one = dense_of(&(lo..lo + f).collect::<Vec<_>>());
            let mut want: Dist<i64, u128> = Dist::point(0);
            for _ in 0..n {
                want = product(&want, &sparse(&one), |x, y| Ok::<_, Overflow>(x + y)).unwrap();
            }
            let got = sum_of(&one, n, |_, _| Ok::<_, Fail>(())).unwrap();
            prop_assert_eq!(got.to_dist(), want.clone());
            let big: Dense<BigUint> = Dense::from_dist(&Dist::uniform(lo..lo + f)).unwrap();
            let got = sum_of(&big, n, |_, _| Ok::<_, Fail>(())).unwrap();
            prop_assert_eq!(got.to_dist().weights.into_iter().map(|(v, w)| (v, w.to_string())).collect::<Vec<_>>(),
                want.weights.into_iter().map(|(v, w)| (v, w.to_string())).collect::<Vec<_>>());
        }

        #[test]
        fn keep_equals_every_roll(faces in faces_strategy(), n in 1u64..=4, k in 0u64..=5, highest in any::<bool>()) {
            let mut distinct: BTreeMap<i64, u64> = BTreeMap::new();
            for f in &faces {
                *distinct.entry(*f).or_default() += 1;
            }
            let distinct: Vec<(i64, u64)> = distinct.into_iter().collect();
            let got: Dense<u128> = keep(k, n, &distinct, highest).unwrap();
            prop_assert_eq!(got.to_dist(), keep_sparse(k.min(n), n, &faces, highest));
        }

        #[test]
        fn counts_equal_the_binomial_formula(n in 0u64..=12, f in 1u64..=10, s_raw in 0u64..=10) {
            let s = s_raw.min(f);
            let got: Dense<u128> = binomial_count(n, s, f).unwrap();
            let mut want: BTreeMap<i64, u128> = BTreeMap::new();
            for k in 0..=n {
                let w = crate::dist::binomial::<u128>(n, k).unwrap()
                    * u128::from(s).pow(k as u32)
                    * u128::from(f - s).pow((n - k) as u32);
                if w != 0 {
                    want.insert(k as i64, w);
                }
            }
            prop_assert_eq!(got.to_dist(), Dist { weights: want, total: u128::from(f).pow(n as u32) });
        }
    }
}
