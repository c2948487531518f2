//! Every documented command still runs and prints what its document shows: every `.md` file
//! of the repository (README.md, docs/, examples/, rules/) is read, and in each fenced block
//! a line `$ sandtable …` is a command whose expected output is the lines after it, up to the
//! next `$ ` line or the end of the block.
//!
//! - A line `…` stands for any number of lines (none included); a `…` inside a line stands
//!   for any text there (timings, paths).
//! - The command runs through `sh` from the repository root, so `; echo "exit $?"`, `# comments`
//!   and lines continued with `\` work as they would at a prompt; what it writes to stdout
//!   and stderr is read as one stream, in order.
//! - A block that shows a state the files no longer have (a tutorial's intermediate steps) is
//!   preceded by `<!-- docs-test: not run: REASON -->`; the reason is required.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            if !name.starts_with('.') && name != "target" {
                markdown_files(&p, out);
            }
        } else if name.ends_with(".md") {
            out.push(p);
        }
    }
}

/// A documented command: where it is, what it runs, what it should print.
struct Example {
    file: String,
    line: usize,
    command: String,
    expected: Vec<String>,
}

fn examples(path: &Path) -> Vec<Example> {
    let shown = path
        .strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string();
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut in_fence = false;
    let mut skip = false;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(rest) = l.trim().strip_prefix("<!-- docs-test: not run:") {
            assert!(
                rest.trim_end_matches("-->").trim().len() > 3,
                "{shown}:{}: say why the block is not run",
                i + 1
            );
            skip = true;
        } else if l.trim_start().starts_with("```") {
            if in_fence {
                skip = false;
            }
            in_fence = !in_fence;
        } else if in_fence
            && !skip
            && let Some(cmd) = l.strip_prefix("$ sandtable ")
        {
            // A line ending in `\` goes on on the next one, as in the shell.
            let mut cmd = cmd.to_string();
            let mut j = i + 1;
            while cmd.ends_with('\\') && j < lines.len() {
                cmd.pop();
                cmd.push(' ');
                cmd.push_str(lines[j].trim());
                j += 1;
            }
            let mut expected = Vec::new();
            while j < lines.len() && !lines[j].starts_with("$ ") && !lines[j].starts_with("```") {
                expected.push(lines[j].to_string());
                j += 1;
            }
            out.push(Example {
                file: shown.clone(),
                line: i + 1,
                command: format!("sandtable {cmd}"),
                expected,
            });
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// Whether `line` matches `pattern`, where each `…` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || line.len() < first.len() + last.len() || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(k) => rest = &rest[k + p.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the output lines `got` match the documented `want`, a lone `…` standing for any
/// number of lines.
fn lines_match(want: &[String], got: &[&str]) -> bool {
    // Positions (want, got) still to try: a small backtracking search.
    let mut memo = std::collections::HashSet::new();
    fn go(
        want: &[String],
        got: &[&str],
        w: usize,
        g: usize,
        memo: &mut std::collections::HashSet<(usize, usize)>,
    ) -> bool {
        if !memo.insert((w, g)) {
            return false;
        }
        if w == want.len() {
            return g == got.len();
        }
        if want[w].trim() == "…" {
            return (g..=got.len()).any(|k| go(want, got, w + 1, k, memo));
        }
        g < got.len()
            && line_matches(want[w].trim_end(), got[g])
            && go(want, got, w + 1, g + 1, memo)
    }
    go(want, got, 0, 0, &mut memo)
}

/// Longest a documented command may take (in a debug build): documentation shows cheap
/// commands, and states long measurements as figures.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The command's output (stdout and stderr as one stream), or `None` if it ran past
/// [`TIMEOUT`] (then it is killed).
fn run_with_timeout(command: &str, path: &str) -> Option<String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    // A group of its own, so that a timeout stops the shell and what it started.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(root())
        .env("PATH", path)
        .stdout(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("run sh");
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if started.elapsed() > TIMEOUT {
            let _ = Command::new("kill")
                .args(["-KILL", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Some(String::from_utf8_lossy(&reader.join().expect("reader")).into_owned())
}

fn trimmed(text: &str) -> Vec<&str> {
    let mut v: Vec<&str> = text.lines().map(str::trim_end).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

#[test]
fn every_documented_command_prints_what_its_document_shows() {
    let mut files = vec![root().join("README.md")];
    for dir in ["docs", "examples", "rules"] {
        markdown_files(&root().join(dir), &mut files);
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_sandtable"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in &files {
        for ex in examples(f) {
            // Both streams into one, in the order they were written, as on a terminal.
            let Some(got) = run_with_timeout(&ex.command, &path) else {
                failures.push(format!(
                    "{}:{}: `{}` did not finish within {} s: document a cheaper command, or state the figure in prose\n",
                    ex.file,
                    ex.line,
                    ex.command,
                    TIMEOUT.as_secs()
                ));
                checked += 1;
                continue;
            };
            let want: Vec<String> = {
                let mut v = ex.expected.clone();
                while v.last().is_some_and(|l| l.trim().is_empty()) {
                    v.pop();
                }
                v
            };
            if !lines_match(&want, &trimmed(&got)) {
                failures.push(format!(
                    "{}:{}: `{}` printed:\n{}\n--- the document shows:\n{}\n",
                    ex.file,
                    ex.line,
                    ex.command,
                    got.trim_end(),
                    want.join("\n")
                ));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} documented commands differ from their documents:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 40, "only {checked} documented commands found");
}

#[test]
fn the_matcher_takes_ellipses_for_lines_and_for_text() {
    let want = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&want(&["a", "…", "d"]), &["a", "b", "c", "d"]));
    assert!(lines_match(&want(&["a", "…", "d"]), &["a", "d"]));
    assert!(!lines_match(&want(&["a", "…", "d"]), &["a", "b"]));
    assert!(lines_match(
        &want(&["total in … ms"]),
        &["total in 24.6 ms"]
    ));
    assert!(!lines_match(
        &want(&["total in … ms"]),
        &["total in 24.6 s"]
    ));
    assert!(!lines_match(&want(&["a"]), &["a", "b"]));
}
