//! A hand-written Rust playout of Plastic Battle's Total Destruction between two random
//! policies: the second speed reference of `sandtable sim --reference`
//! (`plastic-total-destruction`), so that no one scenario can be tuned alone (issue 18).
//!
//! It spells out what `rules/plastic_battle` says, as its README reads it: set-up on the
//! 2-inch grid of each strip, the five phases of a turn (2), reinforcements by the flag (2),
//! cohesion checks and routing (2, 3), moves of one or more straight legs paid from one SPD,
//! each leg offered along the engine's candidate lines (2 Move, 3), ACC checks with the terrain and movement penalties, damage and the
//! Bazooka's splash (2 Attack, 3, 5), the optional reload (4), the retreat of one inch (2)
//! and the reading of Total Destruction as "until one army is destroyed". It does the same
//! work as the engine (the same candidate lines, searches and order, the same geometry
//! functions) on plain arrays, and draws from the same streams in the same order, so its
//! games are the engine's games, which a test checks.
//!
//! Only the numbers come from the ruleset and the scenario's assumptions (stat lines, table,
//! terrain, areas, reserve, reinforce points, options, side order, legs of a move), read
//! once by [`TotalDestruction::new`].

use sandtable_ir::SideId;

use sandtable_runtime::board::table::{
    self, Length, distance, distance_squared, length_approaching, length_inside, move_toward,
    passes_within,
};
use sandtable_runtime::board::{Geometry, Point, Shape};
use sandtable_runtime::engine::setup::{Activation, BoardSpec, DeployArea, Ground, Rules};
use sandtable_runtime::engine::state::{Pos, Winner};
use sandtable_runtime::engine::{GameResult, stream_seed};
use sandtable_runtime::interp::Interp;
use sandtable_runtime::rng::Dice;
use sandtable_runtime::value::Val;

/// Spacing of the set-up grid the engine offers on a table.
const DEPLOY_GRID: Length = 2 * table::INCH;
/// Halvings in the engine's search for the farthest legal point of a line.
const SEARCH_STEPS: u32 = 5;
/// `nearest_distance` when there is nothing to measure to.
const FAR: i64 = 1 << 40;
/// `advance`'s shortest leg (the rules' reading: a leg under a millimetre is no move).
const MIN_LEG: Length = table::MM;

/// One figure: a unit of the stat lines (5) or a flag.
#[derive(Clone)]
struct Spec {
    /// `None` for a flag (no side; set up by `placed_by`).
    side: Option<SideId>,
    placed_by: SideId,
    commander: bool,
    reserve: bool,
    points: i64,
    spd: i64,
    acc: i64,
    def: i64,
    rng: i64,
    stm: i64,
    coh: i64,
    rld: i64,
    dam: i64,
    splash_dam: i64,
    splash_radius: i64,
}

#[derive(Clone, Copy, PartialEq)]
enum Status {
    OnBoard,
    Reserve,
    Eliminated,
}

/// A unit's state: where it is, its markers and counters.
#[derive(Clone)]
struct Fig {
    pos: Option<Point>,
    status: Status,
    failed_cohesion: bool,
    attacked: bool,
    reloading: bool,
    moved: i64,
    /// What this Move phase's legs cost so far (`move_spent`), and how many there were.
    move_spent: i64,
    legs: u32,
    reload: i64,
    damage: i64,
    down_hill: bool,
    through_river: bool,
    through_woods: bool,
}

struct Play {
    figs: Vec<Fig>,
    spent: Vec<i64>,
    dice: Dice,
    policy: Vec<Dice>,
    decisions: u32,
    /// The number of choices at each decision, when asked for ([`TotalDestruction::trace`]).
    trace: Option<Vec<u32>>,
}

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Reinforce,
    Move,
    Attack,
    Retreat,
}

#[derive(Clone, Copy)]
enum Choice {
    /// `bring_in` to the point, `advance` to it, `fall_back` to it.
    To(Point),
    /// `attack` the unit.
    At(usize),
    Hold,
}

/// The scenario as plain data.
pub struct TotalDestruction {
    width: Length,
    depth: Length,
    base: Length,
    directions: u32,
    steps: i64,
    shapes: Vec<Shape>,
    hills: Vec<Geometry>,
    marsh: Vec<Geometry>,
    river: Vec<Geometry>,
    woods: Vec<Geometry>,
    cliff: Vec<bool>,
    /// Per shape: hills, marsh, woods (for `in_terrain`).
    is_hills: Vec<bool>,
    is_marsh: Vec<bool>,
    is_woods: Vec<bool>,
    specs: Vec<Spec>,
    areas: Vec<Geometry>,
    homes: Vec<Point>,
    order: Vec<SideId>,
    /// Legs a unit may take in one Move phase: `legs_per_move`, within the Move phase's
    /// `actions_per_piece`.
    legs: u32,
    sides: usize,
    turns: u32,
    reinforce: i64,
    reload: bool,
}

