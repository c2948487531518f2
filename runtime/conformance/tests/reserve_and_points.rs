//! Pieces held in reserve (a force's `reserve:`) and points typed by a person on an open
//! table, on Plastic Battle's Total Destruction (2, Reinforce; 2, Move).

use std::path::PathBuf;

use sandtable_ir::Program;
use sandtable_runtime::engine::log::Event;
use sandtable_runtime::engine::policy::{Answer, Human, Policy, Random, Scripted};
use sandtable_runtime::engine::state::{Pos, Status};
use sandtable_runtime::engine::{Act, Game, Rules};
use sandtable_runtime::interp::Assumptions;

fn load() -> (Program, Assumptions) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sys = root.join("rules/plastic_battle");
    let c = sandtable_compiler::compile_path(&sys).unwrap();
    assert!(!c.has_errors(), "plastic_battle does not compile");
    let file = sys.join("assumptions/total-destruction.assume");
    let a = sandtable_conformance::assumptions(&c.program, &[], &[file.as_path()]).unwrap();
    (c.program, a)
}

fn action_name(game: &Game, act: &Act) -> String {
    match act {
        Act::Action(a) => game.rules.program.procs[*a as usize].name.clone(),
        _ => String::new(),
    }
}

/// Play with `policies` until a decision of `side` offers the action `name` (and returns
/// true), or the game ends.
fn play_until(game: &mut Game, policies: &mut [Random], side: u32, name: &str) -> bool {
    game.advance().unwrap();
    while let Some(s) = game.to_move() {
        if s == side
            && game
                .legal()
                .iter()
                .any(|c| action_name(game, &c.act) == name)
        {
            return true;
        }
        let k = policies[s as usize].choose(game, s, game.legal()).unwrap();
        game.apply(k).unwrap();
    }
    false
}

#[test]
fn the_reserve_stays_off_the_table_until_brought_in_and_is_kept_by_clones_and_saves() {
    let (program, a) = load();
    let rules = Rules::new(&program, &a, "total-destruction").unwrap();
    let mut game = Game::new(&rules, 3, None);
    let reserve = |g: &Game| {
        g.state
            .pieces
            .iter()
            .filter(|p| p.status == Status::Reserve)
            .count()
    };
    // Three units each, none set up.
    assert_eq!(reserve(&game), 6);
    let mut ps: Vec<Random> = (0..2).map(|s| Random::new(3, s)).collect();
    assert!(play_until(&mut game, &mut ps, 0, "bring_in"));
    assert_eq!(reserve(&game), 6);
    let held: Vec<String> = game
        .state
        .pieces
        .iter()
        .filter(|p| p.status == Status::Reserve)
        .map(|p| {
            assert!(p.pos.is_none());
            p.label.to_string()
        })
        .collect();
    assert!(
        game.events
            .iter()
            .all(|e| !matches!(e, Event::Deployed { piece, .. } if held.contains(piece)))
    );
    // Every bring_in offered is of a reserve piece, by its own flag.
    for c in game.legal() {
        if action_name(&game, &c.act) != "bring_in" {
            continue;
        }
        let sandtable_runtime::Val::Piece(u) = c.args[0] else {
            panic!("a piece acts")
        };
        assert_eq!(game.state.pieces[u as usize].status, Status::Reserve);
    }

    // A copy and a save both carry the reserve and play on alike.
    let saved = game.game_state().unwrap();
    let text = serde_json::to_string(&saved).unwrap();
    let back = serde_json::from_str(&text).unwrap();
    let mut resumed = Game::from_state(&rules, back, None).unwrap();
    let mut copy = game.clone();
    assert_eq!(reserve(&resumed), 6);
    assert_eq!(reserve(&copy), 6);
    let before = game.events.len();
    let mut p1 = ps.clone();
    let mut p2 = ps.clone();
    let play_out = |g: &mut Game, ps: &mut Vec<Random>| {
        while let Some(s) = g.to_move() {
            let k = ps[s as usize].choose(g, s, g.legal()).unwrap();
            g.apply(k).unwrap();
        }
    };
    play_out(&mut game, &mut ps);
    play_out(&mut copy, &mut p1);
    play_out(&mut resumed, &mut p2);
    assert_eq!(game.events[before..], copy.events[before..]);
    assert_eq!(game.events[before..], resumed.events);
    // Units came in, each by an `entered` event after its `bring_in`.
    let entered = game
        .events
        .iter()
        .filter(|e| matches!(e, Event::Entered { why: Some(w), .. } if w == "bring_in"))
        .count();
    assert!(entered > 0, "no unit was brought in");
    assert!(game.acted_off_board.is_empty());
}

