//! `mcts`: information-set Monte Carlo tree search over the stepwise engine.
//!
//! Each iteration plays one possible world: a copy of the game in which the pieces the side
//! cannot see are shuffled among themselves (what it knows of them is where they stand and
//! how many there are) and the dice are fresh, so the search learns neither hidden
//! identities nor the rolls to come. In that world it walks down one shared tree, choosing by
//! UCT among the choices that world offers (a child's count of worlds it was available in
//! stands in for its parent's visits), adds one node, and plays on to its horizon: the end of
//! the side's turn (the next decision that is another side's, or the end of the game). The
//! position there is scored as `greedy` scores one ([`Game::into_value`]: who would win now,
//! the scores, the losses), squashed to `0..=1` around the value of the position searched
//! from, so the search plans a whole turn of the side's choices (which unit, in which order,
//! moving where) against the dice instead of one choice at a time.
//!
//! A decision can offer hundreds of choices and an iteration adds one node, so a node may only
//! widen as it is visited (progressive widening: about `2√visits` children). At the root the
//! choices are tried in the order `greedy`'s look-ahead ranks them, ties going round the
//! kinds of choice (each action, deploying, holding, activating), so the search refines
//! greedy's best few and a lone shot is not queued behind sixty moves. Past the tree, and
//! when a deeper node widens, a choice is picked by kind: the kind with the best mean reward
//! so far for the side that decides (each side scored by its own reward), sometimes one at
//! random, then a choice of that kind at random. The answer is the choice tried most often,
//! ties to the better greedy rank.
//!
//! The tree is kept from one decision to the next when nothing but the side's own choice
//! (and chance) came between, as within one activation: the subtree under the choice made
//! becomes the next search's root, its visits count towards `ITERATIONS`, and at least half
//! of them are played afresh (the dice of that choice have fallen since, and the carried
//! statistics are of its average outcome). The kept subtree is the policy's memory: a save
//! holds it, so a resumed game decides as the uninterrupted one did. A world deals a deck's
//! undrawn cards anew, as it deals the hidden pieces: their order is a future nobody has seen.
//!
//! Everything random comes from the policy's own stream, seeded from the game seed and the
//! side: with `mcts:ITERATIONS` a game is the same whatever the machine or `--jobs`. A time
//! budget (`mcts:ITERATIONS:MILLIS`) stops sooner on a slow machine, so it is not.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use sandtable_ir::SideId;

use super::policy::{Policy, is_pick, lookahead_values};
use super::{Act, Choice, EngineError, Game, stream_seed};
use crate::rng::{Dice, DiceState};

/// UCT's exploration constant for rewards in `0..=1`.
const EXPLORE: f64 = std::f64::consts::SQRT_2;

/// Children a node may have after `visits` visits: about `WIDEN·√visits`.
const WIDEN: f64 = 2.0;

/// Position values ([`Game::into_value`] units: 10 a loss, 100 a score point) a reward of
/// 0.73 stands for, relative to the position searched from.
const VALUE_SCALE: f64 = 20.0;

/// Look-ahead samples per root choice when ranking them (as `greedy` does, fewer).
const PRIOR_SAMPLES: u32 = 2;

/// Decisions a roll-out plays at most before it is scored: a bound on work for rules whose
/// turns never end.
const ROLLOUT_LIMIT: usize = 10_000;

/// Turns of the searching side a playout covers (2: its turn now, the other sides' replies
/// and its next turn). Measured on Protecting the Flank, 40 games, `mcts:50` as the NVA: 1
/// won 77.5%, 2 won 75.0% at a quarter more work, so a playout ends with the side's turn.
const HORIZON_TURNS: u32 = 1;

/// Chance that a roll-out decision ignores what the search has learnt of action kinds.
const EPSILON: f64 = 0.25;

pub struct Mcts {
    dice: Dice,
    iterations: u32,
    budget: Option<Duration>,
    /// The subtree under the choice last made, and the game's decision count it was made
    /// at: the next search starts from it if nothing but that choice (and chance) came
    /// between.
    kept: Option<Kept>,
    /// Searches made and iterations played in them, over the policy's life.
    searches: u64,
    played: u64,
}

/// A subtree carried from one decision to the next (its root is node 0).
struct Kept {
    at: usize,
    tree: Vec<Node>,
}

/// Iterations a search always plays afresh, as a share of `ITERATIONS`, however many the
/// subtree it starts from already holds: the real dice have fallen since, so the carried
/// statistics are of the choice's average outcome, not of the one that came.
const FRESH_SHARE: u32 = 2;

