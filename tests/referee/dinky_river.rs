//! Referee for Dinky Dau's riverine operations (9.2) in the river landing, written from the
//! book apart from the engine: it reads the log as text, the scenario's table from the
//! compiled rules (as JSON data) and the scenario's assumptions (the craft profile, which
//! 9.2.1 prints empty, and the mud roll, which 9.2.2 names without a number). The rest of each
//! game is the Meeting Engagement referee's (`dinky_dau.rs`).
//!
//! Checked per game:
//! - 9.2.3 item 1: 1 to 2 river mines, set up on the canal's water.
//! - 9.2.1 / 9.2.2: the boat moves only on the water, no farther than its move; infantry never
//!   end a move on the water nor cross the canal (reading).
//! - 9.2.2 items 2-3: the ramp drops only at the bank (the hull within 2in of the foliage,
//!   reading) or where a mine beached the boat, with troops aboard.
//! - 9.2.2 items 4-6: the squads aboard come off (those with room), after a mud roll, onto the bank foliage,
//!   within 4in of the hull (3in when mired); a mired squad makes no other move that turn.
//! - 9.2.3 item 1: a mine goes off only during a boat's move that comes within 2in of a mine
//!   not yet blown, each mine once, no more detonations than ambush tokens given so far;
//!   the 1D6 table (1-2 rocked, 3-5 one hit and the troops aboard test morale, 6 the Tango
//!   boat beached with two hits); a rocked boat takes no order until the end of the next
//!   turn; a beached boat moves no more; a boat with no hits left is lost.
//! - 9.2.2 Canal Geography: fire across more than 1in of bank foliage reaches 3in at most.
//! - 9.2.2 main rivers (the option `main_river`): the water is 8 to 12in wide; the boat and
//!   the mines use all of it, infantry none of it; fire across more than 1in of the river's
//!   bank brush reaches its assumed cut-off at most (9.2.2 prints the 3in for canals only).
//! - 9.2.3 item 2 with 7.3 step 1: an RPG fired at the boat hits on 4+, with the assumed
//!   moving-target modifier, +1 from within 6in.
//! - 9.2.3 item 2, the spider bunkers: set up on the bank foliage at the waterline (within 1in
//!   of the water, reading); an element in one (within 1in of it) hit by light small arms
//!   (aimed fire, reading) saves on 4+; by the boat's guns, on the assumed save; the fire at
//!   it needs the assumed cover's number (a pinned firer one more, point blank one less); from
//!   a bunker, fire at the water is not cut by the bank foliage (sight down the canal axis)
//!   and reaches as far as open ground's sight (24in, 4.1).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{At, Ev, Report, dist, point_arg, prop, seg_dist};

const INCH: i64 = 254;
/// 9.2.3 item 1: "within 2in of the marker".
const MINE_REACH: f64 = 2.0 * INCH as f64;
/// 9.2.2 item 4: "up to 4in into the brush"; item 6: "3in move max" in the mud.
const DEBARK: f64 = 4.0 * INCH as f64;
const MUD: f64 = 3.0 * INCH as f64;
/// 9.2.2 item 3 (reading): the ramp touches the bank when the hull is within 2in of it.
const RAMP: i64 = 2 * INCH;
/// 9.2.2: "cutting visibility off the water to 3 inches into the foliage".
const CANAL_BANK_SIGHT: f64 = 3.0 * INCH as f64;
/// 9.2.2: main rivers are 8 to 12in wide, canals 3 to 5in.
const RIVER_WIDTH: (f64, f64) = (8.0 * INCH as f64, 12.0 * INCH as f64);
const CANAL_WIDTH: (f64, f64) = (3.0 * INCH as f64, 5.0 * INCH as f64);
/// The engine measures in tenths of a millimetre and rounds; this much slack is allowed.
const SLACK: f64 = 3.0;
/// 9.2.3 item 2: an RPG fired at a boat "from within 6in" gains +1 to hit.
const BOAT_CLOSE: f64 = 6.0 * INCH as f64;
const MOVES: [&str; 4] = ["patrol_move", "trail_rush", "sprint", "fire_and_maneuver"];
/// 9.2.3 item 2: the bunker saves on 4+ against light small arms.
const BUNKER_SAVE: i64 = 4;
/// 9.2.3 item 2 (reading): an element within 1in of a spider bunker is in it.
const IN_BUNKER: f64 = INCH as f64;
/// 4.1: open ground sees 24in; the water's sight (terrain `canal`) is the same.
const OPEN_SIGHT: f64 = 24.0 * INCH as f64;

