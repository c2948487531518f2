//! Renderer-neutral diagnostics. The compiler produces plain data; `render` turns it into a
//! miette report (human) or a JSON record (machines) against the source database.

use sandtable_grammar::ast::Span;
use serde::Serialize;

use crate::source::{FileId, SourceDb};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Advice,
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
    pub code: &'static str,
    pub message: String,
    pub primary: Label,
    pub related: Vec<Label>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, file: FileId, span: Span, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, file, span, message)
    }
    pub fn warning(
        code: &'static str,
        file: FileId,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, code, file, span, message)
    }
    fn new(
        severity: Severity,
        code: &'static str,
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
            message: self.message.clone(),
            file: f.name.clone(),
            line,
            column,
            end_line,
            end_column,
            label: self.primary.text.clone(),
            help: self.help.clone(),
        }
    }
}

/// Sort by file, then position, then severity: the order a reader walks the source in.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by(|a, b| {
        (a.primary.file, a.primary.span.start, a.severity, a.code).cmp(&(
            b.primary.file,
            b.primary.span.start,
            b.severity,
            b.code,
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
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            (!d.primary.text.is_empty()).then(|| d.primary.text.clone()),
            (d.primary.span.start, d.primary.span.len()),
        )];
        let mut help = d.help.clone();
        for r in &d.related {
            if r.file == d.primary.file {
                labels.push(LabeledSpan::new_with_span(
                    Some(r.text.clone()),
                    (r.span.start, r.span.len()),
                ));
            } else {
                let rf = db.file(r.file);
                let (l, c) = rf.line_col(r.span.start);
                let note = format!("{} at {}:{}:{}", r.text, rf.name, l, c);
                help = Some(match help {
                    Some(h) => format!("{h}\n{note}"),
                    None => note,
                });
            }
        }
        let mut md = MietteDiagnostic::new(d.message.clone())
            .with_code(d.code)
            .with_severity(match d.severity {
                Severity::Error => miette::Severity::Error,
                Severity::Warning => miette::Severity::Warning,
                Severity::Advice => miette::Severity::Advice,
            })
            .with_labels(labels);
        if let Some(h) = help {
            md = md.with_help(h);
        }
        Report::new(md).with_source_code(f.indexed_source())
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
