//! Hex grids labelled the way rulebooks print them: column letters and a row number (`S11`).
//!
//! The engine talks in the book's labels ([`HexCoord`]); the arithmetic happens in axial/cube
//! coordinates ([`Axial`], [`Cube`]), where distance and straight lines are simple. The
//! [`HexLayout`] says how a printed map staggers its columns, which is all that is needed to go
//! from one to the other.
//!
//! Every hex grid here is flat-topped: hexes stand in vertical columns (A, B, C, … left to
//! right) and rows count down the page from 1. Rows are "down", so "north" is the top edge.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;
use std::str::FromStr;

use super::TerrainId;

/// Everything that can go wrong with hex coordinates and hex boards.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    #[error("a hex coordinate is empty; write column letters then a row number, e.g. S11")]
    Empty,
    #[error(
        "`{text}` is not a hex coordinate: {reason}; write column letters then a row number, e.g. S11"
    )]
    Malformed { text: String, reason: &'static str },
    #[error("`{0}` names row 0; rows are numbered from 1")]
    ZeroRow(String),
    #[error(
        "`{0}` is beyond the largest hex coordinate supported (columns up to ZZZ, rows up to {max_row})",
        max_row = HexCoord::MAX_ROW
    )]
    TooLarge(String),
    #[error(
        "column {column}, row {row} is not a hex coordinate: columns run from 1 (A) to {max_column} (ZZZ), rows from 1 to {max_row}",
        max_column = HexCoord::MAX_COLUMN,
        max_row = HexCoord::MAX_ROW
    )]
    OutOfRange { column: u32, row: u32 },
    #[error(
        "a hex board of {columns} columns by {rows} rows is not supported: each side needs at least 1 hex, columns at most {max_column} (ZZZ), rows at most {max_row}, and at most {max_hexes} hexes in all",
        max_column = HexCoord::MAX_COLUMN,
        max_row = HexCoord::MAX_ROW,
        max_hexes = HexGrid::MAX_HEXES
    )]
    BadGrid { columns: u32, rows: u32 },
    #[error("hex {hex} is off the board ({columns} columns, {rows} rows)")]
    OffBoard {
        hex: HexCoord,
        columns: u32,
        rows: u32,
    },
    /// Not expected: a straight route between two hexes of a rectangular board always has a
    /// variant on the board. Kept as an error rather than a panic.
    #[error("no straight route from {from} to {to} stays on the board")]
    NoRoute { from: HexCoord, to: HexCoord },
}

/// A hex as a rulebook prints it: column letters then a row number, e.g. `S11`.
///
/// Both parts are 1-based as printed: column 1 is `A`, 26 is `Z`, 27 is `AA` (bijective base
/// 26, the spreadsheet scheme), and row 1 is the top row. Coordinates are bounded (three
/// letters, five digits) so that all arithmetic on them is exact in `i32`/`i64`; no printed map
/// comes near the bounds. A `HexCoord` is only a label: whether it is on a given board is
/// [`HexGrid::contains`]. The order (derived) is column first, then row: `A1 < A2 < B1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HexCoord {
    column: u32,
    row: u32,
}

impl HexCoord {
    /// `ZZZ`: the last three-letter column.
    pub const MAX_COLUMN: u32 = sandtable_ir::scenario::MAX_HEX_COLUMN;
    pub const MAX_ROW: u32 = sandtable_ir::scenario::MAX_HEX_ROW;

    /// The hex in 1-based `column` (1 = A) and `row`.
    pub fn new(column: u32, row: u32) -> Result<Self, HexError> {
        if (1..=Self::MAX_COLUMN).contains(&column) && (1..=Self::MAX_ROW).contains(&row) {
            Ok(HexCoord { column, row })
        } else {
            Err(HexError::OutOfRange { column, row })
        }
    }

    /// Reads a printed coordinate such as `S11` or `AB7`. Lower-case letters are accepted
    /// (`s11` is `S11`) and so are leading zeros in the row (`A05` is `A5`, as some maps
    /// print it); nothing else is: no spaces, no separators, no row 0.
    pub fn parse(text: &str) -> Result<Self, HexError> {
        if text.is_empty() {
            return Err(HexError::Empty);
        }
        let malformed = |reason| HexError::Malformed {
            text: text.to_string(),
            reason,
        };
        let split = text
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(text.len());
        let (letters, digits) = text.split_at(split);
        if letters.is_empty() {
            return Err(malformed("it does not start with column letters"));
        }
        if digits.is_empty() {
            return Err(malformed("it has no row number"));
        }
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(malformed("only digits may follow the column letters"));
        }
        let mut column: u32 = 0;
        for b in letters.bytes() {
            let letter = u32::from(b.to_ascii_uppercase() - b'A') + 1;
            column = column * 26 + letter;
            // Checked at every step, so `column * 26` never comes near overflow.
            if column > Self::MAX_COLUMN {
                return Err(HexError::TooLarge(text.to_string()));
            }
        }
        let mut row: u32 = 0;
        for b in digits.bytes() {
            row = row * 10 + u32::from(b - b'0');
            if row > Self::MAX_ROW {
                return Err(HexError::TooLarge(text.to_string()));
            }
        }
        if row == 0 {
            return Err(HexError::ZeroRow(text.to_string()));
        }
        Ok(HexCoord { column, row })
    }

    /// 1-based column: 1 is `A`.
    pub fn column(self) -> u32 {
        self.column
    }

    /// 1-based row: 1 is the top row.
    pub fn row(self) -> u32 {
        self.row
    }

    /// The column as printed: `A`, …, `Z`, `AA`, `AB`, …
    pub fn column_letters(self) -> String {
        column_letters(self.column)
    }
}

/// Letters of a 1-based column number (bijective base 26); empty for 0.
fn column_letters(column: u32) -> String {
    let mut n = column;
    let mut out = Vec::new();
    while n > 0 {
        n -= 1;
        // `n % 26 < 26`, so the letter is within `A..=Z`.
        out.push(char::from(b'A' + (n % 26) as u8));
        n /= 26;
    }
    out.iter().rev().collect()
}

impl serde::Serialize for HexCoord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for HexCoord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        HexCoord::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for HexCoord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", column_letters(self.column), self.row)
    }
}

impl FromStr for HexCoord {
    type Err = HexError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HexCoord::parse(s)
    }
}

/// Axial coordinates of a flat-topped hex: `q` counts columns to the right, `r` counts hexes
/// down the column (south), and a step in `q` at constant `r` goes south-east.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Axial {
    pub q: i32,
    pub r: i32,
}

/// Cube coordinates: axial plus `s = -q - r`, so that `q + r + s == 0`. Distance is the largest
/// of the three coordinate differences; straight lines are interpolated in these coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cube {
    pub q: i32,
    pub r: i32,
    pub s: i32,
}

impl Axial {
    pub fn to_cube(self) -> Cube {
        Cube {
            q: self.q,
            r: self.r,
            // Wrapping only matters for axial values no `HexCoord` produces.
            s: self.q.wrapping_add(self.r).wrapping_neg(),
        }
    }

    /// Steps between two hexes. Computed in `i64` so that it is exact for any two axial
    /// coordinates.
    pub fn distance(self, other: Axial) -> u64 {
        let dq = i64::from(self.q) - i64::from(other.q);
        let dr = i64::from(self.r) - i64::from(other.r);
        let ds = -dq - dr;
        dq.unsigned_abs()
            .max(dr.unsigned_abs())
            .max(ds.unsigned_abs())
    }
}

impl Cube {
    /// Drops `s`, which is implied by `q` and `r`.
    pub fn to_axial(self) -> Axial {
        Axial {
            q: self.q,
            r: self.r,
        }
    }
}

/// The six directions from a flat-topped hex, in the order used wherever order matters
/// (neighbour lists, path search): N, NE, SE, S, SW, NW.
const DIRECTIONS: [(i32, i32); 6] = [(0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0)];

