//! `sandtable bench --suite`: every speed measure the project tracks, in one run, each against
//! its reference measured in the same run (the same machine load for both sides of a ratio).
//!
//! Resolutions and exact answers are timed in this process; playouts run as `sim --json`
//! children of this same binary, so each row's `command` reproduces it exactly.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use num_bigint::BigUint;
use sandtable_runtime::exact::{DEFAULT_LIMIT, Session, distribution};
use serde::Serialize;

use crate::cmd::bench::{self, Reference};
use crate::report::{self, EXIT_FINDINGS, EXIT_OK, Kind, QueryArgs};

pub struct Options {
    pub root: PathBuf,
    pub quick: bool,
    pub icepool: Option<PathBuf>,
    pub seed: u64,
    pub json: bool,
}

/// One measure: sandtable's figure, its reference's, and the issue's goal for their ratio.
#[derive(Serialize)]
struct Row {
    id: String,
    what: String,
    /// The command that measures this row on its own.
    command: String,
    unit: &'static str,
    sandtable: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reference: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reference_name: Option<String>,
    /// How many times faster sandtable is than the reference (below 1: slower).
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    goal: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    met: Option<bool>,
}

impl Row {
    /// `faster` says whether a larger figure is better (a rate) or a smaller one (a time).
    #[allow(clippy::too_many_arguments)]
    fn new(
        id: &str,
        what: String,
        command: String,
        unit: &'static str,
        sandtable: f64,
        reference: Option<(f64, &str)>,
        faster: bool,
        goal: Option<f64>,
    ) -> Row {
        let ratio = reference.map(|(r, _)| if faster { sandtable / r } else { r / sandtable });
        Row {
            id: id.into(),
            what,
            command,
            unit,
            sandtable,
            reference: reference.map(|(r, _)| r),
            reference_name: reference.map(|(_, n)| n.to_string()),
            ratio,
            goal: goal.filter(|_| ratio.is_some()),
            met: goal.zip(ratio).map(|(g, r)| r >= g),
        }
    }
}

#[derive(Serialize)]
struct Suite {
    build: &'static str,
    quick: bool,
    seed: u64,
    measures: Vec<Row>,
}

/// How long each part runs: the full sizes are those the README's speed section reports.
struct Sizes {
    fire: u64,
    pool: u64,
    flank_games: u64,
    td_games: u64,
    exact_rounds: u32,
    exact_repeats: u32,
    icepool_rounds: u32,
    icepool_repeats: u32,
}

const FULL: Sizes = Sizes {
    fire: 3_500_000,
    pool: 1_400_000,
    flank_games: 2000,
    td_games: 20,
    exact_rounds: 11,
    exact_repeats: 200,
    icepool_rounds: 5,
    icepool_repeats: 100,
};

const QUICK: Sizes = Sizes {
    fire: 70_000,
    pool: 70_000,
    flank_games: 14,
    td_games: 2,
    exact_rounds: 2,
    exact_repeats: 5,
    icepool_rounds: 2,
    icepool_repeats: 5,
};

/// The resolutions timed against a hand-written reference: (id, what, ruleset folder,
/// resolution, parameters, reference, its CLI name, goal for the JIT loop).
type ResolutionCase = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    Reference,
    &'static str,
    f64,
);

const RESOLUTIONS: [ResolutionCase; 2] = [
    (
        "platoon_fire",
        "Platoon fire (7.a)",
        "rules/platoon",
        "fire",
        &["fire_modifier=4", "target_modifier=0"],
        Reference::PlatoonFire,
        "platoon-fire",
        0.8,
    ),
    (
        "dinky_dau_pool",
        "Dinky Dau 12-die pool (5.1)",
        "rules/dinky_dau",
        "shooting",
        &[
            "dice=12",
            "cover=medium_cover",
            "firer_pinned=false",
            "point_blank=false",
            "save_cover=light_medium",
        ],
        Reference::DinkyDauShooting,
        "dinky-dau-shooting",
        0.8,
    ),
];

