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

const CASES: &str = "tests/ir";
const GOLDEN: &str = ".ir.json";

fn main() {
    let args = Arguments::from_args();
    let cases = case_files();
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

fn case_files() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(CASES)
        .expect("tests/ir exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sand"))
        .collect();
    cases.sort();
    cases
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn golden(case: &Path) -> PathBuf {
    Path::new(CASES).join(format!("{}{GOLDEN}", stem(case)))
}

fn bless() -> bool {
    std::env::var_os("SANDTABLE_BLESS").is_some_and(|v| v == "1")
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
    let actual = String::from_utf8_lossy(&out.stdout).into_owned();
    let expected = golden(case);
    if bless() {
        std::fs::write(&expected, &actual).map_err(|e| format!("{}: {e}", expected.display()))?;
        return Ok(());
    }
    let want = std::fs::read_to_string(&expected).map_err(|e| {
        format!(
            "{}: {e} (record it with SANDTABLE_BLESS=1)",
            expected.display()
        )
    })?;
    if want == actual {
        return Ok(());
    }
    let line = want
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want.lines().count().min(actual.lines().count()));
    Err(format!(
        "the IR differs from {} first at line {} (SANDTABLE_BLESS=1 re-records it; review the diff):\n  expected: {}\n  actual:   {}",
        expected.display(),
        line + 1,
        want.lines().nth(line).unwrap_or("<end>"),
        actual.lines().nth(line).unwrap_or("<end>"),
    )
    .into())
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
