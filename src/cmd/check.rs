//! `sandtable check`: compile rulesets and report every diagnostic.

use std::path::PathBuf;
use std::time::Instant;

use sandtable_compiler::{Code, Diagnostic, Severity, compile_path_with};

use crate::report::{self, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};

#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 no errors (warnings allowed), 1 errors (or warnings with --deny warnings), 2 usage or I/O error.\n\
The codes are listed in docs/language.md (\"Diagnostic codes\").\n\n\
Examples:\n  sandtable check rules/platoon\n  sandtable check rules/* --json\n  sandtable check examples/tutorial --deny warnings\n  \
sandtable check rules/platoon --allow sand::lint::unknown-value --deny sand::lint::unused\n  \
sandtable check rules/platoon --against ../shared/rulebooks/platoon.txt"
)]
pub struct Args {
    /// Ruleset folders or .sand files; each is checked as its own ruleset
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Print diagnostics as a JSON array (severity, code, message, file, line, column, help)
    #[arg(long)]
    pub json: bool,
    /// Make the warning CODE an error, or fail on any warning with `--deny warnings` (repeatable)
    #[arg(long, value_name = "CODE")]
    deny: Vec<String>,
    /// Silence the warning CODE (repeatable); errors cannot be allowed
    #[arg(long, value_name = "CODE")]
    allow: Vec<String>,
    /// Hold the encoding against the rulebook's plain text: numbered sections and items the
    /// encoding lacks or adds, titles spelled differently, stat lines and table rows whose
    /// numbers the book's row does not print (one ruleset only)
    #[arg(long, value_name = "BOOK.txt")]
    against: Option<PathBuf>,
    /// Print only the summary lines, not each diagnostic
    #[arg(long, short)]
    quiet: bool,
}

/// What `--allow` and `--deny` ask of the diagnostics.
#[derive(Debug, Default, PartialEq)]
struct Levels {
    allow: Vec<Code>,
    deny: Vec<Code>,
    deny_warnings: bool,
}

impl Levels {
    fn parse(allow: &[String], deny: &[String]) -> Result<Levels, String> {
        let mut levels = Levels::default();
        for name in deny {
            if name == "warnings" {
                levels.deny_warnings = true;
            } else {
                levels.deny.push(code_named(name, "--deny")?);
            }
        }
        for name in allow {
            let code = code_named(name, "--allow")?;
            if code.severity() == Severity::Error {
                return Err(format!(
                    "--allow {code}: it is an error, and errors cannot be allowed; fix what it \
                     reports (only warnings, `sand::lint::…`, can be silenced)"
                ));
            }
            if levels.deny.contains(&code) {
                return Err(format!(
                    "{code} is given to both --allow and --deny; keep one"
                ));
            }
            levels.allow.push(code);
        }
        Ok(levels)
    }

    /// The diagnostics as the flags want them: allowed ones dropped, denied ones errors.
    fn apply(&self, diags: &[Diagnostic]) -> Vec<Diagnostic> {
        diags
            .iter()
            .filter(|d| !d.code.sand().is_some_and(|c| self.allow.contains(&c)))
            .cloned()
            .map(|mut d| {
                if d.code.sand().is_some_and(|c| self.deny.contains(&c)) {
                    d.severity = Severity::Error;
                }
                d
            })
            .collect()
    }
}

/// The code spelled `name`, or an error naming the nearest codes.
fn code_named(name: &str, flag: &str) -> Result<Code, String> {
    if let Some(code) = Code::from_name(name) {
        return Ok(code);
    }
    let wanted = name.trim().to_ascii_lowercase();
    let tail = |s: &str| s.rsplit("::").next().unwrap_or(s).to_string();
    let mut near: Vec<(usize, &str)> = Code::ALL
        .iter()
        .map(|c| {
            let s = c.as_str();
            let d = distance(&wanted, s)
                .min(distance(&tail(&wanted), &tail(s)) + usize::from(!wanted.contains("::")));
            (d, s)
        })
        .filter(|(d, s)| *d <= 3 || (wanted.len() >= 4 && s.contains(&wanted)))
        .collect();
    near.sort();
    let near: Vec<String> = near.iter().take(5).map(|(_, s)| format!("`{s}`")).collect();
    let mut message = format!("{flag}: unknown diagnostic code `{name}`");
    if near.is_empty() {
        message.push_str(
            "; codes look like `sand::lint::unused` (docs/language.md, \"Diagnostic codes\", lists them)",
        );
    } else {
        message.push_str(&format!("; did you mean {}?", near.join(", ")));
    }
    if flag == "--deny" {
        message.push_str(" (`--deny warnings` fails on any warning)");
    }
    Err(message)
}

