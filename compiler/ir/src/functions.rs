//! The table of engine functions: the functions a rule may call that need a game state
//! (`distance(firer, target)`, `count_units(hex, nva)`). One row per function gives its name,
//! parameters and their types, result type, what the checker may assume of its values, what a
//! leading guard over it tells the options enumerator, and a one-line doc.
//!
//! The compiler types calls from this table, the IR names a function by its [`EngineFn`]
//! variant, the runtime dispatches on the variant, the options enumerator reads
//! [`EngineFn::narrowing`], and the list in `docs/language.md` is generated from it
//! ([`markdown_table`]).

use serde::{Deserialize, Serialize};

use crate::Type;

/// What an engine function accepts in one parameter. The runtime converts and checks values;
/// the checker tests what it can see statically ([`ParamTy::expects`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamTy {
    /// A piece in play.
    Piece,
    /// A piece (where it stands), a hex label or, on an open table, a point `[x, y]`.
    Place,
    /// A place on a hex board.
    Hex,
    /// A side, or a piece (its side).
    Side,
    /// A filter on pieces: a side, a kind name or a unit name (`exited` also takes hexes).
    Filter,
    /// A marker.
    Marker,
    /// A terrain.
    Terrain,
    /// A unit or a kind name.
    UnitOrKind,
    /// A sector number or a place.
    Sector,
    /// Hexes on a hex board, a length on an open table.
    Distance,
    /// A distance around a centre.
    Radius,
    /// A number (a length counts as its number).
    Number,
    /// A name: a string or a bare word.
    Name,
    /// A counter's name, written out (a string or a bare word): resolved when compiled.
    Counter,
    /// Any value.
    Value,
}

impl ParamTy {
    /// How the parameter is written in the generated list.
    pub fn doc_name(self) -> &'static str {
        match self {
            ParamTy::Piece => "piece",
            ParamTy::Place => "place",
            ParamTy::Hex => "hex",
            ParamTy::Side => "side",
            ParamTy::Filter => "filter",
            ParamTy::Marker => "marker",
            ParamTy::Terrain => "terrain",
            ParamTy::UnitOrKind => "unit or kind",
            ParamTy::Sector => "sector or place",
            ParamTy::Distance => "distance",
            ParamTy::Radius => "radius",
            ParamTy::Number => "number",
            ParamTy::Name => "name",
            ParamTy::Counter => "counter",
            ParamTy::Value => "value",
        }
    }

    /// The static type an argument must have, when the parameter fixes one. Distances depend
    /// on the board and are checked by the compiler against the ruleset's boards.
    pub fn expects(self) -> Option<Type> {
        match self {
            ParamTy::Number => Some(Type::Int),
            _ => None,
        }
    }
}

/// One parameter: its name in the docs, its type, and whether a call may leave it out
/// (optional parameters come last).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub ty: ParamTy,
    pub optional: bool,
}

const fn req(name: &'static str, ty: ParamTy) -> Param {
    Param {
        name,
        ty,
        optional: false,
    }
}

const fn opt(name: &'static str, ty: ParamTy) -> Param {
    Param {
        name,
        ty,
        optional: true,
    }
}

/// What an engine function gives back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ret {
    Int,
    Bool,
    Side,
    /// A list of pieces.
    Pieces,
    /// A list of hex labels.
    Hexes,
    /// Hexes on a hex board, a length on an open table (the ruleset's boards decide).
    Distance,
    /// A value the checker cannot type: it depends on the board or the scenario.
    Value,
    /// Nothing: the call changes the game (an effect).
    Effect,
}

impl Ret {
    /// The static type of a call's value; `distance` is the type of a distance in the ruleset.
    pub fn ty(self, distance: &Type) -> Type {
        match self {
            Ret::Int => Type::Int,
            Ret::Bool => Type::Bool,
            Ret::Side => Type::Side,
            // The checker has no type for hexes: both lists are typed as lists of pieces,
            // whose items it does not inspect further.
            Ret::Pieces | Ret::Hexes => Type::List(Box::new(Type::Entity(None))),
            Ret::Distance => distance.clone(),
            Ret::Value | Ret::Effect => Type::Any,
        }
    }

