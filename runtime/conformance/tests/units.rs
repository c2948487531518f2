//! Activation units (`activates:`, `all_act_when:`, `together:`): a chip activates every piece
//! of its side in one hex; they act one at a time in the order the side chooses, each once,
//! until the side ends the activation; the leader condition is read from the pieces that
//! started in the hex. Played on `games/squads.sand` and on Platoon.

use sandtable_ir::Program;
use sandtable_runtime::engine::flow::Stage;
use sandtable_runtime::engine::log::Event;
use sandtable_runtime::engine::state::Pos;
use sandtable_runtime::engine::{Game, Rules};
use sandtable_runtime::interp::Assumptions;

fn squads() -> (Program, Assumptions) {
    let root = sandtable_conformance::root();
    let c =
        sandtable_compiler::compile_path(&root.join("runtime/conformance/tests/games/squads.sand"))
            .unwrap();
    assert!(!c.has_errors());
    (c.program, Assumptions::default())
}

fn labels(g: &Game) -> Vec<String> {
    let side = g.to_move().unwrap();
    g.legal().iter().map(|c| g.label(side, c)).collect()
}

/// Apply the choice with this label (it must be offered).
fn choose(g: &mut Game, label: &str) {
    let all = labels(g);
    let k = all
        .iter()
        .position(|l| l == label)
        .unwrap_or_else(|| panic!("`{label}` is not offered: {all:?}"));
    g.apply(k).unwrap();
}

fn offered(g: &Game, label: &str) -> bool {
    labels(g).iter().any(|l| l == label)
}

/// Whether an activation is under way (its unit picked).
fn mid_activation(g: &Game) -> bool {
    matches!(&g.flow.stage, Stage::Unit { unit, .. } if unit.pieces.is_some())
}

fn hex_of(g: &Game, label: &str) -> String {
    let p = g.state.pieces.iter().find(|p| &*p.label == label).unwrap();
    match p.pos {
        Some(Pos::Hex(h)) => h.to_string(),
        other => panic!("{label} is at {other:?}"),
    }
}

/// Deploy as given, then let red wait until blue's chip: the game waits for blue to pick a
/// unit.
fn deployed<'r, 'p>(rules: &'r Rules<'p>, seed: u64, at: &[(&str, &str)]) -> Game<'r, 'p> {
    let mut g = Game::new(rules, seed, None);
    g.advance().unwrap();
    for (piece, hex) in at {
        choose(&mut g, &format!("deploy {piece} at {hex}"));
    }
    while g.to_move() == Some(1) {
        if offered(&g, "wait()") {
            choose(&mut g, "wait()");
        } else {
            choose(&mut g, "end the activation");
        }
    }
    assert_eq!(g.to_move(), Some(0), "blue never drew a chip");
    g
}

const LED: &[(&str, &str)] = &[
    ("captain", "B2"),
    ("blue_private #1", "B2"),
    ("blue_private #2", "B2"),
    ("red_private", "E5"),
];

#[test]
fn a_chip_activates_every_piece_of_the_hex_one_at_a_time_in_the_order_chosen() {
    let (program, a) = squads();
    let rules = Rules::new(&program, &a, "squads").unwrap();
    let mut g = deployed(&rules, 1, LED);
    choose(&mut g, "activate hex B2 (3 units)");
    assert!(matches!(
        g.events.last(),
        Some(Event::Activated {
            pieces: 3,
            all: true,
            ..
        })
    ));
    for piece in ["captain", "blue_private #1", "blue_private #2"] {
        assert!(offered(&g, &format!("step({piece}, C2)")), "{piece}");
    }
    assert!(offered(&g, "end the activation"));
    // The captain leaves first: the privates that started with him still act, all of them.
    choose(&mut g, "step(captain, C2)");
    assert!(mid_activation(&g));
    assert!(!labels(&g).iter().any(|l| l.starts_with("step(captain")));
    choose(&mut g, "step(blue_private #2, B3)");
    assert!(
        !labels(&g)
            .iter()
            .any(|l| l.starts_with("step(blue_private #2"))
    );
    choose(&mut g, "step(blue_private #1, B1)");
    // Each piece acted once: the activation is over.
    assert!(!mid_activation(&g));
    assert_eq!(
        ["captain", "blue_private #1", "blue_private #2"].map(|p| hex_of(&g, p)),
        ["C2", "B1", "B3"]
    );
}

