//! Finds a table of contents ("Table of Contents" / "Contents" followed by a
//! list of entries) and compares it with the headings of the body.

use crate::finding::{Finding, codes};
use crate::headings::{self, Builder, Outline, Role, clip};
use crate::lines::{self, Line};
use crate::numbering;
use std::ops::Range;

pub struct Toc<'a> {
    /// Lines that belong to the contents block (heading, repeats, entries).
    pub lines: Range<usize>,
    pub outline: Outline<'a>,
}

fn is_contents_heading(t: &str) -> bool {
    let n = t.trim_end_matches(':').trim().to_lowercase();
    n == "table of contents" || n == "contents"
}

/// Entry text without bullet, dot leaders and page number.
fn entry_text(t: &str) -> &str {
    let t = lines::bullet_body(t).unwrap_or(t);
    let trimmed = t.trim_end_matches(|c: char| c.is_ascii_digit());
    let trimmed = if trimmed.len() < t.len() && trimmed.ends_with([' ', '.', '…', '\t']) {
        trimmed
    } else {
        t
    };
    trimmed
        .trim_end_matches(|c: char| c == '.' || c == '…' || c.is_whitespace())
        .trim()
}

pub fn norm(t: &str) -> String {
    t.chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn find<'a>(lines: &[Line<'a>]) -> Option<Toc<'a>> {
    let head = lines.iter().position(|l| is_contents_heading(l.text()))?;
    let mut i = head + 1;
    // Skip blank lines and repeats of the heading itself.
    while i < lines.len() && (lines[i].is_blank() || is_contents_heading(lines[i].text())) {
        i += 1;
    }
    let first = i;
    let mut entries: Vec<usize> = Vec::new();
    let mut first_norm = String::new();
    while i < lines.len() {
        let t = lines[i].text();
        if t.is_empty() {
            i += 1;
            continue;
        }
        let e = entry_text(t);
        let n = norm(e);
        // The body starts when the first entry's heading appears again.
        if !entries.is_empty() && n == first_norm {
            break;
        }
        let entry_like = !e.is_empty() && e.len() <= 100 && !e.ends_with(['.', ';', ',']);
        if !entry_like {
            break;
        }
        if entries.is_empty() {
            first_norm = n;
        }
        entries.push(i);
        i += 1;
    }
    if entries.len() < 2 {
        return None;
    }
    let end = entries.last().map_or(first, |&e| e + 1);
    let mut b = Builder::new(true);
    for &j in &entries {
        let l = &lines[j];
        let e = entry_text(l.text());
        match numbering::parse(e) {
            Some(m) => {
                // Re-anchor the mark to the entry text so spans stay exact.
                let shifted = Line {
                    idx: l.idx,
                    start: l.text_start() + (e.as_ptr() as usize - l.text().as_ptr() as usize),
                    raw: e,
                };
                b.numbered(&shifted, m, Role::Heading);
            }
            None => b.plain(j, e),
        }
    }
    Some(Toc {
        lines: head..end,
        outline: b.outline,
    })
}

fn titles_match(a: &str, b: &str) -> bool {
    let (a, b) = (norm(a), norm(b));
    !a.is_empty()
        && !b.is_empty()
        && (a == b || a.starts_with(&format!("{b} ")) || b.starts_with(&format!("{a} ")))
}

