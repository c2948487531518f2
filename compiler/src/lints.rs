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
                ir::Stmt::Outcome(o) => ends.push(o.to_string()),
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
                            (Some(o), _) => ends.push(o.to_string()),
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

/// Assignments of parameters and engine values tried before giving up quietly.
const MAX_JOINT_CASES: usize = 100_000;

/// An engine value the leading `require`s read (`distance(firer, target)`), tried over the
/// values that can change what they say.
struct Atom {
    expr: ir::Expr,
    /// True or false.
    boolean: bool,
    /// Read other than compared with a constant or used as a table key: nothing is known.
    opaque: bool,
    /// Constants it is compared with and table keys it meets: between two neighbouring
    /// points every comparison and key pattern answers the same, so these and their
    /// neighbours stand for every value.
    points: Vec<i64>,
}

/// Whether the leading `require`s of procedure `id` can all hold at once. Each may hold for
/// some piece, yet none meets them together (only pinned teams may fire, only at adjacent
/// targets, and no weapon of theirs has a value at that range). Every piece of each
/// parameter's kind, every member of each enum parameter and every telling value of the
/// engine functions they read (distances, markers) is tried; anything else is unknown and
/// taken to allow the action, so a warning is never a guess.
pub(crate) fn joint_requires(lw: &mut Lowerer, file: FileId, id: u32, body: &ast::Block) {
    use ast::StmtKind as K;
    let p = &lw.program.procs[id as usize];
    // The leading lets and requires: after anything else a require may not be reached.
    let lead: Vec<&ast::Stmt> = body
        .stmts
        .iter()
        .filter(|s| !matches!(s.kind, K::See(_) | K::Note(_)))
        .take_while(|s| matches!(s.kind, K::Let { .. } | K::Require(_)))
        .collect();
    let ir_lead: Vec<&ir::Stmt> = p
        .body
        .iter()
        .take_while(|s| matches!(s, ir::Stmt::Let { .. } | ir::Stmt::Require(_)))
        .collect();
    if lead.len() != ir_lead.len()
        || lead
            .iter()
            .zip(&ir_lead)
            .any(|(a, b)| matches!(a.kind, K::Require(_)) != matches!(b, ir::Stmt::Require(_)))
    {
        return;
    }
    let spans: Vec<Span> = lead
        .iter()
        .filter_map(|s| match &s.kind {
            K::Require(e) => Some(e.span),
            _ => None,
        })
        .collect();
    if spans.len() < 2 {
        return;
    }
    let hex = lw.distance_ty == ir::Type::Int;
    let mut j = Joint {
        program: &lw.program,
        hex,
        atoms: Vec::new(),
        atom_vals: Vec::new(),
        slots: vec![None; (p.n_slots as usize).max(p.params.len())],
        pieces: Vec::new(),
    };
    j.pieces = vec![false; j.slots.len()];
    for (i, prm) in p.params.iter().enumerate() {
        j.pieces[i] = matches!(prm.ty, ir::Type::Entity(_));
    }
    for s in &ir_lead {
        match s {
            ir::Stmt::Let { slot, value } => {
                if j.is_piece(value)
                    && let Some(x) = j.pieces.get_mut(*slot as usize)
                {
                    *x = true;
                }
                j.scan(value);
            }
            ir::Stmt::Require(e) => j.scan(e),
            _ => {}
        }
    }
    // The values each parameter and atom is tried with (`None`: unknown).
    let mut domains: Vec<Vec<Option<Value>>> = Vec::new();
    for prm in &p.params {
        domains.push(param_values(&lw.program, prm));
    }
    for a in &j.atoms {
        domains.push(if a.opaque {
            vec![None]
        } else if a.boolean {
            vec![Some(Value::Bool(false)), Some(Value::Bool(true))]
        } else {
            let mut v: Vec<i64> = vec![0];
            for x in &a.points {
                v.extend([x.saturating_sub(1), *x, x.saturating_add(1)]);
            }
            v.sort_unstable();
            v.dedup();
            v.into_iter().map(|x| Some(Value::Int(x))).collect()
        });
    }
    let cases = domains
        .iter()
        .try_fold(1usize, |n, d| n.checked_mul(d.len().max(1)));
    if cases.is_none_or(|n| n > MAX_JOINT_CASES) || domains.iter().any(Vec::is_empty) {
        return;
    }
    let n_params = p.params.len();
    let n_req = spans.len();
    let mut alone = vec![false; n_req];
    let mut together = false;
    let mut at = vec![0usize; domains.len()];
    'cases: loop {
        for (i, d) in domains.iter().enumerate().take(n_params) {
            j.slots[i] = d[at[i]].clone();
        }
        j.atom_vals = domains[n_params..]
            .iter()
            .zip(&at[n_params..])
            .map(|(d, k)| d[*k].clone())
            .collect();
        let mut all = true;
        let mut r = 0;
        for s in &ir_lead {
            match s {
                ir::Stmt::Let { slot, value } => {
                    let v = j.eval(value);
                    if let Some(x) = j.slots.get_mut(*slot as usize) {
                        *x = v;
                    }
                }
                ir::Stmt::Require(e) => {
                    let holds = j.eval(e) != Some(Value::Bool(false));
                    alone[r] |= holds;
                    all &= holds;
                    r += 1;
                }
                _ => {}
            }
        }
        together |= all;
        if together && alone.iter().all(|a| *a) {
            return;
        }
        // The next case, as an odometer over the domains.
        for (k, d) in at.iter_mut().zip(&domains) {
            *k += 1;
            if *k < d.len() {
                continue 'cases;
            }
            *k = 0;
        }
        break;
    }
    // A requirement that never holds on its own is reported by `never_holds`.
    if together || !alone.iter().all(|a| *a) {
        return;
    }
    let name = p.name.clone();
    let what = match p.kind {
        ir::ProcKind::Action => format!("the action `{name}` can never be taken"),
        _ => format!("`{name}` can never get past them"),
    };
    let mut d = Diagnostic::new(
        Code::LintNeverHolds,
        file,
        spans[0],
        format!("these requirements never hold together: {what}"),
    )
    .label("each holds for some piece or value, but never with the others");
    for s in &spans[1..] {
        d = d.related(file, *s, "and this one");
    }
    lw.diags.push(d.help(
        "no piece, stat line or table value of the ruleset meets all of them at once; check them against the book (a table cell `-` where the others leave the only choice?)",
    ));
}

