//! Lints for rules writers and translators over lowered constructs: result bands, targets,
//! modifier stacks and tables. Each runs where the construct is lowered, with its span.

use sandtable_grammar::ast::{self, Span};

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, KeyPattern, Value};
use crate::lower::{Lowerer, expr::Typed, expr::compare_reach};
use crate::reach::Reach;
use crate::source::FileId;

/// How the numbers of a message read: plain, or lengths in the ruleset's unit (never the
/// internal tenths of a millimetre).
#[derive(Clone, Copy)]
enum Num<'a> {
    Plain,
    Length(Option<&'a str>),
}

impl Num<'_> {
    fn show(self, v: i64) -> String {
        match self {
            Num::Plain => v.to_string(),
            Num::Length(u) => ir::show_length(v, u),
        }
    }
    fn of<'a>(ty: &ir::Type, unit: Option<&'a str>) -> Num<'a> {
        if *ty == ir::Type::Length {
            Num::Length(unit)
        } else {
            Num::Plain
        }
    }
}

/// Render an inclusive range for messages.
fn show_range(lo: Option<i64>, hi: Option<i64>, n: Num) -> String {
    match (lo, hi) {
        (Some(a), Some(b)) if a == b => n.show(a),
        (Some(a), Some(b)) => format!("{}..={}", n.show(a), n.show(b)),
        (Some(a), None) => format!("{}..", n.show(a)),
        (None, Some(b)) => format!("..={}", n.show(b)),
        (None, None) => "any value".into(),
    }
}

/// Collapse sorted values into runs: `[1,2,3,7]` → `1..=3, 7`.
fn runs(values: &[i64], n: Num) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let start = values[i];
        let mut end = start;
        while i + 1 < values.len() && values[i + 1] == end + 1 {
            i += 1;
            end = values[i];
        }
        out.push(show_range(Some(start), Some(end), n));
        i += 1;
    }
    if out.len() > 8 {
        let n = out.len();
        out.truncate(8);
        out.push(format!("… ({} runs in all)", n));
    }
    out.join(", ")
}

fn pattern_bounds(p: &KeyPattern) -> Option<(Option<i64>, Option<i64>)> {
    match p {
        KeyPattern::Range(lo, hi) => Some((*lo, *hi)),
        _ => None,
    }
}

/// Gaps, overlaps and unreachable arms of a `bands` statement.
pub(crate) fn bands(
    lw: &mut Lowerer,
    file: FileId,
    span: Span,
    t: &Typed,
    arms: &[ast::Arm],
    lowered: &[ir::Arm],
) {
    let numeric_arms = lowered.iter().all(|a| {
        a.patterns
            .iter()
            .all(|p| matches!(p, KeyPattern::Range(..) | KeyPattern::Any))
    });
    if !numeric_arms {
        return;
    }
    let has_wildcard = lowered
        .iter()
        .any(|a| a.patterns.iter().any(|p| matches!(p, KeyPattern::Any)));
    let reach = &t.reach;
    let unit = lw.program.length_unit.clone();
    let n = Num::of(&t.ty, unit.as_deref());
    // Unreachable arms.
    for (a, ast_arm) in lowered.iter().zip(arms) {
        for (p, ap) in a.patterns.iter().zip(&ast_arm.patterns) {
            let Some((lo, hi)) = pattern_bounds(p) else {
                continue;
            };
            if reach.meets(lo, hi) == Some(false) {
                let (rlo, rhi) = reach.bounds();
                lw.diags.push(
                    Diagnostic::new(
                        Code::LintUnreachableBand,
                        file,
                        ap.span,
                        format!(
                            "band {} can never be chosen: the value only reaches {}",
                            show_range(lo, hi, n),
                            describe_reach(reach, n)
                        ),
                    )
                    .label("unreachable")
                    .related(
                        file,
                        span,
                        format!("ranges over {}", show_range(rlo, rhi, n)),
                    )
                    .help("check the book's figures, or remove the band if it is a misprint"),
                );
            }
        }
    }
    // Overlaps between arms (first match wins, so a later overlapping band is partly dead).
    let mut seen: Vec<(Option<i64>, Option<i64>, Span)> = Vec::new();
    for (a, ast_arm) in lowered.iter().zip(arms) {
        for (p, ap) in a.patterns.iter().zip(&ast_arm.patterns) {
            let Some((lo, hi)) = pattern_bounds(p) else {
                continue;
            };
            for (plo, phi, pspan) in &seen {
                let olo = match (lo, *plo) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (x, None) | (None, x) => x,
                };
                let ohi = match (hi, *phi) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (x, None) | (None, x) => x,
                };
                let empty = matches!((olo, ohi), (Some(l), Some(h)) if l > h);
                if !empty && reach.meets(olo, ohi) != Some(false) {
                    lw.diags.push(
                        Diagnostic::new(
                            Code::LintBandOverlap,
                            file,
                            ap.span,
                            format!("bands overlap on {}", show_range(olo, ohi, n)),
                        )
                        .label("overlaps an earlier band")
                        .related(file, *pspan, "earlier band")
                        .help("the first matching band wins; make the ranges disjoint"),
                    );
                }
            }
            seen.push((lo, hi, ap.span));
        }
    }
    if has_wildcard {
        return;
    }
    let covered = |x: i64| {
        seen.iter()
            .any(|(lo, hi, _)| lo.is_none_or(|l| x >= l) && hi.is_none_or(|h| x <= h))
    };
    let (rlo, rhi) = reach.bounds();
    let gaps: Vec<i64> = match reach.values_in(None, None) {
        Some(vals) => vals.into_iter().filter(|x| !covered(*x)).collect(),
        None => match (rlo, rhi) {
            (Some(l), Some(h)) if h.saturating_sub(l) <= 100_000 => {
                (l..=h).filter(|x| !covered(*x)).collect()
            }
            _ => Vec::new(),
        },
    };
    if !gaps.is_empty() {
        lw.diags.push(
            Diagnostic::new(
                Code::LintBandGap,
                file,
                span,
                format!("no band covers {}", runs(&gaps, n)),
            )
            .label(format!("reaches {}", describe_reach(reach, n)))
            .help("add a band for these values, or `_ => …` if the book gives a default"),
        );
    }
}

