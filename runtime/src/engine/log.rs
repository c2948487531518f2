//! The event log of a game: JSON lines, a header that names the ruleset, the scenario and the
//! seed, then one event per line. The narrative is rendered from the same events, so a replay
//! that reproduces the events reproduces the story.

use serde::{Deserialize, Serialize};

/// The first line of every log.
pub const LOG_FORMAT: &str = "sandtable-game-log";
pub const LOG_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub ruleset: String,
    /// Where the rules were read from, to find them again on replay.
    pub ruleset_path: String,
    /// FNV-1a of the compiled IR: a replay against changed rules is refused.
    pub ruleset_hash: String,
    pub scenario: String,
    pub seed: u64,
    pub backend: String,
    /// Policy per side, e.g. `("us", "random")`.
    pub policies: Vec<(String, String)>,
    /// Assumption files used (values not from the book).
    pub assumptions: Vec<String>,
    /// `--assume NAME=VALUE` pairs given on the command line.
    #[serde(default)]
    pub assume: Vec<(String, String)>,
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
    },
    Said {
        text: String,
    },
    End {
        winner: Option<String>,
        scores: Vec<(String, i64)>,
        turns: u32,
        losses: Vec<(String, u32)>,
    },
}

/// The narrative line(s) of one event.
pub fn narrate(e: &Event) -> String {
    match e {
        Event::Turn { turn } => format!("\n== Turn {turn} =="),
        Event::Phase { phase } => format!("-- {phase}"),
        Event::Chip { side, left } => format!("chip drawn: {side} ({left} left in the cup)"),
        Event::Card { card, side, left } => {
            format!("card drawn: {card}, {side} acts ({left} left in the deck)")
        }
        Event::Decision { side, label, .. } => format!("  {side}: {label}"),
        Event::Said { text } => format!("      {text}"),
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
    }
}

/// 64-bit FNV-1a, printed as hex: a stable fingerprint of the compiled rules.
pub fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
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
            ruleset_hash: fingerprint(b"x"),
            scenario: "s".into(),
            seed: 1,
            backend: "interp".into(),
            policies: vec![],
            assumptions: vec![],
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
    }
}
