//! The answer to an exact query: `P(k) = weight(k) / total` for each outcome `k`.
//!
//! Integer outcomes close together (`100d6`: 100 to 600) stay one array of weights in the
//! narrowest form the evaluator computed them in: `u64`, `u128`, the 64-bit words of a dice
//! sum's kernel, or big integers only when a weight needed them. Making 501 big integers and a
//! map of them cost several times the sum itself, for callers that mostly read a few weights;
//! so weights become big integers one at a time, where they are read. Any other outcomes
//! (names, effects, values far apart) are an ordered map, as the evaluator built them.

use std::borrow::Cow;
use std::collections::BTreeMap;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::Zero;

use crate::dist::{Dist, Weight};
use crate::value::{OutcomeKey, Val};

/// The weights of consecutive integer outcomes, in the form they were computed in.
#[derive(Debug, Clone)]
pub enum Weights {
    U64(Vec<u64>),
    U128(Vec<u128>),
    /// Each weight as `limbs` little-endian 64-bit words, one after the other.
    Words {
        limbs: usize,
        words: Vec<u64>,
    },
    Big(Vec<BigUint>),
}

impl Weights {
    /// Weights of `limbs` words each; one word is a `u64`.
    pub fn words(limbs: usize, words: Vec<u64>) -> Self {
        assert!(limbs > 0, "a weight has at least one word");
        assert_eq!(words.len() % limbs, 0, "whole weights only");
        if limbs == 1 {
            Weights::U64(words)
        } else {
            Weights::Words { limbs, words }
        }
    }

    /// How many weights (zeros included).
    pub fn len(&self) -> usize {
        match self {
            Weights::U64(w) => w.len(),
            Weights::U128(w) => w.len(),
            Weights::Words { limbs, words } => words.len() / limbs,
            Weights::Big(w) => w.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn is_zero_at(&self, i: usize) -> bool {
        match self {
            Weights::U64(w) => w[i] == 0,
            Weights::U128(w) => w[i] == 0,
            Weights::Words { limbs, words } => {
                words[i * limbs..(i + 1) * limbs].iter().all(|x| *x == 0)
            }
            Weights::Big(w) => Zero::is_zero(&w[i]),
        }
    }

    /// The `i`-th weight, borrowed when it is already a big integer.
    pub fn get(&self, i: usize) -> Cow<'_, BigUint> {
        match self {
            Weights::U64(w) => Cow::Owned(BigUint::from(w[i])),
            Weights::U128(w) => Cow::Owned(BigUint::from(w[i])),
            Weights::Words { limbs, words } => Cow::Owned(
                <BigUint as Weight>::from_limbs(&words[i * limbs..(i + 1) * limbs])
                    .expect("big integers hold any number of words"),
            ),
            Weights::Big(w) => Cow::Borrowed(&w[i]),
        }
    }
}

#[derive(Debug, Clone)]
enum Shape {
    /// Weights of `lo, lo + 1, …` (a zero weight is an outcome that cannot happen).
    Ints { lo: i64, weights: Weights },
    /// Weights of any outcomes, as the evaluator's map held them.
    Keys(BTreeMap<OutcomeKey, BigUint>),
}

/// The exact outcome distribution of a query. A zero in an array is a value that cannot
/// happen, not an outcome: [`Outcomes::iter`] skips it and [`Outcomes::weight`] has none for
/// it, so an array reads as the map of its outcomes would.
#[derive(Debug, Clone)]
pub struct Outcomes {
    shape: Shape,
    total: BigUint,
}

impl Outcomes {
    /// Integer outcomes `lo, lo + 1, …` with these weights out of `total`.
    pub fn from_ints(lo: i64, weights: Weights, total: BigUint) -> Self {
        // The largest outcome must be an `i64`: an index past it would name no value.
        if !weights.is_empty() {
            assert!(
                lo.checked_add(weights.len() as i64 - 1).is_some(),
                "outcomes past the largest integer"
            );
        }
        Outcomes {
            shape: Shape::Ints { lo, weights },
            total,
        }
    }

    /// Any outcomes, as a map.
    pub fn from_map(d: Dist<OutcomeKey, BigUint>) -> Self {
        Outcomes {
            shape: Shape::Keys(d.weights),
            total: d.total,
        }
    }

    pub fn total(&self) -> &BigUint {
        &self.total
    }

