//! `prefer deploy(p, at)` in a policy written in the rules: the policy chooses where each of
//! its pieces is set up, and a roll in the rule is made once per piece, not once per point.

use sandtable_runtime::engine::policy::{Policy, Random};
use sandtable_runtime::engine::written::Written;
use sandtable_runtime::engine::{Act, Game, Rules};
use sandtable_runtime::interp::Assumptions;

const SRC: &str = r#"
side blue "Blue"
side red "Red"
kind trooper { speed: length }
unit blue_trooper: trooper of blue "Blue trooper" { speed: 6cm }
unit red_trooper: trooper of red "Red trooper" { speed: 6cm }
kind ground { cover: int }
terrain woods: ground "Woods" { cover: 1 }

board field: open {
  width: 60cm
  depth: 30cm
  base: 2cm
  feature copse { terrain: woods, rect: 44cm, 8cm, 56cm, 22cm }
  area blue_edge { rect: 0cm, 0cm, 10cm, 30cm }
  area red_edge { rect: 30cm, 0cm, 60cm, 30cm }
}

activation sides: alternating { sides: blue, red }

turn {
  phase move "Move" {
    activation: sides
    actions: close_in
  }
}

action close_in(t: trooper, target: trooper) {
  require owner(target) != owner(t)
  move_toward(t, target, 1cm)
}

resolve lucky() {
  bands d6 {
    1..=5 => no_luck
    6 => luck
  }
}
procedure lucky_now() {
  bands lucky() {
    luck => { result true }
    no_luck => { result false }
  }
}

policy into_the_woods for red {
  prefer deploy(p, at) when is(p, red_trooper) and in_terrain(at, woods)
}
policy on_a_six for red {
  prefer deploy(p, at) when lucky_now()
  prefer deploy(p, at) when in_terrain(at, woods)
}

scenario meeting "Meeting" {
  board: field
  turns: 1
  force blue { units: 1 * blue_trooper, deploy: blue_edge }
  force red { units: 3 * red_trooper, deploy: red_edge }
  victory { win blue }
}
"#;

/// Plays the set-up with `policy` for red; returns red's set-up points and the reasons.
fn deploy(
    rules: &Rules,
    program: &sandtable_ir::Program,
    policy: &str,
    seed: u64,
) -> Vec<(String, String)> {
    let mut g = Game::new(rules, seed, None);
    let mut blue = Random::new(seed, 0);
    let mut red = Written::named(program, policy, seed, 1).expect("the policy");
    let mut out = Vec::new();
    g.advance().unwrap();
    while let Some(side) = g.to_move() {
        if g.state.turn > 0 {
            break;
        }
        let legal = g.legal().to_vec();
        let k = if side == 1 {
            let k = red.choose(&g, side, &legal).unwrap();
            assert_eq!(legal[k].act, Act::Deploy);
            out.push((g.label(side, &legal[k]), red.reason().unwrap_or_default()));
            k
        } else {
            blue.choose(&g, side, &legal).unwrap()
        };
        g.apply(k).unwrap();
    }
    out
}

#[test]
fn a_written_policy_sets_its_pieces_up_where_its_rules_prefer() {
    let c = sandtable_conformance::compile_clean(SRC);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "meeting").unwrap();
    for seed in 0..20 {
        let placed = deploy(&rules, &c.program, "into_the_woods", seed);
        assert_eq!(placed.len(), 3, "{placed:?}");
        for (label, why) in &placed {
            // The copse holds the grid points x 48.26 / 53.34 cm, y 12.7 / 17.78 cm.
            assert!(why.starts_with("into_the_woods rule 1"), "{label}: {why}");
            assert!(
                [
                    "(48.26cm, 12.7cm)",
                    "(53.34cm, 12.7cm)",
                    "(48.26cm, 17.78cm)",
                    "(53.34cm, 17.78cm)"
                ]
                .iter()
                .any(|p| label.ends_with(&format!("at {p}"))),
                "{label}"
            );
        }
    }
}

#[test]
fn a_roll_in_a_deploy_rule_is_made_once_per_piece() {
    let c = sandtable_conformance::compile_clean(SRC);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "meeting").unwrap();
    let (mut sixes, mut woods) = (0, 0);
    for seed in 0..60 {
        for (label, why) in deploy(&rules, &c.program, "on_a_six", seed) {
            if why.starts_with("on_a_six rule 1") {
                sixes += 1;
            } else {
                assert!(why.starts_with("on_a_six rule 2"), "{label}: {why}");
                woods += 1;
            }
        }
    }
    // One roll for all the points of a piece: a six (1 in 6) lets every point meet rule 1,
    // else none does. Rolled per point, some of the ~100 points would nearly always meet it.
    assert_eq!(sixes + woods, 180);
    assert!((10..=55).contains(&sixes), "{sixes} sixes in 180 pieces");
}
