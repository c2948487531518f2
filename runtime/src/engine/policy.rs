//! Who decides for a side: `random` (uniform over the legal choices), `greedy` (one step of
//! look-ahead on the scenario's own scoring), `human` (a numbered prompt on the terminal) and
//! `scripted` (the choices of a log, for replays).

use std::io::{BufRead, Read, Write};

use sandtable_ir::SideId;

use super::{Choice, EngineError, Game, stream_seed};
use crate::rng::{Dice, DiceState};

/// What a policy answers a decision with: one of the listed choices, or (a person at the
/// prompt) a point of the open table typed in place of the point of listed choice `like`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Listed(usize),
    Point {
        like: usize,
        at: crate::board::Point,
    },
}

pub trait Policy {
    /// Answer the decision `game` waits for: by default one of `choices` ([`Policy::choose`]).
    /// A policy that answers with a point is played by [`Game::play`] and `run`, which carry
    /// it out with [`Game::apply_point`].
    fn answer(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<Answer, EngineError> {
        self.choose(game, side, choices).map(Answer::Listed)
    }
    /// Pick one of `choices`: the legal choices of the decision `game` waits for. A `choose`
    /// inside an action is a decision too: its choices are picks ([`super::Act::Pick`]),
    /// named by [`Game::label`].
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError>;
    /// Why the policy made its last choice, for the log: which of its rules decided (a policy
    /// written in the rules, or a log played back). `None`: it cannot say.
    fn reason(&self) -> Option<String> {
        None
    }
    /// Where the policy's own random stream stands, saved with a game so that a resumed game
    /// decides exactly as the uninterrupted one would (`None`: it has none).
    fn stream(&self) -> Option<DiceState> {
        None
    }
    /// Go on from a saved stream.
    fn restore(&mut self, _stream: &DiceState) -> Result<(), String> {
        Ok(())
    }
    /// What else the policy carries from one decision to the next (MCTS: the subtree of its
    /// last choice), saved with a game for the same reason as its stream.
    fn memory(&self) -> Option<serde_json::Value> {
        None
    }
    /// Go on from a saved memory.
    fn recall(&mut self, _memory: &serde_json::Value) -> Result<(), String> {
        Ok(())
    }
}

/// The decision is a `choose` inside an action.
pub(super) fn is_pick(choices: &[Choice]) -> bool {
    choices.first().is_some_and(|c| c.act == super::Act::Pick)
}

/// The policy kinds a user can name on the command line (`script:FILE` takes a file).
pub const KINDS: &[&str] = &[
    "random",
    "greedy",
    "human",
    "script:FILE",
    "mcts:ITERATIONS[:MILLIS]",
];

/// Whether `kind` names a policy (`script:` with any file name).
pub fn is_kind(kind: &str) -> bool {
    matches!(kind, "random" | "greedy" | "human")
        || kind.strip_prefix("script:").is_some_and(|f| !f.is_empty())
        || kind
            .strip_prefix("mcts:")
            .is_some_and(|spec| super::mcts::Mcts::parse(spec).is_ok())
}

#[derive(Clone)]
pub struct Random {
    dice: Dice,
}

impl Random {
    pub fn new(seed: u64, side: SideId) -> Self {
        Random {
            dice: Dice::new(stream_seed(seed, 1 + u64::from(side))),
        }
    }
}

impl Policy for Random {
    fn choose(&mut self, _: &Game, _: SideId, choices: &[Choice]) -> Result<usize, EngineError> {
        Ok(self.dice.index(choices.len() as u32) as usize)
    }
    fn stream(&self) -> Option<DiceState> {
        self.dice.portable()
    }
    fn restore(&mut self, stream: &DiceState) -> Result<(), String> {
        self.dice = Dice::from_portable(stream)?;
        Ok(())
    }
}

/// One step of look-ahead: each choice is played on `samples` copies of the game (own dice,
/// hidden pieces shuffled) and the position scored by [`Game::into_value`]; the best mean wins,
/// ties broken at random.
pub struct Greedy {
    dice: Dice,
    samples: u32,
}

impl Greedy {
    pub fn new(seed: u64, side: SideId) -> Self {
        Greedy {
            dice: Dice::new(stream_seed(seed, 101 + u64::from(side))),
            samples: 4,
        }
    }
}

impl Policy for Greedy {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        // Mid-action there is no position to score: a uniform pick.
        if is_pick(choices) {
            return Ok(self.dice.index(choices.len() as u32) as usize);
        }
        let values = lookahead_values(game, side, choices, self.samples, &mut self.dice);
        let top = values.iter().copied().max().unwrap_or(0);
        let best: Vec<usize> = (0..values.len()).filter(|&k| values[k] == top).collect();
        Ok(best[self.dice.index(best.len() as u32) as usize])
    }
    fn stream(&self) -> Option<DiceState> {
        self.dice.portable()
    }
    fn restore(&mut self, stream: &DiceState) -> Result<(), String> {
        self.dice = Dice::from_portable(stream)?;
        Ok(())
    }
}

