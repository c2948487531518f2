//! Referee for Dinky Dau at night (4.5.B, 9.1.1) and its trip flares, in the night perimeter,
//! written from the book apart from the engine: it reads the log as text and the scenario's
//! assumptions (the night sight, which 9.1.1 does not print). The rest of each game is the
//! Meeting Engagement referee's (`dinky_dau.rs`).
//!
//! Checked per game:
//! - 9.1.1 items 2-3: a trip flare goes up exactly when an insurgent move's line passes within
//!   2in of it (or ends there), once, and only at night.
//! - 4.5.B / 9.1.1 item 8: at night every element that fires is illuminated (muzzle bloom),
//!   and nothing is illuminated by day.
//! - 4.1 at night: an aimed fire or a spotting test reaches no farther than the night sight
//!   unless one end stands in the light (within 3in of a burning flare or star shell, or
//!   illuminated by its own fire).
//! - 9.1.1 items 4-6 with 8.2 steps 1-3: a star shell (the off-board 105mm battery's
//!   illumination round) is called by the platoon HQ (officer and RTO), only at night, no more
//!   of them than the scenario's missions; it lands in the Tension phase of the turn its clock
//!   of 2 (the 105mm delay printed in 8.2 step 2) runs out, and every one whose turn comes
//!   lands; its scatter is one d6, 1-2 on target, else one more d6 (two when Unobserved), a
//!   call beyond the night sight in the dark is Unobserved, one within 3in is not; the
//!   marker drifts no farther than rolled; it deals no damage; it burns for the assumed number
//!   of turns (the one it lands in first) and goes out at the end of the last.
//! - 4.5.C elevation (the firebase's berms and watchtower, their heights assumed): an enemy
//!   blind becomes an echo after a move exactly when the mover ends within the sight
//!   limit of the line between them (4.2 State 1 trigger 1), the limit worked out here from the
//!   table: 4.1's cut-offs (3in through more than 1in of dense jungle, the assumed scrub limit
//!   through more than 1in of scrub, else 24in), the night sight unless an end is lit, then
//!   +6in when an end stands on raised ground 2in or more high and the line runs no more than
//!   1in through dense canopy (README reading: the night sight gains it too; with the option
//!   `elevation_by_day` the bonus is added before the night sight caps the line). The fire and
//!   spotting reach at night, and a star shell's Unobserved call, allow the same bonus.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{At, Ev, Report, dist, features, length_inside, point_arg, seg_dist};

const INCH: i64 = 254;
/// 9.1.1 items 2-3: within 2in of the flare; its light a 6in circle (3in around it, reading).
const FLARE_TRIP: i64 = 2 * INCH;
const FLARE_LIGHT: i64 = 3 * INCH;
const MOVES: [&str; 4] = ["patrol_move", "trail_rush", "sprint", "fire_and_maneuver"];
/// 8.2 step 2: the 105mm battery's delay (the book's own example).
const DELAY_105: u32 = 2;
/// Sight that no terrain can cut (4.1: dense growth cuts a line only after 3in).
const SURE_SIGHT: f64 = 3.0 * INCH as f64;
/// 4.1: open ground's cut-off, dense growth's, and the woodline's edge band (rule 1).
const OPEN_SIGHT: f64 = 24.0 * INCH as f64;
const DENSE_SIGHT: f64 = 3.0 * INCH as f64;
const EDGE: f64 = INCH as f64;
/// 4.5.C: raised 2in or more above the table, a line gains 6in.
const RAISED: i64 = 2 * INCH;
const ELEVATION_BONUS: f64 = 6.0 * INCH as f64;
/// How near a measured quantity may come to a threshold before the referee cannot tell which
/// side of it the engine's own arithmetic put it on (tenths of a millimetre).
const FUZZ: f64 = 2.0;

/// A star shell's mission: the turn it was called, where its caller stood, whether the spot
/// was surely out of the caller's sight (Some(true)), surely in it (Some(false)), or neither
/// is sure without the terrain (None).
#[derive(Clone, Debug)]
struct Shell {
    called: u32,
    dark: Option<bool>,
    landed: Option<u32>,
    lit: bool,
}

