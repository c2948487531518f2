//! Referee for Dinky Dau's vehicles (chapter 7, 5.1 steps 3-4) and fire support (chapter 8,
//! 2.2 items 1-2, 9b.3) in the mechanised sweep, written from the book apart from the engine.
//! It reads the log as text, the table and a few values from the compiled rules as JSON data
//! (the scenario's assumptions for the values the book leaves empty), and writes the book's
//! numbers itself, each with its section. The rest of each game (CP, fog, pools, saves,
//! morale, VP) is the Meeting Engagement referee's (`dinky_dau.rs`).
//!
//! Checked per game:
//! - 8.2 step 1: a fire mission is called by an element with an officer or RTO (the platoon
//!   HQ of 4.2), and a call to a spot out of the caller's sight (4.1: 24in, cut to 3in after
//!   more than 1in in dense jungle or a hootch, to the scrub's assumed cutoff in scrub) is
//!   Unobserved.
//! - 2.2 items 1-2, 8.2 step 2: a mission lands in the Tension phase of the turn its delay die
//!   reaches 0 (called in turn T with the 105mm battery's delay of 2: turn T + 2), never
//!   earlier, and every mission whose turn comes lands.
//! - 8.2 step 3: the scatter roll is one d6, 1-2 on target, else one more d6 (two when
//!   Unobserved) of drift in inches; the marker moves no farther than the drift.
//! - 8.2 step 4: every real element the template touches (its centre within the template's
//!   radius and half a 2in base of the impact point) rolls the asset's dice per stand, and
//!   after a drift also every allied element within 4in more (danger close); nobody else.
//! - 7.3: the AT roll needs 4+, one worse for a vehicle in foliage and one worse for one that
//!   moved this turn or last (both assumed: 7.3.1 prints no values); the save needs the
//!   vehicle's base save (M113 4+, 7.3 example 1) plus the RPG-7's AP 2, less 1 with the RPG
//!   screens of the 7.2 note when the scenario fits them.
//! - 5.1 step 4: the vehicle damage chart by its d6; the hull is damaged only through a
//!   penetration (7.1: small arms never harm it), and goes only on a 5, a 6 or its last HP;
//!   an immobilised vehicle never moves again; no pintle fire while buttoned up (7.1), after a
//!   weapons knockout or while stunned (7.4.1).
//! - 7.4.1: the concussion test only from the second non-penetrating hit in one turn.
//! - 7.6: the squad aboard comes off within 2in of the hull (4in between centres); on a 4 or
//!   5 it comes off pinned and rolls a d6 per stand (a hit on 1-3); on a 6 it dies aboard.
//! - 7.4.1 rule 1 / 5.1 step 3: HE shells are anti-tank weapons: a mission whose template
//!   touches the ACAV (or, after a drift, comes within danger close of it) rolls the asset's
//!   dice once (the vehicle read as one stand) as AT rolls (7.3 step 1, as the RPG's), each hit
//!   saved on the base save plus the shell's AP (assumed; no screens: they stop shaped charges
//!   only), a penetration rolls the damage chart, a saved hit counts toward the concussion
//!   test; the battery is the allied player's own, so no hit of it bails the squad aboard out
//!   (3.4 (second) C: "an enemy hit"), only results 4-6 touch it (7.6.2).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{Ev, Report, constant, dist_rounded as dist, entity, field, point_arg, prop};

type Rect = (i64, i64, i64, i64);

/// Tenths of a millimetre in an inch, as the log counts.
const INCH: i64 = 254;
/// 4.1: open ground sees 24in; dense jungle cuts a line at 3in.
const SIGHT_OPEN: i64 = 24 * INCH;
const SIGHT_DENSE: i64 = 3 * INCH;
/// 8.2 step 2: the 105mm battery's delay (the book's own example).
const DELAY_105: u32 = 2;
/// 8.2 step 3: danger close, 4in.
const DANGER_CLOSE: i64 = 4 * INCH;
/// 7.3 step 1: the AT roll's base 4+; 7.3 examples: M113 4+, RPG-7 AP 2.
const AT_BASE: i64 = 4;
const M113_SAVE: i64 = 4;
const RPG7_AP: i64 = 2;
/// 7.6.1: within 2in of the hull, read between 2in bases: 4in centre to centre.
const DISMOUNT_REACH: i64 = 4 * INCH;