    pub fn doc_name(self) -> &'static str {
        match self {
            Ret::Int => "int",
            Ret::Bool => "bool",
            Ret::Side => "side",
            Ret::Pieces => "list of pieces",
            Ret::Hexes => "list of hexes",
            Ret::Distance => "distance",
            Ret::Value => "value",
            Ret::Effect => "effect",
        }
    }
}

/// What the checker may assume of a function's values (for band and target lints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// Nothing is known.
    Any,
    /// Never below 0.
    NonNegative,
}

/// How far apart two places are, for [`Narrowing::Within`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Distance,
    MoveCost,
    Adjacent,
}

/// What a leading `require` over the function tells the options enumerator about a place
/// parameter `p`, so it lists the places that pass instead of testing every hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Narrowing {
    /// `f(centre, p) <= radius` (or `<`): `p` lies within the radius of the centre, measured
    /// by `By`. For a `Bool` function (`adjacent`), the bare guard `f(centre, p)`.
    Within(By),
    /// `f(p, filters…) > 0` (or `== 0`): `p` holds (or lacks) pieces matching the filters.
    Occupied,
}

/// Declares [`EngineFn`] and its accessors from one row per function.
macro_rules! engine_functions {
    ($(
        #[doc = $doc:literal]
        $variant:ident = $name:literal ($($param:expr),* $(,)?) -> $ret:ident,
            $values:ident, $narrowing:expr;
    )+) => {
        /// A function of the game engine.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EngineFn {
            $( #[doc = $doc] $variant, )+
        }

        impl EngineFn {
            /// Every function, in table order.
            pub const ALL: &'static [EngineFn] = &[$(EngineFn::$variant),+];

            /// The name rules call it by.
            pub const fn name(self) -> &'static str {
                match self {
                    $(EngineFn::$variant => $name,)+
                }
            }

            pub const fn params(self) -> &'static [Param] {
                match self {
                    $(EngineFn::$variant => {
                        const PARAMS: &[Param] = &[$($param),*];
                        PARAMS
                    })+
                }
            }

            pub const fn ret(self) -> Ret {
                match self {
                    $(EngineFn::$variant => Ret::$ret,)+
                }
            }

            pub const fn values(self) -> Values {
                match self {
                    $(EngineFn::$variant => Values::$values,)+
                }
            }

            pub const fn narrowing(self) -> Option<Narrowing> {
                match self {
                    $(EngineFn::$variant => $narrowing,)+
                }
            }

            /// What it answers or does, in one line.
            pub const fn doc(self) -> &'static str {
                match self {
                    $(EngineFn::$variant => $doc.trim_ascii(),)+
                }
            }
        }
    };
}

use ParamTy::*;

const NO: Option<Narrowing> = None;

