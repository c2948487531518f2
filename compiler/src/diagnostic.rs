//! Renderer-neutral diagnostics. The compiler produces plain data; `render` turns it into a
//! miette report (human) or a JSON record (machines) against the source database.

use sandtable_grammar::ast::Span;
use serde::Serialize;

use crate::source::{FileId, SourceDb};

pub use sandtable_grammar::codes::{Code, Severity};

/// The code a diagnostic shows: one of the `.sand` table ([`Code`]), or a finding of the
/// rulebook audit, whose codes are that crate's own table (`sandtable_audit::codes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiagnosticCode {
    Sand(Code),
    Audit(&'static str),
}

impl DiagnosticCode {
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticCode::Sand(c) => c.as_str(),
            DiagnosticCode::Audit(s) => s,
        }
    }
    /// The `.sand` code, if this is one.
    pub fn sand(self) -> Option<Code> {
        match self {
            DiagnosticCode::Sand(c) => Some(c),
            DiagnosticCode::Audit(_) => None,
        }
    }
}

impl PartialEq<Code> for DiagnosticCode {
    fn eq(&self, other: &Code) -> bool {
        *self == DiagnosticCode::Sand(*other)
    }
}

impl std::fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for DiagnosticCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Label {
    pub file: FileId,
    pub span: Span,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable code, e.g. `sand::resolve::unknown-name`.
    pub code: DiagnosticCode,
    pub message: String,
    pub primary: Label,
    pub related: Vec<Label>,
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with `code`, at the code's default severity.
    pub fn new(code: Code, file: FileId, span: Span, message: impl Into<String>) -> Self {
        Self::with(
            code.severity(),
            DiagnosticCode::Sand(code),
            file,
            span,
            message,
        )
    }
    /// A finding of the rulebook audit, shown like a diagnostic.
    pub fn audit(
        severity: Severity,
        code: &'static str,
        file: FileId,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Self::with(severity, DiagnosticCode::Audit(code), file, span, message)
    }
    fn with(
        severity: Severity,
        code: DiagnosticCode,
        file: FileId,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity,
            code,
            message: message.into(),
            primary: Label {
                file,
                span,
                text: String::new(),
            },
            related: Vec::new(),
            help: None,
        }
    }
    pub fn label(mut self, text: impl Into<String>) -> Self {
        self.primary.text = text.into();
        self
    }
    pub fn help(mut self, text: impl Into<String>) -> Self {
        self.help = Some(text.into());
        self
    }
    pub fn related(mut self, file: FileId, span: Span, text: impl Into<String>) -> Self {
        self.related.push(Label {
            file,
            span,
            text: text.into(),
        });
        self
    }
}

/// Most characters of one text (message, label, help) echoed per diagnostic; the rest is
/// cut with an ellipsis and a count. A name or label taken from a 50 MB line must not be
/// printed whole.
pub const MAX_ECHO_CHARS: usize = 1_000;
/// Longest source line shown in a rendered snippet, in bytes. A diagnostic on a longer line
/// (or with a longer line around it) shows its position and an excerpt of the line instead:
/// the snippet would be as long as the line, and past display column 65,535 the renderer
/// cannot draw it at all.
pub const MAX_SNIPPET_LINE_BYTES: usize = 500;
/// Most source lines one snippet may span; a longer span is shown by its position.
pub const MAX_SNIPPET_LINES: usize = 40;
/// Characters of an excerpt shown before and after the position when the line is too long.
const EXCERPT_CHARS: usize = 36;

/// `text`, or its first [`MAX_ECHO_CHARS`] characters with an ellipsis and how much was cut.
pub fn cap_text(text: &str) -> std::borrow::Cow<'_, str> {
    cap_chars(text, MAX_ECHO_CHARS)
}

/// `text`, or its first `max` characters with an ellipsis and how much was cut.
pub fn cap_chars(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!("{}… ({rest} more characters)", &text[..cut]).into()
        }
    }
}

/// The fields `--json` prints for every diagnostic (also used by `audit`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JsonDiagnostic {
    pub severity: Severity,
    pub code: String,
    pub message: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub label: String,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn to_json(&self, db: &SourceDb) -> JsonDiagnostic {
        let f = db.file(self.primary.file);
        let (line, column) = f.line_col(self.primary.span.start);
        let (end_line, end_column) = f.line_col(self.primary.span.end);
        JsonDiagnostic {
            severity: self.severity,
            code: self.code.to_string(),
            message: cap_text(&self.message).into_owned(),
            file: f.name.clone(),
            line,
            column,
            end_line,
            end_column,
            label: cap_text(&self.primary.text).into_owned(),
            help: self.help.as_deref().map(|h| cap_text(h).into_owned()),
        }
    }
}

