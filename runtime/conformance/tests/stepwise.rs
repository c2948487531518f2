//! The stepwise engine: a game stopped at any decision (between chips, mid-deck, inside an
//! action's `choose`), copied or saved and read back, plays on to exactly the end the
//! uninterrupted game reaches; a copy played on never touches the game it was taken from.

use sandtable_ir::Program;
use sandtable_runtime::engine::log::Event;
use sandtable_runtime::engine::policy::{Policy, Random};
use sandtable_runtime::engine::save::GameState;
use sandtable_runtime::engine::{Act, Game, GameResult, Rules};
use sandtable_runtime::interp::Assumptions;
use sandtable_runtime::rng::Dice;

fn load(path: &str, assume: Option<&str>) -> (Program, Assumptions) {
    let root = sandtable_conformance::root();
    let c = sandtable_compiler::compile_path(&root.join(path)).unwrap();
    assert!(!c.has_errors(), "{path} does not compile");
    let a = match assume {
        Some(f) => {
            sandtable_conformance::assumptions(&c.program, &[], &[root.join(f).as_path()]).unwrap()
        }
        None => Assumptions::default(),
    };
    (c.program, a)
}

fn policies(seed: u64, sides: usize) -> Vec<Random> {
    (0..sides as u32).map(|s| Random::new(seed, s)).collect()
}

/// Play `g` on to its end with `ps`.
fn finish(mut g: Game, mut ps: Vec<Random>) -> (Vec<Event>, GameResult) {
    g.advance().unwrap();
    while let Some(side) = g.to_move() {
        let k = ps[side as usize].choose(&g, side, g.legal()).unwrap();
        g.apply(k).unwrap();
    }
    let r = g.result().unwrap().clone();
    (g.events, r)
}

/// Through JSON and back, as `--save` and `resume` do.
fn through_json<'r, 'p>(g: &Game<'r, 'p>, rules: &'r Rules<'p>) -> Game<'r, 'p> {
    let text = serde_json::to_string(&g.game_state().unwrap()).unwrap();
    let back: GameState = serde_json::from_str(&text).unwrap();
    let mut again = Game::from_state(rules, back, None).unwrap();
    again.events = g.events.clone();
    again
}

/// For each seed: the whole game, then the same game stopped at a few decisions picked at
/// random (and at every pick inside an action), each copy played on from there, one straight
/// from memory and one through its saved form.
fn stops_change_nothing(rules: &Rules, seeds: std::ops::Range<u64>, stops: u32) {
    let sides = rules.program.sides.len();
    let mut inside_seen = 0;
    for seed in seeds {
        let whole = finish(Game::new(rules, seed, None), policies(seed, sides));
        let total = whole.1.decisions;
        let mut pick = Dice::new(1000 + seed);
        let at: Vec<u32> = (0..stops).map(|_| pick.index(total)).collect();
        let mut g = Game::new(rules, seed, None);
        let mut ps = policies(seed, sides);
        g.advance().unwrap();
        let mut n = 0;
        while let Some(side) = g.to_move() {
            let inside = g.legal().first().is_some_and(|c| c.act == Act::Pick);
            if at.contains(&n) || inside {
                inside_seen += u32::from(inside);
                let copy = finish(g.clone(), ps.clone());
                assert_eq!(copy, whole, "seed {seed}: a copy at decision {n}");
                let saved = finish(through_json(&g, rules), ps.clone());
                assert_eq!(saved, whole, "seed {seed}: a save at decision {n}");
            }
            let k = ps[side as usize].choose(&g, side, g.legal()).unwrap();
            g.apply(k).unwrap();
            n += 1;
        }
        let r = g.result().unwrap().clone();
        assert_eq!((g.events, r), whole);
    }
    if rules.program.procs.iter().any(|p| p.name == "scout") {
        assert!(inside_seen > 0, "no game stopped inside an action");
    }
}

#[test]
fn platoon_stopped_anywhere_plays_on_to_the_same_end() {
    let (program, a) = load(
        "rules/platoon",
        Some("rules/platoon/assumptions/protecting-the-flank.assume"),
    );
    let rules = Rules::new(&program, &a, "protecting-the-flank").unwrap();
    stops_change_nothing(&rules, 0..3, 3);
}

