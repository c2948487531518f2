//! `sandtable`: the command line. Argument parsing and output formats only; every analysis
//! lives in the library crates.

mod cmd;
mod report;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    /// Resolutions per second: interpreter, JIT and a hand-written reference
    Bench(cmd::bench::Args),
    /// Audit plain-text rulebooks: numbering, references, empty tables, illegible marks
    Audit(cmd::audit::Args),
    /// Play one scenario headless (or against you): a turn-by-turn narrative and the winner
    Run(cmd::game::RunArgs),
    /// Replay a game from its JSON-lines log, checking every event against the rules
    Replay(cmd::game::ReplayArgs),
    /// Play many games in parallel: win rates with 95% intervals, mean turns and losses
    Sim(cmd::game::SimArgs),
}

/// Stack for the command thread: checking and running rules recurse over expressions, whose
/// size the grammar bounds; this leaves ample room for the largest allowed.
const STACK_BYTES: usize = 256 * 1024 * 1024;

fn main() -> ExitCode {
    match std::thread::Builder::new()
        .name("sandtable".into())
        .stack_size(STACK_BYTES)
        .spawn(run)
        .map(std::thread::JoinHandle::join)
    {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => ExitCode::from(70),
        Err(e) => {
            eprintln!("error: cannot start: {e}");
            ExitCode::from(70)
        }
    }
}

fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version are successes; usage mistakes exit 2.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let code = match cli.command {
        Command::Check(a) => cmd::check::run(a),
        Command::Prob(a) => cmd::prob::run(a),
        Command::Explain(a) => cmd::explain::run(a),
        Command::Ir(a) => cmd::ir::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Audit(a) => cmd::audit::run(a),
        Command::Run(a) => cmd::game::run(a),
        Command::Replay(a) => cmd::game::replay(a),
        Command::Sim(a) => cmd::game::sim(a),
    };
    ExitCode::from(code)
}
