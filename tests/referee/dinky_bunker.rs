//! Referee for Dinky Dau's machine-gun fire and bunker clearing in the bunker assault (5.6.A,
//! 5.6.B, 5.7.B), written from the book apart from the engine: it reads the log as text (JSON
//! lines), the scenario's table from the compiled rules (as JSON data) and the scenario's
//! assumptions (the gun's range and the satchels carried, which the book does not print).
//!
//! Checked per game:
//! - 5.6.A: the gun's fire grazes only over flat open ground (clear ground and paddies; at
//!   most 1in of the line inside other cover, reading); when it does, every element, friend or
//!   foe, whose 2in base touches the 1in corridor (centre within 1.5in of the line) rolls, and
//!   no other; one save die per stand it has standing, at its save (5.1 step 3: 6 in the open
//!   or at point blank, 5+ in paddy, scrub and jungle); each grazed element then tests morale.
//! - 5.6.B: the beaten zone's centre is within the gun's range; 3 dice, hits on 4+ (5+ for a
//!   pinned gun); every real element whose base overlaps the 3in circle (centre within 2.5in)
//!   takes a pinning test (morale), friend or foe, and no other.
//! - 5.7.B: a satchel is detonated only by the sappers / engineers, in base contact with the
//!   bunker (2in bases touching), no more often than the charges carried; 1D6, 3+ collapses;
//!   a collapse is 3 automatic hits; the bunker has 3 HP and falls only when they are gone;
//!   no other fire (rifle fire) ever touches it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{Report, args, constant, entity, faces, point_arg, point_f64};

const INCH: f64 = 254.0;
/// 5.6.A: "a straight line 1\" wide": half of it, plus half an element's 2in base.
const CORRIDOR: f64 = 0.5 * INCH + INCH;
/// 5.6.B: "a 3\" circular Beaten Zone": its radius, plus half a 2in base.
const ZONE: f64 = 1.5 * INCH + INCH;
/// 5.7.B: base contact, two 2in bases touching (centre to centre).
const CONTACT: f64 = 2.0 * INCH;
/// 5.7.B: "heavy ... bunkers (3 HP)"; "3 automatic Hits"; "on a 3+".
const BUNKER_HP: i64 = 3;
const SATCHEL_HITS: i64 = 3;
const SATCHEL_ROLL: i64 = 3;
/// 5.6.B: "Roll 3 Firepower dice"; 5.1 step 2: hits on 4+, a pinned firer -1.
const ZONE_DICE: usize = 3;
const ZONE_TARGET: i64 = 4;
/// The engine measures in tenths of a millimetre and rounds; positions within this much of a
/// boundary are not judged.
const SLACK: f64 = 3.0;
/// Every fire action an element may aim at a piece (the rifle fire of 5.7.B among them).
const FIRE: [&str; 6] = [
    "aimed_fire",
    "fire_and_maneuver",
    "mg_fire",
    "assault",
    "recon_by_fire",
    "throw_frag_grenade",
];

type Rect = (f64, f64, f64, f64);
type Pt = (f64, f64);

fn dist(a: Pt, b: Pt) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// The distance from c to the segment a-b.
fn seg_dist(a: Pt, b: Pt, c: Pt) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    if len2 == 0.0 {
        return dist(a, c);
    }
    let t = (((c.0 - a.0) * dx + (c.1 - a.1) * dy) / len2).clamp(0.0, 1.0);
    dist((a.0 + t * dx, a.1 + t * dy), c)
}

fn inside(r: &Rect, p: Pt) -> bool {
    p.0 >= r.0 && p.0 <= r.2 && p.1 >= r.1 && p.1 <= r.3
}

/// The length of the segment a-b inside the rectangle (Liang-Barsky clipping).
fn length_in(r: &Rect, a: Pt, b: Pt) -> f64 {
    super::log::length_inside(*r, a, b)
}

/// What a stand line of the rules says about an element: stands, and whether it is a dummy.
struct Stat {
    mediums: i64,
    smalls: i64,
    dummy: bool,
}

pub struct Bunker {
    /// Features that are not flat open ground (5.6.A), and those where a stand saves on 5+
    /// (5.1 step 3: paddies, scrub, jungle).
    cover: Vec<Rect>,
    save5: Vec<Rect>,
    stats: BTreeMap<String, Stat>,
    range: f64,
    carried: i64,
}

