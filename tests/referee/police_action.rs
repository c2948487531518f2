//! Police Action's referee: the card deck ("Sequence of Play"), the cards a call for fire
//! inserts, close combat ("Close Combat") and morale tests ("Motivation and Morale"), read
//! from the log alone. The book's numbers are written here from the book; the values it
//! leaves blank come from the scenario's assumptions file; the troops' quality from the rules
//! as data. Nothing here runs engine code.

use std::collections::BTreeMap;

use serde_json::Value;

use super::log::Report;

/// "Sequence of Play": ten red and ten black cards, turned until ten have been drawn.
const DECK: i64 = 20;
const DRAWS_PER_TURN: u32 = 10;
/// Four picture cards come in with a call: Kings replace four cards, Queens are added.
const PICTURES: i64 = 4;

/// "Motivation and Morale": the Motivation rating by quality.
fn motivation_rating(quality: &str) -> Option<i64> {
    Some(match quality {
        "elite" => 4,
        "veteran" => 3,
        "average" => 2,
        "green" => 1,
        "poor" => 0,
        _ => return None,
    })
}

/// "Close Combat": each side's d6, +2 per additional unit, +2 experienced, -2 suppressed;
/// the higher wins, by 1-2 the loser retreats suppressed, by 3+ the loser is killed.
fn close_combat(args: &[String], attack_d6: i64, defence_d6: i64) -> Option<&'static str> {
    let int = |k: usize| args.get(k)?.parse::<i64>().ok();
    let yes = |k: usize| args.get(k).map(|a| a == "true");
    let side = |add: i64, exp: bool, supp: bool| {
        2 * add + if exp { 2 } else { 0 } - if supp { 2 } else { 0 }
    };
    let attack = attack_d6 + side(int(0)?, yes(1)?, yes(2)?);
    let defence = defence_d6 + side(int(3)?, yes(4)?, yes(5)?);
    Some(match attack - defence {
        3.. => "defender_killed",
        1..=2 => "defender_retreats_suppressed",
        0 => "tie",
        -2..=-1 => "attacker_retreats_suppressed",
        _ => "attacker_killed",
    })
}

pub struct PoliceAction {
    /// Motivation rating of each side's elements (the stand-in gives one quality a side).
    mr: BTreeMap<String, i64>,
    /// The morale modifiers and Results scores the book leaves blank, from the assumptions.
    modifiers: Vec<i64>,
    move_as_ordered: i64,
    withdraw_and_regroup: i64,
}

fn assumed_int(assumed: &BTreeMap<String, String>, name: &str) -> i64 {
    assumed
        .get(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("the assumptions give no number for {name}"))
}