#[test]
fn plastic_battle_stopped_anywhere_plays_on_to_the_same_end() {
    let (program, a) = load(
        "rules/plastic_battle",
        Some("rules/plastic_battle/assumptions/total-destruction.assume"),
    );
    let rules = Rules::new(&program, &a, "total-destruction").unwrap();
    stops_change_nothing(&rules, 0..2, 3);
}

/// A card deck and a `choose` inside an action: stops mid-deck and mid-action.
#[test]
fn a_deck_game_stopped_mid_deck_and_inside_an_action_plays_on_to_the_same_end() {
    let (program, a) = load("runtime/conformance/tests/games/skirmish.sand", None);
    let rules = Rules::new(&program, &a, "skirmish").unwrap();
    stops_change_nothing(&rules, 0..6, 4);
}

#[test]
fn a_copy_played_on_never_touches_the_original() {
    let (program, a) = load(
        "rules/platoon",
        Some("rules/platoon/assumptions/protecting-the-flank.assume"),
    );
    let rules = Rules::new(&program, &a, "protecting-the-flank").unwrap();
    let mut g = Game::new(&rules, 4, None);
    let mut ps = policies(4, 2);
    g.advance().unwrap();
    for _ in 0..30 {
        let side = g.to_move().unwrap();
        let k = ps[side as usize].choose(&g, side, g.legal()).unwrap();
        g.apply(k).unwrap();
    }
    let before = serde_json::to_string(&g.game_state().unwrap()).unwrap();
    let events = g.events.clone();
    let (_, r) = finish(g.clone(), ps.clone());
    assert!(r.turns > 0);
    assert_eq!(
        serde_json::to_string(&g.game_state().unwrap()).unwrap(),
        before
    );
    assert_eq!(g.events, events);
    assert!(!g.is_over());
}

/// The search draws only from its own stream: the same seed picks the same choice, and the
/// game it searched is left as it was.
#[test]
fn mcts_is_deterministic_for_a_seed_and_leaves_the_game_alone() {
    use sandtable_runtime::engine::mcts::Mcts;
    let (program, a) = load(
        "rules/platoon",
        Some("rules/platoon/assumptions/protecting-the-flank.assume"),
    );
    let rules = Rules::new(&program, &a, "protecting-the-flank").unwrap();
    let mut g = Game::new(&rules, 2, None);
    let mut ps = policies(2, 2);
    g.advance().unwrap();
    // Past the deployment, to the first chips.
    for _ in 0..24 {
        let side = g.to_move().unwrap();
        let k = ps[side as usize].choose(&g, side, g.legal()).unwrap();
        g.apply(k).unwrap();
    }
    let side = g.to_move().unwrap();
    let before = serde_json::to_string(&g.game_state().unwrap()).unwrap();
    let pick = |seed| {
        Mcts::new(seed, side, 12, None)
            .choose(&g, side, g.legal())
            .unwrap()
    };
    let first = pick(9);
    assert_eq!(pick(9), first);
    assert!(first < g.legal().len());
    assert_eq!(
        serde_json::to_string(&g.game_state().unwrap()).unwrap(),
        before
    );
    assert_eq!(Mcts::parse("200"), Ok((200, None)));
    assert_eq!(
        Mcts::parse("200:50"),
        Ok((200, Some(std::time::Duration::from_millis(50))))
    );
    for bad in ["", "0", "x", "200:", "200:0", "2000000"] {
        assert!(Mcts::parse(bad).is_err(), "{bad}");
    }
}

