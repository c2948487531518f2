//! A policy written in the rules (`policy NAME for SIDE { prefer … }`): at each decision its
//! rules are read in order, and the first one that some legal choice meets decides. Among the
//! choices it meets the highest `by` wins; ties, and decisions no rule meets, go to the
//! policy's own seeded dice. The conditions read a look-ahead copy of the game, so they know
//! what the side may know and never shift the game's dice.

use sandtable_ir::{PolicyDef, Preferred, ProcId, Program, SideId};

use super::host::GameHost;
use super::options::Act;
use super::policy::Policy;
use super::{Choice, EngineError, Game, stream_seed};
use crate::interp::{Ctx, Interp};
use crate::rng::{Dice, DiceState};
use crate::value::{OutcomeKey, Val};

pub struct Written {
    policy: usize,
    dice: Dice,
    /// Which rule made the last choice, for the log ([`Policy::reason`]).
    last: Option<String>,
}

impl Written {
    /// The policy `name` of `program` for `side`; `None` when the rules have no such policy.
    pub fn named(program: &Program, name: &str, seed: u64, side: SideId) -> Option<Self> {
        let policy = program.policies.iter().position(|p| p.name == name)?;
        Some(Written {
            policy,
            dice: Dice::new(stream_seed(seed, 201 + u64::from(side))),
            last: None,
        })
    }

    /// The candidates `rule` meets among `choices`, each with the arguments its hooks read.
    fn candidates(what: &Preferred, game: &Game, choices: &[Choice]) -> Vec<(usize, Vec<Val>)> {
        match what {
            Preferred::Hold => choices
                .iter()
                .enumerate()
                .filter(|(_, c)| c.act == Act::Hold)
                .map(|(k, c)| (k, c.args.clone()))
                .collect(),
            Preferred::Action(a) => choices
                .iter()
                .enumerate()
                .filter(|(_, c)| c.act == Act::Action(*a))
                .map(|(k, c)| (k, c.args.clone()))
                .collect(),
            Preferred::Deploy => choices
                .iter()
                .enumerate()
                .filter(|(_, c)| c.act == Act::Deploy)
                .map(|(k, c)| (k, c.args.clone()))
                .collect(),
            Preferred::Pick { option, action } => {
                let Some(inside) = game.flow.pending.as_ref().and_then(|d| d.inside.as_ref())
                else {
                    return Vec::new();
                };
                if inside.action.act != Act::Action(*action) {
                    return Vec::new();
                }
                choices
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.act == Act::Pick)
                    .filter(|(_, c)| match c.args.first() {
                        Some(Val::Int(k)) => inside.options.get(*k as usize) == Some(option),
                        _ => false,
                    })
                    .map(|(k, _)| (k, inside.action.args.clone()))
                    .collect()
            }
        }
    }

    /// The hook's result in `world`, rolling the policy's dice; `None` when it fails.
    fn eval(&mut self, world: &mut Game, hook: ProcId, args: Vec<Val>) -> Option<Val> {
        let rules = world.rules;
        let mut host = GameHost::quiet(rules, &mut world.state, &mut world.scratch);
        let interp = Interp::new(rules.program, rules.assumptions);
        let mut ctx = Ctx::new(&mut self.dice, &mut host);
        match interp.run(hook, args, &mut ctx).ok()?.key {
            OutcomeKey::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// Whichever of two states of the same dice has drawn more.
fn further(a: Option<Dice>, b: &Dice) -> Dice {
    match a {
        Some(a) if a.draws() > b.draws() => a,
        _ => b.clone(),
    }
}

impl Policy for Written {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        let program = game.rules.program;
        let def: &PolicyDef = &program.policies[self.policy];
        let seed =
            (u64::from(self.dice.index(u32::MAX)) << 32) | u64::from(self.dice.index(u32::MAX));
        let mut world = game.lookahead_copy(side, seed);
        for (n, rule) in def.rules.iter().enumerate() {
            let mut met: Vec<(usize, i64)> = Vec::new();
            // The set-up points offered for one piece are judged against the same dice: a
            // roll in the rule (a table quarter) is made once per piece placed, not per point.
            // The policy's dice go on from the furthest any point took them.
            let once = (rule.what == Preferred::Deploy).then(|| self.dice.clone());
            let mut furthest: Option<Dice> = None;
            for (k, args) in Self::candidates(&rule.what, game, choices) {
                if let Some(start) = &once {
                    furthest = Some(further(furthest.take(), &self.dice));
                    self.dice = start.clone();
                }
                if let Some(h) = rule.when
                    && self.eval(&mut world, h, args.clone()) != Some(Val::Bool(true))
                {
                    continue;
                }
                let rank = match rule.by {
                    Some(h) => match self.eval(&mut world, h, args) {
                        Some(Val::Int(n)) => n,
                        _ => continue,
                    },
                    None => 0,
                };
                met.push((k, rank));
            }
            if once.is_some() {
                self.dice = further(furthest, &self.dice);
            }
            if let Some(top) = met.iter().map(|m| m.1).max() {
                let best: Vec<usize> = met.iter().filter(|m| m.1 == top).map(|m| m.0).collect();
                self.last = Some(format!(
                    "{} rule {} at {}{}",
                    def.name,
                    n + 1,
                    rule.at,
                    crate::explain::cite(program, &rule.cite)
                ));
                return Ok(best[self.dice.index(best.len() as u32) as usize]);
            }
        }
        self.last = Some(format!("{}: no rule met, its own dice", def.name));
        Ok(self.dice.index(choices.len() as u32) as usize)
    }
    fn reason(&self) -> Option<String> {
        self.last.clone()
    }
    fn stream(&self) -> Option<DiceState> {
        self.dice.portable()
    }
    fn restore(&mut self, stream: &DiceState) -> Result<(), String> {
        self.dice = Dice::from_portable(stream)?;
        Ok(())
    }
}