#[test]
fn ending_the_activation_leaves_the_other_pieces_unused() {
    let (program, a) = squads();
    let rules = Rules::new(&program, &a, "squads").unwrap();
    let mut g = deployed(&rules, 1, LED);
    choose(&mut g, "activate hex B2 (3 units)");
    choose(&mut g, "step(blue_private #1, A2)");
    choose(&mut g, "end the activation");
    assert!(!mid_activation(&g));
    assert_eq!(hex_of(&g, "captain"), "B2");
    assert_eq!(hex_of(&g, "blue_private #2"), "B2");
}

#[test]
fn without_a_leader_only_one_piece_of_the_hex_acts() {
    let (program, a) = squads();
    let rules = Rules::new(&program, &a, "squads").unwrap();
    let mut g = deployed(
        &rules,
        1,
        &[
            ("captain", "D1"),
            ("blue_private #1", "B2"),
            ("blue_private #2", "B2"),
            ("red_private", "E5"),
        ],
    );
    choose(&mut g, "activate hex B2 (2 units)");
    assert!(matches!(
        g.events.last(),
        Some(Event::Activated {
            pieces: 2,
            all: false,
            ..
        })
    ));
    choose(&mut g, "step(blue_private #2, C2)");
    assert!(!mid_activation(&g));
    assert_eq!(hex_of(&g, "blue_private #1"), "B2");
}

#[test]
fn a_shaken_leader_does_not_lead() {
    let (program, a) = squads();
    let rules = Rules::new(&program, &a, "squads").unwrap();
    // A seed whose first chip is red's: red shakes the blues next to it first.
    let mut found = false;
    for seed in 0..40 {
        let mut g = Game::new(&rules, seed, None);
        g.advance().unwrap();
        for (piece, hex) in [
            ("captain", "B2"),
            ("blue_private #1", "B2"),
            ("blue_private #2", "B2"),
            ("red_private", "B4"),
        ] {
            choose(&mut g, &format!("deploy {piece} at {hex}"));
        }
        if g.to_move() != Some(1) {
            continue;
        }
        choose(&mut g, "activate hex B4 (1 unit)");
        choose(&mut g, "shake(red_private)");
        while g.to_move() == Some(1) {
            choose(&mut g, "wait()");
        }
        choose(&mut g, "activate hex B2 (3 units)");
        assert!(matches!(
            g.events.last(),
            Some(Event::Activated {
                pieces: 3,
                all: false,
                ..
            })
        ));
        choose(&mut g, "step(captain, C2)");
        assert!(!mid_activation(&g));
        found = true;
        break;
    }
    assert!(found, "no seed drew red's chip first");
}

#[test]
fn unused_pieces_of_a_unit_may_step_together() {
    let (program, a) = squads();
    let rules = Rules::new(&program, &a, "squads").unwrap();
    let mut g = deployed(&rules, 1, LED);
    choose(&mut g, "activate hex B2 (3 units)");
    choose(&mut g, "step(blue_private #1, A2)");
    // The pieces still unused, to one place, as one choice; the one used is not in it.
    assert!(!offered(
        &g,
        "step(captain + blue_private #1 + blue_private #2, C2) together"
    ));
    choose(&mut g, "step(captain + blue_private #2, C2) together");
    assert!(!mid_activation(&g));
    assert_eq!(hex_of(&g, "captain"), "C2");
    assert_eq!(hex_of(&g, "blue_private #2"), "C2");
    assert_eq!(hex_of(&g, "blue_private #1"), "A2");
}

