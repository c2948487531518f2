//! The Plastic Battle referee: moves, attacks, reloading and cohesion checked against the
//! book, on the table read from the compiled rules as data, with the referee's own geometry.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use super::log::{At, Ev, Report, config, entity_of, prop};

/// An inch in the log's unit (tenths of a millimetre).
const INCH: i64 = 254;
/// Rounding of a logged point (a tenth of a millimetre each way) and of the engine's search
/// for a stopping place: allowed slack on a length, in the log's unit.
const SLACK: i64 = 3;

/// Section 5, as printed: SPD, ACC, DEF, RNG (inches), STM, COH (`None`: the Commander has
/// none, *), RLD (turns), DAM.
struct Stats {
    points: i64,
    spd: i64,
    rng: i64,
    coh: Option<i64>,
    rld: u32,
}

fn stats(unit: &str) -> Stats {
    let (points, spd, rng, coh, rld) = match unit {
        "commander" => (10, 3, 3, None, 0),
        "regular" => (10, 4, 5, Some(3), 0),
        "charger" => (10, 6, 5, Some(3), 0),
        "guard" => (8, 2, 5, Some(4), 0),
        "sharpshooter" => (15, 3, 6, Some(3), 1),
        "bazooka" => (15, 2, 4, Some(3), 2),
        other => panic!("no unit {other} in the book's table (5)"),
    };
    Stats {
        points,
        spd: spd * INCH,
        rng: rng * INCH,
        coh,
        rld,
    }
}

/// 2, Reinforce: bringing a unit in costs twice its points value in reinforce points.
const REINFORCE_COST: i64 = 2;
/// 2, Reinforce: "placed by the player's flag", read as the unit's base within 1in of the
/// flag's (the README's reading).
const BY_THE_FLAG: i64 = INCH;

/// 2, Cohesion: a six-sided die plus COH; below 8 fails. 3: moving down a hill, through a
/// river or through woods, -1 COH each.
const COHESION_PASS: i64 = 8;
const COH_TERRAIN: i64 = -1;

/// 2: the Move phase is the third of the five, in the printed order.
const MOVE_PHASE: usize = 3;

enum Shape {
    Rect(i64, i64, i64, i64),
    Circle(i64, i64, i64),
}

impl Shape {
    /// Where a hill's top is read to be (3: "moving up hills"): its middle.
    fn centre(&self) -> (f64, f64) {
        match *self {
            Shape::Rect(x0, y0, x1, y1) => ((x0 + x1) as f64 / 2.0, (y0 + y1) as f64 / 2.0),
            Shape::Circle(cx, cy, _) => (cx as f64, cy as f64),
        }
    }

    fn contains(&self, x: f64, y: f64) -> bool {
        match *self {
            Shape::Rect(x0, y0, x1, y1) => {
                x >= x0.min(x1) as f64
                    && x <= x0.max(x1) as f64
                    && y >= y0.min(y1) as f64
                    && y <= y0.max(y1) as f64
            }
            Shape::Circle(cx, cy, r) => {
                let (dx, dy) = (x - cx as f64, y - cy as f64);
                dx * dx + dy * dy <= (r * r) as f64
            }
        }
    }
}

fn dist(a: (i64, i64), b: (i64, i64)) -> f64 {
    (((a.0 - b.0) as f64).powi(2) + ((a.1 - b.1) as f64).powi(2)).sqrt()
}

/// Distance from `c` to the segment `a`-`b`.
fn seg_dist(c: (i64, i64), a: (i64, i64), b: (i64, i64)) -> f64 {
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    let len2 = dx * dx + dy * dy;
    if len2 == 0.0 {
        return dist(c, a);
    }
    let t = (((c.0 - a.0) as f64 * dx + (c.1 - a.1) as f64 * dy) / len2).clamp(0.0, 1.0);
    let (px, py) = (a.0 as f64 + t * dx, a.1 as f64 + t * dy);
    ((c.0 as f64 - px).powi(2) + (c.1 as f64 - py).powi(2)).sqrt()
}