    /// How many outcomes there are.
    pub fn len(&self) -> usize {
        match &self.shape {
            Shape::Ints { weights, .. } => (0..weights.len())
                .filter(|i| !weights.is_zero_at(*i))
                .count(),
            Shape::Keys(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The outcomes in ascending order (the order of [`OutcomeKey`]), each with its weight.
    pub fn iter(&self) -> Iter<'_> {
        match &self.shape {
            Shape::Ints { lo, weights } => Iter::Ints {
                lo: *lo,
                weights,
                next: 0,
            },
            Shape::Keys(m) => Iter::Keys(m.iter()),
        }
    }

    /// The outcomes in ascending order.
    pub fn keys(&self) -> impl Iterator<Item = OutcomeKey> + '_ {
        self.iter().map(|(k, _)| k.into_owned())
    }

    /// The weight of `k`, when `k` is an outcome.
    pub fn weight(&self, k: &OutcomeKey) -> Option<Cow<'_, BigUint>> {
        match &self.shape {
            Shape::Ints { lo, weights } => {
                let OutcomeKey::Value(Val::Int(v)) = k else {
                    return None;
                };
                let i = usize::try_from(v.checked_sub(*lo)?).ok()?;
                (i < weights.len() && !weights.is_zero_at(i)).then(|| weights.get(i))
            }
            Shape::Keys(m) => m.get(k).map(Cow::Borrowed),
        }
    }

    /// `P(k)` as a reduced fraction (`0/1` for an outcome that cannot happen), as
    /// [`Dist::probability`] gives it.
    pub fn probability(&self, k: &OutcomeKey) -> (BigUint, BigUint) {
        let w = self.weight(k).map(Cow::into_owned).unwrap_or_default();
        let g = Integer::gcd(&w, &self.total);
        if Zero::is_zero(&g) {
            return (w, self.total.clone());
        }
        (&w / &g, &self.total / &g)
    }

    /// The same weights and total as a map of outcomes (the form the sparse evaluator gives).
    pub fn to_dist(&self) -> Dist<OutcomeKey, BigUint> {
        Dist {
            weights: self
                .iter()
                .map(|(k, w)| (k.into_owned(), w.into_owned()))
                .collect(),
            total: self.total.clone(),
        }
    }
}

/// Equal when every outcome has the same weight and the totals agree, whatever the shapes.
impl PartialEq for Outcomes {
    fn eq(&self, other: &Self) -> bool {
        self.total == other.total && self.iter().eq(other.iter())
    }
}

impl Eq for Outcomes {}

/// The outcomes of an [`Outcomes`] with their weights.
pub enum Iter<'a> {
    Ints {
        lo: i64,
        weights: &'a Weights,
        next: usize,
    },
    Keys(std::collections::btree_map::Iter<'a, OutcomeKey, BigUint>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (Cow<'a, OutcomeKey>, Cow<'a, BigUint>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Ints { lo, weights, next } => {
                while *next < weights.len() {
                    let i = *next;
                    *next += 1;
                    if !weights.is_zero_at(i) {
                        // `Outcomes::from_ints` checked that every index names an `i64`.
                        let key = OutcomeKey::Value(Val::Int(*lo + i as i64));
                        return Some((Cow::Owned(key), weights.get(i)));
                    }
                }
                None
            }
            Iter::Keys(it) => it.next().map(|(k, w)| (Cow::Borrowed(k), Cow::Borrowed(w))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i64) -> OutcomeKey {
        OutcomeKey::Value(Val::Int(v))
    }

    fn big(n: u128) -> BigUint {
        BigUint::from(n)
    }

    /// The map an array of `u64` weights stands for.
    fn map_of(lo: i64, w: &[u64], total: u64) -> Dist<OutcomeKey, BigUint> {
        Dist {
            weights: w
                .iter()
                .enumerate()
                .filter(|(_, x)| **x != 0)
                .map(|(i, x)| (int(lo + i as i64), BigUint::from(*x)))
                .collect(),
            total: BigUint::from(total),
        }
    }