/// Contents entries without a body heading, body headings the contents leave
/// out, and entries whose number differs from the body's.
pub fn compare(toc: &Toc<'_>, body: &Outline<'_>, lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    let span_of = |line: usize| {
        let l = &lines[line];
        let e = entry_text(l.text());
        let s = l.text_start() + (e.as_ptr() as usize - l.text().as_ptr() as usize);
        s..s + e.len()
    };
    for te in &toc.outline.entries {
        let by_title: Vec<&headings::Entry<'_>> = body
            .entries
            .iter()
            .filter(|be| {
                titles_match(be.title, te.title) || titles_match(be.short_title(), te.title)
            })
            .collect();
        let plain_line = || {
            lines
                .iter()
                .skip(toc.lines.end)
                .any(|l| titles_match(l.text(), te.title))
        };
        match &te.marker {
            None => {
                if by_title.is_empty() && !plain_line() {
                    out.push(missing_in_body(span_of(te.line), &te.describe()));
                }
            }
            Some(tm) => {
                if by_title.is_empty() {
                    out.push(missing_in_body(span_of(te.line), &te.describe()));
                } else if !by_title
                    .iter()
                    .any(|be| be.marker.as_ref().is_some_and(|bm| bm.path == tm.path))
                {
                    let be = by_title[0];
                    let shown = be
                        .marker
                        .as_ref()
                        .map_or("no number".to_string(), |m| m.show());
                    out.push(
                        Finding::warning(
                            codes::TOC_NUMBER_MISMATCH,
                            span_of(te.line),
                            format!(
                                "contents list \"{}\" as {} but the body numbers it {} (line {})",
                                clip(te.title, 48),
                                tm.show(),
                                shown,
                                be.line + 1
                            ),
                            "numbered differently in the body",
                        )
                        .with_help("Make the contents and the heading agree."),
                    );
                }
            }
        }
    }
    // Body headings of the style the contents use at their top level.
    let top_style = toc
        .outline
        .entries
        .iter()
        .find(|e| e.parent.is_none())
        .and_then(|e| e.marker.as_ref())
        .map(|m| m.style);
    if let Some(style) = top_style {
        for be in &body.entries {
            let Some(bm) = &be.marker else { continue };
            if bm.style != style || be.role != Role::Heading {
                continue;
            }
            let listed = toc.outline.entries.iter().any(|te| {
                titles_match(te.title, be.title) || titles_match(te.title, be.short_title())
            });
            if !listed {
                let l = &lines[be.line];
                out.push(
                    Finding::warning(
                        codes::TOC_MISSING_IN_CONTENTS,
                        l.text_span(),
                        format!("heading \"{}\" (line {}) is not listed in the table of contents", clip(l.text(), 60), be.line + 1),
                        "not in the contents",
                    )
                    .with_help("Add it to the contents, or check whether the heading is misnumbered or misspelt."),
                );
            }
        }
    }
    out
}

fn missing_in_body(span: Range<usize>, what: &str) -> Finding {
    Finding::warning(
        codes::TOC_MISSING_IN_BODY,
        span,
        format!("contents entry \"{what}\" has no matching heading in the body"),
        "not found in the body",
    )
    .with_help("Check the heading's wording and number in the body, or remove the entry.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Vec<Finding> {
        let lines = lines::split(text);
        let toc = find(&lines).expect("toc");
        let r = toc.lines.clone();
        let body = headings::outline(&lines, &|i| r.contains(&i));
        let mut f = toc.outline.findings.clone();
        f.extend(compare(&toc, &body, &lines));
        f
    }

    #[test]
    fn contents_agreeing_with_body_is_silent() {
        let text =
            "Contents\n\n• (1) Start\n• (2) End ..... 4\n\n(1) Start\n\nx.\n\n(2) End\n\nx.\n";
        assert!(check(text).is_empty(), "{:#?}", check(text));
    }

    #[test]
    fn entry_missing_in_body_and_heading_missing_in_contents() {
        let text =
            "Table of Contents\n\n(1) Start\n(2) Middle\n\n(1) Start\n\nx.\n\n(3) End\n\nx.\n";
        let f = check(text);
        let codes: Vec<_> = f.iter().map(|f| f.code).collect();
        assert!(codes.contains(&codes::TOC_MISSING_IN_BODY), "{codes:?}");
        assert!(codes.contains(&codes::TOC_MISSING_IN_CONTENTS), "{codes:?}");
        let missing = f
            .iter()
            .find(|f| f.code == codes::TOC_MISSING_IN_BODY)
            .unwrap();
        assert_eq!(&text[missing.span.clone()], "(2) Middle");
    }

    #[test]
    fn different_numbering() {
        let text = "Contents\n\n• (1) Start\n• (2) End\n\n(1) Start\n\nx.\n\n(3) End\n\nx.\n";
        let f = check(text);
        assert!(
            f.iter().any(|f| f.code == codes::TOC_NUMBER_MISMATCH),
            "{f:#?}"
        );
    }

    #[test]
    fn duplicate_inside_contents() {
        let text = "Contents\n\n• (1) Start\n• (2) Mid\n• (2) End\n\n(1) Start\n\nx.\n";
        let f = check(text);
        assert!(f.iter().any(
            |f| f.code == codes::NUMBERING_DUPLICATE && f.message.contains("table of contents")
        ));
    }
}
