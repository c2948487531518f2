//! Sums of `n` flat dice (every face of a contiguous range equally likely: `100d6`) in
//! fixed-width 64-bit limbs, whatever weight type the caller wants at the end.
//!
//! Big integers pay an allocation and a length check per addition; here every count of the
//! sum is a row of `limbs` words in one flat buffer. Two kernels give the same counts:
//!
//! - [`flat_sum`] adds one die at a time by a sliding window (`n` passes over the counts),
//!   each step touching only the words its own total needs;
//! - [`flat_sum_recurrence`] computes each count once from three earlier ones, by the
//!   recurrence that the generating function `((1 − x^f) / (1 − x))^n` satisfies, with one
//!   exact division by a small integer per count: one pass instead of `n`.
//!
//! The counts of a flat die's sum are symmetric, so both compute the lower half and mirror it.

/// `f^n` as little-endian 64-bit limbs, or `None` past `max_limbs` words.
fn power_limbs(f: u64, n: u64, max_limbs: usize) -> Option<Vec<u64>> {
    let mut p = vec![1u64];
    for _ in 0..n {
        mul_small(&mut p, f);
        if p.len() > max_limbs {
            return None;
        }
    }
    Some(p)
}

/// `p *= f` in place, growing `p` by a limb when the product needs one.
fn mul_small(p: &mut Vec<u64>, f: u64) {
    let mut carry = 0u128;
    for x in p.iter_mut() {
        let t = u128::from(*x) * u128::from(f) + carry;
        *x = t as u64;
        carry = t >> 64;
    }
    if carry != 0 {
        p.push(carry as u64);
    }
}

/// How many words the counts of `n` flat dice of `f` faces need: those of `f^n`.
pub fn limbs_needed(f: u64, n: u64, max_limbs: usize) -> Option<usize> {
    power_limbs(f, n, max_limbs).map(|p| p.len())
}

/// Below this many dice the sliding window is as quick as the recurrence (each of its passes
/// is one addition and one subtraction per count; the recurrence pays three products and a
/// division per count).
const SLIDING_MAX_DICE: u64 = 4;

