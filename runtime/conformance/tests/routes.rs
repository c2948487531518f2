//! Hex-board routes as the engine answers them on hand-drawn positions: fire along any
//! shortest route that is clear (`clear_route`), the hex a move enters its last hex from
//! (`entered_from`), and leaving the board through an exit hex as part of a move
//! (`can_exit(piece, hex)`).

use sandtable_runtime::board::{HexCoord, HexGrid};
use sandtable_runtime::engine::setup::BoardSpec;
use sandtable_runtime::engine::state::{Pos, Status};
use sandtable_runtime::engine::{Act, Game, Rules};
use sandtable_runtime::interp::Assumptions;
use sandtable_runtime::value::Val;

/// A red soldier alone in `RED`, a black one alone in `BLACK`, a unit of a third side that
/// never acts (a blocker) in `ROCK`, jungle on `JUNGLE`; `ACTIONS` are offered to the reds and
/// the blacks.
const SRC: &str = r#"side reds "Reds"
side blacks "Blacks"
side rocks "Rocks"
kind soldier { movement_factor: int }
unit red_soldier: soldier of reds "Red soldier" { movement_factor: 4 }
unit black_soldier: soldier of blacks "Black soldier" { movement_factor: 4 }
unit rock: soldier of rocks "Rock" { movement_factor: 0 }
terrain open_ground "Open ground" { target_modifier: 0 }
terrain jungle "Jungle" { target_modifier: 0 }
board field: hex {
  columns: A..=H
  rows: 1..=8
  default: open_ground
  region { terrain: jungle, hexes: JUNGLE }
}
activation cup: chip_cup {
  sides: reds, blacks
}
action wait() {}
ACTIONS
turn {
  phase play "Play" {
    activation: cup
    actions: NAMES
  }
}
scenario probe "Probe" {
  board: field
  turns: 1
  chips: reds = 1, blacks = 1
  force reds { units: red_soldier, deploy: columns = RC..=RC, rows = RR..=RR, exit: EXIT }
  force blacks { units: black_soldier, deploy: columns = BC..=BC, rows = BR..=BR }
  force rocks { units: rock, deploy: columns = KC..=KC, rows = KR..=KR }
  victory { win reds }
}
"#;

struct Case<'a> {
    red: &'a str,
    black: &'a str,
    rock: &'a str,
    jungle: &'a str,
    exit: &'a str,
    actions: &'a str,
    names: &'a str,
}

fn source(c: &Case) -> String {
    let (r, b, k) = (h(c.red), h(c.black), h(c.rock));
    SRC.replace("ACTIONS", c.actions)
        .replace("NAMES", c.names)
        .replace("JUNGLE", c.jungle)
        .replace("EXIT", c.exit)
        .replace("RC", &r.column_letters())
        .replace("RR", &r.row().to_string())
        .replace("BC", &b.column_letters())
        .replace("BR", &b.row().to_string())
        .replace("KC", &k.column_letters())
        .replace("KR", &k.row().to_string())
}

fn h(s: &str) -> HexCoord {
    HexCoord::parse(s).unwrap()
}

/// The board's grid, as the engine lays it out.
fn grid_of(rules: &Rules) -> HexGrid {
    match &rules.board {
        BoardSpec::Hex { grid, .. } => *grid,
        _ => panic!("a hex board"),
    }
}

/// Play through deployment to the first decision of turn 1 and list the choices offered as
/// `action hex` (the action's name and its last hex argument).
fn offered(game: &mut Game) -> Vec<String> {
    game.advance().unwrap();
    let program = game.rules.program;
    game.legal()
        .iter()
        .map(|c| {
            let name = match c.act {
                Act::Action(p) => program.procs[p as usize].name.clone(),
                _ => "?".into(),
            };
            match c.args.last() {
                Some(Val::Hex(x)) => format!("{name} {x}"),
                _ => name,
            }
        })
        .collect()
}

/// Advance to the reds' decision (the cup's draw decides who moves first: try seeds).
fn reds_game<'r, 'p>(rules: &'r Rules<'p>) -> (Game<'r, 'p>, Vec<String>) {
    for seed in 0..40 {
        let mut g = Game::new(rules, seed, None);
        // Deployment: one hex per force, so each side has one choice per piece.
        g.advance().unwrap();
        while g.to_move().is_some() && g.state.turn == 0 {
            g.apply(0).unwrap();
        }
        if g.to_move() == Some(0) {
            let o = offered(&mut g);
            return (g, o);
        }
    }
    panic!("the reds never moved first");
}

