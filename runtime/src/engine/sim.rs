//! Many games in parallel. Game `i` of a run with seed `s` is the game `run --seed s+i`
//! plays, whatever thread plays it; totals are integer sums, so they do not depend on how the
//! games were spread over threads.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde::Serialize;

use super::policy;
use super::state::Winner;
use super::{EngineError, Game, GameResult, Rules};
use crate::jit::{BackendKind, JitProgram};

/// Games per unit of parallel work.
const CHUNK: u64 = 32;

/// Stack of each worker thread: the same as the CLI's command thread (`run`), because a game
/// recurses over the rules' expressions exactly as deeply in `sim` as in `run`. Only the
/// pages a game touches are committed.
pub const WORKER_STACK_BYTES: usize = 256 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub games: u64,
    /// Wins per side id.
    pub wins: Vec<u64>,
    pub draws: u64,
    pub turns: u64,
    /// Units lost per side id, summed over games.
    pub losses: Vec<u64>,
    pub decisions: u64,
    /// Pieces that left the board per side id, summed over games.
    pub exits: Vec<u64>,
    /// Wins per side id that its exits decided ([`GameResult::won_by_exits`]).
    pub wins_by_exits: Vec<u64>,
}

impl Totals {
    fn new(sides: usize) -> Self {
        Totals {
            games: 0,
            wins: vec![0; sides],
            draws: 0,
            turns: 0,
            losses: vec![0; sides],
            decisions: 0,
            exits: vec![0; sides],
            wins_by_exits: vec![0; sides],
        }
    }
    fn merge(&mut self, t: &Totals) {
        self.games += t.games;
        for s in 0..self.wins.len() {
            self.wins[s] += t.wins[s];
            self.losses[s] += t.losses[s];
            self.exits[s] += t.exits[s];
            self.wins_by_exits[s] += t.wins_by_exits[s];
        }
        self.draws += t.draws;
        self.turns += t.turns;
        self.decisions += t.decisions;
    }
    fn add(&mut self, r: &GameResult) {
        self.games += 1;
        match r.winner {
            Winner::Side(s) => {
                self.wins[s as usize] += 1;
                self.wins_by_exits[s as usize] += u64::from(r.won_by_exits);
            }
            Winner::Draw => self.draws += 1,
        }
        for (t, x) in self.exits.iter_mut().zip(&r.exits) {
            *t += u64::from(*x);
        }
        self.turns += u64::from(r.turns);
        for (t, l) in self.losses.iter_mut().zip(&r.losses) {
            *t += u64::from(*l);
        }
        self.decisions += u64::from(r.decisions);
    }
}

/// Play one game headless with the named policies (one per side id).
pub fn play_one(
    rules: &Rules,
    jit: Option<&JitProgram>,
    seed: u64,
    policies: &[String],
) -> Result<GameResult, EngineError> {
    let mut ps =
        policy::for_sides_in(rules.program, policies, seed).map_err(EngineError::Policy)?;
    let mut g = Game::new(rules, seed, jit);
    g.logging = false;
    g.play(&mut ps)
}

/// Play `games` games from `seed` on `jobs` threads; `progress` hears how many finished.
pub fn simulate(
    rules: &Rules,
    games: u64,
    seed: u64,
    jobs: usize,
    backend: BackendKind,
    policies: &[String],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Totals, EngineError> {
    let never = AtomicBool::new(false);
    simulate_until(
        rules, games, seed, jobs, backend, policies, progress, &never,
    )
}

/// [`simulate`] that stops starting games once `stop` is set (an interrupt): the totals are
/// then those of the games finished, fewer than `games`.
#[allow(clippy::too_many_arguments)]
pub fn simulate_until(
    rules: &Rules,
    games: u64,
    seed: u64,
    jobs: usize,
    backend: BackendKind,
    policies: &[String],
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<Totals, EngineError> {
    if policies.contains(&"human".to_string()) {
        return Err(EngineError::Policy(
            "`sim` plays without a terminal: use `run` for a human policy".into(),
        ));
    }
    in_parallel(
        rules.program.sides.len(),
        games,
        seed,
        jobs,
        || match backend {
            BackendKind::Jit => JitProgram::compile(rules.program, rules.assumptions).ok(),
            BackendKind::Interp => None,
        },
        |jit, s| play_one(rules, jit.as_ref(), s, policies),
        progress,
        stop,
    )
}

/// Games played by a caller's own playout function (a hand-written reference measured
/// against the engine) over the same games and threads as [`simulate`].
pub fn simulate_playouts(
    sides: usize,
    games: u64,
    seed: u64,
    jobs: usize,
    playout: impl Fn(u64) -> GameResult + Sync + Send,
) -> Result<Totals, EngineError> {
    in_parallel(
        sides,
        games,
        seed,
        jobs,
        || (),
        |_, s| Ok(playout(s)),
        &|_| {},
        &AtomicBool::new(false),
    )
}

/// Games `0..games` (game `i` with seed `seed + i`) in chunks over a pool of `jobs` threads;
/// `init` makes what each worker keeps (compiled code), `play` plays one game. The totals are
/// integer sums, so they do not depend on how chunks were spread; the first failing game (by
/// number) is the error reported. Once `stop` is set no game starts.
#[allow(clippy::too_many_arguments)]
fn in_parallel<W>(
    sides: usize,
    games: u64,
    seed: u64,
    jobs: usize,
    init: impl Fn() -> W + Sync + Send,
    play: impl Fn(&mut W, u64) -> Result<GameResult, EngineError> + Sync + Send,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<Totals, EngineError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .stack_size(WORKER_STACK_BYTES)
        .build()
        .map_err(|e| EngineError::Policy(format!("cannot start {jobs} threads: {e}")))?;
    let results: Vec<Result<Totals, (u64, EngineError)>> = pool.install(|| {
        (0..games.div_ceil(CHUNK))
            .into_par_iter()
            .map_init(&init, |worker, c| {
                let mut t = Totals::new(sides);
                let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(games));
                for i in lo..hi {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    t.add(&play(worker, seed.wrapping_add(i)).map_err(|e| (i, e))?);
                }
                progress(t.games);
                Ok(t)
            })
            .collect()
    });
    let mut total = Totals::new(sides);
    for r in results {
        let t = r.map_err(|(i, e)| {
            EngineError::Policy(format!(
                "game {i} (seed {}) failed: {e}",
                seed.wrapping_add(i)
            ))
        })?;
        total.merge(&t);
    }
    Ok(total)
}

/// Wilson score interval at 95 % for `k` successes in `n` trials.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let (n, p) = (n as f64, k as f64 / n as f64);
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / d;
    ((c - h).max(0.0), (c + h).min(1.0))
}
