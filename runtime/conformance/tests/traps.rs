//! Pieces that fire when the other side enters their place (Platoon 5.c.1, 7.e, 7.f): units
//! with `blocks_movement` keep their own side out, are entered by the other side, fire before
//! the melee (a claymore at its impact zone, in the direction the other side picks at that
//! moment) and are removed. Played on Down in the Valley with its assumptions file.

use sandtable_runtime::engine::log::Event;
use sandtable_runtime::engine::{Game, Rules};

fn labels(g: &Game) -> Vec<String> {
    let side = g.to_move().unwrap();
    g.legal().iter().map(|c| g.label(side, c)).collect()
}

fn choose(g: &mut Game, label: &str) {
    let all = labels(g);
    let k = all
        .iter()
        .position(|l| l == label)
        .unwrap_or_else(|| panic!("`{label}` is not offered: {all:?}"));
    g.apply(k).unwrap();
}

/// The set-up choice of a piece at a hex, as `run` prints it.
fn deploy_label(piece: &str, hex: &str) -> String {
    format!("deploy {piece} at {hex}")
}

#[test]
fn an_entered_claymore_fires_at_the_entrant_and_its_zone_in_the_americans_direction() {
    let root = sandtable_conformance::root();
    let c = sandtable_compiler::compile_path(&root.join("rules/platoon")).unwrap();
    assert!(!c.has_errors());
    let a = sandtable_conformance::assumptions(
        &c.program,
        &[],
        &[root
            .join("rules/platoon/assumptions/down-in-the-valley.assume")
            .as_path()],
    )
    .unwrap();
    let rules = Rules::new(&c.program, &a, "down-in-the-valley").unwrap();
    let side = |name: &str| c.program.sides.iter().position(|s| s.name == name).unwrap() as u32;
    let (us, nva) = (side("us"), side("nva"));
    let mut g = Game::new(&rules, 3, None);
    g.advance().unwrap();
    // The claymore at P5; Adams north of it (in the zone of direction 0, north, by the
    // assumed wedge); the other Americans far off at U11; the NVA leader three clear hexes
    // west of the claymore, everything else of the NVA at A1.
    while g.to_move().is_some() && labels(&g)[0].starts_with("deploy ") {
        let all = labels(&g);
        let piece = all[0]
            .strip_prefix("deploy ")
            .and_then(|l| l.rsplit_once(" at "))
            .unwrap()
            .0
            .to_string();
        let want = match piece.as_str() {
            "claymore_piece #1" => Some("P5"),
            "adams" => Some("P4"),
            "nva_leader_tt33" => Some("M5"),
            p if p.starts_with("claymore_piece") => None,
            p if g.to_move() == Some(us) && !p.contains(['#']) => Some("U11"),
            p if p.starts_with("us_decoy") => Some("U10"),
            _ if g.to_move() == Some(nva) => Some("A1"),
            _ => None,
        };
        match want {
            Some(h) => choose(&mut g, &deploy_label(&piece, h)),
            // Markers and the other claymores: anywhere the set-up offers.
            None => g.apply(0).unwrap(),
        }
    }
    // 7.a.3, 7.a.5: only a bunker or trench marker may join the claymore.
    let at_p5: Vec<&str> = g
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Deployed { piece, at, .. } if at.label(None) == "P5" => Some(piece.as_str()),
            _ => None,
        })
        .filter(|p| !p.starts_with("bunker") && !p.starts_with("trench"))
        .collect();
    assert_eq!(at_p5, ["claymore_piece #1"], "{at_p5:?}");

    let mut fired = None;
    while !g.is_over() {
        let side = g.to_move().unwrap();
        let all = labels(&g);
        if side == us {
            // A choice asked of the Americans mid-move: the claymore's direction (7.e).
            if all.iter().any(|l| l == "choose 0") {
                let before = g.events.len();
                choose(&mut g, "choose 0");
                fired = Some(before);
                break;
            }
            if all.iter().any(|l| l == "activate hex P4 (1 unit)") {
                choose(&mut g, "activate hex P4 (1 unit)");
                // 5.c: a side never moves into its own claymore's hex.
                let moves = labels(&g);
                assert!(
                    moves.iter().any(|l| l.starts_with("move_piece(adams, ")),
                    "{moves:?}"
                );
                assert!(
                    !moves.iter().any(|l| l == "move_piece(adams, P5)"),
                    "{moves:?}"
                );
                choose(&mut g, "end the activation");
                continue;
            }
            let l = if all.iter().any(|l| l == "pass()") {
                "pass()"
            } else {
                "end the activation"
            };
            choose(&mut g, l);
            continue;
        }
        if all.iter().any(|l| l == "activate hex M5 (1 unit)") {
            choose(&mut g, "activate hex M5 (1 unit)");
            // The other side's claymore is an enemy unit: entered, and the move ends there.
            choose(&mut g, "move_piece(nva_leader_tt33, P5)");
            continue;
        }
        let l = if all.iter().any(|l| l == "pass()") {
            "pass()"
        } else {
            "end the activation"
        };
        choose(&mut g, l);
    }
    let Some(before) = fired else {
        panic!("the claymore never asked the Americans for a direction");
    };
    // The claymore rolls +5 at the soldier that entered and at Adams, in its zone to the
    // north; nothing else stands in that zone. Then it is removed.
    let after = &g.events[before..];
    let rolls = after
        .iter()
        .filter(|e| matches!(e, Event::Resolved { name, .. } if name == "claymore"))
        .count();
    assert_eq!(rolls, 2, "{after:#?}");
    assert!(
        after
            .iter()
            .any(|e| matches!(e, Event::Eliminated { piece, .. } if piece == "claymore_piece #1")),
        "{after:#?}"
    );
}
