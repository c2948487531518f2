//! A force's set-up on a hex board, checked as the engine will play it: `max_per_hex:` a
//! number of units, `max_per_hex:` and `exit:` only on a hex board, exits on the board, and
//! deployment rows and columns with a hex for every unit, counting the pieces that stand
//! alone (`blocks_movement: true`), the cap per hex, and the hexes of an area an earlier
//! force may fill (set-up refuses a hex holding an enemy unit). Each was once refused only by
//! `run` ("no room left to deploy …") or read silently wrong (`max_per_hex: -1`).

use sandtable_grammar::ast::{self, ExprKind, Span};

use super::scenario::{Board, Shape, flat, int_of, name_of, prop};
use super::{Lowerer, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::Value;
use crate::source::FileId;

/// One force's hexes as `check_force` read them, for the room check across forces.
pub(super) struct HexDeploy {
    pub side: String,
    /// Inclusive column and row ranges, already on the board.
    pub columns: (u32, u32),
    pub rows: (u32, u32),
    /// Units, when every count is written out.
    pub units: Option<i64>,
    /// Units whose kind stands alone in a hex (`blocks_movement: true`).
    pub alone: i64,
    pub max_per_hex: Option<i64>,
    pub span: Span,
}

impl HexDeploy {
    fn hexes(&self) -> i64 {
        i64::from(self.columns.1 - self.columns.0 + 1) * i64::from(self.rows.1 - self.rows.0 + 1)
    }

    /// Hexes this area shares with `other`'s.
    fn shared(&self, other: &HexDeploy) -> i64 {
        let span = |a: (u32, u32), b: (u32, u32)| {
            i64::from(a.1.min(b.1)).saturating_sub(i64::from(a.0.max(b.0)) - 1)
        };
        span(self.columns, other.columns).max(0) * span(self.rows, other.rows).max(0)
    }

    /// The most units `hexes` free hexes take: each unit that stands alone takes a hex of its
    /// own, the others share the rest at most `max_per_hex` a hex (any number without one).
    fn room(&self, hexes: i64) -> Option<i64> {
        let units = self.units?;
        if self.alone > hexes {
            return Some(hexes);
        }
        let rest = hexes - self.alone;
        Some(match self.max_per_hex {
            Some(m) => self.alone + rest * m,
            None if rest > 0 => units,
            None => self.alone,
        })
    }
}

impl Lowerer<'_> {
    /// `max_per_hex:` is a whole number of units, 1 or more (or `?`); `max_per_hex:` and `exit:`
    /// are read on a hex board only, and exits lie on it.
    pub(super) fn check_force_hex_values(
        &mut self,
        file: FileId,
        f: &ast::Config,
        board: Option<&Board>,
    ) {
        if let Some((_, values)) = prop(f, "max_per_hex")
            && let Some(v) = values.first()
            && !matches!(v.value.kind, ExprKind::Unknown(_))
            && int_of(&v.value).is_none_or(|n| n < 1)
        {
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioBadValue,
                    file,
                    v.value.span,
                    "`max_per_hex:` is a number of units, 1 or more",
                )
                .label("not 1 or more")
                .help("give the most units of the force one hex holds at set-up, or leave it out for no limit"),
            );
        }
        let Some(b) = board else { return };
        match b.shape {
            Shape::Table { .. } => {
                for key in ["max_per_hex", "exit"] {
                    let Some((k, _)) = prop(f, key) else { continue };
                    self.diags.push(
                        Diagnostic::new(
                            Code::ScenarioWrongScheme,
                            file,
                            k.span,
                            format!("`{key}:` does not belong to a force on a table"),
                        )
                        .label("read only on a hex board")
                        .help("the engine would ignore it here: remove it (on a table pieces keep a base apart, and leave by the rules' own actions)"),
                    );
                }
            }
            Shape::Hex { .. } => {
                if let Some((_, values)) = prop(f, "exit") {
                    for e in flat(values) {
                        self.check_exit(file, b, e);
                    }
                }
            }
            Shape::Unknown => {}
        }
    }

    fn check_exit(&mut self, file: FileId, b: &Board, e: &ast::Expr) {
        if matches!(e.kind, ExprKind::Unknown(_)) {
            return;
        }
        let label = name_of(e).filter(|n| super::scenario::hex_label(n).is_some());
        match label {
            Some(_) => self.check_label(file, b, e),
            None => self.diags.push(
                Diagnostic::new(
                    Code::ScenarioBadValue,
                    file,
                    e.span,
                    "`exit:` lists hex labels",
                )
                .label("not a hex label")
                .help("name the hexes pieces leave the board from: `exit: S11, T10`"),
            ),
        }
    }

    /// Units of a force's `units:` whose piece has `blocks_movement: true`: no unit of its side
    /// may share its hex, at set-up as in movement.
    pub(super) fn units_alone(&self, f: &ast::Config) -> i64 {
        let Some((_, values)) = prop(f, "units") else {
            return 0;
        };
        let mut n = 0i64;
        for e in flat(values) {
            let (count, name) = match &e.kind {
                ExprKind::Binary {
                    op: ast::BinOp::Mul,
                    lhs,
                    rhs,
                } => match (int_of(lhs), int_of(rhs)) {
                    (Some(c), _) => (c, &**rhs),
                    (_, Some(c)) => (c, &**lhs),
                    _ => continue,
                },
                _ => (1, e),
            };
            let Some(Sym::Entity(id)) = name_of(name)
                .and_then(|n| self.globals.get(n))
                .map(|d| d.sym)
            else {
                continue;
            };
            if self.program.entities[id as usize].field("blocks_movement")
                == Some(&Value::Bool(true))
            {
                n = n.saturating_add(count);
            }
        }
        n
    }

    /// Every force finds a hex for each of its units: alone, and after the forces before it
    /// have set up in the hexes its area shares with theirs (a hex holding an enemy unit is
    /// refused, and they may spread over every shared hex).
    pub(super) fn check_hex_room(&mut self, file: FileId, forces: &[HexDeploy]) {
        for (i, f) in forces.iter().enumerate() {
            let Some(units) = f.units else { continue };
            let taken: i64 = forces[..i]
                .iter()
                .map(|g| f.shared(g).min(g.units.unwrap_or(0)))
                .sum();
            let free = (f.hexes() - taken).max(0);
            let Some(room) = f.room(free) else { continue };
            if units <= room {
                continue;
            }
            let hexes = f.hexes();
            let mut why = vec![format!("{hexes} hexes")];
            if let Some(m) = f.max_per_hex {
                why.push(format!("at most {m} per hex"));
            }
            if f.alone > 0 {
                why.push(format!("{} units that stand alone in a hex", f.alone));
            }
            if taken > 0 {
                why.push(format!(
                    "{taken} hexes the forces before it may hold (no unit sets up with an enemy)"
                ));
            }
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioAreaTooSmall,
                    file,
                    f.span,
                    format!(
                        "force `{}` has {units} units, and its area holds {room} ({})",
                        f.side,
                        why.join(", ")
                    ),
                )
                .label("too small")
                .help("widen the `deploy:` rows or columns, raise `max_per_hex`, or keep the forces' areas apart"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HexDeploy;
    use sandtable_grammar::ast::Span;

    fn area(columns: (u32, u32), rows: (u32, u32), units: i64) -> HexDeploy {
        HexDeploy {
            side: "s".into(),
            columns,
            rows,
            units: Some(units),
            alone: 0,
            max_per_hex: None,
            span: Span { start: 0, end: 0 },
        }
    }

    #[test]
    fn room_counts_units_alone_and_the_cap() {
        let mut a = area((1, 2), (1, 2), 9);
        assert_eq!(a.hexes(), 4);
        assert_eq!(a.room(4), Some(9));
        a.max_per_hex = Some(2);
        assert_eq!(a.room(4), Some(8));
        a.alone = 3;
        // Three hexes of one unit each, one hex of two.
        assert_eq!(a.room(4), Some(5));
        a.max_per_hex = None;
        assert_eq!(a.room(3), Some(3));
        assert_eq!(a.room(2), Some(2));
    }

    #[test]
    fn shared_hexes_are_the_overlap() {
        let a = area((1, 4), (1, 2), 1);
        let b = area((3, 6), (2, 5), 1);
        assert_eq!(a.shared(&b), 2);
        assert_eq!(b.shared(&a), 2);
        let c = area((5, 6), (1, 1), 1);
        assert_eq!(a.shared(&c), 0);
    }
}