fn d6(d: &mut Dice) -> i64 {
    i64::from(d.index(6)) + 1
}

/// Squared distance from `c` to the segment `a`-`b`, rounded down (as `in_los` measures).
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

impl TotalDestruction {
    /// Read the numbers of the scenario from compiled rules (with their assumptions).
    pub fn new(rules: &Rules) -> Result<TotalDestruction, String> {
        let p = rules.program;
        let interp = Interp::new(p, rules.assumptions);
        let BoardSpec::Table {
            width,
            depth,
            shapes,
            shape_terrain,
            base,
            moves,
            default,
            ..
        } = &rules.board
        else {
            return Err("Total Destruction is played on an open table".into());
        };
        if p.sides.len() != 2 || rules.forces.len() != 2 {
            return Err("Total Destruction is played by two sides".into());
        }
        if default.is_some() {
            return Err("the reference plays a table without default ground".into());
        }
        let ent = |name: &str| {
            p.entities
                .iter()
                .position(|e| e.name == name)
                .map(|e| e as u32)
                .ok_or(format!("no `{name}`"))
        };
        let int = |e: u32, f: &str| -> Result<i64, String> {
            interp
                .field(&Val::Entity(e), f)
                .map_err(|x| x.to_string())?
                .as_int()
                .ok_or(format!("{f} is not a number"))
        };
        let (hills_e, marsh_e, river_e, woods_e) =
            (ent("hills")?, ent("marsh")?, ent("river")?, ent("woods")?);
        let of = |t: u32| -> Vec<Geometry> {
            shapes
                .iter()
                .zip(shape_terrain)
                .filter(|(_, g)| **g == Ground::Entity(t))
                .map(|(s, _)| s.geometry)
                .collect()
        };
        let is = |t: u32| -> Vec<bool> {
            shape_terrain
                .iter()
                .map(|g| *g == Ground::Entity(t))
                .collect()
        };
        // 3: the features a move may not touch (`terrain_on_line(…, impassable)`).
        let mut cliff = Vec::new();
        for g in shape_terrain {
            let Ground::Entity(t) = *g else {
                cliff.push(false);
                continue;
            };
            let m = interp
                .field(&Val::Entity(t), "movement")
                .map_err(|x| x.to_string())?;
            cliff.push(m.show(p) == "impassable");
        }
        let commander = ent("commander")?;
        let flag = ent("flag")?;
        let mut specs = Vec::new();
        let mut areas = Vec::new();
        let mut homes = Vec::new();
        for (fi, f) in rules.forces.iter().enumerate() {
            if f.side as usize != fi {
                return Err("forces in side order".into());
            }
            let all = f.units.iter().map(|e| (*e, false));
            for (e, reserve) in all.chain(f.reserve.iter().map(|e| (*e, true))) {
                let stat = |n: &str| int(e, n);
                specs.push(Spec {
                    side: Some(f.side),
                    placed_by: f.side,
                    commander: e == commander,
                    reserve,
                    points: stat("points")?,
                    spd: stat("spd")?,
                    acc: stat("acc")?,
                    def: stat("def")?,
                    rng: stat("rng")?,
                    stm: stat("stm")?,
                    // 1, COH footnote: the Commander has none and never checks.
                    coh: if e == commander { 0 } else { stat("coh")? },
                    rld: stat("rld")?,
                    dam: stat("dam")?,
                    splash_dam: stat("splash_dam")?,
                    splash_radius: stat("splash_radius")?,
                });
            }
            let DeployArea::Area(g) = f.area else {
                return Err("set-up in areas of the table".into());
            };
            if f.marker_area.is_some() || f.deploy_check.is_some() {
                return Err("the reference sets flags up in the force's area".into());
            }
            areas.push(g);
            let Pos::Point(h) = f.home else {
                return Err("a home on the table".into());
            };
            homes.push(h);
            if f.markers.iter().any(|m| *m != flag) {
                return Err("the only markers set up are flags".into());
            }
        }
        for f in &rules.forces {
            for _ in &f.markers {
                specs.push(Spec {
                    side: None,
                    placed_by: f.side,
                    commander: false,
                    reserve: false,
                    points: 0,
                    spd: 0,
                    acc: 0,
                    def: 0,
                    rng: 0,
                    stm: 0,
                    coh: 0,
                    rld: 0,
                    dam: 0,
                    splash_dam: 0,
                    splash_radius: 0,
                });
            }
        }
        if !rules.neutral.is_empty() {
            return Err("no neutral pieces".into());
        }
        let mut orders = rules.phases.iter().filter_map(|ph| match &ph.activation {
            Activation::EachPiece(o) => Some(o.clone()),
            _ => None,
        });
        let order = orders
            .next()
            .ok_or("the phases activate every piece of each side in turn")?;
        if orders.any(|o| o != order) {
            return Err("every phase activates the sides in one order".into());
        }
        let moving = rules
            .phases
            .iter()
            .find(|ph| ph.name == "movement")
            .ok_or("no Move phase")?;
        let legs_per_move = p
            .unknowns
            .iter()
            .position(|u| u.name == "legs_per_move")
            .and_then(|k| rules.assumptions.values.get(&(k as u32)))
            .and_then(Val::as_int)
            .ok_or("no `legs_per_move`")?;
        let legs = u32::try_from(legs_per_move)
            .map_err(|_| "`legs_per_move` is not a count")?
            .min(moving.unit.actions_per_piece);
        let reinforce = rules
            .scenario_values
            .iter()
            .find(|(k, _)| k == "reinforce")
            .and_then(|(_, v)| v.as_ref().and_then(Val::as_int))
            .ok_or("no reinforce points")?;
        Ok(TotalDestruction {
            width: *width,
            depth: *depth,
            base: *base,
            directions: moves.directions,
            steps: i64::from(moves.steps.max(1)),
            shapes: shapes.clone(),
            hills: of(hills_e),
            marsh: of(marsh_e),
            river: of(river_e),
            woods: of(woods_e),
            cliff,
            is_hills: is(hills_e),
            is_marsh: is(marsh_e),
            is_woods: is(woods_e),
            specs,
            areas,
            homes,
            order,
            legs,
            sides: p.sides.len(),
            turns: rules.turns,
            reinforce,
            reload: rules.options.iter().any(|o| o == "reload"),
        })
    }