#[test]
fn fire_may_take_any_shortest_route_that_is_clear() {
    // Find the straight line first, then block its first hex between with the rock.
    let probe = source(&Case {
        red: "B2",
        black: "E6",
        rock: "H8",
        jungle: "H7",
        exit: "H1",
        actions: "",
        names: "wait",
    });
    let c = sandtable_conformance::compile_clean(&probe);
    let a = Assumptions::default();
    let grid = grid_of(&Rules::new(&c.program, &a, "probe").unwrap());
    let line = grid.route(h("B2"), h("E6")).unwrap();
    let n = line.len() - 1;
    assert!(n >= 3, "{line:?}");
    let between: Vec<String> = line[1..n].iter().map(|x| x.to_string()).collect();
    let actions = r#"
action line_fire(s: soldier, t: hex) {
  require count_units(t, blacks) > 0
  require not route_blocked(s, t)
}
action route_fire(s: soldier, t: hex) {
  require count_units(t, blacks) > 0
  require clear_route(s, t)
}
action no_jungle(s: soldier, t: hex) {
  require count_units(t, blacks) > 0
  require clear_route(s, t, jungle)
}
action some_jungle(s: soldier, t: hex) {
  require count_units(t, blacks) > 0
  require clear_route(s, t, jungle, 1)
}"#;
    let names = "line_fire, route_fire, no_jungle, some_jungle";
    // The rock on the straight line's first hex between; jungle on every other hex between
    // the two, so that every route open to fire crosses jungle.
    let rock = between[0].clone();
    let jungle: Vec<String> = grid
        .hexes()
        .filter(|&x| {
            x != h("B2")
                && x != h("E6")
                && x.to_string() != rock
                && grid.distance(h("B2"), x) + grid.distance(x, h("E6")) == n as u32
        })
        .map(|x| x.to_string())
        .collect();
    let src = source(&Case {
        red: "B2",
        black: "E6",
        rock: &rock,
        jungle: &jungle.join(", "),
        exit: "H1",
        actions,
        names,
    });
    let c = sandtable_conformance::compile_clean(&src);
    let rules = Rules::new(&c.program, &a, "probe").unwrap();
    let (_, offered) = reds_game(&rules);
    // The straight line is blocked, another shortest route is not (7.a.1 "any direction or
    // combination of directions"); it crosses jungle, n - 1 hexes of it at least somewhere.
    assert!(
        !offered.contains(&"line_fire E6".to_string()),
        "{offered:?}"
    );
    assert!(
        offered.contains(&"route_fire E6".to_string()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"no_jungle E6".to_string()),
        "{offered:?}"
    );
    let fewest = grid
        .fewest_on_open_route(
            h("B2"),
            h("E6"),
            |x| x.to_string() == rock,
            |x| u32::from(jungle.contains(&x.to_string())),
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        offered.contains(&"some_jungle E6".to_string()),
        fewest <= 1,
        "{offered:?}"
    );
}

#[test]
fn a_failed_melee_falls_back_to_the_hex_next_to_the_melee_hex() {
    // The red soldier moves 3 hexes onto the black one and is sent back where it entered
    // from: a hex next to the black soldier, not the hex where its move began.
    let actions = r#"
action charge(s: soldier, t: hex) {
  require count_units(t, blacks) > 0
  require move_cost(s, t) <= s.movement_factor
  let back = entered_from(s, t)
  move s to t
  move s to back
}"#;
    let src = source(&Case {
        red: "B2",
        black: "B5",
        rock: "H8",
        jungle: "H7",
        exit: "H1",
        actions,
        names: "charge",
    });
    let c = sandtable_conformance::compile_clean(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "probe").unwrap();
    let (mut g, offered) = reds_game(&rules);
    let k = offered.iter().position(|o| o == "charge B5").unwrap();
    g.apply(k).unwrap();
    let red = g
        .state
        .pieces
        .iter()
        .find(|p| p.label.starts_with("red"))
        .unwrap();
    assert_eq!(red.pos, Some(Pos::Hex(h("B4"))), "straight down the column");
    // With the rock on B4 the move goes round it and falls back to another neighbour.
    let src = source(&Case {
        red: "B2",
        black: "B5",
        rock: "B4",
        jungle: "H7",
        exit: "H1",
        actions,
        names: "charge",
    });
    let c = sandtable_conformance::compile_clean(&src);
    let rules = Rules::new(&c.program, &a, "probe").unwrap();
    let grid = grid_of(&rules);
    let (mut g, offered) = reds_game(&rules);
    let k = offered.iter().position(|o| o == "charge B5").unwrap();
    g.apply(k).unwrap();
    let red = g
        .state
        .pieces
        .iter()
        .find(|p| p.label.starts_with("red"))
        .unwrap();
    let Some(Pos::Hex(at)) = red.pos else {
        panic!("not on the board")
    };
    assert!(grid.adjacent(at, h("B5")) && at != h("B2"), "{at}");
}

#[test]
fn leaving_the_board_is_a_move_through_an_exit_hex() {
    let actions = r#"
action leave(s: soldier, x: hex) {
  require move_cost(s, x) < s.movement_factor
  require can_exit(s, x)
  move s to x
  exit_board(s)
}"#;
    // E2 is three hexes from B2 at most: reached with a factor to spare (4).
    let src = source(&Case {
        red: "B2",
        black: "H8",
        rock: "A8",
        jungle: "H7",
        exit: "D2, H1",
        actions,
        names: "leave",
    });
    let c = sandtable_conformance::compile_clean(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "probe").unwrap();
    let (mut g, offered) = reds_game(&rules);
    // H1 is beyond the move; the red soldier does not stand on D2 yet.
    assert_eq!(offered, vec!["leave D2".to_string()], "{offered:?}");
    g.apply(0).unwrap();
    let red = g
        .state
        .pieces
        .iter()
        .find(|p| p.label.starts_with("red"))
        .unwrap();
    assert_eq!(red.status, Status::Exited);
    assert_eq!(red.exited_at, Some(Pos::Hex(h("D2"))));
}

