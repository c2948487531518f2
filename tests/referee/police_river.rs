//! Police Action's referee, second part: the rules the night riverine stand-in brings in
//! (Wounded, Riverine Craft, helicopters under Movement and AA Fire, night Spotting, booby
//! traps under Searching, on-table mortars under Artillery and Air Support), read from the
//! log alone. The book's numbers are written here from the book; the values it leaves blank
//! come from the scenario's assumptions file. Nothing here runs engine code.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{self, Report, length};

/// "Riverine Craft": the hit location by d6 and craft, as printed.
fn riverine_location(craft: &str, face: i64) -> Option<&'static str> {
    let col = match craft {
        "monitor" => 0,
        "pbr" => 1,
        "landing_craft" => 2,
        "acv" => 3,
        "gun_raft" => 4,
        _ => return None,
    };
    const T: [[&str; 5]; 6] = [
        [
            "forward_turret",
            "forward_turret",
            "troop_compartment",
            "troop_compartment",
            "gun",
        ],
        [
            "midships_pit",
            "forward_turret",
            "troop_compartment",
            "troop_compartment",
            "gun",
        ],
        ["mg_turret", "bridge_guns", "mg_turret", "mg_turret", "gun"],
        [
            "mg_turret",
            "aft_pintle_mount",
            "mg_turret",
            "mg_turret",
            "hull_hit",
        ],
        ["hull_hit", "hull_hit", "hull_hit", "hull_hit", "hull_hit"],
        ["hull_hit", "hull_hit", "hull_hit", "hull_hit", "hull_hit"],
    ];
    T.get((face - 1) as usize).map(|r| r[col])
}

/// "All monitor and landing craft locations, and PBR bridges have Light armour."
fn armoured(craft: &str, location: &str) -> bool {
    matches!(craft, "monitor" | "landing_craft") || (craft == "pbr" && location == "bridge_guns")
}

/// "Monitors have 8 hull boxes, landing craft 6, PBR 3, ACV 2, Gun rafts 2."
fn hull_boxes(craft: &str) -> i64 {
    match craft {
        "monitor" => 8,
        "landing_craft" => 6,
        "pbr" => 3,
        _ => 2,
    }
}

/// "Spotting": Line of Sight at night, in tenths of a millimetre.
const MOONLIGHT_LOS: f64 = 5000.0;
const OVERCAST_LOS: f64 = 2500.0;

/// What the referee needs of the scenario and its assumptions.
pub struct River {
    /// The night's Line of Sight, when the scenario is played at night.
    night_los: Option<f64>,
    /// On-table fire answered "next turn" rather than "immediately".
    next_turn: bool,
    /// Entity name -> its craft type, for the pieces that are craft.
    craft: BTreeMap<String, String>,
    smu: BTreeSet<String>,
    tactical: BTreeMap<String, i64>,
    capacity: BTreeMap<String, i64>,
    deviation_faces: Vec<i64>,
    distracted: i64,
}

/// A piece's entity (`us_pbr #2` → `us_pbr`): labels here carry no side.
fn entity_of(piece: &str) -> &str {
    log::entity_of(piece, &[])
}

