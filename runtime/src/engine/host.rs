//! The engine functions and effects of the language, answered from a game state: the bridge
//! the interpreter crosses when a rule asks `distance(firer, target)` or says `eliminate u`.

use sandtable_ir::{EngineFn, EntityId, ProcKind, SideId};

use super::log::{Event, Place, Rolled};
use super::setup::{BoardSpec, Ground, Rules};
use super::state::{Pos, State, Status};
use crate::board::table::{self, Length};
use crate::board::{HexCoord, Point, isqrt};
use crate::error::RunError;
use crate::interp::{Host, Interp};
use crate::jit::JitProgram;
use crate::rng::Dice;
use crate::value::{EffectRec, Outcome, OutcomeKey, ScoreOpRec, Val};

/// What a move costs when the hex cannot be reached.
pub const UNREACHABLE: i64 = 1_000_000;
/// Distance reported when nothing matches (`nearest_distance` with no such piece).
pub const FAR: i64 = 1 << 40;

/// How far a movement-cost search is settled.
#[derive(Clone, Copy)]
enum Until {
    /// Every cost up to the bound is exact.
    Bound(u32),
    /// The cost of this hex (by index) is exact.
    Hex(usize),
    All,
}

/// One piece's movement-cost search (Dijkstra over hex indices), settled lazily: a guard
/// asking `move_cost` of hexes near the piece settles only the hexes cheaper than those, and
/// a later question carries the same search on. Kept until the state changes.
#[derive(Default)]
struct Search {
    version: u64,
    /// The terrain every hex of the route keeps to, if any.
    only: Option<Val>,
    start: usize,
    dist: Vec<u32>,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u32, usize)>>,
    /// Hexes no route enters: blocking pieces and markers, and hexes off `only`.
    blocked: Vec<bool>,
    /// Hexes holding enemy units: entered, not left.
    enemy: Vec<bool>,
}

impl Search {
    /// Begin a search from piece `i`; `mask` is `only`'s hexes.
    fn start_from(
        &mut self,
        rules: &Rules,
        state: &State,
        i: usize,
        only: Option<&Val>,
        mask: Option<&[bool]>,
    ) -> Result<(), RunError> {
        let BoardSpec::Hex { grid, .. } = &rules.board else {
            return Err(err("move costs are counted on hex boards"));
        };
        let Some(Pos::Hex(from)) = state.pieces[i].pos else {
            return Err(err(format!(
                "{} is not on the board",
                state.pieces[i].label
            )));
        };
        let n = grid.hex_count() as usize;
        self.only = only.cloned();
        self.heap.clear();
        self.dist.clear();
        self.dist.resize(n, u32::MAX);
        self.blocked.clear();
        self.blocked.resize(n, false);
        self.enemy.clear();
        self.enemy.resize(n, false);
        let start = BoardSpec::hex_index(grid, from);
        self.start = start;
        if mask.is_some_and(|o| !o[start]) {
            // The move does not start on the terrain it must keep to: nothing is reachable.
            return Ok(());
        }
        if let Some(m) = mask {
            for (b, on) in self.blocked.iter_mut().zip(m) {
                *b = !on;
            }
        }
        // Markers placed by rules, marker pieces set up on the board, and units of the
        // mover's own side (a unit of another side is an enemy: entered, not passed).
        let own = state.pieces[i].side;
        let pieces = state
            .pieces
            .iter()
            .filter(|p| p.on_board() && (!p.is_unit || (p.side.is_some() && p.side == own)))
            .filter_map(|p| p.pos.map(|at| (at, p.entity)));
        for (p, m) in state.place_markers.iter().copied().chain(pieces) {
            if let Pos::Hex(h) = p
                && rules.blocks_movement(m)
            {
                self.blocked[BoardSpec::hex_index(grid, h)] = true;
            }
        }
        for p in &state.pieces {
            if p.on_board()
                && p.is_unit
                && p.side != own
                && let Some(Pos::Hex(h)) = p.pos
            {
                self.enemy[BoardSpec::hex_index(grid, h)] = true;
            }
        }
        self.dist[start] = 0;
        self.heap.push(std::cmp::Reverse((0u32, start)));
        Ok(())
    }

    /// Carry the search on until `until` is answered exactly. Every cost is at least 1, so
    /// once the cheapest open entry costs more than a bound (or as much as a hex's best
    /// cost so far), nothing cheaper can be found.
    fn settle(&mut self, rules: &Rules, until: Until) {
        while let Some(&std::cmp::Reverse((d, at))) = self.heap.peek() {
            let done = match until {
                Until::Bound(b) => d > b,
                Until::Hex(k) => self.dist.get(k).is_none_or(|&best| d >= best),
                Until::All => false,
            };
            if done {
                break;
            }
            self.heap.pop();
            if d > self.dist[at] || (self.enemy[at] && at != self.start) {
                continue;
            }
            for &nb in &rules.hex_adjacent[at] {
                let nb = nb as usize;
                let Some(c) = rules.hex_cost[nb] else {
                    continue;
                };
                if self.blocked[nb] {
                    continue;
                }
                let nd = d.saturating_add(c);
                if nd < self.dist[nb] {
                    self.dist[nb] = nd;
                    self.heap.push(std::cmp::Reverse((nd, nb)));
                }
            }
        }
    }
}

/// Caches that survive from one interpreter run to the next while the state is unchanged.
#[derive(Default)]
pub struct Scratch {
    /// Bumped by every effect; caches keyed on an older version are stale.
    pub version: u64,
    /// Each piece's movement-cost search, and its search along one terrain
    /// ([`GameHost::reach_along`]); their buffers are reused from one version to the next.
    reach: Vec<Option<Search>>,
    along: Vec<Option<Search>>,
    /// The hexes of the terrain last kept to by a search along one.
    mask: Option<(Val, Vec<bool>)>,
    /// Hexes holding a unit (`clear_route`).
    occupied: Vec<bool>,
}

pub struct GameHost<'a, 'p> {
    pub rules: &'a Rules<'p>,
    pub state: &'a mut State,
    pub scratch: &'a mut Scratch,
    /// What happened, as events for the log (the narrative is rendered from them).
    pub said: Vec<Event>,
    /// Tell what happens (off in bulk simulation, where nobody reads it).
    pub tell: bool,
    /// The action or hook being run: why a piece moves, for the log.
    pub why: Option<String>,
    /// The side that decides a `choose` inside the procedure: the acting side. Hooks have
    /// none, and a `choose` there is an error.
    pub chooser: Option<SideId>,
    /// The picks already made at the procedure's `choose` points, in order: an action that
    /// stopped for a decision is run again from its start with them (same state, same dice).
    pub given: Vec<usize>,
    /// Choices made at `choose` points: (index, number of options, label, side that chose),
    /// for the log.
    pub picks: Vec<(usize, usize, String, SideId)>,
    /// The side to ask and the options (as it sees them) of the first `choose` with no pick
    /// given: the run stopped there, and the game asks that side.
    pub need: Option<(SideId, Vec<String>)>,
    pub jit: Option<&'a JitProgram<'p>>,
    /// The activation in progress, once its pieces are known, and the actions each piece
    /// may take in it: for `actions_left`.
    pub unit: Option<(&'a super::flow::UnitTurn, u32)>,
    /// Pieces `spend` booked as having acted, for the activation in progress.
    pub spent: Vec<usize>,
    /// Pieces of the `together` choice in progress still to act after this one.
    pub together_left: u32,
    /// Pieces `show` turned face up for the action in progress, turned down at its end.
    pub shown: Vec<usize>,
}

fn err(msg: impl Into<String>) -> RunError {
    RunError::Type(msg.into())
}

/// A counter argument: the compiler resolves every counter's name to its id.
fn counter_of(v: &Val) -> Result<sandtable_ir::CounterId, RunError> {
    match v {
        Val::Counter(c) => Ok(*c),
        _ => Err(err("a counter is named by the rules (compiled to its id)")),
    }
}

/// A filter on pieces from engine-function arguments: side, kind, entity, exit hexes.
#[derive(Default)]
struct Filter {
    side: Option<SideId>,
    kind: Option<u32>,
    entity: Option<EntityId>,
    exits: Option<Vec<Val>>,
}

impl<'a, 'p> GameHost<'a, 'p> {
    /// A host that tells nothing and has no one to ask: for guards and look-ups.
    pub(crate) fn quiet(
        rules: &'a Rules<'p>,
        state: &'a mut State,
        scratch: &'a mut Scratch,
    ) -> Self {
        GameHost {
            rules,
            state,
            scratch,
            said: Vec::new(),
            tell: false,
            why: None,
            chooser: None,
            given: Vec::new(),
            picks: Vec::new(),
            need: None,
            jit: None,
            unit: None,
            spent: Vec::new(),
            together_left: 0,
            shown: Vec::new(),
        }
    }
}

impl GameHost<'_, '_> {
    fn interp(&self) -> Interp<'_> {
        Interp::new(self.rules.program, self.rules.assumptions)
    }

    fn piece(&self, v: &Val) -> Result<usize, RunError> {
        match v {
            Val::Piece(i) if (*i as usize) < self.state.pieces.len() => Ok(*i as usize),
            other => Err(err(format!(
                "expected a piece, found {}",
                other.show(self.rules.program)
            ))),
        }
    }

    fn kind_named(&self, s: &str) -> Option<u32> {
        self.rules
            .program
            .kinds
            .iter()
            .position(|k| k.name == s)
            .map(|i| i as u32)
    }

    pub fn pos_val(pos: Pos) -> Val {
        match pos {
            Pos::Hex(h) => Val::Hex(h),
            Pos::Point(p) => Val::Point(p),
        }
    }

