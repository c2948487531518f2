//! Every scenario of every ruleset under `examples/` plays to a finish: the rulesets and their
//! scenarios are discovered from the files, so a new example is covered without a new test,
//! and a failure names the ruleset and the scenario.

use std::path::{Path, PathBuf};

use sandtable_ir::Program;
use sandtable_runtime::engine::policy::{Policy, Random};
use sandtable_runtime::engine::{Game, Rules};

fn root() -> PathBuf {
    sandtable_conformance::root()
}

/// The rulesets under `dir`: a folder whose files hold one `ruleset` block between them is
/// one ruleset; otherwise each `.sand` file of it is its own.
fn rulesets(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rulesets(&p, out);
        } else if p.extension().is_some_and(|e| e == "sand") {
            files.push(p);
        }
    }
    let headers = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .any(|l| l.starts_with("ruleset "))
        })
        .count();
    if files.len() > 1 && headers == 1 {
        out.push(dir.to_path_buf());
    } else {
        out.extend(files);
    }
}

fn scenarios(program: &Program) -> Vec<String> {
    program
        .configs
        .iter()
        .filter(|c| c.keyword == "scenario")
        .filter_map(|c| c.name.clone())
        .collect()
}

#[test]
fn every_scenario_under_examples_plays_to_a_finish() {
    let mut found = Vec::new();
    rulesets(&root().join("examples"), &mut found);
    let mut played = Vec::new();
    let mut failures = Vec::new();
    for path in &found {
        let shown = path
            .strip_prefix(root())
            .unwrap_or(path)
            .display()
            .to_string();
        let c = sandtable_compiler::compile_path(path).unwrap();
        assert!(!c.has_errors(), "{shown} does not compile");
        for scenario in scenarios(&c.program) {
            let file = path
                .join("assumptions")
                .join(format!("{}.assume", scenario.replace('_', "-")));
            let files: Vec<&Path> = if file.is_file() {
                vec![file.as_path()]
            } else {
                Vec::new()
            };
            let a = sandtable_conformance::assumptions(&c.program, &[], &files).unwrap();
            let outcome = Rules::new(&c.program, &a, &scenario).and_then(|rules| {
                let mut ps: Vec<Box<dyn Policy>> = (0..c.program.sides.len() as u32)
                    .map(|s| Box::new(Random::new(1, s)) as _)
                    .collect();
                Game::new(&rules, 1, None).play(&mut ps)
            });
            match outcome {
                Ok(r) => {
                    assert!(r.turns >= 1, "{shown} {scenario}: no turn was played");
                    played.push(format!("{shown} {scenario} ({:?})", r.winner));
                }
                Err(e) => failures.push(format!("{shown} --scenario {scenario}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "scenarios that do not play:\n{}",
        failures.join("\n")
    );
    // The tutorial's scenario and both of scenario.sand's are among them.
    for want in ["into_the_paddies", "the_cache", "meeting"] {
        assert!(
            played.iter().any(|p| p.contains(want)),
            "{want} was not found; played: {played:?}"
        );
    }
}
