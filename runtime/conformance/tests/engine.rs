//! The game engine on the two playable scenarios: invariants over many seeded random games,
//! exact replay from the log, hidden information, and `sim` totals independent of threads
//! and of the backend.

use std::collections::HashMap;
use std::path::PathBuf;

use sandtable_ir::{Program, SideId};
use sandtable_runtime::Val;
use sandtable_runtime::engine::log::Event;
use sandtable_runtime::engine::policy::{Policy, Random, Scripted};
use sandtable_runtime::engine::sim::simulate;
use sandtable_runtime::engine::state::{Pos, Status, Winner};
use sandtable_runtime::engine::{Choice, EngineError, Game, Rules};
use sandtable_runtime::interp::Assumptions;
use sandtable_runtime::jit::{BackendKind, JitProgram};

fn root() -> PathBuf {
    sandtable_conformance::root()
}

fn load(sys: &str, scenario: &str) -> (Program, Assumptions) {
    let c = sandtable_compiler::compile_path(&root().join("rules").join(sys)).unwrap();
    assert!(!c.has_errors(), "{sys} does not compile");
    let file = root()
        .join("rules")
        .join(sys)
        .join("assumptions")
        .join(format!("{scenario}.assume"));
    let a = sandtable_conformance::assumptions(&c.program, &[], &[file.as_path()]).unwrap();
    (c.program, a)
}

/// Wraps a policy and checks, at every decision, what the engine offers.
struct Checking {
    inner: Random,
    side: SideId,
    offered_to_off_board: Vec<String>,
    hidden_names_seen: Vec<String>,
}

impl Policy for Checking {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        assert_eq!(side, self.side);
        assert!(!choices.is_empty(), "a decision with nothing to choose");
        for c in choices {
            if let Some(Val::Piece(i)) = c.args.first() {
                let p = &game.state.pieces[*i as usize];
                // Deployment places pieces not yet on the board, and a piece held in reserve
                // may be brought on (or kept back); every other choice is made by a piece in
                // play.
                if !matches!(c.act, sandtable_runtime::engine::Act::Deploy)
                    && !p.on_board()
                    && p.status != Status::Reserve
                {
                    self.offered_to_off_board.push(game.label(side, c));
                }
            }
            // The side never sees the name of an enemy piece that stands face down.
            let label = game.label(side, c);
            for p in &game.state.pieces {
                if p.hidden && p.side != Some(side) && p.on_board() && label.contains(&*p.label) {
                    self.hidden_names_seen.push(label.clone());
                }
            }
        }
        let view = game.view(side);
        for p in &game.state.pieces {
            if p.hidden && p.side != Some(side) && p.on_board() && view.contains(&*p.label) {
                self.hidden_names_seen
                    .push(format!("view shows {}", p.label));
            }
        }
        self.inner.choose(game, side, choices)
    }
}

/// Rebuild every piece's place from the log alone and compare it with the final state;
/// count eliminations and exits per piece.
/// Where each piece is by the log (`None` once gone), who was eliminated, who exited where.
type Recount = (
    HashMap<String, Option<String>>,
    Vec<String>,
    Vec<(String, String)>,
);

fn recount(game: &Game) -> Recount {
    let mut at: HashMap<String, Option<String>> = HashMap::new();
    let mut eliminated = Vec::new();
    let mut exited = Vec::new();
    for e in &game.events {
        match e {
            Event::Decision { label, .. } if label.starts_with("deploy ") => {
                let rest = &label["deploy ".len()..];
                let (name, place) = rest.rsplit_once(" at ").unwrap();
                assert!(
                    at.insert(name.to_string(), Some(place.to_string()))
                        .is_none()
                );
            }
            // A piece brought on from its force's reserve was never deployed.
            Event::Entered { piece, at: to, .. } => {
                assert!(
                    at.insert(piece.clone(), Some(to.label(None))).is_none(),
                    "{piece} entered while on the board"
                );
            }
            Event::Moved {
                piece, from, to, ..
            } => {
                let now = at.get(piece).cloned().flatten();
                assert_eq!(
                    now,
                    from.as_ref().map(|f| f.label(None)),
                    "{piece} moved from where it was not"
                );
                at.insert(piece.clone(), Some(to.label(None)));
            }
            Event::Eliminated {
                piece, at: where_, ..
            } => {
                let now = at.get(piece).cloned().flatten();
                assert!(now.is_some(), "{piece} eliminated twice");
                assert_eq!(now, where_.as_ref().map(|w| w.label(None)), "{piece}");
                eliminated.push(piece.clone());
                at.insert(piece.clone(), None);
            }
            Event::Exited {
                piece, at: where_, ..
            } => {
                let hex = where_.as_ref().map(|w| w.label(None)).unwrap_or_default();
                exited.push((piece.clone(), hex));
                at.insert(piece.clone(), None);
            }
            _ => {}
        }
    }
    (at, eliminated, exited)
}