/// Stands of an element, as 4.2 prints them: a squad is two medium stands and its leader,
/// the platoon HQ an officer and an RTO (small stands); dummies have none.
fn stands_of(entity: &str) -> (i64, i64) {
    match entity {
        "cav_rifle_squad" | "nva_rifle_squad" | "nva_rpg_squad" => (2, 1),
        "cav_platoon_hq" => (0, 2),
        _ => (0, 0),
    }
}

fn inside(r: &Rect, p: (i64, i64)) -> bool {
    p.0 >= r.0 && p.0 <= r.2 && p.1 >= r.1 && p.1 <= r.3
}

/// The length of the segment a-b inside the rectangle (Liang-Barsky clipping).
fn clip_len(r: &Rect, a: (i64, i64), b: (i64, i64)) -> f64 {
    let f = |p: (i64, i64)| (p.0 as f64, p.1 as f64);
    super::log::length_inside((r.0 as f64, r.1 as f64, r.2 as f64, r.3 as f64), f(a), f(b))
}

fn at_point(a: &super::log::At) -> Option<(i64, i64)> {
    match a {
        super::log::At::Point(x, y) => Some((*x, *y)),
        _ => None,
    }
}

#[derive(Default, Clone)]
struct Piece {
    at: (i64, i64),
    mediums_lost: i64,
    smalls_lost: i64,
    markers: BTreeSet<String>,
    gone: bool,
    /// Turns in which it moved (7.3.1 target moving).
    moved: BTreeSet<u32>,
}

pub struct Armour {
    terrain: BTreeMap<String, Vec<Rect>>,
    scrub_sight: i64,
    hootch_sight: i64,
    /// 8.2 step 4 (assumed): the template's diameter and the dice per stand.
    template: i64,
    blast_fp: i64,
    /// The cover and moving modifiers of 7.3.1 (assumed, as numbers added to the roll).
    at_cover: i64,
    at_moving: i64,
    screens: bool,
    /// The option that reads 7.6.2 alone: no hasty bailout on a hit that does not penetrate.
    bailout_7_6_only: bool,
    hp: i64,
    /// 7.4.1 rule 1 (assumed, 7.2 not printed): the AP of an HE shell.
    he_ap: i64,
}