/// The playouts timed against a hand-written one: (id, what, ruleset, scenario, reference).
const PLAYOUTS: [(&str, &str, &str, &str, &str); 2] = [
    (
        "platoon_flank",
        "Platoon Protecting the Flank",
        "rules/platoon",
        "protecting-the-flank",
        "platoon-flank",
    ),
    (
        "plastic_total_destruction",
        "Plastic Battle Total Destruction",
        "rules/plastic_battle",
        "total-destruction",
        "plastic-total-destruction",
    ),
];

/// The exact queries of `runtime/benches/queries.sand`, as `compare_icepool.sh` times them.
const QUERIES: [&str; 4] = [
    "opposed_d10",
    "hit_save_pool",
    "sum_100d6",
    "highest_3_of_10d6",
];
const QUERY_FILE: &str = "runtime/benches/queries.sand";
const ICEPOOL_SCRIPT: &str = "runtime/benches/icepool_queries.py";

/// The issue's goals: playouts at half the hand-written speed, the JIT 1.5× the interpreter
/// on playouts, exact answers 100× icepool.
const PLAYOUT_GOAL: f64 = 0.5;
const JIT_PLAYOUT_GOAL: f64 = 1.5;
const EXACT_GOAL: f64 = 100.0;

pub fn run(o: &Options) -> u8 {
    match suite(o) {
        Ok(s) => {
            if o.json {
                report::print_json(&s);
            } else {
                print(&s);
            }
            EXIT_OK
        }
        Err(code) => code,
    }
}

fn suite(o: &Options) -> Result<Suite, u8> {
    let sizes = if o.quick { &QUICK } else { &FULL };
    for need in ["rules/platoon", "rules/plastic_battle", QUERY_FILE] {
        if !o.root.join(need).exists() {
            report::error(
                Kind::Usage,
                format!(
                    "--suite needs `{}`: run it from the repository, or give --root DIR",
                    o.root.join(need).display()
                ),
            );
            return Err(report::EXIT_USAGE);
        }
    }
    let steps = (RESOLUTIONS.len() + 2 * PLAYOUTS.len() + QUERIES.len()) as u64;
    let mut progress = report::Progress::at_least(steps, "measures", 1);
    let mut done = 0;
    let mut rows = Vec::new();
    for case in RESOLUTIONS {
        rows.extend(resolution(o, sizes, case)?);
        done += 1;
        progress.set(done);
    }
    for case in PLAYOUTS {
        rows.extend(playouts(o, sizes, case, &mut || {
            done += 1;
            progress.set(done);
        })?);
    }
    for q in QUERIES {
        rows.push(exact(o, sizes, q)?);
        done += 1;
        progress.set(done);
    }
    Ok(Suite {
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        quick: o.quick,
        seed: o.seed,
        measures: rows,
    })
}

/// `rel` under the root, written as given when the root is the working directory (so the
/// rows' commands read as a user would type them).
fn at(root: &Path, rel: &str) -> PathBuf {
    if root == Path::new(".") {
        PathBuf::from(rel)
    } else {
        root.join(rel)
    }
}

fn query(root: &Path, ruleset: &str, resolution: &str, sets: &[&str]) -> QueryArgs {
    QueryArgs {
        ruleset: at(root, ruleset),
        resolution: resolution.into(),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        assumes: Vec::new(),
        assumption_files: Vec::new(),
    }
}

fn run_error(e: impl std::fmt::Display) -> u8 {
    report::error(Kind::Run, e);
    EXIT_FINDINGS
}