/// The counts of each sum of `n` dice of `f` equally likely consecutive faces, lowest sum
/// first (`n·(f − 1) + 1` of them), each as `limbs` little-endian words in one buffer; `f^n`
/// must fit `limbs` words (see [`limbs_needed`]). `charge(len, f)` is called once per die
/// with the length of the counts so far, as the general kernel does, before any work: the
/// work limit sees the same figures whichever kernel runs.
pub fn flat_sum<E>(
    f: u64,
    n: u64,
    limbs: usize,
    mut charge: impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<Vec<u64>, E> {
    if n <= SLIDING_MAX_DICE {
        return flat_sum_sliding(f, n, limbs, charge);
    }
    let width = (f - 1) as usize;
    for s in 0..n as usize {
        charge(1 + s * width, width + 1)?;
    }
    Ok(flat_sum_recurrence(f, n, limbs))
}

/// [`flat_sum`] one die at a time: `next[i] = acc[i − width] + … + acc[i]`.
pub fn flat_sum_sliding<E>(
    f: u64,
    n: u64,
    limbs: usize,
    mut charge: impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<Vec<u64>, E> {
    let width = (f - 1) as usize;
    let len_final = n as usize * width + 1;
    let mut acc = vec![0u64; len_final * limbs];
    let mut next = vec![0u64; len_final * limbs];
    acc[0] = 1;
    let mut len = 1usize;
    // The total after the steps so far, to know how many words the next step writes.
    let mut total = vec![1u64];
    for _ in 0..n {
        charge(len, width + 1)?;
        mul_small(&mut total, f);
        let active = total.len();
        let new_len = len + width;
        // Counts of a flat die's sum are a palindrome: the lower half (and middle) is computed,
        // the upper half copied.
        let half = new_len.div_ceil(2);
        match active {
            1 => step::<1>(&acc, &mut next, len, width, half, limbs),
            2 => step::<2>(&acc, &mut next, len, width, half, limbs),
            3 => step::<3>(&acc, &mut next, len, width, half, limbs),
            4 => step::<4>(&acc, &mut next, len, width, half, limbs),
            5 => step::<5>(&acc, &mut next, len, width, half, limbs),
            6 => step::<6>(&acc, &mut next, len, width, half, limbs),
            7 => step::<7>(&acc, &mut next, len, width, half, limbs),
            8 => step::<8>(&acc, &mut next, len, width, half, limbs),
            _ => step_wide(&acc, &mut next, len, width, half, limbs, active),
        }
        for i in half..new_len {
            let j = new_len - 1 - i;
            next.copy_within(j * limbs..j * limbs + active, i * limbs);
        }
        std::mem::swap(&mut acc, &mut next);
        len = new_len;
    }
    Ok(acc)
}

/// [`flat_sum`] in one pass over the counts. With `c[m]` the ways to roll `m` above the lowest
/// sum, `P(x) = Σ c[m] x^m = ((1 − x^f) / (1 − x))^n`, so `P' / P = n · (1 / (1 − x) − f x^(f−1)
/// / (1 − x^f))`, that is `(1 − x)(1 − x^f) P' = n (1 − f x^(f−1) + (f − 1) x^f) P`; the
/// coefficients of `x^m` on both sides give
///
/// `(m + 1) c[m+1] = (m + n) c[m] − (f(n + 1) − m − 1) c[m+1−f] + (n(f − 1) + f − m) c[m−f]`
///
/// (terms of negative index are zero). Every factor is positive over the lower half, the
/// right side is a multiple of `m + 1`, and the division is exact.
pub fn flat_sum_recurrence(f: u64, n: u64, limbs: usize) -> Vec<u64> {
    let width = (f - 1) as usize;
    let len_final = n as usize * width + 1;
    let mut out = vec![0u64; len_final * limbs];
    out[0] = 1;
    if len_final == 1 {
        return out;
    }
    let half = len_final.div_ceil(2);
    let fu = f as usize;
    // The right side is below 2^28 times the total (every factor is at most n·f + f, and the
    // counts fit memory): one word more than a count.
    let mut num = vec![0u64; limbs + 1];
    let zero = vec![0u64; limbs];
    // Words in use by c[m]: the counts grow up to the middle, so c[m] bounds every earlier one
    // (their words past `act` are zero).
    let mut act = 1usize;
    for m in 0..half - 1 {
        let row = |i: usize| &out[i * limbs..i * limbs + act];
        let now = row(m);
        let (far, near) = (
            m.checked_sub(fu).map_or(&zero[..act], row),
            (m + 1).checked_sub(fu).map_or(&zero[..act], row),
        );
        let (a, b, c) = (
            i128::from(m as u64 + n),
            i128::from((n * (f - 1) + f).saturating_sub(m as u64)),
            i128::from((f * (n + 1)).saturating_sub(m as u64 + 1)),
        );
        // The three products in one pass, word by word with a signed carry: every partial
        // sum is below 2^(64 + 28 + 2) in size, far inside 128 bits.
        let mut carry = 0i128;
        for (((slot, x), y), z) in num.iter_mut().zip(now).zip(far).zip(near) {
            let t = carry + i128::from(*x) * a + i128::from(*y) * b - i128::from(*z) * c;
            *slot = t as u64;
            carry = t >> 64;
        }
        debug_assert!(carry >= 0);
        num[act] = carry as u64;
        let num = &mut num[..act + 1];
        div_exact_small(num, m as u64 + 1);
        act = num.iter().rposition(|x| *x != 0).map_or(1, |i| i + 1);
        debug_assert!(act <= limbs);
        let at = (m + 1) * limbs;
        out[at..at + act].copy_from_slice(&num[..act]);
    }
    for i in half..len_final {
        let j = len_final - 1 - i;
        out.copy_within(j * limbs..(j + 1) * limbs, i * limbs);
    }
    out
}

/// `acc += row · k`; `acc` has room for the result (the tests' way to make multiples).
#[cfg(test)]
fn mul_add_small(acc: &mut [u64], row: &[u64], k: u64) {
    let mut carry = 0u64;
    for (x, y) in acc.iter_mut().zip(row) {
        let t = u128::from(*x) + u128::from(*y) * u128::from(k) + u128::from(carry);
        *x = t as u64;
        carry = (t >> 64) as u64;
    }
    for x in &mut acc[row.len()..] {
        if carry == 0 {
            break;
        }
        let (s, c) = x.overflowing_add(carry);
        *x = s;
        carry = u64::from(c);
    }
    debug_assert_eq!(carry, 0);
}

/// `acc -= row · k`; the result is not negative.
#[cfg(test)]
fn mul_sub_small(acc: &mut [u64], row: &[u64], k: u64) {
    let mut borrow = 0u64;
    for (x, y) in acc.iter_mut().zip(row) {
        let p = u128::from(*y) * u128::from(k) + u128::from(borrow);
        let (s, b) = x.overflowing_sub(p as u64);
        *x = s;
        borrow = ((p >> 64) as u64) + u64::from(b);
    }
    for x in &mut acc[row.len()..] {
        if borrow == 0 {
            break;
        }
        let (s, b) = x.overflowing_sub(borrow);
        *x = s;
        borrow = u64::from(b);
    }
    debug_assert_eq!(borrow, 0);
}

/// `a /= d` for a `d > 0` known to divide `a`: the powers of two by a shift, the odd part by
/// multiplying with its inverse modulo 2^64 from the low word up (Hensel's exact division, no
/// hardware division).
fn div_exact_small(a: &mut [u64], d: u64) {
    let t = d.trailing_zeros();
    if t > 0 {
        for i in 0..a.len() {
            let hi = a.get(i + 1).map_or(0, |h| h << (64 - t));
            a[i] = (a[i] >> t) | hi;
        }
    }
    let d = d >> t;
    if d == 1 {
        return;
    }
    let inv = inverse_mod_word(d);
    let mut borrow = 0u64;
    for x in a.iter_mut() {
        let (s, b) = x.overflowing_sub(borrow);
        let q = s.wrapping_mul(inv);
        *x = q;
        // q·d has `s` as its low word; its high word (and the borrow) come off the next word.
        borrow = ((u128::from(q) * u128::from(d)) >> 64) as u64 + u64::from(b);
    }
    debug_assert_eq!(borrow, 0, "not a multiple of {d}");
}

/// The inverse of an odd `d` modulo 2^64, by Newton's iteration: `d · d ≡ 1 (mod 8)`, and each
/// step doubles the bits that are right (3, 6, 12, 24, 48, 96).
fn inverse_mod_word(d: u64) -> u64 {
    debug_assert!(d % 2 == 1);
    let mut x = d;
    for _ in 0..5 {
        x = x.wrapping_mul(2u64.wrapping_sub(d.wrapping_mul(x)));
    }
    x
}

/// One die added: `next[i] = acc[i − width] + … + acc[i]` for `i < half`, by a sliding
/// window, on the low `A` words of every count (the rest are zero).
fn step<const A: usize>(
    acc: &[u64],
    next: &mut [u64],
    len: usize,
    width: usize,
    half: usize,
    limbs: usize,
) {
    let mut window = [0u64; A];
    for i in 0..half {
        if i < len {
            add_words(&mut window, &acc[i * limbs..i * limbs + A]);
        }
        if i > width {
            let j = i - width - 1;
            sub_words(&mut window, &acc[j * limbs..j * limbs + A]);
        }
        next[i * limbs..i * limbs + A].copy_from_slice(&window);
    }
}

/// [`step`] for counts of more than eight words.
fn step_wide(
    acc: &[u64],
    next: &mut [u64],
    len: usize,
    width: usize,
    half: usize,
    limbs: usize,
    active: usize,
) {
    let mut window = vec![0u64; active];
    for i in 0..half {
        if i < len {
            add_words(&mut window, &acc[i * limbs..i * limbs + active]);
        }
        if i > width {
            let j = i - width - 1;
            sub_words(&mut window, &acc[j * limbs..j * limbs + active]);
        }
        next[i * limbs..i * limbs + active].copy_from_slice(&window);
    }
}

/// `a += b` over equal lengths; the caller knows the sum fits (it is at most a total).
#[inline(always)]
fn add_words(a: &mut [u64], b: &[u64]) {
    let mut carry = false;
    for (x, y) in a.iter_mut().zip(b) {
        let (s, c1) = x.overflowing_add(*y);
        let (s, c2) = s.overflowing_add(u64::from(carry));
        *x = s;
        carry = c1 | c2;
    }
    debug_assert!(!carry);
}

/// `a -= b` over equal lengths, `b <= a`.
#[inline(always)]
fn sub_words(a: &mut [u64], b: &[u64]) {
    let mut borrow = false;
    for (x, y) in a.iter_mut().zip(b) {
        let (s, b1) = x.overflowing_sub(*y);
        let (s, b2) = s.overflowing_sub(u64::from(borrow));
        *x = s;
        borrow = b1 | b2;
    }
    debug_assert!(!borrow);
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

    fn big(words: &[u64]) -> BigUint {
        words.iter().rev().fold(BigUint::from(0u32), |acc, w| {
            (acc << 64) + BigUint::from(*w)
        })
    }

    /// The counts by repeated convolution in big integers, the obvious way.
    fn by_convolution(f: u64, n: u64) -> Vec<BigUint> {
        let mut acc = vec![BigUint::from(1u32)];
        for _ in 0..n {
            let mut next = vec![BigUint::from(0u32); acc.len() + f as usize - 1];
            for (i, a) in acc.iter().enumerate() {
                for slot in &mut next[i..i + f as usize] {
                    *slot += a;
                }
            }
            acc = next;
        }
        acc
    }

    fn check(f: u64, n: u64, got: &[u64], limbs: usize, kernel: &str) {
        let want = by_convolution(f, n);
        assert_eq!(got.len(), want.len() * limbs, "{kernel}: {n}d{f}");
        for (i, w) in want.iter().enumerate() {
            assert_eq!(
                &big(&got[i * limbs..(i + 1) * limbs]),
                w,
                "{kernel}: {n}d{f} at {i}"
            );
        }
    }

    #[test]
    fn counts_match_convolution_across_word_boundaries() {
        // 6^25 needs two words, 6^100 five, 2^600 ten (the path past eight words); 2^64 and
        // 16^16 are the first totals past one word (their counts still fit one), 2^63 the last
        // that fits; a thousand faces make large factors in the recurrence.
        for (f, n) in [
            (1, 5),
            (2, 1),
            (6, 0),
            (6, 1),
            (6, 2),
            (6, 3),
            (6, 5),
            (6, 25),
            (6, 100),
            (7, 33),
            (2, 63),
            (2, 64),
            (16, 16),
            (2, 600),
            (1000, 7),
            (3, 257),
        ] {
            let limbs = limbs_needed(f, n, 64).unwrap();
            let got = flat_sum(f, n, limbs, |_, _| Ok::<_, ()>(())).unwrap();
            check(f, n, &got, limbs, "flat_sum");
            let got = flat_sum_sliding(f, n, limbs, |_, _| Ok::<_, ()>(())).unwrap();
            check(f, n, &got, limbs, "sliding");
            check(f, n, &flat_sum_recurrence(f, n, limbs), limbs, "recurrence");
            // More words than needed change nothing.
            check(
                f,
                n,
                &flat_sum_recurrence(f, n, limbs + 1),
                limbs + 1,
                "recurrence, a spare word",
            );
        }
    }

    #[test]
    fn exact_division_by_small_numbers() {
        let q = [0x0123_4567_89ab_cdef, u64::MAX, 0, 0xfedc_ba98_7654_3210, 7];
        for d in [
            1,
            2,
            3,
            5,
            6,
            64,
            96,
            1 << 40,
            1 << 63,
            12_345_678_901,
            u64::MAX,
        ] {
            // a = q · d in six words, divided back.
            let mut a = vec![0u64; 6];
            mul_add_small(&mut a, &q, d);
            div_exact_small(&mut a, d);
            assert_eq!(&a[..5], &q, "÷{d}");
            assert_eq!(a[5], 0, "÷{d}");
        }
        for d in (1..200u64).step_by(2) {
            assert_eq!(d.wrapping_mul(inverse_mod_word(d)), 1, "{d}");
        }
        let mut a = vec![10, 3];
        mul_sub_small(&mut a, &[3, 1], 3);
        assert_eq!(a, vec![1, 0]);
    }

    proptest::proptest! {
        #[test]
        fn the_recurrence_equals_the_sliding_window(f in 1u64..=40, n in 0u64..=60) {
            let limbs = limbs_needed(f, n, 64).unwrap();
            let slid = flat_sum_sliding(f, n, limbs, |_, _| Ok::<_, ()>(())).unwrap();
            proptest::prop_assert_eq!(flat_sum_recurrence(f, n, limbs), slid);
        }
    }

    #[test]
    fn word_counts_are_those_of_the_total() {
        assert_eq!(limbs_needed(6, 24, 8), Some(1));
        assert_eq!(limbs_needed(6, 25, 8), Some(2));
        assert_eq!(limbs_needed(6, 100, 8), Some(5));
        assert_eq!(limbs_needed(6, 100, 4), None);
        assert_eq!(limbs_needed(1, 1000, 1), Some(1));
    }

    #[test]
    fn a_refused_step_stops_the_sum() {
        let mut steps = 0;
        let r = flat_sum(6, 10, 1, |_, _| {
            steps += 1;
            if steps > 3 { Err("limit") } else { Ok(()) }
        });
        assert_eq!(r, Err("limit"));
    }
}
