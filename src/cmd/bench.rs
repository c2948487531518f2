//! `sandtable bench`: resolutions per second on the interpreter, the JIT and (for two
//! procedures) a hand-written Rust reference, from one seeded stream each; plus the JIT's
//! compile time for the whole ruleset.

use std::hint::black_box;
use std::time::Instant;

use clap::ValueEnum;
use sandtable_reference::{self as reference, Shooting};
use sandtable_runtime::interp::{Assumptions, Ctx, Interp, NoGame};
use sandtable_runtime::jit::JitProgram;
use sandtable_runtime::rng::Dice;
use sandtable_runtime::{OutcomeKey, Val};

use crate::report::{self, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};

#[derive(Clone, Copy, ValueEnum)]
pub enum Reference {
    /// Platoon 7.a fire (parameters fire_modifier, target_modifier, fortification)
    PlatoonFire,
    /// Dinky Dau 5.1 shooting (parameters dice, cover, firer_pinned, point_blank, save_cover, …)
    DinkyDauShooting,
}

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  sandtable bench rules/platoon fire --set fire_modifier=4 --set target_modifier=0 --reference platoon-fire\n  \
sandtable bench rules/dinky_dau shooting --set dice=12 --set cover=medium_cover --set firer_pinned=false --set point_blank=false \\\n    --set save_cover=light_medium --reference dinky-dau-shooting -n 200000\n  \
sandtable bench --suite --json > speed.json\n  \
sandtable bench --suite --quick --icepool /tmp/icepool-venv/bin/python"
)]
pub struct Args {
    /// Ruleset folder or .sand file
    #[arg(required_unless_present = "suite", conflicts_with = "suite")]
    ruleset: Option<std::path::PathBuf>,
    /// Name of the resolution
    #[arg(required_unless_present = "suite", conflicts_with = "suite")]
    resolution: Option<String>,
    /// Set a parameter: NAME=VALUE (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE", conflicts_with = "suite")]
    sets: Vec<String>,
    /// Supply a value for one of the book's unknowns: NAME=VALUE (repeatable)
    #[arg(long = "assume", value_name = "NAME=VALUE", conflicts_with = "suite")]
    assumes: Vec<String>,
    /// Assumptions file (`assume NAME = value "why"` lines; repeatable)
    #[arg(long = "assumptions", value_name = "FILE", conflicts_with = "suite")]
    assumption_files: Vec<std::path::PathBuf>,
    /// Resolutions per backend, split over 7 rounds (the best round counts)
    #[arg(short = 'n', default_value_t = 3_500_000, conflicts_with = "suite")]
    n: u64,
    /// Seed of the dice
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also time a hand-written Rust version of the same procedure
    #[arg(long, value_enum, conflicts_with = "suite")]
    reference: Option<Reference>,
    /// Print the figures as JSON
    #[arg(long)]
    pub json: bool,
    /// Run every speed measure of the project in one go, each against its reference in the
    /// same run (resolutions, playouts, JIT against interpreter, exact answers), with ratios
    /// and goals; run from the repository (or give --root)
    #[arg(long)]
    suite: bool,
    /// With --suite: the repository holding rules/ and runtime/benches/
    #[arg(long, value_name = "DIR", default_value = ".")]
    root: std::path::PathBuf,
    /// With --suite: small runs (seconds, not minutes), to check the suite works; the figures
    /// are too short to trust
    #[arg(long)]
    quick: bool,
    /// With --suite: a python that imports icepool, to time the exact answers against it (the
    /// fractions are compared first); without it the exact rows have no reference
    #[arg(long, value_name = "PYTHON")]
    icepool: Option<std::path::PathBuf>,
}