fn play_checked<'r, 'p>(rules: &'r Rules<'p>, seed: u64) -> (Game<'r, 'p>, Vec<Checking>) {
    let sides = rules.program.sides.len() as SideId;
    let mut checks: Vec<Checking> = (0..sides)
        .map(|s| Checking {
            inner: Random::new(seed, s),
            side: s,
            offered_to_off_board: Vec::new(),
            hidden_names_seen: Vec::new(),
        })
        .collect();
    let mut game = Game::new(rules, seed, None);
    {
        let mut ps: Vec<Box<dyn Policy + '_>> = checks
            .iter_mut()
            .map(|c| Box::new(CheckingRef(c)) as Box<dyn Policy>)
            .collect();
        game.play(&mut ps).unwrap();
    }
    (game, checks)
}

struct CheckingRef<'a>(&'a mut Checking);

impl Policy for CheckingRef<'_> {
    fn choose(&mut self, g: &Game, s: SideId, c: &[Choice]) -> Result<usize, EngineError> {
        self.0.choose(g, s, c)
    }
}

fn check_invariants(game: &Game, checks: &[Checking]) {
    for c in checks {
        assert!(
            c.offered_to_off_board.is_empty(),
            "pieces off the board were offered actions: {:?}",
            c.offered_to_off_board
        );
        assert!(
            c.hidden_names_seen.is_empty(),
            "hidden pieces were named to the other side: {:?}",
            c.hidden_names_seen
        );
    }
    assert!(game.acted_off_board.is_empty());
    let (at, eliminated, _) = recount(game);
    for p in &game.state.pieces {
        let logged = at.get(&*p.label).cloned().flatten();
        match p.status {
            Status::OnBoard => {
                assert_eq!(
                    logged,
                    p.pos.map(|at| at.label(None)),
                    "{} is not where the log says",
                    p.label
                )
            }
            _ => assert_eq!(
                logged, None,
                "{} left play but the log has it at a place",
                p.label
            ),
        }
        assert_eq!(
            p.status == Status::Eliminated,
            eliminated.iter().any(|l| **l == *p.label),
            "{}: eliminated in the state and in the log disagree",
            p.label
        );
    }
    // No two places for one piece: every on-board piece stands on exactly one place, and on
    // an open table figures keep a base (1 inch) apart.
    let mut points: Vec<(&str, sandtable_runtime::board::Point)> = Vec::new();
    for p in game.state.pieces.iter().filter(|p| p.on_board()) {
        let pos = p.pos.expect("a piece in play has a place");
        if let Pos::Point(pt) = pos {
            for (other, q) in &points {
                let d2 = sandtable_runtime::board::table::distance_squared(pt, *q);
                assert!(
                    d2 >= 254 * 254,
                    "{} and {other} stand closer than a base",
                    p.label
                );
            }
            points.push((&p.label, pt));
        }
    }
}

#[test]
fn platoon_protecting_the_flank_keeps_its_invariants() {
    let (program, a) = load("platoon", "protecting-the-flank");
    let rules = Rules::new(&program, &a, "protecting-the-flank").unwrap();
    let us = program.sides.iter().position(|s| s.name == "us").unwrap();
    let nva = program.sides.iter().position(|s| s.name == "nva").unwrap();
    let soldier = |label: &str| {
        let p = rules_piece(&program, label);
        program.kinds[p].name == "soldier"
    };
    for seed in 0..12 {
        let (game, checks) = play_checked(&rules, seed);
        check_invariants(&game, &checks);
        // 5 US and 4 NVA chips a turn (7.d), every chip drawn in each of the 3 turns.
        assert_eq!(game.chips_drawn()[us], 15, "seed {seed}");
        assert_eq!(game.chips_drawn()[nva], 12, "seed {seed}");
        // The NVA score (7.d.4) recounted from the log: American soldiers eliminated plus
        // NVA soldiers that left through S11, T10 or U11.
        let (_, eliminated, exited) = recount(&game);
        let us_soldiers_lost = eliminated
            .iter()
            .filter(|l| soldier(l) && side_of(&game, l) == us as u32)
            .count() as i64;
        let nva_soldiers_lost = eliminated
            .iter()
            .filter(|l| soldier(l) && side_of(&game, l) == nva as u32)
            .count() as i64;
        let out = exited
            .iter()
            .filter(|(l, h)| {
                side_of(&game, l) == nva as u32 && ["S11", "T10", "U11"].contains(&h.as_str())
            })
            .count() as i64;
        let points = us_soldiers_lost + out;
        assert_eq!(game.state.scores[nva], points, "seed {seed}");
        let nva_wins = points >= 6 || us_soldiers_lost > nva_soldiers_lost || us_soldiers_lost == 4;
        let expected = if nva_wins { nva } else { us };
        assert_eq!(
            game.state.winner,
            Some(Winner::Side(expected as u32)),
            "seed {seed}"
        );
    }
}