    fn inside(&self, p: Point) -> bool {
        (0..=self.width).contains(&p.x()) && (0..=self.depth).contains(&p.y())
    }

    fn in_any(&self, p: Point, which: &[bool]) -> bool {
        self.shapes
            .iter()
            .zip(which)
            .any(|(s, w)| *w && s.contains(p))
    }

    fn is_unit(&self, i: usize) -> bool {
        self.specs[i].side.is_some()
    }

    /// On the table (set up or brought in, not destroyed).
    fn standing(s: &Play, i: usize) -> Option<Point> {
        let f = &s.figs[i];
        if f.status == Status::OnBoard {
            f.pos
        } else {
            None
        }
    }

    fn pick(&self, s: &mut Play, side: SideId, n: usize) -> usize {
        s.decisions += 1;
        if let Some(t) = &mut s.trace {
            t.push(n as u32);
        }
        s.policy[side as usize].index(n as u32) as usize
    }

    /// 3: what a move costs against SPD: marsh, river, woods and the climb count twice.
    fn move_cost(&self, from: Point, to: Point) -> i64 {
        distance(from, to)
            + length_inside(from, to, self.marsh.iter())
            + length_inside(from, to, self.river.iter())
            + length_inside(from, to, self.woods.iter())
            + length_approaching(from, to, self.hills.iter())
    }

    fn touches_cliff(&self, from: Point, to: Point) -> bool {
        self.shapes
            .iter()
            .zip(&self.cliff)
            .any(|(s, c)| *c && s.geometry.meets_segment(from, to))
    }

    /// The piece whose base a figure going straight from `from` to `to` touches first.
    fn first_in_way(&self, s: &Play, i: usize, from: Point, to: Point) -> Option<usize> {
        let base = self.base;
        (0..s.figs.len())
            .filter(|&j| j != i)
            .filter_map(|j| match Self::standing(s, j) {
                Some(c) if passes_within(from, to, c, base) => Some((j, c)),
                _ => None,
            })
            .min_by_key(|(j, c)| {
                let d = (i128::from(to.x() - from.x()), i128::from(to.y() - from.y()));
                let len2 = d.0 * d.0 + d.1 * d.1;
                if len2 == 0 {
                    return (0, *j);
                }
                let along = d.0 * i128::from(c.x() - from.x()) + d.1 * i128::from(c.y() - from.y());
                let cross = d.0 * i128::from(c.y() - from.y()) - d.1 * i128::from(c.x() - from.x());
                let foot = ((along * along / len2) as u128).isqrt() as i128 * along.signum();
                let half = ((i128::from(base).pow(2) - cross * cross / len2).max(0) as u128).isqrt()
                    as i128;
                (foot - half, *j)
            })
            .map(|(j, _)| j)
    }