    /// A place: a hex label, a point, or where a piece stands.
    fn place(&self, v: &Val) -> Result<Pos, RunError> {
        match v {
            Val::Piece(_) => {
                let i = self.piece(v)?;
                self.state.pieces[i].pos.ok_or_else(|| {
                    err(format!(
                        "{} is not on the board",
                        self.state.pieces[i].label
                    ))
                })
            }
            Val::Sym(_) | Val::Hex(_) => {
                let h = match v {
                    Val::Hex(h) => *h,
                    Val::Sym(s) => HexCoord::parse(s).map_err(|e| err(e.to_string()))?,
                    _ => unreachable!("matched above"),
                };
                match &self.rules.board {
                    BoardSpec::Hex { grid, .. } if grid.contains(h) => Ok(Pos::Hex(h)),
                    _ => Err(err(format!("hex {h} is not on the board"))),
                }
            }
            Val::Point(p) => Ok(Pos::Point(*p)),
            Val::List(xy) if xy.len() == 2 => {
                let (Some(x), Some(y)) = (xy[0].as_int(), xy[1].as_int()) else {
                    return Err(err("a point is two numbers"));
                };
                Point::new(x, y)
                    .map(Pos::Point)
                    .map_err(|e| err(e.to_string()))
            }
            other => Err(err(format!(
                "expected a place, found {}",
                other.show(self.rules.program)
            ))),
        }
    }

    fn is_place(&self, v: &Val) -> bool {
        match v {
            Val::Piece(_) | Val::Hex(_) | Val::Point(_) => true,
            Val::Sym(s) => self.kind_named(s).is_none() && HexCoord::parse(s).is_ok(),
            Val::List(xy) => xy.len() == 2 && xy.iter().all(|x| matches!(x, Val::Int(_))),
            _ => false,
        }
    }

    fn filter(&self, args: &[Val]) -> Result<Filter, RunError> {
        let mut f = Filter::default();
        for a in args {
            match a {
                Val::Side(s) => f.side = Some(*s),
                Val::Entity(e) => f.entity = Some(*e),
                Val::Kind(k) => f.kind = Some(*k),
                // A name from a property or an assumption: a kind, or an exit's label.
                Val::Sym(s) => match self.kind_named(s) {
                    Some(k) => f.kind = Some(k),
                    None => f.exits = Some(vec![a.clone()]),
                },
                Val::List(_) | Val::LabelRange(..) | Val::Hex(_) => f.exits = Some(vec![a.clone()]),
                other => {
                    return Err(err(format!(
                        "cannot select pieces by {}",
                        other.show(self.rules.program)
                    )));
                }
            }
        }
        Ok(f)
    }

    fn matches(&self, i: usize, f: &Filter) -> bool {
        let p = &self.state.pieces[i];
        let ent = &self.rules.program.entities[p.entity as usize];
        f.side.is_none_or(|s| p.side == Some(s))
            && f.entity.is_none_or(|e| p.entity == e)
            && f.kind.is_none_or(|k| ent.kind == Some(k))
            && (f.kind.is_some() || f.entity.is_some() || p.is_unit)
    }

    fn exited_through(&self, i: usize, exits: &[Val]) -> bool {
        let Some(Pos::Hex(h)) = self.state.pieces[i].exited_at else {
            return exits.is_empty();
        };
        let here = Val::Hex(h);
        exits.iter().all(|e| match e {
            Val::List(items) => items.iter().any(|x| x.same(&here)),
            Val::Sym(_) | Val::Hex(_) => e.same(&here),
            Val::LabelRange(r) => {
                let (lo, hi) = &**r;
                let col = |l: &Option<String>| {
                    l.as_ref()
                        .and_then(|l| HexCoord::parse(&format!("{l}1")).ok())
                        .map(|c| c.column())
                };
                col(lo).is_none_or(|c| h.column() >= c) && col(hi).is_none_or(|c| h.column() <= c)
            }
            _ => false,
        })
    }

    fn count(&self, status: Status, args: &[Val]) -> Result<Vec<usize>, RunError> {
        let f = self.filter(args)?;
        Ok((0..self.state.pieces.len())
            .filter(|&i| self.state.pieces[i].status == status && self.matches(i, &f))
            // A piece still to be set up is not on the board yet.
            .filter(|&i| status != Status::OnBoard || self.state.pieces[i].pos.is_some())
            .filter(|&i| {
                status != Status::Exited
                    || self.exited_through(i, f.exits.as_deref().unwrap_or(&[]))
            })
            .collect())
    }

    fn pieces_list(v: Vec<usize>) -> Val {
        Val::List(v.into_iter().map(|i| Val::Piece(i as u32)).collect())
    }

    fn distance(&self, a: Pos, b: Pos) -> Result<i64, RunError> {
        match (a, b, &self.rules.board) {
            (Pos::Hex(x), Pos::Hex(y), BoardSpec::Hex { grid, .. }) => {
                Ok(i64::from(grid.distance(x, y)))
            }
            (Pos::Point(x), Pos::Point(y), _) => Ok(table::distance(x, y)),
            _ => Err(err("distance between places of different boards")),
        }
    }