fn side_of(game: &Game, label: &str) -> u32 {
    game.state
        .pieces
        .iter()
        .find(|p| &*p.label == label)
        .and_then(|p| p.side)
        .unwrap()
}

/// The kind of the entity a label names (`nva_ak47_2_3 #2` → its entity's kind).
fn rules_piece(program: &Program, label: &str) -> usize {
    let name = label.split(" #").next().unwrap();
    let name = name.rsplit(' ').next().unwrap();
    let e = program.entities.iter().find(|e| e.name == name).unwrap();
    e.kind.unwrap() as usize
}

#[test]
fn plastic_battle_total_destruction_keeps_its_invariants() {
    let (program, a) = load("plastic_battle", "total-destruction");
    let rules = Rules::new(&program, &a, "total-destruction").unwrap();
    let mut decided = 0;
    for seed in 0..6 {
        let (game, checks) = play_checked(&rules, seed);
        check_invariants(&game, &checks);
        let (_, eliminated, _) = recount(&game);
        // Scores (our reading): enemy units destroyed, recounted from the log.
        for s in 0..2u32 {
            let lost_by_other = eliminated.iter().filter(|l| side_of(&game, l) != s).count();
            assert_eq!(
                game.state.scores[s as usize], lost_by_other as i64,
                "seed {seed}"
            );
        }
        if let Some(Winner::Side(w)) = game.state.winner {
            decided += 1;
            // Total destruction: the loser has no unit left, the winner has some.
            let alive = |s: u32| {
                game.state
                    .pieces
                    .iter()
                    .filter(|p| p.side == Some(s) && p.on_board())
                    .count()
            };
            assert_eq!(alive(1 - w), 0, "seed {seed}");
            assert!(alive(w) > 0, "seed {seed}");
        }
    }
    assert!(decided > 0, "no game of six was decided");
}

/// Records the turn and the words of every choice a random policy makes.
struct Recording {
    inner: Random,
    chosen: std::rc::Rc<std::cell::RefCell<Vec<(u32, String)>>>,
}

impl Policy for Recording {
    fn choose(&mut self, g: &Game, s: SideId, c: &[Choice]) -> Result<usize, EngineError> {
        let k = self.inner.choose(g, s, c)?;
        self.chosen
            .borrow_mut()
            .push((g.state.turn, g.label(s, &c[k])));
        Ok(k)
    }
}

#[test]
fn plastic_battle_reloading_units_wait_their_rld_turns() {
    // Section 4: after firing, a unit waits RLD whole turns (no move, no attack) before it
    // fires again: the Sharpshooter (RLD 1) fires at most every second turn, the Bazooka
    // (RLD 2) every third.
    let (program, a) = load("plastic_battle", "total-destruction");
    let rules = Rules::new(&program, &a, "total-destruction").unwrap();
    let mut attacks_checked = 0;
    // Seeds in order until a few repeated shots have been seen (random figures on an open
    // table meet rarely), so the test stays short.
    for seed in 0..16 {
        if attacks_checked >= 3 {
            break;
        }
        let chosen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut ps: Vec<Box<dyn Policy>> = (0..2)
            .map(|s| {
                Box::new(Recording {
                    inner: Random::new(seed, s),
                    chosen: chosen.clone(),
                }) as _
            })
            .collect();
        let mut game = Game::new(&rules, seed, None);
        game.play(&mut ps).unwrap();
        // The turns each reloading figure fired in, and the turns it moved in.
        let mut fired: HashMap<String, Vec<u32>> = HashMap::new();
        let mut moved: HashMap<String, Vec<u32>> = HashMap::new();
        for (turn, label) in chosen.borrow().iter() {
            for (verb, into) in [("attack(", &mut fired), ("advance(", &mut moved)] {
                if let Some(rest) = label.strip_prefix(verb) {
                    let who = rest.split(',').next().unwrap().to_string();
                    into.entry(who).or_default().push(*turn);
                }
            }
        }
        for (who, turns) in &fired {
            let rld = if who.ends_with("sharpshooter") {
                1
            } else if who.ends_with("bazooka") {
                2
            } else {
                continue;
            };
            for w in turns.windows(2) {
                attacks_checked += 1;
                assert!(
                    w[1] > w[0] + rld,
                    "seed {seed}: {who} (RLD {rld}) fired in turns {} and {}",
                    w[0],
                    w[1]
                );
            }
            for t in turns {
                for m in moved.get(who).into_iter().flatten() {
                    assert!(
                        !(*t < *m && *m <= t + rld),
                        "seed {seed}: {who} (RLD {rld}) fired in turn {t} and moved in turn {m}"
                    );
                }
            }
        }
    }
    assert!(attacks_checked > 0, "no unit with RLD fired twice");
}

/// Checks every `advance` offered and taken in Plastic Battle against section 2 Move and 3.
struct MoveReferee {
    inner: Random,
    checked: usize,
    full_moves_seen: usize,
    errors: Vec<String>,
}