#[test]
fn passing_instead_of_a_unit_uses_up_the_chip() {
    let (program, a) = squads();
    let rules = Rules::new(&program, &a, "squads").unwrap();
    let mut g = deployed(&rules, 1, LED);
    let chips = g.chips_drawn().to_vec();
    choose(&mut g, "wait()");
    assert!(!mid_activation(&g));
    // The next decision (if any) follows a new chip.
    if !g.is_over() {
        assert_eq!(
            g.chips_drawn().iter().sum::<u32>(),
            chips.iter().sum::<u32>() + 1
        );
    }
}

/// Platoon 3.b / 4.d: an NVA chip activates a hex of three with their leader, and all three
/// act, one at a time.
#[test]
fn a_platoon_chip_lets_every_nva_unit_of_a_led_hex_act() {
    let root = sandtable_conformance::root();
    let c = sandtable_compiler::compile_path(&root.join("rules/platoon")).unwrap();
    assert!(!c.has_errors());
    let a = sandtable_conformance::assumptions(
        &c.program,
        &[],
        &[root
            .join("rules/platoon/assumptions/protecting-the-flank.assume")
            .as_path()],
    )
    .unwrap();
    let rules = Rules::new(&c.program, &a, "protecting-the-flank").unwrap();
    let nva = c
        .program
        .sides
        .iter()
        .position(|s| s.name == "nva")
        .unwrap() as u32;
    let mut g = Game::new(&rules, 2, None);
    g.advance().unwrap();
    let stack = ["nva_leader_ak47_2_3", "nva_rpd", "nva_rpg"];
    for p in stack {
        choose(&mut g, &format!("deploy {p} at N4"));
    }
    // Everything else where it may go first; the Americans pass.
    while labels(&g)[0].starts_with("deploy") {
        g.apply(0).unwrap();
    }
    let mut acted = Vec::new();
    while !g.is_over() {
        let side = g.to_move().unwrap();
        if side != nva {
            let l = if offered(&g, "pass()") {
                "pass()"
            } else {
                "end the activation"
            };
            choose(&mut g, l);
            continue;
        }
        choose(&mut g, "activate hex N4 (3 units)");
        assert!(matches!(
            g.events.last(),
            Some(Event::Activated {
                pieces: 3,
                all: true,
                ..
            })
        ));
        while mid_activation(&g) {
            let all = labels(&g);
            let k = all
                .iter()
                .position(|l| l.starts_with("move_piece("))
                .unwrap();
            acted.push(all[k].clone());
            g.apply(k).unwrap();
        }
        break;
    }
    assert_eq!(acted.len(), 3, "{acted:?}");
    for p in stack {
        assert!(
            acted
                .iter()
                .any(|l| l.starts_with(&format!("move_piece({p},"))),
            "{p} did not act: {acted:?}"
        );
    }
}

