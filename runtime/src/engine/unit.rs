//! Activation units: what one chip, side card or free action activates when the activation
//! block says more than one piece (`activates: place | group | side`). The side first picks
//! the unit among those with a piece that has a legal action; then the pieces that were in it
//! act one at a time in the order the side chooses, each up to `actions_per_piece` times,
//! until the side ends the activation or no piece has anything left to do. When the block's
//! `all_act_when` condition fails for the unit as activated, only one of its pieces acts.
//! Actions listed in `together:` are also offered as one choice for every unused piece of the
//! unit that can take them to the same place.

use sandtable_ir::{ProcId, SideId, Stmt};

use super::flow::{Decision, Stage, TogetherRest, UnitTurn};
use super::options::{Act, Choice, MAX_CHOICES};
use super::setup::{UnitKind, UnitSpec};
use super::state::Pos;
use super::{EngineError, Event, Game};
use crate::value::Val;

impl UnitTurn {
    pub fn new(side: SideId, ph: Option<usize>, by: &str) -> Self {
        UnitTurn {
            side,
            ph,
            by: by.to_string(),
            pieces: None,
            used: Vec::new(),
            all: true,
        }
    }
}

impl<'r, 'p> Game<'r, 'p> {
    /// The unit rules and the actions of an activation.
    pub(crate) fn unit_rules(&self, u: &UnitTurn) -> (&'r UnitSpec, &'r [ProcId]) {
        let rules: &'r super::Rules<'p> = self.rules;
        match u.ph.and_then(|ph| rules.phases.get(ph)) {
            Some(ph) => (&ph.unit, &ph.actions),
            None => (&rules.free_unit, &rules.free_actions),
        }
    }

    /// One step of an activation in progress.
    pub(crate) fn step_unit(
        &mut self,
        mut unit: UnitTurn,
        then: Stage,
    ) -> Result<Stage, EngineError> {
        if self.state.winner.is_some() {
            self.flow.drain = true;
            return Ok(then);
        }
        let rules = self.rules;
        let (spec, actions) = self.unit_rules(&unit);
        if unit.pieces.is_none() {
            if spec.kind == UnitKind::Side {
                // Pieces in reserve are in it too when an action brings them on.
                let pieces = self.phase_actors(unit.side, actions);
                let name = format!("every piece of {}", self.side_name(unit.side));
                self.start_unit(&mut unit, spec, pieces, name)?;
                return Ok(Stage::Unit {
                    unit,
                    then: Box::new(then),
                });
            }
            let mut choices = self.unit_candidates(unit.side, spec, actions)?;
            // Actions no piece takes (`pass`) stay open to the side instead of a unit.
            let loose: Vec<ProcId> = actions
                .iter()
                .copied()
                .filter(|&a| rules.program.procs[a as usize].params.is_empty())
                .collect();
            choices.extend(self.legal_for(unit.side, &loose, None)?);
            if choices.is_empty() {
                self.log(Event::Said {
                    text: "no legal action".into(),
                });
                self.flow.drain = true;
                return Ok(then);
            }
            self.ask_unit(unit.side, choices)?;
            return Ok(Stage::Unit {
                unit,
                then: Box::new(then),
            });
        }
        let mut choices = self.unit_actions(&unit, spec, actions)?;
        if choices.is_empty() {
            self.flow.drain = true;
            return Ok(then);
        }
        choices.push(Choice {
            act: Act::Done,
            args: Vec::new(),
        });
        self.ask_unit(unit.side, choices)?;
        Ok(Stage::Unit {
            unit,
            then: Box::new(then),
        })
    }

    fn ask_unit(&mut self, side: SideId, choices: Vec<Choice>) -> Result<(), EngineError> {
        self.flow.decisions += 1;
        if self.flow.decisions > super::MAX_DECISIONS {
            return Err(EngineError::Run(crate::error::RunError::Limit {
                what: "decisions in one game".into(),
                size: self.flow.decisions as u64,
                limit: super::MAX_DECISIONS as u64,
            }));
        }
        self.flow.pending = Some(Decision {
            side,
            choices,
            inside: None,
            unit: true,
        });
        self.flow.drain = true;
        Ok(())
    }

