//! Who decides for a side: `random` (uniform over the legal choices), `greedy` (one step of
//! look-ahead on the scenario's own scoring), `human` (a numbered prompt on the terminal) and
//! `scripted` (the choices of a log, for replays).

use std::io::{BufRead, Write};

use sandtable_compiler::ir::SideId;

use super::{Choice, EngineError, Game, stream_seed};
use crate::rng::Dice;

pub trait Policy {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError>;
    /// Pick one of `options` at a `choose` point inside an action, in words as the side sees
    /// them. The game is mid-action here, so there is no position to look ahead from.
    fn choose_value(&mut self, side: SideId, options: &[String]) -> Result<usize, EngineError>;
}

/// The policy kinds a user can name on the command line.
pub const KINDS: &[&str] = &["random", "greedy", "human"];

pub struct Random {
    dice: Dice,
}

impl Random {
    pub fn new(seed: u64, side: SideId) -> Self {
        Random {
            dice: Dice::new(stream_seed(seed, 1 + u64::from(side))),
        }
    }
}

impl Policy for Random {
    fn choose(&mut self, _: &Game, _: SideId, choices: &[Choice]) -> Result<usize, EngineError> {
        Ok(self.dice.index(choices.len() as u32) as usize)
    }
    fn choose_value(&mut self, _: SideId, options: &[String]) -> Result<usize, EngineError> {
        Ok(self.dice.index(options.len() as u32) as usize)
    }
}

/// One step of look-ahead: each choice is played on `samples` copies of the game (own dice,
/// hidden pieces shuffled) and the position scored by [`Game::evaluate`]; the best mean wins,
/// ties broken at random.
pub struct Greedy {
    dice: Dice,
    samples: u32,
}

impl Greedy {
    pub fn new(seed: u64, side: SideId) -> Self {
        Greedy {
            dice: Dice::new(stream_seed(seed, 101 + u64::from(side))),
            samples: 4,
        }
    }
}

impl Policy for Greedy {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        let mut best: Vec<usize> = Vec::new();
        let mut best_value = i64::MIN;
        for (k, c) in choices.iter().enumerate() {
            let mut total = 0i64;
            for _ in 0..self.samples {
                let seed = (u64::from(self.dice.index(u32::MAX)) << 32)
                    | u64::from(self.dice.index(u32::MAX));
                let mut g = game.lookahead_copy(side, seed);
                // Choices inside the action are made at random in the look-ahead.
                let mut inner = Random::new(seed, side);
                total += match g.apply_with(side, c, Some(&mut inner)) {
                    Ok(()) => g.into_value(side),
                    Err(_) => i64::MIN / 1024,
                };
            }
            if total > best_value {
                best_value = total;
                best.clear();
            }
            if total == best_value {
                best.push(k);
            }
        }
        Ok(best[self.dice.index(best.len() as u32) as usize])
    }
    /// Mid-action there is no position to score: a uniform pick.
    fn choose_value(&mut self, _: SideId, options: &[String]) -> Result<usize, EngineError> {
        Ok(self.dice.index(options.len() as u32) as usize)
    }
}

/// Asks on the terminal: prints what the side can see and the numbered choices.
pub struct Human<R: BufRead, W: Write> {
    input: R,
    output: W,
}

impl<R: BufRead, W: Write> Human<R, W> {
    pub fn new(input: R, output: W) -> Self {
        Human { input, output }
    }
}

impl<R: BufRead, W: Write> Policy for Human<R, W> {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        let io = |e: std::io::Error| EngineError::Policy(format!("human policy: {e}"));
        writeln!(self.output, "\n{}", game.view(side)).map_err(io)?;
        let labels: Vec<String> = choices.iter().map(|c| game.label(side, c)).collect();
        self.ask(game.rules.side_name(side), &labels)
    }
    fn choose_value(&mut self, side: SideId, options: &[String]) -> Result<usize, EngineError> {
        let io = |e: std::io::Error| EngineError::Policy(format!("human policy: {e}"));
        writeln!(self.output, "\nA choice inside the action (side {side}):").map_err(io)?;
        self.ask("you", options)
    }
}

impl<R: BufRead, W: Write> Human<R, W> {
    fn ask(&mut self, who: &str, labels: &[String]) -> Result<usize, EngineError> {
        let io = |e: std::io::Error| EngineError::Policy(format!("human policy: {e}"));
        for (k, l) in labels.iter().enumerate() {
            writeln!(self.output, "  {:>3}. {l}", k + 1).map_err(io)?;
        }
        loop {
            write!(self.output, "{who} chooses (1-{}): ", labels.len()).map_err(io)?;
            self.output.flush().map_err(io)?;
            let mut line = String::new();
            if self.input.read_line(&mut line).map_err(io)? == 0 {
                return Err(EngineError::Policy(
                    "human policy: input ended before the game did".into(),
                ));
            }
            match line.trim().parse::<usize>() {
                Ok(n) if (1..=labels.len()).contains(&n) => return Ok(n - 1),
                _ => {
                    writeln!(self.output, "type a number from 1 to {}", labels.len()).map_err(io)?
                }
            }
        }
    }
}

/// Plays back the decisions of a log, checking each is offered again as recorded.
pub struct Scripted {
    /// (choice index, number of choices, label) per decision of this side, in order.
    pub script: std::collections::VecDeque<(usize, usize, String)>,
}

impl Policy for Scripted {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        let Some((k, of, label)) = self.script.pop_front() else {
            return Err(EngineError::Replay(
                "the game asks for more decisions than the log holds".into(),
            ));
        };
        if of != choices.len() || choices.get(k).is_none_or(|c| game.label(side, c) != label) {
            return Err(EngineError::Replay(format!(
                "the log's decision `{label}` (choice {} of {of}) is not offered by these rules at that point ({} choices)",
                k + 1,
                choices.len()
            )));
        }
        Ok(k)
    }
    fn choose_value(&mut self, _: SideId, options: &[String]) -> Result<usize, EngineError> {
        let Some((k, of, label)) = self.script.pop_front() else {
            return Err(EngineError::Replay(
                "the game asks for more decisions than the log holds".into(),
            ));
        };
        if of != options.len() || options.get(k).is_none_or(|o| choose_label(o) != label) {
            return Err(EngineError::Replay(format!(
                "the log's decision `{label}` (choice {} of {of}) is not offered by these rules at that point ({} options)",
                k + 1,
                options.len()
            )));
        }
        Ok(k)
    }
}

/// How a choice made inside an action is written in the log.
pub fn choose_label(option: &str) -> String {
    format!("choose {option}")
}

/// A policy by name, for a side, seeded from the game seed.
pub fn by_name(kind: &str, seed: u64, side: SideId) -> Result<Box<dyn Policy>, String> {
    match kind {
        "random" => Ok(Box::new(Random::new(seed, side))),
        "greedy" => Ok(Box::new(Greedy::new(seed, side))),
        "human" => Ok(Box::new(Human::new(
            std::io::BufReader::new(std::io::stdin()),
            std::io::stderr(),
        ))),
        other => Err(format!(
            "unknown policy `{other}`; policies are: {}",
            KINDS.join(", ")
        )),
    }
}
