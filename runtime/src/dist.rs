//! Exact discrete distributions: integer weights over a common total, so no fraction is ever
//! rounded. `P(k) = weight(k) / total`.

use std::collections::BTreeMap;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dist<K: Ord> {
    pub weights: BTreeMap<K, BigUint>,
    pub total: BigUint,
}

impl<K: Ord + Clone> Dist<K> {
    pub fn point(k: K) -> Self {
        let mut weights = BTreeMap::new();
        weights.insert(k, BigUint::one());
        Dist {
            weights,
            total: BigUint::one(),
        }
    }

    /// Each listed value is equally likely; repeats add weight (a die with two 1s).
    pub fn uniform(values: impl IntoIterator<Item = K>) -> Self {
        let mut weights: BTreeMap<K, BigUint> = BTreeMap::new();
        let mut total = BigUint::zero();
        for v in values {
            *weights.entry(v).or_default() += 1u32;
            total += 1u32;
        }
        Dist { weights, total }
    }

    pub fn from_weights(weights: BTreeMap<K, BigUint>, total: BigUint) -> Self {
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

    pub fn map<L: Ord + Clone>(&self, mut f: impl FnMut(&K) -> L) -> Dist<L> {
        let mut weights: BTreeMap<L, BigUint> = BTreeMap::new();
        for (k, w) in &self.weights {
            *weights.entry(f(k)).or_default() += w;
        }
        Dist {
            weights,
            total: self.total.clone(),
        }
    }

    pub fn try_map<L: Ord + Clone, E>(
        &self,
        mut f: impl FnMut(&K) -> Result<L, E>,
    ) -> Result<Dist<L>, E> {
        let mut weights: BTreeMap<L, BigUint> = BTreeMap::new();
        for (k, w) in &self.weights {
            *weights.entry(f(k)?).or_default() += w;
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
                *w /= &g;
            }
            self.total /= &g;
        }
    }

    /// `P(k)` as a reduced fraction.
    pub fn probability(&self, k: &K) -> (BigUint, BigUint) {
        let w = self.weights.get(k).cloned().unwrap_or_default();
        let g = w.gcd(&self.total);
        if g.is_zero() {
            return (w, self.total.clone());
        }
        (&w / &g, &self.total / &g)
    }
}

/// Independent combination of two distributions.
pub fn product<A: Ord + Clone, B: Ord + Clone, C: Ord + Clone, E>(
    a: &Dist<A>,
    b: &Dist<B>,
    mut f: impl FnMut(&A, &B) -> Result<C, E>,
) -> Result<Dist<C>, E> {
    let mut weights: BTreeMap<C, BigUint> = BTreeMap::new();
    for (x, wx) in &a.weights {
        for (y, wy) in &b.weights {
            *weights.entry(f(x, y)?).or_default() += wx * wy;
        }
    }
    Ok(Dist {
        weights,
        total: &a.total * &b.total,
    })
}

/// `Σ (w_i / T) · D_i`: the distribution of taking branch `i` with weight `w_i` out of `T`.
pub fn mixture<K: Ord + Clone>(branches: Vec<(BigUint, Dist<K>)>, total: &BigUint) -> Dist<K> {
    let mut l = BigUint::one();
    for (_, d) in &branches {
        l = l.lcm(&d.total);
    }
    let mut weights: BTreeMap<K, BigUint> = BTreeMap::new();
    for (w, d) in branches {
        let scale = &w * (&l / &d.total);
        for (k, dw) in d.weights {
            *weights.entry(k).or_default() += &scale * dw;
        }
    }
    let mut out = Dist {
        weights,
        total: total * l,
    };
    out.reduce();
    out
}

/// `C(n, k)` as a big integer.
pub fn binomial(n: u64, k: u64) -> BigUint {
    if k > n {
        return BigUint::zero();
    }
    let k = k.min(n - k);
    let mut r = BigUint::one();
    for i in 0..k {
        r *= n - i;
        r /= i + 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_d6_sum_has_six_ways_to_make_seven() {
        let d6 = Dist::uniform(1..=6i64);
        let s = product(&d6, &d6, |a, b| Ok::<_, ()>(a + b)).unwrap();
        assert_eq!(
            s.probability(&7),
            (BigUint::from(1u32), BigUint::from(6u32))
        );
        assert_eq!(
            s.probability(&2),
            (BigUint::from(1u32), BigUint::from(36u32))
        );
    }

    #[test]
    fn mixture_weights_components_by_branch_probability() {
        let coin = Dist::uniform([0i64, 1]);
        let d4 = Dist::uniform(1..=4i64);
        let m = mixture(
            vec![(BigUint::from(1u32), coin), (BigUint::from(1u32), d4)],
            &BigUint::from(2u32),
        );
        assert_eq!(
            m.probability(&1),
            (BigUint::from(3u32), BigUint::from(8u32))
        );
        assert_eq!(
            m.probability(&0),
            (BigUint::from(1u32), BigUint::from(4u32))
        );
    }

    #[test]
    fn binomials() {
        assert_eq!(binomial(5, 2), BigUint::from(10u32));
        assert_eq!(
            binomial(100, 50).to_string(),
            "100891344545564193334812497256"
        );
        assert_eq!(binomial(3, 4), BigUint::zero());
    }
}
