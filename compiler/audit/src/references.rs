//! Cross-references in the prose ("see rule 7", "rules 6e and 6f", "see
//! Chapter 13", "(7)(a)2", "see later artillery rules") resolved against the
//! outline: a reference to nothing, or to a number printed twice, misleads
//! every reader who follows it.

use crate::finding::{Finding, codes};
use crate::headings::{Outline, Role, clip};
use crate::lines::Line;
use crate::numbering::Style;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Chapter,
    Rule,
    Section,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seg {
    Num(u32),
    Letter(u32),
}

#[derive(Debug)]
struct Ref {
    kind: Kind,
    /// Leading numbers joined by dots ("4.1") form one dotted number.
    dotted: Vec<u32>,
    rest: Vec<Seg>,
    /// Byte range of the target in the line text.
    at: (usize, usize),
}

const CUES: &[&str] = &[
    "see ",
    "cf. ",
    "refer to ",
    "described in ",
    "according to ",
    "as per ",
    "per ",
];

fn boundary_before(lc: &str, pos: usize) -> bool {
    lc[..pos]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_alphanumeric())
}

/// Occurrences of `word` at a word boundary.
fn find_words<'a>(lc: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    lc.match_indices(word)
        .map(|(i, _)| i)
        .filter(move |&i| boundary_before(lc, i))
}

fn inside_quotes(t: &str, pos: usize) -> bool {
    let before = &t[..pos];
    let straight = before.matches('"').count();
    let open = before.matches('“').count();
    let close = before.matches('”').count();
    straight % 2 == 1 || open > close
}

/// Parses "6e", "7", "4.1", "(7)(a)2" at `pos`; returns the target and its end.
fn target(lc: &str, pos: usize) -> Option<(Vec<u32>, Vec<Seg>, usize)> {
    let s = &lc[pos..];
    let b = s.as_bytes();
    let mut i = 0;
    let mut dotted = Vec::new();
    let mut rest = Vec::new();
    if b.first() == Some(&b'(') {
        // Compound citation: (7)(a)2
        while b.get(i) == Some(&b'(') {
            let close = s[i..].find(')')? + i;
            let inner = &s[i + 1..close];
            if let Ok(n) = inner.parse::<u32>() {
                if dotted.is_empty() {
                    dotted.push(n)
                } else {
                    rest.push(Seg::Num(n))
                }
            } else if inner.len() == 1 && inner.as_bytes()[0].is_ascii_lowercase() {
                if dotted.is_empty() {
                    return None;
                }
                rest.push(Seg::Letter((inner.as_bytes()[0] - b'a' + 1) as u32));
            } else {
                return None;
            }
            i = close + 1;
        }
        let n = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n > 0 {
            rest.push(Seg::Num(s[i..i + n].parse().ok()?));
            i += n;
        }
        return (!dotted.is_empty()).then_some((dotted, rest, pos + i));
    }
    loop {
        let n = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > 3 {
            return None;
        }
        dotted.push(s[i..i + n].parse().ok()?);
        i += n;
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
        } else {
            break;
        }
    }
    if let Some(&c) = b.get(i)
        && c.is_ascii_lowercase()
        && !b.get(i + 1).is_some_and(|d| d.is_ascii_alphanumeric())
    {
        rest.push(Seg::Letter((c - b'a' + 1) as u32));
        i += 1;
    }
    // "3rd", "10cm": a measurement, not a reference.
    if b.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    Some((dotted, rest, pos + i))
}

/// Targets listed after a keyword: "6e and 6f", "3, 4 or 5".
fn target_list(lc: &str, mut pos: usize, kind: Kind, out: &mut Vec<Ref>) {
    while let Some((dotted, rest, end)) = target(lc, pos) {
        out.push(Ref {
            kind,
            dotted,
            rest,
            at: (pos, end),
        });
        let tail = &lc[end..];
        let mut next = None;
        for sep in [" and ", " or ", ", ", " & ", " to "] {
            if tail.starts_with(sep) {
                next = Some(end + sep.len());
                break;
            }
        }
        match next {
            Some(n) => pos = n,
            None => break,
        }
    }
}

fn keyword(lc: &str, pos: usize) -> Option<(Kind, usize)> {
    let s = &lc[pos..];
    for (w, k) in [
        ("chapters ", Kind::Chapter),
        ("chapter ", Kind::Chapter),
        ("rules ", Kind::Rule),
        ("rule ", Kind::Rule),
        ("sections ", Kind::Section),
        ("section ", Kind::Section),
        ("paragraph ", Kind::Section),
        ("§", Kind::Section),
    ] {
        if s.starts_with(w) {
            let after = pos + w.len();
            return Some((
                k,
                after + (lc[after..].len() - lc[after..].trim_start().len()),
            ));
        }
    }
    None
}