fn describe_reach(r: &Reach, n: Num) -> String {
    match r {
        Reach::Set(v) if v.len() <= 12 => runs(v, n),
        _ => {
            let (lo, hi) = r.bounds();
            show_range(lo, hi, n)
        }
    }
}

/// Targets the dice cannot reach, and modifier stacks that push a target off the die.
pub(crate) fn comparison(
    lw: &mut Lowerer,
    file: FileId,
    span: Span,
    op: ast::BinOp,
    l: &Typed,
    r: &Typed,
) {
    if !(l.die || r.die) {
        return;
    }
    let unit = lw.program.length_unit.clone();
    let lengthy = if l.ty == ir::Type::Length {
        &l.ty
    } else {
        &r.ty
    };
    let n = Num::of(lengthy, unit.as_deref());
    match compare_reach(op, &l.reach, &r.reach) {
        Some(false) => {
            lw.diags.push(
                Diagnostic::new(
                    Code::LintUnreachableTarget,
                    file,
                    span,
                    format!(
                        "this roll can never succeed: {} {} {}",
                        describe_reach(&l.reach, n),
                        op.symbol(),
                        describe_reach(&r.reach, n)
                    ),
                )
                .label("always false")
                .help("the target lies outside what the dice can roll; check the book's number"),
            );
            return;
        }
        Some(true) => {
            lw.diags.push(
                Diagnostic::new(
                    Code::LintCertainTarget,
                    file,
                    span,
                    format!(
                        "this roll always succeeds: {} {} {}",
                        describe_reach(&l.reach, n),
                        op.symbol(),
                        describe_reach(&r.reach, n)
                    ),
                )
                .label("always true")
                .help("no die result can fail it; check the book's number"),
            );
            return;
        }
        None => {}
    }
    if l.extremes.is_none() && r.extremes.is_none() {
        return;
    }
    let (ll, lh) = l
        .extremes
        .clone()
        .unwrap_or((l.reach.clone(), l.reach.clone()));
    let (rl, rh) = r
        .extremes
        .clone()
        .unwrap_or((r.reach.clone(), r.reach.clone()));
    // With the stack at each extreme (lowest on one side pairs with lowest on the other only
    // when the stack sits on one side, which is the common case).
    for (a, b, which) in [(&ll, &rl, "lowest"), (&lh, &rh, "highest")] {
        if let Some(v) = compare_reach(op, a, b) {
            lw.diags.push(
                Diagnostic::new(
                    Code::LintStackOutsideDie,
                    file,
                    span,
                    format!(
                        "with its modifiers at their {which} total this roll always {}",
                        if v { "succeeds" } else { "fails" }
                    ),
                )
                .label(format!("{} {} {}", describe_reach(a, n), op.symbol(), describe_reach(b, n)))
                .help("the modifier stack pushes the target off the die's faces; if the book caps it (\"cannot exceed 2+\"), add `clamp` to the stack or clamp the target"),
            );
        }
    }
}

