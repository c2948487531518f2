//! Referee for Dinky Dau, "Meeting Engagement in the Rubber Plantation", written from the book
//! (shared/rulebooks/dinky_dau.txt) apart from the engine. It reads the log as text, the
//! elements' stat lines and the stand-in table from the compiled rules as JSON data, and the
//! scenario's assumptions; the book's numbers are written here, each with its section.
//!
//! Checked per game:
//! - CP (2.2 item 4, 2.3, 1.5): each turn's CP roll adds up (1D6 per officer, +1 RTO in contact,
//!   +1 per surviving Squad Leader), and the orders of the turn, at 1 CP in command (6in of the
//!   commander, 4in in dense terrain) and 2 CP out of it (1 with the emergency initiative
//!   check, only when 1 CP is left), never spend more than it; a Platoon Recon Sweep (4.2) is
//!   ordered by the commander only, costs 2 CP and rolls at most three spotting tests.
//! - Ambush tokens (2.2 item 5, 2.3): ambushes sprung never exceed the tokens gained.
//! - Fog (4.2, 4.5.B): a side's choices never name an enemy element that is not a confirmed
//!   contact, and an element becomes one only by a successful spotting test, by firing, by
//!   being fired on or ambushed, by a Recon by Fire "6" or by sprinting near a blind.
//! - Pools and saves (5.1): every volley rolls as many dice as its pool, hits on its target
//!   number (2+ to 7), and the target rolls one save per hit; every unsaved hit is a ring on a
//!   medium stand or its collapse (2nd hit), or a Look Out, Sir! roll on a small stand once no
//!   medium stand is left; an element goes when it has no stand left.
//! - Rolls by their tables: morale (4+, veterans 3+, militia 5+, winded -1), spotting (4+ with
//!   the 4.2 / 4.5 modifiers; natural 6 critical), bleed (1-2 KIA), emergency initiative and
//!   ambush discipline (4+), Look Out, Sir! (1 fails), Recon by Fire (1 / 2-3 / 4-5 / 6),
//!   Hot LZ (1 / 2-4 / 5 / 6).
//! - VP recount (3.3, 3.4): the final scores from the stands lost, KIA, extractions and the
//!   casualty tokens left, with the scenario's reading of the -3 / -2.
//!
//! The solo patrol against the Jungle Ghost (chapter 10) adds:
//! - Shadow blind placement (10.2 step 1), in the games where the Ghost places them: each
//!   blind in turn goes inside a hootch or bunker that holds none yet while one is free, then
//!   along a tree line / woodline (a patch of dense jungle) that holds none, then on brush
//!   patches or paddy bunds, and only when none of these has a set-up point left anywhere in
//!   its area. (The d6 quarter of priority 3 is the Ghost's own roll, not logged.)
//! - The Contact Reveal Table (10.4): the first reveal of a shadow blind, and only that one,
//!   rolls the table of the scenario's Threat Level (10.2 step 2); the result is the assumed
//!   cell for the face rolled, and the element then has the stands that cell gives (nothing:
//!   discarded; the leader's stand alone; one medium stand and the leader; the whole squad),
//!   which the stand losses, eliminations and the VP recount follow.
//!
//! The village sweep adds (its hidden sites are read from the log's set-up, its hootches from
//! the scenario's neutral pieces, its terrain from the table):
//! - Search / Pacify (2.3, 9b.2 item 3): a search tests each hidden site within 2in of the
//!   element's base (3in from its centre) not yet found, once: an entrance on the 4+ Search
//!   Test, a cache or spider hole on its assumed score; a site is found only on a success, and
//!   an allied choice never names a site that is not found.
//! - Tunnels (2.2 item 5, 9b.2 items 5-9): the turn's tokens include the complex's while an
//!   entrance is intact; an element goes down only within reach of an intact entrance and
//!   comes up at another one on a later turn; demolition collapses an entrance on 3+ only.
//! - The medic (3.4 items 3-6): each bleed roll has the medic's +2 exactly when a medic is
//!   with the casualty's element (within its 2in coherency), a tended survivor is stabilised;
//!   first aid by a medic alongside a ringed element, 5+ takes the ring off.
//! - Frag grenades (5.7.A): thrown from within 2in at an element in a hootch or a spider
//!   hole; 4+ lands, then 2 dice at 4+ with no save.
//! - Fording (3.4 (second) A) and mud (3.2 item 2): a move into, across or out of the creek
//!   goes at most half its allowance; a sprint through flooded paddies winds the squad.
//! - The Reserve Hand (4.2 State 0, 2.3 items 2-5, 9b.1, 9b.2 item 6): a reserve element
//!   enters only right after the insurgent springs it, with an ambush token or at a tripwire
//!   just tripped; it enters in cover (hootch, jungle, scrub) within 2in (centre 3in) of an
//!   ambush marker, spider hole or intact entrance in reach of the mover (6in, or at most the
//!   24in of open sight), or of the tripwire; an ambush from the reserve or a trapdoor costs
//!   one token and the tokens never go below 0; an element down a tunnel comes up by a
//!   trapdoor only at another entrance, on a later turn, in cover; a tripwire trips exactly
//!   when an allied move's line runs under the mover's base over it (within 1in) or the move
//!   ends inside the hootch it lies in, from outside; no allied
//!   choice names a reserve element before it enters.
//! - Water (4.2 State 1 trigger 2): a blind whose move enters, crosses or leaves the creek is
//!   an echo (or confirmed) once the move is over.
//! - Snipers (4.2 State 0, 4.5.C, 5.6.C / 5.1 step 4; the reserve's sniper): a small stand of
//!   an element with medium stands left is lost to aimed fire only when the firer is a sniper
//!   (in any other order only when the firer is a sniper or a sniper is on the table in an
//!   allied order, i.e. an ambush); a sniper's aimed fire puts each unsaved hit on a small
//!   stand while the target has one, with no Look Out, Sir! roll; aimed fire at a sniper in a
//!   canopy (dense jungle, plantation) is saved on 4+ (6 at point blank); a sniper in a canopy
//!   is never pinned, and is eliminated at once when it loses a stand or fails its pinning
//!   test.
//! - Civic Drift (9b.3) in the VP recount: +2 per cache found, -1 per hootch burned with no
//!   cache found by it, +1 per Medcap, -3 (or 4.3's -1) per Recon by Fire "1" with an
//!   unburned hootch within 4in of its target; the track clamped to -5..+5 and scored.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::log::{Report, constant, dist_rounded as dist, entity_of, point, prop};

/// An element's stat line, as the rules print it (with the assumptions' values).
#[derive(Clone, Debug)]
struct Stat {
    side: String,
    mediums: i64,
    smalls: i64,
    medium_fp: i64,
    small_fp: i64,
    officer: bool,
    squad_leader: bool,
    dummy: bool,
    medic: bool,
    /// 5.6.C: a dedicated sniper stand (role `sniper_team`).
    sniper: bool,
    /// 2.2 item 4 / 2.3: the element carries an RTO.
    rto: bool,
}

#[derive(Default, Clone, Debug)]
struct Piece {
    entity: String,
    side: String,
    at: (i64, i64),
    markers: BTreeSet<String>,
    counters: BTreeMap<String, i64>,
    gone: bool,
    /// 7.6.1: back aboard its carrier (the force's reserve) after mounting again.
    aboard: bool,
}

impl Piece {
    fn c(&self, k: &str) -> i64 {
        self.counters.get(k).copied().unwrap_or(0)
    }
}

type Rect = (i64, i64, i64, i64);

pub struct DinkyDau {
    stats: BTreeMap<String, Stat>,
    /// Dense terrain rectangles of the table (1.5: 4in command radius inside).
    dense: Vec<Rect>,
    /// Every feature of the table by its terrain's name.
    terrain: BTreeMap<String, Vec<Rect>>,
    /// The village's hootches (neutral pieces), `hootch_site #1` first.
    hootches: Vec<(i64, i64)>,
    /// The assumed score of a search for a cache or a spider hole (2.3 prints none).
    site_target: i64,
    /// Ambush tokens the intact tunnel complex adds each turn (2.2 item 5, assumed).
    tunnel_tokens: i64,
    /// VP per step of the Civic Drift track at the end (ours); 0 when not scored.
    drift_vp: i64,
    medic_tabulated: bool,
    recon_4_3: bool,
    /// 5.6.C read as the choice of the target element only (option `sniper_picks_element`).
    sniper_picks_element: bool,
    /// 2.3 "a 90 degree forward arc" read as the arc ahead of the direction of march (option
    /// `overwatch_arc_ahead`) rather than an arc the player declares.
    overwatch_arc_ahead: bool,
    /// The middle of each side's set-up area (the way an element faces before it moves).
    homes: BTreeMap<String, (i64, i64)>,
    sides: Vec<String>,
    turns: i64,
    tokens_per_turn: i64,
    flat_three: bool,
    /// 6.3 item 9: the Hot LZ result of a roll the gunship's -2 takes below 1 (assumed in
    /// the hot LZ, the only scenario with a gunship on station).
    below_hot_lz: Option<String>,
    /// 10.4 as assumed: (face, threat level) to what the blind hides.
    reveal: BTreeMap<(i64, String), String>,
    /// 10.2 step 2: the scenario's Threat Level.
    threat: String,
    /// The insurgent's set-up area and the table's size and base (10.2 step 1 placement).
    insurgent_area: Option<Rect>,
    table: (i64, i64),
    base: i64,
    /// The labels of the insurgent's reserve pieces (4.2 State 0), from the assumptions.
    reserve: Vec<String>,
    /// The mechanised sweep: the allied squad aboard the ACAV (the force's reserve, written
    /// in the scenario), and the VP the scenario gives the insurgent per vehicle lost (OURS,
    /// assumed).
    aboard: Vec<String>,
    vehicle_vp: i64,
    /// The entities of kind `vehicle_type` (the ACAV, the boats): a lost one scores
    /// `vehicle_vp`.
    vehicles: BTreeSet<String>,
    /// The bunker assault: the entities of kind `fortification` (5.7.B heavy bunkers, in plain
    /// view from the start, OURS): a collapsed one scores `vehicle_vp` (the scenario's
    /// `points`) to the allied side.
    bunkers: BTreeSet<String>,
}

/// 2.3 item 5: the terrains that are cover for a reserve deployed "directly into cover" (5.1
/// step 2: to-hit cover).
const COVER: [&str; 4] = [
    "hootch",
    "dense_jungle",
    "secondary_jungle",
    "rubber_plantation",
];
/// 2.3 item 2: an allied element within 6in of the ambush point or in its sight, so at most
/// the longest line of sight (4.1: open ground).
const SIGHT_OPEN: i64 = 24 * INCH;
/// 9b.1: the mover's base runs over the token: its line within 1in (half the 2in base).
const TRIP_REACH: i64 = INCH;
/// The moves whose line may trip a wire (2.3's moves).
const MOVES: [&str; 4] = ["patrol_move", "trail_rush", "sprint", "fire_and_maneuver"];

/// The labels of a force's `reserve:` list as written in an assumption (`[2 * x, y]`).
fn reserve_labels(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (n, name) in super::log::counted_pieces(list) {
        if n == 1 {
            out.push(name);
        } else {
            out.extend((1..=n).map(|k| format!("{name} #{k}")));
        }
    }
    out
}

/// Whether the segment `a`-`b` passes strictly nearer than `r` to `c` (exact, in integers).
fn passes_near(a: (i64, i64), b: (i64, i64), c: (i64, i64), r: i64) -> bool {
    let (dx, dy) = (i128::from(b.0 - a.0), i128::from(b.1 - a.1));
    let (wx, wy) = (i128::from(c.0 - a.0), i128::from(c.1 - a.1));
    let r2 = i128::from(r) * i128::from(r);
    let along = dx * wx + dy * wy;
    let len2 = dx * dx + dy * dy;
    let d2 = |p: (i64, i64)| {
        let (x, y) = (i128::from(c.0 - p.0), i128::from(c.1 - p.1));
        x * x + y * y
    };
    if along <= 0 || len2 == 0 {
        return d2(a) < r2;
    }
    if along >= len2 {
        return d2(b) < r2;
    }
    let cross = dx * wy - dy * wx;
    cross * cross < r2 * len2
}

/// The point `[x, y]` written as an action's argument in an `acted` event.
fn raw_point(v: &Value) -> Option<(i64, i64)> {
    let t = v.as_str()?.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (x, y) = t.split_once(',')?;
    Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
}

/// 10.2 step 1: the unit the shadow blinds are, and what a reveal leaves of a squad (ours:
/// the names of the cells, jungle_patrol.sand): medium stands not there, or discarded.
const SHADOW_BLIND: &str = "shadow_element";
/// 10.2 step 2: the Threat Levels 1-3, the columns of the 10.4 table.
const THREAT_LEVELS: [&str; 3] = ["local_militia", "vc_main_force", "nva_regular"];
fn absent_mediums(found: &str) -> Option<i64> {
    match found {
        "lone_sniper" => Some(2),
        "fire_team" => Some(1),
        "full_squad" => Some(0),
        _ => None,
    }
}