/// How a printed map staggers its flat-topped columns. "Odd" and "even" are the printed column
/// numbers: A is column 1 (odd), B is column 2 (even).
///
/// The default is [`HexLayout::EvenColumnsDown`]: column A's first hex touches the top edge of
/// the map and B1 sits half a hex lower. That is the usual convention of printed hex maps
/// (hex 0101 / A1 in the top-left corner, flush with the map edge); a ruleset whose map
/// staggers the other way says so and gets [`HexLayout::OddColumnsDown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HexLayout {
    /// B, D, F, … sit half a hex lower than A, C, E, … (the "odd-q" layout when columns are
    /// counted from 0).
    #[default]
    EvenColumnsDown,
    /// A, C, E, … sit half a hex lower than B, D, F, … (the "even-q" layout when columns are
    /// counted from 0).
    OddColumnsDown,
}

impl HexLayout {
    /// Axial coordinates of a printed hex; A1 is `(0, 0)` in both layouts.
    pub fn to_axial(self, hex: HexCoord) -> Axial {
        // Both at most 99_999, so the `i32` arithmetic below is exact.
        let col = hex.column as i32 - 1;
        let row = hex.row as i32 - 1;
        let shift = match self {
            HexLayout::EvenColumnsDown => (col - (col & 1)) / 2,
            HexLayout::OddColumnsDown => (col + (col & 1)) / 2,
        };
        Axial {
            q: col,
            r: row - shift,
        }
    }

    /// The printed hex at axial coordinates, if it has a label (column and row at least 1 and
    /// within [`HexCoord`]'s bounds). Whether it is on a board is a separate question.
    pub fn from_axial(self, axial: Axial) -> Option<HexCoord> {
        let col = i64::from(axial.q);
        let shift = match self {
            HexLayout::EvenColumnsDown => (col - (col & 1)) / 2,
            HexLayout::OddColumnsDown => (col + (col & 1)) / 2,
        };
        let row = i64::from(axial.r) + shift;
        let column = u32::try_from(col + 1).ok()?;
        let row = u32::try_from(row + 1).ok()?;
        HexCoord::new(column, row).ok()
    }
}

/// A cheapest path found by [`HexGrid::shortest_path`]: the hexes from start to target, both
/// included, and the total entry cost (the start hex costs nothing: the piece is already there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    pub hexes: Vec<HexCoord>,
    pub cost: u64,
}

/// A rectangular board of flat-topped hexes: columns `A..` and rows `1..`, staggered per
/// [`HexLayout`]. Its size is bounded ([`HexGrid::MAX_HEXES`]) so every search over it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HexGrid {
    columns: u32,
    rows: u32,
    layout: HexLayout,
}

impl HexGrid {
    /// Largest board accepted: a million hexes, far beyond any printed map, small enough that a
    /// full path search stays quick.
    pub const MAX_HEXES: u32 = sandtable_ir::scenario::MAX_HEXES;

    /// A board of `columns` (A..) by `rows` (1..) hexes.
    pub fn new(columns: u32, rows: u32, layout: HexLayout) -> Result<Self, HexError> {
        let fits = (1..=HexCoord::MAX_COLUMN).contains(&columns)
            && (1..=HexCoord::MAX_ROW).contains(&rows)
            && u64::from(columns) * u64::from(rows) <= u64::from(Self::MAX_HEXES);
        if fits {
            Ok(HexGrid {
                columns,
                rows,
                layout,
            })
        } else {
            Err(HexError::BadGrid { columns, rows })
        }
    }

    pub fn columns(&self) -> u32 {
        self.columns
    }

    pub fn rows(&self) -> u32 {
        self.rows
    }

    pub fn layout(&self) -> HexLayout {
        self.layout
    }

    /// Number of hexes on the board.
    pub fn hex_count(&self) -> u32 {
        // Bounded by `MAX_HEXES` at construction.
        self.columns * self.rows
    }

    pub fn contains(&self, hex: HexCoord) -> bool {
        hex.column <= self.columns && hex.row <= self.rows
    }

