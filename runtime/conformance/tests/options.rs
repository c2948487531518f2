//! The choices enumerator on compiled actions.

use sandtable_runtime::engine::options::leading_guards;

/// A quantifier's item is bound inside the guard: the guard needs only the parameters
/// it reads, so it is tested while the choices are listed (it used to wait for a slot
/// past the parameters and was never tested, so an illegal choice was offered).
#[test]
fn a_quantifier_in_a_guard_needs_only_the_parameters_it_reads() {
    let src = "kind soldier { reach: int }\nunit a: soldier { reach: 2 }\n\
        action shoot(s: soldier, t: soldier) {\n  require any(k in [1, 2], k > 1) and s.reach > 0\n  \
        require count(k in [1, 2], k <= t.reach) > 0\n}\n";
    let c = sandtable_compiler::compile_sources(&[("t.sand", src)]);
    assert!(!c.has_errors(), "{:?}", c.diagnostics);
    let (_, p) = c.program.proc_by_name("shoot").unwrap();
    let levels: Vec<usize> = leading_guards(&p.body).iter().map(|g| g.1).collect();
    assert_eq!(levels, vec![1, 2]);
}
