//! `mcts`: information-set Monte Carlo tree search over the stepwise engine.
//!
//! Each iteration plays one possible world: a copy of the game in which the pieces the side
//! cannot see are shuffled among themselves (what it knows of them is where they stand and
//! how many there are) and the dice are fresh, so the search learns neither hidden
//! identities nor the rolls to come. In that world it walks down one shared tree, choosing by
//! UCT among the choices that world offers (a child's count of worlds it was available in
//! stands in for its parent's visits), adds one node, plays on at random to the end, and
//! scores the end for every side that chose on the way (1 a win, ½ a draw, 0 a loss). The
//! answer is the choice tried most often.
//!
//! Everything random comes from the policy's own stream, seeded from the game seed and the
//! side: with `mcts:ITERATIONS` a game is the same whatever the machine or `--jobs`. A time
//! budget (`mcts:ITERATIONS:MILLIS`) stops sooner on a slow machine, so it is not.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use sandtable_ir::SideId;

use super::policy::Policy;
use super::state::Winner;
use super::{Choice, EngineError, Game, stream_seed};
use crate::rng::{Dice, DiceState};

/// UCT's exploration constant for rewards in `0..=1`.
const EXPLORE: f64 = std::f64::consts::SQRT_2;

pub struct Mcts {
    dice: Dice,
    iterations: u32,
    budget: Option<Duration>,
}

#[derive(Default)]
struct Node {
    /// The side whose choice led here (none at the root).
    mover: Option<SideId>,
    visits: u32,
    /// Iterations in which this node's choice was offered.
    available: u32,
    reward: f64,
    children: HashMap<Choice, usize>,
}

impl Mcts {
    pub fn new(seed: u64, side: SideId, iterations: u32, budget: Option<Duration>) -> Self {
        Mcts {
            dice: Dice::new(stream_seed(seed, 201 + u64::from(side))),
            iterations: iterations.max(1),
            budget,
        }
    }

    /// `ITERATIONS` or `ITERATIONS:MILLIS` (what follows `mcts:`).
    pub fn parse(spec: &str) -> Result<(u32, Option<Duration>), String> {
        let bad = || {
            format!(
                "`mcts:{spec}`: write mcts:ITERATIONS or mcts:ITERATIONS:MILLIS (ITERATIONS 1 to 1000000)"
            )
        };
        let (n, ms) = match spec.split_once(':') {
            Some((n, ms)) => (n, Some(ms)),
            None => (spec, None),
        };
        let n: u32 = n.parse().map_err(|_| bad())?;
        if !(1..=1_000_000).contains(&n) {
            return Err(bad());
        }
        let ms = match ms {
            Some(ms) => Some(Duration::from_millis(
                ms.parse::<u64>().ok().filter(|m| *m > 0).ok_or_else(bad)?,
            )),
            None => None,
        };
        Ok((n, ms))
    }

    fn seed(&mut self) -> u64 {
        (u64::from(self.dice.index(u32::MAX)) << 32) | u64::from(self.dice.index(u32::MAX))
    }

    fn search(&mut self, game: &Game, side: SideId) -> Result<usize, EngineError> {
        let mut tree = vec![Node::default()];
        let started = Instant::now();
        for _ in 0..self.iterations {
            if self.budget.is_some_and(|b| started.elapsed() >= b) {
                break;
            }
            let seed = self.seed();
            let mut g = game.possible_world(side, seed);
            let mut path = vec![0usize];
            let mut node = 0usize;
            // Down the tree while every choice offered here has been tried.
            while let Some(mover) = g.to_move() {
                let legal = g.legal();
                let mut untried = Vec::new();
                let mut best: Option<(f64, usize, usize)> = None;
                for (k, c) in legal.iter().enumerate() {
                    match tree[node].children.get(c) {
                        None => untried.push(k),
                        Some(&child) => {
                            let n = &mut tree[child];
                            n.available += 1;
                            let score = if n.visits == 0 {
                                f64::INFINITY
                            } else {
                                n.reward / f64::from(n.visits)
                                    + EXPLORE
                                        * (f64::from(n.available).ln() / f64::from(n.visits)).sqrt()
                            };
                            if best.is_none_or(|(b, _, _)| score > b) {
                                best = Some((score, k, child));
                            }
                        }
                    }
                }
                if !untried.is_empty() {
                    let k = untried[self.dice.index(untried.len() as u32) as usize];
                    let child = tree.len();
                    tree.push(Node {
                        mover: Some(mover),
                        available: 1,
                        ..Node::default()
                    });
                    tree[node].children.insert(legal[k].clone(), child);
                    g.apply(k)?;
                    path.push(child);
                    break;
                }
                let Some((_, k, child)) = best else { break };
                g.apply(k)?;
                node = child;
                path.push(child);
            }
            // Then at random to the end.
            while g.to_move().is_some() {
                let k = self.dice.index(g.legal().len() as u32) as usize;
                g.apply(k)?;
            }
            let winner = g.result().map_or(Winner::Draw, |r| r.winner);
            for &n in &path {
                let node = &mut tree[n];
                node.visits += 1;
                node.reward += match (node.mover, winner) {
                    (Some(s), Winner::Side(w)) if s == w => 1.0,
                    (Some(_), Winner::Draw) => 0.5,
                    _ => 0.0,
                };
            }
        }
        // The choice tried most often; ties go to the earliest offered.
        let legal = game.legal();
        let mut pick = 0;
        let mut most = 0;
        for (k, c) in legal.iter().enumerate() {
            let v = tree[0].children.get(c).map_or(0, |&n| tree[n].visits);
            if v > most {
                most = v;
                pick = k;
            }
        }
        Ok(pick)
    }
}

impl Policy for Mcts {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        if choices.len() <= 1 {
            return Ok(0);
        }
        self.search(game, side)
    }
    fn stream(&self) -> Option<DiceState> {
        self.dice.portable()
    }
    fn restore(&mut self, stream: &DiceState) -> Result<(), String> {
        self.dice = Dice::from_portable(stream)?;
        Ok(())
    }
}
