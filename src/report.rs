//! Printing diagnostics: rendered reports for people, JSON for machines.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use sandtable_compiler::diagnostic::render;
use sandtable_compiler::{Diagnostic, Severity, SourceDb};

/// Exit codes shared by every subcommand.
pub const EXIT_OK: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
/// An internal error (a bug): the panic hook's exit status, as `EX_SOFTWARE`.
pub const EXIT_INTERNAL: u8 = 70;

/// Most diagnostics rendered for people per ruleset or audit run; the rest are counted. 4,000
/// warnings on one long line once made 193 MB of output. `--json` keeps every record (each
/// with its text capped).
pub const MAX_SHOWN: usize = 100;

/// Whether the running command was asked for `--json`: its errors are then JSON objects on
/// stdout (`{"error": {"kind", "message"}}`), not text on stderr.
static JSON: AtomicBool = AtomicBool::new(false);
/// `--allow-outside-imports`, for every command that loads a ruleset.
static OUTSIDE_IMPORTS: AtomicBool = AtomicBool::new(false);

pub fn set_json(on: bool) {
    JSON.store(on, Ordering::Relaxed);
}

pub fn json_mode() -> bool {
    JSON.load(Ordering::Relaxed)
}

pub fn allow_outside_imports(on: bool) {
    OUTSIDE_IMPORTS.store(on, Ordering::Relaxed);
}

/// How a ruleset is loaded, per the command line.
pub fn load_options() -> sandtable_compiler::LoadOptions {
    sandtable_compiler::LoadOptions {
        allow_outside_imports: OUTSIDE_IMPORTS.load(Ordering::Relaxed),
    }
}

/// What kind of error a JSON error object reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The command line is wrong.
    Usage,
    /// A file could not be read or written.
    Io,
    /// The rules have errors.
    Rules,
    /// The query (parameters, assumptions, resolution) does not fit the rules.
    Query,
    /// Running the rules failed.
    Run,
    /// A log does not replay.
    Replay,
    /// A signal stopped the command.
    Interrupted,
    /// A bug.
    Internal,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Usage => "usage",
            Kind::Io => "io",
            Kind::Rules => "rules",
            Kind::Query => "query",
            Kind::Run => "run",
            Kind::Replay => "replay",
            Kind::Interrupted => "interrupted",
            Kind::Internal => "internal",
        }
    }
}

/// The JSON object of an error.
pub fn error_json(kind: Kind, message: &str) -> serde_json::Value {
    serde_json::json!({"error": {"kind": kind.name(), "message": message}})
}

/// Most characters of one error message. Messages quote the user's input (a name from an
/// assumptions file, a value given to `--set`), which can be megabytes long.
pub const MAX_ERROR_CHARS: usize = 4_000;

fn capped(message: &str) -> String {
    sandtable_compiler::diagnostic::cap_chars(message, MAX_ERROR_CHARS).into_owned()
}

/// Report an error: `error: MESSAGE` on stderr, or with `--json` an error object on stdout.
pub fn error(kind: Kind, message: impl std::fmt::Display) {
    let message = capped(&message.to_string());
    if json_mode() {
        print_json(&error_json(kind, &message));
    } else {
        eprintln!("error: {message}");
    }
}