/// 5.1 step 3: the save of a grade of cover.
fn save_number(grade: &str) -> i64 {
    match grade.trim() {
        "open_ground" => 6,
        "light_medium" => 5,
        "prepared_position" => 4,
        g => panic!("unknown save grade {g}"),
    }
}

/// 5.1 step 2: what a grade of cover takes off the roll to hit.
fn cover_number(grade: &str) -> i64 {
    match grade.trim() {
        "no_cover" => 0,
        "medium_cover" => 1,
        "heavy_cover" => 2,
        g => panic!("unknown cover grade {g}"),
    }
}

type Rect = (i64, i64, i64, i64);

fn pt(a: &At) -> (i64, i64) {
    match a {
        At::Point(x, y) => (*x, *y),
        At::Hex(_) => (0, 0),
    }
}

fn inside(r: &Rect, p: (i64, i64)) -> bool {
    p.0 >= r.0 && p.0 <= r.2 && p.1 >= r.1 && p.1 <= r.3
}

/// The length of the segment a-b inside the rectangle (Liang-Barsky clipping).
fn length_in(r: &Rect, a: (i64, i64), b: (i64, i64)) -> f64 {
    let f = |p: (i64, i64)| (p.0 as f64, p.1 as f64);
    super::log::length_inside((r.0 as f64, r.1 as f64, r.2 as f64, r.3 as f64), f(a), f(b))
}

/// The distance from a point to a rectangle (0 inside).
fn to_rect(r: &Rect, p: (i64, i64)) -> i64 {
    let dx = (r.0 - p.0).max(0).max(p.0 - r.2);
    let dy = (r.1 - p.1).max(0).max(p.1 - r.3);
    ((dx * dx + dy * dy) as f64).sqrt().ceil() as i64
}

/// 9.2.3 item 1, the printed 1D6 mine table.
fn mine_band(face: i64) -> &'static str {
    match face {
        1..=2 => "premature_blast",
        3..=5 => "hull_breach",
        _ => "catastrophic_mine_kill",
    }
}

pub struct River {
    water: Vec<Rect>,
    /// The canal's own water (the whole water without `main_river`).
    canal: Vec<Rect>,
    bank: Vec<Rect>,
    /// The option `main_river` (9.2.2 main rivers) is played.
    main_river: bool,
    /// How far a line running more than 1in through the bank foliage reaches.
    bank_sight: f64,
    boat_move: f64,
    hit_points: i64,
    mired_on: i64,
    tokens_per_turn: i64,
    /// 7.3.1 (assumed): the to-hit modifier of a moving target, as a number added to the roll.
    at_moving: i64,
    /// The squads the boat carries at the start (the allied force's reserve).
    aboard: usize,
    /// 9.2.3 item 2 (assumed): the spider bunker's cover against the roll to hit, and its save
    /// against fire that is not light small arms.
    bunker_cover: i64,
    bunker_other_save: i64,
}