/// The values a parameter is tried with: every piece of its kind, every member of its enum,
/// both truth values, a short range; else unknown.
fn param_values(program: &ir::Program, prm: &ir::Param) -> Vec<Option<Value>> {
    match &prm.ty {
        ir::Type::Entity(Some(k)) => program
            .entities
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind == Some(*k))
            .map(|(i, _)| Some(Value::Entity(i as u32)))
            .collect(),
        ir::Type::Enum(e) => program.enums[*e as usize]
            .members
            .iter()
            .map(|m| Some(Value::Symbol(m.as_str().into())))
            .collect(),
        ir::Type::Bool => vec![Some(Value::Bool(false)), Some(Value::Bool(true))],
        ir::Type::Int => match prm.range {
            Some((lo, hi)) if hi >= lo && hi - lo < 64 => {
                (lo..=hi).map(|x| Some(Value::Int(x))).collect()
            }
            _ => vec![None],
        },
        _ => vec![None],
    }
}

/// Evaluation of leading requirements for one assignment of parameters and engine values.
struct Joint<'a> {
    program: &'a ir::Program,
    /// On a hex board `adjacent(a, b)` is `distance(a, b) == 1`.
    hex: bool,
    atoms: Vec<Atom>,
    atom_vals: Vec<Option<Value>>,
    slots: Vec<Option<Value>>,
    /// Slots that hold a piece. A piece is tried as its stat line, and two pieces of one
    /// stat line are still two pieces, so comparing pieces says nothing here.
    pieces: Vec<bool>,
}

fn is_cmp(op: ir::BinOp) -> bool {
    use ir::BinOp as B;
    matches!(op, B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge)
}

fn int_const(e: &ir::Expr) -> Option<i64> {
    match e {
        ir::Expr::Const(Value::Int(n) | Value::Length(n)) => Some(*n),
        _ => None,
    }
}

