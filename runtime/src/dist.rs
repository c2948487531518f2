//! Exact discrete distributions: integer weights over a common total, so no fraction is ever
//! rounded. `P(k) = weight(k) / total`.
//!
//! Weights are generic: most queries fit in `u64` (or `u128`) and run without allocation; when
//! a weight would overflow, the computation reports it and is redone with the next wider
//! representation, big integers last.

use std::collections::BTreeMap;
use std::fmt::Debug;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};

/// A weight would not fit in the fast representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow;

pub trait Weight: Clone + Debug + PartialEq + Eq + PartialOrd + Ord {
    fn zero() -> Self;
    fn one() -> Self;
    fn from_u64(n: u64) -> Self;
    fn is_zero(&self) -> bool;
    fn is_one(&self) -> bool;
    fn add(&self, o: &Self) -> Result<Self, Overflow>;
    fn add_assign(&mut self, o: &Self) -> Result<(), Overflow>;
    /// `self - o` where `o <= self`.
    fn sub(&self, o: &Self) -> Self;
    /// `self -= o` where `o <= self`.
    fn sub_assign(&mut self, o: &Self) {
        *self = self.sub(o);
    }
    /// `self = o`, reusing `self`'s storage where the representation has any.
    fn assign(&mut self, o: &Self) {
        *self = o.clone();
    }
    fn mul(&self, o: &Self) -> Result<Self, Overflow>;
    fn div(&self, o: &Self) -> Self;
    fn gcd(&self, o: &Self) -> Self;
    fn to_big(&self) -> BigUint;
    fn pow(&self, e: u64) -> Result<Self, Overflow> {
        let mut r = Self::one();
        let mut base = self.clone();
        let mut e = e;
        while e > 0 {
            if e & 1 == 1 {
                r = r.mul(&base)?;
            }
            e >>= 1;
            if e > 0 {
                base = base.mul(&base)?;
            }
        }
        Ok(r)
    }
    fn lcm(&self, o: &Self) -> Result<Self, Overflow> {
        if self.is_zero() || o.is_zero() {
            return Ok(Self::zero());
        }
        self.div(&self.gcd(o)).mul(o)
    }
    /// `self += a * b` where the caller has shown the result fits: every weight of a
    /// distribution is at most its total, which was computed (checked) first. Fixed-width
    /// weights then skip the overflow checks in the inner loops of the dense kernels.
    fn mul_add_fit(&mut self, a: &Self, b: &Self);
    /// `self += a` where the caller has shown the result fits (see [`Weight::mul_add_fit`]).
    fn add_fit(&mut self, a: &Self);
    /// The number whose little-endian 64-bit words these are, if it fits.
    fn from_limbs(words: &[u64]) -> Result<Self, Overflow>;
}

/// Fixed-width weights: the checked operations of [`Weight`] on a primitive unsigned integer.
macro_rules! fixed_weight {
    ($t:ty) => {
        impl Weight for $t {
            fn zero() -> Self {
                0
            }
            fn one() -> Self {
                1
            }
            fn from_u64(n: u64) -> Self {
                // Both fixed widths are at least 64 bits: never truncates.
                n as $t
            }
            fn is_zero(&self) -> bool {
                *self == 0
            }
            fn is_one(&self) -> bool {
                *self == 1
            }
            fn add(&self, o: &Self) -> Result<Self, Overflow> {
                self.checked_add(*o).ok_or(Overflow)
            }
            fn add_assign(&mut self, o: &Self) -> Result<(), Overflow> {
                *self = self.checked_add(*o).ok_or(Overflow)?;
                Ok(())
            }
            fn sub(&self, o: &Self) -> Self {
                self - o
            }
            fn mul(&self, o: &Self) -> Result<Self, Overflow> {
                self.checked_mul(*o).ok_or(Overflow)
            }
            fn div(&self, o: &Self) -> Self {
                self / o
            }
            fn gcd(&self, o: &Self) -> Self {
                Integer::gcd(self, o)
            }
            fn to_big(&self) -> BigUint {
                BigUint::from(*self)
            }
            fn mul_add_fit(&mut self, a: &Self, b: &Self) {
                // Wrapping never happens (the caller bounds the result); it only spares the
                // check.
                debug_assert!(
                    a.checked_mul(*b)
                        .and_then(|p| self.checked_add(p))
                        .is_some()
                );
                *self = self.wrapping_add(a.wrapping_mul(*b));
            }
            fn add_fit(&mut self, a: &Self) {
                debug_assert!(self.checked_add(*a).is_some());
                *self = self.wrapping_add(*a);
            }
            fn from_limbs(words: &[u64]) -> Result<Self, Overflow> {
                let mut r: $t = 0;
                for (i, w) in words.iter().enumerate() {
                    if *w == 0 {
                        continue;
                    }
                    if i * 64 >= <$t>::BITS as usize {
                        return Err(Overflow);
                    }
                    r |= (*w as $t) << (64 * i);
                }
                Ok(r)
            }
        }
    };
}

