//! The turn as typed data: its phases in order, the actions each offers and the activation
//! scheme that decides who acts, lowered and checked by the compiler
//! (`compiler/src/lower/typed.rs`), so the engine reads fields rather than string-keyed
//! properties. A value the book leaves `?` stays an [`UnknownId`], resolved through the
//! assumptions when the game is set up.

use serde::{Deserialize, Serialize};

use crate::scenario::Given;
use crate::{ProcId, SideId};

/// The ruleset's `turn` block.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TurnDef {
    pub phases: Vec<PhaseDef>,
    /// `distance_counter:`: the piece counter that adds up the distance each piece moves.
    pub distance_counter: Option<crate::CounterId>,
    /// `secret_counters:`: piece counters known to the piece's own side only.
    pub secret_counters: Vec<crate::CounterId>,
    /// `concealing_markers:`: markers that put the piece carrying one in a concealed place
    /// (down a tunnel, in a hide): while it carries one the other sides do not see it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concealing_markers: Vec<crate::EntityId>,
    /// `on end` hooks: clean-up after the last phase of every turn.
    pub end: Vec<ProcId>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PhaseDef {
    pub name: String,
    pub title: Option<String>,
    /// `activation:`, by index in [`crate::Program::activations`]; `None`: only hooks run.
    pub activation: Option<u32>,
    /// `actions:`, each an action procedure.
    pub actions: Vec<ProcId>,
    /// `on run` hooks.
    pub on_run: Vec<ProcId>,
}

/// An `activation NAME: SCHEME` block.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ActivationDef {
    pub name: String,
    pub scheme: SchemeDef,
    pub unit: UnitDef,
}

/// Sides in the order they act (`order:`, `first:`, `sides:`); every side in declaration
/// order when the block gives none. A `?` gives a side or a list of them.
pub type SideOrder = Vec<Given<SideId>>;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum SchemeDef {
    /// The scenario's `chips:` go into one cup; each draw lets the drawn side act once.
    ChipCup,
    /// Side after side, each piece of the side may act (`all`, `fixed`, `sequence`).
    EachPiece(SideOrder),
    /// Sides take turns activating one piece at a time.
    Alternating(SideOrder),
    Deck(DeckDef),
}

/// A deck of cards (`activation NAME: deck`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeckDef {
    /// Every card, copies written out, in the order listed.
    pub cards: Vec<CardDef>,
    /// `draws_before_reshuffle:` (1 or more); the whole deck when `None`.
    pub draws: Option<u32>,
    /// `insert:` lines: cards a rule may put into the deck with `insert_cards(label)`.
    pub inserts: Vec<InsertDef>,
    /// `reshuffle: on_insert` (rather than `after_draws`).
    pub reshuffle_on_insert: bool,
    /// The activation block's hooks, `on EVENT` among them (an inserted card runs them).
    pub hooks: Vec<(String, ProcId)>,
}

/// Most cards one deck may hold, counting every copy.
pub const MAX_CARDS: u32 = 10_000;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CardDef {
    pub label: String,
    pub side: Option<SideId>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InsertDef {
    pub label: String,
    pub count: u32,
    pub replaces: u32,
    /// The activation's `on EVENT` hooks the first card drawn of this insert runs.
    pub event: String,
    /// `side = S`: once its event has run, a card of this insert is one of S's cards.
    pub side: Option<SideId>,
}

/// What one chip, side card or free action activates (`activates:`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub enum UnitKind {
    /// One piece takes its actions.
    #[default]
    Piece,
    /// Every piece of the side in one place of its choice.
    Place,
    /// A piece of the side and the pieces it `commands:`.
    Group,
    /// The whole side.
    Side,
}

/// How one activation is played.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UnitDef {
    pub kind: UnitKind,
    /// `actions_per_piece:`, 1 to [`MAX_ACTIONS_PER_PIECE`].
    pub actions_per_piece: u32,
    /// `all_act_when:`, a hook reading the unit.
    pub all_act_when: Option<ProcId>,
    /// `commands:`, a hook reading `leader` and `member` (for [`UnitKind::Group`]).
    pub commands: Option<ProcId>,
    /// `together:`: actions unused pieces of the unit may take together.
    pub together: Vec<ProcId>,
}

/// Most compass directions a move to any point on a table is offered in (`move_directions:`).
pub const MAX_DIRECTIONS: u32 = 360;
/// Most fractions of a line a move on a table is offered at (`move_steps:`).
pub const MAX_STEPS: u32 = 16;

/// Most actions one activated piece may take.
pub const MAX_ACTIONS_PER_PIECE: u32 = 20;

impl Default for UnitDef {
    fn default() -> Self {
        UnitDef {
            kind: UnitKind::Piece,
            actions_per_piece: 1,
            all_act_when: None,
            commands: None,
            together: Vec::new(),
        }
    }
}
