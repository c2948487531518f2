//! Scenarios as typed data: what a `scenario` block sets up, lowered and checked by the
//! compiler (`compiler/src/lower/typed.rs`), so the runtime and `sandtable scenarios` read
//! fields rather than interpreting string-keyed properties. A value the book leaves `?`
//! stays an [`UnknownId`], resolved through the assumptions when the game is set up.
//!
//! The turn, its phases and activation schemes are typed in [`crate::turn`].

use serde::{Deserialize, Serialize};

use crate::{Cite, EntityId, KindId, ProcId, SideId, UnknownId, Value};

/// Most turns a game may last (also when its scenario sets no limit).
pub const MAX_TURNS: u32 = 200;
/// Most chips one side puts in the cup per turn.
pub const MAX_CHIPS: u32 = 1_000;
/// Most copies of one piece a force or a neutral block lists (`20 * soldier`).
pub const MAX_COPIES: u32 = 1_000;
/// Most width or depth of a table, tenths of a millimetre (100 m).
pub const MAX_TABLE: i64 = 1_000_000;
/// Largest coordinate (either sign) of a point on a table, tenths of a millimetre (1 km).
pub const MAX_COORD: i64 = 10_000_000;
/// Last hex column: `ZZZ`, three letters (bijective base 26).
pub const MAX_HEX_COLUMN: u32 = 26 + 26 * 26 + 26 * 26 * 26;
/// Last hex row: five digits.
pub const MAX_HEX_ROW: u32 = 99_999;
/// Most hexes of a board: far beyond any printed map, small enough that a full path search
/// stays quick.
pub const MAX_HEXES: u32 = 1_000_000;
/// Most sectors of a `sectors` board, so sector numbers and neighbour lists stay small.
pub const MAX_SECTORS: u32 = 1_000_000;
/// Most zones along one side of a sector.
pub const MAX_ZONES_PER_SIDE: u32 = 1_000;
/// Spacing of the set-up points the engine offers on a table: 2 inches, in tenths of a
/// millimetre. The first point of each row and column is half a spacing in from the edge.
pub const DEPLOY_GRID: i64 = 2 * 254;
/// Diameter of a figure's base on a table whose board gives no `base:`: one inch.
pub const DEFAULT_BASE: i64 = 254;
/// Most set-up points a table may offer (a 20 m square table at 2 inches).
pub const MAX_DEPLOY_POINTS: i64 = 1_000_000;

/// How many set-up points the engine offers on a `width` by `depth` table.
pub fn deploy_points(width: i64, depth: i64) -> i64 {
    (width / DEPLOY_GRID + 1).saturating_mul(depth / DEPLOY_GRID + 1)
}

/// A whole number the book may leave unknown (`turns: ?`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Count {
    Fixed(u32),
    Unknown(UnknownId),
}

/// A hex by column and row, both from 1 (`B12` is column 2, row 12).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct HexLabel {
    pub column: u32,
    pub row: u32,
}

impl HexLabel {
    /// `B12` as column 2, row 12; `AA3` as column 27.
    pub fn parse(s: &str) -> Option<HexLabel> {
        let split = s.find(|c: char| !c.is_ascii_uppercase())?;
        let (letters, digits) = s.split_at(split);
        if letters.is_empty() || letters.len() > 2 || digits.is_empty() || digits.len() > 4 {
            return None;
        }
        let column = letters
            .bytes()
            .fold(0u32, |c, b| c * 26 + u32::from(b - b'A') + 1);
        let row: u32 = digits.parse().ok()?;
        (row > 0).then_some(HexLabel { column, row })
    }

    /// The column's letters: 1 is `A`, 27 is `AA`.
    pub fn column_name(column: u32) -> String {
        let mut c = column;
        let mut s = Vec::new();
        while c > 0 {
            c -= 1;
            s.push(b'A' + (c % 26) as u8);
            c /= 26;
        }
        s.reverse();
        String::from_utf8(s).unwrap_or_default()
    }
}

impl std::fmt::Display for HexLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", HexLabel::column_name(self.column), self.row)
    }
}

/// Pieces a force lists: `3 * rifle` (a count of one piece), or a `?` for pieces the book
/// does not print, which an assumption must give as a list of pieces.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Pieces {
    Of { entity: EntityId, count: u32 },
    Unknown(UnknownId),
}

