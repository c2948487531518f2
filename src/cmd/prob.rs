//! `sandtable prob`: the exact outcome distribution of a resolution (or a Monte Carlo
//! estimate with `--samples`).

use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use sandtable_compiler::ir::{self, Program};
use sandtable_runtime::exact::{DEFAULT_LIMIT, Session, distribution};
use sandtable_runtime::outcomes::Outcomes;
use sandtable_runtime::{OutcomeKey, Val, montecarlo};

use crate::report::{self, EXIT_FINDINGS, EXIT_OK};

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  sandtable prob rules/platoon fire --set fire_modifier=4 --set target_modifier=0\n  \
sandtable prob rules/dinky_dau shooting --set dice=12 --set cover=medium_cover --set firer_pinned=false --set point_blank=false --set save_cover=light_medium --json\n  \
sandtable prob rules/platoon fire --set fire_modifier=4 --set target_modifier=0 --samples 100000 --seed 7"
)]
pub struct Args {
    #[command(flatten)]
    query: crate::report::QueryArgs,
    /// Print JSON: {"resolution", "inputs", "outcomes": [{"outcome", "probability", "decimal", "unreduced"}], "mean"}
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV: outcome,probability,decimal
    #[arg(long)]
    csv: bool,
    /// Estimate by sampling N resolutions instead of exact enumeration (95% Wilson intervals)
    #[arg(long, value_name = "N")]
    samples: Option<u64>,
    /// Seed for --samples
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Bound on exact enumeration work before giving up with the estimated size
    #[arg(long, default_value_t = DEFAULT_LIMIT)]
    limit: u64,
    /// Engine for --samples: the JIT (default; procedures it cannot compile fall back to the
    /// interpreter) or the interpreter. Both give the same counts for the same seed.
    #[arg(long, value_enum, default_value_t = crate::report::BackendArg::Jit)]
    backend: crate::report::BackendArg,
    /// Compute N times and report the mean wall time of one computation (on stderr): from
    /// scratch each time, and asked again of one session that keeps its answers
    #[arg(long, value_name = "N")]
    repeat: Option<u32>,
}

pub fn run(args: Args) -> u8 {
    match run_inner(args) {
        Ok(()) => EXIT_OK,
        Err(code) => code,
    }
}