impl PoliceAction {
    pub fn new(ir: &Value, assumed: &BTreeMap<String, String>) -> Self {
        let sides: Vec<String> = ir["sides"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect();
        let mut mr = BTreeMap::new();
        for e in ir["entities"].as_array().unwrap() {
            let (Some(side), Some(fields)) = (e["side"].as_u64(), e["fields"].as_array()) else {
                continue;
            };
            for f in fields {
                if f[0].as_str() == Some("quality")
                    && let Some(q) = super::log::constant(ir, &f[1], assumed)
                    && let Some(r) = q.as_str().and_then(motivation_rating)
                {
                    mr.insert(sides[side as usize].clone(), r);
                }
            }
        }
        assert_eq!(mr.len(), 2, "each side's quality is read from the rules");
        let m = |n: &str| assumed_int(assumed, &format!("morale_modifiers.{n}"));
        PoliceAction {
            mr,
            modifiers: vec![
                m("per_element_lost_since_last_own_turn"),
                m("per_element_lost_this_game_including_since_last_own_turn"),
                m("no_command_group_or_smus_attached"),
                m("friendly_units_in_line_of_sight_retreating"),
                m("in_hard_or_soft_cover"),
                m("afv_support_within_20cm"),
                m("unit_under_artillery_fire"),
                m("under_attack_from_napalm_air_or_flamethrower"),
            ],
            move_as_ordered: assumed_int(assumed, "book_blanks.morale_move_as_ordered"),
            withdraw_and_regroup: assumed_int(assumed, "book_blanks.morale_withdraw_and_regroup"),
        }
    }

    /// The morale test's total from its logged arguments and die, with the assumed modifiers.
    fn morale_total(&self, args: &[String], d6: i64) -> Option<i64> {
        let mr: i64 = args.first()?.parse().ok()?;
        let mut total = d6 + mr;
        for (k, m) in self.modifiers.iter().enumerate() {
            let a = args.get(k + 1)?;
            total += match a.as_str() {
                "true" => *m,
                "false" => 0,
                n => n.parse::<i64>().ok()? * m,
            };
        }
        Some(total)
    }

    pub fn referee(&self, text: &str, r: &mut Report) {
        r.games += 1;
        let events: Vec<Value> = text
            .lines()
            .skip(1)
            .map(|l| serde_json::from_str(l).expect("a log line is JSON"))
            .collect();
        let s = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
        let mut deck = DECK;
        let mut drawn_since_shuffle: i64 = 0;
        let mut draws_this_turn: Option<u32> = None;
        // Calls that got through and wait for their cards: "king", "queen" (or the other
        // reading's "queen_replacing").
        let mut calls: Vec<&'static str> = Vec::new();
        let mut last_call: Option<&'static str> = None;
        // Picture cards in the deck whose first card has not been drawn yet.
        let mut waiting: BTreeMap<String, bool> = BTreeMap::new();
        let mut fired_events: Vec<String> = Vec::new();
        // The card being played: its side, and what the morale test of its start allows.
        let mut card_side: Option<String> = None;
        let mut allowed: Option<(String, u8)> = None;
        // Whether the most recent card of each side saw that side fire on the enemy.
        let mut fired_in_last_card: BTreeMap<String, bool> = BTreeMap::new();
        let mut last_assault: Option<(String, String)> = None;
        let mut expect_gone: Option<String> = None;
        let finish_turn = |draws: Option<u32>, r: &mut Report| {
            if let Some(n) = draws {
                r.check(
                    "Sequence of Play: ten cards are drawn, then the deck is reshuffled",
                    (n != DRAWS_PER_TURN).then(|| format!("{n} cards drawn in a turn")),
                );
            }
        };
        for v in &events {
            let ev = s(v, "event");
            match ev.as_str() {
                "turn" => {
                    finish_turn(draws_this_turn, r);
                    draws_this_turn = Some(0);
                    drawn_since_shuffle = 0;
                }
                "end" => finish_turn(draws_this_turn.take(), r),
                "card" => {
                    if let Some(n) = draws_this_turn.as_mut() {
                        *n += 1;
                    }
                    let (card, side) = (s(v, "card"), s(v, "side"));
                    let left = v["left"].as_i64().unwrap_or(-1);
                    r.check(
                        "Sequence of Play: the deck holds its cards, one fewer per draw",
                        (left != deck - 1 - drawn_since_shuffle).then(|| {
                            format!(
                                "{left} cards left after {} draws from a deck of {deck}",
                                drawn_since_shuffle + 1
                            )
                        }),
                    );
                    drawn_since_shuffle += 1;
                    let bad = match card.as_str() {
                        "red" => (side != "vietnamese").then(|| format!("a red card for {side}")),
                        "black" => (side != "us").then(|| format!("a black card for {side}")),
                        picture => (!fired_events.iter().any(|e| e == picture)).then(|| {
                            format!("a {picture} played as an ordinary card before the first one brought the strike")
                        }),
                    };
                    r.check(
                        "Sequence of Play: red cards are the Vietnamese turns, black the US; a later picture card is an ordinary card",
                        bad,
                    );
                    // Close the side's previous card: did it fire?
                    fired_in_last_card.insert(side.clone(), false);
                    card_side = Some(side);
                    allowed = None;
                }
                "said" => {
                    let text = s(v, "text");
                    if let Some(rest) = text.strip_prefix("card drawn: ") {
                        // The first picture card of a call: its strike, not a turn.
                        if let Some(n) = draws_this_turn.as_mut() {
                            *n += 1;
                        }
                        drawn_since_shuffle += 1;
                        let label = rest.split(' ').next().unwrap_or_default().to_string();
                        let first = waiting.remove(&label).is_some();
                        r.check(
                            "Sequence of Play: the strike comes with the first picture card of its call, once",
                            (!first).then(|| format!("`{text}` with no such card waiting")),
                        );
                        fired_events.push(label);
                        card_side = None;
                    } else if let Some(rest) = text.split_once(" cards shuffled into the deck (") {
                        let (label, n) = rest;
                        let n: i64 = n.trim_end_matches(" cards)").parse().unwrap_or(-1);
                        let expected = match label {
                            "queen" => deck + PICTURES,
                            _ => deck,
                        };
                        r.check(
                            "Sequence of Play: Kings replace four cards, Queens are added",
                            (n != expected)
                                .then(|| format!("{label}: {n} cards, {expected} expected")),
                        );
                        let called = calls.iter().position(|c| *c == label);
                        r.check(
                            "Call for Fire: picture cards go in only after a call got through",
                            called
                                .is_none()
                                .then(|| format!("{label} cards with no call through")),
                        );
                        if let Some(k) = called {
                            calls.remove(k);
                        }
                        waiting.insert(label.to_string(), true);
                        deck = n;
                        drawn_since_shuffle = 0;
                    }
                }
                "acted" => {
                    let action = s(v, "action");
                    let args: Vec<String> = v["args"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .map(|x| x.as_str().unwrap_or_default().to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                    let side = s(v, "side");
                    last_call = match action.as_str() {
                        "call_airstrike" => Some("king"),
                        "call_artillery" => Some("queen"),
                        _ => None,
                    };
                    if matches!(action.as_str(), "fire" | "barrage") {
                        fired_in_last_card.insert(side.clone(), true);
                    }
                    if action == "assault" {
                        last_assault = args.first().cloned().zip(args.get(1).cloned());
                    }
                    if let Some((tested, state)) = &allowed
                        && *tested == side
                    {
                        let ok = match state {
                            0 => true,
                            1 | 2 => !matches!(action.as_str(), "advance" | "march" | "assault"),
                            _ => action == "retreat",
                        };
                        r.check(
                            "Results: a platoon that failed its morale test does only what the result permits",
                            (!ok).then(|| format!("{action} by {side} after a result of level {state}")),
                        );
                    }
                }
                "resolved" => {
                    let name = s(v, "name");
                    let result = s(v, "result");
                    let args: Vec<String> = v["args"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .map(|x| x.as_str().unwrap_or_default().to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                    let dice: Vec<i64> = v["dice"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|d| d["face"].as_i64()).collect())
                        .unwrap_or_default();
                    match name.as_str() {
                        "call_for_fire" => {
                            // "a roll of 3+ (4+ if under fire)"
                            let need = if args.first().map(String::as_str) == Some("true") {
                                4
                            } else {
                                3
                            };
                            let want = if dice.first().copied().unwrap_or(0) >= need {
                                "gets_through"
                            } else {
                                "not_through"
                            };
                            r.check(
                                "Call for Fire: 3+ to get through, 4+ under fire",
                                (result != want)
                                    .then(|| format!("{dice:?} needing {need}+ gave {result}")),
                            );
                            if result == "gets_through"
                                && let Some(c) = last_call
                            {
                                calls.push(c);
                                // The other reading's queens also answer an artillery call.
                                if c == "queen" {
                                    calls.push("queen_replacing");
                                }
                            }
                        }
                        "close_combat" => {
                            let want = (dice.len() == 2)
                                .then(|| close_combat(&args, dice[0], dice[1]))
                                .flatten();
                            r.check(
                                "Close Combat: d6 + modifiers each, highest wins; 1-2 retreat suppressed, 3+ killed",
                                (want != Some(result.as_str()))
                                    .then(|| format!("{args:?} {dice:?} gave {result}, not {want:?}")),
                            );
                            r.check(
                                "Close Combat: only against a suppressed element",
                                (args.get(5).map(String::as_str) != Some("true"))
                                    .then(|| format!("defender not suppressed: {args:?}")),
                            );
                            expect_gone = match (result.as_str(), &last_assault) {
                                ("defender_killed", Some((_, t))) => Some(t.clone()),
                                ("attacker_killed", Some((a, _))) => Some(a.clone()),
                                _ => None,
                            };
                        }
                        "morale_test" => {
                            let want = dice.first().and_then(|d| self.morale_total(&args, *d));
                            r.check(
                                "Motivation and Morale: one die + MR + modifiers",
                                (want.map(|t| t.to_string()) != Some(result.clone())).then(|| {
                                    format!("{args:?} {dice:?} gave {result}, not {want:?}")
                                }),
                            );
                            if let Some(side) = &card_side {
                                let mr = args.first().and_then(|a| a.parse::<i64>().ok());
                                r.check(
                                    "Motivation and Morale: MR by the platoon's quality",
                                    (mr != self.mr.get(side).copied())
                                        .then(|| format!("{side} tested with MR {mr:?}")),
                                );
                                // "VC and NVA units only test if they came under fire in the
                                // preceding US turn."
                                if side == "vietnamese" {
                                    r.check(
                                        "Motivation and Morale: the VC test only after coming under fire in the last US turn",
                                        (!fired_in_last_card.get("us").copied().unwrap_or(false)
                                            && !fired_events.iter().any(|e| e == "king" || e == "queen" || e == "queen_replacing"))
                                        .then(|| "a VC test with no US fire in the last US turn".to_string()),
                                    );
                                }
                                let total: i64 = result.parse().unwrap_or(i64::MIN);
                                let state = if total >= self.move_as_ordered {
                                    0
                                } else if total >= self.withdraw_and_regroup {
                                    1
                                } else {
                                    3
                                };
                                allowed = Some((side.clone(), state));
                            }
                        }
                        _ => {}
                    }
                }
                // Wounded: a KO'd unit may stay as a wounded man instead of leaving.
                "marked"
                    if s(v, "marker") == "wounded_man"
                        && expect_gone.as_deref() == Some(s(v, "piece").as_str()) =>
                {
                    expect_gone = None;
                    r.check("Close Combat: the loser by 3+ is killed", None);
                }
                "eliminated" => {
                    if let Some(p) = expect_gone.take() {
                        let piece = s(v, "piece");
                        r.check(
                            "Close Combat: the loser by 3+ is killed",
                            (piece != p).then(|| format!("{piece} eliminated, {p} expected")),
                        );
                    }
                }
                "decision" => {
                    if let Some(p) = expect_gone.take() {
                        r.check(
                            "Close Combat: the loser by 3+ is killed",
                            Some(format!("{p} was not eliminated")),
                        );
                    }
                }
                _ => {}
            }
        }
        r.check(
            "Sequence of Play: the deck never holds more than its cards and the called pictures",
            (deck > DECK + PICTURES).then(|| format!("a deck of {deck}")),
        );
    }
}