/// Each choice's total value over `samples` look-ahead copies (own dice, hidden pieces
/// shuffled; `choose` points inside it answered at random), the position scored by
/// [`Game::into_value`]. A choice that fails in a copy counts as very bad.
pub(super) fn lookahead_values(
    game: &Game,
    side: SideId,
    choices: &[Choice],
    samples: u32,
    dice: &mut Dice,
) -> Vec<i64> {
    choices
        .iter()
        .map(|c| {
            let mut total = 0i64;
            for _ in 0..samples {
                let seed =
                    (u64::from(dice.index(u32::MAX)) << 32) | u64::from(dice.index(u32::MAX));
                let mut g = game.lookahead_copy(side, seed);
                if !g.choice_open(c) {
                    // Shut in this world (it re-dealt a secret the guard reads): it would
                    // not happen, so the position stays as it is.
                    total += g.into_value(side);
                    continue;
                }
                let mut inner = Random::new(seed, side);
                total += match g.try_choice(side, c, &mut inner) {
                    Ok(()) => g.into_value(side),
                    Err(_) => i64::MIN / 1024,
                };
            }
            total
        })
        .collect()
}

/// Longest answer line the human prompt reads.
pub const MAX_ANSWER_BYTES: u64 = 1024;

/// Asks on the terminal: prints what the side can see and the numbered choices.
pub struct Human<R: BufRead, W: Write> {
    input: R,
    output: W,
    /// Events of the game already shown.
    seen: usize,
    /// Places where another side's face-down deployment was told: a second piece set up
    /// there is not, so the feed tells no more of a stack than the board shows.
    deployed_at: std::collections::HashSet<String>,
}

impl<R: BufRead, W: Write> Human<R, W> {
    pub fn new(input: R, output: W) -> Self {
        Human {
            input,
            output,
            seen: 0,
            deployed_at: std::collections::HashSet::new(),
        }
    }
}

/// How the feed names a piece its reader cannot see the face of.
const FACE_DOWN: &str = "a face-down piece";