fn run_inner(args: Args) -> Result<(), u8> {
    let prepared = report::prepare(&args.query)?;
    let program = &prepared.compiled.program;
    let proc = prepared.proc;
    let assumptions = &prepared.assumptions;
    let call_args = prepared.args.clone();
    let p = &program.procs[proc as usize];
    let inputs = prepared.inputs();
    // A resolution whose results are lengths is shown in the ruleset's unit, never in the
    // tenths of a millimetre it computes in: outcomes, values and the mean.
    let unit = p.result_length.then(|| length_unit(program));

    if let Some(n) = args.samples {
        let backend = crate::report::backend(program, assumptions, args.backend);
        let mut bar = report::Progress::new(n, "samples");
        let est = montecarlo::sample_with(&backend, proc, &call_args, n, args.seed, &mut |i| {
            bar.set(i)
        })
        .map_err(|e| fail(e.to_string()))?;
        let rows: Vec<(OutcomeKey, u64)> =
            order(program, proc, est.counts.keys().cloned().collect())
                .into_iter()
                .map(|k| {
                    let c = est.counts[&k];
                    (k, c)
                })
                .collect();
        if args.json {
            let outcomes: Vec<_> = rows
                .iter()
                .map(|(k, c)| {
                    let (lo, hi) = montecarlo::wilson(*c, n);
                    serde_json::json!({"outcome": k.show_of(program, proc), "count": c, "estimate": *c as f64 / n as f64, "ci95": [lo, hi]})
                })
                .collect();
            let mean = est
                .mean()
                .map(|m| m / unit.map_or(1.0, |(_, per)| per as f64));
            let mut out = serde_json::json!({"resolution": p.name, "inputs": inputs_json(&inputs), "samples": n, "seed": args.seed, "outcomes": outcomes, "mean": mean});
            if let Some((u, _)) = unit {
                out["unit"] = serde_json::json!(u);
            }
            report::print_json(&out);
        } else if args.csv {
            println!("outcome,count,estimate,ci95_low,ci95_high");
            for (k, c) in &rows {
                let (lo, hi) = montecarlo::wilson(*c, n);
                println!(
                    "{},{c},{:.6},{lo:.6},{hi:.6}",
                    csv_field(&k.show_of(program, proc)),
                    *c as f64 / n as f64
                );
            }
        } else {
            header(program, proc, &inputs);
            println!("Monte Carlo, {n} samples, seed {}:", args.seed);
            let w = rows
                .iter()
                .map(|(k, _)| k.show_of(program, proc).chars().count())
                .max()
                .unwrap_or(7)
                .max(7);
            println!("  {:<w$}  {:>9}  95% interval", "outcome", "estimate");
            for (k, c) in &rows {
                let (lo, hi) = montecarlo::wilson(*c, n);
                println!(
                    "  {:<w$}  {:>8.3}%  {:.3}% – {:.3}%",
                    k.show_of(program, proc),
                    100.0 * *c as f64 / n as f64,
                    100.0 * lo,
                    100.0 * hi
                );
            }
            if let Some(m) = est.mean() {
                match unit {
                    Some((u, per)) => println!("  mean ≈ {:.4}{u}", m / per as f64),
                    None => println!("  mean ≈ {m:.4}"),
                }
            }
        }
        return Ok(());
    }

    // One session answers the query (and the repeats that ask it again).
    let session = Session::new(program, assumptions, args.limit);
    if let Some(n) = args.repeat.filter(|n| *n > 0) {
        // From scratch: a fresh session each time, nothing remembered between repeats.
        let started = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(
                distribution(program, assumptions, args.limit, proc, call_args.clone())
                    .map_err(|e| fail(e.to_string()))?,
            );
        }
        let scratch = started.elapsed().as_secs_f64() / f64::from(n);
        // Kept: the same query asked again of one session, which remembers its answer.
        session
            .distribution(proc, call_args.clone())
            .map_err(|e| fail(e.to_string()))?;
        let started = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(
                session
                    .distribution(proc, call_args.clone())
                    .map_err(|e| fail(e.to_string()))?,
            );
        }
        let kept = started.elapsed().as_secs_f64() / f64::from(n);
        eprintln!(
            "computed {n} times: {:.2} µs per computation from scratch",
            scratch * 1e6
        );
        eprintln!(
            "asked {n} times of one session: {:.3} µs per computation kept",
            kept * 1e6
        );
    }
    let dist = session
        .distribution(proc, call_args)
        .map_err(|e| fail(e.to_string()))?;
    // Outcomes the resolution names but the dice can never reach are listed at 0: that is
    // news for a rules writer.
    let mut all: Vec<OutcomeKey> = dist.keys().collect();
    let mut named = Vec::new();
    collect_outcomes(program, &program.procs[proc as usize].body, &mut named, 0);
    for n in named {
        let k = OutcomeKey::Named(n);
        if !all.contains(&k) {
            all.push(k);
        }
    }
    let keys = order(program, proc, all);
    let rows: Vec<(OutcomeKey, BigUint, BigUint)> = keys
        .iter()
        .map(|k| {
            let (n, d) = dist.probability(k);
            (k.clone(), n, d)
        })
        .collect();
    let mean = mean(&dist, unit.map_or(1, |(_, per)| per));
    if args.json {
        let outcomes: Vec<_> = rows
            .iter()
            .map(|(k, n, d)| {
                let mut o = serde_json::json!({
                    "outcome": k.show_of(program, proc),
                    "probability": format!("{n}/{d}"),
                    "decimal": ratio(n, d),
                    // Outcomes the dice never reach are listed too (as in the text and CSV),
                    // with weight 0.
                    "unreduced": format!(
                        "{}/{}",
                        dist.weight(k).map(|w| w.into_owned()).unwrap_or_default(),
                        dist.total()
                    ),
                });
                match (k.numeric(), unit) {
                    (Some(v), Some((_, per))) => {
                        o["value"] = serde_json::json!(v as f64 / per as f64)
                    }
                    (Some(v), None) => o["value"] = serde_json::json!(v),
                    _ => {}
                }
                o
            })
            .collect();
        let mut out = serde_json::json!({"resolution": p.name, "inputs": inputs_json(&inputs), "outcomes": outcomes});
        if let Some((mn, md)) = &mean {
            out["mean"] = serde_json::json!(format!("{mn}/{md}"));
            out["mean_decimal"] = serde_json::json!(ratio_str(mn, md));
        }
        if let Some((u, _)) = unit {
            out["unit"] = serde_json::json!(u);
        }
        report::print_json(&out);
    } else if args.csv {
        println!("outcome,probability,decimal");
        for (k, n, d) in &rows {
            println!(
                "{},{n}/{d},{}",
                csv_field(&k.show_of(program, proc)),
                ratio(n, d)
            );
        }
    } else {
        header(program, proc, &inputs);
        let shown: Vec<(String, String, String)> = rows
            .iter()
            .map(|(k, n, d)| {
                (
                    k.show_of(program, proc),
                    format!("{n}/{d}"),
                    format!("{:.4}%", 100.0 * ratio(n, d)),
                )
            })
            .collect();
        let w0 = shown
            .iter()
            .map(|r| r.0.chars().count())
            .max()
            .unwrap_or(7)
            .max(7);
        let w1 = shown.iter().map(|r| r.1.len()).max().unwrap_or(11).max(11);
        println!(
            "  {:<w0$}  {:<w1$}  {:>9}",
            "outcome", "probability", "percent"
        );
        for (a, b, c) in &shown {
            println!("  {a:<w0$}  {b:<w1$}  {c:>9}");
        }
        if let Some((mn, md)) = &mean {
            let u = unit.map_or("", |(u, _)| u);
            println!("  mean = {mn}/{md}{u} ≈ {:.4}{u}", ratio_str(mn, md));
        }
    }
    Ok(())
}

