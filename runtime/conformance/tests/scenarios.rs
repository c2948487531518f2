//! Scenario constructs a newcomer needed: the turn block's `limit`, pieces of no side (a
//! force's `markers:` and `neutral` blocks) on every board kind, chip counts taken from the
//! live forces, victory decided at a turn's end, and ground given by enum members.

use sandtable_ir::{Program, SideId};
use sandtable_runtime::engine::log::Event;
use sandtable_runtime::engine::policy::{Policy, Random};
use sandtable_runtime::engine::sim::simulate;
use sandtable_runtime::engine::state::{Pos, Winner};
use sandtable_runtime::engine::{Game, GameResult, Rules};
use sandtable_runtime::interp::Assumptions;
use sandtable_runtime::jit::BackendKind;

fn compile(src: &str) -> Program {
    sandtable_conformance::compile_clean(src).program
}

fn side(program: &Program, name: &str) -> SideId {
    program.sides.iter().position(|s| s.name == name).unwrap() as SideId
}

fn play<'r, 'p>(rules: &'r Rules<'p>, seed: u64) -> (Game<'r, 'p>, GameResult) {
    let mut ps: Vec<Box<dyn Policy>> = (0..rules.program.sides.len() as u32)
        .map(|s| Box::new(Random::new(seed, s)) as _)
        .collect();
    let mut g = Game::new(rules, seed, None);
    let r = g.play(&mut ps).unwrap();
    (g, r)
}

/// Two sides of soldiers on a 6 x 6 hex board; `TURN` and `SCENARIO` are filled in.
const BASE: &str = r#"side reds "Reds"
side blacks "Blacks"
kind soldier { fire_modifier: int }
kind squad_leader { fire_modifier: int }
unit red_soldier: soldier of reds "Red soldier" { fire_modifier: 1 }
unit red_leader: squad_leader of reds "Red leader" { fire_modifier: 2 }
unit black_soldier: soldier of blacks "Black soldier" { fire_modifier: 1 }
terrain open_ground "Open ground" { target_modifier: 0 }
marker objective "Objective"
marker trench "Trench"
board field: hex {
  columns: A..=F
  rows: 1..=6
  default: open_ground
}
board table: open {
  width: 24in
  depth: 24in
  area north { rect: 0in, 0in, 24in, 4in }
  area south { rect: 0in, 20in, 24in, 24in }
}
activation cup: chip_cup {
  sides: reds, blacks
}
action wait() {}
action shoot(s: soldier, t: soldier) {
  require owner(t) != owner(s)
  if d6 >= 4 { eliminate t }
}
TURN
SCENARIO
"#;

fn game(turn: &str, scenario: &str) -> String {
    BASE.replace("TURN", turn).replace("SCENARIO", scenario)
}

const PLAIN_TURN: &str = r#"turn {
  phase play "Play" {
    activation: cup
    actions: wait
  }
}"#;

#[test]
fn the_turn_blocks_limit_ends_the_game_when_the_scenario_sets_no_turns() {
    let turn = PLAIN_TURN.replace("turn {", "turn {\n  limit: 3");
    let src = game(
        &turn,
        r#"scenario skirmish "Skirmish" {
  board: field
  chips: reds = 1, blacks = 1
  force reds { units: red_soldier, deploy: rows = 1..=1 }
  force blacks { units: black_soldier, deploy: rows = 6..=6 }
  victory { win reds }
}
scenario longer "Longer" {
  board: field
  turns: 5
  chips: reds = 1, blacks = 1
  force reds { units: red_soldier, deploy: rows = 1..=1 }
  force blacks { units: black_soldier, deploy: rows = 6..=6 }
  victory { win reds }
}"#,
    );
    let program = compile(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&program, &a, "skirmish").unwrap();
    assert_eq!(rules.turns, 3);
    assert!(rules.turns_printed);
    let (g, r) = play(&rules, 1);
    assert_eq!(r.turns, 3);
    let turns = g
        .events
        .iter()
        .filter(|e| matches!(e, Event::Turn { .. }))
        .count();
    assert_eq!(turns, 3);
    // A scenario's own `turns:` overrides the turn block's limit.
    let rules = Rules::new(&program, &a, "longer").unwrap();
    assert_eq!(play(&rules, 1).1.turns, 5);
}

