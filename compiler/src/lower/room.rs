//! Whether the engine can build each board and whether what a scenario sets up fits on it: a
//! hex grid or a table within the engine's limits, sectors and zones that tile the table, table
//! areas with a set-up point for every piece deployed in them, and neutral pieces placed on the
//! board played. Each was once refused only by `run` (`HexGrid::new`, `SectorGrid::new`, the
//! set-up points of `engine/options.rs`, "no room left to deploy", "off the board").

use sandtable_grammar::ast::{self, ExprKind, Span};

use super::Lowerer;
use super::scenario::{Board, Shape, children, flat, hex_label, int_of, length_of, name_of, prop};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::scenario::{
    DEFAULT_BASE, DEPLOY_GRID, MAX_DEPLOY_POINTS, MAX_HEX_COLUMN, MAX_HEX_ROW, MAX_HEXES,
    MAX_SECTORS, MAX_TABLE, MAX_ZONES_PER_SIDE, deploy_points,
};
use crate::source::FileId;

/// A table area's outline as written, in tenths of a millimetre.
enum Outline {
    Rect { x0: i64, y0: i64, x1: i64, y1: i64 },
    Circle { x: i64, y: i64, radius: i64 },
}

/// A length as the table reads it (a bare number is tenths of a millimetre).
fn length(e: &ast::Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Length(n) | ExprKind::Int(n) => Some(*n),
        ExprKind::Unary {
            op: ast::UnOp::Neg,
            operand,
        } => length(operand).and_then(i64::checked_neg),
        _ => None,
    }
}

/// A place on a table: `[x, y]`, two lengths.
fn point(e: &ast::Expr) -> Option<(i64, i64)> {
    match &e.kind {
        ExprKind::List(xs) if xs.len() == 2 => Some((length(&xs[0])?, length(&xs[1])?)),
        _ => None,
    }
}

fn outline(c: &ast::Config) -> Option<Outline> {
    let lengths = |key: &str, n: usize| -> Option<Vec<i64>> {
        let v: Vec<i64> = flat(prop(c, key)?.1)
            .into_iter()
            .map(length)
            .collect::<Option<_>>()?;
        (v.len() == n).then_some(v)
    };
    if let Some(v) = lengths("rect", 4) {
        return Some(Outline::Rect {
            x0: v[0].min(v[2]),
            y0: v[1].min(v[3]),
            x1: v[0].max(v[2]),
            y1: v[1].max(v[3]),
        });
    }
    let v = lengths("circle", 3)?;
    Some(Outline::Circle {
        x: v[0],
        y: v[1],
        radius: v[2],
    })
}

/// How many of the engine's set-up points (a grid of [`DEPLOY_GRID`], the first half a spacing
/// in from the edge, up to the far edge) lie in `o` on a `width` by `depth` table and not within
/// `base` of a neutral piece (`taken`): the most pieces the engine can set up there.
fn points_in(o: &Outline, width: i64, depth: i64, base: i64, taken: &[(i64, i64)]) -> i64 {
    let (x0, y0, x1, y1) = match *o {
        Outline::Rect { x0, y0, x1, y1 } => (x0, y0, x1, y1),
        Outline::Circle { x, y, radius } => (x - radius, y - radius, x + radius, y + radius),
    };
    let contains = |px: i64, py: i64| match *o {
        Outline::Rect { .. } => true,
        Outline::Circle { x, y, radius } => {
            let (dx, dy) = (i128::from(px - x), i128::from(py - y));
            dx * dx + dy * dy <= i128::from(radius) * i128::from(radius)
        }
    };
    let free = |px: i64, py: i64| {
        taken.iter().all(|&(tx, ty)| {
            let (dx, dy) = (i128::from(px - tx), i128::from(py - ty));
            dx * dx + dy * dy >= i128::from(base) * i128::from(base)
        })
    };
    // The grid's points from `lo` to `hi` along one axis (closed), within the table's `edge`.
    let along = |lo: i64, hi: i64, edge: i64| {
        let first = DEPLOY_GRID / 2;
        let from = if lo <= first {
            first
        } else {
            first + (lo - first + DEPLOY_GRID - 1) / DEPLOY_GRID * DEPLOY_GRID
        };
        (from..=hi.min(edge)).step_by(DEPLOY_GRID as usize)
    };
    // Pieces set up in the area keep a base apart too: with a base wider than the grid, the
    // points are taken in the engine's order (row by row), each one a base from those before.
    let apart = base > DEPLOY_GRID;
    let reach = (base + DEPLOY_GRID - 1) / DEPLOY_GRID;
    let mut placed: std::collections::HashSet<(i64, i64)> = std::collections::HashSet::new();
    let clear = |placed: &std::collections::HashSet<(i64, i64)>, px: i64, py: i64| {
        let (cx, cy) = (px / DEPLOY_GRID, py / DEPLOY_GRID);
        (-reach..=reach).all(|dy| {
            (-reach..=reach).all(|dx| {
                !placed.contains(&(cx + dx, cy + dy)) || {
                    let (ex, ey) = (i128::from(dx * DEPLOY_GRID), i128::from(dy * DEPLOY_GRID));
                    ex * ex + ey * ey >= i128::from(base) * i128::from(base)
                }
            })
        })
    };
    let mut n = 0;
    for py in along(y0, y1, depth) {
        for px in along(x0, x1, width) {
            if contains(px, py) && free(px, py) && (!apart || clear(&placed, px, py)) {
                n += 1;
                if apart {
                    placed.insert((px / DEPLOY_GRID, py / DEPLOY_GRID));
                }
            }
        }
    }
    n
}

