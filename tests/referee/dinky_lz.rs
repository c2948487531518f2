//! Referee for Dinky Dau's heliborne insertion in the hot LZ scenario (3.1 items 2-3, 6.3
//! items 7-9), written from the book apart from the engine: it reads the log as text (JSON
//! lines), the scenario's table, LZ and set-up areas from the compiled rules (as JSON data)
//! and the scenario's assumptions.
//!
//! Checked per game:
//! - 3.1 item 3: every Huey is set up on the LZ (the allied set-up area) and the platoon is
//!   there, or back aboard a Huey waved off, when Turn 1's engagement begins; a Huey waved off
//!   comes in again within 4in of the LZ's centre.
//! - 3.1 item 2 (the scenario's reading): the insurgent sets up 12-18in from the LZ's centre.
//! - 6.3 items 7-8 at the insertion (the scenario's reading): each Huey touching down, in the
//!   order the platoon was set up, takes the Hot LZ roll exactly when a real, unpinned
//!   insurgent element within 12in sees it (4.1 woodline cut-offs), and every such element is
//!   revealed (it fires); none else is. Under the option `cold_insertion` no Huey of the
//!   insertion takes the roll.
//! - 6.3 item 8: the table, 1 waved off / 2-4 scratches / 5 co-pilot hit / 6 shot down, on the
//!   modified roll; a result below 1 is the assumed one; a Huey waved off goes back aboard.
//! - 6.3 item 9: with the Cobra on station every Hot LZ roll takes -2; every element that
//!   fired on the Huey (at the insertion) or threatened the Dustoff is strafed once, with 4
//!   dice at its own cover and save, and nothing else is.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{Report, constant, entity, features, length_inside, point, within};

const INCH: i64 = 254;
/// 6.3 item 8: "within 12\"".
const HOT_LZ_RANGE: i64 = 12 * INCH;
/// 6.3 item 9: "a -2 penalty to the Hot LZ roll".
const COBRA_MOD: i64 = -2;
/// 6.3 item 9: "a free 4 Firepower dice reaction volley".
const COBRA_DICE: usize = 4;
/// 3.1 item 2: "within 12\" to 18\" of each other".
const SEPARATION: (i64, i64) = (12 * INCH, 18 * INCH);
/// 4.1: open ground sees 24in; "3\" bamboo / triple canopy".
const SIGHT_OPEN: i64 = 24 * INCH;
const SIGHT_DENSE: i64 = 3 * INCH;
/// The scenario's reading: a Huey waved off comes in again within 4in of the LZ's centre.
const RELAND: i64 = 4 * INCH;

#[derive(Clone, Default)]
struct Piece {
    side: String,
    entity: String,
    at: (i64, i64),
    markers: BTreeSet<String>,
    aboard: bool,
    order: usize,
}

pub struct Lz {
    centre: (i64, i64),
    lz: [f64; 4],
    dense: Vec<[f64; 4]>,
    scrub: Vec<[f64; 4]>,
    scrub_sight: i64,
    dense_save: String,
    dummies: BTreeSet<String>,
    below_table: String,
    cold: bool,
}

fn inside(r: &[f64; 4], p: (i64, i64)) -> bool {
    let (x, y) = (p.0 as f64, p.1 as f64);
    x >= r[0] && x <= r[2] && y >= r[1] && y <= r[3]
}

/// 6.3 item 8 as printed, on the modified roll.
fn hot_lz(total: i64) -> &'static str {
    match total {
        1 => "waved_off",
        2..=4 => "fuselage_scratches",
        5 => "co_pilot_turbine_hit",
        _ => "shot_down",
    }
}

/// A landing in progress: the Huey, the elements that fire on it, what was seen so far.
struct Landing {
    huey: String,
    gunners: Vec<String>,
    rolled: Option<String>,
    strafes: usize,
    withdrawn: bool,
    dustoff: bool,
}