    /// The terrain of a hex, or of every feature a point lies in (first drawn first).
    fn terrains_at(&self, pos: Pos) -> impl Iterator<Item = Ground> + '_ {
        let (hex, table) = match (&self.rules.board, pos) {
            (BoardSpec::Hex { grid, terrain, .. }, Pos::Hex(h)) => {
                (terrain[BoardSpec::hex_index(grid, h)], None)
            }
            (
                BoardSpec::Table {
                    shapes,
                    shape_terrain,
                    default,
                    ..
                },
                Pos::Point(p),
            ) => (None, Some((shapes, shape_terrain, p, *default))),
            _ => (None, None),
        };
        hex.into_iter()
            .chain(table.into_iter().flat_map(|(shapes, terrain, p, default)| {
                // The features under the point, then the table's own ground.
                shapes
                    .iter()
                    .zip(terrain)
                    .filter(move |(s, _)| s.contains(p))
                    .map(|(_, t)| *t)
                    .chain(default)
            }))
    }

    fn terrain_at(&self, pos: Pos) -> Option<Ground> {
        self.terrains_at(pos).next()
    }

    fn entity_field(&self, e: EntityId, field: &str) -> Result<Val, RunError> {
        if let Some(fields) = self.rules.entity_fields.get(e as usize)
            && let Some((_, Some(v))) = fields.iter().find(|(n, _)| n == field)
        {
            return Ok(v.clone());
        }
        // Not resolved at set-up (an unknown without an assumption): the interpreter says why.
        self.interp().field(&Val::Entity(e), field)
    }

    /// Cheapest cost for a piece to reach every hex (by hex index; `u32::MAX` = cannot):
    /// entering costs the hex's price (see [`Rules::hex_cost`]); hexes with a marker, or a
    /// unit of the mover's own side, whose `blocks_movement` is true cannot be entered, and a
    /// hex holding enemy units can be entered but not left.
    /// With `bound`, only costs up to it are exact; a dearer hex reads as more than the
    /// bound (perhaps unreachable), so answer questions beyond the bound with `None`.
    pub(crate) fn reach(&mut self, i: usize, bound: Option<u32>) -> Result<&[u32], RunError> {
        let until = bound.map_or(Until::All, Until::Bound);
        let s = self.settled(i, None, until)?;
        Ok(&s.dist)
    }

    /// As [`Self::reach`], but every hex of the route, the start included, must be of the
    /// terrain `only` (5.b.1-style "entirely along connected path hexes"); kept until the
    /// next effect, as [`Self::reach`] is.
    fn reach_along(&mut self, i: usize, only: &Val) -> Result<&[u32], RunError> {
        let s = self.settled(i, Some(only), Until::All)?;
        Ok(&s.dist)
    }

    /// What `entry_hexes` answers: the neighbours of `to` (in the grid's order) through which
    /// a move of piece `i` costing at most `budget` enters it, or, with `along`, a move kept
    /// to hexes of that terrain costing at most its budget. A hex holding enemy units ends a
    /// move, so no move enters `to` from one.
    fn entry_hexes(
        &mut self,
        i: usize,
        to: HexCoord,
        budget: i64,
        along: Option<(&Val, i64)>,
    ) -> Result<Vec<HexCoord>, RunError> {
        let BoardSpec::Hex { grid, .. } = &self.rules.board else {
            return Err(err("`entry_hexes` follows hexes"));
        };
        let grid = *grid;
        let Some(enter) = self.rules.hex_cost[BoardSpec::hex_index(&grid, to)] else {
            return Ok(Vec::new());
        };
        let neighbours = grid.neighbours(to);
        // The cost of reaching each neighbour, then of entering `to` from it.
        let total = |reach: &[u32]| -> Vec<i64> {
            neighbours
                .iter()
                .map(|&n| match reach[BoardSpec::hex_index(&grid, n)] {
                    u32::MAX => i64::MAX,
                    c => i64::from(c) + i64::from(enter),
                })
                .collect()
        };
        let bound = u32::try_from(budget.max(0)).unwrap_or(u32::MAX);
        let plain = total(self.reach(i, Some(bound))?);
        let kept = match along {
            Some((t, b))
                if self
                    .terrains_at(Pos::Hex(to))
                    .any(|g| self.rules.board.ground_is(g, t)) =>
            {
                Some((total(self.reach_along(i, t)?), b))
            }
            _ => None,
        };
        let side = self.state.pieces[i].side;
        let enemy_at = |h: HexCoord| {
            self.state
                .pieces
                .iter()
                .any(|q| q.on_board() && q.is_unit && q.side != side && q.pos == Some(Pos::Hex(h)))
        };
        Ok(neighbours
            .iter()
            .enumerate()
            .filter(|&(k, _)| plain[k] <= budget || kept.as_ref().is_some_and(|(c, b)| c[k] <= *b))
            .map(|(_, &n)| n)
            .filter(|&n| !enemy_at(n))
            .collect())
    }

    /// What `move_cost(x, hex)` answers: the cheapest cost for piece `i` to reach hex index
    /// `k` (along `only` when given), the search settled no further than that hex needs.
    fn cost_to(&mut self, i: usize, k: usize, only: Option<&Val>) -> Result<u32, RunError> {
        let s = self.settled(i, only, Until::Hex(k))?;
        Ok(s.dist.get(k).copied().unwrap_or(u32::MAX))
    }

    /// Piece `i`'s search (along `only`), started afresh when the state has changed since,
    /// and settled as far as `until` asks.
    fn settled(&mut self, i: usize, only: Option<&Val>, until: Until) -> Result<&Search, RunError> {
        let version = self.scratch.version;
        let n_pieces = self.state.pieces.len();
        let rules = self.rules;
        let fresh = {
            let cache = match only {
                None => &self.scratch.reach,
                Some(_) => &self.scratch.along,
            };
            cache
                .get(i)
                .and_then(Option::as_ref)
                .is_some_and(|s| s.version == version && s.only.as_ref() == only)
        };
        if !fresh {
            let mask = match only {
                Some(t) => Some(self.terrain_mask(t)?),
                None => None,
            };
            let state = &*self.state;
            let scratch = &mut *self.scratch;
            let cache = match only {
                None => &mut scratch.reach,
                Some(_) => &mut scratch.along,
            };
            if cache.len() < n_pieces {
                cache.resize_with(n_pieces, || None);
            }
            let s = cache[i].get_or_insert_with(Search::default);
            s.start_from(rules, state, i, only, mask.as_deref())?;
            s.version = version;
            if let Some(m) = mask {
                scratch.mask = Some((only.cloned().unwrap_or(Val::Unit), m));
            }
        }
        let cache = match only {
            None => &mut self.scratch.reach,
            Some(_) => &mut self.scratch.along,
        };
        let s = cache[i].as_mut().expect("started above");
        s.settle(rules, until);
        Ok(s)
    }

    /// The hexes of terrain `t`, by hex index (the board's terrain never changes: kept for
    /// the last terrain asked).
    fn terrain_mask(&mut self, t: &Val) -> Result<Vec<bool>, RunError> {
        if let Some((v, m)) = self.scratch.mask.take()
            && v == *t
        {
            return Ok(m);
        }
        let BoardSpec::Hex { grid, .. } = &self.rules.board else {
            return Err(err("move costs are counted on hex boards"));
        };
        Ok(grid
            .hexes()
            .map(|h| {
                self.terrains_at(Pos::Hex(h))
                    .any(|g| self.rules.board.ground_is(g, t))
            })
            .collect())
    }

    /// Per piece, whether `path_clear(x, p, filters…)` passes through it (it matches them).
    pub(crate) fn passed_through(&self, filters: &[Val]) -> Result<Vec<bool>, RunError> {
        let f = self.filter(filters)?;
        Ok((0..self.state.pieces.len())
            .map(|j| self.matches(j, &f))
            .collect())
    }

    /// Hexes holding at least one on-board piece that the filters select (as `count_units`),
    /// in board order, each once: few, so a sorted list (search it with `binary_search`).
    pub(crate) fn occupied_by(&self, filters: &[Val]) -> Result<Vec<HexCoord>, RunError> {
        let f = self.filter(filters)?;
        let mut hexes: Vec<HexCoord> = (0..self.state.pieces.len())
            .filter(|&i| self.state.pieces[i].on_board() && self.matches(i, &f))
            .filter_map(|i| match self.state.pieces[i].pos {
                Some(Pos::Hex(h)) => Some(h),
                _ => None,
            })
            .collect();
        hexes.sort_unstable();
        hexes.dedup();
        Ok(hexes)
    }

    /// The hexes that hold a unit on the board (what blocks a fire route).
    fn occupied_hexes<B: FromIterator<HexCoord>>(&self) -> B {
        self.state
            .pieces
            .iter()
            .filter(|x| x.is_unit && x.on_board())
            .filter_map(|x| match x.pos {
                Some(Pos::Hex(h)) => Some(h),
                _ => None,
            })
            .collect()
    }

    fn segment_clear_of_pieces(&self, a: Point, b: Point, skip: &[usize], radius: Length) -> bool {
        self.state.pieces.iter().enumerate().all(|(i, p)| {
            if skip.contains(&i) || !p.on_board() || !p.is_unit {
                return true;
            }
            match p.pos {
                Some(Pos::Point(c)) => point_segment_dist2(c, a, b) >= (radius as i128).pow(2),
                _ => true,
            }
        })
    }

    /// The other piece on the board, units and markers alike, whose base a figure of piece
    /// `i` going straight from `from` to `to` would touch first (nearest along the way).
    fn first_in_way(&self, i: usize, from: Point, to: Point, base: Length) -> Option<usize> {
        self.first_in_way_but(i, from, to, base, None)
    }

    /// As [`Self::first_in_way`], passing through the pieces that match `pass` (when given).
    fn first_in_way_but(
        &self,
        i: usize,
        from: Point,
        to: Point,
        base: Length,
        pass: Option<&Filter>,
    ) -> Option<usize> {
        self.state
            .pieces
            .iter()
            .enumerate()
            .filter(|(j, q)| *j != i && q.on_board() && !q.out_of_sight())
            .filter(|(j, _)| pass.is_none_or(|f| !self.matches(*j, f)))
            .filter_map(|(j, q)| match q.pos {
                Some(Pos::Point(c)) if table::passes_within(from, to, c, base) => Some((j, c)),
                _ => None,
            })
            // Touched first: the contact nearest the start along the line, where the moving
            // base's centre comes within a base of the other's (to a unit, rounded).
            .min_by_key(|(j, c)| {
                let d = (i128::from(to.x() - from.x()), i128::from(to.y() - from.y()));
                let len2 = d.0 * d.0 + d.1 * d.1;
                if len2 == 0 {
                    return (0, *j);
                }
                let along = d.0 * i128::from(c.x() - from.x()) + d.1 * i128::from(c.y() - from.y());
                let cross = d.0 * i128::from(c.y() - from.y()) - d.1 * i128::from(c.x() - from.x());
                let foot = isqrt::u128((along * along / len2) as u128) as i128 * along.signum();
                let half =
                    isqrt::u128((i128::from(base).pow(2) - cross * cross / len2).max(0) as u128)
                        as i128;
                (foot - half, *j)
            })
            .map(|(j, _)| j)
    }

    /// Move a figure on a table toward `to`, at most `len`, stopping before its base would
    /// touch any other figure's on the way; returns where it ends.
    fn slide(&mut self, i: usize, to: Point, len: Length) -> Result<Point, RunError> {
        let BoardSpec::Table {
            width, depth, base, ..
        } = &self.rules.board
        else {
            return Err(err("straight moves are made on open tables"));
        };
        let Some(Pos::Point(from)) = self.state.pieces[i].pos else {
            return Err(err("the piece is not on the table"));
        };
        // The whole way there keeps a base from every other figure: it stops at the first
        // one it would touch rather than passing through.
        let clear = |p: Point| self.first_in_way(i, from, p, *base).is_none();
        let (mut lo, mut hi) = (0, len.max(0));
        let mut best = from;
        // The farthest clear stop along the line (binary search on the distance).
        while lo <= hi {
            let mid = (lo + hi) / 2;
            let p = table::move_toward(from, to, mid);
            let p = Point::new(p.x().clamp(0, *width), p.y().clamp(0, *depth))
                .map_err(|e| err(e.to_string()))?;
            if clear(p) {
                best = p;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        Ok(best)
    }

    /// A piece in reserve comes onto the board at `to` (not a move: no distance is counted).
    fn enter(&mut self, i: usize, to: Pos) {
        let p = &mut self.state.pieces[i];
        p.status = Status::OnBoard;
        p.pos = Some(to);
        if self.tell {
            let e = Event::Entered {
                piece: p.label.to_string(),
                side: side_label(self.rules, p.side),
                at: to.into(),
                why: self.why.clone(),
            };
            self.said.push(e);
        }
        self.scratch.version += 1;
    }

    fn set_pos(&mut self, i: usize, to: Pos) -> Result<(), RunError> {
        let from = self.state.pieces[i].pos;
        // The ruleset may name a counter that adds up the distance each piece moves in a turn.
        if let Some(c) = self.rules.distance_counter {
            let travelled = match from {
                Some(a) => self.distance(a, to).unwrap_or(0),
                None => 0,
            };
            let p = &mut self.state.pieces[i];
            let m = p.counter(c);
            p.set_counter(c, m + travelled);
        }
        // The route is worked out before the piece leaves (the costs depend on where it is).
        let path = match (self.tell, from, to) {
            (true, Some(Pos::Hex(_)), Pos::Hex(t)) => self.cheapest_route(i, t)?,
            _ => Vec::new(),
        };
        self.state.pieces[i].pos = Some(to);
        for q in &mut self.state.pieces {
            if q.carried_by == Some(i as u32) {
                q.pos = Some(to);
            }
        }
        let p = &self.state.pieces[i];
        if self.tell {
            let e = Event::Moved {
                piece: p.label.to_string(),
                side: side_label(self.rules, p.side),
                from: from.map(Place::from),
                to: to.into(),
                path: path.iter().map(|h| h.to_string()).collect(),
                why: self.why.clone(),
            };
            self.said.push(e);
        }
        self.scratch.version += 1;
        Ok(())
    }

    /// The hexes a piece enters, in order, on a cheapest route to `to` (the costs of
    /// [`GameHost::reach`]); empty when it has none. Ties go to the first neighbour listed.
    fn cheapest_route(&mut self, i: usize, to: HexCoord) -> Result<Vec<HexCoord>, RunError> {
        let rules = self.rules;
        let BoardSpec::Hex { grid, .. } = &rules.board else {
            return Ok(Vec::new());
        };
        let rows = grid.rows();
        let at = |k: usize| HexCoord::new(k as u32 / rows + 1, k as u32 % rows + 1).ok();
        let Some(Pos::Hex(start)) = self.state.pieces[i].pos else {
            return Ok(Vec::new());
        };
        let start = BoardSpec::hex_index(grid, start);
        let side = self.state.pieces[i].side;
        // A hex holding enemy units can be entered but not left (as in `reach`). Few hexes
        // hold enemies, and the walk back asks about a handful: a list, not a board-sized map.
        let enemy: Vec<usize> = self
            .state
            .pieces
            .iter()
            .filter(|p| p.on_board() && p.is_unit && p.side != side)
            .filter_map(|p| match p.pos {
                Some(Pos::Hex(h)) => Some(BoardSpec::hex_index(grid, h)),
                _ => None,
            })
            .collect();
        let mut k = BoardSpec::hex_index(grid, to);
        // Settled until `to` is: every hex cheaper than it is then exact, and the walk back
        // reads only those (each step back is cheaper by the cost of the hex it leaves).
        let dist = &self.settled(i, None, Until::Hex(k))?.dist;
        if dist.get(k).is_none_or(|d| *d == u32::MAX) {
            return Ok(Vec::new());
        }
        let mut back = Vec::new();
        while k != start {
            back.push(k);
            let Some(c) = rules.hex_cost[k] else {
                return Ok(Vec::new());
            };
            let prev = rules.hex_adjacent[k]
                .iter()
                .map(|&n| n as usize)
                .find(|&n| {
                    dist[n] != u32::MAX
                        && dist[n].saturating_add(c) == dist[k]
                        && (n == start || !enemy.contains(&n))
                });
            match prev {
                Some(n) => k = n,
                None => return Ok(Vec::new()),
            }
        }
        back.reverse();
        Ok(back.into_iter().filter_map(at).collect())
    }

    fn eliminate(&mut self, i: usize) {
        // What a fallen carrier was carrying stays where it fell.
        for q in &mut self.state.pieces {
            if q.carried_by == Some(i as u32) {
                q.carried_by = None;
            }
        }
        let p = &mut self.state.pieces[i];
        if p.status == Status::OnBoard {
            p.status = Status::Eliminated;
            p.markers.clear();
            p.concealed = false;
            if self.tell {
                let e = Event::Eliminated {
                    piece: p.label.to_string(),
                    side: side_label(self.rules, p.side),
                    at: p.pos.map(Place::from),
                };
                self.said.push(e);
            }
            self.scratch.version += 1;
        }
    }

    /// A value as the log shows it: pieces by their labels.
    fn shown(&self, v: &Val) -> String {
        match v {
            Val::Piece(i) if (*i as usize) < self.state.pieces.len() => {
                self.state.pieces[*i as usize].label.to_string()
            }
            other => other.show(self.rules.program),
        }
    }

    /// A name given as text or a symbol (shared: no copy of the letters).
    fn text(&self, v: &Val) -> Result<sandtable_ir::Str, RunError> {
        match v {
            Val::Text(s) | Val::Sym(s) => Ok(s.clone()),
            other => Err(err(format!(
                "expected a name, found {}",
                other.show(self.rules.program)
            ))),
        }
    }

    fn side_of(&self, v: &Val) -> Result<SideId, RunError> {
        match v {
            Val::Side(s) => Ok(*s),
            Val::Piece(_) => {
                let i = self.piece(v)?;
                self.state.pieces[i]
                    .side
                    .ok_or_else(|| err(format!("{} has no side", self.state.pieces[i].label)))
            }
            other => Err(err(format!(
                "expected a side, found {}",
                other.show(self.rules.program)
            ))),
        }
    }
}

pub(super) fn side_label(rules: &Rules, s: Option<SideId>) -> Option<String> {
    s.map(|s| rules.side_name(s).to_string())
}

/// Squared distance from `c` to the segment `a`-`b`, rounded down, exactly in integers.
fn point_segment_dist2(c: Point, a: Point, b: Point) -> i128 {
    let (ax, ay, bx, by, cx, cy) = (
        i128::from(a.x()),
        i128::from(a.y()),
        i128::from(b.x()),
        i128::from(b.y()),
        i128::from(c.x()),
        i128::from(c.y()),
    );
    let (dx, dy) = (bx - ax, by - ay);
    let len2 = dx * dx + dy * dy;
    let t = (cx - ax) * dx + (cy - ay) * dy;
    if len2 == 0 || t <= 0 {
        return (cx - ax).pow(2) + (cy - ay).pow(2);
    }
    if t >= len2 {
        return (cx - bx).pow(2) + (cy - by).pow(2);
    }
    let cross = (cx - ax) * dy - (cy - ay) * dx;
    cross * cross / len2
}

impl Host for GameHost<'_, '_> {
    fn call(&mut self, func: EngineFn, a: &[Val]) -> Result<Val, RunError> {
        let name = func.name();
        let arg = |i: usize| {
            a.get(i)
                .ok_or_else(|| err(format!("`{name}` needs argument {}", i + 1)))
        };
        Ok(match func {
            EngineFn::Eliminated => Val::Int(self.count(Status::Eliminated, a)?.len() as i64),
            EngineFn::Exited => Val::Int(self.count(Status::Exited, a)?.len() as i64),
            EngineFn::Alive => Val::Int(self.count(Status::OnBoard, a)?.len() as i64),
            EngineFn::Units => Self::pieces_list(self.count(Status::OnBoard, a)?),
            EngineFn::UnitsIn | EngineFn::CountUnits => {
                let (at, rest) = match a.first() {
                    Some(first) if self.is_place(first) => (Some(self.place(first)?), &a[1..]),
                    _ => (None, a),
                };
                let f = self.filter(rest)?;
                let here = |i: usize| {
                    let p = &self.state.pieces[i];
                    p.on_board() && at.is_none_or(|at| p.pos == Some(at)) && self.matches(i, &f)
                };
                if func == EngineFn::UnitsIn {
                    Self::pieces_list((0..self.state.pieces.len()).filter(|&i| here(i)).collect())
                } else {
                    Val::Int((0..self.state.pieces.len()).filter(|&i| here(i)).count() as i64)
                }
            }
            EngineFn::EliminatedIn => {
                let at = self.place(arg(0)?)?;
                let f = self.filter(&a[1..])?;
                Self::pieces_list(
                    (0..self.state.pieces.len())
                        .filter(|&i| {
                            let p = &self.state.pieces[i];
                            p.status == Status::Eliminated
                                && p.carried_by.is_none()
                                && p.pos == Some(at)
                                && self.matches(i, &f)
                        })
                        .collect(),
                )
            }
            EngineFn::EliminatedWithin => {
                let centre = self.place(arg(0)?)?;
                let r = arg(1)?.as_int().ok_or_else(|| err("a distance"))?;
                let f = self.filter(&a[2..])?;
                Self::pieces_list(
                    (0..self.state.pieces.len())
                        .filter(|&i| {
                            let p = &self.state.pieces[i];
                            p.status == Status::Eliminated
                                && p.carried_by.is_none()
                                && p.pos.is_some_and(|at| {
                                    self.distance(centre, at).is_ok_and(|d| d <= r)
                                })
                                && self.matches(i, &f)
                        })
                        .collect(),
                )
            }
            EngineFn::Route => {
                let i = self.piece(arg(0)?)?;
                let Pos::Hex(to) = self.place(arg(1)?)? else {
                    return Err(err("`route` follows hexes"));
                };
                Val::List(
                    self.cheapest_route(i, to)?
                        .into_iter()
                        .map(Val::Hex)
                        .collect(),
                )
            }
            EngineFn::Carry => {
                let carrier = self.piece(arg(0)?)?;
                let body = self.piece(arg(1)?)?;
                if !self.state.pieces[carrier].on_board() {
                    return Err(err(format!(
                        "{} is not on the board to carry anything",
                        self.state.pieces[carrier].label
                    )));
                }
                if self.state.pieces[body].status != Status::Eliminated {
                    return Err(err(format!(
                        "only an eliminated piece is carried, not {}",
                        self.state.pieces[body].label
                    )));
                }
                let at = self.state.pieces[carrier].pos;
                let q = &mut self.state.pieces[body];
                q.carried_by = Some(carrier as u32);
                q.pos = at;
                if self.tell {
                    let e = Event::Carried {
                        piece: q.label.to_string(),
                        side: side_label(self.rules, q.side),
                        by: self.state.pieces[carrier].label.to_string(),
                        at: at.map(Place::from),
                    };
                    self.said.push(e);
                }
                self.scratch.version += 1;
                Val::Unit
            }
            EngineFn::CountWithout => {
                let at = self.place(arg(0)?)?;
                let Val::Entity(m) = arg(1)? else {
                    return Err(err("`count_without` takes a place and a marker"));
                };
                let m = *m;
                let v = self.count(Status::OnBoard, &a[2..])?;
                Val::Int(
                    v.into_iter()
                        .filter(|&i| {
                            let p = &self.state.pieces[i];
                            p.pos == Some(at) && !p.markers.contains(&m)
                        })
                        .count() as i64,
                )
            }
            EngineFn::UnitsWithin => {
                let centre = self.place(arg(0)?)?;
                let r = arg(1)?.as_int().ok_or_else(|| err("a distance"))?;
                let me = a.first().and_then(|v| self.piece(v).ok());
                let mut v = self.count(Status::OnBoard, &a[2..])?;
                v.retain(|&i| {
                    Some(i) != me
                        && self.state.pieces[i]
                            .pos
                            .is_some_and(|p| self.distance(centre, p).is_ok_and(|d| d <= r))
                });
                Self::pieces_list(v)
            }
            EngineFn::Distance => {
                Val::Int(self.distance(self.place(arg(0)?)?, self.place(arg(1)?)?)?)
            }
            EngineFn::Adjacent => {
                let (x, y) = (self.place(arg(0)?)?, self.place(arg(1)?)?);
                Val::Bool(match (&self.rules.board, x, y) {
                    (BoardSpec::Hex { grid, .. }, Pos::Hex(p), Pos::Hex(q)) => grid.adjacent(p, q),
                    (BoardSpec::Table { base, .. }, Pos::Point(p), Pos::Point(q)) => {
                        table::within(p, q, *base)
                    }
                    _ => false,
                })
            }
            EngineFn::RouteBlocked | EngineFn::InLos => {
                let (x, y) = (self.place(arg(0)?)?, self.place(arg(1)?)?);
                let blocked = match (&self.rules.board, x, y) {
                    (BoardSpec::Hex { grid, .. }, Pos::Hex(p), Pos::Hex(q)) => {
                        let occupied: Vec<HexCoord> = self.occupied_hexes();
                        grid.route_blocked_by(p, q, &occupied)
                            .map_err(|e| err(e.to_string()))?
                    }
                    (BoardSpec::Table { shapes, base, .. }, Pos::Point(p), Pos::Point(q)) => {
                        // Terrain the firer or target stands in does not hide them from
                        // each other; other blocking shapes and other figures do.
                        let own: Vec<_> = shapes
                            .iter()
                            .filter(|s| !s.contains(p) && !s.contains(q))
                            .copied()
                            .collect();
                        let skip: Vec<usize> =
                            a.iter().filter_map(|v| self.piece(v).ok()).collect();
                        !table::line_of_sight(p, q, &own)
                            || !self.segment_clear_of_pieces(p, q, &skip, base / 2)
                    }
                    _ => return Err(err("places of different boards")),
                };
                Val::Bool(if func == EngineFn::InLos {
                    !blocked
                } else {
                    blocked
                })
            }
            EngineFn::ClearRoute => {
                let (x, y) = (self.place(arg(0)?)?, self.place(arg(1)?)?);
                let (Pos::Hex(p), Pos::Hex(q), BoardSpec::Hex { grid, .. }) =
                    (x, y, &self.rules.board)
                else {
                    return Err(err("`clear_route` follows hexes"));
                };
                let terrain = a.get(2);
                if terrain.is_some_and(|t| !matches!(t, Val::Entity(_) | Val::Sym(_))) {
                    return Err(err("`clear_route` counts one terrain"));
                }
                let most = match a.get(3) {
                    Some(v) => v
                        .as_int()
                        .ok_or_else(|| err("`clear_route` allows a number of hexes"))?,
                    None => 0,
                };
                // Hexes holding a unit, by hex index (a buffer kept between calls).
                let mut occupied = std::mem::take(&mut self.scratch.occupied);
                occupied.clear();
                occupied.resize(grid.hex_count() as usize, false);
                for x in &self.state.pieces {
                    if x.is_unit
                        && x.on_board()
                        && let Some(Pos::Hex(h)) = x.pos
                        && grid.contains(h)
                    {
                        occupied[BoardSpec::hex_index(grid, h)] = true;
                    }
                }
                let fewest = grid
                    .fewest_on_open_route(
                        p,
                        q,
                        |h| grid.contains(h) && occupied[BoardSpec::hex_index(grid, h)],
                        |h| {
                            u32::from(terrain.is_some_and(|t| {
                                self.terrain_at(Pos::Hex(h))
                                    .is_some_and(|g| self.rules.board.ground_is(g, t))
                            }))
                        },
                    )
                    .map_err(|e| err(e.to_string()));
                self.scratch.occupied = occupied;
                Val::Bool(fewest?.is_some_and(|n| i64::from(n) <= most))
            }
            EngineFn::TerrainBetween => {
                let (x, y) = (self.place(arg(0)?)?, self.place(arg(1)?)?);
                let t = arg(2)?;
                if !matches!(t, Val::Entity(_) | Val::Sym(_)) {
                    return Err(err("`terrain_between` counts one terrain"));
                }
                let (Pos::Hex(p), Pos::Hex(q), BoardSpec::Hex { grid, .. }) =
                    (x, y, &self.rules.board)
                else {
                    return Err(err("`terrain_between` counts hexes"));
                };
                let route = grid.route(p, q).map_err(|e| err(e.to_string()))?;
                let inner = route.get(1..route.len().saturating_sub(1)).unwrap_or(&[]);
                Val::Int(
                    inner
                        .iter()
                        .filter(|h| {
                            self.terrain_at(Pos::Hex(**h))
                                .is_some_and(|g| self.rules.board.ground_is(g, t))
                        })
                        .count() as i64,
                )
            }
            EngineFn::TerrainOnLine => {
                let (x, y) = (self.place(arg(0)?)?, self.place(arg(1)?)?);
                let field = self.text(arg(2)?)?;
                let want = arg(3)?.clone();
                let (
                    Pos::Point(p),
                    Pos::Point(q),
                    BoardSpec::Table {
                        shapes,
                        shape_terrain,
                        ..
                    },
                ) = (x, y, &self.rules.board)
                else {
                    return Err(err("`terrain_on_line` is for open tables"));
                };
                let mut n = 0;
                for (s, t) in shapes.iter().zip(shape_terrain) {
                    // An enum member as ground has no fields to compare.
                    let Ground::Entity(t) = *t else { continue };
                    if s.geometry.meets_segment(p, q) && self.entity_field(t, &field)? == want {
                        n += 1;
                    }
                }
                Val::Int(n)
            }
            EngineFn::HasMarker => {
                let Val::Entity(m) = arg(1)? else {
                    return Err(err("`has_marker` takes a marker"));
                };
                match arg(0)? {
                    Val::Piece(_) => {
                        let i = self.piece(arg(0)?)?;
                        Val::Bool(self.state.pieces[i].markers.contains(m))
                    }
                    other => {
                        let at = self.place(other)?;
                        // Placed on the place by a rule, or set up there as a piece.
                        Val::Bool(
                            self.state.place_markers.contains(&(at, *m))
                                || self
                                    .state
                                    .pieces
                                    .iter()
                                    .any(|p| p.entity == *m && p.on_board() && p.pos == Some(at)),
                        )
                    }
                }
            }
            EngineFn::Owner => Val::Side(self.side_of(arg(0)?)?),
            EngineFn::Enemy => {
                let s = self.side_of(arg(0)?)?;
                // The one side with a force other than `s` (no list built: guards ask this
                // for every hex they bind).
                let mut one = None;
                let mut more = false;
                for f in &self.rules.forces {
                    match one {
                        _ if f.side == s => {}
                        None => one = Some(f.side),
                        Some(o) if o != f.side => more = true,
                        Some(_) => {}
                    }
                }
                match (one, more) {
                    (Some(o), false) => Val::Side(o),
                    _ => return Err(err("`enemy` needs a game of exactly two sides")),
                }
            }
            EngineFn::Is => {
                let i = self.piece(arg(0)?)?;
                match arg(1)? {
                    Val::Entity(e) => Val::Bool(self.state.pieces[i].entity == *e),
                    Val::Kind(k) => Val::Bool(
                        self.rules.program.entities[self.state.pieces[i].entity as usize].kind
                            == Some(*k),
                    ),
                    Val::Sym(k) => Val::Bool(self.kind_named(k).is_some_and(|k| {
                        self.rules.program.entities[self.state.pieces[i].entity as usize].kind
                            == Some(k)
                    })),
                    _ => return Err(err("`is` compares with a unit or a kind")),
                }
            }
            EngineFn::InTerrain => {
                let at = self.place(arg(0)?)?;
                let t = arg(1)?;
                if !matches!(t, Val::Entity(_) | Val::Sym(_)) {
                    return Err(err("`in_terrain` takes a place and a terrain"));
                }
                Val::Bool(
                    self.terrains_at(at)
                        .any(|g| self.rules.board.ground_is(g, t)),
                )
            }
            EngineFn::SectorOf | EngineFn::ZoneOf => {
                let (
                    BoardSpec::Table {
                        sectors: Some(grid),
                        ..
                    },
                    Pos::Point(p),
                ) = (&self.rules.board, self.place(arg(0)?)?)
                else {
                    return Err(err(format!("`{name}` is for sectors boards")));
                };
                Val::Int(match grid.zone_of(p) {
                    Some(z) if func == EngineFn::SectorOf => i64::from(z.sector),
                    Some(z) => i64::from(z.zone),
                    None => 0,
                })
            }
            EngineFn::SectorAdjacent => {
                let BoardSpec::Table {
                    sectors: Some(grid),
                    ..
                } = &self.rules.board
                else {
                    return Err(err("`sector_adjacent` is for sectors boards"));
                };
                let sector = |v: &Val| -> Result<u32, RunError> {
                    match v {
                        Val::Int(n) => u32::try_from(*n).map_err(|_| err("no such sector")),
                        other => match self.place(other)? {
                            Pos::Point(p) => grid.sector_of(p).ok_or_else(|| err("off the board")),
                            Pos::Hex(_) => Err(err("a hex on a sectors board")),
                        },
                    }
                };
                let (x, y) = (sector(arg(0)?)?, sector(arg(1)?)?);
                Val::Bool(grid.adjacent(x, y, crate::board::Adjacency::Sides))
            }
            EngineFn::Position => Self::pos_val(self.place(arg(0)?)?),
            EngineFn::Home => {
                let s = self.side_of(arg(0)?)?;
                let f = self
                    .rules
                    .force(s)
                    .ok_or_else(|| err("that side has no force"))?;
                Self::pos_val(f.home)
            }
            EngineFn::MoveCost => {
                let i = self.piece(arg(0)?)?;
                let Pos::Hex(to) = self.place(arg(1)?)? else {
                    return Err(err("move costs are counted on hex boards"));
                };
                let BoardSpec::Hex { grid, .. } = &self.rules.board else {
                    return Err(err("move costs are counted on hex boards"));
                };
                let k = BoardSpec::hex_index(grid, to);
                Val::Int(match self.cost_to(i, k, a.get(2))? {
                    u32::MAX => UNREACHABLE,
                    c => i64::from(c),
                })
            }
            EngineFn::ActionsLeft => {
                let i = self.piece(arg(0)?)?;
                let left = self.unit.and_then(|(u, per)| {
                    let pieces = u.pieces.as_ref()?;
                    let k = pieces.iter().position(|&p| p == i)?;
                    let acted = u.used.iter().any(|&n| n > 0);
                    // Without `all`, only the piece that acted first may act again.
                    let may = u.all || !acted || u.used[k] > 0;
                    Some(if may {
                        per.saturating_sub(u.used[k])
                    } else {
                        0
                    })
                });
                Val::Int(i64::from(left.unwrap_or(0)))
            }
            EngineFn::TogetherLeft => Val::Int(i64::from(self.together_left)),
            EngineFn::Spend => {
                let i = self.piece(arg(0)?)?;
                self.spent.push(i);
                Val::Unit
            }
            EngineFn::CanExit => {
                let i = self.piece(arg(0)?)?;
                let at = match a.get(1) {
                    Some(v) => Some(self.place(v)?),
                    None => self.state.pieces[i].pos,
                };
                let p = &self.state.pieces[i];
                let ok = match (at, p.side.and_then(|s| self.rules.force(s))) {
                    (Some(Pos::Hex(h)), Some(f)) => p.on_board() && f.exits.contains(&h),
                    _ => false,
                };
                Val::Bool(ok)
            }
            EngineFn::EnteredFrom => {
                let i = self.piece(arg(0)?)?;
                let (Pos::Hex(to), BoardSpec::Hex { grid, .. }) =
                    (self.place(arg(1)?)?, &self.rules.board)
                else {
                    return Err(err("`entered_from` follows hexes"));
                };
                let Some(Pos::Hex(from)) = self.state.pieces[i].pos else {
                    return Err(err(format!(
                        "{} is not on the board",
                        self.state.pieces[i].label
                    )));
                };
                if from == to || grid.adjacent(from, to) {
                    return Ok(Val::Hex(from));
                }
                let k = BoardSpec::hex_index(grid, to);
                let Some(enter) = self.rules.hex_cost[k] else {
                    return Err(err(format!("no piece can enter {to}")));
                };
                let neighbours = grid.neighbours(to);
                let costs: Vec<u32> = {
                    let along;
                    let reach = match a.get(2) {
                        Some(only) => {
                            along = self.reach_along(i, only)?;
                            along
                        }
                        None => self.reach(i, None)?,
                    };
                    neighbours
                        .iter()
                        .map(|&n| reach[BoardSpec::hex_index(grid, n)])
                        .collect()
                };
                let side = self.state.pieces[i].side;
                // A hex holding enemy units ends a move, so no move passes through one.
                let enemy_at = |h: HexCoord| {
                    self.state.pieces.iter().any(|q| {
                        q.on_board() && q.is_unit && q.side != side && q.pos == Some(Pos::Hex(h))
                    })
                };
                let best = costs
                    .iter()
                    .zip(&neighbours)
                    .filter(|(c, n)| **c != u32::MAX && !enemy_at(**n))
                    .min_by_key(|(c, _)| **c);
                match best {
                    Some((c, n)) if c.saturating_add(enter) < u32::MAX => Val::Hex(*n),
                    _ => {
                        return Err(err(format!(
                            "{} cannot reach {to}",
                            self.state.pieces[i].label
                        )));
                    }
                }
            }
            EngineFn::EntryHexes => {
                let i = self.piece(arg(0)?)?;
                let Pos::Hex(to) = self.place(arg(1)?)? else {
                    return Err(err("`entry_hexes` follows hexes"));
                };
                let budget = arg(2)?
                    .as_int()
                    .ok_or_else(|| err("`entry_hexes` allows a number"))?;
                let along = match (a.get(3), a.get(4)) {
                    (Some(t), Some(b)) => Some((
                        t,
                        b.as_int().ok_or_else(|| {
                            err("`entry_hexes` allows a number along the terrain")
                        })?,
                    )),
                    (Some(_), None) => {
                        return Err(err("`entry_hexes` along a terrain needs its budget"));
                    }
                    _ => None,
                };
                Val::List(
                    self.entry_hexes(i, to, budget, along)?
                        .into_iter()
                        .map(Val::Hex)
                        .collect(),
                )
            }
            EngineFn::ExitBoard => {
                let i = self.piece(arg(0)?)?;
                if self.state.pieces[i].on_board() {
                    let at = self.state.pieces[i].pos;
                    for q in &mut self.state.pieces {
                        if q.carried_by == Some(i as u32) {
                            q.carried_by = None;
                            q.pos = None;
                            q.exited_at = at;
                            if self.tell {
                                self.said.push(Event::CarriedOff {
                                    piece: q.label.to_string(),
                                    side: side_label(self.rules, q.side),
                                    at: at.map(Place::from),
                                });
                            }
                        }
                    }
                }
                let p = &mut self.state.pieces[i];
                if p.on_board() {
                    p.status = Status::Exited;
                    p.exited_at = p.pos;
                    if self.tell {
                        let e = Event::Exited {
                            piece: p.label.to_string(),
                            side: side_label(self.rules, p.side),
                            at: p.pos.map(Place::from),
                        };
                        self.said.push(e);
                    }
                    self.scratch.version += 1;
                }
                Val::Unit
            }
            EngineFn::MoveToward | EngineFn::MoveAway => {
                let i = self.piece(arg(0)?)?;
                let Pos::Point(target) = self.place(arg(1)?)? else {
                    return Err(err("straight moves are made on open tables"));
                };
                let len = arg(2)?.as_int().ok_or_else(|| err("a distance"))?;
                let Some(Pos::Point(from)) = self.state.pieces[i].pos else {
                    return Err(err("the piece is not on the table"));
                };
                let aim = if func == EngineFn::MoveToward {
                    target
                } else {
                    let (dx, dy) = (from.x() - target.x(), from.y() - target.y());
                    Point::new(
                        (from.x() + dx.signum() * dx.abs().max(1) * 64)
                            .clamp(-9_000_000, 9_000_000),
                        (from.y() + dy.signum() * dy.abs().max(1) * 64)
                            .clamp(-9_000_000, 9_000_000),
                    )
                    .map_err(|e| err(e.to_string()))?
                };
                let end = self.slide(i, aim, len)?;
                // Less than a millimetre is no move worth telling (or counting).
                if table::distance_squared(end, from) >= 100 {
                    self.set_pos(i, Pos::Point(end))?;
                }
                Val::Unit
            }
            EngineFn::LengthInTerrain | EngineFn::LengthUphill => {
                let (x, y) = (self.place(arg(0)?)?, self.place(arg(1)?)?);
                let t = arg(2)?;
                let (
                    Pos::Point(p),
                    Pos::Point(q),
                    BoardSpec::Table {
                        shapes,
                        shape_terrain,
                        ..
                    },
                ) = (x, y, &self.rules.board)
                else {
                    return Err(err(format!("`{name}` is for open tables")));
                };
                let board = &self.rules.board;
                let outlines = shapes
                    .iter()
                    .zip(shape_terrain)
                    .filter(|(_, g)| board.ground_is(**g, t))
                    .map(|(s, _)| &s.geometry);
                Val::Int(if func == EngineFn::LengthUphill {
                    table::length_approaching(p, q, outlines)
                } else {
                    table::length_inside(p, q, outlines)
                })
            }
            EngineFn::PathClear => {
                let i = self.piece(arg(0)?)?;
                let to = self.place(arg(1)?)?;
                let (
                    Some(Pos::Point(from)),
                    Pos::Point(to),
                    BoardSpec::Table {
                        width, depth, base, ..
                    },
                ) = (self.state.pieces[i].pos, to, &self.rules.board)
                else {
                    return Err(err("`path_clear` is for pieces on open tables"));
                };
                let on_table = (0..=*width).contains(&to.x()) && (0..=*depth).contains(&to.y());
                // With filters, the pieces they select are passed through (a move through
                // friendly figures); every other piece still stands in the way.
                let pass = if a.len() > 2 {
                    Some(self.filter(&a[2..])?)
                } else {
                    None
                };
                let base = *base;
                Val::Bool(
                    on_table
                        && self
                            .first_in_way_but(i, from, to, base, pass.as_ref())
                            .is_none(),
                )
            }
            EngineFn::FirstContact => {
                let i = self.piece(arg(0)?)?;
                let len = arg(2)?.as_int().ok_or_else(|| err("a distance"))?;
                let (Some(Pos::Point(from)), Pos::Point(aim), BoardSpec::Table { base, .. }) = (
                    self.state.pieces[i].pos,
                    self.place(arg(1)?)?,
                    &self.rules.board,
                ) else {
                    return Err(err("`first_contact` is for pieces on open tables"));
                };
                let to = table::move_toward(from, aim, len);
                Self::pieces_list(self.first_in_way(i, from, to, *base).into_iter().collect())
            }
            EngineFn::InReserve => {
                let i = self.piece(arg(0)?)?;
                Val::Bool(self.state.pieces[i].status == Status::Reserve)
            }
            EngineFn::ReserveUnits => Self::pieces_list(self.count(Status::Reserve, a)?),
            EngineFn::ToReserve => {
                let i = self.piece(arg(0)?)?;
                self.withdraw(i)?;
                Val::Unit
            }
            EngineFn::PassesWithin => {
                let (Pos::Point(from), Pos::Point(to), Pos::Point(c)) = (
                    self.place(arg(0)?)?,
                    self.place(arg(1)?)?,
                    self.place(arg(2)?)?,
                ) else {
                    return Err(err("`passes_within` is for open tables"));
                };
                let r = arg(3)?.as_int().ok_or_else(|| err("a distance"))?;
                Val::Bool(table::passes_within(from, to, c, r))
            }
            EngineFn::Bearing => {
                let (Pos::Point(from), Pos::Point(to)) =
                    (self.place(arg(0)?)?, self.place(arg(1)?)?)
                else {
                    return Err(err("`bearing` is for open tables"));
                };
                Val::Int(crate::board::bearing::bearing(from, to))
            }
            EngineFn::PointsAround => {
                let (
                    Pos::Point(at),
                    BoardSpec::Table {
                        width,
                        depth,
                        base,
                        moves,
                        ..
                    },
                ) = (self.place(arg(0)?)?, &self.rules.board)
                else {
                    return Err(err("`points_around` is for open tables"));
                };
                let r = arg(1)?.as_int().ok_or_else(|| err("a distance"))?;
                let terrains = &a[2..];
                if terrains
                    .iter()
                    .any(|t| !matches!(t, Val::Entity(_) | Val::Sym(_)))
                {
                    return Err(err("`points_around` takes a place, a radius and terrains"));
                }
                // The place, then the ring of an entry from the reserve (`reserve.rs`).
                let mut ring = vec![at];
                ring.extend(table::ring_points(at, r, moves.directions, moves.steps));
                let mut out: Vec<Val> = Vec::new();
                for p in ring {
                    let free = (0..=*width).contains(&p.x())
                        && (0..=*depth).contains(&p.y())
                        && self.state.pieces.iter().all(|q| {
                            !q.on_board()
                                || q.out_of_sight()
                                || !matches!(q.pos, Some(Pos::Point(c))
                                    if table::distance_squared(c, p) < base * base)
                        });
                    let inside = terrains.is_empty()
                        || self
                            .terrains_at(Pos::Point(p))
                            .any(|g| terrains.iter().any(|t| self.rules.board.ground_is(g, t)));
                    let v = Val::Point(p);
                    if free && inside && !out.contains(&v) {
                        out.push(v);
                    }
                }
                Val::List(out)
            }
            EngineFn::PlacedBy => {
                let i = self.piece(arg(0)?)?;
                let p = &self.state.pieces[i];
                Val::Side(
                    p.side
                        .or(p.placed_by)
                        .ok_or_else(|| err(format!("{} was set up by no side", p.label)))?,
                )
            }
            EngineFn::NearestDistance => {
                let i = self.piece(arg(0)?)?;
                let Some(at) = self.state.pieces[i].pos else {
                    return Ok(Val::Int(FAR));
                };
                let side = self.state.pieces[i].side;
                let mut f = self.filter(&a[1..])?;
                f.side = side;
                let mut best = FAR;
                for j in 0..self.state.pieces.len() {
                    let q = &self.state.pieces[j];
                    if j != i
                        && q.on_board()
                        && self.matches(j, &f)
                        && let Some(p) = q.pos
                    {
                        best = best.min(self.distance(at, p)?);
                    }
                }
                Val::Int(best)
            }
            EngineFn::Counter => {
                let n = counter_of(arg(1)?)?;
                if let Val::Side(s) = arg(0)? {
                    let kept = self.state.side_counters.iter();
                    let c = kept.filter(|(k, m, _)| k == s && *m == n).map(|x| x.2);
                    return Ok(Val::Int(c.sum()));
                }
                let i = self.piece(arg(0)?)?;
                Val::Int(self.state.pieces[i].counter(n))
            }
            EngineFn::AddCounter | EngineFn::SetCounter => {
                let n = counter_of(arg(1)?)?;
                let v = arg(2)?
                    .as_int()
                    .ok_or_else(|| err("a counter holds a number"))?;
                if let Val::Side(s) = arg(0)? {
                    let kept = &mut self.state.side_counters;
                    match kept.iter_mut().find(|(k, m, _)| k == s && *m == n) {
                        Some(c) if func == EngineFn::AddCounter => c.2 = c.2.saturating_add(v),
                        Some(c) => c.2 = v,
                        None => kept.push((*s, n, v)),
                    }
                    self.scratch.version += 1;
                    return Ok(Val::Unit);
                }
                let i = self.piece(arg(0)?)?;
                let p = &mut self.state.pieces[i];
                let new = if func == EngineFn::AddCounter {
                    p.counter(n).saturating_add(v)
                } else {
                    v
                };
                p.set_counter(n, new);
                self.scratch.version += 1;
                if self.tell && self.rules.secret_counters.contains(&n) {
                    let p = &self.state.pieces[i];
                    let e = Event::Counted {
                        piece: p.label.to_string(),
                        side: p.side.map(|s| self.rules.side_name(s).to_string()),
                        counter: self.rules.program.counter_name(n).to_string(),
                        value: new,
                        why: self.why.clone(),
                    };
                    self.said.push(e);
                }
                Val::Unit
            }
            EngineFn::Option => {
                let name = self.text(arg(0)?)?;
                Val::Bool(self.rules.options.iter().any(|o| **o == *name))
            }
            EngineFn::ScenarioValue => {
                let key = self.text(arg(0)?)?;
                match self.rules.scenario_values.iter().find(|(k, _)| **k == *key) {
                    Some((_, Some(v))) => v.clone(),
                    Some((_, None)) => {
                        return Err(err(format!(
                            "the scenario's `{key}` is unknown (`?`); supply it with --assume scenario.{}.{key}=VALUE",
                            self.rules.scenario
                        )));
                    }
                    None => return Err(err(format!("the scenario sets no `{key}`"))),
                }
            }
            EngineFn::ForceHas => {
                let s = self.side_of(arg(0)?)?;
                let key = self.text(arg(1)?)?;
                Val::Bool(
                    self.rules
                        .force(s)
                        .is_some_and(|f| f.flags.iter().any(|(k, v)| **k == *key && *v)),
                )
            }
            EngineFn::InsertCards => {
                let name = self.text(arg(0)?)?;
                self.state.pending_inserts.push(name.to_string());
                Val::Unit
            }
            EngineFn::FreeAction => {
                let s = self.side_of(arg(0)?)?;
                self.state.pending_free.push(s);
                Val::Unit
            }
            EngineFn::TerrainOf => match self.terrain_at(self.place(arg(0)?)?) {
                Some(g) => self.rules.board.ground_val(g),
                None => return Err(err("no terrain is given for that place")),
            },
            EngineFn::HexesWithin => {
                let Pos::Hex(c) = self.place(arg(0)?)? else {
                    return Err(err("`hexes_within` is for hex boards"));
                };
                let n = arg(1)?.as_int().ok_or_else(|| err("a number of hexes"))?;
                let BoardSpec::Hex { grid, .. } = &self.rules.board else {
                    return Err(err("`hexes_within` is for hex boards"));
                };
                Val::List(
                    grid.hexes_within(c, n.clamp(0, 1000) as u32)
                        .into_iter()
                        .map(Val::Hex)
                        .collect(),
                )
            }
            EngineFn::HexStep => {
                let Pos::Hex(c) = self.place(arg(0)?)? else {
                    return Err(err("`hex_step` is for hex boards"));
                };
                let num = |v: &Val| {
                    v.as_int()
                        .ok_or_else(|| err("`hex_step` counts in whole hexes"))
                };
                let dir = num(arg(1)?)?;
                let ahead = num(arg(2)?)?;
                let aside = match a.get(3) {
                    Some(v) => num(v)?,
                    None => 0,
                };
                let BoardSpec::Hex { grid, .. } = &self.rules.board else {
                    return Err(err("`hex_step` is for hex boards"));
                };
                Val::List(
                    grid.step(c, dir, ahead, aside)
                        .into_iter()
                        .map(Val::Hex)
                        .collect(),
                )
            }
            EngineFn::ScoreOf => {
                let s = self.side_of(arg(0)?)?;
                Val::Int(self.state.scores[s as usize])
            }
            EngineFn::TurnNumber => Val::Int(i64::from(self.state.turn)),
            EngineFn::Activations => {
                let s = self.side_of(arg(0)?)?;
                Val::Int(i64::from(
                    self.state.activations.get(s as usize).copied().unwrap_or(0),
                ))
            }
            EngineFn::GroupsAllow => {
                let i = self.piece(arg(0)?)?;
                let to = self.place(arg(1)?)?;
                let cap = self.state.pieces[i]
                    .side
                    .and_then(|s| self.rules.group_cap(s));
                Val::Bool(self.state.groups_allow(i, to, cap))
            }
            EngineFn::Reveal => {
                let i = self.piece(arg(0)?)?;
                self.state.pieces[i].hidden = false;
                self.state.pieces[i].secret = false;
                Val::Unit
            }
            EngineFn::Show => {
                let i = self.piece(arg(0)?)?;
                if self.state.pieces[i].hidden && !self.shown.contains(&i) {
                    self.state.pieces[i].hidden = false;
                    self.shown.push(i);
                    self.scratch.version += 1;
                    if self.tell {
                        let p = &self.state.pieces[i];
                        let e = Event::Shown {
                            piece: p.label.to_string(),
                            side: side_label(self.rules, p.side),
                            at: p.pos.map(Place::from),
                        };
                        self.said.push(e);
                    }
                }
                Val::Unit
            }
            EngineFn::Conceal => {
                // Only `hidden` (face down), not `secret`: a concealed unit is still a piece
                // on the table whose place the other side knows, as a blind is.
                let i = self.piece(arg(0)?)?;
                self.state.pieces[i].hidden = true;
                self.scratch.version += 1;
                Val::Unit
            }
        })
    }

    fn effect(&mut self, e: &EffectRec) -> Result<(), RunError> {
        let program = self.rules.program;
        match e {
            EffectRec::Eliminate(v) => match v {
                Val::List(items) => {
                    for x in items {
                        let i = self.piece(x)?;
                        self.eliminate(i);
                    }
                }
                x => {
                    let i = self.piece(x)?;
                    self.eliminate(i);
                }
            },
            EffectRec::Place { marker, target } => {
                let name = &program.entities[*marker as usize].name;
                if let Val::Piece(_) = target {
                    let i = self.piece(target)?;
                    let p = &mut self.state.pieces[i];
                    if p.on_board() && !p.markers.contains(marker) {
                        p.markers.push(*marker);
                        p.concealed |= self.rules.concealing_markers.contains(marker);
                        if self.tell {
                            let e = Event::Marked {
                                marker: name.clone(),
                                piece: Some(p.label.to_string()),
                                at: None,
                            };
                            self.said.push(e);
                        }
                    }
                } else {
                    let at = self.place(target)?;
                    if !self.state.place_markers.contains(&(at, *marker)) {
                        self.state.place_markers.push((at, *marker));
                        if self.tell {
                            self.said.push(Event::Marked {
                                marker: name.clone(),
                                piece: None,
                                at: Some(at.into()),
                            });
                        }
                    }
                }
                self.scratch.version += 1;
            }
            EffectRec::Remove { marker, target } => {
                // Which pieces and places carried it, for the log.
                let mut off_pieces: Vec<usize> = Vec::new();
                let mut off_places: Vec<Pos> = Vec::new();
                match target {
                    Val::Piece(_) => {
                        let i = self.piece(target)?;
                        if self.state.pieces[i].markers.contains(marker) {
                            off_pieces.push(i);
                        }
                        self.state.pieces[i].markers.retain(|m| m != marker);
                    }
                    Val::Sym(s) if &**s == "all" => {
                        if self.tell {
                            off_pieces.extend(
                                (0..self.state.pieces.len())
                                    .filter(|&i| self.state.pieces[i].markers.contains(marker)),
                            );
                            off_places.extend(
                                self.state
                                    .place_markers
                                    .iter()
                                    .filter(|(_, m)| m == marker)
                                    .map(|(p, _)| *p),
                            );
                        }
                        for p in &mut self.state.pieces {
                            p.markers.retain(|m| m != marker);
                        }
                        self.state.place_markers.retain(|(_, m)| m != marker);
                    }
                    other => {
                        let at = self.place(other)?;
                        if self.state.place_markers.contains(&(at, *marker)) {
                            off_places.push(at);
                        }
                        self.state
                            .place_markers
                            .retain(|(p, m)| !(*p == at && m == marker));
                    }
                }
                if self.rules.concealing_markers.contains(marker) {
                    let concealing = &self.rules.concealing_markers;
                    for p in &mut self.state.pieces {
                        p.concealed = p.markers.iter().any(|m| concealing.contains(m));
                    }
                }
                if self.tell {
                    let name = &program.entities[*marker as usize].name;
                    for i in off_pieces {
                        self.said.push(Event::Unmarked {
                            marker: name.clone(),
                            piece: Some(self.state.pieces[i].label.to_string()),
                            at: None,
                        });
                    }
                    for at in off_places {
                        self.said.push(Event::Unmarked {
                            marker: name.clone(),
                            piece: None,
                            at: Some(at.into()),
                        });
                    }
                }
                self.scratch.version += 1;
            }
            EffectRec::Move { what, to } => {
                let i = self.piece(what)?;
                let to = self.place(to)?;
                if self.state.pieces[i].status == Status::Reserve {
                    self.enter(i, to);
                } else {
                    self.set_pos(i, to)?;
                }
            }
            EffectRec::Score { side, op, value } => {
                let s = &mut self.state.scores[*side as usize];
                *s = match op {
                    ScoreOpRec::Add => s.saturating_add(*value),
                    ScoreOpRec::Sub => s.saturating_sub(*value),
                    ScoreOpRec::Set => *value,
                };
            }
            EffectRec::Win(s) => {
                if self.state.winner.is_none() {
                    self.state.winner = Some(super::state::Winner::Side(*s));
                }
            }
        }
        Ok(())
    }

    fn choose(
        &mut self,
        options: &[Val],
        length: bool,
        by: Option<u32>,
    ) -> Result<usize, RunError> {
        let Some(actor) = self.chooser else {
            return Err(RunError::Type(
                "a `choose` outside an action has no side to decide it".into(),
            ));
        };
        let side = by.unwrap_or(actor);
        if side as usize >= self.rules.program.sides.len() {
            return Err(err("`choose … by` names no side of this game"));
        }
        let labels: Vec<String> = options
            .iter()
            .map(|v| match v {
                Val::Piece(i) if (*i as usize) < self.state.pieces.len() => self.state.piece_label(
                    *i as usize,
                    side,
                    self.rules.program.length_unit.as_deref(),
                ),
                // A point of the table in the ruleset's unit, as moves show theirs, not
                // in tenths of a millimetre.
                Val::Point(p) => Pos::Point(*p).label(self.rules.program.length_unit.as_deref()),
                other => other.show_as(self.rules.program, length),
            })
            .collect();
        let Some(&k) = self.given.get(self.picks.len()) else {
            self.need = Some((side, labels));
            return Err(RunError::NeedsDecision);
        };
        let label = labels
            .get(k)
            .cloned()
            .ok_or_else(|| RunError::Type("choice out of range".into()))?;
        self.picks
            .push((k, labels.len(), super::policy::choose_label(&label), side));
        Ok(k)
    }

    fn field(&mut self, piece: u32, field: &str) -> Result<Val, RunError> {
        let i = self.piece(&Val::Piece(piece))?;
        let e = self.state.pieces[i].entity;
        self.entity_field(e, field)
    }

    fn constant_result(&self, proc: u32) -> Option<Val> {
        self.rules.constant_results[proc as usize].clone()
    }

    fn compiled(
        &mut self,
        proc: u32,
        args: &mut Vec<Val>,
        dice: &mut Dice,
    ) -> Option<Result<Outcome, RunError>> {
        // Every call comes through here, so resolutions can be told in the log: on compiled
        // code when there is some, else on the interpreter with this game as host. While the
        // game is logged the interpreter runs them, so every die is seen (compiled code draws
        // from the same stream in the same order, but rolls inline, unseen).
        let def = &self.rules.program.procs[proc as usize];
        let watch = self.tell && def.kind == ProcKind::Resolve;
        if let Some(v) = &self.rules.constant_results[proc as usize] {
            return Some(Ok(Outcome {
                key: OutcomeKey::of_value(v.clone()),
                effects: Vec::new(),
            }));
        }
        let first_roll = if watch { Some(dice.watch()) } else { None };
        // The log names the arguments as they were given.
        let shown: Vec<String> = match first_roll {
            Some(_) => args.iter().map(|v| self.shown(v)).collect(),
            None => Vec::new(),
        };
        let compiled = if self.tell {
            None
        } else {
            self.jit.and_then(|j| j.run(proc, args, dice))
        };
        let r = match compiled {
            Some(r) => r,
            None => {
                let interp = Interp::new(self.rules.program, self.rules.assumptions);
                let mut ctx = crate::interp::Ctx::new(dice, self);
                interp.run(proc, std::mem::take(args), &mut ctx)
            }
        };
        let Some((started, from)) = first_roll else {
            return Some(r);
        };
        let rolled = dice.watched(started, from);
        if let Ok(o) = &r {
            let program = self.rules.program;
            let result = match &o.key {
                OutcomeKey::Named(n) => n.to_string(),
                OutcomeKey::Value(v) => v.show(program),
                _ => "done".into(),
            };
            let e = Event::Resolved {
                name: def.name.clone(),
                args: shown,
                dice: rolled
                    .into_iter()
                    .map(|(d, face)| Rolled {
                        die: program.dice[d as usize].name.clone(),
                        face,
                    })
                    .collect(),
                result,
                why: self.why.clone(),
            };
            self.said.push(e);
        }
        Some(r)
    }
}