// The book's numbers (lengths in tenths of a millimetre: 1in = 254).
const INCH: i64 = 254;
/// 1.5 / 2.3: command radius 6in in the open, 4in in dense terrain.
const RADIUS_OPEN: i64 = 6 * INCH;
const RADIUS_DENSE: i64 = 4 * INCH;
/// 2.3: in command 1 CP, out of command 2 CP.
const COST_IN: i64 = 1;
const COST_OUT: i64 = 2;
/// 4.2 Coordinated Platoon Sweep: 2 CP.
const COST_SWEEP: i64 = 2;
/// 2.3 / 9b.2: "within 2in" of a site, from the edge of a 2in base.
const REACH_SITE: i64 = 3 * INCH;
/// 5.7.A "within 2in" and a medic with a squad: 2in coherency between 2in bases.
const ALONGSIDE: i64 = 4 * INCH;
/// 9b.2 item 3: the Search Test for an entrance; item 9: demolition.
const TUNNEL_SEARCH: i64 = 4;
const DEMOLITION: i64 = 3;
/// 3.4 item 6: first aid.
const FIRST_AID: i64 = 5;
/// 5.7.A: the grenade lands on 4+, then 2 dice hit on 4+.
const FRAG_LANDS: i64 = 4;
const FRAG_DICE: usize = 2;
/// 9b.3 triggers.
const DRIFT_CACHE: i64 = 2;
const DRIFT_BURNED: i64 = -1;
const DRIFT_MEDCAP: i64 = 1;
const DRIFT_RECON_9B: i64 = -3;
const DRIFT_RECON_4_3: i64 = -1;
/// 9b.3: artillery, mortars or napalm within 6in of a village, -2.
const DRIFT_HEAVY_FIRE: i64 = -2;
const VILLAGE_FIRE: i64 = 6 * INCH;
/// 2.3 move allowances, inches.
fn allowance(action: &str) -> Option<i64> {
    match action {
        "patrol_move" => Some(6),
        "trail_rush" => Some(8),
        "sprint" => Some(9),
        "fire_and_maneuver" => Some(4),
        _ => None,
    }
}

/// The hidden sites the insurgent notes before play (2.3, 9b.2).
const SITES: [&str; 3] = ["tunnel_entrance", "rice_cache", "spider_hole"];

/// Whether `hootch_site #(k + 1)` was burned in the lines so far.
fn burned_label(lines: &[Line], k: usize) -> bool {
    let name = format!("hootch_site #{}", k + 1);
    lines
        .iter()
        .any(|x| x.kind() == "marked" && x.s("marker") == "burned_marker" && x.s("piece") == name)
}

fn inside(r: &Rect, p: (i64, i64)) -> bool {
    p.0 >= r.0 && p.0 <= r.2 && p.1 >= r.1 && p.1 <= r.3
}

/// Whether the straight line from `a` to `b` touches the rectangle (sampled every 1/256).
fn touches(r: &Rect, a: (i64, i64), b: (i64, i64)) -> bool {
    (0..=256).any(|k| {
        let p = (a.0 + (b.0 - a.0) * k / 256, a.1 + (b.1 - a.1) * k / 256);
        inside(r, p)
    })
}

/// The last point `(x in, y in)` written in a choice's label, in tenths of a millimetre.
fn label_point(label: &str) -> Option<(i64, i64)> {
    let open = label.rfind('(')?;
    let inner = label[open + 1..].split(')').next()?;
    let (x, y) = inner.split_once(',')?;
    let num = |t: &str| -> Option<i64> {
        let v: f64 = t.trim().strip_suffix("in")?.parse().ok()?;
        Some((v * INCH as f64).round() as i64)
    };
    Some((num(x)?, num(y)?))
}

