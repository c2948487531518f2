//! Sums of `n` flat dice (every face of a contiguous range equally likely: `100d6`) in
//! fixed-width 64-bit limbs, whatever weight type the caller wants at the end.
//!
//! Big integers pay an allocation and a length check per addition; here every count of the
//! sum is a row of `limbs` words in one flat buffer, and each step touches only the words its
//! own total needs (after `s` dice no count exceeds `f^s`), so the early steps of `100d6` run
//! on one word and only the last quarter on five. The counts of a flat die's sum are
//! symmetric, so each step computes the lower half and mirrors it.

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

/// The counts of each sum of `n` dice of `f` equally likely consecutive faces, lowest sum
/// first (`n·(f − 1) + 1` of them), each as `limbs` little-endian words in one buffer; `f^n`
/// must fit `limbs` words (see [`limbs_needed`]). `charge(len, f)` is called before each step
/// with the length of the counts so far, as the general kernel does.
pub fn flat_sum<E>(
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

    #[test]
    fn counts_match_convolution_across_word_boundaries() {
        // 6^25 needs two words, 6^100 five, 2^600 ten (the path past eight words).
        for (f, n) in [
            (1, 5),
            (2, 1),
            (6, 0),
            (6, 3),
            (6, 25),
            (6, 100),
            (7, 33),
            (2, 600),
        ] {
            let limbs = limbs_needed(f, n, 64).unwrap();
            let got = flat_sum(f, n, limbs, |_, _| Ok::<_, ()>(())).unwrap();
            let want = by_convolution(f, n);
            assert_eq!(got.len(), want.len() * limbs, "{n}d{f}");
            for (i, w) in want.iter().enumerate() {
                assert_eq!(&big(&got[i * limbs..(i + 1) * limbs]), w, "{n}d{f} at {i}");
            }
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
