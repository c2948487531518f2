//! Police Action's referee, third part: the land-vehicle rules the mechanised stand-in brings
//! in (Movement: vehicle rates, mounting and dismounting, March Moves; Single Man Units: AFVs
//! command themselves, soft transport does not; Knock out / Suppression against armour; Close
//! Combat against AFVs; AFV support in Motivation and Morale; vehicles under Searching and
//! anti-vehicle mines; Suppression), read from the log alone. The book's numbers are written
//! here from the book; the values it leaves blank come from the scenario's assumptions file,
//! the board's cover from the compiled rules as data. Nothing here runs engine code.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{self, Report};

/// Single Man Units: "a SMU is within 15cm, or 10cm in jungle" (tenths of a millimetre).
const COMMAND_RADIUS: f64 = 1500.0;
const COMMAND_RADIUS_JUNGLE: f64 = 1000.0;
/// Motivation and Morale: "AFV support within 20cm".
const AFV_SUPPORT: f64 = 2000.0;
/// Our reading (README): troops get out within 3cm of their vehicle.
const DISMOUNT_REACH: f64 = 300.0;

/// What the referee knows of a vehicle from the rules and the assumptions.
struct Vehicle {
    afv: bool,
    open_topped: bool,
    armour: String,
    capacity: i64,
    tactical: i64,
    cover: i64,
}

/// A vehicle's move in progress: the vehicle, the action, where from, toward what point, the
/// side turn.
#[derive(Clone)]
struct Move {
    vehicle: String,
    how: String,
    from: (i64, i64),
    toward: Option<(i64, i64)>,
    turn: i64,
}

/// A firer's Knock out scores: against infantry, then Light, Medium, Heavy armour.
#[derive(Clone, Copy)]
struct Scores {
    infantry: i64,
    light: i64,
    medium: i64,
    heavy: i64,
}

pub struct Vehicles {
    vehicles: BTreeMap<String, Vehicle>,
    scores: BTreeMap<String, Scores>,
    smu: BTreeSet<String>,
    mines: BTreeSet<String>,
    /// Cover features (jungle, scrub, village) and, of them, the jungle: rectangles.
    cover: Vec<[f64; 4]>,
    jungle: Vec<[f64; 4]>,
    mine_score: i64,
}

fn dist(a: (i64, i64), b: (i64, i64)) -> f64 {
    (((a.0 - b.0).pow(2) + (a.1 - b.1).pow(2)) as f64).sqrt()
}

fn inside(r: &[f64; 4], p: (f64, f64)) -> bool {
    p.0 >= r[0] && p.0 <= r[2] && p.1 >= r[1] && p.1 <= r[3]
}

/// The length of the segment a-b inside the rectangle (Liang-Barsky clipping).
fn clipped(r: &[f64; 4], a: (i64, i64), b: (i64, i64)) -> f64 {
    let (x0, y0) = (a.0 as f64, a.1 as f64);
    let (dx, dy) = (b.0 as f64 - x0, b.1 as f64 - y0);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, x0 - r[0]),
        (dx, r[2] - x0),
        (-dy, y0 - r[1]),
        (dy, r[3] - y0),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return 0.0;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t1 > t0 {
        (t1 - t0) * (dx * dx + dy * dy).sqrt()
    } else {
        0.0
    }
}