/// An event's line as `side` may read it: the pieces it cannot see are not named, and how
/// many face-down pieces another side activates is not told.
fn as_seen_by(
    game: &Game,
    side: SideId,
    e: &super::Event,
    told_apart: Option<bool>,
) -> Option<String> {
    // What another side picks inside an action (`choose … by SIDE`) is its own counsel: the
    // others learn it from what follows, as across a table. Told, a pick would give away
    // what the rules ask only of some pieces (an ambush offered only by a real blind).
    if let super::Event::Decision { side: s, label, .. } = e
        && s != game.rules.side_name(side)
        && label.starts_with(&choose_label(""))
    {
        return None;
    }
    let mut line = super::log::narrate(e, game.rules.program.length_unit.as_deref())?;
    let face_down_side = |name: &str| {
        game.state.pieces.iter().any(|p| {
            p.hidden
                && p.side
                    .is_some_and(|s| s != side && game.rules.side_name(s) == name)
        })
    };
    match e {
        super::Event::Activated {
            by, side: s, unit, ..
        } if face_down_side(s) => line = format!("      {by}: {s} activates {unit}"),
        super::Event::Decision { side: s, label, .. }
            if label.starts_with("activate ") && face_down_side(s) =>
        {
            line = format!("  {s}: {}", without_count(label));
        }
        _ => {}
    }
    // A line that named a piece the side did not know of then is not told to it at all;
    // where that was not recorded (a resumed game's past), what it cannot see now is left out.
    let unseen = told_apart.unwrap_or_else(|| {
        (0..game.state.pieces.len())
            .filter(|&i| !game.state.seen_by(i, side))
            .any(|i| super::log::mentions(&line, &game.state.pieces[i].label))
    });
    if unseen {
        return None;
    }
    // A piece turned face up for a shot is shown by name in the line that turns it.
    if matches!(e, super::Event::Shown { .. }) {
        return Some(line);
    }
    let mut hidden: Vec<&str> = game
        .state
        .pieces
        .iter()
        .filter(|p| p.hidden && p.side != Some(side))
        .map(|p| &*p.label)
        .collect();
    // Longer names first, so `x #2` is not read as `x` and a stray `#2`.
    hidden.sort_by_key(|l| std::cmp::Reverse(l.len()));
    for l in hidden {
        line = line.replace(l, FACE_DOWN);
    }
    // Face-down pieces acting together are one stack, of no told size.
    let many = format!("{FACE_DOWN} + {FACE_DOWN}");
    if line.contains(&many) {
        while line.contains(&many) {
            line = line.replace(&many, FACE_DOWN);
        }
        line = line.replace(FACE_DOWN, "a face-down stack");
    }
    // Which action a face-down piece takes is not told (a decoy has actions of its own), only
    // the places and values it names; what it does shows in what follows (a move, a
    // resolution).
    if let super::Event::Decision { side: s, label, .. } = e
        && s != game.rules.side_name(side)
        && !label.starts_with("deploy ")
        && !label.starts_with("activate ")
        && line.contains("a face-down ")
    {
        let who = if line.contains("a face-down stack") {
            "stack"
        } else {
            "piece"
        };
        let named: Vec<&str> = match (line.find('('), line.rfind(')')) {
            (Some(a), Some(b)) if a < b => line[a + 1..b]
                .split(", ")
                .filter(|x| !x.contains("a face-down "))
                .collect(),
            _ => Vec::new(),
        };
        line = if named.is_empty() {
            format!("  {s}: a face-down {who} acts")
        } else {
            format!("  {s}: a face-down {who} acts: {}", named.join(", "))
        };
    }
    Some(line)
}

/// An activation's label without the count of units at its end (`activate hex Q5 (2 units)`).
fn without_count(label: &str) -> &str {
    match label.rsplit_once(" (") {
        Some((head, tail))
            if tail.starts_with(|c: char| c.is_ascii_digit())
                && (tail.ends_with(" unit)") || tail.ends_with(" units)")) =>
        {
            head
        }
        _ => label,
    }
}

/// What a choice is known to lead to, from what the side can see: a place where enemy pieces
/// stand.
fn consequence(game: &Game, side: SideId, c: &Choice) -> &'static str {
    if !matches!(c.act, super::Act::Action(_)) {
        return "";
    }
    let enemy_at = |h: &crate::board::HexCoord| {
        game.state
            .pieces_at(super::state::Pos::Hex(*h))
            .any(|(_, p)| p.is_unit && p.side.is_some_and(|s| s != side))
    };
    let hits = c.args.iter().skip(1).any(|v| match v {
        crate::value::Val::Hex(h) => enemy_at(h),
        _ => false,
    });
    if hits { "  (enemy pieces there)" } else { "" }
}

impl<R: BufRead, W: Write> Policy for Human<R, W> {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        match self.ask_for(game, side, choices, false)? {
            Answer::Listed(k) => Ok(k),
            Answer::Point { .. } => Err(EngineError::Policy(
                "human policy: a point is not an answer here".into(),
            )),
        }
    }

    fn answer(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<Answer, EngineError> {
        self.ask_for(game, side, choices, true)
    }
}