    /// Every hex of the board, column by column (`A1, A2, …, B1, …`), i.e. in `HexCoord` order.
    pub fn hexes(&self) -> impl Iterator<Item = HexCoord> + '_ {
        (1..=self.columns)
            .flat_map(move |column| (1..=self.rows).map(move |row| HexCoord { column, row }))
    }

    pub fn to_axial(&self, hex: HexCoord) -> Axial {
        self.layout.to_axial(hex)
    }

    pub fn to_cube(&self, hex: HexCoord) -> Cube {
        self.layout.to_axial(hex).to_cube()
    }

    /// The labelled hex at these axial coordinates (on the board or not); `None` if it has no
    /// label (column or row below 1, or beyond [`HexCoord`]'s bounds).
    pub fn from_axial(&self, axial: Axial) -> Option<HexCoord> {
        self.layout.from_axial(axial)
    }

    pub fn from_cube(&self, cube: Cube) -> Option<HexCoord> {
        self.layout.from_axial(cube.to_axial())
    }

    /// Steps from `a` to `b` across hexes (0 for the same hex). Purely geometric: it does not
    /// look at the board's edges, and on a rectangular board a straight on-board route of this
    /// length always exists (see [`HexGrid::route`]).
    pub fn distance(&self, a: HexCoord, b: HexCoord) -> u32 {
        let d = self.to_axial(a).distance(self.to_axial(b));
        // Labels are bounded, so the distance is below 200_000.
        u32::try_from(d).unwrap_or(u32::MAX)
    }

    /// Whether two hexes share a side (distance 1). A hex is not adjacent to itself.
    pub fn adjacent(&self, a: HexCoord, b: HexCoord) -> bool {
        self.distance(a, b) == 1
    }

    /// The hexes sharing a side with `hex` that are on the board, in the order N, NE, SE, S,
    /// SW, NW. `hex` itself may be off the board (a piece about to enter).
    pub fn neighbours(&self, hex: HexCoord) -> Vec<HexCoord> {
        let a = self.to_axial(hex);
        DIRECTIONS
            .iter()
            .filter_map(|&(dq, dr)| {
                self.from_axial(Axial {
                    q: a.q + dq,
                    r: a.r + dr,
                })
            })
            .filter(|&n| self.contains(n))
            .collect()
    }

    /// The hex reached from `hex` by `ahead` steps in direction `dir` (0 = N, then clockwise:
    /// NE, SE, S, SW, NW; taken modulo 6) and then `aside` steps in the next direction
    /// clockwise; `None` off the board.
    pub fn step(&self, hex: HexCoord, dir: i64, ahead: i64, aside: i64) -> Option<HexCoord> {
        let (dq, dr) = DIRECTIONS[dir.rem_euclid(6) as usize];
        let (sq, sr) = DIRECTIONS[(dir + 1).rem_euclid(6) as usize];
        let a = self.to_axial(hex);
        let (ahead, aside) = (
            ahead.clamp(-1000, 1000) as i32,
            aside.clamp(-1000, 1000) as i32,
        );
        self.from_axial(Axial {
            q: a.q + dq * ahead + sq * aside,
            r: a.r + dr * ahead + sr * aside,
        })
        .filter(|&h| self.contains(h))
    }

    /// The on-board hexes at most `radius` steps from `centre` (the centre included when it is
    /// on the board), in `HexCoord` order.
    ///
    /// Work is bounded by the smaller of the radius' area and the board: small radii walk the
    /// hexagon around the centre, large ones scan the board.
    pub fn hexes_within(&self, centre: HexCoord, radius: u32) -> Vec<HexCoord> {
        let span = 2 * u64::from(radius) + 1;
        let mut out: Vec<HexCoord> = if span.saturating_mul(span) <= u64::from(self.hex_count()) {
            // radius < 1_000 here, so `i32` is ample.
            let r = radius as i32;
            let c = self.to_axial(centre);
            let mut found = Vec::with_capacity((span * span) as usize);
            for dq in -r..=r {
                for dr in (-r).max(-dq - r)..=r.min(-dq + r) {
                    if let Some(hex) = self.from_axial(Axial {
                        q: c.q + dq,
                        r: c.r + dr,
                    }) && self.contains(hex)
                    {
                        found.push(hex);
                    }
                }
            }
            found
        } else {
            self.hexes()
                .filter(|&h| self.distance(centre, h) <= radius)
                .collect()
        };
        out.sort();
        out
    }

    /// The hexes of [`HexGrid::hexes_within`], nearest first: the centre, then each ring
    /// outward (walked round, so no sorting). For a search that stops at the first hex
    /// that will do.
    pub fn hexes_by_distance(&self, centre: HexCoord, radius: u32) -> Vec<HexCoord> {
        // Rings past the board's own span hold no hex of it.
        let radius = radius.min(self.columns() + self.rows());
        let c = self.to_axial(centre);
        let mut out = Vec::with_capacity(3 * radius as usize * (radius as usize + 1) + 1);
        if self.contains(centre) {
            out.push(centre);
        }
        const STEPS: [(i32, i32); 6] = [(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)];
        for k in 1..=radius as i32 {
            // Start at the ring's corner k steps along (-1, +1), then walk its six sides.
            let mut at = Axial {
                q: c.q - k,
                r: c.r + k,
            };
            for (dq, dr) in STEPS {
                for _ in 0..k {
                    if let Some(hex) = self.from_axial(at)
                        && self.contains(hex)
                    {
                        out.push(hex);
                    }
                    at = Axial {
                        q: at.q + dq,
                        r: at.r + dr,
                    };
                }
            }
        }
        out
    }

    fn check_on_board(&self, hex: HexCoord) -> Result<(), HexError> {
        if self.contains(hex) {
            Ok(())
        } else {
            Err(HexError::OffBoard {
                hex,
                columns: self.columns,
                rows: self.rows,
            })
        }
    }

    /// The straight route from `a` to `b`: `distance(a, b) + 1` hexes, `a` first and `b` last,
    /// each adjacent to the next, all on the board. This is the "line of fire" of hex rules.
    ///
    /// The route takes the hexes under the straight line between the two hex centres (the
    /// hexes nearest to `distance + 1` evenly spaced points on it, computed exactly with
    /// integers). Where the line runs exactly along a hexside, two routes are equally short;
    /// the rule is: **take the hex further down the map (south)**, unless that puts the route
    /// off the board (a line along the bottom edge), in which case take the north side at
    /// every such tie. (Technically: the points are nudged by (+1, +2, -3)/(10 N) in cube
    /// coordinates, or by the opposite nudge for the fallback, as in the usual hex-line
    /// algorithm; the nudge is smaller than any non-tie margin, so it only decides ties.)
    pub fn route(&self, a: HexCoord, b: HexCoord) -> Result<Vec<HexCoord>, HexError> {
        self.check_on_board(a)?;
        self.check_on_board(b)?;
        let n = self.distance(a, b);
        if n == 0 {
            return Ok(vec![a]);
        }
        let (ca, cb) = (self.to_cube(a), self.to_cube(b));
        self.line_with_nudge(ca, cb, i64::from(n), 1)
            .or_else(|| self.line_with_nudge(ca, cb, i64::from(n), -1))
            .ok_or(HexError::NoRoute { from: a, to: b })
    }

    /// The hex line from `a` to `b` (`n` = their distance > 0) with ties decided by the nudge
    /// `sign`; `None` if some hex of it is off the board.
    fn line_with_nudge(&self, a: Cube, b: Cube, n: i64, sign: i64) -> Option<Vec<HexCoord>> {
        // Points are scaled by `n * SCALE`; the nudge of at most 3 such units cannot move a
        // point across a rounding boundary it is not exactly on (those are at least `SCALE / 2`
        // = 5 units away), and with SCALE = 10 no nudged coordinate lands exactly on a half.
        const SCALE: i64 = 10;
        let denom = n * SCALE;
        let nudge = [sign, 2 * sign, -3 * sign];
        let (aq, ar, as_) = (i64::from(a.q), i64::from(a.r), i64::from(a.s));
        let (bq, br, bs) = (i64::from(b.q), i64::from(b.r), i64::from(b.s));
        let mut out = Vec::with_capacity(usize::try_from(n + 1).unwrap_or(0));
        for i in 0..=n {
            let q = (aq * n + (bq - aq) * i) * SCALE + nudge[0];
            let r = (ar * n + (br - ar) * i) * SCALE + nudge[1];
            let s = (as_ * n + (bs - as_) * i) * SCALE + nudge[2];
            let (mut rq, mut rr, rs) = (
                round_div(q, denom),
                round_div(r, denom),
                round_div(s, denom),
            );
            // Cube rounding: the three rounded values may not sum to 0; recompute the one that
            // moved furthest from the other two.
            let (eq, er, es) = (
                (rq * denom - q).abs(),
                (rr * denom - r).abs(),
                (rs * denom - s).abs(),
            );
            if eq > er && eq > es {
                rq = -rr - rs;
            } else if er > es {
                rr = -rq - rs;
            }
            let hex = self.from_axial(Axial {
                q: i32::try_from(rq).ok()?,
                r: i32::try_from(rr).ok()?,
            })?;
            if !self.contains(hex) {
                return None;
            }
            out.push(hex);
        }
        Some(out)
    }

    /// How many hexes of the straight [`route`](HexGrid::route) from `a` to `b` have terrain
    /// `wanted`, not counting `a` and counting `b` ("the fire passes through N jungle hexes").
    /// Hexes missing from `terrain` have terrain `default`.
    pub fn terrain_on_route(
        &self,
        a: HexCoord,
        b: HexCoord,
        terrain: &HashMap<HexCoord, TerrainId>,
        default: TerrainId,
        wanted: TerrainId,
    ) -> Result<u32, HexError> {
        Ok(count_terrain(&self.route(a, b)?, terrain, default, wanted))
    }

    /// Whether any hex strictly between `a` and `b` on the straight [`route`](HexGrid::route)
    /// is occupied ("fire is impossible through a hex holding a unit"). The two ends are not
    /// looked at: the firer and the target are there.
    pub fn route_blocked(
        &self,
        a: HexCoord,
        b: HexCoord,
        occupied: impl Fn(HexCoord) -> bool,
    ) -> Result<bool, HexError> {
        let route = self.route(a, b)?;
        let inner = route.get(1..route.len().saturating_sub(1)).unwrap_or(&[]);
        Ok(inner.iter().any(|&h| occupied(h)))
    }

    /// [`route_blocked`](HexGrid::route_blocked) when the occupied hexes are few and listed:
    /// a hex of the route lies between the ends (its distances to them add up to theirs), so
    /// the route is drawn only when some occupied hex does. On a large board most lines pass
    /// no one, and each costs a few distance sums instead of a line as long as the board.
    pub fn route_blocked_by(
        &self,
        a: HexCoord,
        b: HexCoord,
        occupied: &[HexCoord],
    ) -> Result<bool, HexError> {
        self.check_on_board(a)?;
        self.check_on_board(b)?;
        let n = self.distance(a, b);
        let between: Vec<HexCoord> = occupied
            .iter()
            .copied()
            .filter(|&o| o != a && o != b && self.distance(a, o) + self.distance(o, b) == n)
            .collect();
        if between.is_empty() {
            return Ok(false);
        }
        self.route_blocked(a, b, |h| between.contains(&h))
    }

    /// Over every shortest on-board route from `a` to `b` (`distance(a, b)` steps, in any
    /// combination of directions) whose hexes strictly between the ends are all open, the
    /// least total `weight` of those hexes; `Ok(None)` when every shortest route passes a
    /// blocked hex. "Fire may follow any route of hexes, but not through a unit nor through
    /// more than three jungle hexes" is `blocked` = occupied, `weight` = 1 for jungle, and a
    /// bound on the answer. The ends are never blocked nor weighed.
    ///
    /// A dynamic programme over the hexes between, layer by layer away from `a`: each layer
    /// holds at most `distance + 1` hexes, so the work is quadratic in the distance.
    pub fn fewest_on_open_route(
        &self,
        a: HexCoord,
        b: HexCoord,
        blocked: impl Fn(HexCoord) -> bool,
        weight: impl Fn(HexCoord) -> u32,
    ) -> Result<Option<u32>, HexError> {
        self.check_on_board(a)?;
        self.check_on_board(b)?;
        let n = self.distance(a, b);
        let mut layer: Vec<(HexCoord, u32)> = vec![(a, 0)];
        for k in 1..n {
            let mut next: Vec<(HexCoord, u32)> = Vec::new();
            for &(at, w) in &layer {
                for nb in self.neighbours(at) {
                    // One step from a hex `k - 1` from `a` and `n - k` from `b` is exactly `k`
                    // from `a`: the hex lies on a shortest route.
                    if self.distance(nb, b) != n - k || blocked(nb) {
                        continue;
                    }
                    let c = w.saturating_add(weight(nb));
                    match next.iter_mut().find(|(x, _)| *x == nb) {
                        Some(e) => e.1 = e.1.min(c),
                        None => next.push((nb, c)),
                    }
                }
            }
            if next.is_empty() {
                return Ok(None);
            }
            layer = next;
        }
        Ok(layer.iter().map(|&(_, w)| w).min())
    }

    /// The cheapest on-board path from `from` to `to`, where entering a hex costs
    /// `entry_cost(hex)` and `None` means the hex cannot be entered (wire, a wall, an enemy).
    /// With `max_cost`, paths costing more are not considered ("moves up to its movement
    /// factor"). `Ok(None)` when no path exists within the budget.
    ///
    /// Among equally cheap paths the one with fewest hexes is taken; remaining ties go to the
    /// path the search meets first (its order is fixed: by cost, then steps, then `HexCoord`
    /// order, neighbours N, NE, SE, S, SW, NW), so the answer is deterministic.
    pub fn shortest_path(
        &self,
        from: HexCoord,
        to: HexCoord,
        entry_cost: impl Fn(HexCoord) -> Option<u32>,
        max_cost: Option<u64>,
    ) -> Result<Option<Path>, HexError> {
        self.check_on_board(from)?;
        self.check_on_board(to)?;
        let search = self.search(from, Some(to), &entry_cost, max_cost);
        let Some(target) = self.index(to) else {
            return Ok(None);
        };
        let Some((cost, _)) = search.best.get(target).copied().flatten() else {
            return Ok(None);
        };
        let mut hexes = vec![to];
        let mut at = target;
        while let Some(prev) = search.prev.get(at).copied().flatten() {
            hexes.push(self.hex_at(prev));
            at = prev;
        }
        hexes.reverse();
        Ok(Some(Path { hexes, cost }))
    }

    /// Every on-board hex reachable from `from` for at most `max_cost`, with its cheapest cost
    /// (`from` itself at 0); costs as in [`shortest_path`](HexGrid::shortest_path). This is the
    /// set of hexes a piece may end its move in.
    pub fn reachable(
        &self,
        from: HexCoord,
        entry_cost: impl Fn(HexCoord) -> Option<u32>,
        max_cost: u64,
    ) -> Result<HashMap<HexCoord, u64>, HexError> {
        self.check_on_board(from)?;
        let search = self.search(from, None, &entry_cost, Some(max_cost));
        Ok(search
            .best
            .iter()
            .enumerate()
            .filter_map(|(i, best)| best.map(|(cost, _)| (self.hex_at(i), cost)))
            .collect())
    }

    /// Index of an on-board hex in column-major order (the order of [`HexGrid::hexes`]).
    fn index(&self, hex: HexCoord) -> Option<usize> {
        if !self.contains(hex) {
            return None;
        }
        let i = u64::from(hex.column - 1) * u64::from(self.rows) + u64::from(hex.row - 1);
        usize::try_from(i).ok()
    }

    /// The hex at a column-major index (an index from [`HexGrid::index`]).
    fn hex_at(&self, index: usize) -> HexCoord {
        // index < MAX_HEXES, so it fits in u32.
        let i = index as u32;
        HexCoord {
            column: i / self.rows + 1,
            row: i % self.rows + 1,
        }
    }

    /// Dijkstra over the board on (cost, steps), stopping early at `target` if given.
    fn search(
        &self,
        from: HexCoord,
        target: Option<HexCoord>,
        entry_cost: &impl Fn(HexCoord) -> Option<u32>,
        max_cost: Option<u64>,
    ) -> Search {
        let count = self.hex_count() as usize;
        let mut best: Vec<Option<(u64, u32)>> = vec![None; count];
        let mut prev: Vec<Option<usize>> = vec![None; count];
        let mut done = vec![false; count];
        let mut heap = BinaryHeap::new();
        let target = target.and_then(|t| self.index(t));
        if let Some(start) = self.index(from) {
            best[start] = Some((0, 0));
            heap.push(Reverse((0u64, 0u32, start)));
        }
        while let Some(Reverse((cost, steps, at))) = heap.pop() {
            if done[at] {
                continue;
            }
            done[at] = true;
            if Some(at) == target {
                break;
            }
            for next in self.neighbours(self.hex_at(at)) {
                let Some(j) = self.index(next) else { continue };
                if done[j] {
                    continue;
                }
                let Some(enter) = entry_cost(next) else {
                    continue;
                };
                let key = (cost + u64::from(enter), steps + 1);
                if max_cost.is_some_and(|m| key.0 > m) {
                    continue;
                }
                if best[j].is_none_or(|b| key < b) {
                    best[j] = Some(key);
                    prev[j] = Some(at);
                    heap.push(Reverse((key.0, key.1, j)));
                }
            }
        }
        Search { best, prev }
    }
}