fixed_weight!(u64);
fixed_weight!(u128);

impl Weight for BigUint {
    fn zero() -> Self {
        Zero::zero()
    }
    fn one() -> Self {
        One::one()
    }
    fn from_u64(n: u64) -> Self {
        BigUint::from(n)
    }
    fn is_zero(&self) -> bool {
        Zero::is_zero(self)
    }
    fn is_one(&self) -> bool {
        One::is_one(self)
    }
    fn add(&self, o: &Self) -> Result<Self, Overflow> {
        Ok(self + o)
    }
    fn add_assign(&mut self, o: &Self) -> Result<(), Overflow> {
        *self += o;
        Ok(())
    }
    fn sub(&self, o: &Self) -> Self {
        self - o
    }
    fn sub_assign(&mut self, o: &Self) {
        *self -= o;
    }
    fn assign(&mut self, o: &Self) {
        self.clone_from(o);
    }
    fn mul(&self, o: &Self) -> Result<Self, Overflow> {
        Ok(self * o)
    }
    fn div(&self, o: &Self) -> Self {
        self / o
    }
    fn gcd(&self, o: &Self) -> Self {
        Integer::gcd(self, o)
    }
    fn to_big(&self) -> BigUint {
        self.clone()
    }
    fn mul_add_fit(&mut self, a: &Self, b: &Self) {
        *self += a * b;
    }
    fn add_fit(&mut self, a: &Self) {
        *self += a;
    }
    fn from_limbs(words: &[u64]) -> Result<Self, Overflow> {
        // Halves on the stack for the common widths: one allocation per number (the
        // big integer's own), not two (big sums make hundreds of them).
        const ON_STACK: usize = 16;
        if words.len() <= ON_STACK {
            let mut digits = [0u32; 2 * ON_STACK];
            for (i, w) in words.iter().enumerate() {
                digits[2 * i] = *w as u32;
                digits[2 * i + 1] = (*w >> 32) as u32;
            }
            return Ok(BigUint::from_slice(&digits[..2 * words.len()]));
        }
        let digits: Vec<u32> = words
            .iter()
            .flat_map(|w| [*w as u32, (*w >> 32) as u32])
            .collect();
        Ok(BigUint::new(digits))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dist<K: Ord, W = BigUint> {
    pub weights: BTreeMap<K, W>,
    pub total: W,
}

impl<K: Ord + Clone, W: Weight> Dist<K, W> {
    pub fn point(k: K) -> Self {
        let mut weights = BTreeMap::new();
        weights.insert(k, W::one());
        Dist {
            weights,
            total: W::one(),
        }
    }

    /// Each listed value is equally likely; repeats add weight (a die with two 1s).
    pub fn uniform(values: impl IntoIterator<Item = K>) -> Self {
        let mut weights: BTreeMap<K, u64> = BTreeMap::new();
        let mut total = 0u64;
        for v in values {
            *weights.entry(v).or_default() += 1;
            total += 1;
        }
        Dist {
            weights: weights
                .into_iter()
                .map(|(k, w)| (k, W::from_u64(w)))
                .collect(),
            total: W::from_u64(total),
        }
    }

    pub fn from_weights(weights: BTreeMap<K, W>, total: W) -> Self {
        let mut d = Dist { weights, total };
        d.weights.retain(|_, w| !w.is_zero());
        d
    }

    pub fn len(&self) -> usize {
        self.weights.len()
    }
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// The only value, when the distribution is certain.
    pub fn as_point(&self) -> Option<&K> {
        if self.weights.len() == 1 {
            self.weights.keys().next()
        } else {
            None
        }
    }

    /// Relabel outcomes. Merged weights never exceed the total, which fits, so this cannot
    /// overflow.
    pub fn map<L: Ord + Clone>(&self, mut f: impl FnMut(&K) -> L) -> Dist<L, W> {
        let mut weights: BTreeMap<L, W> = BTreeMap::new();
        for (k, w) in &self.weights {
            let _ = bump(&mut weights, f(k), w.clone());
        }
        Dist {
            weights,
            total: self.total.clone(),
        }
    }

    pub fn try_map<L: Ord + Clone, E: From<Overflow>>(
        &self,
        mut f: impl FnMut(&K) -> Result<L, E>,
    ) -> Result<Dist<L, W>, E> {
        let mut weights: BTreeMap<L, W> = BTreeMap::new();
        for (k, w) in &self.weights {
            let _ = bump(&mut weights, f(k)?, w.clone());
        }
        Ok(Dist {
            weights,
            total: self.total.clone(),
        })
    }

    /// Divide weights and total by their common factor: same probabilities, smaller numbers.
    pub fn reduce(&mut self) {
        let mut g = self.total.clone();
        for w in self.weights.values() {
            if g.is_one() {
                return;
            }
            g = g.gcd(w);
        }
        if !g.is_one() && !g.is_zero() {
            for w in self.weights.values_mut() {
                *w = w.div(&g);
            }
            self.total = self.total.div(&g);
        }
    }

    /// `P(k)` as a reduced fraction.
    pub fn probability(&self, k: &K) -> (W, W) {
        let w = self.weights.get(k).cloned().unwrap_or_else(W::zero);
        let g = w.gcd(&self.total);
        if g.is_zero() {
            return (w, self.total.clone());
        }
        (w.div(&g), self.total.div(&g))
    }

    pub fn to_big(&self) -> Dist<K, BigUint> {
        Dist {
            weights: self
                .weights
                .iter()
                .map(|(k, w)| (k.clone(), w.to_big()))
                .collect(),
            total: self.total.to_big(),
        }
    }
}

/// Add `w` to the weight of `k`.
pub fn bump<K: Ord, W: Weight>(m: &mut BTreeMap<K, W>, k: K, w: W) -> Result<(), Overflow> {
    match m.entry(k) {
        std::collections::btree_map::Entry::Vacant(v) => {
            v.insert(w);
            Ok(())
        }
        std::collections::btree_map::Entry::Occupied(mut o) => o.get_mut().add_assign(&w),
    }
}

/// Independent combination of two distributions. `f` may fail with an error of its own.
pub fn product<A: Ord + Clone, B: Ord + Clone, C: Ord + Clone, W: Weight, E: From<Overflow>>(
    a: &Dist<A, W>,
    b: &Dist<B, W>,
    mut f: impl FnMut(&A, &B) -> Result<C, E>,
) -> Result<Dist<C, W>, E> {
    let mut weights: BTreeMap<C, W> = BTreeMap::new();
    for (x, wx) in &a.weights {
        for (y, wy) in &b.weights {
            bump(&mut weights, f(x, y)?, wx.mul(wy)?)?;
        }
    }
    Ok(Dist {
        weights,
        total: a.total.mul(&b.total)?,
    })
}

/// `Σ (w_i / T) · D_i`: the distribution of taking branch `i` with weight `w_i` out of `T`.
pub fn mixture<K: Ord + Clone, W: Weight>(
    branches: Vec<(W, Dist<K, W>)>,
    total: &W,
) -> Result<Dist<K, W>, Overflow> {
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
    let mut weights: BTreeMap<K, W> = BTreeMap::new();
    for (w, d) in branches {
        let scale = w.mul(&l.div(&d.total))?;
        for (k, dw) in d.weights {
            bump(&mut weights, k, scale.mul(&dw)?)?;
        }
    }
    let mut out = Dist {
        weights,
        total: total.mul(&l)?,
    };
    out.reduce();
    Ok(out)
}

/// `C(n, k)`.
pub fn binomial<W: Weight>(n: u64, k: u64) -> Result<W, Overflow> {
    if k > n {
        return Ok(W::zero());
    }
    let k = k.min(n - k);
    // Multiplying before dividing keeps every step an integer.
    let mut r = W::one();
    for i in 0..k {
        r = r.mul(&W::from_u64(n - i))?.div(&W::from_u64(i + 1));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(n: u64) -> BigUint {
        BigUint::from(n)
    }

    #[test]
    fn two_d6_sum_has_six_ways_to_make_seven() {
        let d6: Dist<i64> = Dist::uniform(1..=6i64);
        let s = product(&d6, &d6, |a, b| Ok::<_, Overflow>(a + b)).unwrap();
        assert_eq!(s.probability(&7), (big(1), big(6)));
        assert_eq!(s.probability(&2), (big(1), big(36)));
    }

    #[test]
    fn mixture_weights_components_by_branch_probability() {
        let coin: Dist<i64, u128> = Dist::uniform([0i64, 1]);
        let d4: Dist<i64, u128> = Dist::uniform(1..=4i64);
        let m = mixture(vec![(1u128, coin), (1u128, d4)], &2u128).unwrap();
        assert_eq!(m.probability(&1), (3, 8));
        assert_eq!(m.probability(&0), (1, 4));
    }

    #[test]
    fn binomials() {
        assert_eq!(binomial::<BigUint>(5, 2).unwrap(), big(10));
        assert_eq!(
            binomial::<BigUint>(100, 50).unwrap().to_string(),
            "100891344545564193334812497256"
        );
        assert_eq!(binomial::<u128>(3, 4).unwrap(), 0);
    }

    #[test]
    fn u128_weights_report_overflow_instead_of_wrapping() {
        let d6: Dist<i64, u128> = Dist::uniform(1..=6i64);
        let mut acc: Dist<i64, u128> = Dist::point(0);
        let mut overflowed = false;
        for _ in 0..60 {
            match product(&acc, &d6, |a, b| Ok::<_, Overflow>(a + b)) {
                Ok(d) => acc = d,
                Err(Overflow) => {
                    overflowed = true;
                    break;
                }
            }
        }
        assert!(overflowed, "6^60 does not fit in u128");
    }
}
