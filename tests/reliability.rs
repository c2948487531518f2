//! Hostile input, faults and signals, end to end through the binary: no panic, bounded reads
//! and output, no file read that was not asked for, nothing lost.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sandtable"));
    c.env_remove("RUST_BACKTRACE");
    c
}

/// Run to the end, but fail (instead of hanging the suite) past `secs`.
fn within(secs: u64, args: &[&str]) -> (i32, String, String) {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sandtable");
    let (out, err) = drain(&mut child);
    let status = wait_for(&mut child, secs, args);
    (
        status,
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    )
}

type Reader = std::thread::JoinHandle<String>;

fn drain(child: &mut Child) -> (Reader, Reader) {
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    (
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = so.read_to_string(&mut s);
            s
        }),
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = se.read_to_string(&mut s);
            s
        }),
    )
}

fn wait_for(child: &mut Child, secs: u64, what: &[&str]) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code().unwrap_or(-1);
        }
        if started.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!(
                "`sandtable {}` still running after {secs} s",
                what.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sandtable(args: &[&str]) -> (i32, String, String) {
    within(120, args)
}

/// A scratch folder removed when the test ends, pass or fail: some tests write files of
/// megabytes, and each run has its own process id, so leftovers would pile up in `/tmp`.
struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let d = std::env::temp_dir().join(format!("sandtable-rel-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TempDir(d)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status();
    assert!(ok.is_ok_and(|s| s.success()), "mkfifo is needed");
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status();
    assert!(ok.is_ok_and(|s| s.success()), "kill {sig}");
}

// 1. Outcomes of probability 0.

#[test]
fn prob_json_lists_outcomes_of_probability_zero_like_text_and_csv() {
    let dir = temp_dir("never");
    let never = dir.join("never.sand");
    std::fs::write(
        &never,
        "resolve r(flag: bool = false) { if flag { outcome never } result d6 }\n",
    )
    .unwrap();
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec![
                "rules/platoon",
                "fire",
                "--set",
                "fire_modifier=10",
                "--set",
                "target_modifier=0",
            ],
            "miss",
        ),
        (
            vec![
                "rules/police_action",
                "close_combat",
                "--set",
                "attacker_additional_units=1",
            ],
            "",
        ),
        (vec![s(&never), "r"], "never"),
    ];
    for (args, zero) in cases {
        let with = |extra: &str| {
            let mut a = vec!["prob"];
            a.extend(&args);
            if !extra.is_empty() {
                a.push(extra);
            }
            let (code, out, err) = sandtable(&a);
            assert_eq!(code, 0, "{a:?}: {err}");
            out
        };
        let v = json(&with("--json"));
        let outcomes = v["outcomes"].as_array().unwrap();
        let csv = with("--csv");
        assert_eq!(outcomes.len(), csv.lines().count() - 1, "{args:?}");
        let zeros: Vec<&serde_json::Value> = outcomes
            .iter()
            .filter(|o| o["probability"] == "0/1")
            .collect();
        assert!(!zeros.is_empty(), "{args:?}: no outcome of probability 0");
        for z in &zeros {
            assert!(z["unreduced"].as_str().unwrap().starts_with("0/"), "{z}");
            assert_eq!(z["decimal"], 0.0);
        }
        if !zero.is_empty() {
            assert!(zeros.iter().any(|o| o["outcome"] == zero), "{v}");
        }
    }
}

// 2. Diagnostics past display column 65,535.

#[test]
fn a_diagnostic_far_along_a_line_of_tabs_is_shown_as_an_excerpt() {
    let dir = temp_dir("tabs");
    let sand = dir.join("tabs.sand");
    std::fs::write(
        &sand,
        format!("{}resolve x( {{ result d6 }}\n", "\t".repeat(20_000)),
    )
    .unwrap();
    let (code, _, err) = sandtable(&["check", s(&sand)]);
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("the line is too long to show"), "{err}");
    assert!(err.contains("tabs.sand:1:20012"), "{err}");
    let text = dir.join("tabs.txt");
    let tabs = "\t".repeat(20_000);
    std::fs::write(
        &text,
        format!("{tabs}1. Intro\n2. Rules, see 9.3\n{tabs}see section 12.4\n"),
    )
    .unwrap();
    let (code, _, err) = sandtable(&["audit", s(&text)]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("too long to show"), "{err}");
}

