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
