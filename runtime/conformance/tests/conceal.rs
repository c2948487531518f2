//! `conceal(piece)`: a piece turned face up by `reveal` can be turned face down again (a unit
//! slipping back into the fog as a blind). The other side then sees it only as a hidden piece
//! at its place, in its view and in its choice labels; its own side still knows it.

use sandtable_runtime::engine::policy::{Policy, Random};
use sandtable_runtime::engine::{Game, Rules};
use sandtable_runtime::interp::Assumptions;

const SRC: &str = r#"
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
  area red_edge { rect: 40cm, 0cm, 60cm, 30cm }
}

activation sides: alternating { sides: blue, red }

turn {
  phase fog "Fog" {
    on run {
      // Turn 1 turns every piece face up; turn 2 turns red's face down again.
      if turn_number() == 1 { for t in units(trooper) { reveal(t) } }
      if turn_number() == 2 { for t in units(red, trooper) { conceal(t) } }
    }
  }
  phase move "Move" {
    activation: sides
    actions: close_in
  }
}

action close_in(t: trooper, target: trooper) {
  require owner(target) != owner(t)
  move_toward(t, target, 1cm)
}

scenario meeting "Meeting" {
  board: field
  turns: 2
  force blue { units: 1 * blue_trooper, deploy: blue_edge, hidden: true }
  force red { units: 1 * red_trooper, deploy: red_edge, hidden: true }
  victory { win blue }
}
"#;

fn labels_seen_by_blue(rules: &Rules, seed: u64) -> Vec<(u32, String)> {
    let mut g = Game::new(rules, seed, None);
    let mut policies: Vec<Box<dyn Policy>> = (0..2)
        .map(|s| Box::new(Random::new(seed, s)) as Box<dyn Policy>)
        .collect();
    let mut seen = Vec::new();
    g.advance().unwrap();
    while let Some(side) = g.to_move() {
        if side == 0 && g.state.turn > 0 {
            for c in g.legal() {
                seen.push((g.state.turn, g.label(side, c)));
            }
        }
        let k = policies[side as usize].choose(&g, side, g.legal()).unwrap();
        g.apply(k).unwrap();
    }
    let red = g
        .state
        .pieces
        .iter()
        .position(|p| &*p.label == "red_trooper")
        .unwrap();
    let blue = g
        .state
        .pieces
        .iter()
        .position(|p| &*p.label == "blue_trooper")
        .unwrap();
    assert!(g.state.pieces[red].hidden, "concealed on turn 2");
    assert!(
        !g.state.pieces[blue].hidden,
        "revealed on turn 1, never concealed"
    );
    assert_eq!(
        g.piece_label(red, 1),
        "red_trooper",
        "its own side knows it"
    );
    assert!(g.piece_label(red, 0).starts_with("hidden piece at "));
    assert!(!g.view(0).contains("red_trooper"), "{}", g.view(0));
    seen
}

#[test]
fn a_concealed_piece_is_face_down_again_to_the_other_side() {
    let c = sandtable_conformance::compile_clean(SRC);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "meeting").unwrap();
    let seen = labels_seen_by_blue(&rules, 4);
    // Turn 1: blue aims at red by name; turn 2: only at a hidden piece.
    assert!(
        seen.iter()
            .any(|(t, l)| *t == 1 && l.contains("red_trooper")),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|(t, l)| *t == 2 && l.contains("hidden piece at")),
        "{seen:?}"
    );
    for (t, l) in &seen {
        if *t == 2 {
            assert!(!l.contains("red_trooper"), "{l}");
        }
    }
}
