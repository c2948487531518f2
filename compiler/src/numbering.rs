//! Numbering and cross-reference checks over the section tree: gaps, duplicates, numbers out
//! of order, references to rules that were never printed or were printed twice.

use crate::diagnostic::{Code, Diagnostic};
use crate::ir::SectionId;
use crate::lower::Lowerer;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Int(i64),
    Letter(u8),
}

fn classify(s: &str) -> Option<Num> {
    if let Ok(n) = s.parse::<i64>() {
        return Some(Num::Int(n));
    }
    let b = s.as_bytes();
    if b.len() == 1 && b[0].is_ascii_alphabetic() {
        return Some(Num::Letter(b[0].to_ascii_lowercase()));
    }
    None
}

fn show(n: Num, like: &str) -> String {
    match n {
        Num::Int(i) => i.to_string(),
        Num::Letter(c) => {
            let c = c as char;
            if like.chars().all(|x| x.is_ascii_uppercase()) {
                c.to_ascii_uppercase().to_string()
            } else {
                c.to_string()
            }
        }
    }
}

fn kind_word(n: Num) -> &'static str {
    match n {
        Num::Int(_) => "number",
        Num::Letter(_) => "letter",
    }
}

/// Split a reference into path segments: `6e` → `6.e`, `5c3` → `5.c.3`, `7.a.2` stays.
pub fn split_reference(r: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in r.split('.') {
        let mut cur = String::new();
        let mut prev_digit: Option<bool> = None;
        for ch in part.chars() {
            let d = ch.is_ascii_digit();
            if prev_digit.is_some_and(|p| p != d) && !cur.is_empty() {
                // Roman numerals and words stay whole; only digit/letter boundaries split.
                out.push(std::mem::take(&mut cur));
            }
            cur.push(ch);
            prev_digit = Some(d);
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out
}

fn same_segment(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

pub(crate) fn check(lw: &mut Lowerer) {
    let n = lw.program.sections.len();
    // Children of each parent (None = top level), in book order.
    let mut groups: Vec<(Option<SectionId>, Vec<SectionId>)> = Vec::new();
    for i in 0..n {
        let parent = lw.program.sections[i].parent;
        match groups.iter_mut().find(|(p, _)| *p == parent) {
            Some((_, v)) => v.push(i as SectionId),
            None => groups.push((parent, vec![i as SectionId])),
        }
    }
    for (parent, children) in &groups {
        check_group(lw, *parent, children);
    }
    check_references(lw);
}

fn check_group(lw: &mut Lowerer, parent: Option<SectionId>, children: &[SectionId]) {
    // Within one file the order is the book's; across files it is only the order the files
    // were read in, so there the numbers are checked in sorted order (gaps and duplicates still
    // show, order cannot).
    let mut sorted;
    let spans_files = children
        .windows(2)
        .any(|w| lw.section_sites[w[0] as usize].0 != lw.section_sites[w[1] as usize].0);
    let children = if spans_files {
        sorted = children.to_vec();
        sorted.sort_by_key(|c| {
            let s = &lw.program.sections[*c as usize];
            match s.path.last().and_then(|l| classify(l)) {
                Some(Num::Int(i)) => (0, i, 0u8),
                Some(Num::Letter(b)) => (1, 0, b),
                None => (2, 0, 0),
            }
        });
        &sorted[..]
    } else {
        children
    };
    let where_ = parent.map_or("at the top level".to_string(), |p| {
        format!("in {}", lw.program.sections[p as usize].label())
    });
    let mut prev: Option<(Num, SectionId)> = None;
    let mut seen: Vec<(Num, SectionId)> = Vec::new();
    for &c in children {
        let s = &lw.program.sections[c as usize];
        let Some(last) = s.path.last().cloned() else {
            continue;
        };
        if s.path.len()
            != lw
                .program
                .sections
                .get(parent.map_or(usize::MAX, |p| p as usize))
                .map_or(0, |p| p.path.len())
                + 1
        {
            // Unnumbered under a numbered parent: nothing to check.
            continue;
        }
        let Some(num) = classify(&last) else { continue };
        let (file, span) = lw.section_sites[c as usize];
        if let Some(&(_, first)) = seen.iter().find(|(x, _)| *x == num) {
            let (ff, fs) = lw.section_sites[first as usize];
            let title = s.title.clone().unwrap_or_default();
            lw.diags.push(
                Diagnostic::new(
                    Code::LintDuplicateNumber,
                    file,
                    span,
                    format!(
                        "{} {} is used twice {where_} (\"{}\" and \"{}\")",
                        kind_word(num),
                        last,
                        lw.program.sections[first as usize]
                            .title
                            .clone()
                            .unwrap_or_default(),
                        title
                    ),
                )
                .label("second use of this number")
                .related(ff, fs, "first use")
                .help("this is how the book prints it; references to this number are ambiguous"),
            );
            prev = Some((num, c));
            continue;
        }
        let expected_first = match num {
            Num::Int(_) => Num::Int(1),
            Num::Letter(_) => Num::Letter(b'a'),
        };
        let same_kind = |a: Num, b: Num| {
            matches!(
                (a, b),
                (Num::Int(_), Num::Int(_)) | (Num::Letter(_), Num::Letter(_))
            )
        };
        let before = match prev {
            Some((p, _)) if same_kind(p, num) => Some(p),
            Some(_) => None,
            None => None,
        };
        let missing: Vec<String> = match (before, num) {
            (Some(Num::Int(p)), Num::Int(x)) if x > p.saturating_add(1) => {
                ((p + 1)..x).take(20).map(|i| i.to_string()).collect()
            }
            (Some(Num::Letter(p)), Num::Letter(x)) if x > p + 1 => {
                ((p + 1)..x).map(|c| show(Num::Letter(c), &last)).collect()
            }
            (None, Num::Int(x)) if prev.is_none() && x > 1 => {
                (1..x).take(20).map(|i| i.to_string()).collect()
            }
            (None, Num::Letter(x)) if prev.is_none() && x > b'a' => {
                (b'a'..x).map(|c| show(Num::Letter(c), &last)).collect()
            }
            _ => Vec::new(),
        };
        if !missing.is_empty() {
            let after = before.map_or(String::new(), |b| {
                format!(" between {} and {}", show(b, &last), last)
            });
            let msg = if missing.len() == 1 {
                format!(
                    "{} {} is missing {where_}{after}",
                    kind_word(num),
                    missing[0]
                )
            } else {
                format!(
                    "{}s {} are missing {where_}{after}",
                    kind_word(num),
                    missing.join(", ")
                )
            };
            let mut d = Diagnostic::new(Code::LintNumberingGap, file, span, msg)
                .label(format!("numbering jumps to {last}"))
                .help("keep the book's numbering as printed; this reports a gap in the book (or a section not yet encoded)");
            if let Some((_, pc)) = prev {
                let (pf, ps) = lw.section_sites[pc as usize];
                d = d.related(pf, ps, "previous number");
            }
            lw.diags.push(d);
        } else if let Some(b) = before {
            let out_of_order = match (b, num) {
                (Num::Int(p), Num::Int(x)) => x < p,
                (Num::Letter(p), Num::Letter(x)) => x < p,
                _ => false,
            };
            if out_of_order {
                lw.diags.push(
                    Diagnostic::new(
                        Code::LintNumberingOrder,
                        file,
                        span,
                        format!(
                            "{} {} comes after {} {where_}",
                            kind_word(num),
                            last,
                            show(b, &last)
                        ),
                    )
                    .label("out of order")
                    .help("the book prints these numbers out of order; keep them as printed"),
                );
            }
        }
        let _ = expected_first;
        seen.push((num, c));
        prev = Some((num, c));
    }
}

fn check_references(lw: &mut Lowerer) {
    let refs = std::mem::take(&mut lw.refs);
    for (file, r) in &refs {
        let matches: Vec<SectionId> = if r.quoted {
            lw.program
                .sections
                .iter()
                .enumerate()
                .filter(|(_, s)| {
                    s.title
                        .as_deref()
                        .is_some_and(|t| t.eq_ignore_ascii_case(&r.text))
                })
                .map(|(i, _)| i as SectionId)
                .collect()
        } else {
            let segs = split_reference(&r.text);
            lw.program
                .sections
                .iter()
                .enumerate()
                .filter(|(_, s)| {
                    s.path.len() == segs.len()
                        && s.path.iter().zip(&segs).all(|(a, b)| same_segment(a, b))
                })
                .map(|(i, _)| i as SectionId)
                .collect()
        };
        match matches.len() {
            0 => {
                let shown = if r.quoted {
                    format!("\"{}\"", r.text)
                } else {
                    split_reference(&r.text).join(".")
                };
                lw.diags.push(
                    Diagnostic::new(Code::LintDanglingReference, *file, r.span, format!("reference to {shown}, which does not exist"))
                        .label("points at nothing")
                        .help("the book cites a rule that is not printed (or not yet encoded); keep the reference as printed"),
                );
            }
            1 => {}
            _ => {
                let shown = if r.quoted {
                    format!("\"{}\"", r.text)
                } else {
                    split_reference(&r.text).join(".")
                };
                let mut d = Diagnostic::new(
                    Code::LintAmbiguousReference,
                    *file,
                    r.span,
                    format!(
                        "reference to {shown} is ambiguous: {} rules carry that number",
                        matches.len()
                    ),
                )
                .label("which one?")
                .help("the book numbers more than one rule this way");
                for m in &matches {
                    let (f, s) = lw.section_sites[*m as usize];
                    let t = lw.program.sections[*m as usize]
                        .title
                        .clone()
                        .unwrap_or_default();
                    d = d.related(f, s, format!("candidate \"{t}\""));
                }
                lw.diags.push(d);
            }
        }
    }
    lw.refs = refs;
}

#[cfg(test)]
mod tests {
    use super::split_reference;

    #[test]
    fn compact_references_split_at_digit_letter_boundaries() {
        assert_eq!(split_reference("6e"), vec!["6", "e"]);
        assert_eq!(split_reference("5c3"), vec!["5", "c", "3"]);
        assert_eq!(split_reference("7.a.2"), vec!["7", "a", "2"]);
        assert_eq!(split_reference("IV"), vec!["IV"]);
    }
}