impl Joint<'_> {
    fn is_piece(&self, e: &ir::Expr) -> bool {
        matches!(e, ir::Expr::Local(s) if self.pieces.get(*s as usize).copied().unwrap_or(false))
    }

    fn atom(&mut self, e: &ir::Expr) -> &mut Atom {
        let i = match self.atoms.iter().position(|a| a.expr == *e) {
            Some(i) => i,
            None => {
                // An engine function's truth value is one of two whatever its arguments.
                let boolean = matches!(e, ir::Expr::Host { func, .. } if func.ret() == ir::functions::Ret::Bool);
                self.atoms.push(Atom {
                    expr: e.clone(),
                    boolean,
                    opaque: false,
                    points: Vec::new(),
                });
                self.atoms.len() - 1
            }
        };
        &mut self.atoms[i]
    }

    /// `adjacent(a, b)` on a hex board as the distance it stands for.
    fn as_distance(&self, e: &ir::Expr) -> Option<ir::Expr> {
        match e {
            ir::Expr::Host { func, args }
                if self.hex && *func == ir::EngineFn::Adjacent && args.len() == 2 =>
            {
                Some(ir::Expr::Host {
                    func: ir::EngineFn::Distance,
                    args: args.clone(),
                })
            }
            _ => None,
        }
    }

    /// Find the engine values `e` reads and how.
    fn scan(&mut self, e: &ir::Expr) {
        use ir::Expr as E;
        match e {
            E::Binary { op, lhs, rhs } if is_cmp(*op) => {
                for (a, b) in [(lhs, rhs), (rhs, lhs)] {
                    if let (E::Host { args, .. }, Some(c)) = (&**a, int_const(b)) {
                        let at = self.atom(a);
                        if !at.boolean {
                            at.points.push(c);
                        }
                        for x in args {
                            self.scan(x);
                        }
                        return;
                    }
                }
                self.scan(lhs);
                self.scan(rhs);
            }
            E::Lookup { table, keys } => {
                for (i, k) in keys.iter().enumerate() {
                    let E::Host { args, .. } = k else {
                        self.scan(k);
                        continue;
                    };
                    let t = &self.program.tables[*table as usize];
                    let points: Vec<i64> = if i == 0 {
                        t.rows
                            .iter()
                            .flat_map(|r| &r.keys)
                            .flat_map(|p| match p {
                                KeyPattern::Range(lo, hi) => vec![*lo, *hi],
                                _ => Vec::new(),
                            })
                            .flatten()
                            .collect()
                    } else {
                        t.columns
                            .iter()
                            .filter_map(|c| match c {
                                Value::Int(n) | Value::Length(n) => Some(*n),
                                _ => None,
                            })
                            .collect()
                    };
                    let at = self.atom(k);
                    at.points.extend(points);
                    for x in args {
                        self.scan(x);
                    }
                }
            }
            E::Host { args, .. } => {
                if let Some(d) = self.as_distance(e) {
                    self.atom(&d).points.push(1);
                } else {
                    let at = self.atom(e);
                    if !at.boolean {
                        at.opaque = true;
                    }
                }
                for x in args {
                    self.scan(x);
                }
            }
            E::Unary { operand, .. } => self.scan(operand),
            E::Binary { lhs, rhs, .. } => {
                self.scan(lhs);
                self.scan(rhs);
            }
            E::If {
                cond,
                then,
                otherwise,
            } => {
                self.scan(cond);
                self.scan(then);
                self.scan(otherwise);
            }
            E::Field { base, .. } => self.scan(base),
            E::Builtin { args, .. } | E::Call { args, .. } | E::Stack { args, .. } => {
                for x in args {
                    self.scan(x);
                }
            }
            E::List(items) => {
                for x in items {
                    self.scan(x);
                }
            }
            E::Quant { list, cond, .. } => {
                self.scan(list);
                self.scan(cond);
            }
            E::Dice { count, .. } => self.scan(count),
            E::Const(_) | E::Local(_) | E::Roll(_) => {}
        }
    }

    /// The value of `e` in the current case; `None` when it is not known.
    fn eval(&self, e: &ir::Expr) -> Option<Value> {
        use ir::{BinOp as B, Expr as E};
        let norm = |v: &Value| match v {
            Value::Length(n) => Some(Value::Int(*n)),
            Value::Unknown(_) | Value::List(_) | Value::Range(..) | Value::LabelRange(..) => None,
            v => Some(v.clone()),
        };
        let int = |v: Option<Value>| match v {
            Some(Value::Int(n)) => Some(n),
            _ => None,
        };
        match e {
            E::Const(v) => norm(v),
            E::Local(s) => self.slots.get(*s as usize).cloned().flatten(),
            E::Unary { op, operand } => match (op, self.eval(operand)?) {
                (ir::UnOp::Not, Value::Bool(b)) => Some(Value::Bool(!b)),
                (ir::UnOp::Neg, Value::Int(n)) => n.checked_neg().map(Value::Int),
                _ => None,
            },
            E::Binary { op, lhs, rhs } => {
                let (l, r) = (self.eval(lhs), self.eval(rhs));
                let f = Some(Value::Bool(false));
                let t = Some(Value::Bool(true));
                match op {
                    B::And if l == f || r == f => f,
                    B::And if l == t && r == t => t,
                    B::Or if l == t || r == t => t,
                    B::Or if l == f && r == f => f,
                    B::And | B::Or => None,
                    B::Eq | B::Ne => {
                        if self.is_piece(lhs) || self.is_piece(rhs) {
                            return None;
                        }
                        let (l, r) = (l?, r?);
                        // Values of different types say nothing here.
                        if std::mem::discriminant(&l) != std::mem::discriminant(&r) {
                            return None;
                        }
                        Some(Value::Bool((l == r) == (*op == B::Eq)))
                    }
                    B::Lt | B::Le | B::Gt | B::Ge => {
                        let (a, b) = (int(l)?, int(r)?);
                        Some(Value::Bool(match op {
                            B::Lt => a < b,
                            B::Le => a <= b,
                            B::Gt => a > b,
                            _ => a >= b,
                        }))
                    }
                    B::Add => int(l)?.checked_add(int(r)?).map(Value::Int),
                    B::Sub => int(l)?.checked_sub(int(r)?).map(Value::Int),
                    B::Mul => int(l)?.checked_mul(int(r)?).map(Value::Int),
                    B::Div | B::Rem | B::In => None,
                }
            }
            E::If {
                cond,
                then,
                otherwise,
            } => match self.eval(cond)? {
                Value::Bool(true) => self.eval(then),
                Value::Bool(false) => self.eval(otherwise),
                _ => None,
            },
            E::Field { base, field } => match self.eval(base)? {
                Value::Entity(i) => norm(self.program.entities.get(i as usize)?.field(field)?),
                _ => None,
            },
            E::Lookup { table, keys } => {
                let t = self.program.tables.get(*table as usize)?;
                let ks: Vec<Value> = keys.iter().map(|k| self.eval(k)).collect::<Option<_>>()?;
                let key_matches = |p: &KeyPattern, v: &Value| match (p, v) {
                    (KeyPattern::Any, _) => true,
                    (KeyPattern::Range(..), Value::Int(x)) => p.matches_int(*x),
                    (KeyPattern::Symbol(s), Value::Symbol(x)) => **s == **x,
                    (KeyPattern::Symbol(s), Value::Bool(b)) => *s == b.to_string(),
                    _ => false,
                };
                // A key no row has is an error in play, not a requirement that fails.
                let row = t
                    .rows
                    .iter()
                    .find(|r| r.keys.iter().any(|p| key_matches(p, &ks[0])))?;
                let col = match ks.get(1) {
                    None => 0,
                    Some(k) => t.columns.iter().position(|c| norm(c).as_ref() == Some(k))?,
                };
                norm(row.cells.get(col)?)
            }
            E::Host { .. } => {
                if let Some(d) = self.as_distance(e) {
                    let i = self.atoms.iter().position(|a| a.expr == d)?;
                    return int(self.atom_vals.get(i)?.clone()).map(|n| Value::Bool(n == 1));
                }
                let i = self.atoms.iter().position(|a| a.expr == *e)?;
                self.atom_vals.get(i)?.clone()
            }
            E::Roll(_)
            | E::Dice { .. }
            | E::Builtin { .. }
            | E::Call { .. }
            | E::Stack { .. }
            | E::List(_)
            | E::Quant { .. } => None,
        }
    }
}