fn fail(msg: impl std::fmt::Display) -> u8 {
    report::error(report::Kind::Run, msg);
    EXIT_FINDINGS
}

fn header(program: &Program, proc: u32, inputs: &[(String, String)]) {
    let p = &program.procs[proc as usize];
    println!(
        "{} — {}{}",
        program.name,
        p.name,
        sandtable_runtime::explain::cite(program, &p.cite)
    );
    if !inputs.is_empty() {
        println!(
            "  {}",
            inputs
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

fn inputs_json(inputs: &[(String, String)]) -> serde_json::Value {
    serde_json::Value::Object(
        inputs
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect(),
    )
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Named outcomes in the order the resolution lists them; numbers ascending.
pub(crate) fn order(program: &Program, proc: u32, mut keys: Vec<OutcomeKey>) -> Vec<OutcomeKey> {
    let mut names = Vec::new();
    collect_outcomes(program, &program.procs[proc as usize].body, &mut names, 0);
    keys.sort_by_key(|k| match k {
        OutcomeKey::Named(n) => (
            0,
            names.iter().position(|x| x == n).unwrap_or(usize::MAX),
            i64::MIN,
        ),
        OutcomeKey::Value(Val::Int(v)) => (1, 0, *v),
        _ => (2, 0, 0),
    });
    keys
}

/// Outcome names in the order the resolution (and a resolution it hands its result to) lists
/// them.
pub(crate) fn collect_outcomes(
    program: &Program,
    body: &[ir::Stmt],
    out: &mut Vec<ir::Str>,
    depth: usize,
) {
    for s in body {
        match s {
            ir::Stmt::Result(ir::Expr::Call { proc, .. }) if depth < 8 => {
                collect_outcomes(program, &program.procs[*proc as usize].body, out, depth + 1)
            }
            ir::Stmt::Outcome(o) => out.push(o.clone()),
            ir::Stmt::Bands { arms, .. } => {
                for a in arms {
                    collect_outcomes(program, &a.body, out, depth);
                    if let Some(o) = &a.outcome {
                        out.push(o.clone());
                    }
                }
            }
            ir::Stmt::If {
                then, otherwise, ..
            } => {
                collect_outcomes(program, then, out, depth);
                collect_outcomes(program, otherwise, out, depth);
            }
            ir::Stmt::For { body, .. }
            | ir::Stmt::Repeat { body, .. }
            | ir::Stmt::Choose { body, .. } => collect_outcomes(program, body, out, depth),
            _ => {}
        }
    }
}

/// The ruleset's length unit and the tenths of a millimetre in one of it (millimetres when
/// the ruleset names none).
fn length_unit(program: &Program) -> (&'static str, u64) {
    let (u, per) = ir::LENGTH_UNITS
        .iter()
        .find(|(u, _)| Some(*u) == program.length_unit.as_deref())
        .unwrap_or(&("mm", 10));
    (u, *per as u64)
}

/// Mean of a numeric distribution divided by `scale`, as a reduced fraction (negative means
/// are written with a leading minus on the numerator).
fn mean(d: &Outcomes, scale: u64) -> Option<(String, BigUint)> {
    let mut pos = BigUint::zero();
    let mut neg = BigUint::zero();
    for (k, w) in d.iter() {
        let v = k.numeric()?;
        if v >= 0 {
            pos += w.as_ref() * BigUint::from(v as u64);
        } else {
            neg += w.as_ref() * BigUint::from(v.unsigned_abs());
        }
    }
    let (sign, num) = if pos >= neg {
        ("", &pos - &neg)
    } else {
        ("-", &neg - &pos)
    };
    let total = d.total() * BigUint::from(scale.max(1));
    let g = num_integer::Integer::gcd(&num, &total);
    let g = if g.is_zero() { BigUint::from(1u32) } else { g };
    Some((format!("{sign}{}", &num / &g), &total / &g))
}

/// n/d as a float, exact in shape even for denominators beyond f64's range.
fn ratio(n: &BigUint, d: &BigUint) -> f64 {
    let shift = d.bits().saturating_sub(1000);
    let (n, d) = (n >> shift, d >> shift);
    let v = n.to_f64().unwrap_or(0.0) / d.to_f64().unwrap_or(1.0);
    if v.is_finite() { v } else { 0.0 }
}

// `ratio` takes the mean's numerator as text; parse it back for the decimal.
fn ratio_str(n: &str, d: &BigUint) -> f64 {
    let neg = n.starts_with('-');
    let v: BigUint = n.trim_start_matches('-').parse().unwrap_or_default();
    let r = ratio(&v, d);
    if neg { -r } else { r }
}