fn resolution(o: &Options, sizes: &Sizes, case: ResolutionCase) -> Result<Vec<Row>, u8> {
    let (id, what, ruleset, name, sets, reference, ref_name, goal) = case;
    let n = if id == "platoon_fire" {
        sizes.fire
    } else {
        sizes.pool
    };
    let q = query(&o.root, ruleset, name, sets);
    let p = report::prepare(&q)?;
    let f = bench::measure(
        n,
        o.seed,
        Some(reference),
        name,
        &p.compiled.program,
        p.proc,
        &p.args,
        &p.assumptions,
    )
    .map_err(run_error)?;
    let command = format!(
        "sandtable bench {} {name}{} --reference {ref_name} -n {n} --seed {}",
        q.ruleset.display(),
        sets.iter()
            .map(|s| format!(" --set {s}"))
            .collect::<String>(),
        o.seed
    );
    let reference = f.reference_s.map(|s| (f.rate(s), "hand-written Rust"));
    Ok(vec![
        Row::new(
            &format!("{id}_jit_loop"),
            format!("{what}: JIT loop"),
            command.clone(),
            "resolutions/s",
            f.rate(f.loop_s),
            reference,
            true,
            Some(goal),
        ),
        Row::new(
            &format!("{id}_jit"),
            format!("{what}: JIT, one call each"),
            command.clone(),
            "resolutions/s",
            f.rate(f.jit_s),
            reference,
            true,
            None,
        ),
        Row::new(
            &format!("{id}_jit_over_interp"),
            format!("{what}: JIT loop / interpreter"),
            command,
            "resolutions/s",
            f.rate(f.loop_s),
            Some((f.rate(f.interp_s), "interpreter")),
            true,
            None,
        ),
    ])
}

