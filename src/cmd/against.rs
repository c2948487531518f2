//! `check --against BOOK.txt`: the encoding held against the rulebook's plain text. The
//! comparison itself is the audit crate's (`sandtable_audit::against`); this module describes a
//! compiled ruleset to it and turns its differences into diagnostics with a span in the book and
//! one in the `.sand` files.

use std::path::Path;

use sandtable_audit::against::{self, Difference, Encoded, EncodedRow, EncodedSection};
use sandtable_audit::codes;
use sandtable_compiler::ir::{Program, Value, show_length};
use sandtable_compiler::{Compiled, Diagnostic, FileId, Severity, SourceDb, SourceFile};
use sandtable_grammar::ast::Span;

/// Reads the book, compares, and returns the diagnostics (the book is added to `compiled.db`
/// so that they can point into it).
pub fn diagnostics(compiled: &mut Compiled, book: &Path) -> Result<Vec<Diagnostic>, String> {
    let text =
        super::audit::read(book).map_err(|e| format!("cannot read {}: {e}", book.display()))?;
    let enc = describe(&compiled.program);
    let diffs = against::compare(&text, &enc);
    let book_id = compiled
        .db
        .add(SourceFile::new(book.display().to_string(), None, text));
    let program = &compiled.program;
    let db = &compiled.db;
    let section_at = |s: usize| -> Option<(FileId, Span)> {
        let info = &program.sections[s];
        line_span(db, &info.file, info.line as usize)
    };
    let book_span = |r: &std::ops::Range<usize>| Span::new(r.start, r.end);
    let mut out = Vec::new();
    for d in diffs {
        let diag = match d {
            Difference::Missing {
                number,
                title,
                book,
            } => Diagnostic::audit(
                Severity::Warning,
                codes::AGAINST_MISSING,
                book_id,
                book_span(&book),
                format!("the book's {number} ({title}) has no section or rule in the encoding"),
            )
            .label("printed here")
            .help(format!(
                "encode it as `rule {}` inside its parent section (or `section {number}`), even if only with a note",
                number.rsplit('.').next().unwrap_or(&number)
            )),
            Difference::Extra { section, number } => {
                let Some((file, span)) = section_at(section) else {
                    continue;
                };
                Diagnostic::audit(
                    Severity::Warning,
                    codes::AGAINST_EXTRA,
                    file,
                    span,
                    format!("the encoding numbers a section {number} that the book does not print"),
                )
                .label("numbered here")
                .help("keep the book's numbering as printed; if the book skips or repeats a number, say so in a note rather than renumbering")
            }
            Difference::Title {
                section,
                number,
                book_title,
                book,
            } => {
                let encoded = program.sections[section].title.clone().unwrap_or_default();
                let mut d = Diagnostic::audit(
                    Severity::Warning,
                    codes::AGAINST_TITLE,
                    book_id,
                    book_span(&book),
                    format!("{number} is titled \"{book_title}\" in the book and \"{encoded}\" in the encoding"),
                )
                .label("the book's title")
                .help("spell titles as printed, so that a reader can find the rule in the book");
                if let Some((file, span)) = section_at(section) {
                    d = d.related(file, span, "the encoding's title");
                }
                d
            }
            Difference::Value {
                row,
                field,
                value,
                printed,
                book,
            } => {
                let name = &enc.rows[row].labels[0];
                let mut d = Diagnostic::audit(
                    Severity::Warning,
                    codes::AGAINST_VALUE,
                    book_id,
                    book_span(&book),
                    format!(
                        "{name}: the encoding gives {field} = {value}, a number the book's row does not print (it prints {})",
                        printed.join(" ")
                    ),
                )
                .label("the book's row")
                .help("copy the value as printed; if the book's value is wrong, keep it and record the correction in an assumptions file");
                if let Some((file, span)) = enc.rows[row]
                    .labels
                    .last()
                    .and_then(|n| definition_span(db, n))
                {
                    d = d.related(file, span, "encoded here");
                }
                d
            }
        };
        out.push(diag);
    }
    Ok(out)
}

