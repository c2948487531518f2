//! The flow of a game as data. Where a game stands (deployment, turn, phase, the chips left in
//! the cup, the deck being drawn, the alternation queues, hooks still to run, free actions
//! owed, a decision waiting inside an action) is a value in [`Flow`], not a place on the call
//! stack: a game can be stopped at any decision, copied, saved and played on.
//!
//! [`Game::advance`] runs everything that needs no one's decision and stops at the next
//! decision (or the end); [`Game::apply`] carries out one of the legal choices and advances
//! again. The order of dice draws and of events is the order the rules give: a game stepped
//! one decision at a time, or copied and resumed, rolls exactly the same dice.

use sandtable_ir::scenario::ScenarioEvent;
use sandtable_ir::{ProcId, SideId};
use serde::{Deserialize, Serialize};

use super::options::{Act, Choice};
use super::setup::{self, DeckCard};
use super::state::{Status, Winner};
use super::{EngineError, Event, Game, GameResult, MAX_DECISIONS};
use crate::error::RunError;
use crate::value::Val;

/// Where the game's turn sequence stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Stage {
    /// Nothing played yet.
    Begin,
    /// Set-up: the next piece (by index) that may be placed.
    Deploy { next: usize },
    /// Before the next turn (`state.turn + 1`).
    TurnBegin,
    /// Before phase `ph` of the current turn.
    PhaseBegin { ph: usize },
    /// Phase `ph`'s hooks have run: its activation starts.
    Activation { ph: usize },
    /// A chip cup: the chips still in it.
    Cup { ph: usize, cup: Vec<SideId> },
    /// A card deck being drawn: the pile (drawn from its end), the cards set aside, and how
    /// many draws this phase has left.
    Deck {
        ph: usize,
        pile: Vec<DeckCard>,
        aside: Vec<DeckCard>,
        left: usize,
    },
    /// Side after side, each piece once: the side's place in the order, and the pieces of
    /// that side still to act (`None` until the side's turn comes).
    EachPiece {
        ph: usize,
        k: usize,
        ids: Option<Vec<usize>>,
    },
    /// Sides in turn, one piece each: the queue per side and the place in the round.
    Alternating {
        ph: usize,
        queues: Vec<Vec<usize>>,
        k: usize,
    },
    /// An activation in progress: a chip, side card or free action gave a side a unit bigger
    /// than one piece (the activation block's `activates:`). When it ends the game goes on
    /// from `then`, the stage that gave it.
    Unit { unit: UnitTurn, then: Box<Stage> },
    /// The turn's end hooks have run.
    TurnEnd,
    /// The last turn is over (or the game is decided): the victory block runs.
    Victory,
    /// The game is over.
    Over,
}

impl Stage {
    /// How many activations are in progress, one inside another (a free action taken during
    /// an activation is one more).
    pub fn unit_depth(&self) -> usize {
        match self {
            Stage::Unit { then, .. } => 1 + then.unit_depth(),
            _ => 0,
        }
    }
}

/// An activation unit being played: see [`Stage::Unit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitTurn {
    pub side: SideId,
    /// The phase whose actions and unit are played; `None` for a free action.
    pub ph: Option<usize>,
    /// What gave the activation, for the log: `chip`, `card`, `free action`.
    pub by: String,
    /// The pieces of the unit: those in it when it was activated, wherever they go after.
    /// `None` until the side has picked the unit.
    pub pieces: Option<Vec<usize>>,
    /// Actions taken so far by each piece of `pieces`.
    pub used: Vec<u32>,
    /// Every piece of the unit may act (`all_act_when` held when it was activated);
    /// otherwise only one does.
    pub all: bool,
}

/// A decision waiting for a side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub side: SideId,
    pub choices: Vec<Choice>,
    /// Set when the decision is a `choose` inside an action.
    pub inside: Option<Inside>,
    /// The decision belongs to the activation in progress ([`Stage::Unit`]): what is chosen
    /// is booked to its pieces.
    #[serde(default)]
    pub unit: bool,
}