/// What the search has learnt of each kind of choice (which action, or deploying, holding,
/// activating) for one side: its total reward and how often it was played. Roll-outs pick a
/// kind by it and then a choice of that kind at random, so a rare kind (one `fire_at` among
/// sixty moves) is not drowned by a common one (the move-average sampling of general game
/// players, by kind rather than by choice).
type Kinds = HashMap<Act, (f64, u32)>;

#[derive(Default)]
struct Node {
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
            kept: None,
            searches: 0,
            played: 0,
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

    /// Searches made so far, and the iterations they played: with subtrees carried over,
    /// fewer than `ITERATIONS` a search.
    pub fn work(&self) -> (u64, u64) {
        (self.searches, self.played)
    }

    fn seed(&mut self) -> u64 {
        (u64::from(self.dice.index(u32::MAX)) << 32) | u64::from(self.dice.index(u32::MAX))
    }

    /// The root's choices in the order greedy's look-ahead ranks them (best first, ties in
    /// list order), and the value of the position searched from. A `choose` inside an action
    /// has no position to score: list order.
    fn rank(&mut self, game: &Game, side: SideId) -> (Vec<usize>, i64) {
        let base = game.lookahead_copy(side, self.seed()).into_value(side);
        let legal = game.legal();
        let mut order: Vec<usize> = (0..legal.len()).collect();
        if is_pick(legal) {
            return (order, base);
        }
        let value = lookahead_values(game, side, legal, PRIOR_SAMPLES, &mut self.dice);
        // Ties (most moves change nothing at once) go round the kinds of choice: the first
        // of each kind, then the second of each, so a lone `fire_at` whose few samples all
        // missed is still opened among the first, not after sixty moves.
        let mut kinds: Vec<&Act> = Vec::new();
        let mut nth = vec![0usize; legal.len()];
        let mut seen: Vec<usize> = Vec::new();
        for (k, c) in legal.iter().enumerate() {
            let kind = match kinds.iter().position(|a| **a == c.act) {
                Some(x) => x,
                None => {
                    kinds.push(&c.act);
                    seen.push(0);
                    kinds.len() - 1
                }
            };
            nth[k] = seen[kind];
            seen[kind] += 1;
        }
        order.sort_by_key(|&k| (std::cmp::Reverse(value[k]), nth[k]));
        (order, base)
    }

    /// A roll-out's choice for `side`: mostly a choice of the kind with the best mean reward
    /// so far (a kind never tried counts as good as the best), otherwise a kind at random;
    /// then a choice of that kind at random. Kinds are taken in the order the choices list
    /// them, so the pick depends on nothing but the stream.
    fn by_kind(
        &mut self,
        kinds: &HashMap<SideId, Kinds>,
        side: SideId,
        legal: &[Choice],
        among: &[usize],
    ) -> usize {
        let mut order: Vec<&Act> = Vec::new();
        for &k in among {
            if !order.contains(&&legal[k].act) {
                order.push(&legal[k].act);
            }
        }
        let kind = if order.len() == 1 {
            order[0]
        } else if f64::from(self.dice.index(1 << 16)) < EPSILON * 65536.0 {
            order[self.dice.index(order.len() as u32) as usize]
        } else {
            let known = kinds.get(&side);
            let mean = |a: &Act| {
                known
                    .and_then(|t| t.get(a))
                    .map_or(f64::INFINITY, |(r, n)| r / f64::from(*n))
            };
            let top = order
                .iter()
                .map(|a| mean(a))
                .fold(f64::NEG_INFINITY, f64::max);
            let best: Vec<&Act> = order.iter().copied().filter(|a| mean(a) >= top).collect();
            best[self.dice.index(best.len() as u32) as usize]
        };
        let of_kind: Vec<usize> = among
            .iter()
            .copied()
            .filter(|&k| legal[k].act == *kind)
            .collect();
        of_kind[self.dice.index(of_kind.len() as u32) as usize]
    }