/// A reference by topic: byte range in the line and its topic words.
type Vague = (usize, usize, Vec<String>);

fn refs_in(t: &str) -> (Vec<Ref>, Vec<Vague>) {
    let lc = t.to_ascii_lowercase();
    let mut refs = Vec::new();
    let mut vague = Vec::new();
    for cue in CUES {
        for at in find_words(&lc, cue) {
            let mut p = at + cue.len();
            for filler in ["the ", "also ", "both "] {
                if lc[p..].starts_with(filler) {
                    p += filler.len();
                }
            }
            if let Some((kind, tp)) = keyword(&lc, p) {
                if kind != Kind::Rule {
                    target_list(&lc, tp, kind, &mut refs);
                }
            } else if lc[p..].starts_with('(') {
                target_list(&lc, p, Kind::Section, &mut refs);
            } else if *cue == "see " {
                // "see later artillery rules": a topic, then a rule noun, no number.
                let words: Vec<(usize, &str)> = lc[p..]
                    .split_whitespace()
                    .take(5)
                    .scan(p, |_, w| {
                        Some((w.as_ptr() as usize - lc.as_ptr() as usize, w))
                    })
                    .collect();
                if let Some(k) = words.iter().position(|(_, w)| {
                    let w = w.trim_end_matches(|c: char| !c.is_alphanumeric());
                    matches!(
                        w,
                        "rule" | "rules" | "section" | "sections" | "chapter" | "paragraph"
                    )
                }) {
                    let next_is_number = words.get(k + 1).is_some_and(|(_, w)| {
                        w.starts_with(|c: char| c.is_ascii_digit() || c == '(')
                    });
                    if !next_is_number && k > 0 {
                        let topic: Vec<String> = words[..k]
                            .iter()
                            .map(|(_, w)| {
                                w.trim_matches(|c: char| !c.is_alphanumeric()).to_string()
                            })
                            .filter(|w| w.len() >= 3 && !STOP.contains(&w.as_str()))
                            .collect();
                        let (end_at, end_w) = words[k];
                        let end =
                            end_at + end_w.trim_end_matches(|c: char| !c.is_alphanumeric()).len();
                        if !topic.is_empty() {
                            vague.push((at, end, topic));
                        }
                    }
                }
            }
        }
    }
    // "rule 7" / "rules 6e and 6f" name a rule whether or not a cue precedes.
    for w in ["rules ", "rule "] {
        for at in find_words(&lc, w) {
            if at == 0
                || refs
                    .iter()
                    .any(|r| r.at.0 >= at && r.at.0 <= at + w.len() + 1)
            {
                continue;
            }
            target_list(&lc, at + w.len(), Kind::Rule, &mut refs);
        }
    }
    // Bare citations "(7)(a)2" in the middle of a sentence.
    let mut from = 0;
    while let Some(i) = lc.get(from..).and_then(|s| s.find(")(")).map(|i| i + from) {
        let open = lc[..i].rfind('(').unwrap_or(i);
        // At the very start of a line "(7)(a)" would be a heading mark.
        if open > 0
            && !refs.iter().any(|r| r.at.0 == open)
            && let Some((dotted, rest, end)) = target(&lc, open)
            && !rest.is_empty()
        {
            refs.push(Ref {
                kind: Kind::Section,
                dotted,
                rest,
                at: (open, end),
            });
        }
        from = i + 2;
    }
    refs.retain(|r| !inside_quotes(t, r.at.0));
    vague.retain(|v| !inside_quotes(t, v.0));
    (refs, vague)
}

const STOP: &[&str] = &[
    "the",
    "later",
    "earlier",
    "above",
    "below",
    "following",
    "previous",
    "relevant",
    "these",
    "those",
    "appropriate",
    "normal",
    "usual",
    "special",
    "other",
    "all",
    "and",
    "for",
    "under",
    "optional",
    "main",
    "basic",
];

fn show_path(r: &Ref, with_rest: usize, style: Option<Style>) -> String {
    let num = r
        .dotted
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(".");
    let mut s = match style {
        Some(Style::Paren) => format!("({num})"),
        Some(Style::Labeled(w)) => format!("{w} {num}"),
        _ => num,
    };
    for seg in r.rest.iter().take(with_rest) {
        match seg {
            Seg::Letter(v) => s.push_str(&format!("{})", crate::numbering::letter(*v, false))),
            Seg::Num(v) => s.push_str(&format!(" item {v}")),
        }
    }
    s
}

