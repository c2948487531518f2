//! Reachable values of integer expressions: an exact set while it stays small, an interval
//! otherwise. Used by the band, target and table lints ("outcomes the dice cannot reach").

use serde::Serialize;

/// Beyond this many distinct values a set degrades to its interval.
const MAX_SET: usize = 4096;
/// Beyond this many pairwise combinations an operation works on intervals instead.
const MAX_PRODUCT: usize = 200_000;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Reach {
    /// Sorted, distinct values.
    Set(Vec<i64>),
    /// Inclusive bounds; `None` is unbounded on that side.
    Interval(Option<i64>, Option<i64>),
}

impl Reach {
    pub fn any() -> Self {
        Reach::Interval(None, None)
    }
    pub fn constant(v: i64) -> Self {
        Reach::Set(vec![v])
    }
    pub fn range(lo: i64, hi: i64) -> Self {
        if lo > hi {
            return Reach::Set(Vec::new());
        }
        if (i128::from(hi) - i128::from(lo)) < MAX_SET as i128 {
            Reach::Set((lo..=hi).collect())
        } else {
            Reach::Interval(Some(lo), Some(hi))
        }
    }
    pub fn from_values(mut v: Vec<i64>) -> Self {
        v.sort_unstable();
        v.dedup();
        if v.len() > MAX_SET {
            Reach::Interval(v.first().copied(), v.last().copied())
        } else {
            Reach::Set(v)
        }
    }
    pub fn bounds(&self) -> (Option<i64>, Option<i64>) {
        match self {
            Reach::Set(v) => (v.first().copied(), v.last().copied()),
            Reach::Interval(lo, hi) => (*lo, *hi),
        }
    }
    pub fn is_bounded(&self) -> bool {
        let (lo, hi) = self.bounds();
        lo.is_some() && hi.is_some()
    }
    pub fn contains(&self, x: i64) -> bool {
        match self {
            Reach::Set(v) => v.binary_search(&x).is_ok(),
            Reach::Interval(lo, hi) => lo.is_none_or(|l| x >= l) && hi.is_none_or(|h| x <= h),
        }
    }
    /// Values within `[lo, hi]` (either side open), when the set is explicit.
    pub fn values_in(&self, lo: Option<i64>, hi: Option<i64>) -> Option<Vec<i64>> {
        match self {
            Reach::Set(v) => Some(
                v.iter()
                    .copied()
                    .filter(|x| lo.is_none_or(|l| *x >= l) && hi.is_none_or(|h| *x <= h))
                    .collect(),
            ),
            Reach::Interval(..) => None,
        }
    }
    /// Whether any reachable value lies in `[lo, hi]`; `None` when it cannot tell.
    pub fn meets(&self, lo: Option<i64>, hi: Option<i64>) -> Option<bool> {
        match self {
            Reach::Set(_) => self.values_in(lo, hi).map(|v| !v.is_empty()),
            Reach::Interval(a, b) => {
                let disjoint_above = matches!((hi, a), (Some(h), Some(a)) if h < *a);
                let disjoint_below = matches!((lo, b), (Some(l), Some(b)) if l > *b);
                Some(!(disjoint_above || disjoint_below))
            }
        }
    }

    pub fn union(&self, other: &Reach) -> Reach {
        match (self, other) {
            (Reach::Set(a), Reach::Set(b)) => {
                let mut v = a.clone();
                v.extend_from_slice(b);
                Reach::from_values(v)
            }
            _ => {
                let (a, b) = (self.bounds(), other.bounds());
                let lo = a.0.zip(b.0).map(|(x, y)| x.min(y));
                let hi = a.1.zip(b.1).map(|(x, y)| x.max(y));
                Reach::Interval(lo, hi)
            }
        }
    }

    pub fn map(&self, f: impl Fn(i64) -> Option<i64>, interval: impl Fn(Self) -> Self) -> Reach {
        match self {
            Reach::Set(v) => {
                let mapped: Option<Vec<i64>> = v.iter().map(|x| f(*x)).collect();
                match mapped {
                    Some(m) => Reach::from_values(m),
                    None => Reach::any(),
                }
            }
            r => interval(r.clone()),
        }
    }

    pub fn neg(&self) -> Reach {
        self.map(
            |x| x.checked_neg(),
            |r| {
                let (lo, hi) = r.bounds();
                Reach::Interval(
                    hi.and_then(|h| h.checked_neg()),
                    lo.and_then(|l| l.checked_neg()),
                )
            },
        )
    }

    /// Combine two reaches pointwise, exactly when small, else with `iv` on the bounds.
    pub fn combine(
        &self,
        other: &Reach,
        f: impl Fn(i64, i64) -> Option<i64>,
        iv: impl Fn((Option<i64>, Option<i64>), (Option<i64>, Option<i64>)) -> Reach,
    ) -> Reach {
        if let (Reach::Set(a), Reach::Set(b)) = (self, other)
            && a.len().saturating_mul(b.len()) <= MAX_PRODUCT
        {
            let mut out = Vec::with_capacity(a.len().max(b.len()));
            for x in a {
                for y in b {
                    match f(*x, *y) {
                        Some(v) => out.push(v),
                        None => return iv(self.bounds(), other.bounds()),
                    }
                }
            }
            return Reach::from_values(out);
        }
        iv(self.bounds(), other.bounds())
    }