impl Lz {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let (mut dense, mut scrub) = (Vec::new(), Vec::new());
        for (name, r) in features(ir, board, assumed) {
            match name.as_str() {
                "dense_jungle" => dense.push(r),
                "secondary_jungle" => scrub.push(r),
                _ => {}
            }
        }
        let centre = sc["blocks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| b["keyword"] == "neutral")
            .and_then(|b| {
                let at = super::log::prop(b, "at");
                let xy: Vec<i64> = at
                    .first()?
                    .1
                    .get("List")?
                    .as_array()?
                    .iter()
                    .filter_map(|v| constant(ir, v, assumed)?.as_i64())
                    .collect();
                (xy.len() == 2).then(|| (xy[0], xy[1]))
            })
            .expect("the LZ marker's place");
        let lz = board["blocks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| b["keyword"] == "area" && b["name"] == "lz")
            .map(|b| {
                let r: Vec<f64> = super::log::prop(b, "rect")
                    .iter()
                    .filter_map(|(_, v)| constant(ir, v, assumed).and_then(|c| c.as_f64()))
                    .collect();
                [r[0], r[1], r[2], r[3]]
            })
            .expect("the LZ set-up area");
        let mut dummies = BTreeSet::new();
        for e in ir["entities"].as_array().unwrap() {
            let role = e["fields"]
                .as_array()
                .and_then(|fs| fs.iter().find(|f| f[0] == "role"))
                .and_then(|f| constant(ir, &f[1], assumed));
            if role.as_ref().and_then(Value::as_str) == Some("dummy_blind") {
                dummies.insert(e["name"].as_str().unwrap_or_default().to_string());
            }
        }
        let key = format!("scenario.{scenario}.options");
        Lz {
            centre,
            lz,
            dense,
            scrub,
            scrub_sight: assumed
                .get("secondary_jungle.los_cutoff")
                .and_then(|v| super::log::length(v))
                .expect("the assumed scrub cut-off"),
            dense_save: assumed
                .get("dense_jungle.save")
                .cloned()
                .expect("the assumed dense jungle save"),
            dummies,
            below_table: assumed
                .get("hot_lz_ground_fire")
                .cloned()
                .expect("the assumed result below the table"),
            cold: assumed
                .get(&key)
                .is_some_and(|o| o.contains("cold_insertion")),
        }
    }

    fn length_in(rects: &[[f64; 4]], a: (i64, i64), b: (i64, i64)) -> f64 {
        rects
            .iter()
            .map(|r| {
                length_inside(
                    (r[0], r[1], r[2], r[3]),
                    (a.0 as f64, a.1 as f64),
                    (b.0 as f64, b.1 as f64),
                )
            })
            .sum()
    }

    /// 4.1: how far the line between a and b may reach (the woodline rule: more than 1in
    /// inside a feature cuts it off at that terrain's limit).
    fn sight(&self, a: (i64, i64), b: (i64, i64)) -> i64 {
        let edge = INCH as f64;
        if Self::length_in(&self.dense, a, b) > edge {
            SIGHT_DENSE
        } else if Self::length_in(&self.scrub, a, b) > edge {
            self.scrub_sight
        } else {
            SIGHT_OPEN
        }
    }

    fn sees(&self, a: (i64, i64), b: (i64, i64)) -> bool {
        within(a, b, self.sight(a, b))
    }

    /// 5.1 steps 2-3 by the target's terrain: (to-hit cover, save grade).
    fn cover(&self, p: (i64, i64)) -> (&str, &str) {
        if self.dense.iter().any(|r| inside(r, p)) {
            ("medium_cover", self.dense_save.as_str())
        } else if self.scrub.iter().any(|r| inside(r, p)) {
            ("medium_cover", "light_medium")
        } else {
            ("no_cover", "open_ground")
        }
    }

    /// 6.3 item 8 at the insertion (reading): real, unpinned insurgent elements within 12in
    /// that see the Huey, blind or not, in the order they were set up.
    fn gunners(&self, huey: (i64, i64), pieces: &BTreeMap<String, Piece>) -> Vec<String> {
        let mut g: Vec<(usize, String)> = pieces
            .iter()
            .filter(|(_, p)| {
                p.side == "insurgent"
                    && !p.aboard
                    && !self.dummies.contains(&p.entity)
                    && !p.markers.contains("pinned_marker")
                    && within(p.at, huey, HOT_LZ_RANGE)
                    && self.sees(p.at, huey)
            })
            .map(|(n, p)| (p.order, n.clone()))
            .collect();
        g.sort();
        g.into_iter().map(|(_, n)| n).collect()
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        let evs: Vec<Value> = text
            .lines()
            .skip(1)
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let mut pieces: BTreeMap<String, Piece> = BTreeMap::new();
        let mut turn = 0u32;
        let mut tension = false;
        let mut deployed = 0usize;
        // Hueys still to touch down this Tension phase, in the order the platoon was set up.
        let mut queue: Vec<String> = Vec::new();
        let mut landing: Option<Landing> = None;
        for (n, ev) in evs.iter().enumerate() {
            let kind = ev["event"].as_str().unwrap_or_default();
            let s = |k: &str| ev[k].as_str().unwrap_or_default().to_string();
            // A new Hot LZ episode, a dustoff, or the end of the phase closes the one open.
            let opens = tension
                && ((kind == "marked" && s("marker") == "confirmed_contact")
                    || (kind == "resolved" && s("name") == "hot_lz_ground_fire")
                    || (kind == "unmarked" && s("marker") == "target_marker"));
            let closes_all = matches!(kind, "phase" | "turn" | "end");
            if (opens && landing.as_ref().is_some_and(|l| l.rolled.is_some()))
                || (closes_all && landing.is_some())
            {
                self.close(landing.take(), r, n);
            }
            if tension
                && (closes_all || (kind == "unmarked" && s("marker") == "target_marker"))
                && landing.is_none()
            {
                // Every Huey left lands unopposed: none may have been threatened.
                self.drain(&mut queue, &pieces, r, n);
            }
            match kind {
                "turn" => {
                    turn = ev["turn"].as_u64().unwrap_or(0) as u32;
                }
                "phase" => {
                    let name = s("phase");
                    let was_tension = tension;
                    tension = name.contains("Tension");
                    if tension {
                        queue.clear();
                        let mut order: Vec<(usize, String)> = pieces
                            .iter()
                            .filter(|(_, p)| p.side == "allied" && (p.aboard || turn == 1))
                            .map(|(l, p)| (p.order, l.clone()))
                            .collect();
                        order.sort();
                        queue = order.into_iter().map(|(_, l)| l).collect();
                    }
                    if was_tension && turn == 1 && name.contains("Engagement") {
                        for (l, p) in &pieces {
                            if p.side == "allied" {
                                r.check(
                                    "3.1 item 3: the platoon is on the LZ (or back aboard) when Turn 1's engagement begins",
                                    (!p.aboard && !inside(&self.lz, p.at)).then(|| {
                                        format!("{l} at {:?} (event {n})", p.at)
                                    }),
                                );
                            }
                        }
                    }
                }
                "deployed" => {
                    let label = s("piece");
                    let at = point(&ev["at"]).unwrap_or_default();
                    let side = s("side");
                    if side == "allied" {
                        r.check(
                            "3.1 item 3: every Huey is set up on the LZ",
                            (!inside(&self.lz, at)).then(|| format!("{label} at {at:?}")),
                        );
                    } else if side == "insurgent" {
                        r.check(
                            "3.1 item 2: the insurgent sets up 12-18in from the LZ",
                            (within(at, self.centre, SEPARATION.0 - 1)
                                || !within(at, self.centre, SEPARATION.1))
                            .then(|| format!("{label} at {at:?}")),
                        );
                    }
                    deployed += 1;
                    pieces.insert(
                        label.clone(),
                        Piece {
                            side,
                            entity: entity(&label).to_string(),
                            at,
                            order: deployed,
                            ..Piece::default()
                        },
                    );
                }
                "entered" => {
                    let label = s("piece");
                    let at = point(&ev["at"]).unwrap_or_default();
                    r.check(
                        "3.1 item 3: a Huey waved off comes in again within 4in of the LZ, the next turn",
                        (!within(at, self.centre, RELAND) || !tension)
                            .then(|| format!("{label} at {at:?} (event {n})")),
                    );
                    if let Some(p) = pieces.get_mut(&label) {
                        p.at = at;
                        p.aboard = false;
                    }
                }
                "withdrawn" => {
                    let label = s("piece");
                    let ok = landing.as_ref().is_some_and(|l| {
                        l.huey == label && l.rolled.as_deref() == Some("waved_off") && !l.dustoff
                    });
                    if let Some(l) = landing.as_mut() {
                        l.withdrawn = true;
                    }
                    r.check(
                        "6.3 item 8: only a Huey waved off goes back aboard",
                        (!ok).then(|| format!("{label} (event {n})")),
                    );
                    if let Some(p) = pieces.get_mut(&label) {
                        p.aboard = true;
                    }
                }
                "moved" => {
                    if let (Some(p), Some(to)) = (pieces.get_mut(&s("piece")), point(&ev["to"])) {
                        p.at = to;
                    }
                }
                "eliminated" => {
                    let label = s("piece");
                    self.strafe_target(&landing, &label, r, n);
                    pieces.remove(&label);
                }
                "marked" | "unmarked" => {
                    let label = s("piece");
                    let marker = s("marker");
                    if tension && kind == "marked" && marker == "confirmed_contact" {
                        if landing.is_none() {
                            landing = self.advance(&mut queue, &pieces);
                        }
                        let ok = landing
                            .as_ref()
                            .is_some_and(|l| !l.dustoff && l.gunners.contains(&label));
                        r.check(
                            "6.3 item 9 (reading): an element revealed at touchdown is one that fires on the Huey",
                            (!ok).then(|| format!("{label} (event {n})")),
                        );
                    }
                    if tension
                        && kind == "unmarked"
                        && marker == "target_marker"
                        && let Some(e) = pieces.get(&label)
                    {
                        // 6.3 item 8 at the Dustoff: the confirmed, unpinned enemies within
                        // 12in that see it.
                        let gunners: Vec<String> = {
                            let mut g: Vec<(usize, String)> = pieces
                                .iter()
                                .filter(|(_, p)| {
                                    p.side == "insurgent"
                                        && !p.aboard
                                        && p.markers.contains("confirmed_contact")
                                        && !p.markers.contains("pinned_marker")
                                        && within(p.at, e.at, HOT_LZ_RANGE)
                                        && self.sees(p.at, e.at)
                                })
                                .map(|(n, p)| (p.order, n.clone()))
                                .collect();
                            g.sort();
                            g.into_iter().map(|(_, n)| n).collect()
                        };
                        if !gunners.is_empty() {
                            landing = Some(Landing {
                                huey: label.clone(),
                                gunners,
                                rolled: None,
                                strafes: 0,
                                withdrawn: false,
                                dustoff: true,
                            });
                        }
                    }
                    if kind == "marked" && (marker == "casualty_ring" || marker == "pinned_marker")
                    {
                        self.strafe_target(&landing, &label, r, n);
                    }
                    if let Some(p) = pieces.get_mut(&label) {
                        if kind == "marked" {
                            p.markers.insert(marker);
                        } else {
                            p.markers.remove(&marker);
                        }
                    }
                }
                "resolved" => {
                    let name = s("name");
                    let dice: Vec<i64> = ev["dice"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|d| d["face"].as_i64())
                        .collect();
                    let args: Vec<String> = ev["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| a.as_str().unwrap_or_default().to_string())
                        .collect();
                    let result = s("result");
                    if name == "hot_lz_ground_fire" {
                        if landing.is_none() && tension {
                            landing = self.advance(&mut queue, &pieces);
                        }
                        r.check(
                            "6.3 item 8: a Hot LZ roll only for a Huey an enemy threatens",
                            landing
                                .is_none()
                                .then(|| format!("a roll with no threatened Huey (event {n})")),
                        );
                        if self.cold {
                            r.check(
                                "cold_insertion: no Huey of the insertion takes the Hot LZ roll",
                                landing
                                    .as_ref()
                                    .is_some_and(|l| !l.dustoff)
                                    .then(|| format!("event {n}")),
                            );
                        }
                        let cobra = args.first().is_some_and(|a| a == "true");
                        r.check(
                            "6.3 item 9: the Cobra's -2 is taken at every Hot LZ roll",
                            (!cobra).then(|| format!("{args:?} (event {n})")),
                        );
                        let face = dice.first().copied().unwrap_or(0);
                        let total = face + if cobra { COBRA_MOD } else { 0 };
                        let want = if total < 1 {
                            self.below_table.as_str()
                        } else {
                            hot_lz(total)
                        };
                        r.check(
                            "6.3 item 8: Hot LZ 1 / 2-4 / 5 / 6 on the modified roll",
                            (dice.len() != 1 || result != want)
                                .then(|| format!("{dice:?} {args:?} = {result} (event {n})")),
                        );
                        if total < 1 {
                            r.check(
                                "6.3 item 9: a modified roll below 1 reads as assumed",
                                (result != self.below_table)
                                    .then(|| format!("{dice:?} = {result} (event {n})")),
                            );
                        }
                        if landing.as_ref().is_some_and(|l| !l.dustoff) {
                            r.check(
                                "6.3 item 8 (reading): an insertion Huey takes the Hot LZ roll",
                                None,
                            );
                        } else if landing.is_some() {
                            r.check("6.3 item 8: a Dustoff takes the Hot LZ roll", None);
                        }
                        if let Some(l) = landing.as_mut() {
                            l.rolled = Some(result.clone());
                        }
                    }
                    if name == "cobra_retaliation" {
                        let target = landing.as_ref().and_then(|l| {
                            (l.rolled.is_some())
                                .then(|| l.gunners.get(l.strafes).cloned())
                                .flatten()
                        });
                        r.check(
                            "6.3 item 9: only an element that fired on the helicopter is strafed",
                            target
                                .is_none()
                                .then(|| format!("a strafe with no gunner left (event {n})")),
                        );
                        let (cover, save) = target
                            .as_ref()
                            .and_then(|t| pieces.get(t))
                            .map(|p| self.cover(p.at))
                            .unwrap_or(("?", "?"));
                        r.check(
                            "6.3 item 9: the strafe is rolled at the target's own cover and save",
                            (args.first().map(String::as_str) != Some(cover)
                                || args.get(1).map(String::as_str) != Some(save))
                            .then(|| {
                                format!("{target:?}: {args:?}, want {cover} / {save} (event {n})")
                            }),
                        );
                        // 5.1 steps 2-3: 4+ in the open, 5+ in medium cover, 6+ in heavy;
                        // saves 6+ open, 5+ light / medium, 4+ prepared.
                        let to_hit = match args.first().map(String::as_str) {
                            Some("no_cover") => 4,
                            Some("medium_cover") => 5,
                            _ => 6,
                        };
                        let save_on = match args.get(1).map(String::as_str) {
                            Some("open_ground") => 6,
                            Some("light_medium") => 5,
                            _ => 4,
                        };
                        let hits = dice
                            .iter()
                            .take(COBRA_DICE)
                            .filter(|&&f| f >= to_hit)
                            .count();
                        let saves = dice
                            .iter()
                            .skip(COBRA_DICE)
                            .filter(|&&f| f >= save_on)
                            .count();
                        r.check(
                            "6.3 item 9: the free volley is 4 dice, one save die a hit",
                            (dice.len() != COBRA_DICE + hits
                                || result.parse::<usize>().ok() != Some(hits - saves))
                            .then(|| format!("{dice:?} {args:?} = {result} (event {n})")),
                        );
                        if let Some(l) = landing.as_mut() {
                            l.strafes += 1;
                        }
                    }
                }
                _ => {}
            }
        }
        if landing.is_some() {
            self.close(landing.take(), r, evs.len());
        }
    }

    /// The next Huey of the queue an enemy threatens (those before it land unopposed).
    fn advance(
        &self,
        queue: &mut Vec<String>,
        pieces: &BTreeMap<String, Piece>,
    ) -> Option<Landing> {
        while !queue.is_empty() {
            let h = queue.remove(0);
            let Some(p) = pieces.get(&h) else { continue };
            if p.aboard {
                continue;
            }
            let gunners = self.gunners(p.at, pieces);
            if gunners.is_empty() || self.cold {
                continue;
            }
            return Some(Landing {
                huey: h,
                gunners,
                rolled: None,
                strafes: 0,
                withdrawn: false,
                dustoff: false,
            });
        }
        None
    }

    /// The Hueys left land unopposed: an enemy that threatens one is a roll missed.
    fn drain(
        &self,
        queue: &mut Vec<String>,
        pieces: &BTreeMap<String, Piece>,
        r: &mut Report,
        n: usize,
    ) {
        for h in std::mem::take(queue) {
            let Some(p) = pieces.get(&h) else { continue };
            if p.aboard {
                continue;
            }
            let missed = !self.cold && !self.gunners(p.at, pieces).is_empty();
            r.check(
                "6.3 item 8 (reading): a threatened insertion Huey takes the Hot LZ roll",
                missed.then(|| format!("{h} landed with no roll (event {n})")),
            );
        }
    }

    fn close(&self, landing: Option<Landing>, r: &mut Report, n: usize) {
        let Some(l) = landing else { return };
        if l.rolled.is_none() {
            r.check(
                "6.3 item 8: a threatened helicopter takes the Hot LZ roll",
                Some(format!(
                    "{} revealed its gunners but no roll (event {n})",
                    l.huey
                )),
            );
            return;
        }
        r.check(
            "6.3 item 9: every element that fired on the helicopter is strafed, once",
            (l.strafes != l.gunners.len()).then(|| {
                format!(
                    "{}: {} strafes for {:?} (event {n})",
                    l.huey, l.strafes, l.gunners
                )
            }),
        );
        if !l.dustoff {
            let waved = l.rolled.as_deref() == Some("waved_off");
            r.check(
                "6.3 item 8: a Huey waved off goes back aboard",
                (waved != l.withdrawn).then(|| format!("{} (event {n})", l.huey)),
            );
        }
    }

    /// A mark or loss during the strafes lands on an element that fired.
    fn strafe_target(&self, landing: &Option<Landing>, label: &str, r: &mut Report, n: usize) {
        if let Some(l) = landing
            && l.rolled.is_some()
            && l.strafes > 0
        {
            r.check(
                "6.3 item 9: the strafe's hits and pins fall on the element strafed",
                (l.gunners.get(l.strafes - 1).map(String::as_str) != Some(label))
                    .then(|| format!("{label} (event {n})")),
            );
        }
    }
}