impl<R: BufRead, W: Write> Human<R, W> {
    /// Show what the side saw happen, its view and the choices, then read its answer: a
    /// number, or with `points` and a choice that goes to a point on an open table, a point.
    fn ask_for(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
        points: bool,
    ) -> Result<Answer, EngineError> {
        let io = |e: std::io::Error| EngineError::Policy(format!("human policy: {e}"));
        // What happened since this side last decided, as it may see it.
        let from = self.seen.min(game.events.len());
        let new = &game.events[from..];
        if !new.is_empty() {
            writeln!(self.output, "\n--- since your last decision ---").map_err(io)?;
            let mut last: Option<String> = None;
            let lines = new
                .iter()
                .enumerate()
                .filter_map(|(k, e)| as_seen_by(game, side, e, game.told_apart(from + k, side)));
            for line in lines {
                // Face-down pieces doing the same thing together (a stack moving as one) are
                // told once: how many they are stays hidden.
                if line.contains(FACE_DOWN) && last.as_ref() == Some(&line) {
                    continue;
                }
                // Face-down pieces set up in one place are told once: the board shows one
                // piece or one stack there, not how many went in.
                if line.contains(&format!(": deploy {FACE_DOWN} at "))
                    && !self.deployed_at.insert(line.clone())
                {
                    continue;
                }
                writeln!(self.output, "{}", line.trim_start_matches('\n')).map_err(io)?;
                last = Some(line);
            }
        }
        self.seen = game.events.len();
        let labels: Vec<String> = choices.iter().map(|c| game.label(side, c)).collect();
        if is_pick(choices) {
            writeln!(self.output, "\nA choice inside the action:").map_err(io)?;
            return self
                .ask(game.rules.side_name(side), &labels)
                .map(Answer::Listed);
        }
        writeln!(self.output, "\n{}", game.view(side)).map_err(io)?;
        // Choices grouped by the piece that acts, in the order first offered.
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (k, c) in choices.iter().enumerate() {
            let who = match c.args.first() {
                Some(crate::value::Val::Piece(i)) => game.piece_label(*i as usize, side),
                _ => "the side".to_string(),
            };
            match groups.iter_mut().find(|(w, _)| *w == who) {
                Some((_, ks)) => ks.push(k),
                None => groups.push((who, vec![k])),
            }
        }
        for (who, ks) in &groups {
            if groups.len() > 1 {
                writeln!(self.output, "  {who}:").map_err(io)?;
            }
            for &k in ks {
                writeln!(
                    self.output,
                    "  {:>3}. {}{}",
                    k + 1,
                    labels[k],
                    consequence(game, side, &choices[k])
                )
                .map_err(io)?;
            }
        }
        // The listed choices that go to a point of an open table: one of them may be played
        // to a point the player types instead.
        let to_points: Vec<usize> = if points {
            (0..choices.len())
                .filter(|&k| super::typed_point::point_slot(&choices[k]).is_some())
                .collect()
        } else {
            Vec::new()
        };
        if to_points.is_empty() {
            return self
                .prompt(game.rules.side_name(side), labels.len())
                .map(Answer::Listed);
        }
        let unit = game.rules.program.length_unit.clone();
        let shown_unit = match unit.as_deref() {
            Some("in") => "inches",
            Some("cm") => "centimetres",
            _ => "millimetres",
        };
        // Choices that differ only in their point: a bare point goes like the first of them.
        let alike = |a: &Choice, b: &Choice| {
            let slot = super::typed_point::point_slot(a);
            a.act == b.act
                && a.args.len() == b.args.len()
                && a.args
                    .iter()
                    .zip(&b.args)
                    .enumerate()
                    .all(|(j, (x, y))| Some(j) == slot || x == y)
        };
        let one_kind = to_points
            .iter()
            .all(|&k| alike(&choices[to_points[0]], &choices[k]));
        if one_kind {
            writeln!(
                self.output,
                "  or type a point `x,y` in {shown_unit} (e.g. `12.5,4`) to go there as {} does",
                labels[to_points[0]]
            )
            .map_err(io)?;
        } else {
            writeln!(
                self.output,
                "  or type `N x,y` to play choice N to the point (x, y) in {shown_unit} instead"
            )
            .map_err(io)?;
        }
        let who = game.rules.side_name(side).to_string();
        let usage = format!(
            "type a number from 1 to {}, a point `x,y`, or `save FILE` to save the game",
            labels.len()
        );
        loop {
            let line = self.read_answer(&who, labels.len())?;
            let line = line.trim();
            if let Some(path) = line.strip_prefix("save ") {
                return Err(EngineError::SaveAsked(path.trim().to_string()));
            }
            if let Ok(k) = line.parse::<usize>() {
                if (1..=labels.len()).contains(&k) {
                    return Ok(Answer::Listed(k - 1));
                }
                writeln!(self.output, "{usage}").map_err(io)?;
                continue;
            }
            // `N x,y` names the choice to go like; a bare `x,y` goes like the only kind.
            let (like, point) = match line.split_once(|c: char| c.is_whitespace() || c == ':') {
                Some((n, rest)) if n.parse::<usize>().is_ok() && rest.contains(',') => {
                    let n: usize = n.parse().unwrap_or(0);
                    if !to_points.contains(&n.wrapping_sub(1)) {
                        writeln!(
                            self.output,
                            "choice {n} goes to no point; pick one that does"
                        )
                        .map_err(io)?;
                        continue;
                    }
                    (n - 1, rest)
                }
                _ if line.contains(',') && one_kind => (to_points[0], line),
                _ if line.contains(',') => {
                    writeln!(
                        self.output,
                        "several choices go to a point here: type `N x,y` with N the choice to play"
                    )
                    .map_err(io)?;
                    continue;
                }
                _ => {
                    writeln!(self.output, "{usage}").map_err(io)?;
                    continue;
                }
            };
            let at = match super::typed_point::parse_point(point, unit.as_deref()) {
                Ok(at) => at,
                Err(e) => {
                    writeln!(self.output, "{e}").map_err(io)?;
                    continue;
                }
            };
            // Checked on a copy, by the same rules as the listed places.
            let mut copy = game.clone();
            copy.logging = false;
            match copy.typed_choice(&choices[like], at) {
                Ok(_) => return Ok(Answer::Point { like, at }),
                Err(e) => {
                    writeln!(self.output, "{e}; type another point or a number").map_err(io)?
                }
            }
        }
    }
}

