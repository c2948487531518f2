//! Referee for Dinky Dau's urban breaching and heavy weapons in the street fight (5.8.A,
//! 5.8.B), written from the book apart from the engine: it reads the log as text (JSON
//! lines), the scenario's table from the compiled rules (as JSON data) and the scenario's
//! assumptions (the cone's width, the rifle's range and the charges carried, which the book
//! does not print).
//!
//! Checked per game:
//! - 5.8.A rule 1: every friendly element whose base reaches into the 2in cone behind the
//!   breech (centre within 2in plus half a base, within the cone's half angle of the rear,
//!   reading) is attacked, and no other; one attack per stand it has standing, of 2 dice
//!   hitting on 4+, each hit saved on 5+; then the element takes a pinning (morale) test.
//! - 5.8.A rule 2: the dust cloud goes on the firer and is lifted before the next impulse; a
//!   sprint under it is made by a friendly, unpinned element other than the firer, is free
//!   (no order: the CP referee charges none) and at most 9in; no hidden enemy whose line to
//!   the sprinter passes through the cloud (its 2in square measured as the 2in circle inside
//!   it, reading) springs on it.
//! - 5.8.B rule 1: a breach is declared by an element in base contact with a masonry wall
//!   (centre within 1in of a building, outside it), unpinned, with a LAW (rifle squads) or C4
//!   (engineers) left; its CP are checked by the general referee (an order).
//! - 5.8.B rule 2: 1D6, the wall is breached on 4+, 3+ for the engineers.
//! - 5.8.B rule 3: only after a breach do the breachers step through, into the building
//!   whose wall they touched; each defender surprised is in that building and the assault
//!   follows with no defensive fire (the two assault rolls at 4+ come first, no save).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{Report, args, constant, entity, faces, point_f64};

const INCH: f64 = 254.0;
/// 5.8.A rule 1: "a 2\" triangular cone", plus half a 2in base.
const CONE: f64 = 2.0 * INCH + INCH;
/// 5.8.A rule 1: "a 2 Firepower dice attack (save on 5+)"; 5.1 step 2: hits on 4+.
const BLAST_DICE: usize = 2;
const BLAST_HIT: i64 = 4;
const BLAST_SAVE: i64 = 5;
/// 5.8.A rule 2: "2\" x 2\"": half its side.
const DUST: f64 = INCH;
/// 2.3: a sprint is up to 9in.
const SPRINT: f64 = 9.0 * INCH;
/// 5.8.B rule 1: base contact, half a 2in base from the wall.
const CONTACT: f64 = INCH;
/// 5.8.B rule 2: "4+ (3+ for Sappers / Combat Engineers)".
const BREACH: i64 = 4;
const BREACH_SAPPERS: i64 = 3;
/// 5.2 item 2: the assault's hits land on 4+.
const ASSAULT_HIT: &str = "4";
/// The engine measures in tenths of a millimetre and rounds; positions within this much of a
/// boundary are not judged.
const SLACK: f64 = 3.0;

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

fn inside(r: &Rect, p: Pt, grow: f64) -> bool {
    p.0 >= r.0 - grow && p.0 <= r.2 + grow && p.1 >= r.1 - grow && p.1 <= r.3 + grow
}

/// The bearing from a to b in degrees, clockwise from the top edge (y grows downward).
fn bearing(a: Pt, b: Pt) -> f64 {
    let d = (b.0 - a.0).atan2(-(b.1 - a.1)).to_degrees();
    if d < 0.0 { d + 360.0 } else { d }
}

fn gap(a: f64, b: f64) -> f64 {
    let d = (a - b).abs() % 360.0;
    d.min(360.0 - d)
}

fn resolved(ev: &Value, name: &str) -> bool {
    ev["event"] == "resolved" && ev["name"] == name
}

/// What a stand line of the rules says about an element.
struct Stat {
    mediums: i64,
    smalls: i64,
    dummy: bool,
}

pub struct Street {
    houses: Vec<Rect>,
    stats: BTreeMap<String, Stat>,
    half_angle: f64,
    laws: i64,
    c4: i64,
}