pub fn check(lines: &[Line<'_>], body: &Outline<'_>, skip: &dyn Fn(usize) -> bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let heading_words: Vec<String> = body
        .entries
        .iter()
        .filter(|e| e.role == Role::Heading)
        .map(|e| e.title.to_lowercase())
        .collect();
    for (i, l) in lines.iter().enumerate() {
        if skip(i) {
            continue;
        }
        if body
            .entry_at_line(i)
            .is_some_and(|e| body.entries[e].role == Role::Heading)
        {
            continue;
        }
        let t = l.text();
        let (refs, vague) = refs_in(t);
        for r in refs {
            let mut target = None;
            if let Some(f) = resolve(&r, i, body, l, t, &mut target) {
                out.push(f);
            } else if let Some(e) = target
                && let Some(f) = wrong_topic(&r, e, body, lines, i)
            {
                out.push(f);
            }
        }
        for (a, b, topic) in vague {
            let matched = topic.iter().any(|w| {
                let stem: String = w.chars().take(6).collect();
                heading_words.iter().any(|h| {
                    h.split(|c: char| !c.is_alphanumeric())
                        .any(|hw| hw.starts_with(&stem))
                })
            });
            if !matched {
                out.push(
                    Finding::advice(
                        codes::VAGUE_REFERENCE,
                        l.sub_span(a..b),
                        format!(
                            "reference \"{}\" names no number and no heading mentions \"{}\"",
                            clip(&t[a..b], 60),
                            topic.join(" ")
                        ),
                        "vague reference",
                    )
                    .with_help("Point at a numbered rule or a heading, or check that the rules it means were not left out."),
                );
            }
        }
    }
    out
}

fn resolve(
    r: &Ref,
    line: usize,
    body: &Outline<'_>,
    l: &Line<'_>,
    t: &str,
    target: &mut Option<usize>,
) -> Option<Finding> {
    let entries = &body.entries;
    let before = entries.iter().rposition(|e| e.line < line);
    // Within which chapter the reference sits: bare section numbers restart
    // in each chapter of books that number per chapter.
    let chapter_of = |idx: usize| -> Option<usize> {
        let mut anc = body.ancestors(idx);
        anc.push(idx);
        anc.into_iter().find(|&a| {
            matches!(
                entries[a].marker.as_ref().map(|m| m.style),
                Some(Style::Labeled("Chapter"))
            )
        })
    };
    let here = before.and_then(chapter_of);
    let (candidates, style): (Vec<usize>, Option<Style>) = match r.kind {
        Kind::Chapter => (
            entries
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    e.marker.as_ref().is_some_and(|m| {
                        m.style == Style::Labeled("Chapter") && r.dotted == [m.value]
                    })
                })
                .map(|(i, _)| i)
                .collect(),
            Some(Style::Labeled("Chapter")),
        ),
        Kind::Rule | Kind::Section => {
            let label = if r.kind == Kind::Rule {
                "Rule"
            } else {
                "Section"
            };
            let labeled: Vec<usize> = entries
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    e.marker
                        .as_ref()
                        .is_some_and(|m| m.style == Style::Labeled(label))
                })
                .map(|(i, _)| i)
                .collect();
            if r.dotted.len() > 1 {
                (
                    entries
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| {
                            e.marker.as_ref().is_some_and(|m| {
                                matches!(m.style, Style::Dotted(_)) && m.path == r.dotted
                            })
                        })
                        .map(|(i, _)| i)
                        .collect(),
                    None,
                )
            } else if !labeled.is_empty() {
                let v = r.dotted[0];
                (
                    labeled
                        .into_iter()
                        .filter(|&i| entries[i].marker.as_ref().is_some_and(|m| m.value == v))
                        .collect(),
                    Some(Style::Labeled(label)),
                )
            } else {
                // The outermost numbered heading style of the body.
                let primary = entries.iter().find_map(|e| {
                    e.marker
                        .as_ref()
                        .filter(|m| {
                            e.role == Role::Heading
                                && matches!(m.style, Style::Paren | Style::Dot | Style::Close)
                        })
                        .map(|m| m.style)
                });
                let Some(primary) = primary else {
                    // Nothing is numbered: a reference cannot be checked.
                    return None;
                };
                let v = r.dotted[0];
                (
                    entries
                        .iter()
                        .enumerate()
                        .filter(|(i, e)| {
                            e.role == Role::Heading
                                && e.marker
                                    .as_ref()
                                    .is_some_and(|m| m.style == primary && m.value == v)
                                && chapter_of(*i) == here
                        })
                        .map(|(i, _)| i)
                        .collect(),
                    Some(primary),
                )
            }
        }
    };
    let text = &t[r.at.0..r.at.1];
    let span = l.sub_span(r.at.0..r.at.1);
    if candidates.is_empty() {
        let what = show_path(r, 0, style);
        return Some(
            Finding::warning(
                codes::DANGLING_REFERENCE,
                span,
                format!("reference to \"{text}\" points at nothing: there is no {what}"),
                format!("no {what}"),
            )
            .with_help("Check the number: the target may be missing from the text, or the reference mistyped."),
        );
    }
    // Follow lettered / numbered items below each candidate.
    let mut found = candidates.clone();
    for (depth, seg) in r.rest.iter().enumerate() {
        let next: Vec<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                e.parent.is_some_and(|p| found.contains(&p))
                    && e.marker.as_ref().is_some_and(|m| match seg {
                        Seg::Letter(v) => {
                            matches!(m.style, Style::Lower | Style::Upper) && m.value == *v
                        }
                        Seg::Num(v) => {
                            !matches!(m.style, Style::Lower | Style::Upper) && m.value == *v
                        }
                    })
            })
            .map(|(i, _)| i)
            .collect();
        if next.is_empty() {
            let what = show_path(r, depth + 1, style);
            return Some(
                Finding::warning(
                    codes::DANGLING_REFERENCE,
                    span,
                    format!("reference to \"{text}\" points at nothing: there is no {what}"),
                    format!("no {what}"),
                )
                .with_help("Check the number: the target may be missing from the text, or the reference mistyped."),
            );
        }
        found = next;
    }
    if found.len() > 1 {
        let places: Vec<String> = found
            .iter()
            .map(|&i| {
                format!(
                    "\"{}\" (line {})",
                    entries[i].describe(),
                    entries[i].line + 1
                )
            })
            .collect();
        return Some(
            Finding::warning(
                codes::AMBIGUOUS_REFERENCE,
                span,
                format!(
                    "reference to \"{text}\" is ambiguous: it matches {}",
                    places.join(" and ")
                ),
                "ambiguous target",
            )
            .with_help(
                "Renumber the duplicated heading, then make the reference point at one of them.",
            ),
        );
    }
    *target = found.first().copied();
    None
}

