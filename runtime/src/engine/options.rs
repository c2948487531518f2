//! Legal choices. An action is legal for a binding of its parameters when its leading
//! `require`s hold. The engine lists candidate values per parameter from its type (pieces of
//! the kind, places on the board, both booleans, the values of a small range) and narrows
//! place candidates with the action's own guards before testing them: a leading
//! `require distance(x, p) <= r` or `move_cost(x, p) <= r` limits `p` to the hexes within `r`
//! of `x`, `require adjacent(x, p)` to the neighbours, `require count_units(p, …) > 0` to the
//! hexes holding pieces. The guards are still checked afterwards: narrowing only saves work.

use sandtable_ir::functions::{By, EngineFn, Narrowing};
use sandtable_ir::scenario::{DEPLOY_GRID, MAX_DEPLOY_POINTS};
use sandtable_ir::{BinOp, Expr, ProcId, SideId, Stmt, Type};

use super::host::GameHost;
use super::setup::{BoardSpec, DeployArea, Rules};
use super::state::Pos;
use super::{EngineError, Game};
use crate::board::table::INCH;
use crate::board::{HexCoord, Point};
use crate::interp::{Ctx, Interp};
use crate::value::Val;

/// Most values listed for one ranged int parameter.
const MAX_RANGE_CANDIDATES: i64 = 64;

// The compiler counts set-up points on the IR's grid: it must be the runtime's 2 inches.
const _: () = assert!(DEPLOY_GRID == 2 * INCH);

/// Most legal choices one decision may offer: the largest hex board's hexes, so one place
/// parameter is always listable. Every choice is held in memory until the policy picks one
/// (about 150 MB at the limit), and an action binding several pieces grows as their product
/// (four piece parameters over 40 pieces are 2 million bindings): past this the game stops
/// with an error naming the action rather than exhausting memory.
pub const MAX_CHOICES: usize = crate::board::HexGrid::MAX_HEXES as usize;

#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Act {
    Deploy,
    Action(ProcId),
    /// A piece given the chance to act does nothing.
    Hold,
    /// One of the options of a `choose` inside an action (the option's index is the argument).
    Pick,
    /// Activate a unit: the place (a hex, a point) or the group's leader.
    Activate,
    /// Several unused pieces of the unit take this action to the same place: the pieces (a
    /// list), then the action's other arguments.
    Together(ProcId),
    /// End the activation in progress.
    Done,
}

/// One thing a side may do. Its words (`fire_at(taylor, P7)`) come from [`Game::label`],
/// only when someone reads them: most choices are never shown.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Choice {
    pub act: Act,
    pub args: Vec<Val>,
}

pub fn decode_place(rules: &Rules, v: &Val) -> Result<Pos, EngineError> {
    match v {
        Val::Hex(h) => Ok(Pos::Hex(*h)),
        Val::Sym(s) => HexCoord::parse(s)
            .map(Pos::Hex)
            .map_err(|e| EngineError::Policy(e.to_string())),
        Val::Point(p) => Ok(Pos::Point(*p)),
        Val::List(xy) if xy.len() == 2 => {
            let (Some(x), Some(y)) = (xy[0].as_int(), xy[1].as_int()) else {
                return Err(EngineError::Policy("a point is two numbers".into()));
            };
            Point::new(x, y)
                .map(Pos::Point)
                .map_err(|e| EngineError::Policy(e.to_string()))
        }
        other => Err(EngineError::Policy(format!(
            "not a place: {}",
            other.show(rules.program)
        ))),
    }
}

/// Whether a `deploy_check:` (piece, place) body gives one answer for every place nothing
/// stands on: it reads the place only as the place of `has_marker`, `count_units` or
/// `units_in` (what stands there, nothing when the place is empty), and rolls no dice and
/// calls no procedure (which could read the place, or roll) on the way.
pub(crate) fn same_on_every_empty_place(body: &[Stmt]) -> bool {
    const PLACE: u32 = 1;
    let (mut reads, mut by_contents, mut opaque) = (0, 0, false);
    sandtable_ir::visit_stmts(body, false, &mut |e, _| {
        e.walk(&mut |x| match x {
            Expr::Local(PLACE) => reads += 1,
            Expr::Host { func, args }
                if matches!(
                    func,
                    EngineFn::HasMarker | EngineFn::CountUnits | EngineFn::UnitsIn
                ) && matches!(args.first(), Some(Expr::Local(PLACE))) =>
            {
                by_contents += 1
            }
            Expr::Roll(_) | Expr::Dice { .. } | Expr::Call { .. } | Expr::Stack { .. } => {
                opaque = true
            }
            _ => {}
        })
    });
    !opaque && reads == by_contents
}

/// A leading guard that says which hexes a place parameter may take, in a form the engine can
/// list directly. The hexes listed satisfy it exactly, so it is not tested again.
pub(crate) enum Narrow<'e> {
    /// `by(centre, p) <= radius` (or `< radius`): distance, move cost, adjacency. With
    /// `extra`, the guard reads `by(centre, p) + extra <= radius`: the bound is `radius - extra`.
    Within {
        by: By,
        centre: &'e Expr,
        radius: &'e Expr,
        extra: Option<&'e Expr>,
        strict: bool,
    },
    /// `count_units(p, filters…) > 0`, or `== 0` when `present` is false.
    Occupied { filters: &'e [Expr], present: bool },
    /// `p != value`.
    Not(&'e Expr),
}

fn uses_slot_at_or_after(e: &Expr, slot: u32) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if let Expr::Local(s) = x
            && *s >= slot
        {
            found = true;
        }
    });
    found
}