/// A `require` that no piece, stat line or table value of the ruleset can meet: the rule
/// it guards can never be used.
pub(crate) fn never_holds(lw: &mut Lowerer, file: FileId, span: Span, proc: &str) {
    let kind = lw.globals.get(proc).and_then(|d| match d.sym {
        crate::lower::Sym::Proc(p) => Some(lw.program.procs[p as usize].kind),
        _ => None,
    });
    let what = match kind {
        Some(ir::ProcKind::Action) => format!("the action `{proc}` can never be taken"),
        _ => format!("`{proc}` can never get past it"),
    };
    lw.diags.push(
        Diagnostic::new(
            Code::LintNeverHolds,
            file,
            span,
            format!("this requirement never holds: {what}"),
        )
        .label("always false for every piece and value of the ruleset")
        .help("the stat lines, tables and ranges it reads can never meet it; check the numbers against the book"),
    );
}

/// A resolution whose every path ends in the same outcome, reading no dice and doing
/// nothing else: its inputs cannot matter, which usually means a misread band or table.
pub(crate) fn same_outcome(lw: &mut Lowerer, file: FileId, id: u32, span: Span) {
    let p = &lw.program.procs[id as usize];
    if p.kind != ir::ProcKind::Resolve || p.params.is_empty() {
        return;
    }
    let mut ends: Vec<String> = Vec::new();
    let mut open = false;
    fn walk(stmts: &[ir::Stmt], ends: &mut Vec<String>, open: &mut bool) {
        for s in stmts {
            match s {
                ir::Stmt::Outcome(o) => ends.push(o.clone()),
                ir::Stmt::Result(ir::Expr::Const(v)) => ends.push(format!("{v:?}")),
                ir::Stmt::If {
                    then, otherwise, ..
                } => {
                    walk(then, ends, open);
                    walk(otherwise, ends, open);
                }
                ir::Stmt::Bands { arms, .. } => {
                    for a in arms {
                        walk(&a.body, ends, open);
                        match (&a.outcome, &a.value) {
                            (Some(o), _) => ends.push(o.clone()),
                            (None, Some(ir::Expr::Const(v))) => ends.push(format!("{v:?}")),
                            (None, Some(_)) => *open = true,
                            (None, None) => {}
                        }
                    }
                }
                ir::Stmt::Let { .. } => {}
                // Anything else can change the outcome or has an effect of its own.
                _ => *open = true,
            }
        }
    }
    walk(&p.body, &mut ends, &mut open);
    let finished = match p.body.last() {
        Some(ir::Stmt::Outcome(_) | ir::Stmt::Result(_)) => true,
        Some(ir::Stmt::Bands { arms, .. }) => {
            arms.iter()
                .any(|a| a.patterns.iter().any(|x| matches!(x, KeyPattern::Any)))
                && arms
                    .iter()
                    .all(|a| a.outcome.is_some() || a.value.is_some())
        }
        _ => false,
    };
    ends.sort();
    ends.dedup();
    if open || !finished || ends.len() != 1 || ends.iter().any(|e| e.contains("Unknown")) {
        return;
    }
    let name = p.name.clone();
    let outcome = ends[0]
        .trim_start_matches("Int(")
        .trim_end_matches(')')
        .to_string();
    lw.diags.push(
        Diagnostic::new(
            Code::LintSameOutcome,
            file,
            span,
            format!("`{name}` gives `{outcome}` whatever its inputs"),
        )
        .label("every path ends in the same outcome")
        .help("check the bands or branches against the book: one of them probably gives another result"),
    );
}

/// Entries of a stack that can never apply.
pub(crate) fn stack_entries(
    lw: &mut Lowerer,
    file: FileId,
    _id: u32,
    entries: &[(ir::StackEntry, Span)],
) {
    for (e, span) in entries {
        if let Some(ir::Expr::Const(Value::Bool(false))) = &e.when {
            lw.diags.push(
                Diagnostic::new(
                    Code::LintDeadModifier,
                    file,
                    *span,
                    format!("modifier \"{}\" never applies", e.label),
                )
                .label("condition is always false")
                .help("remove it, or fix its condition"),
            );
        }
        if matches!(&e.value, ir::Expr::Const(Value::Int(0))) {
            lw.diags.push(
                Diagnostic::new(
                    Code::LintDeadModifier,
                    file,
                    *span,
                    format!("modifier \"{}\" is 0", e.label),
                )
                .label("adds nothing")
                .help(
                    "a zero modifier changes nothing; write `?` if the book leaves the value empty",
                ),
            );
        }
    }
}

