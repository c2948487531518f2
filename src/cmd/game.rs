//! `sandtable run`, `replay` and `sim`: whole scenarios played by policies.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sandtable_compiler::ir::Program;
use sandtable_runtime::engine::log::{self, Event, Header, LOG_FORMAT, LOG_VERSION};
use sandtable_runtime::engine::policy::{self, Scripted};
use sandtable_runtime::engine::save::{self, SavedPolicy};
use sandtable_runtime::engine::sim::{self, Totals};
use sandtable_runtime::engine::state::Winner;
use sandtable_runtime::engine::{Game, GameResult, Rules};
use sandtable_runtime::interp::Assumptions;
use sandtable_runtime::jit::{BackendKind, JitProgram};
use sandtable_runtime::query;
use serde::Serialize;

use crate::report::{self, BackendArg, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Kind};

/// What `run` and `sim` share: the ruleset, the scenario, the policies, the book's unknowns.
#[derive(clap::Args)]
pub struct GameArgs {
    /// Ruleset folder or .sand file
    ruleset: PathBuf,
    /// Scenario to play (as named in the rules; `-` and `_` are the same)
    #[arg(long)]
    scenario: String,
    /// Policy for a side: SIDE=random|greedy|human|script:FILE|mcts:ITERATIONS[:MILLIS] (repeatable; default random)
    #[arg(long = "policy", value_name = "SIDE=KIND")]
    policies: Vec<String>,
    /// Supply a value for one of the book's unknowns: NAME=VALUE (repeatable)
    #[arg(long = "assume", value_name = "NAME=VALUE")]
    assumes: Vec<String>,
    /// Assumptions file (repeatable). RULESET/assumptions/SCENARIO.assume is read by default
    #[arg(long = "assumptions", value_name = "FILE")]
    assumption_files: Vec<PathBuf>,
    /// Run rule procedures on the interpreter or on JIT-compiled code (same results)
    #[arg(long, value_enum, default_value_t = BackendArg::Jit)]
    backend: BackendArg,
}

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  sandtable run rules/platoon --scenario protecting-the-flank --seed 1\n  \
sandtable run rules/plastic_battle --scenario total-destruction --seed 1 --log game.jsonl\n  \
sandtable run rules/platoon --scenario protecting-the-flank --policy us=human"
)]
pub struct RunArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Seed of the game (dice, chips and the policies' own choices)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the game's events as JSON lines to FILE (for `replay`)
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Stop after N decisions and write the game to the --save file, to go on with
    /// `sandtable resume FILE` (the resumed game writes the --log)
    #[arg(long, value_name = "N", requires = "save")]
    stop_after: Option<u64>,
    /// Where --stop-after writes the game (versioned JSON with the rules' fingerprint)
    #[arg(long, value_name = "FILE", requires = "stop_after")]
    save: Option<PathBuf>,
    /// Print the result as JSON instead of the narrative
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  sandtable run rules/platoon --scenario protecting-the-flank --seed 5 --stop-after 20 --save s.json\n  sandtable resume s.json"
)]
pub struct ResumeArgs {
    /// A game saved by `run --stop-after N --save FILE` (or `save FILE` at a human prompt)
    save: PathBuf,
    /// Read the rules from here instead of the path the save records
    #[arg(long)]
    ruleset: Option<PathBuf>,
    /// Policy for a side from here on: SIDE=KIND (default: the policies it was saved with)
    #[arg(long = "policy", value_name = "SIDE=KIND")]
    policies: Vec<String>,
    /// Write the whole game's events as JSON lines to FILE (for `replay`)
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Stop again after N more decisions and write the game to --save-to
    #[arg(long, value_name = "N", requires = "save_to")]
    stop_after: Option<u64>,
    /// Where --stop-after writes the game
    #[arg(long, value_name = "FILE", requires = "stop_after")]
    save_to: Option<PathBuf>,
    /// Print the result as JSON instead of the narrative
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  sandtable run rules/platoon --scenario protecting-the-flank --seed 1 --log game.jsonl\n  sandtable replay game.jsonl"
)]
pub struct ReplayArgs {
    /// A log written by `sandtable run --log`
    log: PathBuf,
    /// Read the rules from here instead of the path the log records
    #[arg(long)]
    ruleset: Option<PathBuf>,
    /// Print the result as JSON instead of the narrative
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  sandtable sim rules/platoon --scenario protecting-the-flank -n 10000 --json\n  \
sandtable sim rules/plastic_battle --scenario total-destruction -n 1000 --policy player_1=greedy --jobs 2\n  \
sandtable sim rules/police_action --scenario village-search -n 500 --vary vc_rifle_group.to_hit=3,4,5"
)]
pub struct SimArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Number of games
    #[arg(short = 'n', default_value_t = 1000)]
    n: u64,
    /// Seed of the first game; game i uses seed+i (so `run --seed` replays any one of them)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads (default: all cores). Totals do not depend on it
    #[arg(long)]
    jobs: Option<usize>,
    /// Print the figures as JSON
    #[arg(long)]
    pub json: bool,
    /// Also play the same games with a hand-written Rust playout and report the speed ratio
    /// (`platoon-flank`: Platoon's Protecting the Flank; `plastic-total-destruction`: Plastic
    /// Battle's Total Destruction; random against random)
    #[arg(long, value_enum)]
    reference: Option<ReferenceArg>,
    /// Sensitivity to one assumption: play the same seeds once per value (NAME=V1,V2,…,
    /// applied after every other assumption) and give the win rates for each
    #[arg(long, value_name = "NAME=V1,V2,...")]
    vary: Option<String>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ReferenceArg {
    PlatoonFlank,
    PlasticTotalDestruction,
}

/// Most games one `sim` may play.
const MAX_GAMES: u64 = 100_000_000;

struct Loaded {
    program: Program,
    assumptions: Assumptions,
    /// Assumption files, as named, and their text.
    files: Vec<String>,
    texts: Vec<String>,
    hash: String,
}

fn default_assumptions(ruleset: &Path, scenario: &str) -> Option<PathBuf> {
    let dir = ruleset.join("assumptions");
    [scenario.replace('_', "-"), scenario.replace('-', "_")]
        .into_iter()
        .map(|n| dir.join(format!("{n}.assume")))
        .find(|p| p.is_file())
}

/// Where a game's assumptions come from.
enum Assumed<'a> {
    /// Files named on the command line, after the ruleset's default for the scenario.
    Files(&'a [PathBuf]),
    /// `(name, text)` of files already read: a replay's, from its log.
    Texts(Vec<(String, String)>),
}

