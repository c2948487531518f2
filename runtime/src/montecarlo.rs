//! Monte Carlo estimates for queries too large to enumerate: the interpreter, run many times
//! from one seeded stream, with Wilson 95% intervals per outcome.

use std::collections::BTreeMap;

use sandtable_ir::Program;

use crate::error::RunError;
use crate::interp::{Assumptions, Ctx, Interp, NoGame};
use crate::jit::Backend;
use crate::rng::Dice;
use crate::value::{OutcomeKey, Val};

#[derive(Debug, Clone)]
pub struct Estimate {
    pub samples: u64,
    pub counts: BTreeMap<OutcomeKey, u64>,
}

impl Estimate {
    pub fn mean(&self) -> Option<f64> {
        let mut sum = 0f64;
        for (k, n) in &self.counts {
            sum += k.numeric()? as f64 * *n as f64;
        }
        Some(sum / self.samples.max(1) as f64)
    }
}

pub fn sample(
    program: &Program,
    assumptions: &Assumptions,
    proc: u32,
    args: &[Val],
    samples: u64,
    seed: u64,
) -> Result<Estimate, RunError> {
    let interp = Interp::new(program, assumptions);
    let mut dice = Dice::new(seed);
    let mut host = NoGame;
    let mut counts = BTreeMap::new();
    for _ in 0..samples {
        let mut ctx = Ctx::new(&mut dice, &mut host);
        let out = interp.run(proc, args.to_vec(), &mut ctx)?;
        *counts.entry(out.key).or_insert(0u64) += 1;
    }
    Ok(Estimate { samples, counts })
}

/// Samples between two calls of the progress callback.
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// The same estimate on a chosen backend: identical counts for the same seed, since both
/// backends draw the same dice. On the JIT, a compiled loop runs the resolutions and counts
/// their outcomes ([`crate::jit::Sampler`]).
pub fn sample_with(
    backend: &Backend,
    proc: u32,
    args: &[Val],
    samples: u64,
    seed: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Estimate, RunError> {
    let mut dice = Dice::new(seed);
    let mut counts = BTreeMap::new();
    if let Some(jit) = backend.jit.as_ref().filter(|j| j.is_compiled(proc))
        && let Some(raw) = jit.encode_args(proc, args).and_then(Result::ok)
        && let Ok(Some(sampler)) = jit.sampler(proc, &raw)
    {
        // One compiled loop counts a batch of raw results; each distinct one is decoded once
        // at the end.
        let mut raw_counts = sampler.counts();
        let mut done = 0;
        while done < samples {
            progress(done);
            let batch = PROGRESS_EVERY.min(samples - done);
            sampler.run(batch, &mut dice, &mut raw_counts)?;
            done += batch;
        }
        for ((status, value), n) in raw_counts.counts() {
            *counts.entry(sampler.decode(status, value)).or_insert(0u64) += n;
        }
        return Ok(Estimate { samples, counts });
    }
    let mut host = NoGame;
    for i in 0..samples {
        let out = backend.run(proc, args, &mut dice, &mut host)?;
        *counts.entry(out.key).or_insert(0u64) += 1;
        if i % PROGRESS_EVERY == 0 {
            progress(i);
        }
    }
    Ok(Estimate { samples, counts })
}

/// Wilson score interval at 95% for `k` successes in `n` trials.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let n_f = n as f64;
    let p = k as f64 / n_f;
    let denom = 1.0 + z * z / n_f;
    let centre = (p + z * z / (2.0 * n_f)) / denom;
    let half = z * ((p * (1.0 - p) / n_f) + z * z / (4.0 * n_f * n_f)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::wilson;

    #[test]
    fn wilson_interval_contains_the_estimate_and_narrows_with_samples() {
        let (lo, hi) = wilson(50, 100);
        assert!(lo < 0.5 && hi > 0.5);
        let (lo2, hi2) = wilson(5000, 10000);
        assert!(hi2 - lo2 < hi - lo);
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }
}
