//! `path_clear(piece, P, F…)`: with filters, the pieces they select are passed through (a
//! move through friendly figures); every other piece still stands in the way, and the plain
//! form is unchanged.

use sandtable_runtime::engine::policy::{Policy, Random};
use sandtable_runtime::engine::{Game, Rules};
use sandtable_runtime::interp::Assumptions;

const SRC: &str = r#"
side blue "Blue"
side red "Red"
kind trooper { speed: length }
marker cairn "Cairn"
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
  phase probe "Probe" {
    on run {
      // Blue #1 at (5, 15), blue #2 at (15, 15), red at (30, 15); a cairn at (5, 25).
      for t in units(blue, trooper) {
        if counter(blue, "placed") == 0 { move t to [5cm, 15cm] } else { move t to [15cm, 15cm] }
        add_counter(blue, "placed", 1)
      }
      for t in units(red, trooper) { move t to [30cm, 15cm] }
      for t in units(blue, trooper) {
        if distance(t, [5cm, 15cm]) == 0cm {
          // Past the friend only: blocked plainly, clear when blue is passed through.
          set_counter(blue, "plain_friend", if path_clear(t, [25cm, 15cm]) then 1 else 0)
          set_counter(blue, "pass_friend", if path_clear(t, [25cm, 15cm], blue) then 1 else 0)
          // Past the friend and up to the enemy: the enemy still stands in the way.
          set_counter(blue, "pass_enemy", if path_clear(t, [45cm, 15cm], blue, trooper) then 1 else 0)
          // A marker is not passed through by a side's filter (it selects units of it).
          set_counter(blue, "pass_cairn", if path_clear(t, [5cm, 29cm], blue) then 1 else 0)
          // Off the table: never clear.
          set_counter(blue, "off_table", if path_clear(t, [5cm, 31cm], blue) then 1 else 0)
        }
      }
    }
  }
  phase move "Move" {
    activation: sides
    actions: wait
  }
}

action wait(t: trooper) {
  require counter(t, "never") > 0
}

scenario meeting "Meeting" {
  board: field
  turns: 1
  neutral { pieces: 1 * cairn, at: [5cm, 25cm] }
  force blue { units: 2 * blue_trooper, deploy: blue_edge }
  force red { units: 1 * red_trooper, deploy: red_edge }
  victory { win blue }
}
"#;

#[test]
fn a_filtered_path_passes_the_pieces_it_selects_and_no_other() {
    let c = sandtable_conformance::compile_clean(SRC);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "meeting").unwrap();
    let mut g = Game::new(&rules, 1, None);
    let mut rnd = Random::new(1, 0);
    g.advance().unwrap();
    while let Some(side) = g.to_move() {
        let k = rnd.choose(&g, side, g.legal()).unwrap();
        g.apply(k).unwrap();
    }
    let blue = rules
        .program
        .sides
        .iter()
        .position(|s| s.name == "blue")
        .unwrap() as u32;
    let got = |name: &str| {
        let id = g.rules.program.counter_id(name).expect("kept");
        g.state
            .side_counters
            .iter()
            .find(|(s, c, _)| *s == blue && *c == id)
            .map_or(0, |(_, _, v)| *v)
    };
    assert_eq!(
        got("plain_friend"),
        0,
        "a friend stands in the way of the plain form"
    );
    assert_eq!(
        got("pass_friend"),
        1,
        "a friend selected by the filter is passed through"
    );
    assert_eq!(got("pass_enemy"), 0, "an enemy is not passed through");
    assert_eq!(got("pass_cairn"), 0, "a marker is not passed through");
    assert_eq!(got("off_table"), 0, "off the table is never clear");
}