impl Policy for MoveReferee {
    fn choose(&mut self, g: &Game, s: SideId, c: &[Choice]) -> Result<usize, EngineError> {
        use sandtable_runtime::board::table::{self, INCH};
        use sandtable_runtime::engine::setup::{BoardSpec, Ground};
        let program = g.rules.program;
        let BoardSpec::Table {
            shapes,
            shape_terrain,
            base,
            width,
            depth,
            ..
        } = &g.rules.board
        else {
            panic!("Plastic Battle is played on a table");
        };
        let of = |name: &str| -> Vec<&sandtable_runtime::board::Geometry> {
            shapes
                .iter()
                .zip(shape_terrain)
                .filter(|(_, t)| matches!(t, Ground::Entity(e) if program.entities[*e as usize].name == name))
                .map(|(s, _)| &s.geometry)
                .collect()
        };
        let (slow, hills) = (
            [of("marsh"), of("river"), of("woods")].concat(),
            of("hills"),
        );
        let spd = |label: &str| -> i64 {
            let name = label
                .split(" #")
                .next()
                .unwrap()
                .rsplit(' ')
                .next()
                .unwrap();
            match name {
                "commander" | "sharpshooter" => 3 * INCH,
                "regular" => 4 * INCH,
                "charger" => 6 * INCH,
                _ => 2 * INCH,
            }
        };
        let at = |i: usize| match g.state.pieces[i].pos {
            Some(Pos::Point(p)) => p,
            _ => panic!("a figure off the table"),
        };
        let cost = |a, b| {
            table::distance(a, b)
                + table::length_inside(a, b, slow.iter().copied())
                + table::length_approaching(a, b, hills.iter().copied())
        };
        let mut offered = Vec::new();
        for ch in c {
            let label = g.label(s, ch);
            if !label.starts_with("advance(") {
                continue;
            }
            let (Some(Val::Piece(i)), Some(Val::Point(to))) = (ch.args.first(), ch.args.get(1))
            else {
                continue;
            };
            let (i, to) = (*i as usize, *to);
            let from = at(i);
            offered.push((i, to));
            self.checked += 1;
            let who = &g.state.pieces[i].label;
            // A later leg of a bent move pays from what the earlier ones left of SPD.
            let left = spd(who)
                - g.state.pieces[i].counter(
                    g.rules
                        .program
                        .counter_id("move_spent")
                        .expect("the rules keep move_spent"),
                );
            if cost(from, to) > left {
                self.errors.push(format!(
                    "{label}: costs {} of the {left} left of SPD {}",
                    cost(from, to),
                    spd(who)
                ));
            }
            if !(0..=*width).contains(&to.x()) || !(0..=*depth).contains(&to.y()) {
                self.errors.push(format!("{label}: off the table"));
            }
            for (j, q) in g.state.pieces.iter().enumerate() {
                if j != i && q.on_board() && table::passes_within(from, to, at(j), *base) {
                    self.errors
                        .push(format!("{label}: passes through the base of {}", q.label));
                }
            }
        }
        // The full move toward each enemy (to a base short of it, within SPD), when it is
        // legal by the checks above, is among the choices (to within the engine's search).
        if let Some(&(i, _)) = offered.first() {
            let from = at(i);
            for (j, q) in g.state.pieces.iter().enumerate() {
                if !q.on_board() || q.side.is_none() || q.side == g.state.pieces[i].side {
                    continue;
                }
                let left = spd(&g.state.pieces[i].label)
                    - g.state.pieces[i].counter(
                        g.rules
                            .program
                            .counter_id("move_spent")
                            .expect("the rules keep move_spent"),
                    );
                let reach = left.min(table::distance(from, at(j)) - base);
                if reach <= 0 {
                    continue;
                }
                let full = table::move_toward(from, at(j), reach);
                // Already base to base (to the log's rounding), or less than the shortest
                // leg (a millimetre): no move toward it is left.
                if table::distance(from, full) < table::MM {
                    continue;
                }
                let legal = cost(from, full) <= left
                    && g.state.pieces.iter().enumerate().all(|(k, o)| {
                        k == i || !o.on_board() || !table::passes_within(from, full, at(k), *base)
                    });
                if legal {
                    self.full_moves_seen += 1;
                    let near = offered
                        .iter()
                        .any(|&(_, p)| table::within(p, full, reach / 32 + 2));
                    if !near {
                        let nearest = offered
                            .iter()
                            .map(|&(_, p)| table::distance(p, full))
                            .min()
                            .unwrap_or(-1);
                        self.errors.push(format!(
                            "{}: the full move toward {} is not offered: from {from:?} to {full:?} \
                             ({reach} long); the nearest point offered is {nearest} from it",
                            g.state.pieces[i].label, q.label
                        ));
                    }
                }
            }
        }
        self.inner.choose(g, s, c)
    }
}

