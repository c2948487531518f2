//! Criterion benches of the hot kernels of exact evaluation (`crate::dense`) and of the dice
//! stream. Whole queries are compared with icepool by `compare_icepool.sh`; playouts and
//! sampling by `sandtable sim`/`sandtable bench`.
//!
//! Run: `cargo bench -p sandtable-runtime --bench kernels` (add `-- --quick` for a short run).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use num_bigint::BigUint;
use sandtable_runtime::dense::{self, Cmp, Dense, Fail};
use sandtable_runtime::dist::{Dist, Weight};
use sandtable_runtime::rng::Dice;

fn die<W: Weight>(sides: i64) -> Dense<W> {
    Dense::from_dist(&Dist::uniform(1..=sides)).expect("a dN is dense")
}

fn no_budget(_: usize, _: usize) -> Result<(), Fail> {
    Ok(())
}

fn kernels(c: &mut Criterion) {
    let d10: Dense<u64> = die(10);
    c.bench_function("dense/d10 + 4 - d10 (opposed roll)", |b| {
        b.iter(|| {
            let a = dense::shift(black_box(&d10), 4).unwrap();
            dense::add(&a, &dense::neg(black_box(&d10)).unwrap()).unwrap()
        })
    });
    c.bench_function("dense/d10 > d10 (comparison)", |b| {
        b.iter(|| dense::compare(Cmp::Gt, black_box(&d10), black_box(&d10)).unwrap())
    });
    let two_d6 = dense::add(&die::<u64>(6), &die::<u64>(6)).unwrap();
    c.bench_function("dense/max(2d6, 2d6)", |b| {
        b.iter(|| dense::extreme(black_box(&two_d6), black_box(&two_d6), true).unwrap())
    });
    let seven: Dense<u64> = Dense::point(7);
    c.bench_function("dense/7 - 2d6 (a constant minus a distribution)", |b| {
        b.iter(|| dense::sub(black_box(&seven), black_box(&two_d6)).unwrap())
    });
    let d6: Dense<u64> = die(6);
    c.bench_function("dense/20d6 (u64 weights)", |b| {
        b.iter(|| dense::sum_of(black_box(&d6), 20, no_budget).unwrap())
    });
    let d6big: Dense<BigUint> = die(6);
    c.bench_function("dense/100d6 (big weights)", |b| {
        b.iter(|| dense::sum_of(black_box(&d6big), 100, no_budget).unwrap())
    });
    c.bench_function("limbs/100d6 (counts in 64-bit words, no conversion)", |b| {
        b.iter(|| {
            sandtable_runtime::limbs::flat_sum(6, black_box(100), 5, |_, _| Ok::<_, Fail>(()))
                .unwrap()
        })
    });
    let faces: Vec<(i64, u64)> = (1..=6).map(|f| (f, 1)).collect();
    c.bench_function("dense/highest 3 of 10d6", |b| {
        b.iter(|| dense::keep::<u64>(3, black_box(10), &faces, true).unwrap())
    });
    c.bench_function("dense/successes(12d6, 4)", |b| {
        b.iter(|| dense::binomial_count::<u64>(black_box(12), 3, 6).unwrap())
    });
    let branches: Vec<(u64, Dense<u64>)> = (0..=12)
        .map(|n| (1, dense::binomial_count::<u64>(n, 2, 6).unwrap()))
        .collect();
    c.bench_function("dense/mixture of 13 binomials", |b| {
        b.iter(|| dense::mixture(black_box(branches.clone()), &13).unwrap())
    });
    c.bench_function("rng/1000 d6 rolls", |b| {
        let mut dice = Dice::new(1);
        b.iter(|| {
            let mut s = 0u64;
            for _ in 0..1000 {
                s += u64::from(dice.index(black_box(6)));
            }
            s
        })
    });
}

criterion_group!(benches, kernels);
criterion_main!(benches);