pub fn print_human(diags: &[Diagnostic], db: &SourceDb) {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut err = std::io::stderr().lock();
    for d in diags.iter().take(MAX_SHOWN) {
        let _ = write!(err, "{}", render::to_terminal_string(d, db, color));
    }
    if let Some(rest) = diags.len().checked_sub(MAX_SHOWN).filter(|n| *n > 0) {
        let _ = writeln!(
            err,
            "… and {} not shown (the first {MAX_SHOWN} are; `--json` lists them all)",
            plural(rest, "more diagnostic")
        );
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
    match sandtable_compiler::compile_path_with(path, load_options()) {
        Ok(c) if c.has_errors() => {
            let errors: Vec<Diagnostic> = c
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .cloned()
                .collect();
            let message = format!(
                "{} has {}; fix them first (`sandtable check {}`)",
                path.display(),
                plural(errors.len(), "error"),
                path.display()
            );
            if json_mode() {
                let mut v = error_json(Kind::Rules, &message);
                let records: Vec<_> = errors.iter().map(|d| d.to_json(&c.db)).collect();
                v["error"]["diagnostics"] = serde_json::json!(records);
                print_json(&v);
            } else {
                print_human(&errors, &c.db);
                eprintln!("error: {message}");
            }
            Err(EXIT_FINDINGS)
        }
        Ok(c) => Ok(c),
        Err(e) => {
            error(Kind::Io, e);
            Err(EXIT_USAGE)
        }
    }
}

/// Report values refused for the book's unknowns: the problems of an assumptions file as
/// diagnostics at their places (as `check` shows those of a `.sand` file), else a message.
pub fn refusal(kind: Kind, r: sandtable_compiler::assume::Refusal) {
    use sandtable_compiler::assume::Refusal;
    match r {
        Refusal::Message(m) => error(kind, m),
        Refusal::Files { db, diagnostics } => {
            let message = format!(
                "the assumptions have {}; fix them first",
                plural(diagnostics.len(), "error")
            );
            if json_mode() {
                let mut v = error_json(kind, &message);
                let records: Vec<_> = diagnostics.iter().map(|d| d.to_json(&db)).collect();
                v["error"]["diagnostics"] = serde_json::json!(records);
                print_json(&v);
            } else {
                print_human(&diagnostics, &db);
                eprintln!("error: {message}");
            }
        }
    }
}

/// Parse repeated `NAME=VALUE` options.
pub fn pairs(items: &[String], flag: &str) -> Result<Vec<(String, String)>, u8> {
    items
        .iter()
        .map(|s| {
            sandtable_compiler::assume::split_kv(s).map_err(|e| {
                error(Kind::Usage, format!("{flag}: {e}"));
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

impl BackendArg {
    pub fn kind(self) -> sandtable_runtime::jit::BackendKind {
        use sandtable_runtime::jit::BackendKind;
        match self {
            BackendArg::Interp => BackendKind::Interp,
            BackendArg::Jit => BackendKind::Jit,
        }
    }
}

/// The requested backend; when the JIT cannot start on this machine, the interpreter, with a
/// note on stderr.
pub fn backend<'p>(
    program: &'p sandtable_compiler::ir::Program,
    assumptions: &'p sandtable_runtime::interp::Assumptions,
    which: BackendArg,
) -> sandtable_runtime::jit::Backend<'p> {
    use sandtable_runtime::jit::Backend;
    match Backend::new(program, assumptions, which.kind()) {
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

/// What every command that runs one resolution takes: the ruleset, the resolution, its
/// parameters and the book's unknowns.
#[derive(clap::Args)]
pub struct QueryArgs {
    /// Ruleset folder or .sand file
    pub ruleset: std::path::PathBuf,
    /// Name of the resolution
    pub resolution: String,
    /// Set a parameter: NAME=VALUE (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub sets: Vec<String>,
    /// Supply a value for one of the book's unknowns: NAME=VALUE (repeatable)
    #[arg(long = "assume", value_name = "NAME=VALUE")]
    pub assumes: Vec<String>,
    /// Assumptions file (`assume NAME = value "why"` lines; repeatable)
    #[arg(long = "assumptions", value_name = "FILE")]
    pub assumption_files: Vec<std::path::PathBuf>,
}

/// A resolution ready to run: its compiled ruleset, id, arguments and assumptions.
pub struct Prepared {
    pub compiled: sandtable_compiler::Compiled,
    pub proc: u32,
    pub args: Vec<sandtable_runtime::Val>,
    pub assumptions: sandtable_runtime::interp::Assumptions,
}

impl Prepared {
    /// `name = value` for each parameter, for headers.
    pub fn inputs(&self) -> Vec<(String, String)> {
        let p = &self.compiled.program;
        p.procs[self.proc as usize]
            .params
            .iter()
            .zip(&self.args)
            .map(|(pa, v)| (pa.name.clone(), v.show_typed(p, &pa.ty)))
            .collect()
    }
}

/// Compile the ruleset and bind the query; every refusal is printed and becomes an exit code.
pub fn prepare(q: &QueryArgs) -> Result<Prepared, u8> {
    use sandtable_compiler::assume;
    let compiled = load_ruleset(&q.ruleset)?;
    let sets = pairs(&q.sets, "--set")?;
    let assumes = pairs(&q.assumes, "--assume")?;
    let program = &compiled.program;
    let bound = (|| -> Result<_, assume::Refusal> {
        let proc = assume::find_proc(program, &q.resolution)?;
        let args = assume::bind_args(program, proc, &sets)?;
        let files: Vec<&std::path::Path> = q
            .assumption_files
            .iter()
            .map(std::path::PathBuf::as_path)
            .collect();
        let supplied = assume::supply_paths(program, &assumes, &files)?;
        Ok((proc, args, supplied))
    })();
    match bound {
        Ok((proc, args, supplied)) => Ok(Prepared {
            proc,
            args: sandtable_runtime::query::args(&args),
            assumptions: sandtable_runtime::query::assumptions(&supplied),
            compiled,
        }),
        Err(e) => {
            refusal(Kind::Query, e);
            Err(EXIT_FINDINGS)
        }
    }
}

/// A progress bar on stderr for long runs, shown only when stderr is a terminal (so pipes,
/// logs and tests see nothing) and only for runs long enough to need one.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    /// Runs shorter than this finish before a bar would be worth drawing.
    const MIN_LEN: u64 = 2_000_000;

    pub fn new(len: u64, what: &str) -> Self {
        Self::at_least(len, what, Self::MIN_LEN)
    }

    /// A bar for runs of at least `min` steps.
    pub fn at_least(len: u64, what: &str, min: u64) -> Self {
        let show = len >= min && std::io::stderr().is_terminal();
        let bar = show.then(|| {
            let b = indicatif::ProgressBar::new(len);
            b.set_style(
                indicatif::ProgressStyle::with_template(&format!(
                    "{{bar:40}} {{human_pos}}/{{human_len}} {what} ({{eta}} left)"
                ))
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Progress { bar }
    }

    pub fn set(&mut self, pos: u64) {
        if let Some(b) = &self.bar {
            b.set_position(pos);
        }
    }

    /// Advance by `n` (from any thread).
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_message_is_cut_one_character_past_the_limit() {
        let at = "x".repeat(MAX_ERROR_CHARS);
        assert_eq!(capped(&at), at);
        let past = capped(&"x".repeat(MAX_ERROR_CHARS + 1));
        assert!(past.ends_with("… (1 more characters)"), "{past}");
    }
}