#[test]
fn plastic_battle_moves_pay_for_terrain_keep_clear_of_bases_and_include_the_full_advance() {
    // Section 2 Move and 3: a move may end anywhere within SPD, the part through marsh,
    // river or woods and the part up a hill at half speed, never through another figure's
    // base or a flag; the engine's finite list always has the full move toward each enemy.
    let (program, a) = load("plastic_battle", "total-destruction");
    let rules = Rules::new(&program, &a, "total-destruction").unwrap();
    let (mut checked, mut full) = (0, 0);
    for seed in 0..1 {
        let mut refs: Vec<MoveReferee> = (0..2)
            .map(|s| MoveReferee {
                inner: Random::new(seed, s),
                checked: 0,
                full_moves_seen: 0,
                errors: Vec::new(),
            })
            .collect();
        {
            let mut ps: Vec<Box<dyn Policy + '_>> = refs
                .iter_mut()
                .map(|r| Box::new(RefereeRef(r)) as Box<dyn Policy>)
                .collect();
            let mut game = Game::new(&rules, seed, None);
            game.play(&mut ps).unwrap();
        }
        for r in &refs {
            assert!(
                r.errors.is_empty(),
                "seed {seed}: {:?}",
                &r.errors[..r.errors.len().min(5)]
            );
            checked += r.checked;
            full += r.full_moves_seen;
        }
    }
    assert!(
        checked > 100 && full > 10,
        "{checked} moves, {full} full advances checked"
    );
}

struct RefereeRef<'a>(&'a mut MoveReferee);

impl Policy for RefereeRef<'_> {
    fn choose(&mut self, g: &Game, s: SideId, c: &[Choice]) -> Result<usize, EngineError> {
        self.0.choose(g, s, c)
    }
}

#[test]
fn a_game_replays_exactly_from_its_log_and_a_changed_log_is_refused() {
    let (program, a) = load("platoon", "protecting-the-flank");
    let rules = Rules::new(&program, &a, "protecting-the-flank").unwrap();
    let seed = 7;
    let mut ps: Vec<Box<dyn Policy>> = (0..2)
        .map(|s| Box::new(Random::new(seed, s)) as _)
        .collect();
    let mut game = Game::new(&rules, seed, None);
    let result = game.play(&mut ps).unwrap();

    let scripts = |events: &[Event]| Scripted::from_events(&program, events).unwrap();
    let mut again = Game::new(&rules, seed, None);
    let replayed = again.play(&mut scripts(&game.events)).unwrap();
    assert_eq!(replayed, result);
    assert_eq!(again.events, game.events);

    // Change one decision: the replay must notice.
    let mut changed = game.events.clone();
    let k = changed
        .iter()
        .position(|e| matches!(e, Event::Decision { of, .. } if *of > 1))
        .unwrap();
    if let Event::Decision { choice, of, .. } = &mut changed[k] {
        *choice = (*choice + 1) % *of;
    }
    let mut third = Game::new(&rules, seed, None);
    let err = third.play(&mut scripts(&changed)).unwrap_err();
    assert!(err.to_string().contains("not offered"), "{err}");
}

#[test]
fn sim_totals_do_not_depend_on_threads_or_backend() {
    for (sys, scenario, n) in [
        ("platoon", "protecting-the-flank", 16),
        ("plastic_battle", "total-destruction", 4),
    ] {
        let (program, a) = load(sys, scenario);
        let rules = Rules::new(&program, &a, scenario).unwrap();
        let policies = vec!["random".to_string(); program.sides.len()];
        let one = simulate(&rules, n, 3, 1, BackendKind::Interp, &policies, &|_| {}).unwrap();
        let two = simulate(&rules, n, 3, 2, BackendKind::Interp, &policies, &|_| {}).unwrap();
        assert_eq!(one, two, "{sys}: --jobs changes the totals");
        let jit = simulate(&rules, n, 3, 2, BackendKind::Jit, &policies, &|_| {}).unwrap();
        assert_eq!(one, jit, "{sys}: the JIT changes the totals");
        assert_eq!(one.games, n);
        assert_eq!(one.wins.iter().sum::<u64>() + one.draws, n);
    }
}

#[test]
fn greedy_looks_ahead_without_changing_the_games_dice() {
    let (program, a) = load("platoon", "protecting-the-flank");
    let rules = Rules::new(&program, &a, "protecting-the-flank").unwrap();
    let jit = JitProgram::compile(&program, &a).unwrap();
    let play = |kinds: [&str; 2]| {
        let mut ps: Vec<Box<dyn Policy>> = kinds
            .iter()
            .enumerate()
            .map(|(s, k)| sandtable_runtime::engine::policy::by_name(k, 5, s as u32).unwrap())
            .collect();
        let mut g = Game::new(&rules, 5, Some(&jit));
        g.play(&mut ps).unwrap()
    };
    let nva = program.sides.iter().position(|s| s.name == "nva").unwrap();
    let mut kinds = ["random", "random"];
    kinds[nva] = "greedy";
    // Deterministic from the seed.
    assert_eq!(play(kinds), play(kinds));
}