impl River {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let mut terrain: BTreeMap<String, Vec<Rect>> = BTreeMap::new();
        for (name, r) in super::log::features(ir, board, assumed) {
            let r = r.map(|x| x as i64);
            terrain
                .entry(name)
                .or_default()
                .push((r[0], r[1], r[2], r[3]));
        }
        let int = |k: &str| {
            assumed
                .get(k)
                .and_then(|v| v.trim().parse::<i64>().ok())
                .unwrap_or_else(|| panic!("{k} is assumed"))
        };
        // The boat's squads: the allied force's `reserve:` (`cav_platoon_hq, 2 * cav_rifle_squad`).
        let mut aboard = 0;
        for b in sc["blocks"].as_array().into_iter().flatten() {
            if b["keyword"] == "force" && b["name"] == "allied" {
                for (_, v) in prop(b, "reserve") {
                    aboard += v["Binary"]["lhs"]["Const"]["Int"].as_u64().unwrap_or(1) as usize;
                }
            }
        }
        // 9.2.2: a canal's water and its two banks; with the option `main_river` the water runs
        // on over the canal's far bank, and the river's own far bank lies beyond it.
        let main_river = assumed
            .get(&format!("scenario.{scenario}.options"))
            .is_some_and(|o| o.contains("main_river"));
        let get = |t: &str| terrain.get(t).cloned().unwrap_or_default();
        let (water, bank) = if main_river {
            (
                [get("canal"), get("river_water")].concat(),
                [get("canal_bank"), get("river_bank")].concat(),
            )
        } else {
            (
                get("canal"),
                [get("canal_bank"), get("canal_far_bank")].concat(),
            )
        };
        let bank_sight = if main_river {
            assumed
                .get("river_bank.los_cutoff")
                .and_then(|v| super::log::length(v))
                .expect("river_bank.los_cutoff is assumed") as f64
        } else {
            CANAL_BANK_SIGHT
        };
        River {
            water,
            canal: get("canal"),
            bank,
            main_river,
            bank_sight,
            boat_move: assumed
                .get("tango_boat.move")
                .and_then(|v| super::log::length(v))
                .expect("tango_boat.move is assumed") as f64,
            hit_points: int("tango_boat.hit_points"),
            mired_on: int("shoreline_mud.mired_on"),
            tokens_per_turn: int(&format!("scenario.{scenario}.ambush_tokens")),
            at_moving: int("at_to_hit.target_moving_value_not_printed"),
            aboard,
            bunker_cover: cover_number(
                assumed
                    .get("spider_bunker.to_hit")
                    .expect("spider_bunker.to_hit is assumed"),
            ),
            bunker_other_save: save_number(
                assumed
                    .get("spider_bunker.other_save")
                    .expect("spider_bunker.other_save is assumed"),
            ),
        }
    }

    fn on_water(&self, p: (i64, i64)) -> bool {
        self.water.iter().any(|r| inside(r, p))
    }

    fn on_bank(&self, p: (i64, i64)) -> bool {
        self.bank.iter().any(|r| inside(r, p))
    }

    fn bank_between(&self, a: (i64, i64), b: (i64, i64)) -> f64 {
        self.bank.iter().map(|r| length_in(r, a, b)).sum()
    }

    /// The line from a to b crosses the water from one side to the other (reading: the
    /// canals of our tables run the width of the table).
    fn crosses(&self, a: (i64, i64), b: (i64, i64)) -> bool {
        self.water
            .iter()
            .any(|r| (a.1 < r.1 && b.1 > r.3) || (b.1 < r.1 && a.1 > r.3))
    }

    /// 9.2.2: the water's width, north to south (the rectangles of water in one column).
    fn width(&self) -> f64 {
        let top = self.water.iter().map(|w| w.1).min().unwrap_or(0);
        let bottom = self.water.iter().map(|w| w.3).max().unwrap_or(0);
        (bottom - top) as f64
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        let (lo, hi) = if self.main_river {
            RIVER_WIDTH
        } else {
            CANAL_WIDTH
        };
        let w = self.width();
        r.check(
            if self.main_river {
                "9.2.2: a main river is 8in to 12in wide"
            } else {
                "9.2.2: a canal is 3in to 5in wide"
            },
            (w < lo - SLACK || w > hi + SLACK).then(|| format!("{w} wide")),
        );
        let evs = super::log::read(text);
        let mut at: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut turn = 0u32;
        let mut mines: Vec<(i64, i64)> = Vec::new();
        // Mines surely blown (by index) and the detonations so far.
        let mut blown: BTreeSet<usize> = BTreeSet::new();
        let mut detonations = 0i64;
        let mut aboard = self.aboard;
        let mut hp_lost = 0i64;
        let mut beached = false;
        let mut rocked: Option<u32> = None;
        let mut boat_moved = 0u32;
        // An RPG fired at the boat: its distance, waiting for the AT roll.
        let mut rpg_at: Option<f64> = None;
        // The action in progress, and for a boat move the live mines its line came within
        // 2in of, with the detonations met so far in it.
        let mut action = String::new();
        let mut actor = String::new();
        let mut passed: Vec<usize> = Vec::new();
        let mut went_off = 0usize;
        // A drop_ramp in progress: the boat's place and the mud roll waiting for its squad.
        let mut ramp_at: Option<(i64, i64)> = None;
        let mut mud: Option<bool> = None;
        let mut landed = 0usize;
        let mut mired: BTreeMap<String, u32> = BTreeMap::new();
        // A hull breach waiting for its morale tests: how many are owed.
        let mut morale_owed = 0usize;
        // A squad that finds no room on the bank within its reach stays aboard (the engine's
        // points around the hull are finite): at least one lands, never more than were aboard.
        let close_action = |r: &mut Report, action: &str, landed: usize, aboard_before: usize| {
            if action == "drop_ramp" {
                r.check(
                    "9.2.2 item 4: the squads aboard come off the ramp",
                    (landed == 0 || landed > aboard_before)
                        .then(|| format!("{landed} of {aboard_before} squads landed")),
                );
            }
        };
        let mut aboard_at_ramp = 0usize;
        // 9.2.3 item 2: the spider bunkers, and a fire at an element surely in one waiting for
        // its roll to hit and its save: light small arms or not, the range, the stage.
        let mut bunkers: Vec<(i64, i64)> = Vec::new();
        let mut bunker_fire: Option<(bool, f64, u8)> = None;
        for (n, ev) in evs.iter().enumerate() {
            match ev {
                Ev::Turn(t) => {
                    turn = *t;
                }
                Ev::Deployed { piece, at: a } => {
                    at.insert(piece.clone(), pt(a));
                    if piece.starts_with("river_mine") {
                        mines.push(pt(a));
                        r.check(
                            "9.2.3 item 1: the river mines are set up on the water",
                            (!self.on_water(pt(a))).then(|| format!("{piece} at {a:?}")),
                        );
                    }
                    if piece.starts_with("spider_bunker") {
                        bunkers.push(pt(a));
                        let p = pt(a);
                        let waterline = self.water.iter().any(|w| to_rect(w, p) <= INCH + 3);
                        r.check(
                            "9.2.3 item 2: a spider bunker is set up on the bank foliage at the waterline",
                            (!self.on_bank(p) || self.on_water(p) || !waterline)
                                .then(|| format!("{piece} at {a:?}")),
                        );
                    }
                    if piece == "tango_boat" {
                        r.check(
                            "3.1 item 3 / 9.2.1: the boat starts on the water",
                            (!self.on_water(pt(a))).then(|| format!("{piece} at {a:?}")),
                        );
                    }
                }
                Ev::Acted {
                    action: act, args, ..
                } => {
                    if turn == 1 && action.is_empty() {
                        r.check(
                            "9.2.3 item 1: 1 to 2 river mines",
                            (mines.is_empty() || mines.len() > 2)
                                .then(|| format!("{} mines", mines.len())),
                        );
                    }
                    close_action(&mut *r, &action, landed, aboard_at_ramp);
                    if morale_owed > 0 {
                        r.check(
                            "9.2.3 item 1: on a hull breach every squad aboard tests morale",
                            Some(format!("{morale_owed} tests missing (event {n})")),
                        );
                        morale_owed = 0;
                    }
                    action = act.clone();
                    actor = args.first().cloned().unwrap_or_default();
                    passed.clear();
                    went_off = 0;
                    landed = 0;
                    ramp_at = None;
                    let boat_order = args.first().is_some_and(|a| a == "tango_boat")
                        && [
                            "boat_move",
                            "drop_ramp",
                            "pintle_fire",
                            "unbutton",
                            "rally_crew",
                        ]
                        .contains(&act.as_str());
                    if boat_order {
                        r.check(
                            "9.2.3 item 1: a rocked boat takes no order until the end of the next turn",
                            rocked.is_some_and(|t| turn <= t + 1).then(|| {
                                format!("{act} in turn {turn}, rocked in turn {rocked:?} (event {n})")
                            }),
                        );
                    }
                    rpg_at = None;
                    bunker_fire = None;
                    if (act == "aimed_fire" || act == "pintle_fire")
                        && let (Some(a), Some(b)) = (
                            args.first().and_then(|x| at.get(x)).copied(),
                            args.get(1).and_then(|x| at.get(x)).copied(),
                        )
                        && bunkers.iter().any(|k| dist(*k, b) < IN_BUNKER - SLACK)
                    {
                        bunker_fire = Some((act == "aimed_fire", dist(a, b), 0));
                    }
                    if act == "rpg_fire"
                        && args.get(1).is_some_and(|v| v == "tango_boat")
                        && let (Some(a), Some(b)) =
                            (args.first().and_then(|x| at.get(x)), at.get("tango_boat"))
                    {
                        rpg_at = Some(dist(*a, *b));
                    }
                    if act == "boat_move" {
                        boat_moved = turn;
                        let from = at.get("tango_boat").copied().unwrap_or_default();
                        let to = args.get(1).and_then(|a| point_arg(a)).unwrap_or_default();
                        r.check(
                            "9.2.1: a boat moves only on the water",
                            (!self.on_water(from) || !self.on_water(to))
                                .then(|| format!("{from:?} -> {to:?} (event {n})")),
                        );
                        if self.main_river
                            && self.on_water(to)
                            && !self.canal.iter().any(|c| inside(c, to))
                        {
                            r.check(
                                "9.2.2: a boat moves on a main river's water beyond a canal's width",
                                None,
                            );
                        }
                        r.check(
                            "9.2.1: a boat moves no farther than its move",
                            (dist(from, to) > self.boat_move + SLACK).then(|| {
                                format!("{} for {} (event {n})", dist(from, to), self.boat_move)
                            }),
                        );
                        r.check(
                            "9.2.3 item 1: a beached boat moves no more",
                            beached.then(|| format!("beached boat moves (event {n})")),
                        );
                        for (i, m) in mines.iter().enumerate() {
                            if !blown.contains(&i)
                                && (seg_dist(from, to, *m) < MINE_REACH + SLACK
                                    || dist(to, *m) <= MINE_REACH + SLACK)
                            {
                                passed.push(i);
                            }
                        }
                    }
                    if MOVES.contains(&act.as_str())
                        && let (Some(from), Some(to)) = (
                            args.first().and_then(|x| at.get(x)).copied(),
                            args.get(1).and_then(|a| point_arg(a)),
                        )
                    {
                        // A squad thrown into the water by a wrecked boat may wade out.
                        let wet = !self.on_water(from)
                            && (self.crosses(from, to)
                                || self.water.iter().any(|w| length_in(w, from, to) > SLACK));
                        r.check(
                            "9.2.2 (reading): infantry never move onto the water nor across the canal",
                            (self.on_water(to) || wet)
                                .then(|| format!("{args:?} from {from:?} (event {n})")),
                        );
                    }
                    if act == "drop_ramp" {
                        let p = at.get("tango_boat").copied().unwrap_or_default();
                        let near = self.bank.iter().any(|b| to_rect(b, p) <= RAMP + 3);
                        r.check(
                            "9.2.2 item 3: the ramp drops at the bank (or where a mine beached the boat)",
                            (!near && !beached).then(|| format!("boat at {p:?} (event {n})")),
                        );
                        r.check(
                            "9.2.2 item 2: the ramp drops with troops aboard",
                            (aboard == 0).then(|| format!("empty boat (event {n})")),
                        );
                        ramp_at = Some(p);
                        aboard_at_ramp = aboard;
                    }
                }
                Ev::Moved { piece, to, why, .. } => {
                    let to = pt(to);
                    if MOVES.contains(&why.as_str())
                        && *piece == actor
                        && let Some(t) = mired.get(piece)
                    {
                        r.check(
                            "9.2.2 item 6: a squad mired on landing moves no more that turn",
                            (*t == turn)
                                .then(|| format!("{piece} moves in turn {turn} (event {n})")),
                        );
                    }
                    at.insert(piece.clone(), to);
                }
                Ev::Entered { piece, at: a, why } => {
                    at.insert(piece.clone(), pt(a));
                    if why == "drop_ramp" {
                        let p = pt(a);
                        let hull = ramp_at.unwrap_or_default();
                        let Some(m) = mud.take() else {
                            r.check(
                                "9.2.2 items 5-6: each squad rolls for mud as it lands",
                                Some(format!("{piece} landed with no mud roll (event {n})")),
                            );
                            continue;
                        };
                        let reach = if m { MUD } else { DEBARK };
                        r.check(
                            "9.2.2 item 4: troops land on the bank within 4in of the hull (3in when mired)",
                            (!self.on_bank(p) || self.on_water(p) || dist(hull, p) > reach + SLACK)
                                .then(|| {
                                    format!("{piece} at {p:?}, hull {hull:?}, mired {m} (event {n})")
                                }),
                        );
                        if m {
                            mired.insert(piece.clone(), turn);
                        }
                        landed += 1;
                        aboard = aboard.saturating_sub(1);
                    } else {
                        // Thrown off a wrecked boat (5.1 step 4 result 5, as a vehicle), or
                        // bailed out of it under an RPG hit (3.4 (second) C, 7.6.2).
                        aboard = aboard.saturating_sub(1);
                    }
                }
                Ev::Resolved {
                    name,
                    dice,
                    result,
                    args,
                } => {
                    let face = dice.first().map(|d| d.1).unwrap_or(0);
                    match name.as_str() {
                        "hit_roll" if bunker_fire.is_some_and(|f| f.2 == 0) => {
                            let (light, d, _) = bunker_fire.unwrap_or_default();
                            bunker_fire = Some((light, d, 1));
                            // 5.1 step 2: 4+ less the bunker's cover; a pinned firer needs one
                            // more; point blank (3in or less) one less; between 2+ and 7+.
                            let base = 4 + self.bunker_cover;
                            let got = args.get(1).and_then(|a| a.parse::<i64>().ok());
                            let pb = d <= 3.0 * INCH as f64;
                            if (d - 3.0 * INCH as f64).abs() > SLACK {
                                let want: Vec<i64> = [base, base + 1]
                                    .iter()
                                    .map(|t| (t - i64::from(pb)).clamp(2, 7))
                                    .collect();
                                r.check(
                                    "9.2.3 item 2: fire at an element in a spider bunker needs the bunker's cover",
                                    (!got.is_some_and(|g| want.contains(&g))).then(|| {
                                        format!("needs {got:?}, want {want:?} at {d} (event {n})")
                                    }),
                                );
                            }
                        }
                        "save_roll" if bunker_fire.is_some_and(|f| f.2 == 1) => {
                            let (light, _, _) = bunker_fire.take().unwrap_or_default();
                            let got = args.get(1).and_then(|a| a.parse::<i64>().ok());
                            if light {
                                r.check(
                                    "9.2.3 item 2: in a spider bunker, light small arms are saved on 4+",
                                    (got != Some(BUNKER_SAVE))
                                        .then(|| format!("saves on {got:?} (event {n})")),
                                );
                            } else {
                                r.check(
                                    "9.2.3 item 2: in a spider bunker, the boat's guns are saved on the assumed save",
                                    (got != Some(self.bunker_other_save)).then(|| {
                                        format!(
                                            "saves on {got:?}, assumed {} (event {n})",
                                            self.bunker_other_save
                                        )
                                    }),
                                );
                            }
                        }
                        "at_hit_roll" if rpg_at.is_some() => {
                            let d = rpg_at.take().unwrap_or_default();
                            // 7.3 step 1: 4+; 7.3.1 moving (assumed); 9.2.3 item 2: +1 within
                            // 6in of a boat. A boat on the water is never in cover.
                            let moving = boat_moved > 0 && boat_moved + 1 >= turn;
                            let close = d <= BOAT_CLOSE;
                            let want =
                                (4 - if moving { self.at_moving } else { 0 } - i64::from(close))
                                    .clamp(2, 7);
                            let got = args.first().and_then(|a| a.parse::<i64>().ok());
                            if (d - BOAT_CLOSE).abs() > SLACK {
                                r.check(
                                    "9.2.3 item 2: an RPG hits a boat on 4+, +1 within 6in",
                                    (got != Some(want)).then(|| {
                                        format!("needs {got:?}, want {want} at {d} moving {moving} (event {n})")
                                    }),
                                );
                            }
                        }
                        // 5.1 step 4 result 1 (an RPG's scrape, 7.3): one of the boat's hit
                        // points, which the mines' hits then add to.
                        "vehicle_damage_roll" if result == "superficial_scrape" => {
                            hp_lost += 1;
                        }
                        "mud_roll" => {
                            let needed = args
                                .first()
                                .and_then(|a| a.parse::<i64>().ok())
                                .unwrap_or(0);
                            r.check(
                                "9.2.2 items 5-6: the mud roll needs the assumed number",
                                (needed != self.mired_on.clamp(1, 7)).then(|| {
                                    format!("needs {needed}, assumed {} (event {n})", self.mired_on)
                                }),
                            );
                            let m = face >= needed;
                            let want = if m { "mired" } else { "firm" };
                            r.check(
                                "9.2.2 items 5-6: the mud roll by the d6",
                                (result != want).then(|| format!("{face} -> {result} (event {n})")),
                            );
                            mud = Some(m);
                        }
                        "mine_detonation" => {
                            r.check(
                                "9.2.3 item 1: the 1D6 mine table",
                                (result != mine_band(face))
                                    .then(|| format!("{face} -> {result} (event {n})")),
                            );
                            detonations += 1;
                            went_off += 1;
                            r.check(
                                "9.2.3 item 1: a mine goes off only as a boat passes within 2in of a live one",
                                (action != "boat_move" || went_off > passed.len()).then(|| {
                                    format!(
                                        "{went_off} detonations, {} live mines passed, in {action} (event {n})",
                                        passed.len()
                                    )
                                }),
                            );
                            if went_off == passed.len() {
                                blown.extend(passed.iter().copied());
                            }
                            r.check(
                                "9.2.3 item 1: each mine goes off once",
                                (detonations > mines.len() as i64).then(|| {
                                    format!("{detonations} detonations, {} mines", mines.len())
                                }),
                            );
                            r.check(
                                "9.2.3 item 1: each detonation spends an ambush token",
                                (detonations > self.tokens_per_turn * turn as i64).then(|| {
                                    format!("{detonations} detonations by turn {turn} (event {n})")
                                }),
                            );
                            // The marks that follow in the same action.
                            let rest: Vec<&Ev> = evs[n + 1..]
                                .iter()
                                .take_while(|e| {
                                    !matches!(e, Ev::Acted { .. } | Ev::Turn(_) | Ev::Phase)
                                        && !matches!(e, Ev::Resolved { name, .. } if name == "mine_detonation")
                                })
                                .collect();
                            let marked = |m: &str| {
                                rest.iter().any(|e| {
                                    matches!(e, Ev::Marked { marker, piece: Some(p), .. }
                                        if marker == m && p == "tango_boat")
                                })
                            };
                            let lost = rest.iter().any(
                                |e| matches!(e, Ev::Eliminated { piece } if piece == "tango_boat"),
                            );
                            match mine_band(face) {
                                "premature_blast" => {
                                    // Already rocked by a mine of the same move: no new mark.
                                    let again = rocked == Some(turn);
                                    r.check(
                                        "9.2.3 item 1: 1-2 rocks the boat (pinned / stunned)",
                                        (!(marked("rocked_marker") || again) || lost)
                                            .then(|| format!("not rocked (event {n})")),
                                    );
                                    rocked = Some(turn);
                                }
                                "hull_breach" => {
                                    hp_lost += 1;
                                    r.check(
                                        "9.2.3 item 1: a hit that leaves no hit point loses the boat",
                                        ((hp_lost >= self.hit_points) != lost).then(|| {
                                            format!("{hp_lost} hits of {}, lost {lost} (event {n})", self.hit_points)
                                        }),
                                    );
                                    if !lost {
                                        morale_owed = aboard;
                                    }
                                }
                                _ => {
                                    hp_lost += 2;
                                    let beached_now =
                                        marked("beached_marker") && marked("immobilised");
                                    r.check(
                                        "9.2.3 item 1: a 6 beaches the Tango boat with two hits",
                                        (!(lost || beached_now))
                                            .then(|| format!("not beached (event {n})")),
                                    );
                                    r.check(
                                        "9.2.3 item 1: a hit that leaves no hit point loses the boat",
                                        ((hp_lost >= self.hit_points) != lost).then(|| {
                                            format!("{hp_lost} hits of {}, lost {lost} (event {n})", self.hit_points)
                                        }),
                                    );
                                    beached = true;
                                }
                            }
                        }
                        "morale_test" if morale_owed > 0 => {
                            morale_owed -= 1;
                            r.check(
                                "9.2.3 item 1: on a hull breach every squad aboard tests morale",
                                None,
                            );
                        }
                        _ => {}
                    }
                }
                Ev::End { .. } => {
                    close_action(&mut *r, &action, landed, aboard_at_ramp);
                    action.clear();
                }
                _ => {}
            }
            // Fire across the bank foliage (9.2.2): the firer and target of the action in
            // progress, once its action is known.
            if let Ev::Acted {
                action: act, args, ..
            } = ev
                && ["aimed_fire", "pintle_fire", "rpg_fire"].contains(&act.as_str())
                && let (Some(a), Some(b)) = (
                    args.first().and_then(|x| at.get(x)),
                    args.get(1).and_then(|x| at.get(x)),
                )
            {
                let across = self.bank_between(*a, *b);
                // 9.2.3 item 2: a spider bunker's sight down the canal: one end in a bunker
                // (surely: a bunker within 1in, on the bank), the other on the water. An end
                // just about 1in from a bunker is not judged.
                let near =
                    |p: (i64, i64)| bunkers.iter().map(|k| dist(*k, p)).fold(f64::MAX, f64::min);
                let in_bunker = |p: (i64, i64)| self.on_bank(p) && near(p) < IN_BUNKER - SLACK;
                let unsure = |p: (i64, i64)| (near(p) - IN_BUNKER).abs() <= SLACK;
                let down_axis =
                    (in_bunker(*a) && self.on_water(*b)) || (in_bunker(*b) && self.on_water(*a));
                let d = dist(*a, *b);
                if down_axis {
                    r.check(
                        "9.2.3 item 2: from a spider bunker the sight down the canal reaches 24in",
                        (d > OPEN_SIGHT + SLACK)
                            .then(|| format!("{act} {args:?}: {d} (event {n})")),
                    );
                    if across > INCH as f64 + SLACK && d > self.bank_sight + SLACK {
                        r.check(
                            "9.2.3 item 2: a spider bunker sees down the canal past the bank foliage",
                            None,
                        );
                    }
                } else if !unsure(*a) && !unsure(*b) {
                    r.check(
                        "9.2.2: fire across more than 1in of bank foliage reaches 3in at most",
                        (across > INCH as f64 + SLACK && d > self.bank_sight + SLACK)
                            .then(|| format!("{act} {args:?}: {d} across {across} (event {n})")),
                    );
                }
            }
        }
    }
}
