//! Referee for Nam Bread Man Platoon Patrol, written from the book (shared/rulebooks/
//! nam_bread_man.txt) apart from the engine. It reads the log as text, the figures' stat
//! lines and the stand-in board from the compiled rules as JSON data, and the scenario's
//! assumptions; the book's numbers are written here, each with its section.
//!
//! Checked per game: every score rolled at the start of a sequence is a face of its die; no
//! figure takes more actions in a sequence than its actions D3; moves are no longer than the
//! book allows; every fire hits exactly when the firer's kept D8 reaches what the target's
//! cover and posture need; every life lost or given back is explained by a failed save, a
//! melee margin, a sprung booby trap, a bombardment or a medic, and a figure is taken off
//! exactly when its lives run out; no score of one side is in an event the other side is told;
//! booby traps and tunnel exits are named to nobody but the Vietnamese until sprung or used,
//! and a trap springs exactly when a U.S. figure ends a move in its zone.

use std::collections::BTreeMap;

use serde_json::Value;

use super::log::{At, Ev, Report, constant, prop};

/// A figure's stat line, as the rules print it.
#[derive(Clone)]
struct Fig {
    side: String,
    range: i64,
    fire: String,
}

/// Where a figure stands and what it carries.
#[derive(Default, Clone)]
struct Piece {
    at: Option<(i64, i64)>,
    markers: Vec<String>,
}

/// The kept scores of one figure this sequence (from the `counted` events).
#[derive(Default, Clone)]
struct Scores {
    actions: i64,
    lives: i64,
    save: i64,
    to_hit: i64,
    melee: i64,
}

pub struct NamBreadMan {
    figures: BTreeMap<String, Fig>,
    /// Cover features of the board: rectangle and cover class.
    features: Vec<((i64, i64, i64, i64), String)>,
    sector: i64,
    zone: i64,
    columns: i64,
}

// The book's numbers (tenths of a millimetre for lengths).
/// D3 MOVEMENT: "Each D3 movement action for a Foot/art figure is 6cm walk crawl 3cm".
const WALK: i64 = 600;
const CRAWL: i64 = 300;
/// Before turns begin: "Movement in tunnels is always at 3cm".
const TUNNEL: i64 = 300;
/// Rounding of a move to whole tenths of a millimetre.
const SLACK: i64 = 2;

/// D8 (1 Action): 4 in the open, 5 in soft cover, 6 in hard cover; one more against a
/// crawling or prone figure; one less (3 in the open) with an automatic weapon.
fn to_hit_needed(cover: &str, crawling: bool, automatic: bool) -> i64 {
    let base = match cover {
        "soft" => 5,
        "hard" => 6,
        _ => 4,
    };
    base + i64::from(crawling) - i64::from(automatic)
}

/// D6: 4, 5 or 6 saves from rifle fire; 5 (or more) from machine guns and automatic weapons;
/// 6 from grenades and artillery.
fn save_needed(fire: &str) -> i64 {
    match fire {
        "automatic" => 5,
        "grenade_artillery" => 6,
        _ => 4,
    }
}

/// Before turns begin: a figure on a booby trap loses a life if its D6 is less than 5.
const TRAP_SAVE: i64 = 5;

fn dist(a: (i64, i64), b: (i64, i64)) -> i64 {
    let (dx, dy) = ((a.0 - b.0) as f64, (a.1 - b.1) as f64);
    (dx * dx + dy * dy).sqrt().round() as i64
}

fn point(a: &At) -> Option<(i64, i64)> {
    match a {
        At::Point(x, y) => Some((*x, *y)),
        At::Hex(_) => None,
    }
}

/// What the rules call an action a figure takes.
const ACTIONS: &[&str] = &[
    "walk",
    "walk_away",
    "take_cover",
    "crawl",
    "fire",
    "melee_attack",
    "radio_call",
    "bombard",
    "medic_aid",
    "walk_to_exit",
    "enter_tunnel",
    "tunnel_move_to",
    "leave_tunnel",
];