#[test]
fn a_scenario_that_is_not_there_is_named_with_the_alternatives() {
    let (program, a) = load("platoon", "protecting-the-flank");
    let err = Rules::new(&program, &a, "no-such-game").err().unwrap();
    let msg = err.to_string();
    assert!(msg.contains("protecting-the-flank"), "{msg}");
    // Without the assumptions the book's unknowns stop the set-up with their names.
    let none = Assumptions::default();
    let rules = Rules::new(&program, &none, "protecting-the-flank").unwrap();
    let mut ps: Vec<Box<dyn Policy>> = (0..2).map(|s| Box::new(Random::new(1, s)) as _).collect();
    let err = Game::new(&rules, 1, None)
        .play(&mut ps)
        .unwrap_err()
        .to_string();
    assert!(err.contains("is unknown (`?`)"), "{err}");
}

#[test]
fn the_hand_written_platoon_playout_plays_the_engines_games() {
    let (program, a) = load("platoon", "protecting-the-flank");
    let rules = Rules::new(&program, &a, "protecting-the-flank").unwrap();
    let reference = sandtable_reference::Flank::new(&rules).unwrap();
    let policies = vec!["random".to_string(); 2];
    for seed in 0..24 {
        let engine =
            sandtable_runtime::engine::sim::play_one(&rules, None, seed, &policies).unwrap();
        assert_eq!(reference.playout(seed), engine, "seed {seed}");
    }
}

/// The engine's game of `seed` between random policies, logged: the result, and for each
/// decision how many choices it offered and the one taken, in words.
fn logged_game(
    rules: &Rules,
    seed: u64,
) -> (sandtable_runtime::engine::GameResult, Vec<(usize, String)>) {
    let mut ps: Vec<Box<dyn Policy>> = (0..2)
        .map(|s| Box::new(Random::new(seed, s)) as _)
        .collect();
    let mut g = Game::new(rules, seed, None);
    let r = g.play(&mut ps).unwrap();
    let decisions = g
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Decision { of, label, .. } => Some((*of, label.clone())),
            _ => None,
        })
        .collect();
    (r, decisions)
}

#[test]
fn the_hand_written_plastic_battle_playout_plays_the_engines_games() {
    let (program, a) = load("plastic_battle", "total-destruction");
    let rules = Rules::new(&program, &a, "total-destruction").unwrap();
    let reference = sandtable_reference::TotalDestruction::new(&rules).unwrap();
    for seed in 0..20 {
        let (mine, offered) = reference.trace(seed);
        let (engine, decided) = logged_game(&rules, seed);
        // Where the games part: the first decision offered a different number of choices.
        let parted = offered
            .iter()
            .zip(&decided)
            .position(|(n, (of, _))| *n as usize != *of);
        assert_eq!(
            parted,
            None,
            "seed {seed}: decision {parted:?} differs; the engine's decisions before it: {:?}",
            parted.map(|k| &decided[k.saturating_sub(3)..=k])
        );
        assert_eq!(mine, engine, "seed {seed}");
        assert_eq!(reference.playout(seed), engine, "seed {seed}");
    }
}

#[test]
fn a_card_deck_draws_its_cards_and_fires_an_inserted_event_once() {
    let c = sandtable_compiler::compile_path(
        &root().join("runtime/conformance/tests/games/skirmish.sand"),
    )
    .unwrap();
    assert!(!c.has_errors());
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "skirmish").unwrap();
    let mut fired_somewhere = false;
    for seed in 0..30 {
        let mut ps: Vec<Box<dyn Policy>> = (0..2)
            .map(|s| Box::new(Random::new(seed, s)) as _)
            .collect();
        let mut game = Game::new(&rules, seed, None);
        game.play(&mut ps).unwrap();
        // Four draws a turn (draws_before_reshuffle), five turns.
        let mut per_turn: Vec<u32> = Vec::new();
        let mut strikes = 0;
        for e in &game.events {
            match e {
                Event::Turn { .. } => per_turn.push(0),
                Event::Card { .. } => *per_turn.last_mut().unwrap() += 1,
                Event::Said { text } if text.starts_with("card drawn: ") => {
                    *per_turn.last_mut().unwrap() += 1;
                    if text.contains("(strike)") {
                        strikes += 1;
                    }
                }
                _ => {}
            }
        }
        assert_eq!(per_turn, vec![4; 5], "seed {seed}");
        assert!(strikes <= 1, "seed {seed}: the event fired twice");
        let reds = c
            .program
            .sides
            .iter()
            .position(|s| s.name == "reds")
            .unwrap();
        assert_eq!(game.state.scores[reds], 10 * strikes, "seed {seed}");
        fired_somewhere |= strikes == 1;
        assert!(game.chips_drawn().iter().sum::<u32>() <= 20);
    }
    assert!(fired_somewhere, "no game drew a king in 30 seeds");
}