/// Result of [`HexGrid::search`], indexed by column-major hex index.
struct Search {
    best: Vec<Option<(u64, u32)>>,
    prev: Vec<Option<usize>>,
}

/// Rounds `x / d` to the nearest integer (`d > 0`), halves upward.
fn round_div(x: i64, d: i64) -> i64 {
    (2 * x + d).div_euclid(2 * d)
}

/// The terrain of `hex`: its entry in `terrain`, or `default`.
pub fn terrain_at(
    terrain: &HashMap<HexCoord, TerrainId>,
    default: TerrainId,
    hex: HexCoord,
) -> TerrainId {
    terrain.get(&hex).copied().unwrap_or(default)
}

/// How many hexes of `route` after the first have terrain `wanted` (the first hex is where
/// the route starts, e.g. the firer's own hex).
pub fn count_terrain(
    route: &[HexCoord],
    terrain: &HashMap<HexCoord, TerrainId>,
    default: TerrainId,
    wanted: TerrainId,
) -> u32 {
    let counted = route
        .iter()
        .skip(1)
        .filter(|&&h| terrain_at(terrain, default, h) == wanted)
        .count();
    u32::try_from(counted).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn h(text: &str) -> HexCoord {
        HexCoord::parse(text).expect("test hex")
    }

    fn hs(texts: &[&str]) -> Vec<HexCoord> {
        let mut v: Vec<HexCoord> = texts.iter().map(|t| h(t)).collect();
        v.sort();
        v
    }

    #[test]
    fn hexes_by_distance_are_those_within_nearest_first() {
        for layout in [HexLayout::EvenColumnsDown, HexLayout::OddColumnsDown] {
            let grid = HexGrid::new(12, 9, layout).unwrap();
            for centre in [h("A1"), h("F5"), h("L9"), h("B8")] {
                for r in [0, 1, 2, 5, 30] {
                    let near = grid.hexes_by_distance(centre, r);
                    let mut sorted = near.clone();
                    sorted.sort();
                    assert_eq!(sorted, grid.hexes_within(centre, r), "{centre:?} r {r}");
                    let d: Vec<u32> = near.iter().map(|x| grid.distance(centre, *x)).collect();
                    assert!(
                        d.windows(2).all(|w| w[0] <= w[1]),
                        "{centre:?} r {r}: {d:?}"
                    );
                }
            }
        }
    }

    fn grid(columns: u32, rows: u32) -> HexGrid {
        HexGrid::new(columns, rows, HexLayout::EvenColumnsDown).expect("test grid")
    }

    fn odd_grid(columns: u32, rows: u32) -> HexGrid {
        HexGrid::new(columns, rows, HexLayout::OddColumnsDown).expect("test grid")
    }

    fn sorted(mut v: Vec<HexCoord>) -> Vec<HexCoord> {
        v.sort();
        v
    }

    const CLEAR: TerrainId = 0;
    const JUNGLE: TerrainId = 1;

    #[test]
    fn step_walks_straight_then_turns_clockwise() {
        let g = grid(10, 10);
        // One step in each direction is the neighbour in that order (N, NE, SE, S, SW, NW).
        let around: Vec<HexCoord> = (0..6).filter_map(|d| g.step(h("E5"), d, 1, 0)).collect();
        assert_eq!(around, g.neighbours(h("E5")));
        assert_eq!(g.step(h("E5"), 0, 2, 0), Some(h("E3")));
        assert_eq!(g.step(h("E5"), 6, 2, 0), Some(h("E3")), "directions wrap");
        // Two north, then one north-east: distance 3 from the start, 1 from E3.
        let t = g.step(h("E5"), 0, 2, 1).unwrap();
        assert_eq!((g.distance(h("E5"), t), g.distance(h("E3"), t)), (3, 1));
        assert_eq!(g.step(h("E5"), 0, 0, 0), Some(h("E5")));
        assert_eq!(g.step(h("A1"), 0, 1, 0), None, "off the board");
    }

    #[test]
    fn parse_reads_printed_coordinates() {
        assert_eq!(h("S11").column(), 19);
        assert_eq!(h("S11").row(), 11);
        assert_eq!(h("A1"), HexCoord::new(1, 1).unwrap());
        assert_eq!(h("Z9").column(), 26);
        assert_eq!(h("AA3").column(), 27);
        assert_eq!(h("AZ3").column(), 52);
        assert_eq!(h("BA3").column(), 53);
        assert_eq!(h("ZZZ1").column(), HexCoord::MAX_COLUMN);
        assert_eq!(h("s11"), h("S11"));
        assert_eq!(h("A05"), h("A5"));
        assert_eq!("T10".parse::<HexCoord>(), Ok(h("T10")));
    }

    #[test]
    fn parse_refuses_bad_input_with_reasons() {
        assert_eq!(HexCoord::parse(""), Err(HexError::Empty));
        for bad in [
            "11", "S", "S-11", "S 11", " S11", "S11x", "1S", "É1", "S1.5",
        ] {
            assert!(
                matches!(HexCoord::parse(bad), Err(HexError::Malformed { .. })),
                "{bad:?}"
            );
        }
        assert_eq!(HexCoord::parse("A0"), Err(HexError::ZeroRow("A0".into())));
        assert_eq!(
            HexCoord::parse("A000"),
            Err(HexError::ZeroRow("A000".into()))
        );
        assert!(matches!(
            HexCoord::parse("AAAA1"),
            Err(HexError::TooLarge(_))
        ));
        assert!(matches!(
            HexCoord::parse("A100000"),
            Err(HexError::TooLarge(_))
        ));
        assert!(matches!(
            HexCoord::parse("A99999999999999999999999"),
            Err(HexError::TooLarge(_))
        ));
        let message = HexCoord::parse("S-11").unwrap_err().to_string();
        assert!(message.contains("e.g. S11"), "{message}");
    }

    #[test]
    fn new_checks_bounds() {
        assert!(HexCoord::new(0, 1).is_err());
        assert!(HexCoord::new(1, 0).is_err());
        assert!(HexCoord::new(HexCoord::MAX_COLUMN + 1, 1).is_err());
        assert!(HexCoord::new(1, HexCoord::MAX_ROW + 1).is_err());
        assert!(HexCoord::new(HexCoord::MAX_COLUMN, HexCoord::MAX_ROW).is_ok());
    }

    #[test]
    fn display_prints_as_the_book() {
        assert_eq!(h("S11").to_string(), "S11");
        assert_eq!(HexCoord::new(27, 4).unwrap().to_string(), "AA4");
        assert_eq!(HexCoord::new(702, 1).unwrap().to_string(), "ZZ1");
        assert_eq!(HexCoord::new(703, 1).unwrap().to_string(), "AAA1");
        assert_eq!(h("C7").column_letters(), "C");
    }

    #[test]
    fn coordinates_order_column_first() {
        assert!(h("A2") < h("B1"));
        assert!(h("A1") < h("A2"));
        assert!(h("Z5") < h("AA1"));
    }

    #[test]
    fn grid_sizes_are_checked() {
        assert!(HexGrid::new(0, 5, HexLayout::default()).is_err());
        assert!(HexGrid::new(5, 0, HexLayout::default()).is_err());
        assert!(HexGrid::new(2000, 2000, HexLayout::default()).is_err());
        assert!(HexGrid::new(1000, 1000, HexLayout::default()).is_ok());
        let g = grid(21, 11);
        assert_eq!((g.columns(), g.rows(), g.hex_count()), (21, 11, 231));
        assert_eq!(g.layout(), HexLayout::EvenColumnsDown);
        assert!(g.contains(h("U11")));
        assert!(!g.contains(h("V1")));
        assert!(!g.contains(h("A12")));
        let all: Vec<HexCoord> = grid(2, 2).hexes().collect();
        assert_eq!(all, hs(&["A1", "A2", "B1", "B2"]));
    }

    #[test]
    fn axial_conversion_by_layout() {
        let even = HexLayout::EvenColumnsDown;
        let odd = HexLayout::OddColumnsDown;
        assert_eq!(even.to_axial(h("A1")), Axial { q: 0, r: 0 });
        assert_eq!(even.to_axial(h("B1")), Axial { q: 1, r: 0 });
        assert_eq!(even.to_axial(h("C1")), Axial { q: 2, r: -1 });
        assert_eq!(odd.to_axial(h("B1")), Axial { q: 1, r: -1 });
        assert_eq!(odd.to_axial(h("C2")), Axial { q: 2, r: 0 });
        assert_eq!(even.from_axial(Axial { q: 2, r: -1 }), Some(h("C1")));
        assert_eq!(even.from_axial(Axial { q: -1, r: 0 }), None);
        assert_eq!(even.from_axial(Axial { q: 1, r: -1 }), None);
        assert_eq!(
            even.from_axial(Axial {
                q: i32::MAX,
                r: i32::MAX
            }),
            None
        );
        assert_eq!(
            even.from_axial(Axial {
                q: i32::MIN,
                r: i32::MIN
            }),
            None
        );
        let g = grid(5, 5);
        assert_eq!(g.to_cube(h("C1")), Cube { q: 2, r: -1, s: -1 });
        assert_eq!(g.from_cube(Cube { q: 2, r: -1, s: -1 }), Some(h("C1")));
        assert_eq!(g.from_axial(Axial { q: 0, r: 4 }), Some(h("A5")));
        assert_eq!(Cube { q: 3, r: 4, s: -7 }.to_axial(), Axial { q: 3, r: 4 });
        assert_eq!(Axial { q: 3, r: 4 }.to_cube(), Cube { q: 3, r: 4, s: -7 });
    }

    #[test]
    fn distance_hand_checked() {
        let g = grid(21, 11);
        // A1 -> B1 (SE, B is lower) -> C2 (SE again).
        assert_eq!(g.distance(h("A1"), h("C2")), 2);
        assert_eq!(g.distance(h("A1"), h("A1")), 0);
        assert_eq!(g.distance(h("A1"), h("A11")), 10);
        assert_eq!(g.distance(h("A1"), h("U1")), 20);
        assert_eq!(g.distance(h("A1"), h("U11")), 20);
        // A2 touches B1 when B is the lower column, not when A is.
        assert_eq!(g.distance(h("A2"), h("B1")), 1);
        assert_eq!(odd_grid(21, 11).distance(h("A2"), h("B1")), 2);
        assert_eq!(odd_grid(21, 11).distance(h("A1"), h("B2")), 1);
        // Off-board hexes have a distance too.
        assert_eq!(g.distance(h("A1"), h("A20")), 19);
        assert_eq!(Axial { q: 0, r: 0 }.distance(Axial { q: 3, r: -1 }), 3);
    }

    #[test]
    fn adjacency() {
        let g = grid(21, 11);
        assert!(g.adjacent(h("D4"), h("D5")));
        assert!(g.adjacent(h("D4"), h("E4")));
        assert!(g.adjacent(h("D4"), h("E5")));
        assert!(!g.adjacent(h("D4"), h("E3")));
        assert!(!g.adjacent(h("D4"), h("D4")));
        assert!(!g.adjacent(h("D4"), h("F4")));
    }

    #[test]
    fn neighbours_of_corners_and_middle() {
        let g = grid(21, 11);
        assert_eq!(sorted(g.neighbours(h("A1"))), hs(&["A2", "B1"]));
        assert_eq!(sorted(g.neighbours(h("U11"))), hs(&["T10", "T11", "U10"]));
        assert_eq!(sorted(g.neighbours(h("A11"))), hs(&["A10", "B10", "B11"]));
        assert_eq!(sorted(g.neighbours(h("B11"))), hs(&["A11", "B10", "C11"]));
        // B is a lower column: its neighbours in C are C4 and C5, as in A.
        assert_eq!(
            g.neighbours(h("B4")),
            vec![h("B3"), h("C4"), h("C5"), h("B5"), h("A5"), h("A4")]
        );
        // C is an upper column.
        assert_eq!(
            g.neighbours(h("C4")),
            vec![h("C3"), h("D3"), h("D4"), h("C5"), h("B4"), h("B3")]
        );
        let o = odd_grid(21, 11);
        assert_eq!(sorted(o.neighbours(h("A1"))), hs(&["A2", "B1", "B2"]));
        // Just off the board: only the on-board side is returned.
        assert_eq!(sorted(g.neighbours(h("V1"))), hs(&["U1", "U2"]));
        assert_eq!(g.neighbours(h("Z50")), vec![]);
    }

    #[test]
    fn hexes_within_radius() {
        let g = grid(21, 11);
        assert_eq!(g.hexes_within(h("D4"), 0), vec![h("D4")]);
        assert_eq!(g.hexes_within(h("D4"), 1).len(), 7);
        assert_eq!(g.hexes_within(h("H6"), 2).len(), 19);
        assert_eq!(g.hexes_within(h("A1"), 1), hs(&["A1", "A2", "B1"]));
        // Large radius: the whole board, by scanning.
        assert_eq!(g.hexes_within(h("K6"), 100).len(), 231);
        assert_eq!(g.hexes_within(h("K6"), u32::MAX).len(), 231);
        // Both methods agree where they overlap.
        let small = grid(5, 5);
        for r in 0..6 {
            let scan: Vec<HexCoord> = small
                .hexes()
                .filter(|&x| small.distance(h("C3"), x) <= r)
                .collect();
            assert_eq!(small.hexes_within(h("C3"), r), scan);
        }
        // Centre off the board: only on-board hexes.
        assert_eq!(g.hexes_within(h("V1"), 1), hs(&["U1", "U2"]));
    }

    #[test]
    fn route_straight_and_ties() {
        let g = grid(21, 11);
        assert_eq!(g.route(h("A1"), h("A1")), Ok(vec![h("A1")]));
        assert_eq!(
            g.route(h("A1"), h("A4")),
            Ok(vec![h("A1"), h("A2"), h("A3"), h("A4")])
        );
        // Along the top edge the line runs between B0 and B1: the southern side, B1.
        assert_eq!(
            g.route(h("A1"), h("C1")),
            Ok(vec![h("A1"), h("B1"), h("C1")])
        );
        // Mid-board tie: the southern hex C4 rather than C3.
        assert_eq!(
            g.route(h("B3"), h("D3")),
            Ok(vec![h("B3"), h("C4"), h("D3")])
        );
        // Same tie on the bottom edge of a 3-row board: the south side is off the board.
        assert_eq!(
            grid(5, 3).route(h("B3"), h("D3")),
            Ok(vec![h("B3"), h("C3"), h("D3")])
        );
        // A diagonal: A1 -> B1 -> C2 -> D2 -> E3.
        assert_eq!(
            g.route(h("A1"), h("E3")),
            Ok(vec![h("A1"), h("B1"), h("C2"), h("D2"), h("E3")])
        );
        assert!(matches!(
            g.route(h("A1"), h("A12")),
            Err(HexError::OffBoard { .. })
        ));
    }

    /// Every pair of hexes on a few small boards of both layouts: the straight route exists,
    /// stays on the board and has `distance + 1` adjacent hexes.
    #[test]
    fn route_exists_for_every_pair_on_small_boards() {
        for (columns, rows) in [(1, 1), (1, 6), (6, 1), (2, 2), (7, 5), (12, 9)] {
            for layout in [HexLayout::EvenColumnsDown, HexLayout::OddColumnsDown] {
                let g = HexGrid::new(columns, rows, layout).unwrap();
                for a in g.hexes() {
                    for b in g.hexes() {
                        let route = g.route(a, b).unwrap();
                        assert_eq!(route.len() as u32, g.distance(a, b) + 1, "{a} {b}");
                        assert_eq!((route[0], route[route.len() - 1]), (a, b));
                        assert!(route.windows(2).all(|w| g.adjacent(w[0], w[1])));
                        assert!(route.iter().all(|&x| g.contains(x)));
                    }
                }
            }
        }
    }

    #[test]
    fn jungle_on_route_counts_target_not_start() {
        let g = grid(21, 11);
        let terrain: HashMap<HexCoord, TerrainId> = [
            ("A1", JUNGLE),
            ("A3", JUNGLE),
            ("A5", JUNGLE),
            ("B1", JUNGLE),
        ]
        .into_iter()
        .map(|(t, j)| (h(t), j))
        .collect();
        assert_eq!(
            g.terrain_on_route(h("A1"), h("A5"), &terrain, CLEAR, JUNGLE),
            Ok(2)
        );
        assert_eq!(
            g.terrain_on_route(h("A5"), h("A1"), &terrain, CLEAR, JUNGLE),
            Ok(2)
        );
        assert_eq!(
            g.terrain_on_route(h("A1"), h("A5"), &terrain, CLEAR, CLEAR),
            Ok(2)
        );
        assert_eq!(
            g.terrain_on_route(h("A1"), h("A1"), &terrain, CLEAR, JUNGLE),
            Ok(0)
        );
        // Default terrain applies to hexes not in the map.
        assert_eq!(
            g.terrain_on_route(h("C1"), h("C5"), &terrain, JUNGLE, JUNGLE),
            Ok(4)
        );
        assert_eq!(terrain_at(&terrain, CLEAR, h("A3")), JUNGLE);
        assert_eq!(terrain_at(&terrain, CLEAR, h("A4")), CLEAR);
        assert_eq!(count_terrain(&[], &terrain, CLEAR, JUNGLE), 0);
        assert_eq!(count_terrain(&[h("A1")], &terrain, CLEAR, JUNGLE), 0);
        assert!(
            g.terrain_on_route(h("A1"), h("Z1"), &terrain, CLEAR, JUNGLE)
                .is_err()
        );
    }

    /// Hand-drawn boards: firer at C3 (odd columns down unless the layout says so), target
    /// at C7 straight down the column; shortest routes there are unique, so a unit on C5
    /// blocks. Between C3 and E5 (distance 3) there are several shortest routes.
    #[test]
    fn fewest_on_open_route_takes_any_shortest_route() {
        let g = grid(21, 11);
        let none = |_: HexCoord| false;
        let one = |_: HexCoord| 1;
        // Same or neighbouring hexes: nothing lies between.
        assert_eq!(
            g.fewest_on_open_route(h("C3"), h("C3"), |_| true, one),
            Ok(Some(0))
        );
        assert_eq!(
            g.fewest_on_open_route(h("C3"), h("C4"), |_| true, one),
            Ok(Some(0))
        );
        // A straight column has one shortest route: C4, C5, C6 between.
        assert_eq!(
            g.fewest_on_open_route(h("C3"), h("C7"), none, one),
            Ok(Some(3))
        );
        let c5: HashSet<HexCoord> = hs(&["C5"]).into_iter().collect();
        assert_eq!(
            g.fewest_on_open_route(h("C3"), h("C7"), |x| c5.contains(&x), one),
            Ok(None)
        );
        // Every hex of every shortest route from C3 to E5, whatever the layout.
        let n = g.distance(h("C3"), h("E5"));
        let between: Vec<HexCoord> = g
            .hexes()
            .filter(|&x| {
                x != h("C3") && x != h("E5") && g.distance(h("C3"), x) + g.distance(x, h("E5")) == n
            })
            .collect();
        assert!(
            between.len() > (n - 1) as usize,
            "{between:?}: more than one route"
        );
        // Block the straight line's hexes one at a time: another route stays open.
        let line = g.route(h("C3"), h("E5")).unwrap();
        for &x in &line[1..line.len() - 1] {
            let open = g.fewest_on_open_route(h("C3"), h("E5"), |y| y == x, one);
            assert_eq!(open, Ok(Some(n - 1)), "blocked {x}");
            assert!(
                g.route_blocked(h("C3"), h("E5"), |y| y == x).unwrap(),
                "the straight line alone is refused"
            );
        }
        // Block every hex between: no route.
        assert_eq!(
            g.fewest_on_open_route(h("C3"), h("E5"), |y| between.contains(&y), one),
            Ok(None)
        );
        // Weights: jungle on the straight line only; a route beside it crosses fewer.
        let jungle: HashSet<HexCoord> = line[1..line.len() - 1].iter().copied().collect();
        let fewest = g
            .fewest_on_open_route(h("C3"), h("E5"), none, |y| u32::from(jungle.contains(&y)))
            .unwrap()
            .unwrap();
        assert!(fewest < n - 1, "{fewest} jungle hexes");
        // Jungle on every hex between: every route crosses n - 1 of them.
        assert_eq!(
            g.fewest_on_open_route(h("C3"), h("E5"), none, |y| u32::from(between.contains(&y))),
            Ok(Some(n - 1))
        );
        assert!(
            g.fewest_on_open_route(h("C3"), h("Z99"), none, one)
                .is_err()
        );
    }

    /// Brute force on small boards: the DP agrees with enumerating every shortest route.
    #[test]
    fn fewest_on_open_route_matches_enumeration() {
        let g = grid(6, 6);
        fn walk(
            g: &HexGrid,
            at: HexCoord,
            b: HexCoord,
            blocked: &dyn Fn(HexCoord) -> bool,
            weight: &dyn Fn(HexCoord) -> u32,
            acc: u32,
            best: &mut Option<u32>,
        ) {
            if g.adjacent(at, b) || at == b {
                *best = Some(best.map_or(acc, |x| x.min(acc)));
                return;
            }
            let left = g.distance(at, b);
            for nb in g.neighbours(at) {
                if g.distance(nb, b) + 1 == left && !blocked(nb) {
                    walk(g, nb, b, blocked, weight, acc + weight(nb), best);
                }
            }
        }
        let hexes: Vec<HexCoord> = g.hexes().collect();
        // A fixed pattern of units and weights; every ordered pair of hexes.
        let blocked = |x: HexCoord| (x.column() * 7 + x.row() * 3).is_multiple_of(5);
        let weight = |x: HexCoord| (x.column() + 2 * x.row()) % 3;
        for &a in &hexes {
            for &b in &hexes {
                let mut best = None;
                walk(&g, a, b, &blocked, &weight, 0, &mut best);
                assert_eq!(
                    g.fewest_on_open_route(a, b, blocked, weight),
                    Ok(best),
                    "{a} -> {b}"
                );
            }
        }
    }

    #[test]
    fn route_blocked_ignores_the_ends() {
        let g = grid(21, 11);
        let units: HashSet<HexCoord> = hs(&["A1", "A5"]).into_iter().collect();
        assert_eq!(
            g.route_blocked(h("A1"), h("A5"), |x| units.contains(&x)),
            Ok(false)
        );
        let units: HashSet<HexCoord> = hs(&["A3"]).into_iter().collect();
        assert_eq!(
            g.route_blocked(h("A1"), h("A5"), |x| units.contains(&x)),
            Ok(true)
        );
        assert_eq!(g.route_blocked(h("A1"), h("A2"), |_| true), Ok(false));
        assert_eq!(g.route_blocked(h("A1"), h("A1"), |_| true), Ok(false));
        assert!(g.route_blocked(h("A1"), h("A99"), |_| false).is_err());
    }

    /// A 5x5 board with a stream at A3 (entry cost 2) and everything else cost 1.
    fn stream_cost(x: HexCoord) -> Option<u32> {
        Some(if x == h("A3") { 2 } else { 1 })
    }

    #[test]
    fn shortest_path_prefers_fewer_hexes_at_equal_cost() {
        let g = grid(5, 5);
        // Straight through the stream: 1 + 2 + 1 + 1 = 5 in 4 steps; around it also costs 5
        // but takes 5 steps.
        let path = g
            .shortest_path(h("A1"), h("A5"), stream_cost, None)
            .unwrap()
            .unwrap();
        assert_eq!(path.cost, 5);
        assert_eq!(
            path.hexes,
            vec![h("A1"), h("A2"), h("A3"), h("A4"), h("A5")]
        );
        let same = g
            .shortest_path(h("A1"), h("A1"), stream_cost, None)
            .unwrap()
            .unwrap();
        assert_eq!(
            same,
            Path {
                hexes: vec![h("A1")],
                cost: 0
            }
        );
    }

    #[test]
    fn shortest_path_goes_around_wire_within_budget() {
        let g = grid(5, 5);
        let wire = |x: HexCoord| if x == h("A3") { None } else { Some(1) };
        let path = g
            .shortest_path(h("A1"), h("A5"), wire, None)
            .unwrap()
            .unwrap();
        assert_eq!(path.cost, 5);
        assert_eq!(path.hexes.len(), 6);
        assert!(!path.hexes.contains(&h("A3")));
        for pair in path.hexes.windows(2) {
            assert!(g.adjacent(pair[0], pair[1]));
        }
        assert_eq!(g.shortest_path(h("A1"), h("A5"), wire, Some(4)), Ok(None));
        assert!(
            g.shortest_path(h("A1"), h("A5"), wire, Some(5))
                .unwrap()
                .is_some()
        );
        // A blocked target cannot be reached; a walled-in start cannot leave.
        assert_eq!(g.shortest_path(h("A1"), h("A3"), wire, None), Ok(None));
        let walled = |x: HexCoord| {
            if x == h("A2") || x == h("B1") {
                None
            } else {
                Some(1)
            }
        };
        assert_eq!(g.shortest_path(h("A1"), h("E5"), walled, None), Ok(None));
        assert!(g.shortest_path(h("A1"), h("F1"), wire, None).is_err());
        assert!(g.shortest_path(h("F1"), h("A1"), wire, None).is_err());
    }

    #[test]
    fn reachable_within_movement_factor() {
        let g = grid(5, 5);
        let reach = g.reachable(h("A1"), stream_cost, 2).unwrap();
        assert_eq!(reach.get(&h("A1")), Some(&0));
        assert_eq!(reach.get(&h("A2")), Some(&1));
        assert_eq!(reach.get(&h("C2")), Some(&2));
        // The stream costs 2 after 1 to reach A2: 3 > 2. B3 is 3 steps away.
        assert_eq!(reach.get(&h("A3")), None);
        let mut keys: Vec<HexCoord> = reach.keys().copied().collect();
        keys.sort();
        assert_eq!(keys, hs(&["A1", "A2", "B1", "B2", "C1", "C2"]));
        assert_eq!(g.reachable(h("A1"), |_| Some(1), 2).unwrap().len(), 7);
        assert_eq!(g.reachable(h("A1"), stream_cost, 0).unwrap().len(), 1);
        assert!(g.reachable(h("F1"), stream_cost, 3).is_err());
    }

    #[test]
    fn round_div_rounds_to_nearest() {
        assert_eq!(round_div(14, 10), 1);
        assert_eq!(round_div(16, 10), 2);
        assert_eq!(round_div(-14, 10), -1);
        assert_eq!(round_div(-16, 10), -2);
        assert_eq!(round_div(15, 10), 2);
    }

    fn any_grid() -> impl Strategy<Value = HexGrid> {
        (1u32..=24, 1u32..=24, any::<bool>()).prop_map(|(c, r, even)| {
            let layout = if even {
                HexLayout::EvenColumnsDown
            } else {
                HexLayout::OddColumnsDown
            };
            HexGrid::new(c, r, layout).expect("small grid")
        })
    }

    /// A grid and `n` hexes on it.
    fn grid_and_hexes(n: usize) -> impl Strategy<Value = (HexGrid, Vec<HexCoord>)> {
        any_grid().prop_flat_map(move |g| {
            let hex = (1..=g.columns(), 1..=g.rows())
                .prop_map(|(c, r)| HexCoord::new(c, r).expect("on board"));
            (Just(g), proptest::collection::vec(hex, n))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn parse_inverts_display(c in 1..=HexCoord::MAX_COLUMN, r in 1..=HexCoord::MAX_ROW) {
            let hex = HexCoord::new(c, r).unwrap();
            prop_assert_eq!(HexCoord::parse(&hex.to_string()), Ok(hex));
        }

        #[test]
        fn blocking_by_listed_hexes_agrees_with_the_drawn_route((g, v) in grid_and_hexes(6)) {
            let (a, b, occupied) = (v[0], v[1], &v[2..]);
            prop_assert_eq!(
                g.route_blocked_by(a, b, occupied),
                g.route_blocked(a, b, |h| occupied.contains(&h))
            );
        }

        #[test]
        fn parse_never_panics(text in "\\PC{0,12}") {
            let _ = HexCoord::parse(&text);
        }

        #[test]
        fn axial_round_trips((g, v) in grid_and_hexes(1)) {
            prop_assert_eq!(g.from_axial(g.to_axial(v[0])), Some(v[0]));
            let c = g.to_cube(v[0]);
            prop_assert_eq!(c.q + c.r + c.s, 0);
        }

        #[test]
        fn distance_is_a_metric((g, v) in grid_and_hexes(3)) {
            let (a, b, c) = (v[0], v[1], v[2]);
            prop_assert_eq!(g.distance(a, b), g.distance(b, a));
            prop_assert_eq!(g.distance(a, b) == 0, a == b);
            prop_assert!(g.distance(a, c) <= g.distance(a, b) + g.distance(b, c));
        }

        #[test]
        fn neighbours_are_at_distance_one((g, v) in grid_and_hexes(1)) {
            let n = g.neighbours(v[0]);
            prop_assert!(n.len() <= 6);
            for x in &n {
                prop_assert!(g.contains(*x));
                prop_assert_eq!(g.distance(v[0], *x), 1);
            }
            // And every on-board hex at distance 1 is listed.
            let ring: Vec<HexCoord> = g.hexes().filter(|&x| g.distance(v[0], x) == 1).collect();
            prop_assert_eq!(sorted(n), ring);
        }

        #[test]
        fn route_is_a_shortest_on_board_chain((g, v) in grid_and_hexes(2)) {
            let (a, b) = (v[0], v[1]);
            let route = g.route(a, b).unwrap();
            prop_assert_eq!(route.len() as u32, g.distance(a, b) + 1);
            prop_assert_eq!(route.first(), Some(&a));
            prop_assert_eq!(route.last(), Some(&b));
            for pair in route.windows(2) {
                prop_assert!(g.adjacent(pair[0], pair[1]));
            }
            for x in &route {
                prop_assert!(g.contains(*x));
            }
        }

        #[test]
        fn unit_cost_path_matches_distance((g, v) in grid_and_hexes(2)) {
            let path = g.shortest_path(v[0], v[1], |_| Some(1), None).unwrap().unwrap();
            prop_assert_eq!(path.cost, u64::from(g.distance(v[0], v[1])));
            prop_assert_eq!(path.hexes.len() as u64, path.cost + 1);
        }

        #[test]
        fn shortest_path_is_valid_and_no_dearer_than_the_straight_route(
            (g, v) in grid_and_hexes(2),
            seed in any::<u64>(),
        ) {
            // Entry costs 1..=3 from a hash of the hex; about one hex in five blocked (never
            // the target, so the straight route is a fallback when it is clear).
            let cost = |x: HexCoord| -> Option<u32> {
                let k = seed ^ (u64::from(x.column()) * 0x9E37_79B9) ^ (u64::from(x.row()) << 32);
                let k = k.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
                if x != v[1] && k % 5 == 0 { None } else { Some((k % 3) as u32 + 1) }
            };
            let found = g.shortest_path(v[0], v[1], cost, None).unwrap();
            let route = g.route(v[0], v[1]).unwrap();
            let straight: Option<u64> = route[1..].iter().map(|&x| cost(x).map(u64::from)).sum();
            if let Some(straight) = straight {
                prop_assert!(found.as_ref().is_some_and(|p| p.cost <= straight));
            }
            if let Some(path) = found {
                prop_assert_eq!(path.hexes.first(), Some(&v[0]));
                prop_assert_eq!(path.hexes.last(), Some(&v[1]));
                for pair in path.hexes.windows(2) {
                    prop_assert!(g.adjacent(pair[0], pair[1]));
                }
                let total: Option<u64> = path.hexes[1..].iter().map(|&x| cost(x).map(u64::from)).sum();
                prop_assert_eq!(total, Some(path.cost));
                // The same cost as the budgeted search finds.
                let reach = g.reachable(v[0], cost, path.cost).unwrap();
                prop_assert_eq!(reach.get(&v[1]), Some(&path.cost));
            }
        }

        #[test]
        fn hexes_within_matches_distance((g, v) in grid_and_hexes(1), r in 0u32..8) {
            let want: Vec<HexCoord> = g.hexes().filter(|&x| g.distance(v[0], x) <= r).collect();
            prop_assert_eq!(g.hexes_within(v[0], r), want);
        }
    }
}
