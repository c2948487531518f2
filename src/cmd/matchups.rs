//! `sandtable matchups`: for every action that calls a resolution with stats of the acting
//! and the target piece, the exact outcome probabilities for every pairing of unit kinds,
//! with the modifier cases the resolution lists, and the pairings where an outcome is
//! impossible or certain. `check` reports the impossible ones as a lint.

use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use sandtable_compiler::ir::{self, Expr, Program, Stmt, Type, Value};
use sandtable_runtime::exact::{DEFAULT_LIMIT, Session};
use sandtable_runtime::interp::Assumptions;
use sandtable_runtime::{OutcomeKey, Val};

use crate::report::{self, EXIT_OK};

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 when the table was computed (impossible and certain outcomes are flagged, not errors), 1 when the ruleset has errors, 2 on usage or I/O errors.\n\n\
Examples:\n  sandtable matchups rules/plastic_battle\n  sandtable matchups rules/plastic_battle --case none --csv\n  sandtable matchups rules/plastic_battle --json"
)]
pub struct Args {
    /// Ruleset folder or .sand file
    ruleset: std::path::PathBuf,
    /// Only this modifier case: `none` (no modifier applies) or a yes/no parameter of the
    /// resolution (repeatable)
    #[arg(long = "case", value_name = "NAME")]
    cases: Vec<String>,
    /// Print JSON: {"matchups": [{"action", "resolution", "case", "acting", "target", "outcomes": [{"outcome", "probability", "decimal"}], "flags"}]}
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: action,resolution,case,acting,target,outcome,probability,decimal,flag
    #[arg(long)]
    csv: bool,
}

/// A resolution call inside an action whose arguments read stats of two of its pieces.
#[derive(Debug, Clone)]
pub struct Call {
    pub action: u32,
    pub resolution: u32,
    /// Parameter index (in the action) of the acting piece and of the target piece.
    pub acting: usize,
    pub target: usize,
    pub args: Vec<Arg>,
}

#[derive(Debug, Clone)]
pub enum Arg {
    /// `piece.field` of the action's parameter.
    Stat(usize, String),
    /// Anything else: a modifier case when the resolution takes it as yes/no, else its default.
    Other,
}

/// One pairing in one case: the outcomes in the resolution's order.
#[derive(Debug, Clone)]
pub struct Row {
    pub case: String,
    pub acting: u32,
    pub target: u32,
    /// (outcome, numerator, denominator); empty when `unknown` is set.
    pub outcomes: Vec<(String, BigUint, BigUint)>,
    /// The book's unknown a stat of this pairing rests on.
    pub unknown: Option<String>,
}

impl Row {
    /// Outcomes that are impossible or certain, told by the first outcome when it is either
    /// (the one the tables show), then by any other outcome that can never happen.
    pub fn flags(&self) -> Vec<(String, &'static str)> {
        let mut out = Vec::new();
        let Some((first, n, d)) = self.outcomes.first() else {
            return out;
        };
        if n.is_zero() {
            out.push((first.clone(), "impossible"));
        } else if n == d {
            out.push((first.clone(), "certain"));
            return out;
        }
        for (o, n, _) in &self.outcomes[1..] {
            if n.is_zero() {
                out.push((o.clone(), "impossible"));
            }
        }
        out
    }
}

fn walk_expr<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    out.push(e);
    match e {
        Expr::Dice { count, .. } => walk_expr(count, out),
        Expr::Unary { operand, .. } => walk_expr(operand, out),
        Expr::Binary { lhs, rhs, .. } => {
            walk_expr(lhs, out);
            walk_expr(rhs, out);
        }
        Expr::If {
            cond,
            then,
            otherwise,
        } => {
            walk_expr(cond, out);
            walk_expr(then, out);
            walk_expr(otherwise, out);
        }
        Expr::Builtin { args, .. }
        | Expr::Host { args, .. }
        | Expr::Call { args, .. }
        | Expr::Stack { args, .. } => args.iter().for_each(|a| walk_expr(a, out)),
        Expr::Lookup { keys, .. } => keys.iter().for_each(|a| walk_expr(a, out)),
        Expr::Field { base, .. } => walk_expr(base, out),
        Expr::List(items) => items.iter().for_each(|a| walk_expr(a, out)),
        Expr::Quant { list, cond, .. } => {
            walk_expr(list, out);
            walk_expr(cond, out);
        }
        Expr::Const(_) | Expr::Local(_) | Expr::Roll(_) => {}
    }
}