#[test]
fn an_action_may_use_a_second_piece_of_the_unit_and_let_the_other_side_choose() {
    // Platoon 7.d: a leader calls artillery with a radio of his hex ("using BOTH soldiers"),
    // and a strike that falls short is moved by the side it was aimed at. `actions_left`
    // and `spend` book the second piece; `choose … by SIDE` asks another side than the
    // acting one, and the log and a replay agree.
    let root = sandtable_conformance::root();
    let src = std::fs::read_to_string(root.join("runtime/conformance/tests/games/squads.sand"))
        .unwrap()
        .replace(
            "actions: step, shake, wait",
            "actions: step, shake, wait, call_in",
        )
        + r#"
action call_in(t: trooper, mate: trooper, target: hex) {
  require t.leader
  require mate != t
  require owner(mate) == owner(t)
  require position(mate) == position(t)
  require actions_left(mate) > 0
  require count_units(target, enemy(t)) > 0
  spend(mate)
  choose struck from hexes_within(target, 1) by enemy(t) {
    place shaken on struck
  }
}
"#;
    let c = sandtable_conformance::compile_clean(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "squads").unwrap();
    let mut g = deployed(&rules, 1, LED);
    choose(&mut g, "activate hex B2 (3 units)");
    // The privates have their action: each may be the captain's second piece.
    assert!(offered(&g, "call_in(captain, blue_private #1, E5)"));
    choose(&mut g, "call_in(captain, blue_private #1, E5)");
    // Red, not blue, picks where it falls.
    assert_eq!(g.to_move(), Some(1));
    let picks = labels(&g);
    assert!(picks.contains(&"choose E4".to_string()), "{picks:?}");
    choose(&mut g, "choose E4");
    assert!(g.events.iter().any(|e| matches!(e,
        Event::Decision { side, label, .. } if side == "red" && label == "choose E4")));
    // Back to blue's activation: the captain and the private he used have acted.
    assert_eq!(g.to_move(), Some(0));
    let left = labels(&g);
    assert!(
        !left
            .iter()
            .any(|l| l.contains("captain") || l.contains("blue_private #1")),
        "{left:?}"
    );
    assert!(offered(&g, "step(blue_private #2, B3)"), "{left:?}");
    // Once the private has acted he cannot be used again.
    choose(&mut g, "step(blue_private #2, B3)");
    assert!(!mid_activation(&g));

    // Whole games replay from their logs, the other side's picks included.
    for seed in 0..6 {
        let mut ps: Vec<Box<dyn sandtable_runtime::engine::policy::Policy>> = (0..2)
            .map(|s| Box::new(sandtable_runtime::engine::policy::Random::new(seed, s)) as _)
            .collect();
        let mut game = Game::new(&rules, seed, None);
        let result = game.play(&mut ps).unwrap();
        let mut scripted =
            sandtable_runtime::engine::policy::Scripted::from_events(&c.program, &game.events)
                .unwrap();
        let mut again = Game::new(&rules, seed, None);
        assert_eq!(again.play(&mut scripted).unwrap(), result);
        assert_eq!(again.events, game.events);
    }
}

#[test]
fn pieces_moving_together_know_which_of_them_arrives_last() {
    // Platoon 5.c.3 with 4.d's exception: a group moving together into an enemy hex fights
    // ONE melee, with all of it, once the last has arrived. `together_left()` is the number
    // of the choice's pieces still to go after the one acting (0 for the last, and for a
    // piece acting alone); kept here on side counters to be read back.
    let root = sandtable_conformance::root();
    let src = std::fs::read_to_string(root.join("runtime/conformance/tests/games/squads.sand"))
        .unwrap()
        .replace(
            "  move t to dest\n}",
            "  move t to dest\n  add_counter(owner(t), \"steps\", 1)\n  if together_left() == 0 { add_counter(owner(t), \"fights\", 1) }\n}",
        );
    assert!(src.contains("fights"), "the step action was not found");
    let c = sandtable_conformance::compile_clean(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "squads").unwrap();
    let mut g = deployed(&rules, 1, LED);
    choose(&mut g, "activate hex B2 (3 units)");
    choose(
        &mut g,
        "step(captain + blue_private #1 + blue_private #2, C2) together",
    );
    let counter = |g: &Game, name: &str| {
        g.state
            .side_counters
            .iter()
            .find(|(s, n, _)| *s == 0 && Some(*n) == g.rules.program.counter_id(name))
            .map_or(0, |c| c.2)
    };
    assert_eq!(counter(&g, "steps"), 3);
    assert_eq!(counter(&g, "fights"), 1, "only the last of the three");
    // A piece on its own is its own last.
    let mut g = deployed(&rules, 1, LED);
    choose(&mut g, "activate hex B2 (3 units)");
    choose(&mut g, "step(captain, C2)");
    assert_eq!((counter(&g, "steps"), counter(&g, "fights")), (1, 1));
}