    /// The side's pieces, by the place they stand in (places in the order of their first
    /// piece).
    fn own_by_place(&self, side: SideId) -> Vec<(Pos, Vec<usize>)> {
        let mut out: Vec<(Pos, Vec<usize>)> = Vec::new();
        for i in self.own_on_board(side) {
            let Some(at) = self.state.pieces[i].pos else {
                continue;
            };
            match out.iter_mut().find(|(p, _)| *p == at) {
                Some((_, v)) => v.push(i),
                None => out.push((at, vec![i])),
            }
        }
        out
    }

    /// The pieces of the group `leader` heads: the leader and every piece of its side it
    /// `commands`.
    fn group_of(&mut self, spec: &UnitSpec, leader: usize) -> Result<Vec<usize>, EngineError> {
        let Some(side) = self.state.pieces[leader].side else {
            return Ok(Vec::new());
        };
        let mut out = vec![leader];
        let Some(cmd) = spec.commands else {
            return Ok(out);
        };
        for m in self.own_on_board(side) {
            if m != leader
                && self.condition(cmd, vec![Val::Piece(leader as u32), Val::Piece(m as u32)])?
            {
                out.push(m);
            }
        }
        Ok(out)
    }

    /// A condition hook of the activation block (`require CONDITION`) over `args`.
    fn condition(&mut self, hook: ProcId, args: Vec<Val>) -> Result<bool, EngineError> {
        let Some(Stmt::Require(c)) = self.rules.program.procs[hook as usize].body.first() else {
            return Ok(true);
        };
        let mut slots = args;
        self.with_host(|i, ctx| {
            Ok(matches!(
                i.eval_in(hook, &mut slots, c, ctx)?,
                Val::Bool(true)
            ))
        })
    }

    /// The units the side may activate: those with a piece that has a legal action.
    fn unit_candidates(
        &mut self,
        side: SideId,
        spec: &UnitSpec,
        actions: &[ProcId],
    ) -> Result<Vec<Choice>, EngineError> {
        let mut out = Vec::new();
        match spec.kind {
            UnitKind::Place => {
                for (at, pieces) in self.own_by_place(side) {
                    for i in pieces {
                        if self.has_legal(side, actions, Some(i))? {
                            out.push(Choice {
                                act: Act::Activate,
                                args: vec![super::host::GameHost::pos_val(at)],
                            });
                            break;
                        }
                    }
                }
            }
            UnitKind::Group => {
                for leader in self.own_on_board(side) {
                    for i in self.group_of(spec, leader)? {
                        if self.has_legal(side, actions, Some(i))? {
                            out.push(Choice {
                                act: Act::Activate,
                                args: vec![Val::Piece(leader as u32)],
                            });
                            break;
                        }
                    }
                }
            }
            UnitKind::Piece | UnitKind::Side => {}
        }
        Ok(out)
    }

    /// The unit has been chosen: its pieces, whether all of them may act, and the log.
    pub(crate) fn start_unit(
        &mut self,
        unit: &mut UnitTurn,
        spec: &UnitSpec,
        pieces: Vec<usize>,
        name: String,
    ) -> Result<(), EngineError> {
        unit.all = match spec.all_act_when {
            Some(h) => {
                let list = Val::List(pieces.iter().map(|&i| Val::Piece(i as u32)).collect());
                self.condition(h, vec![list])?
            }
            None => true,
        };
        unit.used = vec![0; pieces.len()];
        let side = self.side_name(unit.side);
        self.log(Event::Activated {
            by: unit.by.clone(),
            side,
            unit: name,
            pieces: pieces.len() as u32,
            all: unit.all,
        });
        unit.pieces = Some(pieces);
        Ok(())
    }

    /// The choices of an activation under way: each action of each piece that may still act,
    /// the `together` moves, (and, added by the caller, ending the activation).
    fn unit_actions(
        &mut self,
        unit: &UnitTurn,
        spec: &UnitSpec,
        actions: &[ProcId],
    ) -> Result<Vec<Choice>, EngineError> {
        let Some(pieces) = &unit.pieces else {
            return Ok(Vec::new());
        };
        let acted: Vec<usize> = (0..pieces.len()).filter(|&k| unit.used[k] > 0).collect();
        // The unit is out of the stage while its choices are listed: `actions_left` reads it
        // from here.
        self.listing_unit = Some((unit.clone(), spec.actions_per_piece));
        let listed = self.unit_choices(unit, spec, actions, pieces, &acted);
        self.listing_unit = None;
        listed
    }

