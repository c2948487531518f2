//! An encoding held against its rulebook: which numbered sections and items of the book have no
//! counterpart in the encoding (and the reverse), whose titles are spelled differently, and
//! which encoded stat lines or table rows hold a number the book's row does not print.
//!
//! The encoding is described to this module as plain data ([`Encoded`]), so the audit crate
//! stays independent of the compiler: the caller lists its sections and rows and gets back
//! [`Difference`]s that point into the book (byte spans) and at the caller's own items (by
//! index).

use std::collections::BTreeMap;
use std::ops::Range;

use crate::headings::{self, Entry, Outline};
use crate::lines::{self, Line};
use crate::numbering::{self, Style};
use crate::toc;

/// A section or rule of the encoding, by its number path (`["7", "a", "1"]`).
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedSection {
    pub path: Vec<String>,
    pub title: Option<String>,
}

/// A named record of the encoding whose numbers should appear in the book's row for it: a
/// unit's stat line or a table row. `values` are shown as the book would print them (a
/// length in the ruleset's own unit, without the unit).
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedRow {
    /// The names the book may print for it (title first, then the encoding's name).
    pub labels: Vec<String>,
    pub values: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Encoded {
    pub sections: Vec<EncodedSection>,
    pub rows: Vec<EncodedRow>,
}

/// One way the encoding and the book disagree. `section`/`row` index the caller's lists.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// A numbered section or item of the book that the encoding lacks.
    Missing {
        number: String,
        title: String,
        book: Range<usize>,
    },
    /// An encoded number the book does not print.
    Extra { section: usize, number: String },
    /// Both have the number, with titles spelled differently.
    Title {
        section: usize,
        number: String,
        book_title: String,
        book: Range<usize>,
    },
    /// An encoded value that the book's row for the same name does not print.
    Value {
        row: usize,
        field: String,
        value: String,
        printed: Vec<String>,
        book: Range<usize>,
    },
}

/// Compares `enc` with the book `text`.
pub fn compare(text: &str, enc: &Encoded) -> Vec<Difference> {
    let lines = lines::split(text);
    let toc = toc::find(&lines);
    let toc_lines = toc.as_ref().map_or(0..0, |t| t.lines.clone());
    let body = headings::outline(&lines, &|i| toc_lines.contains(&i));
    let mut out = sections(&lines, &body, enc);
    out.extend(rows(&lines, &toc_lines, enc));
    out
}

/// The number path of each numbered entry: its own mark under its ancestors' marks. A dotted
/// mark ("4.1") carries its whole path itself.
fn book_paths(body: &Outline<'_>) -> Vec<Option<Vec<String>>> {
    let seg = |e: &Entry<'_>| -> Option<String> {
        let m = e.marker.as_ref()?;
        Some(match m.style {
            Style::Lower => numbering::letter(m.value, false),
            Style::Upper => numbering::letter(m.value, true),
            _ => m.value.to_string(),
        })
    };
    (0..body.entries.len())
        .map(|i| {
            let e = &body.entries[i];
            let m = e.marker.as_ref()?;
            if let Style::Dotted(_) = m.style {
                return Some(m.path.iter().map(u32::to_string).collect());
            }
            let mut path = Vec::new();
            for a in body.ancestors(i) {
                let ae = &body.entries[a];
                match ae.marker.as_ref().map(|m| m.style) {
                    Some(Style::Dotted(_)) => {
                        path = ae
                            .marker
                            .as_ref()?
                            .path
                            .iter()
                            .map(u32::to_string)
                            .collect()
                    }
                    Some(_) => path.push(seg(ae)?),
                    // An unnumbered heading above a numbered one does not number it.
                    None => {}
                }
            }
            path.push(seg(e)?);
            Some(path)
        })
        .collect()
}