fn pt(a: &At) -> (i64, i64) {
    match a {
        At::Point(x, y) => (*x, *y),
        At::Hex(_) => (0, 0),
    }
}

/// The table as far as 4.1 and 4.5.C read it: the dense and scrub features, the raised ones
/// (berms, towers, hilltops whose assumed height is 2in or more).
struct Table {
    dense: Vec<[f64; 4]>,
    scrub: Vec<[f64; 4]>,
    raised: Vec<[f64; 4]>,
    scrub_sight: f64,
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

/// Some(true) inside one of the rectangles, Some(false) clear of all, None on an edge.
fn inside_any(rects: &[[f64; 4]], p: (i64, i64)) -> Option<bool> {
    let (x, y) = (p.0 as f64, p.1 as f64);
    let mut edge = false;
    for r in rects {
        let d = (x - r[0]).min(r[2] - x).min(y - r[1]).min(r[3] - y);
        if d > FUZZ {
            return Some(true);
        }
        edge |= d >= -FUZZ;
    }
    (!edge).then_some(false)
}

/// The sight limit of the line a-b worked out by the referee: (the limit, whether an end is
/// raised, whether the line runs through dense canopy), or None when some measure lies too
/// near its threshold to tell. `dark`: the line is lit at neither end, at night.
struct Sight {
    limit: f64,
    plain: f64,
    raised: bool,
    canopy: bool,
}

impl Table {
    fn sight(
        &self,
        a: (i64, i64),
        b: (i64, i64),
        dark: bool,
        night_sight: f64,
        by_day: bool,
    ) -> Option<Sight> {
        let dense = length_in(&self.dense, a, b);
        let scrub = length_in(&self.scrub, a, b);
        if (dense - EDGE).abs() <= FUZZ || (scrub - EDGE).abs() <= FUZZ {
            return None;
        }
        let canopy = dense > EDGE;
        let day = if canopy {
            DENSE_SIGHT
        } else if scrub > EDGE {
            self.scrub_sight
        } else {
            OPEN_SIGHT
        };
        let raised = inside_any(&self.raised, a)? || inside_any(&self.raised, b)?;
        let bonus = if raised && !canopy {
            ELEVATION_BONUS
        } else {
            0.0
        };
        let cap = |l: f64| if dark { l.min(night_sight) } else { l };
        let limit = if by_day {
            cap(day + bonus)
        } else {
            cap(day) + bonus
        };
        Some(Sight {
            limit,
            plain: cap(day),
            raised,
            canopy,
        })
    }
}

pub struct Night {
    night: bool,
    sight: i64,
    table: Table,
    /// Option `elevation_by_day`: 4.5.C's bonus before the night sight caps the line.
    by_day: bool,
    /// 9.1.1 items 4-6 (assumed): the battery's illumination missions and a shell's burn.
    missions: i64,
    burn: u32,
}

impl Night {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let options = assumed
            .get(&format!("scenario.{scenario}.options"))
            .cloned()
            .unwrap_or_default();
        let night = options
            .trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .any(|o| o.trim() == "night");
        let by_day = options.contains("elevation_by_day");
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let height = |t: &str| {
            assumed
                .get(&format!("{t}.height"))
                .and_then(|v| super::log::length(v))
                .unwrap_or(0)
        };
        let mut table = Table {
            dense: Vec::new(),
            scrub: Vec::new(),
            raised: Vec::new(),
            scrub_sight: assumed
                .get("secondary_jungle.los_cutoff")
                .and_then(|v| super::log::length(v))
                .unwrap_or(0) as f64,
        };
        for (name, r) in features(ir, board, assumed) {
            match name.as_str() {
                "dense_jungle" => table.dense.push(r),
                "secondary_jungle" => table.scrub.push(r),
                "firebase_berm" | "watchtower" | "hilltop" if height(&name) >= RAISED => {
                    table.raised.push(r)
                }
                _ => {}
            }
        }
        let sight = assumed
            .get("night_sky.los_cutoff")
            .and_then(|v| super::log::length(v))
            .unwrap_or(0);
        let int = |k: &str| {
            assumed
                .get(k)
                .and_then(|v| v.trim().parse::<i64>().ok())
                .unwrap_or(0)
        };
        Night {
            night,
            sight,
            table,
            by_day,
            missions: int("star_shells.missions"),
            burn: int("star_shells.burn_turns").max(0) as u32,
        }
    }

