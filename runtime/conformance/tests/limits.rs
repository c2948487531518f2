//! Resource limits of the runtime, each at a size that used to exhaust time, memory or stack:
//! deep nesting in `sim`'s workers, the number of legal choices of one decision, the exact
//! enumerator's work budget, and line of sight on the largest hex board. (The JIT's memory on
//! deep nesting is measured alone, in `jit_memory.rs`.)

use std::time::{Duration, Instant};

use sandtable_ir::Program;
use sandtable_runtime::engine::policy::{Policy, Random};
use sandtable_runtime::engine::sim::simulate;
use sandtable_runtime::engine::{Game, Rules};
use sandtable_runtime::interp::Assumptions;
use sandtable_runtime::jit::BackendKind;

fn compile(src: &str) -> Program {
    sandtable_conformance::compile_clean(src).program
}

/// Run `f` on a thread with the CLI's stack: compiling and interpreting deeply nested rules
/// recurses as deeply as the nesting, as it does under `sandtable`.
fn with_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// A game whose one action holds an `else if` chain `depth` long.
fn deep_chain_game(depth: usize) -> String {
    let mut chain = String::new();
    for k in 0..depth {
        chain.push_str(&format!(
            "if score_of(reds) == {} {{ score reds += 1 }} else ",
            k + 1000
        ));
    }
    chain.push_str("{ score reds += 1 }");
    format!(
        r#"side reds "Reds"
side blacks "Blacks"
kind soldier {{ fire_modifier: int }}
unit red_soldier: soldier of reds "Red soldier" {{ fire_modifier: 1 }}
unit black_soldier: soldier of blacks "Black soldier" {{ fire_modifier: 1 }}
terrain open_ground "Open ground" {{ target_modifier: 0 }}
board field: hex {{
  columns: A..=C
  rows: 1..=3
  default: open_ground
}}
activation each: alternating {{
  sides: reds, blacks
}}
turn {{
  phase play "Play" {{
    activation: each
    actions: tally
  }}
}}
action tally(s: soldier) {{
  {chain}
}}
scenario long "Long" {{
  board: field
  turns: 2
  force reds {{ units: 1 * red_soldier, deploy: rows = 1..=1 }}
  force blacks {{ units: 1 * black_soldier, deploy: rows = 3..=3 }}
  victory {{
    if score_of(reds) > 0 {{ win reds }} else {{ win blacks }}
  }}
}}
"#
    )
}

#[test]
fn sim_workers_have_the_stack_run_has() {
    // Deep enough to overflow a default 2 MB worker stack while running the action.
    let src = deep_chain_game(20_000);
    with_big_stack(move || {
        let program = compile(&src);
        let a = Assumptions::default();
        let rules = Rules::new(&program, &a, "long").unwrap();
        let policies = vec!["random".to_string(); 2];
        let t = simulate(&rules, 2, 1, 2, BackendKind::Interp, &policies, &|_| {}).unwrap();
        assert_eq!(t.games, 2);
        let reds = program.sides.iter().position(|s| s.name == "reds").unwrap();
        assert_eq!(t.wins[reds], 2);
    });
}

#[test]
fn a_decision_with_too_many_choices_stops_with_the_action_and_the_figure() {
    // Four piece parameters over 40 pieces, any of the side's 20 acting at a chip: 20 × 39 ×
    // 38 × 37 bindings in one decision.
    let src = r#"side reds "Reds"
side blacks "Blacks"
kind soldier { fire_modifier: int }
unit red_soldier: soldier of reds "Red soldier" { fire_modifier: 1 }
unit black_soldier: soldier of blacks "Black soldier" { fire_modifier: 1 }
terrain open_ground "Open ground" { target_modifier: 0 }
board field: hex {
  columns: A..=J
  rows: 1..=10
  default: open_ground
}
activation cup: chip_cup {
  sides: reds, blacks
}
turn {
  phase play "Play" {
    activation: cup
    actions: volley
  }
}
action volley(s: soldier, a: soldier, b: soldier, c: soldier) {
  score reds += 1
}
scenario crowd "Crowd" {
  board: field
  turns: 1
  chips: reds = 1, blacks = 1
  force reds { units: 20 * red_soldier, deploy: rows = 1..=5 }
  force blacks { units: 20 * black_soldier, deploy: rows = 6..=10 }
  victory { win reds }
}
"#;
    let program = compile(src);
    let a = Assumptions::default();
    let rules = Rules::new(&program, &a, "crowd").unwrap();
    let mut ps: Vec<Box<dyn Policy>> = (0..2).map(|s| Box::new(Random::new(1, s)) as _).collect();
    let started = Instant::now();
    let err = Game::new(&rules, 1, None)
        .play(&mut ps)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`volley`") && err.contains("1000000") && err.contains("bindings"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn exact_enumeration_refuses_a_huge_keep_before_doing_the_work() {
    let program = compile("resolve big() {\n  result highest(500, 1000d1000)\n}\n");
    let a = Assumptions::default();
    let (proc, _) = program.proc_by_name("big").unwrap();
    let started = Instant::now();
    let err = sandtable_runtime::exact::distribution(
        &program,
        &a,
        sandtable_runtime::exact::DEFAULT_LIMIT,
        proc,
        Vec::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("limit 50000000"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "refused only after {:?}",
        started.elapsed()
    );
}

#[test]
fn line_of_sight_over_the_largest_hex_board_finishes() {
    // 1,000 x 1,000 hexes, the documented limit: every hex is a candidate target, and each
    // used to draw a line across the board through every piece.
    let src = r#"side reds "Reds"
side blacks "Blacks"
kind soldier { fire_modifier: int }
unit red_soldier: soldier of reds "Red soldier" { fire_modifier: 1 }
unit black_soldier: soldier of blacks "Black soldier" { fire_modifier: 1 }
terrain open_ground "Open ground" { target_modifier: 0 }
board field: hex {
  columns: 1000
  rows: 1000
  default: open_ground
}
activation each: alternating {
  sides: reds, blacks
}
turn {
  phase play "Play" {
    activation: each
    actions: look
  }
}
action look(s: soldier, h: hex) {
  require in_los(s, h)
  score reds += 1
}
scenario wide "Wide" {
  board: field
  turns: 1
  force reds { units: red_soldier, deploy: rows = 1..=1 }
  force blacks { units: 2 * black_soldier, deploy: rows = 1000..=1000 }
  victory { win reds }
}
"#;
    let program = compile(src);
    let a = Assumptions::default();
    let started = Instant::now();
    let rules = Rules::new(&program, &a, "wide").unwrap();
    let mut ps: Vec<Box<dyn Policy>> = (0..2).map(|s| Box::new(Random::new(1, s)) as _).collect();
    let r = Game::new(&rules, 1, None).play(&mut ps).unwrap();
    // Each of the three soldiers looked once.
    let reds = program.sides.iter().position(|s| s.name == "reds").unwrap();
    assert_eq!(r.scores[reds], 3);
    assert!(
        started.elapsed() < Duration::from_secs(300),
        "took {:?}",
        started.elapsed()
    );
}