/// Every leading guard that narrows parameter `slot`, with its index among the guards.
pub(crate) fn narrowings(body: &[Stmt], slot: u32) -> Vec<(usize, Narrow<'_>)> {
    let me = Expr::Local(slot);
    let earlier = |e: &Expr| !uses_slot_at_or_after(e, slot);
    let mut out = Vec::new();
    for (guard, s) in body.iter().enumerate() {
        let Stmt::Require(c) = s else { break };
        // What each engine function's guard says of `p` is its row of the table.
        let found = match c {
            Expr::Binary { op, lhs, rhs } if matches!(op, BinOp::Le | BinOp::Lt) => {
                // `f(x, p) <= r`, or `f(x, p) + e <= r` (either order) with `e` reading only
                // earlier parameters, as a cost with a load on top of it.
                let (measure, extra) = match &**lhs {
                    Expr::Binary {
                        op: BinOp::Add,
                        lhs: l,
                        rhs: r,
                    } if matches!(**l, Expr::Host { .. }) && earlier(r) => (&**l, Some(&**r)),
                    Expr::Binary {
                        op: BinOp::Add,
                        lhs: l,
                        rhs: r,
                    } if matches!(**r, Expr::Host { .. }) && earlier(l) => (&**r, Some(&**l)),
                    other => (other, None),
                };
                match measure {
                    Expr::Host { func, args } => match func.narrowing() {
                        Some(Narrowing::Within(by))
                            if by != By::Adjacent
                                && args.len() == 2
                                && args[1] == me
                                && earlier(&args[0])
                                && earlier(rhs) =>
                        {
                            Some(Narrow::Within {
                                by,
                                centre: &args[0],
                                radius: rhs,
                                extra,
                                strict: *op == BinOp::Lt,
                            })
                        }
                        _ => None,
                    },
                    _ => None,
                }
            }
            Expr::Host { func, args }
                if func.narrowing() == Some(Narrowing::Within(By::Adjacent))
                    && args.len() == 2
                    && args[1] == me
                    && earlier(&args[0]) =>
            {
                Some(Narrow::Within {
                    by: By::Adjacent,
                    centre: &args[0],
                    radius: &ONE,
                    extra: None,
                    strict: false,
                })
            }
            Expr::Binary { op, lhs, rhs }
                if matches!(op, BinOp::Gt | BinOp::Eq)
                    && matches!(&**rhs, Expr::Const(sandtable_ir::Value::Int(0))) =>
            {
                match &**lhs {
                    Expr::Host { func, args }
                        if func.narrowing() == Some(Narrowing::Occupied)
                            && args.first() == Some(&me)
                            && args[1..].iter().all(earlier) =>
                    {
                        Some(Narrow::Occupied {
                            filters: &args[1..],
                            present: *op == BinOp::Gt,
                        })
                    }
                    _ => None,
                }
            }
            Expr::Binary {
                op: BinOp::Ne,
                lhs,
                rhs,
            } => {
                if **lhs == me && earlier(rhs) {
                    Some(Narrow::Not(rhs))
                } else if **rhs == me && earlier(lhs) {
                    Some(Narrow::Not(lhs))
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some(n) = found {
            out.push((guard, n));
        }
    }
    out
}

/// Values listed for a parameter, and the guards they meet by construction.
pub(super) type Listed = (Vec<Val>, Vec<usize>);

/// Halvings in the search for the farthest legal point along a line of an open-table move:
/// the point found is within 1/32 of the line's reach of the true farthest one.
const SEARCH_STEPS: u32 = 5;

/// `path_clear(x, p)` (or `path_clear(x, p, F…)`) as the engine function reads it, for piece
/// `me` going straight from `from` to `to`: no other figure's base (nor a flag's) touched on
/// the way. `others` are where the other figures stand that are not passed through
/// ([`figures_near`]).
fn path_clear(others: &[Point], from: Point, to: Point, base: i64) -> bool {
    (others.iter()).all(|&c| !crate::board::table::passes_within(from, to, c, base))
}

/// Where the figures other than `me` stand that a straight move from `from` of at most
/// `reach` may touch: a segment that long comes no nearer than `base` to a centre farther
/// than `reach + base` (one unit more for the rounding of the move's end). The others are
/// left out of every [`path_clear`] of the listing, and so are those `passed` marks (the
/// pieces a filtered `path_clear(x, p, F…)` passes through).
fn figures_near(
    state: &super::state::State,
    me: usize,
    from: Point,
    reach: i64,
    base: i64,
    passed: &[bool],
) -> Vec<Point> {
    let far = i128::from(reach.saturating_add(base).saturating_add(1));
    (state.pieces.iter().enumerate())
        .filter(|&(j, q)| j != me && q.on_board() && !passed.get(j).copied().unwrap_or(false))
        .filter_map(|(_, q)| match q.pos {
            Some(Pos::Point(c)) => Some(c),
            _ => None,
        })
        .filter(|&c| i128::from(crate::board::table::distance_squared(from, c)) <= far * far)
        .collect()
}

/// How many steps of its allowance a bounded length parameter is offered at.
const LENGTH_STEPS: i64 = 4;

/// The first leading `require p <= E` or `p < E` on parameter `slot`, with `E` reading only
/// earlier parameters: the bound and whether it is strict.
pub(crate) fn length_bound(body: &[Stmt], slot: u32) -> Option<(&Expr, bool)> {
    let me = Expr::Local(slot);
    for s in body {
        let Stmt::Require(c) = s else { break };
        if let Expr::Binary { op, lhs, rhs } = c
            && matches!(op, BinOp::Le | BinOp::Lt)
            && **lhs == me
            && !uses_slot_at_or_after(rhs, slot)
        {
            return Some((rhs, *op == BinOp::Lt));
        }
    }
    None
}

/// The leading `require`s of a body, each with the number of parameters it needs bound.
pub fn leading_guards(body: &[Stmt]) -> Vec<(&Expr, usize)> {
    let mut out = Vec::new();
    for s in body {
        let Stmt::Require(c) = s else { break };
        // A quantifier's item (`any(u in …, …)`) is bound by the guard itself, not a parameter.
        let mut own = Vec::new();
        c.walk(&mut |x| {
            if let Expr::Quant { slot, .. } = x {
                own.push(*slot);
            }
        });
        let mut level = 0;
        c.walk(&mut |x| {
            if let Expr::Local(slot) = x
                && !own.contains(slot)
            {
                level = level.max(*slot as usize + 1);
            }
        });
        out.push((c, level));
    }
    out
}

/// The bound a `Within` narrowing puts on its measure: `radius`, less `extra` when the guard
/// adds one to the measure. `None` when either is not a number.
fn bound_of(
    i: &Interp,
    ctx: &mut Ctx,
    a: ProcId,
    args: &mut Vec<Val>,
    radius: &Expr,
    extra: Option<&Expr>,
) -> Result<Option<i64>, crate::error::RunError> {
    let Some(r) = i.eval_in(a, args, radius, ctx)?.as_int() else {
        return Ok(None);
    };
    match extra {
        None => Ok(Some(r)),
        Some(e) => Ok(i
            .eval_in(a, args, e, ctx)?
            .as_int()
            .map(|e| r.saturating_sub(e))),
    }
}

static ONE: Expr = Expr::Const(sandtable_ir::Value::Int(1));

impl Game<'_, '_> {
    pub(crate) fn with_host<T>(
        &mut self,
        f: impl FnOnce(&Interp, &mut Ctx) -> Result<T, crate::error::RunError>,
    ) -> Result<T, EngineError> {
        // Preconditions have no effects; a scratch dice stream keeps even a guard that rolls
        // from touching the game's dice.
        let unit = match (&self.listing_unit, &self.flow.stage) {
            (Some((unit, per)), _) => Some((unit, *per)),
            (None, super::flow::Stage::Unit { unit, .. }) if unit.pieces.is_some() => {
                Some((unit, self.unit_rules(unit).0.actions_per_piece))
            }
            _ => None,
        };
        let dice = &mut self.guard_dice;
        let mut host = GameHost::quiet(self.rules, &mut self.state, &mut self.scratch);
        host.unit = unit;
        let interp = Interp::new(self.rules.program, self.rules.assumptions);
        let mut ctx = Ctx::new(dice, &mut host);
        Ok(f(&interp, &mut ctx)?)
    }

    /// Whether choice `c` is open now: an action's leading `require`s all hold for its
    /// arguments. A look-ahead world re-deals what its side cannot see (hidden pieces, secret
    /// counters), so a choice listed in the real game may be shut there. Choices that start
    /// no action of one piece are open; a guard that fails to evaluate shuts the choice.
    pub(crate) fn choice_open(&mut self, c: &Choice) -> bool {
        let Act::Action(a) = c.act else {
            return true;
        };
        let rules = self.rules;
        let guards = &rules.guards[a as usize];
        let mut args = c.args.clone();
        guards.iter().all(|&(g, _)| {
            self.with_host(|i, ctx| Ok(matches!(i.eval_in(a, &mut args, g, ctx)?, Val::Bool(true))))
                .unwrap_or(false)
        })
    }

    /// Every legal choice of `actions` for `side`; with `actor`, only that piece's.
    pub fn legal_for(
        &mut self,
        side: SideId,
        actions: &[ProcId],
        actor: Option<usize>,
    ) -> Result<Vec<Choice>, EngineError> {
        let mut out = Vec::with_capacity(64);
        let rules = self.rules;
        for &a in actions {
            let params = &rules.program.procs[a as usize].params;
            let guards = &rules.guards[a as usize];
            if params.is_empty() {
                // No piece acts: offered at chips, cards and free actions, not to a piece.
                if actor.is_none() {
                    self.bind(a, params, guards, 0, &[], &mut Vec::new(), &mut out, 1)?;
                    if self.first_only && !out.is_empty() {
                        return Ok(out);
                    }
                }
                continue;
            }
            // The first parameter is the piece that acts: one of the side's own.
            let Some(kind) = self.rules.param_kind(a, 0) else {
                continue;
            };
            let actors: Vec<usize> = (0..self.state.pieces.len())
                .filter(|&i| {
                    let p = &self.state.pieces[i];
                    actor.is_none_or(|x| x == i)
                        && self.may_act_in(i, a)
                        && p.side == Some(side)
                        && kind.is_none_or(|k| {
                            self.rules.program.entities[p.entity as usize].kind == Some(k)
                        })
                })
                .collect();
            let n = actors.len() as u64;
            for i in actors {
                let mut args = Vec::with_capacity(params.len());
                args.push(Val::Piece(i as u32));
                self.bind(a, params, guards, 0, &[], &mut args, &mut out, n)?;
                if self.first_only && !out.is_empty() {
                    return Ok(out);
                }
            }
        }
        Ok(out)
    }

    /// Whether [`Game::legal_for`] would list anything: the listing stops at the first legal
    /// choice (what picking a unit to activate needs to know of each piece).
    pub(crate) fn has_legal(
        &mut self,
        side: SideId,
        actions: &[ProcId],
        actor: Option<usize>,
    ) -> Result<bool, EngineError> {
        self.first_only = true;
        let found = self.legal_for(side, actions, actor);
        self.first_only = false;
        Ok(!found?.is_empty())
    }

    /// Extend `args` one parameter at a time. Each leading `require` is tested as soon as
    /// every parameter it reads is bound, still in source order (a guard runs only when all
    /// before it held), so a failing guard prunes every binding of the later parameters.
    ///
    /// `bindings` is how many bindings the parameters bound so far span before any guard (the
    /// product of their candidate counts), for the error when a decision would offer more
    /// than [`MAX_CHOICES`].
    #[allow(clippy::too_many_arguments)]
    fn bind(
        &mut self,
        a: ProcId,
        params: &[sandtable_ir::Param],
        guards: &[(&Expr, usize)],
        next: usize,
        implied: &[usize],
        args: &mut Vec<Val>,
        out: &mut Vec<Choice>,
        bindings: u64,
    ) -> Result<(), EngineError> {
        let mut k = next;
        while k < guards.len() && guards[k].1 <= args.len() {
            let (g, _) = guards[k];
            if implied.contains(&k) {
                // The candidates were listed exactly as this guard allows.
                k += 1;
                continue;
            }
            // The bound arguments are the guard's whole frame: leading guards read no `let`.
            if !self.with_host(|i, c| Ok(matches!(i.eval_in(a, args, g, c)?, Val::Bool(true))))? {
                return Ok(());
            }
            k += 1;
        }
        if args.len() == params.len() {
            if out.len() >= MAX_CHOICES {
                return Err(self.too_many_choices(a, params, args, bindings));
            }
            out.push(self.choice(a, args.clone()));
            return Ok(());
        }
        // Asked only whether there is a legal choice, the places next to the centre of a
        // distance narrowing are tried before the rest is listed: usually one of them is
        // legal, and listing the whole circle costs more than testing them.
        let mut tried = 0;
        if self.first_only {
            self.near_cap = true;
            let listed = self.candidates(a, params, args);
            self.near_cap = false;
            let capped = std::mem::take(&mut self.near_capped);
            let (values, implied) = listed?;
            tried = values.len();
            let next = (k, implied.as_slice(), bindings);
            self.bind_each(a, params, guards, next, values, args, out)?;
            if !out.is_empty() || !capped {
                return Ok(());
            }
        }
        let (mut values, implied) = self.candidates(a, params, args)?;
        let bindings = bindings.saturating_mul(values.len() as u64);
        // The near places come first in the whole list too (nearest first): skip them.
        values.drain(..tried.min(values.len()));
        self.bind_each(
            a,
            params,
            guards,
            (k, &implied, bindings),
            values,
            args,
            out,
        )
    }

    /// [`Game::bind`] on with each of `values` as the next argument; `next` is the guard to
    /// test next, the guards the values meet by construction, and the bindings spanned.
    #[allow(clippy::too_many_arguments)]
    fn bind_each(
        &mut self,
        a: ProcId,
        params: &[sandtable_ir::Param],
        guards: &[(&Expr, usize)],
        (k, implied, bindings): (usize, &[usize], u64),
        values: Vec<Val>,
        args: &mut Vec<Val>,
        out: &mut Vec<Choice>,
    ) -> Result<(), EngineError> {
        for v in values {
            args.push(v);
            self.bind(a, params, guards, k, implied, args, out, bindings)?;
            args.pop();
            if self.first_only && !out.is_empty() {
                break;
            }
        }
        Ok(())
    }

    /// The error for a decision past [`MAX_CHOICES`]: the action, and how many bindings of
    /// its parameters there are before its guards (counted from the candidates on the way
    /// to the binding that went over; the other branches are alike).
    fn too_many_choices(
        &self,
        a: ProcId,
        params: &[sandtable_ir::Param],
        args: &[Val],
        bindings: u64,
    ) -> EngineError {
        let name = &self.rules.program.procs[a as usize].name;
        let pieces = params
            .iter()
            .zip(args)
            .filter(|(_, v)| matches!(v, Val::Piece(_)))
            .count();
        EngineError::Run(crate::error::RunError::Type(format!(
            "one decision offers more than {MAX_CHOICES} legal choices (the limit), reached in action `{name}`: its {} parameters ({pieces} of them pieces) span about {bindings} bindings; narrow them with leading `require`s (`adjacent`, `distance … <= r`) or split the action",
            params.len()
        )))
    }

    /// The acting piece of the binding is in reserve: its places are where it may enter.
    fn entering(&self, args: &[Val]) -> bool {
        matches!(args.first(), Some(Val::Piece(i))
            if self.state.pieces.get(*i as usize).is_some_and(|p| p.status == super::state::Status::Reserve))
    }

    /// Point `p` is on the open table and no other piece on it (units and markers alike,
    /// secret ones aside) stands within a base of it: where any figure may stop.
    pub(crate) fn table_point_free(&self, actor: Option<&Val>, p: Point) -> bool {
        let BoardSpec::Table {
            width, depth, base, ..
        } = &self.rules.board
        else {
            return false;
        };
        (0..=*width).contains(&p.x())
            && (0..=*depth).contains(&p.y())
            && self.state.pieces.iter().enumerate().all(|(j, q)| {
                actor == Some(&Val::Piece(j as u32))
                    || !q.on_board()
                    || q.out_of_sight()
                    || !matches!(q.pos, Some(Pos::Point(c))
                        if crate::board::table::distance_squared(c, p) < base * base)
            })
    }

    /// Values to try for the next parameter, and the guards they satisfy by construction.
    fn candidates(
        &mut self,
        a: ProcId,
        params: &[sandtable_ir::Param],
        args: &mut Vec<Val>,
    ) -> Result<(Vec<Val>, Vec<usize>), EngineError> {
        let j = args.len();
        let p = &params[j];
        if let Some(d) = &p.default {
            return Ok((vec![self.rules.program_const(d)?], Vec::new()));
        }
        let mut implied = Vec::new();
        let values = match &p.ty {
            Type::Bool => vec![Val::Bool(false), Val::Bool(true)],
            Type::Int => match p.range {
                Some((lo, hi)) if hi - lo < MAX_RANGE_CANDIDATES => {
                    (lo..=hi).map(Val::Int).collect()
                }
                _ => Vec::new(),
            },
            Type::Side => self.rules.sides().into_iter().map(Val::Side).collect(),
            Type::Entity(Some(k)) => (0..self.state.pieces.len())
                .filter(|&i| {
                    let q = &self.state.pieces[i];
                    q.on_board()
                        && self.known_to_actor(i, args)
                        && !args.contains(&Val::Piece(i as u32))
                        && self.rules.program.entities[q.entity as usize].kind == Some(*k)
                })
                .map(|i| Val::Piece(i as u32))
                .collect(),
            Type::Entity(None) => match &self.rules.board {
                BoardSpec::Hex { grid, .. } => {
                    let (values, exact) = self.hex_candidates(a, args, *grid)?;
                    implied = exact;
                    values
                }
                BoardSpec::Table { .. } => match if self.entering(args) {
                    super::reserve::entry_points(self, a, args)?
                } else {
                    self.table_points(a, args)?
                } {
                    Some((points, exact)) => {
                        implied = exact;
                        points
                    }
                    None => (0..self.state.pieces.len())
                        .filter(|&i| {
                            self.state.pieces[i].on_board()
                                && self.known_to_actor(i, args)
                                && !args.contains(&Val::Piece(i as u32))
                        })
                        .map(|i| Val::Piece(i as u32))
                        .collect(),
                },
            },
            Type::Length => self.length_steps(a, args)?,
            // Lengths, free text and lists cannot be listed: such an action is not offered.
            _ => Vec::new(),
        };
        Ok((values, implied))
    }

    /// A length parameter bounded by a leading `require p <= E` (or `< E`, `E` reading only
    /// earlier parameters): the allowance `E` and its steps `3E/4`, `E/2`, `E/4`, longest
    /// first (those below the bound when it is strict, and above zero). Without such a bound a
    /// length cannot be listed and the action is not offered.
    fn length_steps(&mut self, a: ProcId, args: &mut Vec<Val>) -> Result<Vec<Val>, EngineError> {
        let rules = self.rules;
        let Some((bound, strict)) =
            length_bound(&rules.program.procs[a as usize].body, args.len() as u32)
        else {
            return Ok(Vec::new());
        };
        let Some(e) = self
            .with_host(|i, c| i.eval_in(a, args, bound, c))?
            .as_int()
        else {
            return Ok(Vec::new());
        };
        let mut out: Vec<Val> = Vec::new();
        for k in (1..=LENGTH_STEPS).rev() {
            let v = e * k / LENGTH_STEPS;
            if v > 0 && !(strict && v >= e) && !out.contains(&Val::Int(v)) {
                out.push(Val::Int(v));
            }
        }
        Ok(out)
    }

    /// The points a place parameter `p` may take on an open table when a leading
    /// `require distance(x, p) <= r` measures it from a piece `x` on the table (`None`
    /// otherwise: the pieces on the table are listed, as before). Lines from `x`'s position:
    /// the board's `move_directions` evenly spaced directions (the first toward the top of
    /// the table); toward every other piece, stopping a base short of it; straight away from
    /// every piece of another side; toward the nearest point and the centre of every terrain
    /// feature. Each line is followed as far as the action's guards that read `p` (and only
    /// earlier parameters) allow, within `r` and the line's own end, and offered at that
    /// farthest point and at `k / move_steps` of it. So the longest legal move toward an
    /// enemy, into cover or onto a feature is always offered. Points off the table, at `x`'s
    /// own position or within a base of another piece are dropped. Every point offered has
    /// passed the guards that decide it, which are returned as implied.
    /// The place parameter's narrowing `distance(X, p) <= r`, evaluated: the guard it comes
    /// from, the piece `X`, where `X` stands on the table, and how far from it a place may be
    /// (`r`, one less when the bound is strict). `None` when the parameter has no such
    /// narrowing or `X` is not a piece standing on the table.
    pub(super) fn distance_bound(
        &mut self,
        a: ProcId,
        args: &mut Vec<Val>,
    ) -> Result<Option<(usize, usize, Point, i64)>, EngineError> {
        let rules = self.rules;
        let none = Vec::new();
        let found = rules
            .narrowings
            .get(a as usize)
            .and_then(|per| per.get(args.len()))
            .unwrap_or(&none);
        let Some((k, centre, radius, extra, strict)) = found.iter().find_map(|(k, n)| match n {
            Narrow::Within {
                by: By::Distance,
                centre,
                radius,
                extra,
                strict,
            } => Some((*k, *centre, *radius, *extra, *strict)),
            _ => None,
        }) else {
            return Ok(None);
        };
        let (c, r) = self.with_host(|i, ctx| {
            Ok((
                i.eval_in(a, args, centre, ctx)?,
                bound_of(i, ctx, a, args, radius, extra)?,
            ))
        })?;
        let (Val::Piece(c), Some(r)) = (c, r) else {
            return Ok(None);
        };
        let c = c as usize;
        let Some(Pos::Point(at)) = self.state.pieces.get(c).and_then(|p| p.pos) else {
            return Ok(None);
        };
        Ok(Some((k, c, at, r - i64::from(strict))))
    }

    fn table_points(
        &mut self,
        a: ProcId,
        args: &mut Vec<Val>,
    ) -> Result<Option<Listed>, EngineError> {
        use crate::board::table::{distance, distance_squared, move_toward};
        let rules = self.rules;
        let BoardSpec::Table {
            width,
            depth,
            base,
            shapes,
            moves,
            ..
        } = &rules.board
        else {
            return Ok(None);
        };
        let Some((within, me, from, r)) = self.distance_bound(a, args)? else {
            return Ok(None);
        };
        if r <= 0 {
            return Ok(Some((Vec::new(), Vec::new())));
        }
        // Far enough out that the direction of a line is exact, on any table.
        let far = |dx: i64, dy: i64| {
            Point::new(
                (from.x() + dx * 64).clamp(-9_000_000, 9_000_000),
                (from.y() + dy * 64).clamp(-9_000_000, 9_000_000),
            )
            .ok()
        };
        // (aim, how far along the line toward it a move may go at most)
        let mut lines: Vec<(Point, i64)> = Vec::new();
        let mine = self.state.pieces[me].side;
        // Toward every enemy figure and every piece of no side (flags, objectives), stopping
        // a base short of it; straight away from the nearest enemy. Lines toward friends
        // are left out: they end base to base among the unit's own figures, short moves
        // that the directions already cover.
        let mut nearest_enemy: Option<(i64, Point)> = None;
        for (j, q) in self.state.pieces.iter().enumerate() {
            let Some(Pos::Point(to)) = q.pos else {
                continue;
            };
            if j == me
                || !q.on_board()
                || (q.side.is_some() && q.side == mine)
                || !self.known_to_actor(j, args)
            {
                continue;
            }
            let d = distance(from, to);
            lines.push((to, d - base));
            if q.side.is_some() && nearest_enemy.is_none_or(|(n, _)| d < n) {
                nearest_enemy = Some((d, to));
            }
        }
        if let Some((_, to)) = nearest_enemy
            && let Some(away) = far(from.x() - to.x(), from.y() - to.y())
        {
            lines.push((away, r));
        }
        // Into every terrain feature: toward its centre (followed as far as the guards
        // allow, so into it when it can be reached), and toward its nearest point when the
        // centre is out of reach (to its edge).
        for s in shapes {
            let centre = s.geometry.centre();
            let to_centre = distance(from, centre);
            // One past the rounded distance, so the line ends on the point itself.
            lines.push((centre, to_centre + 1));
            if to_centre > r {
                let edge = s.geometry.nearest_point(from);
                lines.push((edge, distance(from, edge) + 1));
            }
        }
        // The board's `move_directions` compass directions fill the gaps: one is left out
        // when a line above already heads within half a sector of it.
        let half_sector = std::f64::consts::PI / f64::from(moves.directions.max(1));
        let heading = |aim: Point| ((aim.x() - from.x()) as f64).atan2((aim.y() - from.y()) as f64);
        let headings: Vec<f64> = lines
            .iter()
            .filter(|(aim, _)| *aim != from)
            .map(|(aim, _)| heading(*aim))
            .collect();
        for k in 0..moves.directions {
            let angle = std::f64::consts::TAU * f64::from(k) / f64::from(moves.directions);
            let unit = 1_000_000.0;
            let (dx, dy) = (
                (angle.sin() * unit).round() as i64,
                (-angle.cos() * unit).round() as i64,
            );
            let Some(aim) = far(dx, dy) else { continue };
            let h = heading(aim);
            let covered = headings.iter().any(|g| {
                let d = (h - g).rem_euclid(std::f64::consts::TAU);
                d.min(std::f64::consts::TAU - d) < half_sector
            });
            if !covered {
                lines.push((aim, r));
            }
        }
        let clear = |state: &super::state::State, p: Point| {
            state.pieces.iter().enumerate().all(|(j, q)| {
                j == me
                    || !q.on_board()
                    || q.out_of_sight()
                    || !matches!(q.pos, Some(Pos::Point(c)) if distance_squared(c, p) < base * base)
            })
        };
        // The guards this parameter's value decides: those reading it and no later one.
        let level = args.len() + 1;
        let slot = args.len() as u32;
        let within = Some(within);
        // Guards the engine tests itself, without the interpreter: the distance that
        // narrows `p` (every point is built within it) and `path_clear(x, p)` for the
        // acting piece `x`. Both hold for a move when they hold for a longer one along the
        // same line, so their farthest point on a line is searched for first, natively.
        let mut native_path = false;
        // A filtered `path_clear(x, p, F…)` whose filters do not read `p`: tested natively
        // too, the pieces they select left out of the figures in the way (as the engine
        // function passes them).
        let mut pass_filters: Vec<&Expr> = Vec::new();
        let mut implied: Vec<usize> = Vec::new();
        let mut deciding: Vec<&Expr> = Vec::new();
        for (k, (g, l)) in rules.guards[a as usize].iter().enumerate() {
            if *l != level {
                continue;
            }
            implied.push(k);
            if Some(k) == within {
                continue;
            }
            if let Expr::Host {
                func: EngineFn::PathClear,
                args: gargs,
            } = g
                && let [Expr::Local(x), Expr::Local(q), filters @ ..] = gargs.as_slice()
                && *q == slot
                && args.get(*x as usize) == Some(&Val::Piece(me as u32))
                && filters.iter().all(|f| {
                    let mut reads_p = false;
                    f.walk(&mut |e| reads_p |= matches!(e, Expr::Local(s) if *s == slot));
                    !reads_p
                })
            {
                native_path = true;
                pass_filters = filters.iter().collect();
                continue;
            }
            deciding.push(*g);
        }
        let inside = |p: Point| (0..=*width).contains(&p.x()) && (0..=*depth).contains(&p.y());
        let passed = if pass_filters.is_empty() {
            Vec::new()
        } else {
            let vals = self.with_host(|i, c| {
                (pass_filters.iter())
                    .map(|f| i.eval_in(a, args, f, c))
                    .collect::<Result<Vec<_>, _>>()
            })?;
            GameHost::quiet(self.rules, &mut self.state, &mut self.scratch).passed_through(&vals)?
        };
        let others = figures_near(&self.state, me, from, r, *base, &passed);
        let steps = i64::from(moves.steps.max(1));
        let last = level == rules.program.procs[a as usize].params.len();
        let mut out: Vec<Val> = Vec::new();
        let mut seen: crate::hash::WordSet<Point> = crate::hash::WordSet::default();
        for (aim, reach) in lines {
            let reach = reach.min(r);
            if reach <= 0 || aim == from {
                continue;
            }
            let native = |len: i64| {
                let p = move_toward(from, aim, len);
                inside(p)
                    && distance(from, p) <= r
                    && (!native_path || path_clear(&others, from, p, *base))
            };
            let mut legal = |game: &mut Self, len: i64| -> Result<bool, EngineError> {
                if !native(len) {
                    return Ok(false);
                }
                args.push(GameHost::pos_val(Pos::Point(move_toward(from, aim, len))));
                let ok = game.with_host(|i, c| {
                    for g in &deciding {
                        if !matches!(i.eval_in(a, args, g, c)?, Val::Bool(true)) {
                            return Ok(false);
                        }
                    }
                    Ok(true)
                });
                args.pop();
                ok
            };
            // The farthest point the engine's own tests allow (the table, the distance, a
            // clear path), to a unit of length: cheap, so searched for exactly.
            let mut hi = reach;
            if !native(hi) {
                let mut lo = 0;
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if native(mid) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                hi = lo;
            }
            if hi <= 0 {
                continue;
            }
            // Then the rules' own guards (move costs, terrain), interpreted: the guards of
            // moves hold for a move when they hold for a longer one, so when the farthest
            // point fails the nearest step is tried before searching between them.
            let end = if legal(self, hi)? {
                hi
            } else if !legal(self, hi >> SEARCH_STEPS)? {
                0
            } else {
                let (mut lo, mut hi) = (hi >> SEARCH_STEPS, hi);
                for _ in 0..SEARCH_STEPS {
                    let mid = lo + (hi - lo) / 2;
                    if mid == lo {
                        break;
                    }
                    if legal(self, mid)? {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                lo
            };
            if end <= 0 {
                continue;
            }
            for k in (1..=steps).rev() {
                let len = end * k / steps;
                let p = move_toward(from, aim, len);
                if p == from || !clear(&self.state, p) {
                    continue;
                }
                // The farthest point passed; the shorter ones are tested here, so that
                // every point offered meets the guards that decide it.
                if k < steps && !legal(self, len)? {
                    continue;
                }
                // Lines cross and steps coincide: a point is offered once (a set, as the
                // points offered run to hundreds).
                if seen.insert(p) {
                    out.push(GameHost::pos_val(Pos::Point(p)));
                }
            }
            // Asked only whether there is a legal choice: when the place is the last
            // parameter, every guard left is one decided above, so any point found is one.
            if self.first_only && last && !out.is_empty() {
                break;
            }
        }
        Ok(Some((out, implied)))
    }

    /// The hexes where `count_units(hex, filters…)` is above zero, in board order.
    fn occupied(&mut self, filters: &[Val]) -> Result<Vec<HexCoord>, EngineError> {
        Ok(GameHost::quiet(self.rules, &mut self.state, &mut self.scratch).occupied_by(filters)?)
    }

    /// The hexes a place parameter may take, listed from its narrowing guards (see
    /// [`narrowings`]): the first that generates a list (hexes within a distance or cost,
    /// neighbours, hexes holding the filtered pieces) gives the order, and every narrowing
    /// filters it. Those guards hold for every hex listed, so they are returned as implied.
    fn hex_candidates(
        &mut self,
        a: ProcId,
        args: &mut Vec<Val>,
        grid: crate::board::HexGrid,
    ) -> Result<(Vec<Val>, Vec<usize>), EngineError> {
        enum Ready {
            Within {
                by: By,
                centre: HexCoord,
                r: i64,
                costs: Vec<u32>,
            },
            Occupied {
                set: Vec<HexCoord>,
                present: bool,
            },
            Not(Val),
        }
        let rules = self.rules;
        let none = Vec::new();
        let found = rules
            .narrowings
            .get(a as usize)
            .and_then(|per| per.get(args.len()))
            .unwrap_or(&none);
        let mut ready = Vec::new();
        let mut implied = Vec::new();
        for (guard, n) in found {
            let guard = *guard;
            match *n {
                Narrow::Within {
                    by,
                    centre,
                    radius,
                    extra,
                    strict,
                } => {
                    let (c, r) = self.with_host(|i, ctx| {
                        Ok((
                            i.eval_in(a, args, centre, ctx)?,
                            bound_of(i, ctx, a, args, radius, extra)?,
                        ))
                    })?;
                    let Some(r) = r.map(|r| r.saturating_sub(i64::from(strict))) else {
                        // Not a number: leave the guard to say what it makes of it.
                        continue;
                    };
                    let (piece, at) = match c {
                        Val::Piece(i) => (Some(i as usize), self.state.pieces[i as usize].pos),
                        Val::Hex(h) => (None, Some(Pos::Hex(h))),
                        Val::Sym(s) => (None, HexCoord::parse(&s).ok().map(Pos::Hex)),
                        _ => (None, None),
                    };
                    let Some(Pos::Hex(centre)) =
                        at.filter(|p| matches!(p, Pos::Hex(h) if grid.contains(*h)))
                    else {
                        // Not a place on this board: leave the guard to say so.
                        continue;
                    };
                    if r < 0 {
                        return Ok((Vec::new(), Vec::new()));
                    }
                    let costs = match (by, piece) {
                        (By::MoveCost, Some(i)) => self.move_costs(i, r)?,
                        (By::MoveCost, None) => continue,
                        _ => Vec::new(),
                    };
                    ready.push(Ready::Within {
                        by,
                        centre,
                        r,
                        costs,
                    });
                }
                Narrow::Occupied { filters, present } => {
                    let wanted: Vec<Val> = self.with_host(|i, ctx| {
                        filters.iter().map(|f| i.eval_in(a, args, f, ctx)).collect()
                    })?;
                    ready.push(Ready::Occupied {
                        set: self.occupied(&wanted)?,
                        present,
                    });
                }
                Narrow::Not(e) => {
                    let v = self.with_host(|i, ctx| i.eval_in(a, args, e, ctx))?;
                    ready.push(Ready::Not(v));
                }
            }
            implied.push(guard);
        }
        let base: Vec<HexCoord> = match ready.iter().find(|x| {
            matches!(
                x,
                Ready::Within { .. } | Ready::Occupied { present: true, .. }
            )
        }) {
            Some(Ready::Within { centre, r, .. }) => {
                // Asked only whether there is a legal choice, the nearest places are tried
                // first: they are the likeliest to be in reach. The answer is the same in any
                // order when the guards draw no dice (a guard that rolls would see other
                // rolls in another order).
                let mut radius = (*r).min(1000) as u32;
                if self.first_only && rules.dice_free_guards[a as usize] {
                    if self.near_cap && radius > 1 {
                        radius = 1;
                        self.near_capped = true;
                    }
                    grid.hexes_by_distance(*centre, radius)
                } else {
                    grid.hexes_within(*centre, radius)
                }
            }
            Some(Ready::Occupied { set, .. }) => set.clone(),
            _ => grid.hexes().collect(),
        };
        let keep = |h: &HexCoord| {
            ready.iter().all(|x| match x {
                Ready::Within {
                    by: By::Distance,
                    centre,
                    r,
                    ..
                } => i64::from(grid.distance(*centre, *h)) <= *r,
                Ready::Within {
                    by: By::Adjacent,
                    centre,
                    ..
                } => grid.adjacent(*centre, *h),
                Ready::Within {
                    by: By::MoveCost,
                    r,
                    costs,
                    ..
                } => costs
                    .get(BoardSpec::hex_index(&grid, *h))
                    .is_some_and(|c| i64::from(*c) <= *r),
                Ready::Occupied { set, present } => set.binary_search(h).is_ok() == *present,
                Ready::Not(v) => !Val::Hex(*h).same(v),
            })
        };
        Ok((
            base.into_iter().filter(keep).map(Val::Hex).collect(),
            implied,
        ))
    }

    /// The cost for piece `i` to reach each hex, searched up to `r`, as `move_cost` answers.
    fn move_costs(&mut self, i: usize, r: i64) -> Result<Vec<u32>, EngineError> {
        Ok(
            GameHost::quiet(self.rules, &mut self.state, &mut self.scratch)
                .reach(i, Some(r.clamp(0, i64::from(u32::MAX - 1)) as u32))?
                .to_vec(),
        )
    }

    fn choice(&self, a: ProcId, args: Vec<Val>) -> Choice {
        Choice {
            act: super::Act::Action(a),
            args,
        }
    }

    /// Whether the acting piece's side (the first argument's) may know piece `i` is there:
    /// a secret piece of another side is never offered as an argument or an aim.
    fn known_to_actor(&self, i: usize, args: &[Val]) -> bool {
        match args.first() {
            Some(Val::Piece(a)) => match self.state.pieces[*a as usize].side {
                Some(side) => self.state.seen_by(i, side),
                None => true,
            },
            _ => true,
        }
    }

    /// A choice in words, as `side` sees it (hidden enemy pieces are not named).
    pub fn label(&self, side: SideId, c: &Choice) -> String {
        let show = |v: &Val| match v {
            Val::Piece(i) => self.piece_label(*i as usize, side),
            other => other.show(self.rules.program),
        };
        match &c.act {
            super::Act::Deploy => format!(
                "deploy {} at {}",
                c.args.first().map_or(String::new(), show),
                match c.args.get(1).map(|v| decode_place(self.rules, v)) {
                    Some(Ok(p)) => p.label(self.rules.program.length_unit.as_deref()),
                    _ => "?".into(),
                }
            ),
            super::Act::Hold => format!("{} holds", c.args.first().map_or(String::new(), show)),
            super::Act::Pick => {
                let option = self
                    .flow
                    .pending
                    .as_ref()
                    .and_then(|d| d.inside.as_ref())
                    .zip(c.args.first().and_then(Val::as_int))
                    .and_then(|(inside, k)| inside.options.get(usize::try_from(k).ok()?));
                super::policy::choose_label(option.map_or("?", String::as_str))
            }
            super::Act::Activate => match c.args.first() {
                Some(Val::Piece(l)) => format!("activate the group of {}", show(&Val::Piece(*l))),
                Some(v) => match decode_place(self.rules, v) {
                    Ok(at) => {
                        let n = self
                            .state
                            .pieces_at(at)
                            .filter(|(_, p)| p.side == Some(side) && p.is_unit)
                            .count();
                        let what = match at {
                            Pos::Hex(h) => format!("hex {h}"),
                            Pos::Point(_) => format!(
                                "the pieces at {}",
                                at.label(self.rules.program.length_unit.as_deref())
                            ),
                        };
                        format!(
                            "activate {what} ({n} unit{})",
                            if n == 1 { "" } else { "s" }
                        )
                    }
                    Err(_) => "activate ?".into(),
                },
                None => "activate ?".into(),
            },
            super::Act::Done => "end the activation".into(),
            super::Act::Together(a) => {
                let p = &self.rules.program.procs[*a as usize];
                let who = match c.args.first() {
                    Some(Val::List(ps)) => ps.iter().map(show).collect::<Vec<_>>().join(" + "),
                    _ => "?".into(),
                };
                let words: Vec<String> = c
                    .args
                    .iter()
                    .skip(1)
                    .zip(p.params.iter().skip(1))
                    .map(|(v, param)| match (v, &param.ty) {
                        (Val::Int(n), Type::Length) => self.rules.program.show_length(*n),
                        _ => show(v),
                    })
                    .collect();
                let mut all = vec![who];
                all.extend(words);
                format!("{}({}) together", p.name, all.join(", "))
            }
            super::Act::Action(a) => {
                let p = &self.rules.program.procs[*a as usize];
                let words: Vec<String> = c
                    .args
                    .iter()
                    .zip(&p.params)
                    .map(|(v, param)| match (v, &param.ty) {
                        // Lengths in the ruleset's unit, as written (`4in`), not in tenths of
                        // a millimetre.
                        (Val::Int(n), Type::Length) => self.rules.program.show_length(*n),
                        // A point of an open-table move, in inches as the narrative shows it.
                        (Val::List(_) | Val::Point(_), Type::Entity(None)) => {
                            decode_place(self.rules, v).map_or_else(
                                |_| show(v),
                                |p| p.label(self.rules.program.length_unit.as_deref()),
                            )
                        }
                        _ => show(v),
                    })
                    .collect();
                format!("{}({})", p.name, words.join(", "))
            }
        }
    }

    /// Where piece `i` may be set up: its force's area, minus full hexes (or, on a table,
    /// points of a 2-inch grid clear of other figures' bases).
    pub fn deploy_choices(&mut self, i: usize) -> Result<Vec<Choice>, EngineError> {
        let mut out = self.deploy_points(i)?;
        let p = &self.state.pieces[i];
        let side = p.placed_by.or(p.side).unwrap_or(0);
        let entity = p.entity;
        let check = self.rules.force(side).and_then(|f| f.deploy_check);
        if let Some(check) = check
            && self.rules.param_kind(check, 0).is_some_and(|k| {
                k.is_none_or(|k| self.rules.program.entities[entity as usize].kind == Some(k))
            })
        {
            // The force's rule for where such a piece may go: a point it refuses, or where
            // it cannot be answered, is not offered.
            let rules = self.rules;
            let slots = rules.program.procs[check as usize].n_slots as usize;
            let body = rules
                .deploy_bodies
                .iter()
                .find(|(k, _)| *k == (check, entity))
                .map_or(&rules.program.procs[check as usize].body, |(_, b)| b);
            // A check that reads its place only through what stands there answers alike for
            // every hex nothing stands on (most of them while the sides set up): one test.
            let occupied: Option<Vec<Pos>> = rules.deploy_by_contents.contains(&check).then(|| {
                let pieces = self.state.pieces.iter().filter(|q| q.on_board());
                let markers = self.state.place_markers.iter().map(|(at, _)| *at);
                pieces.filter_map(|q| q.pos).chain(markers).collect()
            });
            let empty = |c: &Choice| match (&occupied, c.args.get(1)) {
                (Some(taken), Some(Val::Hex(h))) => !taken.contains(&Pos::Hex(*h)),
                _ => false,
            };
            let mut on_empty: Option<bool> = None;
            // One host for every place tested (the check has no effects).
            let mut candidates = std::mem::take(&mut out);
            self.with_host(|interp, ctx| {
                candidates.retain(|c| {
                    let empty = empty(c);
                    if let (true, Some(answer)) = (empty, on_empty) {
                        return answer;
                    }
                    let mut args = Vec::with_capacity(slots.max(c.args.len()));
                    args.extend_from_slice(&c.args);
                    let answer = interp
                        .run_body(check, body, args, ctx)
                        .is_ok_and(|o| o.key == crate::value::OutcomeKey::Value(Val::Bool(true)));
                    if empty {
                        on_empty = Some(answer);
                    }
                    answer
                });
                Ok(())
            })?;
            out = candidates;
        }
        Ok(out)
    }

    /// The set-up points of piece `i` before its force's `deploy_check:`.
    fn deploy_points(&self, i: usize) -> Result<Vec<Choice>, EngineError> {
        let p = &self.state.pieces[i];
        let side = p.placed_by.or(p.side).unwrap_or(0);
        let force = self
            .rules
            .force(side)
            .ok_or_else(|| EngineError::Setup(format!("no force for {}", p.label)))?;
        let mut out = Vec::new();
        // A force's markers go in `markers_deploy:` when it names an area.
        let area = match &force.marker_area {
            Some(a) if p.side.is_none() => a,
            _ => &force.area,
        };
        match (area, &self.rules.board) {
            (DeployArea::Hexes(hexes), _) => {
                // Where pieces stand now (few, while the sides set up): a hex holding none
                // passes every test of [`Game::deploy_refused`], which look at every piece.
                let taken: Vec<HexCoord> = (self.state.pieces.iter())
                    .filter(|q| q.on_board())
                    .filter_map(|q| match q.pos {
                        Some(Pos::Hex(h)) => Some(h),
                        _ => None,
                    })
                    .collect();
                for h in hexes {
                    let at = Pos::Hex(*h);
                    // (A cap of none per hex refuses even an empty hex.)
                    let tested = taken.contains(h) || force.max_per_hex == Some(0);
                    if tested && self.deploy_refused(i, side, force.max_per_hex, at) {
                        continue;
                    }
                    out.push(Choice {
                        act: super::Act::Deploy,
                        args: vec![Val::Piece(i as u32), Val::Hex(*h)],
                    });
                }
            }
            (
                DeployArea::Area(g),
                BoardSpec::Table {
                    base, width, depth, ..
                },
            ) => {
                let points = sandtable_ir::scenario::deploy_points(*width, *depth);
                if points > MAX_DEPLOY_POINTS {
                    return Err(EngineError::Setup(format!(
                        "the table offers {points} set-up points on a 2-inch grid; the limit is {MAX_DEPLOY_POINTS}"
                    )));
                }
                let mut y = DEPLOY_GRID / 2;
                while y <= *depth {
                    let mut x = DEPLOY_GRID / 2;
                    while x <= *width {
                        if let Ok(pt) = Point::new(x, y)
                            && g.contains(pt)
                            && self.state.pieces.iter().all(|q| match q.pos {
                                Some(Pos::Point(c)) => {
                                    !q.on_board()
                                        || q.out_of_sight()
                                        || crate::board::table::distance_squared(c, pt)
                                            >= base * base
                                }
                                _ => true,
                            })
                        {
                            let at = Pos::Point(pt);
                            out.push(Choice {
                                act: super::Act::Deploy,
                                args: vec![Val::Piece(i as u32), GameHost::pos_val(at)],
                            });
                        }
                        x += DEPLOY_GRID;
                    }
                    y += DEPLOY_GRID;
                }
            }
            (DeployArea::Area(_), BoardSpec::Hex { .. }) => {
                return Err(EngineError::Setup(
                    "an area deployment needs an open table".into(),
                ));
            }
        }
        Ok(out)
    }

    /// Piece `i` of `side` may not be set up at `at`: an enemy unit stands there, the hex
    /// holds its force's most units (`max_per_hex`), or a unit there may never stand with it
    /// (`blocks_movement`), or the side would pass its cap of places holding groups
    /// (`groups_per_side`).
    fn deploy_refused(&self, i: usize, side: SideId, max_per_hex: Option<u32>, at: Pos) -> bool {
        let p = &self.state.pieces[i];
        let here = (self.state.pieces_at(at))
            .filter(|(_, q)| q.is_unit)
            .count();
        let enemy = (self.state.pieces_at(at)).any(|(_, q)| q.is_unit && q.side != Some(side));
        enemy
            || max_per_hex.is_some_and(|m| here as u32 >= m)
            || (p.is_unit
                && (self.state.blocked_with(self.rules, i, at)
                    || !(self.state).groups_allow(
                        i,
                        at,
                        p.side.and_then(|s| self.rules.group_cap(s)),
                    )))
    }
}

impl Rules<'_> {
    pub fn program_const(&self, v: &sandtable_ir::Value) -> Result<Val, EngineError> {
        Interp::new(self.program, self.assumptions)
            .constant(v)
            .map_err(EngineError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(s: u32) -> Box<Expr> {
        Box::new(Expr::Local(s))
    }

    fn cost_to(place: u32) -> Box<Expr> {
        Box::new(Expr::Host {
            func: EngineFn::MoveCost,
            args: vec![Expr::Local(0), Expr::Local(place)],
        })
    }

    fn guard(op: BinOp, lhs: Box<Expr>) -> Stmt {
        Stmt::Require(Expr::Binary {
            op,
            lhs,
            rhs: Box::new(Expr::Const(sandtable_ir::Value::Int(4))),
        })
    }

    fn plus(a: Box<Expr>, b: Box<Expr>) -> Box<Expr> {
        Box::new(Expr::Binary {
            op: BinOp::Add,
            lhs: a,
            rhs: b,
        })
    }

    fn within(body: &[Stmt]) -> Vec<(usize, By, bool, bool)> {
        narrowings(body, 1)
            .into_iter()
            .filter_map(|(k, n)| match n {
                Narrow::Within {
                    by, extra, strict, ..
                } => Some((k, by, extra.is_some(), strict)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_load_added_to_a_move_cost_still_narrows_the_place() {
        // `move_cost(x, p) + load(x) <= 4`, the load on either side of the `+`.
        let load = || {
            Box::new(Expr::Call {
                proc: 0,
                args: vec![Expr::Local(0)],
            })
        };
        let body = [
            guard(BinOp::Le, plus(cost_to(1), load())),
            guard(BinOp::Lt, plus(load(), cost_to(1))),
            guard(BinOp::Le, cost_to(1)),
        ];
        assert_eq!(
            within(&body),
            vec![
                (0, By::MoveCost, true, false),
                (1, By::MoveCost, true, true),
                (2, By::MoveCost, false, false)
            ]
        );
    }

    fn host(func: EngineFn, args: Vec<Expr>) -> Expr {
        Expr::Host { func, args }
    }

    #[test]
    fn a_set_up_check_reading_only_what_stands_on_the_place_answers_once_for_empty_places() {
        let marker = || Expr::Const(sandtable_ir::Value::Entity(3));
        let wire_here = host(EngineFn::HasMarker, vec![Expr::Local(1), marker()]);
        let units_here = host(EngineFn::CountUnits, vec![Expr::Local(1)]);
        // The piece is read freely: it is the same for every place of one set-up.
        let the_piece = host(EngineFn::HasMarker, vec![Expr::Local(0), marker()]);
        let body = [
            Stmt::Let {
                slot: 2,
                value: wire_here.clone(),
            },
            Stmt::Require(the_piece),
            guard(BinOp::Le, Box::new(units_here)),
        ];
        assert!(same_on_every_empty_place(&body));

        // The place read any other way (its distance, its terrain, compared, handed to a
        // procedure), or dice rolled, and each place is tested on its own.
        let distance = host(EngineFn::Distance, vec![Expr::Local(0), Expr::Local(1)]);
        let call = Expr::Call {
            proc: 0,
            args: vec![Expr::Local(1)],
        };
        let roll = Expr::Roll(0);
        for other in [distance, call, roll, Expr::Local(1)] {
            let body = [Stmt::Require(wire_here.clone()), Stmt::Expr(other)];
            assert!(!same_on_every_empty_place(&body));
        }
        // A marker looked for on the place, given the place as the marker too.
        let twice = host(EngineFn::HasMarker, vec![Expr::Local(1), Expr::Local(1)]);
        assert!(!same_on_every_empty_place(&[Stmt::Require(twice)]));
    }

    #[test]
    fn an_addend_that_reads_the_place_itself_does_not_narrow() {
        // `move_cost(x, p) + p.cost <= 4` depends on `p` twice: it must be tested per place.
        let body = [guard(BinOp::Le, plus(cost_to(1), local(1)))];
        assert!(within(&body).is_empty());
        // Nor a measure of another parameter than the one being listed.
        let body = [guard(BinOp::Le, plus(cost_to(0), local(0)))];
        assert!(within(&body).is_empty());
    }
}
