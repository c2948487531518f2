//! Editorial marks that admit missing or illegible text ("[illegible]",
//! "[one word illegible on the scan]", "[... hard to read ...]") and values
//! marked with footnote asterisks whose footnote is gone.

use crate::finding::{Finding, codes};
use crate::headings::clip;
use crate::lines::{self, Line};

const ILLEGIBLE: &[&str] = &[
    "illegible",
    "unreadable",
    "hard to read",
    "difficult to read",
    "not legible",
    "cannot be read",
    "can't be read",
    "smudged",
    "obscured",
];

/// Statements, anywhere, that values of the source are missing.
const MISSING_VALUES: &[&str] = &[
    "no numerical values",
    "values are missing",
    "values are not given",
    "values were not printed",
];

const OMITTED: &[&str] = &[
    "not reproduced",
    "omitted",
    "is missing",
    "are missing",
    "text missing",
    "missing text",
    "cut off",
];

/// Bracketed (or parenthesised) notes on one line, as byte ranges of `t`
/// including the brackets.
fn bracketed(t: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (open, close) in [('[', ']'), ('(', ')')] {
        let mut from = 0;
        while let Some(a) = t[from..].find(open).map(|i| i + from) {
            let Some(b) = t[a + 1..].find(close).map(|i| i + a + 1) else {
                break;
            };
            out.push((a, b + 1));
            from = b + 1;
        }
    }
    out
}

pub fn editorial(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in lines {
        let t = l.text();
        let lc = t.to_lowercase();
        if let Some((at, k)) = MISSING_VALUES
            .iter()
            .find_map(|k| lc.find(k).map(|at| (at, *k)))
            && !t[..at].contains('[')
            && t.is_char_boundary(at)
            && t.is_char_boundary(at + k.len())
        {
            out.push(
                Finding::warning(
                    codes::OMISSION_MARK,
                    l.sub_span(at..at + k.len()),
                    format!("a note says values of the source are missing: {}", clip(t, 90)),
                    "values missing",
                )
                .with_help("Find the values in another copy, or mark them unknown (`?`) where they are used."),
            );
        }
        for (a, b) in bracketed(t) {
            let inner = t[a + 1..b - 1].to_lowercase();
            let square = t[a..].starts_with('[');
            let bare_gap = square && matches!(inner.trim(), "..." | "…" | "?" | "???" | "sic?");
            let hit = ILLEGIBLE.iter().find(|k| inner.contains(*k));
            // Parentheses are ordinary prose; only a terse "(illegible)" there
            // is an editorial mark.
            let hit = hit.filter(|_| square || inner.split_whitespace().count() <= 3);
            let mark = &t[a..b];
            if let Some(k) = hit {
                out.push(
                    Finding::warning(
                        codes::ILLEGIBLE_MARK,
                        l.sub_span(a..b),
                        format!("editorial mark: text is illegible in the source ({k}): {}", clip(mark, 90)),
                        format!("marked {k}"),
                    )
                    .with_help("Check this passage against the original or another copy before relying on it."),
                );
            } else if square && (bare_gap || OMITTED.iter().any(|k| inner.contains(k))) {
                out.push(
                    Finding::warning(
                        codes::OMISSION_MARK,
                        l.sub_span(a..b),
                        format!("editorial mark: content of the source is missing here: {}", clip(mark, 90)),
                        "content not reproduced",
                    )
                    .with_help("Restore the missing content (figure, table or text) or describe it in words."),
                );
            }
        }
    }
    out
}