/// Levenshtein distance, on characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

pub fn run(args: Args) -> u8 {
    let started = Instant::now();
    let levels = match Levels::parse(&args.allow, &args.deny) {
        Ok(l) => l,
        Err(e) => {
            report::error(report::Kind::Usage, e);
            return EXIT_USAGE;
        }
    };
    if args.against.is_some() && args.paths.len() > 1 {
        report::error(
            report::Kind::Usage,
            "--against compares one ruleset with its book: give one ruleset path".to_string(),
        );
        return EXIT_USAGE;
    }
    let mut all_json = Vec::new();
    let mut io_errors: Vec<String> = Vec::new();
    let mut errors = 0;
    let mut warnings = 0;
    for path in &args.paths {
        let mut compiled = match compile_path_with(path, report::load_options()) {
            Ok(c) => c,
            Err(e) => {
                if !args.json {
                    eprintln!("error: {e}");
                }
                io_errors.push(e.to_string());
                continue;
            }
        };
        let mut diagnostics = compiled.diagnostics.clone();
        if !compiled.has_errors() {
            diagnostics.extend(crate::cmd::matchups::lints(&compiled));
        }
        let files = compiled.db.len();
        if let Some(book) = &args.against {
            match crate::cmd::against::diagnostics(&mut compiled, book) {
                Ok(found) => diagnostics.extend(found),
                Err(e) => {
                    if !args.json {
                        eprintln!("error: {e}");
                    }
                    io_errors.push(e);
                }
            }
        }
        let diagnostics = levels.apply(&diagnostics);
        let (e, w) = report::counts(&diagnostics);
        errors += e;
        warnings += w;
        if args.json {
            all_json.extend(diagnostics.iter().map(|d| d.to_json(&compiled.db)));
        } else {
            if !args.quiet {
                report::print_human(&diagnostics, &compiled.db);
            }
            let advice = diagnostics
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
                files,
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
    } else if errors > 0 || (levels.deny_warnings && warnings > 0) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn allow_and_deny_take_codes_and_refuse_what_they_cannot_do() {
        let l = Levels::parse(
            &strings(&["sand::lint::unused"]),
            &strings(&["warnings", "sand::lint::band-gap"]),
        )
        .unwrap();
        assert_eq!(l.allow, vec![Code::LintUnused]);
        assert_eq!(l.deny, vec![Code::LintBandGap]);
        assert!(l.deny_warnings);
        let e = Levels::parse(&strings(&["sand::type::mismatch"]), &[]).unwrap_err();
        assert!(e.contains("errors cannot be allowed"), "{e}");
        let e = Levels::parse(
            &strings(&["sand::lint::unused"]),
            &strings(&["sand::lint::unused"]),
        )
        .unwrap_err();
        assert!(e.contains("both"), "{e}");
    }

    #[test]
    fn an_unknown_code_names_the_nearest() {
        let e = code_named("sand::lint::unsued", "--allow").unwrap_err();
        assert!(e.contains("did you mean `sand::lint::unused`"), "{e}");
        let e = code_named("band-gap", "--deny").unwrap_err();
        assert!(e.contains("`sand::lint::band-gap`"), "{e}");
        let e = code_named("xyzzy-plugh-quux", "--deny").unwrap_err();
        assert!(e.contains("codes look like"), "{e}");
    }
}