    fn unit_choices(
        &mut self,
        unit: &UnitTurn,
        spec: &UnitSpec,
        actions: &[ProcId],
        pieces: &[usize],
        acted: &[usize],
    ) -> Result<Vec<Choice>, EngineError> {
        let mut out = Vec::new();
        // Per unused piece, its choices (for `together`).
        let mut fresh: Vec<(usize, usize, usize)> = Vec::new();
        for (k, &i) in pieces.iter().enumerate() {
            let may = unit.used[k] < spec.actions_per_piece
                && (self.state.pieces[i].on_board()
                    || self.state.pieces[i].status == super::state::Status::Reserve)
                && (unit.all || acted.is_empty() || acted.contains(&k));
            if !may {
                continue;
            }
            let from = out.len();
            out.extend(self.legal_for(unit.side, actions, Some(i))?);
            if unit.used[k] == 0 {
                fresh.push((i, from, out.len()));
            }
            if out.len() > MAX_CHOICES {
                return Err(EngineError::Policy(format!(
                    "one activation offers more than {MAX_CHOICES} legal choices"
                )));
            }
        }
        // Moving together counts as the one action when only one piece may act.
        if unit.all || acted.is_empty() {
            let mut together = Vec::new();
            for &a in &spec.together {
                // Same place (the arguments after the piece), the pieces that may go there.
                let mut groups: Vec<(&[Val], Vec<Val>)> = Vec::new();
                for &(i, from, to) in &fresh {
                    for c in &out[from..to] {
                        if c.act != Act::Action(a) {
                            continue;
                        }
                        let rest = &c.args[1..];
                        match groups.iter_mut().find(|(r, _)| *r == rest) {
                            Some((_, ps)) => ps.push(Val::Piece(i as u32)),
                            None => groups.push((rest, vec![Val::Piece(i as u32)])),
                        }
                    }
                }
                for (rest, ps) in groups {
                    if ps.len() >= 2 {
                        let mut args = vec![Val::List(ps)];
                        args.extend(rest.iter().cloned());
                        together.push(Choice {
                            act: Act::Together(a),
                            args,
                        });
                    }
                }
            }
            out.extend(together);
        }
        Ok(out)
    }

    /// Book a choice the activation in progress offered: the unit picked, a piece used, the
    /// activation ended.
    pub(crate) fn book_unit_choice(&mut self, c: &Choice) -> Result<(), EngineError> {
        let stage = std::mem::replace(&mut self.flow.stage, Stage::Over);
        let Stage::Unit { mut unit, then } = stage else {
            self.flow.stage = stage;
            return Ok(());
        };
        let (spec, _) = self.unit_rules(&unit);
        let mut done = false;
        match (&c.act, &unit.pieces) {
            (Act::Activate, None) => {
                let (pieces, name) = match (spec.kind, c.args.first()) {
                    (UnitKind::Group, Some(Val::Piece(l))) => {
                        let l = *l as usize;
                        let who = self.piece_label(l, unit.side);
                        (self.group_of(spec, l)?, format!("the group of {who}"))
                    }
                    (_, Some(v)) => {
                        let at = super::options::decode_place(self.rules, v)?;
                        let pieces = self
                            .own_by_place(unit.side)
                            .into_iter()
                            .find(|(p, _)| *p == at)
                            .map(|(_, v)| v)
                            .unwrap_or_default();
                        let name = match at {
                            Pos::Hex(h) => format!("hex {h}"),
                            Pos::Point(_) => format!(
                                "the pieces at {}",
                                at.label(self.rules.program.length_unit.as_deref())
                            ),
                        };
                        (pieces, name)
                    }
                    (_, None) => {
                        return Err(EngineError::Policy("an activation names its unit".into()));
                    }
                };
                self.start_unit(&mut unit, spec, pieces, name)?;
            }
            (Act::Done, _) => done = true,
            (Act::Together(_), Some(pieces)) => {
                if let Some(Val::List(ps)) = c.args.first() {
                    for p in ps {
                        if let Some(k) = pieces.iter().position(|&i| Val::Piece(i as u32) == *p) {
                            unit.used[k] += 1;
                        }
                    }
                }
            }
            (Act::Action(_), Some(pieces)) => {
                if let Some(k) = c
                    .args
                    .first()
                    .and_then(|p| pieces.iter().position(|&i| Val::Piece(i as u32) == *p))
                {
                    unit.used[k] += 1;
                }
            }
            // `pass` instead of a unit: the chip is used up.
            (Act::Action(_), None) => done = true,
            _ => {}
        }
        if done {
            self.flow.stage = *then;
            self.flow.drain = true;
        } else {
            self.flow.stage = Stage::Unit { unit, then };
        }
        Ok(())
    }