fn sections(lines: &[Line<'_>], body: &Outline<'_>, enc: &Encoded) -> Vec<Difference> {
    let paths = book_paths(body);
    let mut book: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, p) in paths.iter().enumerate() {
        if let Some(p) = p {
            book.entry(p.join(".")).or_default().push(i);
        }
    }
    let mut ours: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, s) in enc.sections.iter().enumerate() {
        if !s.path.is_empty() {
            ours.entry(s.path.join(".")).or_default().push(i);
        }
    }
    let mut out = Vec::new();
    for (number, entries) in &book {
        let mut free: Vec<usize> = ours.get(number).cloned().unwrap_or_default();
        for &e in entries {
            let entry = &body.entries[e];
            let title = entry.short_title().to_string();
            // The mark and the title, not the whole paragraph a run-in title opens.
            let line = &lines[entry.line];
            let head = line.text().len() - entry.title.len() + title.len();
            let span = line.text_start()..line.text_start() + head.min(line.text().len());
            // A number printed twice (a book that repeats "(7)") pairs by title first.
            let pick = free
                .iter()
                .position(|&s| {
                    enc.sections[s]
                        .title
                        .as_deref()
                        .is_some_and(|t| same_title(t, &title))
                })
                .or(if free.is_empty() { None } else { Some(0) });
            let Some(k) = pick else {
                out.push(Difference::Missing {
                    number: number.clone(),
                    title,
                    book: span,
                });
                continue;
            };
            let s = free.remove(k);
            // An item's text is a sentence the encoding may summarise; a heading, or a short
            // run-in title ("a) Move. A soldier may…"), is a name to spell as printed.
            let titled = entry.role == headings::Role::Heading
                || (title.split_whitespace().count() <= 6 && title.len() < entry.title.len());
            if titled
                && let Some(t) = &enc.sections[s].title
                && !same_title(t, &title)
                && !title_in(t, entry.title)
            {
                out.push(Difference::Title {
                    section: s,
                    number: number.clone(),
                    book_title: title,
                    book: span,
                });
            }
        }
        if let Some(list) = ours.get_mut(number) {
            list.retain(|s| free.contains(s));
        }
    }
    for (number, rest) in ours {
        if book.contains_key(&number) && rest.is_empty() {
            continue;
        }
        for s in rest {
            out.push(Difference::Extra {
                section: s,
                number: number.clone(),
            });
        }
    }
    out
}

/// Titles compared as a reader would: case, spacing, quotes and closing punctuation aside.
fn same_title(a: &str, b: &str) -> bool {
    norm(a) == norm(b)
}

/// An encoded title that the book prints at the head of the item (the book's title runs on
/// into the first sentence).
fn title_in(encoded: &str, book_line: &str) -> bool {
    let n = norm(encoded);
    !n.is_empty() && norm(book_line).starts_with(&n)
}

fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '"' | '\'' | '“' | '”' | '‘' | '’'))
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', ':', ';'])
        .to_lowercase()
}

/// The numbers printed in a piece of text, as strings (`+2` → `+2`, `-1`, `1.5`; a minus
/// sign counts only where it is not a dash between two figures, as in `2-3`).
fn numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len()
            && (b[i].is_ascii_digit()
                || (b[i] == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
        {
            i += 1;
        }
        let before = text[..start].trim_end_matches(['-', '−']);
        let signed = before.len() < start && !before.ends_with(|c: char| c.is_ascii_alphanumeric());
        let n = &text[start..i];
        out.push(if signed {
            format!("-{n}")
        } else {
            n.to_string()
        });
    }
    out
}

/// A line that is a row label for `label`: the label alone (a table flattened to one cell per
/// line), or the label followed only by numbers and separators (`Jungle | 2 | +1`).
fn row_numbers_after(text: &str, label: &str) -> Option<String> {
    let t = text.trim().trim_start_matches('|').trim();
    let n = norm(label);
    if n.is_empty() {
        return None;
    }
    let lower = t.to_lowercase();
    if !lower.starts_with(&n) {
        return None;
    }
    let rest = &t[n.len().min(t.len())..];
    if rest.chars().next().is_some_and(char::is_alphanumeric) {
        return None;
    }
    rest.chars()
        .all(|c| c.is_ascii_digit() || " \t|,;:+-−–/()*.%".contains(c))
        .then(|| rest.to_string())
}

/// A cell of a flattened table: numbers, or a mark standing for an empty or footnoted cell
/// (`*`, `-`).
fn numeric_line(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || " \t|,;+-−–/()*.%".contains(c))
}