/// A search re-deals what its side cannot see, secret scores included, so a choice the real
/// game offers may be shut in the world it imagines (Nam Bread Man's `fire` at a figure in
/// cover needs the firer's secret D12 above the target's). Such a world leaves the choice out
/// instead of offering one that stops the game with an error, and the searches built on it
/// (greedy's look-ahead, MCTS) play on.
#[test]
fn a_search_over_secret_scores_never_plays_a_choice_its_world_shuts() {
    use sandtable_runtime::engine::mcts::Mcts;
    use sandtable_runtime::engine::policy::Greedy;
    let (program, a) = load(
        "rules/nam_bread_man",
        Some("rules/nam_bread_man/assumptions/platoon-patrol.assume"),
    );
    let rules = Rules::new(&program, &a, "platoon-patrol").unwrap();
    let (fire, _) = program.proc_by_name("fire").unwrap();
    let (mut fired, mut searched) = (0, 0);
    for seed in 0..4u64 {
        let mut g = Game::new(&rules, seed, None);
        let mut ps = policies(seed, 2);
        g.advance().unwrap();
        // Enough fire checked in enough worlds: the rest of the game adds nothing.
        while let Some(side) = g.to_move()
            && fired < 400
        {
            if g.legal().iter().any(|c| c.act == Act::Action(fire)) {
                for world_seed in 0..4 {
                    let world = g.possible_world(side, world_seed);
                    for (k, c) in world.legal().iter().enumerate() {
                        if c.act == Act::Action(fire) {
                            let mut w = world.clone();
                            w.apply(k).unwrap();
                            fired += 1;
                        }
                    }
                }
                if searched < 2 {
                    searched += 1;
                    let k = Mcts::new(seed, side, 24, None)
                        .choose(&g, side, g.legal())
                        .unwrap();
                    assert!(k < g.legal().len());
                    let k = Greedy::new(seed, side).choose(&g, side, g.legal()).unwrap();
                    assert!(k < g.legal().len());
                }
            }
            let k = ps[side as usize].choose(&g, side, g.legal()).unwrap();
            g.apply(k).unwrap();
        }
    }
    assert!(fired > 0, "no world offered `fire`");
}

/// Activation units: a game stopped at every decision inside an activation (the unit picked,
/// some of its pieces used) plays on, copied or saved, to the end the uninterrupted one
/// reaches.
#[test]
fn a_game_stopped_mid_activation_plays_on_to_the_same_end() {
    use sandtable_runtime::engine::flow::Stage;
    for (path, assume, scenario, seeds) in [
        (
            "runtime/conformance/tests/games/squads.sand",
            None,
            "squads",
            0..12,
        ),
        (
            "rules/platoon",
            Some("rules/platoon/assumptions/protecting-the-flank.assume"),
            "protecting-the-flank",
            0..2,
        ),
    ] {
        let (program, a) = load(path, assume);
        let rules = Rules::new(&program, &a, scenario).unwrap();
        let sides = rules.program.sides.len();
        let mut mid = 0;
        for seed in seeds {
            let whole = finish(Game::new(&rules, seed, None), policies(seed, sides));
            let mut g = Game::new(&rules, seed, None);
            let mut ps = policies(seed, sides);
            g.advance().unwrap();
            while let Some(side) = g.to_move() {
                if matches!(&g.flow.stage, Stage::Unit { unit, .. } if unit.pieces.is_some()) {
                    mid += 1;
                    let saved = finish(through_json(&g, &rules), ps.clone());
                    assert_eq!(
                        saved, whole,
                        "{scenario} seed {seed}: a save mid-activation"
                    );
                }
                let k = ps[side as usize].choose(&g, side, g.legal()).unwrap();
                g.apply(k).unwrap();
            }
        }
        assert!(mid > 0, "{scenario}: no game stopped mid-activation");
    }
}

