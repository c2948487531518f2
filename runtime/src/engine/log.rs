//! The event log of a game: JSON lines, a header that names the ruleset, the scenario and the
//! seed, then one event per line. The narrative is rendered from the same events, so a replay
//! that reproduces the events reproduces the story.

use serde::{Deserialize, Serialize};

use super::state::{Pos, length};

/// The first line of every log.
pub const LOG_FORMAT: &str = "sandtable-game-log";
/// Version 2: the fingerprint covers the rules' sources, not their compiled form (which named
/// the paths as spelled), and the assumptions travel in the log.
/// Version 3: what happens on the board is data (moves with their routes, resolutions with
/// their dice, removals, markers, set-up, actions), so a reader can check it without parsing
/// the narrative.
pub const LOG_VERSION: u32 = 3;
/// Largest log `replay` reads. A game stops at [`super::MAX_DECISIONS`] decisions, whose log
/// is a few tens of megabytes.
pub const MAX_LOG_BYTES: u64 = 128 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub ruleset: String,
    /// Where the rules are, relative to the log's own folder, when they lie inside it (so a
    /// folder holding both can be moved); otherwise the path as given to `run`, for the reader
    /// only: `replay` then needs `--ruleset`, and never reads a path from a header that leads
    /// out of the log's folder.
    pub ruleset_path: String,
    /// [`fingerprint`] of the rules' sources and the assumptions: a replay against changed
    /// rules is refused.
    pub ruleset_hash: String,
    pub scenario: String,
    pub seed: u64,
    pub backend: String,
    /// Policy per side, e.g. `("us", "random")`.
    pub policies: Vec<(String, String)>,
    /// Assumption files used (values not from the book), as named to `run`.
    pub assumptions: Vec<String>,
    /// The text of each of those files: a replay reads them from here, not from disk.
    #[serde(default)]
    pub assumption_texts: Vec<String>,
    /// `--assume NAME=VALUE` pairs given on the command line.
    #[serde(default)]
    pub assume: Vec<(String, String)>,
}

/// Where something is, as data: a hex by its label, or a point on an open table in tenths of
/// a millimetre from the table's corner (exact: the narrative rounds to hundredths of the ruleset's unit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Place {
    Hex { hex: String },
    Point { x: i64, y: i64 },
}

impl Place {
    /// As the narrative prints it (the same words as [`Pos::label`]), in the ruleset's `unit`.
    pub fn label(&self, unit: Option<&str>) -> String {
        match self {
            Place::Hex { hex } => hex.clone(),
            Place::Point { x, y } => format!("({}, {})", length(*x, unit), length(*y, unit)),
        }
    }
}

impl From<Pos> for Place {
    fn from(p: Pos) -> Self {
        match p {
            Pos::Hex(h) => Place::Hex { hex: h.to_string() },
            Pos::Point(pt) => Place::Point {
                x: pt.x(),
                y: pt.y(),
            },
        }
    }
}

/// A typed point of a decision: it replaces the point of the listed choice `like`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Typed {
    pub like: usize,
    pub at: Place,
}

/// One die rolled inside a resolution: the die's name and the face it showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rolled {
    pub die: String,
    pub face: i64,
}