/// Where a force sets up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum Deploy {
    /// On a hex board: the hexes within these columns and rows (inclusive; `None` = all).
    Hexes {
        columns: Option<(u32, u32)>,
        rows: Option<(u32, u32)>,
    },
    /// On a table: a named `area` of the board.
    Area(String),
    /// `deploy: ?`: the book does not say.
    Unknown(UnknownId),
    /// `deploy: "…"`: the book's description, which the engine cannot place by.
    Described(String),
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ForceDef {
    pub side: SideId,
    /// Every piece the side sets up, in the order listed.
    pub units: Vec<Pieces>,
    /// Pieces the side holds off the table (`reserve:`), which an action may bring on later.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reserve: Vec<Pieces>,
    /// Pieces of no side the force sets up in its area.
    pub markers: Vec<Pieces>,
    pub deploy: Option<Deploy>,
    /// Where the force sets up its `markers:` when not in `deploy:` (`markers_deploy: AREA`).
    #[serde(default)]
    pub markers_deploy: Option<Deploy>,
    /// `deploy_check: NAME`: a procedure `(piece, place)` giving `result` true where the piece
    /// may be set up; pieces not of its first parameter's kind are not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deploy_check: Option<crate::ProcId>,
    /// Most units in one hex at set-up.
    pub max_per_hex: Option<Count>,
    pub hidden: bool,
    /// Hexes the force may leave the board by.
    pub exits: Vec<HexLabel>,
    /// Every property whose value is `true`/`false` ([`Value::Bool`]) or a `?`
    /// ([`Value::Unknown`], a flag once an assumption gives it), for `force_has`.
    pub flags: Vec<(String, Value)>,
}

impl ForceDef {
    /// How many pieces `units:` lists, when every count is known.
    pub fn unit_count(&self) -> Option<u32> {
        count(&self.units)
    }
    pub fn marker_count(&self) -> Option<u32> {
        count(&self.markers)
    }
    pub fn reserve_count(&self) -> Option<u32> {
        count(&self.reserve)
    }
}

fn count(p: &[Pieces]) -> Option<u32> {
    p.iter().try_fold(0u32, |n, x| match x {
        Pieces::Of { count, .. } => n.checked_add(*count),
        Pieces::Unknown(_) => None,
    })
}

/// A fixed place: a hex, a point on a table (tenths of a millimetre), or a `?`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Place {
    Hex(HexLabel),
    Point(i64, i64),
    Unknown(UnknownId),
}

/// Pieces of no side at fixed places, one place per piece.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NeutralDef {
    pub pieces: Vec<EntityId>,
    pub at: Vec<Place>,
}

/// The size of a board.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum BoardShape {
    Hex {
        columns: u32,
        rows: u32,
    },
    /// An open or sectors table, width and depth in tenths of a millimetre.
    Table {
        width: i64,
        depth: i64,
    },
    /// Sizes the book does not give (`?`), or a scheme the engine does not play.
    Unknown,
}

/// A value the book may leave unknown: given, or a `?` resolved through the assumptions when
/// the game is set up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum Given<T> {
    Fixed(T),
    Unknown(UnknownId),
}

/// What the ground of a hex or a table feature is: a terrain entity, or a member of an enum
/// the rules name their ground with (`enum ground { paddy, dyke }`), which has no fields.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum Ground {
    Entity(EntityId),
    Member(String),
    /// `default: ?`: the assumptions give a terrain or a member.
    Unknown(UnknownId),
}

/// The ground painted on some hexes of a hex board, in the order the board lists it
/// (`terrain: jungle = [B2, B3]`, then each `region`); a later entry paints over an earlier.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct HexTerrain {
    pub ground: Ground,
    pub hexes: Vec<HexLabel>,
    /// Entries the book leaves `?` (`terrain: dyke = [B3, ?]`): the assumption gives a hex
    /// label or a list of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<UnknownId>,
}

/// Which columns of a hex board are drawn half a hex down (`orientation:`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub enum HexOrientation {
    #[default]
    EvenColumnsDown,
    OddColumnsDown,
}

/// A shape on a table, in tenths of a millimetre.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Outline {
    Rect { x0: i64, y0: i64, x1: i64, y1: i64 },
    Circle { x: i64, y: i64, radius: i64 },
}

/// A named set-up area of a table (`area NAME { rect: … }`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AreaDef {
    pub name: String,
    pub outline: Outline,
}

