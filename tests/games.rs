//! Golden games: each `tests/games/NAME.args` holds the arguments of one `sandtable` command
//! (one line, `{log}` standing for a temporary log file). Its standard output must equal
//! `NAME.stdout` byte for byte and, when the command writes a log, the log's events (every line
//! after the header) must equal `NAME.events.jsonl`.
//!
//! These pin the engine's behaviour for fixed seeds, so a refactor of the engine (the stepwise
//! loop, typed scenarios) is proven not to change a single game. A change of behaviour that is
//! meant re-records them: `SANDTABLE_BLESS=1 cargo test --test games`, then review the diff.

use std::path::Path;
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

mod support;
use support::{compare, stem};

const CASES: &str = "tests/games";

/// Output lines (of `--json`) that measure the machine rather than the games.
const VOLATILE: &[&str] = &["\"seconds\":", "\"playouts_per_second\":"];

fn main() {
    let args = Arguments::from_args();
    let trials = support::case_files(CASES, "args")
        .into_iter()
        .map(|case| Trial::test(stem(&case), move || check_case(&case)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn check_case(case: &Path) -> Result<(), Failed> {
    let name = stem(case);
    let line = std::fs::read_to_string(case).map_err(|e| format!("{}: {e}", case.display()))?;
    let dir = std::env::temp_dir().join(format!("sandtable-games-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let log = dir.join("game.jsonl");
    let args: Vec<String> = line
        .split_whitespace()
        .map(|a| a.replace("{log}", &log.to_string_lossy()))
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_sandtable"))
        .args(&args)
        .output()
        .map_err(|e| format!("cannot start sandtable: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`sandtable {}` exited with {}: {}",
            line.trim(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    // Timings vary from run to run; everything else must not.
    let stdout: String = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !VOLATILE.iter().any(|k| l.trim_start().starts_with(k)))
        .map(|l| format!("{l}\n"))
        .collect();
    compare(&case.with_extension("stdout"), &stdout, "standard output")?;
    if line.contains("{log}") {
        let text = std::fs::read_to_string(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        // The header names the path and the build; the events are the game.
        let events: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
        compare(
            &case.with_extension("events.jsonl"),
            &events,
            "the log's events",
        )?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
