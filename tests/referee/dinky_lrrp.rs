//! Referee for Dinky Dau's small recon teams in the LRRP patrol (4.4.2.B, 4.2, 2.3), written
//! from the book apart from the engine: it reads the log as text (JSON lines), the scenario's
//! table and stat lines from the compiled rules (as JSON data) and the scenario's assumptions.
//!
//! Checked per game:
//! - 4.4.2.B: an LRRP team not yet revealed is never made an echo, even when its own move
//!   brings an enemy blind within the (mutual, 4.1 rule 2) visual cutoff; when it fires it is
//!   revealed (its fire comes from a confirmed contact).
//! - 4.2 spotting: every test is 1D6 at 4+ with the printed modifiers (+1 sprinting / firing
//!   target, -1 scrub, -2 dense, +1 scout / officer with binoculars, -1 isolated medic / RTO,
//!   -1 rear blind spot, +1 moved target, -1 concealed target, +1 patrol move), a natural 6
//!   critical; the scout's +1 is claimed exactly by the scout (the LRRP team) and the HQ.
//! - 4.2 dedicated scout: only a scout ever makes a second test in one order, only once its
//!   primary target was revealed, only one, and against another echo.
//! - 4.2 isolated RTO: the detached RTO takes the -1 exactly when no other element of its side
//!   is within 4in of it (2in coherency plus a 2in base, the scenario's reading); no one else
//!   ever takes it.
//! - 2.3 / 1.5 command: an order costs 1 CP within the Platoon Commander's radius (6in, 4in in
//!   dense jungle) or, beyond it, for an element whose own RTO stands while the commander's
//!   RTO does ("via an active RTO"); otherwise 2 CP, or 1 CP and the emergency initiative
//!   check when only 1 CP is left. CP spent never exceeds the CP of the turn.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{Report, constant, entity, point, within};

const INCH: i64 = 254;
/// 1.5 / 2.3: "6\" in open/trails; 4\" in dense".
const RADIUS_OPEN: i64 = 6 * INCH;
const RADIUS_DENSE: i64 = 4 * INCH;
/// 2.3: 1 CP in command, 2 CP out of command; 4.2: a Platoon Recon Sweep 2 CP.
const COST_IN: i64 = 1;
const COST_OUT: i64 = 2;
const COST_SWEEP: i64 = 2;
/// 4.2: "Base Target: 4+ to spot".
const SPOT_TARGET: i64 = 4;
/// The scenario's reading of "moving alone" (1.4 rule 1's 2in coherency plus a 2in base).
const ALONE: i64 = 4 * INCH;

#[derive(Default, Clone)]
struct Stat {
    smalls: i64,
    officer: bool,
    rto: bool,
    dummy: bool,
    squad_leader: bool,
}

#[derive(Default, Clone)]
struct Piece {
    entity: String,
    side: String,
    at: (i64, i64),
    markers: BTreeSet<String>,
    smalls_lost: i64,
}

pub struct Lrrp {
    stats: BTreeMap<String, Stat>,
    dense: Vec<(i64, i64, i64, i64)>,
}

fn strs(ev: &Value, k: &str) -> Vec<String> {
    ev[k]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| a.as_str().unwrap_or_default().to_string())
        .collect()
}

/// 4.2 "The Spotting Roll Procedure", the modifiers in the order the rules pass them.
fn spot_total(face: i64, args: &[String]) -> i64 {
    let flag = |i: usize| args.get(i).is_some_and(|a| a == "true");
    let mut m = match args.first().map(String::as_str) {
        Some("secondary_growth") => -1,
        Some("dense_growth") => -2,
        _ => 0,
    };
    for (i, v) in [(1, 1), (2, 1), (3, -1), (4, -1), (5, 1), (6, -1), (7, 1)] {
        if flag(i) {
            m += v;
        }
    }
    face + m
}

