//! `to_reserve`: a unit on the table goes back into its force's reserve (Dinky Dau 7.6.1,
//! a squad mounting its carrier again), and comes on again by `move`, on the mechanised sweep
//! played by the stand-in `mech_rider` (ours: on and off the ACAV at every chance) against
//! `tank_hunter`.

use std::path::PathBuf;

use sandtable_runtime::engine::log::Event;
use sandtable_runtime::engine::policy::Policy;
use sandtable_runtime::engine::state::Status;
use sandtable_runtime::engine::written::Written;
use sandtable_runtime::engine::{Game, Rules};

#[test]
fn a_withdrawn_unit_is_off_the_table_unseen_kept_by_saves_and_comes_on_again() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sys = root.join("rules/dinky_dau");
    let c = sandtable_compiler::compile_path(&sys).unwrap();
    assert!(!c.has_errors(), "dinky_dau does not compile");
    let file = sys.join("assumptions/mech-sweep.assume");
    let a = sandtable_conformance::assumptions(&c.program, &[], &[file.as_path()]).unwrap();
    let rules = Rules::new(&c.program, &a, "mech-sweep").unwrap();
    let policies = |seed: u64| -> Vec<Box<dyn Policy>> {
        ["mech_rider", "tank_hunter"]
            .iter()
            .enumerate()
            .map(|(s, k)| {
                Box::new(Written::named(&c.program, k, seed, s as u32).unwrap()) as Box<dyn Policy>
            })
            .collect()
    };
    let mut seen = 0;
    for seed in 1..=12 {
        let mut game = Game::new(&rules, seed, None);
        let mut ps = policies(seed);
        let ps = &mut ps;
        game.advance().unwrap();
        // Play until a squad has mounted again.
        let mut withdrawn = None;
        while let Some(s) = game.to_move() {
            let k = ps[s as usize].choose(&game, s, game.legal()).unwrap();
            game.apply(k).unwrap();
            withdrawn = game.events.iter().rev().find_map(|e| match e {
                Event::Withdrawn { piece, why, .. } => Some((piece.clone(), why.clone())),
                _ => None,
            });
            if withdrawn.is_some() {
                break;
            }
        }
        let Some((label, why)) = withdrawn else {
            continue;
        };
        seen += 1;
        assert_eq!(why.as_deref(), Some("mount_vehicle"));
        let i = game
            .state
            .pieces
            .iter()
            .position(|p| *p.label == *label)
            .unwrap();
        // Off the table, in reserve, and named in no side's view.
        assert_eq!(game.state.pieces[i].status, Status::Reserve);
        assert!(game.state.pieces[i].pos.is_none());
        for side in 0..2 {
            assert!(!game.view(side).contains(&label), "{label} in the view");
        }
        // A save and a copy keep it there and play on alike (with the same fresh players).
        let text = serde_json::to_string(&game.game_state().unwrap()).unwrap();
        let mut resumed =
            Game::from_state(&rules, serde_json::from_str(&text).unwrap(), None).unwrap();
        assert_eq!(resumed.state.pieces[i].status, Status::Reserve);
        let mut copy = game.clone();
        let before = game.events.len();
        for (g, ps) in [
            (&mut copy, &mut policies(seed)),
            (&mut resumed, &mut policies(seed)),
        ] {
            while let Some(s) = g.to_move() {
                let k = ps[s as usize].choose(g, s, g.legal()).unwrap();
                g.apply(k).unwrap();
            }
        }
        assert_eq!(copy.events[before..], resumed.events);
        // Played on, the squad comes off again only by an `entered` event.
        let back = copy.events[before..]
            .iter()
            .position(|e| matches!(e, Event::Entered { piece, .. } if *piece == label));
        let moved_first = copy.events[before..]
            .iter()
            .position(|e| matches!(e, Event::Moved { piece, .. } if *piece == label));
        assert!(moved_first.is_none_or(|m| back.is_some_and(|b| b < m)));
    }
    assert!(seen > 0, "no squad mounted again");
}