    /// Search from `tree` (a carried subtree, or a lone root) and keep the subtree of the
    /// choice made for the next decision.
    fn search(
        &mut self,
        game: &Game,
        side: SideId,
        mut tree: Vec<Node>,
    ) -> Result<usize, EngineError> {
        let (order, base) = self.rank(game, side);
        let rank_of: HashMap<&Choice, usize> = order
            .iter()
            .enumerate()
            .map(|(r, &k)| (&game.legal()[k], r))
            .collect();
        let fresh = self
            .iterations
            .saturating_sub(tree[0].visits)
            .max(self.iterations / FRESH_SHARE)
            .max(1);
        let mut kinds: HashMap<SideId, Kinds> = HashMap::new();
        let mut acts: Vec<(SideId, Act)> = Vec::new();
        let started = Instant::now();
        self.searches += 1;
        'worlds: for _ in 0..fresh {
            if self.budget.is_some_and(|b| started.elapsed() >= b) {
                break;
            }
            self.played += 1;
            acts.clear();
            let seed = self.seed();
            // A world that cannot be played on teaches nothing, and is not the real game's
            // failure: waiting inside an action, a world replays the action from its start on
            // shuffled pieces and fresh dice, so the picks already made may no longer fit the
            // `choose` points it meets (a blind that is real in this world springs an ambush
            // the real one could not). Such a world is dropped, whatever its statistics; an
            // error of the rules themselves still stops the real game when it gets there.
            let mut g = game.possible_world(side, seed);
            if g.legal().is_empty() {
                // Nothing the real game offers is open in this world: it teaches nothing.
                continue;
            }
            let mut path = vec![0usize];
            let mut node = 0usize;
            // Down the tree, within the side's turn, until a node may widen.
            while g.to_move() == Some(side) {
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
                let room = (WIDEN * f64::from(tree[node].visits + 1).sqrt()).ceil() as usize;
                if !untried.is_empty() && (tree[node].children.len() < room || best.is_none()) {
                    let k = if node == 0 {
                        // Greedy's best untried choice (the world may lack some of the root's).
                        *untried
                            .iter()
                            .min_by_key(|&&k| rank_of.get(&legal[k]).copied().unwrap_or(usize::MAX))
                            .unwrap_or(&untried[0])
                    } else {
                        // Deeper, an untried choice by kind, as a roll-out would pick it.
                        self.by_kind(&kinds, side, legal, &untried)
                    };
                    let c = legal[k].clone();
                    if g.apply(k).is_err() {
                        continue 'worlds;
                    }
                    let child = tree.len();
                    tree.push(Node {
                        available: 1,
                        ..Node::default()
                    });
                    tree[node].children.insert(c.clone(), child);
                    acts.push((side, c.act));
                    path.push(child);
                    break;
                }
                let Some((_, k, child)) = best else { break };
                acts.push((side, legal[k].act.clone()));
                if g.apply(k).is_err() {
                    continue 'worlds;
                }
                node = child;
                path.push(child);
            }
            // Then on by kinds to the horizon: the end of the side's next turn.
            let mut ended = 0;
            let mut mine = true;
            let mut played = 0;
            while let Some(now) = g.to_move() {
                if (now == side) != mine {
                    mine = !mine;
                    if !mine {
                        ended += 1;
                    }
                }
                if ended >= HORIZON_TURNS || g.legal().is_empty() || played >= ROLLOUT_LIMIT {
                    break;
                }
                let all: Vec<usize> = (0..g.legal().len()).collect();
                let k = self.by_kind(&kinds, now, g.legal(), &all);
                acts.push((now, g.legal()[k].act.clone()));
                if g.apply(k).is_err() {
                    continue 'worlds;
                }
                played += 1;
            }
            let value = g.into_value(side);
            let reward = 1.0 / (1.0 + (-((value - base) as f64) / VALUE_SCALE).exp());
            for &n in &path {
                tree[n].visits += 1;
                tree[n].reward += reward;
            }
            // Each side learns from its own reward: what is good for one is bad for the other.
            for (s, act) in acts.drain(..) {
                let r = if s == side { reward } else { 1.0 - reward };
                let e = kinds.entry(s).or_default().entry(act).or_insert((0.0, 0));
                e.0 += r;
                e.1 += 1;
            }
        }
        // The choice tried most often; ties go to the better greedy rank.
        let legal = game.legal();
        let mut pick = order.first().copied().unwrap_or(0);
        let mut most = 0;
        for &k in &order {
            let v = tree[0]
                .children
                .get(&legal[k])
                .map_or(0, |&n| tree[n].visits);
            if v > most {
                most = v;
                pick = k;
            }
        }
        self.keep(&tree, &legal[pick], game);
        Ok(pick)
    }

    /// Carry the subtree under `choice` to the next decision, if the search opened it.
    fn keep(&mut self, tree: &[Node], choice: &Choice, game: &Game) {
        self.kept = tree[0].children.get(choice).map(|&c| Kept {
            at: game.flow.decisions,
            tree: subtree(tree, c),
        });
    }

    /// The carried subtree if `game` is the one it was kept for, one decision on (only the
    /// choice made, and chance, between); else a lone root.
    fn start(&mut self, game: &Game) -> Vec<Node> {
        match self.kept.take() {
            Some(k) if k.at + 1 == game.flow.decisions => k.tree,
            _ => vec![Node::default()],
        }
    }
}

