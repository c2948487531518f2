//! What one side keeps from the other: secret counters (the turn block's `secret_counters:`,
//! scores each piece rolls and keeps) and secret markers (a force's `secret_markers: true`,
//! marks on a map the other side never sees until they are revealed).

use sandtable_runtime::engine::log::{Event, narrate};
use sandtable_runtime::engine::policy::{Policy, Random};
use sandtable_runtime::engine::{Game, Rules};
use sandtable_runtime::interp::Assumptions;

const SRC: &str = r#"
side blue "Blue"
side red "Red"
kind trooper { speed: length }
unit blue_trooper: trooper of blue "Blue trooper" { speed: 6cm }
unit red_trooper: trooper of red "Red trooper" { speed: 6cm }
marker mine "Mine"

board field: sectors {
  width: 60cm
  depth: 30cm
  sector: 30cm
  zones: 3
  base: 2cm
  area blue_edge { rect: 0cm, 0cm, 10cm, 30cm }
  area red_edge { rect: 40cm, 0cm, 60cm, 30cm }
  area minefield { rect: 20cm, 0cm, 40cm, 30cm }
}

activation sides: alternating { sides: blue, red }

turn {
  secret_counters: nerve
  phase roll "Roll" {
    on run { for t in units(trooper) { set_counter(t, "nerve", d6) } }
  }
  phase move "Move" {
    activation: sides
    actions: advance
  }
}

action advance(t: trooper, toward: piece, d: length) {
  require toward != t
  require d <= t.speed
  move_toward(t, toward, d)
}

scenario meeting "Meeting" {
  board: field
  turns: 2
  force blue { units: 2 * blue_trooper, deploy: blue_edge }
  force red { units: 2 * red_trooper, markers: 1 * mine, deploy: red_edge, markers_deploy: minefield, secret_markers: true }
  victory { win blue }
}
"#;

fn played<'r, 'p>(rules: &'r Rules<'p>, seed: u64) -> Game<'r, 'p> {
    let mut g = Game::new(rules, seed, None);
    let mut policies: Vec<Box<dyn Policy>> = (0..2)
        .map(|s| Box::new(Random::new(seed, s)) as Box<dyn Policy>)
        .collect();
    g.play(&mut policies).unwrap();
    g
}

#[test]
fn secret_counters_are_logged_silently_and_shown_to_their_own_side_only() {
    let c = sandtable_conformance::compile_clean(SRC);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "meeting").unwrap();
    let names: Vec<&str> = rules
        .secret_counters
        .iter()
        .map(|c| rules.program.counter_name(*c))
        .collect();
    assert_eq!(names, ["nerve"]);
    let g = played(&rules, 3);
    let counted: Vec<&Event> = g
        .events
        .iter()
        .filter(|e| matches!(e, Event::Counted { .. }))
        .collect();
    // Four troopers, two turns: every roll is in the log, none in the story.
    assert_eq!(counted.len(), 8, "{counted:?}");
    for e in &counted {
        let Event::Counted { counter, value, .. } = e else {
            unreachable!()
        };
        assert_eq!(counter, "nerve");
        assert!((1..=6).contains(value));
        assert_eq!(narrate(e, None), None);
    }
    let blue = g.view(0);
    let lines = |v: &str, who: &str| -> Vec<String> {
        v.lines()
            .filter(|l| l.contains(who))
            .map(str::to_string)
            .collect()
    };
    assert!(
        lines(&blue, "blue_trooper")
            .iter()
            .all(|l| l.contains("{nerve ")),
        "{blue}"
    );
    assert!(
        lines(&blue, "red_trooper")
            .iter()
            .all(|l| !l.contains("nerve")),
        "{blue}"
    );
    let red = g.view(1);
    assert!(
        lines(&red, "red_trooper")
            .iter()
            .all(|l| l.contains("{nerve "))
    );
    assert!(
        lines(&red, "blue_trooper")
            .iter()
            .all(|l| !l.contains("nerve"))
    );
}

#[test]
fn a_look_ahead_shuffles_the_other_sides_secret_counters_and_keeps_its_own() {
    let c = sandtable_conformance::compile_clean(SRC);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "meeting").unwrap();
    // Stop at blue's first decision of turn 1, after the roll.
    let mut g = Game::new(&rules, 5, None);
    let mut rnd = Random::new(5, 0);
    g.advance().unwrap();
    while g.state.turn == 0 {
        let side = g.to_move().unwrap();
        let k = rnd.choose(&g, side, g.legal()).unwrap();
        g.apply(k).unwrap();
    }
    let nerve = |g: &Game, side: u32| -> Vec<i64> {
        g.state
            .pieces
            .iter()
            .filter(|p| p.side == Some(side))
            .map(|p| p.counter(g.rules.program.counter_id("nerve").expect("kept")))
            .collect()
    };
    for seed in 0..20 {
        let w = g.possible_world(0, seed);
        assert_eq!(nerve(&w, 0), nerve(&g, 0), "its own scores are known");
        let mut theirs = nerve(&w, 1);
        let mut real = nerve(&g, 1);
        theirs.sort();
        real.sort();
        assert_eq!(theirs, real, "the other side's scores are only shuffled");
    }
}