#[test]
fn a_limit_out_of_range_is_a_check_error_with_the_figure() {
    let turn = PLAIN_TURN.replace("turn {", "turn {\n  limit: 0");
    let src = game(
        &turn,
        r#"scenario skirmish "Skirmish" {
  board: field
  chips: reds = 1, blacks = 1
  force reds { units: red_soldier, deploy: rows = 1..=1 }
  force blacks { units: black_soldier, deploy: rows = 6..=6 }
  victory { win reds }
}"#,
    );
    // `check` finds it, with a span: the engine never sees it.
    let c = sandtable_compiler::compile_sources(&[("case.sand", &src)]);
    let found: Vec<String> = c
        .diagnostics
        .iter()
        .filter(|d| d.code.as_str() == "sand::scenario::bad-value")
        .map(|d| d.message.clone())
        .collect();
    assert!(
        found
            .iter()
            .any(|m| m.contains("1 to 200") && m.contains("not 0")),
        "{found:?}"
    );
}

#[test]
fn neutral_pieces_and_force_markers_are_placed_on_hex_boards_and_tables_and_belong_to_no_side() {
    for (board, reds_at, blacks_at, place) in [
        ("field", "rows = 1..=2", "rows = 5..=6", "D3, C4"),
        ("table", "north", "south", "[12in, 12in], [6in, 12in]"),
    ] {
        let src = game(
            PLAIN_TURN,
            &format!(
                r#"scenario hold "Hold" {{
  board: {board}
  turns: 2
  chips: reds = 2, blacks = 2
  neutral {{ pieces: 2 * objective, at: {place} }}
  force reds {{ units: 2 * red_soldier, markers: 2 * trench, deploy: {reds_at} }}
  force blacks {{ units: 2 * black_soldier, deploy: {blacks_at} }}
  victory {{ if score_of(reds) >= score_of(blacks) {{ win reds }} else {{ win blacks }} }}
}}"#
            ),
        );
        let program = compile(&src);
        let a = Assumptions::default();
        let rules = Rules::new(&program, &a, "hold").unwrap();
        let (g, r) = play(&rules, 3);
        let no_side: Vec<_> = g.state.pieces.iter().filter(|p| p.side.is_none()).collect();
        assert_eq!(no_side.len(), 4, "{board}: two objectives and two trenches");
        for p in &no_side {
            assert!(p.pos.is_some(), "{board}: {} was not placed", p.label);
            assert!(!p.is_unit);
        }
        // The trenches went into the reds' set-up area; the objectives where the scenario
        // put them.
        let objectives: Vec<Pos> = no_side
            .iter()
            .filter(|p| p.label.starts_with("objective"))
            .map(|p| p.pos.unwrap())
            .collect();
        assert_eq!(objectives.len(), 2);
        assert_eq!(
            objectives[0].label(None),
            if board == "field" {
                "D3"
            } else {
                "(12in, 12in)"
            }
        );
        for p in no_side.iter().filter(|p| p.label.starts_with("trench")) {
            match p.pos.unwrap() {
                Pos::Hex(h) => assert!(h.row() <= 2, "{} at {h}", p.label),
                Pos::Point(pt) => assert!(pt.y() <= 4 * 254, "{} at {}", p.label, pt.y()),
            }
        }
        // Only the two sides count: no pseudo-side in the results.
        assert_eq!(rules.sides().len(), 2);
        assert_eq!(r.scores.len(), program.sides.len());
        let policies = vec!["random".to_string(); program.sides.len()];
        let t = simulate(&rules, 4, 1, 1, BackendKind::Interp, &policies, &|_| {}).unwrap();
        assert_eq!(t.wins.len(), 2);
        assert_eq!(t.wins.iter().sum::<u64>() + t.draws, 4);
        // Nobody decided for a piece of no side.
        for e in &g.events {
            if let Event::Decision { label, .. } = e {
                assert!(
                    !label.starts_with("deploy objective"),
                    "{board}: a side placed a neutral piece: {label}"
                );
            }
        }
    }
}

