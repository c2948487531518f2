//! Referee for Dinky Dau, "Meeting Engagement in the Rubber Plantation", written from the book
//! (shared/rulebooks/dinky_dau.txt) apart from the engine. It reads the log as text, the
//! elements' stat lines and the stand-in table from the compiled rules as JSON data, and the
//! scenario's assumptions; the book's numbers are written here, each with its section.
//!
//! Checked per game:
//! - CP (2.2 item 4, 2.3, 1.5): each turn's CP roll adds up (1D6 per officer, +1 RTO in contact,
//!   +1 per surviving Squad Leader), and the orders of the turn, at 1 CP in command (6in of the
//!   commander, 4in in dense terrain) and 2 CP out of it (1 with the emergency initiative
//!   check, only when 1 CP is left), never spend more than it; a Platoon Recon Sweep (4.2) is
//!   ordered by the commander only, costs 2 CP and rolls at most three spotting tests.
//! - Ambush tokens (2.2 item 5, 2.3): ambushes sprung never exceed the tokens gained.
//! - Fog (4.2, 4.5.B): a side's choices never name an enemy element that is not a confirmed
//!   contact, and an element becomes one only by a successful spotting test, by firing, by
//!   being fired on or ambushed, by a Recon by Fire "6" or by sprinting near a blind.
//! - Pools and saves (5.1): every volley rolls as many dice as its pool, hits on its target
//!   number (2+ to 7), and the target rolls one save per hit; every unsaved hit is a ring on a
//!   medium stand or its collapse (2nd hit), or a Look Out, Sir! roll on a small stand once no
//!   medium stand is left; an element goes when it has no stand left.
//! - Rolls by their tables: morale (4+, veterans 3+, militia 5+, winded -1), spotting (4+ with
//!   the 4.2 / 4.5 modifiers; natural 6 critical), bleed (1-2 KIA), emergency initiative and
//!   ambush discipline (4+), Look Out, Sir! (1 fails), Recon by Fire (1 / 2-3 / 4-5 / 6),
//!   Hot LZ (1 / 2-4 / 5 / 6).
//! - VP recount (3.3, 3.4): the final scores from the stands lost, KIA, extractions and the
//!   casualty tokens left, with the scenario's reading of the -3 / -2.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{Report, constant, entity_of, prop};

/// An element's stat line, as the rules print it (with the assumptions' values).
#[derive(Clone, Debug)]
struct Stat {
    side: String,
    mediums: i64,
    smalls: i64,
    medium_fp: i64,
    small_fp: i64,
    officer: bool,
    squad_leader: bool,
    dummy: bool,
}

#[derive(Default, Clone, Debug)]
struct Piece {
    entity: String,
    side: String,
    at: (i64, i64),
    markers: BTreeSet<String>,
    counters: BTreeMap<String, i64>,
    gone: bool,
}

impl Piece {
    fn c(&self, k: &str) -> i64 {
        self.counters.get(k).copied().unwrap_or(0)
    }
}

pub struct DinkyDau {
    stats: BTreeMap<String, Stat>,
    /// Dense terrain rectangles of the table (1.5: 4in command radius inside).
    dense: Vec<(i64, i64, i64, i64)>,
    sides: Vec<String>,
    turns: i64,
    tokens_per_turn: i64,
    flat_three: bool,
}

// The book's numbers (lengths in tenths of a millimetre: 1in = 254).
const INCH: i64 = 254;
/// 1.5 / 2.3: command radius 6in in the open, 4in in dense terrain.
const RADIUS_OPEN: i64 = 6 * INCH;
const RADIUS_DENSE: i64 = 4 * INCH;
/// 2.3: in command 1 CP, out of command 2 CP.
const COST_IN: i64 = 1;
const COST_OUT: i64 = 2;
/// 4.2 Coordinated Platoon Sweep: 2 CP.
const COST_SWEEP: i64 = 2;

/// 5.1 step 4: morale targets.
fn morale_target(quality: &str) -> i64 {
    match quality {
        "veteran" => 3,
        "militia" => 5,
        _ => 4,
    }
}

