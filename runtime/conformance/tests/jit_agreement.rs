//! The JIT and the interpreter agree: same outcome, same number of dice drawn, for random
//! well-typed programs and for every resolution of the five encoded systems; and the compiled
//! sampling loop counts exactly the outcomes the interpreter gives, run after run, for a seed.

use proptest::prelude::*;
use sandtable_ir::{ProcKind, Program, Type};
use sandtable_runtime::interp::{Assumptions, Ctx, Interp, NoGame};
use sandtable_runtime::jit::{Backend, BackendKind, JitProgram};
use sandtable_runtime::montecarlo;
use sandtable_runtime::rng::Dice;
use sandtable_runtime::{RunError, Val};

/// Each backend's result (outcome or error kind) and number of dice drawn.
type Compared = (Result<String, String>, u64, Result<String, String>, u64);

/// Run both backends; `None` when the JIT did not compile the procedure.
fn both(
    program: &Program,
    jit: &JitProgram,
    proc: u32,
    args: &[Val],
    seed: u64,
) -> Option<Compared> {
    let none = Assumptions::default();
    let interp = Interp::new(program, &none);
    let mut d1 = Dice::new(seed);
    let mut host = NoGame;
    let r1 = {
        let mut ctx = Ctx::new(&mut d1, &mut host);
        interp.run(proc, args.to_vec(), &mut ctx)
    };
    let mut d2 = Dice::new(seed);
    let r2 = jit.run(proc, args, &mut d2)?;
    let show = |r: Result<sandtable_runtime::value::Outcome, RunError>| {
        r.map(|o| o.key.show(program)).map_err(|e| error_kind(&e))
    };
    Some((show(r1), d1.draws(), show(r2), d2.draws()))
}

/// Errors agree by kind (messages may name values differently).
fn error_kind(e: &RunError) -> String {
    let s = format!("{e:?}");
    s.split(['(', ' ', '{']).next().unwrap_or("").to_string()
}

fn compile(src: &str) -> sandtable_compiler::Compiled {
    sandtable_conformance::compile_clean(src)
}