/// An action stopped at a `choose`: the game's state is as it was before the action, which is
/// run again from its start with the picks made so far (the same dice come up).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inside {
    pub action: Choice,
    /// The side whose action it is, when another side decides this `choose` (`by`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<SideId>,
    pub picks: Vec<usize>,
    /// Why each pick was made, when its policy said ([`super::Policy::reason`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub whys: Vec<Option<String>>,
    /// The options of the waiting `choose`, as the side sees them.
    pub options: Vec<String>,
}

/// Pieces of a unit taking one action together (`together:`) when the action of the first
/// of them stopped at a `choose`: it waits for the answer, the others act after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TogetherRest {
    pub side: SideId,
    pub action: ProcId,
    pub pieces: Vec<(usize, Choice)>,
}

/// Everything about a game's progress besides the pieces: see the module comment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    pub stage: Stage,
    /// Hooks still to run before the stage goes on (each followed by the free actions it
    /// grants).
    pub hooks: Vec<ProcId>,
    /// Free actions owed (`state.pending_free`) are taken before the stage goes on.
    pub drain: bool,
    pub pending: Option<Decision>,
    /// Pieces acting together whose action waits at a `choose` (the pending decision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together: Option<TogetherRest>,
    pub decisions: usize,
    /// Chips (and side cards) drawn per side.
    pub chips_drawn: Vec<u32>,
    pub result: Option<GameResult>,
}

impl Flow {
    pub fn new(sides: usize) -> Self {
        Flow {
            stage: Stage::Begin,
            hooks: Vec::new(),
            drain: false,
            pending: None,
            together: None,
            decisions: 0,
            chips_drawn: vec![0; sides],
            result: None,
        }
    }
}

impl Game<'_, '_> {
    /// Play on until a side must decide or the game is over. Does nothing while a decision
    /// waits.
    pub fn advance(&mut self) -> Result<(), EngineError> {
        while self.flow.pending.is_none() && self.advance_once()? {}
        Ok(())
    }

    /// One step of [`Game::advance`]: a free action, a hook or a step of the turn sequence.
    /// False when the game is over.
    fn advance_once(&mut self) -> Result<bool, EngineError> {
        if self.flow.drain {
            self.free_action()?;
            return Ok(true);
        }
        if !self.flow.hooks.is_empty() {
            let h = self.flow.hooks.remove(0);
            self.run_hook(h)?;
            self.flow.drain = true;
            return Ok(true);
        }
        if self.flow.stage == Stage::Over {
            return Ok(false);
        }
        let stage = std::mem::replace(&mut self.flow.stage, Stage::Over);
        self.flow.stage = self.step(stage)?;
        Ok(true)
    }