/// A human player sees, before each decision, everything that happened since the last one
/// (chips drawn, the enemy's visible actions, every resolution with its dice and result) in
/// the order it happened, the board, and the choices grouped by piece; the enemy's face-down
/// pieces are never named.
#[test]
fn a_human_player_sees_everything_visible_that_happened_since_the_last_decision() {
    use sandtable_runtime::engine::log::narrate;
    use sandtable_runtime::engine::policy::Human;
    let (program, a) = load(
        "rules/platoon",
        Some("rules/platoon/assumptions/protecting-the-flank.assume"),
    );
    let rules = Rules::new(&program, &a, "protecting-the-flank").unwrap();
    let us = rules
        .sides()
        .into_iter()
        .find(|&s| rules.side_name(s) == "us")
        .unwrap();
    let mut resolutions_seen = 0;
    for seed in 1..=10 {
        // Varied answers (one past the list is asked again), so the game has fights.
        let answers: String = (0..4000).map(|i| format!("{}\n", i * 7 % 13 + 1)).collect();
        let mut shown = Vec::new();
        let mut g = Game::new(&rules, seed, None);
        {
            let mut human = Some(Human::new(answers.as_bytes(), &mut shown));
            let mut ps: Vec<Box<dyn Policy + '_>> = Vec::new();
            // Indexed by side id.
            let mut sides = rules.sides();
            sides.sort();
            for s in sides {
                match human.take_if(|_| s == us) {
                    Some(h) => ps.push(Box::new(h)),
                    None => ps.push(Box::new(Random::new(seed, s))),
                }
            }
            g.play(&mut ps).unwrap();
        }
        let shown = String::from_utf8(shown).unwrap();
        assert!(
            shown.contains("--- since your last decision ---"),
            "{shown}"
        );
        assert!(shown.contains("Turn 1 of 3"), "no board shown: {shown}");
        let grouped = shown
            .lines()
            .zip(shown.lines().skip(1))
            .any(|(head, first)| {
                head.starts_with("  ")
                    && head.ends_with(':')
                    && first.trim_start().starts_with(|c: char| c.is_ascii_digit())
            });
        assert!(grouped, "choices not grouped by piece: {shown}");
        assert!(
            shown.contains("chip drawn: nva"),
            "the enemy's chips are not shown"
        );
        assert!(
            shown.contains("nva: activate hex"),
            "the enemy's activations are not shown"
        );
        // A soldier turned face up for his own shot (section 7's introduction) is named in
        // that line only.
        let named: Vec<&str> = shown
            .lines()
            .filter(|l| l.contains("nva_ak47") && !l.ends_with("is turned face up for this action"))
            .collect();
        assert!(
            named.is_empty(),
            "seed {seed}: the American player saw a face-down NVA piece's identity: {named:?}"
        );
        // Face-down NVA pieces standing or acting together show as one stack, of no told
        // size: a hex appears once on a board, and no line lists them one by one.
        let mut stacks = 0;
        for board in shown.split("Turn ").skip(1) {
            let mut hexes: Vec<&str> = Vec::new();
            for l in board.lines().filter(|l| l.contains("face-down nva")) {
                let hex = l.split_whitespace().next().unwrap();
                assert!(
                    !hexes.contains(&hex),
                    "seed {seed}: {hex} listed twice: {board}"
                );
                hexes.push(hex);
                stacks += usize::from(l.contains("face-down nva stack"));
            }
        }
        assert!(
            stacks > 0,
            "seed {seed}: no NVA stack was ever on the board"
        );
        assert!(
            !shown.contains("a face-down piece + "),
            "seed {seed}: pieces acting together were counted"
        );
        // Nor which action a face-down NVA piece took (a decoy's own move would name it).
        let named: Vec<&str> = shown
            .lines()
            .filter(|l| l.starts_with("  nva: ") && l.contains("(a face-down"))
            .collect();
        assert!(named.is_empty(), "seed {seed}: {named:?}");
        // Nor does an NVA activation or deployment tell how many pieces stand in a hex.
        let counted: Vec<&str> = shown
            .lines()
            .filter(|l| {
                (l.contains("nva: activate hex") || l.contains("nva activates hex"))
                    && l.contains(" unit")
            })
            .collect();
        assert!(counted.is_empty(), "seed {seed}: {counted:?}");
        let mut deployed: Vec<&str> = shown
            .lines()
            .filter(|l| l.starts_with("  nva: deploy "))
            .collect();
        let told = deployed.len();
        deployed.sort();
        deployed.dedup();
        assert_eq!(
            deployed.len(),
            told,
            "seed {seed}: a hex's NVA deployment told twice"
        );
        // Every event that names no NVA piece is shown, in order, up to the last American
        // decision.
        let last_prompt = shown.rfind("us chooses").unwrap();
        let mut rest = &shown[..last_prompt];
        // The last American decision is logged when it is made, after its prompt.
        let upto = g
            .events
            .iter()
            .rposition(|e| matches!(e, Event::Decision { side, .. } if side == "us"))
            .unwrap();
        for e in &g.events[..upto] {
            let Some(line) = narrate(e, None) else {
                continue;
            };
            let line = line.trim_start_matches('\n');
            if line.contains("nva_") || line.trim().is_empty() {
                continue;
            }
            // An NVA activation is told without its count of units.
            let line = match line.find(" (") {
                Some(k) if line.contains("nva: activate") || line.contains("nva activates") => {
                    &line[..k]
                }
                _ => line,
            };
            let at = rest.find(line).unwrap_or_else(|| {
                panic!("seed {seed}: the player never saw `{line}` (or saw it out of order)")
            });
            if matches!(e, Event::Resolved { .. }) {
                assert!(line.contains(" rolled d10 "), "no dice in `{line}`");
                resolutions_seen += 1;
            }
            rest = &rest[at + line.len()..];
        }
    }
    assert!(resolutions_seen > 0, "no resolution was seen in ten games");
}