fn expr(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        prop::sample::select(vec!["d4", "d6", "d10", "custom", "a", "b", "2d6"])
            .prop_map(String::from),
        (-4i64..=12).prop_map(|k| if k < 0 {
            format!("({k})")
        } else {
            k.to_string()
        }),
        (1u32..=5, 2u32..=6).prop_map(|(n, t)| format!("successes(pool({n}, d6), {t})")),
        (1u32..=3).prop_map(|k| format!("highest({k}, 4d6)")),
        Just("count(3d6, 1..=2)".to_string()),
        Just("reroll(d6, 1..=2)".to_string()),
        Just("mods(a, c)".to_string()),
        Just("chart[d6]".to_string()),
        Just("hits[c]".to_string()),
        Just("sum(2d4)".to_string()),
        Just("count(k in [1, 2, 3], d6 >= k)".to_string()),
        Just("(if any(k in 1..=3, d4 == k + a) then 2 else 0)".to_string()),
        Just("(if all(k in [0, 1], b > k or d6 >= 5) then 1 else 0)".to_string()),
        Just("len([a, b, 3])".to_string()),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let sub = expr(depth - 1);
    prop_oneof![
        3 => leaf,
        1 => (sub.clone(), sub.clone()).prop_map(|(x, y)| format!("({x} + {y})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(x, y)| format!("({x} - {y})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(x, y)| format!("({x} * {y})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(x, y)| format!("({x} / {y})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(x, y)| format!("({x} % {y})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(x, y)| format!("max({x}, {y})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(x, y)| format!("clamp({x}, 0, {y})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(x, y)| format!("div_up({x}, {y})")),
        1 => (sub.clone(), sub.clone(), sub.clone()).prop_map(|(x, y, z)| format!("(if {x} >= {y} and c == heavy then {z} else {y})")),
        1 => (sub.clone(), sub.clone(), sub.clone()).prop_map(|(x, y, z)| format!("(if {x} < {y} or c != open then {z} else 1)")),
    ]
    .boxed()
}

fn program_text(e: &str, shape: u8) -> String {
    let body = match shape % 4 {
        0 => format!("result {e}"),
        1 => format!(
            "let x = {e}\n  bands x {{\n    ..=0 => low\n    1..=5 => mid\n    6.. => high\n  }}"
        ),
        2 => format!("let x = {e}\n  if x in 2..=7 {{ outcome inside }}\n  result x * 2"),
        _ => format!(
            "bands c {{\n    open => {{ result {e} }}\n    heavy => hit\n    _ => miss\n  }}"
        ),
    };
    format!(
        "enum cover {{ open, light, heavy }}
die custom = [0, 1, 1, 3]
stack mods(n: int, c: cover) clamp -3..=3 {{
  +2 \"per unit\" per n
  -1 \"light cover\" when c == light
  -2 \"heavy cover\" when c == heavy
  +1 \"lucky\" when d6 >= 5
}}
table chart(roll: d6) {{
  1..=2 => 0
  3..=5 => 1
  6 => 3
}}
table hits(c: cover) {{
  open => 4
  light => 5
  heavy => 6
}}
resolve q(a: -3..=6, b: 0..=4, c: cover) {{
  {body}
}}
"
    )
}

proptest! {
    // CI runs 256 cases; a long run sets SANDTABLE_AGREEMENT_CASES (see README).
    #![proptest_config(ProptestConfig {
        cases: std::env::var("SANDTABLE_AGREEMENT_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_programs_agree(e in expr(2), shape in any::<u8>(), a in -3i64..=6, b in 0i64..=4, c in 0usize..3, seeds in prop::collection::vec(any::<u64>(), 4)) {
        let src = program_text(&e, shape);
        let compiled = compile(&src);
        let none = Assumptions::default();
        let jit = JitProgram::compile(&compiled.program, &none).unwrap();
        let (proc, _) = compiled.program.proc_by_name("q").unwrap();
        prop_assert!(jit.is_compiled(proc), "not compiled: {:?}\n{}", jit.skipped, src);
        let cover = ["open", "light", "heavy"][c];
        let args = vec![Val::Int(a), Val::Int(b), Val::Sym(cover.into())];
        for seed in seeds {
            let (r1, n1, r2, n2) = both(&compiled.program, &jit, proc, &args, seed).unwrap();
            prop_assert_eq!(&r1, &r2, "{} seed {}", src, seed);
            prop_assert_eq!(n1, n2, "draws differ: {} seed {}", src, seed);
        }
    }
}

/// `prob --samples` on both backends (the JIT through its compiled sampling loop): the same
/// counts, or errors of the same kind.
fn sampled_alike(
    program: &Program,
    proc: u32,
    args: &[Val],
    n: u64,
    seed: u64,
) -> Result<(), String> {
    let none = Assumptions::default();
    // The loop must be built wherever the procedure compiled and its arguments fit: the
    // estimate would otherwise fall back to one call per sample and this test check nothing.
    let jit = JitProgram::compile(program, &none).unwrap();
    if let Some(Ok(raw)) = jit.encode_args(proc, args) {
        match jit.sampler(proc, &raw) {
            Ok(Some(_)) => {}
            Ok(None) => return Err("compiled, but no sampling loop".into()),
            Err(e) => return Err(format!("the sampling loop was not built: {e}")),
        }
    }
    let run = |kind| {
        let backend = Backend::new(program, &none, kind).unwrap();
        montecarlo::sample_with(&backend, proc, args, n, seed, &mut |_| {})
            .map(|e| e.counts)
            .map_err(|e| error_kind(&e))
    };
    let (a, b) = (run(BackendKind::Interp), run(BackendKind::Jit));
    if a == b {
        Ok(())
    } else {
        Err(format!("interpreter {a:?}\nJIT loop {b:?}"))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_sampling_loop_counts_what_the_interpreter_gives(e in expr(2), shape in any::<u8>(), a in -3i64..=6, b in 0i64..=4, c in 0usize..3, seed in any::<u64>()) {
        let src = program_text(&e, shape);
        let compiled = compile(&src);
        let (proc, _) = compiled.program.proc_by_name("q").unwrap();
        let cover = ["open", "light", "heavy"][c];
        let args = vec![Val::Int(a), Val::Int(b), Val::Sym(cover.into())];
        let r = sampled_alike(&compiled.program, proc, &args, 500, seed);
        prop_assert!(r.is_ok(), "{}\n{}", src, r.unwrap_err());
    }
}

#[test]
fn the_sampling_loop_widens_its_window_for_spread_out_results() {
    // Results from -500 to 600, and a long run: the loop's table starts narrow around the
    // first result and must widen (or count aside) without losing a count.
    let c = compile("resolve spread() {\n  result d100 * 10 - 400 - d100\n}\n");
    let (proc, _) = c.program.proc_by_name("spread").unwrap();
    sampled_alike(&c.program, proc, &[], 200_000, 5).unwrap();
}

fn random_arg(program: &Program, p: &sandtable_ir::Param, r: u64) -> Option<Val> {
    Some(match (&p.ty, p.range) {
        (Type::Int | Type::Length, Some((lo, hi))) => {
            Val::Int(lo + (r % ((hi - lo + 1).max(1) as u64)) as i64)
        }
        (Type::Int | Type::Length, None) => Val::Int((r % 7) as i64),
        (Type::Bool, _) => Val::Bool(r.is_multiple_of(2)),
        (Type::Enum(e), _) => {
            let m = &program.enums[*e as usize].members;
            Val::Sym(m[(r as usize) % m.len()].as_str().into())
        }
        (Type::Entity(k), _) => {
            let c: Vec<usize> = (0..program.entities.len())
                .filter(|i| k.is_none() || program.entities[*i].kind == *k)
                .collect();
            if c.is_empty() {
                return None;
            }
            Val::Entity(c[(r as usize) % c.len()] as u32)
        }
        (Type::Side, _) => Val::Side((r as usize % program.sides.len().max(1)) as u32),
        _ => return None,
    })
}

#[test]
fn every_resolution_of_the_five_systems_agrees() {
    let mut compared = 0u64;
    let mut compiled_procs = 0;
    let mut total_procs = 0;
    let systems = sandtable_conformance::systems();
    assert!(systems.len() >= 5, "rules/ holds the systems: {systems:?}");
    for path in &systems {
        let sys = path.display();
        let c = sandtable_compiler::compile_path(path).unwrap();
        let none = Assumptions::default();
        let jit = JitProgram::compile(&c.program, &none).unwrap();
        for (i, p) in c.program.procs.iter().enumerate() {
            if p.kind != ProcKind::Resolve {
                continue;
            }
            total_procs += 1;
            if !jit.is_compiled(i as u32) {
                continue;
            }
            compiled_procs += 1;
            let mut rng = Dice::new(i as u64);
            for round in 0..40u64 {
                let args: Option<Vec<Val>> = p
                    .params
                    .iter()
                    .map(|pa| random_arg(&c.program, pa, u64::from(rng.index(1 << 30))))
                    .collect();
                let Some(args) = args else { break };
                let (r1, n1, r2, n2) =
                    both(&c.program, &jit, i as u32, &args, round * 7919 + 1).unwrap();
                assert_eq!(r1, r2, "{sys} {} {args:?}", p.name);
                assert_eq!(n1, n2, "{sys} {} draws", p.name);
                if round < 2 {
                    let r = sampled_alike(&c.program, i as u32, &args, 2000, round + 1);
                    assert!(r.is_ok(), "{sys} {} {args:?}: {}", p.name, r.unwrap_err());
                }
                compared += 1;
            }
        }
    }
    eprintln!(
        "compared {compared} runs of {compiled_procs} compiled resolutions (of {total_procs})"
    );
    assert!(
        compiled_procs * 2 >= total_procs,
        "the JIT compiled only {compiled_procs} of {total_procs} resolutions"
    );
}

/// The sampling loop compiles callees in place, folds what the fixed arguments decide (table
/// cells, modifiers, branches) and rolls pools in a loop of its own: the same counts as the
/// interpreter, and for a callee that fails, the same error placed in the callee.
#[test]
fn the_sampling_loop_inlines_calls_and_settles_what_the_arguments_decide() {
    let src = "enum cover { open, light, heavy }
die custom = [0, 1, 1, 3]
stack mods(c: cover, pinned: bool) clamp -2..=2 {
  -1 \"light\" when c == light
  -2 \"heavy\" when c == heavy
  -1 \"pinned\" when pinned
}
table save(c: cover) {
  open => 6
  light => 5
  heavy => 4
}
procedure target(c: cover, pinned: bool) {
  result clamp(4 - mods(c, pinned), 2, 7)
}
procedure verdict(n: int) {
  bands n {
    ..=0 => nothing_happens
    1..=2 => scratched
    3.. => hurt
  }
}
procedure ratio(n: int, d: int) {
  result n / d
}
resolve shoot(dice: 0..=12, c: cover, pinned: bool) {
  let hits = successes(pool(dice, d6), target(c, pinned))
  let saves = successes(pool(hits, d6), save[c])
  result hits - saves + sum(pool(dice, custom))
}
resolve named(dice: 0..=12, c: cover, pinned: bool) {
  let hits = successes(pool(dice, d6), target(c, pinned))
  result verdict(hits - save[c] + 4)
}
resolve broken(dice: 0..=12, c: cover, pinned: bool) {
  result ratio(dice, d6 - 7 + save[c])
}
";
    let c = compile(src);
    let none = Assumptions::default();
    for name in ["shoot", "named", "broken"] {
        let (proc, _) = c.program.proc_by_name(name).unwrap();
        for (dice, cover, pinned) in [(12, "open", false), (6, "light", true), (0, "heavy", true)] {
            let args = [Val::Int(dice), Val::Sym(cover.into()), Val::Bool(pinned)];
            let r = sampled_alike(&c.program, proc, &args, 3000, dice as u64 + 1);
            assert!(r.is_ok(), "{name} {args:?}: {}", r.unwrap_err());
            // Errors word for word, not only of the same kind.
            let run = |kind| {
                let backend = Backend::new(&c.program, &none, kind).unwrap();
                montecarlo::sample_with(&backend, proc, &args, 3000, 7, &mut |_| {})
                    .map(|e| e.counts)
                    .map_err(|e| e.to_string())
            };
            let (a, b) = (run(BackendKind::Interp), run(BackendKind::Jit));
            assert_eq!(a, b, "{name} {args:?}");
            if name == "broken" {
                assert!(a.is_err(), "the division by zero in `ratio` is reached");
            }
        }
    }
}
