//! A game as a value on disk: the state, the flow and both dice streams (see [`GameState`]),
//! in a versioned JSON file that names the rules it was played with. Read back, it is checked
//! before any of it is trusted: the format and version, a checksum of the game (a damaged file
//! is refused rather than played), the rules' fingerprint, and every index it holds.

use serde::{Deserialize, Serialize};

use super::flow::{Flow, Stage};
use super::log::{Event, Header, fingerprint};
use super::options::Act;
use super::state::State;
use super::{Game, Rules};
use crate::jit::JitProgram;
use crate::rng::{Dice, DiceState};
use crate::value::Val;

/// The `format` field of a save file.
pub const SAVE_FORMAT: &str = "sandtable-saved-game";
/// Version 1: the first. Version 2: counters by their id in the rules, not by name.
pub const SAVE_VERSION: u32 = 2;

/// Everything a game is, at a decision or between steps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GameState {
    pub state: State,
    pub flow: Flow,
    pub dice: DiceState,
    pub guard_dice: DiceState,
}

/// A save file: what is played (as a log header says it), the game, and the events so far
/// (a resumed game tells and logs the whole game).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SaveFile {
    pub format: String,
    pub version: u32,
    pub header: Header,
    /// [`fingerprint`] of the game's and the events' JSON: any change to them is damage.
    pub checksum: String,
    pub game: GameState,
    pub events: Vec<Event>,
    /// Each side's policy and where its own random stream stood.
    pub policies: Vec<SavedPolicy>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPolicy {
    pub side: String,
    pub kind: String,
    pub stream: Option<DiceState>,
    /// What the policy carries between decisions besides its stream ([`super::policy::Policy::memory`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<serde_json::Value>,
}

impl Game<'_, '_> {
    /// The game as a value (fails only for scripted dice, which no game uses).
    pub fn game_state(&self) -> Result<GameState, String> {
        let portable = |d: &Dice| {
            d.portable()
                .ok_or_else(|| "scripted dice cannot be saved".to_string())
        };
        Ok(GameState {
            state: self.state.clone(),
            flow: self.flow.clone(),
            dice: portable(&self.dice)?,
            guard_dice: portable(&self.guard_dice)?,
        })
    }
}

impl<'r, 'p> Game<'r, 'p> {
    /// A game that goes on from `saved`, after checking it fits `rules` (every piece,
    /// entity, side, procedure and phase it names exists).
    pub fn from_state(
        rules: &'r Rules<'p>,
        saved: GameState,
        jit: Option<&'r JitProgram<'p>>,
    ) -> Result<Self, String> {
        check(rules, &saved)?;
        let dice = Dice::from_portable(&saved.dice)?;
        let guard_dice = Dice::from_portable(&saved.guard_dice)?;
        Ok(Game::with_state(
            rules,
            saved.state,
            dice,
            guard_dice,
            saved.flow,
            jit,
        ))
    }
}

/// The checksum of a save's game, events and policies.
fn checksum(
    game: &GameState,
    events: &[Event],
    policies: &[SavedPolicy],
) -> Result<String, String> {
    let g = serde_json::to_string(game).map_err(|e| e.to_string())?;
    let e = serde_json::to_string(events).map_err(|e| e.to_string())?;
    let p = serde_json::to_string(policies).map_err(|e| e.to_string())?;
    Ok(fingerprint([g.as_bytes(), e.as_bytes(), p.as_bytes()]))
}

/// A save file's text.
pub fn write(
    header: &Header,
    game: GameState,
    events: Vec<Event>,
    policies: Vec<SavedPolicy>,
) -> Result<String, String> {
    let file = SaveFile {
        format: SAVE_FORMAT.into(),
        version: SAVE_VERSION,
        header: header.clone(),
        checksum: checksum(&game, &events, &policies)?,
        game,
        events,
        policies,
    };
    serde_json::to_string(&file).map_err(|e| e.to_string())
}

/// Read a save file's text: refused unless it is one, of this version, undamaged.
pub fn parse(text: &str) -> Result<SaveFile, String> {
    #[derive(Deserialize)]
    struct Head {
        format: Option<String>,
        version: Option<u32>,
    }
    let head: Head = serde_json::from_str(text)
        .map_err(|_| "not a sandtable saved game (not JSON, or cut short)".to_string())?;
    if head.format.as_deref() != Some(SAVE_FORMAT) {
        return Err(format!(
            "not a sandtable saved game (its format is not `{SAVE_FORMAT}`)"
        ));
    }
    if head.version != Some(SAVE_VERSION) {
        return Err(format!(
            "saved-game version {} is not supported (this build reads version {SAVE_VERSION})",
            head.version.map_or("?".into(), |v| v.to_string())
        ));
    }
    let file: SaveFile =
        serde_json::from_str(text).map_err(|e| format!("the saved game is damaged: {e}"))?;
    if checksum(&file.game, &file.events, &file.policies)? != file.checksum {
        return Err("the saved game is damaged: its checksum does not match its content".into());
    }
    Ok(file)
}