    /// Book pieces an action `spend`s as having acted in the activation in progress.
    pub(crate) fn book_spent(&mut self, spent: &[usize]) {
        if spent.is_empty() {
            return;
        }
        if let Stage::Unit { unit, .. } = &mut self.flow.stage
            && let Some(pieces) = &unit.pieces
        {
            for i in spent {
                if let Some(k) = pieces.iter().position(|p| p == i) {
                    unit.used[k] += 1;
                }
            }
        }
    }

    /// Pieces of one unit taking the same action to the same place, one after another in
    /// the unit's order; a piece the earlier ones made unable to go stays where it is.
    pub(crate) fn act_together(
        &mut self,
        side: SideId,
        a: ProcId,
        args: &[Val],
    ) -> Result<(), EngineError> {
        let Some(Val::List(pieces)) = args.first() else {
            return Err(EngineError::Policy(
                "pieces acting together are a list".into(),
            ));
        };
        let rest = &args[1..];
        let mut choices = Vec::with_capacity(pieces.len());
        for p in pieces {
            let Val::Piece(i) = p else {
                return Err(EngineError::Policy(
                    "pieces acting together are pieces".into(),
                ));
            };
            let mut one = vec![p.clone()];
            one.extend(rest.iter().cloned());
            let choice = Choice {
                act: Act::Action(a),
                args: one,
            };
            choices.push((*i as usize, choice));
        }
        self.go_on_together(side, a, choices, None)
    }

    /// The pieces of a together choice act in turn from the first of `choices`, which acts
    /// without a new legality check (it was legal when the choice was made, or when its
    /// action stopped at a `choose`; `resumed` then holds the picks made in it). When a
    /// piece's action stops at a `choose`, the game waits for the answer with the pieces
    /// still to act kept in the flow: [`Game::resume_together`] goes on from there.
    fn go_on_together(
        &mut self,
        side: SideId,
        a: ProcId,
        choices: Vec<(usize, Choice)>,
        mut resumed: Option<(Vec<usize>, Vec<Option<String>>)>,
    ) -> Result<(), EngineError> {
        for n in 0..choices.len() {
            let (i, choice) = &choices[n];
            if n > 0 && !self.legal_for(side, &[a], Some(*i))?.contains(choice) {
                continue;
            }
            // The ones still to come, as things stand (a group entering an enemy hex fights
            // one melee when the last has arrived).
            let mut left = 0;
            for (j, later) in &choices[n + 1..] {
                if self.legal_for(side, &[a], Some(*j))?.contains(later) {
                    left += 1;
                }
            }
            self.together_left = left;
            let done = match resumed.take() {
                Some((picks, whys)) => self.run_action(side, choice.clone(), picks, whys),
                None => self.carry_out(side, choice, false),
            };
            self.together_left = 0;
            done?;
            if self.flow.pending.is_some() {
                // Stopped at a `choose` inside this piece's action (e.g. where a group that
                // lost a melee falls back): the game is as it was before this piece acted.
                self.flow.together = Some(TogetherRest {
                    side,
                    action: a,
                    pieces: choices[n..].to_vec(),
                });
                return Ok(());
            }
        }
        Ok(())
    }

    /// Answer a `choose` inside the action of a piece acting together: its action runs
    /// again with `picks`, then the pieces after it act.
    pub(crate) fn resume_together(
        &mut self,
        rest: TogetherRest,
        action: &Choice,
        picks: Vec<usize>,
        whys: Vec<Option<String>>,
    ) -> Result<(), EngineError> {
        if rest.pieces.first().is_none_or(|(_, c)| c != action) {
            return Err(EngineError::Policy(
                "the pieces acting together lost their place".into(),
            ));
        }
        self.go_on_together(rest.side, rest.action, rest.pieces, Some((picks, whys)))
    }
}