pub fn run(args: Args) -> u8 {
    if args.suite {
        return crate::cmd::bench_suite::run(&crate::cmd::bench_suite::Options {
            root: args.root,
            quick: args.quick,
            icepool: args.icepool,
            seed: args.seed,
            json: args.json,
        });
    }
    if args.quick || args.icepool.is_some() || args.root != std::path::Path::new(".") {
        report::error(
            report::Kind::Usage,
            "--quick, --icepool and --root go with --suite",
        );
        return EXIT_USAGE;
    }
    let (Some(ruleset), Some(resolution)) = (args.ruleset, args.resolution) else {
        report::error(
            report::Kind::Usage,
            "give a ruleset and a resolution (`sandtable bench RULESET RESOLUTION`), or --suite",
        );
        return EXIT_USAGE;
    };
    let query = &report::QueryArgs {
        ruleset,
        resolution,
        sets: args.sets,
        assumes: args.assumes,
        assumption_files: args.assumption_files,
    };
    let prepared = match report::prepare(query) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match measure(
        args.n,
        args.seed,
        args.reference,
        &query.resolution,
        &prepared.compiled.program,
        prepared.proc,
        &prepared.args,
        &prepared.assumptions,
    ) {
        Ok(f) => {
            f.print(args.json);
            EXIT_OK
        }
        Err(e) => {
            report::error(report::Kind::Run, e);
            EXIT_FINDINGS
        }
    }
}

fn param<'a>(
    program: &sandtable_compiler::ir::Program,
    proc: u32,
    args: &'a [Val],
    name: &str,
) -> Result<&'a Val, String> {
    let p = &program.procs[proc as usize];
    p.params
        .iter()
        .position(|x| x.name == name)
        .map(|i| &args[i])
        .ok_or_else(|| {
            format!(
                "the reference needs a parameter `{name}`, which `{}` does not have",
                p.name
            )
        })
}

fn int(v: &Val) -> i64 {
    v.as_int().unwrap_or(0)
}

/// One resolution's figures: the best round of each backend (and of the reference).
pub struct Figures {
    pub ruleset: String,
    pub resolution: String,
    /// Resolutions per round.
    pub n: u64,
    pub rounds: u64,
    pub seed: u64,
    pub interp_s: f64,
    pub jit_s: f64,
    pub loop_s: f64,
    pub reference_s: Option<f64>,
    pub compile_ms: f64,
    /// Procedures the JIT compiled, of all.
    pub compiled: (usize, usize),
}

impl Figures {
    pub fn rate(&self, s: f64) -> f64 {
        self.n as f64 / s
    }

    fn print(&self, json: bool) {
        let (interp_s, jit_s, loop_s) = (self.interp_s, self.jit_s, self.loop_s);
        let (n, rounds) = (self.n, self.rounds);
        let rate = |s: f64| self.rate(s);
        if json {
            let mut v = serde_json::json!({
                "resolution": self.resolution,
                "ruleset": self.ruleset,
                "n_per_round": n,
                "rounds": rounds,
                "seed": self.seed,
                "interp_per_sec": rate(interp_s),
                "jit_per_sec": rate(jit_s),
                "jit_over_interp": interp_s / jit_s,
                "jit_loop_per_sec": rate(loop_s),
                "jit_loop_over_interp": interp_s / loop_s,
                "jit_compile_ms": self.compile_ms,
                "jit_compiles": COMPILES,
                "jit_compiled": self.compiled,
            });
            if let Some(rs) = self.reference_s {
                v["reference_per_sec"] = serde_json::json!(rate(rs));
                v["jit_over_reference"] = serde_json::json!(rs / jit_s);
                v["jit_loop_over_reference"] = serde_json::json!(rs / loop_s);
            }
            report::print_json(&v);
            return;
        }
        println!(
            "{} — {}: best of {rounds} rounds of {n} resolutions per backend, seed {}",
            self.ruleset, self.resolution, self.seed
        );
        println!("  interpreter   {:>12.0} /s", rate(interp_s));
        println!(
            "  jit           {:>12.0} /s   {:.1}× the interpreter (one call per resolution)",
            rate(jit_s),
            interp_s / jit_s
        );
        println!(
            "  jit loop      {:>12.0} /s   {:.1}× the interpreter (one call per round, outcomes counted in compiled code)",
            rate(loop_s),
            interp_s / loop_s
        );
        if let Some(rs) = self.reference_s {
            println!(
                "  hand-written  {:>12.0} /s   jit loop is {:.2}× the reference (one call each: {:.2}×)",
                rate(rs),
                rs / loop_s,
                rs / jit_s
            );
        }
        let (c, total) = self.compiled;
        println!(
            "  jit compile   {:.2} ms for the ruleset, best of {COMPILES} ({c} of {total} procedures compiled)",
            self.compile_ms
        );
    }
}

