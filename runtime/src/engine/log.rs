//! The event log of a game: JSON lines, a header that names the ruleset, the scenario and the
//! seed, then one event per line. The narrative is rendered from the same events, so a replay
//! that reproduces the events reproduces the story.

use serde::{Deserialize, Serialize};

/// The first line of every log.
pub const LOG_FORMAT: &str = "sandtable-game-log";
/// Version 2: the fingerprint covers the rules' sources, not their compiled form (which named
/// the paths as spelled), and the assumptions travel in the log.
pub const LOG_VERSION: u32 = 2;
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
    }
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
