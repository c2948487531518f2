//! `prob` and `explain` on generated well-typed programs (`programs`): the bytes choose a program
//! the checker accepts, the values of its parameters and a seed, so the fuzzer spends its
//! time in the evaluators rather than in the parser's error paths.
//!
//! What must hold for each resolution: no panic; the exact distribution's weights add up to
//! its total; an `explain` run ends in an outcome the distribution gives a weight; and the JIT,
//! where it compiles the resolution, agrees with the interpreter on the outcome and on the
//! dice it drew.
#![no_main]

mod programs;

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use num_traits::Zero;
use sandtable_compiler::assume;
use sandtable_compiler::ir::ProcKind;
use sandtable_runtime::interp::Assumptions;
use sandtable_runtime::jit::JitProgram;
use sandtable_runtime::rng::Dice;
use sandtable_runtime::{exact, explain, query};

/// Work bound per query, far below the CLI's default so each input stays fast.
const LIMIT: u64 = 20_000;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(src) = programs::program(&mut u) else {
        return;
    };
    let show = std::env::var_os("SANDTABLE_FUZZ_SHOW").is_some();
    if show {
        eprintln!("----\n{src}");
    }
    let compiled = sandtable_compiler::compile_sources(&[("gen.sand", src.as_str())]);
    if compiled.has_errors() {
        if show {
            for d in &compiled.diagnostics {
                eprintln!(
                    "{}",
                    sandtable_compiler::diagnostic::render::to_plain_string(d, &compiled.db)
                );
            }
        }
        return;
    }
    let program = &compiled.program;
    let assumptions = Assumptions::default();
    let jit = JitProgram::compile(program, &assumptions).ok();
    for (id, p) in program.procs.iter().enumerate() {
        if p.kind != ProcKind::Resolve {
            continue;
        }
        let mut sets = Vec::new();
        for x in p.params.iter().filter(|x| x.default.is_none()) {
            let Some((lo, hi)) = x.range else { return };
            let v = u.int_in_range(lo..=hi).unwrap_or(lo);
            sets.push((x.name.clone(), v.to_string()));
        }
        let Ok(args) = assume::bind_args(program, id as u32, &sets) else {
            continue;
        };
        let args = query::args(&args);
        let seed: u64 = u.arbitrary().unwrap_or(0);
        let dist = exact::distribution(program, &assumptions, LIMIT, id as u32, args.clone());
        if let Ok(d) = &dist {
            let sum = d
                .iter()
                .fold(num_bigint::BigUint::zero(), |s, (_, w)| s + w.as_ref());
            assert_eq!(&sum, d.total(), "weights do not add up to the total in {}", p.name);
        }
        let ex = explain::run(program, &assumptions, id as u32, args.clone(), seed);
        if show {
            eprintln!(
                "{}: prob {:?}, explain {:?}",
                p.name,
                dist.as_ref().map(|d| d.len()),
                ex.as_ref().map(|e| e.outcome.key.to_string())
            );
        }
        // Exact enumeration walked every path without an error, so the sampled one has none.
        if dist.is_ok() {
            assert!(ex.is_ok(), "{}: prob succeeded but explain failed: {:?}", p.name, ex.as_ref().err());
        }
        if let (Ok(d), Ok(e)) = (&dist, &ex) {
            assert!(
                d.weight(&e.outcome.key).is_some_and(|w| !w.is_zero()),
                "{}: explain gave {} which prob says cannot happen",
                p.name,
                e.outcome.key
            );
        }
        if let Some(j) = &jit {
            let mut dice = Dice::new(seed);
            if let Some(r) = j.run(id as u32, &args, &mut dice) {
                match (&r, &ex) {
                    (Ok(o), Ok(e)) => {
                        assert_eq!(o.key, e.outcome.key, "{}: JIT and interpreter differ", p.name);
                        assert_eq!(dice.draws(), e.draws, "{}: JIT drew other dice", p.name);
                    }
                    (Err(_), Err(_)) => {}
                    _ => panic!(
                        "{}: JIT {:?} but interpreter {:?}",
                        p.name,
                        r.as_ref().map(|o| o.key.to_string()),
                        ex.as_ref().map(|e| e.outcome.key.to_string())
                    ),
                }
            }
        }
    }
});