fn load(
    ruleset: &Path,
    scenario: &str,
    assumes: &[String],
    assumed: Assumed,
) -> Result<Loaded, u8> {
    let compiled = report::load_ruleset(ruleset)?;
    let files = match assumed {
        Assumed::Texts(t) => t,
        Assumed::Files(files) => {
            let mut paths: Vec<PathBuf> = Vec::new();
            paths.extend(default_assumptions(ruleset, scenario));
            paths.extend(files.iter().cloned());
            let mut texts = Vec::new();
            for p in &paths {
                match sandtable_compiler::assume::read(p) {
                    Ok(t) => texts.push((p.display().to_string(), t)),
                    Err(e) => {
                        report::error(Kind::Io, e);
                        return Err(EXIT_USAGE);
                    }
                }
            }
            texts
        }
    };
    let pairs = report::pairs(assumes, "--assume")?;
    let supplied =
        sandtable_compiler::assume::supply(&compiled.program, &pairs, &files).map_err(|e| {
            report::refusal(Kind::Query, e);
            EXIT_USAGE
        })?;
    let assumptions = query::assumptions(&supplied);
    let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Ok(Loaded {
        hash: fingerprint(&compiled.db, &files, &pairs),
        program: compiled.program,
        assumptions,
        files: files.iter().map(|(n, _)| n.clone()).collect(),
        texts: files.into_iter().map(|(_, t)| t).collect(),
    })
}

/// What the rules are made of, not where they were read from: the text of every source file
/// (in load order, which does not depend on how the path was spelled), of every assumptions
/// file and every `--assume` pair. `./rules/x/` and `rules/x` give the same fingerprint.
fn fingerprint(
    db: &sandtable_compiler::SourceDb,
    files: &[(String, String)],
    pairs: &[String],
) -> String {
    let sources = db.ids().map(|id| db.file(id).text.as_bytes());
    let assumed = files.iter().map(|(_, t)| t.as_bytes());
    log::fingerprint(
        sources
            .chain([&b"--assumptions"[..]])
            .chain(assumed)
            .chain([&b"--assume"[..]])
            .chain(pairs.iter().map(|p| p.as_bytes())),
    )
}

fn rules<'p>(l: &'p Loaded, scenario: &str) -> Result<Rules<'p>, u8> {
    Rules::new(&l.program, &l.assumptions, scenario).map_err(|e| {
        report::error(Kind::Query, e);
        EXIT_FINDINGS
    })
}

/// Policy kind per side id, from `SIDE=KIND` options; unnamed sides play `random`.
fn policy_kinds(program: &Program, items: &[String]) -> Result<Vec<String>, u8> {
    let mut kinds = vec!["random".to_string(); program.sides.len()];
    for (side, kind) in report::pairs(items, "--policy")? {
        let Some(s) = program.sides.iter().position(|x| x.name == side) else {
            let names: Vec<&str> = program.sides.iter().map(|x| x.name.as_str()).collect();
            report::error(
                Kind::Usage,
                format!(
                    "--policy: no side `{side}`; the sides are: {}",
                    names.join(", ")
                ),
            );
            return Err(EXIT_USAGE);
        };
        // A policy written in the rules plays the side it was written for.
        let written = program.policies.iter().find(|p| p.name == kind);
        if let Some(p) = written
            && p.side as usize != s
        {
            report::error(
                Kind::Usage,
                format!(
                    "--policy: `{kind}` is written for side `{}`, not `{side}`",
                    program.sides[p.side as usize].name
                ),
            );
            return Err(EXIT_USAGE);
        }
        if written.is_none() && !policy::is_kind(&kind) {
            let mut known: Vec<String> = policy::KINDS.iter().map(|k| k.to_string()).collect();
            known.extend(
                program
                    .policies
                    .iter()
                    .map(|p| format!("{} (for {})", p.name, program.sides[p.side as usize].name)),
            );
            report::error(
                Kind::Usage,
                format!(
                    "--policy: unknown policy `{kind}`; policies are: {}",
                    known.join(", ")
                ),
            );
            return Err(EXIT_USAGE);
        }
        kinds[s] = kind;
    }
    Ok(kinds)
}

/// Compiled code for the rules when `kind` asks for it and the JIT starts here.
fn jit_for(l: &Loaded, kind: BackendKind) -> Option<JitProgram<'_>> {
    match kind {
        BackendKind::Interp => None,
        BackendKind::Jit => report::backend(&l.program, &l.assumptions, BackendArg::Jit).jit,
    }
}

/// What `run` and `sim` start from: the rules with their assumptions, and the policy kinds.
fn load_game(a: &GameArgs) -> Result<(Loaded, Vec<String>), u8> {
    let loaded = load(
        &a.ruleset,
        &a.scenario,
        &a.assumes,
        Assumed::Files(&a.assumption_files),
    )?;
    refuse_without_assumptions(a, &loaded)?;
    let kinds = policy_kinds(&loaded.program, &a.policies)?;
    Ok((loaded, kinds))
}