#[test]
fn a_neutral_block_with_a_piece_of_a_side_or_too_few_places_is_refused_by_check() {
    for (neutral, want) in [
        (
            "neutral { pieces: red_soldier, at: D3 }",
            "belongs to side reds",
        ),
        (
            "neutral { pieces: 2 * objective, at: D3 }",
            "2 pieces and 1 places",
        ),
        ("neutral { pieces: objective, at: Z9 }", "off the board"),
    ] {
        let src = game(
            PLAIN_TURN,
            &format!(
                r#"scenario hold "Hold" {{
  board: field
  turns: 2
  chips: reds = 1, blacks = 1
  {neutral}
  force reds {{ units: red_soldier, deploy: rows = 1..=1 }}
  force blacks {{ units: black_soldier, deploy: rows = 6..=6 }}
  victory {{ win reds }}
}}"#
            ),
        );
        // `check` finds these now, with a span: the engine never sees them.
        let c = sandtable_compiler::compile_sources(&[("case.sand", &src)]);
        let found: Vec<String> = c
            .diagnostics
            .iter()
            .filter(|d| d.code.as_str().starts_with("sand::scenario::"))
            .map(|d| d.message.clone())
            .collect();
        assert!(
            found.iter().any(|m| m.contains(want)),
            "{neutral}: {found:?}"
        );
    }
}

#[test]
fn chips_per_unit_follow_the_live_forces_each_turn() {
    let turn = r#"turn {
  phase play "Play" {
    activation: cup
    actions: shoot, wait
  }
}"#;
    let src = game(
        turn,
        r#"scenario fight "Fight" {
  board: field
  turns: 6
  chips: reds = units, blacks = soldier
  force reds { units: 3 * red_soldier, red_leader, deploy: rows = 1..=2 }
  force blacks { units: 3 * black_soldier, deploy: rows = 5..=6 }
  victory { if eliminated(blacks, soldier) > eliminated(reds, soldier) { win reds } else { win blacks } }
}"#,
    );
    let program = compile(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&program, &a, "fight").unwrap();
    let (reds, blacks) = (side(&program, "reds"), side(&program, "blacks"));
    let mut saw_fewer = false;
    for seed in 0..20 {
        let (g, r) = play(&rules, seed);
        // Chips drawn in each turn, per side, against the units alive at the turn's start.
        let mut drawn: Vec<(u32, u32)> = Vec::new();
        for e in &g.events {
            match e {
                Event::Turn { .. } => drawn.push((0, 0)),
                Event::Chip { side, .. } => {
                    let d = drawn.last_mut().unwrap();
                    if side == "reds" {
                        d.0 += 1;
                    } else {
                        d.1 += 1;
                    }
                }
                _ => {}
            }
        }
        // Turn 1: one chip per unit (reds: all four; blacks: their three soldiers). Later
        // turns: never more than the turn before, since units are only lost; and exactly
        // the survivors in the last turn played.
        assert_eq!(
            drawn[0],
            (4, 3),
            "seed {seed}: every unit gives a chip at first"
        );
        for w in drawn.windows(2) {
            assert!(
                w[1].0 <= w[0].0 && w[1].1 <= w[0].1,
                "seed {seed}: {drawn:?}"
            );
        }
        saw_fewer |= drawn.iter().any(|d| d.0 < 4 || d.1 < 3);
        // Units lost in the last turn still drew their chip; before it, none had.
        let last = *drawn.last().unwrap();
        assert!(
            last.0 >= 4 - r.losses[reds as usize],
            "seed {seed}: {drawn:?}"
        );
        assert!(
            last.1 >= 3 - r.losses[blacks as usize],
            "seed {seed}: {drawn:?}"
        );
    }
    assert!(saw_fewer, "no losses in 20 games: the test shows nothing");
}