#[test]
fn choices_inside_actions_go_to_the_acting_sides_policy_and_replay() {
    let c = sandtable_compiler::compile_path(
        &root().join("runtime/conformance/tests/games/skirmish.sand"),
    )
    .unwrap();
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "skirmish").unwrap();
    let mut seen = 0;
    for seed in 0..10 {
        let mut ps: Vec<Box<dyn Policy>> = (0..2)
            .map(|s| Box::new(Random::new(seed, s)) as _)
            .collect();
        let mut game = Game::new(&rules, seed, None);
        let result = game.play(&mut ps).unwrap();
        // Every `scout` decision is followed by the side's own `choose` decision.
        let mut expect_choice: Option<String> = None;
        for e in &game.events {
            if let Event::Decision { side, label, .. } = e {
                if let Some(s) = expect_choice.take() {
                    assert_eq!(*side, s, "seed {seed}");
                    assert!(label.starts_with("choose "), "seed {seed}: {label}");
                    seen += 1;
                } else if label.starts_with("scout(") {
                    expect_choice = Some(side.clone());
                }
            }
        }
        // The replay takes the mid-action choices from the log too.
        let mut scripted = Scripted::from_events(&c.program, &game.events).unwrap();
        let mut again = Game::new(&rules, seed, None);
        assert_eq!(again.play(&mut scripted).unwrap(), result);
        assert_eq!(again.events, game.events);
    }
    assert!(seen > 0, "no scout was played in 10 games");
    // Greedy looks ahead through such actions (choosing at random inside them).
    let mut ps: Vec<Box<dyn Policy>> = vec![
        sandtable_runtime::engine::policy::by_name("greedy", 3, 0).unwrap(),
        Box::new(Random::new(3, 1)),
    ];
    Game::new(&rules, 3, None).play(&mut ps).unwrap();
}

#[test]
fn a_sectors_board_is_played_as_a_table_with_numbered_sectors_and_zones() {
    let c = sandtable_compiler::compile_path(
        &root().join("runtime/conformance/tests/games/patrol.sand"),
    )
    .unwrap();
    assert!(!c.has_errors());
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "meeting").unwrap();
    let BoardSpecKind::Sectors = board_kind(&rules) else {
        panic!("the patrol board is read as a sectors board");
    };
    let mut scored = 0;
    for seed in 0..8 {
        let mut ps: Vec<Box<dyn Policy>> = (0..2)
            .map(|s| Box::new(Random::new(seed, s)) as _)
            .collect();
        let mut game = Game::new(&rules, seed, None);
        game.play(&mut ps).unwrap();
        for p in &game.state.pieces {
            let Some(Pos::Point(pt)) = p.pos else {
                panic!("{} has no point", p.label)
            };
            assert!((0..=9000).contains(&pt.x()) && (0..=6000).contains(&pt.y()));
        }
        scored += game.state.scores.iter().sum::<i64>();
    }
    assert!(
        scored > 0,
        "no trooper ever reached the enemy's side in 8 games"
    );
    let policies = vec!["random".to_string(); 2];
    let one = simulate(&rules, 12, 9, 1, BackendKind::Interp, &policies, &|_| {}).unwrap();
    let two = simulate(&rules, 12, 9, 2, BackendKind::Interp, &policies, &|_| {}).unwrap();
    assert_eq!(one, two);
}

enum BoardSpecKind {
    Sectors,
    Other,
}

fn board_kind(rules: &Rules) -> BoardSpecKind {
    match &rules.board {
        sandtable_runtime::engine::setup::BoardSpec::Table {
            sectors: Some(_), ..
        } => BoardSpecKind::Sectors,
        _ => BoardSpecKind::Other,
    }
}

