//! `sandtable`: the command line. Argument parsing and output formats only; every analysis
//! lives in the library crates.

mod cmd;
mod interrupt;
mod report;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

// A game listing its legal choices makes and drops many small buffers; glibc's allocator
// spent about an eighth of a playout's instructions on them (callgrind, `sim` of Platoon's
// Protecting the Flank). mimalloc serves such sizes from per-thread pages.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "sandtable",
    version,
    about = "Tabletop wargame rules as code: check, analyse and run .sand rulesets",
    long_about = "Tabletop wargame rules as code.\n\nA ruleset is a folder of .sand files (or one file). `check` finds errors and the \
                  book's own inconsistencies, `audit` checks a plain-text rulebook before it is encoded."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Let imports and linked `.sand` files reach outside the ruleset's folder (if you trust it)
    #[arg(long, global = true)]
    allow_outside_imports: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Check rulesets: errors, and lints for translators (numbering, references, unknowns, bands, tables)
    Check(cmd::check::Args),
    /// Exact outcome probabilities of a resolution (or a Monte Carlo estimate)
    Prob(cmd::prob::Args),
    /// One sampled resolution, step by step, with rule citations
    Explain(cmd::explain::Args),
    /// Print the checked IR as JSON
    Ir(cmd::ir::Args),
    /// Speed: resolutions per second (interpreter, JIT, a hand-written reference), or every measure at once (--suite)
    Bench(cmd::bench::Args),
    /// Audit plain-text rulebooks: numbering, references, missing content, names, conversion damage
    Audit(cmd::audit::Args),
    /// Exact outcome chances of every pairing of unit kinds in the actions that pit one piece's stats against another's
    Matchups(cmd::matchups::Args),
    /// List a ruleset's scenarios: board, turns, forces, activation, victory and the assumptions each needs
    Scenarios(cmd::scenarios::Args),
    /// Play one scenario headless (or against you): a turn-by-turn narrative and the winner
    Run(cmd::game::RunArgs),
    /// Replay a game from its JSON-lines log, checking every event against the rules
    Replay(cmd::game::ReplayArgs),
    /// Go on with a game saved by `run --stop-after N --save FILE` (or `save FILE` at a prompt)
    Resume(cmd::game::ResumeArgs),
    /// Play many games in parallel: win rates with 95% intervals, mean turns and losses
    Sim(cmd::game::SimArgs),
}

/// Stack for the command thread: checking and running rules recurse over expressions, whose
/// size the grammar bounds; this leaves ample room for the largest allowed.
const STACK_BYTES: usize = 256 * 1024 * 1024;

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        let message = info.payload_as_str().unwrap_or("(no message)");
        let location = info.location().map(|l| l.to_string());
        let backtrace = std::backtrace::Backtrace::capture();
        let detail = (backtrace.status() == std::backtrace::BacktraceStatus::Captured)
            .then(|| format!("{}\n{backtrace}", location.unwrap_or_default()));
        let text = panic_report(message, detail.as_deref());
        if report::json_mode() {
            report::print_json(&report::error_json(report::Kind::Internal, &text));
        }
        eprintln!("{text}");
    }));
    match std::thread::Builder::new()
        .name("sandtable".into())
        .stack_size(STACK_BYTES)
        .spawn(run)
        .map(std::thread::JoinHandle::join)
    {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => ExitCode::from(report::EXIT_INTERNAL),
        Err(e) => {
            eprintln!("error: cannot start: {e}");
            ExitCode::from(report::EXIT_INTERNAL)
        }
    }
}

/// What a panic prints: a short request to report it, the version and the message. Where it
/// happened (a path on the build machine) and the backtrace only when `RUST_BACKTRACE` asks
/// for them (`detail`).
fn panic_report(message: &str, detail: Option<&str>) -> String {
    let mut text = format!(
        "internal error: {message}\nThis is a bug in sandtable {}; please report it with the command and files that caused it.",
        env!("CARGO_PKG_VERSION")
    );
    if let Some(d) = detail {
        text.push('\n');
        text.push_str(d);
    }
    text
}

fn run() -> ExitCode {
    // Known before parsing, so a usage error can be reported as JSON too.
    let json = std::env::args_os().skip(1).any(|a| a == "--json");
    report::set_json(json);
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version are successes; usage mistakes exit 2.
            let code = if e.use_stderr() { 2 } else { 0 };
            if json && e.use_stderr() {
                // The message without the usage lines and hints that follow a blank line.
                let text = e.render().to_string();
                let message: Vec<&str> = text
                    .lines()
                    .take_while(|l| !l.trim().is_empty())
                    .map(str::trim)
                    .collect();
                report::error(
                    report::Kind::Usage,
                    message.join(" ").trim_start_matches("error: ").to_string(),
                );
            } else {
                let _ = e.print();
            }
            return ExitCode::from(code);
        }
    };
    report::allow_outside_imports(cli.allow_outside_imports);
    report::set_json(match &cli.command {
        Command::Check(a) => a.json,
        Command::Prob(a) => a.json,
        Command::Explain(a) => a.json,
        Command::Ir(_) => false,
        Command::Scenarios(a) => a.json,
        Command::Bench(a) => a.json,
        Command::Audit(a) => a.json,
        Command::Matchups(a) => a.json,
        Command::Run(a) => a.json,
        Command::Replay(a) => a.json,
        Command::Resume(a) => a.json,
        Command::Sim(a) => a.json,
    });
    // A panic on purpose, to test the panic hook; debug builds only, so never shipped.
    #[cfg(debug_assertions)]
    if std::env::var_os("SANDTABLE_DEBUG_PANIC").is_some() {
        panic!("a panic asked for by SANDTABLE_DEBUG_PANIC");
    }
    let code = match cli.command {
        Command::Check(a) => cmd::check::run(a),
        Command::Prob(a) => cmd::prob::run(a),
        Command::Explain(a) => cmd::explain::run(a),
        Command::Ir(a) => cmd::ir::run(a),
        Command::Scenarios(a) => cmd::scenarios::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Audit(a) => cmd::audit::run(a),
        Command::Matchups(a) => cmd::matchups::run(a),
        Command::Run(a) => cmd::game::run(a),
        Command::Replay(a) => cmd::game::replay(a),
        Command::Resume(a) => cmd::game::resume(a),
        Command::Sim(a) => cmd::game::sim(a),
    };
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::panic_report;

    #[test]
    fn a_panic_report_is_short_and_names_no_build_path() {
        let t = panic_report("index out of bounds", None);
        assert!(
            t.starts_with("internal error: index out of bounds\n"),
            "{t}"
        );
        assert!(t.contains(env!("CARGO_PKG_VERSION")), "{t}");
        assert!(t.contains("please report"), "{t}");
        assert!(!t.contains(".rs"), "{t}");
        assert_eq!(t.lines().count(), 2);
        let with = panic_report("x", Some("src/main.rs:1:1\nbacktrace"));
        assert!(with.ends_with("src/main.rs:1:1\nbacktrace"), "{with}");
    }
}
