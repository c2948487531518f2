//! Referee for the outcome of Dinky Dau's close assault (5.2 items 2-3, and the indoor
//! surprise of 5.8.B rule 3, which goes straight to them), written from the book apart from
//! the engine: it reads the log as text (JSON lines), the element stat lines from the
//! compiled rules (as JSON data) and the scenario's assumptions.
//!
//! Checked at every close assault (an `assault` order, or a defender `surprised` by a
//! breach), from the two rolls of 5.2 item 2 (4+, no saves) to the next decision:
//! - equal losses: nobody breaks (the book is silent: the ruleset's reading); nobody moves,
//!   nobody is pinned by the outcome, nobody is wiped out;
//! - the side that lost more (hits taken) breaks: unless the hits alone removed it, it falls
//!   back straight away from the winner, 4in, cut short only by a figure in the way or the
//!   table's edge, and is pinned; the winner stays where it is, unpinned by the outcome;
//! - READING of "eliminated if surrounded" (5.2 item 3, the ruleset's README): a breaker that
//!   after its fall-back still stands within 52mm (base contact, as the assault itself) of a
//!   real enemy element could not break contact and is wiped out, and only such a breaker:
//!   every stand it had left collapses (its stand counters reach the element's full
//!   make-up) and it is removed. Under the option `surrounded_two_in_contact` it is
//!   surrounded when two or more real enemy elements are within 52mm as it breaks, and is
//!   then wiped out where it stands, with no fall-back.

use std::collections::BTreeMap;

use serde_json::Value;

use super::log::{Report, constant, dist, entity, point, prop};

const INCH: i64 = 254;
/// 5.2 item 3: "fall back 4\"".
const FALL_BACK: i64 = 4 * INCH;
/// 5.2 "within 2\"" read as base contact: 52mm between centres (the ruleset's assault reach).
const CONTACT: i64 = 520;
/// Rounding of the log's positions (tenths of a millimetre).
const SLACK: i64 = 3;

#[derive(Clone, Default)]
struct Piece {
    side: String,
    entity: String,
    at: (i64, i64),
    pinned: bool,
    gone: bool,
    counters: BTreeMap<String, i64>,
}

/// One element's stand make-up (1.5 / 4.2 on its stat line).
#[derive(Clone, Copy, Default)]
struct Stands {
    mediums: i64,
    smalls: i64,
    dummy: bool,
}

pub struct Assault {
    stands: BTreeMap<String, Stands>,
    table: (i64, i64),
    base: i64,
    two_in_contact: bool,
}

/// A move seen in an episode: the piece, from, to.
type Move = (String, (i64, i64), (i64, i64));

/// An episode: one close assault, from its attacker and defender to its rolls and outcome.
struct Episode {
    attacker: String,
    defender: String,
    /// The two rolls of 5.2 item 2, once seen (attacker's hits, defender's).
    rolls: Option<(i64, i64)>,
    /// Where each stood, and whether each was pinned, at the rolls.
    start: BTreeMap<String, ((i64, i64), bool)>,
    /// The enemy elements of each within 52mm at the rolls (for the two-in-contact option).
    moves: Vec<Move>,
    pins: Vec<String>,
    surrounded: Vec<String>,
    eliminated: Vec<String>,
    line: usize,
}