/// Sort by file, then position, then severity: the order a reader walks the source in.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by(|a, b| {
        (
            a.primary.file,
            a.primary.span.start,
            a.severity,
            a.code.as_str(),
        )
            .cmp(&(
                b.primary.file,
                b.primary.span.start,
                b.severity,
                b.code.as_str(),
            ))
    });
}

pub mod render {
    //! miette rendering. Related labels in other files are folded into the help text, since
    //! one miette report shows one source.
    use super::*;
    use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, Report};

    pub fn to_report(d: &Diagnostic, db: &SourceDb) -> Report {
        let f = db.file(d.primary.file);
        let snippet = fits(f, d.primary.span)
            && d.related
                .iter()
                .all(|r| r.file != d.primary.file || fits(f, r.span));
        let mut help = d.help.as_deref().map(|h| cap_text(h).into_owned());
        let mut add_note = |note: String| {
            help = Some(match help.take() {
                Some(h) => format!("{h}\n{note}"),
                None => note,
            });
        };
        let mut labels = Vec::new();
        if snippet {
            labels.push(LabeledSpan::new_primary_with_span(
                (!d.primary.text.is_empty()).then(|| cap_text(&d.primary.text).into_owned()),
                (d.primary.span.start, d.primary.span.len()),
            ));
        } else {
            add_note(excerpt(f, d.primary.span.start, &d.primary.text));
        }
        for r in &d.related {
            if r.file == d.primary.file && snippet {
                labels.push(LabeledSpan::new_with_span(
                    Some(cap_text(&r.text).into_owned()),
                    (r.span.start, r.span.len()),
                ));
            } else {
                let rf = db.file(r.file);
                let (l, c) = rf.line_col(r.span.start);
                add_note(format!("{} at {}:{}:{}", cap_text(&r.text), rf.name, l, c));
            }
        }
        let mut md = MietteDiagnostic::new(cap_text(&d.message).into_owned())
            .with_code(d.code.as_str())
            .with_severity(match d.severity {
                Severity::Error => miette::Severity::Error,
                Severity::Warning => miette::Severity::Warning,
                Severity::Advice => miette::Severity::Advice,
            })
            .with_labels(labels);
        if let Some(h) = help {
            md = md.with_help(h);
        }
        if snippet {
            Report::new(md).with_source_code(f.indexed_source())
        } else {
            Report::new(md)
        }
    }

    /// Whether a snippet of `span` (with the line of context on each side that the renderer
    /// shows) stays within the snippet limits.
    fn fits(f: &crate::source::SourceFile, span: Span) -> bool {
        let (first, _) = f.line_col(span.start);
        let (last, _) = f.line_col(span.end);
        if (last - first) as usize >= MAX_SNIPPET_LINES {
            return false;
        }
        let lo = (first as usize).saturating_sub(1).max(1);
        (lo..=last as usize + 1).all(|l| f.line_len(l) <= MAX_SNIPPET_LINE_BYTES)
    }

    /// `file:line:column: …text around the position…` for a position whose line is too
    /// long to show.
    fn excerpt(f: &crate::source::SourceFile, offset: usize, label: &str) -> String {
        let (line, col) = f.line_col(offset);
        let offset = offset.min(f.text.len());
        let start = f.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = f.text[offset..]
            .find('\n')
            .map_or(f.text.len(), |i| offset + i);
        let before: Vec<char> = f.text.get(start..offset).unwrap_or("").chars().collect();
        let after: Vec<char> = f.text.get(offset..end).unwrap_or("").chars().collect();
        // Tabs and other control characters as single spaces, runs of them as one.
        let clean = |cs: &[char]| -> String {
            let mut out = String::new();
            for c in cs {
                let c = if c.is_control() { ' ' } else { *c };
                if !(c == ' ' && out.ends_with(' ')) {
                    out.push(c);
                }
            }
            out
        };
        let head = &before[before.len().saturating_sub(EXCERPT_CHARS)..];
        let tail = &after[..after.len().min(EXCERPT_CHARS)];
        let text = format!(
            "{}{}⟨here⟩{}{}",
            if head.len() < before.len() { "…" } else { "" },
            clean(head),
            clean(tail),
            if tail.len() < after.len() { "…" } else { "" },
        );
        let label = if label.is_empty() {
            String::new()
        } else {
            format!(" ({})", cap_text(label))
        };
        format!(
            "at {}:{line}:{col}{label}; the line is too long to show, so an excerpt:\n{}",
            f.name,
            text.trim()
        )
    }

    /// Plain-text rendering without colour or links: stable for golden tests and pipes.
    pub fn to_plain_string(d: &Diagnostic, db: &SourceDb) -> String {
        let report = to_report(d, db);
        let mut out = String::new();
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_links(false)
            .with_width(100);
        if handler.render_report(&mut out, report.as_ref()).is_err() {
            out = format!("{report:?}");
        }
        out
    }

    /// Rendering for a terminal: colours when the stream is a terminal.
    pub fn to_terminal_string(d: &Diagnostic, db: &SourceDb, color: bool) -> String {
        if !color {
            return to_plain_string(d, db);
        }
        let report = to_report(d, db);
        let mut out = String::new();
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode())
            .with_links(false)
            .with_width(100);
        if handler.render_report(&mut out, report.as_ref()).is_err() {
            out = format!("{report:?}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    fn db_with(text: String) -> SourceDb {
        let mut db = SourceDb::default();
        db.add(SourceFile::new("long.sand".into(), None, text));
        db
    }

    #[test]
    fn a_diagnostic_past_display_column_65535_renders_as_an_excerpt() {
        // 20,000 tabs are 80,000 display columns: miette's snippet renderer panics there.
        let text = format!("{}resolve x( {{ result d6 }}\n", "\t".repeat(20_000));
        let at = 20_000 + "resolve x( ".len();
        let db = db_with(text);
        let d = Diagnostic::new(Code::ParseSyntax, 0, Span::new(at, at + 1), "expected `)`")
            .label("here");
        let out = render::to_plain_string(&d, &db);
        assert!(out.contains("long.sand:1:20012"), "{out}");
        assert!(out.contains("… resolve x( ⟨here⟩{ result d6 }"), "{out}");
        assert!(out.len() < 2_000, "{} bytes", out.len());
    }

    #[test]
    fn a_line_at_the_snippet_limit_is_shown_and_one_byte_longer_is_not() {
        for (len, snippet) in [
            (MAX_SNIPPET_LINE_BYTES, true),
            (MAX_SNIPPET_LINE_BYTES + 1, false),
        ] {
            let text = format!("{}\nresolve x() {{ result d6 }}\n", "x".repeat(len));
            let db = db_with(text);
            let d = Diagnostic::new(Code::LintUnused, 0, Span::new(0, 1), "unused");
            let out = render::to_plain_string(&d, &db);
            assert_eq!(out.contains("1 │ xxx"), snippet, "{len}: {out}");
            assert_eq!(out.contains("too long to show"), !snippet, "{len}: {out}");
        }
    }

    #[test]
    fn a_span_over_too_many_lines_is_shown_by_position() {
        for (lines, snippet) in [(MAX_SNIPPET_LINES, true), (MAX_SNIPPET_LINES + 1, false)] {
            let text = "a\n".repeat(lines + 2);
            let db = db_with(text);
            // From line 1 to line `lines`: the span covers `lines` lines.
            let d = Diagnostic::new(Code::ParseSyntax, 0, Span::new(0, 2 * lines - 1), "m");
            let out = render::to_plain_string(&d, &db);
            assert_eq!(out.contains("too long to show"), !snippet, "{lines}: {out}");
        }
    }

    #[test]
    fn echoed_text_is_capped_with_a_count_of_the_rest() {
        let at = "é".repeat(MAX_ECHO_CHARS);
        assert_eq!(cap_text(&at), at.as_str());
        let past = "é".repeat(MAX_ECHO_CHARS + 5);
        let capped = cap_text(&past);
        assert!(capped.ends_with("… (5 more characters)"), "{capped}");
        assert_eq!(capped.chars().filter(|c| *c == 'é').count(), MAX_ECHO_CHARS);
        // The JSON record caps the same fields.
        let db = db_with("x\n".into());
        let d = Diagnostic::new(Code::ParseSyntax, 0, Span::new(0, 1), "y".repeat(50_000))
            .label("z".repeat(50_000))
            .help("w".repeat(50_000));
        let j = d.to_json(&db);
        assert!(j.message.len() < 2 * MAX_ECHO_CHARS);
        assert!(j.label.len() < 2 * MAX_ECHO_CHARS);
        assert!(j.help.unwrap().len() < 2 * MAX_ECHO_CHARS);
        assert!(render::to_plain_string(&d, &db).len() < 8 * MAX_ECHO_CHARS);
    }

    #[test]
    fn a_source_over_the_parser_limit_is_too_large() {
        let text = " ".repeat(sandtable_grammar::MAX_SOURCE_BYTES + 1);
        let c = crate::compile_sources(&[("big.sand", &text)]);
        let codes: Vec<_> = c.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [DiagnosticCode::Sand(Code::ParseTooLarge)]);
        assert_eq!(c.diagnostics[0].severity, Severity::Error);
    }

    #[test]
    fn a_diagnostic_takes_its_severity_from_its_code() {
        let w = Diagnostic::new(Code::LintUnused, 0, Span::new(0, 1), "m");
        assert_eq!(w.severity, Severity::Warning);
        let e = Diagnostic::new(Code::TypeMismatch, 0, Span::new(0, 1), "m");
        assert_eq!(e.severity, Severity::Error);
        assert_eq!(e.code, Code::TypeMismatch);
        assert_eq!(e.code.as_str(), "sand::type::mismatch");
    }
}