/// 4.2 / 4.5.A / 2.3: the spotting modifiers, in the order of the resolution's arguments.
fn spotting_total(roll: i64, args: &[String]) -> i64 {
    let flag = |i: usize| args.get(i).is_some_and(|a| a.ends_with("true"));
    let terrain = args.first().map(String::as_str).unwrap_or_default();
    let mut m = 0;
    if flag(1) {
        m += 1; // target sprinting or firing
    }
    if terrain.ends_with("secondary_growth") {
        m -= 1;
    }
    if terrain.ends_with("dense_growth") {
        m -= 2;
    }
    if flag(2) {
        m += 1; // binoculars
    }
    if flag(3) {
        m -= 1; // isolated medic / RTO
    }
    if flag(4) {
        m -= 1; // rear blind spot
    }
    if flag(5) {
        m += 1; // target in motion (4.5.A)
    }
    if flag(6) {
        m -= 1; // target concealed (4.5.A)
    }
    if flag(7) {
        m += 1; // patrol move (2.3)
    }
    roll + m
}

fn arg_int(args: &[String], i: usize) -> i64 {
    args.get(i)
        .and_then(|a| a.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(-1)
}

fn arg_bool(args: &[String], i: usize) -> bool {
    args.get(i).is_some_and(|a| a.ends_with("true"))
}

fn dist(a: (i64, i64), b: (i64, i64)) -> i64 {
    let (dx, dy) = ((a.0 - b.0) as f64, (a.1 - b.1) as f64);
    (dx * dx + dy * dy).sqrt().round() as i64
}

fn point(v: &Value) -> Option<(i64, i64)> {
    Some((v.get("x")?.as_i64()?, v.get("y")?.as_i64()?))
}

/// One log line, as far as this referee reads it.
struct Line {
    v: Value,
}

impl Line {
    fn kind(&self) -> &str {
        self.v["event"].as_str().unwrap_or_default()
    }
    fn s(&self, k: &str) -> String {
        self.v[k].as_str().unwrap_or_default().to_string()
    }
    fn args(&self) -> Vec<String> {
        self.v["args"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| x.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
    fn dice(&self) -> Vec<i64> {
        self.v["dice"]
            .as_array()
            .map(|a| a.iter().map(|d| d["face"].as_i64().unwrap_or(0)).collect())
            .unwrap_or_default()
    }
}

impl DinkyDau {
    pub fn new(ir: &Value, scenario: &str, assumed: &BTreeMap<String, String>) -> Self {
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let sides: Vec<String> = ir["sides"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect();
        let mut stats = BTreeMap::new();
        for e in ir["entities"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap_or_default().to_string();
            let get = |k: &str| -> Option<Value> {
                let f = e["fields"].as_array()?.iter().find(|f| f[0] == k)?;
                constant(ir, &f[1], assumed)
            };
            let Some(role) = get("role") else { continue };
            let Some(mediums) = get("mediums").and_then(|v| v.as_i64()) else {
                continue;
            };
            let side = e["side"]
                .as_u64()
                .and_then(|i| sides.get(i as usize).cloned())
                .unwrap_or_default();
            let int = |k: &str| get(k).and_then(|v| v.as_i64()).unwrap_or(0);
            let boolean = |k: &str| get(k).and_then(|v| v.as_bool()).unwrap_or(false);
            stats.insert(
                name,
                Stat {
                    side,
                    mediums,
                    smalls: int("smalls"),
                    medium_fp: int("medium_fp"),
                    small_fp: int("small_fp"),
                    officer: boolean("officer"),
                    squad_leader: boolean("squad_leader"),
                    dummy: role.as_str() == Some("dummy_blind"),
                },
            );
        }
        // The dense features of the table: its terrain named dense_jungle.
        let mut dense = Vec::new();
        for f in board["blocks"].as_array().into_iter().flatten() {
            if f["keyword"] != "feature" {
                continue;
            }
            let terrain = prop(f, "terrain")
                .first()
                .and_then(|(_, v)| v["Const"]["Entity"].as_u64())
                .and_then(|i| ir["entities"][i as usize]["name"].as_str())
                .unwrap_or_default()
                .to_string();
            if terrain != "dense_jungle" {
                continue;
            }
            let r: Vec<i64> = prop(f, "rect")
                .iter()
                .filter_map(|(_, v)| constant(ir, v, assumed).and_then(|c| c.as_i64()))
                .collect();
            if r.len() == 4 {
                dense.push((r[0], r[1], r[2], r[3]));
            }
        }
        let num = |k: &str| -> i64 {
            assumed
                .get(&format!("scenario.{scenario}.{k}"))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        // The reading of the -3 / -2: written in the scenario, or (`options: ?`) assumed.
        let flat_three = prop(sc, "options")
            .iter()
            .any(|(_, v)| v["Const"]["Symbol"] == "flat_three")
            || assumed
                .get(&format!("scenario.{scenario}.options"))
                .is_some_and(|v| v.contains("flat_three"));
        DinkyDau {
            stats,
            dense,
            sides,
            turns: num("turns"),
            tokens_per_turn: num("ambush_tokens"),
            flat_three,
        }
    }

    fn in_dense(&self, p: (i64, i64)) -> bool {
        self.dense
            .iter()
            .any(|&(x0, y0, x1, y1)| p.0 >= x0 && p.0 <= x1 && p.1 >= y0 && p.1 <= y1)
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        let lines: Vec<Line> = text
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(|l| Line {
                v: serde_json::from_str(l).expect("a log line is JSON"),
            })
            .collect();
        let mut pieces: BTreeMap<String, Piece> = BTreeMap::new();
        let mut phase = String::new();
        let mut cp = 0i64;
        let mut tokens = 0i64;
        // Per game tallies for the VP recount.
        let mut kia = 0i64;
        let mut extracted = 0i64;
        let mut abandoned = 0i64;
        let mut comm_left = 0i64;
        // The order in progress: its side, its cost, and what happened in it so far.
        let mut order: Option<(String, String)> = None; // (side, label)
        let mut cost_due: i64 = 0;
        let mut emergency_expected = false;
        let mut emergency_seen = false;
        let mut recon_six = false;
        // Spotting tests rolled in the order in progress (4.2: a sweep tests at most three squads).
        let mut spots_in_order = 0i64;
        let mut last_hits: Option<i64> = None;
        let mut unsaved_left = 0i64;
        let mut unsaved_target: Option<String> = None;
        let mut bleed_pending: Vec<bool> = Vec::new();
        let mut touchdown: Option<String> = None;
        let allied = self.sides.first().cloned().unwrap_or_default();
        let insurgent = self.sides.get(1).cloned().unwrap_or_default();

        for (n, l) in lines.iter().enumerate() {
            match l.kind() {
                "turn" => {
                    let turn = l.v["turn"].as_i64().unwrap_or(0);
                    r.check(
                        "2.4 item 8: turn limit",
                        (turn > self.turns)
                            .then(|| format!("turn {turn} beyond the limit {}", self.turns)),
                    );
                }
                "phase" => {
                    phase = l.s("phase");
                    if phase.contains("Tension") {
                        tokens += self.tokens_per_turn;
                        // With no officer left the CP are the Squad Leaders alone (2.2 item 4).
                        let hq_alive = pieces.values().any(|p| {
                            !p.gone && self.stats.get(&p.entity).is_some_and(|s| s.officer)
                        });
                        if !hq_alive {
                            cp = self.leaders(&pieces);
                        }
                    }
                }
                "deployed" => {
                    let label = l.s("piece");
                    let entity = entity_of(&label, &self.sides).to_string();
                    let side = l.s("side");
                    pieces.insert(
                        label,
                        Piece {
                            entity,
                            side,
                            at: point(&l.v["at"]).unwrap_or_default(),
                            ..Piece::default()
                        },
                    );
                }
                "moved" => {
                    if let (Some(p), Some(to)) = (pieces.get_mut(&l.s("piece")), point(&l.v["to"]))
                    {
                        p.at = to;
                    }
                }
                "counted" => {
                    let label = l.s("piece");
                    let counter = l.s("counter");
                    let value = l.v["value"].as_i64().unwrap_or(0);
                    let Some(p) = pieces.get(&label).cloned() else {
                        continue;
                    };
                    let before = p.c(&counter);
                    let stat = self.stats.get(&p.entity).cloned();
                    // Stand losses follow the hits (5.1 step 4).
                    if counter == "front_ring" && value == 1 {
                        let ok = unsaved_left > 0
                            && unsaved_target.as_deref().is_none_or(|t| t == label)
                            || recon_six;
                        r.check(
                            "5.1 step 4: a ring comes from an unsaved hit",
                            (!ok).then(|| format!("{label} ringed with no unsaved hit (line {n})")),
                        );
                        unsaved_left -= 1;
                    }
                    if counter == "front_ring" && value == 0 && before == 1 {
                        // The ring comes off as its stand collapses (the next event).
                        if let Some(q) = pieces.get_mut(&label) {
                            q.counters.insert("_ring_cleared".into(), 1);
                        }
                    }
                    if counter == "mediums_lost" && value > before {
                        r.check(
                            "5.1 step 4: a medium stand collapses on its 2nd hit",
                            (p.c("_ring_cleared") != 1).then(|| {
                                format!(
                                    "{label} lost a medium stand that carried no ring (line {n})"
                                )
                            }),
                        );
                        unsaved_left -= 1;
                        if let Some(q) = pieces.get_mut(&label) {
                            q.counters.insert("_ring_cleared".into(), 0);
                        }
                    }
                    if counter == "smalls_lost" && value > before {
                        let mediums_left =
                            stat.as_ref().map_or(0, |s| s.mediums) - p.c("mediums_lost");
                        r.check(
                            "5.1 step 4: small stands are hit only when no medium stand is left",
                            (mediums_left > 0).then(|| {
                                format!("{label} lost a small stand with {mediums_left} medium stands left (line {n})")
                            }),
                        );
                    }
                    if phase.contains("Consolidation") && counter == "lying" && value < before {
                        // A bleed roll of this element's token came up KIA.
                        r.check(
                            "2.4 / 6.2: a casualty token dies only on a KIA bleed roll",
                            (bleed_pending.pop() != Some(true)).then(|| {
                                format!("{label} lost a token without a KIA roll (line {n})")
                            }),
                        );
                    }
                    if let Some(p) = pieces.get_mut(&label) {
                        p.counters.insert(counter, value);
                    }
                }
                "marked" | "unmarked" => {
                    let marker = l.s("marker");
                    let Some(label) = l.v["piece"].as_str().map(String::from) else {
                        continue;
                    };
                    let marked = l.kind() == "marked";
                    if marked && marker == "confirmed_contact" {
                        // The events of the order in progress (a side's choices inside it, an
                        // ambush or opportunity fire, are logged after its events).
                        let starts = |x: &Line| {
                            (x.kind() == "decision" && !x.s("label").starts_with("choose "))
                                || x.kind() == "phase"
                                || x.kind() == "turn"
                        };
                        let from = (0..n).rev().find(|&i| starts(&lines[i])).unwrap_or(0);
                        let to = (n + 1..lines.len())
                            .find(|&i| starts(&lines[i]))
                            .unwrap_or(lines.len());
                        let seg = &lines[from..to];
                        let spotted = seg.iter().any(|x| {
                            x.kind() == "resolved"
                                && x.s("name") == "spotting"
                                && x.s("result") != "not_spotted"
                        });
                        let fired = seg
                            .iter()
                            .any(|x| x.kind() == "resolved" && x.s("name") == "hit_roll");
                        let recon = seg.iter().any(|x| {
                            x.kind() == "resolved" && x.s("result") == "direct_hit_revealed"
                        });
                        let own = pieces
                            .get(&label)
                            .map(|p| p.side.clone())
                            .unwrap_or_default();
                        let noisy = order.as_ref().is_some_and(|(s, lab)| {
                            *s == own
                                && (lab.starts_with("sprint(") || lab.starts_with("recon_by_fire("))
                        });
                        // Opportunity fire or an ambush: the other side's "choose 1" inside the
                        // order (a dummy blind fired on is discarded before any die is rolled).
                        let interrupted = seg.iter().any(|x| {
                            x.kind() == "decision"
                                && x.s("label") == "choose 1"
                                && order.as_ref().is_some_and(|(s, _)| *s != x.s("side"))
                        });
                        let ok = spotted || fired || recon || noisy || interrupted;
                        r.check(
                            "4.2: a blind is revealed only by a spot, fire, ambush or noise",
                            (!ok).then(|| {
                                format!(
                                    "{label} revealed with no cause (line {n}, order {order:?})"
                                )
                            }),
                        );
                    }
                    if marker == "target_marker" && !marked && phase.contains("Tension") {
                        touchdown = Some(label.clone());
                        // No Hot LZ roll follows when no enemy threatens: extraction.
                        let threatened = lines[n + 1..]
                            .iter()
                            .take_while(|x| {
                                x.kind() != "counted"
                                    && x.kind() != "marked"
                                    && x.kind() != "unmarked"
                                    && x.kind() != "phase"
                            })
                            .any(|x| x.kind() == "resolved" && x.s("name") == "hot_lz_ground_fire");
                        if !threatened {
                            extracted += pieces.get(&label).map_or(0, |p| p.c("carried"));
                            touchdown = None;
                        }
                    }
                    if let Some(p) = pieces.get_mut(&label) {
                        if marked {
                            p.markers.insert(marker);
                        } else {
                            p.markers.remove(&marker);
                        }
                    }
                }
                "eliminated" => {
                    let label = l.s("piece");
                    if let Some(p) = pieces.get(&label).cloned() {
                        let stat = self.stats.get(&p.entity).cloned();
                        let dummy = stat.as_ref().is_some_and(|s| s.dummy);
                        let no_stand = stat.as_ref().is_some_and(|s| {
                            p.c("mediums_lost") >= s.mediums && p.c("smalls_lost") >= s.smalls
                        });
                        r.check(
                            "5.1 step 4: an element goes when its last stand collapses",
                            (!dummy && !no_stand)
                                .then(|| format!("{label} eliminated with stands left (line {n})")),
                        );
                        if !dummy {
                            if p.side == allied {
                                abandoned += p.c("lying") + p.c("stable") + p.c("carried");
                            } else {
                                comm_left += stat.map_or(0, |s| s.mediums + s.smalls);
                            }
                        }
                    }
                    if let Some(p) = pieces.get_mut(&label) {
                        p.gone = true;
                    }
                }
                "decision" => {
                    let side = l.s("side");
                    let label = l.s("label");
                    // Fog: a choice never names an enemy element not confirmed.
                    for (name, p) in &pieces {
                        if p.side != side && !p.gone && label.contains(name.as_str()) {
                            r.check(
                                "4.2: a side is never shown an unconfirmed enemy element",
                                (!p.markers.contains("confirmed_contact")).then(|| {
                                    format!("{side} was shown {name} (line {n}: {label})")
                                }),
                            );
                        }
                    }
                    if label.starts_with("choose ") {
                        if side == insurgent
                            && label == "choose 1"
                            && order.as_ref().is_some_and(|(s, _)| *s == allied)
                        {
                            // An ambush sprung (2.3): one token.
                            tokens -= 1;
                            r.check(
                                "2.3: an ambush costs one ambush token",
                                (tokens < 0)
                                    .then(|| format!("ambush with no token left (line {n})")),
                            );
                        }
                        if side == allied && label == "choose 1" {
                            // A patrol's spotting test (1 CP more), paid after its move.
                            if order.as_ref().is_some_and(|(s, lab)| {
                                *s == allied && lab.starts_with("patrol_move(")
                            }) {
                                self.charge(
                                    &pieces,
                                    &order,
                                    &mut cp,
                                    &mut cost_due,
                                    &mut emergency_expected,
                                    r,
                                    n,
                                );
                            }
                        }
                        continue;
                    }
                    self.close_order(&mut emergency_expected, &mut emergency_seen, r);
                    recon_six = false;
                    spots_in_order = 0;
                    unsaved_left = 0;
                    unsaved_target = None;
                    order = Some((side.clone(), label.clone()));
                    if phase.contains("Engagement")
                        && side == allied
                        && !label.starts_with("hold")
                        && !label.starts_with("deploy")
                    {
                        self.charge(
                            &pieces,
                            &order,
                            &mut cp,
                            &mut cost_due,
                            &mut emergency_expected,
                            r,
                            n,
                        );
                    }
                }
                "resolved" => {
                    let name = l.s("name");
                    let args = l.args();
                    let dice = l.dice();
                    let result = l.s("result");
                    let first = dice.first().copied().unwrap_or(0);
                    match name.as_str() {
                        "command_points" => {
                            let officers = arg_int(&args, 0);
                            let rto = arg_bool(&args, 1);
                            let leaders = arg_int(&args, 2);
                            let want = dice.iter().sum::<i64>() + i64::from(rto) + leaders;
                            r.check(
                                "2.2 item 4: 1D6 per officer, +1 RTO, +1 per Squad Leader",
                                (dice.len() as i64 != officers
                                    || result.parse::<i64>().ok() != Some(want)
                                    || leaders != self.leaders(&pieces))
                                .then(|| {
                                    format!("CP roll {args:?} {dice:?} = {result} (line {n})")
                                }),
                            );
                            cp = result.parse().unwrap_or(0);
                        }
                        "hit_roll" => {
                            let pool = arg_int(&args, 0);
                            let target = arg_int(&args, 1);
                            let hits = dice.iter().filter(|&&f| f >= target).count() as i64;
                            r.check(
                                "5.1 steps 1-2: the pool is rolled and hits on its target",
                                (dice.len() as i64 != pool
                                    || !(2..=7).contains(&target)
                                    || result.parse::<i64>().ok() != Some(hits)
                                    || pool > self.max_pool())
                                .then(|| format!("{args:?} {dice:?} = {result} (line {n})")),
                            );
                            last_hits = Some(hits);
                            // 5.2 item 2: a close assault's hits take no save.
                            let saved_next = lines[n + 1..]
                                .iter()
                                .find(|x| x.kind() == "resolved")
                                .is_some_and(|x| x.s("name") == "save_roll");
                            if !saved_next {
                                unsaved_left += hits;
                                unsaved_target = None;
                                last_hits = None;
                            }
                        }
                        "save_roll" => {
                            let hits = arg_int(&args, 0);
                            let save = arg_int(&args, 1);
                            let saved = dice.iter().filter(|&&f| f >= save).count() as i64;
                            r.check(
                                "5.1 step 3: one save per hit, on 6 / 5+ / 4+",
                                (Some(hits) != last_hits
                                    || dice.len() as i64 != hits
                                    || !(4..=6).contains(&save)
                                    || result.parse::<i64>().ok() != Some(saved))
                                .then(|| format!("{args:?} {dice:?} = {result} (line {n})")),
                            );
                            unsaved_left += hits - saved;
                            unsaved_target = self.target_of(&lines, n, &pieces);
                            last_hits = None;
                        }
                        "morale_test" => {
                            let quality = args
                                .first()
                                .and_then(|a| a.rsplit(' ').next())
                                .unwrap_or_default();
                            let winded = arg_bool(&args, 1);
                            let pass = first - i64::from(winded) >= morale_target(quality);
                            r.check(
                                "5.1 step 4: morale 4+ (veterans 3+, militia 5+), winded -1",
                                ((result == "pass") != pass || dice.len() != 1)
                                    .then(|| format!("{args:?} {dice:?} = {result} (line {n})")),
                            );
                        }
                        "spotting" => {
                            spots_in_order += 1;
                            if let Some((_, lab)) = &order
                                && lab.starts_with("platoon_recon_sweep(")
                            {
                                r.check(
                                    "4.2: a Platoon Recon Sweep tests at most three squads",
                                    (spots_in_order > 3).then(|| {
                                        format!(
                                            "{spots_in_order} spotting tests in {lab} (line {n})"
                                        )
                                    }),
                                );
                            }
                            let total = spotting_total(first, &args);
                            let want = if total >= 4 {
                                if first == 6 {
                                    "critical_spot"
                                } else {
                                    "spotted"
                                }
                            } else {
                                "not_spotted"
                            };
                            r.check(
                                "4.2: spotting 4+ with its modifiers; natural 6 critical",
                                (result != want)
                                    .then(|| format!("{args:?} {dice:?} = {result} (line {n})")),
                            );
                        }
                        "bleed_survival" => {
                            let medic = arg_bool(&args, 0);
                            let kia_now = first + if medic { 2 } else { 0 } <= 2;
                            r.check(
                                "6.2: bleed 1-2 KIA, +2 with a medic",
                                ((result == "kia") != kia_now)
                                    .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            if result == "kia" {
                                kia += 1;
                                // Is it one of an element's tokens (a `lying` change follows) or
                                // an abandoned one?
                                let own = lines[n + 1..]
                                    .iter()
                                    .take_while(|x| x.kind() != "resolved")
                                    .any(|x| x.kind() == "counted" && x.s("counter") == "lying");
                                if own {
                                    bleed_pending.push(true);
                                } else {
                                    abandoned -= 1;
                                }
                            }
                        }
                        "emergency_initiative_check" => {
                            emergency_seen = true;
                            r.check(
                                "1.5: emergency initiative 4+",
                                ((result == "squad_activates") != (first >= 4))
                                    .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                        }
                        "ambush_discipline_check" => r.check(
                            "2.3 item 12: discipline check 4+",
                            ((result == "keeps_head") != (first >= 4))
                                .then(|| format!("{dice:?} = {result} (line {n})")),
                        ),
                        "look_out_sir" => {
                            r.check(
                                "5.1 step 4: Look Out, Sir! fails on 1",
                                ((result == "fail") != (first == 1))
                                    .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            unsaved_left -= 1;
                        }
                        "recon_by_fire_result" => {
                            let want = match first {
                                1 => "friendly_fire_incident",
                                2 | 3 => "empty_jungle",
                                4 | 5 => "suppressive_hit",
                                _ => "direct_hit_revealed",
                            };
                            r.check(
                                "4.3: Recon by Fire 1 / 2-3 / 4-5 / 6",
                                (result != want).then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            recon_six = result == "direct_hit_revealed";
                        }
                        "hot_lz_ground_fire" => {
                            let want = match first {
                                1 => "waved_off",
                                2..=4 => "fuselage_scratches",
                                5 => "co_pilot_turbine_hit",
                                _ => "shot_down",
                            };
                            r.check(
                                "6.3 item 8: Hot LZ 1 / 2-4 / 5 / 6",
                                (result != want).then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            if let Some(t) = touchdown.take()
                                && (result == "fuselage_scratches"
                                    || result == "co_pilot_turbine_hit")
                            {
                                extracted += pieces.get(&t).map_or(0, |p| p.c("carried"));
                            }
                        }
                        _ => {}
                    }
                }
                "end" => {
                    self.close_order(&mut emergency_expected, &mut emergency_seen, r);
                    let scores: BTreeMap<String, i64> = l.v["scores"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| Some((p[0].as_str()?.to_string(), p[1].as_i64()?)))
                        .collect();
                    let lost = |side: &str| -> i64 {
                        pieces
                            .values()
                            .filter(|p| p.side == side)
                            .map(|p| p.c("mediums_lost") + p.c("smalls_lost"))
                            .sum()
                    };
                    let with_squads: i64 = pieces
                        .values()
                        .filter(|p| p.side == allied && !p.gone)
                        .map(|p| p.c("lying") + p.c("stable") + p.c("carried"))
                        .sum();
                    // 3.3.A / 3.4 items 8-10: -3 abandoned and KIA, -2 wounded left, +2
                    // extracted; 3.3.B item 8: +1 a communist token overrun; ours: +1 a stand.
                    let (left3, left2) = if self.flat_three {
                        (abandoned + with_squads, 0)
                    } else {
                        (abandoned, with_squads)
                    };
                    let want_allied = lost(&insurgent) + comm_left + 2 * extracted;
                    let want_insurgent = lost(&allied) + 3 * kia + 2 * left2 + 3 * left3;
                    let got = (
                        scores.get(&allied).copied(),
                        scores.get(&insurgent).copied(),
                    );
                    r.check(
                        "3.3 / 3.4: VP recount",
                        (got != (Some(want_allied), Some(want_insurgent))).then(|| {
                            format!("scores {got:?}, recounted ({want_allied}, {want_insurgent}): kia {kia}, extracted {extracted}, abandoned {abandoned}, with squads {with_squads}, comm {comm_left}")
                        }),
                    );
                }
                _ => {}
            }
        }
    }

    /// Surviving Squad Leader stands: squads still on the table with their small stand.
    fn leaders(&self, pieces: &BTreeMap<String, Piece>) -> i64 {
        pieces
            .values()
            .filter(|p| {
                !p.gone
                    && self.stats.get(&p.entity).is_some_and(|s| {
                        s.squad_leader && s.side == self.sides[0] && p.c("smalls_lost") < s.smalls
                    })
            })
            .count() as i64
    }

    /// The largest pool any element can roll (5.1 step 1).
    fn max_pool(&self) -> i64 {
        self.stats
            .values()
            .map(|s| s.mediums * s.medium_fp + s.smalls * s.small_fp)
            .max()
            .unwrap_or(0)
    }

    /// The element a volley's unsaved hits fall on: the one whose stand counters change next.
    fn target_of(
        &self,
        lines: &[Line],
        n: usize,
        pieces: &BTreeMap<String, Piece>,
    ) -> Option<String> {
        lines[n + 1..]
            .iter()
            .take_while(|x| !(x.kind() == "resolved" && x.s("name") == "hit_roll"))
            .find(|x| {
                x.kind() == "counted"
                    && matches!(
                        x.s("counter").as_str(),
                        "front_ring" | "mediums_lost" | "smalls_lost"
                    )
            })
            .map(|x| x.s("piece"))
            .filter(|p| pieces.contains_key(p))
    }

    /// The CP an allied order costs now (2.3, 1.5), taken from the CP of the turn.
    #[allow(clippy::too_many_arguments)]
    fn charge(
        &self,
        pieces: &BTreeMap<String, Piece>,
        order: &Option<(String, String)>,
        cp: &mut i64,
        cost_due: &mut i64,
        emergency_expected: &mut bool,
        r: &mut Report,
        n: usize,
    ) {
        let Some((_, label)) = order else { return };
        // The acting element: the first argument of the choice.
        let Some(actor) = label
            .split_once('(')
            .and_then(|(_, rest)| rest.split([',', ')']).next())
            .map(str::trim)
        else {
            return;
        };
        let Some(p) = pieces.get(actor) else { return };
        let hq = pieces
            .values()
            .find(|h| !h.gone && self.stats.get(&h.entity).is_some_and(|s| s.officer));
        let is_hq = self.stats.get(&p.entity).is_some_and(|s| s.officer);
        let radius = if self.in_dense(p.at) {
            RADIUS_DENSE
        } else {
            RADIUS_OPEN
        };
        let in_command = is_hq || hq.is_some_and(|h| dist(h.at, p.at) <= radius);
        let sweep = label.starts_with("platoon_recon_sweep(");
        if sweep {
            r.check(
                "4.2: only the Platoon Commander orders a Platoon Recon Sweep",
                (!is_hq).then(|| format!("{label} (line {n})")),
            );
        }
        let cost = if sweep {
            COST_SWEEP
        } else if in_command {
            COST_IN
        } else if *cp >= COST_OUT {
            COST_OUT
        } else {
            *emergency_expected = true;
            COST_IN
        };
        *cp -= cost;
        *cost_due = cost;
        r.check(
            "2.3: CP spent never exceeds CP available",
            (*cp < 0).then(|| {
                format!(
                    "{label} costs {cost} with {} CP left (line {n})",
                    *cp + cost
                )
            }),
        );
    }

    fn close_order(&self, expected: &mut bool, seen: &mut bool, r: &mut Report) {
        if *expected || *seen {
            r.check(
                "1.5: the emergency initiative check is rolled exactly when 1 CP pays out of command",
                (*expected != *seen).then(|| format!("expected {expected}, rolled {seen}")),
            );
        }
        *expected = false;
        *seen = false;
    }
}