/// MCTS carries the subtree of its choice to its next decision, and that subtree is saved
/// with a game: a search stopped at any decision, its stream and memory written as a save
/// holds them and read into a new policy, picks what the uninterrupted one picks.
#[test]
fn mcts_carries_its_subtree_and_a_resumed_search_decides_the_same() {
    use sandtable_runtime::engine::mcts::Mcts;
    let (program, a) = load(
        "rules/platoon",
        Some("rules/platoon/assumptions/protecting-the-flank.assume"),
    );
    let rules = Rules::new(&program, &a, "protecting-the-flank").unwrap();
    let seed = 3;
    let mut g = Game::new(&rules, seed, None);
    let mut us = Random::new(seed, 1);
    let mut nva = Mcts::new(seed, 0, 12, None);
    g.advance().unwrap();
    let (mut searched, mut carried, mut n) = (0, 0, 0);
    while let Some(side) = g.to_move()
        && searched < 40
    {
        let k = if side == 0 {
            // A copy of the search as a save would restore it.
            let stream = serde_json::to_string(&nva.stream()).unwrap();
            let memory = serde_json::to_string(&nva.memory()).unwrap();
            let mut resumed = Mcts::new(99, 0, 12, None);
            let stream: Option<sandtable_runtime::rng::DiceState> =
                serde_json::from_str(&stream).unwrap();
            resumed.restore(&stream.unwrap()).unwrap();
            let memory: Option<serde_json::Value> = serde_json::from_str(&memory).unwrap();
            if let Some(m) = &memory {
                resumed.recall(m).unwrap();
                carried += 1;
            }
            let k = nva.choose(&g, side, g.legal()).unwrap();
            assert_eq!(
                resumed.choose(&g, side, g.legal()).unwrap(),
                k,
                "decision {n}"
            );
            searched += usize::from(g.legal().len() > 1);
            k
        } else {
            us.choose(&g, side, g.legal()).unwrap()
        };
        g.apply(k).unwrap();
        n += 1;
    }
    assert!(searched >= 40, "only {searched} searches");
    // A carried subtree's visits count towards the next search's iterations.
    let (searches, played) = nva.work();
    assert_eq!(searches, searched as u64);
    assert!(
        played < 12 * searches,
        "{played} iterations in {searches} searches"
    );
    assert!(
        played >= 6 * searches,
        "{played} iterations in {searches} searches"
    );
    eprintln!("{played} iterations in {searches} searches at mcts:12, {carried} carried");
    assert!(
        carried > 0,
        "no subtree was ever carried to the next decision"
    );
    // A damaged memory is refused, not trusted.
    let mut m = Mcts::new(seed, 0, 12, None);
    let hold = serde_json::to_value(sandtable_runtime::engine::Choice {
        act: Act::Hold,
        args: Vec::new(),
    })
    .unwrap();
    let node = |child| serde_json::json!({"visits": 1, "available": 1, "reward": 0, "children": [[hold, child]]});
    let leaf = serde_json::json!({"visits": 1, "available": 1, "reward": 0, "children": []});
    assert!(
        m.recall(&serde_json::json!({"at": 3, "nodes": [node(1), leaf]}))
            .is_ok()
    );
    // A child that is its own parent, or out of range.
    assert!(
        m.recall(&serde_json::json!({"at": 3, "nodes": [node(0)]}))
            .is_err()
    );
    assert!(
        m.recall(&serde_json::json!({"at": 3, "nodes": [node(2), leaf]}))
            .is_err()
    );
    assert!(
        m.recall(&serde_json::json!({"at": 3, "nodes": []}))
            .is_err()
    );
    assert!(m.recall(&serde_json::json!("x")).is_err());
}