#[test]
fn a_win_at_a_turns_end_ends_the_game_there_and_the_victory_block_still_scores() {
    let src = game(
        PLAIN_TURN,
        r#"scenario race "Race" {
  board: field
  turns: 6
  chips: reds = 1, blacks = 1
  force reds { units: red_soldier, deploy: rows = 1..=1 }
  force blacks { units: black_soldier, deploy: rows = 6..=6 }
  on turn_end {
    score blacks += 1
    if score_of(blacks) >= 2 { win blacks }
  }
  victory {
    score reds = 7
    win reds
  }
}"#,
    );
    let program = compile(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&program, &a, "race").unwrap();
    let (g, r) = play(&rules, 1);
    assert_eq!(r.turns, 2, "the game went on after the win at turn 2's end");
    assert_eq!(r.winner, Winner::Side(side(&program, "blacks")));
    assert_eq!(r.scores[side(&program, "reds") as usize], 7);
    let turns = g
        .events
        .iter()
        .filter(|e| matches!(e, Event::Turn { .. }))
        .count();
    assert_eq!(turns, 2);
}

#[test]
fn enum_members_give_a_hex_board_its_ground() {
    let src = r#"side reds "Reds"
side blacks "Blacks"
enum ground { paddy, dyke }
kind soldier { fire_modifier: int }
unit red_soldier: soldier of reds "Red soldier" { fire_modifier: 1 }
unit black_soldier: soldier of blacks "Black soldier" { fire_modifier: 1 }
board paddies: hex {
  columns: A..=D
  rows: 1..=4
  default: paddy
  terrain: dyke = [B2, C2]
}
activation each: alternating {
  sides: reds, blacks
}
turn {
  phase play "Play" {
    activation: each
    actions: dig_in
  }
}
action dig_in(s: soldier) {
  require in_terrain(position(s), dyke)
  score reds += 1
}
scenario crossing "Crossing" {
  board: paddies
  turns: 1
  force reds { units: red_soldier, deploy: rows = 2..=2, columns = B..=C }
  force blacks { units: black_soldier, deploy: rows = 4..=4 }
  victory { if score_of(reds) > 0 { win reds } else { win blacks } }
}
"#;
    let program = compile(src);
    let a = Assumptions::default();
    let rules = Rules::new(&program, &a, "crossing").unwrap();
    // The red soldier stands on a dyke (B2 or C2), so it may dig in; the black one in the
    // paddy may not.
    let (_, r) = play(&rules, 1);
    assert_eq!(r.winner, Winner::Side(side(&program, "reds")));
    assert_eq!(r.scores[side(&program, "reds") as usize], 1);
}

/// A `?` in a board's hex list is filled in by the assumption, which paints its hexes.
#[test]
fn an_unknown_hex_in_a_terrain_list_takes_the_assumptions_label() {
    let src = r#"side reds "Reds"
side blacks "Blacks"
enum ground { paddy, dyke }
kind soldier { fire_modifier: int }
unit red_soldier: soldier of reds "Red soldier" { fire_modifier: 1 }
unit black_soldier: soldier of blacks "Black soldier" { fire_modifier: 1 }
board paddies: hex {
  columns: A..=D
  rows: 1..=4
  default: paddy
  terrain: dyke = [B2, ?]
}
activation each: alternating {
  sides: reds, blacks
}
turn {
  phase play "Play" {
    activation: each
    actions: dig_in
  }
}
action dig_in(s: soldier) {
  require in_terrain(position(s), dyke)
  score reds += 1
}
scenario crossing "Crossing" {
  board: paddies
  turns: 1
  force reds { units: red_soldier, deploy: rows = 2..=2, columns = C..=C }
  force blacks { units: black_soldier, deploy: rows = 4..=4 }
  victory { if score_of(reds) > 0 { win reds } else { win blacks } }
}
"#;
    let program = compile(src);
    let winner = |label: &str| {
        let pairs = [(
            "board.paddies.terrain.dyke[1]".to_string(),
            label.to_string(),
        )];
        let a = sandtable_conformance::assumptions(&program, &pairs, &[]).unwrap();
        let rules = Rules::new(&program, &a, "crossing").unwrap();
        play(&rules, 1).1.winner
    };
    // The red soldier stands on C2: a dyke only when the assumption says so.
    assert_eq!(winner("C2"), Winner::Side(side(&program, "reds")));
    assert_eq!(winner("D3"), Winner::Side(side(&program, "blacks")));
    // A label off the board is the assumption's mistake, refused at set-up.
    let pairs = [(
        "board.paddies.terrain.dyke[1]".to_string(),
        "Z9".to_string(),
    )];
    let a = sandtable_conformance::assumptions(&program, &pairs, &[]).unwrap();
    let err = Rules::new(&program, &a, "crossing")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("Z9 is off the board"), "{err}");
}