#[test]
fn secret_markers_are_unseen_by_the_other_side_until_revealed() {
    let c = sandtable_conformance::compile_clean(SRC);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "meeting").unwrap();
    let g = played(&rules, 7);
    let mine = g
        .state
        .pieces
        .iter()
        .position(|p| &*p.label == "mine")
        .unwrap();
    assert!(g.state.pieces[mine].secret);
    // Set up in its own area (`markers_deploy:`), not the force's.
    match g.state.pieces[mine].pos {
        Some(sandtable_runtime::engine::state::Pos::Point(p)) => {
            assert!((2000..=4000).contains(&p.x()), "{p:?}")
        }
        other => panic!("{other:?}"),
    }
    assert!(!g.view(0).contains("mine"), "{}", g.view(0));
    assert!(g.view(1).contains("mine"), "{}", g.view(1));
    // Blue's look-ahead has no mine on its board; red's has.
    assert!(!g.possible_world(0, 1).state.pieces[mine].on_board());
    assert!(g.possible_world(1, 1).state.pieces[mine].on_board());
    // Blue is never offered the mine as an aim; red is.
    let mut offered = [false, false];
    let mut g = Game::new(&rules, 7, None);
    let mut pol: Vec<Random> = (0..2).map(|s| Random::new(7, s)).collect();
    g.advance().unwrap();
    while let Some(side) = g.to_move() {
        for c in g.legal() {
            if g.label(side, c).contains("mine") && g.state.turn > 0 {
                offered[side as usize] = true;
            }
        }
        let k = pol[side as usize].choose(&g, side, g.legal()).unwrap();
        g.apply(k).unwrap();
    }
    assert_eq!(offered, [false, true]);
}

#[test]
fn a_human_player_is_never_told_of_the_other_sides_secret_marker() {
    use sandtable_runtime::engine::policy::Human;
    let c = sandtable_conformance::compile_clean(SRC);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "meeting").unwrap();
    let mut out = Vec::new();
    {
        let answers = std::io::Cursor::new("1\n".repeat(200));
        let mut policies: Vec<Box<dyn Policy + '_>> = vec![
            Box::new(Human::new(answers, &mut out)),
            Box::new(Random::new(2, 1)),
        ];
        let mut g = Game::new(&rules, 2, None);
        g.play(&mut policies).unwrap();
        // The referee's record names it: the red side set it up.
        assert!(g.events.iter().any(|e| matches!(e,
            Event::Decision { side, label, .. } if side == "red" && label.starts_with("deploy mine"))));
    }
    let shown = String::from_utf8(out).unwrap();
    assert!(shown.contains("red_trooper"), "{shown}");
    assert!(!shown.contains("mine"), "{shown}");
}

/// A pick another side makes inside an action (`choose … by SIDE`) is not told to a human
/// player: only what follows is. Here red is asked, whenever blue waits, whether to mark the
/// trooper; blue's screen shows the marks that land, never red's answer.
#[test]
fn a_human_player_is_not_told_what_the_other_side_picks_inside_an_action() {
    use sandtable_runtime::engine::policy::Human;
    const ASKED: &str = r#"
side blue "Blue"
side red "Red"
kind trooper { speed: length }
unit blue_trooper: trooper of blue "Blue trooper" { speed: 6cm }
unit red_trooper: trooper of red "Red trooper" { speed: 6cm }
marker marked "Marked"

board field: open {
  width: 60cm
  depth: 30cm
  area blue_edge { rect: 0cm, 0cm, 10cm, 30cm }
  area red_edge { rect: 50cm, 0cm, 60cm, 30cm }
}

activation sides: alternating { sides: blue, red }

turn {
  phase wait "Wait" {
    activation: sides
    actions: lie_still
  }
}

action lie_still(t: trooper) {
  choose mark from [0, 1] by enemy(t) {
    if mark == 1 { place marked on t }
  }
}

scenario waiting "Waiting" {
  board: field
  turns: 3
  force blue { units: 1 * blue_trooper, deploy: blue_edge }
  force red { units: 1 * red_trooper, deploy: red_edge }
  victory { win blue }
}
"#;
    let c = sandtable_conformance::compile_clean(ASKED);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "waiting").unwrap();
    let mut out = Vec::new();
    let red_picks;
    {
        let answers = std::io::Cursor::new("1\n".repeat(200));
        let mut policies: Vec<Box<dyn Policy + '_>> = vec![
            Box::new(Human::new(answers, &mut out)),
            Box::new(Random::new(4, 1)),
        ];
        let mut g = Game::new(&rules, 4, None);
        g.play(&mut policies).unwrap();
        red_picks = g
            .events
            .iter()
            .filter(|e| {
                matches!(e, Event::Decision { side, label, .. }
                if side == "red" && label.starts_with("choose "))
            })
            .count();
    }
    // Red was asked (the record has its answers), and blue was told none of them.
    assert!(red_picks >= 3, "red answered {red_picks} times");
    let shown = String::from_utf8(out).unwrap();
    assert!(shown.contains("lie_still(blue_trooper)"), "{shown}");
    assert!(!shown.contains("red: choose"), "{shown}");
}