    #[test]
    fn every_form_of_weights_reads_the_same() {
        // 2 × 3 outcomes with a gap (weight 0 at -1) and a negative offset.
        let u64s = vec![1u64, 0, 3, 2];
        let forms = [
            Weights::U64(u64s.clone()),
            Weights::U128(u64s.iter().map(|x| u128::from(*x)).collect()),
            Weights::Words {
                limbs: 2,
                words: u64s.iter().flat_map(|x| [*x, 0]).collect(),
            },
            Weights::Big(u64s.iter().map(|x| BigUint::from(*x)).collect()),
        ];
        let want = map_of(-2, &u64s, 6);
        for w in forms {
            let o = Outcomes::from_ints(-2, w.clone(), big(6));
            assert_eq!(o.to_dist(), want, "{w:?}");
            assert_eq!(o.len(), 3);
            assert_eq!(o.keys().collect::<Vec<_>>(), vec![int(-2), int(0), int(1)]);
            assert_eq!(o.weight(&int(-1)), None, "a zero weight is no outcome");
            assert_eq!(o.weight(&int(-3)), None);
            assert_eq!(o.weight(&int(2)), None);
            assert_eq!(o.weight(&int(1)).as_deref(), Some(&big(2)));
            assert_eq!(o.probability(&int(0)), (big(1), big(2)));
            assert_eq!(o.probability(&int(-1)), (big(0), big(1)));
            assert_eq!(o.weight(&OutcomeKey::Nothing), None);
            assert_eq!(o, Outcomes::from_map(want.clone()), "equal across shapes");
        }
    }

    #[test]
    fn weights_past_128_bits_stay_words_until_read() {
        // 2^130 + 5 and 7, in three words each, out of 2^130 + 12.
        let words = vec![5, 0, 4, 7, 0, 0];
        let o = Outcomes::from_ints(10, Weights::words(3, words), (big(1) << 130) + big(12));
        assert_eq!(
            o.weight(&int(10)).as_deref(),
            Some(&((big(1) << 130) + big(5)))
        );
        assert_eq!(o.weight(&int(11)).as_deref(), Some(&big(7)));
        assert_eq!(o.len(), 2);
        let sum = o
            .iter()
            .fold(BigUint::default(), |s, (_, w)| s + w.as_ref());
        assert_eq!(&sum, o.total());
    }

    #[test]
    fn one_word_weights_are_u64s() {
        assert!(matches!(Weights::words(1, vec![1, 2]), Weights::U64(_)));
    }

    #[test]
    fn empty_and_single_outcomes() {
        let empty = Outcomes::from_ints(0, Weights::U64(Vec::new()), big(1));
        assert!(empty.is_empty());
        assert_eq!(empty.iter().count(), 0);
        assert_eq!(empty.weight(&int(0)), None);
        assert_eq!(
            empty,
            Outcomes::from_map(Dist::from_weights(BTreeMap::new(), big(1)))
        );

        let one = Outcomes::from_ints(i64::MAX, Weights::U64(vec![1]), big(1));
        assert_eq!(one.keys().collect::<Vec<_>>(), vec![int(i64::MAX)]);
        assert_eq!(one.probability(&int(i64::MAX)), (big(1), big(1)));
        assert_eq!(
            one.weight(&int(i64::MIN)),
            None,
            "no overflow looking far below"
        );
        let low = Outcomes::from_ints(i64::MIN, Weights::U64(vec![2, 1]), big(3));
        assert_eq!(
            low.weight(&int(i64::MAX)),
            None,
            "no overflow looking far above"
        );
        assert_eq!(low.weight(&int(i64::MIN + 1)).as_deref(), Some(&big(1)));
    }

    #[test]
    fn differing_weights_or_totals_are_not_equal() {
        let a = Outcomes::from_ints(1, Weights::U64(vec![1, 1]), big(2));
        assert_ne!(a, Outcomes::from_ints(1, Weights::U64(vec![1, 1]), big(4)));
        assert_ne!(a, Outcomes::from_ints(1, Weights::U128(vec![1, 2]), big(2)));
        assert_ne!(a, Outcomes::from_ints(2, Weights::U64(vec![1, 1]), big(2)));
        let named = Dist {
            weights: [(OutcomeKey::Named("hit".into()), big(1))].into(),
            total: big(2),
        };
        assert_ne!(a, Outcomes::from_map(named));
    }

    #[test]
    #[should_panic(expected = "past the largest integer")]
    fn outcomes_past_i64_are_refused() {
        let _ = Outcomes::from_ints(i64::MAX, Weights::U64(vec![1, 1]), big(2));
    }
}