/// A walk across a hex board whose bog costs its `slog` field more to enter, with the turn's
/// distance counter named by `COUNTER` (empty: none).
fn walk(counter: &str, entry_cost: &str) -> String {
    r#"side reds "Reds"
side blacks "Blacks"
kind soldier { fire_modifier: int }
unit red_soldier: soldier of reds "Red soldier" { fire_modifier: 1 }
unit black_soldier: soldier of blacks "Black soldier" { fire_modifier: 1 }
terrain open_ground "Open ground" { target_modifier: 0 }
terrain bog "Bog" { target_modifier: 0, slog: 2 }
board field: hex {
  columns: A..=F
  rows: 1..=6
  default: open_ground
  ENTRY_COST
  region { terrain: bog, hexes: C3 }
}
activation cup: chip_cup {
  sides: reds, blacks
}
turn {
  COUNTER
  phase play "Play" {
    activation: cup
    actions: step
  }
}
action step(s: soldier, dest: hex) {
  require owner(s) == reds
  require distance(position(s), dest) == 1
  move s to dest
  if counter(s, "walked") >= 2 { win reds }
}
scenario stroll "Stroll" {
  board: field
  turns: 1
  chips: reds = 2, blacks = 1
  force reds { units: red_soldier, deploy: rows = 1..=2 }
  force blacks { units: black_soldier, deploy: rows = 6..=6 }
  victory { win blacks }
}
"#
    .replace("COUNTER", counter)
    .replace("ENTRY_COST", entry_cost)
}

#[test]
fn the_turn_blocks_distance_counter_adds_up_each_move_and_no_counter_is_kept_without_it() {
    // Two one-hex steps in the turn: the counter the ruleset names reaches 2.
    let program = compile(&walk("distance_counter: walked", ""));
    let a = Assumptions::default();
    let rules = Rules::new(&program, &a, "stroll").unwrap();
    let walked = rules
        .distance_counter
        .expect("the turn names a distance counter");
    assert_eq!(program.counter_name(walked), "walked");
    let (g, r) = play(&rules, 1);
    assert_eq!(r.winner, Winner::Side(side(&program, "reds")));
    // The turn's end set it back to 0.
    assert!(g.state.pieces.iter().any(|p| p.counters == [(walked, 0)]));
    // Without `distance_counter:` the engine keeps no counter of its own.
    let program = compile(&walk("", ""));
    let rules = Rules::new(&program, &a, "stroll").unwrap();
    assert_eq!(rules.distance_counter, None);
    let (g, r) = play(&rules, 1);
    assert_eq!(r.winner, Winner::Side(side(&program, "blacks")));
    assert!(g.state.pieces.iter().all(|p| p.counters.is_empty()));
}

#[test]
fn the_boards_entry_cost_names_the_terrain_field_added_to_the_cost_of_entering_a_hex() {
    let a = Assumptions::default();
    let bog = 2 * 6 + 2; // C3: column 3, row 3, by `BoardSpec::hex_index`
    let program = compile(&walk("", "entry_cost: slog"));
    let rules = Rules::new(&program, &a, "stroll").unwrap();
    assert_eq!(rules.hex_cost[bog], Some(3));
    assert_eq!(rules.hex_cost[0], Some(1));
    // Without `entry_cost:` no terrain field counts: every hex costs 1.
    let program = compile(&walk("", ""));
    let rules = Rules::new(&program, &a, "stroll").unwrap();
    assert!(rules.hex_cost.iter().all(|c| *c == Some(1)));
}
