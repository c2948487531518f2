//! Run-time errors name the rule statement they come from, the same from every backend.

use sandtable_runtime::interp::{Assumptions, Ctx, Interp, NoGame};
use sandtable_runtime::jit::{Backend, BackendKind};
use sandtable_runtime::rng::Dice;
use sandtable_runtime::value::Val;

const SRC: &str = "table shots(weapon) {\n  rifle => 2\n  pistol => -\n}\n\
    resolve fire(n: int) {\n  let x = 1\n  if n > 0 {\n    result shots[pistol] + x\n  }\n  result 6 / n\n}\n";

/// The error of `fire(n)` from the interpreter, exact evaluation and the JIT backend.
fn errors(n: i64) -> Vec<String> {
    let c = sandtable_compiler::compile_sources(&[("rules.sand", SRC)]);
    assert!(!c.has_errors(), "{:?}", c.diagnostics);
    let p = &c.program;
    let (id, _) = p.proc_by_name("fire").unwrap();
    let none = Assumptions::default();
    let interp = {
        let i = Interp::new(p, &none);
        let mut dice = Dice::new(1);
        let mut host = NoGame;
        let mut ctx = Ctx::new(&mut dice, &mut host);
        i.run(id, vec![Val::Int(n)], &mut ctx).unwrap_err()
    };
    let exact = sandtable_runtime::exact::distribution(
        p,
        &none,
        sandtable_runtime::exact::DEFAULT_LIMIT,
        id,
        vec![Val::Int(n)],
    )
    .unwrap_err();
    let b = Backend::new(p, &none, BackendKind::Jit).unwrap();
    let mut dice = Dice::new(1);
    let jit = b
        .run(id, &[Val::Int(n)], &mut dice, &mut NoGame)
        .unwrap_err();
    vec![interp.to_string(), exact.to_string(), jit.to_string()]
}

#[test]
fn rule_errors_name_the_statement_they_come_from() {
    for e in errors(1) {
        assert!(e.contains("not applicable"), "{e}");
        assert!(e.contains("in `fire` at rules.sand:8)"), "{e}");
    }
    for e in errors(0) {
        assert!(e.contains("division by zero"), "{e}");
        assert!(e.contains("in `fire` at rules.sand:10)"), "{e}");
    }
}

const NESTED: &str = "resolve inner(n: int) {\n  let y = 2\n  if n > 10 { result y }\n  result 12 / n\n}\n\
    resolve outer(n: int) {\n  let z = 0\n  if n > 5 {\n    result 6 / (n - 6)\n  }\n  result inner(n) + z\n}\n";

/// The errors of `proc(n)` in [`NESTED`] from the interpreter and from compiled code, which
/// must have compiled it (the backend would otherwise hand it to the interpreter).
fn nested_errors(proc: &str, n: i64) -> (String, String) {
    let c = sandtable_compiler::compile_sources(&[("rules.sand", NESTED)]);
    assert!(!c.has_errors(), "{:?}", c.diagnostics);
    let p = &c.program;
    let (id, _) = p.proc_by_name(proc).unwrap();
    let none = Assumptions::default();
    let interp = {
        let i = Interp::new(p, &none);
        let mut dice = Dice::new(1);
        let mut host = NoGame;
        let mut ctx = Ctx::new(&mut dice, &mut host);
        i.run(id, vec![Val::Int(n)], &mut ctx).unwrap_err()
    };
    let jp = sandtable_runtime::jit::JitProgram::compile(p, &none).unwrap();
    assert!(jp.is_compiled(id), "{proc} is compiled");
    let mut dice = Dice::new(1);
    let jit = jp.run(id, &[Val::Int(n)], &mut dice).unwrap().unwrap_err();
    (interp.to_string(), jit.to_string())
}

#[test]
fn compiled_errors_name_the_statement_and_procedure_they_come_from() {
    for (proc, n, place) in [
        // A division in a nested block, not on the procedure's first line.
        ("outer", 6, "in `outer` at rules.sand:9)"),
        // An error in a compiled callee names the callee's statement.
        ("outer", 0, "in `inner` at rules.sand:4)"),
        ("inner", 0, "in `inner` at rules.sand:4)"),
    ] {
        let (interp, jit) = nested_errors(proc, n);
        assert!(interp.contains(place), "{proc}({n}) interpreter: {interp}");
        assert_eq!(jit, interp, "{proc}({n})");
    }
}