    /// No other figure's base (flags included) touched going straight from `from` to `to`.
    fn path_clear(&self, s: &Play, me: usize, from: Point, to: Point) -> bool {
        (0..s.figs.len()).all(|j| {
            j == me
                || !matches!(Self::standing(s, j), Some(c) if passes_within(from, to, c, self.base))
        })
    }

    /// No other figure stands within a base of `p`.
    fn clear(&self, s: &Play, me: Option<usize>, p: Point) -> bool {
        (0..s.figs.len()).all(|j| {
            Some(j) == me
                || !matches!(Self::standing(s, j), Some(c) if distance_squared(c, p) < self.base * self.base)
        })
    }

    /// 2 Move and Retreat: the guards of `advance` and `fall_back` that the engine interprets
    /// (no cliff on the way, the cost within the allowance, and for a retreat, ending nearer
    /// home).
    fn move_ok(&self, i: usize, from: Point, to: Point, allowance: i64, retreat: bool) -> bool {
        if retreat {
            let home = self.homes[self.specs[i].placed_by as usize];
            if distance(to, home) >= distance(from, home) {
                return false;
            }
        }
        !self.touches_cliff(from, to) && self.move_cost(from, to) <= allowance
    }

    /// What `advance` still lets unit `i` move this phase: its SPD less what its legs cost,
    /// or nothing once it has taken its legs or has less than the shortest leg left.
    fn allowance(&self, s: &Play, i: usize) -> i64 {
        let f = &s.figs[i];
        let left = self.specs[i].spd - f.move_spent;
        if f.legs >= self.legs || left < MIN_LEG {
            0
        } else {
            left
        }
    }

