//! `sandtable check`: compile rulesets and report every diagnostic.

use std::path::PathBuf;
use std::time::Instant;

use sandtable_compiler::{Severity, compile_path_with};

use crate::report::{self, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 no errors (warnings allowed), 1 errors (or warnings with --deny warnings), 2 usage or I/O error.\n\n\
Examples:\n  sandtable check rules/platoon\n  sandtable check rules/* --json\n  sandtable check examples/tutorial --deny warnings"
)]
pub struct Args {
    /// Ruleset folders or .sand files; each is checked as its own ruleset
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Print diagnostics as a JSON array (severity, code, message, file, line, column, help)
    #[arg(long)]
    pub json: bool,
    /// Treat warnings as errors (`--deny warnings`)
    #[arg(long, value_name = "WHAT", value_parser = ["warnings"])]
    deny: Option<String>,
    /// Print only the summary lines, not each diagnostic
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(args: Args) -> u8 {
    let started = Instant::now();
    let mut all_json = Vec::new();
    let mut io_errors: Vec<String> = Vec::new();
    let mut errors = 0;
    let mut warnings = 0;
    for path in &args.paths {
        let compiled = match compile_path_with(path, report::load_options()) {
            Ok(c) => c,
            Err(e) => {
                if !args.json {
                    eprintln!("error: {e}");
                }
                io_errors.push(e.to_string());
                continue;
            }
        };
        let (e, w) = report::counts(&compiled.diagnostics);
        errors += e;
        warnings += w;
        if args.json {
            all_json.extend(compiled.diagnostics.iter().map(|d| d.to_json(&compiled.db)));
        } else {
            if !args.quiet {
                report::print_human(&compiled.diagnostics, &compiled.db);
            }
            let advice = compiled
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Advice)
                .count();
            let mut line = format!(
                "{}: {}, {}",
                path.display(),
                report::plural(e, "error"),
                report::plural(w, "warning")
            );
            if advice > 0 {
                line.push_str(&format!(", {advice} advice"));
            }
            line.push_str(&format!(
                " ({} files, {} sections, {} resolutions)",
                compiled.db.len(),
                compiled.program.sections.len(),
                compiled
                    .program
                    .procs
                    .iter()
                    .filter(|p| p.kind == sandtable_compiler::ir::ProcKind::Resolve)
                    .count()
            ));
            eprintln!("{line}");
        }
    }
    if args.json && !io_errors.is_empty() {
        // An empty array would read as "no findings": an unreadable ruleset is an error
        // object, with the diagnostics of the rulesets that could be read.
        let mut v = report::error_json(report::Kind::Io, &io_errors.join("; "));
        v["error"]["diagnostics"] = serde_json::json!(all_json);
        report::print_json(&v);
    } else if args.json {
        report::print_json(&all_json);
    } else if args.paths.len() > 1 {
        eprintln!(
            "total: {}, {} in {:.1} ms",
            report::plural(errors, "error"),
            report::plural(warnings, "warning"),
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    if !io_errors.is_empty() {
        EXIT_USAGE
    } else if errors > 0 || (args.deny.is_some() && warnings > 0) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}