/// One element's state as the log shows it.
#[derive(Default, Clone)]
struct Piece {
    at: Pt,
    mediums_lost: i64,
    smalls_lost: i64,
    pinned: bool,
}

impl Bunker {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let mut cover = Vec::new();
        let mut save5 = Vec::new();
        for (name, r) in super::log::features(ir, board, assumed) {
            let rect = (r[0], r[1], r[2], r[3]);
            // 5.6.A: "flat, open ground (such as a rice paddy or cleared perimeter wire)".
            if !matches!(name.as_str(), "rice_paddy" | "clear_ground" | "trail") {
                cover.push(rect);
            }
            // 5.1 step 3: paddies and light/medium cover save on 5+ (the jungle's save is
            // assumed at that grade too); a bunker's site is no element's cover here.
            if matches!(
                name.as_str(),
                "rice_paddy" | "secondary_jungle" | "dense_jungle"
            ) {
                save5.push(rect);
            }
        }
        let mut stats = BTreeMap::new();
        for e in ir["entities"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap_or_default().to_string();
            let get = |k: &str| -> Option<Value> {
                let f = e["fields"].as_array()?.iter().find(|f| f[0] == k)?;
                constant(ir, &f[1], assumed)
            };
            let (Some(role), Some(m), Some(s)) = (get("role"), get("mediums"), get("smalls"))
            else {
                continue;
            };
            stats.insert(
                name,
                Stat {
                    mediums: m.as_i64().unwrap_or(0),
                    smalls: s.as_i64().unwrap_or(0),
                    dummy: role.as_str() == Some("dummy_blind"),
                },
            );
        }
        let len = |k: &str| {
            assumed
                .get(k)
                .and_then(|v| super::log::length(v))
                .unwrap_or_else(|| panic!("{k} is assumed")) as f64
        };
        Bunker {
            cover,
            save5,
            stats,
            range: len("machine_gun.range"),
            carried: assumed
                .get("satchel_charges.carried")
                .and_then(|v| v.trim().parse().ok())
                .expect("satchel_charges.carried is assumed"),
        }
    }

    fn is_element(&self, label: &str) -> bool {
        self.stats.contains_key(entity(label))
    }

    fn real(&self, label: &str) -> bool {
        self.stats.get(entity(label)).is_some_and(|s| !s.dummy)
    }

    /// 5.1 step 3: the save of a stand at a place, fired on from `from`.
    fn save_at(&self, p: Pt, from: Pt) -> i64 {
        if dist(p, from) <= 3.0 * INCH {
            return 6; // 5.6.A: point blank strips the cover
        }
        if self.save5.iter().any(|r| inside(r, p)) {
            5
        } else {
            6
        }
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        let evs: Vec<Value> = text
            .lines()
            .skip(1)
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let mut pieces: BTreeMap<String, Piece> = BTreeMap::new();
        // The bunkers standing and the hits they have taken.
        let mut bunkers: BTreeMap<String, (Pt, i64)> = BTreeMap::new();
        let mut satchels: BTreeMap<String, i64> = BTreeMap::new();
        let mut i = 0;
        while i < evs.len() {
            let ev = &evs[i];
            let kind = ev["event"].as_str().unwrap_or_default();
            match kind {
                "deployed" | "entered" => {
                    let label = ev["piece"].as_str().unwrap_or_default().to_string();
                    let at = point_f64(&ev["at"]).unwrap_or_default();
                    if entity(&label) == "log_bunker" {
                        bunkers.insert(label, (at, 0));
                    } else {
                        pieces.entry(label).or_default().at = at;
                    }
                }
                "moved" => {
                    let label = ev["piece"].as_str().unwrap_or_default();
                    if let (Some(p), Some(to)) = (pieces.get_mut(label), point_f64(&ev["to"])) {
                        p.at = to;
                    }
                }
                "eliminated" => {
                    let label = ev["piece"].as_str().unwrap_or_default();
                    pieces.remove(label);
                    if let Some((_, hits)) = bunkers.remove(label) {
                        // 5.7.B: it falls only when its 3 HP are gone.
                        r.check(
                            "5.7.B: a heavy bunker has 3 HP",
                            (hits < BUNKER_HP)
                                .then(|| format!("{label} fell after {hits} hits (event {i})")),
                        );
                    }
                }
                "counted" => {
                    let label = ev["piece"].as_str().unwrap_or_default();
                    let v = ev["value"].as_i64().unwrap_or(0);
                    if let Some(p) = pieces.get_mut(label) {
                        match ev["counter"].as_str().unwrap_or_default() {
                            "mediums_lost" => p.mediums_lost = v,
                            "smalls_lost" => p.smalls_lost = v,
                            _ => {}
                        }
                    }
                }
                "marked" | "unmarked" if ev["marker"] == "pinned_marker" => {
                    if let Some(p) = ev["piece"].as_str().and_then(|l| pieces.get_mut(l)) {
                        p.pinned = kind == "marked";
                    }
                }
                "resolved" if ev["name"] == "bunker_hits" => {
                    // Hits on a bunker come only from a satchel (5.7.B: impervious to rifle
                    // fire).
                    let why = ev["why"].as_str().unwrap_or_default();
                    r.check(
                        "5.7.B: rifle fire never harms a heavy bunker",
                        (why != "detonate_satchel")
                            .then(|| format!("a bunker took hits from {why} (event {i})")),
                    );
                }
                "acted" => {
                    let action = ev["action"].as_str().unwrap_or_default().to_string();
                    let a = args(ev);
                    // The events of this action: up to the next decision.
                    let end = (i + 1..evs.len())
                        .find(|&j| evs[j]["event"] == "decision" || evs[j]["event"] == "acted")
                        .unwrap_or(evs.len());
                    let body = &evs[i + 1..end];
                    if FIRE.contains(&action.as_str()) && !bunkers.is_empty() {
                        let bad = a.iter().skip(1).find(|x| bunkers.contains_key(*x));
                        let harmed = body.iter().any(|e| {
                            e["name"] == "bunker_hits"
                                || (e["event"] == "eliminated"
                                    && e["piece"].as_str().is_some_and(|l| bunkers.contains_key(l)))
                        });
                        r.check(
                            "5.7.B: rifle fire never harms a heavy bunker",
                            (bad.is_some() || harmed)
                                .then(|| format!("{action} {a:?} reached a bunker (event {i})")),
                        );
                    }
                    match action.as_str() {
                        "mg_fire" => self.mg_fire(&a, body, i, &pieces, r),
                        "area_suppression" => self.area(&a, body, i, &pieces, r),
                        "detonate_satchel" => {
                            self.satchel(&a, body, i, &pieces, &mut bunkers, &mut satchels, r)
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// 5.6.A.
    fn mg_fire(
        &self,
        a: &[String],
        body: &[Value],
        i: usize,
        pieces: &BTreeMap<String, Piece>,
        r: &mut Report,
    ) {
        let (Some(gun), Some(target)) = (pieces.get(&a[0]), pieces.get(&a[1])) else {
            return;
        };
        // 1.5: an order paid with 1 CP out of command fails on the emergency initiative check.
        if body
            .iter()
            .any(|e| e["name"] == "emergency_initiative_check" && e["result"] == "hold_position")
        {
            return;
        }
        let (g, t) = (gun.at, target.at);
        let in_cover: f64 = self.cover.iter().map(|c| length_in(c, g, t)).sum();
        let grazed: Vec<&Value> = body
            .iter()
            .filter(|e| e["name"] == "grazing_save")
            .collect();
        if (in_cover - INCH).abs() > SLACK {
            let open = in_cover < INCH;
            r.check(
                "5.6.A: the gun grazes only over flat open ground",
                (!open && !grazed.is_empty()).then(|| {
                    format!(
                        "grazing saves with {:.1}in of the line in cover (event {i})",
                        in_cover / INCH
                    )
                }),
            );
            if !open {
                return;
            }
        } else {
            return;
        }
        // Who is in the corridor: every element but the gun and its target.
        let mut must = BTreeSet::new();
        let mut may = BTreeSet::new();
        for (label, p) in pieces {
            if label == &a[0] || label == &a[1] || !self.is_element(label) {
                continue;
            }
            let d = seg_dist(g, t, p.at);
            if d < CORRIDOR - SLACK {
                must.insert(label.clone());
            }
            if d < CORRIDOR + SLACK {
                may.insert(label.clone());
            }
        }
        let rolled: BTreeSet<String> = grazed.iter().map(|e| args(e)[0].clone()).collect();
        let missing: Vec<_> = must
            .iter()
            .filter(|l| self.real(l) && !rolled.contains(*l))
            .collect();
        let extra: Vec<_> = rolled.iter().filter(|l| !may.contains(*l)).collect();
        r.check(
            "5.6.A: every stand in the 1in corridor, friend or foe, rolls a save",
            (!missing.is_empty() || !extra.is_empty()).then(|| {
                format!("missing {missing:?}, outside the corridor {extra:?} (event {i})")
            }),
        );
        for (k, e) in grazed.iter().enumerate() {
            let ea = args(e);
            let label = &ea[0];
            let Some(p) = pieces.get(label) else { continue };
            let stat = &self.stats[entity(label)];
            let standing =
                (stat.mediums - p.mediums_lost).max(0) + (stat.smalls - p.smalls_lost).max(0);
            let save = self.save_at(p.at, g);
            let f = faces(e);
            let saved = f.iter().filter(|&&x| x >= save).count();
            let stands: i64 = ea[1].parse().unwrap_or(-1);
            let printed: i64 = ea[2].parse().unwrap_or(-1);
            r.check(
                "5.6.A: one save die per stand standing, at its save (5.1 step 3)",
                (stands != standing
                    || f.len() as i64 != standing
                    || printed != save
                    || e["result"].as_str() != Some(saved.to_string().as_str()))
                .then(|| {
                    format!(
                        "{label}: {stands} stands rolled {f:?} at {printed}+ for {}, expected {standing} at {save}+ (event {i})",
                        e["result"]
                    )
                }),
            );
            // Then it tests morale (5.1 step 4: hit, saved or not), unless it fell.
            let next = grazed.get(k + 1).copied();
            let pos = body.iter().position(|x| std::ptr::eq(x, *e)).unwrap();
            let stop = next
                .and_then(|n| body.iter().position(|x| std::ptr::eq(x, n)))
                .unwrap_or(body.len());
            let tested = body[pos..stop].iter().any(|x| x["name"] == "morale_test");
            let fell = body[pos..stop]
                .iter()
                .any(|x| x["event"] == "eliminated" && x["piece"] == label.as_str());
            r.check(
                "5.6.A: a grazed element tests morale",
                (!tested && !fell).then(|| format!("{label} took no pinning test (event {i})")),
            );
        }
    }

    /// 5.6.B.
    fn area(
        &self,
        a: &[String],
        body: &[Value],
        i: usize,
        pieces: &BTreeMap<String, Piece>,
        r: &mut Report,
    ) {
        let (Some(gun), Some(c)) = (pieces.get(&a[0]), point_arg(&a[1])) else {
            return;
        };
        r.check(
            "5.6.B: the beaten zone lies within the gun's range",
            (dist(gun.at, c) > self.range + SLACK).then(|| {
                format!(
                    "centre {:.1}in from the gun (event {i})",
                    dist(gun.at, c) / INCH
                )
            }),
        );
        let Some(fire) = body.iter().find(|e| e["name"] == "area_suppression_fire") else {
            // The order failed (the emergency initiative check, 1.5).
            return;
        };
        let f = faces(fire);
        let target = if gun.pinned {
            ZONE_TARGET + 1
        } else {
            ZONE_TARGET
        };
        let hits = f.iter().filter(|&&x| x >= target).count();
        r.check(
            "5.6.B: 3 firepower dice, hits on 4+ (5+ for a pinned gun)",
            (f.len() != ZONE_DICE
                || fire["result"].as_str() != Some(hits.to_string().as_str())
                || args(fire)[0] != gun.pinned.to_string())
            .then(|| {
                format!(
                    "rolled {f:?} for {}, pinned {} (event {i})",
                    fire["result"], gun.pinned
                )
            }),
        );
        let fell: BTreeSet<&str> = body
            .iter()
            .filter(|e| e["event"] == "eliminated")
            .filter_map(|e| e["piece"].as_str())
            .collect();
        let mut must = BTreeSet::new();
        let mut may = BTreeSet::new();
        for (label, p) in pieces {
            if label == &a[0] || !self.real(label) {
                continue;
            }
            let d = dist(p.at, c);
            if d < ZONE - SLACK && !fell.contains(label.as_str()) {
                must.insert(label.clone());
            }
            if d < ZONE + SLACK {
                may.insert(label.clone());
            }
        }
        let tested: Vec<(usize, String)> = body
            .iter()
            .enumerate()
            .filter(|(_, e)| e["name"] == "in_beaten_zone")
            .map(|(k, e)| (k, args(e)[0].clone()))
            .collect();
        let names: BTreeSet<String> = tested.iter().map(|(_, l)| l.clone()).collect();
        let missing: Vec<_> = must.iter().filter(|l| !names.contains(*l)).collect();
        let extra: Vec<_> = names.iter().filter(|l| !may.contains(*l)).collect();
        r.check(
            "5.6.B: every stand in the 3in circle takes a pinning test",
            (!missing.is_empty() || !extra.is_empty())
                .then(|| format!("missing {missing:?}, outside the circle {extra:?} (event {i})")),
        );
        for (n, (k, label)) in tested.iter().enumerate() {
            let stop = tested.get(n + 1).map_or(body.len(), |(s, _)| *s);
            let ok = body[*k..stop].iter().any(|e| e["name"] == "morale_test");
            r.check(
                "5.6.B: the pinning test is a morale test",
                (!ok).then(|| format!("{label} was not tested (event {i})")),
            );
        }
    }

    /// 5.7.B.
    #[allow(clippy::too_many_arguments)]
    fn satchel(
        &self,
        a: &[String],
        body: &[Value],
        i: usize,
        pieces: &BTreeMap<String, Piece>,
        bunkers: &mut BTreeMap<String, (Pt, i64)>,
        satchels: &mut BTreeMap<String, i64>,
        r: &mut Report,
    ) {
        let (Some(e), Some(&(b, _))) = (pieces.get(&a[0]), bunkers.get(&a[1])) else {
            return;
        };
        let d = dist(e.at, b);
        r.check(
            "5.7.B: a satchel is detonated by sappers / engineers in base contact",
            (entity(&a[0]) != "engineer_team" || d > CONTACT + SLACK)
                .then(|| format!("{} at {:.2}in from the bunker (event {i})", a[0], d / INCH)),
        );
        let Some(roll) = body.iter().find(|x| x["name"] == "satchel_charge") else {
            return;
        };
        let used = satchels.entry(a[0].clone()).or_default();
        *used += 1;
        r.check(
            "5.7.B: no more satchels than the element carries",
            (*used > self.carried).then(|| format!("{} used satchel {used} (event {i})", a[0])),
        );
        let f = faces(roll);
        let collapsed = f.len() == 1 && f[0] >= SATCHEL_ROLL;
        let said = roll["result"] == "bunker_collapsed";
        r.check(
            "5.7.B: 1D6, the bunker collapses on 3+",
            (f.len() != 1 || collapsed != said)
                .then(|| format!("rolled {f:?} for {} (event {i})", roll["result"])),
        );
        let hits: Vec<&Value> = body.iter().filter(|x| x["name"] == "bunker_hits").collect();
        if said {
            let left = bunkers.get(&a[1]).map_or(0, |(_, h)| BUNKER_HP - h);
            let ok = hits.len() == 1
                && args(hits[0])[0] == SATCHEL_HITS.to_string()
                && args(hits[0])[1] == left.to_string()
                && hits[0]["result"].as_str()
                    == Some((left - SATCHEL_HITS).max(0).to_string().as_str());
            r.check(
                "5.7.B: a collapse is 3 automatic hits on the bunker's hit points",
                (!ok).then(|| format!("{hits:?} on {left} HP (event {i})")),
            );
            if let Some((_, h)) = bunkers.get_mut(&a[1]) {
                *h += SATCHEL_HITS;
            }
        } else {
            r.check(
                "5.7.B: a collapse is 3 automatic hits on the bunker's hit points",
                (!hits.is_empty()).then(|| format!("hits without a collapse (event {i})")),
            );
        }
    }
}