/// Empty and partly empty tables, and die faces no row covers.
pub(crate) fn table(lw: &mut Lowerer, file: FileId, id: u32, t: &ast::Table) {
    let tb = lw.program.tables[id as usize].clone();
    let total: usize = tb.rows.iter().map(|r| r.cells.len()).sum();
    let unknown: usize = tb
        .rows
        .iter()
        .flat_map(|r| r.cells.iter())
        .filter(|c| matches!(c, Value::Unknown(_)))
        .count();
    let unknown_cols = tb
        .columns
        .iter()
        .filter(|c| matches!(c, Value::Unknown(_)))
        .count();
    if total > 0 && unknown == total {
        let mut d = Diagnostic::new(
            Code::LintEmptyTable,
            file,
            t.name.span,
            format!(
                "table `{}` is empty: all {total} of its cells are unknown",
                tb.name
            ),
        )
        .label(format!(
            "{} rows × {} columns, 0 values",
            tb.rows.len(),
            (total / tb.rows.len().max(1))
        ));
        d = d.help(if unknown_cols > 0 {
            format!("the book prints this table without values (and {unknown_cols} column headings are unknown); supply them in an assumptions file to run it")
        } else {
            "the book prints this table without values; supply them in an assumptions file to run it".into()
        });
        lw.diags.push(d);
    } else if unknown > 0 {
        lw.diags.push(
            Diagnostic::new(
                Code::LintPartlyEmptyTable,
                file,
                t.name.span,
                format!(
                    "table `{}` has {unknown} unknown cells out of {total}",
                    tb.name
                ),
            )
            .label(format!("{unknown} of {total} cells are `?`"))
            .help(
                "the `?` cells need values (an assumptions file) before a look-up can land on them",
            ),
        );
    }
    // Die faces the rows do not cover.
    if let Some(ast::TableKey {
        domain: Some(ast::TypeExpr::Die(d)),
        name,
    }) = t.keys.first()
    {
        let faces: Option<Vec<i64>> = match &d.kind {
            ast::ExprKind::Dice { count: 1, sides } => Some((1..=i64::from(*sides)).collect()),
            ast::ExprKind::Dice { count, sides } => {
                let mut r = Reach::constant(0);
                for _ in 0..(*count).min(16) {
                    r = r.add(&Reach::range(1, i64::from(*sides)));
                }
                r.values_in(None, None)
            }
            _ => None,
        };
        if let Some(faces) = faces {
            let missing: Vec<i64> = faces
                .iter()
                .copied()
                .filter(|f| {
                    !tb.rows
                        .iter()
                        .any(|r| r.keys.first().is_some_and(|k| k.matches_int(*f)))
                })
                .collect();
            if !missing.is_empty() && !tb.rows.is_empty() {
                lw.diags.push(
                    Diagnostic::new(
                        Code::LintTableUncoveredFace,
                        file,
                        name.span,
                        format!(
                            "no row of `{}` covers {} = {}",
                            tb.name,
                            name.name,
                            runs(&missing, Num::Plain)
                        ),
                    )
                    .label("rolled here")
                    .help("add rows for these results, or a `_` row if the book gives a default"),
                );
            }
            for (row, ar) in tb.rows.iter().zip(&t.rows) {
                if let Some(KeyPattern::Range(lo, hi)) = row.keys.first()
                    && !faces
                        .iter()
                        .any(|f| lo.is_none_or(|l| *f >= l) && hi.is_none_or(|h| *f <= h))
                {
                    lw.diags.push(
                        Diagnostic::new(
                            Code::LintUnreachableBand,
                            file,
                            ar.keys.first().map_or(ar.span, |k| k.span),
                            format!(
                                "row {} of `{}` can never be rolled",
                                show_range(*lo, *hi, Num::Plain),
                                tb.name
                            ),
                        )
                        .label("outside the die's faces")
                        .help("check the book's figures"),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Num, runs, show_range};

    #[test]
    fn runs_collapse_consecutive_values() {
        assert_eq!(runs(&[1, 2, 3, 7, 9, 10], Num::Plain), "1..=3, 7, 9..=10");
        assert_eq!(runs(&[], Num::Plain), "");
    }

    #[test]
    fn lengths_read_in_the_rulesets_unit() {
        let inch = Num::Length(Some("in"));
        assert_eq!(show_range(Some(1524), Some(3048), inch), "6in..=12in");
        assert_eq!(show_range(Some(635), None, inch), "2.5in..");
        assert_eq!(
            show_range(Some(1500), Some(1500), Num::Length(Some("cm"))),
            "15cm"
        );
        // Not a whole or half unit: exact in millimetres.
        assert_eq!(show_range(None, Some(8), inch), "..=0.8mm");
        assert_eq!(
            show_range(Some(-254), Some(0), Num::Length(None)),
            "-1in..=0in"
        );
    }
}