fn walk_stmts<'a>(body: &'a [Stmt], out: &mut Vec<&'a Expr>) {
    for s in body {
        match s {
            Stmt::Let { value, .. } => walk_expr(value, out),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                walk_expr(cond, out);
                walk_stmts(then, out);
                walk_stmts(otherwise, out);
            }
            Stmt::Bands {
                scrutinee, arms, ..
            } => {
                walk_expr(scrutinee, out);
                for a in arms {
                    walk_stmts(&a.body, out);
                }
            }
            Stmt::Result(e) | Stmt::Require(e) | Stmt::Expr(e) => walk_expr(e, out),
            Stmt::Choose { from, body, .. } => {
                walk_expr(from, out);
                walk_stmts(body, out);
            }
            Stmt::For { iter, body, .. } => {
                walk_expr(iter, out);
                walk_stmts(body, out);
            }
            Stmt::Repeat { count, body } => {
                walk_expr(count, out);
                walk_stmts(body, out);
            }
            Stmt::Outcome(_) | Stmt::Effect(_) => {}
        }
    }
}

/// Every resolution call in an action that reads stats of two of the action's pieces.
pub fn calls(program: &Program) -> Vec<Call> {
    let mut out = Vec::new();
    for (a, p) in program.procs.iter().enumerate() {
        if p.kind != ir::ProcKind::Action {
            continue;
        }
        // Parameters live in the first slots, in order.
        let piece = |slot: u32| -> Option<usize> {
            let i = slot as usize;
            (i < p.params.len() && matches!(p.params[i].ty, Type::Entity(Some(_)))).then_some(i)
        };
        let mut exprs = Vec::new();
        walk_stmts(&p.body, &mut exprs);
        for e in exprs {
            let Expr::Call { proc, args } = e else {
                continue;
            };
            if program.procs[*proc as usize].kind != ir::ProcKind::Resolve {
                continue;
            }
            let args: Vec<Arg> = args
                .iter()
                .map(|x| match x {
                    Expr::Field { base, field } => match base.as_ref() {
                        Expr::Local(s) => {
                            piece(*s).map_or(Arg::Other, |i| Arg::Stat(i, field.clone()))
                        }
                        _ => Arg::Other,
                    },
                    _ => Arg::Other,
                })
                .collect();
            let mut pieces: Vec<usize> = args
                .iter()
                .filter_map(|x| match x {
                    Arg::Stat(i, _) => Some(*i),
                    Arg::Other => None,
                })
                .collect();
            pieces.sort();
            pieces.dedup();
            if pieces.len() == 2 {
                out.push(Call {
                    action: a as u32,
                    resolution: *proc,
                    acting: pieces[0],
                    target: pieces[1],
                    args,
                });
            }
        }
    }
    out
}

/// The unit entities a parameter of kind `ty` can be.
fn units_of(program: &Program, ty: &Type) -> Vec<u32> {
    let Type::Entity(Some(k)) = ty else {
        return Vec::new();
    };
    program
        .entities
        .iter()
        .enumerate()
        .filter(|(_, e)| e.category == ir::Category::Unit && e.kind == Some(*k))
        .map(|(i, _)| i as u32)
        .collect()
}

/// The modifier cases of a call: `none`, then each yes/no parameter the action computes.
pub fn cases(program: &Program, c: &Call) -> Vec<String> {
    let r = &program.procs[c.resolution as usize];
    let mut v = vec!["none".to_string()];
    for (i, a) in c.args.iter().enumerate() {
        if matches!(a, Arg::Other) && r.params.get(i).is_some_and(|p| p.ty == Type::Bool) {
            v.push(r.params[i].name.clone());
        }
    }
    v
}

fn unit_label(program: &Program, e: u32) -> String {
    let d = &program.entities[e as usize];
    d.title.clone().unwrap_or_else(|| d.name.clone())
}

