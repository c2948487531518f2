//! `sandtable audit`: structure and cross-reference check of plain-text rulebooks. The
//! analysis is `sandtable-audit`; this turns its findings into the same diagnostics `check`
//! prints.

use std::path::PathBuf;

use sandtable_compiler::diagnostic::Diagnostic;
use sandtable_compiler::{Severity, SourceDb, SourceFile};

use crate::report::{self, EXIT_OK, EXIT_USAGE};

#[derive(clap::Args)]
#[command(
    after_help = "Findings are warnings (advice for vague ones): the exit status is 0 when the audit ran, 2 on I/O errors.\n\n\
Examples:\n  sandtable audit ../shared/rulebooks/platoon.txt\n  sandtable audit ../shared/rulebooks/*.txt --json"
)]
pub struct Args {
    /// Plain-text rulebooks
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Print findings as a JSON array with the same fields as `check --json`
    #[arg(long)]
    json: bool,
}

/// Largest rulebook accepted.
const MAX_BYTES: u64 = 16 * 1024 * 1024;

pub fn run(args: Args) -> u8 {
    let mut db = SourceDb::default();
    let mut diags = Vec::new();
    let mut io_error = false;
    let mut per_file = Vec::new();
    for path in &args.files {
        let text = match read(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                io_error = true;
                continue;
            }
        };
        let findings = sandtable_audit::audit(&text);
        let summary = sandtable_audit::summary(&findings);
        let id = db.add(SourceFile::new(path.display().to_string(), None, text));
        for f in findings {
            let span = sandtable_grammar::ast::Span::new(f.span.start, f.span.end);
            let mut d = match f.severity {
                sandtable_audit::Severity::Warning => {
                    Diagnostic::warning(f.code, id, span, f.message)
                }
                sandtable_audit::Severity::Advice => {
                    let mut d = Diagnostic::warning(f.code, id, span, f.message);
                    d.severity = Severity::Advice;
                    d
                }
            };
            d = d.label(f.label);
            if let Some(h) = f.help {
                d = d.help(h);
            }
            diags.push(d);
        }
        per_file.push((path.display().to_string(), summary));
    }
    if args.json {
        let json: Vec<_> = diags.iter().map(|d| d.to_json(&db)).collect();
        report::print_json(&json);
    } else {
        report::print_human(&diags, &db);
        for (name, summary) in &per_file {
            let total: usize = summary.iter().map(|(_, n)| n).sum();
            let parts: Vec<String> = summary.iter().map(|(c, n)| format!("{c} {n}")).collect();
            if parts.is_empty() {
                eprintln!("{name}: no findings");
            } else {
                eprintln!(
                    "{name}: {} ({})",
                    report::plural(total, "finding"),
                    parts.join(", ")
                );
            }
        }
    }
    if io_error { EXIT_USAGE } else { EXIT_OK }
}

fn read(path: &PathBuf) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.is_dir() {
        return Err("is a folder; give the rulebook's text file".into());
    }
    if meta.len() > MAX_BYTES {
        return Err(format!(
            "{} bytes; the limit is {MAX_BYTES} bytes",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    // Scans and conversions are not always clean UTF-8: replace what is not, keep the rest.
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