#[test]
fn ambush_at_night_rolls_the_first_american_fire_once_and_a_failure_ends_the_chip() {
    // 7.b.3: the first American attempt to fire in the game rolls `first_fire_check`; on
    // `fails` no American of the hex does anything more with the chip and the NVA get a
    // free action. Only the first attempt rolls.
    let (program, a) = load("platoon", "ambush-at-night");
    let rules = Rules::new(&program, &a, "ambush-at-night").unwrap();
    let (mut games_with_fire, mut failures) = (0, 0);
    for seed in 0..30 {
        let mut ps: Vec<Box<dyn Policy>> = (0..2)
            .map(|s| Box::new(Random::new(seed, s)) as _)
            .collect();
        let mut game = Game::new(&rules, seed, None);
        game.play(&mut ps).unwrap();
        let ev = &game.events;
        let us_fire = ev.iter().position(|e| {
            matches!(e, Event::Acted { side, action, .. } if side == "us" && action == "fire_at")
        });
        let checks: Vec<usize> = (0..ev.len())
            .filter(
                |&k| matches!(&ev[k], Event::Resolved { name, .. } if name == "first_fire_check"),
            )
            .collect();
        let Some(first) = us_fire else {
            assert!(
                checks.is_empty(),
                "seed {seed}: a check without an American fire"
            );
            continue;
        };
        games_with_fire += 1;
        assert_eq!(checks.len(), 1, "seed {seed}: {checks:?}");
        assert!(checks[0] > first, "seed {seed}");
        let Event::Resolved { result, .. } = &ev[checks[0]] else {
            unreachable!()
        };
        if result == "fails" {
            failures += 1;
            // Nothing more from the Americans on that chip; the NVA's free action comes next.
            let next = ev[checks[0]..]
                .iter()
                .find_map(|e| match e {
                    Event::Acted { side, .. } => Some(format!("acted {side}")),
                    Event::Activated { by, side, .. } => Some(format!("{by} {side}")),
                    Event::Chip { .. } => Some("chip".into()),
                    _ => None,
                })
                .unwrap_or_default();
            // (A free action may also be spent on `pass` instead of a hex.)
            assert!(
                next == "free action nva" || next == "acted nva",
                "seed {seed}: {next}"
            );
        } else {
            assert_eq!(result, "may_fire", "seed {seed}");
        }
    }
    assert!(games_with_fire > 0, "no American fired in 30 games");
    assert!(failures > 0, "no first fire failed in 30 games");
}

#[test]
fn picture_cards_replace_or_are_added_reshuffle_at_once_and_count_as_their_colour_after_the_first()
{
    let c = sandtable_compiler::compile_path(
        &root().join("runtime/conformance/tests/games/cards.sand"),
    )
    .unwrap();
    assert!(!c.has_errors());
    let a = Assumptions::default();
    let rules = Rules::new(&c.program, &a, "picture_cards").unwrap();
    let side = |name: &str| c.program.sides.iter().position(|s| s.name == name).unwrap();
    let (reds, blacks) = (side("reds"), side("blacks"));
    let (mut later_kings, mut later_queens, mut same_turn_kings) = (0, 0, 0);
    for seed in 0..40 {
        let mut ps: Vec<Box<dyn Policy>> = (0..2)
            .map(|s| Box::new(Random::new(seed, s)) as _)
            .collect();
        let mut game = Game::new(&rules, seed, None);
        game.play(&mut ps).unwrap();
        let mut per_turn: Vec<u32> = Vec::new();
        let mut sizes = Vec::new();
        let (mut air, mut guns) = (0, 0);
        let mut side_cards = [0i64; 2];
        let mut called_this_turn = false;
        for e in &game.events {
            match e {
                Event::Turn { .. } => {
                    per_turn.push(0);
                    called_this_turn = false;
                }
                Event::Card { card, side, .. } => {
                    *per_turn.last_mut().unwrap() += 1;
                    side_cards[usize::from(side == "blacks")] += 1;
                    match card.as_str() {
                        "king" => later_kings += 1,
                        "queen" => later_queens += 1,
                        _ => {}
                    }
                }
                Event::Decision { label, .. } if label.starts_with("call_air") => {
                    called_this_turn = true;
                }
                Event::Said { text } if text.starts_with("card drawn: ") => {
                    *per_turn.last_mut().unwrap() += 1;
                    if text.contains("(airstrike)") {
                        air += 1;
                        same_turn_kings += i32::from(called_this_turn);
                    }
                    guns += i64::from(text.contains("(barrage)"));
                }
                Event::Said { text } if text.contains(" cards shuffled into the deck") => {
                    sizes.push(text.clone());
                }
                _ => {}
            }
        }
        // Ten cards a turn, whatever was inserted.
        assert_eq!(per_turn, vec![10; 4], "seed {seed}");
        // Kings replace four cards; queens are added (four more).
        let mut queens_in = false;
        for text in &sizes {
            let queens = text.starts_with("queen");
            queens_in |= queens;
            let n = if queens_in { 24 } else { 20 };
            assert!(
                text.ends_with(&format!("({n} cards)")),
                "seed {seed}: {text}"
            );
        }
        assert!(air <= 1 && guns <= 1, "seed {seed}: an event ran twice");
        // Each side scores 1 per card that gave it a turn, 100 per event card it owns;
        // blacks' `on blacks` hook adds 1000 more per card of theirs.
        assert_eq!(
            game.state.scores[blacks],
            100 * air + 1001 * side_cards[1],
            "seed {seed}"
        );
        assert_eq!(
            game.state.scores[reds],
            100 * guns + side_cards[0],
            "seed {seed}"
        );
        assert_eq!(
            game.chips_drawn()
                .iter()
                .map(|&n| i64::from(n))
                .sum::<i64>(),
            side_cards[0] + side_cards[1]
        );
    }
    assert!(
        later_kings > 0 && later_queens > 0,
        "no later picture card was drawn in 40 games"
    );
    assert!(
        same_turn_kings > 0,
        "the kings never came up in the turn they were called"
    );
}