/// One `sim --json` child of this binary; its playouts/s and the reference's.
fn sim(
    o: &Options,
    ruleset: &str,
    scenario: &str,
    reference: &str,
    n: u64,
    backend: &str,
) -> Result<(f64, f64, String), u8> {
    let rules = at(&o.root, ruleset);
    let seed = o.seed.to_string();
    let n = n.to_string();
    let args = [
        "sim",
        &rules.to_string_lossy(),
        "--scenario",
        scenario,
        "-n",
        &n,
        "--seed",
        &seed,
        "--jobs",
        "1",
        "--backend",
        backend,
        "--reference",
        reference,
        "--json",
    ]
    .map(String::from);
    let command = format!("sandtable {}", args.join(" "));
    let exe = std::env::current_exe().map_err(|e| run_error(format!("cannot find myself: {e}")))?;
    let out = Command::new(exe)
        .args(&args)
        .output()
        .map_err(|e| run_error(format!("`{command}` did not start: {e}")))?;
    if !out.status.success() {
        return Err(run_error(format!(
            "`{command}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| run_error(format!("`{command}` printed no JSON: {e}")))?;
    let num = |v: &serde_json::Value| v.as_f64().unwrap_or(0.0);
    let r = &v["reference"];
    if r["same_totals"] != serde_json::Value::Bool(true) {
        return Err(run_error(format!(
            "`{command}`: the reference's totals differ from the engine's: they did not play the same games"
        )));
    }
    Ok((
        num(&v["playouts_per_second"]),
        num(&r["playouts_per_second"]),
        command,
    ))
}

fn playouts(
    o: &Options,
    sizes: &Sizes,
    (id, what, ruleset, scenario, reference): (&str, &str, &str, &str, &str),
    step: &mut dyn FnMut(),
) -> Result<Vec<Row>, u8> {
    let n = if id == "platoon_flank" {
        sizes.flank_games
    } else {
        sizes.td_games
    };
    let (interp, ref_a, cmd_interp) = sim(o, ruleset, scenario, reference, n, "interp")?;
    step();
    let (jit, ref_b, cmd_jit) = sim(o, ruleset, scenario, reference, n, "jit")?;
    step();
    Ok(vec![
        Row::new(
            &format!("{id}_playouts_interp"),
            format!("{what} playouts: interpreter"),
            cmd_interp.clone(),
            "playouts/s",
            interp,
            Some((ref_a, "hand-written Rust playout")),
            true,
            Some(PLAYOUT_GOAL),
        ),
        Row::new(
            &format!("{id}_playouts_jit"),
            format!("{what} playouts: JIT"),
            cmd_jit.clone(),
            "playouts/s",
            jit,
            Some((ref_b, "hand-written Rust playout")),
            true,
            Some(PLAYOUT_GOAL),
        ),
        Row::new(
            &format!("{id}_playouts_jit_over_interp"),
            format!("{what} playouts: JIT / interpreter"),
            format!("{cmd_jit}; {cmd_interp}"),
            "playouts/s",
            jit,
            Some((interp, "interpreter")),
            true,
            Some(JIT_PLAYOUT_GOAL),
        ),
    ])
}

/// Best of `rounds` rounds of `repeats` computations: seconds per computation.
fn best_of(rounds: u32, repeats: u32, mut f: impl FnMut() -> Result<(), u8>) -> Result<f64, u8> {
    let mut best = f64::MAX;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        for _ in 0..repeats.max(1) {
            f()?;
        }
        best = best.min(t.elapsed().as_secs_f64() / f64::from(repeats.max(1)));
    }
    Ok(best)
}

fn exact(o: &Options, sizes: &Sizes, name: &str) -> Result<Row, u8> {
    let q = query(&o.root, QUERY_FILE, name, &[]);
    let p = report::prepare(&q)?;
    let (program, assumptions) = (&p.compiled.program, &p.assumptions);
    let scratch = best_of(sizes.exact_rounds, sizes.exact_repeats, || {
        distribution(program, assumptions, DEFAULT_LIMIT, p.proc, p.args.clone())
            .map(|d| drop(std::hint::black_box(d)))
            .map_err(run_error)
    })?;
    let reference = match &o.icepool {
        None => None,
        Some(py) => {
            // Identical fractions first: a faster wrong answer is no answer.
            let ours = Session::new(program, assumptions, DEFAULT_LIMIT)
                .distribution(p.proc, p.args.clone())
                .map_err(run_error)?;
            let shown = python(o, py, &[name, "show"])?;
            let mut theirs = Vec::new();
            for line in shown.lines() {
                let Some((k, f)) = line.rsplit_once(' ') else {
                    continue;
                };
                let f = fraction(f).ok_or_else(|| {
                    run_error(format!(
                        "icepool printed `{line}`, not an outcome and a fraction"
                    ))
                })?;
                if f.0 != BigUint::ZERO {
                    theirs.push((k.to_string(), f));
                }
            }
            let mut mine = Vec::new();
            for k in ours.keys() {
                let f = ours.probability(&k);
                if f.0 != BigUint::ZERO {
                    mine.push((k.show_of(program, p.proc), f));
                }
            }
            let same = mine.len() == theirs.len()
                && mine
                    .iter()
                    .all(|(k, (a, b))| theirs.iter().any(|(k2, (c, d))| k == k2 && a * d == c * b));
            if !same {
                return Err(run_error(format!(
                    "{name}: sandtable and icepool give different fractions (runtime/benches/compare_icepool.sh lists them)"
                )));
            }
            let timed = python(
                o,
                py,
                &[
                    name,
                    &sizes.icepool_repeats.to_string(),
                    &sizes.icepool_rounds.to_string(),
                ],
            )?;
            let us: f64 = timed
                .split_whitespace()
                .zip(timed.split_whitespace().skip(1))
                .find(|(_, unit)| *unit == "us")
                .and_then(|(v, _)| v.parse().ok())
                .ok_or_else(|| run_error(format!("icepool printed `{timed}`, not a time")))?;
            Some((us, "icepool, warm"))
        }
    };
    Ok(Row::new(
        &format!("exact_{name}"),
        format!("exact {name}, from scratch"),
        format!(
            "sandtable prob {} {name} --repeat {}",
            q.ruleset.display(),
            sizes.exact_repeats
        ),
        "µs",
        scratch * 1e6,
        reference,
        false,
        Some(EXACT_GOAL),
    ))
}

/// `a/b` or `a` as a numerator and denominator.
fn fraction(s: &str) -> Option<(BigUint, BigUint)> {
    match s.split_once('/') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((s.parse().ok()?, BigUint::from(1u8))),
    }
}

fn python(o: &Options, py: &Path, args: &[&str]) -> Result<String, u8> {
    let script = at(&o.root, ICEPOOL_SCRIPT);
    let out = Command::new(py)
        .arg(&script)
        .args(args)
        .output()
        .map_err(|e| run_error(format!("`{}` did not start: {e}", py.display())))?;
    if !out.status.success() {
        return Err(run_error(format!(
            "`{} {} {}` failed: {}",
            py.display(),
            script.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn print(s: &Suite) {
    println!(
        "sandtable bench --suite: {} build, seed {}{}; each ratio is sandtable's speed over its reference's, both measured in this run",
        s.build,
        s.seed,
        if s.quick {
            " (--quick: too short to trust)"
        } else {
            ""
        }
    );
    println!(
        "  {:<60} {:>13} {:>13} {:>9}  goal",
        "measure", "sandtable", "reference", "ratio"
    );
    let fig = |v: f64, unit: &str| match unit {
        "µs" => format!("{v:.2} µs"),
        _ if v < 100.0 => format!("{v:.2}/s"),
        _ => format!("{v:.0}/s"),
    };
    for r in &s.measures {
        let line = format!(
            "  {:<60} {:>13} {:>13} {:>9}  {:<7} {}",
            r.what,
            fig(r.sandtable, r.unit),
            r.reference.map_or("—".into(), |v| fig(v, r.unit)),
            r.ratio.map_or("—".into(), |v| format!("{v:.3}×")),
            r.goal.map_or(String::new(), |g| format!("≥ {g}×")),
            match r.met {
                Some(true) => "met",
                Some(false) => "not met",
                None => "",
            }
        );
        println!("{}", line.trim_end());
    }
    if s.measures
        .iter()
        .any(|r| r.unit == "µs" && r.reference.is_none())
    {
        println!("  (exact answers have no reference without --icepool PYTHON)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_read_as_icepool_prints_them() {
        assert_eq!(
            fraction("3/36"),
            Some((BigUint::from(3u8), BigUint::from(36u8)))
        );
        assert_eq!(
            fraction("1"),
            Some((BigUint::from(1u8), BigUint::from(1u8)))
        );
        assert_eq!(fraction("a/2"), None);
        assert_eq!(fraction("1/"), None);
    }

    #[test]
    fn a_ratio_is_sandtables_speed_over_the_references_for_rates_and_times() {
        let rate = Row::new(
            "r",
            "r".into(),
            String::new(),
            "playouts/s",
            100.0,
            Some((400.0, "ref")),
            true,
            Some(0.5),
        );
        assert_eq!(rate.ratio, Some(0.25));
        assert_eq!(rate.met, Some(false));
        let time = Row::new(
            "t",
            "t".into(),
            String::new(),
            "µs",
            2.0,
            Some((400.0, "ref")),
            false,
            Some(100.0),
        );
        assert_eq!(time.ratio, Some(200.0));
        assert_eq!(time.met, Some(true));
        let alone = Row::new(
            "a",
            "a".into(),
            String::new(),
            "µs",
            2.0,
            None,
            false,
            Some(100.0),
        );
        assert_eq!((alone.ratio, alone.goal, alone.met), (None, None, None));
    }

    #[test]
    fn at_keeps_paths_as_typed_from_the_working_directory() {
        assert_eq!(
            at(Path::new("."), "rules/platoon"),
            PathBuf::from("rules/platoon")
        );
        assert_eq!(
            at(Path::new("/r"), "rules/platoon"),
            PathBuf::from("/r/rules/platoon")
        );
    }
}