fn label_or_unknown(p: &Option<Place>, unit: Option<&str>) -> String {
    p.as_ref().map_or("?".into(), |p| p.label(unit))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Turn {
        turn: u32,
    },
    Phase {
        phase: String,
    },
    Chip {
        side: String,
        left: u32,
    },
    Card {
        card: String,
        side: String,
        left: u32,
    },
    Decision {
        side: String,
        choice: usize,
        of: usize,
        label: String,
        /// A point the player typed in place of the point of listed choice `like` (the
        /// typed choice is the last, `choice` = `of` - 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        typed: Option<Typed>,
        /// Why the policy made it, when it can say (a rule of a policy written in the rules).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        why: Option<String>,
    },
    /// A side activated a unit (a place, a group, its whole side): `pieces` of them, and
    /// whether all of those may act (else only one).
    Activated {
        by: String,
        side: String,
        unit: String,
        pieces: u32,
        all: bool,
    },
    Said {
        text: String,
    },
    /// A piece set up at a place (silent: the decision before it tells it).
    Deployed {
        piece: String,
        side: Option<String>,
        at: Place,
    },
    /// An action carried out to its end by `side`, with its arguments as shown (pieces by
    /// label). Silent: the decision tells it.
    Acted {
        side: String,
        action: String,
        args: Vec<String>,
    },
    /// A piece moved. `path` is the hexes entered in order, the last being `to`, when the
    /// engine knows the route (a cheapest one on a hex board); empty otherwise. `why` is the
    /// action or hook that moved it.
    Moved {
        piece: String,
        side: Option<String>,
        from: Option<Place>,
        to: Place,
        path: Vec<String>,
        why: Option<String>,
    },
    /// A piece held in reserve came onto the board at `at`, brought on by `why`.
    Entered {
        piece: String,
        side: Option<String>,
        at: Place,
        why: Option<String>,
    },
    /// A unit on the board went back into its force's reserve from `from` (`to_reserve`),
    /// taken off by `why`.
    Withdrawn {
        piece: String,
        side: Option<String>,
        from: Option<Place>,
        why: Option<String>,
    },
    /// A resolution rolled in play: its arguments as shown, every die in the order rolled
    /// (those of resolutions it calls included), and the outcome or value it came to.
    Resolved {
        name: String,
        args: Vec<String>,
        dice: Vec<Rolled>,
        result: String,
        why: Option<String>,
    },
    /// A piece eliminated where it stood.
    Eliminated {
        piece: String,
        side: Option<String>,
        at: Option<Place>,
    },
    /// A piece left the board (for good, not eliminated) from `at`.
    Exited {
        piece: String,
        side: Option<String>,
        at: Option<Place>,
    },
    /// An eliminated piece picked up by a piece on the board (`carry`), at the carrier's place.
    Carried {
        piece: String,
        side: Option<String>,
        by: String,
        at: Option<Place>,
    },
    /// A carried piece taken off the board with its carrier, from `at`.
    CarriedOff {
        piece: String,
        side: Option<String>,
        at: Option<Place>,
    },
    /// A face-down piece turned face up for one action (`show`), face down again after it.
    Shown {
        piece: String,
        side: Option<String>,
        at: Option<Place>,
    },
    /// A marker put on a piece or at a place.
    Marked {
        marker: String,
        piece: Option<String>,
        at: Option<Place>,
    },
    /// A marker taken off a piece or a place, one event for each that carried it (silent).
    Unmarked {
        marker: String,
        piece: Option<String>,
        at: Option<Place>,
    },
    /// A secret counter (the turn block's `secret_counters:`) of a piece took a value: known
    /// to the piece's side only, so silent in the narrative.
    Counted {
        piece: String,
        side: Option<String>,
        counter: String,
        value: i64,
        why: Option<String>,
    },
    /// The game was stopped by a signal here; the log holds what was played before it.
    Interrupted {
        decisions: u32,
    },
    End {
        winner: Option<String>,
        scores: Vec<(String, i64)>,
        turns: u32,
        losses: Vec<(String, u32)>,
    },
}

/// `name` appears in `line` as a whole label (not as the start of `name #12`).
pub(crate) fn mentions(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| {
        let rest = &line[at + name.len()..];
        !(rest.starts_with(char::is_alphanumeric)
            || rest.starts_with('_')
            || (rest.starts_with(" #") && rest[2..].starts_with(|c: char| c.is_ascii_digit())))
    })
}