impl Vehicles {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let num = |v: Option<Value>| v.and_then(|v| v.as_i64()).unwrap_or(0);
        let yes = |v: Option<Value>| v == Some(Value::Bool(true));
        let kinds: Vec<String> = ir["kinds"]
            .as_array()
            .map(|ks| {
                ks.iter()
                    .map(|k| k["name"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default();
        let mut vehicles = BTreeMap::new();
        let mut scores = BTreeMap::new();
        let mut smu = BTreeSet::new();
        let mut mines = BTreeSet::new();
        for e in ir["entities"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap_or_default().to_string();
            if e["category"] != "Unit" {
                continue;
            }
            let kind = e["kind"]
                .as_u64()
                .and_then(|k| kinds.get(k as usize))
                .cloned()
                .unwrap_or_default();
            if kind == "mine_piece" {
                mines.insert(name.clone());
                continue;
            }
            if kind != "element" {
                continue;
            }
            let f = |k: &str| log::field(ir, &name, k, assumed);
            if yes(f("smu")) {
                smu.insert(name.clone());
            }
            scores.insert(
                name.clone(),
                Scores {
                    infantry: num(f("knock_out")),
                    light: num(f("penetrate")),
                    medium: num(f("penetrate_medium")),
                    heavy: num(f("penetrate_heavy")),
                },
            );
            if yes(f("vehicle")) {
                vehicles.insert(
                    name.clone(),
                    Vehicle {
                        afv: yes(f("afv")),
                        open_topped: yes(f("open_topped")),
                        armour: f("armour")
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                        capacity: num(f("capacity")),
                        tactical: num(f("tactical_move")),
                        cover: num(f("cover_move")),
                    },
                );
            }
        }
        assert!(
            !vehicles.is_empty(),
            "{scenario}: the rules name no vehicle"
        );
        assert!(!mines.is_empty(), "{scenario}: the rules name no mine");
        let sc = log::config(ir, "scenario", scenario).expect("the scenario");
        let board_name = log::board(ir, sc)["name"].as_str().unwrap_or_default();
        let board = ir["boards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["name"] == board_name)
            .expect("the scenario's board");
        let mut cover = Vec::new();
        let mut jungle = Vec::new();
        for f in board["play"]["Table"]["features"].as_array().unwrap() {
            let ground = f["ground"]["Entity"]
                .as_u64()
                .and_then(|id| ir["entities"][id as usize]["name"].as_str())
                .unwrap_or_default();
            let r = &f["outline"]["Rect"];
            let rect = ["x0", "y0", "x1", "y1"].map(|k| r[k].as_f64().unwrap_or(0.0));
            if matches!(ground, "jungle_ground" | "village_ground" | "scrub_ground") {
                cover.push(rect);
            }
            if ground == "jungle_ground" {
                jungle.push(rect);
            }
        }
        assert!(!cover.is_empty(), "{scenario}: the board has no cover");
        Vehicles {
            vehicles,
            scores,
            smu,
            mines,
            cover,
            jungle,
            mine_score: assumed
                .get("vehicle_blanks.av_mine_knock_out")
                .and_then(|v| v.parse().ok())
                .expect("the assumed mine score"),
        }
    }

    fn vehicle(&self, piece: &str) -> Option<&Vehicle> {
        self.vehicles.get(log::entity_of(piece, &[]))
    }

    fn in_cover(&self, p: (i64, i64)) -> bool {
        self.cover
            .iter()
            .any(|r| inside(r, (p.0 as f64, p.1 as f64)))
    }

    /// The vehicle's rate toward a point, as the rules read the Movement table's columns:
    /// its cover rate when it stands in cover or its line crosses cover. `None` when the
    /// line only grazes a feature's edge (either rate may be meant).
    fn rate(&self, v: &Vehicle, from: (i64, i64), toward: Option<(i64, i64)>) -> Option<i64> {
        if self.in_cover(from) {
            return Some(v.cover);
        }
        let Some(to) = toward else {
            return Some(v.tactical);
        };
        let inside: f64 = self.cover.iter().map(|r| clipped(r, from, to)).sum();
        if inside > 1.0 {
            Some(v.cover)
        } else if inside > 0.0 {
            None
        } else {
            Some(v.tactical)
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
        let side_of = |p: &str| {
            if p.starts_with("us_") {
                "us"
            } else {
                "vietnamese"
            }
        };
        let mut pos: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut turns: BTreeMap<String, i64> = BTreeMap::new();
        let mut card_side = String::new();
        let now = |turns: &BTreeMap<String, i64>, side: &str| turns.get(side).copied().unwrap_or(0);
        // Passenger -> its vehicle; vehicle -> the side turn it took troops on or off, and
        // the turn it moved more than half its rate.
        let mut riding: BTreeMap<String, String> = BTreeMap::new();
        let mut loaded: BTreeMap<String, i64> = BTreeMap::new();
        let mut drove_far: BTreeMap<String, i64> = BTreeMap::new();
        let mut marched: BTreeMap<String, i64> = BTreeMap::new();
        let mut suppressed_until: BTreeMap<String, i64> = BTreeMap::new();
        let mut wounded: BTreeSet<String> = BTreeSet::new();
        let mut acting_smu: BTreeSet<String> = BTreeSet::new();
        // The vehicle move in progress: (vehicle, kind of move, start, toward point, turn).
        let mut moving: Option<Move> = None;
        // A fire at a vehicle that hit: (firer, vehicle); the Knock out score expected next.
        let mut fire_at: Option<(String, String)> = None;
        // A hit on a vehicle: (firer, vehicle, whether the firer has no score against it).
        let mut hit_vehicle: Option<(String, String, bool)> = None;
        // A vehicle destroyed: its passengers' rolls on this score (0: the burst table).
        let mut expect_passengers: Option<(String, i64)> = None;
        let mut last_search: Option<(String, String)> = None;
        // A vehicle that ended its move touching a mine, and whether any mine was in reach.
        let mut expect_blast: Option<String> = None;
        let mut near_mine = false;
        let mut pending_mount: Option<String> = None;
        let mut last_action = (String::new(), Vec::<String>::new());
        let fit = |p: &str, wounded: &BTreeSet<String>, pos: &BTreeMap<String, (i64, i64)>| {
            pos.contains_key(p) && !wounded.contains(p)
        };
        for v in &events {
            let ev = s(v, "event");
            // A move ends at the next event that is not its own: check its length and mines.
            if let Some(Move {
                vehicle: veh,
                how,
                from,
                toward,
                turn: t,
            }) = moving.clone()
                && !(ev == "moved" && s(v, "piece") == veh)
                && let Some(vh) = self.vehicle(&veh)
                && let Some(to) = pos.get(&veh).copied()
            {
                let d = dist(from, to);
                if let Some(rate) = self.rate(vh, from, toward) {
                    let rate = if loaded.get(&veh) == Some(&t) {
                        rate / 2
                    } else {
                        rate
                    };
                    let limit = if how == "march" { rate * 2 } else { rate };
                    r.check(
                        "Movement: a vehicle moves at most its rate (cover rate through jungle, scrub or the village; half in a turn it mounts or dismounts troops; double on a March Move)",
                        (d > limit as f64 + 1.0).then(|| format!("{veh} {how} {d:.0}, limit {limit}")),
                    );
                }
                if d > (vh.tactical / 2) as f64 + 1.0 || how == "march" {
                    drove_far.insert(veh.clone(), t);
                }
                if how == "march" {
                    marched.insert(veh.clone(), t);
                }
                // Searching: "Only vehicles will set off anti-vehicle mines": one in contact
                // goes off before the action ends.
                let touching = pos.iter().any(|(m, p)| {
                    self.mines.contains(log::entity_of(m, &[])) && dist(*p, to) < 99.5
                });
                near_mine = pos.iter().any(|(m, p)| {
                    self.mines.contains(log::entity_of(m, &[])) && dist(*p, to) <= 101.0
                });
                if touching {
                    expect_blast = Some(veh.clone());
                }
                moving = None;
            }
            match ev.as_str() {
                "deployed" | "entered" => {
                    if let Some(p) = point(&v["at"]) {
                        pos.insert(s(v, "piece"), p);
                    }
                }
                "moved" => {
                    if let Some(b) = point(&v["to"]) {
                        let piece = s(v, "piece");
                        if pending_mount.as_deref() == Some(piece.as_str()) {
                            pending_mount = None;
                            let into = pos
                                .iter()
                                .find(|(x, at)| self.vehicle(x).is_some() && dist(**at, b) <= 1.0)
                                .map(|(x, _)| x.clone());
                            r.check(
                                "Movement: troops mount a vehicle of their side in contact with it, up to its load",
                                into.is_none().then(|| format!("{piece} mounted at {b:?}, no vehicle there")),
                            );
                            if let Some(x) = into {
                                riding.insert(piece.clone(), x);
                            }
                        }
                        // A passenger rides where its vehicle is.
                        if let Some(veh) = riding.get(&piece)
                            && s(v, "why") != "dismount"
                            && let Some(at) = pos.get(veh)
                        {
                            r.check(
                                "Movement: mounted troops ride with their vehicle",
                                (dist(*at, b) > 1.0)
                                    .then(|| format!("{piece} at {b:?}, its {veh} at {at:?}")),
                            );
                        }
                        pos.insert(piece, b);
                    }
                }
                "eliminated" | "exited" => {
                    let p = s(v, "piece");
                    pos.remove(&p);
                    if ev == "exited" {
                        riding.remove(&p);
                    }
                }
                "card" => {
                    card_side = s(v, "side");
                    *turns.entry(card_side.clone()).or_default() += 1;
                }
                "marked" => {
                    let (m, p) = (s(v, "marker"), s(v, "piece"));
                    match m.as_str() {
                        "suppressed" => {
                            let owner = side_of(&p);
                            // "until the end of their next turn"
                            suppressed_until.insert(p, now(&turns, owner) + 1);
                        }
                        "wounded_man" => {
                            wounded.insert(p);
                        }
                        "acting_smu" => {
                            acting_smu.insert(p);
                        }
                        "mounted" => pending_mount = Some(p),
                        _ => {}
                    }
                }
                "unmarked" if s(v, "marker") == "mounted" => {
                    riding.remove(&s(v, "piece"));
                }
                "acted" => {
                    let side = s(v, "side");
                    let action = s(v, "action");
                    let args = strs(v, "args");
                    let t = now(&turns, &side);
                    let a0 = args.first().cloned().unwrap_or_default();
                    let a1 = args.get(1).cloned().unwrap_or_default();
                    last_action = (action.clone(), args.clone());
                    fire_at = None;
                    match action.as_str() {
                        "advance" | "withdraw" | "march" if self.vehicle(&a0).is_some() => {
                            let vh = self.vehicle(&a0).unwrap();
                            let until = suppressed_until.get(&a0).copied().unwrap_or(0);
                            r.check(
                                "Suppression: a suppressed vehicle does not move",
                                (until >= t && until > 0).then(|| {
                                    format!("{a0} moved in turn {t}, suppressed to {until}")
                                }),
                            );
                            let from = pos.get(&a0).copied().unwrap_or_default();
                            // Single Man Units: "AFVs are assumed to have a SMU in command.
                            // Soft transport does not."
                            if !vh.afv && action != "withdraw" {
                                let radius = if self
                                    .jungle
                                    .iter()
                                    .any(|j| inside(j, (from.0 as f64, from.1 as f64)))
                                {
                                    COMMAND_RADIUS_JUNGLE
                                } else {
                                    COMMAND_RADIUS
                                };
                                let near = pos.iter().any(|(p, at)| {
                                    side_of(p) == side
                                        && (self.smu.contains(log::entity_of(p, &[]))
                                            || acting_smu.contains(p))
                                        && !wounded.contains(p)
                                        && dist(*at, from) <= radius + 1.0
                                });
                                r.check(
                                    "Single Man Units: soft transport moves only with an SMU within 15cm (10cm in jungle); AFVs command themselves",
                                    (!near).then(|| format!("{a0} moved with no SMU near")),
                                );
                            } else {
                                r.check(
                                    "Single Man Units: soft transport moves only with an SMU within 15cm (10cm in jungle); AFVs command themselves",
                                    None,
                                );
                            }
                            let toward = if action == "withdraw" {
                                None
                            } else {
                                pos.get(&a1).copied()
                            };
                            moving = Some(Move {
                                vehicle: a0.clone(),
                                how: action.clone(),
                                from,
                                toward,
                                turn: t,
                            });
                        }
                        "mount" => {
                            let vh = self.vehicle(&a1);
                            let aboard = riding.values().filter(|x| **x == a1).count() as i64;
                            let d = pos.get(&a0).zip(pos.get(&a1)).map(|(a, b)| dist(*a, *b));
                            r.check(
                                "Movement: troops mount a vehicle of their side in contact with it, up to its load",
                                (vh.is_none_or(|vh| aboard >= vh.capacity)
                                    || d.is_none_or(|d| d > 101.0)
                                    || side_of(&a1) != side)
                                    .then(|| format!("{a0} into {a1}: {aboard} aboard, {d:?} away")),
                            );
                            r.check(
                                "Movement: mounting or dismounting takes half a turn: the vehicle has not moved more than half its rate",
                                (drove_far.get(&a1) == Some(&t)).then(|| format!("{a0} mounted {a1} after its long move")),
                            );
                            riding.insert(a0.clone(), a1.clone());
                            loaded.insert(a1.clone(), t);
                        }
                        "dismount" => {
                            r.check(
                                "Movement: troops dismount only from the vehicle they ride in",
                                (riding.get(&a0) != Some(&a1)).then(|| {
                                    format!("{a0} out of {a1}, riding {:?}", riding.get(&a0))
                                }),
                            );
                            r.check(
                                "Movement: mounting or dismounting takes half a turn: the vehicle has not moved more than half its rate",
                                (drove_far.get(&a1) == Some(&t)).then(|| format!("{a0} dismounted {a1} after its long move")),
                            );
                            riding.remove(&a0);
                            loaded.insert(a1.clone(), t);
                            if let (Some(at), Some(dest)) = (pos.get(&a1), args.get(2)) {
                                let xy: Vec<i64> = dest
                                    .trim_matches(|c| c == '[' || c == ']')
                                    .split(',')
                                    .filter_map(|n| n.trim().parse().ok())
                                    .collect();
                                if let [x, y] = xy[..] {
                                    let d = dist(*at, (x, y));
                                    r.check(
                                        "Movement: dismounted troops are set down within 3cm of their vehicle (ours)",
                                        (d > DISMOUNT_REACH + 1.0).then(|| format!("{a0} set down {d:.0} from {a1}")),
                                    );
                                }
                            }
                        }
                        "fire" => {
                            r.check(
                                "Movement: troops riding in a vehicle are not fired at",
                                riding
                                    .contains_key(&a1)
                                    .then(|| format!("{a0} fired at {a1}, mounted")),
                            );
                            if let Some(veh) = riding.get(&a0) {
                                r.check(
                                    "Movement: March Moves: no passenger fires when its vehicle marched",
                                    (marched.get(veh) == Some(&t)).then(|| format!("{a0} fired from {veh} after its March Move")),
                                );
                            }
                            if self.vehicle(&a1).is_some() {
                                fire_at = Some((a0.clone(), a1.clone()));
                            }
                        }
                        "assault" => {
                            let closed = self
                                .vehicle(&a1)
                                .is_some_and(|vh| vh.afv && !vh.open_topped);
                            r.check(
                                "Close Combat: open-topped AFVs (and soft skins) are fought as normal units, closed AFVs by the +5 rule",
                                closed.then(|| format!("{a0} assaulted the closed AFV {a1} as a normal unit")),
                            );
                        }
                        "assault_afv" => {
                            let closed = self
                                .vehicle(&a1)
                                .is_some_and(|vh| vh.afv && !vh.open_topped);
                            let until = suppressed_until.get(&a1).copied().unwrap_or(0);
                            r.check(
                                "Close Combat: open-topped AFVs (and soft skins) are fought as normal units, closed AFVs by the +5 rule",
                                (!closed).then(|| format!("{a1} is not a closed AFV")),
                            );
                            r.check(
                                "Close Combat: infantry close assault only a suppressed AFV",
                                (until < now(&turns, side_of(&a1)) || until == 0)
                                    .then(|| format!("{a0} assaulted {a1}, suppressed to {until}")),
                            );
                        }
                        "search" => {
                            last_search = Some((a0.clone(), a1.clone()));
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
                    let n = |k: usize| args.get(k).and_then(|a| a.parse::<i64>().ok());
                    let b = |k: usize| args.get(k).map(String::as_str) == Some("true");
                    match name.as_str() {
                        "direct_fire" => {
                            if let Some((f, t)) = fire_at.take()
                                && result == "hit"
                            {
                                let vh = self.vehicle(&t).unwrap();
                                let sc = self.scores.get(log::entity_of(&f, &[])).copied();
                                let want = sc.map(|sc| match vh.armour.as_str() {
                                    "light" => sc.light,
                                    "medium" => sc.medium,
                                    "heavy" => sc.heavy,
                                    _ => sc.infantry,
                                });
                                // With no score: checked at the next event, no Knock out roll.
                                hit_vehicle = Some((f, t, want == Some(0)));
                            }
                        }
                        "knock_out" => {
                            // "Scores equal or above destroy", SMU -1, soft -1, hard -2, March +1.
                            let total = d0
                                - i64::from(b(1))
                                - match args.get(2).map(String::as_str) {
                                    Some("soft") => 1,
                                    Some("hard") => 2,
                                    _ => 0,
                                }
                                + i64::from(b(3));
                            let want = n(0).map(|sc| {
                                if total >= sc {
                                    "destroyed"
                                } else {
                                    "suppressed_instead"
                                }
                            });
                            r.check(
                                "Knock out / Suppression: equal or above the score destroys, else the target is suppressed",
                                (want != Some(result.as_str())).then(|| format!("{args:?} {dice:?} gave {result}")),
                            );
                            if let Some((f, t, none)) = hit_vehicle.take() {
                                let vh = self.vehicle(&t).unwrap();
                                let sc = self.scores.get(log::entity_of(&f, &[])).copied();
                                let want = sc.map(|sc| match vh.armour.as_str() {
                                    "light" => sc.light,
                                    "medium" => sc.medium,
                                    "heavy" => sc.heavy,
                                    _ => sc.infantry,
                                });
                                r.check(
                                    "Knock out / Suppression: a hit on a vehicle rolls the firer's score against its armour (none: no effect)",
                                    (none || want.map(|w| w.min(8)) != n(0) || args.get(2).map(String::as_str) != Some("open"))
                                        .then(|| format!("{f} hit {t} ({}): {args:?}, score {want:?}", vh.armour)),
                                );
                                if result == "destroyed" {
                                    expect_passengers = sc.map(|sc| (t.clone(), sc.infantry));
                                }
                            } else if let Some((veh, score)) = &expect_passengers {
                                // "Roll for Infantry in destroyed ... vehicles as for infantry
                                // in the open."
                                r.check(
                                    "Knock out / Suppression: the passengers of a destroyed vehicle roll as infantry in the open",
                                    (n(0) != Some((*score).min(8)) || args.get(2).map(String::as_str) != Some("open") || b(1))
                                        .then(|| format!("after {veh}: {args:?}, score {score}")),
                                );
                            }
                        }
                        "infantry_vs_afv" => {
                            // "+2 per additional unit", "+2 experienced", "-2 suppressed"; the
                            // AFV defends suppressed (-2); "a differential of +5 to KO".
                            let attack = d0 + 2 * n(0).unwrap_or(0) + 2 * i64::from(b(1))
                                - 2 * i64::from(b(2));
                            let defence = dice.get(1).copied().unwrap_or(0) - 2;
                            let want = if dice.len() != 2 {
                                "two dice"
                            } else if attack - defence >= 5 {
                                "afv_knocked_out"
                            } else {
                                "afv_not_knocked_out"
                            };
                            r.check(
                                "Close Combat: infantry attacking a suppressed AFV need a differential of +5 to knock it out",
                                (want != result).then(|| format!("{args:?} {dice:?} gave {result}")),
                            );
                            if result == "afv_knocked_out"
                                && let ("assault_afv", a) = (last_action.0.as_str(), &last_action.1)
                                && let (Some(att), Some(t)) = (a.first(), a.get(1))
                            {
                                let sc = self
                                    .scores
                                    .get(log::entity_of(att, &[]))
                                    .map(|s| s.infantry);
                                expect_passengers = sc.map(|sc| (t.clone(), sc));
                            }
                        }
                        "av_mine_blast" => {
                            // Our reading: a hit on the mine's score, March Moves +1.
                            let total = d0 + i64::from(b(1));
                            let score = n(0).unwrap_or(99);
                            let want = if total >= score {
                                "destroyed"
                            } else {
                                "suppressed_instead"
                            };
                            r.check(
                                "Searching: an anti-vehicle mine is a hit on its (assumed) Knock out score",
                                (want != result || score != self.mine_score.min(8))
                                    .then(|| format!("{args:?} {dice:?} gave {result}")),
                            );
                            let by_vehicle =
                                matches!(
                                    last_action.0.as_str(),
                                    "advance" | "withdraw" | "march" | "assault"
                                ) && last_action.1.iter().any(|p| self.vehicle(p).is_some());
                            r.check(
                                "Searching: only vehicles set off anti-vehicle mines",
                                (!by_vehicle || !near_mine).then(|| format!("a mine went off during {last_action:?}, a mine in contact {near_mine}")),
                            );
                            if expect_blast.take().is_some() || near_mine {
                                r.check(
                                    "Searching: a vehicle that comes into contact with an anti-vehicle mine sets it off",
                                    None,
                                );
                            }
                            if result == "destroyed"
                                && let Some(veh) =
                                    last_action.1.iter().find(|p| self.vehicle(p).is_some())
                            {
                                expect_passengers = Some((veh.clone(), self.mine_score));
                            }
                        }
                        "search_marker" => {
                            if let Some((who, what)) = last_search.take()
                                && self.vehicle(&who).is_some()
                            {
                                let mine = self.mines.contains(log::entity_of(&what, &[]));
                                r.check(
                                    "Searching: vehicles can only discover anti-vehicle mines (and stores)",
                                    (!mine && !dice.is_empty()).then(|| format!("{who} searched {what}: {dice:?}")),
                                );
                            }
                        }
                        "suppress" => {
                            if let Some(p) = args.first() {
                                // "until the end of their next turn"
                                suppressed_until.insert(p.clone(), now(&turns, side_of(p)) + 1);
                            }
                        }
                        "morale_test" => {
                            // "AFV support within 20cm": an AFV of the tested side within 20cm of
                            // one of its elements on foot.
                            let side = card_side.as_str();
                            let support = pos.iter().any(|(a, pa)| {
                                side_of(a) == side
                                    && self.vehicle(a).is_some_and(|vh| vh.afv)
                                    && fit(a, &wounded, &pos)
                                    && pos.iter().any(|(u, pu)| {
                                        side_of(u) == side
                                            && self.vehicle(u).is_none()
                                            && !self.mines.contains(log::entity_of(u, &[]))
                                            && self.scores.contains_key(log::entity_of(u, &[]))
                                            && !riding.contains_key(u)
                                            && fit(u, &wounded, &pos)
                                            && dist(*pa, *pu) <= AFV_SUPPORT + 0.5
                                    })
                            });
                            r.check(
                                "Motivation and Morale: the AFV support modifier when an AFV is within 20cm",
                                (b(6) != support).then(|| format!("{side}: logged {:?}, AFV within 20cm {support}", args.get(6))),
                            );
                        }
                        _ => {}
                    }
                    if let Some((f, t, none)) = hit_vehicle.take() {
                        if none && name != "direct_fire" {
                            r.check(
                                "Knock out / Suppression: a hit on a vehicle rolls the firer's score against its armour (none: no effect)",
                                None,
                            );
                        } else if name != "direct_fire" {
                            r.check(
                                "Knock out / Suppression: a hit on a vehicle rolls the firer's score against its armour (none: no effect)",
                                Some(format!("{f} hit {t}: {name} came first")),
                            );
                        } else {
                            hit_vehicle = Some((f, t, none));
                        }
                    }
                }
                _ => {}
            }
            if !matches!(
                ev.as_str(),
                "resolved" | "marked" | "unmarked" | "moved" | "eliminated" | "counted" | "said"
            ) && let Some((f, t, none)) = hit_vehicle.take()
            {
                r.check(
                    "Knock out / Suppression: a hit on a vehicle rolls the firer's score against its armour (none: no effect)",
                    (!none).then(|| format!("{f} hit {t}: no Knock out roll before {ev}")),
                );
            }
            if matches!(ev.as_str(), "decision" | "acted" | "card" | "turn" | "end") {
                expect_passengers = None;
                if let Some(veh) = expect_blast.take() {
                    r.check(
                        "Searching: a vehicle that comes into contact with an anti-vehicle mine sets it off",
                        Some(format!("{veh} touched a mine and nothing went off before {ev}")),
                    );
                }
            }
        }
    }
}