/// Times one resolution on the interpreter, the JIT (one call each and the sampling loop)
/// and, if asked, its hand-written reference.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    n: u64,
    seed: u64,
    reference: Option<Reference>,
    resolution: &str,
    program: &sandtable_compiler::ir::Program,
    proc: u32,
    call_args: &[Val],
    assumptions: &Assumptions,
) -> Result<Figures, String> {
    let n = n.max(1);
    // JIT compile time: the whole ruleset, as a game would compile it; the best of a few
    // compilations, like the runs below, since a shared machine adds noise to single ones.
    let mut compile_ms = f64::MAX;
    let mut jit = None;
    for _ in 0..COMPILES {
        let t = Instant::now();
        let j = JitProgram::compile(program, assumptions)?;
        compile_ms = compile_ms.min(t.elapsed().as_secs_f64() * 1e3);
        jit = Some(j);
    }
    let jit = jit.expect("compiled at least once");
    if !jit.is_compiled(proc) {
        let why = jit
            .skipped
            .iter()
            .find(|(name, _)| *name == program.procs[proc as usize].name)
            .map(|(_, w)| w.clone())
            .unwrap_or_default();
        return Err(format!(
            "`{resolution}` is not compiled by the JIT ({why}); it runs on the interpreter"
        ));
    }

    // Backends take turns over several rounds and each keeps its best round: on a shared
    // machine that is far steadier than one long run per backend.
    let rounds = ROUNDS.min(n);
    let chunk = n / rounds;
    let interp = Interp::new(program, assumptions);
    let raw = jit
        .encode_args(proc, call_args)
        .expect("compiled")
        .map_err(|e| e.to_string())?;
    let mut reference = match reference {
        None => None,
        Some(r) => Some(reference_fn(r, program, proc, call_args, &interp, seed)?),
    };
    // The compiled sampling loop: one call runs a whole round and counts its outcomes.
    let sampler = jit
        .sampler(proc, &raw)?
        .ok_or_else(|| "no sampling loop for a compiled procedure".to_string())?;
    let (mut d_interp, mut d_jit, mut d_loop, mut d_ref) = (
        Dice::new(seed),
        Dice::new(seed),
        Dice::new(seed),
        Dice::new(seed),
    );
    let mut host = NoGame;
    let (mut best_interp, mut best_jit, mut best_loop, mut best_ref) =
        (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..chunk {
            let mut ctx = Ctx::new(&mut d_interp, &mut host);
            black_box(
                interp
                    .run(proc, call_args.to_vec(), &mut ctx)
                    .map_err(|e| e.to_string())?,
            );
        }
        best_interp = best_interp.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for _ in 0..chunk {
            black_box(
                jit.run_raw(proc, black_box(&raw), &mut d_jit)
                    .map_err(|e| e.to_string())?,
            );
        }
        best_jit = best_jit.min(t.elapsed().as_secs_f64());
        let mut counts = sampler.counts();
        let t = Instant::now();
        sampler
            .run(chunk, &mut d_loop, &mut counts)
            .map_err(|e| e.to_string())?;
        best_loop = best_loop.min(t.elapsed().as_secs_f64());
        black_box(counts);
        if let Some(f) = reference.as_mut() {
            let t = Instant::now();
            for _ in 0..chunk {
                black_box(f(&mut d_ref));
            }
            best_ref = best_ref.min(t.elapsed().as_secs_f64());
        }
    }
    if d_jit.draws() != d_interp.draws() || d_loop.draws() != d_interp.draws() {
        return Err(format!(
            "backends disagree: interpreter drew {} dice, JIT {}, JIT loop {}",
            d_interp.draws(),
            d_jit.draws(),
            d_loop.draws()
        ));
    }
    Ok(Figures {
        ruleset: program.name.clone(),
        resolution: program.procs[proc as usize].name.clone(),
        n: chunk,
        rounds,
        seed,
        interp_s: best_interp,
        jit_s: best_jit,
        loop_s: best_loop,
        reference_s: reference.is_some().then_some(best_ref),
        compile_ms,
        compiled: jit_compiled_count(&jit, program),
    })
}