pub struct PlasticBattle {
    /// Terrain features that slow a move through them to half (3: marsh, river, woods).
    slow: Vec<Shape>,
    /// Hills: a move up them is slowed to half (3); down or across is not.
    hills: Vec<Shape>,
    base: i64,
    /// Each side's set-up area, where its flag (its HQ, 2) stands.
    areas: Vec<(String, Shape)>,
    sides: Vec<String>,
    reload: bool,
    /// Total Destruction: the side with units left when the other has none wins.
    destruction: bool,
    /// 2, Reinforce: the points each side may spend per turn (agreed by the players: the
    /// scenario's assumption), and the units each side holds off the table.
    reinforce: i64,
    reserve: Vec<(String, Vec<String>)>,
    /// 2 Move: the straight legs a unit's move may have in one Move phase (the book sets no
    /// limit; the scenario's assumption `legs_per_move` does).
    legs: u32,
}

/// A list of pieces as an assumption writes it: `[regular, 2 * guard]`.
fn pieces_listed(text: &str) -> Vec<String> {
    super::log::counted_pieces(text)
        .into_iter()
        .flat_map(|(n, name)| std::iter::repeat_n(name, n))
        .collect()
}

impl PlasticBattle {
    pub fn new(ir: &Value, scenario: &str, assumed: &BTreeMap<String, String>) -> Self {
        let sc = config(ir, "scenario", scenario).expect("the scenario");
        let b = super::log::board(ir, sc);
        let len = |v: &Value| v["Const"]["Length"].as_i64().unwrap();
        let base = len(prop(b, "base")[0].1);
        let shape = |f: &Value| {
            let rect = prop(f, "rect");
            let circle = prop(f, "circle");
            if rect.len() == 4 {
                Some(Shape::Rect(
                    len(rect[0].1),
                    len(rect[1].1),
                    len(rect[2].1),
                    len(rect[3].1),
                ))
            } else if circle.len() == 3 {
                Some(Shape::Circle(
                    len(circle[0].1),
                    len(circle[1].1),
                    len(circle[2].1),
                ))
            } else {
                None
            }
        };
        let (mut slow, mut hills) = (Vec::new(), Vec::new());
        let mut named_areas = Vec::new();
        for f in b["blocks"].as_array().unwrap() {
            if f["keyword"] == "area" {
                named_areas.push((f["name"].as_str().unwrap().to_string(), shape(f).unwrap()));
                continue;
            }
            if f["keyword"] != "feature" {
                continue;
            }
            let t = prop(f, "terrain")[0].1["Const"]["Entity"].as_u64().unwrap() as usize;
            let name = ir["entities"][t]["name"].as_str().unwrap();
            // 3: marsh, river and woods halve movement through them; hills going up.
            match name {
                "marsh" | "river" | "woods" => slow.extend(shape(f)),
                "hills" => hills.extend(shape(f)),
                _ => {}
            }
        }
        let sides: Vec<String> = ir["sides"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect();
        // Where each side sets up, from the scenario's assumptions (the book prints none).
        let mut areas = Vec::new();
        for side in &sides {
            let key = format!("force.{side}.deploy");
            let Some(name) = assumed
                .iter()
                .find(|(k, _)| k.starts_with(&key))
                .map(|(_, v)| v.trim().to_string())
            else {
                continue;
            };
            if let Some(i) = named_areas.iter().position(|(n, _)| *n == name) {
                areas.push((side.clone(), named_areas.remove(i).1));
            }
        }
        let reload = assumed
            .get(&format!("scenario.{scenario}.options"))
            .is_some_and(|o| o.contains("reload"));
        let reinforce = assumed
            .get(&format!("scenario.{scenario}.reinforce"))
            .map_or(0, |v| v.trim().parse().expect("reinforce points"));
        let reserve = sides
            .iter()
            .map(|side| {
                let key = format!("force.{side}.reserve");
                let listed = assumed
                    .iter()
                    .find(|(k, _)| k.starts_with(&key))
                    .map_or(Vec::new(), |(_, v)| pieces_listed(v));
                (side.clone(), listed)
            })
            .collect();
        let legs = assumed
            .get("legs_per_move")
            .map(|v| v.trim().parse().expect("a number of legs"))
            .expect("the scenario's assumption `legs_per_move`");
        PlasticBattle {
            legs,
            slow,
            hills,
            base,
            areas,
            sides,
            reload,
            destruction: scenario == "total_destruction",
            reinforce,
            reserve,
        }
    }

    fn side_of<'a>(&self, label: &'a str) -> &'a str {
        label.split(' ').next().unwrap_or_default()
    }

    /// The side whose set-up area a flag stands in.
    fn owner(&self, c: (i64, i64)) -> &str {
        self.areas
            .iter()
            .find(|(_, a)| a.contains(c.0 as f64, c.1 as f64))
            .map_or("", |(s, _)| s.as_str())
    }

    fn unit(&self, label: &str) -> Stats {
        stats(entity_of(label, &self.sides))
    }

    /// What a straight move from `a` to `b` costs: its length, the part through marsh, river
    /// or woods counted twice, and the part going up a hill (drawing nearer its top) twice
    /// (3: half speed).
    fn move_cost(&self, a: (i64, i64), b: (i64, i64)) -> f64 {
        const STEPS: usize = 400;
        let total = dist(a, b);
        let mut cost = 0.0;
        for i in 0..STEPS {
            let t = (i as f64 + 0.5) / STEPS as f64;
            let (x, y) = (
                a.0 as f64 + t * (b.0 - a.0) as f64,
                a.1 as f64 + t * (b.1 - a.1) as f64,
            );
            let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
            let slow = self.slow.iter().any(|s| s.contains(x, y))
                || self.hills.iter().any(|h| {
                    let (cx, cy) = h.centre();
                    h.contains(x, y) && dx * (cx - x) + dy * (cy - y) > 0.0
                });
            cost += total / STEPS as f64 * if slow { 2.0 } else { 1.0 };
        }
        cost
    }

    pub fn referee(&self, events: &[Ev], r: &mut Report) {
        r.games += 1;
        // The game's number (its seed, games being checked in seed order).
        let game = r.games;
        let mut at: HashMap<String, (i64, i64)> = HashMap::new();
        let mut turn = 0u32;
        let mut attacked_on: HashMap<String, u32> = HashMap::new();
        let mut failed: HashSet<String> = HashSet::new();
        // A routed unit: whether it ran into its own flag or an enemy (destroyed, 2) or not
        // (a friend rallies it; nothing stops it at its SPD).
        // (piece, (must be destroyed, may be destroyed), turn)
        let mut rout: Option<(String, (bool, bool), u32)> = None;
        // 2, Reinforce: phases seen this turn (the first is Reinforce), the points each side
        // spent this turn, and the units each side still holds off the table.
        let mut phase = 0usize;
        let mut spent: HashMap<String, i64> = HashMap::new();
        let mut reserve = self.reserve.clone();
        // 2 Move: what each unit's legs cost this Move phase, and how many there were; 2
        // Attack: the distance each unit moved this turn, all its legs (and a rout) added up,
        // and the unit whose attack the next ACC check is.
        let mut legs: HashMap<String, (f64, u32)> = HashMap::new();
        let mut moved: HashMap<String, f64> = HashMap::new();
        let mut firer: Option<String> = None;
        for e in events {
            if let Some((p, (must, may), t)) = rout.take() {
                let destroyed = matches!(e, Ev::Eliminated { piece } if *piece == p);
                r.check(
                    "a routing unit that runs into its flag or an enemy is destroyed, else it stays (2)",
                    (destroyed != must && destroyed != may).then(|| {
                        format!("game {game}, turn {t}: {p} ran into its flag or an enemy: {may}, destroyed: {destroyed}")
                    }),
                );
            }
            match e {
                Ev::Turn(t) => {
                    turn = *t;
                    failed.clear();
                    phase = 0;
                    spent.clear();
                    legs.clear();
                    moved.clear();
                }
                Ev::Phase => phase += 1,
                Ev::Entered {
                    piece,
                    at: to_at,
                    why,
                } => {
                    let At::Point(x, y) = to_at else { continue };
                    let to = (*x, *y);
                    let side = self.side_of(piece).to_string();
                    let unit = entity_of(piece, &self.sides).to_string();
                    r.check(
                        "reinforcements come in the Reinforce phase, at the start of the turn (2)",
                        (phase != 1 || why != "bring_in").then(|| {
                            format!("turn {turn}: {piece} comes in during phase {phase} ({why})")
                        }),
                    );
                    let held =
                        reserve
                            .iter_mut()
                            .find(|(s, _)| *s == side)
                            .and_then(|(_, list)| {
                                list.iter().position(|u| *u == unit).map(|k| list.remove(k))
                            });
                    r.check(
                        "only units held off the table come in, each once (2)",
                        held.is_none()
                            .then(|| format!("turn {turn}: {piece} was not in {side}'s reserve")),
                    );
                    let cost = REINFORCE_COST * stats(&unit).points;
                    let total = spent.entry(side.clone()).or_insert(0);
                    *total += cost;
                    r.check(
                        "a unit brought in costs twice its points, within the turn's reinforce points (2)",
                        (*total > self.reinforce).then(|| format!(
                            "turn {turn}: {side} spends {total} of {} reinforce points bringing in {piece} ({cost})",
                            self.reinforce
                        )),
                    );
                    let flag = at
                        .iter()
                        .filter(|(l, c)| l.starts_with("flag") && self.owner(**c) == side)
                        .map(|(_, c)| *c)
                        .next();
                    let by_flag = flag
                        .is_some_and(|f| dist(f, to) <= (self.base + BY_THE_FLAG + SLACK) as f64);
                    r.check(
                        "reinforcements are placed by the player's own flag (2)",
                        (!by_flag).then(|| {
                            format!(
                                "turn {turn}: {piece} comes in at {:.2}in from its flag",
                                flag.map_or(f64::NAN, |f| dist(f, to) / INCH as f64)
                            )
                        }),
                    );
                    let touching = at
                        .iter()
                        .find(|(l, c)| *l != piece && dist(**c, to) < (self.base - SLACK) as f64);
                    r.check(
                        "a unit brought in is placed clear of every other figure's base (2 Move)",
                        touching.map(|(l, c)| {
                            format!(
                                "turn {turn}: {piece} comes in {:.2}in from {l}",
                                dist(*c, to) / INCH as f64
                            )
                        }),
                    );
                    at.insert(piece.clone(), to);
                }
                Ev::Deployed {
                    piece,
                    at: At::Point(x, y),
                } => {
                    at.insert(piece.clone(), (*x, *y));
                }
                Ev::Acted { action, args, .. } => {
                    let Some(u) = args.first() else { continue };
                    let waiting = |u: &str| {
                        let rld = self.unit(u).rld;
                        self.reload
                            && attacked_on
                                .get(u)
                                .is_some_and(|t| rld > 0 && turn <= t + rld)
                    };
                    if action == "attack" {
                        let target = &args[1];
                        let (a, b) = (at[u], at[target]);
                        let rng = self.unit(u).rng;
                        r.check(
                            "attack within RNG (2, Attack; 5)",
                            (dist(a, b) > (rng + SLACK) as f64).then(|| {
                                format!(
                                    "turn {turn}: {u} attacks {target} at {:.2}in, RNG {}in",
                                    dist(a, b) / INCH as f64,
                                    rng / INCH
                                )
                            }),
                        );
                        r.check(
                            "reload: RLD turns between attacks (4)",
                            waiting(u).then(|| format!(
                                "turn {turn}: {u} attacks again, last attacked on turn {}, RLD {}",
                                attacked_on[u.as_str()],
                                self.unit(u).rld
                            )),
                        );
                        r.check(
                            "a unit that failed cohesion does not attack this turn (2, Cohesion)",
                            failed.contains(u).then(|| {
                                format!("turn {turn}: {u} attacks after failing cohesion")
                            }),
                        );
                        attacked_on.insert(u.clone(), turn);
                        firer = Some(u.clone());
                    } else if action != "bring_in" {
                        r.check(
                            "reloading units do not move (4)",
                            waiting(u).then(|| {
                                format!(
                                    "turn {turn}: {u} {action} while reloading since turn {}",
                                    attacked_on[u.as_str()]
                                )
                            }),
                        );
                    }
                }
                Ev::Moved {
                    piece,
                    from,
                    to: At::Point(x, y),
                    why,
                    ..
                } => {
                    let to = (*x, *y);
                    if let Some(At::Point(fx, fy)) = from
                        && why != "bring_in"
                    {
                        let from = (*fx, *fy);
                        let s = self.unit(piece);
                        // 2 Cohesion: a unit that fails retreats "directly" toward its flag,
                        // its SPD, terrain not slowing it.
                        let routing = why.starts_with("phase.cohesion");
                        let (cost, limit) = if routing {
                            (dist(from, to), s.spd)
                        } else if why == "fall_back" {
                            (self.move_cost(from, to), INCH)
                        } else {
                            (self.move_cost(from, to), s.spd)
                        };
                        *moved.entry(piece.clone()).or_insert(0.0) += dist(from, to);
                        if why == "advance" {
                            r.check(
                                "units advance in the Move phase (2)",
                                (phase != MOVE_PHASE).then(|| {
                                    format!("turn {turn}: {piece} advances in phase {phase}")
                                }),
                            );
                            // A bent move: its legs together cost at most SPD, each leg
                            // paying double through slow terrain and up hills (2 Move, 3);
                            // each leg's end is rounded in the log.
                            let (total, n) = legs.entry(piece.clone()).or_insert((0.0, 0));
                            *total += cost;
                            *n += 1;
                            r.check(
                                "the legs of one move cost at most SPD together (2 Move, 3)",
                                (*total > (s.spd + SLACK * i64::from(*n)) as f64).then(|| {
                                    format!(
                                        "turn {turn}: {piece}'s {n} legs cost {:.2}in of {}in",
                                        *total / INCH as f64,
                                        s.spd as f64 / INCH as f64
                                    )
                                }),
                            );
                            r.check(
                                "a move has at most the assumed number of legs (2 Move)",
                                (*n > self.legs).then(|| {
                                    format!(
                                        "turn {turn}: {piece} takes {n} legs, at most {}",
                                        self.legs
                                    )
                                }),
                            );
                        }
                        r.check(
                            "move within SPD, halved only through slow terrain and up hills (2 Move, 3)",
                            (cost > (limit + SLACK) as f64).then(|| format!(
                                "turn {turn} ({why}): {piece} moves {:.2}in costing {:.2}in of {}in",
                                dist(from, to) / INCH as f64,
                                cost / INCH as f64,
                                limit as f64 / INCH as f64
                            )),
                        );
                        let through = at.iter().find(|(l, c)| {
                            *l != piece && seg_dist(**c, from, to) < (self.base - SLACK) as f64
                        });
                        r.check(
                            "never through another figure's base or a flag (2 Move)",
                            through.map(|(l, c)| {
                                format!(
                                    "turn {turn} ({why}): {piece} passes {:.2}in from {l}",
                                    seg_dist(*c, from, to) / INCH as f64
                                )
                            }),
                        );
                        if routing {
                            let side = self.side_of(piece);
                            let flag = at
                                .iter()
                                .filter(|(l, c)| l.starts_with("flag") && self.owner(**c) == side)
                                .map(|(_, c)| *c)
                                .next();
                            if let Some(f) = flag {
                                // Straight at the flag: what it came nearer the flag is the
                                // length it moved.
                                let gained = dist(from, f) - dist(to, f);
                                r.check(
                                    "a failed cohesion check retreats straight toward the own flag (2)",
                                    ((gained - dist(from, to)).abs() > (4 * SLACK) as f64).then(
                                        || format!(
                                            "turn {turn}: {piece} moves {:.2}in, {:.2}in nearer its flag",
                                            dist(from, to) / INCH as f64,
                                            gained / INCH as f64
                                        ),
                                    ),
                                );
                            }
                            // What it ran into: a figure or flag touching it where it stops,
                            // short of its full SPD.
                            // What it may have run into: a figure or flag touching it where
                            // it stops. Short of its full SPD something stopped it; at its full
                            // SPD, a contact within the log's rounding of a base either way
                            // cannot be told from none, and either outcome is accepted.
                            let short = dist(from, to) < (s.spd - SLACK) as f64;
                            let deadly = |l: &String| {
                                if l.starts_with("flag") {
                                    self.owner(at[l.as_str()]) == side
                                } else {
                                    self.side_of(l) != side
                                }
                            };
                            let within = |reach: i64| {
                                at.iter().any(|(l, c)| {
                                    l != piece && dist(*c, to) <= reach as f64 && deadly(l)
                                })
                            };
                            // Touching a figure that rallies or just stops it (a friend,
                            // the enemy flag) as well: both contacts came at the stop, within
                            // the log's rounding, so which came first cannot be told.
                            let also_harmless = at.iter().any(|(l, c)| {
                                l != piece
                                    && dist(*c, to) <= (self.base + SLACK) as f64
                                    && !deadly(l)
                            });
                            // A figure the route grazed at a base's distance, to the log's
                            // rounding, may have been run into on the way as well.
                            let grazed = at.iter().any(|(l, c)| {
                                l != piece
                                    && seg_dist(*c, from, to) <= (self.base + SLACK) as f64
                                    && deadly(l)
                            });
                            let at_stop = within(self.base + SLACK);
                            let may = at_stop || grazed;
                            let must =
                                at_stop && !also_harmless && (short || within(self.base - SLACK));
                            let dies = (must, may);
                            rout = Some((piece.clone(), dies, turn));
                        }
                    }
                    at.insert(piece.clone(), to);
                }
                Ev::Resolved {
                    name,
                    args,
                    dice,
                    result,
                    ..
                } => {
                    let ok = dice.iter().all(|(d, f)| d == "d6" && (1..=6).contains(f));
                    r.check(
                        "dice are six-sided (2)",
                        (!ok).then(|| format!("{name}: {dice:?}")),
                    );
                    if name == "acc_check"
                        && let Some(u) = firer.take()
                        && let Some(flag) = args.get(2)
                    {
                        // 2 Attack: -2 when the firer moved more than half its SPD this turn,
                        // every leg counted; within the log's rounding of each leg either
                        // answer is accepted.
                        let spd = self.unit(&u).spd as f64;
                        let went = moved.get(&u).copied().unwrap_or(0.0);
                        let doubt = (2 * SLACK * i64::from(self.legs + 1)) as f64;
                        let want = 2.0 * went > spd;
                        r.check(
                            "-2 ACC after moving more than half SPD this turn, all legs counted (2 Attack)",
                            ((2.0 * went - spd).abs() > doubt && (flag == "true") != want).then(
                                || {
                                    format!(
                                        "turn {turn}: {u} moved {:.2}in of SPD {}in; the check says moved more than half: {flag}",
                                        went / INCH as f64,
                                        spd / INCH as f64
                                    )
                                },
                            ),
                        );
                    }
                    if name == "cohesion_check" && dice.len() == 1 {
                        let coh: i64 = args[0].parse().unwrap_or(-99);
                        let mods =
                            args[1..].iter().filter(|a| *a == "true").count() as i64 * COH_TERRAIN;
                        let want = if dice[0].1 + coh + mods >= COHESION_PASS {
                            "pass"
                        } else {
                            "fail"
                        };
                        let known = ["regular", "charger", "guard", "sharpshooter", "bazooka"]
                            .iter()
                            .any(|u| stats(u).coh == Some(coh));
                        r.check(
                            "cohesion: d6 + COH, below 8 fails (2, 3)",
                            (want != result || !known).then(|| format!(
                                "turn {turn}: COH {coh}, args {args:?}, die {}: {want}, log says {result}",
                                dice[0].1
                            )),
                        );
                    }
                }
                Ev::Marked {
                    marker,
                    piece: Some(p),
                    ..
                } if marker == "failed_cohesion" => {
                    failed.insert(p.clone());
                }
                Ev::Eliminated { piece, .. } | Ev::Exited { piece, .. } => {
                    at.remove(piece);
                }
                Ev::End { winner, .. } => {
                    // Total destruction: a side wins when the other has no unit left.
                    let left = |s: &str| {
                        at.keys()
                            .filter(|l| l.starts_with(&format!("{s} ")))
                            .count()
                    };
                    let want = match (left("player_1"), left("player_2")) {
                        (a, 0) if a > 0 => Some("player_1"),
                        (0, b) if b > 0 => Some("player_2"),
                        _ => None,
                    };
                    if self.destruction && want.is_some() {
                        r.check(
                            "victory: the side with units left when the other has none",
                            (winner.as_deref() != want)
                                .then(|| format!("{want:?} should win, the log says {winner:?}")),
                        );
                    }
                }
                _ => {}
            }
        }
    }
}