engine_functions! {
    /// Pieces eliminated so far that match the filters.
    Eliminated = "eliminated"(opt("F", Filter), opt("F", Filter), opt("F", Filter)) -> Int, NonNegative, NO;
    /// Pieces eliminated so far that lie at the place (where each fell, or where its carrier dropped it; not those being carried) and match the filters; never units on the board.
    EliminatedIn = "eliminated_in"(req("P", Place), opt("F", Filter), opt("F", Filter)) -> Pieces, Any, NO;
    /// Pieces eliminated so far that lie within the distance of the place (where each fell, or where its carrier dropped it; not those being carried) and match the filters: what is left on the table of them, such as a wreck.
    EliminatedWithin = "eliminated_within"(req("P", Place), req("r", Radius), opt("F", Filter), opt("F", Filter)) -> Pieces, Any, NO;
    /// Pieces gone off the board that match the filters; a hex, a hex list `[S11, T10]` or a column range `U..=U` counts only pieces that left from a matching hex.
    Exited = "exited"(opt("F", Filter), opt("F", Filter), opt("F", Filter)) -> Int, NonNegative, NO;
    /// Pieces on the board that match the filters.
    Alive = "alive"(opt("F", Filter), opt("F", Filter), opt("F", Filter)) -> Int, NonNegative, NO;
    /// The pieces on the board that match the filters.
    Units = "units"(opt("F", Filter), opt("F", Filter), opt("F", Filter)) -> Pieces, Any, NO;
    /// Pieces on the board that match the filters, standing at the place when a place comes first.
    CountUnits = "count_units"(opt("P", Place), opt("F", Filter), opt("F", Filter)) -> Int, NonNegative, Some(Narrowing::Occupied);
    /// Pieces at the place that match the filters and do not carry the marker.
    CountWithout = "count_without"(req("P", Place), req("marker", Marker), opt("F", Filter), opt("F", Filter)) -> Int, NonNegative, NO;
    /// Hexes on a hex board, a length centre to centre on an open table.
    Distance = "distance"(req("a", Place), req("b", Place)) -> Distance, NonNegative, Some(Narrowing::Within(By::Distance));
    /// Neighbouring hexes; on an open table, at most one base apart.
    Adjacent = "adjacent"(req("a", Place), req("b", Place)) -> Bool, Any, Some(Narrowing::Within(By::Adjacent));
    /// Not `route_blocked(a, b)`.
    InLos = "in_los"(req("a", Place), req("b", Place)) -> Bool, Any, NO;
    /// Hex board: a unit stands on a hex strictly between the two on the straight hex route. Table: a sight-blocking feature that contains neither end touches the line, or another unit stands within half a base of it.
    RouteBlocked = "route_blocked"(req("a", Place), req("b", Place)) -> Bool, Any, NO;
    /// Hex boards: some shortest route of hexes from `a` to `b`, in any combination of directions, has no unit on its hexes strictly between and, with a terrain, at most `n` (else 0) of those hexes of that terrain.
    ClearRoute = "clear_route"(req("a", Place), req("b", Place), opt("terrain", Terrain), opt("n", Number)) -> Bool, Any, NO;
    /// Hex boards: hexes strictly between the two on the straight hex route whose terrain is the one given.
    TerrainBetween = "terrain_between"(req("a", Place), req("b", Place), req("terrain", Terrain)) -> Int, NonNegative, NO;
    /// The pieces on the board that match the filters, standing at the place when a place comes first.
    UnitsIn = "units_in"(req("P", Place), opt("F", Filter), opt("F", Filter)) -> Pieces, Any, NO;
    /// The pieces within the distance of the place that match the filters, except the place itself when it is a piece.
    UnitsWithin = "units_within"(req("P", Place), req("r", Radius), opt("F", Filter), opt("F", Filter)) -> Pieces, Any, NO;
    /// The piece carries the marker, or (for a place) the marker lies there: placed by a rule, or set up there as a piece.
    HasMarker = "has_marker"(req("x", Place), req("marker", Marker)) -> Bool, Any, NO;
    /// The side of a piece (or the side itself).
    Owner = "owner"(req("x", Side)) -> Side, Any, NO;
    /// The other side of a game of exactly two sides.
    Enemy = "enemy"(req("x", Side)) -> Side, Any, NO;
    /// The piece is that unit, or of that kind.
    Is = "is"(req("piece", Piece), req("x", UnitOrKind)) -> Bool, Any, NO;
    /// The hex's terrain is the one given; on an open table, the point lies in a feature of it.
    InTerrain = "in_terrain"(req("P", Place), req("terrain", Terrain)) -> Bool, Any, NO;
    /// Sectors boards: the sector of the place (from 1, rows from the top left); 0 off the board.
    SectorOf = "sector_of"(req("P", Place)) -> Int, NonNegative, NO;
    /// Sectors boards: the zone of the place inside its sector (from 1); 0 off the board.
    ZoneOf = "zone_of"(req("P", Place)) -> Int, NonNegative, NO;
    /// Sectors boards: the two sectors (numbers, or those of two places) share a side.
    SectorAdjacent = "sector_adjacent"(req("a", Sector), req("b", Sector)) -> Bool, Any, NO;
    /// Where the place is: a hex label or a point.
    Position = "position"(req("P", Place)) -> Value, Any, NO;
    /// The middle of the side's set-up area: a hex label or a point.
    Home = "home"(req("side", Side)) -> Value, Any, NO;
    /// Hex boards: the cheapest cost for the piece to reach the hex (1 per hex plus the terrain field the board's `entry_cost:` names; no entering a hex where a marker, placed or set up as a piece, has `blocks_movement: true`; a hex with enemy units is entered but not passed through); with a terrain, only along hexes of it, the piece's own hex included; 1,000,000 when it cannot.
    MoveCost = "move_cost"(req("piece", Piece), req("hex", Hex), opt("terrain", Terrain)) -> Int, NonNegative, Some(Narrowing::Within(By::MoveCost));
    /// Hex boards: the hex next to `hex` through which the piece's cheapest move enters it (the piece's own hex when it stands next to it or on it; among equally cheap ones, the first in the order N, NE, SE, S, SW, NW); with a terrain, the cheapest move along hexes of it (as `move_cost`); call it before the move.
    EnteredFrom = "entered_from"(req("piece", Piece), req("hex", Hex), opt("terrain", Terrain)) -> Value, Any, NO;
    /// Hex boards: every hex next to `hex` through which a move of the piece costing at most `budget` may enter it (as `move_cost` counts; the piece's own hex when it stands next to it; never a hex holding enemy units, where a move ends), in the order N, NE, SE, S, SW, NW; with a terrain and `terrain_budget`, also those through which a move kept to hexes of it (its own hex and `hex` included) costing at most that enters; call it before the move.
    EntryHexes = "entry_hexes"(req("piece", Piece), req("hex", Hex), req("budget", Number), opt("terrain", Terrain), opt("terrain_budget", Number)) -> Hexes, Any, NO;
    /// The actions the piece may still take in the activation in progress (a chip's or a card's unit); 0 outside one or when it is not one of the unit's pieces.
    ActionsLeft = "actions_left"(req("piece", Piece)) -> Int, NonNegative, NO;
    /// Effect: the piece counts as having taken one action of the activation in progress (an action that uses two pieces, such as a leader calling on a radio).
    Spend = "spend"(req("piece", Piece)) -> Effect, Any, NO;
    /// In a `together` choice (pieces of a unit taking one action to one place), the pieces still to take it after this one that may do so now; 0 for the last one and outside such a choice.
    TogetherLeft = "together_left"() -> Int, NonNegative, NO;
    /// The piece is on the board and the hex (else its own hex) is one of its force's `exit` hexes.
    CanExit = "can_exit"(req("piece", Piece), opt("hex", Hex)) -> Bool, Any, NO;
    /// Effect: the piece leaves the board (counted by `exited`, from its hex).
    ExitBoard = "exit_board"(req("piece", Piece)) -> Effect, Any, NO;
    /// Hex boards: the hexes the piece's cheapest move to `hex` enters, in order, `hex` last (the route the log shows for a move); empty when it cannot reach it; call it before the move.
    Route = "route"(req("piece", Piece), req("hex", Hex)) -> Hexes, Any, NO;
    /// Effect: an eliminated piece goes along with a piece on the board: it moves with it and leaves the board with it (still counted by `eliminated`; not listed by `eliminated_in` while carried), and stays where it is when the carrier is eliminated.
    Carry = "carry"(req("carrier", Piece), req("piece", Piece)) -> Effect, Any, NO;
    /// Effect, open tables: a straight move of at most `len` toward the place, stopping before it would come within one base of any other piece on the way (moves under 1 mm are not made).
    MoveToward = "move_toward"(req("piece", Piece), req("P", Place), req("len", Distance)) -> Effect, Any, NO;
    /// Effect, open tables: as `move_toward`, directly away from the place.
    MoveAway = "move_away"(req("piece", Piece), req("P", Place), req("len", Distance)) -> Effect, Any, NO;
    /// Open tables: features the line touches whose terrain has `field == value`.
    TerrainOnLine = "terrain_on_line"(req("a", Place), req("b", Place), req("field", Name), req("value", Value)) -> Int, Any, NO;
    /// Open tables: the length of the straight line between the places that lies inside features of the terrain (overlaps counted once).
    LengthInTerrain = "length_in_terrain"(req("a", Place), req("b", Place), req("terrain", Terrain)) -> Distance, NonNegative, NO;
    /// Open tables: the part of `length_in_terrain` during which the line draws nearer to the feature's centre (its top, for a hill).
    LengthUphill = "length_uphill"(req("a", Place), req("b", Place), req("terrain", Terrain)) -> Distance, NonNegative, NO;
    /// Open tables: the place is on the table and the piece's straight move to it keeps a base from every other piece on the board (units and markers alike); with filters, the pieces that match them (as `units` selects) are passed through, as friends a move may cross (it may still end on one: test the end apart).
    PathClear = "path_clear"(req("piece", Piece), req("P", Place), opt("F", Filter), opt("F", Filter)) -> Bool, Any, NO;
    /// Open tables: the first other piece whose base a straight move of the piece of at most `len` toward the place would touch, as a list of one; empty when none.
    FirstContact = "first_contact"(req("piece", Piece), req("P", Place), req("len", Distance)) -> Pieces, Any, NO;
    /// The side that set the piece up: its own, or for a force's `markers:` that force's side.
    PlacedBy = "placed_by"(req("piece", Piece)) -> Side, Any, NO;
    /// The distance to the nearest other piece of the same side that matches the filter; 2^40 when there is none.
    NearestDistance = "nearest_distance"(req("piece", Piece), req("F", Filter)) -> Distance, Any, NO;
    /// The number kept on the piece (or on a side: `counter(us, "fired")`) under the name, 0 until set; the engine adds each move's distance to the counter the turn block's `distance_counter:` names, and sets it back to 0 at the end of each turn.
    Counter = "counter"(req("piece", Piece), req("name", Counter)) -> Value, NonNegative, NO;
    /// Effect: add `n` to the piece's (or side's) counter.
    AddCounter = "add_counter"(req("piece", Piece), req("name", Counter), req("n", Number)) -> Effect, Any, NO;
    /// Effect: set the piece's (or side's) counter to `n`.
    SetCounter = "set_counter"(req("piece", Piece), req("name", Counter), req("n", Number)) -> Effect, Any, NO;
    /// The scenario's `options` include the name.
    Option = "option"(req("name", Name)) -> Bool, Any, NO;
    /// The scenario's property of that name (assumptions applied); an error naming the `--assume` to give when the book leaves it `?`.
    ScenarioValue = "scenario_value"(req("key", Name)) -> Value, Any, NO;
    /// The side's force has the boolean property `key: true`.
    ForceHas = "force_has"(req("side", Side), req("key", Name)) -> Bool, Any, NO;
    /// Effect: the side takes one free action after the current hook, chip, card or activation.
    FreeAction = "free_action"(req("side", Side)) -> Effect, Any, NO;
    /// Effect: the deck's `insert: name, …` cards (every line of that name) go into the deck at its next reshuffle, or before the next draw when the deck says `reshuffle: on_insert`.
    InsertCards = "insert_cards"(req("name", Name)) -> Effect, Any, NO;
    /// The terrain entity at the place (an error where the board gives none).
    TerrainOf = "terrain_of"(req("P", Place)) -> Value, Any, NO;
    /// The hex labels within `n` hexes of the hex, the hex included.
    HexesWithin = "hexes_within"(req("hex", Hex), req("n", Radius)) -> Hexes, Any, NO;
    /// Hex boards: the hex `ahead` steps from the hex in direction `dir` (0 = N, then clockwise NE, SE, S, SW, NW; modulo 6), then `aside` steps in the next direction clockwise, as a list of one; empty off the board.
    HexStep = "hex_step"(req("hex", Hex), req("dir", Number), req("ahead", Value), opt("aside", Value)) -> Hexes, Any, NO;
    /// The side's score.
    ScoreOf = "score_of"(req("side", Side)) -> Int, Any, NO;
    /// The turn number: 0 during deployment and `on start`.
    TurnNumber = "turn_number"() -> Int, NonNegative, NO;
    /// How many chips and side cards the side has drawn so far: its own turns under a card or chip activation.
    Activations = "activations"(req("side", Side)) -> Int, NonNegative, NO;
    /// The piece standing at the place keeps its side within the places it may fill with two or more units (the `groups_per_side` field of one of its side's units; true when no unit has it, or when the step adds no such place).
    GroupsAllow = "groups_allow"(req("piece", Piece), req("P", Place)) -> Bool, Any, NO;
    /// Effect: a hidden piece is turned face up for good.
    Reveal = "reveal"(req("piece", Piece)) -> Effect, Any, NO;
    /// Effect: a face-down piece is turned face up for the action in progress (its side's opponents see which it is) and face down again when the action ends.
    Show = "show"(req("piece", Piece)) -> Effect, Any, NO;
    /// Effect: a piece is turned face down again, hidden from the other sides until the next `reveal` (a unit slipping back into the fog).
    Conceal = "conceal"(req("piece", Piece)) -> Effect, Any, NO;
    /// The piece is held off the table in its force's `reserve:`. As a leading `require` on an action's acting piece it offers the action to the side's pieces in reserve (not to those on the board); `move` then brings the piece onto the board, and when the next place parameter is narrowed by `distance(X, p) <= r` from a piece `X` on a table, the points offered ring `X` (see docs/language.md, reserves).
    InReserve = "in_reserve"(req("piece", Piece)) -> Bool, Any, NO;
    /// The pieces held off the table in their force's `reserve:` that match the filters (as `units` lists those on the board): for a rule that brings one on from inside a procedure (`choose x from reserve_units(red) { move x to p }`).
    ReserveUnits = "reserve_units"(opt("F", Filter), opt("F", Filter), opt("F", Filter)) -> Pieces, Any, NO;
    /// Effect: a unit on the board goes back off the table into its force's reserve (listed again by `in_reserve` and `reserve_units`, brought on again by `move`), such as a squad mounting a carrier; it keeps its counters and markers, is seen by no side while there, and is logged as a `withdrawn` event. An error for a piece not on the board, not a unit, or carrying others.
    ToReserve = "to_reserve"(req("piece", Piece)) -> Effect, Any, NO;
    /// Open tables: the points within `r` of the place where a figure may stand (on the table, a base from every other figure on it, unseen ones aside): the place itself, then the board's `move_directions` directions (the first toward the top edge), each at `k / move_steps` of `r`; with terrains, only the points lying in a feature of one of them. For a `choose` of where a piece is put.
    PointsAround = "points_around"(req("P", Place), req("r", Radius), opt("T", Terrain), opt("T", Terrain), opt("T", Terrain), opt("T", Terrain)) -> Value, Any, NO;
    /// Open tables: the straight line from `a` to `b` passes strictly nearer than `r` to the place `P` (a figure of base diameter `r` moving along it would touch a figure standing there; exact).
    PassesWithin = "passes_within"(req("a", Place), req("b", Place), req("P", Place), req("r", Radius)) -> Bool, Any, NO;
    /// Open tables: the direction from `a` to `b` in whole degrees, 0 to 359, clockwise from the direction of the top edge (90 toward the right edge), rounded to the nearest degree (exact: the same on every machine); 0 where they coincide. A rule keeps a facing in a counter and compares bearings for arcs.
    Bearing = "bearing"(req("a", Place), req("b", Place)) -> Int, NonNegative, NO;
}