/// The encoding as the comparison sees it: numbered sections, and every unit's stat line and
/// every named table row with the numbers it holds.
fn describe(program: &Program) -> Encoded {
    let unit = program.length_unit.as_deref();
    let number = |v: &Value| -> Option<String> {
        match v {
            Value::Int(n) => Some(n.to_string()),
            Value::Length(l) => Some(
                show_length(*l, unit)
                    .trim_end_matches(|c: char| c.is_ascii_alphabetic())
                    .to_string(),
            ),
            _ => None,
        }
    };
    // An unnumbered section nested in a numbered one carries its parent's number: it numbers
    // nothing itself.
    let sections = program
        .sections
        .iter()
        .map(|s| {
            let inherited = s
                .parent
                .is_some_and(|p| program.sections[p as usize].path == s.path);
            EncodedSection {
                path: if inherited {
                    Vec::new()
                } else {
                    s.path.clone()
                },
                title: s.title.clone(),
            }
        })
        .collect();
    let mut rows = Vec::new();
    for e in &program.entities {
        // A field the unit leaves at its kind's default was not copied from a row of the book.
        let default = |f: &str| {
            e.kind
                .and_then(|k| program.kinds.get(k as usize))
                .and_then(|k| k.fields.iter().find(|d| d.name == f))
                .and_then(|d| d.default.as_ref())
        };
        let values: Vec<(String, String)> = e
            .fields
            .iter()
            .filter(|(f, v)| default(f) != Some(v))
            .filter_map(|(f, v)| number(v).map(|n| (f.clone(), n)))
            .collect();
        if values.is_empty() {
            continue;
        }
        let mut labels: Vec<String> = e.title.iter().cloned().collect();
        labels.push(e.name.replace('_', " "));
        rows.push(EncodedRow { labels, values });
    }
    for t in &program.tables {
        for r in &t.rows {
            let Some(sandtable_compiler::ir::KeyPattern::Symbol(key)) = r.keys.first() else {
                continue;
            };
            let values: Vec<(String, String)> = r
                .cells
                .iter()
                .enumerate()
                .filter_map(|(k, v)| {
                    let col = t
                        .columns
                        .get(k)
                        .map_or_else(|| format!("cell {}", k + 1), |c| format!("{c:?}"));
                    number(v).map(|n| (format!("{}[{col}]", t.name), n))
                })
                .collect();
            if !values.is_empty() {
                rows.push(EncodedRow {
                    labels: vec![key.replace('_', " ")],
                    values,
                });
            }
        }
    }
    Encoded { sections, rows }
}

/// The span of line `line` (from 1) of the file the compiler named `file`.
fn line_span(db: &SourceDb, file: &str, line: usize) -> Option<(FileId, Span)> {
    let id = db.ids().find(|&i| db.file(i).name == file)?;
    let text = &db.file(id).text;
    let start: usize = text
        .split_inclusive('\n')
        .take(line.checked_sub(1)?)
        .map(str::len)
        .sum();
    let rest = text.get(start..)?;
    let line_text = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let lead = line_text.len() - line_text.trim_start().len();
    let start = start + lead;
    Some((id, Span::new(start, start + line_text.trim().len())))
}

/// Where `name` is defined in the `.sand` files: its first occurrence followed by `:` or `{`
/// (the IR keeps no span for a definition).
fn definition_span(db: &SourceDb, name: &str) -> Option<(FileId, Span)> {
    let name = name.replace(' ', "_");
    for id in db.ids() {
        let text = &db.file(id).text;
        if !db.file(id).name.ends_with(".sand") {
            continue;
        }
        for (at, _) in text.match_indices(name.as_str()) {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].trim_start().chars().next();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !word(before) && matches!(after, Some(':' | '{')) {
                return Some((id, Span::new(at, at + name.len())));
            }
        }
    }
    None
}