#[derive(Default, Clone)]
struct Piece {
    at: Pt,
    side: String,
    mediums_lost: i64,
    smalls_lost: i64,
    pinned: bool,
    confirmed: bool,
    dust: bool,
}

impl Street {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let mut houses = Vec::new();
        for (name, r) in super::log::features(ir, board, assumed) {
            if name == "masonry_building" {
                houses.push((r[0], r[1], r[2], r[3]));
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
        let num = |k: &str| -> i64 {
            assumed
                .get(k)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("{k} is assumed"))
        };
        Street {
            houses,
            stats,
            half_angle: num("recoilless_rifle.cone_half_angle") as f64,
            laws: num("breach_kit.laws"),
            c4: num("breach_kit.c4"),
        }
    }

    fn real(&self, label: &str) -> bool {
        self.stats.get(entity(label)).is_some_and(|s| !s.dummy)
    }

    fn stands(&self, p: &Piece, label: &str) -> i64 {
        let s = &self.stats[entity(label)];
        (s.mediums - p.mediums_lost).max(0) + (s.smalls - p.smalls_lost).max(0)
    }

    fn house_of(&self, p: Pt, grow: f64) -> Option<usize> {
        self.houses.iter().position(|h| inside(h, p, grow))
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        let evs: Vec<Value> = text
            .lines()
            .skip(1)
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let mut pieces: BTreeMap<String, Piece> = BTreeMap::new();
        let mut breaches: BTreeMap<String, i64> = BTreeMap::new();
        for (i, ev) in evs.iter().enumerate() {
            let kind = ev["event"].as_str().unwrap_or_default();
            match kind {
                "deployed" | "entered" => {
                    let label = ev["piece"].as_str().unwrap_or_default().to_string();
                    let p = pieces.entry(label).or_default();
                    p.at = point_f64(&ev["at"]).unwrap_or_default();
                    p.side = ev["side"].as_str().unwrap_or_default().to_string();
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
                "marked" | "unmarked" => {
                    if let Some(p) = ev["piece"].as_str().and_then(|l| pieces.get_mut(l)) {
                        let on = kind == "marked";
                        match ev["marker"].as_str().unwrap_or_default() {
                            "pinned_marker" => p.pinned = on,
                            "confirmed_contact" => p.confirmed = on,
                            "dust_cloud" => p.dust = on,
                            _ => {}
                        }
                    }
                }
                "acted" => {
                    // 5.8.A rule 2: the dust dissipates at the start of the next impulse.
                    let left: Vec<&String> = pieces
                        .iter()
                        .filter(|(_, p)| p.dust)
                        .map(|(l, _)| l)
                        .collect();
                    r.check(
                        "5.8.A rule 2: the dust cloud is gone when the next impulse starts",
                        (!left.is_empty()).then(|| format!("dust still on {left:?} at event {i}")),
                    );
                    let action = ev["action"].as_str().unwrap_or_default();
                    let a = args(ev);
                    let end = (i + 1..evs.len())
                        .find(|&j| evs[j]["event"] == "decision" || evs[j]["event"] == "acted")
                        .unwrap_or(evs.len());
                    let body = &evs[i + 1..end];
                    let held = body.iter().any(|e| {
                        resolved(e, "emergency_initiative_check") && e["result"] == "hold_position"
                    });
                    if action != "recoilless_fire" {
                        r.check(
                            "5.8.A rule 2: the dust cloud is raised only by a recoilless rifle",
                            body.iter()
                                .any(|e| e["event"] == "marked" && e["marker"] == "dust_cloud")
                                .then(|| format!("{action} raised dust (event {i})")),
                        );
                    }
                    match action {
                        "recoilless_fire" if !held => self.rifle(&a, body, i, &pieces, r),
                        "mousehole_breach" if !held => {
                            self.breach(&a, body, i, &pieces, &mut breaches, r)
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }

    /// 5.8.A.
    fn rifle(
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
        let g = gun.at;
        let rear = (bearing(g, target.at) + 180.0) % 360.0;
        // Rule 1: who is in the cone (positions as the order began: the backblast comes
        // before any friend moves).
        let mut must = BTreeSet::new();
        let mut may = BTreeSet::new();
        for (label, p) in pieces {
            if label == &a[0] || p.side != gun.side || !self.real(label) {
                continue;
            }
            let d = dist(g, p.at);
            let off = gap(bearing(g, p.at), rear);
            if d <= CONE - SLACK && off <= self.half_angle - 1.0 {
                must.insert(label.clone());
            }
            if d <= CONE + SLACK && off <= self.half_angle + 1.0 {
                may.insert(label.clone());
            }
        }
        let caught: Vec<usize> = (0..body.len())
            .filter(|&j| resolved(&body[j], "caught_in_backblast"))
            .collect();
        let named: BTreeSet<String> = caught
            .iter()
            .filter_map(|&j| args(&body[j]).first().cloned())
            .collect();
        let missing: Vec<_> = must.difference(&named).collect();
        let extra: Vec<_> = named.difference(&may).collect();
        r.check(
            "5.8.A rule 1: every friendly stand in the 2in cone behind the breech is attacked, and no other",
            (!missing.is_empty() || !extra.is_empty()).then(|| {
                format!("cone of {} at event {i}: missing {missing:?}, outside {extra:?}", a[0])
            }),
        );
        // Each caught element: one 2-dice attack per stand, saves 5+, then its pinning test.
        let dust_at = body
            .iter()
            .position(|e| e["event"] == "marked" && e["marker"] == "dust_cloud")
            .unwrap_or(body.len());
        for (k, &j) in caught.iter().enumerate() {
            let label = args(&body[j]).first().cloned().unwrap_or_default();
            let Some(p) = pieces.get(&label) else {
                continue;
            };
            let stop = caught.get(k + 1).copied().unwrap_or(dust_at);
            let seg = &body[j + 1..stop];
            let attacks: Vec<&Value> = seg.iter().filter(|e| resolved(e, "backblast")).collect();
            let want = self.stands(p, &label);
            r.check(
                "5.8.A rule 1: one attack per stand caught",
                (attacks.len() as i64 != want).then(|| {
                    format!(
                        "{label}: {} attacks for {want} stands (event {i})",
                        attacks.len()
                    )
                }),
            );
            for e in &attacks {
                let f = faces(e);
                let hits = f
                    .iter()
                    .take(BLAST_DICE)
                    .filter(|&&x| x >= BLAST_HIT)
                    .count();
                let saves = f
                    .iter()
                    .skip(BLAST_DICE)
                    .filter(|&&x| x >= BLAST_SAVE)
                    .count();
                let result: i64 = e["result"]
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(-1);
                let bad = f.len() != BLAST_DICE + hits || result != (hits - saves) as i64;
                r.check(
                    "5.8.A rule 1: 2 firepower dice at 4+, each hit saved on 5+",
                    bad.then(|| {
                        format!("backblast on {label}: dice {f:?}, result {result} (event {i})")
                    }),
                );
            }
            let died = seg
                .iter()
                .any(|e| e["event"] == "eliminated" && e["piece"] == label.as_str());
            if !died {
                let tested = seg.iter().any(|e| resolved(e, "morale_test"));
                r.check(
                    "5.8.A rule 1: an element caught in the cone takes a pinning test",
                    (!tested).then(|| format!("{label} took no pinning test (event {i})")),
                );
            }
        }
        // Rule 2: the cloud on the firer, lifted at the end of the order.
        let placed = body.iter().any(|e| {
            e["event"] == "marked" && e["marker"] == "dust_cloud" && e["piece"] == a[0].as_str()
        });
        let lifted = body.iter().any(|e| {
            e["event"] == "unmarked" && e["marker"] == "dust_cloud" && e["piece"] == a[0].as_str()
        });
        r.check(
            "5.8.A rule 2: a dust cloud is placed on the firing stand and lifted as its impulse ends",
            (!placed || !lifted).then(|| format!("{} fired: dust placed {placed}, lifted {lifted} (event {i})", a[0])),
        );
        // The sprints under the cloud: positions change as they go.
        let mut at: BTreeMap<String, Pt> = pieces.iter().map(|(l, p)| (l.clone(), p.at)).collect();
        let mut pinned: BTreeSet<String> = pieces
            .iter()
            .filter(|(_, p)| p.pinned)
            .map(|(l, _)| l.clone())
            .collect();
        let mut hidden: BTreeSet<String> = pieces
            .iter()
            .filter(|(l, p)| p.side != gun.side && !p.confirmed && self.real(l))
            .map(|(l, _)| l.clone())
            .collect();
        let mut j = 0;
        while j < body.len() {
            let e = &body[j];
            match e["event"].as_str().unwrap_or_default() {
                "moved" => {
                    if let (Some(l), Some(to)) = (e["piece"].as_str(), point_f64(&e["to"])) {
                        at.insert(l.to_string(), to);
                    }
                }
                "marked" if e["marker"] == "pinned_marker" => {
                    pinned.insert(e["piece"].as_str().unwrap_or_default().to_string());
                }
                _ => {}
            }
            if !resolved(e, "dash_under_dust") {
                j += 1;
                continue;
            }
            let x = args(e).first().cloned().unwrap_or_default();
            let far: f64 = args(e).get(1).and_then(|s| s.parse().ok()).unwrap_or(0.0);
            let friend = pieces.get(&x).is_some_and(|p| p.side == gun.side);
            r.check(
                "5.8.A rule 2: a friendly unpinned element other than the firer sprints, at most 9in",
                (x == a[0] || !friend || pinned.contains(&x) || far > SPRINT + SLACK)
                    .then(|| format!("dash of {x} ({:.1}in) after {}'s fire (event {i})", far / INCH, a[0])),
            );
            // Its midpoint: the first move of the sprinter after the dash begins.
            let stop = (j + 1..body.len())
                .find(|&k| {
                    resolved(&body[k], "dash_under_dust")
                        || body[k]["event"] == "unmarked" && body[k]["marker"] == "dust_cloud"
                })
                .unwrap_or(body.len());
            let mid = body[j + 1..stop]
                .iter()
                .find(|m| m["event"] == "moved" && m["piece"] == x.as_str())
                .and_then(|m| point_f64(&m["to"]));
            // Who springs on it: the hidden elements revealed after a token is spent.
            let mut sprung = BTreeSet::new();
            for k in j + 1..stop {
                let m = &body[k];
                if m["event"] == "marked"
                    && m["marker"] == "confirmed_contact"
                    && hidden.contains(m["piece"].as_str().unwrap_or_default())
                {
                    let l = m["piece"].as_str().unwrap_or_default().to_string();
                    // An ambush fires: a hit roll follows before the next dash.
                    if body[k + 1..stop].iter().any(|h| resolved(h, "hit_roll")) {
                        sprung.insert(l.clone());
                    }
                    hidden.remove(&l);
                }
            }
            // Its noise (4.2): an enemy blind made an echo as it ends its sprint saw it, so
            // not through the cloud.
            let last = body[j + 1..stop]
                .iter()
                .filter(|m| m["event"] == "moved" && m["piece"] == x.as_str())
                .filter_map(|m| point_f64(&m["to"]))
                .next_back();
            if let Some(last) = last {
                for m in &body[j + 1..stop] {
                    let y = m["piece"].as_str().unwrap_or_default();
                    let enemy = pieces.get(y).is_some_and(|p| p.side != gun.side);
                    if m["event"] == "marked" && m["marker"] == "echo_marker" && enemy {
                        let Some(&ya) = at.get(y) else { continue };
                        let d = seg_dist(ya, last, g);
                        r.check(
                            "5.8.A rule 2: no enemy sees or fires through the dust at a sprint it masks",
                            (d < DUST - SLACK).then(|| {
                                format!("{y} saw {x} through the dust of {} (event {i})", a[0])
                            }),
                        );
                    }
                }
            }
            if let Some(mid) = mid {
                for h in hidden.iter().chain(sprung.iter()) {
                    let Some(&ha) = at.get(h) else { continue };
                    let d = seg_dist(ha, mid, g);
                    if d < DUST - SLACK {
                        r.check(
                            "5.8.A rule 2: no enemy sees or fires through the dust at a sprint it masks",
                            sprung
                                .contains(h)
                                .then(|| format!("{h} fired at {x} through the dust of {} (event {i})", a[0])),
                        );
                    }
                }
            }
            j += 1;
        }
    }

    /// 5.8.B.
    fn breach(
        &self,
        a: &[String],
        body: &[Value],
        i: usize,
        pieces: &BTreeMap<String, Piece>,
        breaches: &mut BTreeMap<String, i64>,
        r: &mut Report,
    ) {
        let Some(e) = pieces.get(&a[0]) else {
            return;
        };
        let sapper = entity(&a[0]) == "engineer_team";
        let wall = self.house_of(e.at, CONTACT + SLACK);
        let within = self.house_of(e.at, -SLACK);
        r.check(
            "5.8.B rule 1: the breacher is in base contact with a masonry wall",
            (wall.is_none() || within.is_some()).then(|| {
                format!(
                    "{} breached from ({:.0}, {:.0}) (event {i})",
                    a[0], e.at.0, e.at.1
                )
            }),
        );
        let used = breaches.entry(a[0].clone()).or_default();
        *used += 1;
        let carried = if sapper {
            self.c4
        } else if entity(&a[0]) == "usmc_rifle_squad" {
            self.laws
        } else {
            0
        };
        r.check(
            "5.8.B rule 1: a LAW or C4 charge is used, no more than carried",
            (*used > carried || e.pinned).then(|| {
                format!(
                    "{} breach {used} of {carried}, pinned {} (event {i})",
                    a[0], e.pinned
                )
            }),
        );
        let Some(roll) = body.iter().find(|x| resolved(x, "breach_roll")) else {
            return;
        };
        let face = faces(roll).first().copied().unwrap_or(0);
        let need = if sapper { BREACH_SAPPERS } else { BREACH };
        let ok = face >= need;
        let said = roll["result"] == "wall_breached";
        r.check(
            "5.8.B rule 2: 1D6, the wall is breached on 4+ (3+ for engineers)",
            (ok != said
                || args(roll).first().map(String::as_str)
                    != Some(if sapper { "true" } else { "false" }))
            .then(|| format!("{} rolled {face}: {} (event {i})", a[0], roll["result"])),
        );
        // Rule 3: through the wall, into that building, and the surprise.
        let through = body
            .iter()
            .find(|m| m["event"] == "moved" && m["piece"] == a[0].as_str())
            .and_then(|m| point_f64(&m["to"]));
        let surprised: Vec<usize> = (0..body.len())
            .filter(|&j| resolved(&body[j], "surprised"))
            .collect();
        r.check(
            "5.8.B rule 3: only a blown mousehole lets the breachers through, into that building",
            match through {
                Some(p) => {
                    (!said || self.house_of(p, SLACK) != wall || dist(p, e.at) > 3.0 * INCH + SLACK)
                        .then(|| {
                            format!(
                                "{} went through to ({:.0}, {:.0}) (event {i})",
                                a[0], p.0, p.1
                            )
                        })
                }
                None => (!surprised.is_empty())
                    .then(|| format!("surprise without entering (event {i})")),
            },
        );
        let Some(p) = through else {
            return;
        };
        for &j in &surprised {
            let t = args(&body[j]).first().cloned().unwrap_or_default();
            let in_room = pieces.get(&t).is_some_and(|d| {
                self.house_of(d.at, SLACK) == wall && self.house_of(p, SLACK) == wall
            });
            // The next resolutions: the two assault rolls at 4+, with no defensive volley (a
            // hit roll at another target, or a save) before them.
            let next: Vec<&Value> = body[j + 1..]
                .iter()
                .filter(|x| x["event"] == "resolved")
                .take(2)
                .collect();
            let clean = next.len() == 2
                && next.iter().all(|x| {
                    x["name"] == "hit_roll"
                        && args(x).get(1).map(String::as_str) == Some(ASSAULT_HIT)
                });
            r.check(
                "5.8.B rule 3: defenders in the room get no defensive fire before the assault",
                (!in_room || !clean).then(|| {
                    format!(
                        "surprise on {t} (in room {in_room}): next {:?} (event {i})",
                        next.iter()
                            .map(|x| x["name"].to_string())
                            .collect::<Vec<_>>()
                    )
                }),
            );
        }
    }
}