#[test]
fn pieces_moving_together_answer_a_choose_inside_their_action_each_in_turn() {
    // Platoon 5.c.3 with 4.d's exception: a group that moved together and lost its melee
    // falls back to a hex its player picks, inside the last piece's move. A `choose` inside
    // the action of a piece acting together waits for the side; once answered, that piece's
    // action ends and the pieces after it act (each asking its own).
    let root = sandtable_conformance::root();
    let src = std::fs::read_to_string(root.join("runtime/conformance/tests/games/squads.sand"))
        .unwrap()
        .replace(
            "  move t to dest\n}",
            "  move t to dest\n  let last = together_left() == 0\n  choose h from hexes_within(dest, 1) {\n    move t to h\n    if last { add_counter(owner(t), \"last\", 1) }\n  }\n}",
        );
    assert!(src.contains("choose h"), "the step action was not found");
    let c = sandtable_conformance::compile_clean(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "squads").unwrap();
    let mut g = deployed(&rules, 1, LED);
    choose(&mut g, "activate hex B2 (3 units)");
    choose(
        &mut g,
        "step(captain + blue_private #1 + blue_private #2, C2) together",
    );
    assert_eq!(
        hex_of(&g, "blue_private #2"),
        "B2",
        "the last waits for the first"
    );
    for (piece, to) in [
        ("captain", "C1"),
        ("blue_private #1", "C3"),
        ("blue_private #2", "D2"),
    ] {
        assert_eq!(g.to_move(), Some(0), "blue answers for {piece}");
        assert!(g.decision().is_some_and(|d| d.inside.is_some()));
        choose(&mut g, &format!("choose {to}"));
        assert_eq!(hex_of(&g, piece), to);
    }
    assert!(!mid_activation(&g));
    assert!(g.flow.together.is_none());
    let last = g
        .state
        .side_counters
        .iter()
        .find(|(s, n, _)| *s == 0 && Some(*n) == g.rules.program.counter_id("last"))
        .map_or(0, |c| c.2);
    assert_eq!(last, 1, "only the last of the three knows it is last");
}

/// `actions_per_piece` on a side-after-side activation: each piece in turn takes up to that
/// many actions in a row, then the next piece; the side may end a piece's turn early.
#[test]
fn a_sequence_activation_gives_each_piece_its_actions_in_a_row() {
    let src = r#"
side blue "Blue"
side red "Red"
kind trooper { speed: length }
unit blue_trooper: trooper of blue "Blue trooper" { speed: 6cm }
unit red_trooper: trooper of red "Red trooper" { speed: 6cm }
board field: open {
  width: 60cm
  depth: 30cm
  base: 2cm
  area blue_edge { rect: 0cm, 0cm, 10cm, 30cm }
  area red_edge { rect: 50cm, 0cm, 60cm, 30cm }
}
activation turns: sequence {
  sides: blue, red
  actions_per_piece: 2
}
turn {
  phase act "Act" {
    activation: turns
    actions: shout
  }
}
action shout(t: trooper) {
  add_counter(t, "shouts", 1)
}
scenario s "S" {
  board: field
  turns: 1
  force blue { units: 2 * blue_trooper, deploy: blue_edge }
  force red { units: 1 * red_trooper, deploy: red_edge }
  victory { win blue }
}
"#;
    let c = sandtable_conformance::compile_clean(src);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "s").unwrap();
    let mut g = Game::new(&rules, 1, None);
    g.advance().unwrap();
    while g.state.turn == 0 {
        g.apply(0).unwrap();
    }
    // Blue's first trooper: two shouts in a row, then it has nothing left.
    choose(&mut g, "shout(blue_trooper #1)");
    assert!(offered(&g, "end the activation"));
    choose(&mut g, "shout(blue_trooper #1)");
    // The second trooper ends its turn after one shout.
    choose(&mut g, "shout(blue_trooper #2)");
    choose(&mut g, "end the activation");
    choose(&mut g, "shout(red_trooper)");
    choose(&mut g, "shout(red_trooper)");
    assert!(g.is_over());
    let id = c
        .program
        .counter_id("shouts")
        .expect("the rules keep shouts");
    let shouts: Vec<i64> = g.state.pieces.iter().map(|p| p.counter(id)).collect();
    assert_eq!(shouts, vec![2, 1, 2]);
    assert!(
        g.events.iter().any(|e| matches!(e,
        Event::Activated { by, unit, pieces: 1, .. } if by == "turn" && unit == "blue_trooper #1"))
    );
}
