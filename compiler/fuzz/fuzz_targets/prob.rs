//! `prob` and `explain` on every resolution of a program that compiles without errors:
//! bounded work, never a panic. Inputs are mutated rulesets, so most of them are programs
//! the checker accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sandtable_compiler::ir::ProcKind;
use sandtable_runtime::interp::Assumptions;
use sandtable_compiler::assume;
use sandtable_runtime::{exact, explain, query};

/// Work bound per query, far below the CLI's default so each input stays fast.
const LIMIT: u64 = 20_000;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if src.contains("import") {
        return;
    }
    let compiled = sandtable_compiler::compile_sources(&[("fuzz.sand", src)]);
    if compiled.has_errors() {
        return;
    }
    let program = &compiled.program;
    let assumptions = Assumptions::default();
    for (id, p) in program.procs.iter().enumerate().take(8) {
        if p.kind != ProcKind::Resolve {
            continue;
        }
        // Parameters without defaults get the smallest value of their range, when there is one.
        let sets: Vec<(String, String)> = p
            .params
            .iter()
            .filter(|x| x.default.is_none())
            .filter_map(|x| x.range.map(|(lo, _)| (x.name.clone(), lo.to_string())))
            .collect();
        let Ok(args) = assume::bind_args(program, id as u32, &sets) else {
            continue;
        };
        let args = query::args(&args);
        let _ = exact::distribution(program, &assumptions, LIMIT, id as u32, args.clone());
        let _ = explain::run(program, &assumptions, id as u32, args, 1);
    }
});
