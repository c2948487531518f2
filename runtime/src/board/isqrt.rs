//! Exact integer square roots (the floor, as `isqrt` gives) from a floating-point first guess.
//! The table measures every distance, chord and line length with one; the standard library's
//! digit-by-digit method was a fifth of a Plastic Battle playout. The guess is corrected by
//! one Newton step (for `u128`) and then stepped by one until it is exact, so the result is
//! the same as `isqrt` for every input.

/// `n.isqrt()`, exactly.
pub fn u64(n: u64) -> u64 {
    // An f64 has 53 bits: the guess is within a few units of the root for any u64.
    let mut r = (n as f64).sqrt() as u64;
    let sq = |r: u64| u128::from(r) * u128::from(r);
    while sq(r) > u128::from(n) {
        r -= 1;
    }
    while sq(r + 1) <= u128::from(n) {
        r += 1;
    }
    r
}

/// `n.isqrt()`, exactly.
pub fn u128(n: u128) -> u128 {
    if let Ok(small) = u64::try_from(n) {
        return u128::from(self::u64(small));
    }
    // Here the root is at least 2^32 and the f64 guess within 2^-52 of it relatively: one
    // Newton step leaves it within one of the root.
    let guess = ((n as f64).sqrt() as u128).max(1);
    let mut r = (guess + n / guess) / 2;
    let over = |r: u128| r.checked_mul(r).is_none_or(|s| s > n);
    while over(r) {
        r -= 1;
    }
    while !over(r + 1) {
        r += 1;
    }
    r
}

#[cfg(test)]
mod tests {
    fn check64(n: u64) {
        assert_eq!(super::u64(n), n.isqrt(), "isqrt({n})");
    }

    fn check128(n: u128) {
        assert_eq!(super::u128(n), n.isqrt(), "isqrt({n})");
    }

    #[test]
    fn agrees_with_the_standard_library_at_the_edges() {
        for r in (0..70u128).chain([1 << 20, (1 << 26) + 3, 94_906_265, u128::from(u32::MAX)]) {
            let s = r * r;
            // Just below, at and just past a square, and the last before the next one.
            for n in [s.saturating_sub(1), s, s + 1, s + 2 * r, s + 2 * r + 1] {
                check128(n);
                if let Ok(n) = u64::try_from(n) {
                    check64(n);
                }
            }
        }
        check64(u64::MAX);
        check64(u64::MAX - 1);
        for r in [1u128 << 32, (1 << 52) + 1, (1 << 60) - 7, u64::MAX as u128] {
            let s = r * r;
            // The next square past the largest root is past u128::MAX.
            for n in [s - 1, s, s + 1, s + 2 * r] {
                check128(n);
            }
            if let Some(n) = (s + 2 * r).checked_add(1) {
                check128(n);
            }
        }
        check128(u128::MAX);
        check128(u128::MAX - 1);
    }

    #[test]
    fn agrees_with_the_standard_library_on_random_values() {
        // splitmix64: a fixed, spread-out sequence.
        let mut state = 18u64;
        let mut next = || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        for _ in 0..20_000 {
            let (a, b) = (next(), next());
            // Every magnitude, not only the huge ones uniform draws give.
            let n = u128::from(a) << 64 | u128::from(b);
            check128(n >> (a % 128));
            check64(b >> (a % 64));
        }
    }
}
