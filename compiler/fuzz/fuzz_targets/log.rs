//! Reading and replaying game logs: any text is either a log or a plain refusal, never a
//! panic; a log that reads is played back against the bundled scenario example (the rules most
//! seeded logs come from), which either reproduces its events or stops with an error.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sandtable_runtime::engine::policy::Scripted;
use sandtable_runtime::engine::setup::Rules;
use sandtable_runtime::engine::{Game, log};
use sandtable_runtime::interp::Assumptions;

fn program() -> &'static sandtable_compiler::ir::Program {
    static PROGRAM: OnceLock<sandtable_compiler::Compiled> = OnceLock::new();
    let compiled = PROGRAM.get_or_init(|| {
        sandtable_compiler::compile_sources(&[(
            "scenario.sand",
            include_str!("../../../examples/scenario.sand"),
        )])
    });
    assert!(!compiled.has_errors(), "the bundled example compiles");
    &compiled.program
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok((header, events)) = log::parse(text) else {
        return;
    };
    for e in &events {
        let _ = log::narrate(e, None);
        let _ = log::narrate(e, Some("cm"));
    }
    let program = program();
    let assumptions = Assumptions::default();
    let Ok(rules) = Rules::new(program, &assumptions, &header.scenario) else {
        return;
    };
    let Ok(mut policies) = Scripted::from_events(program, &events) else {
        return;
    };
    let mut game = Game::new(&rules, header.seed, None);
    let _ = game.play(&mut policies);
});