fn jit_compiled_count(
    jit: &JitProgram,
    program: &sandtable_compiler::ir::Program,
) -> (usize, usize) {
    let total = program
        .procs
        .iter()
        .filter(|p| p.kind != sandtable_compiler::ir::ProcKind::Hook)
        .count();
    (total - jit.skipped.len(), total)
}

/// Compilations of the ruleset; the best counts.
const COMPILES: usize = 5;

/// Rounds each backend is timed over; the best round counts.
const ROUNDS: u64 = 7;

type RawReference = Box<dyn FnMut(&mut Dice) -> i64>;

/// Check a reference against the rules on 1000 resolutions of one stream, and hand back its
/// raw form (a small integer, as the JIT's raw runs return) for timing.
fn checked(
    interp: &Interp,
    proc: u32,
    call_args: &[Val],
    seed: u64,
    mut raw: RawReference,
    outcome: impl Fn(i64) -> OutcomeKey,
) -> Result<RawReference, String> {
    let mut host = NoGame;
    let (mut a, mut b) = (Dice::new(seed), Dice::new(seed));
    for _ in 0..1000 {
        let mut ctx = Ctx::new(&mut a, &mut host);
        let want = interp
            .run(proc, call_args.to_vec(), &mut ctx)
            .map_err(|e| e.to_string())?
            .key;
        let got = outcome(raw(&mut b));
        if want != got {
            return Err(format!(
                "the reference disagrees with the rules: {got:?} against {want:?}"
            ));
        }
    }
    Ok(raw)
}

fn reference_fn(
    r: Reference,
    program: &sandtable_compiler::ir::Program,
    proc: u32,
    call_args: &[Val],
    interp: &Interp,
    seed: u64,
) -> Result<RawReference, String> {
    match r {
        Reference::PlatoonFire => {
            let fm = int(param(program, proc, call_args, "fire_modifier")?);
            let tm = int(param(program, proc, call_args, "target_modifier")?);
            let fo = int(param(program, proc, call_args, "fortification")?);
            let names = ["miss", "pinned_down", "eliminated"];
            checked(
                interp,
                proc,
                call_args,
                seed,
                Box::new(move |d| i64::from(reference::platoon_fire(d, black_box(fm), tm, fo))),
                |k| OutcomeKey::Named(names[k as usize].into()),
            )
        }
        Reference::DinkyDauShooting => {
            let sym = |v: &Val| match v {
                Val::Sym(s) => s.to_string(),
                _ => String::new(),
            };
            let flag = |name: &str| -> Result<bool, String> {
                Ok(param(program, proc, call_args, name)?
                    .as_bool()
                    .unwrap_or(false))
            };
            let save = match sym(param(program, proc, call_args, "save_cover")?).as_str() {
                "prepared_position" => 4,
                "light_medium" => 5,
                _ => 6,
            };
            let s = Shooting {
                dice: int(param(program, proc, call_args, "dice")?),
                cover: match sym(param(program, proc, call_args, "cover")?).as_str() {
                    "medium_cover" => 1,
                    "heavy_cover" => 2,
                    _ => 0,
                },
                firer_pinned: flag("firer_pinned")?,
                point_blank: flag("point_blank")?,
                save,
                fleeting: flag("fleeting")?,
                trail_column: flag("trail_column")?,
                desperate_return_fire: flag("desperate_return_fire")?,
            };
            checked(
                interp,
                proc,
                call_args,
                seed,
                Box::new(move |d| reference::dinky_dau_shooting(d, black_box(&s))),
                |k| OutcomeKey::Value(Val::Int(k)),
            )
        }
    }
}
