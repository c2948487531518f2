//! The game engine: whole scenarios played headless by policies.
//!
//! - [`setup`] reads a scenario (board, turns, phases, activation, forces) from the IR;
//! - [`state`] is one game's state, cheap to clone for look-ahead;
//! - [`host`] answers the language's engine functions and applies its effects;
//! - [`options`] enumerates legal choices: an action is legal when its leading `require`s
//!   hold (its preconditions), for every binding of its parameters the engine can list;
//! - [`flow`] is where a game stands in its turn sequence, as data: a game is stepped one
//!   decision at a time ([`Game::advance`], [`Game::to_move`], [`Game::legal`],
//!   [`Game::apply`]), copied, and saved ([`save`]);
//! - [`policy`] decides (random, greedy, human, scripted for replays);
//! - [`log`] records what happened as JSON lines and renders the narrative;
//! - [`sim`] plays many games in parallel with totals independent of the thread count.
//!
//! Randomness: the game's own stream (dice, chip draws) is seeded from the game seed; every
//! policy draws from its own stream, derived from the same seed and its side, so a policy that
//! thinks (rolls dice in look-ahead) never shifts the game's dice.

pub mod flow;
mod fold;
pub mod groups;
pub mod host;
pub mod log;
pub mod mcts;
pub mod options;
pub mod policy;
pub mod reserve;
pub mod save;
pub mod setup;
pub mod sim;
pub mod state;
pub mod typed_point;
pub mod unit;
pub mod written;

use sandtable_ir::{Category, EntityId, ProcId, SideId, Stmt};

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
    /// A side asked to save the game at this decision (the human prompt's `save FILE`): the
    /// command that plays the game writes it and asks again.
    #[error("saving the game to {0} is not possible here")]
    SaveAsked(String),
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
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GameResult {
    pub winner: Winner,
    pub turns: u32,
    pub scores: Vec<i64>,
    /// Eliminated units per side id.
    pub losses: Vec<u32>,
    pub decisions: u32,
    /// Pieces that left the board, per side id.
    pub exits: Vec<u32>,
    /// The winner's exits decided the game: without them (back on the board where they
    /// left it) the victory block names another winner or none.
    pub won_by_exits: bool,
}

pub struct Game<'r, 'p> {
    pub rules: &'r Rules<'p>,
    pub state: State,
    dice: Dice,
    /// Dice for guards, which must not roll the game's (a guard that rolls is a rules bug,
    /// but it must not shift the game).
    guard_dice: Dice,
    scratch: Scratch,
    /// Where the game stands in its turn sequence, and the decision waiting.
    pub flow: flow::Flow,
    pub events: Vec<Event>,
    /// Per event, the sides (a bit each) it named a piece to that they could not see when it
    /// happened: a figure gone below ground, a trap not yet sprung. `None` for events it was
    /// not kept for (those of a resumed game). What a side is told is judged by the moment,
    /// not by what it may see when next it is told.
    told_apart: Vec<Option<u64>>,
    /// Keep events (off in bulk simulation and look-ahead).
    pub logging: bool,
    jit: Option<&'r JitProgram<'p>>,
    /// Some procedure of the rules has a `choose`: actions are run on a snapshot they can
    /// be put back to when one stops for a decision.
    may_choose: bool,
    /// Pieces that acted while not on the board (must stay empty).
    pub acted_off_board: Vec<usize>,
    /// The activation whose choices are being listed (taken out of the stage meanwhile),
    /// and the actions each of its pieces may take: what `actions_left` reads then.
    listing_unit: Option<(flow::UnitTurn, u32)>,
    /// Pieces of the `together` choice being carried out still to act after the one acting:
    /// what `together_left()` reads.
    together_left: u32,
    /// The listing in progress only asks whether there is a legal choice ([`Game::has_legal`]).
    first_only: bool,
    /// While `first_only`: list a distance narrowing's places next to its centre only
    /// (`near_cap`), and whether that left some out (`near_capped`).
    near_cap: bool,
    near_capped: bool,
}