/// The exact outcomes of one call for every pairing, in the cases asked for (all when empty).
pub fn rows(program: &Program, c: &Call, only: &[String]) -> Result<Vec<Row>, String> {
    let action = &program.procs[c.action as usize];
    let r = &program.procs[c.resolution as usize];
    let mut names = Vec::new();
    crate::cmd::prob::collect_outcomes(program, &r.body, &mut names, 0);
    let actors = units_of(program, &action.params[c.acting].ty);
    let targets = units_of(program, &action.params[c.target].ty);
    let mut out = Vec::new();
    // One exact session for the whole matrix: pairings that pass the same arguments (units
    // with the same stats) are answered once, and pools are shared between pairings.
    let no_assumptions = Assumptions::default();
    let session = Session::new(program, &no_assumptions, DEFAULT_LIMIT);
    for case in cases(program, c) {
        if !only.is_empty() && !only.contains(&case) {
            continue;
        }
        for &x in &actors {
            for &y in &targets {
                let mut args = Vec::new();
                let mut unknown = None;
                for (i, a) in c.args.iter().enumerate() {
                    let param = &r.params[i];
                    let v = match a {
                        Arg::Stat(p, field) => {
                            let e = if *p == c.acting { x } else { y };
                            match program.entities[e as usize].field(field) {
                                Some(Value::Unknown(u)) => {
                                    unknown = Some(program.unknowns[*u as usize].name.clone());
                                    Val::Unit
                                }
                                Some(v) => Val::from_const(v).unwrap_or(Val::Unit),
                                None => Val::Unit,
                            }
                        }
                        Arg::Other if param.ty == Type::Bool => Val::Bool(param.name == case),
                        Arg::Other => match (&param.default, param.range) {
                            (Some(d), _) => Val::from_const(d).unwrap_or(Val::Unit),
                            (None, Some((lo, _))) => Val::Int(lo),
                            (None, None) => {
                                return Err(format!(
                                    "{} passes {} a value that is neither a stat of its pieces nor yes/no, and {} has no default",
                                    action.name, r.name, param.name
                                ));
                            }
                        },
                    };
                    args.push(v);
                }
                if let Some(u) = unknown {
                    out.push(Row {
                        case: case.clone(),
                        acting: x,
                        target: y,
                        outcomes: Vec::new(),
                        unknown: Some(u),
                    });
                    continue;
                }
                let dist = session.distribution(c.resolution, args).map_err(|e| {
                    format!(
                        "{} for {} against {}: {e}",
                        r.name,
                        unit_label(program, x),
                        unit_label(program, y)
                    )
                })?;
                let mut keys: Vec<OutcomeKey> = dist.keys().collect();
                for n in &names {
                    let k = OutcomeKey::Named(n.clone());
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
                let keys = crate::cmd::prob::order(program, c.resolution, keys);
                let outcomes = keys
                    .iter()
                    .map(|k| {
                        let (n, d) = dist.probability(k);
                        (k.show_of(program, c.resolution), n, d)
                    })
                    .collect();
                out.push(Row {
                    case: case.clone(),
                    acting: x,
                    target: y,
                    outcomes,
                    unknown: None,
                });
            }
        }
    }
    Ok(out)
}

fn decimal(n: &BigUint, d: &BigUint) -> f64 {
    match (n.to_f64(), d.to_f64()) {
        (Some(a), Some(b)) if b > 0.0 => a / b,
        _ => 0.0,
    }
}

/// How a call reads, for headings: `attack: acc_check(firer.acc, target.def, …)`.
pub fn describe(program: &Program, c: &Call) -> String {
    let action = &program.procs[c.action as usize];
    let r = &program.procs[c.resolution as usize];
    let args: Vec<String> = c
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| match a {
            Arg::Stat(p, f) => format!("{}.{f}", action.params[*p].name),
            Arg::Other => r.params.get(i).map_or("…".into(), |p| p.name.clone()),
        })
        .collect();
    format!("{}: {}({})", action.name, r.name, args.join(", "))
}