impl Assault {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>, scenario: &str) -> Self {
        let mut stands = BTreeMap::new();
        for e in ir["entities"].as_array().unwrap() {
            let field = |name: &str| {
                e["fields"]
                    .as_array()
                    .and_then(|fs| fs.iter().find(|f| f[0] == name))
                    .and_then(|f| constant(ir, &f[1], assumed))
            };
            let n = |name: &str| field(name).and_then(|v| v.as_i64()).unwrap_or(0);
            stands.insert(
                e["name"].as_str().unwrap_or_default().to_string(),
                Stands {
                    mediums: n("mediums"),
                    smalls: n("smalls"),
                    dummy: field("role").as_ref().and_then(Value::as_str) == Some("dummy_blind"),
                },
            );
        }
        let sc = super::log::config(ir, "scenario", scenario).expect("the scenario");
        let board = super::log::board(ir, sc);
        let board_len = |k: &str, or: i64| {
            prop(board, k)
                .first()
                .and_then(|(_, v)| constant(ir, v, assumed))
                .and_then(|c| c.as_i64())
                .unwrap_or(or)
        };
        let key = format!("scenario.{scenario}.options");
        Assault {
            stands,
            table: (board_len("width", 48 * INCH), board_len("depth", 48 * INCH)),
            base: board_len("base", 2 * INCH),
            two_in_contact: assumed
                .get(&key)
                .is_some_and(|o| o.contains("surrounded_two_in_contact")),
        }
    }

    fn real(&self, p: &Piece) -> bool {
        !self.stands.get(&p.entity).is_some_and(|s| s.dummy)
    }

    /// Real enemy elements of `who` within 52mm of `at`.
    fn in_contact(&self, pieces: &BTreeMap<String, Piece>, who: &str, at: (i64, i64)) -> usize {
        let side = &pieces[who].side;
        pieces
            .iter()
            .filter(|(l, p)| {
                l.as_str() != who
                    && &p.side != side
                    && !p.gone
                    && self.real(p)
                    && self.stands.contains_key(&p.entity)
                    && dist(p.at, at) <= (CONTACT + SLACK) as f64
            })
            .count()
    }

    /// A fall-back cut short: the next step along its line comes within a base of another
    /// figure, or leaves the table.
    fn blocked(
        &self,
        pieces: &BTreeMap<String, Piece>,
        who: &str,
        end: (i64, i64),
        dir: (f64, f64),
    ) -> bool {
        let step = 4.0 * SLACK as f64;
        let next = (end.0 as f64 + dir.0 * step, end.1 as f64 + dir.1 * step);
        let off = next.0 < 0.0
            || next.1 < 0.0
            || next.0 > self.table.0 as f64
            || next.1 > self.table.1 as f64;
        let figure = pieces.iter().any(|(l, p)| {
            l.as_str() != who && !p.gone && {
                let d =
                    ((p.at.0 as f64 - next.0).powi(2) + (p.at.1 as f64 - next.1).powi(2)).sqrt();
                d < (self.base + SLACK) as f64
            }
        });
        off || figure
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        let evs: Vec<Value> = text
            .lines()
            .skip(1)
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let mut pieces: BTreeMap<String, Piece> = BTreeMap::new();
        let mut open: Option<Episode> = None;
        let mut last_actor: Option<String> = None;
        for (n, ev) in evs.iter().enumerate() {
            let kind = ev["event"].as_str().unwrap_or_default();
            let s = |k: &str| ev[k].as_str().unwrap_or_default().to_string();
            let name = s("name");
            let surprise = kind == "resolved" && name == "surprised";
            if (matches!(kind, "decision" | "acted" | "turn" | "phase" | "end") || surprise)
                && let Some(e) = open.take()
            {
                self.judge(e, &pieces, r);
            }
            match kind {
                "deployed" | "entered" => {
                    let label = s("piece");
                    let at = point(&ev["at"]).unwrap_or_default();
                    let p = pieces.entry(label.clone()).or_default();
                    p.side = s("side");
                    p.entity = entity(&label).to_string();
                    p.at = at;
                }
                "moved" => {
                    let label = s("piece");
                    let to = point(&ev["to"]).unwrap_or_default();
                    if let Some(p) = pieces.get_mut(&label) {
                        if let Some(e) = open.as_mut()
                            && e.rolls.is_some()
                        {
                            e.moves.push((label.clone(), p.at, to));
                        }
                        p.at = to;
                    }
                }
                "eliminated" | "withdrawn" => {
                    let label = s("piece");
                    if let Some(e) = open.as_mut()
                        && e.rolls.is_some()
                        && kind == "eliminated"
                    {
                        e.eliminated.push(label.clone());
                        // Kept for the stand count of the judgement, off the table.
                        if let Some(p) = pieces.get_mut(&label) {
                            p.gone = true;
                        }
                        continue;
                    }
                    pieces.remove(&label);
                }
                "marked" | "unmarked" if s("marker") == "pinned_marker" => {
                    let label = s("piece");
                    if let Some(p) = pieces.get_mut(&label) {
                        p.pinned = kind == "marked";
                    }
                    if kind == "marked"
                        && let Some(e) = open.as_mut()
                        && e.rolls.is_some()
                    {
                        e.pins.push(label);
                    }
                }
                "counted" => {
                    let label = s("piece");
                    if let Some(p) = pieces.get_mut(&label) {
                        p.counters
                            .insert(s("counter"), ev["value"].as_i64().unwrap_or(0));
                    }
                }
                "acted" => {
                    let args: Vec<String> = ev["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| a.as_str().unwrap_or_default().to_string())
                        .collect();
                    last_actor = args.first().cloned();
                    if s("action") == "assault" && args.len() == 2 {
                        open = Some(Episode {
                            attacker: args[0].clone(),
                            defender: args[1].clone(),
                            rolls: None,
                            start: BTreeMap::new(),
                            moves: Vec::new(),
                            pins: Vec::new(),
                            surrounded: Vec::new(),
                            eliminated: Vec::new(),
                            line: n,
                        });
                    }
                }
                "resolved" => {
                    let args: Vec<String> = ev["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| a.as_str().unwrap_or_default().to_string())
                        .collect();
                    if surprise {
                        // 5.8.B rule 3: the breacher (the order's element) assaults at once.
                        if let (Some(a), Some(t)) = (last_actor.clone(), args.first()) {
                            open = Some(Episode {
                                attacker: a,
                                defender: t.clone(),
                                rolls: None,
                                start: BTreeMap::new(),
                                moves: Vec::new(),
                                pins: Vec::new(),
                                surrounded: Vec::new(),
                                eliminated: Vec::new(),
                                line: n,
                            });
                        }
                    } else if name == "surrounded" {
                        if let Some(e) = open.as_mut() {
                            e.surrounded.push(args.first().cloned().unwrap_or_default());
                        }
                    } else if name == "hit_roll"
                        && let Some(e) = open.as_mut()
                        && e.rolls.is_none()
                    {
                        // The two rolls of 5.2 item 2: a 4+ roll followed straight by another
                        // (the defensive volley's roll is followed by its saves).
                        let next = evs[n + 1..].iter().find(|x| x["event"] == "resolved");
                        let both = args.get(1).map(String::as_str) == Some("4")
                            && next.is_some_and(|x| {
                                x["name"] == "hit_roll" && x["args"][1].as_str() == Some("4")
                            });
                        if both {
                            let hits = |v: &Value| {
                                v["result"].as_str().and_then(|r| r.parse::<i64>().ok())
                            };
                            let att = hits(ev).unwrap_or(0);
                            let def = next.and_then(hits).unwrap_or(0);
                            e.rolls = Some((att, def));
                            for who in [e.attacker.clone(), e.defender.clone()] {
                                if let Some(p) = pieces.get(&who) {
                                    e.start.insert(who, (p.at, p.pinned));
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(e) = open.take() {
            self.judge(e, &pieces, r);
        }
    }

    fn judge(&self, e: Episode, pieces: &BTreeMap<String, Piece>, r: &mut Report) {
        let Some((att, def)) = e.rolls else {
            // The assault never came to blows (an element fell to the defensive fire).
            return;
        };
        r.check("5.2: close assaults resolved", None);
        let at = e.line;
        if att == def {
            r.check(
                "5.2 item 3 (reading): equal losses, nobody breaks",
                (!e.moves.is_empty() || !e.pins.is_empty() || !e.surrounded.is_empty()).then(
                    || {
                        format!(
                            "{} vs {}: {att}-{def}, moves {:?}, pins {:?}, surrounded {:?} (event {at})",
                            e.attacker, e.defender, e.moves, e.pins, e.surrounded
                        )
                    },
                ),
            );
            return;
        }
        let (loser, winner) = if att > def {
            (&e.defender, &e.attacker)
        } else {
            (&e.attacker, &e.defender)
        };
        r.check(
            "5.2 item 3: the winner neither moves nor is pinned by the outcome",
            (e.moves.iter().any(|m| &m.0 == winner) || e.pins.contains(winner)).then(|| {
                format!(
                    "{winner} beat {loser}: moves {:?}, pins {:?} (event {at})",
                    e.moves, e.pins
                )
            }),
        );
        let (Some(&(from, _)), Some(&(w_at, _))) = (e.start.get(loser), e.start.get(winner)) else {
            return;
        };
        // Fell to the hits themselves: removed before any fall-back.
        let fell_to_hits = e.eliminated.contains(loser)
            && !e.pins.contains(loser)
            && !e.surrounded.contains(loser);
        if fell_to_hits {
            r.check("5.2 item 3: a loser removed by the hits alone", None);
            return;
        }
        let Some(lp) = pieces.get(loser) else {
            return;
        };
        let mine: Vec<&Move> = e.moves.iter().filter(|m| &m.0 == loser).collect();
        let end = mine.last().map(|m| m.2).unwrap_or(from);
        // The position the surrounded test is taken at, and whether the loser is surrounded.
        let (surrounded, tested_at) = if self.two_in_contact {
            // The enemies within 52mm as it breaks: its own position at the rolls, the enemy
            // positions of the board (none of them moved by the outcome).
            (self.in_contact(pieces, loser, from) >= 2, from)
        } else {
            (self.in_contact(pieces, loser, end) >= 1, end)
        };
        let wiped = e.surrounded.iter().any(|s| s == loser);
        r.check(
            "5.2 item 3 (reading): the breaker is wiped out exactly when it cannot break contact",
            (surrounded != wiped).then(|| {
                format!(
                    "{loser} beaten by {winner} ({att}-{def}) at {tested_at:?}: surrounded {surrounded}, wiped out {wiped} (event {at})"
                )
            }),
        );
        if wiped {
            let st = self.stands.get(&lp.entity).copied().unwrap_or_default();
            let c = |k: &str| lp.counters.get(k).copied().unwrap_or(0);
            let all_gone = c("mediums_lost") + c("mediums_absent") >= st.mediums
                && c("smalls_lost") >= st.smalls;
            r.check(
                "5.2 item 3 (reading): a breaker that cannot break contact is wiped out, every stand collapsing",
                (!e.eliminated.contains(loser) || !all_gone || e.surrounded.len() != 1).then(|| {
                    format!(
                        "{loser}: eliminated {}, mediums lost {} + absent {} of {}, smalls lost {} of {} (event {at})",
                        e.eliminated.contains(loser),
                        c("mediums_lost"),
                        c("mediums_absent"),
                        st.mediums,
                        c("smalls_lost"),
                        st.smalls
                    )
                }),
            );
        } else {
            r.check(
                "5.2 item 3: a breaker that breaks contact is not removed by the outcome",
                e.eliminated
                    .contains(loser)
                    .then(|| format!("{loser} removed after its fall-back (event {at})")),
            );
        }
        if self.two_in_contact && wiped {
            r.check(
                "surrounded_two_in_contact: a surrounded breaker is wiped out where it stands",
                (!mine.is_empty()).then(|| format!("{loser} moved {mine:?} (event {at})")),
            );
            return;
        }
        // The fall-back: straight away from the winner, 4in, pinned.
        let moved = dist(from, end);
        let away = (from.0 - w_at.0, from.1 - w_at.1);
        let len = dist(away, (0, 0)).max(1.0);
        let dir = (away.0 as f64 / len, away.1 as f64 / len);
        let along = (end.0 - from.0) as f64 * dir.0 + (end.1 - from.1) as f64 * dir.1;
        let across = ((end.0 - from.0) as f64 * dir.1 - (end.1 - from.1) as f64 * dir.0).abs();
        r.check(
            "5.2 item 3: the breaker falls back straight away from the winner, at most 4in",
            (mine.len() > 1
                || moved > (FALL_BACK + SLACK) as f64
                || across > SLACK as f64
                || (moved > 0.0 && along <= 0.0))
                .then(|| {
                    format!("{loser} from {from:?} to {end:?}, winner at {w_at:?} (event {at})")
                }),
        );
        let short = moved < (FALL_BACK - SLACK) as f64;
        if short {
            r.check(
                "5.2 item 3: a fall-back short of 4in is stopped by a figure or the table's edge",
                (!self.blocked(pieces, loser, end, dir)).then(|| {
                    format!("{loser} fell back {moved:.0} from {from:?} to {end:?} (event {at})")
                }),
            );
        } else {
            r.check("5.2 item 3: a full 4in fall-back", None);
        }
        r.check(
            "5.2 item 3: the breaker is pinned",
            (!e.pins.contains(loser) && !e.start[loser].1)
                .then(|| format!("{loser} not pinned after breaking (event {at})")),
        );
    }
}