#[cfg(test)]
mod joint_tests {
    fn together(src: &str) -> Vec<String> {
        crate::compile_sources(&[("case.sand", src)])
            .diagnostics
            .iter()
            .filter(|d| d.message.contains("never hold together"))
            .map(|d| d.message.clone())
            .collect()
    }

    const PIECES: &str = "side blue\nkind team { crew: int }\nunit squad: team of blue { crew: 3 }\n\
        board field: hex {\n  columns: A..=E\n  rows: 1..=5\n}\n";

    #[test]
    fn two_pieces_of_one_stat_line_are_still_two_pieces() {
        let src = format!(
            "{PIECES}action help(a: team, b: team) {{\n  require a != b\n  require a.crew == b.crew\n}}\n"
        );
        assert!(together(&src).is_empty(), "{:?}", together(&src));
    }

    #[test]
    fn a_distance_used_in_arithmetic_is_not_guessed_at() {
        let src = format!(
            "{PIECES}action shout(a: team, b: team) {{\n  require adjacent(a, b)\n  require distance(a, b) * 2 == 4\n}}\n"
        );
        assert!(together(&src).is_empty(), "{:?}", together(&src));
        // Compared directly, the same pair of guards is found out.
        let src = format!(
            "{PIECES}action shout(a: team, b: team) {{\n  require adjacent(a, b)\n  require distance(a, b) == 2\n}}\n"
        );
        assert_eq!(together(&src).len(), 1);
    }
}