/// A terrain feature of a table (`feature { terrain: woods, circle: … }`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FeatureDef {
    pub ground: Ground,
    pub outline: Outline,
}

/// How a table is cut into numbered sectors and zones (a `sectors` board).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct SectorsDef {
    /// The side of one square sector, tenths of a millimetre.
    pub sector: i64,
    pub zones: u32,
}

/// What the engine plays on a hex board beyond its size.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct HexBoardDef {
    pub orientation: HexOrientation,
    /// `default:`: the ground of every hex no entry of `terrain` paints.
    pub default: Option<Ground>,
    pub terrain: Vec<HexTerrain>,
    /// `entry_cost: FIELD`: the terrain field added to the cost of entering a hex.
    pub entry_cost: Option<String>,
}

/// What the engine plays on an open or sectors table beyond its size.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct TableBoardDef {
    /// `default:`: the ground where no feature lies.
    pub default: Option<Ground>,
    pub features: Vec<FeatureDef>,
    /// `base:`, the diameter of a figure's base (the engine's default when `None`).
    pub base: Option<i64>,
    /// `blocks_sight: FIELD`: the terrain field that says a feature blocks line of sight.
    pub blocks_sight: Option<String>,
    /// `move_directions:` and `move_steps:` (the engine's defaults when `None`).
    pub move_directions: Option<u32>,
    pub move_steps: Option<u32>,
    pub sectors: Option<SectorsDef>,
}

/// How the engine plays a board.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum BoardPlay {
    Hex(HexBoardDef),
    Table(TableBoardDef),
    /// A scheme the engine does not play (`square`), or a board without a scheme.
    None,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BoardDef {
    pub name: String,
    pub title: Option<String>,
    /// `hex`, `open`, `sectors`…
    pub scheme: Option<String>,
    pub shape: BoardShape,
    /// The board this one stands in for (`stand_in: map`).
    pub stand_in_for: Option<String>,
    /// Named set-up areas of a table.
    pub areas: Vec<AreaDef>,
    pub play: BoardPlay,
    /// Its block in [`crate::Program::configs`].
    pub config: u32,
}

/// When a scenario's `on EVENT` hook runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum ScenarioEvent {
    /// Once, after set-up, before the first turn.
    Start,
    /// At the start of every turn, before its first phase.
    TurnStart,
    /// At the end of every turn, after the turn block's `on end`.
    TurnEnd,
}

impl ScenarioEvent {
    /// The events as the rules name them (`on turn_end`), in the order of [`Self::ALL`].
    pub const NAMES: [&'static str; 3] = ["start", "turn_start", "turn_end"];
    pub const ALL: [ScenarioEvent; 3] = [Self::Start, Self::TurnStart, Self::TurnEnd];

    pub fn named(name: &str) -> Option<ScenarioEvent> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Self::ALL[i])
    }
}

/// How many chips a side puts in the cup (the scenario's `chips: SIDE = …`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum ChipsDef {
    Fixed(u32),
    /// One per unit of the side on the board when the phase begins (`units`), or per unit of
    /// one kind.
    PerUnit(Option<KindId>),
    Unknown(UnknownId),
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScenarioDef {
    pub name: String,
    pub title: Option<String>,
    /// The board the scenario names, by index in [`crate::Program::boards`].
    pub board: Option<u32>,
    /// The board played: the named one, or the board that declares itself its stand-in.
    pub board_played: Option<u32>,
    /// `turns:`, else the turn block's `limit:`; `None` when neither is given.
    pub turns: Option<Count>,
    /// Whether `turns` comes from the turn block's `limit:` rather than the scenario.
    pub turns_from_limit: bool,
    pub forces: Vec<ForceDef>,
    pub neutral: Vec<NeutralDef>,
    /// `on EVENT` hooks, in order (`victory` is not among them).
    pub hooks: Vec<(ScenarioEvent, ProcId)>,
    pub victory: Option<ProcId>,
    /// `chips:`, per side, for a chip cup.
    pub chips: Vec<(SideId, ChipsDef)>,
    /// `options:`: the book's optional rules played, by name.
    pub options: Vec<Given<String>>,
    /// Its block in [`crate::Program::configs`] (its properties, for `scenario_value`).
    pub config: u32,
    pub file: String,
    pub line: u32,
    pub cite: Cite,
}
