//! Resource limits at the limit and one past it (docs/limits.md): every
//! `tests/limits/*.sand` file is one case, run through the CLI as its header says.
//!
//! ```text
//! // limit: what is limited, its figure and the constant
//! // run: ARGS           ({case} is the case file's path)
//! // exit: CODE
//! // expect: TEXT        (one or more; found in stdout or stderr)
//! // absent: TEXT        (none or more; found in neither)
//! ```
//!
//! Going past a limit must be a clean refusal that gives the figure, never a panic.

use std::path::Path;
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

mod support;

const CASES: &str = "tests/limits";

fn main() {
    let args = Arguments::from_args();
    let cases = support::case_files(CASES, "sand");
    let mut trials: Vec<Trial> = cases
        .iter()
        .map(|case| {
            let case = case.clone();
            Trial::test(support::stem(&case), move || check_case(&case))
        })
        .collect();
    trials.push(Trial::test(
        "every_case_is_listed_in_docs_limits_md",
        move || listed_in_docs(&cases),
    ));
    libtest_mimic::run(&args, trials).exit();
}

struct Header {
    run: Vec<String>,
    exit: i32,
    expect: Vec<String>,
    absent: Vec<String>,
}

fn header(case: &Path, text: &str) -> Result<Header, Failed> {
    let field = |line: &str, key: &str| {
        line.strip_prefix(&format!("// {key}: "))
            .map(str::to_string)
    };
    let (mut run, mut exit, mut limit) = (None, None, false);
    let (mut expect, mut absent) = (Vec::new(), Vec::new());
    for line in text.lines().take_while(|l| l.starts_with("//")) {
        if let Some(v) = field(line, "run") {
            let path = case.to_string_lossy();
            run = Some(
                v.split_whitespace()
                    .map(|a| a.replace("{case}", &path))
                    .collect(),
            );
        } else if let Some(v) = field(line, "exit") {
            exit = Some(v.parse().map_err(|e| format!("exit: {e}"))?);
        } else if let Some(v) = field(line, "expect") {
            expect.push(v);
        } else if let Some(v) = field(line, "absent") {
            absent.push(v);
        } else if field(line, "limit").is_some() {
            limit = true;
        }
    }
    match (run, exit, limit && !expect.is_empty()) {
        (Some(run), Some(exit), true) => Ok(Header {
            run,
            exit,
            expect,
            absent,
        }),
        _ => Err("the header needs `// limit:`, `// run:`, `// exit:` and `// expect:`".into()),
    }
}

fn check_case(case: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(case).map_err(|e| format!("{}: {e}", case.display()))?;
    let h = header(case, &text)?;
    let out = Command::new(env!("CARGO_BIN_EXE_sandtable"))
        .args(&h.run)
        .output()
        .map_err(|e| format!("sandtable: {e}"))?;
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let tail = || {
        all.chars()
            .rev()
            .take(2000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>()
    };
    if all.contains("panicked") || all.contains("internal error") {
        return Err(format!("a panic:\n{}", tail()).into());
    }
    if out.status.code() != Some(h.exit) {
        return Err(format!(
            "exit {:?}, expected {}:\n{}",
            out.status.code(),
            h.exit,
            tail()
        )
        .into());
    }
    for e in &h.expect {
        if !all.contains(e.as_str()) {
            return Err(format!("`{e}` not in the output:\n{}", tail()).into());
        }
    }
    for a in &h.absent {
        if all.contains(a.as_str()) {
            return Err(format!("`{a}` is in the output:\n{}", tail()).into());
        }
    }
    Ok(())
}

/// docs/limits.md names each case, so the table and the tests stay one list.
fn listed_in_docs(cases: &[std::path::PathBuf]) -> Result<(), Failed> {
    let doc =
        std::fs::read_to_string("docs/limits.md").map_err(|e| format!("docs/limits.md: {e}"))?;
    let missing: Vec<String> = cases
        .iter()
        .map(|c| support::stem(c))
        .filter(|s| !doc.contains(&format!("`{s}`")))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("docs/limits.md does not name: {}", missing.join(", ")).into())
    }
}