pub fn run(args: Args) -> u8 {
    let compiled = match report::load_ruleset(&args.ruleset) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let program = &compiled.program;
    let calls = calls(program);
    let mut blocks = Vec::new();
    for c in &calls {
        let known = cases(program, c);
        if let Some(bad) = args.cases.iter().find(|k| !known.contains(k)) {
            report::error(
                report::Kind::Usage,
                format!(
                    "--case {bad}: {} has the cases {}",
                    describe(program, c),
                    known.join(", ")
                ),
            );
            return report::EXIT_USAGE;
        }
        match rows(program, c, &args.cases) {
            Ok(r) => blocks.push((c, r)),
            Err(e) => {
                report::error(report::Kind::Run, e);
                return report::EXIT_FINDINGS;
            }
        }
    }
    if args.json {
        let mut all = Vec::new();
        for (c, rows) in &blocks {
            for row in rows {
                let outcomes: Vec<_> = row
                    .outcomes
                    .iter()
                    .map(|(o, n, d)| serde_json::json!({"outcome": o, "probability": format!("{n}/{d}"), "decimal": decimal(n, d)}))
                    .collect();
                let flags: Vec<_> = row
                    .flags()
                    .iter()
                    .map(|(o, f)| serde_json::json!({"outcome": o, "flag": f}))
                    .collect();
                let mut v = serde_json::json!({
                    "action": program.procs[c.action as usize].name,
                    "resolution": program.procs[c.resolution as usize].name,
                    "case": row.case,
                    "acting": program.entities[row.acting as usize].name,
                    "target": program.entities[row.target as usize].name,
                    "outcomes": outcomes,
                    "flags": flags,
                });
                if let Some(u) = &row.unknown {
                    v["unknown"] = serde_json::json!(u);
                }
                all.push(v);
            }
        }
        report::print_json(&serde_json::json!({"ruleset": program.name, "matchups": all}));
    } else if args.csv {
        println!("action,resolution,case,acting,target,outcome,probability,decimal,flag");
        for (c, rows) in &blocks {
            let a = &program.procs[c.action as usize].name;
            let r = &program.procs[c.resolution as usize].name;
            for row in rows {
                let x = &program.entities[row.acting as usize].name;
                let y = &program.entities[row.target as usize].name;
                if let Some(u) = &row.unknown {
                    println!("{a},{r},{},{x},{y},,,,unknown {u}", row.case);
                }
                let flags = row.flags();
                for (o, n, d) in &row.outcomes {
                    let flag = flags.iter().find(|(f, _)| f == o).map_or("", |(_, f)| f);
                    println!(
                        "{a},{r},{},{x},{y},{o},{n}/{d},{:.6},{flag}",
                        row.case,
                        decimal(n, d)
                    );
                }
            }
        }
    } else {
        print_human(program, &blocks);
    }
    EXIT_OK
}

fn print_human(program: &Program, blocks: &[(&Call, Vec<Row>)]) {
    if blocks.is_empty() {
        println!(
            "{}: no action calls a resolution with stats of two of its pieces",
            program.name
        );
        return;
    }
    for (c, rows) in blocks {
        let action = &program.procs[c.action as usize];
        println!(
            "{} — {}  (rows: {}, columns: {})",
            program.name,
            describe(program, c),
            action.params[c.acting].name,
            action.params[c.target].name
        );
        let mut case_names: Vec<&str> = rows.iter().map(|r| r.case.as_str()).collect();
        case_names.dedup();
        let Some(first) = rows.iter().find(|r| !r.outcomes.is_empty()) else {
            continue;
        };
        let shown = first.outcomes[0].0.clone();
        let mut targets: Vec<u32> = rows.iter().map(|r| r.target).collect();
        targets.sort();
        targets.dedup();
        let mut actors: Vec<u32> = rows.iter().map(|r| r.acting).collect();
        actors.sort();
        actors.dedup();
        let w0 = actors
            .iter()
            .map(|&a| unit_label(program, a).chars().count())
            .max()
            .unwrap_or(8)
            .max(8);
        let w = targets
            .iter()
            .map(|&t| unit_label(program, t).chars().count())
            .max()
            .unwrap_or(6)
            .max(7);
        for case in case_names {
            let title = if case == "none" {
                "no modifier".to_string()
            } else {
                format!("{case} = yes")
            };
            println!("  case {title}: chance of {shown}");
            let mut head = format!("    {:<w0$}", "");
            for &t in &targets {
                head.push_str(&format!("  {:>w$}", unit_label(program, t)));
            }
            println!("{head}");
            for &a in &actors {
                let mut line = format!("    {:<w0$}", unit_label(program, a));
                for &t in &targets {
                    let cell = rows
                        .iter()
                        .find(|r| r.case == case && r.acting == a && r.target == t)
                        .map_or("".to_string(), |r| match (&r.unknown, r.outcomes.first()) {
                            (Some(_), _) => "?".to_string(),
                            (None, Some((_, n, d))) if n.is_zero() => "never".to_string(),
                            (None, Some((_, n, d))) if n == d => "always".to_string(),
                            (None, Some((_, n, d))) => format!("{:.1}%", 100.0 * decimal(n, d)),
                            (None, None) => String::new(),
                        });
                    line.push_str(&format!("  {cell:>w$}"));
                }
                println!("{line}");
            }
        }
        let flagged: Vec<String> = rows
            .iter()
            .flat_map(|r| {
                r.flags()
                    .into_iter()
                    .map(move |(o, f)| (r.case.clone(), r.acting, r.target, o, f))
            })
            .map(|(case, a, t, o, f)| {
                let when = if case == "none" {
                    String::new()
                } else {
                    format!(" ({case})")
                };
                format!(
                    "{} against {}{when}: {o} {}",
                    unit_label(program, a),
                    unit_label(program, t),
                    if f == "impossible" {
                        "is impossible"
                    } else {
                        "is certain"
                    }
                )
            })
            .collect();
        let unknown: Vec<String> = rows
            .iter()
            .filter_map(|r| r.unknown.as_ref().map(|u| (r.acting, r.target, u)))
            .map(|(a, t, u)| {
                format!(
                    "{} against {}: rests on the unknown {u}",
                    unit_label(program, a),
                    unit_label(program, t)
                )
            })
            .collect();
        if !flagged.is_empty() {
            println!("  flagged ({}):", flagged.len());
            for f in &flagged {
                println!("    {f}");
            }
        }
        let mut unknown = unknown;
        unknown.sort();
        unknown.dedup();
        for u in &unknown {
            println!("  {u}");
        }
    }
}

