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

use crate::report::{self, EXIT_FINDINGS, EXIT_OK};

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
sandtable bench rules/dinky_dau shooting --set dice=12 --set cover=medium_cover --set firer_pinned=false --set point_blank=false \\\n    --set save_cover=light_medium --reference dinky-dau-shooting -n 200000"
)]
pub struct Args {
    #[command(flatten)]
    query: crate::report::QueryArgs,
    /// Resolutions per backend, split over 7 rounds (the best round counts)
    #[arg(short = 'n', default_value_t = 3_500_000)]
    n: u64,
    /// Seed of the dice
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also time a hand-written Rust version of the same procedure
    #[arg(long, value_enum)]
    reference: Option<Reference>,
    /// Print the figures as JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> u8 {
    let prepared = match report::prepare(&args.query) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match measure(
        &args,
        &prepared.compiled.program,
        prepared.proc,
        &prepared.args,
        &prepared.assumptions,
    ) {
        Ok(()) => EXIT_OK,
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

fn measure(
    args: &Args,
    program: &sandtable_compiler::ir::Program,
    proc: u32,
    call_args: &[Val],
    assumptions: &Assumptions,
) -> Result<(), String> {
    let n = args.n.max(1);
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
            "`{}` is not compiled by the JIT ({why}); it runs on the interpreter",
            args.query.resolution
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
    let mut reference = match args.reference {
        None => None,
        Some(r) => Some(reference_fn(
            r, program, proc, call_args, &interp, args.seed,
        )?),
    };
    // The compiled sampling loop: one call runs a whole round and counts its outcomes.
    let sampler = jit
        .sampler(proc, &raw)?
        .ok_or_else(|| "no sampling loop for a compiled procedure".to_string())?;
    let (mut d_interp, mut d_jit, mut d_loop, mut d_ref) = (
        Dice::new(args.seed),
        Dice::new(args.seed),
        Dice::new(args.seed),
        Dice::new(args.seed),
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
    let (interp_s, jit_s, loop_s) = (best_interp, best_jit, best_loop);
    let reference_s = reference.is_some().then_some(best_ref);
    let n = chunk;
    let rate = |s: f64| n as f64 / s;
    let name = format!("{} — {}", program.name, program.procs[proc as usize].name);
    if args.json {
        let mut v = serde_json::json!({
            "resolution": program.procs[proc as usize].name,
            "ruleset": program.name,
            "n_per_round": n,
            "rounds": rounds,
            "seed": args.seed,
            "interp_per_sec": rate(interp_s),
            "jit_per_sec": rate(jit_s),
            "jit_over_interp": interp_s / jit_s,
            "jit_loop_per_sec": rate(loop_s),
            "jit_loop_over_interp": interp_s / loop_s,
            "jit_compile_ms": compile_ms,
            "jit_compiles": COMPILES,
            "jit_compiled": jit_compiled_count(&jit, program),
        });
        if let Some(rs) = reference_s {
            v["reference_per_sec"] = serde_json::json!(rate(rs));
            v["jit_over_reference"] = serde_json::json!(rs / jit_s);
            v["jit_loop_over_reference"] = serde_json::json!(rs / loop_s);
        }
        report::print_json(&v);
    } else {
        println!(
            "{name}: best of {rounds} rounds of {n} resolutions per backend, seed {}",
            args.seed
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
        if let Some(rs) = reference_s {
            println!(
                "  hand-written  {:>12.0} /s   jit loop is {:.2}× the reference (one call each: {:.2}×)",
                rate(rs),
                rs / loop_s,
                rs / jit_s
            );
        }
        let (c, total) = jit_compiled_count(&jit, program);
        println!(
            "  jit compile   {compile_ms:.2} ms for the ruleset, best of {COMPILES} ({c} of {total} procedures compiled)"
        );
    }
    Ok(())
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
