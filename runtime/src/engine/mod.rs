//! The game engine: whole scenarios played headless by policies.
//!
//! - [`setup`] reads a scenario (board, turns, phases, activation, forces) from the IR;
//! - [`state`] is one game's state, cheap to clone for look-ahead;
//! - [`host`] answers the language's engine functions and applies its effects;
//! - [`options`] enumerates legal choices: an action is legal when its leading `require`s
//!   hold (its preconditions), for every binding of its parameters the engine can list;
//! - [`policy`] decides (random, greedy, human, scripted for replays);
//! - [`log`] records what happened as JSON lines and renders the narrative;
//! - [`sim`] plays many games in parallel with totals independent of the thread count.
//!
//! Randomness: the game's own stream (dice, chip draws) is seeded from the game seed; every
//! policy draws from its own stream, derived from the same seed and its side, so a policy that
//! thinks (rolls dice in look-ahead) never shifts the game's dice.

pub mod host;
pub mod log;
pub mod options;
pub mod policy;
pub mod setup;
pub mod sim;
pub mod state;

use sandtable_ir::{Category, EntityId, ProcId, SideId};

use crate::error::RunError;
use crate::interp::{Ctx, Interp};
use crate::jit::JitProgram;
use crate::rng::Dice;
use crate::value::Val;
use host::{GameHost, Scratch};
pub use log::Event;
pub use options::{Act, Choice};
use policy::Policy;
pub use setup::Rules;
use state::{Piece, Pos, State, Status, Winner};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("scenario set-up: {0}")]
    Setup(String),
    #[error("{0}")]
    Run(#[from] RunError),
    #[error("{0}")]
    Policy(String),
    #[error("replay: {0}")]
    Replay(String),
}

/// Most decisions one game may take, so every game ends.
pub const MAX_DECISIONS: usize = 100_000;