    /// The destinations of a move of at most `r` (the engine's open-table candidate lines:
    /// toward enemies and flags, away from the nearest enemy, into every feature, the compass
    /// directions left uncovered), each followed as far as the guards allow and offered at
    /// that point and its steps. A leg of an advance is at least [`MIN_LEG`] long.
    fn destinations(&self, s: &Play, me: usize, r: i64, retreat: bool, out: &mut Vec<Choice>) {
        let Some(from) = Self::standing(s, me) else {
            return;
        };
        if r <= 0 {
            return;
        }
        let far = |dx: i64, dy: i64| {
            Point::new(
                (from.x() + dx * 64).clamp(-9_000_000, 9_000_000),
                (from.y() + dy * 64).clamp(-9_000_000, 9_000_000),
            )
            .ok()
        };
        let base = self.base;
        let mine = self.specs[me].side;
        let mut lines: Vec<(Point, i64)> = Vec::new();
        let mut nearest_enemy: Option<(i64, Point)> = None;
        for j in 0..s.figs.len() {
            let Some(to) = Self::standing(s, j) else {
                continue;
            };
            let side = self.specs[j].side;
            if j == me || (side.is_some() && side == mine) {
                continue;
            }
            let d = distance(from, to);
            lines.push((to, d - base));
            if side.is_some() && nearest_enemy.is_none_or(|(n, _)| d < n) {
                nearest_enemy = Some((d, to));
            }
        }
        if let Some((_, to)) = nearest_enemy
            && let Some(away) = far(from.x() - to.x(), from.y() - to.y())
        {
            lines.push((away, r));
        }
        for sh in &self.shapes {
            let centre = sh.geometry.centre();
            let to_centre = distance(from, centre);
            lines.push((centre, to_centre + 1));
            if to_centre > r {
                let edge = sh.geometry.nearest_point(from);
                lines.push((edge, distance(from, edge) + 1));
            }
        }
        let half_sector = std::f64::consts::PI / f64::from(self.directions.max(1));
        let heading = |aim: Point| ((aim.x() - from.x()) as f64).atan2((aim.y() - from.y()) as f64);
        let headings: Vec<f64> = lines
            .iter()
            .filter(|(aim, _)| *aim != from)
            .map(|(aim, _)| heading(*aim))
            .collect();
        for k in 0..self.directions {
            let angle = std::f64::consts::TAU * f64::from(k) / f64::from(self.directions);
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
        let start = out.len();
        for (aim, reach) in lines {
            let reach = reach.min(r);
            if reach <= 0 || aim == from {
                continue;
            }
            let native = |len: i64| {
                let p = move_toward(from, aim, len);
                self.inside(p) && distance(from, p) <= r && self.path_clear(s, me, from, p)
            };
            let shortest = if retreat { 0 } else { MIN_LEG };
            let legal = |len: i64| {
                let to = move_toward(from, aim, len);
                native(len)
                    && distance(from, to) >= shortest
                    && self.move_ok(me, from, to, r, retreat)
            };
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
            let end = if legal(hi) {
                hi
            } else if !legal(hi >> SEARCH_STEPS) {
                0
            } else {
                let (mut lo, mut hi) = (hi >> SEARCH_STEPS, hi);
                for _ in 0..SEARCH_STEPS {
                    let mid = lo + (hi - lo) / 2;
                    if mid == lo {
                        break;
                    }
                    if legal(mid) {
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
            for k in (1..=self.steps).rev() {
                let len = end * k / self.steps;
                let p = move_toward(from, aim, len);
                if p == from || !self.clear(s, Some(me), p) {
                    continue;
                }
                if k < self.steps && !legal(len) {
                    continue;
                }
                if !out[start..]
                    .iter()
                    .any(|c| matches!(c, Choice::To(q) if *q == p))
                {
                    out.push(Choice::To(p));
                }
            }
        }
    }

    /// 2 Reinforce: the points around the own flag, within 2in of it, clear of every base
    /// and off any cliff.
    fn entry_points(&self, s: &Play, u: usize, out: &mut Vec<Choice>) {
        let side = self.specs[u].placed_by;
        let Some(flag) = (0..s.figs.len())
            .find(|&j| !self.is_unit(j) && self.specs[j].placed_by == side)
            .and_then(|j| Self::standing(s, j))
        else {
            return;
        };
        let r = 2 * table::INCH;
        let start = out.len();
        for d in 0..self.directions {
            let angle = std::f64::consts::TAU * f64::from(d) / f64::from(self.directions.max(1));
            for k in 1..=self.steps {
                let len = r * k / self.steps;
                if len <= 0 {
                    continue;
                }
                let mut p = None;
                for shrink in 0..4 {
                    let l = (len - shrink) as f64;
                    let (x, y) = (
                        flag.x() + (angle.sin() * l).round() as i64,
                        flag.y() - (angle.cos() * l).round() as i64,
                    );
                    if let Ok(q) = Point::new(x, y)
                        && distance(flag, q) <= r
                    {
                        p = Some(q);
                        break;
                    }
                }
                let Some(p) = p else { continue };
                if self.inside(p)
                    && self.clear(s, Some(u), p)
                    && !out[start..]
                        .iter()
                        .any(|c| matches!(c, Choice::To(q) if *q == p))
                {
                    out.push(Choice::To(p));
                }
            }
        }
        let mut k = start;
        while k < out.len() {
            if matches!(out[k], Choice::To(p) if self.in_any(p, &self.cliff)) {
                out.remove(k);
            } else {
                k += 1;
            }
        }
    }

    /// `in_los`: no blocking feature on the line but those the firer or target stands in,
    /// no other unit within half a base of it.
    fn in_los(&self, s: &Play, f: usize, t: usize, p: Point, q: Point) -> bool {
        let own: Vec<Shape> = self
            .shapes
            .iter()
            .filter(|sh| !sh.contains(p) && !sh.contains(q))
            .copied()
            .collect();
        if !table::line_of_sight(p, q, &own) {
            return false;
        }
        let r = (self.base / 2) as i128;
        (0..s.figs.len()).all(|j| {
            j == f
                || j == t
                || !self.is_unit(j)
                || !matches!(Self::standing(s, j), Some(c) if point_segment_dist2(c, p, q) < r * r)
        })
    }

    /// The choices of piece `i` in a phase (its legal actions; hold is added by the caller).
    fn listed(&self, s: &Play, i: usize, phase: Phase, out: &mut Vec<Choice>) {
        let sp = &self.specs[i];
        let f = &s.figs[i];
        match phase {
            Phase::Reinforce => {
                if f.status == Status::Reserve
                    && s.spent[sp.placed_by as usize] + 2 * sp.points <= self.reinforce
                {
                    self.entry_points(s, i, out);
                }
            }
            Phase::Move => {
                if !f.reloading {
                    self.destinations(s, i, self.allowance(s, i), false, out);
                }
            }
            Phase::Retreat => {
                if !f.attacked && !f.reloading {
                    self.destinations(s, i, table::INCH, true, out);
                }
            }
            Phase::Attack => {
                let Some(p) = Self::standing(s, i) else {
                    return;
                };
                for t in 0..s.figs.len() {
                    if t == i || !self.is_unit(t) {
                        continue;
                    }
                    let Some(q) = Self::standing(s, t) else {
                        continue;
                    };
                    if self.specs[t].side != sp.side
                        && !f.failed_cohesion
                        && !f.reloading
                        && distance(p, q) <= sp.rng
                        && self.in_los(s, i, t, p, q)
                    {
                        out.push(Choice::At(t));
                    }
                }
            }
        }
    }

    /// A unit goes to `to`: a move (counted toward this turn's distance) or its entry.
    fn set_pos(&self, s: &mut Play, i: usize, to: Point) {
        let f = &mut s.figs[i];
        if f.status == Status::Reserve {
            f.status = Status::OnBoard;
            f.pos = Some(to);
            return;
        }
        if let Some(from) = f.pos {
            f.moved += distance(from, to);
        }
        f.pos = Some(to);
    }

    /// 3: what the move went through, for the next cohesion check and this turn's ACC.
    fn note_terrain(&self, s: &mut Play, i: usize, to: Point) {
        let Some(from) = s.figs[i].pos else { return };
        let f = &mut s.figs[i];
        if length_inside(from, to, self.woods.iter()) > 0 {
            f.through_woods = true;
        }
        if length_inside(from, to, self.river.iter()) > 0 {
            f.through_river = true;
        }
        if length_inside(from, to, self.hills.iter())
            > length_approaching(from, to, self.hills.iter())
        {
            f.down_hill = true;
        }
    }

    fn eliminate(s: &mut Play, i: usize) {
        let f = &mut s.figs[i];
        if f.status == Status::OnBoard {
            f.status = Status::Eliminated;
            f.failed_cohesion = false;
            f.attacked = false;
            f.reloading = false;
        }
    }

    /// `damage`: removed once the markers exceed STM.
    fn take_damage(&self, s: &mut Play, u: usize, dam: i64) {
        if s.figs[u].damage + dam - self.specs[u].stm >= 1 {
            Self::eliminate(s, u);
        } else {
            s.figs[u].damage += dam;
        }
    }

    /// 2 Attack, 3, 4, 5: the ACC check, damage, splash and reload.
    fn attack(&self, s: &mut Play, f: usize, t: usize) {
        let (Some(p), Some(q)) = (s.figs[f].pos, s.figs[t].pos) else {
            return;
        };
        s.figs[f].attacked = true;
        let sf = &self.specs[f];
        let t_hill = self.in_any(q, &self.is_hills);
        let f_hill = self.in_any(p, &self.is_hills);
        let t_marsh = self.in_any(q, &self.is_marsh);
        let f_marsh = self.in_any(p, &self.is_marsh);
        let t_woods = self.in_any(q, &self.is_woods);
        let mut roll = d6(&mut s.dice) + sf.acc;
        if s.figs[f].moved * 2 > sf.spd {
            roll -= 2;
        }
        roll -= i64::from(t_hill);
        roll += i64::from(f_hill && !t_hill);
        roll -= i64::from(t_marsh && !f_marsh);
        roll -= i64::from(s.figs[f].through_woods);
        roll -= i64::from(t_woods);
        let def = self.specs[t].def - i64::from(s.figs[t].reloading);
        if roll - def >= 1 {
            self.take_damage(s, t, sf.dam);
            if sf.splash_radius > 0 {
                let near: Vec<usize> = (0..s.figs.len())
                    .filter(|&j| {
                        j != t
                            && self.is_unit(j)
                            && Self::standing(s, j)
                                .is_some_and(|c| distance(q, c) <= sf.splash_radius)
                    })
                    .collect();
                for v in near {
                    self.take_damage(s, v, sf.splash_dam);
                }
            }
        }
        if self.reload && sf.rld > 0 {
            s.figs[f].reloading = true;
            s.figs[f].reload = sf.rld;
        }
    }

    /// 2 Cohesion: a unit out of reach of its Commander checks; failing, it routs toward
    /// its flag.
    fn cohesion(&self, s: &mut Play) {
        let units: Vec<usize> = (0..s.figs.len())
            .filter(|&i| self.is_unit(i) && Self::standing(s, i).is_some())
            .collect();
        for u in units {
            let sp = &self.specs[u];
            if sp.commander {
                continue;
            }
            let Some(at) = s.figs[u].pos else { continue };
            let mut nearest = FAR;
            for j in 0..s.figs.len() {
                if j != u
                    && self.specs[j].commander
                    && self.specs[j].side == sp.side
                    && let Some(c) = Self::standing(s, j)
                {
                    nearest = nearest.min(distance(at, c));
                }
            }
            if nearest <= 10 * table::INCH {
                continue;
            }
            let f = &s.figs[u];
            let mods =
                -i64::from(f.down_hill) - i64::from(f.through_river) - i64::from(f.through_woods);
            if d6(&mut s.dice) + sp.coh + mods <= 7 {
                s.figs[u].failed_cohesion = true;
                self.rout(s, u);
            }
        }
        for f in &mut s.figs {
            f.down_hill = false;
            f.through_river = false;
            f.through_woods = false;
        }
    }

    /// A straight move of SPD toward the own flag, stopping at the first figure touched.
    fn rout(&self, s: &mut Play, u: usize) {
        let side = self.specs[u].placed_by;
        for fl in 0..s.figs.len() {
            if self.is_unit(fl) || self.specs[fl].placed_by != side {
                continue;
            }
            let (Some(aim), Some(from)) = (Self::standing(s, fl), s.figs[u].pos) else {
                continue;
            };
            let len = self.specs[u].spd;
            let met = self.first_in_way(s, u, from, move_toward(from, aim, len));
            // The farthest clear stop along the line (as the engine's `slide`).
            let (mut lo, mut hi) = (0, len.max(0));
            let mut best = from;
            while lo <= hi {
                let mid = (lo + hi) / 2;
                let p = move_toward(from, aim, mid);
                let Ok(p) = Point::new(p.x().clamp(0, self.width), p.y().clamp(0, self.depth))
                else {
                    break;
                };
                if self.first_in_way(s, u, from, p).is_none() {
                    best = p;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            if distance_squared(best, from) >= 100 {
                self.set_pos(s, u, best);
            }
            if let Some(v) = met {
                let destroyed = match self.specs[v].side {
                    None => self.specs[v].placed_by == side,
                    Some(o) => Some(o) != self.specs[u].side,
                };
                if destroyed {
                    Self::eliminate(s, u);
                }
            }
        }
    }

    /// One phase with actions: side after side, each piece once, act or hold; in the Move
    /// phase a piece goes on taking legs until it holds or has none left.
    fn each_piece(&self, s: &mut Play, phase: Phase) {
        let mut choices = Vec::new();
        for &side in &self.order {
            let mut ids: Vec<usize> = (0..s.figs.len())
                .filter(|&i| {
                    self.is_unit(i)
                        && self.specs[i].side == Some(side)
                        && s.figs[i].status == Status::OnBoard
                })
                .collect();
            if phase == Phase::Reinforce {
                ids.extend((0..s.figs.len()).filter(|&i| {
                    self.is_unit(i)
                        && self.specs[i].side == Some(side)
                        && s.figs[i].status == Status::Reserve
                }));
            }
            for i in ids {
                let may = match phase {
                    Phase::Reinforce => s.figs[i].status == Status::Reserve,
                    _ => s.figs[i].status == Status::OnBoard,
                };
                if !may {
                    continue;
                }
                loop {
                    choices.clear();
                    self.listed(s, i, phase, &mut choices);
                    if choices.is_empty() {
                        break;
                    }
                    // Holding, or ending the piece's activation in the Move phase.
                    choices.push(Choice::Hold);
                    let k = self.pick(s, side, choices.len());
                    match (phase, choices[k]) {
                        (_, Choice::Hold) => break,
                        (Phase::Reinforce, Choice::To(p)) => {
                            s.spent[side as usize] += 2 * self.specs[i].points;
                            self.set_pos(s, i, p);
                        }
                        (Phase::Move, Choice::To(p)) => {
                            if let Some(from) = s.figs[i].pos {
                                s.figs[i].move_spent += self.move_cost(from, p);
                            }
                            s.figs[i].legs += 1;
                            self.note_terrain(s, i, p);
                            self.set_pos(s, i, p);
                            continue;
                        }
                        (Phase::Retreat, Choice::To(p)) => {
                            self.note_terrain(s, i, p);
                            self.set_pos(s, i, p);
                        }
                        (Phase::Attack, Choice::At(t)) => self.attack(s, i, t),
                        _ => {}
                    }
                    break;
                }
            }
        }
    }

    fn alive(&self, s: &Play, side: SideId) -> usize {
        (0..s.figs.len())
            .filter(|&i| self.specs[i].side == Some(side) && Self::standing(s, i).is_some())
            .count()
    }

    /// Total Destruction, as read: the side with units left when the other has none wins.
    fn decided(&self, s: &Play, winner: &mut Option<SideId>) {
        for (me, other) in [(0, 1), (1, 0)] {
            if winner.is_none() && self.alive(s, other) == 0 && self.alive(s, me) > 0 {
                *winner = Some(me);
            }
        }
    }

    /// One game between random policies, as the engine plays it with the same seed.
    pub fn playout(&self, seed: u64) -> GameResult {
        self.play(seed, None).0
    }

    /// [`TotalDestruction::playout`] with how many choices each decision offered: to find
    /// where a game leaves the engine's (its log's `of`).
    pub fn trace(&self, seed: u64) -> (GameResult, Vec<u32>) {
        let (r, t) = self.play(seed, Some(Vec::new()));
        (r, t.unwrap_or_default())
    }

    fn play(&self, seed: u64, trace: Option<Vec<u32>>) -> (GameResult, Option<Vec<u32>>) {
        let n = self.specs.len();
        let mut s = Play {
            figs: self
                .specs
                .iter()
                .map(|sp| Fig {
                    pos: None,
                    status: if sp.reserve {
                        Status::Reserve
                    } else {
                        Status::OnBoard
                    },
                    failed_cohesion: false,
                    attacked: false,
                    reloading: false,
                    moved: 0,
                    move_spent: 0,
                    legs: 0,
                    reload: 0,
                    damage: 0,
                    down_hill: false,
                    through_river: false,
                    through_woods: false,
                })
                .collect(),
            spent: vec![0; self.sides],
            dice: Dice::new(stream_seed(seed, 0)),
            policy: (0..self.sides as u64)
                .map(|x| Dice::new(stream_seed(seed, 1 + x)))
                .collect(),
            decisions: 0,
            trace,
        };
        // Set-up: every piece in turn on the 2-inch grid of its side's area.
        let mut spots = Vec::new();
        for i in 0..n {
            if s.figs[i].status == Status::Reserve {
                continue;
            }
            let side = self.specs[i].placed_by;
            let area = self.areas[side as usize];
            spots.clear();
            let mut y = DEPLOY_GRID / 2;
            while y <= self.depth {
                let mut x = DEPLOY_GRID / 2;
                while x <= self.width {
                    if let Ok(pt) = Point::new(x, y)
                        && area.contains(pt)
                        && self.clear(&s, None, pt)
                    {
                        spots.push(pt);
                    }
                    x += DEPLOY_GRID;
                }
                y += DEPLOY_GRID;
            }
            if spots.is_empty() {
                // The engine stops the game here: no room left to set up.
                break;
            }
            let k = self.pick(&mut s, side, spots.len());
            s.figs[i].pos = spots.get(k).copied();
        }
        let mut winner: Option<SideId> = None;
        let mut turn = 0;
        while winner.is_none() && turn < self.turns {
            turn += 1;
            s.spent.iter_mut().for_each(|x| *x = 0);
            self.each_piece(&mut s, Phase::Reinforce);
            self.cohesion(&mut s);
            for f in &mut s.figs {
                f.move_spent = 0;
                f.legs = 0;
            }
            self.each_piece(&mut s, Phase::Move);
            self.each_piece(&mut s, Phase::Attack);
            self.each_piece(&mut s, Phase::Retreat);
            // 4: the reload count, before this turn's markers go.
            for i in 0..n {
                if !self.is_unit(i) || Self::standing(&s, i).is_none() {
                    continue;
                }
                let f = &mut s.figs[i];
                if f.reload > 0 && !f.attacked {
                    f.reload -= 1;
                }
                if f.reload == 0 && f.reloading {
                    f.reloading = false;
                }
            }
            for f in &mut s.figs {
                f.failed_cohesion = false;
                f.attacked = false;
            }
            self.decided(&s, &mut winner);
            for f in &mut s.figs {
                f.moved = 0;
            }
        }
        self.decided(&s, &mut winner);
        let losses: Vec<u32> = (0..self.sides as SideId)
            .map(|x| {
                (0..n)
                    .filter(|&i| {
                        self.specs[i].side == Some(x) && s.figs[i].status == Status::Eliminated
                    })
                    .count() as u32
            })
            .collect();
        let mut scores = vec![0; self.sides];
        for (me, other) in [(0, 1), (1, 0)] {
            scores[me] = i64::from(losses[other]);
        }
        let result = GameResult {
            winner: winner.map_or(Winner::Draw, Winner::Side),
            turns: turn,
            scores,
            losses,
            decisions: s.decisions,
            exits: vec![0; self.sides],
            won_by_exits: false,
        };
        (result, s.trace)
    }
}