    /// 9.1.1 items 5-6 with 8.2 steps 2-3: a star shell's light goes up.
    #[allow(clippy::too_many_arguments)]
    fn star_shell_lands(
        &self,
        p: &str,
        shells: &mut BTreeMap<String, Shell>,
        (turn, phase): (u32, u32),
        scatter: Option<(bool, i64, usize)>,
        from: Option<(i64, i64)>,
        to: Option<(i64, i64)>,
        r: &mut Report,
        n: usize,
    ) {
        let Some(sh) = shells.get_mut(p) else {
            r.check(
                "9.1.1 item 5 / 8.2 step 2: a star shell lands when its clock reaches 0",
                Some(format!("{p} lit but never called (event {n})")),
            );
            return;
        };
        r.check(
            "9.1.1 item 5 / 8.2 step 2: a star shell lands when its clock reaches 0",
            (sh.landed.is_some() || sh.called + DELAY_105 != turn || phase != 1).then(|| {
                format!(
                    "{p} called in turn {} lands in turn {turn} phase {phase} (event {n})",
                    sh.called
                )
            }),
        );
        sh.landed = Some(turn);
        sh.lit = true;
        let Some((unobserved, drift, _)) = scatter else {
            r.check(
                "8.2 step 3: a star shell's scatter is 1-2 on target, else 1D6 (2D6 unobserved)",
                Some(format!("{p} lit with no scatter roll (event {n})")),
            );
            return;
        };
        if let Some(dark) = sh.dark {
            r.check(
                "8.2 step 1: a star shell called out of the caller's sight is Unobserved",
                (dark != unobserved).then(|| {
                    format!("{p}: unobserved {unobserved}, out of sight {dark} (event {n})")
                }),
            );
        }
        let moved = match (from, to) {
            (Some(a), Some(b)) => dist(a, b),
            _ => 0.0,
        };
        r.check(
            "8.2 step 3: a star shell drifts no farther than rolled",
            (moved > (drift * INCH) as f64 + 2.0)
                .then(|| format!("{p} drifted {moved} for {drift}in (event {n})")),
        );
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        let evs = super::log::read(text);
        let mut at: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut lit: BTreeSet<String> = BTreeSet::new();
        let mut used: BTreeSet<String> = BTreeSet::new();
        let mut exposed: BTreeSet<String> = BTreeSet::new();
        let mut allied_flares_seen = false;
        let mut turn = 0u32;
        let mut phase_in_turn = 0u32;
        let mut shells: BTreeMap<String, Shell> = BTreeMap::new();
        let mut calls = 0i64;
        // A call just made: (the turn, its darkness), until its marker moves.
        let mut awaiting: Option<(u32, Option<bool>)> = None;
        // The last scatter roll: (unobserved, drift, where the marker stood, event).
        let mut last_scatter: Option<(bool, i64, usize)> = None;
        let mut last_scatter_from: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        // 4.2 State 1 / 4.5.C: the markers on each piece, the pieces gone, and the insurgent
        // move whose echo check is due once its mover's last move of the order is logged
        // (that event, the mover, the end of the order).
        let mut markers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut gone: BTreeSet<String> = BTreeSet::new();
        let mut echo_due: Option<(usize, String, usize)> = None;
        for (n, ev) in evs.iter().enumerate() {
            match ev {
                Ev::Marked {
                    marker,
                    piece: Some(p),
                    ..
                } => {
                    markers.entry(p.clone()).or_default().insert(marker.clone());
                }
                Ev::Unmarked {
                    marker,
                    piece: Some(p),
                    ..
                } => {
                    markers.entry(p.clone()).or_default().remove(marker);
                }
                Ev::Eliminated { piece } => {
                    gone.insert(piece.clone());
                }
                _ => {}
            }
            match ev {
                Ev::Turn(t) => {
                    turn = *t;
                    phase_in_turn = 0;
                    for (k, sh) in shells.iter().filter(|(_, sh)| sh.lit) {
                        r.check(
                            "9.1.1 item 6: a star shell burns its turns and goes out",
                            sh.landed.is_some_and(|l| l + self.burn <= turn).then(|| {
                                format!("{k} still lit in turn {turn}: {sh:?} (event {n})")
                            }),
                        );
                    }
                }
                Ev::Phase => phase_in_turn += 1,
                Ev::End { .. } => {
                    for (k, sh) in &shells {
                        r.check(
                            "9.1.1 item 5 / 8.2 step 2: a star shell lands when its clock reaches 0",
                            (sh.landed.is_none() && sh.called + DELAY_105 <= turn).then(|| {
                                format!("{k} called in turn {} never landed (last turn {turn})", sh.called)
                            }),
                        );
                    }
                }
                Ev::Deployed { piece, at: a } | Ev::Entered { piece, at: a, .. } => {
                    at.insert(piece.clone(), pt(a));
                    if piece.starts_with("trip_flare") {
                        allied_flares_seen = true;
                    }
                }
                Ev::Moved { piece, to, why, .. } => {
                    if piece.starts_with("star_shell_marker") && why == "fire_illumination" {
                        if let Some((t, dark)) = awaiting.take() {
                            shells.insert(
                                piece.clone(),
                                Shell {
                                    called: t,
                                    dark,
                                    landed: None,
                                    lit: false,
                                },
                            );
                        }
                    } else if piece.starts_with("star_shell_marker") {
                        last_scatter_from
                            .entry(piece.clone())
                            .or_insert_with(|| at.get(piece).copied().unwrap_or_default());
                    }
                    at.insert(piece.clone(), pt(to));
                }
                Ev::Resolved {
                    name,
                    args,
                    dice,
                    result,
                } => {
                    let faces: Vec<i64> = dice.iter().map(|d| d.1).collect();
                    if name == "scatter" {
                        let unobserved = args.first().is_some_and(|a| a == "true");
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
                            "8.2 step 3: a star shell's scatter is 1-2 on target, else 1D6 (2D6 unobserved)",
                            (faces.len() != want_dice || result.parse::<i64>().ok() != Some(want))
                                .then(|| format!("{faces:?} -> {result} unobserved {unobserved} (event {n})")),
                        );
                        last_scatter = Some((unobserved, result.parse().unwrap_or(0), n));
                        last_scatter_from.clear();
                    }
                }
                Ev::Marked {
                    marker,
                    piece: Some(p),
                    ..
                } => match marker.as_str() {
                    "illumination_template" => {
                        r.check(
                            "9.1.1: trip flares and star shells only at night",
                            (!self.night).then(|| format!("{p} lit by day (event {n})")),
                        );
                        lit.insert(p.clone());
                        if p.starts_with("star_shell_marker") {
                            // 9.1.1 item 5: "instead of High Explosive": no blast follows
                            // before the turn's CP are rolled.
                            let blast = evs[n + 1..]
                                .iter()
                                .take_while(|e| {
                                    !matches!(e, Ev::Resolved { name, .. } if name == "command_points")
                                        && !matches!(e, Ev::Phase | Ev::Turn(_) | Ev::End { .. })
                                })
                                .any(|e| matches!(e, Ev::Resolved { name, .. } if name == "hit_roll"));
                            r.check(
                                "9.1.1 item 5: a star shell does no harm",
                                blast.then(|| {
                                    format!("{p}: a hit roll follows its landing (event {n})")
                                }),
                            );
                            self.star_shell_lands(
                                p,
                                &mut shells,
                                (turn, phase_in_turn),
                                last_scatter.take(),
                                last_scatter_from.get(p).copied(),
                                at.get(p).copied(),
                                r,
                                n,
                            );
                        }
                    }
                    "exposed_marker" => {
                        // The muzzle bloom comes with a volley: the next roll is its hit roll.
                        let next = evs[n + 1..].iter().find_map(|e| match e {
                            Ev::Resolved { name, .. } => Some(name.clone()),
                            _ => None,
                        });
                        r.check(
                            "4.5.B: at night a firer is illuminated (muzzle bloom), never by day",
                            (!self.night || next.as_deref() != Some("hit_roll"))
                                .then(|| format!("{p} exposed, next roll {next:?} (event {n})")),
                        );
                        exposed.insert(p.clone());
                    }
                    _ => {}
                },
                Ev::Unmarked {
                    marker,
                    piece: Some(p),
                    ..
                } => {
                    if marker == "illumination_template" {
                        lit.remove(p);
                        if let Some(sh) = shells.get_mut(p) {
                            sh.lit = false;
                            let last = sh.landed.unwrap_or(0) + self.burn.max(1) - 1;
                            r.check(
                                "9.1.1 item 6: a star shell burns its turns and goes out",
                                (turn != last).then(|| {
                                    format!("{p} out in turn {turn}, due at the end of turn {last} (event {n})")
                                }),
                            );
                        }
                    }
                    if marker == "exposed_marker" {
                        exposed.remove(p);
                    }
                }
                Ev::Acted {
                    side, action, args, ..
                } => {
                    let seg_end = (n + 1..evs.len())
                        .find(|&i| {
                            matches!(
                                evs[i],
                                Ev::Acted { .. } | Ev::Phase | Ev::Turn(_) | Ev::End { .. }
                            )
                        })
                        .unwrap_or(evs.len());
                    let mover = args.first().cloned().unwrap_or_default();
                    if action == "fire_illumination" {
                        calls += 1;
                        r.check(
                            "9.1.1 item 5 / 8.2 step 1: a star shell is called by the officer or RTO, at night",
                            (!mover.starts_with("cav_platoon_hq") || !self.night).then(|| {
                                format!("{mover} calls a star shell, night {} (event {n})", self.night)
                            }),
                        );
                        r.check(
                            "9.1.1 item 5: no more star shells than the battery's missions",
                            (calls > self.missions)
                                .then(|| format!("call {calls} of {} (event {n})", self.missions)),
                        );
                        // 8.2 step 1: Unobserved out of the caller's sight; at night and
                        // unlit the sight is at most the night sight, and never less than
                        // 3in (4.1).
                        let dark = match (at.get(&mover), args.last().and_then(|a| point_arg(a))) {
                            (Some(&c), Some(spot)) => {
                                let d = dist(c, spot);
                                let in_light = |q: (i64, i64)| {
                                    lit.iter().any(|f| {
                                        at.get(f)
                                            .is_some_and(|fc| dist(*fc, q) <= FLARE_LIGHT as f64)
                                    })
                                };
                                if d <= SURE_SIGHT {
                                    Some(false)
                                } else if d > self.night_bound(c, spot) + 1.0
                                    && !exposed.contains(&mover)
                                    && !in_light(c)
                                    && !in_light(spot)
                                {
                                    Some(true)
                                } else {
                                    None
                                }
                            }
                            _ => None,
                        };
                        awaiting = Some((turn, dark));
                    }
                    if MOVES.contains(&action.as_str()) {
                        // 4.2 State 1 trigger 1: the echo check follows the mover's full move,
                        // either side's, with nothing between them. A mover halted at its
                        // midpoint is checked there after the interruption's events (the
                        // ambush's reveals and muzzle bloom): such moves are left out.
                        let dest = args.last().and_then(|a| point_arg(a));
                        let last = (n + 1..seg_end).rev().find(|&i| {
                            matches!(&evs[i], Ev::Moved { piece, to, .. }
                                if *piece == mover && Some(pt(to)) == dest)
                        });
                        let dies = evs[n + 1..seg_end]
                            .iter()
                            .any(|e| matches!(e, Ev::Eliminated { piece } if *piece == mover));
                        if let (Some(k), false) = (last, dies) {
                            echo_due = Some((k, mover.clone(), seg_end));
                        }
                    }
                    if side == "insurgent" && MOVES.contains(&action.as_str()) {
                        let (Some(from), Some(dest)) = (
                            at.get(&mover).copied(),
                            args.last().and_then(|a| point_arg(a)),
                        ) else {
                            continue;
                        };
                        let want: BTreeSet<String> = if self.night {
                            at.iter()
                                .filter(|(k, c)| {
                                    k.starts_with("trip_flare")
                                        && !used.contains(*k)
                                        && (seg_dist(from, dest, **c) < FLARE_TRIP as f64
                                            || dist(dest, **c).round() <= FLARE_TRIP as f64)
                                })
                                .map(|(k, _)| k.clone())
                                .collect()
                        } else {
                            BTreeSet::new()
                        };
                        let got: BTreeSet<String> = evs[n + 1..seg_end]
                            .iter()
                            .filter_map(|e| match e {
                                Ev::Marked {
                                    marker,
                                    piece: Some(p),
                                    ..
                                } if marker == "illumination_template"
                                    && p.starts_with("trip_flare") =>
                                {
                                    Some(p.clone())
                                }
                                _ => None,
                            })
                            .collect();
                        if allied_flares_seen {
                            r.check(
                                "9.1.1 items 2-3: a flare goes up exactly when an enemy moves within 2in of it",
                                (want != got).then(|| {
                                    format!("{mover} {from:?} -> {dest:?}: due {want:?}, lit {got:?} (event {n})")
                                }),
                            );
                        }
                        used.extend(got);
                    }
                    if (action == "aimed_fire" || action == "spotting_test") && self.night {
                        let target = args.get(1).cloned().unwrap_or_default();
                        let (Some(a), Some(b)) = (at.get(&mover), at.get(&target)) else {
                            continue;
                        };
                        let in_light = |p: &str, c: (i64, i64)| {
                            exposed.contains(p)
                                || lit.iter().any(|f| {
                                    at.get(f)
                                        .is_some_and(|fc| dist(*fc, c) <= FLARE_LIGHT as f64)
                                })
                        };
                        let bound = self.night_bound(*a, *b);
                        let lit_end = in_light(&mover, *a) || in_light(&target, *b);
                        let ok = dist(*a, *b) <= bound + 1.0 || lit_end;
                        if !lit_end && dist(*a, *b) > self.sight as f64 + 1.0 && ok {
                            r.check(
                                "4.5.C: at night fire or spotting past the night sight, from or at raised ground",
                                None,
                            );
                        }
                        r.check(
                            if action == "aimed_fire" {
                                "4.1 / 9.1.1: at night fire reaches the night sight, or into the light"
                            } else {
                                "4.1 / 9.1.1 items 3, 6: at night a spotting test reaches the night sight, or into the light"
                            },
                            (!ok).then(|| {
                                format!("{mover} at {a:?}: {action} at {target} at {b:?} in the dark (event {n})")
                            }),
                        );
                        if ok && dist(*a, *b) > self.sight as f64 + 1.0 {
                            let shell_lit = |c: (i64, i64)| {
                                lit.iter().any(|f| {
                                    f.starts_with("star_shell_marker")
                                        && at
                                            .get(f)
                                            .is_some_and(|fc| dist(*fc, c) <= FLARE_LIGHT as f64)
                                })
                            };
                            if shell_lit(*a) || shell_lit(*b) {
                                r.check(
                                    "9.1.1 item 6: under a star shell sight is daylight's",
                                    None,
                                );
                            }
                        }
                    }
                }
                _ => {}
            }
            if let Some((_, mover, seg_end)) = echo_due.take_if(|d| d.0 == n) {
                self.echo_exactly(
                    &mover,
                    &evs[n + 1..seg_end],
                    &at,
                    &markers,
                    &gone,
                    &lit,
                    &exposed,
                    r,
                    n,
                );
            }
        }
    }

    /// The longest a line may reach at night with both ends in the dark, for the upper-bound
    /// checks: the night sight, +6in when an end may stand on raised ground and the line may
    /// run clear of the canopy (4.5.C as read; with `elevation_by_day` the night sight caps it).
    fn night_bound(&self, a: (i64, i64), b: (i64, i64)) -> f64 {
        let maybe = |p| inside_any(&self.table.raised, p) != Some(false);
        let clear = length_in(&self.table.dense, a, b) <= EDGE + FUZZ;
        if !self.by_day && clear && (maybe(a) || maybe(b)) {
            self.sight as f64 + ELEVATION_BONUS
        } else {
            self.sight as f64
        }
    }

    /// 4.2 State 1 trigger 1 with 4.1, 9.1.1 and 4.5.C: once a move is over, every enemy blind
    /// (no echo, not confirmed) becomes an echo exactly when the mover stands within the sight
    /// limit of the line between them; `after` is the rest of the order.
    #[allow(clippy::too_many_arguments)]
    fn echo_exactly(
        &self,
        mover: &str,
        after: &[Ev],
        at: &BTreeMap<String, (i64, i64)>,
        markers: &BTreeMap<String, BTreeSet<String>>,
        gone: &BTreeSet<String>,
        lit: &BTreeSet<String>,
        exposed: &BTreeSet<String>,
        r: &mut Report,
        n: usize,
    ) {
        let Some(&pe) = at.get(mover) else { return };
        let echoed: BTreeSet<&String> = after
            .iter()
            .filter_map(|e| match e {
                Ev::Marked {
                    marker,
                    piece: Some(p),
                    ..
                } if marker == "echo_marker" => Some(p),
                _ => None,
            })
            .collect();
        // Lit: its own muzzle bloom, or within 3in of a burning template; None on the rim.
        let light = |p: &str, c: (i64, i64)| -> Option<bool> {
            if exposed.contains(p) {
                return Some(true);
            }
            let mut rim = false;
            for f in lit {
                if let Some(fc) = at.get(f) {
                    let d = dist(*fc, c) - FLARE_LIGHT as f64;
                    if d < -FUZZ {
                        return Some(true);
                    }
                    rim |= d.abs() <= FUZZ;
                }
            }
            (!rim).then_some(false)
        };
        let Some(mover_lit) = light(mover, pe) else {
            return;
        };
        let has = |p: &str, m: &str| markers.get(p).is_some_and(|s| s.contains(m));
        // The night perimeter's forces: the Air Cav platoon and the NVA probe.
        let enemy = if mover.starts_with("cav_") {
            "nva_"
        } else {
            "cav_"
        };
        for (x, &px) in at {
            if !x.starts_with(enemy)
                || gone.contains(x)
                || has(x, "confirmed_contact")
                || has(x, "echo_marker")
                || has(x, "in_tunnel")
            {
                continue;
            }
            let Some(x_lit) = light(x, px) else { continue };
            let dark = self.night && !mover_lit && !x_lit;
            let Some(s) = self
                .table
                .sight(pe, px, dark, self.sight as f64, self.by_day)
            else {
                continue;
            };
            let d = dist(pe, px);
            if (d - s.limit).abs() <= FUZZ {
                continue;
            }
            let want = d <= s.limit;
            let got = echoed.contains(x);
            r.check(
                "4.2 State 1 / 4.5.C: a blind becomes an echo exactly within the line's sight limit, 6in more from raised ground over flat ground",
                (want != got).then(|| {
                    format!(
                        "{mover} at {pe:?}, {x} at {px:?}: {d:.0} against a limit of {:.0} (raised {}, canopy {}, dark {dark}), echo {got} (event {n})",
                        s.limit, s.raised, s.canopy
                    )
                }),
            );
            if s.raised && !s.canopy && d > s.plain && want {
                r.check(
                    "4.5.C: raised ground sees past the plain limit over flat ground",
                    None,
                );
            }
            if s.raised && !s.canopy && !want && d <= s.limit + ELEVATION_BONUS {
                r.check(
                    "4.5.C: raised ground sees no more than 6in past the plain limit",
                    None,
                );
            }
            if s.raised && s.canopy && !want && d <= s.limit + ELEVATION_BONUS {
                r.check(
                    "4.5.C: raised ground gains nothing through dense canopy",
                    None,
                );
            }
        }
    }
}
