//! IR golden files: every `tests/ir/NAME.sand` is lowered with `sandtable ir` and its JSON
//! must equal `tests/ir/NAME.ir.json` byte for byte. The cases are small, representative
//! programs (dice, a stack and bands; a table; a procedure with `choose`; a scenario), so a
//! change to the IR, the contract between compiler and runtime, shows as a reviewed diff.
//!
//! Each case file is its own test, found by listing the folder at run time. A change of the
//! IR that is meant re-records them: `SANDTABLE_BLESS=1 cargo test --test ir`, then review
//! the diff (and bump `IR_VERSION` when the shape changed).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

mod support;
use support::{compare, stem};

const CASES: &str = "tests/ir";
const GOLDEN: &str = ".ir.json";

fn main() {
    let args = Arguments::from_args();
    let cases = support::case_files(CASES, "sand");
    let mut trials: Vec<Trial> = cases
        .iter()
        .map(|case| {
            let case = case.clone();
            Trial::test(stem(&case), move || check_case(&case))
        })
        .collect();
    trials.push(Trial::test("every_golden_file_has_a_case", move || {
        goldens_match_cases(&cases)
    }));
    libtest_mimic::run(&args, trials).exit();
}

fn golden(case: &Path) -> PathBuf {
    Path::new(CASES).join(format!("{}{GOLDEN}", stem(case)))
}

fn check_case(case: &Path) -> Result<(), Failed> {
    let out = Command::new(env!("CARGO_BIN_EXE_sandtable"))
        .arg("ir")
        .arg(case)
        .output()
        .map_err(|e| format!("cannot start sandtable: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`sandtable ir {}` exited with {}: {}",
            case.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    compare(
        &golden(case),
        &String::from_utf8_lossy(&out.stdout),
        "the IR",
    )
}

/// A golden file whose case was renamed or deleted would otherwise linger unchecked.
fn goldens_match_cases(cases: &[PathBuf]) -> Result<(), Failed> {
    let names: BTreeSet<String> = cases.iter().map(|c| stem(c)).collect();
    let orphans: Vec<String> = std::fs::read_dir(CASES)
        .map_err(|e| format!("{CASES}: {e}"))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_string_lossy()
                .strip_suffix(GOLDEN)
                .map(str::to_string)
        })
        .filter(|n| !names.contains(n))
        .collect();
    if orphans.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "IR golden files without a case in {CASES}: {}",
            orphans.join(", ")
        )
        .into())
    }
}