/// A world a search imagines deals a deck's undrawn cards anew: the order of the cards to
/// come is not something any side has seen.
#[test]
fn a_searched_world_never_knows_the_order_of_the_deck() {
    use sandtable_runtime::engine::flow::Stage;
    fn pile(stage: &Stage) -> Option<Vec<String>> {
        match stage {
            Stage::Unit { then, .. } => pile(then),
            Stage::Deck { pile, .. } => Some(pile.iter().map(|c| c.label.clone()).collect()),
            _ => None,
        }
    }
    let (program, a) = load("runtime/conformance/tests/games/cards.sand", None);
    let rules = Rules::new(&program, &a, "picture_cards").unwrap();
    let mut g = Game::new(&rules, 5, None);
    let mut ps = policies(5, 2);
    g.advance().unwrap();
    let mut checked = 0;
    while let Some(side) = g.to_move() {
        if let Some(real) = pile(&g.flow.stage)
            && real.len() >= 4
        {
            let mut sorted_real = real.clone();
            sorted_real.sort();
            let mut differ = 0;
            for seed in 0..8 {
                let w = g.possible_world(side, seed);
                let world = pile(&w.flow.stage).unwrap();
                let mut sorted = world.clone();
                sorted.sort();
                assert_eq!(sorted, sorted_real, "the same cards, in some order");
                differ += usize::from(world != real);
            }
            assert!(differ > 0, "every world knew the real order of {real:?}");
            checked += 1;
        }
        let k = ps[side as usize].choose(&g, side, g.legal()).unwrap();
        g.apply(k).unwrap();
    }
    assert!(checked > 0, "no decision with a deck to draw from");
}

/// A win that takes two choices in one activation, neither worth anything alone: the search
/// plans the side's turn and finds it in every game, where a random side, and greedy's one
/// step of look-ahead, miss it.
#[test]
fn mcts_finds_a_win_that_takes_two_steps() {
    use sandtable_runtime::engine::mcts::Mcts;
    let (program, a) = load("runtime/conformance/tests/games/two_steps.sand", None);
    let rules = Rules::new(&program, &a, "two_steps").unwrap();
    let play = |seed: u64, kind: &str| {
        let mut g = Game::new(&rules, seed, None);
        let mut blue: Box<dyn Policy> = match kind {
            "mcts" => Box::new(Mcts::new(seed, 0, 64, None)),
            "greedy" => Box::new(sandtable_runtime::engine::policy::Greedy::new(seed, 0)),
            _ => Box::new(Random::new(seed, 0)),
        };
        let mut red = Random::new(seed, 1);
        g.advance().unwrap();
        while let Some(side) = g.to_move() {
            let k = if side == 0 {
                blue.choose(&g, side, g.legal()).unwrap()
            } else {
                red.choose(&g, side, g.legal()).unwrap()
            };
            g.apply(k).unwrap();
        }
        // Blue's score is its strikes: the victory block wins it blue when above 0.
        g.result().unwrap().scores[0]
    };
    let blue_won = |score: i64| score > 0;
    for seed in 0..6 {
        assert!(
            blue_won(play(seed, "mcts")),
            "seed {seed}: the search missed the win"
        );
    }
    for kind in ["random", "greedy"] {
        let wins = (0..20).filter(|&s| blue_won(play(s, kind))).count();
        assert!(wins < 20, "the win is not one {kind} misses");
    }
}