/// The pairings for which an outcome of a resolution an action calls can never happen
/// when no modifier applies: `check` reports each as a lint. (call, acting unit, outcome,
/// targets)
pub fn impossible(program: &Program) -> Vec<(Call, u32, String, Vec<u32>)> {
    let mut out = Vec::new();
    for c in calls(program) {
        let Ok(rows) = rows(program, &c, &["none".to_string()]) else {
            continue;
        };
        let mut actors: Vec<u32> = rows.iter().map(|r| r.acting).collect();
        actors.dedup();
        for a in actors {
            let mut by_outcome: Vec<(String, Vec<u32>)> = Vec::new();
            for r in rows.iter().filter(|r| r.acting == a) {
                for (o, n, _) in &r.outcomes {
                    if n.is_zero() {
                        match by_outcome.iter_mut().find(|(x, _)| x == o) {
                            Some((_, v)) => v.push(r.target),
                            None => by_outcome.push((o.clone(), vec![r.target])),
                        }
                    }
                }
            }
            for (o, targets) in by_outcome {
                out.push((c.clone(), a, o, targets));
            }
        }
    }
    out
}

/// `sand::lint::impossible-matchup` for each unit that can never get an outcome against
/// some targets, anchored on the action's first line.
pub fn lints(compiled: &sandtable_compiler::Compiled) -> Vec<sandtable_compiler::Diagnostic> {
    let program = &compiled.program;
    let mut out = Vec::new();
    for (c, a, outcome, targets) in impossible(program) {
        let action = &program.procs[c.action as usize];
        let Some(file) = compiled
            .db
            .ids()
            .find(|&id| compiled.db.file(id).name == action.file)
        else {
            continue;
        };
        let text = &compiled.db.file(file).text;
        let start: usize = text
            .split_inclusive('\n')
            .take((action.line as usize).saturating_sub(1))
            .map(str::len)
            .sum();
        let line = text[start..].lines().next().unwrap_or("");
        let lead = line.len() - line.trim_start().len();
        let span = sandtable_grammar::ast::Span::new(start + lead, start + line.trim_end().len());
        let names: Vec<String> = targets.iter().map(|&t| unit_label(program, t)).collect();
        let stats: Vec<String> = c
            .args
            .iter()
            .filter_map(|x| match x {
                Arg::Stat(p, f) => {
                    let e = if *p == c.acting { a } else { targets[0] };
                    let v = program.entities[e as usize].field(f)?;
                    Some(format!(
                        "{}.{f} = {}",
                        action.params[*p].name,
                        Val::from_const(v)?.show(program)
                    ))
                }
                Arg::Other => None,
            })
            .collect();
        out.push(
            sandtable_compiler::Diagnostic::new(
                sandtable_compiler::Code::LintImpossibleMatchup,
                file,
                span,
                format!(
                    "in `{}`, {} can never get `{outcome}` from `{}` against {} (with no modifier; e.g. {})",
                    action.name,
                    unit_label(program, a),
                    program.procs[c.resolution as usize].name,
                    names.join(", "),
                    stats.join(", ")
                ),
            )
            .label("pits two units' stats against each other")
            .help(
                "If the book means it, nothing to do (`--allow sand::lint::impossible-matchup`); else check the stats. `sandtable matchups` shows the whole table.",
            ),
        );
    }
    out
}