fn rows(lines: &[Line<'_>], toc: &Range<usize>, enc: &Encoded) -> Vec<Difference> {
    let mut out = Vec::new();
    for (r, row) in enc.rows.iter().enumerate() {
        // The first line that is a row label for one of the row's names.
        let found = (0..lines.len()).filter(|i| !toc.contains(i)).find_map(|i| {
            row.labels
                .iter()
                .find_map(|l| row_numbers_after(lines[i].text(), l))
                .map(|rest| (i, rest))
        });
        let Some((i, rest)) = found else { continue };
        let mut printed = numbers(&rest);
        let mut end = lines[i].text_span().end;
        if printed.is_empty() {
            // A flattened table: the row's cells follow one per line, and a value printed
            // before the name (a points cost) sits on the line above.
            let mut j = i + 1;
            while j < lines.len() && numeric_line(lines[j].text()) {
                printed.extend(numbers(lines[j].text()));
                end = lines[j].text_span().end;
                j += 1;
            }
            if let Some(p) = lines::prev_non_blank(lines, i)
                && numeric_line(lines[p].text())
            {
                printed.extend(numbers(lines[p].text()));
            }
        }
        if printed.is_empty() {
            continue;
        }
        let mut left = printed.clone();
        for (field, value) in &row.values {
            if let Some(k) = left.iter().position(|p| same_number(p, value)) {
                left.remove(k);
            } else {
                out.push(Difference::Value {
                    row: r,
                    field: field.clone(),
                    value: value.clone(),
                    printed: printed.clone(),
                    book: lines[i].text_span().start..end,
                });
            }
        }
    }
    out
}

fn same_number(a: &str, b: &str) -> bool {
    let f = |s: &str| s.trim_start_matches('+').parse::<f64>().ok();
    match (f(a), f(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec(path: &str, title: Option<&str>) -> EncodedSection {
        EncodedSection {
            path: path.split('.').map(String::from).collect(),
            title: title.map(String::from),
        }
    }

    const BOOK: &str = "Contents\n(1) Gear\n(2) Moving\n\n(1) Gear\n\na) Board. The board is made of hexes.\n\nb) Pieces. Cut them out.\n\n(2) Moving\n\na) Costs. Each hex costs one.\n\n1. Woods cost two.\n\n(4) Fire\n";

    #[test]
    fn numbered_sections_missing_extra_and_retitled() {
        let enc = Encoded {
            sections: vec![
                sec("1", Some("Gear")),
                sec("1.a", Some("Board")),
                sec("2", Some("Movement")),
                sec("2.a", None),
                sec("3", Some("Spotting")),
            ],
            rows: vec![],
        };
        let d = compare(BOOK, &enc);
        let missing: Vec<&str> = d
            .iter()
            .filter_map(|x| match x {
                Difference::Missing { number, .. } => Some(number.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(missing, ["1.b", "2.a.1", "4"]);
        assert!(d.contains(&Difference::Extra {
            section: 4,
            number: "3".into()
        }));
        assert!(d.iter().any(|x| matches!(x, Difference::Title { section: 2, book_title, .. } if book_title == "Moving")));
        // The contents list is not the body: (1) and (2) there are not counted twice.
        assert_eq!(d.len(), 5, "{d:?}");
    }

    #[test]
    fn a_number_printed_twice_pairs_by_title() {
        let book = "(7) How to Fire\n\n(7) The Scenarios\n";
        let enc = Encoded {
            sections: vec![
                sec("7", Some("The Scenarios")),
                sec("7", Some("How to Fire")),
            ],
            rows: vec![],
        };
        assert_eq!(compare(book, &enc), []);
    }

    fn row(labels: &[&str], values: &[(&str, &str)]) -> EncodedRow {
        EncodedRow {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            values: values
                .iter()
                .map(|(f, v)| (f.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn a_row_on_one_line_and_a_flattened_row_are_both_read() {
        let book = "Terrain\nJungle | 2 | +1\nScout\n\n12\nRunner\n5\n3\n-1\nGuard\n4\n";
        let enc = Encoded {
            sections: vec![],
            rows: vec![
                row(&["Jungle"], &[("cost", "2"), ("modifier", "1")]),
                row(
                    &["Runner"],
                    &[
                        ("points", "12"),
                        ("speed", "5"),
                        ("acc", "3"),
                        ("def", "-1"),
                    ],
                ),
                row(&["Guard"], &[("speed", "4"), ("acc", "7")]),
                row(&["Tank"], &[("speed", "9")]),
            ],
        };
        let d = compare(book, &enc);
        assert_eq!(d.len(), 1, "{d:?}");
        let Difference::Value {
            row,
            field,
            value,
            printed,
            ..
        } = &d[0]
        else {
            panic!("{d:?}")
        };
        assert_eq!((*row, field.as_str(), value.as_str()), (2, "acc", "7"));
        assert_eq!(printed, &["4", "-1"]);
    }

    #[test]
    fn prose_mentioning_a_name_is_not_a_row() {
        let book = "The Runner moves 5 hexes.\n";
        let enc = Encoded {
            sections: vec![],
            rows: vec![row(&["Runner"], &[("speed", "6")])],
        };
        assert_eq!(compare(book, &enc), []);
    }
}