impl<R: BufRead, W: Write> Human<R, W> {
    fn ask(&mut self, who: &str, labels: &[String]) -> Result<usize, EngineError> {
        let io = |e: std::io::Error| EngineError::Policy(format!("human policy: {e}"));
        for (k, l) in labels.iter().enumerate() {
            writeln!(self.output, "  {:>3}. {l}", k + 1).map_err(io)?;
        }
        self.prompt(who, labels.len())
    }

    /// Prompt and read one answer line (at most [`MAX_ANSWER_BYTES`]).
    fn read_answer(&mut self, who: &str, n: usize) -> Result<String, EngineError> {
        let io = |e: std::io::Error| EngineError::Policy(format!("human policy: {e}"));
        write!(self.output, "{who} chooses (1-{n}): ").map_err(io)?;
        self.output.flush().map_err(io)?;
        let mut line = String::new();
        // Bounded: input with no line end (`< /dev/zero`) would otherwise grow one line
        // until memory runs out.
        let read = (&mut self.input)
            .take(MAX_ANSWER_BYTES + 1)
            .read_line(&mut line)
            .map_err(io)?;
        if read == 0 {
            return Err(EngineError::Policy(
                "human policy: input ended before the game did".into(),
            ));
        }
        if read as u64 > MAX_ANSWER_BYTES {
            return Err(EngineError::Policy(format!(
                "human policy: an answer longer than {MAX_ANSWER_BYTES} bytes; type the number of a choice and press Enter"
            )));
        }
        Ok(line)
    }

    /// Ask for the number of one of `n` choices listed.
    fn prompt(&mut self, who: &str, n: usize) -> Result<usize, EngineError> {
        let io = |e: std::io::Error| EngineError::Policy(format!("human policy: {e}"));
        loop {
            let line = self.read_answer(who, n)?;
            // The game as it stands, before this decision, to go on with `sandtable resume`.
            if let Some(path) = line.trim().strip_prefix("save ") {
                return Err(EngineError::SaveAsked(path.trim().to_string()));
            }
            match line.trim().parse::<usize>() {
                Ok(k) if (1..=n).contains(&k) => return Ok(k - 1),
                _ => writeln!(
                    self.output,
                    "type a number from 1 to {n}, or `save FILE` to save the game"
                )
                .map_err(io)?,
            }
        }
    }
}

