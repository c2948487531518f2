//! The JIT's memory on deeply nested rules, alone in its test binary so that the peak
//! resident size it reads belongs to this test only.

use sandtable_ir::Program;
use sandtable_runtime::Val;
use sandtable_runtime::interp::{Assumptions, Ctx, Interp, NoGame};
use sandtable_runtime::jit::JitProgram;
use sandtable_runtime::rng::Dice;

fn compile(src: &str) -> Program {
    sandtable_conformance::compile_clean(src).program
}

/// Peak resident memory of this process so far, in bytes (Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `if x == 0 then 0 else if x == 1 then 1 else … else -1`, `depth` levels deep.
fn nested_if(depth: usize) -> String {
    let mut s = String::from("resolve deep(x: 0..=100000) {\n  result ");
    for k in 0..depth {
        s.push_str(&format!("if x == {k} then {k} else "));
    }
    s.push_str("-1\n}\n");
    s
}

#[test]
fn the_jit_compiles_deep_nesting_in_memory_linear_in_its_depth() {
    // 10,000 levels took about 0.9 GB before (quadratic: 3.6 GB at 20,000); now about 60 MB.
    let depth = 10_000;
    // Compiling and interpreting recurse as deep as the nesting: the CLI's stack.
    let t = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let program = compile(&nested_if(depth));
            let a = Assumptions::default();
            let before = peak_rss();
            let jit = JitProgram::compile(&program, &a).unwrap();
            let (proc, _) = program.proc_by_name("deep").unwrap();
            assert!(
                jit.is_compiled(proc),
                "the deep resolution was left to the interpreter"
            );
            if let (Some(b), Some(after)) = (before, peak_rss()) {
                let grown = after.saturating_sub(b);
                assert!(
                    grown < 400 << 20,
                    "compiling {depth} nested `if`s grew memory by {} MB",
                    grown >> 20
                );
            }
            // Same answers as the interpreter, at both ends of the chain and past it.
            let interp = Interp::new(&program, &a);
            for x in [0, 1, depth as i64 - 1, depth as i64 + 5] {
                let args = [Val::Int(x)];
                let got = jit.run(proc, &args, &mut Dice::new(1)).unwrap().unwrap();
                let mut dice = Dice::new(1);
                let mut host = NoGame;
                let mut ctx = Ctx::new(&mut dice, &mut host);
                let want = interp.run(proc, args.to_vec(), &mut ctx).unwrap();
                assert_eq!(got, want, "x = {x}");
            }
        })
        .unwrap();
    t.join().unwrap();
}