/// A stream of its own for each user of randomness in one game.
pub fn stream_seed(seed: u64, stream: u64) -> u64 {
    // SplitMix64 of the pair: close seeds give unrelated streams.
    let mut z = seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What a finished game came to.
#[derive(Debug, Clone, PartialEq)]
pub struct GameResult {
    pub winner: Winner,
    pub turns: u32,
    pub scores: Vec<i64>,
    /// Eliminated units per side id.
    pub losses: Vec<u32>,
    pub decisions: u32,
}

pub struct Game<'r, 'p> {
    pub rules: &'r Rules<'p>,
    pub state: State,
    dice: Dice,
    /// Dice for guards, which must not roll the game's (a guard that rolls is a rules bug,
    /// but it must not shift the game).
    guard_dice: Dice,
    scratch: Scratch,
    pub events: Vec<Event>,
    /// Keep events (off in bulk simulation and look-ahead).
    pub logging: bool,
    jit: Option<&'r JitProgram<'p>>,
    decisions: usize,
    /// Chips drawn per side this game, for the invariant tests.
    pub chips_drawn: Vec<u32>,
    /// Pieces that acted while not on the board (must stay empty).
    pub acted_off_board: Vec<usize>,
}

impl<'r, 'p> Game<'r, 'p> {
    pub fn new(rules: &'r Rules<'p>, seed: u64, jit: Option<&'r JitProgram<'p>>) -> Self {
        let program = rules.program;
        let mut pieces: Vec<Piece> = Vec::new();
        for f in &rules.forces {
            let side_name = &program.sides[f.side as usize].name;
            for (k, &e) in f.units.iter().enumerate() {
                let ent = &program.entities[e as usize];
                let same = f.units.iter().filter(|x| **x == e).count();
                let nth = f.units[..k].iter().filter(|x| **x == e).count() + 1;
                let mut label = if same > 1 {
                    format!("{} #{nth}", ent.name)
                } else {
                    ent.name.clone()
                };
                // Pieces of an entity that belongs to no side (both armies field `guard`)
                // are named with their side, so every label is unique.
                if ent.side.is_none() {
                    label = format!("{side_name} {label}");
                }
                pieces.push(Piece {
                    entity: e,
                    side: ent.side.or(Some(f.side)),
                    label: label.into(),
                    pos: None,
                    status: Status::OnBoard,
                    markers: Vec::new(),
                    counters: Vec::new(),
                    hidden: f.hidden,
                    exited_at: None,
                    is_unit: ent.category == Category::Unit,
                    placed_by: Some(f.side),
                });
            }
        }
        // Pieces of no side: a force's markers (it sets them up), then the scenario's
        // neutral pieces where it puts them. Numbered per entity across the whole game.
        let mut neutral: Vec<(EntityId, Option<Pos>, Option<SideId>)> = Vec::new();
        for f in &rules.forces {
            neutral.extend(f.markers.iter().map(|e| (*e, None, Some(f.side))));
        }
        neutral.extend(rules.neutral.iter().map(|(e, at)| (*e, Some(*at), None)));
        for (k, &(e, pos, placed_by)) in neutral.iter().enumerate() {
            let ent = &program.entities[e as usize];
            let same = neutral.iter().filter(|x| x.0 == e).count();
            let nth = neutral[..k].iter().filter(|x| x.0 == e).count() + 1;
            let label = if same > 1 {
                format!("{} #{nth}", ent.name)
            } else {
                ent.name.clone()
            };
            pieces.push(Piece {
                entity: e,
                side: None,
                label: label.into(),
                pos,
                status: Status::OnBoard,
                markers: Vec::new(),
                counters: Vec::new(),
                hidden: false,
                exited_at: None,
                is_unit: false,
                placed_by,
            });
        }
        Game::with_state(
            rules,
            State {
                pieces,
                place_markers: Vec::new(),
                scores: vec![0; program.sides.len()],
                turn: 0,
                winner: None,
                pending_free: Vec::new(),
                deck: None,
                pending_inserts: Vec::new(),
                events_fired: Vec::new(),
            },
            Dice::new(stream_seed(seed, 0)),
            Dice::new(stream_seed(seed, 99)),
            jit,
        )
    }

    /// A game in `state`, logging, with fresh counts and caches.
    fn with_state(
        rules: &'r Rules<'p>,
        state: State,
        dice: Dice,
        guard_dice: Dice,
        jit: Option<&'r JitProgram<'p>>,
    ) -> Self {
        Game {
            rules,
            state,
            dice,
            guard_dice,
            scratch: Scratch::default(),
            events: Vec::new(),
            logging: true,
            jit,
            decisions: 0,
            chips_drawn: vec![0; rules.program.sides.len()],
            acted_off_board: Vec::new(),
        }
    }

    fn log(&mut self, e: Event) {
        if self.logging {
            self.events.push(e);
        }
    }

    fn say(&mut self, said: Vec<String>) {
        if self.logging {
            for text in said {
                self.events.push(Event::Said { text });
            }
        }
    }

    fn side_name(&self, s: SideId) -> String {
        self.rules.side_name(s).to_string()
    }

    /// Run a hook or an action with the game as host; `chooser` answers its `choose` points.
    fn run_proc(
        &mut self,
        proc: ProcId,
        args: Vec<Val>,
        chooser: Option<(SideId, &mut dyn Policy)>,
    ) -> Result<(), EngineError> {
        // A shorter-lived view of the policy, so the host can borrow it with the rest.
        let chooser = match chooser {
            Some((side, p)) => {
                let p: &mut dyn Policy = p;
                Some((side, p))
            }
            None => None,
        };
        let (r, said, picks) = {
            let mut host = GameHost::quiet(self.rules, &mut self.state, &mut self.scratch);
            host.tell = self.logging;
            host.chooser = chooser;
            host.jit = self.jit;
            let interp = Interp::new(self.rules.program, self.rules.assumptions);
            let r = {
                let mut ctx = Ctx::new(&mut self.dice, &mut host);
                interp.run(proc, args, &mut ctx)
            };
            let side = host.chooser.as_ref().map(|(s, _)| *s);
            (r, host.said, side.map(|s| (s, host.picks)))
        };
        self.say(said);
        if let Some((side, picks)) = picks {
            self.decisions += picks.len();
            for (choice, of, label) in picks {
                let name = self.side_name(side);
                self.log(Event::Decision {
                    side: name,
                    choice,
                    of,
                    label,
                });
            }
        }
        match r {
            Ok(_) => Ok(()),
            Err(RunError::Illegal(a)) => Err(EngineError::Run(RunError::Type(format!(
                "`{a}` hit a `require` that does not hold after its preconditions: only the leading `require`s of an action decide whether it is legal"
            )))),
            Err(e) => Err(e.into()),
        }
    }

    /// Carry out a choice with no one to answer `choose` points inside it.
    pub fn apply(&mut self, choice: &Choice) -> Result<(), EngineError> {
        self.apply_with(0, choice, None)
    }

    /// Carry out `side`'s choice: deploy a piece, or run an action whose `choose` points
    /// `chooser` answers.
    pub fn apply_with(
        &mut self,
        side: SideId,
        choice: &Choice,
        chooser: Option<&mut dyn Policy>,
    ) -> Result<(), EngineError> {
        if let Some(Val::Piece(i)) = choice.args.first() {
            let i = *i as usize;
            if self.state.pieces.get(i).is_none_or(|p| !p.on_board()) {
                self.acted_off_board.push(i);
            }
        }
        match choice.act {
            Act::Hold => Ok(()),
            Act::Deploy => {
                let (Some(Val::Piece(i)), Some(at)) = (choice.args.first(), choice.args.get(1))
                else {
                    return Err(EngineError::Policy(
                        "a deployment names a piece and a place".into(),
                    ));
                };
                let pos = options::decode_place(self.rules, at)?;
                self.state.pieces[*i as usize].pos = Some(pos);
                self.scratch.version += 1;
                Ok(())
            }
            Act::Action(a) => self.run_proc(a, choice.args.clone(), chooser.map(|p| (side, p))),
        }
    }

    fn decide(
        &mut self,
        side: SideId,
        choices: Vec<Choice>,
        policies: &mut [Box<dyn Policy + '_>],
    ) -> Result<(), EngineError> {
        self.decisions += 1;
        if self.decisions > MAX_DECISIONS {
            return Err(EngineError::Run(RunError::Limit {
                what: "decisions in one game".into(),
                size: self.decisions as u64,
                limit: MAX_DECISIONS as u64,
            }));
        }
        let policy = policies
            .get_mut(side as usize)
            .ok_or_else(|| EngineError::Policy(format!("no policy for side {side}")))?;
        let k = policy.choose(self, side, &choices)?;
        let c = choices
            .get(k)
            .ok_or_else(|| EngineError::Policy(format!("choice {k} is out of range")))?;
        if self.logging {
            let label = self.label(side, c);
            let name = self.side_name(side);
            self.log(Event::Decision {
                side: name,
                choice: k,
                of: choices.len(),
                label,
            });
        }
        self.apply_with(side, c, Some(policy.as_mut()))
    }

    fn run_hooks(
        &mut self,
        procs: Vec<ProcId>,
        policies: &mut [Box<dyn Policy + '_>],
    ) -> Result<(), EngineError> {
        for p in procs {
            self.run_proc(p, Vec::new(), None)?;
            self.free_actions(policies)?;
        }
        Ok(())
    }

    fn free_actions(&mut self, policies: &mut [Box<dyn Policy + '_>]) -> Result<(), EngineError> {
        while !self.state.pending_free.is_empty() && self.state.winner.is_none() {
            let side = self.state.pending_free.remove(0);
            let actions = self.rules.free_actions.clone();
            let choices = self.legal(side, &actions, None)?;
            let name = self.side_name(side);
            self.log(Event::Said {
                text: format!("free action for {name}"),
            });
            if !choices.is_empty() {
                self.decide(side, choices, policies)?;
            }
        }
        Ok(())
    }

    fn deploy(&mut self, policies: &mut [Box<dyn Policy + '_>]) -> Result<(), EngineError> {
        for i in 0..self.state.pieces.len() {
            // Neutral pieces stand where the scenario put them.
            let Some(side) = self.state.pieces[i].placed_by else {
                continue;
            };
            let choices = self.deploy_choices(i)?;
            if choices.is_empty() {
                return Err(EngineError::Setup(format!(
                    "no room left to deploy {}",
                    self.state.pieces[i].label
                )));
            }
            self.decide(side, choices, policies)?;
        }
        Ok(())
    }

    /// Play the whole game with one policy per side (indexed by side id).
    pub fn play(
        &mut self,
        policies: &mut [Box<dyn Policy + '_>],
    ) -> Result<GameResult, EngineError> {
        self.log(Event::Phase {
            phase: "Deployment".into(),
        });
        self.deploy(policies)?;
        let start: Vec<ProcId> = self.rules.scenario_hooks("start").collect();
        self.run_hooks(start, policies)?;
        let mut last_turn = 0;
        for turn in 1..=self.rules.turns {
            if self.state.winner.is_some() {
                break;
            }
            last_turn = turn;
            self.state.turn = turn;
            self.log(Event::Turn { turn });
            let hooks: Vec<ProcId> = self.rules.scenario_hooks("turn_start").collect();
            self.run_hooks(hooks, policies)?;
            for ph in 0..self.rules.phases.len() {
                if self.state.winner.is_some() {
                    break;
                }
                self.phase(ph, policies)?;
            }
            let mut hooks = self.rules.turn_end.clone();
            hooks.extend(self.rules.scenario_hooks("turn_end"));
            self.run_hooks(hooks, policies)?;
            for p in &mut self.state.pieces {
                p.clear_counter("moved");
            }
        }
        // The victory block runs at the end even when a hook already named the winner: it
        // sets the final scores (a later `win` does not override the first).
        if let Some(v) = self.rules.victory {
            self.run_proc(v, Vec::new(), None)?;
        }
        let winner = self.state.winner.unwrap_or(Winner::Draw);
        self.state.winner = Some(winner);
        let sides = self.rules.sides();
        let result = GameResult {
            winner,
            turns: last_turn,
            scores: self.state.scores.clone(),
            losses: (0..self.rules.program.sides.len() as SideId)
                .map(|s| self.state.losses(s))
                .collect(),
            decisions: self.decisions as u32,
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
            turns: last_turn,
            losses: sides
                .iter()
                .map(|s| (self.side_name(*s), result.losses[*s as usize]))
                .collect(),
        };
        self.log(end);
        Ok(result)
    }

    fn phase(
        &mut self,
        ph: usize,
        policies: &mut [Box<dyn Policy + '_>],
    ) -> Result<(), EngineError> {
        let rules = self.rules;
        let spec = &rules.phases[ph];
        self.log(Event::Phase {
            phase: spec.title.clone(),
        });
        self.run_hooks(spec.on_run.clone(), policies)?;
        match &spec.activation {
            setup::Activation::None => {}
            setup::Activation::ChipCup(counts) => {
                let mut cup: Vec<SideId> = Vec::new();
                for &(s, n) in counts {
                    // Counts per unit are taken from the forces as they stand now, every
                    // time the phase runs.
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
                while !cup.is_empty() && self.state.winner.is_none() {
                    let k = self.dice.index(cup.len() as u32) as usize;
                    let side = cup.remove(k);
                    self.chips_drawn[side as usize] += 1;
                    let name = self.side_name(side);
                    self.log(Event::Chip {
                        side: name,
                        left: cup.len() as u32,
                    });
                    let choices = self.legal(side, &spec.actions, None)?;
                    if choices.is_empty() {
                        self.log(Event::Said {
                            text: "no legal action".into(),
                        });
                    } else {
                        self.decide(side, choices, policies)?;
                    }
                    self.free_actions(policies)?;
                }
            }
            setup::Activation::Deck(deck) => self.play_deck(deck, &spec.actions, policies)?,
            setup::Activation::EachPiece(order) => {
                for &side in order {
                    let ids = self.own_on_board(side);
                    for i in ids {
                        if self.state.winner.is_some() {
                            return Ok(());
                        }
                        self.activate(side, i, &spec.actions, policies)?;
                        self.free_actions(policies)?;
                    }
                }
            }
            setup::Activation::Alternating(order) => {
                let mut queues: Vec<Vec<usize>> =
                    order.iter().map(|s| self.own_on_board(*s)).collect();
                while queues.iter().any(|q| !q.is_empty()) && self.state.winner.is_none() {
                    for (k, &side) in order.iter().enumerate() {
                        if let Some(i) = (!queues[k].is_empty()).then(|| queues[k].remove(0)) {
                            self.activate(side, i, &spec.actions, policies)?;
                            self.free_actions(policies)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// One phase of a card deck: shuffle (with any cards rules asked to insert), then draw
    /// up to `draws` cards; a side card is one action for that side, the first card of an
    /// inserted kind runs its event's hooks.
    fn play_deck(
        &mut self,
        deck: &setup::DeckSpec,
        actions: &[ProcId],
        policies: &mut [Box<dyn Policy + '_>],
    ) -> Result<(), EngineError> {
        let (mut pile, mut aside) = self
            .state
            .deck
            .take()
            .unwrap_or_else(|| (deck.cards.clone(), Vec::new()));
        pile.append(&mut aside);
        for name in std::mem::take(&mut self.state.pending_inserts) {
            let Some(ins) = deck.inserts.iter().find(|x| x.label == name) else {
                continue;
            };
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
                pile.push(setup::DeckCard {
                    label: ins.label.clone(),
                    side: None,
                    event: Some(ins.event.clone()),
                });
            }
        }
        for k in (1..pile.len()).rev() {
            let j = self.dice.index(k as u32 + 1) as usize;
            pile.swap(k, j);
        }
        let draws = deck
            .draws
            .map_or(pile.len(), |d| d as usize)
            .min(pile.len());
        for _ in 0..draws {
            if self.state.winner.is_some() {
                break;
            }
            let Some(card) = pile.pop() else { break };
            let left = pile.len() as u32;
            match (&card.event, card.side) {
                (Some(ev), _) if !self.state.events_fired.contains(ev) => {
                    self.state.events_fired.push(ev.clone());
                    self.log(Event::Said {
                        text: format!("card drawn: {} ({ev})", card.label),
                    });
                    let hooks: Vec<ProcId> = deck
                        .hooks
                        .iter()
                        .filter(|(n, _)| n == ev)
                        .map(|(_, p)| *p)
                        .collect();
                    self.run_hooks(hooks, policies)?;
                }
                (_, Some(side)) => {
                    self.chips_drawn[side as usize] += 1;
                    let name = self.side_name(side);
                    self.log(Event::Card {
                        card: card.label.clone(),
                        side: name,
                        left,
                    });
                    let choices = self.legal(side, actions, None)?;
                    if !choices.is_empty() {
                        self.decide(side, choices, policies)?;
                    }
                    self.free_actions(policies)?;
                }
                _ => self.log(Event::Said {
                    text: format!("card drawn: {}", card.label),
                }),
            }
            aside.push(card);
        }
        self.state.deck = Some((pile, aside));
        Ok(())
    }

    fn own_on_board(&self, side: SideId) -> Vec<usize> {
        (0..self.state.pieces.len())
            .filter(|&i| {
                let p = &self.state.pieces[i];
                p.on_board() && p.side == Some(side) && p.is_unit
            })
            .collect()
    }

    /// One piece's activation: its legal actions, or holding still.
    fn activate(
        &mut self,
        side: SideId,
        i: usize,
        actions: &[ProcId],
        policies: &mut [Box<dyn Policy + '_>],
    ) -> Result<(), EngineError> {
        if !self.state.pieces[i].on_board() {
            return Ok(());
        }
        let mut choices = self.legal(side, actions, Some(i))?;
        if choices.is_empty() {
            return Ok(());
        }
        choices.push(Choice {
            act: Act::Hold,
            args: vec![Val::Piece(i as u32)],
        });
        self.decide(side, choices, policies)
    }

    /// Score of the position for `side` as a greedy policy sees it: the scenario's victory run
    /// on this game, which it uses up (a look-ahead copy): who would win now and the scores it
    /// sets, then the losses.
    pub fn into_value(mut self, side: SideId) -> i64 {
        self.logging = false;
        if self.state.winner.is_none()
            && let Some(v) = self.rules.victory
        {
            let _ = self.run_proc(v, Vec::new(), None);
        }
        let mut value = 0i64;
        match self.state.winner {
            Some(Winner::Side(s)) if s == side => value += 10_000,
            Some(Winner::Side(_)) => value -= 10_000,
            _ => {}
        }
        for s in self.rules.sides() {
            let sign = if s == side { 1 } else { -1 };
            value += sign * 100 * self.state.scores[s as usize];
            value -= sign * 10 * i64::from(self.state.losses(s));
        }
        value
    }

    /// A copy of this game for look-ahead by `side`: its own dice, no log, and the pieces the
    /// side cannot see shuffled among themselves so the look-ahead learns nothing hidden.
    pub fn lookahead_copy(&self, side: SideId, seed: u64) -> Game<'r, 'p> {
        let mut dice = Dice::new(seed);
        let mut state = self.state.clone();
        let hidden: Vec<usize> = (0..state.pieces.len())
            .filter(|&i| {
                let p = &state.pieces[i];
                p.hidden && p.side != Some(side) && p.on_board()
            })
            .collect();
        for k in (1..hidden.len()).rev() {
            let j = dice.index(k as u32 + 1) as usize;
            let (a, b) = (hidden[k], hidden[j]);
            let ea = state.pieces[a].entity;
            state.pieces[a].entity = state.pieces[b].entity;
            state.pieces[b].entity = ea;
        }
        let mut copy = Game::with_state(self.rules, state, dice, Dice::new(seed ^ 1), self.jit);
        copy.logging = false;
        copy
    }

    /// What `side` may know of the position: its own pieces, and the others' unless face
    /// down (then only that a piece is there).
    pub fn view(&self, side: SideId) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "Turn {} of {}. Scores: {}\n",
            self.state.turn,
            self.rules.turns,
            self.rules
                .sides()
                .iter()
                .map(|s| format!("{} {}", self.side_name(*s), self.state.scores[*s as usize]))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        // Board order (column then row, or row then x on a table); markers are in plain
        // sight even on a face-down piece.
        let key = |p: Pos| match p {
            Pos::Hex(h) => (i64::from(h.column()), i64::from(h.row())),
            Pos::Point(pt) => (pt.y(), pt.x()),
        };
        let mut lines: Vec<((i64, i64), String)> = Vec::new();
        for (i, p) in self.state.pieces.iter().enumerate() {
            let (true, Some(at)) = (p.on_board(), p.pos) else {
                continue;
            };
            let who = if p.hidden && p.side != Some(side) {
                format!(
                    "face-down {} piece",
                    p.side.map_or("?".into(), |s| self.side_name(s))
                )
            } else {
                self.piece_label(i, side)
            };
            let marks: Vec<&str> = p
                .markers
                .iter()
                .map(|m| self.rules.program.entities[*m as usize].name.as_str())
                .collect();
            let marks = if marks.is_empty() {
                String::new()
            } else {
                format!(" [{}]", marks.join(", "))
            };
            lines.push((key(at), format!("  {:>12}  {who}{marks}\n", at.label())));
        }
        for (at, m) in &self.state.place_markers {
            let name = &self.rules.program.entities[*m as usize].name;
            lines.push((key(*at), format!("  {:>12}  marker {name}\n", at.label())));
        }
        lines.sort_by_key(|(k, _)| *k);
        for (_, l) in lines {
            out.push_str(&l);
        }
        out
    }

    /// A piece's name as `side` sees it.
    pub fn piece_label(&self, i: usize, side: SideId) -> String {
        self.state.piece_label(i, side)
    }
}