impl River {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let opts: Vec<String> = ir["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["name"] == scenario)
            .flat_map(|s| s["options"].as_array().cloned().unwrap_or_default())
            .filter_map(|o| o["Fixed"].as_str().map(str::to_string))
            .collect();
        let night_los = if opts.iter().any(|o| o == "night_overcast") {
            Some(OVERCAST_LOS)
        } else if opts.iter().any(|o| o == "night_moonlight") {
            Some(MOONLIGHT_LOS)
        } else {
            None
        };
        let mut craft = BTreeMap::new();
        let mut smu = BTreeSet::new();
        let mut capacity = BTreeMap::new();
        for e in ir["entities"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap_or_default().to_string();
            let Some(fields) = e["fields"].as_array() else {
                continue;
            };
            let field = |k: &str| {
                fields
                    .iter()
                    .find(|f| f[0].as_str() == Some(k))
                    .and_then(|f| super::log::constant(ir, &f[1], assumed))
            };
            if field("craft") == Some(Value::Bool(true)) {
                let t = field("craft_type")
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "pbr".into());
                craft.insert(name.clone(), t);
            }
            if field("smu") == Some(Value::Bool(true)) {
                smu.insert(name.clone());
            }
            if let Some(c) = field("capacity").and_then(|v| v.as_i64()) {
                capacity.insert(name.clone(), c);
            }
        }
        let tactical = assumed
            .iter()
            .filter_map(|(k, v)| Some((k.strip_suffix(".tactical_move")?.to_string(), length(v)?)))
            .collect();
        let deviation_faces = (1..=6)
            .filter_map(|k| {
                assumed
                    .get(&format!("book_blanks.deviation_face_{k}"))?
                    .parse()
                    .ok()
            })
            .collect();
        let distracted = assumed
            .get("deviation_modifiers.strike_aircraft_distracted_by_aa_fire")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        River {
            night_los,
            next_turn: opts.iter().any(|o| o == "on_table_fire_next_turn"),
            craft,
            smu,
            tactical,
            capacity,
            deviation_faces,
            distracted,
        }
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        let events: Vec<Value> = text
            .lines()
            .skip(1)
            .map(|l| serde_json::from_str(l).expect("a log line is JSON"))
            .collect();
        let s = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
        let strs = |v: &Value, k: &str| -> Vec<String> {
            v[k].as_array()
                .map(|a| {
                    a.iter()
                        .map(|x| x.as_str().unwrap_or_default().to_string())
                        .collect()
                })
                .unwrap_or_default()
        };
        let point = |v: &Value| Some((v["x"].as_i64()?, v["y"].as_i64()?));
        let mut pos: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        // Each side's cards so far (its own turns), and the card being played.
        let mut turns: BTreeMap<String, i64> = BTreeMap::new();
        let mut card_side = String::new();
        let mut fired: BTreeMap<String, i64> = BTreeMap::new();
        let mut moved: BTreeMap<String, i64> = BTreeMap::new();
        let mut wounded: BTreeSet<String> = BTreeSet::new();
        let mut carrying: BTreeMap<String, i64> = BTreeMap::new();
        let mut landed: BTreeMap<String, (i64, i64)> = BTreeMap::new(); // helo -> (card, got out)
        let mut set_up: BTreeMap<String, i64> = BTreeMap::new();
        let mut busy: BTreeMap<String, i64> = BTreeMap::new();
        let mut boxes: BTreeMap<String, i64> = BTreeMap::new();
        let mut flooding: BTreeSet<String> = BTreeSet::new();
        let mut boxes_known = true;
        // What the next resolutions must be.
        let mut expect_wounded = false;
        let mut expect_mark: Option<&'static str> = None;
        let mut last_fire: Option<(String, String)> = None;
        let mut last_location: Option<(String, String)> = None; // craft type, location
        let mut penetrated = false;
        let mut last_search: Option<String> = None;
        let mut expect_fall: bool = false;
        // A mortar call answered next turn: the VC turn it was made in.
        let mut pending: Option<i64> = None;
        let mut sinking: Option<String> = None;
        let now = |turns: &BTreeMap<String, i64>, side: &str| turns.get(side).copied().unwrap_or(0);
        let side_of = |p: &str| {
            if p.starts_with("us_") {
                "us"
            } else {
                "vietnamese"
            }
        };
        for v in &events {
            let ev = s(v, "event");
            if !matches!(
                ev.as_str(),
                "resolved" | "marked" | "eliminated" | "counted"
            ) && expect_wounded
            {
                r.check(
                    "Wounded: a KO'd unit rolls for a wounded man",
                    Some(format!("no roll before {ev}")),
                );
                expect_wounded = false;
            }
            if ev != "resolved" && expect_fall && !matches!(ev.as_str(), "marked" | "counted") {
                r.check(
                    "Artillery and Air Support: an on-table mission answered immediately falls at once",
                    Some(format!("no fall of shot before {ev}")),
                );
                expect_fall = false;
            }
            if matches!(ev.as_str(), "decision" | "card" | "turn" | "end")
                && let Some(b) = sinking.take()
            {
                r.check(
                    "Riverine Craft: a craft is lost with its last hull box",
                    Some(format!("{b} lost its hull boxes and stayed afloat")),
                );
            }
            match ev.as_str() {
                "deployed" | "entered" => {
                    if let Some(p) = point(&v["at"]) {
                        pos.insert(s(v, "piece"), p);
                    }
                    if ev == "entered" {
                        let piece = s(v, "piece");
                        let helo = landed.iter().find(|(_, (c, _))| *c == now(&turns, "us"));
                        let near = helo.and_then(|(h, _)| pos.get(h)).zip(point(&v["at"])).map(
                            |(a, b)| (((a.0 - b.0).pow(2) + (a.1 - b.1).pow(2)) as f64).sqrt(),
                        );
                        r.check(
                            "Movement: troops land beside their helicopter",
                            (near.is_none_or(|d| d > 300.5)).then(|| {
                                format!(
                                    "{piece} entered {near:?} from a helicopter landed this turn"
                                )
                            }),
                        );
                    }
                }
                "moved" => {
                    let piece = s(v, "piece");
                    if let (Some(a), Some(b)) = (point(&v["from"]), point(&v["to"])) {
                        let d = (((a.0 - b.0).pow(2) + (a.1 - b.1).pow(2)) as f64).sqrt();
                        let why = s(v, "why");
                        if carrying.get(&piece).copied().unwrap_or(0) > 0
                            && matches!(why.as_str(), "advance" | "withdraw" | "assault" | "march")
                            && let Some(t) = self.tactical.get(entity_of(&piece))
                        {
                            let limit = (*t / 2) * if why == "march" { 2 } else { 1 };
                            r.check(
                                "Wounded: a unit carrying wounded moves at half speed",
                                (d > limit as f64 + 1.0).then(|| {
                                    format!(
                                        "{piece} carried wounded {d:.0} by {why}, limit {limit}"
                                    )
                                }),
                            );
                        }
                        pos.insert(piece, b);
                    }
                }
                "card" => {
                    card_side = s(v, "side");
                    *turns.entry(card_side.clone()).or_default() += 1;
                }
                "marked" => {
                    let marker = s(v, "marker");
                    if let Some(m) = expect_mark.take() {
                        r.check(
                            "Wounded: a wounded man is left on 5 or 6",
                            (marker != m).then(|| format!("{marker} marked, {m} expected")),
                        );
                    }
                    if marker == "wounded_man" {
                        wounded.insert(s(v, "piece"));
                    }
                }
                "eliminated" => {
                    let p = s(v, "piece");
                    if sinking.as_deref() == Some(p.as_str()) {
                        sinking = None;
                    }
                    flooding.remove(&p);
                    if expect_mark.take().is_some() {
                        r.check(
                            "Wounded: a wounded man is left on 5 or 6",
                            Some(format!("{p} eliminated after a wounded man was left")),
                        );
                    }
                    pos.remove(&p);
                }
                "acted" => {
                    let side = s(v, "side");
                    let action = s(v, "action");
                    let args = strs(v, "args");
                    let t = now(&turns, &side);
                    let a0 = args.first().cloned().unwrap_or_default();
                    let a1 = args.get(1).cloned().unwrap_or_default();
                    // A KO'd unit left as a wounded man does nothing more.
                    let acting_wounded = wounded.contains(&a0)
                        || (matches!(action.as_str(), "fire" | "assault") && wounded.contains(&a1));
                    r.check(
                        "Wounded: a wounded man neither acts nor is fought",
                        acting_wounded.then(|| format!("{action}({args:?}) with a wounded man")),
                    );
                    let dist = |a: &str, b: &str| {
                        pos.get(a)
                            .zip(pos.get(b))
                            .map(|(p, q)| (((p.0 - q.0).pow(2) + (p.1 - q.1).pow(2)) as f64).sqrt())
                    };
                    // Night: Line of Sight 50cm by moonlight (25cm overcast) except to firing
                    // elements.
                    if let Some(los) = self.night_los {
                        let target = match action.as_str() {
                            "fire"
                            | "aa_fire_at_helicopter"
                            | "call_airstrike"
                            | "call_artillery" => Some(a1.clone()),
                            "call_mortar" => args.get(2).cloned(),
                            _ => None,
                        };
                        if let Some(tg) = target {
                            let firing = fired
                                .get(&tg)
                                .is_some_and(|&f| f > 0 && f >= now(&turns, side_of(&tg)) - 1);
                            let d = dist(&a0, &tg);
                            r.check(
                                "Spotting: at night Line of Sight ends at 50cm (25cm overcast), except to firing elements",
                                (!firing && d.is_none_or(|d| d > los + 0.5)).then(|| format!("{action} {a0} at {tg}, {d:?} away")),
                            );
                        }
                    }
                    match action.as_str() {
                        "fire" => {
                            fired.insert(a0.clone(), t);
                            last_fire = Some((a0.clone(), a1.clone()));
                            r.check(
                                "Movement: a heavy weapon or a landing element busy for the whole turn does not fire",
                                (busy.get(&a0) == Some(&t)).then(|| format!("{a0} fired while busy")),
                            );
                        }
                        "aa_fire_at_helicopter" => {
                            fired.insert(a0.clone(), t);
                            let m = moved.get(&a0).copied().unwrap_or(0);
                            r.check(
                                "AA Fire: only by troops that did not move in their last turn",
                                (m > 0 && m >= t - 1).then(|| {
                                    format!("{a0} moved in its turn {m}, fired AA in {t}")
                                }),
                            );
                        }
                        "call_airstrike" | "call_artillery" | "barrage" => {
                            fired.insert(a0.clone(), t);
                        }
                        "call_mortar" => {
                            fired.insert(a0.clone(), t);
                            let su = set_up.get(&a1).copied();
                            r.check(
                                "Movement: a mortar fires only once set up, not in the turn it sets up",
                                (su.is_none_or(|c| c >= t)).then(|| format!("{a1} called at turn {t}, set up {su:?}")),
                            );
                            last_fire =
                                Some((a1.clone(), args.get(2).cloned().unwrap_or_default()));
                        }
                        "mortar_fire" => {
                            fired.insert(a0.clone(), t);
                            let su = set_up.get(&a0).copied();
                            r.check(
                                "Movement: a mortar fires only once set up, not in the turn it sets up",
                                (su.is_none_or(|c| c >= t)).then(|| format!("{a0} fired at turn {t}, set up {su:?}")),
                            );
                            expect_fall = true;
                        }
                        "set_up" => {
                            set_up.insert(a0.clone(), t);
                            busy.insert(a0.clone(), t);
                            moved.insert(a0.clone(), t);
                        }
                        "break_down" => {
                            set_up.remove(&a0);
                            busy.insert(a0.clone(), t);
                            moved.insert(a0.clone(), t);
                        }
                        "advance" | "withdraw" | "march" | "assault" | "sail" | "fly" => {
                            r.check(
                                "Movement: a set-up heavy weapon does not move",
                                set_up
                                    .contains_key(&a0)
                                    .then(|| format!("{a0} moved while set up")),
                            );
                            let l = landed.get(&a0).map(|(c, _)| *c);
                            r.check(
                                "Movement: a helicopter landing stays on the ground the whole turn",
                                (l == Some(t)).then(|| format!("{a0} flew in the turn it landed")),
                            );
                            moved.insert(a0.clone(), t);
                        }
                        "land" => {
                            landed.insert(a0.clone(), (t, 0));
                            moved.insert(a0.clone(), t);
                        }
                        "disembark" => {
                            let cap = self.capacity.get(entity_of(&a1)).copied().unwrap_or(0);
                            let l = landed.get_mut(&a1);
                            let bad = match l {
                                Some((c, n)) if *c == t => {
                                    *n += 1;
                                    (*n > cap).then(|| {
                                        format!("{n} elements out of {a1}, capacity {cap}")
                                    })
                                }
                                _ => Some(format!("{a0} got out of {a1}, not landed this turn")),
                            };
                            r.check("Movement: troops land from a helicopter that landed this turn, up to its load", bad);
                            busy.insert(a0.clone(), t);
                            moved.insert(a0.clone(), t);
                        }
                        "carry" => {
                            let n = carrying.entry(a0.clone()).or_default();
                            *n += 1;
                            let limit = if self.smu.contains(entity_of(&a0)) {
                                1
                            } else {
                                2
                            };
                            r.check(
                                "Wounded: up to 2 wounded carried by an infantry unit, 1 by an SMU",
                                (*n > limit || !wounded.contains(&a1)).then(|| {
                                    format!(
                                        "{a0} carries {n} (limit {limit}); {a1} wounded: {}",
                                        wounded.contains(&a1)
                                    )
                                }),
                            );
                            wounded.remove(&a1);
                            moved.insert(a0.clone(), t);
                        }
                        "search" => {
                            last_search = Some(a1.clone());
                        }
                        _ => {}
                    }
                }
                "resolved" => {
                    let name = s(v, "name");
                    let result = s(v, "result");
                    let args = strs(v, "args");
                    let dice: Vec<i64> = v["dice"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|d| d["face"].as_i64()).collect())
                        .unwrap_or_default();
                    let d0 = dice.first().copied().unwrap_or(0);
                    if expect_wounded && name != "wounded" {
                        r.check(
                            "Wounded: a KO'd unit rolls for a wounded man",
                            Some(format!("{name} came first")),
                        );
                        expect_wounded = false;
                    }
                    match name.as_str() {
                        "knock_out" if result == "destroyed" => expect_wounded = true,
                        "close_combat"
                            if result == "defender_killed" || result == "attacker_killed" =>
                        {
                            expect_wounded = true
                        }
                        "wounded" => {
                            expect_wounded = false;
                            let want = if d0 >= 5 {
                                "wounded_man_left"
                            } else {
                                "no_wounded"
                            };
                            r.check(
                                "Wounded: a wounded man is left on 5 or 6",
                                (result != want).then(|| format!("{dice:?} gave {result}")),
                            );
                            expect_mark = (result == "wounded_man_left").then_some("wounded_man");
                        }
                        "riverine_hit_location" => {
                            let craft = args.first().cloned().unwrap_or_default();
                            let want = riverine_location(&craft, d0);
                            r.check(
                                "Riverine Craft: hit location by d6 and craft",
                                (want != Some(result.as_str())).then(|| {
                                    format!("{craft} {dice:?} gave {result}, not {want:?}")
                                }),
                            );
                            last_location = Some((craft, result.clone()));
                            penetrated = false;
                        }
                        "penetration" => {
                            let score: i64 =
                                args.first().and_then(|a| a.parse().ok()).unwrap_or(99);
                            let want = if d0 >= score { "1" } else { "0" };
                            r.check(
                                "Riverine Craft: an armoured location must be penetrated (Knock out, equal or exceed)",
                                (result != want).then(|| format!("{dice:?} against {score} gave {result}")),
                            );
                            let arm = last_location.as_ref().is_some_and(|(c, l)| armoured(c, l));
                            r.check(
                                "Riverine Craft: monitor and landing craft locations and PBR bridges are armoured, no others",
                                (!arm).then(|| format!("penetration rolled for {last_location:?}")),
                            );
                            penetrated = result == "1";
                        }
                        "hull_face" => {
                            let ok = last_location.as_ref().is_some_and(|(c, l)| {
                                l == "hull_hit" && (!armoured(c, l) || penetrated)
                            });
                            r.check(
                                "Riverine Craft: the Hull Hits roll follows a hull hit that got through",
                                (!ok).then(|| format!("hull roll after {last_location:?}")),
                            );
                            // Hull Hits, displacement craft: 1 flood (a box), 2 below the
                            // waterline (a box).
                            if let Some((_, target)) = &last_fire
                                && let Some(craft) = self.craft.get(entity_of(target))
                                && craft != "acv"
                            {
                                if d0 == 1 {
                                    flooding.insert(target.clone());
                                }
                                if d0 == 1 || d0 == 2 {
                                    let b = boxes.entry(target.clone()).or_default();
                                    *b += 1;
                                    if *b >= hull_boxes(craft) && boxes_known {
                                        sinking = Some(target.clone());
                                    }
                                }
                            }
                            last_location = None;
                        }
                        "flooding_roll" => {
                            let want = if d0 <= 3 {
                                "lose_hull_box"
                            } else {
                                "flood_stopped"
                            };
                            r.check(
                                "Riverine Craft: flooding, each turn 1-3 lose a box, 4-6 stopped",
                                (result != want).then(|| format!("{dice:?} gave {result}")),
                            );
                            // Which boat is known only when one boat of the side is flooding.
                            let mine: Vec<String> = flooding
                                .iter()
                                .filter(|b| side_of(b) == card_side)
                                .cloned()
                                .collect();
                            if mine.len() == 1 && boxes_known {
                                let b = &mine[0];
                                if result == "lose_hull_box" {
                                    let n = boxes.entry(b.clone()).or_default();
                                    *n += 1;
                                    if let Some(c) = self.craft.get(entity_of(b))
                                        && *n >= hull_boxes(c)
                                    {
                                        sinking = Some(b.clone());
                                    }
                                } else {
                                    flooding.remove(b);
                                }
                            } else {
                                boxes_known = false;
                            }
                        }
                        "boat_fire" => {
                            let want = match d0 {
                                1..=3 => "wreathed_in_smoke",
                                4 | 5 => "fire_out",
                                _ => "fire_causes_hit",
                            };
                            if result == "fire_causes_hit" {
                                // The hit that follows is not a fire action's: which boat it
                                // is the log does not say.
                                last_fire = None;
                                boxes_known = false;
                            }
                            r.check(
                                "Riverine Craft: a hull fire, each turn 1-3 smoke, 4-5 out, 6 a hit",
                                (result != want).then(|| format!("{dice:?} gave {result}")),
                            );
                        }
                        "aa_fire" => {
                            let score: i64 =
                                args.first().and_then(|a| a.parse().ok()).unwrap_or(99);
                            let fast = args.get(1).map(String::as_str) == Some("true");
                            let hit = if fast {
                                dice.len() == 2 && dice.iter().all(|&d| d >= score)
                            } else {
                                d0 >= score
                            };
                            r.check(
                                "AA Fire: the score to hit (twice for a fast jet)",
                                ((result == "hit") != hit)
                                    .then(|| format!("{args:?} {dice:?} gave {result}")),
                            );
                        }
                        "booby_trap_search" => {
                            let want = if d0 <= 2 {
                                "detected_in_time"
                            } else {
                                "goes_off"
                            };
                            r.check(
                                "Searching: a booby trap found, 1-2 detected in time, 3-6 goes off",
                                (result != want).then(|| format!("{dice:?} gave {result}")),
                            );
                            r.check(
                                "Searching: the booby-trap roll only for a booby trap searched",
                                (!last_search
                                    .as_deref()
                                    .is_some_and(|m| m.starts_with("vc_booby_trap")))
                                .then(|| format!("after a search of {last_search:?}")),
                            );
                        }
                        "call_for_fire" if result == "gets_through" => {
                            // The mortar's call: immediately (fall of shot now) unless the
                            // scenario reads "answered next turn".
                            if let Some((m, _)) = &last_fire
                                && m.starts_with("vc_mortar")
                                && v["why"] == "call_mortar"
                            {
                                expect_fall = !self.next_turn;
                                if self.next_turn {
                                    pending = Some(now(&turns, "vietnamese"));
                                } else {
                                    fired.insert(m.clone(), now(&turns, side_of(m)));
                                }
                            }
                        }
                        "fall_of_shot" => {
                            expect_fall = false;
                            if v["why"] == "activation.cards.on_vietnamese" {
                                let t = now(&turns, "vietnamese");
                                // The side's mortar fired: seen at any range at night.
                                for m in pos.keys().filter(|k| k.starts_with("vc_mortar")) {
                                    fired.insert(m.clone(), t);
                                }
                                r.check(
                                    "Call for Fire: an on-table battery answers next turn",
                                    (!self.next_turn || pending.is_none_or(|c| t <= c))
                                        .then(|| format!("a mission fired at the start of VC turn {t}, called in {pending:?}")),
                                );
                                pending = None;
                            } else if v["why"] == "call_mortar" {
                                r.check(
                                    "Call for Fire: an on-table battery answers next turn",
                                    self.next_turn.then(|| {
                                        "the mortar fired in the turn of its call".to_string()
                                    }),
                                );
                            }
                            let n = |k: usize| args.get(k).and_then(|a| a.parse::<i64>().ok());
                            let b = |k: usize| args.get(k).map(String::as_str) == Some("true");
                            let want = n(0).zip(n(1)).map(|(score, prev)| {
                                500 * (score - prev - i64::from(b(2))
                                    + if b(3) { self.distracted } else { 0 })
                            });
                            r.check(
                                "Artillery and Air Support: fall of shot 5cm × (Deviation Die − 1 per previous turn, − 1 airstrike)",
                                (want.map(|w| w.to_string()) != Some(result.clone())
                                    || !n(0).is_some_and(|f| self.deviation_faces.contains(&f)))
                                .then(|| format!("{args:?} gave {result}, not {want:?}")),
                            );
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }
}
