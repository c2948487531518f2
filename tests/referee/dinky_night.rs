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
//! - 4.1 at night: an aimed fire reaches no farther than the night sight unless the firer or
//!   its target stands in the light (within 3in of a burning flare, or illuminated by its own
//!   fire).

use std::collections::{BTreeMap, BTreeSet};

use super::log::{At, Ev, Report};

const INCH: i64 = 254;
/// 9.1.1 items 2-3: within 2in of the flare; its light a 6in circle (3in around it, reading).
const FLARE_TRIP: i64 = 2 * INCH;
const FLARE_LIGHT: i64 = 3 * INCH;
const MOVES: [&str; 4] = ["patrol_move", "trail_rush", "sprint", "fire_and_maneuver"];

fn pt(a: &At) -> (i64, i64) {
    match a {
        At::Point(x, y) => (*x, *y),
        At::Hex(_) => (0, 0),
    }
}

fn dist(a: (i64, i64), b: (i64, i64)) -> f64 {
    (((a.0 - b.0) as f64).powi(2) + ((a.1 - b.1) as f64).powi(2)).sqrt()
}

/// The distance from c to the segment a-b.
fn seg_dist(a: (i64, i64), b: (i64, i64), c: (i64, i64)) -> f64 {
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    let len2 = dx * dx + dy * dy;
    if len2 == 0.0 {
        return dist(a, c);
    }
    let t = (((c.0 - a.0) as f64 * dx + (c.1 - a.1) as f64 * dy) / len2).clamp(0.0, 1.0);
    let p = (a.0 as f64 + t * dx, a.1 as f64 + t * dy);
    ((p.0 - c.0 as f64).powi(2) + (p.1 - c.1 as f64).powi(2)).sqrt()
}

fn point_arg(s: &str) -> Option<(i64, i64)> {
    let t = s.trim().trim_start_matches('[').trim_end_matches(']');
    let (x, y) = t.split_once(',')?;
    Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
}

pub struct Night {
    night: bool,
    sight: i64,
}

impl Night {
    pub fn new(assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let night = assumed
            .get(&format!("scenario.{scenario}.options"))
            .is_some_and(|o| o.contains("night"));
        let sight = assumed
            .get("night_sky.los_cutoff")
            .and_then(|v| super::log::length(v))
            .unwrap_or(0);
        Night { night, sight }
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        let evs = super::log::read(text);
        let mut at: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut lit: BTreeSet<String> = BTreeSet::new();
        let mut used: BTreeSet<String> = BTreeSet::new();
        let mut exposed: BTreeSet<String> = BTreeSet::new();
        let mut allied_flares_seen = false;
        for (n, ev) in evs.iter().enumerate() {
            match ev {
                Ev::Deployed { piece, at: a } | Ev::Entered { piece, at: a, .. } => {
                    at.insert(piece.clone(), pt(a));
                    if piece.starts_with("trip_flare") {
                        allied_flares_seen = true;
                    }
                }
                Ev::Moved { piece, to, .. } => {
                    at.insert(piece.clone(), pt(to));
                }
                Ev::Marked {
                    marker,
                    piece: Some(p),
                    ..
                } => match marker.as_str() {
                    "illumination_template" => {
                        r.check(
                            "9.1.1: trip flares only at night",
                            (!self.night).then(|| format!("{p} lit by day (event {n})")),
                        );
                        lit.insert(p.clone());
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
                                } if marker == "illumination_template" => Some(p.clone()),
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
                    if action == "aimed_fire" && self.night {
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
                        let ok = dist(*a, *b) <= self.sight as f64 + 1.0
                            || in_light(&mover, *a)
                            || in_light(&target, *b);
                        r.check(
                            "4.1 / 9.1.1: at night fire reaches the night sight, or into the light",
                            (!ok).then(|| {
                                format!("{mover} at {a:?} fires at {target} at {b:?} in the dark (event {n})")
                            }),
                        );
                    }
                }
                _ => {}
            }
        }
    }
}