impl Clone for Game<'_, '_> {
    /// An independent copy: advancing it never touches this game. The caches start empty.
    fn clone(&self) -> Self {
        Game {
            rules: self.rules,
            state: self.state.clone(),
            dice: self.dice.clone(),
            guard_dice: self.guard_dice.clone(),
            scratch: Scratch::default(),
            flow: self.flow.clone(),
            events: self.events.clone(),
            told_apart: self.told_apart.clone(),
            logging: self.logging,
            jit: self.jit,
            may_choose: self.may_choose,
            acted_off_board: self.acted_off_board.clone(),
            listing_unit: self.listing_unit.clone(),
            together_left: self.together_left,
            first_only: false,
            near_cap: false,
            near_capped: false,
        }
    }
}

impl<'r, 'p> Game<'r, 'p> {
    pub fn new(rules: &'r Rules<'p>, seed: u64, jit: Option<&'r JitProgram<'p>>) -> Self {
        let program = rules.program;
        let mut pieces: Vec<Piece> = Vec::new();
        for f in &rules.forces {
            let side_name = &program.sides[f.side as usize].name;
            // The reserve follows the units set up, numbered with them so labels stay unique.
            let all: Vec<EntityId> = f.units.iter().chain(&f.reserve).copied().collect();
            for (k, &e) in all.iter().enumerate() {
                let ent = &program.entities[e as usize];
                let same = all.iter().filter(|x| **x == e).count();
                let nth = all[..k].iter().filter(|x| **x == e).count() + 1;
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
                    status: if k < f.units.len() {
                        Status::OnBoard
                    } else {
                        Status::Reserve
                    },
                    markers: Vec::new(),
                    counters: Vec::new(),
                    hidden: f.hidden,
                    secret: false,
                    concealed: false,
                    exited_at: None,
                    carried_by: None,
                    is_unit: ent.category == Category::Unit,
                    placed_by: Some(f.side),
                });
            }
        }
        // Pieces of no side: a force's markers (it sets them up), then the scenario's
        // neutral pieces where it puts them. Numbered per entity across the whole game.
        let mut neutral: Vec<(EntityId, Option<Pos>, Option<SideId>, bool)> = Vec::new();
        for f in &rules.forces {
            let secret = f.flags.iter().any(|(k, v)| k == "secret_markers" && *v);
            neutral.extend(f.markers.iter().map(|e| (*e, None, Some(f.side), secret)));
        }
        neutral.extend(
            rules
                .neutral
                .iter()
                .map(|(e, at)| (*e, Some(*at), None, false)),
        );
        for (k, &(e, pos, placed_by, secret)) in neutral.iter().enumerate() {
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
                secret,
                concealed: false,
                exited_at: None,
                carried_by: None,
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
                side_counters: Vec::new(),
                activations: vec![0; program.sides.len()],
            },
            Dice::new(stream_seed(seed, 0)),
            Dice::new(stream_seed(seed, 99)),
            flow::Flow::new(program.sides.len()),
            jit,
        )
    }

    /// A game in `state` at `flow`, logging, with fresh caches.
    pub(crate) fn with_state(
        rules: &'r Rules<'p>,
        state: State,
        dice: Dice,
        guard_dice: Dice,
        flow: flow::Flow,
        jit: Option<&'r JitProgram<'p>>,
    ) -> Self {
        let may_choose = rules.program.procs.iter().any(|p| {
            sandtable_ir::stmts_post_order(&p.body)
                .iter()
                .any(|s| matches!(s, Stmt::Choose { .. }))
        });
        Game {
            rules,
            state,
            dice,
            guard_dice,
            scratch: Scratch::default(),
            flow,
            events: Vec::new(),
            told_apart: Vec::new(),
            logging: true,
            jit,
            may_choose,
            acted_off_board: Vec::new(),
            listing_unit: None,
            together_left: 0,
            first_only: false,
            near_cap: false,
            near_capped: false,
        }
    }

    fn log(&mut self, e: Event) {
        if self.logging {
            self.keep_apart(std::slice::from_ref(&e));
            self.events.push(e);
        }
    }

    fn say(&mut self, said: Vec<Event>) {
        if self.logging {
            self.keep_apart(&said);
            self.events.extend(said);
        }
    }

    /// Record, for events about to be logged, the sides that cannot see a piece they name.
    fn keep_apart(&mut self, new: &[Event]) {
        // Events set or taken from outside (a resumed game) were not judged.
        self.told_apart.resize(self.events.len(), None);
        let unseen: Vec<usize> = (0..self.state.pieces.len())
            .filter(|&i| self.state.pieces[i].out_of_sight())
            .collect();
        for e in new {
            let mut mask = 0u64;
            if !unseen.is_empty()
                && let Some(line) = log::narrate(e, self.rules.program.length_unit.as_deref())
            {
                for side in self.rules.sides() {
                    let blind = unseen.iter().any(|&i| {
                        !self.state.seen_by(i, side)
                            && log::mentions(&line, &self.state.pieces[i].label)
                    });
                    if blind && side < 64 {
                        mask |= 1 << side;
                    }
                }
            }
            self.told_apart.push(Some(mask));
        }
    }

    /// Whether event `k` named to `side` a piece it could not see then; `None` when that was
    /// not recorded.
    pub fn told_apart(&self, k: usize, side: SideId) -> Option<bool> {
        let mask = (*self.told_apart.get(k)?)?;
        Some(side < 64 && mask & (1 << side) != 0)
    }

    fn side_name(&self, s: SideId) -> String {
        self.rules.side_name(s).to_string()
    }

    /// Run a hook or an action with the game as host. `chooser` is the acting side with the
    /// picks already made at its `choose` points; at a `choose` past them the run stops and
    /// the side to ask and its options are returned (the caller puts the game back as it was).
    fn run_proc(
        &mut self,
        proc: ProcId,
        args: Vec<Val>,
        chooser: Option<(SideId, Vec<usize>)>,
        whys: &[Option<String>],
    ) -> Result<Option<(SideId, Vec<String>)>, EngineError> {
        let args_shown: Vec<String> = if self.logging {
            args.iter()
                .map(|v| match v {
                    Val::Piece(i) if (*i as usize) < self.state.pieces.len() => {
                        self.state.pieces[*i as usize].label.to_string()
                    }
                    other => other.show(self.rules.program),
                })
                .collect()
        } else {
            Vec::new()
        };
        let unit = match &self.flow.stage {
            flow::Stage::Unit { unit, .. } if unit.pieces.is_some() => {
                Some((unit, self.unit_rules(unit).0.actions_per_piece))
            }
            _ => None,
        };
        let (r, said, picks, need, spent) = {
            let mut host = GameHost::quiet(self.rules, &mut self.state, &mut self.scratch);
            host.unit = unit;
            host.together_left = self.together_left;
            host.tell = self.logging;
            if self.logging {
                host.why = Some(self.rules.program.procs[proc as usize].name.clone());
            }
            if let Some((side, given)) = chooser {
                host.chooser = Some(side);
                host.given = given;
            }
            host.jit = self.jit;
            let interp = Interp::new(self.rules.program, self.rules.assumptions);
            let r = {
                let mut ctx = Ctx::new(&mut self.dice, &mut host);
                interp.run(proc, args, &mut ctx)
            };
            let side = host.chooser;
            // A piece shown for the action is face down again once it is over.
            for &i in &host.shown {
                host.state.pieces[i].hidden = true;
            }
            (
                r,
                host.said,
                side.map(|s| (s, host.picks)),
                host.need,
                host.spent,
            )
        };
        if let Some(options) = need {
            return Ok(Some(options));
        }
        if r.is_ok() {
            self.book_spent(&spent);
        }
        if self.logging
            && let Some((side, _)) = &picks
            && r.is_ok()
        {
            let e = Event::Acted {
                side: self.side_name(*side),
                action: self.rules.program.procs[proc as usize].name.clone(),
                args: args_shown,
            };
            self.log(e);
        }
        self.say(said);
        if let Some((_, picks)) = picks {
            self.flow.decisions += picks.len();
            for (n, (choice, of, label, side)) in picks.into_iter().enumerate() {
                let name = self.side_name(side);
                self.log(Event::Decision {
                    side: name,
                    choice,
                    of,
                    label,
                    typed: None,
                    why: whys.get(n).cloned().flatten(),
                });
            }
        }
        match r {
            Ok(_) => Ok(None),
            Err(RunError::Illegal(a)) => Err(EngineError::Run(RunError::Type(format!(
                "`{a}` hit a `require` that does not hold after its preconditions: only the leading `require`s of an action decide whether it is legal"
            )))),
            Err(e) => Err(e.into()),
        }
    }

    /// Play the game to its end with one policy per side (indexed by side id): a loop over
    /// [`Game::advance`], [`Game::to_move`] and [`Game::apply`].
    pub fn play(
        &mut self,
        policies: &mut [Box<dyn Policy + '_>],
    ) -> Result<GameResult, EngineError> {
        self.advance()?;
        while let Some(side) = self.to_move() {
            let policy = policies
                .get_mut(side as usize)
                .ok_or_else(|| EngineError::Policy(format!("no policy for side {side}")))?;
            match policy.answer(self, side, self.legal())? {
                policy::Answer::Listed(k) => self.apply_because(k, policy.reason())?,
                policy::Answer::Point { like, at } => self.apply_point(like, at)?,
            }
        }
        self.result()
            .cloned()
            .ok_or_else(|| EngineError::Policy("the game stopped before its end".into()))
    }

    fn own_on_board(&self, side: SideId) -> Vec<usize> {
        (0..self.state.pieces.len())
            .filter(|&i| {
                let p = &self.state.pieces[i];
                p.on_board() && p.side == Some(side) && p.is_unit
            })
            .collect()
    }

    /// Score of the position for `side` as a greedy policy sees it: the scenario's victory run
    /// on this game, which it uses up (a look-ahead copy): who would win now and the scores it
    /// sets, then the losses.
    pub fn into_value(mut self, side: SideId) -> i64 {
        self.logging = false;
        if self.state.winner.is_none()
            && let Some(v) = self.rules.victory
        {
            let _ = self.run_proc(v, Vec::new(), None, &[]);
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

    /// This game's state with the pieces `side` cannot see shuffled among themselves
    /// (Fisher–Yates on dice from `seed`), and those dice to play on with: what `side` may
    /// imagine, learning nothing hidden.
    fn shuffled_for(&self, side: SideId, seed: u64) -> (State, Dice) {
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
        // A face-down stack tells that two or more stand there, not how many: the pieces of
        // another side's stacks are dealt anew among those stacks, two at least to each
        // (a Platoon substitute, 7.a.3, 7.b). Pieces with markers (known where they are) and
        // those of an activation in progress stay.
        let acting = match &self.flow.stage {
            flow::Stage::Unit { unit, .. } => Some(unit.side),
            _ => None,
        };
        for other in self.rules.sides() {
            if other == side || acting == Some(other) {
                continue;
            }
            let face_down = |p: &state::Piece| p.hidden && p.side == Some(other) && p.on_board();
            let mut stacks: Vec<(state::Pos, Vec<usize>)> = Vec::new();
            for (i, p) in state.pieces.iter().enumerate() {
                let (true, Some(at)) = (face_down(p), p.pos) else {
                    continue;
                };
                match stacks.iter_mut().find(|(q, _)| *q == at) {
                    Some((_, v)) => v.push(i),
                    None => stacks.push((at, vec![i])),
                }
            }
            stacks.retain(|(_, v)| v.len() >= 2);
            if stacks.len() < 2 {
                continue;
            }
            // What stays: pieces with markers; the rest are dealt out.
            let mut room: Vec<u32> = Vec::new();
            let mut pool: Vec<usize> = Vec::new();
            for (_, v) in &stacks {
                let fixed = v
                    .iter()
                    .filter(|&&i| !state.pieces[i].markers.is_empty())
                    .count();
                room.push(2u32.saturating_sub(fixed as u32));
                pool.extend(
                    v.iter()
                        .copied()
                        .filter(|&i| state.pieces[i].markers.is_empty()),
                );
            }
            let need: u32 = room.iter().sum();
            if (pool.len() as u32) < need {
                continue;
            }
            let mut k = 0;
            for (s, want) in room.iter().enumerate() {
                for _ in 0..*want {
                    state.pieces[pool[k]].pos = Some(stacks[s].0);
                    k += 1;
                }
            }
            for &i in &pool[k..] {
                let s = dice.index(stacks.len() as u32) as usize;
                state.pieces[i].pos = Some(stacks[s].0);
            }
        }
        // Pieces the side does not know of are not on its imagined board.
        for i in 0..state.pieces.len() {
            if !state.seen_by(i, side) {
                state.pieces[i].status = Status::Exited;
            }
        }
        // Secret counters of the other sides' pieces are shuffled among those pieces, so the
        // side imagines scores as likely as the real ones without learning whose is whose.
        for &name in &self.rules.secret_counters {
            for other in self.rules.sides() {
                if other == side {
                    continue;
                }
                let own: Vec<usize> = (0..state.pieces.len())
                    .filter(|&i| {
                        let p = &state.pieces[i];
                        p.side == Some(other) && p.on_board()
                    })
                    .collect();
                for k in (1..own.len()).rev() {
                    let j = dice.index(k as u32 + 1) as usize;
                    let (a, b) = (own[k], own[j]);
                    let va = state.pieces[a].counter(name);
                    let vb = state.pieces[b].counter(name);
                    state.pieces[a].set_counter(name, vb);
                    state.pieces[b].set_counter(name, va);
                }
            }
        }
        (state, dice)
    }

    /// A copy of this game for look-ahead by `side`: its own dice, no log, and the pieces the
    /// side cannot see shuffled among themselves so the look-ahead learns nothing hidden.
    pub fn lookahead_copy(&self, side: SideId, seed: u64) -> Game<'r, 'p> {
        let (state, dice) = self.shuffled_for(side, seed);
        // The copy stands at this decision without its list of choices: the look-ahead
        // carries out one of them itself ([`Game::try_choice`]).
        let mut flow = flow::Flow::new(0);
        flow.stage = self.flow.stage.clone();
        flow.hooks = self.flow.hooks.clone();
        flow.drain = self.flow.drain;
        flow.decisions = self.flow.decisions;
        flow.chips_drawn = self.flow.chips_drawn.clone();
        let mut copy =
            Game::with_state(self.rules, state, dice, Dice::new(seed ^ 1), flow, self.jit);
        copy.logging = false;
        copy
    }

    /// One world `side` cannot tell from this one, for search: a copy at this decision with
    /// the pieces it cannot see shuffled among themselves, fresh dice from `seed`, no log.
    pub fn possible_world(&self, side: SideId, seed: u64) -> Game<'r, 'p> {
        let (state, dice) = self.shuffled_for(side, seed);
        let mut world = Game::with_state(
            self.rules,
            state,
            dice,
            Dice::new(seed ^ 1),
            self.flow.clone(),
            self.jit,
        );
        world.logging = false;
        // The order of a deck's undrawn cards is the future no side has seen: the world
        // deals it anew (a world without a deck draws nothing here).
        let mut stage = &mut world.flow.stage;
        while let flow::Stage::Unit { then, .. } = stage {
            stage = then;
        }
        if let flow::Stage::Deck { pile, .. } = stage {
            for k in (1..pile.len()).rev() {
                let j = world.dice.index(k as u32 + 1) as usize;
                pile.swap(k, j);
            }
        }
        // The waiting decision was listed in the real game: keep what is open in this world.
        if let Some(mut d) = world.flow.pending.take() {
            if d.inside.is_none() {
                d.choices.retain(|c| world.choice_open(c));
            }
            world.flow.pending = Some(d);
        }
        world
    }

    /// Carry out `side`'s choice `c` on a look-ahead copy and nothing after it: the
    /// `choose` points inside it are answered by `inner`.
    pub fn try_choice(
        &mut self,
        side: SideId,
        c: &Choice,
        inner: &mut dyn Policy,
    ) -> Result<(), EngineError> {
        let unit = self.flow.pending.as_ref().is_some_and(|d| d.unit);
        self.flow.pending = None;
        let depth = self.flow.stage.unit_depth();
        self.carry_out(side, c, unit)?;
        while self.flow.pending.is_some() {
            let k = inner.choose(self, side, self.legal())?;
            self.apply_only(k)?;
        }
        // Picking a unit changes nothing yet: look on to the end of its activation.
        if unit && c.act == Act::Activate {
            self.finish_unit(depth, inner)?;
        }
        Ok(())
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
        // Face-down pieces of another side standing together show as one stack: how many
        // there are is not told (a Platoon substitute stands for them), only that there are
        // more than one.
        let mut stacks: Vec<(Pos, Option<SideId>)> = Vec::new();
        for (i, p) in self.state.pieces.iter().enumerate() {
            let (true, Some(at)) = (p.on_board(), p.pos) else {
                continue;
            };
            if !self.state.seen_by(i, side) {
                continue;
            }
            let face_down = p.hidden && p.side != Some(side);
            let mut marked: Vec<EntityId> = p.markers.clone();
            let who = if face_down {
                if stacks.contains(&(at, p.side)) {
                    continue;
                }
                stacks.push((at, p.side));
                let together: Vec<&Piece> = self
                    .state
                    .pieces
                    .iter()
                    .filter(|q| q.on_board() && q.pos == Some(at) && q.hidden && q.side == p.side)
                    .collect();
                for q in &together {
                    for m in &q.markers {
                        if !marked.contains(m) {
                            marked.push(*m);
                        }
                    }
                }
                format!(
                    "face-down {} {}",
                    p.side.map_or("?".into(), |s| self.side_name(s)),
                    if together.len() > 1 { "stack" } else { "piece" }
                )
            } else {
                self.piece_label(i, side)
            };
            let marks: Vec<&str> = marked
                .iter()
                .map(|m| self.rules.program.entities[*m as usize].name.as_str())
                .collect();
            let marks = if marks.is_empty() {
                String::new()
            } else {
                format!(" [{}]", marks.join(", "))
            };
            // Secret counters only on the side's own pieces.
            let scores: Vec<String> = if p.side == Some(side) {
                self.rules
                    .secret_counters
                    .iter()
                    .map(|&c| {
                        let name = self.rules.program.counter_name(c);
                        format!("{name} {}", p.counter(c))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let scores = if scores.is_empty() {
                String::new()
            } else {
                format!(" {{{}}}", scores.join(", "))
            };
            lines.push((
                key(at),
                format!(
                    "  {:>12}  {who}{marks}{scores}\n",
                    at.label(self.rules.program.length_unit.as_deref())
                ),
            ));
        }
        for (at, m) in &self.state.place_markers {
            let name = &self.rules.program.entities[*m as usize].name;
            lines.push((
                key(*at),
                format!(
                    "  {:>12}  marker {name}\n",
                    at.label(self.rules.program.length_unit.as_deref())
                ),
            ));
        }
        lines.sort_by_key(|(k, _)| *k);
        for (_, l) in lines {
            out.push_str(&l);
        }
        out
    }

    /// A piece's name as `side` sees it.
    pub fn piece_label(&self, i: usize, side: SideId) -> String {
        self.state
            .piece_label(i, side, self.rules.program.length_unit.as_deref())
    }
}