/// Words too common in rules to tell topics apart.
const COMMON: &[&str] = &[
    "rules", "units", "player", "players", "turn", "turns", "table", "roll", "rolls", "game",
    "which", "there", "their", "these", "those", "other", "every", "where", "after", "before",
];

fn stems(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 5 && !COMMON.contains(&w.as_str()))
        .map(|w| w.chars().take(5).collect())
        .collect()
}

/// A chapter reference that resolves, to a chapter whose title and sub-headings
/// share no topic word with the sentence that cites it ("pending artillery ...
/// (see Chapter 7)" where Chapter 7 is about vehicles).
fn wrong_topic(
    r: &Ref,
    e: usize,
    body: &Outline<'_>,
    lines: &[Line<'_>],
    line: usize,
) -> Option<Finding> {
    if r.kind != Kind::Chapter || !r.rest.is_empty() {
        return None;
    }
    let l = &lines[line];
    let t = l.text();
    let entries = &body.entries;
    let chapters: Vec<usize> = (0..entries.len())
        .filter(|&k| {
            entries[k]
                .marker
                .as_ref()
                .is_some_and(|m| m.style == Style::Labeled("Chapter"))
        })
        .collect();
    let here = chapters.iter().copied().rfind(|&c| entries[c].line <= line);
    // A chapter's words: its text up to the next chapter, headings included.
    let words_of = |x: usize| -> Vec<String> {
        let from = entries[x].line;
        let to = chapters
            .iter()
            .map(|&c| entries[c].line)
            .find(|&c| c > from)
            .unwrap_or(lines.len());
        lines[from..to]
            .iter()
            .flat_map(|l| stems(l.text()))
            .collect()
    };
    let start = t[..r.at.0].rfind(". ").map_or(0, |p| p + 2);
    let end = t[r.at.1..].find(". ").map_or(t.len(), |p| r.at.1 + p);
    let said: Vec<String> = stems(&t[start..end])
        .into_iter()
        .filter(|w| !w.starts_with("chapt"))
        .collect();
    let topic = words_of(e);
    if said.is_empty() || topic.is_empty() || said.iter().any(|w| topic.contains(w)) {
        return None;
    }
    let words: Vec<&str> = t[start..end]
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| {
            let s: String = w.to_lowercase().chars().take(5).collect();
            w.chars().count() >= 5 && said.contains(&s)
        })
        .collect();
    // Only when another chapter does treat the topic: otherwise the words may
    // simply be too far from any heading to tell.
    let better = chapters
        .iter()
        .copied()
        .filter(|&k| k != e && Some(k) != here)
        .max_by_key(|&k| {
            let w = words_of(k);
            said.iter().filter(|s| w.contains(s)).count()
        })
        .filter(|&k| said.iter().any(|s| words_of(k).contains(s)))?;
    let hint = format!(" \"{}\" may be the one meant.", entries[better].describe());
    Some(
        Finding::advice(
            codes::WRONG_TOPIC,
            l.sub_span(r.at.0..r.at.1),
            format!(
                "reference to {} (\"{}\") may point at the wrong topic: the sentence is about {}, which that chapter never mentions",
                entries[e].marker.as_ref().map_or(String::new(), |m| m.show()),
                clip(entries[e].short_title(), 50),
                words.join(", ")
            ),
            "topic differs",
        )
        .with_help(format!("Check the chapter number.{hint}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{headings, lines};

    fn run(text: &str) -> Vec<Finding> {
        let lines = lines::split(text);
        let body = headings::outline(&lines, &|_| false);
        check(&lines, &body, &|_| false)
    }

    /// The text of every finding with `code`.
    fn found<'t>(text: &'t str, code: &str) -> Vec<&'t str> {
        run(text)
            .iter()
            .filter(|f| f.code == code)
            .map(|f| &text[f.span.clone()])
            .collect()
    }

    const BOOK: &str = "(5) Move\n\na) Go. Move on (see rules 6e and 6f).\n\nb) Leave. Only where allowed (see rule 7).\n\n(7) Fire\n\na) Aim. Roll.\n\n1. Count.\n2. Roll.\n\n(7) Scenarios\n\na) Setup. As set (7)(a)2 says.\n\n1. Place.\n2. Deploy.\n";

    #[test]
    fn dangling_letter_references() {
        assert_eq!(found(BOOK, codes::DANGLING_REFERENCE), vec!["6e", "6f"]);
    }

    #[test]
    fn reference_to_duplicated_number_is_ambiguous() {
        assert_eq!(
            found(BOOK, codes::AMBIGUOUS_REFERENCE),
            vec!["7", "(7)(a)2"]
        );
    }

    #[test]
    fn chapters_resolve_and_dangle() {
        let text = "Chapter 1: A\n\nFire (see Chapter 2) and (see Chapter 13).\n\nChapter 2: B\n";
        let f = run(text);
        assert_eq!(f.len(), 1);
        assert_eq!(&text[f[0].span.clone()], "13");
    }

    #[test]
    fn vague_reference_checked_against_headings() {
        let ok = "Intro\n\nThe barrage goes on (see later artillery rules).\n\nArtillery Support\n\nText.\n";
        assert!(run(ok).is_empty());
        let bad =
            "Intro\n\nThe barrage goes on (see later artillery rules).\n\nMovement\n\nText.\n";
        let f = run(bad);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, crate::Severity::Advice);
        assert_eq!(&bad[f[0].span.clone()], "see later artillery rules");
    }

    #[test]
    fn chapter_reference_to_another_topic_is_advice() {
        let text = "Chapter 1: Turns\n\nAdvance pending artillery countdowns (see Chapter 2). Tanks crush wire (see Chapter 2).\n\nChapter 2: Vehicles & Armor\n\n1. Armor Classes\n\nText.\n\nChapter 3: Artillery Support\n\nText.\n";
        let f = run(text);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, codes::WRONG_TOPIC);
        assert_eq!(f[0].severity, crate::Severity::Advice);
        assert!(
            f[0].message.contains("artillery, countdowns"),
            "{}",
            f[0].message
        );
        assert!(f[0].help.as_deref().unwrap().contains("Chapter 3"));
    }

    #[test]
    fn citation_after_multibyte_bullet() {
        let text = "(7) A\n\nx.\n\n• roll (7)(a)2.\n";
        let f = run(text);
        assert_eq!(f.len(), 1);
        assert_eq!(&text[f[0].span.clone()], "(7)(a)2");
        assert!(
            f[0].message.contains("there is no (7)a)"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn quoted_mentions_and_measurements_are_not_references() {
        let text =
            "(1) A\n\nThe note refers to \"rules 6e and 6f\" as printed. Move 10cm (see rule 1).\n";
        assert!(run(text).is_empty(), "{:#?}", run(text));
    }
}
