//! Pieces held off the table. A force's `reserve:` lists pieces that start the game in
//! reserve ([`Status::Reserve`]): never set up, never counted by `alive`, `units` or the
//! victory, not on the board of any look-ahead. An action whose leading `require`s include
//! `in_reserve(x)` on its acting piece `x` is offered to those pieces (and to no piece on the
//! board); its `move x to p` brings the piece onto the board, logged as an `entered` event.
//! How much a side may bring on, and when, is the rules' own business (their guards, their
//! counters); the engine only keeps the pieces and lists where they may enter.

use sandtable_ir::functions::EngineFn;
use sandtable_ir::{EntityId, Expr, ForceDef, ProcId, Program, SideId};

use super::setup::{BoardSpec, Rules};
use super::state::Status;
use super::{EngineError, Game};
use crate::interp::Interp;
use crate::value::Val;

/// The pieces of a force's `reserve:`, `?` resolved through the assumptions.
pub(super) fn read(
    program: &Program,
    interp: &Interp,
    f: &ForceDef,
) -> Result<Vec<EntityId>, EngineError> {
    let name = &program.sides[f.side as usize].name;
    let mut out = Vec::new();
    for v in super::setup::expand(interp, &f.reserve)? {
        match v {
            Val::Entity(e)
                if program.entities[e as usize].category != sandtable_ir::Category::Terrain =>
            {
                out.push(e)
            }
            other => {
                return Err(EngineError::Setup(format!(
                    "force {name}: `reserve` holds {}, not a piece",
                    other.show(program)
                )));
            }
        }
    }
    Ok(out)
}

/// Whether action `a` is taken by pieces in reserve: one of its leading `require`s is
/// `in_reserve(x)` on its first parameter, the acting piece.
pub fn takes_reserve(rules: &Rules, a: ProcId) -> bool {
    rules.guards.get(a as usize).is_some_and(|gs| {
        gs.iter().any(|(g, _)| {
            matches!(g, Expr::Host { func: EngineFn::InReserve, args }
                if args.as_slice() == [Expr::Local(0)])
        })
    })
}

impl Game<'_, '_> {
    /// The pieces of `side` that are offered a phase's `actions` one by one: those on the
    /// board, then, when one of the actions is taken from the reserve, those in reserve.
    pub(super) fn phase_actors(&self, side: SideId, actions: &[ProcId]) -> Vec<usize> {
        let mut out = self.own_on_board(side);
        if actions.iter().any(|&a| takes_reserve(self.rules, a)) {
            out.extend((0..self.state.pieces.len()).filter(|&i| {
                let p = &self.state.pieces[i];
                p.status == Status::Reserve && p.side == Some(side) && p.is_unit
            }));
        }
        out
    }

    /// Whether piece `i` may act in action `a`: on the board, or in reserve for an action
    /// taken from the reserve.
    pub(super) fn may_act_in(&self, i: usize, a: ProcId) -> bool {
        let p = &self.state.pieces[i];
        if takes_reserve(self.rules, a) {
            p.status == Status::Reserve
        } else {
            p.on_board()
        }
    }
}

/// The points offered for a place parameter of a piece entering from the reserve, when its
/// guards narrow it by `distance(centre, p) <= r` from a piece on an open table: around that
/// piece, the board's `move_directions` directions (the first toward the top of the table),
/// each at `k / move_steps` of `r` for every `k`. Points off the table or within a base of
/// another piece on it are left out, as for every move on a table. `None` when the narrowing
/// is not of that form (nothing is listed then).
pub(super) fn entry_points(
    game: &mut Game,
    a: ProcId,
    args: &mut Vec<Val>,
) -> Result<Option<super::options::Listed>, EngineError> {
    let rules = game.rules;
    let BoardSpec::Table { moves, .. } = &rules.board else {
        return Ok(None);
    };
    let Some((k, _, at, r)) = game.distance_bound(a, args)? else {
        return Ok(None);
    };
    let mut out: Vec<Val> = Vec::new();
    for p in crate::board::table::ring_points(at, r, moves.directions, moves.steps) {
        let v = Val::Point(p);
        if game.table_point_free(args.first(), p) && !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(Some((out, vec![k])))
}

impl super::host::GameHost<'_, '_> {
    /// `to_reserve`: a unit on the board goes back off the table into its force's reserve,
    /// where `move` may bring it on again (a squad mounting a carrier, when the carrier's
    /// passengers are its force's reserve). It keeps its counters and markers; while in
    /// reserve it is on no board, so no side sees it and no look-ahead holds it. A piece
    /// carrying others is refused: what it carries would be left with no place.
    pub(super) fn withdraw(&mut self, i: usize) -> Result<(), crate::error::RunError> {
        let refuse = |why: &str| Err(crate::error::RunError::Type(why.to_string()));
        let p = &self.state.pieces[i];
        if !p.on_board() {
            return refuse("`to_reserve` takes a piece on the board");
        }
        if !p.is_unit {
            return refuse("`to_reserve` takes a unit, not a marker or a weapon piece");
        }
        if self
            .state
            .pieces
            .iter()
            .any(|q| q.carried_by == Some(i as u32))
        {
            return refuse("`to_reserve`: the piece carries others");
        }
        let from = p.pos;
        let p = &mut self.state.pieces[i];
        p.status = Status::Reserve;
        p.pos = None;
        if self.tell {
            let e = super::log::Event::Withdrawn {
                piece: p.label.to_string(),
                side: super::host::side_label(self.rules, p.side),
                from: from.map(super::log::Place::from),
                why: self.why.clone(),
            };
            self.said.push(e);
        }
        self.scratch.version += 1;
        Ok(())
    }
}