impl EngineFn {
    /// The function rules call `name`.
    pub fn named(name: &str) -> Option<EngineFn> {
        EngineFn::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// Fewest arguments a call may give.
    pub fn min_args(self) -> usize {
        self.params().iter().filter(|p| !p.optional).count()
    }

    /// Most arguments a call may give.
    pub fn max_args(self) -> usize {
        self.params().len()
    }

    /// `name(a, b, [F], [F])`, as the generated list shows a call.
    pub fn signature(self) -> String {
        let params: Vec<String> = self
            .params()
            .iter()
            .map(|p| {
                if p.optional {
                    format!("[{}]", p.name)
                } else {
                    p.name.to_string()
                }
            })
            .collect();
        format!("{}({})", self.name(), params.join(", "))
    }
}

impl std::fmt::Display for EngineFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

// In the IR (and its JSON) a function is its name; an unknown name is refused on reading.
impl Serialize for EngineFn {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for EngineFn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        EngineFn::named(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("no engine function `{name}`")))
    }
}

/// The generated list of engine functions for `docs/language.md`: a Markdown table, one row
/// per function, in table order.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| call | parameters | result | what it answers or does |\n|---|---|---|---|\n",
    );
    for f in EngineFn::ALL {
        let params: Vec<String> = f
            .params()
            .iter()
            .map(|p| format!("`{}`: {}", p.name, p.ty.doc_name()))
            .collect();
        // Repeated optional filters read as one `F…` entry.
        let mut shown: Vec<String> = Vec::new();
        for p in params {
            if shown.last() != Some(&p) {
                shown.push(p);
            }
        }
        let ret = match (f.ret(), f.values()) {
            (r, Values::NonNegative) => format!("{} (≥ 0)", r.doc_name()),
            (r, Values::Any) => r.doc_name().to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            f.signature(),
            if shown.is_empty() {
                "none".to_string()
            } else {
                shown.join(", ")
            },
            ret,
            f.doc().replace('|', "\\|")
        ));
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_optional_parameters_come_last() {
        let mut seen = std::collections::BTreeSet::new();
        for f in EngineFn::ALL {
            assert!(seen.insert(f.name()), "{} is in the table twice", f.name());
            assert_eq!(EngineFn::named(f.name()), Some(*f));
            let ps = f.params();
            let first_optional = ps.iter().position(|p| p.optional).unwrap_or(ps.len());
            assert!(
                ps[first_optional..].iter().all(|p| p.optional),
                "{}: a required parameter after an optional one",
                f.name()
            );
            assert!(
                !f.doc().is_empty() && !f.doc().contains('\n'),
                "{}",
                f.name()
            );
        }
        assert_eq!(EngineFn::named("teleport"), None);
    }

    #[test]
    fn a_narrowing_guard_has_a_place_to_narrow() {
        for f in EngineFn::ALL {
            match f.narrowing() {
                // `f(centre, p)`: two places (a hex for move costs), compared with a radius
                // unless the function is itself the test.
                Some(Narrowing::Within(by)) => {
                    assert_eq!(f.min_args(), 2, "{f}");
                    assert_eq!(by == By::Adjacent, f.ret() == Ret::Bool, "{f}");
                }
                // `f(p, filters…)` counts.
                Some(Narrowing::Occupied) => {
                    assert_eq!(f.params()[0].ty, ParamTy::Place, "{f}");
                    assert_eq!(f.ret(), Ret::Int, "{f}");
                }
                None => {}
            }
        }
    }
}