#[test]
fn a_typed_point_is_checked_like_the_listed_ones_and_replays() {
    let (program, a) = load();
    let rules = Rules::new(&program, &a, "total-destruction").unwrap();
    let seed = 5;
    let mut game = Game::new(&rules, seed, None);
    let mut ps: Vec<Random> = (0..2).map(|s| Random::new(seed, s)).collect();
    assert!(play_until(&mut game, &mut ps, 0, "advance"));
    // Half way along a listed advance: as legal as the whole of it (cost, path, table).
    let (like, c) = game
        .legal()
        .iter()
        .enumerate()
        .find(|(_, c)| action_name(&game, &c.act) == "advance")
        .map(|(k, c)| (k, c.clone()))
        .unwrap();
    let sandtable_runtime::Val::Piece(u) = c.args[0] else {
        panic!("a piece acts")
    };
    let Some(Pos::Point(from)) = game.state.pieces[u as usize].pos else {
        panic!("on the table")
    };
    let sandtable_runtime::Val::Point(to) = &c.args[1] else {
        panic!("a point")
    };
    let (tx, ty) = (to.x(), to.y());
    let (mx, my) = ((from.x() + tx) / 2, (from.y() + ty) / 2);
    let inches = |v: i64| format!("{:.4}", v as f64 / 254.0);
    // Typed in inches (the ruleset's unit): a word, a point out of reach, then a good one.
    // Out of reach: 10in straight up the table from the unit (its SPD is at most 6in).
    let far = (from.x(), from.y() + 10 * 254);
    let input = format!(
        "abc\n{},{}\n-1,3\n{},{}in\n",
        inches(far.0),
        inches(far.1),
        inches(mx),
        inches(my)
    );
    let mut out = Vec::new();
    let answer = {
        let mut h = Human::new(std::io::Cursor::new(input), &mut out);
        h.answer(&game, 0, game.legal()).unwrap()
    };
    let shown = String::from_utf8(out).unwrap();
    assert!(shown.contains("or type a point `x,y` in inches"), "{shown}");
    assert!(shown.contains("type a number from 1 to"), "{shown}");
    assert!(
        shown.contains("is not a legal place for `advance`"),
        "{shown}"
    );
    assert!(shown.contains("(-1in, 3in) is off the table"), "{shown}");
    let Answer::Point { like: l, at } = answer else {
        panic!("a point was typed: {answer:?}")
    };
    assert_eq!(l, like);
    assert!((at.x() - mx).abs() <= 1 && (at.y() - my).abs() <= 1);
    let n = game.legal().len();
    game.apply_point(like, at).unwrap();
    let typed = game
        .events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Decision {
                choice, of, typed, ..
            } => Some((*choice, *of, typed.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!((typed.0, typed.1), (n, n + 1));
    assert_eq!(typed.2.unwrap().like, like);
    assert!(game.events.iter().any(|e| matches!(e,
        Event::Moved { to: sandtable_runtime::engine::log::Place::Point { x, y }, .. }
            if *x == at.x() && *y == at.y())));
    // Played to its end, the game replays from its log, the typed point included.
    while let Some(s) = game.to_move() {
        let k = ps[s as usize].choose(&game, s, game.legal()).unwrap();
        game.apply(k).unwrap();
    }
    let mut again = Game::new(&rules, seed, None);
    let mut scripts = Scripted::from_events(&program, &game.events).unwrap();
    again.play(&mut scripts).unwrap();
    assert_eq!(again.events, game.events);
}