/// Plays back the decisions of a log, checking each is offered again as recorded.
pub struct Scripted {
    /// (choice index, number of choices, label, typed point) per decision of this side, in
    /// order.
    pub script: std::collections::VecDeque<(usize, usize, String, Option<super::log::Typed>)>,
    /// The reason logged with each of those decisions, in the same order.
    pub whys: std::collections::VecDeque<Option<String>>,
    /// The reason of the decision last played back.
    pub last_why: Option<String>,
}

impl Policy for Scripted {
    fn answer(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<Answer, EngineError> {
        let typed = self.script.front().and_then(|s| s.3.clone());
        let Some(t) = typed else {
            return self.choose(game, side, choices).map(Answer::Listed);
        };
        let Some((_, of, label, _)) = self.script.pop_front() else {
            return Err(EngineError::Replay("no decision left".into()));
        };
        self.last_why = self.whys.pop_front().flatten();
        let at = match t.at {
            super::log::Place::Point { x, y } => crate::board::Point::new(x, y).ok(),
            super::log::Place::Hex { .. } => None,
        };
        match at {
            Some(at) if of == choices.len() + 1 && t.like < choices.len() => {
                Ok(Answer::Point { like: t.like, at })
            }
            _ => Err(EngineError::Replay(format!(
                "the log's typed decision `{label}` does not fit this point of the game ({} choices)",
                choices.len()
            ))),
        }
    }

    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        let Some((k, of, label, _)) = self.script.pop_front() else {
            return Err(EngineError::Replay(
                "the game asks for more decisions than the log holds".into(),
            ));
        };
        self.last_why = self.whys.pop_front().flatten();
        if of != choices.len() || choices.get(k).is_none_or(|c| game.label(side, c) != label) {
            return Err(EngineError::Replay(format!(
                "the log's decision `{label}` (choice {} of {of}) is not offered by these rules at that point ({} choices)",
                k + 1,
                choices.len()
            )));
        }
        Ok(k)
    }
    fn reason(&self) -> Option<String> {
        self.last_why.clone()
    }
}

/// How a choice made inside an action is written in the log.
pub fn choose_label(option: &str) -> String {
    format!("choose {option}")
}

/// Plays the decisions a file lists, one per line: a choice's words as `run` prints them
/// (`move_piece(taylor, Q8)`), or its number among the choices (from 1). Blank lines and
/// lines starting with `#` are skipped. A line not offered, or the end of the file before the
/// end of the game, stops the game with the line number.
pub struct ScriptFile {
    path: String,
    lines: std::collections::VecDeque<(usize, String)>,
}

impl ScriptFile {
    pub fn open(path: &str) -> Result<Self, String> {
        let bytes = sandtable_ir::read::read_limited(
            std::path::Path::new(path),
            sandtable_ir::read::MAX_FILE_BYTES,
        )
        .map_err(|e| format!("cannot read the script {path}: {e}"))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("cannot read the script {path}: not valid UTF-8"))?;
        Ok(ScriptFile {
            path: path.to_string(),
            lines: text
                .lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.trim().to_string()))
                .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
                .collect(),
        })
    }

    fn pick(&mut self, labels: &[String]) -> Result<usize, EngineError> {
        let Some((n, line)) = self.lines.pop_front() else {
            return Err(EngineError::Policy(format!(
                "the script {} ended before the game did",
                self.path
            )));
        };
        if let Ok(k) = line.parse::<usize>()
            && (1..=labels.len()).contains(&k)
        {
            return Ok(k - 1);
        }
        // An option inside an action may be written with or without its `choose `.
        let bare = line.strip_prefix("choose ").unwrap_or(&line);
        match labels
            .iter()
            .position(|l| *l == line || l.strip_prefix("choose ") == Some(bare))
        {
            Some(k) => Ok(k),
            None => Err(EngineError::Policy(format!(
                "{} line {n}: `{line}` is not offered here; the choices are: {}{}",
                self.path,
                labels
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                if labels.len() > 8 { ", …" } else { "" }
            ))),
        }
    }
}

impl Policy for ScriptFile {
    fn choose(
        &mut self,
        game: &Game,
        side: SideId,
        choices: &[Choice],
    ) -> Result<usize, EngineError> {
        let labels: Vec<String> = choices.iter().map(|c| game.label(side, c)).collect();
        self.pick(&labels)
    }
}