/// How many pieces `2 * rifle_team, mg_team` (or `bunker = 3`) lists, when every count is
/// written out; `None` for a `?`.
fn pieces(values: &[ast::PropValue]) -> Option<i64> {
    let mut n = 0i64;
    for v in values {
        if v.name.is_some() {
            n = n.checked_add(int_of(&v.value)?)?;
            continue;
        }
        for e in flat(std::slice::from_ref(v)) {
            n = n.checked_add(match &e.kind {
                ExprKind::Name(_) => 1,
                ExprKind::Binary {
                    op: ast::BinOp::Mul,
                    lhs,
                    rhs,
                } => int_of(lhs).or_else(|| int_of(rhs))?,
                _ => return None,
            })?;
        }
    }
    Some(n)
}

impl Lowerer<'_> {
    fn board_size(&mut self, file: FileId, span: Span, message: String, help: String) {
        self.diags.push(
            Diagnostic::new(Code::ScenarioBoardSize, file, span, message)
                .label("beyond what the engine builds")
                .help(help),
        );
    }

    /// A hex grid within `HexGrid`'s limits; a table with at most [`MAX_DEPLOY_POINTS`] set-up
    /// points; sectors and zones that tile a `sectors` table exactly.
    pub(super) fn check_board_size(&mut self, b: &Board) {
        let (file, c) = (b.file, b.config);
        let head = c.name.as_ref().map_or(c.keyword.span, |n| n.span);
        match b.shape {
            Shape::Hex { columns, rows } => {
                let hexes = u64::from(columns) * u64::from(rows);
                if !(1..=MAX_HEX_COLUMN).contains(&columns)
                    || !(1..=MAX_HEX_ROW).contains(&rows)
                    || hexes > u64::from(MAX_HEXES)
                {
                    self.board_size(
                        file,
                        head,
                        format!("a hex board of {columns} columns by {rows} rows ({hexes} hexes)"),
                        format!(
                            "the engine builds boards of 1 to {MAX_HEX_COLUMN} columns (A to ZZZ), 1 to {MAX_HEX_ROW} rows and at most {MAX_HEXES} hexes"
                        ),
                    );
                }
            }
            Shape::Table { width, depth } => {
                // Sizes out of range are reported with the board's values.
                if !(1..=MAX_TABLE).contains(&width) || !(1..=MAX_TABLE).contains(&depth) {
                    return;
                }
                let points = deploy_points(width, depth);
                if points > MAX_DEPLOY_POINTS {
                    self.board_size(
                        file,
                        head,
                        format!("this table offers {points} set-up points on the engine's 2-inch grid"),
                        format!("the engine offers at most {MAX_DEPLOY_POINTS} set-up points: a table of at most 20 m square"),
                    );
                }
                if c.scheme.as_ref().is_some_and(|s| s.name == "sectors") {
                    self.check_sectors(file, c, width, depth);
                }
            }
            Shape::Unknown => {}
        }
    }

    fn check_sectors(&mut self, file: FileId, c: &ast::Config, width: i64, depth: i64) {
        let Some(sector_value) = prop(c, "sector").and_then(|(_, v)| v.first()) else {
            return;
        };
        let Some(sector) = length_of(&sector_value.value) else {
            return;
        };
        let zones = match prop(c, "zones").and_then(|(_, v)| v.first()) {
            None => 1,
            // Fewer than 1 is reported with the board's values.
            Some(v) => match int_of(&v.value) {
                Some(n) if n >= 1 => n,
                _ => return,
            },
        };
        let show = |n: i64| crate::ir::show_length(n, self.program.length_unit.as_deref());
        let problem = if sector < 1 || width % sector != 0 || depth % sector != 0 {
            Some(format!(
                "sectors of {} do not tile a {} by {} table",
                show(sector),
                show(width),
                show(depth)
            ))
        } else if (width / sector) * (depth / sector) > i64::from(MAX_SECTORS) {
            Some(format!(
                "{} sectors, and the engine numbers at most {MAX_SECTORS}",
                (width / sector) * (depth / sector)
            ))
        } else if zones > i64::from(MAX_ZONES_PER_SIDE) || sector % zones != 0 {
            Some(format!(
                "a sector of {} does not split into {zones} by {zones} whole zones (at most {MAX_ZONES_PER_SIDE} a side)",
                show(sector)
            ))
        } else {
            None
        };
        if let Some(message) = problem {
            self.board_size(
                file,
                sector_value.value.span,
                message,
                "the width and depth must be whole multiples of the sector side, and the sector side (in tenths of a millimetre) a multiple of `zones:`".into(),
            );
        }
    }

    /// Every table area a scenario deploys in has a set-up point for each piece set up there.
    pub(super) fn check_table_room(&mut self, file: FileId, s: &ast::Config, b: &Board) {
        let Shape::Table { width, depth } = b.shape else {
            return;
        };
        if deploy_points(width, depth) > MAX_DEPLOY_POINTS {
            return;
        }
        // Neutral pieces stand before any force sets up: no one sets up within a base of them.
        let base = prop(b.config, "base")
            .and_then(|(_, v)| v.first())
            .and_then(|v| length(&v.value))
            .unwrap_or(DEFAULT_BASE);
        let taken: Vec<(i64, i64)> = children(s)
            .filter(|n| n.keyword.name == "neutral")
            .filter_map(|n| prop(n, "at"))
            .flat_map(|(_, v)| v.iter().filter_map(|v| point(&v.value)))
            .collect();
        // Per area: the pieces set up in it so far, and the last `deploy:` that adds to it.
        let mut used: Vec<(String, i64, Span)> = Vec::new();
        for f in children(s).filter(|f| f.keyword.name == "force") {
            let area_of = |key: &str| {
                prop(f, key)
                    .and_then(|(_, v)| v.first())
                    .and_then(|v| name_of(&v.value).map(|n| (n.to_string(), v.value.span)))
            };
            let Some(deploy) = area_of("deploy") else {
                continue;
            };
            let markers_at = area_of("markers_deploy").unwrap_or(deploy.clone());
            for ((area, span), key) in [(deploy, "units"), (markers_at, "markers")] {
                let Some(n) = prop(f, key).map_or(Some(0), |(_, v)| pieces(v)) else {
                    continue;
                };
                match used.iter_mut().find(|(a, _, _)| *a == area) {
                    Some(u) => {
                        u.1 += n;
                        if n > 0 {
                            u.2 = span;
                        }
                    }
                    None => used.push((area, n, span)),
                }
            }
        }
        for (area, n, span) in used {
            let Some(o) = children(b.config)
                .filter(|a| a.keyword.name == "area")
                .find(|a| a.name.as_ref().is_some_and(|x| x.name == area))
                .and_then(outline)
            else {
                continue;
            };
            let points = points_in(&o, width, depth, base, &taken);
            if n > points {
                self.diags.push(
                    Diagnostic::new(
                        Code::ScenarioAreaTooSmall,
                        file,
                        span,
                        format!(
                            "{n} pieces set up in area `{area}`, which has {points} free set-up points"
                        ),
                    )
                    .label("too small")
                    .help("the engine sets pieces up one per point of a 2-inch grid, a base apart and none within a base of a neutral piece: widen the area, or deploy some pieces elsewhere"),
                );
            }
        }
    }

    /// A neutral piece's place is on the board played: a hex label on a hex board, a point
    /// `[x, y]` on the table.
    pub(super) fn check_neutral_place(&mut self, file: FileId, b: &Board, e: &ast::Expr) {
        let point = point(e);
        let label = name_of(e)
            .filter(|n| !self.globals.contains_key(*n))
            .and_then(|n| hex_label(n).map(|_| n));
        let message = match (&b.shape, point, label) {
            (Shape::Table { width, depth }, Some((x, y)), _)
                if !(0..=*width).contains(&x) || !(0..=*depth).contains(&y) =>
            {
                let show = |n: i64| crate::ir::show_length(n, self.program.length_unit.as_deref());
                format!("the point ({}, {}) is off the table", show(x), show(y))
            }
            (Shape::Table { .. }, None, Some(n)) => {
                format!(
                    "hex {n} is no place on a table: a neutral piece there stands at a point `[x, y]`"
                )
            }
            (Shape::Hex { .. }, Some(_), _) => {
                "a point is no place on a hex board: a neutral piece there stands in a hex".into()
            }
            _ => return,
        };
        self.off_board(file, b, e.span, message);
    }
}