    /// Play on with `policy` (deciding for whoever must) until the activation in progress at
    /// depth `depth` is over: a look-ahead to the end of an activation.
    pub(crate) fn finish_unit(
        &mut self,
        depth: usize,
        policy: &mut dyn super::policy::Policy,
    ) -> Result<(), EngineError> {
        while self.flow.stage.unit_depth() >= depth && !self.is_over() {
            match self.flow.pending.as_ref() {
                Some(d) => {
                    let side = d.side;
                    let k = policy.choose(self, side, self.legal())?;
                    self.apply_only(k)?;
                }
                None => {
                    if !self.advance_once()? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// The side that decides now, if any.
    pub fn to_move(&self) -> Option<SideId> {
        self.flow.pending.as_ref().map(|d| d.side)
    }

    /// The decision waiting, if any.
    pub fn decision(&self) -> Option<&Decision> {
        self.flow.pending.as_ref()
    }

    /// The legal choices of the waiting decision (none when the game is over).
    pub fn legal(&self) -> &[Choice] {
        self.flow.pending.as_ref().map_or(&[], |d| &d.choices)
    }

    pub fn is_over(&self) -> bool {
        self.flow.result.is_some()
    }

    pub fn result(&self) -> Option<&GameResult> {
        self.flow.result.as_ref()
    }

    /// Chips (and side cards) drawn per side so far.
    pub fn chips_drawn(&self) -> &[u32] {
        &self.flow.chips_drawn
    }

    /// Carry out choice `k` of the waiting decision, then play on to the next one.
    pub fn apply(&mut self, k: usize) -> Result<(), EngineError> {
        self.apply_only(k)?;
        self.advance()
    }

    /// As [`Game::apply`], logging `why` the policy chose it ([`super::Policy::reason`]).
    pub fn apply_because(&mut self, k: usize, why: Option<String>) -> Result<(), EngineError> {
        self.apply_typed(k, None, why)?;
        self.advance()
    }

    /// Carry out choice `k` of the waiting decision and nothing after it: the game may then
    /// wait for a choice inside the action, or stand between steps (call [`Game::advance`]).
    pub fn apply_only(&mut self, k: usize) -> Result<(), EngineError> {
        self.apply_typed(k, None, None)
    }

    /// As [`Game::apply_only`]; `typed` is logged with the decision (a typed point).
    pub(crate) fn apply_typed(
        &mut self,
        k: usize,
        typed: Option<super::log::Typed>,
        why: Option<String>,
    ) -> Result<(), EngineError> {
        let Some(d) = self.flow.pending.as_ref() else {
            return Err(EngineError::Policy("no decision is waiting".into()));
        };
        let Some(c) = d.choices.get(k) else {
            return Err(EngineError::Policy(format!("choice {k} is out of range")));
        };
        let side = d.side;
        if d.inside.is_none() && self.logging {
            let label = self.label(side, c);
            let name = self.side_name(side);
            let of = d.choices.len();
            self.log(Event::Decision {
                side: name,
                choice: k,
                of,
                label,
                typed,
                why: why.clone(),
            });
        }
        let Some(d) = self.flow.pending.take() else {
            return Ok(());
        };
        match d.inside {
            None => {
                let c = &d.choices[k];
                self.carry_out(side, c, d.unit)
            }
            Some(mut inside) => {
                inside.picks.push(k);
                inside.whys.resize(inside.picks.len() - 1, None);
                inside.whys.push(why);
                if let Some(rest) = self.flow.together.take() {
                    return self.resume_together(rest, &inside.action, inside.picks, inside.whys);
                }
                let actor = inside.actor.unwrap_or(side);
                self.run_action(actor, inside.action, inside.picks, inside.whys)
            }
        }
    }

    /// Make a decision wait for `side`.
    fn ask(&mut self, side: SideId, choices: Vec<Choice>) -> Result<(), EngineError> {
        self.flow.decisions += 1;
        if self.flow.decisions > MAX_DECISIONS {
            return Err(EngineError::Run(RunError::Limit {
                what: "decisions in one game".into(),
                size: self.flow.decisions as u64,
                limit: MAX_DECISIONS as u64,
            }));
        }
        self.flow.pending = Some(Decision {
            side,
            choices,
            inside: None,
            unit: false,
        });
        self.flow.drain = true;
        Ok(())
    }

    /// Deploy a piece, hold, or start an action. `unit`: the choice was offered by the
    /// activation in progress, which books it.
    pub(crate) fn carry_out(
        &mut self,
        side: SideId,
        choice: &Choice,
        unit: bool,
    ) -> Result<(), EngineError> {
        if let Some(Val::Piece(i)) = choice.args.first() {
            let i = *i as usize;
            // A piece in reserve acts only by an action that brings it on, or holds (stays
            // in reserve).
            let from_reserve = match choice.act {
                Act::Action(a) => i < self.state.pieces.len() && self.may_act_in(i, a),
                Act::Hold => self
                    .state
                    .pieces
                    .get(i)
                    .is_some_and(|p| p.status == Status::Reserve),
                _ => false,
            };
            if !from_reserve && self.state.pieces.get(i).is_none_or(|p| !p.on_board()) {
                self.acted_off_board.push(i);
            }
        }
        if unit {
            self.book_unit_choice(choice)?;
        }
        match choice.act {
            Act::Hold | Act::Activate | Act::Done => Ok(()),
            Act::Together(a) => self.act_together(side, a, &choice.args),
            Act::Deploy => {
                let (Some(Val::Piece(i)), Some(at)) = (choice.args.first(), choice.args.get(1))
                else {
                    return Err(EngineError::Policy(
                        "a deployment names a piece and a place".into(),
                    ));
                };
                let pos = super::options::decode_place(self.rules, at)?;
                let p = &mut self.state.pieces[*i as usize];
                p.pos = Some(pos);
                self.scratch.version += 1;
                if self.logging {
                    let p = &self.state.pieces[*i as usize];
                    let e = Event::Deployed {
                        piece: p.label.to_string(),
                        side: p.side.map(|s| self.side_name(s)),
                        at: pos.into(),
                    };
                    self.log(e);
                }
                Ok(())
            }
            Act::Action(_) => self.run_action(side, choice.clone(), Vec::new(), Vec::new()),
            Act::Pick => Err(EngineError::Policy(
                "a pick inside an action is not an action".into(),
            )),
        }
    }

    /// Run an action with the picks made so far; at a `choose` with no pick, put the game back
    /// as it was before the action and wait for the side.
    pub(crate) fn run_action(
        &mut self,
        side: SideId,
        action: Choice,
        picks: Vec<usize>,
        whys: Vec<Option<String>>,
    ) -> Result<(), EngineError> {
        let Act::Action(a) = action.act else {
            return Err(EngineError::Policy("not an action".into()));
        };
        let before = self
            .may_choose
            .then(|| (self.state.clone(), self.dice.clone()));
        let Some((asked, options)) =
            self.run_proc(a, action.args.clone(), Some((side, picks.clone())), &whys)?
        else {
            return Ok(());
        };
        let Some((state, dice)) = before else {
            return Err(EngineError::Policy(
                "an action stopped at a `choose` the engine did not expect".into(),
            ));
        };
        self.state = state;
        self.dice = dice;
        // The caches saw the half-run action.
        self.scratch.version += 1;
        self.flow.pending = Some(Decision {
            side: asked,
            unit: false,
            choices: (0..options.len())
                .map(|k| Choice {
                    act: Act::Pick,
                    args: vec![Val::Int(k as i64)],
                })
                .collect(),
            inside: Some(Inside {
                action,
                actor: (asked != side).then_some(side),
                picks,
                whys: if whys.iter().any(Option::is_some) {
                    whys
                } else {
                    Vec::new()
                },
                options,
            }),
        });
        Ok(())
    }

    fn run_hook(&mut self, h: ProcId) -> Result<(), EngineError> {
        self.run_proc(h, Vec::new(), None, &[]).map(|_| ())
    }

    /// One free action owed, or the end of them.
    fn free_action(&mut self) -> Result<(), EngineError> {
        if self.state.pending_free.is_empty() || self.state.winner.is_some() {
            self.flow.drain = false;
            return Ok(());
        }
        let side = self.state.pending_free.remove(0);
        if self.rules.free_unit.kind != setup::UnitKind::Piece {
            // 7.b.3-style free actions are taken "without a chip": one activation as a
            // chip would give, then the free actions still owed.
            let name = self.side_name(side);
            self.log(Event::Said {
                text: format!("free action for {name}"),
            });
            let then = std::mem::replace(&mut self.flow.stage, Stage::Over);
            self.flow.stage = Stage::Unit {
                unit: UnitTurn::new(side, None, "free action"),
                then: Box::new(then),
            };
            self.flow.drain = false;
            return Ok(());
        }
        let actions = self.rules.free_actions.clone();
        let choices = self.legal_for(side, &actions, None)?;
        let name = self.side_name(side);
        self.log(Event::Said {
            text: format!("free action for {name}"),
        });
        if !choices.is_empty() {
            self.ask(side, choices)?;
        }
        Ok(())
    }

    /// One step of the turn sequence from `stage`; returns where it stands after.
    fn step(&mut self, stage: Stage) -> Result<Stage, EngineError> {
        let rules = self.rules;
        Ok(match stage {
            Stage::Begin => {
                self.log(Event::Phase {
                    phase: "Deployment".into(),
                });
                Stage::Deploy { next: 0 }
            }
            Stage::Deploy { next } => {
                for i in next..self.state.pieces.len() {
                    // Neutral pieces stand where the scenario put them.
                    let Some(side) = self.state.pieces[i].placed_by else {
                        continue;
                    };
                    // The reserve stays off the table until an action brings it on.
                    if self.state.pieces[i].status == Status::Reserve {
                        continue;
                    }
                    let choices = self.deploy_choices(i)?;
                    if choices.is_empty() {
                        // `check` counts the room it can see; a `?` an assumption filled, a
                        // `deploy_check:` or a group cap may still leave none.
                        let at = rules
                            .program
                            .scenarios
                            .iter()
                            .find(|c| c.name == rules.scenario)
                            .map_or(String::new(), |c| format!(" ({}:{})", c.file, c.line));
                        return Err(EngineError::Setup(format!(
                            "no room left to deploy {}: the `deploy:` area of force {} in scenario `{}`{at} has no free place for it",
                            self.state.pieces[i].label,
                            rules.side_name(side),
                            rules.scenario.replace('_', "-"),
                        )));
                    }
                    self.ask(side, choices)?;
                    return Ok(Stage::Deploy { next: i + 1 });
                }
                self.flow.hooks = rules.scenario_hooks(ScenarioEvent::Start).collect();
                Stage::TurnBegin
            }
            Stage::TurnBegin => {
                let turn = self.state.turn + 1;
                if self.state.winner.is_some() || turn > rules.turns {
                    return Ok(Stage::Victory);
                }
                self.state.turn = turn;
                self.log(Event::Turn { turn });
                self.flow.hooks = rules.scenario_hooks(ScenarioEvent::TurnStart).collect();
                Stage::PhaseBegin { ph: 0 }
            }
            Stage::PhaseBegin { ph } => {
                if ph >= rules.phases.len() || self.state.winner.is_some() {
                    let mut hooks = rules.turn_end.clone();
                    hooks.extend(rules.scenario_hooks(ScenarioEvent::TurnEnd));
                    self.flow.hooks = hooks;
                    return Ok(Stage::TurnEnd);
                }
                let spec = &rules.phases[ph];
                self.log(Event::Phase {
                    phase: spec.title.clone(),
                });
                self.flow.hooks = spec.on_run.clone();
                Stage::Activation { ph }
            }
            Stage::Activation { ph } => self.start_activation(ph)?,
            Stage::Cup { ph, mut cup } => {
                if cup.is_empty() || self.state.winner.is_some() {
                    return Ok(Stage::PhaseBegin { ph: ph + 1 });
                }
                let k = self.dice.index(cup.len() as u32) as usize;
                let side = cup.remove(k);
                self.flow.chips_drawn[side as usize] += 1;
                self.state.count_activation(side);
                let name = self.side_name(side);
                self.log(Event::Chip {
                    side: name,
                    left: cup.len() as u32,
                });
                if rules.phases[ph].unit.kind != setup::UnitKind::Piece {
                    return Ok(Stage::Unit {
                        unit: UnitTurn::new(side, Some(ph), "chip"),
                        then: Box::new(Stage::Cup { ph, cup }),
                    });
                }
                let choices = self.legal_for(side, &rules.phases[ph].actions, None)?;
                if choices.is_empty() {
                    self.log(Event::Said {
                        text: "no legal action".into(),
                    });
                    self.flow.drain = true;
                } else {
                    self.ask(side, choices)?;
                }
                Stage::Cup { ph, cup }
            }
            Stage::Deck {
                ph,
                mut pile,
                mut aside,
                left,
            } => {
                if left > 0
                    && !self.state.pending_inserts.is_empty()
                    && matches!(&rules.phases[ph].activation,
                        setup::Activation::Deck(d) if d.reshuffle_on_insert)
                {
                    // The inserted cards go in and the whole deck is shuffled at once; the
                    // draws this phase has left do not change.
                    let setup::Activation::Deck(deck) = &rules.phases[ph].activation else {
                        unreachable!("matched above");
                    };
                    pile.append(&mut aside);
                    self.shuffle_in(deck, &mut pile);
                }
                let card = if left == 0 || self.state.winner.is_some() {
                    None
                } else {
                    pile.pop()
                };
                let Some(card) = card else {
                    self.state.deck = Some((pile, aside));
                    return Ok(Stage::PhaseBegin { ph: ph + 1 });
                };
                let unit = self.draw_card(ph, &card, pile.len() as u32)?;
                aside.push(card);
                let next = Stage::Deck {
                    ph,
                    pile,
                    aside,
                    left: left - 1,
                };
                match unit {
                    Some(unit) => Stage::Unit {
                        unit,
                        then: Box::new(next),
                    },
                    None => next,
                }
            }
            Stage::EachPiece { ph, k, ids } => {
                let setup::Activation::EachPiece(order) = &rules.phases[ph].activation else {
                    return Ok(Stage::PhaseBegin { ph: ph + 1 });
                };
                let mut ids = match ids {
                    Some(ids) => ids,
                    None if k >= order.len() => return Ok(Stage::PhaseBegin { ph: ph + 1 }),
                    None => self.phase_actors(order[k], &rules.phases[ph].actions),
                };
                if ids.is_empty() {
                    return Ok(Stage::EachPiece {
                        ph,
                        k: k + 1,
                        ids: None,
                    });
                }
                if self.state.winner.is_some() {
                    return Ok(Stage::PhaseBegin { ph: ph + 1 });
                }
                let i = ids.remove(0);
                let side = order[k];
                let spec = &rules.phases[ph].unit;
                let next = Stage::EachPiece {
                    ph,
                    k,
                    ids: Some(ids),
                };
                // `actions_per_piece: N`: the piece is a unit of its own, acting up to N
                // times in a row until its side ends its activation.
                if spec.actions_per_piece > 1
                    && self.state.pieces[i].on_board()
                    && self.has_legal(side, &rules.phases[ph].actions, Some(i))?
                {
                    let mut unit = UnitTurn::new(side, Some(ph), "turn");
                    let name = self.piece_label(i, side);
                    self.start_unit(&mut unit, spec, vec![i], name)?;
                    return Ok(Stage::Unit {
                        unit,
                        then: Box::new(next),
                    });
                }
                self.activate(side, i, &rules.phases[ph].actions)?;
                next
            }
            Stage::Alternating { ph, mut queues, k } => {
                let setup::Activation::Alternating(order) = &rules.phases[ph].activation else {
                    return Ok(Stage::PhaseBegin { ph: ph + 1 });
                };
                // A new round starts only while some piece is still to act.
                if k == 0 && (queues.iter().all(Vec::is_empty) || self.state.winner.is_some()) {
                    return Ok(Stage::PhaseBegin { ph: ph + 1 });
                }
                if k >= order.len() {
                    return Ok(Stage::Alternating { ph, queues, k: 0 });
                }
                if !queues[k].is_empty() {
                    let i = queues[k].remove(0);
                    self.activate(order[k], i, &rules.phases[ph].actions)?;
                }
                Stage::Alternating {
                    ph,
                    queues,
                    k: k + 1,
                }
            }
            Stage::Unit { unit, then } => self.step_unit(unit, *then)?,
            Stage::TurnEnd => {
                if let Some(c) = rules.distance_counter {
                    for p in &mut self.state.pieces {
                        p.clear_counter(c);
                    }
                }
                Stage::TurnBegin
            }
            Stage::Victory => {
                self.finish()?;
                Stage::Over
            }
            Stage::Over => Stage::Over,
        })
    }

    /// The activation of phase `ph`, once its hooks have run: counts per unit are taken from
    /// the forces as they stand now, every time the phase runs.
    fn start_activation(&mut self, ph: usize) -> Result<Stage, EngineError> {
        let rules = self.rules;
        Ok(match &rules.phases[ph].activation {
            setup::Activation::None => Stage::PhaseBegin { ph: ph + 1 },
            setup::Activation::ChipCup(counts) => {
                let mut cup: Vec<SideId> = Vec::new();
                for &(s, n) in counts {
                    let n = match n {
                        setup::Chips::Fixed(n) => n as usize,
                        setup::Chips::PerUnit(kind) => self
                            .own_on_board(s)
                            .into_iter()
                            .filter(|&i| {
                                kind.is_none_or(|k| {
                                    rules.program.entities[self.state.pieces[i].entity as usize]
                                        .kind
                                        == Some(k)
                                })
                            })
                            .count(),
                    };
                    cup.extend(std::iter::repeat_n(s, n));
                }
                Stage::Cup { ph, cup }
            }
            setup::Activation::Deck(deck) => {
                let (pile, aside, left) = self.shuffle_deck(deck);
                Stage::Deck {
                    ph,
                    pile,
                    aside,
                    left,
                }
            }
            setup::Activation::EachPiece(_) => Stage::EachPiece {
                ph,
                k: 0,
                ids: None,
            },
            setup::Activation::Alternating(order) => Stage::Alternating {
                ph,
                queues: order.iter().map(|s| self.own_on_board(*s)).collect(),
                k: 0,
            },
        })
    }

    /// A card deck's phase begins: shuffle (with any cards rules asked to insert) and say how
    /// many cards the phase draws.
    fn shuffle_deck(&mut self, deck: &setup::DeckSpec) -> (Vec<DeckCard>, Vec<DeckCard>, usize) {
        let (mut pile, mut aside) = self
            .state
            .deck
            .take()
            .unwrap_or_else(|| (deck.cards.clone(), Vec::new()));
        pile.append(&mut aside);
        self.shuffle_in(deck, &mut pile);
        let draws = deck
            .draws
            .map_or(pile.len(), |d| d as usize)
            .min(pile.len());
        (pile, aside, draws)
    }

    /// Put the cards rules asked to insert into `pile` (every `insert:` line of that name),
    /// then shuffle it.
    fn shuffle_in(&mut self, deck: &setup::DeckSpec, pile: &mut Vec<DeckCard>) {
        for name in std::mem::take(&mut self.state.pending_inserts) {
            for ins in deck.inserts.iter().filter(|x| x.label == name) {
                // Replace ordinary cards chosen at random, then add the inserted ones.
                for _ in 0..ins.replaces {
                    let ordinary: Vec<usize> = (0..pile.len())
                        .filter(|&k| pile[k].event.is_none())
                        .collect();
                    if ordinary.is_empty() {
                        break;
                    }
                    let k = ordinary[self.dice.index(ordinary.len() as u32) as usize];
                    pile.remove(k);
                }
                for _ in 0..ins.count {
                    pile.push(DeckCard {
                        label: ins.label.clone(),
                        side: ins.side,
                        event: Some(ins.event.clone()),
                    });
                }
            }
            self.log(Event::Said {
                text: format!("{name} cards shuffled into the deck ({} cards)", pile.len()),
            });
        }
        for k in (1..pile.len()).rev() {
            let j = self.dice.index(k as u32 + 1) as usize;
            pile.swap(k, j);
        }
    }

    /// A card drawn: a side card is one action for that side, the first card of an inserted
    /// kind runs its event's hooks.
    /// A side card of a phase whose unit is bigger than a piece gives that side an
    /// activation: returned, to be played before the next card.
    fn draw_card(
        &mut self,
        ph: usize,
        card: &DeckCard,
        left: u32,
    ) -> Result<Option<UnitTurn>, EngineError> {
        let rules = self.rules;
        let setup::Activation::Deck(deck) = &rules.phases[ph].activation else {
            return Ok(None);
        };
        match (&card.event, card.side) {
            (Some(ev), _) if !self.state.events_fired.contains(ev) => {
                self.state.events_fired.push(ev.clone());
                self.log(Event::Said {
                    text: format!("card drawn: {} ({ev})", card.label),
                });
                self.flow.hooks = deck
                    .hooks
                    .iter()
                    .filter(|(n, _)| n == ev)
                    .map(|(_, p)| *p)
                    .collect();
            }
            // A side card, or an inserted card of a side whose event has already been run.
            (_, Some(side)) => {
                self.flow.chips_drawn[side as usize] += 1;
                self.state.count_activation(side);
                let name = self.side_name(side);
                // `on SIDE` hooks: what the side does first whenever its card comes up.
                self.flow.hooks = deck
                    .hooks
                    .iter()
                    .filter(|(n, _)| *n == name)
                    .map(|(_, p)| *p)
                    .collect();
                self.log(Event::Card {
                    card: card.label.clone(),
                    side: name,
                    left,
                });
                if rules.phases[ph].unit.kind != setup::UnitKind::Piece {
                    return Ok(Some(UnitTurn::new(side, Some(ph), "card")));
                }
                let choices = self.legal_for(side, &rules.phases[ph].actions, None)?;
                if choices.is_empty() {
                    self.flow.drain = true;
                } else {
                    self.ask(side, choices)?;
                }
            }
            _ => self.log(Event::Said {
                text: format!("card drawn: {}", card.label),
            }),
        }
        Ok(None)
    }

    /// One piece's activation: its legal actions, or holding still; the free actions it
    /// grants follow.
    fn activate(&mut self, side: SideId, i: usize, actions: &[ProcId]) -> Result<(), EngineError> {
        self.flow.drain = true;
        if !actions.iter().any(|&a| self.may_act_in(i, a)) {
            return Ok(());
        }
        let mut choices = self.legal_for(side, actions, Some(i))?;
        if choices.is_empty() {
            return Ok(());
        }
        choices.push(Choice {
            act: Act::Hold,
            args: vec![Val::Piece(i as u32)],
        });
        self.ask(side, choices)
    }

    /// Whether `winner`'s pieces that left the board decided the game: the victory block, run
    /// again with them back on the board where they left it, names another winner or none.
    /// The game is put back as it was.
    fn won_by_exits(&mut self, winner: SideId) -> Result<bool, EngineError> {
        let Some(v) = self.rules.victory else {
            return Ok(false);
        };
        let (state, dice, logging) = (self.state.clone(), self.dice.clone(), self.logging);
        self.logging = false;
        for p in &mut self.state.pieces {
            if p.side == Some(winner) && p.status == Status::Exited {
                p.status = Status::OnBoard;
                p.pos = p.exited_at;
            }
        }
        self.state.winner = None;
        self.scratch.version += 1;
        let r = self.run_proc(v, Vec::new(), None, &[]);
        let without = self.state.winner;
        self.state = state;
        self.dice = dice;
        self.logging = logging;
        self.scratch.version += 1;
        r?;
        Ok(without != Some(Winner::Side(winner)))
    }

    /// The victory block runs at the end even when a hook already named the winner: it sets
    /// the final scores (a later `win` does not override the first).
    fn finish(&mut self) -> Result<(), EngineError> {
        if let Some(v) = self.rules.victory {
            self.run_proc(v, Vec::new(), None, &[])?;
        }
        let winner = self.state.winner.unwrap_or(Winner::Draw);
        self.state.winner = Some(winner);
        let sides = self.rules.sides();
        let exits: Vec<u32> = (0..self.rules.program.sides.len() as SideId)
            .map(|s| {
                self.state
                    .pieces
                    .iter()
                    .filter(|p| p.side == Some(s) && p.status == Status::Exited)
                    .count() as u32
            })
            .collect();
        let won_by_exits = match winner {
            Winner::Side(s) if exits[s as usize] > 0 => self.won_by_exits(s)?,
            _ => false,
        };
        let result = GameResult {
            winner,
            turns: self.state.turn,
            scores: self.state.scores.clone(),
            losses: (0..self.rules.program.sides.len() as SideId)
                .map(|s| self.state.losses(s))
                .collect(),
            decisions: self.flow.decisions as u32,
            exits,
            won_by_exits,
        };
        let end = Event::End {
            winner: match winner {
                Winner::Side(s) => Some(self.side_name(s)),
                Winner::Draw => None,
            },
            scores: sides
                .iter()
                .map(|s| (self.side_name(*s), result.scores[*s as usize]))
                .collect(),
            turns: result.turns,
            losses: sides
                .iter()
                .map(|s| (self.side_name(*s), result.losses[*s as usize]))
                .collect(),
        };
        self.log(end);
        self.flow.result = Some(result);
        Ok(())
    }
}
