//! `sandtable audit`: structure and cross-reference check of plain-text rulebooks. The
//! analysis is `sandtable-audit`; this turns its findings into the same diagnostics `check`
//! prints.

use std::path::{Path, PathBuf};

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
    pub json: bool,
}

/// Largest rulebook accepted.
pub const MAX_RULEBOOK_BYTES: u64 = 16 * 1024 * 1024;

pub fn run(args: Args) -> u8 {
    let mut db = SourceDb::default();
    let mut diags = Vec::new();
    let mut io_errors: Vec<String> = Vec::new();
    let mut per_file = Vec::new();
    for path in &args.files {
        let text = match read(path) {
            Ok(t) => t,
            Err(e) => {
                let message = format!("cannot read {}: {e}", path.display());
                if !args.json {
                    eprintln!("error: {message}");
                }
                io_errors.push(message);
                continue;
            }
        };
        let findings = sandtable_audit::audit(&text);
        let summary = sandtable_audit::summary(&findings);
        let id = db.add(SourceFile::new(path.display().to_string(), None, text));
        for f in findings {
            let span = sandtable_grammar::ast::Span::new(f.span.start, f.span.end);
            let severity = match f.severity {
                sandtable_audit::Severity::Warning => Severity::Warning,
                sandtable_audit::Severity::Advice => Severity::Advice,
            };
            let mut d = Diagnostic::audit(severity, f.code, id, span, f.message);
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
        if io_errors.is_empty() {
            report::print_json(&json);
        } else {
            let mut v = report::error_json(report::Kind::Io, &io_errors.join("; "));
            v["error"]["diagnostics"] = serde_json::json!(json);
            report::print_json(&v);
        }
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
    if io_errors.is_empty() {
        EXIT_OK
    } else {
        EXIT_USAGE
    }
}

pub(crate) fn read(path: &Path) -> Result<String, String> {
    if path.is_dir() {
        return Err("it is a folder; give the rulebook's text file".into());
    }
    // Scans and conversions are not always clean UTF-8: replace what is not, keep the rest.
    sandtable_compiler::source::read_text_lossy(path, MAX_RULEBOOK_BYTES).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rulebook_of_exactly_the_limit_is_read_and_one_byte_more_is_refused() {
        let path = std::env::temp_dir().join(format!("sandtable-audit-{}.txt", std::process::id()));
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(MAX_RULEBOOK_BYTES).unwrap();
        assert_eq!(
            read(&path).map(|t| t.len()),
            Ok(MAX_RULEBOOK_BYTES as usize)
        );
        f.set_len(MAX_RULEBOOK_BYTES + 1).unwrap();
        assert!(read(&path).unwrap_err().contains("larger than the limit"));
        let _ = std::fs::remove_file(path);
        assert!(
            read(Path::new("/dev/zero"))
                .unwrap_err()
                .contains("not a regular file")
        );
    }
}