impl NamBreadMan {
    pub fn new(ir: &Value, scenario: &str, assumed: &BTreeMap<String, String>) -> Self {
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let len = |v: &Value| constant(ir, v, assumed).and_then(|c| c.as_i64());
        let first = |key: &str| prop(board, key).first().and_then(|(_, v)| len(v));
        let sector = first("sector").expect("a sector size");
        let zones = first("zones").expect("zones per side");
        let width = first("width").expect("a width");
        let sides: Vec<String> = ir["sides"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect();
        let entities = ir["entities"].as_array().unwrap();
        let field = |e: &Value, name: &str| -> Option<Value> {
            let f = e["fields"].as_array()?.iter().find(|f| f[0] == name)?;
            constant(ir, &f[1], assumed)
        };
        let mut figures = BTreeMap::new();
        for e in entities {
            let Some(range) = field(e, "range").and_then(|v| v.as_i64()) else {
                continue;
            };
            let Some(side) = e["side"].as_u64() else {
                continue;
            };
            // Weapons have a range too; figures also a fire class.
            let Some(fire) = field(e, "fire").and_then(|v| v.as_str().map(String::from)) else {
                continue;
            };
            figures.insert(
                e["name"].as_str().unwrap().to_string(),
                Fig {
                    side: sides[side as usize].clone(),
                    range,
                    fire,
                },
            );
        }
        let mut features = Vec::new();
        for f in board["blocks"].as_array().unwrap() {
            if f["keyword"] != "feature" {
                continue;
            }
            let terrain = prop(f, "terrain")[0].1["Const"]["Entity"].as_u64().unwrap();
            let cover = field(&entities[terrain as usize], "cover")
                .and_then(|v| v.as_str().map(String::from))
                .expect("the terrain's cover class");
            let r: Vec<i64> = prop(f, "rect")
                .iter()
                .map(|(_, v)| len(v).unwrap())
                .collect();
            features.push(((r[0], r[1], r[2], r[3]), cover));
        }
        NamBreadMan {
            figures,
            features,
            sector,
            zone: sector / zones,
            columns: width / sector,
        }
    }

    /// The cover class at a point: the feature it lies in, else open ground.
    fn cover(&self, p: (i64, i64)) -> &str {
        self.features
            .iter()
            .find(|((x0, y0, x1, y1), _)| (*x0..=*x1).contains(&p.0) && (*y0..=*y1).contains(&p.1))
            .map_or("open", |(_, c)| c.as_str())
    }

    /// BATTLEFIELD: sectors numbered from the top left, row by row; zones likewise inside.
    fn sector_zone(&self, p: (i64, i64)) -> (i64, i64) {
        let col = (p.0 / self.sector).min(self.columns - 1);
        let row = p.1 / self.sector;
        let per = self.sector / self.zone;
        let zx = ((p.0 - col * self.sector) / self.zone).min(per - 1);
        let zy = ((p.1 - row * self.sector) / self.zone).min(per - 1);
        (row * self.columns + col + 1, zy * per + zx + 1)
    }

    fn entity<'a>(&self, label: &'a str) -> &'a str {
        label.split(" #").next().unwrap_or(label)
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        // Games are refereed in seed order from 1: the seed that replays one (`run --seed`).
        let seed = r.games;
        let events = super::log::read(text);
        let events = &events[..];
        self.hidden_from_the_us(text, r);
        // Strikes resolved in the action under way: per square, the lives they take.
        let mut pending_strike: Vec<BTreeMap<String, Vec<i64>>> = Vec::new();
        let mut pieces: BTreeMap<String, Piece> = BTreeMap::new();
        let mut scores: BTreeMap<String, Scores> = BTreeMap::new();
        let mut used: BTreeMap<String, i64> = BTreeMap::new();
        let mut gone: Vec<String> = Vec::new();
        // Lives changes the log shows in the action under way, and those its causes explain.
        let mut seen: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        let mut explained: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        // Bombardments: the sector each radio figure called this sequence.
        let mut strike: BTreeMap<String, i64> = BTreeMap::new();
        // Secret markers and when each was shown (sprung or used).
        let mut shown: Vec<String> = Vec::new();
        let mut rolling = false;
        let mut last_mover: Option<String> = None;
        for e in events {
            match e {
                Ev::Turn(_) => {
                    used.clear();
                    strike.clear();
                    rolling = true;
                }
                Ev::Decision => {
                    rolling = false;
                }
                Ev::Deployed { piece, at } => {
                    pieces.entry(piece.clone()).or_default().at = point(at);
                }
                Ev::Marked {
                    marker,
                    piece: Some(p),
                    ..
                } => {
                    let m = &mut pieces.entry(p.clone()).or_default().markers;
                    if !m.contains(marker) {
                        m.push(marker.clone());
                    }
                    if marker == "sprung" {
                        // A trap springs when a U.S. figure has just ended a move in its zone.
                        let trap_at = pieces.get(p).and_then(|t| t.at);
                        let mover = last_mover.as_ref().and_then(|m| {
                            let f = self.figures.get(self.entity(m))?;
                            Some((m.clone(), f.side.clone(), pieces.get(m)?.at?))
                        });
                        let ok = match (trap_at, mover) {
                            (Some(t), Some((m, side, at))) => {
                                side == "us" && self.sector_zone(t) == self.sector_zone(at) && {
                                    // The kept D6 decides the life (Before turns begin).
                                    if scores.get(&m).map_or(0, |s| s.save) < TRAP_SAVE {
                                        explained.entry(m).or_default().push(-1);
                                    }
                                    true
                                }
                            }
                            _ => false,
                        };
                        r.check(
                            "a booby trap springs under a U.S. figure ending a move in its zone (Before turns begin)",
                            (!ok).then(|| format!("seed {seed}: {p} sprung with no U.S. figure in its zone")),
                        );
                        shown.push(p.clone());
                    }
                }
                Ev::Unmarked {
                    marker,
                    piece: Some(p),
                    ..
                } => {
                    if let Some(q) = pieces.get_mut(p) {
                        q.markers.retain(|m| m != marker);
                    }
                }
                Ev::Moved {
                    piece,
                    from,
                    to,
                    why,
                    ..
                } => {
                    let from = from.as_ref().and_then(point);
                    let to = point(to);
                    if let (Some(a), Some(b)) = (from, to) {
                        let limit = match why.as_str() {
                            "crawl" => Some(CRAWL),
                            "tunnel_move_to" => Some(TUNNEL),
                            "walk" | "walk_away" | "take_cover" | "walk_to_exit" => Some(WALK),
                            _ if self.figures.contains_key(self.entity(piece)) => {
                                // MORALE: the one move back, made at the roll, is an action.
                                *used.entry(piece.clone()).or_default() += 1;
                                Some(WALK)
                            }
                            _ => None,
                        };
                        if let Some(l) = limit {
                            r.check(
                                "a move is no longer than its action allows (D3 MOVEMENT, Before turns begin)",
                                (dist(a, b) > l + SLACK)
                                    .then(|| format!("{piece} moved {} by {why}", dist(a, b))),
                            );
                        }
                    }
                    pieces.entry(piece.clone()).or_default().at = to;
                    last_mover = Some(piece.clone());
                }
                Ev::Counted {
                    piece,
                    counter,
                    value,
                    ..
                } => {
                    let s = scores.entry(piece.clone()).or_default();
                    if rolling {
                        let faces = match counter.as_str() {
                            "actions" | "lives" | "lives_rolled" => 3,
                            "save" => 6,
                            "to_hit" => 8,
                            "melee" => 10,
                            "observation" => 12,
                            _ => 1,
                        };
                        if counter != "down" {
                            r.check(
                                "each score rolled for the sequence is a face of its die (SEQUENCE)",
                                (!(1..=faces).contains(value))
                                    .then(|| format!("{piece} rolled {counter} {value}")),
                            );
                        }
                    }
                    match counter.as_str() {
                        "actions" => s.actions = *value,
                        "save" => s.save = *value,
                        "to_hit" => s.to_hit = *value,
                        "melee" => s.melee = *value,
                        "lives" if rolling => s.lives = *value,
                        "lives" => {
                            seen.entry(piece.clone())
                                .or_default()
                                .push(*value - s.lives);
                            s.lives = *value;
                        }
                        _ => {}
                    }
                }
                Ev::Resolved {
                    name,
                    args,
                    dice,
                    result,
                } => {
                    if name == "fire_at" || name == "melee_contest" {
                        r.check(
                            "a fire or melee tells no score, only who and the outcome (Example: the defending player does not tell his dice scores)",
                            (!dice.is_empty()
                                || args.iter().any(|a| !self.figures.contains_key(self.entity(a))))
                            .then(|| format!("{name}({}) told {dice:?}", args.join(", "))),
                        );
                    }
                    match name.as_str() {
                        "fire_at" => {
                            self.check_fire(args, result, &pieces, &scores, &mut explained, r)
                        }
                        "melee_contest" => {
                            let (a, d) = (&args[0], &args[1]);
                            let (Some(sa), Some(sd)) = (scores.get(a), scores.get(d)) else {
                                continue;
                            };
                            // MELEE (1 Action): +2 to the attacker against a crawling or prone
                            // defender, +1 to a defender behind hard cover.
                            let pd = &pieces[d];
                            let margin = sa.melee
                                + 2 * i64::from(pd.markers.iter().any(|m| m == "crawling"))
                                - sd.melee
                                - i64::from(pd.at.is_some_and(|p| self.cover(p) == "hard"));
                            let want = if margin > 0 {
                                "defender_loses_lives"
                            } else if margin == 0 {
                                "even"
                            } else {
                                "opponent_higher"
                            };
                            r.check(
                                "melee: the higher D10 with its modifiers wins, the margin comes off the loser's lives (MELEE (1 Action))",
                                (result != want).then(|| format!("{a} v {d}: margin {margin}, told {result}")),
                            );
                            if margin > 0 {
                                explained.entry(d.clone()).or_default().push(-margin);
                            }
                        }
                        "bombardment_square" => {
                            let face = dice.first().map_or(0, |d| d.1);
                            let want = if face == 10 {
                                "direct_hit".to_string()
                            } else {
                                format!("square_{face}")
                            };
                            r.check(
                                "the D10 picks the square, 0 (ten) a direct hit (NOW this is the exception to the rule)",
                                (*result != want).then(|| format!("d10 {face} told {result}")),
                            );
                            // Radio: the scenario's one radio figure called the sector.
                            let sector = strike.values().copied().next().unwrap_or(0);
                            r.check(
                                "a bombardment follows a radio call this sequence (Radio)",
                                (sector == 0).then(|| "a bombardment with no call".to_string()),
                            );
                            let squares: Vec<i64> = match result.strip_prefix("square_") {
                                Some(n) => vec![n.parse().unwrap_or(0)],
                                None => (1..=9).collect(),
                            };
                            pending_strike = squares
                                .into_iter()
                                .map(|sq| self.strike_losses(sector, sq, &pieces, &scores))
                                .collect();
                        }
                        _ => {}
                    }
                }
                Ev::Acted { side, action, args } => {
                    let actor = args.first().cloned().unwrap_or_default();
                    if ACTIONS.contains(&action.as_str()) {
                        let cost = if action == "medic_aid" { 3 } else { 1 };
                        let n = used.entry(actor.clone()).or_default();
                        *n += cost;
                        let d3 = scores.get(&actor).map_or(0, |s| s.actions);
                        r.check(
                            "no figure takes more actions in a sequence than its actions D3 (D3)",
                            (*n > d3).then(|| format!("{actor} took {n} actions on a D3 of {d3}")),
                        );
                    }
                    match action.as_str() {
                        "fire" => {
                            let (a, t) = (&args[0], &args[1]);
                            let far = match (
                                pieces.get(a).and_then(|p| p.at),
                                pieces.get(t).and_then(|p| p.at),
                            ) {
                                (Some(x), Some(y)) => dist(x, y),
                                _ => i64::MAX,
                            };
                            let range = self.figures[self.entity(a)].range;
                            r.check(
                                "fire reaches no further than the weapon's printed range (Ranges)",
                                (far > range + SLACK)
                                    .then(|| format!("{a} fired {far} at {t}, range {range}")),
                            );
                        }
                        "radio_call" => {
                            // Radio: 10 or more on the radio figure's D12, or the observer's.
                            strike.insert(actor.clone(), args[1].parse().unwrap_or(0));
                        }
                        "bombard" => {
                            // On a direct hit the caller picks the square: the one whose
                            // losses the log shows, if any does.
                            let pick = pending_strike
                                .iter()
                                .find(|m| {
                                    m.iter().all(|(f, v)| seen.get(f) == Some(v))
                                        && seen.keys().all(|f| m.contains_key(f))
                                })
                                .or(pending_strike.first())
                                .cloned()
                                .unwrap_or_default();
                            for (f, v) in pick {
                                explained.entry(f).or_default().extend(v);
                            }
                            pending_strike.clear();
                        }
                        "medic_aid" => {
                            explained.entry(args[1].clone()).or_default().push(1);
                        }
                        "leave_tunnel" => shown.push(args[1].clone()),
                        _ => {}
                    }
                    // Every change of lives in the action is explained, and nothing more.
                    let mut names: Vec<&String> = seen.keys().chain(explained.keys()).collect();
                    names.sort();
                    names.dedup();
                    for f in names {
                        let mut a = seen.get(f).cloned().unwrap_or_default();
                        let mut b = explained.get(f).cloned().unwrap_or_default();
                        a.sort();
                        b.sort();
                        r.check(
                            "every life lost or given back is explained by the rules (D6, MELEE, Before turns begin, NOW this is the exception to the rule, Medics)",
                            (a != b).then(|| format!("seed {seed}: {f} in {action} by {side}: log {a:?}, rules {b:?}")),
                        );
                    }
                    seen.clear();
                    explained.clear();
                }
                Ev::Eliminated { piece } => {
                    if self.figures.contains_key(self.entity(piece)) {
                        let lives = scores.get(piece).map_or(1, |s| s.lives);
                        r.check(
                            "a figure is taken off exactly when its lives run out (D3 (different colour dice))",
                            (lives > 0).then(|| format!("{piece} taken off with {lives} lives")),
                        );
                        gone.push(piece.clone());
                    }
                    if let Some(p) = pieces.get_mut(piece) {
                        p.at = None;
                    }
                }
                _ => {}
            }
            // A figure left with no lives must be off by the end of the action.
            if let Ev::Acted { .. } = e {
                for (f, s) in &scores {
                    if s.lives <= 0
                        && !gone.contains(f)
                        && self.figures.contains_key(self.entity(f))
                    {
                        r.check(
                            "a figure is taken off exactly when its lives run out (D3 (different colour dice))",
                            Some(format!("{f} still on with {} lives", s.lives)),
                        );
                    }
                }
            }
        }
    }

    fn check_fire(
        &self,
        args: &[String],
        result: &str,
        pieces: &BTreeMap<String, Piece>,
        scores: &BTreeMap<String, Scores>,
        explained: &mut BTreeMap<String, Vec<i64>>,
        r: &mut Report,
    ) {
        let (a, t) = (&args[0], &args[1]);
        let fig = &self.figures[self.entity(a)];
        let target = &pieces[t];
        let cover = target.at.map_or("open", |p| self.cover(p));
        let need = to_hit_needed(
            cover,
            target.markers.iter().any(|m| m == "crawling"),
            fig.fire == "automatic",
        );
        let d8 = scores.get(a).map_or(0, |s| s.to_hit);
        let want = if d8 >= need { "hit" } else { "miss" };
        r.check(
            "fire hits when the firer's kept D8 reaches the score for cover and posture (D8 (1 Action))",
            (result != want).then(|| format!("{a} D8 {d8} at {t} in {cover}: need {need}, told {result}")),
        );
        if result == "hit" && scores.get(t).map_or(0, |s| s.save) < save_needed(&fig.fire) {
            explained.entry(t.clone()).or_default().push(-1);
        }
    }

    /// NOW this is the exception to the rule: every figure in the struck square of the called
    /// sector (figures in a tunnel aside) loses a life unless its D6 is 6.
    fn strike_losses(
        &self,
        sector: i64,
        square: i64,
        pieces: &BTreeMap<String, Piece>,
        scores: &BTreeMap<String, Scores>,
    ) -> BTreeMap<String, Vec<i64>> {
        let mut m: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for (f, p) in pieces {
            if !self.figures.contains_key(self.entity(f))
                || p.markers.iter().any(|m| m == "in_tunnel")
            {
                continue;
            }
            let Some(at) = p.at else { continue };
            if self.sector_zone(at) == (sector, square)
                && scores.get(f).map_or(0, |s| s.save) < save_needed("grenade_artillery")
            {
                m.entry(f.clone()).or_default().push(-1);
            }
        }
        m
    }

    /// Booby traps and tunnel exits are named in no event the U.S. side takes part in (its
    /// decisions and actions) until they are shown: a trap when it springs, an exit when a
    /// figure comes up through it. And every U.S. move that ends in an unsprung trap's zone
    /// springs it.
    fn hidden_from_the_us(&self, text: &str, r: &mut Report) {
        let mut shown: Vec<String> = Vec::new();
        // Vietnamese figures down a tunnel now (Before turns begin: they are out of sight).
        let mut below: Vec<String> = Vec::new();
        // The sectors of each tunnel's exits.
        let mut exits: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        let mut traps: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut at: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for line in text.lines().skip(1) {
            let v: Value = serde_json::from_str(line).expect("a log line is JSON");
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            let xy = |p: &Value| Some((p["x"].as_i64()?, p["y"].as_i64()?));
            match s("event").as_str() {
                "deployed" if s("piece").starts_with("booby_trap") => {
                    traps.insert(s("piece"), xy(&v["at"]).unwrap());
                }
                "deployed" if s("piece").starts_with("tunnel_") => {
                    let tunnel = s("piece")
                        .split(" #")
                        .next()
                        .unwrap_or_default()
                        .to_string();
                    exits
                        .entry(tunnel)
                        .or_default()
                        .push(self.sector_zone(xy(&v["at"]).unwrap()).0);
                }
                "moved" => {
                    if let Some(p) = xy(&v["to"]) {
                        at.insert(s("piece"), p);
                    }
                }
                "marked" if s("marker") == "sprung" => {
                    shown.push(s("piece"));
                    traps.remove(&s("piece"));
                }
                "marked" if s("marker") == "in_tunnel" => below.push(s("piece")),
                "unmarked" if s("marker") == "in_tunnel" => below.retain(|f| *f != s("piece")),
                "eliminated" => below.retain(|f| *f != s("piece")),
                "acted" => {
                    let args: Vec<String> = v["args"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| a.as_str().unwrap_or_default().to_string())
                        .collect();
                    if s("action") == "leave_tunnel" {
                        shown.push(args[1].clone());
                    }
                    let mover = &args[0];
                    if s("side") == "us"
                        && ["walk", "walk_away", "take_cover", "crawl"]
                            .contains(&s("action").as_str())
                        && let Some(p) = at.get(mover)
                    {
                        let under = traps
                            .iter()
                            .find(|(_, t)| self.sector_zone(**t) == self.sector_zone(*p));
                        r.check(
                            "a U.S. figure ending a move in a trap's zone springs it (Before turns begin)",
                            under.map(|(t, _)| format!("{mover} ended a move on {t}, unsprung")),
                        );
                    }
                }
                _ => {}
            }
            let told_us = s("side") == "us" && matches!(s("event").as_str(), "decision" | "acted");
            if told_us {
                let words = format!("{} {}", s("label"), v["args"]);
                for w in secret_labels(&words) {
                    r.check(
                        "booby traps and tunnels stay hidden from the U.S. until triggered (Before turns begin)",
                        (!shown.contains(&w)).then(|| format!("the U.S. was told of {w}")),
                    );
                }
                r.check(
                    "booby traps and tunnels stay hidden from the U.S. until triggered (Before turns begin)",
                    None,
                );
                for f in &below {
                    r.check(
                        "a figure down a tunnel is named to the U.S. in nothing until it comes up (Before turns begin)",
                        names(&words, f).then(|| format!("the U.S. was told of {f} in a tunnel: {words}")),
                    );
                }
            }
        }
        self.tunnels_in_four_sectors(&exits, r);
    }

    /// Before turns begin: each tunnel runs in 4 adjoining sectors, so a chain of 4 sectors,
    /// each sharing a side with the next, joins its two exits: at most 3 steps across and down.
    fn tunnels_in_four_sectors(&self, exits: &BTreeMap<String, Vec<i64>>, r: &mut Report) {
        for (tunnel, sectors) in exits {
            let steps = |a: i64, b: i64| {
                ((a - 1) % self.columns - (b - 1) % self.columns).abs()
                    + ((a - 1) / self.columns - (b - 1) / self.columns).abs()
            };
            let far = sectors
                .iter()
                .flat_map(|a| sectors.iter().map(move |b| (*a, *b)))
                .find(|(a, b)| steps(*a, *b) > 3);
            r.check(
                "each tunnel's exits lie in 4 adjoining sectors (Before turns begin)",
                far.map(|(a, b)| format!("{tunnel}: exits in sectors {a} and {b}")),
            );
        }
    }
}

/// `label` appears in `text` as a whole name (`vc_rifleman_1`, not the start of
/// `vc_rifleman_10`).
pub fn names(text: &str, label: &str) -> bool {
    text.match_indices(label).any(|(at, _)| {
        !text[at + label.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The booby trap and tunnel exit labels (`booby_trap #3`, `tunnel_1 #2`) a text names.
pub fn secret_labels(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stem in ["booby_trap", "tunnel_1", "tunnel_2"] {
        for (at, _) in text.match_indices(stem) {
            let rest = &text[at + stem.len()..];
            let n: String = rest
                .strip_prefix(" #")
                .map(|r| r.chars().take_while(char::is_ascii_digit).collect())
                .unwrap_or_default();
            out.push(if n.is_empty() {
                stem.to_string()
            } else {
                format!("{stem} #{n}")
            });
        }
    }
    out
}