/// One policy per side id, by name, seeded from the game seed.
pub fn for_sides(kinds: &[String], seed: u64) -> Result<Vec<Box<dyn Policy>>, String> {
    kinds
        .iter()
        .enumerate()
        .map(|(s, k)| by_name(k, seed, s as SideId))
        .collect()
}

/// As [`for_sides`], where a kind may also name a policy written in `program`'s rules.
pub fn for_sides_in(
    program: &sandtable_ir::Program,
    kinds: &[String],
    seed: u64,
) -> Result<Vec<Box<dyn Policy>>, String> {
    kinds
        .iter()
        .enumerate()
        .map(
            |(s, k)| match super::written::Written::named(program, k, seed, s as SideId) {
                Some(w) => Ok(Box::new(w) as Box<dyn Policy>),
                None => by_name(k, seed, s as SideId),
            },
        )
        .collect()
}

impl Scripted {
    /// One scripted policy per side of `program`, playing back the decisions of a log.
    pub fn from_events(
        program: &sandtable_ir::Program,
        events: &[super::Event],
    ) -> Result<Vec<Box<dyn Policy>>, String> {
        let mut scripts = vec![std::collections::VecDeque::new(); program.sides.len()];
        let mut whys = vec![std::collections::VecDeque::new(); program.sides.len()];
        for e in events {
            if let super::Event::Decision {
                side,
                choice,
                of,
                label,
                typed,
                why,
            } = e
            {
                let s = program
                    .sides
                    .iter()
                    .position(|x| x.name == *side)
                    .ok_or_else(|| {
                        format!("the log names a side `{side}` these rules do not have")
                    })?;
                scripts[s].push_back((*choice, *of, label.clone(), typed.clone()));
                whys[s].push_back(why.clone());
            }
        }
        Ok(scripts
            .into_iter()
            .zip(whys)
            .map(|(script, whys)| {
                Box::new(Scripted {
                    script,
                    whys,
                    last_why: None,
                }) as Box<dyn Policy>
            })
            .collect())
    }
}

/// A policy by name, for a side, seeded from the game seed.
pub fn by_name(kind: &str, seed: u64, side: SideId) -> Result<Box<dyn Policy>, String> {
    match kind {
        "random" => Ok(Box::new(Random::new(seed, side))),
        "greedy" => Ok(Box::new(Greedy::new(seed, side))),
        "human" => Ok(Box::new(Human::new(
            std::io::BufReader::new(std::io::stdin()),
            std::io::stderr(),
        ))),
        other if other.starts_with("mcts:") => {
            let (n, budget) = super::mcts::Mcts::parse(&other["mcts:".len()..])?;
            Ok(Box::new(super::mcts::Mcts::new(seed, side, n, budget)))
        }
        other => match other.strip_prefix("script:") {
            Some(path) if !path.is_empty() => Ok(Box::new(ScriptFile::open(path)?)),
            _ => Err(format!(
                "unknown policy `{other}`; policies are: {}",
                KINDS.join(", ")
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Vec<String> {
        vec!["hold".into(), "fire".into()]
    }

    #[test]
    fn the_prompt_reads_a_numbered_answer_and_asks_again_after_a_wrong_one() {
        let mut out = Vec::new();
        let mut h = Human::new(std::io::Cursor::new("x\n9\n2\n"), &mut out);
        assert_eq!(h.ask("us", &labels()).unwrap(), 1);
        let shown = String::from_utf8(out).unwrap();
        assert_eq!(
            shown.matches("type a number from 1 to 2").count(),
            2,
            "{shown}"
        );
    }

    #[test]
    fn an_endless_line_is_refused_after_the_answer_limit() {
        // `std::io::repeat` never ends and holds no line end, like `< /dev/zero`.
        let input = std::io::BufReader::new(std::io::repeat(b'7'));
        let mut h = Human::new(input, std::io::sink());
        let err = h.ask("us", &labels()).unwrap_err().to_string();
        assert!(err.contains("longer than 1024 bytes"), "{err}");
        // An answer of exactly the limit is still read.
        let mut long = " ".repeat(MAX_ANSWER_BYTES as usize - 2);
        long.push_str("1\n");
        let mut h = Human::new(std::io::Cursor::new(long), std::io::sink());
        assert_eq!(h.ask("us", &labels()).unwrap(), 0);
    }
}