/// A line like "*The commander ..." or "** Hits also ...": the footnote for
/// values marked with that many asterisks. A lone "* item" between other
/// "* " lines is a bullet list, not a footnote.
fn definition(lines: &[Line<'_>], i: usize) -> Option<usize> {
    let t = lines[i].text();
    let k = t.bytes().take_while(|&b| b == b'*').count();
    if k == 0 || k > 3 {
        return None;
    }
    let rest = &t[k..];
    if !rest.chars().any(char::is_alphabetic) {
        return None;
    }
    if rest.starts_with(' ') {
        let bulleted = |j: Option<usize>| j.is_some_and(|j| lines[j].text().starts_with("* "));
        if bulleted(lines::prev_non_blank(lines, i)) || bulleted(lines::next_non_blank(lines, i)) {
            return None;
        }
    }
    Some(k)
}

struct Mark {
    stars: usize,
    span: std::ops::Range<usize>,
    token: String,
}

fn marks_on(l: &Line<'_>) -> Vec<Mark> {
    let t = l.text();
    let mut out = Vec::new();
    let bytes = t.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'*' {
            i += 1;
            continue;
        }
        let a = i;
        while i < bytes.len() && bytes[i] == b'*' {
            i += 1;
        }
        let b = i;
        let stars = b - a;
        let prev = t[..a].chars().next_back();
        let next = t[b..].chars().next();
        let alone = t.trim_matches(|c: char| c == '|' || c.is_whitespace()) == &t[a..b];
        let in_cell = prev.is_some_and(|p| p.is_whitespace() || p == '|')
            && next.is_none_or(|n| n.is_whitespace() || n == '|')
            && t.starts_with('|');
        // A mark hangs off the end of a value ("6/2**", "15cm*"); a run between
        // spaces is an inline bullet and a run before a word is emphasis.
        let suffix = prev.is_some_and(|p| p.is_alphanumeric() || ")]\"'%".contains(p))
            && next.is_none_or(|n| !n.is_alphanumeric());
        // "60* arc": the asterisk stands for a degree sign.
        let degree = prev.is_some_and(|p| p.is_ascii_digit()) && {
            let after = t[b..].trim_start().to_lowercase();
            ["arc", "angle", "degree", "cone", "field of fire"]
                .iter()
                .any(|w| after.starts_with(w))
        };
        if stars <= 3 && !degree && (alone || suffix || in_cell) {
            let tok_start = t[..a]
                .char_indices()
                .rev()
                .find(|&(_, c)| c.is_whitespace() || c == '|')
                .map_or(0, |(p, c)| p + c.len_utf8());
            let tok_end = t[b..]
                .find(|c: char| c.is_whitespace() || c == '|')
                .map_or(t.len(), |p| p + b);
            out.push(Mark {
                stars,
                span: l.sub_span(a..b),
                token: t[tok_start..tok_end].to_string(),
            });
        }
    }
    out
}

pub fn footnotes(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut defs: Vec<(usize, usize)> = Vec::new();
    let mut marks = Vec::new();
    for i in 0..lines.len() {
        if let Some(k) = definition(lines, i) {
            defs.push((k, i));
        } else {
            marks.extend(marks_on(&lines[i]));
        }
    }
    let mut out = Vec::new();
    for m in &marks {
        if !defs.iter().any(|&(k, _)| k == m.stars) {
            let stars = "*".repeat(m.stars);
            out.push(
                Finding::warning(
                    codes::FOOTNOTE_MISSING,
                    m.span.clone(),
                    format!(
                        "value \"{}\" is marked {stars} but no footnote line starts with {stars}",
                        clip(&m.token, 40)
                    ),
                    format!("footnote mark {stars}"),
                )
                .with_help("Restore the footnote, or remove the mark if it is a typing error."),
            );
        }
    }
    for &(k, i) in &defs {
        if !marks.iter().any(|m| m.stars == k) {
            let l = &lines[i];
            out.push(
                Finding::advice(
                    codes::FOOTNOTE_UNUSED,
                    l.text_span(),
                    format!(
                        "footnote \"{}\" has no value marked {}",
                        clip(l.text(), 60),
                        "*".repeat(k)
                    ),
                    "footnote without a mark",
                )
                .with_help(
                    "The marked value may have been lost (e.g. from a table); check the source.",
                ),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn illegible_and_missing_marks() {
        let text = "Win with one [one word illegible on the scan] hex.\nIt reads \"38\" [the second digit is hard to read].\n[The diagram is not reproduced here.]\nNormal (see rule 3) text [sic].\n• The scan shows no numerical values for bunkers.\n";
        let f = editorial(&lines::split(text));
        let codes: Vec<_> = f.iter().map(|f| f.code).collect();
        assert_eq!(
            codes,
            vec![
                codes::ILLEGIBLE_MARK,
                codes::ILLEGIBLE_MARK,
                codes::OMISSION_MARK,
                codes::OMISSION_MARK
            ]
        );
        assert_eq!(&text[f[0].span.clone()], "[one word illegible on the scan]");
    }

    #[test]
    fn footnote_marks_match_definitions() {
        let ok = "COH\n*\nDAM\n6/2**\n*No rating needed.\n**Splash damage.\n";
        assert!(footnotes(&lines::split(ok)).is_empty());
        let bad =
            "| Gun | 4* |\nRange 12**\n*Only at night.\nA *bold* word and * bullet, a 60* arc\n";
        let f = footnotes(&lines::split(bad));
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, codes::FOOTNOTE_MISSING);
        assert!(f[0].message.contains("12**"));
    }

    #[test]
    fn unused_footnote_is_advice() {
        let f = footnotes(&lines::split(
            "| a | b |\n* Vehicle flamethrowers only to 15cm\nNext\n",
        ));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, codes::FOOTNOTE_UNUSED);
    }
}