    pub fn add(&self, o: &Reach) -> Reach {
        self.combine(o, i64::checked_add, |a, b| {
            Reach::Interval(
                a.0.zip(b.0).and_then(|(x, y)| x.checked_add(y)),
                a.1.zip(b.1).and_then(|(x, y)| x.checked_add(y)),
            )
        })
    }
    pub fn sub(&self, o: &Reach) -> Reach {
        self.add(&o.neg())
    }
    pub fn mul(&self, o: &Reach) -> Reach {
        self.combine(o, i64::checked_mul, |a, b| match (a, b) {
            ((Some(a0), Some(a1)), (Some(b0), Some(b1))) => {
                let c = [
                    a0.checked_mul(b0),
                    a0.checked_mul(b1),
                    a1.checked_mul(b0),
                    a1.checked_mul(b1),
                ];
                if c.iter().any(Option::is_none) {
                    return Reach::any();
                }
                let c: Vec<i64> = c.iter().flatten().copied().collect();
                Reach::Interval(c.iter().min().copied(), c.iter().max().copied())
            }
            _ => Reach::any(),
        })
    }
    pub fn div_floor(&self, o: &Reach) -> Reach {
        self.combine(
            o,
            |x, y| (y != 0).then(|| x.div_euclid(y) - i64::from(x.rem_euclid(y) != 0 && y < 0)),
            |_, _| Reach::any(),
        )
    }
    pub fn min(&self, o: &Reach) -> Reach {
        self.combine(
            o,
            |x, y| Some(x.min(y)),
            |a, b| {
                Reach::Interval(
                    a.0.zip(b.0).map(|(x, y)| x.min(y)),
                    match (a.1, b.1) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (Some(x), None) | (None, Some(x)) => Some(x),
                        _ => None,
                    },
                )
            },
        )
    }
    pub fn max(&self, o: &Reach) -> Reach {
        self.neg().min(&o.neg()).neg()
    }
    pub fn clamp(&self, lo: Option<i64>, hi: Option<i64>) -> Reach {
        let mut r = self.clone();
        if let Some(l) = lo {
            r = r.max(&Reach::constant(l));
        }
        if let Some(h) = hi {
            r = r.min(&Reach::constant(h));
        }
        r
    }
}

/// `x / y` rounding toward negative infinity, the language's integer division.
pub fn floor_div(x: i64, y: i64) -> Option<i64> {
    if y == 0 {
        return None;
    }
    let q = x.checked_div(y)?;
    if (x % y != 0) && ((x < 0) != (y < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

/// `x / y` rounding toward positive infinity (`div_up`). `None` where the quotient does not
/// fit, or `y` is 0. The remainder decides the rounding: multiplying the floored quotient back
/// overflows when it rounded away from a quotient near the ends of 64 bits.
pub fn ceil_div(x: i64, y: i64) -> Option<i64> {
    let q = floor_div(x, y)?;
    if x.checked_rem(y).is_some_and(|r| r != 0) {
        q.checked_add(1)
    } else {
        Some(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opposed_d10_difference_spans_minus_nine_to_nine() {
        let d10 = Reach::range(1, 10);
        let diff = d10.add(&Reach::constant(4)).sub(&d10);
        assert_eq!(diff.bounds(), (Some(-5), Some(13)));
        assert!(diff.contains(0));
    }

    #[test]
    fn doubled_die_has_gaps() {
        let r = Reach::range(1, 6).mul(&Reach::constant(2));
        assert!(!r.contains(3));
        assert!(r.contains(12));
    }

    #[test]
    fn unbounded_meets_everything() {
        assert_eq!(Reach::any().meets(Some(1), Some(2)), Some(true));
        assert_eq!(
            Reach::Interval(Some(5), None).meets(None, Some(4)),
            Some(false)
        );
    }

    #[test]
    fn floor_division_rounds_down() {
        assert_eq!(floor_div(-3, 2), Some(-2));
        assert_eq!(floor_div(3, 2), Some(1));
        assert_eq!(floor_div(3, 0), None);
        assert_eq!(floor_div(i64::MIN, -1), None);
    }

    #[test]
    fn ceiling_division_rounds_up_without_overflow_near_the_ends() {
        assert_eq!(ceil_div(3, 2), Some(2));
        assert_eq!(ceil_div(-3, 2), Some(-1));
        assert_eq!(ceil_div(4, 2), Some(2));
        assert_eq!(ceil_div(3, 0), None);
        assert_eq!(ceil_div(i64::MIN, -1), None);
        // Found by fuzzing (`resolve` target): the floored quotient times -3 is past i64::MAX.
        assert_eq!(ceil_div(i64::MAX, -3), Some(-3_074_457_345_618_258_602));
        assert_eq!(ceil_div(i64::MIN, 7), Some(i64::MIN / 7));
    }
}