/// Every index a saved game holds is in range for `rules`, so playing on cannot go out of
/// bounds whatever the file says.
fn check(rules: &Rules, g: &GameState) -> Result<(), String> {
    let program = rules.program;
    let bad = |what: &str| Err(format!("the saved game does not fit these rules: {what}"));
    let sides = program.sides.len();
    let pieces = g.state.pieces.len();
    let counters = program.counters.len();
    let fresh = Game::new(rules, 0, None);
    if pieces != fresh.state.pieces.len() {
        return bad("a different number of pieces");
    }
    for (p, q) in g.state.pieces.iter().zip(&fresh.state.pieces) {
        if (p.entity as usize) >= program.entities.len()
            || p.markers
                .iter()
                .any(|m| (*m as usize) >= program.entities.len())
            || p.counters.iter().any(|(c, _)| (*c as usize) >= counters)
            || p.side != q.side
            || p.placed_by != q.placed_by
        {
            return bad("a piece is not the one the rules set up");
        }
    }
    if g.state
        .place_markers
        .iter()
        .any(|(_, m)| (*m as usize) >= program.entities.len())
        || g.state.scores.len() != sides
        || g.state.pending_free.iter().any(|s| (*s as usize) >= sides)
        || g.state
            .side_counters
            .iter()
            .any(|(s, c, _)| (*s as usize) >= sides || (*c as usize) >= counters)
        || g.flow.chips_drawn.len() != sides
    {
        return bad("a marker, score or side out of range");
    }
    let procs = program.procs.len();
    if g.flow.hooks.iter().any(|h| (*h as usize) >= procs) {
        return bad("a hook out of range");
    }
    let phases = rules.phases.len();
    let piece_ok = |i: &usize| *i < pieces;
    // An activation in progress stands on the stage that gave it.
    let mut stage = &g.flow.stage;
    let mut units_ok = true;
    while let Stage::Unit { unit, then } = stage {
        units_ok &= (unit.side as usize) < sides
            && unit.ph.is_none_or(|ph| ph < phases)
            && unit.pieces.iter().flatten().all(piece_ok)
            && unit.used.len() == unit.pieces.as_ref().map_or(0, Vec::len);
        stage = then;
    }
    let stage_ok = units_ok
        && match stage {
            Stage::Deploy { next } => *next <= pieces,
            Stage::PhaseBegin { ph } | Stage::Activation { ph } => *ph <= phases,
            Stage::Cup { ph, cup } => *ph < phases && cup.iter().all(|s| (*s as usize) < sides),
            Stage::Deck {
                ph, pile, aside, ..
            } => {
                *ph < phases
                    && pile
                        .iter()
                        .chain(aside)
                        .all(|c| c.side.is_none_or(|s| (s as usize) < sides))
            }
            Stage::EachPiece { ph, ids, .. } => *ph < phases && ids.iter().flatten().all(piece_ok),
            Stage::Alternating { ph, queues, .. } => {
                *ph < phases && queues.iter().flatten().all(piece_ok)
            }
            Stage::Begin | Stage::TurnBegin | Stage::TurnEnd | Stage::Victory | Stage::Over => true,
            Stage::Unit { .. } => false,
        };
    if !stage_ok {
        return bad("the turn sequence stands at a place these rules do not have");
    }
    if let Some(d) = &g.flow.pending {
        let vals_ok = |args: &[Val]| {
            args.iter().all(|v| match v {
                Val::Piece(i) => (*i as usize) < pieces,
                Val::Side(s) => (*s as usize) < sides,
                Val::Entity(e) => (*e as usize) < program.entities.len(),
                _ => true,
            })
        };
        let acts_ok = d
            .choices
            .iter()
            .chain(d.inside.as_ref().map(|i| &i.action))
            .all(|c| {
                vals_ok(&c.args)
                    && match c.act {
                        Act::Action(a) | Act::Together(a) => (a as usize) < procs,
                        _ => true,
                    }
            });
        let actor_ok = d
            .inside
            .as_ref()
            .and_then(|i| i.actor)
            .is_none_or(|a| (a as usize) < sides);
        if (d.side as usize) >= sides || !acts_ok || !actor_ok {
            return bad("the waiting decision names what these rules do not have");
        }
    }
    // Pieces acting together wait only at a `choose` inside the first one's action.
    if let Some(t) = &g.flow.together {
        let waiting = g.flow.pending.as_ref().and_then(|d| d.inside.as_ref());
        let ok = (t.side as usize) < sides
            && (t.action as usize) < procs
            && t.pieces.iter().all(|(i, c)| {
                piece_ok(i)
                    && c.act == Act::Action(t.action)
                    && c.args.first() == Some(&Val::Piece(*i as u32))
            })
            && waiting.is_some_and(|w| t.pieces.first().is_some_and(|(_, c)| *c == w.action));
        if !ok {
            return bad("pieces acting together wait where these rules do not");
        }
    }
    Ok(())
}

/// A save file's text, refused when it is not a regular file, is too large or is not text.
pub fn read(path: &std::path::Path) -> Result<String, String> {
    let bytes = sandtable_ir::read::read_limited(path, super::log::MAX_LOG_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes)
        .map_err(|_| format!("{}: not a sandtable saved game (not text)", path.display()))
}