impl Lrrp {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let mut dense = Vec::new();
        for (name, r) in super::log::features(ir, board, assumed) {
            if name == "dense_jungle" {
                let r = r.map(|x| x.round() as i64);
                dense.push((r[0], r[1], r[2], r[3]));
            }
        }
        let mut stats = BTreeMap::new();
        for e in ir["entities"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap_or_default().to_string();
            let get = |k: &str| -> Option<Value> {
                let f = e["fields"].as_array()?.iter().find(|f| f[0] == k)?;
                constant(ir, &f[1], assumed)
            };
            let (Some(role), Some(smalls)) = (get("role"), get("smalls")) else {
                continue;
            };
            let flag = |k: &str| get(k).and_then(|v| v.as_bool()).unwrap_or(false);
            stats.insert(
                name,
                Stat {
                    smalls: smalls.as_i64().unwrap_or(0),
                    officer: flag("officer"),
                    rto: flag("rto"),
                    dummy: role.as_str() == Some("dummy_blind"),
                    squad_leader: flag("squad_leader"),
                },
            );
        }
        Lrrp { stats, dense }
    }

    fn stat(&self, p: &Piece) -> Stat {
        self.stats.get(&p.entity).cloned().unwrap_or_default()
    }

    fn in_dense(&self, p: (i64, i64)) -> bool {
        self.dense
            .iter()
            .any(|r| p.0 >= r.0 && p.0 <= r.2 && p.1 >= r.1 && p.1 <= r.3)
    }

    /// 2.3 "via an active RTO": the element's own RTO stands, and the commander's.
    fn radio(&self, p: &Piece, pieces: &BTreeMap<String, Piece>) -> bool {
        let s = self.stat(p);
        !s.officer
            && s.rto
            && s.smalls - p.smalls_lost > 0
            && pieces.values().any(|h| {
                let hs = self.stat(h);
                hs.officer && hs.rto && hs.smalls - h.smalls_lost >= 2
            })
    }

    /// 4.2: the detached RTO with no other element of its side within 4in.
    fn isolated(&self, name: &str, pieces: &BTreeMap<String, Piece>) -> bool {
        let Some(p) = pieces.get(name) else {
            return false;
        };
        p.entity == "detached_rto"
            && !pieces.iter().any(|(n, f)| {
                n != name && f.side == p.side && !self.stat(f).dummy && within(f.at, p.at, ALONE)
            })
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        let evs: Vec<Value> = text
            .lines()
            .skip(1)
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let seed = text
            .lines()
            .next()
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .map(|h| format!("seed {}", h["seed"]))
            .unwrap_or_default();
        let mut pieces: BTreeMap<String, Piece> = BTreeMap::new();
        let mut engagement = false;
        let mut cp = 0i64;
        let mut emergency_expected = false;
        let mut emergency_seen = false;
        // The order being carried out: its side, label and acting element.
        let mut order: Option<(String, String, String)> = None;
        // The acted action and its acting element (spotting tests are attributed to it).
        let mut actor: Option<(String, String)> = None;
        // Spotting tests of the current order: (result, target revealed by it).
        let mut spots: Vec<String> = Vec::new();
        let mut first_target: Option<String> = None;
        let mut awaiting_target = false;
        // The echoes standing when the last spotting test was rolled.
        let mut echoes: BTreeSet<String> = BTreeSet::new();
        let mut fire_check: Option<String> = None;
        // An LRRP team whose own move just made an enemy blind an echo (judged once the move
        // is over, when the rules would have made it one too).
        let mut stealth_pending: Option<String> = None;
        let close = |expected: &mut bool, seen: &mut bool, r: &mut Report, n: usize| {
            r.check(
                "2.3 / 1.5: the emergency initiative check exactly when an out-of-command order pays 1 CP",
                (*expected != *seen).then(|| {
                    format!("check expected {expected}, rolled {seen} (event {n}, {seed})")
                }),
            );
            *expected = false;
            *seen = false;
        };
        for (n, ev) in evs.iter().enumerate() {
            let kind = ev["event"].as_str().unwrap_or_default();
            let s = |k: &str| ev[k].as_str().unwrap_or_default().to_string();
            if matches!(kind, "decision" | "acted" | "turn" | "phase" | "end")
                && let Some(a) = stealth_pending.take()
                && let Some(mover) = pieces.get(&a)
                && !mover.markers.contains("confirmed_contact")
            {
                r.check(
                    "4.4.2.B: an LRRP team moving within an enemy blind's cutoff stays a blind",
                    mover
                        .markers
                        .contains("echo_marker")
                        .then(|| format!("{a} is an echo (event {n})")),
                );
            }
            match kind {
                "phase" => {
                    engagement = s("phase").contains("Engagement");
                }
                "turn" => {
                    // 2.2 item 4: with no Platoon Commander left, the CP are the Squad
                    // Leaders' +1 each (command_points is then not rolled).
                    cp = pieces
                        .values()
                        .filter(|p| {
                            let st = self.stat(p);
                            p.side == "allied" && st.squad_leader && st.smalls - p.smalls_lost > 0
                        })
                        .count() as i64;
                }
                "deployed" | "entered" => {
                    let label = s("piece");
                    let p = pieces.entry(label.clone()).or_default();
                    p.entity = entity(&label).to_string();
                    p.side = s("side");
                    p.at = point(&ev["at"]).unwrap_or_default();
                }
                "moved" => {
                    let label = s("piece");
                    if let (Some(p), Some(to)) = (pieces.get_mut(&label), point(&ev["to"])) {
                        p.at = to;
                        // 4.4.2.B: it moves as a stealth blind, never an echo.
                        if p.entity == "lrrp_team" && !p.markers.contains("confirmed_contact") {
                            r.check(
                                "4.4.2.B: an unrevealed LRRP team is never made an echo",
                                p.markers
                                    .contains("echo_marker")
                                    .then(|| format!("{label} moves as an echo (event {n})")),
                            );
                        }
                    }
                }
                "eliminated" => {
                    pieces.remove(&s("piece"));
                }
                "counted" if s("counter") == "smalls_lost" => {
                    if let Some(p) = pieces.get_mut(&s("piece")) {
                        p.smalls_lost = ev["value"].as_i64().unwrap_or(0);
                    }
                }
                "marked" | "unmarked" => {
                    let label = s("piece");
                    let marker = s("marker");
                    if kind == "marked" && marker == "echo_marker" {
                        // 4.4.2.B: the stealth blind is never an echo.
                        if let Some(p) = pieces.get(&label)
                            && p.entity == "lrrp_team"
                        {
                            r.check(
                                "4.4.2.B: an unrevealed LRRP team is never made an echo",
                                (!p.markers.contains("confirmed_contact"))
                                    .then(|| format!("{label} made an echo (event {n})")),
                            );
                        }
                        // Its own move made an enemy blind an echo: the cutoff is mutual.
                        if let Some((_, a)) = &actor
                            && let (Some(mover), Some(x)) = (pieces.get(a), pieces.get(&label))
                            && mover.entity == "lrrp_team"
                            && x.side != mover.side
                            && !mover.markers.contains("confirmed_contact")
                        {
                            stealth_pending = Some(a.clone());
                        }
                    }
                    if kind == "marked" && marker == "confirmed_contact" && awaiting_target {
                        awaiting_target = false;
                        let was_echo = echoes.contains(&label);
                        if spots.len() == 1 {
                            first_target = Some(label.clone());
                        } else {
                            r.check(
                                "4.2: the scout's free second test is against another echo",
                                (!was_echo || first_target.as_deref() == Some(label.as_str()))
                                    .then(|| format!("{label} (event {n})")),
                            );
                        }
                    }
                    if let Some(p) = pieces.get_mut(&label) {
                        if kind == "marked" {
                            p.markers.insert(marker);
                        } else {
                            p.markers.remove(&marker);
                        }
                    }
                }
                "decision" => {
                    let side = s("side");
                    let label = s("label");
                    if label.starts_with("deploy") {
                        continue;
                    }
                    let acting = label
                        .split_once('(')
                        .and_then(|(_, rest)| rest.split([',', ')']).next())
                        .map(|a| a.trim().to_string())
                        .unwrap_or_default();
                    if label.starts_with("choose ") {
                        // A patrol's spotting test is one more order (1 CP more), 2.3.
                        // (A decision taken inside an order is logged after the order's events.)
                        if side == "allied"
                            && label == "choose 1"
                            && let Some((os, ol, oa)) = order.clone()
                            && os == "allied"
                            && ol.starts_with("patrol_move(")
                        {
                            self.charge(&oa, &ol, &pieces, &mut cp, &mut emergency_expected, r, n);
                        }
                        continue;
                    }
                    close(&mut emergency_expected, &mut emergency_seen, r, n);
                    order = Some((side.clone(), label.clone(), acting.clone()));
                    if engagement && side == "allied" && !label.starts_with("hold") {
                        self.charge(
                            &acting,
                            &label,
                            &pieces,
                            &mut cp,
                            &mut emergency_expected,
                            r,
                            n,
                        );
                    }
                }
                "acted" => {
                    let args = strs(ev, "args");
                    let action = s("action");
                    let a = args.first().cloned().unwrap_or_default();
                    // (An order that ends in a hold, 1.5, fires nothing.)
                    fire_check = None;
                    if matches!(action.as_str(), "aimed_fire" | "fire_and_maneuver")
                        && pieces.get(&a).is_some_and(|p| p.entity == "lrrp_team")
                    {
                        fire_check = Some(a.clone());
                    }
                    actor = Some((action, a));
                    spots.clear();
                    first_target = None;
                    awaiting_target = false;
                }
                "resolved" => {
                    let name = s("name");
                    let args = strs(ev, "args");
                    let result = s("result");
                    let face = ev["dice"]
                        .as_array()
                        .and_then(|d| d.first())
                        .and_then(|d| d["face"].as_i64())
                        .unwrap_or(0);
                    match name.as_str() {
                        "command_points" => {
                            cp = result.parse().unwrap_or(0);
                        }
                        "emergency_initiative_check" => {
                            emergency_seen = true;
                        }
                        "hit_roll" => {
                            if let Some(a) = fire_check.take() {
                                let shown = pieces
                                    .get(&a)
                                    .is_none_or(|p| p.markers.contains("confirmed_contact"));
                                r.check(
                                    "4.4.2.B: an LRRP team that fires is revealed",
                                    (!shown).then(|| format!("{a} fired unseen (event {n})")),
                                );
                            }
                        }
                        "spotting" => {
                            echoes = pieces
                                .iter()
                                .filter(|(_, p)| p.markers.contains("echo_marker"))
                                .map(|(k, _)| k.clone())
                                .collect();
                            let total = spot_total(face, &args);
                            let want = if total >= SPOT_TARGET {
                                if face == 6 {
                                    "critical_spot"
                                } else {
                                    "spotted"
                                }
                            } else {
                                "not_spotted"
                            };
                            r.check(
                                "4.2: 1D6, 4+ with the printed modifiers, natural 6 critical",
                                (result != want)
                                    .then(|| format!("{args:?} {face} = {result} (event {n})")),
                            );
                            let Some((action, a)) = actor.clone() else {
                                continue;
                            };
                            if !matches!(action.as_str(), "spotting_test" | "patrol_move") {
                                continue;
                            }
                            let Some(p) = pieces.get(&a) else { continue };
                            let st = self.stat(p);
                            let scout = p.entity == "lrrp_team";
                            let optics = args.get(2).is_some_and(|x| x == "true");
                            r.check(
                                "4.2: the +1 of scout / binoculars exactly for the scout and the officer",
                                (optics != (scout || st.officer))
                                    .then(|| format!("{a} optics {optics} (event {n})")),
                            );
                            if scout && optics {
                                r.check("4.2: a scout spots with +1", None);
                            }
                            let iso = args.get(3).is_some_and(|x| x == "true");
                            let want_iso = self.isolated(&a, &pieces);
                            r.check(
                                "4.2: the -1 of an isolated RTO exactly when it is alone",
                                (iso != want_iso).then(|| {
                                    format!("{a}: flag {iso}, alone {want_iso} (event {n})")
                                }),
                            );
                            if want_iso && iso {
                                r.check("4.2: an isolated RTO spots at -1", None);
                            }
                            spots.push(result.clone());
                            awaiting_target = result != "not_spotted";
                            if spots.len() == 2 {
                                r.check(
                                    "4.2: only a scout makes a free second test, after revealing its target",
                                    (!scout || spots[0] == "not_spotted")
                                        .then(|| format!("{a}: {spots:?} (event {n})")),
                                );
                                if scout {
                                    r.check("4.2: the scout's free second test is taken", None);
                                }
                            }
                            r.check(
                                "4.2: at most one free second test",
                                (spots.len() > 2).then(|| format!("{a}: {spots:?} (event {n})")),
                            );
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        close(&mut emergency_expected, &mut emergency_seen, r, evs.len());
    }

    /// What an allied order costs now (2.3, 1.5), taken from the CP of the turn.
    #[allow(clippy::too_many_arguments)]
    fn charge(
        &self,
        acting: &str,
        label: &str,
        pieces: &BTreeMap<String, Piece>,
        cp: &mut i64,
        emergency_expected: &mut bool,
        r: &mut Report,
        n: usize,
    ) {
        let Some(p) = pieces.get(acting) else { return };
        let st = self.stat(p);
        let hq = pieces.values().find(|h| self.stat(h).officer);
        let radius = if self.in_dense(p.at) {
            RADIUS_DENSE
        } else {
            RADIUS_OPEN
        };
        let near = st.officer || hq.is_some_and(|h| within(h.at, p.at, radius));
        let radio = self.radio(p, pieces);
        let cost = if label.starts_with("platoon_recon_sweep(") {
            COST_SWEEP
        } else if near || radio {
            if !near {
                r.check(
                    "2.3: beyond the radius, an order via an active RTO costs 1 CP",
                    None,
                );
            }
            COST_IN
        } else if *cp >= COST_OUT {
            r.check(
                "2.3: out of command with no radio, an order costs 2 CP",
                None,
            );
            COST_OUT
        } else {
            *emergency_expected = true;
            COST_IN
        };
        *cp -= cost;
        r.check(
            "2.3: CP spent never exceeds CP available",
            (*cp < 0).then(|| {
                format!(
                    "{label} costs {cost} with {} CP left (event {n})",
                    *cp + cost
                )
            }),
        );
    }
}
