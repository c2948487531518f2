//! Structure and cross-reference audit of plain-text rulebooks.
//!
//! `audit` reads a rulebook as plain text (any book: nothing here knows a
//! particular title) and reports what a translator or editor should check:
//! broken numbering, a table of contents that disagrees with the body,
//! references to nothing, lead-ins with nothing after them, hollow tables,
//! marks of illegible or missing source text, names used and never defined
//! or spelled two ways, figures that contradict a stated scale, rule areas the
//! text relies on and lacks, and the damage a conversion to plain text leaves.

pub mod against;
mod content;
mod conversion;
mod finding;
mod headings;
mod leadins;
mod lines;
mod marks;
mod names;
mod numbering;
mod numbers;
mod references;
mod tables;
mod toc;

pub use finding::{Finding, Severity, codes};

/// Audits one rulebook. Findings are sorted by where they start in `text`.
pub fn audit(text: &str) -> Vec<Finding> {
    let lines = lines::split(text);
    let toc = toc::find(&lines);
    let toc_lines = toc.as_ref().map_or(0..0, |t| t.lines.clone());
    let in_toc = |i: usize| toc_lines.contains(&i);
    let body = headings::outline(&lines, &in_toc);

    let mut out = body.findings.clone();
    if let Some(toc) = &toc {
        out.extend(toc.outline.findings.iter().cloned());
        out.extend(toc::compare(toc, &body, &lines));
    }
    out.extend(headings::repeated_headings(&lines));
    out.extend(references::check(&lines, &body, &in_toc));
    let leadins = leadins::check(&lines, &body, &in_toc);
    let lead_in_lines: Vec<usize> = leadins
        .iter()
        .map(|f| line_of(&lines, f.span.start))
        .collect();
    out.extend(leadins);
    out.extend(tables::check(&lines));
    out.extend(marks::editorial(&lines));
    out.extend(marks::footnotes(&lines));

    let (flattened, regions) = conversion::flattened_tables(&lines);
    let in_table = |i: usize| regions.iter().any(|r| r.contains(&i));
    let skip = |i: usize| in_toc(i) || in_table(i);
    out.extend(flattened);
    out.extend(conversion::doubled_words(&lines));
    out.extend(conversion::unbalanced(&lines));
    out.extend(conversion::stray_symbols(&lines));
    out.extend(conversion::markup(&lines));
    out.extend(conversion::chat(&lines));
    out.extend(conversion::run_in_lists(&lines));
    out.extend(conversion::run_in_headings(&lines, &skip));
    out.extend(conversion::truncated_end(&lines));
    out.extend(content::not_reproduced(&lines, &body, &skip));
    out.extend(content::empty_headings(&lines, &body, &in_toc, &regions));
    out.extend(content::rolls_without_target(&lines, &skip));
    out.extend(content::missing_areas(text, &lines, &body, &skip));
    out.extend(names::undefined_names(&lines, &body, &skip, &|i| {
        lead_in_lines.contains(&i)
    }));
    out.extend(names::variants(&lines, &in_toc));
    out.extend(numbers::conversions(&lines));
    out.sort_by(|a, b| (a.span.start, a.span.end, a.code).cmp(&(b.span.start, b.span.end, b.code)));
    out
}

/// Index of the line holding byte `at`.
fn line_of(lines: &[lines::Line<'_>], at: usize) -> usize {
    lines.partition_point(|l| l.start <= at).saturating_sub(1)
}

/// Number of findings per code, sorted by code.
pub fn summary(findings: &[Finding]) -> Vec<(&'static str, usize)> {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for f in findings {
        match counts.iter_mut().find(|(c, _)| *c == f.code) {
            Some((_, n)) => *n += 1,
            None => counts.push((f.code, 1)),
        }
    }
    counts.sort();
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_inputs_do_not_panic_and_spans_are_on_char_boundaries() {
        let odd = [
            "",
            "(",
            ")",
            "Chapter",
            "Chapter ",
            "| |",
            "|",
            "||\n|",
            "*",
            "**\n*",
            "[",
            "[illegible",
            "see rule",
            "see rules 6e and",
            "(1)(",
            "(1)(a",
            "1.",
            "1. ",
            "a)",
            "Contents\n",
            "Contents\n\nContents",
            ":",
            "é:\n(ü) ö",
            "Table of Contents\n• (1) Ä\n• (1) Ä\n(1) Ä",
            "see later ünïcode rules",
            "4.1.\n4.1. X",
            "Chapter IV: X\nChapter IV: Y",
            "(7)(a)2 see (9)(z)",
            "\r\n\r\n",
            "“see rule 3”",
            "Step 1:\n\nStep 3:",
            "rule 99999999999",
            "5\u{a0}\u{a0}4*",
            "| \u{a0}* |",
            "\u{2003}see rules 1a\u{a0}and 2",
            "see chapter 99999999999999999999",
            "9999. A\n\n1. B",
        ];
        for text in odd {
            for f in audit(text) {
                assert!(
                    f.span.start <= f.span.end && f.span.end <= text.len(),
                    "{text:?}: {f:?}"
                );
                assert!(
                    text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end),
                    "{text:?}: {f:?}"
                );
            }
        }
    }

    #[test]
    fn findings_are_sorted_and_summarised() {
        let text = "(1) A\n\nx (see rule 4).\n\n(3) C\n\n| a | |\n";
        let f = audit(text);
        assert!(f.windows(2).all(|w| w[0].span.start <= w[1].span.start));
        let s = summary(&f);
        assert!(s.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(s.iter().map(|(_, n)| n).sum::<usize>(), f.len());
    }

    #[test]
    fn serialises_to_json_shape() {
        fn is_serialize<T: serde::Serialize>(_: &T) {}
        let f = audit("(1) A\n\n(3) B\n");
        is_serialize(&f);
    }
}