impl Policy for Mcts {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        let tree = self.start(game);
        if choices.len() <= 1 {
            // A forced step: the subtree goes on under it.
            if let Some(c) = choices.first() {
                self.keep(&tree, c, game);
            }
            return Ok(0);
        }
        self.search(game, side, tree)
    }
    fn stream(&self) -> Option<DiceState> {
        self.dice.portable()
    }
    fn restore(&mut self, stream: &DiceState) -> Result<(), String> {
        self.dice = Dice::from_portable(stream)?;
        Ok(())
    }
    fn memory(&self) -> Option<serde_json::Value> {
        let k = self.kept.as_ref()?;
        serde_json::to_value(SavedTree {
            at: k.at,
            nodes: k.tree.iter().map(SavedNode::of).collect(),
        })
        .ok()
    }
    fn recall(&mut self, memory: &serde_json::Value) -> Result<(), String> {
        let bad = || "the saved search tree is damaged".to_string();
        let saved: SavedTree = serde_json::from_value(memory.clone()).map_err(|_| bad())?;
        let n = saved.nodes.len();
        let mut tree = Vec::with_capacity(n);
        for (i, s) in saved.nodes.into_iter().enumerate() {
            // Children come after their parent: the tree cannot loop.
            if s.children.iter().any(|(_, c)| *c <= i || *c >= n) {
                return Err(bad());
            }
            tree.push(Node {
                visits: s.visits,
                available: s.available,
                reward: f64::from_bits(s.reward),
                children: s.children.into_iter().collect(),
            });
        }
        if tree.is_empty() {
            return Err(bad());
        }
        self.kept = Some(Kept { at: saved.at, tree });
        Ok(())
    }
}

/// The subtree under node `root`, renumbered from 0 (children after their parent, in the
/// order they were opened), so its saved form is the same on every run.
fn subtree(tree: &[Node], root: usize) -> Vec<Node> {
    let mut old = vec![root];
    let mut k = 0;
    while k < old.len() {
        let mut kids: Vec<usize> = tree[old[k]].children.values().copied().collect();
        kids.sort_unstable();
        old.extend(kids);
        k += 1;
    }
    let new: HashMap<usize, usize> = old.iter().enumerate().map(|(n, &o)| (o, n)).collect();
    old.iter()
        .map(|&o| Node {
            visits: tree[o].visits,
            available: tree[o].available,
            reward: tree[o].reward,
            children: tree[o]
                .children
                .iter()
                .map(|(c, i)| (c.clone(), new[i]))
                .collect(),
        })
        .collect()
}

/// A carried subtree as a save holds it: rewards as their bits, so a resumed search adds
/// up exactly as the uninterrupted one.
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedTree {
    at: usize,
    nodes: Vec<SavedNode>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SavedNode {
    visits: u32,
    available: u32,
    reward: u64,
    children: Vec<(Choice, usize)>,
}

impl SavedNode {
    fn of(n: &Node) -> Self {
        let mut children: Vec<(Choice, usize)> =
            n.children.iter().map(|(c, i)| (c.clone(), *i)).collect();
        children.sort_unstable_by_key(|(_, i)| *i);
        SavedNode {
            visits: n.visits,
            available: n.available,
            reward: n.reward.to_bits(),
            children,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choices(moves: usize) -> Vec<Choice> {
        let mut v: Vec<Choice> = (0..moves)
            .map(|m| Choice {
                act: Act::Action(0),
                args: vec![crate::value::Val::Int(m as i64)],
            })
            .collect();
        v.push(Choice {
            act: Act::Action(1),
            args: Vec::new(),
        });
        v
    }

    #[test]
    fn a_rollout_picks_a_lone_kind_as_often_as_a_crowded_one() {
        let legal = choices(60);
        let all: Vec<usize> = (0..legal.len()).collect();
        let mut m = Mcts::new(1, 0, 1, None);
        let none = HashMap::new();
        let lone = (0..1000)
            .filter(|_| m.by_kind(&none, 0, &legal, &all) == 60)
            .count();
        // Uniform over the choices would give about 16 in 1000.
        assert!((400..=600).contains(&lone), "{lone}");
    }

    #[test]
    fn a_rollout_follows_what_the_side_learnt_of_kinds() {
        let legal = choices(60);
        let all: Vec<usize> = (0..legal.len()).collect();
        let mut m = Mcts::new(1, 0, 1, None);
        let mut learnt: HashMap<SideId, Kinds> = HashMap::new();
        let t = learnt.entry(0).or_default();
        t.insert(Act::Action(0), (9.0, 10));
        t.insert(Act::Action(1), (1.0, 10));
        let lone = (0..1000)
            .filter(|_| m.by_kind(&learnt, 0, &legal, &all) == 60)
            .count();
        // Only the random share of picks (EPSILON, half of it to the lone kind).
        assert!(lone < 250, "{lone}");
        // Another side's table is not this side's.
        let lone = (0..1000)
            .filter(|_| m.by_kind(&learnt, 1, &legal, &all) == 60)
            .count();
        assert!(lone > 400, "{lone}");
    }
}