#[test]
fn a_move_kept_to_one_terrain_counts_only_routes_through_it() {
    // Platoon 5.b.1: a move "entirely through connected path hexes" has a bonus; the engine
    // answers `move_cost(piece, hex, terrain)` over routes whose every hex, the start
    // included, is of that terrain, and `entered_from(piece, hex, terrain)` along them.
    // Here column C and the two ends are the "path" (jungle in this probe board).
    let actions = r#"
action walk(s: soldier, t: hex) {
  require distance(s, t) <= 6
  require t != position(s)
  require move_cost(s, t, jungle) <= s.movement_factor
}
action charge(s: soldier, t: hex) {
  require count_units(t, blacks) > 0
  require move_cost(s, t, jungle) <= s.movement_factor
  let back = entered_from(s, t, jungle)
  move s to t
  move s to back
}"#;
    let column_c: Vec<String> = (1..=8).map(|r| format!("C{r}")).collect();
    let jungle = format!("B2, B5, {}", column_c.join(", "));
    let src = source(&Case {
        red: "B2",
        black: "B5",
        rock: "H8",
        jungle: &jungle,
        exit: "H1",
        actions,
        names: "walk, charge",
    });
    let c = sandtable_conformance::compile_clean(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "probe").unwrap();
    let grid = grid_of(&rules);
    let (mut g, offered) = reds_game(&rules);
    let walks: Vec<&str> = offered
        .iter()
        .filter_map(|o| o.strip_prefix("walk "))
        .collect();
    // Only jungle hexes, each within 4 along the jungle; B3 and B4 (off it) never.
    assert!(!walks.is_empty(), "{offered:?}");
    for w in &walks {
        assert!(w.starts_with('C') || *w == "B5", "{w} is off the terrain");
    }
    assert!(
        !walks.contains(&"B3") && !walks.contains(&"B4"),
        "{walks:?}"
    );
    assert!(!walks.contains(&"C8"), "C8 is more than 4 along the jungle");
    let k = offered.iter().position(|o| o == "charge B5").unwrap();
    g.apply(k).unwrap();
    let red = g
        .state
        .pieces
        .iter()
        .find(|p| p.label.starts_with("red"))
        .unwrap();
    let Some(Pos::Hex(at)) = red.pos else {
        panic!("not on the board")
    };
    // Entered from column C, not from B4 on the straight way down column B.
    assert!(
        grid.adjacent(at, h("B5")) && at.column_letters() == "C",
        "{at}"
    );

    // Off the terrain at the start, no move keeps to it.
    let src = source(&Case {
        red: "A2",
        black: "B5",
        rock: "H8",
        jungle: &jungle,
        exit: "H1",
        actions,
        names: "wait, walk, charge",
    });
    let c = sandtable_conformance::compile_clean(&src);
    let rules = Rules::new(&c.program, &a, "probe").unwrap();
    let (_, offered) = reds_game(&rules);
    assert!(
        offered
            .iter()
            .all(|o| !o.starts_with("walk") && !o.starts_with("charge")),
        "{offered:?}"
    );
}

#[test]
fn a_carried_body_follows_its_carrier_off_the_board() {
    // Platoon 7.c.3: an eliminated piece stays where it fell, is picked up by a piece that
    // crosses its hex and leaves the board with it.
    let actions = r#"
action fetch(s: soldier, x: hex) {
  require distance(s, x) <= 2
  require can_exit(s, x)
  for b in units(blacks) { eliminate b }
  let crossed = route(s, x)
  move s to x
  for h in crossed { for b in eliminated_in(h) { carry(s, b) } }
  exit_board(s)
}"#;
    let src = source(&Case {
        red: "B2",
        black: "B3",
        rock: "H8",
        jungle: "H7",
        exit: "B4",
        actions,
        names: "fetch",
    });
    let c = sandtable_conformance::compile_clean(&src);
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "probe").unwrap();
    let (mut g, offered) = reds_game(&rules);
    assert_eq!(offered, vec!["fetch B4".to_string()], "{offered:?}");
    g.apply(0).unwrap();
    let find = |name: &str| {
        g.state
            .pieces
            .iter()
            .find(|p| p.label.starts_with(name))
            .unwrap()
    };
    let (red, black) = (find("red"), find("black"));
    assert_eq!(red.status, Status::Exited);
    assert_eq!(
        black.status,
        Status::Eliminated,
        "still counted as eliminated"
    );
    assert_eq!(black.pos, None, "carried off, no longer lying at B3");
    assert_eq!(black.exited_at, Some(Pos::Hex(h("B4"))));
}