/// The names between a choice's first parentheses.
fn label_args(label: &str) -> Vec<String> {
    label
        .split_once('(')
        .map(|(_, rest)| {
            rest.trim_end_matches(')')
                .split(", ")
                .map(|a| a.trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// 5.1 step 4: morale targets.
fn morale_target(quality: &str) -> i64 {
    match quality {
        "veteran" => 3,
        "militia" => 5,
        _ => 4,
    }
}

/// 4.2 / 4.5.A / 2.3: the spotting modifiers, in the order of the resolution's arguments.
fn spotting_total(roll: i64, args: &[String]) -> i64 {
    let flag = |i: usize| args.get(i).is_some_and(|a| a.ends_with("true"));
    let terrain = args.first().map(String::as_str).unwrap_or_default();
    let mut m = 0;
    if flag(1) {
        m += 1; // target sprinting or firing
    }
    if terrain.ends_with("secondary_growth") {
        m -= 1;
    }
    if terrain.ends_with("dense_growth") {
        m -= 2;
    }
    if flag(2) {
        m += 1; // binoculars
    }
    if flag(3) {
        m -= 1; // isolated medic / RTO
    }
    if flag(4) {
        m -= 1; // rear blind spot
    }
    if flag(5) {
        m += 1; // target in motion (4.5.A)
    }
    if flag(6) {
        m -= 1; // target concealed (4.5.A)
    }
    if flag(7) {
        m += 1; // patrol move (2.3)
    }
    roll + m
}

fn arg_int(args: &[String], i: usize) -> i64 {
    args.get(i)
        .and_then(|a| a.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(-1)
}

fn arg_bool(args: &[String], i: usize) -> bool {
    args.get(i).is_some_and(|a| a.ends_with("true"))
}

/// The name of a table feature's terrain.
fn terrain_name(ir: &Value, f: &Value) -> String {
    prop(f, "terrain")
        .first()
        .and_then(|(_, v)| v["Const"]["Entity"].as_u64())
        .and_then(|i| ir["entities"][i as usize]["name"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// One log line, as far as this referee reads it.
struct Line {
    v: Value,
}

impl Line {
    fn kind(&self) -> &str {
        self.v["event"].as_str().unwrap_or_default()
    }
    fn s(&self, k: &str) -> String {
        self.v[k].as_str().unwrap_or_default().to_string()
    }
    fn args(&self) -> Vec<String> {
        self.v["args"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| x.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }
    fn dice(&self) -> Vec<i64> {
        self.v["dice"]
            .as_array()
            .map(|a| a.iter().map(|d| d["face"].as_i64().unwrap_or(0)).collect())
            .unwrap_or_default()
    }
}

impl DinkyDau {
    pub fn new(ir: &Value, scenario: &str, assumed: &BTreeMap<String, String>) -> Self {
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let sides: Vec<String> = ir["sides"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect();
        let mut stats = BTreeMap::new();
        for e in ir["entities"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap_or_default().to_string();
            let get = |k: &str| -> Option<Value> {
                let f = e["fields"].as_array()?.iter().find(|f| f[0] == k)?;
                constant(ir, &f[1], assumed)
            };
            let Some(role) = get("role") else { continue };
            let Some(mediums) = get("mediums").and_then(|v| v.as_i64()) else {
                continue;
            };
            let side = e["side"]
                .as_u64()
                .and_then(|i| sides.get(i as usize).cloned())
                .unwrap_or_default();
            let int = |k: &str| get(k).and_then(|v| v.as_i64()).unwrap_or(0);
            let boolean = |k: &str| get(k).and_then(|v| v.as_bool()).unwrap_or(false);
            stats.insert(
                name,
                Stat {
                    side,
                    mediums,
                    smalls: int("smalls"),
                    medium_fp: int("medium_fp"),
                    small_fp: int("small_fp"),
                    officer: boolean("officer"),
                    squad_leader: boolean("squad_leader"),
                    dummy: role.as_str() == Some("dummy_blind"),
                    medic: role.as_str() == Some("medic_team"),
                    sniper: role.as_str() == Some("sniper_team"),
                    rto: boolean("rto"),
                },
            );
        }
        // The features of the table by terrain; the dense ones are those named dense_jungle.
        let mut terrain: BTreeMap<String, Vec<Rect>> = BTreeMap::new();
        for f in board["blocks"].as_array().into_iter().flatten() {
            if f["keyword"] != "feature" {
                continue;
            }
            let r: Vec<i64> = prop(f, "rect")
                .iter()
                .filter_map(|(_, v)| constant(ir, v, assumed).and_then(|c| c.as_i64()))
                .collect();
            if r.len() == 4 {
                terrain
                    .entry(terrain_name(ir, f))
                    .or_default()
                    .push((r[0], r[1], r[2], r[3]));
            }
        }
        let dense = terrain.get("dense_jungle").cloned().unwrap_or_default();
        // The hootches: the scenario's neutral pieces, at their `at:` points.
        let mut hootches = Vec::new();
        for b in sc["blocks"].as_array().into_iter().flatten() {
            if b["keyword"] != "neutral" {
                continue;
            }
            for (_, v) in prop(b, "at") {
                let xy: Vec<i64> = v["List"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| constant(ir, c, assumed).and_then(|c| c.as_i64()))
                    .collect();
                if xy.len() == 2 {
                    hootches.push((xy[0], xy[1]));
                }
            }
        }
        let int_field = |entity: &str, name: &str| {
            super::log::field(ir, entity, name, assumed)
                .and_then(|v| v.as_i64())
                .unwrap_or(0)
        };
        let site_target = int_field("rice_cache", "search_target");
        let tunnel_tokens = int_field("tunnel_network", "tokens");
        // The drift track is scored by the village sweep only.
        let drift_vp = if scenario == "village_sweep" || scenario == "mech_sweep" {
            int_field("civic_track", "vp_per_step")
        } else {
            0
        };
        let num = |k: &str| -> i64 {
            assumed
                .get(&format!("scenario.{scenario}.{k}"))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        // The reading of the -3 / -2: written in the scenario, or (`options: ?`) assumed.
        let option = |name: &str| {
            prop(sc, "options")
                .iter()
                .any(|(_, v)| v["Const"]["Symbol"] == name)
                || assumed
                    .get(&format!("scenario.{scenario}.options"))
                    .is_some_and(|v| v.contains(name))
        };
        let flat_three = option("flat_three");
        let mut reveal = BTreeMap::new();
        for (k, v) in assumed {
            let Some(cell) = k
                .strip_prefix("contact_reveal_table[")
                .and_then(|c| c.strip_suffix(']'))
            else {
                continue;
            };
            // The table's columns are the Threat Levels 1-3 (10.2 step 2), named by number.
            if let Some((face, col)) = cell.split_once(',')
                && let Ok(face) = face.trim().parse::<i64>()
                && let Some(threat) = col
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .and_then(|c| THREAT_LEVELS.get(c.wrapping_sub(1)))
            {
                reveal.insert((face, threat.to_string()), v.clone());
            }
        }
        let threat = assumed
            .get(&format!("scenario.{scenario}.threat_level"))
            .cloned()
            .or_else(|| {
                prop(sc, "threat_level")
                    .first()
                    .and_then(|(_, v)| v["Const"]["Symbol"].as_str().map(String::from))
            })
            .unwrap_or_default();
        let rect_of = |b: &Value| -> Option<Rect> {
            let r: Vec<i64> = prop(b, "rect")
                .iter()
                .filter_map(|(_, v)| constant(ir, v, assumed).and_then(|c| c.as_i64()))
                .collect();
            (r.len() == 4).then(|| (r[0], r[1], r[2], r[3]))
        };
        let area_of = |side: Option<&String>| {
            sc["blocks"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|b| b["keyword"] == "force" && b["name"].as_str() == side.map(String::as_str))
                .and_then(|f| {
                    prop(f, "deploy")
                        .first()
                        .and_then(|(_, v)| v["Const"]["Symbol"].as_str().map(String::from))
                })
                .and_then(|name| {
                    board["blocks"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|b| b["keyword"] == "area" && b["name"] == name.as_str())
                        .and_then(rect_of)
                })
        };
        // 4.2 (READING): an element that has not moved faces the middle of the enemy's set-up
        // area.
        let homes: BTreeMap<String, (i64, i64)> = sides
            .iter()
            .filter_map(|s| {
                area_of(Some(s)).map(|(x0, y0, x1, y1)| (s.clone(), ((x0 + x1) / 2, (y0 + y1) / 2)))
            })
            .collect();
        let insurgent_area = sc["blocks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| {
                b["keyword"] == "force" && b["name"].as_str() == sides.get(1).map(String::as_str)
            })
            .and_then(|f| {
                prop(f, "deploy")
                    .first()
                    .and_then(|(_, v)| v["Const"]["Symbol"].as_str().map(String::from))
            })
            .and_then(|name| {
                board["blocks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|b| b["keyword"] == "area" && b["name"] == name.as_str())
                    .and_then(rect_of)
            });
        let board_len = |k: &str, or: i64| {
            prop(board, k)
                .first()
                .and_then(|(_, v)| constant(ir, v, assumed))
                .and_then(|c| c.as_i64())
                .unwrap_or(or)
        };
        let table = (board_len("width", 48 * INCH), board_len("depth", 48 * INCH));
        let base = board_len("base", INCH);
        DinkyDau {
            reveal,
            threat,
            insurgent_area,
            table,
            base,
            reserve: assumed
                .get("force.insurgent.reserve")
                .map(|l| reserve_labels(l))
                .unwrap_or_default(),
            // `reserve: 1 * cav_rifle_squad` after its two squads set up: the third.
            aboard: match scenario {
                "mech_sweep" => vec!["cav_rifle_squad #3".to_string()],
                // The river landing: the whole platoon rides in the Tango boat.
                "river_landing" => ["cav_platoon_hq", "cav_rifle_squad #1", "cav_rifle_squad #2"]
                    .map(String::from)
                    .to_vec(),
                _ => Vec::new(),
            },
            vehicles: {
                let kind = ir["kinds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .position(|k| k["name"] == "vehicle_type");
                ir["entities"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|e| kind.is_some() && e["kind"].as_u64() == kind.map(|k| k as u64))
                    .filter_map(|e| e["name"].as_str().map(String::from))
                    .collect()
            },
            bunkers: {
                let kind = ir["kinds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .position(|k| k["name"] == "fortification");
                ir["entities"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|e| kind.is_some() && e["kind"].as_u64() == kind.map(|k| k as u64))
                    .filter_map(|e| e["name"].as_str().map(String::from))
                    .collect()
            },
            vehicle_vp: assumed
                .get(&format!("scenario.{scenario}.points"))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            stats,
            dense,
            terrain,
            hootches,
            site_target,
            tunnel_tokens,
            drift_vp,
            medic_tabulated: option("medic_as_tabulated"),
            recon_4_3: option("recon_incident_4_3"),
            sniper_picks_element: option("sniper_picks_element"),
            overwatch_arc_ahead: option("overwatch_arc_ahead"),
            homes,
            sides,
            turns: num("turns"),
            tokens_per_turn: num("ambush_tokens"),
            flat_three,
            below_hot_lz: assumed.get("hot_lz_ground_fire").cloned(),
        }
    }

    fn rects(&self, terrain: &str) -> &[Rect] {
        self.terrain.get(terrain).map_or(&[], Vec::as_slice)
    }

    fn in_terrain(&self, terrain: &str, p: (i64, i64)) -> bool {
        self.rects(terrain).iter().any(|r| inside(r, p))
    }

    fn is_sniper(&self, label: &str) -> bool {
        self.stats
            .get(entity_of(label, &self.sides))
            .is_some_and(|s| s.sniper)
    }

    /// 4.5.C: a sniper in a tree canopy (dense jungle or the rubber plantation).
    fn in_canopy(&self, p: (i64, i64)) -> bool {
        self.in_terrain("dense_jungle", p) || self.in_terrain("rubber_plantation", p)
    }

    /// Snipers (4.2 State 0, 4.5.C, 5.6.C / 5.1 step 4), from the log alone:
    /// - a small stand of an element with medium stands left is lost in an aimed fire order
    ///   only when the firer is a sniper (the Body Shield rule otherwise);
    /// - a sniper's aimed fire puts each unsaved hit on a small stand of its target while it
    ///   has one (no ring on a medium stand, no Look Out, Sir! roll);
    /// - aimed fire at a sniper in a tree canopy saves on 4+ (heavy cover), 6 at point blank;
    /// - a tree sniper that loses a stand or fails its pinning test is eliminated at once,
    ///   and is never pinned.
    fn snipers(&self, lines: &[Line], r: &mut Report) {
        if !self.stats.values().any(|s| s.sniper) {
            return;
        }
        let mut at: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut lost: BTreeMap<(String, String), i64> = BTreeMap::new();
        let mut acted: Option<(String, Vec<String>)> = None;
        let mut looked_out = false;
        // Whether the piece is eliminated before the next order or roll.
        let falls = |n: usize, label: &str| {
            lines[n + 1..]
                .iter()
                .take_while(|x| {
                    (x.kind() != "decision" || x.s("label").starts_with("choose "))
                        && x.kind() != "phase"
                })
                .any(|x| x.kind() == "eliminated" && x.s("piece") == label)
        };
        for (n, l) in lines.iter().enumerate() {
            match l.kind() {
                "deployed" | "entered" => {
                    if let Some(p) = point(&l.v["at"]) {
                        at.insert(l.s("piece"), p);
                    }
                }
                "moved" => {
                    if let Some(p) = point(&l.v["to"]) {
                        at.insert(l.s("piece"), p);
                    }
                }
                "decision" if !l.s("label").starts_with("choose ") => acted = None,
                "acted" => {
                    acted = Some((l.s("action"), l.args()));
                    looked_out = false;
                }
                "resolved" => {
                    let Some((action, args)) = acted.as_ref().filter(|(a, _)| a == "aimed_fire")
                    else {
                        continue;
                    };
                    let (firer, target) = (&args[0], &args[1]);
                    let canopy = self.is_sniper(target)
                        && at.get(target).is_some_and(|&p| self.in_canopy(p));
                    match l.s("name").as_str() {
                        "save_roll" if canopy && l.s("why") == *action => {
                            let d = match (at.get(firer), at.get(target)) {
                                (Some(&a), Some(&b)) => dist(a, b),
                                _ => continue,
                            };
                            let save = arg_int(&l.args(), 1);
                            let want = if d <= 3 * INCH { 6 } else { 4 };
                            r.check(
                                "4.5.C: a tree sniper saves on 4+ (heavy cover; 6 at point blank)",
                                (save != want).then(|| {
                                    format!("{target} saved on {save}, {d} apart (line {n})")
                                }),
                            );
                        }
                        "morale_test" if canopy && l.s("result") == "fail" => r.check(
                            "4.5.C: a tree sniper that fails its pinning test is eliminated",
                            (!falls(n, target)).then(|| format!("{target} (line {n})")),
                        ),
                        "look_out_sir" => looked_out = true,
                        _ => {}
                    }
                }
                "marked" if l.s("marker") == "pinned_marker" => {
                    let label = l.s("piece");
                    let tree = self.is_sniper(&label)
                        && at.get(&label).is_some_and(|&p| self.in_canopy(p));
                    r.check(
                        "4.5.C: a tree sniper is never pinned (it falls)",
                        tree.then(|| format!("{label} pinned in a tree (line {n})")),
                    );
                }
                "counted" => {
                    let label = l.s("piece");
                    let counter = l.s("counter");
                    if !matches!(
                        counter.as_str(),
                        "front_ring" | "mediums_lost" | "smalls_lost"
                    ) {
                        continue;
                    }
                    let value = l.v["value"].as_i64().unwrap_or(0);
                    let before = lost
                        .insert((label.clone(), counter.clone()), value)
                        .unwrap_or(0);
                    let c = |k: &str| lost.get(&(label.clone(), k.to_string())).copied();
                    let Some(stat) = self.stats.get(entity_of(&label, &self.sides)) else {
                        continue;
                    };
                    let tree = stat.sniper && at.get(&label).is_some_and(|&p| self.in_canopy(p));
                    if tree && (counter != "front_ring" || value > before) {
                        r.check(
                            "4.5.C: a tree sniper that takes an unsaved hit is eliminated",
                            (!falls(n, &label)).then(|| format!("{label} (line {n})")),
                        );
                    }
                    let Some((action, args)) = acted.as_ref() else {
                        continue;
                    };
                    if action != "aimed_fire" || args.get(1) != Some(&label) || value <= before {
                        continue;
                    }
                    let smalls_before = stat.smalls - c("smalls_lost").unwrap_or(0)
                        + i64::from(counter == "smalls_lost");
                    let mediums_before = stat.mediums - c("mediums_lost").unwrap_or(0)
                        + i64::from(counter == "mediums_lost");
                    if self.is_sniper(&args[0]) && !self.sniper_picks_element {
                        r.check(
                            // The allied elements are the Air Cav's (`cav_`).
                            if args[0].starts_with("cav_") {
                                "5.6.C: the patrol's sniper team's unsaved hit takes a small stand while there is one"
                            } else {
                                "5.6.C: a sniper's unsaved hit takes a small stand while there is one"
                            },
                            (smalls_before > 0 && counter != "smalls_lost" || looked_out)
                                .then(|| format!("{label} {counter} (line {n})")),
                        );
                    } else {
                        r.check(
                            "5.6.C: only a sniper hits a small stand past the medium stands",
                            (counter == "smalls_lost" && mediums_before > 0)
                                .then(|| format!("{label} by {} (line {n})", args[0])),
                        );
                    }
                }
                _ => {}
            }
        }
    }

    fn in_dense(&self, p: (i64, i64)) -> bool {
        self.dense
            .iter()
            .any(|&(x0, y0, x1, y1)| p.0 >= x0 && p.0 <= x1 && p.1 >= y0 && p.1 <= y1)
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        let lines: Vec<Line> = text
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(|l| Line {
                v: serde_json::from_str(l).expect("a log line is JSON"),
            })
            .collect();
        self.snipers(&lines, r);
        self.arcs(&lines, r);
        self.wrecks(&lines, r);
        let mut pieces: BTreeMap<String, Piece> = BTreeMap::new();
        let mut phase = String::new();
        let mut cp = 0i64;
        let mut tokens = 0i64;
        // Per game tallies for the VP recount.
        let mut kia = 0i64;
        let mut extracted = 0i64;
        let mut abandoned = 0i64;
        let mut comm_left = 0i64;
        // The mechanised sweep: stands killed aboard a vehicle (KIA, 7.6.2), vehicles lost,
        // fire missions landing within 6in of a hootch (9b.3), the missions called and landed.
        let mut aboard_killed = 0i64;
        let mut vehicles_lost = 0i64;
        let mut bunkers_lost = 0i64;
        let mut heavy_fire = 0i64;
        let mut called: BTreeSet<String> = BTreeSet::new();
        let mut landed: BTreeSet<String> = BTreeSet::new();
        // The order in progress: its side, its cost, and what happened in it so far.
        let mut order: Option<(String, String)> = None; // (side, label)
        let mut cost_due: i64 = 0;
        let mut emergency_expected = false;
        let mut emergency_seen = false;
        let mut recon_six = false;
        // Spotting tests rolled in the order in progress (4.2: a sweep tests at most three squads).
        let mut spots_in_order = 0i64;
        let mut last_hits: Option<i64> = None;
        let mut unsaved_left = 0i64;
        let mut unsaved_target: Option<String> = None;
        // Why a casualty token leaves `lying` in Phase 3: "kia" or "stabilised" (3.4 item 3).
        let mut bleed_pending: Vec<&'static str> = Vec::new();
        let mut touchdown: Option<String> = None;
        let mut turn = 0i64;
        // Allied elements in the order they were set up (the order the bleed rolls follow).
        let mut deploy_order: Vec<String> = Vec::new();
        // The village sweep: what the drift recount needs, and the order in progress.
        let mut medcaps = 0i64;
        let mut recon_civilians = 0i64;
        let mut burned_bare = 0i64;
        let mut search_expect: Vec<&'static str> = Vec::new();
        let mut search_success = false;
        let mut demolished = false;
        let mut bleed_flags: Vec<bool> = Vec::new();
        let mut first_aid_heal = false;
        let mut entered: BTreeMap<String, i64> = BTreeMap::new();
        let mut mud_sprint: Option<String> = None;
        let allied = self.sides.first().cloned().unwrap_or_default();
        let insurgent = self.sides.get(1).cloned().unwrap_or_default();
        // 10.2 step 1 / 10.4: where the pieces were set up, the shadow blinds placed so far,
        // and a shadow blind revealed whose Contact Reveal roll is owed.
        let mut set_up: Vec<(i64, i64)> = Vec::new();
        let mut blinds_at: Vec<(i64, i64)> = Vec::new();
        let mut reveal_owed: Option<String> = None;
        // The Reserve Hand: where each element down a tunnel stands below ground; a mover
        // whose line crossed the creek, owed an echo at the end of its order (4.2 State 1).
        // The calls that spring a reserve are logged after the events of the order they
        // interrupt, so the k-th entry of an order answers to its k-th call.
        let order_bounds = |n: usize| {
            let starts = |x: &Line| {
                (x.kind() == "decision" && !x.s("label").starts_with("choose "))
                    || x.kind() == "phase"
                    || x.kind() == "turn"
                    || x.kind() == "end"
            };
            let from = (0..n).rev().find(|&i| starts(&lines[i])).unwrap_or(0);
            let to = (n + 1..lines.len())
                .find(|&i| starts(&lines[i]))
                .unwrap_or(lines.len());
            (from, to)
        };
        // The call that answers the event at line `n` that is the k-th of those `is_event`
        // picks in its order: the k-th insurgent call among `calls`.
        let call_for = |n: usize, is_event: &dyn Fn(&Line) -> bool, calls: &[&str]| {
            let (from, to) = order_bounds(n);
            let k = lines[from..n].iter().filter(|x| is_event(x)).count();
            lines[from..to]
                .iter()
                .filter(|x| {
                    x.kind() == "decision"
                        && x.s("side") == insurgent
                        && calls.contains(&x.s("label").as_str())
                })
                .nth(k)
                .map(|x| x.s("label"))
        };
        let mut below: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut water_due: Option<(String, usize)> = None;

        for (n, l) in lines.iter().enumerate() {
            if let Some((m, end)) = water_due.clone()
                && n >= end
            {
                water_due = None;
                let ok = pieces.get(&m).is_none_or(|p| {
                    p.gone
                        || p.markers.contains("echo_marker")
                        || p.markers.contains("confirmed_contact")
                });
                r.check(
                    "4.2 State 1 trigger 2: a blind that crosses water is an echo",
                    (!ok).then(|| {
                        format!("{m} crossed the creek unheard (order ending line {end})")
                    }),
                );
            }
            match l.kind() {
                "turn" => {
                    turn = l.v["turn"].as_i64().unwrap_or(0);
                    r.check(
                        "2.4 item 8: turn limit",
                        (turn > self.turns)
                            .then(|| format!("turn {turn} beyond the limit {}", self.turns)),
                    );
                }
                "phase" => {
                    phase = l.s("phase");
                    if phase.contains("Tension") {
                        tokens += self.tokens_per_turn;
                        // 2.2 item 5: the tunnel complex's tokens while an entrance is intact.
                        if pieces.values().any(|p| {
                            p.entity == "tunnel_entrance" && !p.markers.contains("collapsed_marker")
                        }) {
                            tokens += self.tunnel_tokens;
                        }
                        // With no officer left the CP are the Squad Leaders alone (2.2 item 4).
                        if !self.officer_alive(&pieces) {
                            cp = self.leaders(&pieces);
                        }
                    }
                    // 2.2 items 1-2 come before item 4: a fire mission landing in the Tension
                    // phase may kill the officer before the CP are rolled (none is then rolled).
                    if phase.contains("Engagement") && !self.officer_alive(&pieces) {
                        cp = self.leaders(&pieces);
                    }
                    if phase.contains("Consolidation") {
                        // 3.4 item 3 / 6.2: the bleed rolls owed, element by element in set-up
                        // order, each with or without a medic alongside, then the abandoned.
                        let medics: Vec<(i64, i64)> = pieces
                            .values()
                            .filter(|p| {
                                !p.gone
                                    && self
                                        .stats
                                        .get(&p.entity)
                                        .is_some_and(|s| s.medic && p.c("smalls_lost") < s.smalls)
                            })
                            .map(|p| p.at)
                            .collect();
                        bleed_flags.clear();
                        for label in &deploy_order {
                            let Some(p) = pieces.get(label) else { continue };
                            // A squad aboard its carrier rolls no bleed (the engine's phase
                            // walks the elements on the table).
                            if p.gone || p.aboard {
                                continue;
                            }
                            let tended = medics.iter().any(|&m| dist(m, p.at) <= ALONGSIDE);
                            let lying = usize::try_from(p.c("lying")).unwrap_or(0);
                            bleed_flags.extend(std::iter::repeat_n(tended, lying));
                        }
                        let left = usize::try_from(abandoned).unwrap_or(0);
                        bleed_flags.extend(std::iter::repeat_n(false, left));
                        bleed_flags.reverse();
                    }
                }
                "deployed" => {
                    let label = l.s("piece");
                    let entity = entity_of(&label, &self.sides).to_string();
                    let side = l.s("side");
                    let at = point(&l.v["at"]).unwrap_or_default();
                    let ghost = n > 0 && lines[n - 1].s("why").starts_with("jungle_ghost");
                    if entity == SHADOW_BLIND && ghost {
                        let want = self.placement_tier(&set_up, &blinds_at);
                        let got = self.tier_of(at, &blinds_at);
                        r.check(
                            "10.2 step 1: shadow blinds are placed by the placement priority",
                            (want.is_some_and(|w| got != Some(w))).then(|| {
                                format!("{label} at {at:?} on tier {got:?}, tier {want:?} had room (line {n})")
                            }),
                        );
                    }
                    if entity == SHADOW_BLIND {
                        blinds_at.push(at);
                    }
                    set_up.push(at);
                    if side == allied && self.stats.contains_key(&entity) {
                        deploy_order.push(label.clone());
                    }
                    pieces.insert(
                        label,
                        Piece {
                            entity,
                            side,
                            at: point(&l.v["at"]).unwrap_or_default(),
                            ..Piece::default()
                        },
                    );
                }
                "moved" => {
                    if l.s("why") == "call_fire_mission" {
                        called.insert(l.s("piece"));
                    }
                    if let (Some(p), Some(to)) = (pieces.get_mut(&l.s("piece")), point(&l.v["to"]))
                    {
                        if p.markers.contains("in_tunnel") {
                            below.entry(l.s("piece")).or_insert(p.at);
                        }
                        p.at = to;
                    }
                }
                "withdrawn" => {
                    // 7.6.1: a squad mounts again (off the table, out of every sight).
                    if let Some(p) = pieces.get_mut(&l.s("piece")) {
                        p.aboard = true;
                    }
                }
                "entered" => {
                    // 4.2 State 0 / 2.3 item 5: a reserve element comes on.
                    let label = l.s("piece");
                    let at = point(&l.v["at"]).unwrap_or_default();
                    // 7.6: an allied squad off a vehicle (its rules: dinky_armour.rs); one that
                    // mounted again keeps its stands, casualties and place in the set-up order.
                    if let Some(p) = pieces.get_mut(&label).filter(|p| p.aboard) {
                        p.aboard = false;
                        p.at = at;
                        continue;
                    }
                    if l.s("side") == allied {
                        deploy_order.push(label.clone());
                        pieces.insert(
                            label.clone(),
                            Piece {
                                entity: entity_of(&label, &self.sides).to_string(),
                                side: allied.clone(),
                                at,
                                ..Piece::default()
                            },
                        );
                        continue;
                    }
                    let call = call_for(
                        n,
                        &|x: &Line| x.kind() == "entered",
                        &["choose spring_from_reserve", "choose spring_at_tripwire"],
                    );
                    let how = match call.as_deref() {
                        Some("choose spring_from_reserve") => Some("reserve"),
                        Some("choose spring_at_tripwire") => Some("tripwire"),
                        _ => None,
                    };
                    r.check(
                        "4.2 State 0: a reserve element enters only when sprung by a token or a tripwire",
                        how.is_none()
                            .then(|| format!("{label} entered with no spring (line {n})")),
                    );
                    let mover = order
                        .as_ref()
                        .filter(|(s, _)| *s == allied)
                        .and_then(|(_, lab)| label_args(lab).first().cloned())
                        .and_then(|m| pieces.get(&m))
                        .map(|p| p.at);
                    let in_cover = COVER.iter().any(|t| self.in_terrain(t, at));
                    let by = |p: &Piece| {
                        dist(p.at, at) <= REACH_SITE
                            && if how == Some("tripwire") {
                                p.entity == "booby_trap" && p.markers.contains("tripped_marker")
                            } else {
                                matches!(
                                    p.entity.as_str(),
                                    "ambush_marker" | "spider_hole" | "tunnel_entrance"
                                ) && !p.markers.contains("collapsed_marker")
                                    && mover.is_some_and(|m| dist(p.at, m) <= SIGHT_OPEN)
                            }
                    };
                    let near = pieces.values().any(by);
                    r.check(
                        "2.3 item 5: a reserve element enters into cover within 2in of its marker",
                        (!(in_cover && near)).then(|| {
                            format!("{label} entered at {at:?}, cover {in_cover}, by its marker {near} (line {n})")
                        }),
                    );
                    pieces.insert(
                        label.clone(),
                        Piece {
                            entity: entity_of(&label, &self.sides).to_string(),
                            side: insurgent.clone(),
                            at,
                            ..Piece::default()
                        },
                    );
                }
                "acted" => {
                    // The moves of 2.3: the tripwires on their line (9b.1) and the creek
                    // (4.2 State 1 trigger 2).
                    let action = l.s("action");
                    let args: Vec<Value> = l.v["args"].as_array().cloned().unwrap_or_default();
                    let mover = args.first().and_then(|v| v.as_str()).unwrap_or_default();
                    let (Some(from), Some(dest)) = (
                        pieces.get(mover).map(|p| p.at),
                        args.last().and_then(raw_point),
                    ) else {
                        continue;
                    };
                    if !MOVES.contains(&action.as_str()) {
                        continue;
                    }
                    let starts = |x: &Line| {
                        (x.kind() == "decision" && !x.s("label").starts_with("choose "))
                            || x.kind() == "phase"
                            || x.kind() == "turn"
                            || x.kind() == "end"
                    };
                    let end = (n + 1..lines.len())
                        .find(|&i| starts(&lines[i]))
                        .unwrap_or(lines.len());
                    let seg = &lines[n + 1..end];
                    let went = seg
                        .iter()
                        .any(|x| x.kind() == "moved" && x.s("piece") == mover);
                    if l.s("side") == allied {
                        let mut want: BTreeSet<String> = BTreeSet::new();
                        if went {
                            for (name, p) in &pieces {
                                if p.entity == "booby_trap"
                                    && !p.markers.contains("tripped_marker")
                                    && passes_near(from, dest, p.at, TRIP_REACH)
                                {
                                    want.insert(name.clone());
                                }
                            }
                        }
                        let got: BTreeSet<String> = seg
                            .iter()
                            .filter(|x| x.kind() == "marked" && x.s("marker") == "tripped_marker")
                            .map(|x| x.s("piece"))
                            .collect();
                        // 9b.1 "enters a trapped hootch": a move that ends inside the hootch
                        // the token lies in, from outside it.
                        if went {
                            for (name, p) in &pieces {
                                if p.entity == "booby_trap"
                                    && !p.markers.contains("tripped_marker")
                                    && self.rects("hootch").iter().any(|h| {
                                        inside(h, p.at) && inside(h, dest) && !inside(h, from)
                                    })
                                {
                                    want.insert(name.clone());
                                }
                            }
                        }
                        if !want.is_empty() || !got.is_empty() {
                            r.check(
                                "9b.1: a tripwire trips exactly when an allied move runs over it",
                                (want != got).then(|| {
                                    format!("{mover} from {from:?} to {dest:?}: over {want:?}, tripped {got:?} (line {n})")
                                }),
                            );
                        }
                    }
                    let wet = self.in_terrain("stream", from)
                        || self.crosses_inside("stream", from, dest);
                    if went && wet {
                        water_due = Some((mover.to_string(), end));
                    }
                }
                "counted" => {
                    let label = l.s("piece");
                    let counter = l.s("counter");
                    let value = l.v["value"].as_i64().unwrap_or(0);
                    let Some(p) = pieces.get(&label).cloned() else {
                        continue;
                    };
                    let before = p.c(&counter);
                    let stat = self.stats.get(&p.entity).cloned();
                    // Stand losses follow the hits (5.1 step 4).
                    if counter == "front_ring" && value == 1 {
                        let ok = unsaved_left > 0
                            && unsaved_target.as_deref().is_none_or(|t| t == label)
                            || recon_six;
                        r.check(
                            "5.1 step 4: a ring comes from an unsaved hit",
                            (!ok).then(|| format!("{label} ringed with no unsaved hit (line {n})")),
                        );
                        unsaved_left -= 1;
                    }
                    if counter == "front_ring" && value == 0 && before == 1 {
                        if first_aid_heal {
                            // 3.4 item 6: a flesh wound, the ring is taken off.
                            first_aid_heal = false;
                        } else if let Some(q) = pieces.get_mut(&label) {
                            // The ring comes off as its stand collapses (the next event).
                            q.counters.insert("_ring_cleared".into(), 1);
                        }
                    }
                    if counter == "mediums_lost" && value > before {
                        r.check(
                            "5.1 step 4: a medium stand collapses on its 2nd hit",
                            (p.c("_ring_cleared") != 1).then(|| {
                                format!(
                                    "{label} lost a medium stand that carried no ring (line {n})"
                                )
                            }),
                        );
                        unsaved_left -= 1;
                        if let Some(q) = pieces.get_mut(&label) {
                            q.counters.insert("_ring_cleared".into(), 0);
                        }
                    }
                    // 5.6.C: the order's firer is a sniper, or a sniper on the table fires in an
                    // allied order (an ambush); its hits are checked in `snipers`.
                    let sniper_fire = !self.sniper_picks_element
                        && order.as_ref().is_some_and(|(side, lab)| {
                            let actor = lab
                                .split_once('(')
                                .and_then(|(_, rest)| rest.split([',', ')']).next())
                                .map(str::trim)
                                .unwrap_or_default();
                            self.is_sniper(actor)
                                || *side == allied
                                    && pieces.iter().any(|(k, q)| !q.gone && self.is_sniper(k))
                        });
                    if counter == "smalls_lost" && value > before && !sniper_fire {
                        let mediums_left = stat.as_ref().map_or(0, |s| s.mediums)
                            - p.c("mediums_lost")
                            - p.c("_absent");
                        r.check(
                            "5.1 step 4: small stands are hit only when no medium stand is left",
                            (mediums_left > 0).then(|| {
                                format!("{label} lost a small stand with {mediums_left} medium stands left (line {n})")
                            }),
                        );
                    }
                    if phase.contains("Consolidation") && counter == "lying" && value < before {
                        // A bleed roll of this element's token came up KIA, or a medic's roll
                        // stabilised it (the token moves to `stable` next).
                        let why = bleed_pending.pop();
                        r.check(
                            "2.4 / 6.2: a casualty token dies only on a KIA bleed roll",
                            why.is_none().then(|| {
                                format!("{label} lost a token without a KIA roll (line {n})")
                            }),
                        );
                        if why == Some("stabilised") {
                            let next = lines.get(n + 1);
                            r.check(
                                "3.4 item 3: a tended casualty that lives is stabilised",
                                (!next.is_some_and(|x| {
                                    x.kind() == "counted"
                                        && x.s("piece") == label
                                        && x.s("counter") == "stable"
                                        && x.v["value"].as_i64() == Some(p.c("stable") + 1)
                                }))
                                .then(|| format!("{label} not stabilised (line {n})")),
                            );
                        }
                    }
                    if let Some(p) = pieces.get_mut(&label) {
                        p.counters.insert(counter, value);
                    }
                }
                "marked" | "unmarked" => {
                    let marker = l.s("marker");
                    let Some(label) = l.v["piece"].as_str().map(String::from) else {
                        continue;
                    };
                    let marked = l.kind() == "marked";
                    if !marked && marker == "in_tunnel" {
                        let down_at = below.remove(&label);
                        // Up by a trapdoor ambush: not the `emerge_from_tunnel` order.
                        let by_spring = order.as_ref().is_some_and(|(s, _)| *s == allied);
                        let call = call_for(
                            n,
                            &|x: &Line| x.kind() == "unmarked" && x.s("marker") == "in_tunnel",
                            &["choose spring_from_tunnel"],
                        );
                        if by_spring {
                            r.check(
                                "9b.2 item 6: an element comes up in an allied order only by a trapdoor ambush",
                                call.is_none().then(|| format!("{label} came up (line {n})")),
                            );
                        }
                        if by_spring && call.is_some() {
                            // 9b.2 item 6 with 2.3 item 5: up by another entrance, on a later
                            // turn than it went down, into cover within 2in of it.
                            let at = pieces.get(&label).map(|p| p.at).unwrap_or_default();
                            let later = entered.get(&label).is_some_and(|&t| t < turn);
                            let by_other = pieces.values().any(|x| {
                                x.entity == "tunnel_entrance"
                                    && !x.markers.contains("collapsed_marker")
                                    && dist(x.at, at) <= REACH_SITE
                                    && down_at.is_none_or(|d| dist(x.at, d) > REACH_SITE)
                            });
                            let in_cover = COVER.iter().any(|t| self.in_terrain(t, at));
                            r.check(
                                "9b.2 item 6 / 2.3 item 5: a trapdoor ambush comes up in cover by another entrance, a later turn",
                                (!(later && by_other && in_cover)).then(|| {
                                    format!("{label} up at {at:?} from {down_at:?}: later {later}, other entrance {by_other}, cover {in_cover} (line {n})")
                                }),
                            );
                            entered.remove(&label);
                        }
                    }
                    if marked
                        && marker == "confirmed_contact"
                        && pieces
                            .get(&label)
                            .is_some_and(|p| p.entity == SHADOW_BLIND && p.c("_identified") == 0)
                    {
                        // 10.4: its first reveal rolls the table, before anything else is rolled.
                        let next = lines[n + 1..].iter().find(|x| x.kind() == "resolved");
                        r.check(
                            "10.4: a shadow blind's first reveal rolls the Contact Reveal Table",
                            (reveal_owed.is_some()
                                || next.is_none_or(|x| x.s("name") != "contact_reveal"))
                            .then(|| format!("{label} revealed with no reveal roll (line {n})")),
                        );
                        reveal_owed = Some(label.clone());
                    }
                    if marked && marker == "confirmed_contact" {
                        // The events of the order in progress (a side's choices inside it, an
                        // ambush or opportunity fire, are logged after its events).
                        let starts = |x: &Line| {
                            (x.kind() == "decision" && !x.s("label").starts_with("choose "))
                                || x.kind() == "phase"
                                || x.kind() == "turn"
                        };
                        let from = (0..n).rev().find(|&i| starts(&lines[i])).unwrap_or(0);
                        let to = (n + 1..lines.len())
                            .find(|&i| starts(&lines[i]))
                            .unwrap_or(lines.len());
                        let seg = &lines[from..to];
                        let spotted = seg.iter().any(|x| {
                            x.kind() == "resolved"
                                && x.s("name") == "spotting"
                                && x.s("result") != "not_spotted"
                        });
                        let fired = seg.iter().any(|x| {
                            x.kind() == "resolved"
                                && (x.s("name") == "hit_roll"
                                    || x.s("name") == "frag_grenade"
                                    || x.s("name") == "at_hit_roll"
                                    // 5.6.A / 5.6.B: the gun's corridor and beaten zone
                                    // (their stands fired on); 5.7.B a satchel's blast.
                                    || x.s("name") == "area_suppression_fire"
                                    || x.s("name") == "grazing_save"
                                    || x.s("name") == "satchel_charge"
                                    // 5.8.B: a mousehole's blast; the room it opens is in
                                    // plain view.
                                    || x.s("name") == "breach_roll"
                                    // 6.3 item 8 in the hot LZ (its reading): the elements
                                    // that fire on an insertion Huey reveal themselves.
                                    || x.s("name") == "hot_lz_ground_fire")
                        });
                        let recon = seg.iter().any(|x| {
                            x.kind() == "resolved" && x.s("result") == "direct_hit_revealed"
                        });
                        let own = pieces
                            .get(&label)
                            .map(|p| p.side.clone())
                            .unwrap_or_default();
                        // A vehicle's engine is noise as a sprint is (reading, 4.2 State 1); a
                        // shot at a pintle gunner is fire (4.5.B) with no die to hit.
                        let noisy = order.as_ref().is_some_and(|(s, lab)| {
                            *s == own
                                && (lab.starts_with("sprint(")
                                    || lab.starts_with("recon_by_fire(")
                                    || lab.starts_with("vehicle_move(")
                                    || lab.starts_with("boat_move(")
                                    || lab.starts_with("shoot_pintle_crew("))
                        });
                        // Opportunity fire or an ambush: the other side's "choose 1" inside the
                        // order (a dummy blind fired on is discarded before any die is rolled).
                        let interrupted = seg.iter().any(|x| {
                            x.kind() == "decision"
                                && (x.s("label") == "choose 1"
                                    || x.s("label").starts_with("choose spring_"))
                                && order.as_ref().is_some_and(|(s, _)| *s != x.s("side"))
                        });
                        // The bunker assault's bunker is shown at the start (OURS).
                        let shown =
                            turn == 0 && self.bunkers.contains(entity_of(&label, &self.sides));
                        let ok = spotted || fired || recon || noisy || interrupted || shown;
                        r.check(
                            "4.2: a blind is revealed only by a spot, fire, ambush or noise",
                            (!ok).then(|| {
                                format!(
                                    "{label} revealed with no cause (line {n}, order {order:?})"
                                )
                            }),
                        );
                    }
                    if marker == "target_marker" && !marked && phase.contains("Tension") {
                        touchdown = Some(label.clone());
                        // No Hot LZ roll follows when no enemy threatens: extraction.
                        let threatened = lines[n + 1..]
                            .iter()
                            .take_while(|x| {
                                x.kind() != "counted"
                                    && x.kind() != "marked"
                                    && x.kind() != "unmarked"
                                    && x.kind() != "phase"
                            })
                            .any(|x| x.kind() == "resolved" && x.s("name") == "hot_lz_ground_fire");
                        if !threatened {
                            extracted += pieces.get(&label).map_or(0, |p| p.c("carried"));
                            touchdown = None;
                        }
                    }
                    if marked && marker == "found_marker" {
                        r.check(
                            "2.3 / 9b.2 item 3: a site is found only on a successful search",
                            (!search_success).then(|| format!("{label} found (line {n})")),
                        );
                        search_success = false;
                    }
                    if marked && marker == "collapsed_marker" {
                        r.check(
                            "9b.2 item 9: an entrance collapses only on a 3+",
                            (!demolished).then(|| format!("{label} collapsed (line {n})")),
                        );
                        demolished = false;
                    }
                    if marked
                        && marker == "burned_marker"
                        && let Some(h) = label
                            .strip_prefix("hootch_site #")
                            .and_then(|k| k.parse::<usize>().ok())
                            .and_then(|k| self.hootches.get(k - 1))
                    {
                        // 9b.3: -1 when no contraband was found in it (no cache found by it).
                        let cache = pieces.values().any(|p| {
                            p.entity == "rice_cache"
                                && p.markers.contains("found_marker")
                                && dist(p.at, *h) <= REACH_SITE
                        });
                        if !cache {
                            burned_bare += 1;
                        }
                    }
                    if let Some(p) = pieces.get_mut(&label) {
                        if marked {
                            p.markers.insert(marker);
                        } else {
                            p.markers.remove(&marker);
                        }
                    }
                }
                "eliminated" => {
                    let label = l.s("piece");
                    if self.vehicles.contains(entity_of(&label, &self.sides)) {
                        vehicles_lost += 1;
                    }
                    if self.bunkers.contains(entity_of(&label, &self.sides)) {
                        bunkers_lost += 1;
                    }
                    // 7.6.2 / 5.1 step 4 result 6: the squad aboard a brewed-up vehicle is
                    // killed there, every stand a KIA.
                    let brewed = lines[..n]
                        .iter()
                        .rev()
                        .find(|x| x.kind() == "resolved")
                        .is_some_and(|x| {
                            x.s("name") == "vehicle_damage_roll"
                                && x.s("result") == "catastrophic_kill"
                        });
                    if brewed && self.aboard.contains(&label) {
                        let stands = self
                            .stats
                            .get(entity_of(&label, &self.sides))
                            .map_or(0, |s| s.mediums + s.smalls);
                        aboard_killed += stands;
                        if let Some(p) = pieces.get_mut(&label) {
                            p.gone = true;
                        }
                        continue;
                    }
                    if let Some(p) = pieces.get(&label).cloned() {
                        let stat = self.stats.get(&p.entity).cloned();
                        // A shadow blind the table found empty is discarded as a dummy.
                        let dummy = stat.as_ref().is_some_and(|s| s.dummy) || p.c("_noise") == 1;
                        let no_stand = stat.as_ref().is_some_and(|s| {
                            p.c("mediums_lost") + p.c("_absent") >= s.mediums
                                && p.c("smalls_lost") >= s.smalls
                        });
                        r.check(
                            "5.1 step 4: an element goes when its last stand collapses",
                            (stat.is_some() && !dummy && !no_stand)
                                .then(|| format!("{label} eliminated with stands left (line {n})")),
                        );
                        if !dummy {
                            if p.side == allied {
                                abandoned += p.c("lying") + p.c("stable") + p.c("carried");
                            } else {
                                comm_left +=
                                    stat.map_or(0, |s| s.mediums - p.c("_absent") + s.smalls);
                            }
                        }
                    }
                    if let Some(p) = pieces.get_mut(&label) {
                        p.gone = true;
                    }
                }
                "decision" => {
                    let side = l.s("side");
                    let label = l.s("label");
                    // 4.2 State 0: the Reserve Hand stays off the table, unseen, until it enters.
                    if side == allied {
                        for res in &self.reserve {
                            if !pieces.contains_key(res) {
                                r.check(
                                    "4.2 State 0: no allied choice names a reserve element before it enters",
                                    label.contains(res.as_str()).then(|| {
                                        format!("{side} was shown {res} (line {n}: {label})")
                                    }),
                                );
                            }
                        }
                    }
                    if side == insurgent {
                        match label.as_str() {
                            "choose spring_from_reserve" | "choose spring_from_tunnel" => {
                                // 2.3 item 4: one token, from the pool (never below 0).
                                tokens -= 1;
                                r.check(
                                    "2.3 item 4: an ambush from the reserve or a trapdoor costs one token",
                                    (tokens < 0).then(|| {
                                        format!("sprung with no token left (line {n})")
                                    }),
                                );
                            }
                            _ => {}
                        }
                    }
                    // Fog: a choice never names an enemy element not confirmed.
                    for (name, p) in &pieces {
                        if SITES.contains(&p.entity.as_str())
                            && side == allied
                            && label.contains(name.as_str())
                        {
                            r.check(
                                "2.3: an allied choice never names a hidden site not found",
                                (!p.markers.contains("found_marker")).then(|| {
                                    format!("{side} was shown {name} (line {n}: {label})")
                                }),
                            );
                        }
                        if !self.stats.contains_key(&p.entity) {
                            continue;
                        }
                        if p.side != side && !p.gone && label.contains(name.as_str()) {
                            r.check(
                                "4.2: a side is never shown an unconfirmed enemy element",
                                (!p.markers.contains("confirmed_contact")).then(|| {
                                    format!("{side} was shown {name} (line {n}: {label})")
                                }),
                            );
                        }
                    }
                    if label.starts_with("choose ") {
                        if side == insurgent
                            && label == "choose 1"
                            && order.as_ref().is_some_and(|(s, _)| *s == allied)
                        {
                            // An ambush sprung (2.3): one token.
                            tokens -= 1;
                            r.check(
                                "2.3: an ambush costs one ambush token",
                                (tokens < 0)
                                    .then(|| format!("ambush with no token left (line {n})")),
                            );
                        }
                        if side == allied && label == "choose 1" {
                            // A patrol's spotting test (1 CP more), paid after its move.
                            if order.as_ref().is_some_and(|(s, lab)| {
                                *s == allied && lab.starts_with("patrol_move(")
                            }) {
                                self.charge(
                                    &pieces,
                                    &order,
                                    &mut cp,
                                    &mut cost_due,
                                    &mut emergency_expected,
                                    r,
                                    n,
                                );
                            }
                        }
                        continue;
                    }
                    self.close_order(&mut emergency_expected, &mut emergency_seen, r);
                    self.close_village_order(&mut search_expect, &mut mud_sprint, &pieces, r);
                    self.village_order(
                        &side,
                        &label,
                        turn,
                        &pieces,
                        &mut search_expect,
                        &mut mud_sprint,
                        &mut entered,
                        &mut medcaps,
                        r,
                        n,
                    );
                    recon_six = false;
                    spots_in_order = 0;
                    unsaved_left = 0;
                    unsaved_target = None;
                    order = Some((side.clone(), label.clone()));
                    if phase.contains("Engagement")
                        && side == allied
                        && !label.starts_with("hold")
                        && !label.starts_with("deploy")
                    {
                        self.charge(
                            &pieces,
                            &order,
                            &mut cp,
                            &mut cost_due,
                            &mut emergency_expected,
                            r,
                            n,
                        );
                    }
                }
                "resolved" => {
                    let name = l.s("name");
                    let args = l.args();
                    let dice = l.dice();
                    let result = l.s("result");
                    let first = dice.first().copied().unwrap_or(0);
                    match name.as_str() {
                        "scatter" => {
                            // 8.2 steps 3-4 / 9b.3: the first mission called and not landed
                            // lands; where its drift leaves it, heavy fire within 6in of a
                            // hootch drifts the track.
                            let Some(m) = called.difference(&landed).next().cloned() else {
                                continue;
                            };
                            landed.insert(m.clone());
                            let mut at = pieces.get(&m).map(|p| p.at).unwrap_or_default();
                            for x in lines[n + 1..].iter().take_while(|x| {
                                !(x.kind() == "resolved" && x.s("name") != "scatter_direction")
                                    && x.kind() != "phase"
                            }) {
                                if x.kind() == "moved" && x.s("piece") == m {
                                    at = point(&x.v["to"]).unwrap_or(at);
                                }
                            }
                            if self.hootches.iter().any(|h| dist(*h, at) <= VILLAGE_FIRE) {
                                heavy_fire += 1;
                            }
                        }
                        "contact_reveal" => {
                            // 10.4: the Threat Level's table, the cell of the face rolled.
                            let want = self.reveal.get(&(first, self.threat.clone()));
                            let threat_ok = args.first().is_some_and(|a| a.ends_with(&self.threat));
                            let owed = reveal_owed.take();
                            r.check(
                                "10.4: what a shadow blind hides is the table's cell",
                                (owed.is_none()
                                    || !threat_ok
                                    || dice.len() != 1
                                    || want != Some(&result))
                                .then(|| {
                                    format!("{owed:?}: {args:?} {dice:?} = {result}, table {want:?} (line {n})")
                                }),
                            );
                            if let Some(p) = owed.and_then(|o| pieces.get_mut(&o)) {
                                p.counters.insert("_identified".into(), 1);
                                match absent_mediums(&result) {
                                    Some(k) => p.counters.insert("_absent".into(), k),
                                    None => p.counters.insert("_noise".into(), 1),
                                };
                            }
                        }
                        "command_points" => {
                            let officers = arg_int(&args, 0);
                            let rto = arg_bool(&args, 1);
                            let leaders = arg_int(&args, 2);
                            let want = dice.iter().sum::<i64>() + i64::from(rto) + leaders;
                            r.check(
                                "2.2 item 4: 1D6 per officer, +1 RTO, +1 per Squad Leader",
                                (dice.len() as i64 != officers
                                    || result.parse::<i64>().ok() != Some(want)
                                    || leaders != self.leaders(&pieces))
                                .then(|| {
                                    format!("CP roll {args:?} {dice:?} = {result} (line {n})")
                                }),
                            );
                            cp = result.parse().unwrap_or(0);
                        }
                        // 5.6.B: the beaten zone's 3 dice are a roll to hit (its target is the
                        // bunker referee's); 5.6.A: each failed grazing save is an unsaved hit.
                        "area_suppression_fire" => {
                            last_hits = result.parse().ok();
                        }
                        "grazing_save" => {
                            let stands = arg_int(&args, 1);
                            unsaved_left += stands - result.parse::<i64>().unwrap_or(0);
                            unsaved_target = args.first().cloned();
                            last_hits = None;
                        }
                        "hit_roll" => {
                            let pool = arg_int(&args, 0);
                            let target = arg_int(&args, 1);
                            let hits = dice.iter().filter(|&&f| f >= target).count() as i64;
                            r.check(
                                "5.1 steps 1-2: the pool is rolled and hits on its target",
                                (dice.len() as i64 != pool
                                    || !(2..=7).contains(&target)
                                    || result.parse::<i64>().ok() != Some(hits)
                                    || pool > self.max_pool())
                                .then(|| format!("{args:?} {dice:?} = {result} (line {n})")),
                            );
                            last_hits = Some(hits);
                            // 5.2 item 2: a close assault's hits take no save.
                            let saved_next = lines[n + 1..]
                                .iter()
                                .find(|x| x.kind() == "resolved")
                                .is_some_and(|x| x.s("name") == "save_roll");
                            if !saved_next {
                                unsaved_left += hits;
                                unsaved_target = None;
                                last_hits = None;
                            }
                        }
                        "save_roll" => {
                            let hits = arg_int(&args, 0);
                            let save = arg_int(&args, 1);
                            let saved = dice.iter().filter(|&&f| f >= save).count() as i64;
                            r.check(
                                "5.1 step 3: one save per hit, on 6 / 5+ / 4+",
                                (Some(hits) != last_hits
                                    || dice.len() as i64 != hits
                                    || !(4..=6).contains(&save)
                                    || result.parse::<i64>().ok() != Some(saved))
                                .then(|| format!("{args:?} {dice:?} = {result} (line {n})")),
                            );
                            unsaved_left += hits - saved;
                            unsaved_target = self.target_of(&lines, n, &pieces);
                            last_hits = None;
                        }
                        "morale_test" => {
                            let quality = args
                                .first()
                                .and_then(|a| a.rsplit(' ').next())
                                .unwrap_or_default();
                            let winded = arg_bool(&args, 1);
                            let pass = first - i64::from(winded) >= morale_target(quality);
                            r.check(
                                "5.1 step 4: morale 4+ (veterans 3+, militia 5+), winded -1",
                                ((result == "pass") != pass || dice.len() != 1)
                                    .then(|| format!("{args:?} {dice:?} = {result} (line {n})")),
                            );
                        }
                        "spotting" => {
                            spots_in_order += 1;
                            if let Some((_, lab)) = &order
                                && lab.starts_with("platoon_recon_sweep(")
                            {
                                r.check(
                                    "4.2: a Platoon Recon Sweep tests at most three squads",
                                    (spots_in_order > 3).then(|| {
                                        format!(
                                            "{spots_in_order} spotting tests in {lab} (line {n})"
                                        )
                                    }),
                                );
                            }
                            let total = spotting_total(first, &args);
                            let want = if total >= 4 {
                                if first == 6 {
                                    "critical_spot"
                                } else {
                                    "spotted"
                                }
                            } else {
                                "not_spotted"
                            };
                            r.check(
                                "4.2: spotting 4+ with its modifiers; natural 6 critical",
                                (result != want)
                                    .then(|| format!("{args:?} {dice:?} = {result} (line {n})")),
                            );
                        }
                        "bleed_survival" | "bleed_survival_as_tabulated" => {
                            let tabulated = name == "bleed_survival_as_tabulated";
                            let medic = tabulated || arg_bool(&args, 0);
                            let kia_now = if tabulated {
                                first == 1
                            } else {
                                first + if medic { 2 } else { 0 } <= 2
                            };
                            r.check(
                                "6.2: bleed 1-2 KIA, +2 with a medic",
                                ((result == "kia") != kia_now)
                                    .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            let owed = bleed_flags.pop();
                            r.check(
                                "3.4 item 3: the medic's roll exactly when a medic is with the casualty",
                                (owed != Some(medic)
                                    || (medic && tabulated != self.medic_tabulated))
                                    .then(|| {
                                        format!("{name}{args:?} owed {owed:?} (line {n})")
                                    }),
                            );
                            if medic && result != "kia" {
                                bleed_pending.push("stabilised");
                            }
                            if result == "kia" {
                                kia += 1;
                                // Is it one of an element's tokens (a `lying` change follows) or
                                // an abandoned one?
                                let own = lines[n + 1..]
                                    .iter()
                                    .take_while(|x| {
                                        !matches!(
                                            x.kind(),
                                            "resolved" | "decision" | "phase" | "turn" | "end"
                                        )
                                    })
                                    .any(|x| x.kind() == "counted" && x.s("counter") == "lying");
                                if own {
                                    bleed_pending.push("kia");
                                } else {
                                    abandoned -= 1;
                                }
                            }
                        }
                        "emergency_initiative_check" => {
                            emergency_seen = true;
                            r.check(
                                "1.5: emergency initiative 4+",
                                ((result == "squad_activates") != (first >= 4))
                                    .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            // 1.5: on a failure the squad only holds: its order (a search,
                            // a Medcap) is not carried out.
                            if result == "hold_position" {
                                search_expect.clear();
                                if order
                                    .as_ref()
                                    .is_some_and(|(_, o)| o.starts_with("medcap("))
                                {
                                    medcaps -= 1;
                                }
                            }
                        }
                        "ambush_discipline_check" => r.check(
                            "2.3 item 12: discipline check 4+",
                            ((result == "keeps_head") != (first >= 4))
                                .then(|| format!("{dice:?} = {result} (line {n})")),
                        ),
                        "look_out_sir" => {
                            r.check(
                                "5.1 step 4: Look Out, Sir! fails on 1",
                                ((result == "fail") != (first == 1))
                                    .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            unsaved_left -= 1;
                        }
                        "recon_by_fire_result" => {
                            let want = match first {
                                1 => "friendly_fire_incident",
                                2 | 3 => "empty_jungle",
                                4 | 5 => "suppressive_hit",
                                _ => "direct_hit_revealed",
                            };
                            r.check(
                                "4.3: Recon by Fire 1 / 2-3 / 4-5 / 6",
                                (result != want).then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            recon_six = result == "direct_hit_revealed";
                            // 4.3 item 4 / 9b.3: villagers within 4in of the target marker
                            // (named in the order's `acted` event: the choice's label shows a
                            // blind only as a hidden piece).
                            let target = lines[..n]
                                .iter()
                                .rev()
                                .find(|x| x.kind() == "acted")
                                .and_then(|x| x.v["args"].get(1).and_then(|a| a.as_str()))
                                .and_then(|t| pieces.get(t).map(|p| p.at));
                            if result == "friendly_fire_incident"
                                && let Some(t) = target
                                && self.hootches.iter().enumerate().any(|(k, &h)| {
                                    dist(h, t) <= 4 * INCH && !burned_label(&lines[..n], k)
                                })
                            {
                                recon_civilians += 1;
                            }
                        }
                        "tunnel_search" => {
                            let want = first >= TUNNEL_SEARCH;
                            r.check(
                                "9b.2 item 3: an entrance is found on a 4+",
                                ((result == "entrance_found") != want)
                                    .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            r.check(
                                "2.3 / 9b.2 item 3: a search tests each site within 2in once",
                                (search_expect.pop() != Some("tunnel_search"))
                                    .then(|| format!("an entrance search not owed (line {n})")),
                            );
                            search_success = want;
                        }
                        "site_search" => {
                            let target = arg_int(&args, 0);
                            let want = first >= target;
                            r.check(
                                "2.3: a cache or spider hole is found on its score",
                                (target != self.site_target || (result == "true") != want)
                                    .then(|| format!("{args:?} {dice:?} = {result} (line {n})")),
                            );
                            r.check(
                                "2.3 / 9b.2 item 3: a search tests each site within 2in once",
                                (search_expect.pop() != Some("site_search"))
                                    .then(|| format!("a site search not owed (line {n})")),
                            );
                            search_success = want;
                        }
                        "tunnel_demolition" => {
                            let want = first >= DEMOLITION;
                            r.check(
                                "9b.2 item 9: an entrance collapses only on a 3+",
                                ((result == "entrance_collapsed") != want)
                                    .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            demolished = want;
                        }
                        "first_aid" => {
                            let want = first >= FIRST_AID;
                            r.check(
                                "3.4 item 6: first aid takes the ring off on 5+",
                                ((result == "flesh_wound") != want)
                                    .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            first_aid_heal = want;
                        }
                        "frag_grenade" => {
                            let lands = first >= FRAG_LANDS;
                            let hits = if lands {
                                dice[1..].iter().filter(|&&f| f >= 4).count()
                            } else {
                                0
                            };
                            r.check(
                                "5.7.A: a grenade lands on 4+, then 2 dice hit on 4+, no save",
                                (dice.len() != if lands { 1 + FRAG_DICE } else { 1 }
                                    || result.parse::<usize>().ok() != Some(hits))
                                .then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            unsaved_left += hits as i64;
                            unsaved_target = None;
                        }
                        // 5.1 step 4 result 5 / 7.6.2: a passenger's hit is an unsaved hit;
                        // so is each hit of a hasty bailout (3.4 (second) C).
                        "passenger_hit" if result == "hit" => {
                            unsaved_left += 1;
                            unsaved_target = None;
                        }
                        "hasty_bailout" => {
                            unsaved_left += result.parse::<i64>().unwrap_or(0);
                            unsaved_target = None;
                        }
                        // 5.8.A rule 1: a backblast attack's result is its unsaved hits, on
                        // the element last caught in the cone (its dice: the street referee's).
                        "caught_in_backblast" => {
                            unsaved_target = args.first().cloned();
                        }
                        "backblast" => {
                            unsaved_left += result.parse::<i64>().unwrap_or(0);
                        }
                        // 6.3 item 9: the Cobra's free volley; its result is its unsaved hits
                        // (its dice: the hot LZ referee's).
                        "cobra_retaliation" => {
                            unsaved_left += result.parse::<i64>().unwrap_or(0);
                            unsaved_target = None;
                        }
                        "hot_lz_ground_fire" => {
                            // 6.3 item 9: -2 with a gunship on station; below 1, as assumed.
                            let total = first - if arg_bool(&args, 0) { 2 } else { 0 };
                            let want = match total {
                                ..=0 => self.below_hot_lz.as_deref().unwrap_or("?"),
                                1 => "waved_off",
                                2..=4 => "fuselage_scratches",
                                5 => "co_pilot_turbine_hit",
                                _ => "shot_down",
                            };
                            r.check(
                                "6.3 item 8: Hot LZ 1 / 2-4 / 5 / 6",
                                (result != want).then(|| format!("{dice:?} = {result} (line {n})")),
                            );
                            if let Some(t) = touchdown.take()
                                && (result == "fuselage_scratches"
                                    || result == "co_pilot_turbine_hit")
                            {
                                extracted += pieces.get(&t).map_or(0, |p| p.c("carried"));
                            }
                        }
                        _ => {}
                    }
                }
                "end" => {
                    if let Some(owed) = reveal_owed.take() {
                        r.check(
                            "10.4: a shadow blind's first reveal rolls the Contact Reveal Table",
                            Some(format!("{owed} revealed with no reveal roll by the end")),
                        );
                    }
                    self.close_order(&mut emergency_expected, &mut emergency_seen, r);
                    self.close_village_order(&mut search_expect, &mut mud_sprint, &pieces, r);
                    let scores: BTreeMap<String, i64> = l.v["scores"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| Some((p[0].as_str()?.to_string(), p[1].as_i64()?)))
                        .collect();
                    let lost = |side: &str| -> i64 {
                        pieces
                            .values()
                            .filter(|p| p.side == side)
                            .map(|p| p.c("mediums_lost") + p.c("smalls_lost"))
                            .sum()
                    };
                    let with_squads: i64 = pieces
                        .values()
                        .filter(|p| p.side == allied && !p.gone)
                        .map(|p| p.c("lying") + p.c("stable") + p.c("carried"))
                        .sum();
                    // 3.3.A / 3.4 items 8-10: -3 abandoned and KIA, -2 wounded left, +2
                    // extracted; 3.3.B item 8: +1 a communist token overrun; ours: +1 a stand.
                    let (left3, left2) = if self.flat_three {
                        (abandoned + with_squads, 0)
                    } else {
                        (abandoned, with_squads)
                    };
                    // 9b.3: the drift track, from Neutral 0, clamped to -5..+5.
                    let caches = pieces
                        .values()
                        .filter(|p| p.entity == "rice_cache" && p.markers.contains("found_marker"))
                        .count() as i64;
                    let recon = if self.recon_4_3 {
                        0
                    } else {
                        DRIFT_RECON_9B * recon_civilians
                    };
                    let drift = ((DRIFT_CACHE * caches
                        + DRIFT_BURNED * burned_bare
                        + DRIFT_MEDCAP * medcaps
                        + DRIFT_HEAVY_FIRE * heavy_fire
                        + recon)
                        .clamp(-5, 5)
                        + if self.recon_4_3 {
                            DRIFT_RECON_4_3 * recon_civilians
                        } else {
                            0
                        })
                    .clamp(-5, 5);
                    let want_allied = lost(&insurgent)
                        + comm_left
                        + 2 * extracted
                        + drift.max(0) * self.drift_vp
                        + self.vehicle_vp * bunkers_lost;
                    let want_insurgent = lost(&allied)
                        + aboard_killed
                        + 3 * (kia + aboard_killed)
                        + self.vehicle_vp * vehicles_lost
                        + 2 * left2
                        + 3 * left3
                        + (-drift).max(0) * self.drift_vp;
                    let got = (
                        scores.get(&allied).copied(),
                        scores.get(&insurgent).copied(),
                    );
                    let game_no = r.games;
                    r.check(
                        "3.3 / 3.4: VP recount",
                        (got != (Some(want_allied), Some(want_insurgent))).then(|| {
                            format!("game {}: scores {got:?}, recounted ({want_allied}, {want_insurgent}): kia {kia}, extracted {extracted}, abandoned {abandoned}, with squads {with_squads}, comm {comm_left}, drift {drift}", game_no)
                        }),
                    );
                }
                _ => {}
            }
        }
    }

    /// 10.2 step 1: the placement tier of a point for the next shadow blind, given the blinds
    /// placed: 1 inside a hootch or bunker holding none, 2 in a patch of dense jungle (a tree
    /// line or woodline) holding none, 3 on brush or a paddy bund; `None` otherwise.
    fn tier_of(&self, p: (i64, i64), blinds: &[(i64, i64)]) -> Option<u8> {
        let free = |terrain: &str| {
            self.rects(terrain)
                .iter()
                .any(|r| inside(r, p) && !blinds.iter().any(|b| inside(r, *b)))
        };
        if free("hootch") || free("bunker") {
            Some(1)
        } else if free("dense_jungle") {
            Some(2)
        } else if self.in_terrain("secondary_jungle", p) || self.in_terrain("rice_paddy", p) {
            Some(3)
        } else {
            None
        }
    }

    /// The best tier with a set-up point left in the insurgent's area (a 2in grid from 1in,
    /// a base clear of every piece set up); `None` when no tier has one.
    fn placement_tier(&self, set_up: &[(i64, i64)], blinds: &[(i64, i64)]) -> Option<u8> {
        let area = self.insurgent_area?;
        let step = 2 * INCH;
        let mut best: Option<u8> = None;
        let mut y = step / 2;
        while y <= self.table.1 {
            let mut x = step / 2;
            while x <= self.table.0 {
                let q = (x, y);
                let clear = set_up.iter().all(|s| {
                    let (dx, dy) = (s.0 - x, s.1 - y);
                    dx * dx + dy * dy >= self.base * self.base
                });
                if inside(&area, q) && clear {
                    let t = self.tier_of(q, blinds);
                    if t.is_some() && (best.is_none() || t < best) {
                        best = t;
                    }
                }
                x += step;
            }
            y += step;
        }
        best
    }

    /// An officer on the table, or still aboard its carrier (the river landing's platoon HQ
    /// rides in the boat and rolls its CP there, 2.2 item 4).
    fn officer_alive(&self, pieces: &BTreeMap<String, Piece>) -> bool {
        let officer = |entity: &str| self.stats.get(entity).is_some_and(|s| s.officer);
        pieces.values().any(|p| !p.gone && officer(&p.entity))
            || self
                .aboard
                .iter()
                .any(|a| !pieces.contains_key(a) && officer(entity_of(a, &self.sides)))
    }

    /// Surviving Squad Leader stands: squads still on the table with their small stand.
    fn leaders(&self, pieces: &BTreeMap<String, Piece>) -> i64 {
        // 2.2 item 4: a Squad Leader aboard a vehicle (not yet off it) survives too.
        let aboard = self
            .aboard
            .iter()
            .filter(|a| {
                !pieces.contains_key(*a)
                    && self
                        .stats
                        .get(entity_of(a, &self.sides))
                        .is_some_and(|s| s.squad_leader)
            })
            .count() as i64;
        aboard
            + pieces
                .values()
                .filter(|p| {
                    !p.gone
                        && self.stats.get(&p.entity).is_some_and(|s| {
                            s.squad_leader
                                && s.side == self.sides[0]
                                && p.c("smalls_lost") < s.smalls
                        })
                })
                .count() as i64
    }

    /// The largest pool any element can roll (5.1 step 1).
    fn max_pool(&self) -> i64 {
        self.stats
            .values()
            .map(|s| s.mediums * s.medium_fp + s.smalls * s.small_fp)
            .max()
            .unwrap_or(0)
    }

    /// The element a volley's unsaved hits fall on: the one whose stand counters change next.
    fn target_of(
        &self,
        lines: &[Line],
        n: usize,
        pieces: &BTreeMap<String, Piece>,
    ) -> Option<String> {
        lines[n + 1..]
            .iter()
            .take_while(|x| !(x.kind() == "resolved" && x.s("name") == "hit_roll"))
            .find(|x| {
                x.kind() == "counted"
                    && matches!(
                        x.s("counter").as_str(),
                        "front_ring" | "mediums_lost" | "smalls_lost"
                    )
            })
            .map(|x| x.s("piece"))
            .filter(|p| pieces.contains_key(p))
    }

    /// The CP an allied order costs now (2.3, 1.5), taken from the CP of the turn.
    #[allow(clippy::too_many_arguments)]
    fn charge(
        &self,
        pieces: &BTreeMap<String, Piece>,
        order: &Option<(String, String)>,
        cp: &mut i64,
        cost_due: &mut i64,
        emergency_expected: &mut bool,
        r: &mut Report,
        n: usize,
    ) {
        let Some((_, label)) = order else { return };
        // The acting element: the first argument of the choice.
        let Some(actor) = label
            .split_once('(')
            .and_then(|(_, rest)| rest.split([',', ')']).next())
            .map(str::trim)
        else {
            return;
        };
        let Some(p) = pieces.get(actor) else { return };
        let hq = pieces
            .values()
            .find(|h| !h.gone && self.stats.get(&h.entity).is_some_and(|s| s.officer));
        let is_hq = self.stats.get(&p.entity).is_some_and(|s| s.officer);
        let radius = if self.in_dense(p.at) {
            RADIUS_DENSE
        } else {
            RADIUS_OPEN
        };
        // 2.3 "in operational radio contact via an active RTO": an element other than the HQ
        // with its own RTO standing, while the HQ's RTO stands too (both its small stands).
        let smalls_up =
            |x: &Piece| self.stats.get(&x.entity).map_or(0, |s| s.smalls) - x.c("smalls_lost");
        let radio = !is_hq
            && self.stats.get(&p.entity).is_some_and(|s| s.rto)
            && smalls_up(p) > 0
            && hq.is_some_and(|h| {
                self.stats.get(&h.entity).is_some_and(|s| s.rto) && smalls_up(h) >= 2
            });
        let in_command = is_hq || radio || hq.is_some_and(|h| dist(h.at, p.at) <= radius);
        let sweep = label.starts_with("platoon_recon_sweep(");
        if sweep {
            r.check(
                "4.2: only the Platoon Commander orders a Platoon Recon Sweep",
                (!is_hq).then(|| format!("{label} (line {n})")),
            );
        }
        let cost = if sweep {
            COST_SWEEP
        } else if in_command {
            COST_IN
        } else if *cp >= COST_OUT {
            COST_OUT
        } else {
            *emergency_expected = true;
            COST_IN
        };
        *cp -= cost;
        *cost_due = cost;
        r.check(
            "2.3: CP spent never exceeds CP available",
            (*cp < 0).then(|| {
                format!(
                    "{label} costs {cost} with {} CP left (line {n})",
                    *cp + cost
                )
            }),
        );
    }

    /// The village rules an order must keep to, checked as it is given.
    #[allow(clippy::too_many_arguments)]
    fn village_order(
        &self,
        side: &str,
        label: &str,
        turn: i64,
        pieces: &BTreeMap<String, Piece>,
        search_expect: &mut Vec<&'static str>,
        mud_sprint: &mut Option<String>,
        entered: &mut BTreeMap<String, i64>,
        medcaps: &mut i64,
        r: &mut Report,
        n: usize,
    ) {
        let Some((action, _)) = label.split_once('(') else {
            return;
        };
        let args = label_args(label);
        let at = |i: usize| args.get(i).and_then(|a| pieces.get(a)).map(|p| p.at);
        let actor = args.first().and_then(|a| pieces.get(a));
        let sites = |entity: &str| -> Vec<&Piece> {
            pieces.values().filter(|p| p.entity == entity).collect()
        };
        let intact = |p: &Piece| !p.markers.contains("collapsed_marker");
        match action {
            "search_pacify" => {
                // 2.3: every site within reach not yet found, entrances first, then caches,
                // then spider holes (each list in the order they were noted); popped from the back.
                let Some(e) = actor else { return };
                search_expect.clear();
                for (entity, roll) in [
                    ("tunnel_entrance", "tunnel_search"),
                    ("rice_cache", "site_search"),
                    ("spider_hole", "site_search"),
                ] {
                    for x in sites(entity) {
                        if dist(x.at, e.at) <= REACH_SITE && !x.markers.contains("found_marker") {
                            search_expect.push(roll);
                        }
                    }
                }
                search_expect.reverse();
            }
            "destroy_tunnel" => {
                let ok = actor.is_some_and(|e| {
                    sites("tunnel_entrance").iter().any(|x| {
                        x.markers.contains("found_marker")
                            && intact(x)
                            && dist(x.at, e.at) <= REACH_SITE
                    })
                });
                r.check(
                    "9b.2 item 9: a charge is set on a found, intact entrance within 2in",
                    (!ok).then(|| format!("{label} (line {n})")),
                );
            }
            "enter_tunnel" | "emerge_from_tunnel" => {
                let e = args.first().cloned().unwrap_or_default();
                let x = args.get(1).and_then(|a| pieces.get(a));
                let ok = if action == "enter_tunnel" {
                    x.is_some_and(|x| {
                        intact(x) && at(0).is_some_and(|p| dist(p, x.at) <= REACH_SITE)
                    })
                } else {
                    x.is_some_and(intact) && entered.get(&e).is_some_and(|&t| t < turn)
                };
                r.check(
                    "9b.2 items 5-6: down by an intact entrance, up at another on a later turn",
                    (!ok || side != self.sides[1]).then(|| format!("{label} (line {n})")),
                );
                if action == "enter_tunnel" {
                    entered.insert(e, turn);
                } else {
                    entered.remove(&e);
                }
            }
            "medcap" => {
                *medcaps += 1;
                let ok = actor.is_some_and(|m| {
                    self.stats.get(&m.entity).is_some_and(|s| s.medic)
                        && self.hootches.iter().any(|&h| dist(h, m.at) <= REACH_SITE)
                });
                r.check(
                    "9b.3: a Medcap is the medic's, by a hootch",
                    (!ok).then(|| format!("{label} (line {n})")),
                );
            }
            "medic_first_aid" => {
                let ok = actor.is_some_and(|m| self.stats.get(&m.entity).is_some_and(|s| s.medic))
                    && args
                        .get(1)
                        .and_then(|a| pieces.get(a))
                        .is_some_and(|p| p.c("front_ring") == 1)
                    && at(0)
                        .zip(at(1))
                        .is_some_and(|(a, b)| dist(a, b) <= ALONGSIDE);
                r.check(
                    "3.4 item 5: first aid by a medic alongside a ringed element",
                    (!ok).then(|| format!("{label} (line {n})")),
                );
            }
            "throw_frag_grenade" => {
                let ok = at(0).zip(at(1)).is_some_and(|(a, b)| {
                    dist(a, b) <= ALONGSIDE
                        && (self.in_terrain("hootch", b)
                            || sites("spider_hole").iter().any(|h| dist(h.at, b) <= INCH))
                });
                r.check(
                    "5.7.A: a grenade from within 2in at a hootch or spider hole",
                    (!ok).then(|| format!("{label} (line {n})")),
                );
            }
            _ => {}
        }
        // 3.4 (second) A and 3.2 item 2: the moves.
        if let (Some(full), Some(e), Some(dest)) = (allowance(action), actor, label_point(label)) {
            let winded = e.markers.contains("winded_marker");
            let mut allow = full * INCH;
            if winded {
                allow /= 2;
            }
            if e.c("carried") > 0 {
                allow = allow.min(3 * INCH);
            }
            if self.crosses_inside("stream", e.at, dest) {
                r.check(
                    "3.4 (second) A: a ford at half speed",
                    (dist(e.at, dest) > allow / 2 + 6)
                        .then(|| format!("{label} from {:?}, allowance {allow} (line {n})", e.at)),
                );
            }
            if action == "sprint" && !winded && self.crosses_inside("flooded_paddy_mud", e.at, dest)
            {
                *mud_sprint = args.first().cloned();
            }
        }
    }

    /// What the order just ended owed: the searches it rolled, the winded sprinter.
    fn close_village_order(
        &self,
        search_expect: &mut Vec<&'static str>,
        mud_sprint: &mut Option<String>,
        pieces: &BTreeMap<String, Piece>,
        r: &mut Report,
    ) {
        if !search_expect.is_empty() {
            r.check(
                "2.3 / 9b.2 item 3: a search tests each site within 2in once",
                Some(format!(
                    "game {}: {} site(s) within reach not searched",
                    r.games,
                    search_expect.len()
                )),
            );
            search_expect.clear();
        }
        if let Some(e) = mud_sprint.take() {
            let winded = pieces
                .get(&e)
                .is_none_or(|p| p.gone || p.markers.contains("winded_marker"));
            r.check(
                "3.2 item 2: a sprint through flooded paddies or mud winds the squad",
                (!winded).then(|| format!("{e} not winded")),
            );
        }
    }

    /// The line runs well inside the terrain (a unit clear of its edges), so that a line
    /// grazing an edge is not judged either way.
    fn crosses_inside(&self, terrain: &str, a: (i64, i64), b: (i64, i64)) -> bool {
        self.rects(terrain)
            .iter()
            .any(|&(x0, y0, x1, y1)| touches(&(x0 + 3, y0 + 3, x1 - 3, y1 - 3), a, b))
    }

    fn close_order(&self, expected: &mut bool, seen: &mut bool, r: &mut Report) {
        if *expected || *seen {
            r.check(
                "1.5: the emergency initiative check is rolled exactly when 1 CP pays out of command",
                (*expected != *seen).then(|| format!("expected {expected}, rolled {seen}")),
            );
        }
        *expected = false;
        *seen = false;
    }
}

/// The bearing from `a` to `b` in whole degrees clockwise from the direction of the table's
/// top edge (y grows down the table), rounded to the nearest degree; 0 where they coincide.
fn bearing_deg(a: (i64, i64), b: (i64, i64)) -> i64 {
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    if dx == 0.0 && dy == 0.0 {
        return 0;
    }
    let deg = dx.atan2(-dy).to_degrees().rem_euclid(360.0);
    ((deg + 0.5).floor() as i64) % 360
}

/// How far apart two bearings are, the short way round (0-180).
fn bearing_gap(a: i64, b: i64) -> i64 {
    let d = (a - b).rem_euclid(360);
    d.min(360 - d)
}

/// The moves of 2.3 and where each writes its destination among its arguments.
fn move_dest(action: &str, args: &[String]) -> Option<(String, (i64, i64))> {
    let i = match action {
        "patrol_move" | "trail_rush" | "sprint" => 1,
        "fire_and_maneuver" => 2,
        _ => return None,
    };
    let v = Value::String(args.get(i)?.clone());
    Some((args.first()?.clone(), raw_point(&v)?))
}

impl DinkyDau {
    /// Facing and arcs (2.3 Set Overwatch, 4.2 Spotting Arcs, 4.5.C), from the log alone. An
    /// element faces the way of its last 2.3 move (4.2: its direction of march), the middle
    /// of the enemy's set-up area before it has moved (READING). Checked:
    /// - 2.3: opportunity fire only at a mover that, frozen at the midpoint of its move, lies
    ///   within 45 degrees of the centre of the overwatch's declared 90 degree arc (one of 8
    ///   bearings, or with `overwatch_arc_ahead` its direction of march);
    /// - 4.2 items 4-6: a rear-security stand is posted only by a real element with two
    ///   stands or more, as it finishes one of its own moves; it falls in when it moves;
    /// - 4.2 items 7-9, 4.5.C: a spotting test ordered at an echo has the -1 Blind Spot
    ///   exactly when the echo lies more than 90 degrees off the spotter's direction of march,
    ///   no rear-security stand is posted and the spotter is not a sniper in a tree canopy; a
    ///   patrol's spotting test (its target is not logged) has it only when some echo lies so,
    ///   and goes without it only when some echo does not.
    fn arcs(&self, lines: &[Line], r: &mut Report) {
        let mut at: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut side: BTreeMap<String, String> = BTreeMap::new();
        let mut march: BTreeMap<String, i64> = BTreeMap::new();
        let mut guard: BTreeSet<String> = BTreeSet::new();
        let mut watch: BTreeMap<String, i64> = BTreeMap::new();
        let mut markers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut lost: BTreeMap<String, i64> = BTreeMap::new();
        // The order in progress: its action and arguments; the overwatch owed its arc.
        let mut acted: Option<(String, Vec<String>)> = None;
        // Spotting tests since the last order (a scout's free second test, 4.2, is the second).
        let mut spots_since_acted = 0u32;
        // A move ordered and not yet made: the mover and its new bearing of march.
        let mut pending_march: Option<(String, Option<i64>)> = None;
        let mut arc_owed: Option<String> = None;
        // The steps of the order's mover so far (a move is logged as two: to its midpoint,
        // then on).
        let mut mover_steps = 0;
        // 5.8.A rule 2: the element sprinting under a recoilless rifle's dust, if any.
        let mut dasher: Option<String> = None;
        let facing = |p: &str,
                      at: &BTreeMap<String, (i64, i64)>,
                      side: &BTreeMap<String, String>,
                      march: &BTreeMap<String, i64>| {
            march.get(p).copied().or_else(|| {
                let enemy = self.sides.iter().find(|s| side.get(p) != Some(*s))?;
                Some(bearing_deg(*at.get(p)?, *self.homes.get(enemy)?))
            })
        };
        for (n, l) in lines.iter().enumerate() {
            match l.kind() {
                "deployed" | "entered" => {
                    if let Some(p) = point(&l.v["at"]) {
                        at.insert(l.s("piece"), p);
                    }
                    let s = l.s("side");
                    let s = if s.is_empty() {
                        self.stats
                            .get(entity_of(&l.s("piece"), &self.sides))
                            .map(|st| st.side.clone())
                            .unwrap_or_default()
                    } else {
                        s
                    };
                    side.insert(l.s("piece"), s);
                }
                "moved" => {
                    if let (Some(p), Some(d)) = (point(&l.v["to"]), &dasher)
                        && *d == l.s("piece")
                        && let Some(&from) = at.get(d)
                        && from != p
                    {
                        march.insert(d.clone(), bearing_deg(from, p));
                    }
                    if let Some(p) = point(&l.v["to"]) {
                        at.insert(l.s("piece"), p);
                    }
                    if acted
                        .as_ref()
                        .is_some_and(|(_, args)| args.first() == Some(&l.s("piece")))
                    {
                        mover_steps += 1;
                    }
                }
                "marked" => {
                    markers
                        .entry(l.s("piece"))
                        .or_default()
                        .insert(l.s("marker"));
                }
                "unmarked" => {
                    let p = l.s("piece");
                    markers.entry(p.clone()).or_default().remove(&l.s("marker"));
                    // 2.3: opportunity fire takes the overwatch marker off as it fires, while
                    // the insurgent mover stands frozen at its midpoint (after the first of
                    // its move's two steps; the allied "choose 1" is logged after the order's
                    // events). A marker lost to a pin (item 11) follows the pin.
                    let pinned_now = n > 0
                        && lines[n - 1].kind() == "marked"
                        && lines[n - 1].s("marker") == "pinned_marker"
                        && lines[n - 1].s("piece") == p;
                    let fired =
                        l.s("marker") == "overwatch_marker" && !pinned_now && mover_steps == 1;
                    if let (true, Some((action, args))) = (fired, &acted)
                        && move_dest(action, args).is_some()
                    {
                        let mover = &args[0];
                        let arc = watch.get(&p).copied();
                        let off = match (at.get(&p), at.get(mover), arc) {
                            (Some(&w), Some(&m), Some(a)) => {
                                Some(bearing_gap(bearing_deg(w, m), a))
                            }
                            _ => None,
                        };
                        r.check(
                            "2.3: opportunity fire only at a mover inside the overwatch's 90 degree arc",
                            (off.is_none_or(|o| o > 45)).then(|| {
                                format!("{p} fired at {mover} {off:?} degrees off its arc {arc:?} (line {n})")
                            }),
                        );
                    }
                }
                "decision" => {
                    let label = l.s("label");
                    if !label.starts_with("choose ") {
                        acted = None;
                        arc_owed = None;
                    } else if let Some(w) = arc_owed.take() {
                        let a: Option<i64> = label.trim_start_matches("choose ").parse().ok();
                        r.check(
                            "2.3: an overwatch declares its 90 degree arc on one of 8 bearings",
                            (!a.is_some_and(|a| a % 45 == 0 && (0..360).contains(&a))
                                || l.s("side") != self.sides[0])
                                .then(|| format!("{w} declared {label} (line {n})")),
                        );
                        if let Some(a) = a {
                            watch.insert(w, a);
                        }
                    }
                }
                "acted" => {
                    let (action, args) = (l.s("action"), l.args());
                    // The march and the rear guard change only once the move is made (its
                    // rear_guard reset is logged): an order that ends in a hold (1.5) moves nothing.
                    pending_march = None;
                    if let Some((mover, dest)) = move_dest(&action, &args) {
                        let bearing = at
                            .get(&mover)
                            .filter(|&&from| from != dest)
                            .map(|&from| bearing_deg(from, dest));
                        pending_march = Some((mover, bearing));
                    }
                    if action == "set_overwatch" && !self.overwatch_arc_ahead {
                        arc_owed = args.first().cloned();
                    }
                    // `overwatch_arc_ahead`: the arc is fixed as it is set, ahead of the
                    // element's direction of march then.
                    if action == "set_overwatch"
                        && self.overwatch_arc_ahead
                        && let Some(w) = args.first()
                        && let Some(f) = facing(w, &at, &side, &march)
                    {
                        watch.insert(w.clone(), f);
                    }
                    mover_steps = 0;
                    spots_since_acted = 0;
                    dasher = None;
                    acted = Some((action, args));
                }
                "counted" => {
                    let p = l.s("piece");
                    let value = l.v["value"].as_i64().unwrap_or(0);
                    if l.s("counter") == "rear_guard"
                        && let Some((mover, bearing)) = pending_march.take_if(|(m, _)| *m == p)
                    {
                        if let Some(b) = bearing {
                            march.insert(mover.clone(), b);
                        }
                        guard.remove(&mover);
                    }
                    match l.s("counter").as_str() {
                        "mediums_lost" | "smalls_lost" => {
                            let k = format!("{p}/{}", l.s("counter"));
                            lost.insert(k, value);
                        }
                        "rear_guard" if value > 0 => {
                            let stat = self.stats.get(entity_of(&p, &self.sides));
                            let stands = stat.map_or(0, |s| {
                                s.mediums + s.smalls
                                    - lost.get(&format!("{p}/mediums_lost")).copied().unwrap_or(0)
                                    - lost.get(&format!("{p}/smalls_lost")).copied().unwrap_or(0)
                            });
                            let own_move = acted.as_ref().is_some_and(|(a, args)| {
                                move_dest(a, args).is_some_and(|(m, _)| m == p)
                            }) || dasher.as_ref() == Some(&p);
                            r.check(
                                "4.2 items 4-6: a rear-security stand is posted by a squad of two stands or more finishing its move",
                                (!own_move || stat.is_none_or(|s| s.dummy) || stands < 2)
                                    .then(|| format!("{p} posted one with {stands} stands in {acted:?} (line {n})")),
                            );
                            guard.insert(p);
                        }
                        "rear_guard" => {
                            guard.remove(&p);
                        }
                        _ => {}
                    }
                }
                // 5.8.A rule 2: a sprint under the dust is the sprinter's own move (its
                // direction of march; a rear-security stand falls in, then may be posted).
                "resolved" if l.s("name") == "dash_under_dust" => {
                    dasher = l.args().first().cloned();
                    if let Some(d) = &dasher {
                        guard.remove(d);
                    }
                }
                "resolved" if l.s("name") == "spotting" => {
                    let flag = arg_bool(&l.args(), 4);
                    let Some((action, args)) = &acted else {
                        continue;
                    };
                    let blind = |s: &str, t: &str| -> Option<bool> {
                        let f = facing(s, &at, &side, &march)?;
                        let rear = bearing_gap(bearing_deg(*at.get(s)?, *at.get(t)?), f) > 90;
                        let canopy = self.is_sniper(s) && self.in_canopy(*at.get(s)?);
                        Some(rear && !guard.contains(s) && !canopy)
                    };
                    let echo = |t: &String| {
                        markers.get(t).is_some_and(|m| {
                            m.contains("echo_marker") && !m.contains("confirmed_contact")
                        })
                    };
                    spots_since_acted += 1;
                    if action == "spotting_test" && args.len() == 2 && spots_since_acted == 1 {
                        let want = blind(&args[0], &args[1]);
                        r.check(
                            "4.2 items 7-9: the Blind Spot -1 exactly when the echo is in the spotter's unguarded rear arc",
                            (want != Some(flag)).then(|| {
                                format!("{args:?}: flag {flag}, expected {want:?} (line {n})")
                            }),
                        );
                    } else if move_dest(action, args).is_some() && action == "patrol_move" {
                        let s = &args[0];
                        let enemies: Vec<&String> = side
                            .iter()
                            .filter(|(p, sd)| side.get(s) != Some(*sd) && echo(p))
                            .map(|(p, _)| p)
                            .collect();
                        let some = enemies.iter().any(|t| blind(s, t) == Some(flag));
                        r.check(
                            "4.2 items 7-9: a patrol's spotting test has the Blind Spot -1 only as some echo lies",
                            (!some).then(|| format!("{s}: flag {flag}, no echo lies so (line {n})")),
                        );
                    }
                }
                _ => {}
            }
        }
    }
}

impl DinkyDau {
    /// 5.1 step 4 result 5 (and a vehicle with no HP left, read as knocked out): the hull
    /// leaves a smoking wreck where it stood, medium cover. Checked from the log: aimed fire
    /// (not at point blank, 5.6.A) at an element standing in no terrain feature whose centre
    /// is within 4in of a wreck's (2in of the hull, base to base) is saved on 5+ (5.1 step 3,
    /// light / medium cover), not the open ground's 6.
    fn wrecks(&self, lines: &[Line], r: &mut Report) {
        let mut at: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        let mut wrecks: Vec<(i64, i64)> = Vec::new();
        let mut knocked_out = false;
        let mut fire: Option<(String, String)> = None;
        let near = |a: (i64, i64), b: (i64, i64), r: i64| {
            let (dx, dy) = (i128::from(a.0 - b.0), i128::from(a.1 - b.1));
            dx * dx + dy * dy <= i128::from(r) * i128::from(r)
        };
        for (n, l) in lines.iter().enumerate() {
            match l.kind() {
                "deployed" | "entered" => {
                    if let Some(p) = point(&l.v["at"]) {
                        at.insert(l.s("piece"), p);
                    }
                }
                "moved" => {
                    if let Some(p) = point(&l.v["to"]) {
                        at.insert(l.s("piece"), p);
                    }
                }
                "decision" if !l.s("label").starts_with("choose ") => {
                    knocked_out = false;
                    fire = None;
                }
                "acted" => {
                    let args = l.args();
                    fire = (l.s("action") == "aimed_fire" && args.len() == 2)
                        .then(|| (args[0].clone(), args[1].clone()));
                }
                "resolved" if l.s("name") == "vehicle_damage_roll" => {
                    knocked_out =
                        matches!(l.s("result").as_str(), "knocked_out" | "superficial_scrape");
                }
                "eliminated" => {
                    let p = l.s("piece");
                    if knocked_out && !self.stats.contains_key(entity_of(&p, &self.sides)) {
                        knocked_out = false;
                        if let Some(&w) = at.get(&p) {
                            wrecks.push(w);
                        }
                    }
                }
                "resolved" if l.s("name") == "save_roll" => {
                    let Some((f, t)) = &fire else { continue };
                    let (Some(&fp), Some(&tp)) = (at.get(f), at.get(t)) else {
                        continue;
                    };
                    let open = !self.terrain.values().flatten().any(|rect| inside(rect, tp));
                    let beside = wrecks.iter().any(|&w| near(w, tp, 4 * INCH));
                    if open && beside && !near(fp, tp, 3 * INCH + 1) {
                        let save = arg_int(&l.args(), 1);
                        r.check(
                            "5.1 step 4 result 5: an element in the open beside a smoking wreck saves on 5+ (medium cover)",
                            (save != 5).then(|| {
                                format!("{t} at {tp:?} beside a wreck saved on {save} (line {n})")
                            }),
                        );
                    }
                }
                _ => {}
            }
        }
    }
}