// 3. Bounded reads: devices and FIFOs are refused, never read.

#[test]
fn devices_and_fifos_named_anywhere_are_refused_without_hanging() {
    let dir = temp_dir("devices");
    let zero_import = dir.join("zero.sand");
    std::fs::write(
        &zero_import,
        "import \"/dev/zero\"\nresolve r() { result d6 }\n",
    )
    .unwrap();
    let (code, _, err) = within(30, &["check", "--allow-outside-imports", s(&zero_import)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not a regular file"), "{err}");

    let (code, _, err) = within(
        30,
        &[
            "prob",
            "rules/platoon",
            "fire",
            "--set",
            "fire_modifier=4",
            "--set",
            "target_modifier=0",
            "--assumptions",
            "/dev/zero",
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("not a regular file"), "{err}");

    let (code, _, err) = within(
        30,
        &[
            "run",
            "rules/platoon",
            "--scenario",
            "protecting-the-flank",
            "--policy",
            "us=script:/dev/zero",
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("not a regular file"), "{err}");

    let (code, _, err) = within(30, &["audit", "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a regular file"), "{err}");

    let (code, _, err) = within(30, &["replay", "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a regular file"), "{err}");

    // A FIFO in a ruleset folder, and one imported: opening either would wait for a writer.
    let folder = dir.join("ruleset");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("a.sand"), "resolve r() { result d6 }\n").unwrap();
    mkfifo(&folder.join("b.sand"));
    let (code, _, err) = within(30, &["check", s(&folder)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FIFO"), "{err}");
    let imports = dir.join("imports");
    std::fs::create_dir_all(&imports).unwrap();
    mkfifo(&imports.join("pipe.txt"));
    std::fs::write(imports.join("main.sand"), "import \"pipe.txt\"\n").unwrap();
    let (code, _, err) = within(30, &["check", s(&imports.join("main.sand"))]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("FIFO"), "{err}");
}

// 4. Imports stay in the ruleset folder; replay follows no path out of the log's folder.

#[test]
fn an_import_outside_the_ruleset_folder_is_refused_unread() {
    let dir = temp_dir("outside");
    let sand = dir.join("x.sand");
    let up = "../".repeat(dir.components().count() + 2);
    std::fs::write(&sand, format!("import \"{up}etc/passwd\"\n")).unwrap();
    let (code, _, err) = sandtable(&["check", s(&sand)]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("sand::resolve::import-outside"), "{err}");
    assert!(err.contains("--allow-outside-imports"), "{err}");
    assert!(
        !err.contains("root:"),
        "a line of /etc/passwd was echoed:\n{err}"
    );
    let (_, out, _) = sandtable(&["check", "--json", s(&sand)]);
    let v = json(&out);
    assert_eq!(v[0]["code"], "sand::resolve::import-outside");
    assert_eq!(v[0]["line"], 1);
    // With the flag the file is read (and, not being rules, refused as such).
    let (code, _, err) = sandtable(&["check", "--allow-outside-imports", s(&sand)]);
    assert_eq!(code, 1);
    assert!(!err.contains("import-outside"), "{err}");
    // An import inside the folder still works.
    std::fs::write(dir.join("lib.sand"), "procedure helper() { result 1 }\n").unwrap();
    std::fs::write(
        &sand,
        "import \"lib.sand\"\nresolve r() { result helper() }\n",
    )
    .unwrap();
    let (code, _, err) = sandtable(&["check", s(&sand)]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_linked_sand_file_pointing_out_of_the_ruleset_folder_is_refused_unread() {
    let base = temp_dir("linked");
    let dir = base.join("rules");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.sand"), "resolve r() { result 1 }\n").unwrap();
    let secret = base.join("secret.txt");
    std::fs::write(&secret, "root: not rules at all\n").unwrap();
    let link = dir.join("leak.sand");
    std::os::unix::fs::symlink(&secret, &link).unwrap();

    let (code, _, err) = sandtable(&["check", s(&dir)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(s(&link)), "the link is not named:\n{err}");
    let target = secret.canonicalize().unwrap();
    assert!(err.contains(s(&target)), "the target is not named:\n{err}");
    assert!(err.contains("--allow-outside-imports"), "{err}");
    assert!(!err.contains("root:"), "the linked file was read:\n{err}");
    let (code, out, _) = sandtable(&["check", "--json", s(&dir)]);
    assert_eq!(code, 2);
    assert_eq!(json(&out)["error"]["kind"], "io");
    // Commands that run the rules load them the same way.
    let (code, _, err) = sandtable(&["prob", s(&dir), "r"]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("outside the ruleset folder"), "{err}");

    // With the flag the file is read (and, not being rules, refused as such).
    let (code, _, err) = sandtable(&["check", "--allow-outside-imports", s(&dir)]);
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("outside the ruleset folder"), "{err}");
    assert!(err.contains("leak.sand"), "{err}");
    // A link that stays inside the folder is loaded once, like the file it names.
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(dir.join("main.sand"), &link).unwrap();
    let (code, _, err) = sandtable(&["check", s(&dir)]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_human_prompt_fed_an_endless_line_stops_with_an_error() {
    // `< /dev/zero`: no line end ever comes; the answer once grew until memory ran out.
    let mut child = bin()
        .args([
            "run",
            "rules/platoon",
            "--scenario",
            "protecting-the-flank",
            "--policy",
            "us=human",
        ])
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (_, err) = drain(&mut child);
    let code = wait_for(&mut child, 60, &["run", "--policy", "us=human"]);
    let err = err.join().unwrap_or_default();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("an answer longer than 1024 bytes"), "{err}");
}

fn run_with_log(ruleset: &str, log: &Path) {
    let (code, _, err) = sandtable(&[
        "run",
        ruleset,
        "--scenario",
        "protecting-the-flank",
        "--seed",
        "2",
        "--log",
        s(log),
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn replay_reads_rules_only_beside_the_log_or_where_the_user_says() {
    let dir = temp_dir("replay");
    // The rules are not in the log's folder: the header's path is not followed.
    let log = dir.join("game.jsonl");
    run_with_log("rules/platoon", &log);
    let (code, _, err) = sandtable(&["replay", s(&log)]);
    assert_eq!(code, 2);
    assert!(err.contains("--ruleset"), "{err}");
    let (code, _, err) = sandtable(&["replay", s(&log), "--ruleset", "rules/platoon"]);
    assert_eq!(code, 0, "{err}");

    // A folder holding the rules and the log can be moved: the path is the log's own.
    let here = dir.join("here");
    std::fs::create_dir_all(&here).unwrap();
    let ok = Command::new("cp")
        .args(["-r", "rules/platoon", s(&here)])
        .status();
    assert!(ok.is_ok_and(|s| s.success()));
    let log2 = here.join("game.jsonl");
    run_with_log(s(&here.join("platoon")), &log2);
    let text = std::fs::read_to_string(&log2).unwrap();
    let header = json(text.lines().next().unwrap());
    assert_eq!(header["ruleset_path"], "platoon");
    let moved = dir.join("moved");
    std::fs::rename(&here, &moved).unwrap();
    let (code, _, err) = sandtable(&["replay", s(&moved.join("game.jsonl"))]);
    assert_eq!(code, 0, "{err}");

    // A crafted header that points out of the log's folder is refused, unread.
    for bad in ["../platoon", "/etc", "rules/../../x"] {
        let edited = text.replacen(
            "\"ruleset_path\":\"platoon\"",
            &format!("\"ruleset_path\":\"{bad}\""),
            1,
        );
        assert_ne!(edited, text);
        let crafted = moved.join("crafted.jsonl");
        std::fs::write(&crafted, edited).unwrap();
        let (code, _, err) = sandtable(&["replay", s(&crafted)]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("not inside the log's folder"), "{bad}: {err}");
    }
}

// 5. Logs written whole or not at all; signals.

#[test]
fn a_log_write_cut_short_leaves_the_old_log_intact() {
    let dir = temp_dir("atomic");
    let log = dir.join("game.jsonl");
    std::fs::write(&log, "an earlier log\n").unwrap();
    // `ulimit -f 1`: no file may grow past one block (512 or 1,024 bytes); a log is longer.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 1 && exec \"$0\" run rules/platoon --scenario protecting-the-flank --seed 1 --log '{}'",
            s(&log)
        ))
        .arg(env!("CARGO_BIN_EXE_sandtable"))
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("left as it was"), "{err}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "an earlier log\n");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() != "game.jsonl")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// A human game waiting at its first prompt, and what it writes on stderr from then on (read
/// all along, so a full pipe never stalls it).
fn human_game(log: &Path, grace_ms: Option<u64>) -> (Child, Reader) {
    let mut cmd = bin();
    if let Some(ms) = grace_ms {
        cmd.env("SANDTABLE_DEBUG_GRACE_MS", ms.to_string());
    }
    let mut child = cmd
        .args([
            "run",
            "rules/platoon",
            "--scenario",
            "protecting-the-flank",
            "--seed",
            "4",
            "--policy",
            "us=human",
            "--log",
            s(log),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    // The prompt ends without a newline: read until it is there.
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains("us chooses (1-") {
        assert_eq!(err.read(&mut byte).unwrap(), 1, "no prompt");
        seen.push(byte[0]);
    }
    (child, std::thread::spawn(move || rest(err)))
}

fn decisions(lines: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    lines.iter().filter(|l| l["event"] == "decision").collect()
}

fn rest(mut r: impl Read) -> String {
    let mut s = String::new();
    let _ = r.read_to_string(&mut s);
    s
}

fn log_lines(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(json)
        .collect()
}

#[test]
fn sigint_while_a_human_ponders_saves_what_was_played() {
    let dir = temp_dir("sigint-wait");
    let log = dir.join("game.jsonl");
    let (mut child, err) = human_game(&log, None);
    signal(&child, "-INT");
    let code = wait_for(&mut child, 30, &["run (waiting)"]);
    let err = err.join().unwrap();
    assert_eq!(code, 130, "{err}");
    let lines = log_lines(&log);
    assert_eq!(lines[0]["format"], "sandtable-game-log");
    assert_eq!(lines.last().unwrap()["event"], "interrupted");
    // The other side's deployment came first; all of it is kept.
    let k = decisions(&lines).len();
    assert!(k > 0);
    let said = format!("interrupted after {k} decision(s)");
    // The prompt's line is ended before the message.
    assert!(err.contains(&format!("): \nerror: {said}")), "{err}");
    let (code, _, err) = sandtable(&["replay", s(&log), "--ruleset", "rules/platoon"]);
    assert_eq!(code, 1);
    assert!(err.contains(&said), "{err}");
}

#[test]
fn sigterm_mid_game_stops_at_the_next_decision_and_keeps_the_last_one() {
    let dir = temp_dir("sigterm-play");
    let log = dir.join("game.jsonl");
    std::fs::write(&log, "an earlier log\n").unwrap();
    // A grace far longer than the game needs: on a loaded machine the debug build may take
    // more than the shipped 2 s to reach its next decision, and the point here is that it does.
    let (mut child, err) = human_game(&log, Some(60_000));
    signal(&child, "-TERM");
    // The answer arrives after the signal has been heard (well within the grace period): it
    // is played, and the game stops at the next decision, not in the middle of this one.
    std::thread::sleep(Duration::from_millis(500));
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"1\n");
    let _ = stdin.flush();
    let out = rest(child.stdout.take().unwrap());
    let code = wait_for(&mut child, 30, &["run (playing)"]);
    let err = err.join().unwrap();
    assert_eq!(code, 143, "{err}");
    let lines = log_lines(&log);
    assert_eq!(lines.last().unwrap()["event"], "interrupted");
    let made = decisions(&lines);
    assert_eq!(made.last().unwrap()["side"], "us", "the answer is kept");
    let said = format!("interrupted after {} decision(s)", made.len());
    assert!(err.contains(&said), "{err}");
    assert!(out.ends_with("the game is not finished.\n"), "{out}");
}

#[test]
fn sigint_during_sim_prints_partial_totals_marked_partial() {
    let mut child = bin()
        .args([
            "sim",
            "rules/platoon",
            "--scenario",
            "protecting-the-flank",
            "-n",
            "100000000",
            "--jobs",
            "2",
            "--json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, err) = drain(&mut child);
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, "-INT");
    let code = wait_for(&mut child, 60, &["sim"]);
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert_eq!(code, 130, "{err}");
    let v = json(&out);
    assert_eq!(v["partial"], true, "{v}");
    let games = v["games"].as_u64().unwrap();
    assert!(games < 100_000_000, "{v}");
    assert_eq!(v["games_requested"], 100_000_000u64);
    let wins: u64 = v["sides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["wins"].as_u64().unwrap())
        .sum();
    assert_eq!(wins + v["draws"].as_u64().unwrap(), games);
    assert!(err.contains("interrupted"), "{err}");
}

// 6. The fingerprint is of the rules' content.

#[test]
fn a_log_does_not_depend_on_how_the_rules_path_was_spelled() {
    let dir = temp_dir("spelling");
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    run_with_log("./rules/platoon/", &a);
    run_with_log("rules/platoon", &b);
    let hash = |p: &Path| log_lines(p)[0]["ruleset_hash"].clone();
    assert_eq!(hash(&a), hash(&b));
    for (log, other) in [(&a, "rules/platoon"), (&b, "./rules/platoon/")] {
        let (code, _, err) = sandtable(&["replay", s(log), "--ruleset", other]);
        assert_eq!(code, 0, "{err}");
    }
}

// 7. Output amplification.

fn unused_on_one_line(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!("procedure p{i}() {{ result 1 }}"))
        .collect();
    format!("{}\n", items.join(" "))
}

/// `MAX_SHOWN` in src/report.rs.
const MAX_SHOWN: usize = 100;

#[test]
fn diagnostics_shown_are_capped_at_the_limit_with_a_count_of_the_rest() {
    let dir = temp_dir("many");
    for (n, more) in [
        (MAX_SHOWN, None),
        (MAX_SHOWN + 1, Some(1)),
        (4_000, Some(3_900)),
    ] {
        let sand = dir.join(format!("many{n}.sand"));
        std::fs::write(&sand, unused_on_one_line(n)).unwrap();
        let (code, _, err) = sandtable(&["check", s(&sand)]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(err.matches("is never used").count(), n.min(MAX_SHOWN));
        match more {
            None => assert!(!err.contains("not shown"), "{n}"),
            Some(k) => assert!(
                err.contains(&format!("… and {k} more diagnostic")),
                "{n}: {}",
                &err[err.len().saturating_sub(300)..]
            ),
        }
        // Each is shown with an excerpt of the long line, not the line.
        assert!(err.len() < 200 * MAX_SHOWN * 10, "{n}: {} bytes", err.len());
        let (_, out, _) = sandtable(&["check", "--json", s(&sand)]);
        assert_eq!(json(&out).as_array().unwrap().len(), n, "--json keeps all");
    }
}

#[test]
fn a_huge_name_is_not_echoed_whole() {
    let dir = temp_dir("huge");
    let sand = dir.join("huge.sand");
    let name = "x".repeat(5_000_000);
    std::fs::write(&sand, format!("resolve r() {{ result {name} }}\n")).unwrap();
    let (code, out, err) = sandtable(&["check", s(&sand)]);
    assert_eq!(code, 1);
    assert!(err.len() < 20_000, "{} bytes on stderr", err.len());
    assert!(err.contains("more characters"), "{err}");
    assert!(out.is_empty());
    let (_, out, _) = sandtable(&["check", "--json", s(&sand)]);
    assert!(out.len() < 20_000, "{} bytes of JSON", out.len());
}

#[test]
fn an_error_quoting_a_huge_input_is_cut() {
    let name = "y".repeat(100_000);
    let (code, _, err) = sandtable(&[
        "prob",
        "rules/platoon",
        "fire",
        "--set",
        "fire_modifier=4",
        "--set",
        "target_modifier=0",
        "--assume",
        &format!("{name}=1"),
    ]);
    assert_ne!(code, 0);
    assert!(err.len() < 10_000, "{} bytes", err.len());
    assert!(err.contains("more characters)"), "{err}");
}

#[test]
fn sim_refuses_one_game_past_its_limit() {
    let (code, _, err) = sandtable(&[
        "sim",
        "rules/platoon",
        "--scenario",
        "protecting-the-flank",
        "-n",
        "100000001",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("-n must be 1 to 100000000"), "{err}");
}

// 8. Panics.

#[test]
fn a_panic_is_a_short_internal_error_with_exit_70() {
    let out = bin()
        .args(["check", "rules/platoon"])
        .env("SANDTABLE_DEBUG_PANIC", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(70), "{err}");
    assert!(err.starts_with("internal error: "), "{err}");
    assert!(err.contains(env!("CARGO_PKG_VERSION")), "{err}");
    assert!(!err.contains(".rs"), "a source path was printed:\n{err}");
    assert!(!err.contains("backtrace"), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
    let out = bin()
        .args(["check", "rules/platoon", "--json"])
        .env("SANDTABLE_DEBUG_PANIC", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(70));
    let v = json(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(v["error"]["kind"], "internal");
}

// 9. With --json, every error is a JSON object on stdout.

#[test]
fn with_json_every_error_is_a_json_object_on_stdout() {
    let cases: &[&[&str]] = &[
        &["check", "/no/such/ruleset", "--json"],
        &["check", "rules/platoon", "/no/such/ruleset", "--json"],
        &["audit", "/no/such/book.txt", "--json"],
        &["prob", "rules/platoon", "nope", "--json"],
        &["prob", "/no/such/ruleset", "fire", "--json"],
        &[
            "prob",
            "tests/diagnostics/broken_file.sand",
            "fire",
            "--json",
        ],
        &["explain", "rules/platoon", "fire", "--set", "x=1", "--json"],
        &["bench", "rules/platoon", "nope", "--json"],
        &["run", "rules/platoon", "--scenario", "nope", "--json"],
        &["replay", "/no/such/log.jsonl", "--json"],
        &[
            "sim",
            "rules/platoon",
            "--scenario",
            "protecting-the-flank",
            "-n",
            "0",
            "--json",
        ],
        &["prob", "--json"],
        &["check", "--no-such-flag", "--json"],
    ];
    for args in cases {
        let (code, out, _) = sandtable(args);
        assert_ne!(code, 0, "{args:?}");
        let v = json(&out);
        let e = &v["error"];
        assert!(
            e["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{args:?}: {v}"
        );
        assert!(e["kind"].as_str().is_some(), "{args:?}: {v}");
    }
    // The rules' own errors come with their diagnostics.
    let (_, out, _) = sandtable(&[
        "prob",
        "tests/diagnostics/broken_file.sand",
        "fire",
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(v["error"]["kind"], "rules");
    assert!(!v["error"]["diagnostics"].as_array().unwrap().is_empty());
    // An unreadable ruleset is not "no findings".
    let (code, out, _) = sandtable(&["check", "rules/platoon", "/no/such/ruleset", "--json"]);
    assert_eq!(code, 2);
    let v = json(&out);
    assert_eq!(v["error"]["kind"], "io");
    assert!(!v["error"]["diagnostics"].as_array().unwrap().is_empty());
}

// Limits of the checker (docs/limits.md, "Language and engine"): each at the limit and one past.

/// The errors `check --json` reports for `src`, as "code: message".
fn check_errors(dir: &Path, src: &str) -> Vec<String> {
    let f = dir.join("limit.sand");
    std::fs::write(&f, src).unwrap();
    let (_, out, err) = sandtable(&["check", s(&f), "--json"]);
    json(&out)
        .as_array()
        .unwrap_or_else(|| panic!("{out}\n{err}"))
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            format!(
                "{}: {}",
                d["code"].as_str().unwrap_or(""),
                d["message"].as_str().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn checker_limits_hold_at_the_limit_and_refuse_one_past_with_the_figure() {
    let dir = temp_dir("checker-limits");
    let faces = |n: usize| {
        (1..=n)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    // Faces of one die: 1,000.
    assert_eq!(
        check_errors(&dir, &format!("die big = [{}]\n", faces(1000))),
        Vec::<String>::new()
    );
    let e = check_errors(&dir, &format!("die big = [{}]\n", faces(1001)));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].contains("a die needs 1 to 1000 faces"), "{e:?}");
    // Size of one face: 10^9.
    assert_eq!(
        check_errors(&dir, "die huge = [1, 1000000000]\n"),
        Vec::<String>::new()
    );
    let e = check_errors(&dir, "die huge = [1, 1000000001]\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("at most 1000000000 in size; this one is 1000000001"),
        "{e:?}"
    );
    // Dice in a pool the checker can size: 1,000.
    assert_eq!(
        check_errors(&dir, "resolve r() { result sum(1000d6) }\n"),
        Vec::<String>::new()
    );
    let e = check_errors(&dir, "resolve r() { result sum(1001d6) }\n");
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("a pool holds at most 1000 dice; this one has 1001"),
        "{e:?}"
    );
    // Runs of one `repeat`: 10,000.
    let rep = |n: u32| {
        format!("resolve r() {{\n  let x = 0\n  repeat {n} {{ let y = d6 }}\n  result x\n}}\n")
    };
    assert_eq!(check_errors(&dir, &rep(10_000)), Vec::<String>::new());
    let e = check_errors(&dir, &rep(10_001));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("`repeat` may run 10001 times; the limit is 10000"),
        "{e:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_time_limits_hold_at_the_limit_and_refuse_one_past_alike_in_every_evaluator() {
    let dir = temp_dir("run-limits");
    let f = dir.join("loops.sand");
    let walk = |name: &str, n: u32| {
        format!(
            "resolve {name}() {{\n  let last = 0\n  for i in 1..={n} {{\n    let last = i\n  }}\n  result 1\n}}\n"
        )
    };
    std::fs::write(
        &f,
        format!(
            "{}{}resolve dice(n: int) {{\n  result sum(pool(n, d6)) > 0\n}}\n",
            walk("at_limit", 100_000),
            walk("past_limit", 100_001)
        ),
    )
    .unwrap();
    let evaluators: [&[&str]; 3] = [
        &[],
        &["--samples", "1", "--backend", "interp"],
        &["--samples", "1", "--backend", "jit"],
    ];
    // Loop steps at run time: 100,000 (exact evaluation let one more through).
    for how in evaluators {
        let (code, _, err) = sandtable(&[&["prob", s(&f), "at_limit"], how].concat());
        assert_eq!(code, 0, "{how:?}: {err}");
        let (code, _, err) = sandtable(&[&["prob", s(&f), "past_limit"], how].concat());
        assert_ne!(code, 0, "{how:?}");
        assert!(
            err.contains("`for` iterations is 100001; the limit is 100000"),
            "{how:?}: {err}"
        );
    }
    // Dice in a pool at run time: 100,000.
    for how in &evaluators[1..] {
        let (code, _, err) =
            sandtable(&[&["prob", s(&f), "dice", "--set", "n=100000"], *how].concat());
        assert_eq!(code, 0, "{how:?}: {err}");
        let (code, _, err) =
            sandtable(&[&["prob", s(&f), "dice", "--set", "n=100001"], *how].concat());
        assert_ne!(code, 0, "{how:?}");
        assert!(
            err.contains("pool size is 100001; the limit is 100000"),
            "{how:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