#[cfg(test)]
mod tests {
    use super::{DEPLOY_GRID, Outline, points_in};

    #[test]
    fn set_up_points_are_counted_as_the_engine_offers_them() {
        let inch = DEPLOY_GRID / 2;
        // Points at 1, 3 inches: a 4-inch square holds 2 by 2.
        let square = Outline::Rect {
            x0: 0,
            y0: 0,
            x1: 4 * inch,
            y1: 4 * inch,
        };
        assert_eq!(points_in(&square, 48 * inch, 36 * inch, inch, &[]), 4);
        // Clipped by the table's far edge, and closed at both ends.
        let edge = Outline::Rect {
            x0: 3 * inch,
            y0: inch,
            x1: 60 * inch,
            y1: inch,
        };
        assert_eq!(points_in(&edge, 48 * inch, 36 * inch, inch, &[]), 23);
        let between = Outline::Rect {
            x0: 3 * inch + 1,
            y0: 0,
            x1: 5 * inch - 1,
            y1: 36 * inch,
        };
        assert_eq!(points_in(&between, 48 * inch, 36 * inch, inch, &[]), 0);
        let circle = Outline::Circle {
            x: 5 * inch,
            y: 5 * inch,
            radius: 2 * inch,
        };
        // (5,3), (3,5), (5,5), (7,5), (5,7).
        assert_eq!(points_in(&circle, 48 * inch, 36 * inch, inch, &[]), 5);
        // A neutral piece at (1, 1) takes that point; one at (2, 2) is a base from none.
        assert_eq!(
            points_in(&square, 48 * inch, 36 * inch, inch, &[(inch, inch)]),
            3
        );
        assert_eq!(
            points_in(&square, 48 * inch, 36 * inch, inch, &[(2 * inch, 2 * inch)]),
            4
        );
        // A 4-inch base in a strip one point wide: every other point, 1 to 35 inches.
        let strip = Outline::Rect {
            x0: 0,
            y0: 0,
            x1: 2 * inch,
            y1: 36 * inch,
        };
        assert_eq!(points_in(&strip, 48 * inch, 36 * inch, 4 * inch, &[]), 9);
        // A 2-inch base is the grid's spacing: every point.
        assert_eq!(points_in(&strip, 48 * inch, 36 * inch, 2 * inch, &[]), 18);
        // A base of 3 inches around (2, 2) reaches all four.
        assert_eq!(
            points_in(
                &square,
                48 * inch,
                36 * inch,
                3 * inch,
                &[(2 * inch, 2 * inch)]
            ),
            0
        );
    }
}