/// A scenario that reads values the book leaves blank, played with no assumptions file at
/// all, does not start: it lists what it needs instead of stopping at the first `?` it meets.
fn refuse_without_assumptions(a: &GameArgs, l: &Loaded) -> Result<(), u8> {
    if !l.files.is_empty() {
        return Ok(());
    }
    let wanted = a.scenario.replace('-', "_");
    let Some(s) = l.program.scenarios.iter().find(|c| c.name == wanted) else {
        return Ok(());
    };
    let missing: Vec<&str> = super::scenarios::needed(&l.program, s)
        .into_iter()
        .filter(|u| !l.assumptions.values.contains_key(u))
        .map(|u| l.program.unknowns[u as usize].name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    report::error(
        Kind::Query,
        format!(
            "scenario `{}` needs {} the book leaves blank, and no assumptions file gives them: {}. \
             Write them in {}, one `assume NAME = VALUE \"why\"` line each (or pass --assumptions FILE)",
            a.scenario,
            report::plural(missing.len(), "value"),
            missing.join(", "),
            a.ruleset
                .join("assumptions")
                .join(format!("{}.assume", wanted.replace('_', "-")))
                .display()
        ),
    );
    Err(EXIT_FINDINGS)
}

/// The lines before the narrative: what is being played, and what is not from the book.
fn preamble(h: &Header, r: &Rules) -> Vec<String> {
    let mut v = vec![format!(
        "{}: {} (seed {})",
        h.ruleset, r.scenario_title, h.seed
    )];
    match &r.stand_in_for {
        Some(b) => v.push(format!(
            "board: {} (a stand-in for `{b}`; not from the book)",
            r.board_name
        )),
        None => v.push(format!("board: {}", r.board_name)),
    }
    if !h.assumptions.is_empty() {
        v.push(format!(
            "assumptions (not from the book): {}",
            h.assumptions.join(", ")
        ));
    }
    if !h.assume.is_empty() {
        v.push(format!(
            "assumed on the command line: {}",
            h.assume
                .iter()
                .map(|(k, x)| format!("{k}={x}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !r.turns_printed {
        v.push(format!(
            "turns: no limit given; the game stops after {}",
            r.turns
        ));
    }
    v.push(format!(
        "policies: {}",
        h.policies
            .iter()
            .map(|(s, k)| format!("{s}={k}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    v
}

/// Print the narrative; once `stop` is set (a signal), stop after the current line.
fn print_story(
    pre: &[String],
    events: &[Event],
    unit: Option<&str>,
    stop: Option<&std::sync::atomic::AtomicBool>,
) {
    let stopped = || stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
    let mut out = std::io::stdout().lock();
    for l in pre {
        let _ = writeln!(out, "{l}");
    }
    for e in events {
        if stopped() {
            break;
        }
        if let Some(line) = log::narrate(e, unit) {
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = out.flush();
}

#[derive(Serialize)]
struct ResultJson<'a> {
    ruleset: &'a str,
    scenario: &'a str,
    seed: u64,
    winner: Option<String>,
    turns: u32,
    scores: Vec<(String, i64)>,
    losses: Vec<(String, u32)>,
    decisions: u32,
}

fn result_json<'a>(h: &'a Header, r: &Rules, g: &GameResult) -> ResultJson<'a> {
    let sides = r.sides();
    ResultJson {
        ruleset: &h.ruleset,
        scenario: &h.scenario,
        seed: h.seed,
        winner: match g.winner {
            Winner::Side(s) => Some(r.side_name(s).to_string()),
            Winner::Draw => None,
        },
        turns: g.turns,
        scores: sides
            .iter()
            .map(|s| (r.side_name(*s).to_string(), g.scores[*s as usize]))
            .collect(),
        losses: sides
            .iter()
            .map(|s| (r.side_name(*s).to_string(), g.losses[*s as usize]))
            .collect(),
        decisions: g.decisions,
    }
}

/// The folder a log lives in.
fn log_dir(log: &Path) -> PathBuf {
    log.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The ruleset's path as a log records it: relative to the log's folder when the rules lie
/// inside it, so `replay` finds them from there; otherwise as given (for the reader only).
fn recorded_ruleset(ruleset: &Path, log: Option<&Path>) -> String {
    let inside = log.and_then(|log| {
        let dir = log_dir(log).canonicalize().ok()?;
        let rules = ruleset.canonicalize().ok()?;
        let rel = rules.strip_prefix(&dir).ok()?;
        Some(if rel.as_os_str().is_empty() {
            ".".to_string()
        } else {
            rel.display().to_string()
        })
    });
    inside.unwrap_or_else(|| ruleset.display().to_string())
}

/// The rules a log names, if they are inside the log's folder: a header is data from
/// anywhere, so its path is followed only there (never absolute, never through `..` or a
/// link that leads out).
fn ruleset_beside(log: &Path, recorded: &str, what: &str) -> Result<PathBuf, String> {
    use std::path::Component;
    let rel = Path::new(recorded);
    let plain = !recorded.is_empty()
        && rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    let dir = log_dir(log);
    let path = dir.join(rel);
    if plain && !path.exists() {
        return Err(format!(
            "the rules the {what} names, `{recorded}`, are not beside the {what} (looked for {}); name them with --ruleset PATH",
            path.display()
        ));
    }
    if plain && sandtable_compiler::source::is_inside(&path, &dir) {
        Ok(path)
    } else {
        Err(format!(
            "the {what} names its rules as `{recorded}`, which is not inside the {what}'s folder; rules are read from there only: name them with --ruleset PATH"
        ))
    }
}

/// A log's text: the header line, then one line per event.
fn log_text(header: &Header, events: &[Event]) -> String {
    let mut text = serde_json::to_string(header).unwrap_or_default();
    for e in events {
        text.push('\n');
        text.push_str(&serde_json::to_string(e).unwrap_or_default());
    }
    text.push('\n');
    text
}

/// Write `text` to `path` whole or not at all: into a temporary file beside it, flushed to
/// disk, then renamed over it. A write cut short (a full disk, a file-size limit) leaves the
/// old file as it was.
fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the path names no file"))?;
    let tmp = log_dir(path).join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// What `run` has played, shared with the thread that hears signals.
struct Played {
    /// Set by the first SIGINT or SIGTERM: the game stops at its next decision.
    stop: std::sync::atomic::AtomicBool,
    /// Which signal it was, for the exit status.
    signal: std::sync::atomic::AtomicI32,
    /// The events before the decision being made, and whether the command has taken over
    /// writing them (then the signal thread leaves them alone).
    events: std::sync::Mutex<(Vec<Event>, bool)>,
}

impl Played {
    fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }
    fn exit_code(&self) -> u8 {
        crate::interrupt::exit_code(self.signal.load(std::sync::atomic::Ordering::Relaxed)) as u8
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<Event>, bool)> {
        self.events.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A side's policy that records the game at each decision and refuses to decide once a
/// signal came.
struct Watched {
    inner: Box<dyn policy::Policy>,
    played: std::sync::Arc<Played>,
}

impl Watched {
    fn check(&self) -> Result<(), sandtable_runtime::engine::EngineError> {
        if self.played.stopped() {
            Err(sandtable_runtime::engine::EngineError::Policy(
                "interrupted".into(),
            ))
        } else {
            Ok(())
        }
    }
}

impl policy::Policy for Watched {
    fn choose(
        &mut self,
        game: &Game,
        side: sandtable_compiler::ir::SideId,
        choices: &[sandtable_runtime::engine::Choice],
    ) -> Result<usize, sandtable_runtime::engine::EngineError> {
        self.check()?;
        {
            let mut played = self.played.lock();
            let known = played.0.len();
            played.0.extend(game.events.iter().skip(known).cloned());
        }
        self.inner.choose(game, side, choices)
    }
    fn answer(
        &mut self,
        game: &Game,
        side: sandtable_compiler::ir::SideId,
        choices: &[sandtable_runtime::engine::Choice],
    ) -> Result<policy::Answer, sandtable_runtime::engine::EngineError> {
        self.check()?;
        {
            let mut played = self.played.lock();
            let known = played.0.len();
            played.0.extend(game.events.iter().skip(known).cloned());
        }
        self.inner.answer(game, side, choices)
    }
    fn reason(&self) -> Option<String> {
        self.inner.reason()
    }
    fn stream(&self) -> Option<sandtable_runtime::rng::DiceState> {
        self.inner.stream()
    }
    fn restore(&mut self, stream: &sandtable_runtime::rng::DiceState) -> Result<(), String> {
        self.inner.restore(stream)
    }
    fn memory(&self) -> Option<serde_json::Value> {
        self.inner.memory()
    }
    fn recall(&mut self, memory: &serde_json::Value) -> Result<(), String> {
        self.inner.recall(memory)
    }
}

/// How long a stopped game may take to reach its next decision before the signal thread
/// writes what was played itself (a side waiting for a human never reaches it).
const GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// `GRACE`, which debug builds let a test lengthen (`SANDTABLE_DEBUG_GRACE_MS`) so that a game
/// answered after a signal reaches its next decision however loaded the machine is; never
/// shipped.
fn grace() -> std::time::Duration {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("SANDTABLE_DEBUG_GRACE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return std::time::Duration::from_millis(ms);
    }
    GRACE
}

/// The events of an interrupted game, closed with the line that says so.
fn interrupted(mut events: Vec<Event>) -> Vec<Event> {
    let decisions = events
        .iter()
        .filter(|e| matches!(e, Event::Decision { .. }))
        .count() as u32;
    events.push(Event::Interrupted { decisions });
    events
}

/// Save an interrupted game's log (if one was asked for) and say so.
fn report_interrupt(header: &Header, events: &[Event], log: Option<&Path>) {
    let decisions = events
        .iter()
        .filter(|e| matches!(e, Event::Decision { .. }))
        .count();
    let saved = match log {
        Some(path) => match write_atomic(path, &log_text(header, events)) {
            Ok(()) => format!("; what was played is in {}", path.display()),
            Err(e) => format!("; cannot write {}: {e}", path.display()),
        },
        None => String::new(),
    };
    report::error(
        Kind::Interrupted,
        format!("interrupted after {decisions} decision(s); the game is not finished{saved}"),
    );
}

pub fn run(args: RunArgs) -> u8 {
    let a = &args.game;
    let (loaded, kinds) = match load_game(a) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let rules = match rules(&loaded, &a.scenario) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let backend = a.backend.kind();
    let jit = jit_for(&loaded, backend);
    let header = Header {
        format: LOG_FORMAT.into(),
        version: LOG_VERSION,
        ruleset: loaded.program.name.clone(),
        ruleset_path: recorded_ruleset(&a.ruleset, args.log.as_deref()),
        ruleset_hash: loaded.hash.clone(),
        scenario: rules.scenario.clone(),
        seed: args.seed,
        backend: backend.name().into(),
        policies: rules
            .sides()
            .iter()
            .map(|s| (rules.side_name(*s).to_string(), kinds[*s as usize].clone()))
            .collect(),
        assumptions: loaded.files.clone(),
        assumption_texts: loaded.texts.clone(),
        assume: report::pairs(&a.assumes, "--assume").unwrap_or_default(),
    };
    let policies = match policy::for_sides_in(&loaded.program, &kinds, args.seed) {
        Ok(p) => p,
        Err(e) => {
            report::error(Kind::Usage, e);
            return EXIT_USAGE;
        }
    };
    let game = Game::new(&rules, args.seed, jit.as_ref());
    let d = Drive {
        header: &header,
        rules: &rules,
        ruleset: &a.ruleset,
        kinds: &kinds,
        json: args.json,
        log: args.log.as_deref(),
        stop_after: args.stop_after.zip(args.save.as_deref()),
    };
    drive(&d, game, policies)
}

/// What `run` and `resume` play with.
struct Drive<'a> {
    header: &'a Header,
    rules: &'a Rules<'a>,
    /// The rules' path as given (a save records it relative to its own folder).
    ruleset: &'a Path,
    kinds: &'a [String],
    json: bool,
    log: Option<&'a Path>,
    /// Stop after this many decisions and save the game there.
    stop_after: Option<(u64, &'a Path)>,
}

/// Play `game` on to its end (or to `--stop-after`), telling the story as it happens.
fn drive(d: &Drive, mut game: Game, policies: Vec<Box<dyn policy::Policy>>) -> u8 {
    let played = std::sync::Arc::new(Played {
        stop: false.into(),
        signal: 0.into(),
        events: std::sync::Mutex::new((game.events.clone(), false)),
    });
    if d.log.is_some() || d.stop_after.is_some() {
        // Past a file-size limit the kernel sends SIGXFSZ, whose default kills the process
        // mid-write; heard, the write fails instead and the old file is kept.
        let _ = signal_hook::flag::register(
            signal_hook::consts::SIGXFSZ,
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
    }
    {
        let played = played.clone();
        let header = d.header.clone();
        let log = d.log.map(Path::to_path_buf);
        crate::interrupt::on_signal(move |signal| {
            played
                .signal
                .store(signal, std::sync::atomic::Ordering::Relaxed);
            played
                .stop
                .store(true, std::sync::atomic::Ordering::Relaxed);
            let started = Instant::now();
            let grace = grace();
            while started.elapsed() < grace {
                if played.lock().1 {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let guard = played.lock();
            if guard.1 {
                return;
            }
            // Whatever was being written (a prompt) ends its line first.
            eprintln!();
            report_interrupt(&header, &interrupted(guard.0.clone()), log.as_deref());
            std::process::exit(crate::interrupt::exit_code(signal));
        });
    }
    let mut policies: Vec<Box<dyn policy::Policy>> = policies
        .into_iter()
        .map(|inner| {
            Box::new(Watched {
                inner,
                played: played.clone(),
            }) as Box<dyn policy::Policy>
        })
        .collect();
    // The story is told as it happens: the lines before it, what was played before a resume,
    // then every event once the step that made it is done. Not while a person plays: the
    // story names every piece, face down or not, so it waits for the end of the game (the
    // player's own feed shows what that side may see).
    let live = !d.kinds.iter().any(|k| k == "human");
    let mut told = 0;
    if !d.json {
        let mut out = std::io::stdout().lock();
        for l in preamble(d.header, d.rules) {
            let _ = writeln!(out, "{l}");
        }
    }
    let tell = |game: &Game, told: &mut usize| {
        if d.json || !live {
            return;
        }
        let mut out = std::io::stdout().lock();
        for e in &game.events[*told..] {
            if let Some(line) = log::narrate(e, game.rules.program.length_unit.as_deref()) {
                let _ = writeln!(out, "{line}");
            }
        }
        let _ = out.flush();
        *told = game.events.len();
    };
    let mut made = 0u64;
    let outcome = (|| -> Result<Option<&Path>, sandtable_runtime::engine::EngineError> {
        game.advance()?;
        loop {
            tell(&game, &mut told);
            let Some(side) = game.to_move() else {
                return Ok(None);
            };
            if let Some((n, path)) = d.stop_after
                && made >= n
            {
                return Ok(Some(path));
            }
            let policy = &mut policies[side as usize];
            match policy.answer(&game, side, game.legal()) {
                Ok(policy::Answer::Listed(k)) => game.apply_because(k, policy.reason())?,
                Ok(policy::Answer::Point { like, at }) => game.apply_point(like, at)?,
                Err(sandtable_runtime::engine::EngineError::SaveAsked(path)) => {
                    let path = PathBuf::from(path);
                    match save_game(d, &game, &policies, &path) {
                        Ok(()) => eprintln!(
                            "saved the game to {0}; go on with: sandtable resume {0}",
                            path.display()
                        ),
                        Err(e) => eprintln!("{e}"),
                    }
                    continue;
                }
                Err(e) => return Err(e),
            }
            made += 1;
        }
    })();
    // From here on this thread writes the log, not the signal thread.
    played.lock().1 = true;
    match outcome {
        Ok(Some(path)) => {
            if let Err(e) = save_game(d, &game, &policies, path) {
                report::error(Kind::Io, e);
                return EXIT_USAGE;
            }
            if d.json {
                report::print_json(&SavedJson {
                    saved: path.display().to_string(),
                    decisions: made,
                    ruleset: &d.header.ruleset,
                    scenario: &d.header.scenario,
                    seed: d.header.seed,
                });
            } else {
                println!(
                    "\nSaved after {made} decision(s) to {0}; go on with: sandtable resume {0}",
                    path.display()
                );
            }
            return EXIT_OK;
        }
        Ok(None) => {}
        Err(_) if played.stopped() => {
            let events = interrupted(std::mem::take(&mut game.events));
            if !d.json {
                print_story(
                    &[],
                    &events[told.min(events.len())..],
                    game.rules.program.length_unit.as_deref(),
                    None,
                );
            }
            report_interrupt(d.header, &events, d.log);
            return played.exit_code();
        }
        Err(e) => {
            report::error(Kind::Run, e);
            return EXIT_FINDINGS;
        }
    }
    let Some(result) = game.result().cloned() else {
        report::error(Kind::Internal, "the game stopped before its end");
        return EXIT_FINDINGS;
    };
    if let Some((n, _)) = d.stop_after {
        eprintln!(
            "the game ended after {made} decision(s), before --stop-after {n}: nothing was saved"
        );
    }
    if let Some(path) = d.log
        && let Err(e) = write_atomic(path, &log_text(d.header, &game.events))
    {
        report::error(
            Kind::Io,
            format!(
                "cannot write {}: {e}; an earlier file there is left as it was",
                path.display()
            ),
        );
        return EXIT_USAGE;
    }
    if d.json {
        report::print_json(&result_json(d.header, d.rules, &result));
    } else if !live {
        print_story(
            &[],
            &game.events[told..],
            game.rules.program.length_unit.as_deref(),
            Some(&played.stop),
        );
    }
    if played.stopped() {
        report::error(
            Kind::Interrupted,
            "interrupted while printing; the game finished and its log is complete",
        );
        return played.exit_code();
    }
    EXIT_OK
}

#[derive(Serialize)]
struct SavedJson<'a> {
    saved: String,
    decisions: u64,
    ruleset: &'a str,
    scenario: &'a str,
    seed: u64,
}

/// Write the game as it stands (at a decision) to `path`, whole or not at all.
fn save_game(
    d: &Drive,
    game: &Game,
    policies: &[Box<dyn policy::Policy>],
    path: &Path,
) -> Result<(), String> {
    let mut header = d.header.clone();
    header.ruleset_path = recorded_ruleset(d.ruleset, Some(path));
    let saved: Vec<SavedPolicy> = policies
        .iter()
        .enumerate()
        .map(|(s, p)| SavedPolicy {
            side: d.rules.side_name(s as u32).to_string(),
            kind: d.kinds[s].clone(),
            stream: p.stream(),
            memory: p.memory(),
        })
        .collect();
    let text = save::write(&header, game.game_state()?, game.events.clone(), saved)?;
    write_atomic(path, &text).map_err(|e| {
        format!(
            "cannot write {}: {e}; an earlier file there is left as it was",
            path.display()
        )
    })
}

pub fn resume(args: ResumeArgs) -> u8 {
    let text = match save::read(&args.save) {
        Ok(t) => t,
        Err(e) => {
            report::error(Kind::Io, e);
            return EXIT_USAGE;
        }
    };
    let file = match save::parse(&text) {
        Ok(f) => f,
        Err(e) => {
            report::error(Kind::Replay, format!("{}: {e}", args.save.display()));
            return EXIT_FINDINGS;
        }
    };
    let mut header = file.header;
    let ruleset = match &args.ruleset {
        Some(r) => r.clone(),
        None => match ruleset_beside(&args.save, &header.ruleset_path, "save") {
            Ok(p) => p,
            Err(e) => {
                report::error(Kind::Replay, format!("{}: {e}", args.save.display()));
                return EXIT_USAGE;
            }
        },
    };
    let loaded = match load_recorded(&header, &ruleset, &args.save) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let rules = match rules(&loaded, &header.scenario) {
        Ok(r) => r,
        Err(c) => return c,
    };
    // The policies it was saved with, unless named again; a policy saved goes on with its
    // own stream where it stood.
    let mut kinds: Vec<String> = (0..loaded.program.sides.len())
        .map(|s| {
            file.policies
                .get(s)
                .map_or_else(|| "random".to_string(), |p| p.kind.clone())
        })
        .collect();
    match policy_kinds(&loaded.program, &args.policies) {
        Ok(given) => {
            for (side, _) in report::pairs(&args.policies, "--policy").unwrap_or_default() {
                if let Some(s) = loaded.program.sides.iter().position(|x| x.name == side) {
                    kinds[s] = given[s].clone();
                }
            }
        }
        Err(c) => return c,
    }
    let mut policies = match policy::for_sides_in(&loaded.program, &kinds, header.seed) {
        Ok(p) => p,
        Err(e) => {
            report::error(Kind::Usage, e);
            return EXIT_USAGE;
        }
    };
    for (s, p) in policies.iter_mut().enumerate() {
        if let Some(saved) = file.policies.get(s)
            && saved.kind == kinds[s]
            && let Some(stream) = &saved.stream
            && let Err(e) = p.restore(stream)
        {
            report::error(Kind::Replay, format!("{}: {e}", args.save.display()));
            return EXIT_FINDINGS;
        }
        if let Some(saved) = file.policies.get(s)
            && saved.kind == kinds[s]
            && let Some(memory) = &saved.memory
            && let Err(e) = p.recall(memory)
        {
            report::error(Kind::Replay, format!("{}: {e}", args.save.display()));
            return EXIT_FINDINGS;
        }
    }
    let backend = if header.backend == BackendKind::Interp.name() {
        BackendKind::Interp
    } else {
        BackendKind::Jit
    };
    let jit = jit_for(&loaded, backend);
    let mut game = match Game::from_state(&rules, file.game, jit.as_ref()) {
        Ok(g) => g,
        Err(e) => {
            report::error(Kind::Replay, format!("{}: {e}", args.save.display()));
            return EXIT_FINDINGS;
        }
    };
    game.events = file.events;
    header.ruleset_path = recorded_ruleset(&ruleset, args.log.as_deref());
    header.policies = rules
        .sides()
        .iter()
        .map(|s| (rules.side_name(*s).to_string(), kinds[*s as usize].clone()))
        .collect();
    let d = Drive {
        header: &header,
        rules: &rules,
        ruleset: &ruleset,
        kinds: &kinds,
        json: args.json,
        log: args.log.as_deref(),
        stop_after: args.stop_after.zip(args.save_to.as_deref()),
    };
    drive(&d, game, policies)
}

/// The rules a log or save names, with the assumptions it carries, refused unless their
/// fingerprint is the recorded one.
fn load_recorded(header: &Header, ruleset: &Path, file: &Path) -> Result<Loaded, u8> {
    if header.assumption_texts.len() != header.assumptions.len() {
        report::error(
            Kind::Replay,
            format!(
                "{}: the header names {} assumption file(s) but holds {} text(s): the file is damaged",
                file.display(),
                header.assumptions.len(),
                header.assumption_texts.len()
            ),
        );
        return Err(EXIT_FINDINGS);
    }
    let texts = header
        .assumptions
        .iter()
        .cloned()
        .zip(header.assumption_texts.iter().cloned())
        .collect();
    let assumes: Vec<String> = header
        .assume
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let loaded = load(ruleset, &header.scenario, &assumes, Assumed::Texts(texts))?;
    if loaded.hash != header.ruleset_hash {
        report::error(
            Kind::Replay,
            format!(
                "{}: the rules or assumptions at {} are not the ones this game was played with (fingerprint {} recorded, {} now)",
                file.display(),
                ruleset.display(),
                header.ruleset_hash,
                loaded.hash
            ),
        );
        return Err(EXIT_FINDINGS);
    }
    Ok(loaded)
}

pub fn replay(args: ReplayArgs) -> u8 {
    let text = match log::read(&args.log) {
        Ok(t) => t,
        Err(e) => {
            report::error(Kind::Io, e);
            return EXIT_USAGE;
        }
    };
    let (header, events) = match log::parse(&text) {
        Ok(x) => x,
        Err(e) => {
            report::error(Kind::Replay, format!("{}: {e}", args.log.display()));
            return EXIT_FINDINGS;
        }
    };
    let ruleset = match &args.ruleset {
        Some(r) => r.clone(),
        None => match ruleset_beside(&args.log, &header.ruleset_path, "log") {
            Ok(p) => p,
            Err(e) => {
                report::error(Kind::Replay, format!("{}: {e}", args.log.display()));
                return EXIT_USAGE;
            }
        },
    };
    let loaded = match load_recorded(&header, &ruleset, &args.log) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let rules = match rules(&loaded, &header.scenario) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let backend = if header.backend == BackendKind::Interp.name() {
        BackendKind::Interp
    } else {
        BackendKind::Jit
    };
    let jit = jit_for(&loaded, backend);
    // Each side's decisions, in order, played back by a scripted policy.
    let mut policies = match Scripted::from_events(&loaded.program, &events) {
        Ok(p) => p,
        Err(e) => {
            report::error(Kind::Replay, format!("{}: {e}", args.log.display()));
            return EXIT_FINDINGS;
        }
    };
    let mut game = Game::new(&rules, header.seed, jit.as_ref());
    let result = match game.play(&mut policies) {
        Ok(r) => r,
        Err(e) => {
            report::error(Kind::Replay, format!("{}: {e}", args.log.display()));
            return EXIT_FINDINGS;
        }
    };
    if let Some(i) =
        (0..events.len().max(game.events.len())).find(|&i| events.get(i) != game.events.get(i))
    {
        // A silent event is shown as its log line.
        let show = |e: Option<&Event>| {
            e.map_or("nothing".into(), |e| {
                log::narrate(e, loaded.program.length_unit.as_deref())
                    .unwrap_or_else(|| serde_json::to_string(e).unwrap_or_default())
            })
        };
        report::error(
            Kind::Replay,
            format!(
                "{}: event {} differs: the log has `{}`, the rules give `{}`",
                args.log.display(),
                i + 1,
                show(events.get(i)).trim(),
                show(game.events.get(i)).trim()
            ),
        );
        return EXIT_FINDINGS;
    }
    if args.json {
        report::print_json(&result_json(&header, &rules, &result));
    } else {
        print_story(
            &preamble(&header, &rules),
            &game.events,
            loaded.program.length_unit.as_deref(),
            None,
        );
    }
    EXIT_OK
}

#[derive(Serialize)]
struct SideJson {
    side: String,
    policy: String,
    wins: u64,
    win_rate: f64,
    ci95_low: f64,
    ci95_high: f64,
    mean_losses: f64,
    /// Pieces of the side that left the board, per game.
    mean_exits: f64,
    /// Wins that the side's exits decided: without them the victory block names another
    /// winner or none.
    wins_by_exits: u64,
}

#[derive(Serialize)]
struct SimJson {
    ruleset: String,
    scenario: String,
    games: u64,
    /// The games asked for; more than `games` when a signal stopped the run.
    games_requested: u64,
    /// A signal stopped the run: the figures are of the games finished.
    partial: bool,
    seed: u64,
    jobs: usize,
    backend: String,
    sides: Vec<SideJson>,
    draws: u64,
    draw_rate: f64,
    mean_turns: f64,
    mean_decisions: f64,
    seconds: f64,
    playouts_per_second: f64,
    assumptions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reference: Option<ReferenceJson>,
}

#[derive(Serialize)]
struct ReferenceJson {
    name: String,
    seconds: f64,
    playouts_per_second: f64,
    /// Engine playouts/s over the reference's.
    ratio: f64,
    /// The reference's totals equal the engine's (the same games were played).
    same_totals: bool,
}

pub fn sim(args: SimArgs) -> u8 {
    // A signal stops new games from starting; the totals of those played are printed,
    // marked partial. Heard from the start, so a signal while the rules load is no crash.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let signal = std::sync::Arc::new(std::sync::atomic::AtomicI32::new(0));
    {
        let (stop, signal) = (stop.clone(), signal.clone());
        crate::interrupt::on_signal(move |s| {
            signal.store(s, std::sync::atomic::Ordering::Relaxed);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
    }
    let a = &args.game;
    if args.n == 0 || args.n > MAX_GAMES {
        report::error(
            Kind::Usage,
            format!("-n must be 1 to {MAX_GAMES}, not {}", args.n),
        );
        return EXIT_USAGE;
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 || jobs > 1024 {
        report::error(Kind::Usage, format!("--jobs must be 1 to 1024, not {jobs}"));
        return EXIT_USAGE;
    }
    if let Some(vary) = &args.vary {
        return sim_vary(&args, vary, jobs, &stop, &signal);
    }
    let (loaded, kinds) = match load_game(a) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let rules = match rules(&loaded, &a.scenario) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let (mut out, totals) = match play_many(&args, &loaded, &rules, &kinds, jobs, &stop, "") {
        Ok(x) => x,
        Err(c) => return c,
    };
    if out.partial {
        if args.json {
            report::print_json(&out);
        } else {
            print_summary(&out);
        }
        eprintln!(
            "interrupted: the totals are of the {} game(s) finished, not of the {} asked for",
            out.games, out.games_requested
        );
        return crate::interrupt::exit_code(signal.load(std::sync::atomic::Ordering::Relaxed))
            as u8;
    }
    if let Some(which) = args.reference {
        // Each reference plays one scenario between random policies, and nothing else.
        let (name, scenario, what) = match which {
            ReferenceArg::PlatoonFlank => (
                "platoon-flank",
                "protecting_the_flank",
                "Platoon's protecting-the-flank",
            ),
            ReferenceArg::PlasticTotalDestruction => (
                "plastic-total-destruction",
                "total_destruction",
                "Plastic Battle's total-destruction",
            ),
        };
        if rules.scenario != scenario || kinds.iter().any(|k| k != "random") {
            report::error(
                Kind::Usage,
                format!("--reference {name} plays {what} with random policies only"),
            );
            return EXIT_USAGE;
        }
        type Playout<'a> =
            Box<dyn Fn(u64) -> sandtable_runtime::engine::GameResult + Sync + Send + 'a>;
        let read: Result<Playout, String> = match which {
            ReferenceArg::PlatoonFlank => sandtable_reference::Flank::new(&rules)
                .map(|f| Box::new(move |seed| f.playout(seed)) as Playout),
            ReferenceArg::PlasticTotalDestruction => {
                sandtable_reference::TotalDestruction::new(&rules)
                    .map(|f| Box::new(move |seed| f.playout(seed)) as Playout)
            }
        };
        let playout = match read {
            Ok(p) => p,
            Err(e) => {
                report::error(
                    Kind::Run,
                    format!("the reference cannot read these rules: {e}"),
                );
                return EXIT_FINDINGS;
            }
        };
        let t1 = Instant::now();
        let rt = match sim::simulate_playouts(
            loaded.program.sides.len(),
            args.n,
            args.seed,
            jobs,
            playout,
        ) {
            Ok(t) => t,
            Err(e) => {
                report::error(Kind::Run, e);
                return EXIT_FINDINGS;
            }
        };
        let rs = t1.elapsed().as_secs_f64();
        let rps = if rs > 0.0 { args.n as f64 / rs } else { 0.0 };
        out.reference = Some(ReferenceJson {
            name: name.into(),
            seconds: rs,
            playouts_per_second: rps,
            ratio: if rps > 0.0 {
                out.playouts_per_second / rps
            } else {
                0.0
            },
            same_totals: rt == totals,
        });
    }
    if args.json {
        report::print_json(&out);
    } else {
        print_summary(&out);
    }
    EXIT_OK
}

/// Plays `args.n` games with a progress bar and sums them up; an engine error is reported
/// (after `context`) and becomes the exit code.
fn play_many(
    args: &SimArgs,
    loaded: &Loaded,
    rules: &Rules,
    kinds: &[String],
    jobs: usize,
    stop: &std::sync::atomic::AtomicBool,
    context: &str,
) -> Result<(SimJson, sim::Totals), u8> {
    let backend = args.game.backend.kind();
    let progress = report::Progress::at_least(args.n, "games", 200);
    let t0 = Instant::now();
    let totals = sim::simulate_until(
        rules,
        args.n,
        args.seed,
        jobs,
        backend,
        kinds,
        &|k| progress.inc(k),
        stop,
    )
    .map_err(|e| {
        report::error(Kind::Run, format!("{context}{e}"));
        EXIT_FINDINGS
    })?;
    drop(progress);
    let secs = t0.elapsed().as_secs_f64();
    let out = summary(args, loaded, rules, kinds, jobs, backend, &totals, secs);
    Ok((out, totals))
}

/// `NAME=V1,V2,…` → the name and its values (at least two, none empty, none repeated).
fn parse_vary(spec: &str) -> Result<(String, Vec<String>), String> {
    let (name, values) = sandtable_compiler::assume::split_kv(spec)
        .map_err(|e| format!("--vary: {e} (NAME=V1,V2,…)"))?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    if values.len() < 2 || values.iter().any(String::is_empty) {
        return Err(format!(
            "--vary: give two or more values separated by commas: `{name}=V1,V2`"
        ));
    }
    for (k, v) in values.iter().enumerate() {
        if values[..k].contains(v) {
            return Err(format!("--vary: the value `{v}` is given twice"));
        }
    }
    Ok((name, values))
}

/// The figures of a `--vary` run: one `sim` summary per value, all on the same seeds.
#[derive(Serialize)]
struct VaryJson {
    vary: String,
    values: Vec<VaryValueJson>,
}

#[derive(Serialize)]
struct VaryValueJson {
    value: String,
    #[serde(flatten)]
    sim: SimJson,
}

/// `sim --vary NAME=V1,V2,…`: the same games (same seeds, same policies) played once per value
/// of one assumption, which is applied after the files and the other `--assume` values.
fn sim_vary(
    args: &SimArgs,
    spec: &str,
    jobs: usize,
    stop: &std::sync::atomic::AtomicBool,
    signal: &std::sync::atomic::AtomicI32,
) -> u8 {
    let a = &args.game;
    if args.reference.is_some() {
        report::error(
            Kind::Usage,
            "--vary and --reference cannot be used together",
        );
        return EXIT_USAGE;
    }
    let (name, values) = match parse_vary(spec) {
        Ok(x) => x,
        Err(e) => {
            report::error(Kind::Usage, e);
            return EXIT_USAGE;
        }
    };
    let mut rows = Vec::new();
    for v in &values {
        let mut assumes = a.assumes.clone();
        assumes.push(format!("{name}={v}"));
        let loaded = match load(
            &a.ruleset,
            &a.scenario,
            &assumes,
            Assumed::Files(&a.assumption_files),
        ) {
            Ok(l) => l,
            Err(c) => return c,
        };
        if let Err(c) = refuse_without_assumptions(a, &loaded) {
            return c;
        }
        let kinds = match policy_kinds(&loaded.program, &a.policies) {
            Ok(k) => k,
            Err(c) => return c,
        };
        let rules = match rules(&loaded, &a.scenario) {
            Ok(r) => r,
            Err(c) => return c,
        };
        let context = format!("with {name}={v}: ");
        let sim = match play_many(args, &loaded, &rules, &kinds, jobs, stop, &context) {
            Ok((sim, _)) => sim,
            Err(c) => return c,
        };
        let partial = sim.partial;
        rows.push(VaryValueJson {
            value: v.clone(),
            sim,
        });
        if partial {
            break;
        }
    }
    let out = VaryJson {
        vary: name,
        values: rows,
    };
    if args.json {
        report::print_json(&out);
    } else {
        print_vary(&out);
    }
    if out.values.iter().any(|r| r.sim.partial) {
        eprintln!("interrupted: the figures of the last value are of the games finished");
        return crate::interrupt::exit_code(signal.load(std::sync::atomic::Ordering::Relaxed))
            as u8;
    }
    EXIT_OK
}

fn print_vary(v: &VaryJson) {
    let Some(first) = v.values.first() else {
        return;
    };
    let s = &first.sim;
    println!(
        "{}: {}: {} games per value from seed {} on {} thread(s), {} backend",
        s.ruleset, s.scenario, s.games_requested, s.seed, s.jobs, s.backend
    );
    if !s.assumptions.is_empty() {
        println!(
            "assumptions (not from the book): {}",
            s.assumptions.join(", ")
        );
    }
    println!("varying {} (the same seeds for every value)", v.vary);
    print!("{:<14}", "value");
    for x in &s.sides {
        print!(" {:>24}", format!("{} wins (95%)", x.side));
    }
    println!(" {:>7} {:>7}", "draws", "turns");
    for row in &v.values {
        let s = &row.sim;
        print!("{:<14}", row.value);
        for x in &s.sides {
            print!(
                " {:>24}",
                format!(
                    "{:.1}% ({:.1}-{:.1})",
                    100.0 * x.win_rate,
                    100.0 * x.ci95_low,
                    100.0 * x.ci95_high
                )
            );
        }
        println!(" {:>6.1}% {:>7.2}", 100.0 * s.draw_rate, s.mean_turns);
        if s.partial {
            println!(
                "  (interrupted: {} of {} games)",
                s.games, s.games_requested
            );
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn summary(
    args: &SimArgs,
    loaded: &Loaded,
    rules: &Rules,
    kinds: &[String],
    jobs: usize,
    backend: BackendKind,
    t: &Totals,
    secs: f64,
) -> SimJson {
    let n = t.games as f64;
    SimJson {
        ruleset: loaded.program.name.clone(),
        scenario: rules.scenario.clone(),
        games: t.games,
        games_requested: args.n,
        partial: t.games < args.n,
        seed: args.seed,
        jobs,
        backend: backend.name().into(),
        sides: rules
            .sides()
            .iter()
            .map(|&s| {
                let w = t.wins[s as usize];
                let (lo, hi) = sim::wilson(w, t.games);
                SideJson {
                    side: rules.side_name(s).to_string(),
                    policy: kinds[s as usize].clone(),
                    wins: w,
                    win_rate: w as f64 / n,
                    ci95_low: lo,
                    ci95_high: hi,
                    mean_losses: t.losses[s as usize] as f64 / n,
                    mean_exits: t.exits[s as usize] as f64 / n,
                    wins_by_exits: t.wins_by_exits[s as usize],
                }
            })
            .collect(),
        draws: t.draws,
        draw_rate: t.draws as f64 / n,
        mean_turns: t.turns as f64 / n,
        mean_decisions: t.decisions as f64 / n,
        seconds: secs,
        playouts_per_second: if secs > 0.0 { n / secs } else { 0.0 },
        assumptions: loaded.files.clone(),
        reference: None,
    }
}

/// A rate for the summary line: whole numbers from 10 up, else two decimals, so that a slow
/// search-driven run (well under one game a second) does not print as "0 playouts/s".
fn per_second(rate: f64) -> String {
    if rate >= 10.0 {
        format!("{rate:.0}")
    } else {
        format!("{rate:.2}")
    }
}

fn print_summary(s: &SimJson) {
    if s.partial {
        println!(
            "PARTIAL (interrupted): {} of {} games played; the figures are of those",
            s.games, s.games_requested
        );
    }
    println!(
        "{}: {}: {} games from seed {} on {} thread(s), {} backend",
        s.ruleset, s.scenario, s.games, s.seed, s.jobs, s.backend
    );
    if !s.assumptions.is_empty() {
        println!(
            "assumptions (not from the book): {}",
            s.assumptions.join(", ")
        );
    }
    // The columns widen for a long side or policy name (a policy written in the rules).
    let sw = s.sides.iter().map(|x| x.side.len()).fold(12, usize::max);
    let pw = s.sides.iter().map(|x| x.policy.len()).fold(8, usize::max);
    println!(
        "{:<sw$} {:<pw$} {:>8} {:>8}  {:<17} {:>11}",
        "side", "policy", "wins", "rate", "95% interval", "mean losses"
    );
    for x in &s.sides {
        println!(
            "{:<sw$} {:<pw$} {:>8} {:>7.1}%  {:>6.1}% - {:>5.1}%  {:>11.2}",
            x.side,
            x.policy,
            x.wins,
            100.0 * x.win_rate,
            100.0 * x.ci95_low,
            100.0 * x.ci95_high,
            x.mean_losses
        );
    }
    println!(
        "{:<sw$} {:<pw$} {:>8} {:>7.1}%",
        "draws",
        "",
        s.draws,
        100.0 * s.draw_rate
    );
    for x in s.sides.iter().filter(|x| x.mean_exits > 0.0) {
        println!(
            "{}: {:.3} pieces off the board per game; {} of {} wins decided by them",
            x.side, x.mean_exits, x.wins_by_exits, x.wins
        );
    }
    println!(
        "mean turns {:.2}, mean decisions {:.1}; {:.2} s, {} playouts/s",
        s.mean_turns,
        s.mean_decisions,
        s.seconds,
        per_second(s.playouts_per_second)
    );
    if let Some(r) = &s.reference {
        println!(
            "reference {}: {:.2} s, {} playouts/s; engine/reference = {:.3}x; same totals: {}",
            r.name,
            r.seconds,
            per_second(r.playouts_per_second),
            r.ratio,
            if r.same_totals { "yes" } else { "NO" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::per_second;

    #[test]
    fn slow_rates_keep_their_decimals_and_fast_ones_are_whole() {
        assert_eq!(per_second(0.0912), "0.09");
        assert_eq!(per_second(5.0), "5.00");
        assert_eq!(per_second(18.4), "18");
        assert_eq!(per_second(3235.6), "3236");
    }
}
