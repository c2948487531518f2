//! Golden diagnostics: every `tests/diagnostics/*.sand` file is checked and its rendered
//! diagnostics compared with a reviewed snapshot in `tests/snapshots/NAME.snap`.
//!
//! Each case file is its own test (`cargo test --test golden -- NAME` runs one), found by
//! listing the folder at run time: a new case needs no Rust edit. A case without a snapshot
//! fails (insta writes `NAME.snap.new` to review), and so does a snapshot without a case.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

mod support;
use sandtable_compiler::Code;
use sandtable_compiler::diagnostic::render;
use support::stem;

const CASES: &str = "tests/diagnostics";
const SNAPSHOTS: &str = "tests/snapshots";

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
    let all = cases.clone();
    trials.push(Trial::test("every_snapshot_has_a_case", move || {
        snapshots_match_cases(&all)
    }));
    trials.push(Trial::test("cases_cover_the_codes", move || {
        cases_cover_the_codes(&cases)
    }));
    libtest_mimic::run(&args, trials).exit();
}

fn render_case(compiled: &sandtable_compiler::Compiled) -> String {
    let mut out = String::new();
    for d in &compiled.diagnostics {
        out.push_str(&render::to_plain_string(d, &compiled.db));
    }
    out.push_str(&format!(
        "-- {} error(s), {} warning(s)\n",
        compiled.errors(),
        compiled.warnings()
    ));
    out
}

/// Runs `f`, turning a panic (a failed insta or std assertion) into a failed trial.
fn guarded(f: impl FnOnce() -> Result<(), Failed>) -> Result<(), Failed> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the check panicked".into())
            .into()),
    }
}

fn check_case(case: &Path) -> Result<(), Failed> {
    guarded(|| {
        let name = stem(case);
        let compiled = sandtable_compiler::compile_path(case)
            .map_err(|e| format!("{}: does not load: {e}", case.display()))?;
        if compiled.diagnostics.is_empty() {
            return Err(
                format!("{name}: a golden case must produce at least one diagnostic").into(),
            );
        }
        let output = render_case(&compiled);
        insta::with_settings!({ snapshot_path => "snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(name, output);
        });
        Ok(())
    })
}

/// A snapshot whose case file was renamed or deleted would otherwise linger unchecked.
fn snapshots_match_cases(cases: &[PathBuf]) -> Result<(), Failed> {
    let names: BTreeSet<String> = cases.iter().map(|c| stem(c)).collect();
    let orphans: Vec<String> = std::fs::read_dir(SNAPSHOTS)
        .map_err(|e| format!("{SNAPSHOTS}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
        .map(|p| stem(&p))
        .filter(|n| !names.contains(n))
        .collect();
    if orphans.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "snapshots without a case in {CASES}: {}",
            orphans.join(", ")
        )
        .into())
    }
}

/// Codes no case file can produce, each with the reason and the test that covers it instead.
const NO_CASE: &[(Code, &str)] = &[
    (
        Code::LintImpossibleMatchup,
        "`sandtable check` raises it from the runtime's exact evaluator after compiling, which the \
         compiler alone does not run; tests/cli.rs `check_reports_impossible_matchups` covers it",
    ),
    (
        Code::ParseTooLarge,
        "the loader refuses a file over 8 MiB before the parser sees it; \
         sandtable-compiler's `a_source_over_the_parser_limit_is_too_large` covers the in-memory path",
    ),
    (
        Code::TypeBadPattern,
        "the grammar admits only numbers, lengths, ranges, names, `?` and `_` as row keys, so no \
         source reaches it; it guards the syntax tree against a grammar change",
    ),
];

/// Every code of the table shows in at least one case, so each has a reviewed rendering.
fn cases_cover_the_codes(cases: &[PathBuf]) -> Result<(), Failed> {
    let mut seen = BTreeSet::new();
    for case in cases {
        if let Ok(compiled) = sandtable_compiler::compile_path(case) {
            seen.extend(compiled.diagnostics.iter().filter_map(|d| d.code.sand()));
        }
    }
    let mut problems = Vec::new();
    for code in Code::ALL {
        let exempt = NO_CASE.iter().any(|(c, _)| c == code);
        match (seen.contains(code), exempt) {
            (false, false) => problems.push(format!(
                "no case in {CASES} gives {code}; add one (a .sand file) and review its snapshot"
            )),
            (true, true) => problems.push(format!(
                "{code} has a case now: take it out of NO_CASE in tests/golden.rs"
            )),
            _ => {}
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}
