//! Printing diagnostics: rendered reports for people, JSON for machines.

use std::io::{IsTerminal, Write};

use sandtable_compiler::diagnostic::render;
use sandtable_compiler::{Diagnostic, Severity, SourceDb};

/// Exit codes shared by every subcommand.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

pub fn print_human(diags: &[Diagnostic], db: &SourceDb) {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut err = std::io::stderr().lock();
    for d in diags {
        let _ = write!(err, "{}", render::to_terminal_string(d, db, color));
    }
}

pub fn counts(diags: &[Diagnostic]) -> (usize, usize) {
    let e = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let w = diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    (e, w)
}

pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Print a JSON value to stdout; a closed pipe is not an error worth a panic.
pub fn print_json<T: serde::Serialize>(value: &T) {
    let mut out = std::io::stdout().lock();
    if serde_json::to_writer_pretty(&mut out, value).is_ok() {
        let _ = writeln!(out);
    }
}

/// Compile a ruleset for a command that runs it: print its errors and refuse when it has any.
pub fn load_ruleset(path: &std::path::Path) -> Result<sandtable_compiler::Compiled, u8> {
    match sandtable_compiler::compile_path(path) {
        Ok(c) if c.has_errors() => {
            let errors: Vec<Diagnostic> = c
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .cloned()
                .collect();
            print_human(&errors, &c.db);
            eprintln!(
                "error: {} has {}; fix them first (`sandtable check {}`)",
                path.display(),
                plural(errors.len(), "error"),
                path.display()
            );
            Err(EXIT_FINDINGS)
        }
        Ok(c) => Ok(c),
        Err(e) => {
            eprintln!("error: {e}");
            Err(EXIT_USAGE)
        }
    }
}

/// Parse repeated `NAME=VALUE` options.
pub fn pairs(items: &[String], flag: &str) -> Result<Vec<(String, String)>, u8> {
    items
        .iter()
        .map(|s| {
            sandtable_runtime::query::split_kv(s).map_err(|e| {
                eprintln!("error: {flag}: {e}");
                EXIT_USAGE
            })
        })
        .collect()
}

/// `--backend interp|jit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    Interp,
    Jit,
}

/// The requested backend; when the JIT cannot start on this machine, the interpreter, with a
/// note on stderr.
pub fn backend<'p>(
    program: &'p sandtable_compiler::ir::Program,
    assumptions: &'p sandtable_runtime::interp::Assumptions,
    which: BackendArg,
) -> sandtable_runtime::jit::Backend<'p> {
    use sandtable_runtime::jit::{Backend, BackendKind};
    let kind = match which {
        BackendArg::Interp => BackendKind::Interp,
        BackendArg::Jit => BackendKind::Jit,
    };
    match Backend::new(program, assumptions, kind) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("note: the JIT is not available ({e}); using the interpreter");
            Backend {
                program,
                assumptions,
                jit: None,
            }
        }
    }
}