/// The narrative line(s) of one event, points in the ruleset's length `unit`
/// (`Program::length_unit`); `None` for an event the story does not tell.
pub fn narrate(e: &Event, unit: Option<&str>) -> Option<String> {
    Some(match e {
        Event::Turn { turn } => format!("\n== Turn {turn} =="),
        Event::Phase { phase } => format!("-- {phase}"),
        Event::Chip { side, left } => format!("chip drawn: {side} ({left} left in the cup)"),
        Event::Card { card, side, left } => {
            format!("card drawn: {card}, {side} acts ({left} left in the deck)")
        }
        Event::Decision {
            side, label, why, ..
        } => match why {
            Some(why) => format!("  {side}: {label}    [{why}]"),
            None => format!("  {side}: {label}"),
        },
        Event::Activated {
            by,
            side,
            unit,
            pieces,
            all,
        } => format!(
            "      {by}: {side} activates {unit} ({pieces} unit{}{})",
            if *pieces == 1 { "" } else { "s" },
            if *all || *pieces == 1 {
                ""
            } else {
                ", one of them may act"
            }
        ),
        Event::Said { text } => format!("      {text}"),
        Event::Deployed { .. }
        | Event::Acted { .. }
        | Event::Unmarked { .. }
        | Event::Counted { .. } => return None,
        Event::Moved {
            piece, from, to, ..
        } => format!(
            "      {piece} moves {} -> {}",
            label_or_unknown(from, unit),
            to.label(unit)
        ),
        Event::Entered { piece, at, .. } => {
            format!("      {piece} comes onto the board at {}", at.label(unit))
        }
        Event::Withdrawn { piece, from, .. } => format!(
            "      {piece} goes off the board into reserve from {}",
            label_or_unknown(from, unit)
        ),
        Event::Resolved {
            name,
            args,
            dice,
            result,
            ..
        } => {
            // The inputs and the dice, so a player can follow (and check) every resolution.
            let rolled: Vec<String> = dice
                .iter()
                .map(|r| format!("{} {}", r.die, r.face))
                .collect();
            let rolled = if rolled.is_empty() {
                String::new()
            } else {
                format!(" rolled {}", rolled.join(", "))
            };
            format!("      {name}({}){rolled}: {result}", args.join(", "))
        }
        Event::Eliminated { piece, .. } => format!("      {piece} eliminated"),
        Event::Exited { piece, at, .. } => {
            format!(
                "      {piece} leaves the board at {}",
                label_or_unknown(at, unit)
            )
        }
        Event::Carried { piece, by, at, .. } => {
            format!(
                "      {by} picks up {piece} at {}",
                label_or_unknown(at, unit)
            )
        }
        Event::CarriedOff { piece, at, .. } => {
            format!(
                "      {piece} is carried off the board at {}",
                label_or_unknown(at, unit)
            )
        }
        Event::Shown { piece, at, .. } => {
            format!(
                "      {piece} at {} is turned face up for this action",
                label_or_unknown(at, unit)
            )
        }
        Event::Marked { marker, piece, at } => match piece {
            Some(p) => format!("      {marker} on {p}"),
            None => format!("      {marker} placed at {}", label_or_unknown(at, unit)),
        },
        Event::Interrupted { decisions } => {
            format!("\nInterrupted after {decisions} decision(s): the game is not finished.")
        }
        Event::End {
            winner,
            scores,
            turns,
            losses,
        } => {
            let list = |v: &[(String, i64)]| {
                v.iter()
                    .map(|(s, n)| format!("{s} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let l: Vec<(String, i64)> = losses
                .iter()
                .map(|(s, n)| (s.clone(), i64::from(*n)))
                .collect();
            format!(
                "\nResult: {} after {turns} turn(s). Score: {}. Losses: {}.",
                match winner {
                    Some(w) => format!("{w} wins"),
                    None => "draw".into(),
                },
                list(scores),
                list(&l)
            )
        }
    })
}

/// 64-bit FNV-1a over the parts, each preceded by its length (so `ab`+`c` and `a`+`bc`
/// differ), printed as hex: a stable fingerprint of what the rules are made of.
pub fn fingerprint<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for p in parts {
        eat(&(p.len() as u64).to_le_bytes());
        eat(p);
    }
    format!("{h:016x}")
}

/// A log file's text, refused when it is not a regular file or is over [`MAX_LOG_BYTES`].
pub fn read(path: &std::path::Path) -> Result<String, String> {
    let bytes = sandtable_ir::read::read_limited(path, MAX_LOG_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|_| {
        format!(
            "{}: not valid UTF-8: this is not a sandtable game log",
            path.display()
        )
    })
}

/// Read a log: its header and events. A line that is not one is refused with its number.
pub fn parse(text: &str) -> Result<(Header, Vec<Event>), String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, first)) = lines.next() else {
        return Err("the log is empty".into());
    };
    let header: Header = serde_json::from_str(first).map_err(|_| {
        format!("line 1 is not a {LOG_FORMAT} header: this is not a sandtable game log")
    })?;
    if header.format != LOG_FORMAT {
        return Err(format!(
            "line 1 names format `{}`, not `{LOG_FORMAT}`",
            header.format
        ));
    }
    if header.version != LOG_VERSION {
        return Err(format!(
            "log format version {} is not supported (this build reads version {LOG_VERSION})",
            header.version
        ));
    }
    let mut events = Vec::new();
    for (i, l) in lines {
        let e: Event =
            serde_json::from_str(l).map_err(|e| format!("line {} is damaged: {e}", i + 1))?;
        events.push(e);
    }
    if let Some(Event::Interrupted { decisions }) = events.last() {
        return Err(format!(
            "the game was interrupted after {decisions} decision(s): the log holds what was \
             played but has no end to replay to"
        ));
    }
    if !matches!(events.last(), Some(Event::End { .. })) {
        return Err("the log has no end-of-game line: it is cut short".into());
    }
    Ok((header, events))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip_and_damage_is_refused() {
        let h = Header {
            format: LOG_FORMAT.into(),
            version: LOG_VERSION,
            ruleset: "R".into(),
            ruleset_path: "r".into(),
            ruleset_hash: fingerprint([&b"x"[..]]),
            scenario: "s".into(),
            seed: 1,
            backend: "interp".into(),
            policies: vec![],
            assumptions: vec![],
            assumption_texts: vec![],
            assume: vec![],
        };
        let evs = vec![
            Event::Turn { turn: 1 },
            Event::End {
                winner: None,
                scores: vec![],
                turns: 1,
                losses: vec![],
            },
        ];
        let mut text = serde_json::to_string(&h).unwrap();
        for e in &evs {
            text.push('\n');
            text.push_str(&serde_json::to_string(e).unwrap());
        }
        assert_eq!(parse(&text).unwrap(), (h, evs));
        let cut = &text[..text.len() - 5];
        assert!(parse(cut).unwrap_err().contains("line 3"));
        assert!(
            parse("{\"a\":1}")
                .unwrap_err()
                .contains("not a sandtable game log")
        );
        let no_end = text.lines().take(2).collect::<Vec<_>>().join("\n");
        assert!(parse(&no_end).unwrap_err().contains("cut short"));
        let stopped = format!(
            "{no_end}\n{}",
            serde_json::to_string(&Event::Interrupted { decisions: 3 }).unwrap()
        );
        assert!(
            parse(&stopped)
                .unwrap_err()
                .contains("interrupted after 3 decision(s)")
        );
    }

    #[test]
    fn board_events_read_back_and_tell_the_story() {
        let hex = |h: &str| Place::Hex { hex: h.into() };
        // 1 inch is 254 tenths of a millimetre.
        let point = Place::Point {
            x: 254 * 21,
            y: 2794 * 2,
        };
        let told = [
            (
                Event::Moved {
                    piece: "rhah".into(),
                    side: Some("us".into()),
                    from: Some(hex("U6")),
                    to: hex("S4"),
                    path: vec!["U5".into(), "T4".into(), "S4".into()],
                    why: Some("move_piece".into()),
                },
                Some("      rhah moves U6 -> S4"),
            ),
            (
                Event::Moved {
                    piece: "charger".into(),
                    side: None,
                    from: None,
                    to: point.clone(),
                    path: vec![],
                    why: None,
                },
                Some("      charger moves ? -> (21in, 22in)"),
            ),
            (
                Event::Entered {
                    piece: "regular #4".into(),
                    side: Some("us".into()),
                    at: point.clone(),
                    why: Some("bring_in".into()),
                },
                Some("      regular #4 comes onto the board at (21in, 22in)"),
            ),
            (
                Event::Withdrawn {
                    piece: "regular #4".into(),
                    side: Some("us".into()),
                    from: Some(point.clone()),
                    why: Some("mount".into()),
                },
                Some("      regular #4 goes off the board into reserve from (21in, 22in)"),
            ),
            (
                Event::Resolved {
                    name: "melee".into(),
                    args: vec!["1".into(), "2".into()],
                    dice: vec![
                        Rolled {
                            die: "d10".into(),
                            face: 3,
                        },
                        Rolled {
                            die: "d10".into(),
                            face: 7,
                        },
                    ],
                    result: "attackers_fall_back".into(),
                    why: Some("move_piece".into()),
                },
                Some("      melee(1, 2) rolled d10 3, d10 7: attackers_fall_back"),
            ),
            (
                Event::Eliminated {
                    piece: "elias".into(),
                    side: Some("us".into()),
                    at: Some(hex("R10")),
                },
                Some("      elias eliminated"),
            ),
            (
                Event::Exited {
                    piece: "nva_rpd".into(),
                    side: Some("nva".into()),
                    at: Some(hex("G11")),
                },
                Some("      nva_rpd leaves the board at G11"),
            ),
            (
                Event::Marked {
                    marker: "pinned_down".into(),
                    piece: Some("taylor".into()),
                    at: None,
                },
                Some("      pinned_down on taylor"),
            ),
            (
                Event::Marked {
                    marker: "wire".into(),
                    piece: None,
                    at: Some(point.clone()),
                },
                Some("      wire placed at (21in, 22in)"),
            ),
            (
                Event::Unmarked {
                    marker: "wire".into(),
                    piece: None,
                    at: Some(hex("K4")),
                },
                None,
            ),
            (
                Event::Deployed {
                    piece: "elias".into(),
                    side: Some("us".into()),
                    at: hex("R10"),
                },
                None,
            ),
            (
                Event::Acted {
                    side: "us".into(),
                    action: "fire_at".into(),
                    args: vec!["elias".into(), "R6".into()],
                },
                None,
            ),
        ];
        for (e, line) in told {
            assert_eq!(narrate(&e, Some("in")).as_deref(), line, "{e:?}");
            let text = serde_json::to_string(&e).unwrap();
            assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), e, "{text}");
        }
        // Places are data: a hex by label, a point exactly, not the rounded inches.
        let at = serde_json::to_value(Place::from(Pos::Point(
            crate::board::Point::new(7874, 331).unwrap(),
        )))
        .unwrap();
        assert_eq!(at, serde_json::json!({"x": 7874, "y": 331}));
        let h = crate::board::HexCoord::parse("S4").unwrap();
        assert_eq!(
            serde_json::to_value(Place::from(Pos::Hex(h))).unwrap(),
            serde_json::json!({"hex": "S4"})
        );
    }

    #[test]
    fn fingerprints_separate_their_parts() {
        let ab_c = fingerprint([&b"ab"[..], b"c"]);
        assert_ne!(ab_c, fingerprint([&b"a"[..], b"bc"]));
        assert_eq!(ab_c, fingerprint([&b"ab"[..], b"c"]));
    }

    #[test]
    fn a_log_of_exactly_the_limit_is_read_and_one_byte_more_is_refused() {
        let dir = std::env::temp_dir().join(format!("sandtable-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.jsonl");
        // A sparse file: its size is what is tested, not the disk.
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(MAX_LOG_BYTES).unwrap();
        assert_eq!(read(&path).map(|t| t.len()), Ok(MAX_LOG_BYTES as usize));
        f.set_len(MAX_LOG_BYTES + 1).unwrap();
        let err = read(&path).unwrap_err();
        assert!(err.contains("larger than the limit"), "{err}");
        assert!(read(std::path::Path::new("/dev/zero")).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }
}