impl Armour {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>) -> Self {
        let sc = super::log::config(ir, "scenario", "mech_sweep").expect("the scenario");
        let board = super::log::board(ir, sc);
        let mut terrain: BTreeMap<String, Vec<Rect>> = BTreeMap::new();
        for f in board["blocks"].as_array().into_iter().flatten() {
            if f["keyword"] != "feature" {
                continue;
            }
            let r: Vec<i64> = prop(f, "rect")
                .iter()
                .filter_map(|(_, v)| constant(ir, v, assumed).and_then(|c| c.as_i64()))
                .collect();
            let name = prop(f, "terrain")
                .first()
                .and_then(|(_, v)| v["Const"]["Entity"].as_u64())
                .and_then(|i| ir["entities"][i as usize]["name"].as_str())
                .unwrap_or_default()
                .to_string();
            if r.len() == 4 {
                terrain
                    .entry(name)
                    .or_default()
                    .push((r[0], r[1], r[2], r[3]));
            }
        }
        let int = |e: &str, f: &str| {
            field(ir, e, f, assumed)
                .and_then(|v| v.as_i64())
                .unwrap_or_else(|| panic!("{e}.{f}"))
        };
        let num = |k: &str| {
            assumed
                .get(k)
                .and_then(|v| v.trim().parse::<i64>().ok())
                .unwrap_or_else(|| panic!("{k}"))
        };
        Armour {
            terrain,
            scrub_sight: int("secondary_jungle", "los_cutoff"),
            hootch_sight: int("hootch", "los_cutoff"),
            template: int("battery_105mm", "template"),
            blast_fp: int("battery_105mm", "blast_firepower"),
            at_cover: num("at_to_hit.target_in_cover_value_not_printed"),
            at_moving: num("at_to_hit.target_moving_value_not_printed"),
            screens: assumed
                .get("scenario.mech_sweep.options")
                .is_some_and(|o| o.contains("acav_screens")),
            bailout_7_6_only: assumed
                .get("scenario.mech_sweep.options")
                .is_some_and(|o| o.contains("bailout_7_6_only")),
            hp: int("m113_acav", "hit_points"),
            he_ap: num("he_shell.ap"),
        }
    }

    fn rects(&self, t: &str) -> &[Rect] {
        self.terrain.get(t).map(Vec::as_slice).unwrap_or(&[])
    }

    fn length_in(&self, t: &str, a: (i64, i64), b: (i64, i64)) -> f64 {
        self.rects(t).iter().map(|r| clip_len(r, a, b)).sum()
    }

    /// 4.1: how far the line between a and b may reach.
    fn sight(&self, a: (i64, i64), b: (i64, i64)) -> i64 {
        let edge = INCH as f64;
        if self.length_in("dense_jungle", a, b) > edge {
            SIGHT_DENSE
        } else if self.length_in("secondary_jungle", a, b) > edge {
            self.scrub_sight
        } else if self.length_in("rubber_plantation", a, b) > edge {
            i64::MAX // no plantation on this table
        } else if self.length_in("hootch", a, b) > edge {
            self.hootch_sight
        } else {
            SIGHT_OPEN
        }
    }

    fn foliage(&self, p: (i64, i64)) -> bool {
        [
            "dense_jungle",
            "secondary_jungle",
            "rubber_plantation",
            "hootch",
        ]
        .iter()
        .any(|t| self.rects(t).iter().any(|r| inside(r, p)))
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        let evs = super::log::read(text);
        let mut pieces: BTreeMap<String, Piece> = BTreeMap::new();
        let mut turn = 0u32;
        let mut phase_in_turn = 0u32;
        // Missions called: marker label -> (turn called, out of the caller's sight).
        let mut pending: BTreeMap<String, (u32, bool)> = BTreeMap::new();
        let mut awaiting_marker: Option<(u32, bool)> = None;
        let mut rpg_tn = 0i64;
        let mut reserve_aboard: BTreeSet<String> = BTreeSet::new();
        let mut entered: BTreeSet<String> = BTreeSet::new();
        let mut saved_this_turn = 0;
        let mut scrapes = 0;
        let mut last_vehicle_roll: Option<String> = None;
        let mut last_damage: Option<String> = None;
        let mut acting: Option<(String, Vec<String>)> = None;
        let mut passenger_rolls_due = 0i64;
        let mut bailing: Vec<String> = Vec::new();
        // A bailout owed by the hit just resolved (3.4 (second) C or 7.6.2), and the hasty
        // bailout rolls owed: stands per element come off.
        let mut bail_due: Option<&'static str> = None;
        let mut hasty_due: Vec<i64> = Vec::new();
        // 7.4.1 rule 1: the HE of a mission landing on the ACAV is being resolved (the AT
        // rolls owed, and whether the hull is gone), until the next order or phase.
        let mut he_landing = false;
        for (n, ev) in evs.iter().enumerate() {
            if matches!(
                ev,
                Ev::Acted { .. } | Ev::Phase | Ev::Turn(_) | Ev::End { .. }
            ) {
                he_landing = false;
            }
            match ev {
                Ev::Turn(t) => {
                    self.close_bail(
                        &mut bailing,
                        &mut passenger_rolls_due,
                        &mut bail_due,
                        &mut hasty_due,
                        r,
                        n,
                    );
                    turn = *t;
                    phase_in_turn = 0;
                    saved_this_turn = 0;
                }
                Ev::Phase => {
                    self.close_bail(
                        &mut bailing,
                        &mut passenger_rolls_due,
                        &mut bail_due,
                        &mut hasty_due,
                        r,
                        n,
                    );
                    phase_in_turn += 1;
                }
                Ev::Deployed { piece, at } => {
                    let p = pieces.entry(piece.clone()).or_default();
                    p.at = at_point(at).unwrap_or_default();
                }
                Ev::Moved { piece, to, why, .. } => {
                    let to = at_point(to).unwrap_or_default();
                    if piece.starts_with("fire_mission_marker")
                        && let Some(t) = awaiting_marker.take()
                    {
                        pending.insert(piece.clone(), t);
                    }
                    if entity(piece) == "m113_acav" && why == "vehicle_move" {
                        let p = &pieces[piece];
                        r.check(
                            "5.1 step 4 result 2: an immobilised vehicle never moves again",
                            p.markers
                                .contains("immobilised")
                                .then(|| format!("{piece} moves (event {n})")),
                        );
                    }
                    let p = pieces.entry(piece.clone()).or_default();
                    p.at = to;
                    p.moved.insert(turn);
                }
                Ev::Withdrawn { piece, from, why } => {
                    // 7.6.1: mounting again, the squad's order, within 2in of the hull (4in
                    // between centres) of a carrier on the table whose crew has not bailed
                    // out and that carries no squad; a pinned squad does not mount.
                    let from = from.as_ref().and_then(at_point).unwrap_or_default();
                    let hull = pieces
                        .iter()
                        .find(|(k, p)| entity(k) == "m113_acav" && !p.gone)
                        .map(|(_, p)| (p.at, p.markers.contains("bailed_out")));
                    let pinned = pieces
                        .get(piece)
                        .is_some_and(|p| p.markers.contains("pinned_marker"));
                    r.check(
                        "7.6.1: a squad mounts again within 2in of a carrier with room, unpinned, for its order",
                        (why != "mount_vehicle"
                            || hull.is_none_or(|(h, bailed)| dist(h, from) > DISMOUNT_REACH + 1 || bailed)
                            || !reserve_aboard.is_empty()
                            || pinned)
                            .then(|| format!("{piece} from {from:?}, hull {hull:?}, aboard {reserve_aboard:?}, pinned {pinned} (event {n})")),
                    );
                    reserve_aboard.insert(piece.clone());
                    entered.remove(piece);
                }
                Ev::Entered { piece, at, why } => {
                    let at = at_point(at).unwrap_or_default();
                    let hull = pieces
                        .iter()
                        .find(|(k, _)| entity(k) == "m113_acav")
                        .map(|(_, p)| p.at);
                    // A bailout under a fire mission's HE comes in the Tension phase, from no
                    // order (7.4.1 rule 1).
                    let hit_off = why == "rpg_fire" || (he_landing && why != "mount_dismount");
                    if why == "mount_dismount" || hit_off {
                        r.check(
                            "7.6.1: the squad aboard dismounts within 2in of the hull",
                            hull.filter(|h| dist(*h, at) > DISMOUNT_REACH + 1)
                                .map(|h| format!("{piece} at {at:?}, hull at {h:?} (event {n})")),
                        );
                    }
                    if hit_off && last_damage.as_deref() != Some("catastrophic_kill") {
                        bailing.push(piece.clone());
                        let stands = {
                            let p = pieces.get(piece).cloned().unwrap_or_default();
                            let (m, s) = stands_of(entity(piece));
                            (m - p.mediums_lost).max(0) + (s - p.smalls_lost).max(0)
                        };
                        match bail_due {
                            Some("passenger") => passenger_rolls_due += stands,
                            Some(_) => hasty_due.push(stands.clamp(1, 4)),
                            None => r.check(
                                "3.4 (second) C / 7.6.2: the squad aboard bails out exactly when its carrier is hit",
                                Some(format!("{piece} came off with no hit owing it (event {n})")),
                            ),
                        }
                        if bail_due.is_some() {
                            r.check(
                                "3.4 (second) C / 7.6.2: the squad aboard bails out exactly when its carrier is hit",
                                None,
                            );
                        }
                        bail_due = None;
                    }
                    reserve_aboard.remove(piece);
                    entered.insert(piece.clone());
                    let p = pieces.entry(piece.clone()).or_default();
                    p.at = at;
                }
                Ev::Eliminated { piece } => {
                    if entity(piece) == "m113_acav" {
                        let ok = matches!(
                            last_damage.as_deref(),
                            Some("knocked_out" | "catastrophic_kill")
                        ) || (last_damage.as_deref() == Some("superficial_scrape")
                            && scrapes >= self.hp);
                        r.check(
                            "7.1: small arms never harm the hull; only a penetration damages it",
                            (!ok).then(|| {
                                format!("{piece} eliminated after {last_damage:?} (event {n})")
                            }),
                        );
                    }
                    if let Some(p) = pieces.get_mut(piece) {
                        p.gone = true;
                    }
                }
                Ev::Counted {
                    piece,
                    counter,
                    value,
                } => {
                    let p = pieces.entry(piece.clone()).or_default();
                    match counter.as_str() {
                        "mediums_lost" => p.mediums_lost = *value,
                        "smalls_lost" => p.smalls_lost = *value,
                        _ => {}
                    }
                }
                Ev::Marked {
                    marker,
                    piece: Some(piece),
                    ..
                } => {
                    if entity(piece) == "m113_acav" {
                        let want = match marker.as_str() {
                            "immobilised" => Some("mobility_kill"),
                            "weapons_out" => Some("weapons_knockout"),
                            "bailed_out" => Some("spall_and_bailout"),
                            _ => None,
                        };
                        if let Some(w) = want {
                            r.check(
                                "5.1 step 4: the vehicle damage chart by the d6",
                                (last_damage.as_deref() != Some(w)).then(|| {
                                    format!("{marker} on {piece} after {last_damage:?} (event {n})")
                                }),
                            );
                        }
                        if marker == "stunned_marker" {
                            r.check(
                                "7.4.1: the concussion test only from the second bounce in a turn",
                                (last_vehicle_roll.as_deref() != Some("punch_drunk")).then(|| {
                                    format!("stunned after {last_vehicle_roll:?} (event {n})")
                                }),
                            );
                        }
                    }
                    if marker == "pinned_marker" {
                        bailing.retain(|b| b != piece);
                    }
                    pieces
                        .entry(piece.clone())
                        .or_default()
                        .markers
                        .insert(marker.clone());
                }
                Ev::Unmarked {
                    marker,
                    piece: Some(piece),
                    ..
                } => {
                    if let Some(p) = pieces.get_mut(piece) {
                        p.markers.remove(marker);
                    }
                }
                Ev::Decision => {}
                Ev::Acted { action, args, .. } => {
                    self.close_bail(
                        &mut bailing,
                        &mut passenger_rolls_due,
                        &mut bail_due,
                        &mut hasty_due,
                        r,
                        n,
                    );
                    acting = Some((action.clone(), args.clone()));
                    match action.as_str() {
                        "call_fire_mission" => {
                            let caller = args.first().cloned().unwrap_or_default();
                            r.check(
                                "8.2 step 1: a fire mission is called by the officer or RTO",
                                (entity(&caller) != "cav_platoon_hq")
                                    .then(|| format!("{caller} calls (event {n})")),
                            );
                            let unobserved =
                                match (pieces.get(&caller), args.get(1).and_then(|a| point_arg(a)))
                                {
                                    (Some(c), Some(at)) => dist(c.at, at) > self.sight(c.at, at),
                                    _ => false,
                                };
                            awaiting_marker = Some((turn, unobserved));
                        }
                        "pintle_fire" => {
                            let v = args.first().cloned().unwrap_or_default();
                            let m = &pieces.get(&v).cloned().unwrap_or_default().markers;
                            r.check(
                                "7.1: a buttoned-up gunner fires no pintle weapon",
                                ["buttoned_up", "weapons_out", "stunned_marker"]
                                    .iter()
                                    .find(|k| m.contains(**k))
                                    .map(|k| format!("{v} fires with {k} (event {n})")),
                            );
                        }
                        "rpg_fire" => {
                            let v = args.get(1).cloned().unwrap_or_default();
                            let p = pieces.get(&v).cloned().unwrap_or_default();
                            let moving = p.moved.contains(&turn)
                                || (turn > 1 && p.moved.contains(&(turn - 1)));
                            let tn = (AT_BASE
                                - if self.foliage(p.at) { self.at_cover } else { 0 }
                                - if moving { self.at_moving } else { 0 })
                            .clamp(2, 7);
                            rpg_tn = tn;
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
                    let faces: Vec<i64> = dice.iter().map(|d| d.1).collect();
                    match name.as_str() {
                        "scatter" => {
                            let unobserved = args.first().is_some_and(|a| a == "true");
                            // The mission landing: the first pending marker.
                            let first = pending.iter().next().map(|(k, t)| (k.clone(), *t));
                            if let Some((_, (_, out_of_sight))) = &first {
                                r.check(
                                    "8.2 step 1: a call out of the caller's sight is Unobserved",
                                    (*out_of_sight != unobserved).then(|| {
                                        format!("unobserved {unobserved}, out of sight {out_of_sight} (event {n})")
                                    }),
                                );
                            }
                            r.check(
                                "2.2 items 1-2 / 8.2 step 2: a mission lands when its clock reaches 0",
                                match &first {
                                    Some((_, (t, _))) if *t + DELAY_105 == turn && phase_in_turn == 1 => None,
                                    other => Some(format!(
                                        "scatter in turn {turn} phase {phase_in_turn}, pending {other:?} (event {n})"
                                    )),
                                },
                            );
                            let want_dice = if faces.first().is_some_and(|f| *f <= 2) {
                                1
                            } else if unobserved {
                                3
                            } else {
                                2
                            };
                            let want = if want_dice == 1 {
                                0
                            } else {
                                faces[1..].iter().sum()
                            };
                            r.check(
                                "8.2 step 3: scatter 1-2 on target, else 1D6 (2D6 unobserved)",
                                (faces.len() != want_dice
                                    || result.parse::<i64>().ok() != Some(want))
                                .then(|| {
                                    format!(
                                        "{faces:?} -> {result} unobserved {unobserved} (event {n})"
                                    )
                                }),
                            );
                            let Some((marker, _)) = first else { continue };
                            pending.remove(&marker);
                            let drift: i64 = result.parse().unwrap_or(0);
                            // The marker's drift, then the blast's volleys, up to the turn's CP.
                            let mut at = pieces.get(&marker).map(|p| p.at).unwrap_or_default();
                            let end = (n + 1..evs.len())
                                .find(|&i| {
                                    matches!(&evs[i], Ev::Resolved { name, .. }
                                        if name == "command_points" || name == "scatter")
                                        || matches!(
                                            evs[i],
                                            Ev::Phase | Ev::Turn(_) | Ev::End { .. }
                                        )
                                })
                                .unwrap_or(evs.len());
                            let mut moved_to = None;
                            for e in &evs[n + 1..end] {
                                if let Ev::Moved { piece, to, .. } = e
                                    && *piece == marker
                                {
                                    moved_to = at_point(to);
                                }
                            }
                            if let Some(to) = moved_to {
                                r.check(
                                    "8.2 step 3: the drift moves the template no farther than rolled",
                                    (drift == 0 || dist(at, to) > drift * INCH + 2).then(|| {
                                        format!("{marker} {at:?} -> {to:?}, drift {drift}in (event {n})")
                                    }),
                                );
                                at = to;
                            } else {
                                r.check(
                                    "8.2 step 3: the drift moves the template no farther than rolled",
                                    None,
                                );
                            }
                            // 8.2 step 4: who the template touches.
                            let reach = self.template / 2 + INCH;
                            let close = if drift > 0 { DANGER_CLOSE } else { 0 };
                            let mut want: Vec<i64> = pieces
                                .iter()
                                .filter(|(k, p)| {
                                    let e = entity(k);
                                    let (m, s) = stands_of(e);
                                    !p.gone
                                        && m + s > 0
                                        && !reserve_aboard.contains(*k)
                                        && (dist(p.at, at) <= reach
                                            || (e.starts_with("cav_")
                                                && dist(p.at, at) <= reach + close))
                                })
                                .map(|(k, p)| {
                                    let (m, s) = stands_of(entity(k));
                                    ((m - p.mediums_lost).max(0) + (s - p.smalls_lost).max(0))
                                        * self.blast_fp
                                })
                                .map(|d| d.min(40))
                                .collect();
                            // The stands' blast comes first; a vehicle's HE (and a brew-up's
                            // blast) after its first AT roll.
                            let first_at = (n + 1..end)
                                .find(|&i| matches!(&evs[i], Ev::Resolved { name, .. } if name == "at_hit_roll"))
                                .unwrap_or(end);
                            let mut got: Vec<i64> = evs[n + 1..first_at]
                                .iter()
                                .filter_map(|e| match e {
                                    Ev::Resolved { name, args, .. } if name == "hit_roll" => {
                                        args.first().and_then(|a| a.parse().ok())
                                    }
                                    _ => None,
                                })
                                .collect();
                            want.sort();
                            got.sort();
                            r.check(
                                "8.2 step 4: every stand the template touches takes the dice",
                                (want != got).then(|| {
                                    format!("impact at {at:?}: dice due {want:?}, rolled {got:?} (event {n})")
                                }),
                            );
                            // 7.4.1 rule 1: the ACAV under the template (allied: danger close
                            // too) takes the asset's dice as AT rolls.
                            let acav = pieces
                                .iter()
                                .find(|(k, p)| entity(k) == "m113_acav" && !p.gone)
                                .map(|(k, p)| (k.clone(), p.clone()));
                            let touched = acav
                                .as_ref()
                                .is_some_and(|(_, p)| dist(p.at, at) <= reach + close);
                            let rolls = evs[first_at..end]
                                .iter()
                                .filter(|e| matches!(e, Ev::Resolved { name, .. } if name == "at_hit_roll"))
                                .count() as i64;
                            let destroyed = acav.as_ref().is_some_and(|(k, _)| {
                                evs[first_at..end]
                                    .iter()
                                    .any(|e| matches!(e, Ev::Eliminated { piece } if piece == k))
                            });
                            let due = if touched { self.blast_fp } else { 0 };
                            r.check(
                                if touched {
                                    "7.4.1 rule 1: HE touching a vehicle rolls the asset's dice as AT rolls"
                                } else {
                                    "7.4.1 rule 1: a mission clear of the vehicle rolls no AT roll"
                                },
                                (rolls != due && !(destroyed && rolls > 0 && rolls < due)).then(|| {
                                    format!("impact at {at:?}, ACAV {:?}: {rolls} AT rolls, due {due} (event {n})",
                                        acav.as_ref().map(|(_, p)| p.at))
                                }),
                            );
                            he_landing = touched;
                            if let Some((_, p)) = acav.filter(|_| touched) {
                                let moving = p.moved.contains(&turn)
                                    || (turn > 1 && p.moved.contains(&(turn - 1)));
                                rpg_tn = (AT_BASE
                                    - if self.foliage(p.at) { self.at_cover } else { 0 }
                                    - if moving { self.at_moving } else { 0 })
                                .clamp(2, 7);
                            }
                        }
                        "at_hit_roll" => {
                            let tn = rpg_tn;
                            let face = faces.first().copied().unwrap_or(0);
                            let hit = face >= tn;
                            r.check(
                                "7.3 step 1: the AT roll hits on 4+ with its modifiers",
                                (args.first().and_then(|a| a.parse::<i64>().ok()) != Some(tn)
                                    || (result == "hit") != hit)
                                    .then(|| format!("target {args:?} (due {tn}), d6 {face} -> {result} (event {n})")),
                            );
                        }
                        "vehicle_save_roll" => {
                            let need = if he_landing {
                                M113_SAVE + self.he_ap
                            } else {
                                M113_SAVE + RPG7_AP - i64::from(self.screens)
                            };
                            if he_landing {
                                r.check(
                                    "7.4.1 rule 1 / 5.1 step 3: HE on armour saves on the base save plus the shell's AP",
                                    (args.first().and_then(|a| a.parse::<i64>().ok()) != Some(need))
                                        .then(|| format!("needs {args:?} (due {need}) (event {n})")),
                                );
                            }
                            let face = faces.first().copied().unwrap_or(0);
                            r.check(
                                "7.3 step 2: the armour save needs the base save plus AP",
                                (args.first().and_then(|a| a.parse::<i64>().ok()) != Some(need)
                                    || (result == "saved") != (face >= need))
                                    .then(|| format!("needs {args:?} (due {need}), d6 {face} -> {result} (event {n})")),
                            );
                            if result == "saved" {
                                saved_this_turn += 1;
                                if !reserve_aboard.is_empty()
                                    && !self.bailout_7_6_only
                                    && !he_landing
                                {
                                    bail_due = Some("hasty");
                                }
                            }
                            last_vehicle_roll = Some(result.clone());
                        }
                        "crew_concussion_test" => {
                            r.check(
                                "7.4.1: the concussion test only from the second bounce in a turn",
                                (saved_this_turn < 2
                                    || last_vehicle_roll.as_deref() != Some("saved"))
                                .then(|| {
                                    format!("{saved_this_turn} bounces this turn (event {n})")
                                }),
                            );
                            let face = faces.first().copied().unwrap_or(0);
                            r.check(
                                "7.4.1: the concussion test passes on 4+",
                                ((result == "crew_steady") != (face >= 4))
                                    .then(|| format!("d6 {face} -> {result} (event {n})")),
                            );
                            last_vehicle_roll = Some(result.clone());
                        }
                        "vehicle_damage_roll" => {
                            let face = faces.first().copied().unwrap_or(0);
                            let chart = [
                                "superficial_scrape",
                                "mobility_kill",
                                "weapons_knockout",
                                "spall_and_bailout",
                                "knocked_out",
                                "catastrophic_kill",
                            ];
                            r.check(
                                "5.1 step 4: the vehicle damage chart by the d6",
                                (chart.get((face - 1).max(0) as usize) != Some(&result.as_str()))
                                    .then(|| format!("d6 {face} -> {result} (event {n})")),
                            );
                            r.check(
                                "7.1: small arms never harm the hull; only a penetration damages it",
                                (last_vehicle_roll.as_deref() != Some("penetrated")
                                    || (!he_landing
                                        && acting.as_ref().is_none_or(|(a, _)| a != "rpg_fire")))
                                .then(|| format!("damage roll after {last_vehicle_roll:?} (event {n})")),
                            );
                            if result == "superficial_scrape" {
                                scrapes += 1;
                            }
                            if !reserve_aboard.is_empty() {
                                bail_due = match result.as_str() {
                                    "superficial_scrape"
                                        if !self.bailout_7_6_only && !he_landing =>
                                    {
                                        Some("hasty")
                                    }
                                    "spall_and_bailout" => Some("hasty"),
                                    "knocked_out" => Some("passenger"),
                                    _ => None,
                                };
                            }
                            if result == "catastrophic_kill" {
                                // 7.6.2: every stand still aboard dies there.
                                let aboard: Vec<String> = reserve_aboard.iter().cloned().collect();
                                let end = (n + 1..evs.len())
                                    .find(|&i| {
                                        matches!(evs[i], Ev::Decision | Ev::Phase | Ev::Turn(_))
                                    })
                                    .unwrap_or(evs.len());
                                for a in aboard {
                                    let fell = evs[n + 1..end].iter().any(
                                        |e| matches!(e, Ev::Eliminated { piece } if *piece == a),
                                    );
                                    r.check(
                                        "7.6.2: the stands aboard a brewed-up vehicle all die",
                                        (!fell).then(|| format!("{a} survives (event {n})")),
                                    );
                                }
                            }
                            last_damage = Some(result.clone());
                            last_vehicle_roll = Some(result.clone());
                        }
                        "hasty_bailout" => {
                            let stands = hasty_due.first().copied();
                            let ones = faces.iter().filter(|f| **f == 1).count() as i64;
                            r.check(
                                "3.4 (second) C: the hasty bailout, a d6 per stand aboard, a hit on a 1",
                                (stands.is_none()
                                    || args.first().and_then(|a| a.parse::<i64>().ok()) != stands
                                    || faces.len() as i64 != stands.unwrap_or(0)
                                    || result.parse::<i64>().ok() != Some(ones))
                                .then(|| format!("{args:?} {faces:?} -> {result}, owed {hasty_due:?} (event {n})")),
                            );
                            if !hasty_due.is_empty() {
                                hasty_due.remove(0);
                            }
                        }
                        "passenger_hit" => {
                            let face = faces.first().copied().unwrap_or(0);
                            passenger_rolls_due -= 1;
                            r.check(
                                "7.6.2: bailing passengers roll a d6 per stand, a hit on 1-3",
                                ((result == "hit") != (face <= 3))
                                    .then(|| format!("d6 {face} -> {result} (event {n})")),
                            );
                        }
                        _ => {}
                    }
                }
                Ev::End { .. } => {
                    self.close_bail(
                        &mut bailing,
                        &mut passenger_rolls_due,
                        &mut bail_due,
                        &mut hasty_due,
                        r,
                        n,
                    );
                    // Every mission whose turn came has landed.
                    for (m, (t, _)) in &pending {
                        r.check(
                            "2.2 items 1-2 / 8.2 step 2: a mission lands when its clock reaches 0",
                            (*t + DELAY_105 <= turn).then(|| {
                                format!("{m} called in turn {t} never landed (last turn {turn})")
                            }),
                        );
                    }
                }
                _ => {}
            }
            // The squad aboard is the force's reserve (the scenario's third rifle squad, after
            // the two it sets up): never set up, it is aboard until it enters.
            if let Ev::Turn(1) = ev {
                let k = "cav_rifle_squad #3";
                if !pieces.contains_key(k) && !entered.contains(k) {
                    reserve_aboard.insert(k.to_string());
                }
            }
        }
    }

    /// 7.6.2 / 3.4 (second) C: the stands that came off a hit carrier are pinned and rolled
    /// for, and a bailout owed has come.
    fn close_bail(
        &self,
        bailing: &mut Vec<String>,
        due: &mut i64,
        bail_due: &mut Option<&'static str>,
        hasty_due: &mut Vec<i64>,
        r: &mut Report,
        n: usize,
    ) {
        if !bailing.is_empty() || *due != 0 || !hasty_due.is_empty() {
            r.check(
                "7.6.2: bailing passengers come off pinned, a d6 per stand",
                (!bailing.is_empty() || *due != 0 || !hasty_due.is_empty()).then(|| {
                    format!("unpinned {bailing:?}, rolls owed {due} / {hasty_due:?} (event {n})")
                }),
            );
        }
        if let Some(b) = bail_due.take() {
            r.check(
                "3.4 (second) C / 7.6.2: the squad aboard bails out exactly when its carrier is hit",
                Some(format!("no {b} bailout after the hit (event {n})")),
            );
        }
        bailing.clear();
        hasty_due.clear();
        *due = 0;
    }
}
