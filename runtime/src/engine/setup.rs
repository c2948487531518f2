//! A scenario made ready to play: the typed scenario of the IR (`ScenarioDef`: board played,
//! turns, forces, neutral pieces, hooks, chips, options), the typed board (`BoardDef`) and the
//! typed turn and activations (`TurnDef`, `ActivationDef`), with their `?` values resolved
//! through the assumptions, built into the indices the engine plays by (the grid and its
//! ground, the table's shapes and areas, the phases' activation schemes). Everything the
//! engine plays comes from here; nothing is named in engine code.
//!
//! `check` reports every set-up mistake that the ruleset alone decides, with its span
//! (`compiler/src/lower/scenario.rs`, `playable.rs`, `activation.rs`). The
//! `EngineError::Setup` refusals left here are of three sorts: (1) dynamic: a scenario name
//! given on the command line, a value an assumption gives for a `?` (a force's units, a
//! deploy area, chips, a side order, neutral places, the ground), or a `?` with no
//! assumption; (2) as printed: a scenario the book names without printing its forces, a
//! board whose size the book leaves `?` with no stand-in, a deploy described only in the
//! book's words; (3) internal guards of what `check` already refused (an off-board hex, a
//! missing deploy, a board beyond the grid's or the sector layout's limits, whose bounds the
//! compiler reads from `ir::scenario`), kept so a program built without the compiler fails
//! cleanly.

use sandtable_ir::{
    self as ir, BinOp, BoardDef, BoardPlay, BoardShape, Category, ChipsDef, Count, DeckDef, Deploy,
    EntityId, Expr, ForceDef, Given, HexOrientation, NeutralDef, Outline, Pieces, Place, ProcId,
    Program, SchemeDef, SideId, Type, UnOp, UnitDef, Value,
};

use super::{EngineError, options};
use crate::board::table::INCH;
use crate::board::{Geometry, HexCoord, HexGrid, HexLayout, Point, SectorGrid, Shape};
use crate::engine::state::Pos;
use crate::interp::{Assumptions, Interp};
use crate::value::Val;

// The compiler counts set-up room with the IR's default base: it must be the runtime's inch.
const _: () = assert!(ir::scenario::DEFAULT_BASE == INCH);

/// Most turns a game may last when its scenario sets no limit.
pub const MAX_TURNS: u32 = ir::scenario::MAX_TURNS;
/// Most chips one side puts in the cup per turn.
pub const MAX_CHIPS: u32 = ir::scenario::MAX_CHIPS;
/// Most copies of one piece a force lists (`20 * soldier`).
pub const MAX_COPIES: i64 = ir::scenario::MAX_COPIES as i64;

/// What a hex is made of: a terrain entity (with a stat line), or a member of an enum the
/// rules name their ground with (`enum ground { paddy, dyke }`), which has no fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ground {
    Entity(EntityId),
    /// Index into the board's `members`.
    Member(u32),
}

pub enum BoardSpec {
    Hex {
        grid: HexGrid,
        /// Terrain per hex, indexed by [`BoardSpec::hex_index`]; `None` = no terrain given.
        terrain: Vec<Option<Ground>>,
        /// The enum members used as ground, by [`Ground::Member`] index.
        members: Vec<sandtable_ir::Str>,
    },
    Table {
        width: i64,
        depth: i64,
        shapes: Vec<Shape>,
        /// The ground of each shape (the shape's `terrain` field is its index here).
        shape_terrain: Vec<Ground>,
        /// The enum members used as ground, by [`Ground::Member`] index.
        members: Vec<sandtable_ir::Str>,
        /// The ground where no feature lies (`default:`), if given.
        default: Option<Ground>,
        /// Named areas (deployment zones).
        areas: Vec<(String, Geometry)>,
        /// Diameter of a figure's base: pieces keep this far apart and block fire within it.
        base: i64,
        /// Numbered sectors and zones over the table (a `sectors` board).
        sectors: Option<SectorGrid>,
        /// Which destinations a move to any point is offered (see `table_points`).
        moves: MoveOffers,
    },
}

/// How many destinations the engine offers for a move to any point on an open table: the
/// board's `move_directions` (evenly spaced compass directions, 8 unless given) and
/// `move_steps` (each line is offered at its farthest legal point and at `k/steps` of it,
/// 2 unless given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveOffers {
    pub directions: u32,
    pub steps: u32,
}

impl MoveOffers {
    pub const MAX_DIRECTIONS: u32 = ir::turn::MAX_DIRECTIONS;
    pub const MAX_STEPS: u32 = ir::turn::MAX_STEPS;
}

impl Default for MoveOffers {
    fn default() -> Self {
        MoveOffers {
            directions: 8,
            steps: 2,
        }
    }
}

impl BoardSpec {
    pub fn hex_index(grid: &HexGrid, h: HexCoord) -> usize {
        ((h.column() - 1) * grid.rows() + (h.row() - 1)) as usize
    }

    /// A hex's ground as the rules see it: the terrain entity or the enum member.
    pub fn ground_val(&self, g: Ground) -> Val {
        match (g, self) {
            (Ground::Entity(e), _) => Val::Entity(e),
            (
                Ground::Member(i),
                BoardSpec::Hex { members, .. } | BoardSpec::Table { members, .. },
            ) => Val::Sym(members.get(i as usize).cloned().unwrap_or_default()),
        }
    }

    /// Whether ground `g` is the terrain or enum member `v`.
    pub fn ground_is(&self, g: Ground, v: &Val) -> bool {
        match (g, v, self) {
            (Ground::Entity(e), Val::Entity(x), _) => e == *x,
            (
                Ground::Member(i),
                Val::Sym(s),
                BoardSpec::Hex { members, .. } | BoardSpec::Table { members, .. },
            ) => members.get(i as usize).is_some_and(|m| **m == **s),
            _ => false,
        }
    }
}

/// How the pieces of a phase get to act.
#[derive(Debug, Clone, PartialEq)]
pub enum Activation {
    /// Only the phase's hooks run.
    None,
    /// Chips per side go into one cup; each draw lets the drawn side take one action.
    ChipCup(Vec<(SideId, Chips)>),
    /// Side after side, each piece of the side may act once (`all`, `fixed`, `sequence`).
    EachPiece(Vec<SideId>),
    /// Sides take turns activating one piece at a time until no piece is left to act.
    Alternating(Vec<SideId>),
    /// A deck of cards: each side card drawn gives that side one action; after `draws`
    /// cards (or the whole deck) the phase ends and the deck is reshuffled.
    Deck(DeckSpec),
}

/// How many chips a side puts in the cup.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Chips {
    Fixed(u32),
    /// One per unit of the side on the board when the phase begins (`us = units`), or per
    /// unit of one kind (`us = team`): destroyed units put no chip in.
    PerUnit(Option<u32>),
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeckCard {
    pub label: String,
    pub side: Option<SideId>,
    /// An inserted card: the first drawn of its kind runs the activation's `on EVENT` hooks.
    pub event: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DeckInsert {
    pub label: String,
    pub count: u32,
    pub replaces: u32,
    pub event: String,
    /// `side = S`: once its event has been run, a card of this insert is one of S's cards.
    pub side: Option<SideId>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DeckSpec {
    pub cards: Vec<DeckCard>,
    pub draws: Option<u32>,
    /// Cards a rule may put into the deck with `insert_cards(label)`.
    pub inserts: Vec<DeckInsert>,
    /// `on EVENT` hooks of the activation block.
    pub hooks: Vec<(String, ProcId)>,
    /// `reshuffle: on_insert`: cards a rule inserts go in, and the deck is reshuffled, before
    /// the next draw rather than when the draws run out.
    pub reshuffle_on_insert: bool,
}

/// What one chip, side card or free action activates (the activation block's `activates:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// One piece takes its actions (the default).
    Piece,
    /// Every piece of the side in one place of its choice (a hex stack, a point).
    Place,
    /// A piece of the side and the pieces it `commands:`.
    Group,
    /// The whole side: every piece of it may act.
    Side,
}

/// How one activation is played: see `docs/language.md`, "Activation units".
#[derive(Debug, Clone, PartialEq)]
pub struct UnitSpec {
    pub kind: UnitKind,
    /// Actions each activated piece takes.
    pub actions_per_piece: u32,
    /// `all_act_when:` (a hook reading the unit): when it fails, only one piece of the unit
    /// acts. `None`: every piece may act.
    pub all_act_when: Option<ProcId>,
    /// `commands:` (a hook reading `leader` and `member`) for `Group`.
    pub commands: Option<ProcId>,
    /// Actions that unused pieces of the unit may take together, as one choice.
    pub together: Vec<ProcId>,
}

impl Default for UnitSpec {
    fn default() -> Self {
        UnitSpec {
            kind: UnitKind::Piece,
            actions_per_piece: 1,
            all_act_when: None,
            commands: None,
            together: Vec::new(),
        }
    }
}

pub struct PhaseSpec {
    pub name: String,
    pub title: String,
    pub activation: Activation,
    pub unit: UnitSpec,
    pub actions: Vec<ProcId>,
    pub on_run: Vec<ProcId>,
}

pub enum DeployArea {
    Hexes(Vec<HexCoord>),
    Area(Geometry),
}

pub struct ForceSpec {
    pub side: SideId,
    pub units: Vec<EntityId>,
    /// Pieces held off the table (`reserve:`), see `engine/reserve.rs`.
    pub reserve: Vec<EntityId>,
    /// Pieces of no side the force sets up in its area (`markers: 3 * bunker`).
    pub markers: Vec<EntityId>,
    pub area: DeployArea,
    /// Where the force's markers are set up, when `markers_deploy:` names another area.
    pub marker_area: Option<DeployArea>,
    /// `deploy_check:`: the procedure that says where a piece of its kind may be set up.
    pub deploy_check: Option<ProcId>,
    pub max_per_hex: Option<u32>,
    pub hidden: bool,
    pub exits: Vec<HexCoord>,
    /// Boolean properties of the force (`artillery: false`), for `force_has`.
    pub flags: Vec<(String, bool)>,
    /// Where the side's home (flag, HQ) is: the middle of its deployment area.
    pub home: crate::engine::state::Pos,
}

/// A scenario ready to play: everything the engine needs, checked once.
pub struct Rules<'p> {
    pub program: &'p Program,
    pub assumptions: &'p Assumptions,
    pub scenario: String,
    pub scenario_title: String,
    pub board: BoardSpec,
    pub board_name: String,
    /// The board a stand-in replaces, when one is used.
    pub stand_in_for: Option<String>,
    pub turns: u32,
    pub turns_printed: bool,
    pub phases: Vec<PhaseSpec>,
    pub forces: Vec<ForceSpec>,
    pub options: Vec<String>,
    /// Pieces of no side at fixed places (`neutral { pieces: objective, at: D4 }`): on the
    /// board from the start, never acting, never scored or counted for a side.
    pub neutral: Vec<(EntityId, crate::engine::state::Pos)>,
    pub hooks: Vec<(ir::scenario::ScenarioEvent, ProcId)>,
    pub victory: Option<ProcId>,
    /// Actions a free action may pick from: those of the first phase with an activation.
    pub free_actions: Vec<ProcId>,
    /// What a free action activates: the unit of that same phase.
    pub free_unit: UnitSpec,
    /// Hex boards: the cost of entering each hex (by [`BoardSpec::hex_index`]): 1 plus the
    /// terrain field the board's `entry_cost:` names, when it has one.
    pub hex_cost: Vec<Option<u32>>,
    /// Hex boards: the neighbours of each hex, by index.
    pub hex_adjacent: Vec<Vec<u32>>,
    /// The turn block's `distance_counter:`: the piece counter that adds up the distance each
    /// piece moves, back to 0 when the turn ends.
    pub distance_counter: Option<ir::CounterId>,
    /// The turn block's `secret_counters:`: piece counters known to the piece's own side
    /// only (shown in its view, logged as `counted` events, shuffled in others' look-ahead).
    pub secret_counters: Vec<ir::CounterId>,
    /// The turn block's `concealing_markers:`: a piece carrying one is in a concealed place,
    /// unseen by the other sides until it comes off.
    pub concealing_markers: Vec<EntityId>,
    /// The turn block's `on end` hooks: clean-up after the last phase of every turn.
    pub turn_end: Vec<ProcId>,
    /// Every entity's fields with the assumptions applied, by entity id; `None` for an
    /// unknown with no assumption (asking for it is an error with its name).
    pub entity_fields: Vec<Vec<(String, Option<Val>)>>,
    /// Per procedure: its leading `require`s and how many parameters each reads.
    pub guards: Vec<Vec<(&'p Expr, usize)>>,
    /// Per procedure and parameter: the guards that narrow the hexes it may take.
    pub(crate) narrowings: Vec<Vec<Vec<(usize, super::options::Narrow<'p>)>>>,
    /// Per procedure: its result in every game of this scenario, when the options alone
    /// decide it ([`super::fold`]).
    pub(crate) constant_results: Vec<Option<Val>>,
    /// Per procedure: its leading guards draw no dice ([`super::fold::dice_free`]), so
    /// they may be tested in any order.
    pub(crate) dice_free_guards: Vec<bool>,
    /// Each force's `deploy_check:` specialised for each entity the force sets up
    /// ([`super::fold::for_piece`]), where the piece's kind settles part of it.
    pub(crate) deploy_bodies: Vec<((ProcId, EntityId), Vec<ir::Stmt>)>,
    /// The scenario's properties (first value, assumptions applied; `None` if unknown), for
    /// `scenario_value`.
    pub scenario_values: Vec<(String, Option<Val>)>,
    /// Per side: the cap on places holding its groups ([`Rules::group_cap`]), read once
    /// from the entities' fields rather than by name at every move.
    pub(crate) group_caps: Vec<Option<u32>>,
    /// Per entity: whether its kind says `blocks_movement: true` ([`Rules::blocks_movement`]).
    pub(crate) blocks: Vec<bool>,
    /// The forces' `deploy_check:`s that give one answer for every place nothing stands on
    /// ([`options::same_on_every_empty_place`]): tested once for all such places of a set-up.
    pub(crate) deploy_by_contents: Vec<ProcId>,
}

impl<'p> Rules<'p> {
    pub fn new(
        program: &'p Program,
        assumptions: &'p Assumptions,
        scenario: &str,
    ) -> Result<Self, EngineError> {
        let wanted = scenario.replace('-', "_");
        let Some(typed) = program.scenarios.iter().find(|c| c.name == wanted) else {
            let names: Vec<String> = program
                .scenarios
                .iter()
                .map(|c| c.name.replace('_', "-"))
                .collect();
            return Err(EngineError::Setup(format!(
                "{} has no scenario `{scenario}`; its scenarios are: {}",
                program.name,
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            )));
        };
        let sc = &program.configs[typed.config as usize];
        let interp = Interp::new(program, assumptions);
        let mut r = Rules {
            program,
            assumptions,
            scenario: wanted.clone(),
            scenario_title: typed.title.clone().unwrap_or(wanted.clone()),
            board: BoardSpec::Hex {
                grid: HexGrid::new(1, 1, HexLayout::default()).map_err(setup_err)?,
                terrain: vec![None],
                members: Vec::new(),
            },
            board_name: String::new(),
            stand_in_for: None,
            turns: MAX_TURNS,
            turns_printed: false,
            phases: Vec::new(),
            forces: Vec::new(),
            options: Vec::new(),
            neutral: Vec::new(),
            hooks: typed.hooks.clone(),
            victory: typed.victory,
            free_actions: Vec::new(),
            free_unit: UnitSpec::default(),
            hex_cost: Vec::new(),
            hex_adjacent: Vec::new(),
            turn_end: Vec::new(),
            distance_counter: None,
            secret_counters: Vec::new(),
            concealing_markers: Vec::new(),
            scenario_values: sc
                .properties
                .iter()
                .map(|p| {
                    let v = p
                        .values
                        .first()
                        .and_then(|(_, e)| const_value(&interp, e).ok());
                    (p.key.clone(), v)
                })
                .collect(),
            guards: program
                .procs
                .iter()
                .map(|p| super::options::leading_guards(&p.body))
                .collect(),
            constant_results: Vec::new(),
            dice_free_guards: Vec::new(),
            deploy_bodies: Vec::new(),
            narrowings: program
                .procs
                .iter()
                .map(|p| {
                    (0..p.params.len() as u32)
                        .map(|slot| super::options::narrowings(&p.body, slot))
                        .collect()
                })
                .collect(),
            entity_fields: program
                .entities
                .iter()
                .map(|e| {
                    e.fields
                        .iter()
                        .map(|(n, v)| (n.clone(), interp.constant(v).ok()))
                        .collect()
                })
                .collect(),
            group_caps: Vec::new(),
            blocks: Vec::new(),
            deploy_by_contents: Vec::new(),
        };
        r.group_caps = (0..program.sides.len() as SideId)
            .map(|s| r.read_group_cap(s))
            .collect();
        r.blocks = (0..program.entities.len() as EntityId)
            .map(|e| r.read_blocks_movement(e))
            .collect();
        // Board: the scenario's, or a board that declares itself its stand-in.
        let Some(played) = typed.board_played else {
            // The compiler reports a missing or unknown `board:` for every scenario with
            // forces; a scenario the book names without printing it has none.
            return Err(EngineError::Setup(match typed.board {
                Some(b) => format!("no board `{}`", program.boards[b as usize].name),
                None => "the scenario names no board".into(),
            }));
        };
        if typed.board != Some(played) {
            r.stand_in_for = typed.board.map(|b| program.boards[b as usize].name.clone());
        }
        let board_def = &program.boards[played as usize];
        r.board_name = board_def.name.clone();
        r.board = read_board(program, &interp, board_def)?;
        if let (BoardSpec::Hex { grid, terrain, .. }, BoardPlay::Hex(hex)) =
            (&r.board, &board_def.play)
        {
            for h in grid.hexes() {
                let t = match terrain[BoardSpec::hex_index(grid, h)] {
                    Some(Ground::Entity(t)) => Some(t),
                    _ => None,
                };
                // `entry_cost: FIELD`: the terrain field that adds to the cost of entering.
                let extra = match (t, &hex.entry_cost) {
                    (Some(t), Some(field)) => match program.entities[t as usize].field(field) {
                        Some(v) => int(&interp.constant(v).map_err(setup_err)?)?,
                        None => 0,
                    },
                    _ => 0,
                };
                r.hex_cost.push(Some(1 + extra.clamp(0, 1000) as u32));
                r.hex_adjacent.push(
                    grid.neighbours(h)
                        .into_iter()
                        .map(|n| BoardSpec::hex_index(grid, n) as u32)
                        .collect(),
                );
            }
        }

        if let Some(n) = typed.turns {
            let what = if typed.turns_from_limit {
                "the turn block's `limit`"
            } else {
                "`turns`"
            };
            r.turns = turn_count(&count_value(&interp, n)?, what)?;
            r.turns_printed = true;
        }
        for o in &typed.options {
            match o {
                Given::Fixed(name) => r.options.push(name.clone()),
                // `options: ?`: the assumption names the optional rules played.
                Given::Unknown(u) => {
                    match interp.constant(&Value::Unknown(*u)).map_err(setup_err)? {
                        Val::List(items) => {
                            for i in items {
                                r.options.push(sym(&i)?);
                            }
                        }
                        v => r.options.push(sym(&v)?),
                    }
                }
            }
        }
        r.constant_results = super::fold::constant_results(program, assumptions, &r.options);
        r.dice_free_guards = r
            .guards
            .iter()
            .map(|gs| {
                gs.iter()
                    .all(|(g, _)| super::fold::dice_free(g, &r.constant_results))
            })
            .collect();
        let chips = typed
            .chips
            .iter()
            .map(|(side, c)| Ok((*side, read_chips(program, &interp, *c)?)))
            .collect::<Result<Vec<_>, EngineError>>()?;

        // Turn: its phases in order, each with its activation scheme. The compiler reports a
        // phase's unknown activation and actions; a ruleset without a turn block is one whose
        // book prints none, and cannot be played.
        let turn = program
            .turn
            .as_ref()
            .ok_or_else(|| EngineError::Setup("the ruleset has no `turn` block".into()))?;
        r.distance_counter = turn.distance_counter;
        r.secret_counters = turn.secret_counters.clone();
        r.concealing_markers = turn.concealing_markers.clone();
        r.turn_end = turn.end.clone();
        for ph in &turn.phases {
            let (activation, unit) = match ph.activation {
                None => (Activation::None, UnitSpec::default()),
                Some(a) => {
                    let a = &program.activations[a as usize];
                    (
                        read_activation(&interp, &a.scheme, &chips)?,
                        read_unit(&a.unit),
                    )
                }
            };
            if r.free_actions.is_empty() && activation != Activation::None {
                r.free_actions = ph.actions.clone();
                r.free_unit = unit.clone();
            }
            r.phases.push(PhaseSpec {
                title: ph.title.clone().unwrap_or(ph.name.clone()),
                name: ph.name.clone(),
                activation,
                unit,
                actions: ph.actions.clone(),
                on_run: ph.on_run.clone(),
            });
        }
        for f in &typed.forces {
            r.forces.push(read_force(program, &interp, f, &r.board)?);
        }
        if r.forces.is_empty() {
            return Err(EngineError::Setup(
                "the scenario has no `force` blocks".into(),
            ));
        }
        for n in &typed.neutral {
            r.read_neutral(&interp, n)?;
        }
        for f in &r.forces {
            let Some(check) = f.deploy_check else {
                continue;
            };
            if !r.deploy_by_contents.contains(&check)
                && options::same_on_every_empty_place(&program.procs[check as usize].body)
            {
                r.deploy_by_contents.push(check);
            }
            for &e in f.units.iter().chain(&f.reserve).chain(&f.markers) {
                if r.deploy_bodies
                    .iter()
                    .any(|((c, x), _)| *c == check && *x == e)
                {
                    continue;
                }
                let body = &program.procs[check as usize].body;
                if let Some(b) = super::fold::for_piece(program, body, 0, e) {
                    r.deploy_bodies.push(((check, e), b));
                }
            }
        }
        Ok(r)
    }

    pub fn side_name(&self, s: SideId) -> &str {
        &self.program.sides[s as usize].name
    }

    pub fn scenario_hooks(
        &self,
        event: ir::scenario::ScenarioEvent,
    ) -> impl Iterator<Item = ProcId> + '_ {
        self.hooks
            .iter()
            .filter(move |(n, _)| *n == event)
            .map(|(_, p)| *p)
    }

    /// The two sides a game is between, in force order.
    pub fn sides(&self) -> Vec<SideId> {
        let mut v: Vec<SideId> = Vec::new();
        for f in &self.forces {
            if !v.contains(&f.side) {
                v.push(f.side);
            }
        }
        v
    }

    /// A `neutral { pieces: …, at: … }` block: pieces of no side, one per place.
    fn read_neutral(&mut self, interp: &Interp, n: &NeutralDef) -> Result<(), EngineError> {
        let program = self.program;
        for &e in &n.pieces {
            let def = &program.entities[e as usize];
            if def.category == Category::Terrain {
                return Err(EngineError::Setup(format!(
                    "`neutral` places pieces, and `{}` is a terrain",
                    def.name
                )));
            }
            if let Some(s) = def.side {
                return Err(EngineError::Setup(format!(
                    "`{}` belongs to side {}: a neutral piece is one of no side (declare it without `of SIDE`, or as a `marker`)",
                    def.name, program.sides[s as usize].name
                )));
            }
        }
        let mut places = Vec::new();
        for p in &n.at {
            match *p {
                Place::Hex(h) => places.push(
                    HexCoord::new(h.column, h.row)
                        .map(Pos::Hex)
                        .map_err(setup_err)?,
                ),
                Place::Point(x, y) => {
                    places.push(Point::new(x, y).map(Pos::Point).map_err(setup_err)?)
                }
                // A `?` for places: the assumption gives a label, a point or a list of them.
                Place::Unknown(u) => {
                    let v = interp.constant(&Value::Unknown(u)).map_err(setup_err)?;
                    let vs = match v {
                        Val::List(items) if items.iter().all(|v| v.as_int().is_some()) => {
                            vec![Val::List(items)]
                        }
                        Val::List(items) => items,
                        v => vec![v],
                    };
                    for v in vs {
                        places.push(
                            options::decode_place(self, &v)
                                .map_err(|x| EngineError::Setup(format!("`neutral`: {x}")))?,
                        );
                    }
                }
            }
        }
        if n.pieces.len() != places.len() {
            return Err(EngineError::Setup(format!(
                "`neutral` lists {} pieces and {} places: give one place (`at:`) per piece",
                n.pieces.len(),
                places.len()
            )));
        }
        for (&e, at) in n.pieces.iter().zip(places) {
            let name = &program.entities[e as usize].name;
            if !self.on_board(at) {
                return Err(EngineError::Setup(format!(
                    "neutral `{name}` at {} is off the board",
                    at.label(program.length_unit.as_deref())
                )));
            }
            self.neutral.push((e, at));
        }
        Ok(())
    }

    /// Whether a place lies on the board played.
    pub fn on_board(&self, at: crate::engine::state::Pos) -> bool {
        use crate::engine::state::Pos;
        match (&self.board, at) {
            (BoardSpec::Hex { grid, .. }, Pos::Hex(h)) => grid.contains(h),
            (BoardSpec::Table { width, depth, .. }, Pos::Point(p)) => {
                (0..=*width).contains(&p.x()) && (0..=*depth).contains(&p.y())
            }
            _ => false,
        }
    }

    pub fn force(&self, side: SideId) -> Option<&ForceSpec> {
        self.forces.iter().find(|f| f.side == side)
    }

    /// The kind an action's parameter of entity type must have, if any.
    pub fn param_kind(&self, proc: ProcId, i: usize) -> Option<Option<u32>> {
        match &self.program.procs[proc as usize].params.get(i)?.ty {
            Type::Entity(k) => Some(*k),
            _ => None,
        }
    }
}

fn setup_err(e: impl std::fmt::Display) -> EngineError {
    EngineError::Setup(e.to_string())
}

/// A constant of a config property: `?` resolved through the assumptions, `3 * x` expanded
/// into three copies.
pub fn const_value(interp: &Interp, e: &Expr) -> Result<Val, EngineError> {
    Ok(match e {
        Expr::Const(v) => interp
            .constant(v)
            .map_err(|e| EngineError::Setup(e.to_string()))?,
        Expr::List(items) => Val::List(
            items
                .iter()
                .map(|x| const_value(interp, x))
                .collect::<Result<_, _>>()?,
        ),
        Expr::Unary {
            op: UnOp::Neg,
            operand,
        } => Val::Int(-int(&const_value(interp, operand)?)?),
        Expr::Binary {
            op: BinOp::Mul,
            lhs,
            rhs,
        } => {
            let (a, b) = (const_value(interp, lhs)?, const_value(interp, rhs)?);
            match (&a, &b) {
                (Val::Int(x), Val::Int(y)) => Val::Int(x.saturating_mul(*y)),
                (Val::Int(n), other) | (other, Val::Int(n)) => {
                    if !(0..=MAX_COPIES).contains(n) {
                        return Err(EngineError::Setup(format!(
                            "{n} copies is out of range: 0 to {MAX_COPIES} copies of one piece"
                        )));
                    }
                    Val::List(vec![other.clone(); *n as usize])
                }
                _ => return Err(EngineError::Setup("cannot multiply these values".into())),
            }
        }
        _ => {
            return Err(EngineError::Setup(
                "a scenario value must be a constant".into(),
            ));
        }
    })
}

/// A number of turns: 1 to [`MAX_TURNS`].
fn turn_count(v: &Val, what: &str) -> Result<u32, EngineError> {
    let n = int(v)?;
    u32::try_from(n)
        .ok()
        .filter(|n| (1..=MAX_TURNS).contains(n))
        .ok_or_else(|| EngineError::Setup(format!("{what} must be 1 to {MAX_TURNS}, not {n}")))
}

fn int(v: &Val) -> Result<i64, EngineError> {
    v.as_int()
        .ok_or_else(|| EngineError::Setup(format!("expected a number, found {v:?}")))
}

fn sym(v: &Val) -> Result<String, EngineError> {
    match v {
        Val::Sym(s) | Val::Text(s) => Ok(s.to_string()),
        other => Err(EngineError::Setup(format!(
            "expected a name, found {other:?}"
        ))),
    }
}

fn side_of(interp: &Interp, s: &Given<SideId>) -> Result<Vec<SideId>, EngineError> {
    match s {
        Given::Fixed(s) => Ok(vec![*s]),
        // `order: ?`: the assumption gives a side or a list of them, typed by the compiler.
        Given::Unknown(u) => {
            let sides = match interp.constant(&Value::Unknown(*u)).map_err(setup_err)? {
                Val::List(items) => items,
                v => vec![v],
            };
            sides
                .iter()
                .map(|v| match v {
                    Val::Side(s) => Ok(*s),
                    other => Err(EngineError::Setup(format!(
                        "expected a side, found {other:?}"
                    ))),
                })
                .collect()
        }
    }
}

fn sides(interp: &Interp, order: &[Given<SideId>]) -> Result<Vec<SideId>, EngineError> {
    let mut out = Vec::new();
    for s in order {
        out.extend(side_of(interp, s)?);
    }
    Ok(out)
}

/// A side's chips; the compiler checked a written count, so only an assumption's value for
/// a `?` can be out of range here.
fn read_chips(program: &Program, interp: &Interp, c: ChipsDef) -> Result<Chips, EngineError> {
    let fixed = |n: i64| {
        u32::try_from(n)
            .ok()
            .filter(|n| *n <= MAX_CHIPS)
            .map(Chips::Fixed)
            .ok_or_else(|| {
                EngineError::Setup(format!(
                    "chip count {n} is out of range: a side has 0 to {MAX_CHIPS} chips"
                ))
            })
    };
    match c {
        ChipsDef::Fixed(n) => fixed(i64::from(n)),
        ChipsDef::PerUnit(k) => Ok(Chips::PerUnit(k)),
        ChipsDef::Unknown(u) => match interp.constant(&Value::Unknown(u)).map_err(setup_err)? {
            Val::Sym(w) if &*w == "units" => Ok(Chips::PerUnit(None)),
            Val::Sym(w) => match program.kinds.iter().position(|k| *k.name == *w) {
                Some(k) => Ok(Chips::PerUnit(Some(k as u32))),
                None => Err(EngineError::Setup(format!(
                    "chips: `{w}` is neither a number, `units` (one chip per unit of the side on the board) nor a kind (one per unit of that kind)"
                ))),
            },
            v => fixed(int(&v)?),
        },
    }
}

fn read_activation(
    interp: &Interp,
    scheme: &SchemeDef,
    chips: &[(SideId, Chips)],
) -> Result<Activation, EngineError> {
    match scheme {
        SchemeDef::ChipCup => {
            // The compiler reports a scenario without `chips:` when its turn has a chip cup.
            if chips.is_empty() {
                return Err(EngineError::Setup(
                    "a chip cup needs the scenario's `chips:` counts".into(),
                ));
            }
            Ok(Activation::ChipCup(chips.to_vec()))
        }
        SchemeDef::EachPiece(order) => Ok(Activation::EachPiece(sides(interp, order)?)),
        SchemeDef::Alternating(order) => Ok(Activation::Alternating(sides(interp, order)?)),
        SchemeDef::Deck(deck) => Ok(Activation::Deck(read_deck(deck))),
    }
}

/// What one activation activates; the compiler checked the values.
fn read_unit(u: &UnitDef) -> UnitSpec {
    UnitSpec {
        kind: match u.kind {
            ir::UnitKind::Piece => UnitKind::Piece,
            ir::UnitKind::Place => UnitKind::Place,
            ir::UnitKind::Group => UnitKind::Group,
            ir::UnitKind::Side => UnitKind::Side,
        },
        actions_per_piece: u.actions_per_piece,
        all_act_when: u.all_act_when,
        commands: u.commands,
        together: u.together.clone(),
    }
}

/// A deck as the engine draws it; the compiler checked its size and counts.
fn read_deck(d: &DeckDef) -> DeckSpec {
    DeckSpec {
        cards: d
            .cards
            .iter()
            .map(|c| DeckCard {
                label: c.label.clone(),
                side: c.side,
                event: None,
            })
            .collect(),
        draws: d.draws,
        inserts: d
            .inserts
            .iter()
            .map(|i| DeckInsert {
                label: i.label.clone(),
                count: i.count,
                replaces: i.replaces,
                event: i.event.clone(),
                side: i.side,
            })
            .collect(),
        hooks: d.hooks.clone(),
        reshuffle_on_insert: d.reshuffle_on_insert,
    }
}

/// A hex board's grid and ground, or a table's features and areas. The compiler checked the
/// names, labels and values; what is left to refuse here are sizes the book leaves `?` (with
/// no stand-in board) and values an assumption gives.
fn read_board(program: &Program, interp: &Interp, b: &BoardDef) -> Result<BoardSpec, EngineError> {
    // The ground may also be a member of one of the rules' enums, kept by index.
    let mut members: Vec<sandtable_ir::Str> = Vec::new();
    let mut ground = |g: &ir::Ground| -> Result<Ground, EngineError> {
        let member = |members: &mut Vec<sandtable_ir::Str>, s: &str| {
            let i = match members.iter().position(|m| **m == *s) {
                Some(i) => i,
                None => {
                    members.push(s.into());
                    members.len() - 1
                }
            };
            Ground::Member(i as u32)
        };
        match g {
            ir::Ground::Entity(e) => Ok(Ground::Entity(*e)),
            ir::Ground::Member(s) => Ok(member(&mut members, s)),
            // `default: ?`: the assumption gives a terrain or a member.
            ir::Ground::Unknown(u) => {
                match interp.constant(&Value::Unknown(*u)).map_err(setup_err)? {
                    Val::Entity(e) => Ok(Ground::Entity(e)),
                    Val::Sym(s)
                        if program
                            .enums
                            .iter()
                            .any(|e| e.members.iter().any(|m| **m == *s)) =>
                    {
                        Ok(member(&mut members, &s))
                    }
                    other => Err(EngineError::Setup(format!(
                        "expected a terrain or a member of an enum, found {}",
                        other.show(program)
                    ))),
                }
            }
        }
    };
    let unsized_board = || {
        EngineError::Setup(format!(
            "board `{}` has no size the engine can play (the book gives none, and no board stands in for it)",
            b.name
        ))
    };
    match (&b.play, &b.shape) {
        (BoardPlay::Hex(hex), BoardShape::Hex { columns, rows }) => {
            let layout = match hex.orientation {
                HexOrientation::OddColumnsDown => HexLayout::OddColumnsDown,
                HexOrientation::EvenColumnsDown => HexLayout::EvenColumnsDown,
            };
            // The grid's own limit (`HexGrid::MAX_HEXES`) is the runtime's to enforce.
            let grid = HexGrid::new(*columns, *rows, layout).map_err(setup_err)?;
            let default = hex.default.as_ref().map(&mut ground).transpose()?;
            let mut terrain = vec![default; grid.hex_count() as usize];
            for t in &hex.terrain {
                let g = ground(&t.ground)?;
                let mut hexes = t
                    .hexes
                    .iter()
                    .map(|h| HexCoord::new(h.column, h.row).map_err(setup_err))
                    .collect::<Result<Vec<_>, _>>()?;
                // A `?` in the list: the assumption gives a label or a list of them.
                for u in &t.unknown {
                    let v = interp.constant(&Value::Unknown(*u)).map_err(setup_err)?;
                    let vs = match v {
                        Val::List(items) => items,
                        v => vec![v],
                    };
                    for v in vs {
                        hexes.push(match v {
                            Val::Hex(h) => h,
                            Val::Sym(s) | Val::Text(s) => HexCoord::parse(&s).map_err(setup_err)?,
                            other => {
                                return Err(EngineError::Setup(format!(
                                    "expected a hex label, found {}",
                                    other.show(program)
                                )));
                            }
                        });
                    }
                }
                for h in hexes {
                    // The compiler reports labels off the board played, and an assumption's
                    // label is checked here.
                    if !grid.contains(h) {
                        return Err(EngineError::Setup(format!("hex {h} is off the board")));
                    }
                    terrain[BoardSpec::hex_index(&grid, h)] = Some(g);
                }
            }
            Ok(BoardSpec::Hex {
                grid,
                terrain,
                members,
            })
        }
        (BoardPlay::Table(t), BoardShape::Table { width, depth }) => {
            let (width, depth) = (*width, *depth);
            let sectors = match &t.sectors {
                Some(s) => {
                    Some(SectorGrid::new(width, depth, s.sector, s.zones).map_err(setup_err)?)
                }
                None => None,
            };
            // The compiler checks the size; this guards the geometry.
            if width <= 0 || depth <= 0 || width > 1_000_000 || depth > 1_000_000 {
                return Err(EngineError::Setup(format!(
                    "table size {width} x {depth} (tenths of a millimetre) is out of range"
                )));
            }
            let mut moves = MoveOffers::default();
            for (key, given, slot, max) in [
                (
                    "move_directions",
                    t.move_directions,
                    &mut moves.directions,
                    MoveOffers::MAX_DIRECTIONS,
                ),
                (
                    "move_steps",
                    t.move_steps,
                    &mut moves.steps,
                    MoveOffers::MAX_STEPS,
                ),
            ] {
                match given {
                    None => {}
                    Some(n) if n <= max => *slot = n,
                    // The compiler checks the range; this guards the offers' bound.
                    Some(n) => {
                        return Err(EngineError::Setup(format!(
                            "`{key}` is a whole number from 0 to {max}, not {n}"
                        )));
                    }
                }
            }
            let outline = |o: &Outline| -> Result<Geometry, EngineError> {
                let pt = |x: i64, y: i64| Point::new(x, y).map_err(setup_err);
                match *o {
                    Outline::Rect { x0, y0, x1, y1 } => {
                        Ok(Geometry::rect(pt(x0, y0)?, pt(x1, y1)?))
                    }
                    Outline::Circle { x, y, radius } => {
                        Geometry::circle(pt(x, y)?, radius).map_err(setup_err)
                    }
                }
            };
            let mut shapes = Vec::new();
            let mut shape_terrain = Vec::new();
            for f in &t.features {
                let g = ground(&f.ground)?;
                let blocks_sight = match (&t.blocks_sight, g) {
                    // An enum member has no fields: it never blocks sight.
                    (_, Ground::Member(_)) | (None, _) => false,
                    (Some(field), Ground::Entity(e)) => {
                        // The compiler checked that every feature's terrain has the field.
                        let v = program.entities[e as usize].field(field).ok_or_else(|| {
                            EngineError::Setup(format!(
                                "terrain `{}` has no field `{field}`",
                                program.entities[e as usize].name
                            ))
                        })?;
                        interp.constant(v).map_err(setup_err)?.as_bool() == Some(true)
                    }
                };
                shapes.push(Shape {
                    geometry: outline(&f.outline)?,
                    blocks_sight,
                    terrain: shape_terrain.len() as u32,
                });
                shape_terrain.push(g);
            }
            let areas = b
                .areas
                .iter()
                .map(|a| Ok((a.name.clone(), outline(&a.outline)?)))
                .collect::<Result<_, EngineError>>()?;
            let default = t.default.as_ref().map(&mut ground).transpose()?;
            Ok(BoardSpec::Table {
                width,
                depth,
                shapes,
                shape_terrain,
                members,
                default,
                areas,
                base: t.base.unwrap_or(ir::scenario::DEFAULT_BASE),
                sectors,
                moves,
            })
        }
        // A size the book leaves `?`: genuinely unplayable, and not a mistake of the
        // encoding (the `?` is reported as a lint).
        (BoardPlay::Hex(_) | BoardPlay::Table(_), _) => Err(unsized_board()),
        // The compiler refuses a scenario played on a board of another scheme.
        (BoardPlay::None, _) => Err(EngineError::Setup(format!(
            "the engine plays hex, open and sectors boards, not `{}`",
            b.scheme.as_deref().unwrap_or("?")
        ))),
    }
}

/// Pieces listed by count, a `?` resolved through the assumptions (a piece or a list).
pub(super) fn expand(interp: &Interp, list: &[Pieces]) -> Result<Vec<Val>, EngineError> {
    let mut out = Vec::new();
    for p in list {
        match *p {
            Pieces::Of { entity, count } => {
                if i64::from(count) > MAX_COPIES {
                    return Err(EngineError::Setup(format!(
                        "{count} copies is out of range: 0 to {MAX_COPIES} copies of one piece"
                    )));
                }
                out.extend(std::iter::repeat_n(Val::Entity(entity), count as usize));
            }
            Pieces::Unknown(u) => match interp.constant(&Value::Unknown(u)).map_err(setup_err)? {
                Val::List(items) => out.extend(items),
                v => out.push(v),
            },
        }
    }
    Ok(out)
}

/// A count the book may leave `?`.
fn count_value(interp: &Interp, n: Count) -> Result<Val, EngineError> {
    match n {
        Count::Fixed(n) => Ok(Val::Int(i64::from(n))),
        Count::Unknown(u) => interp.constant(&Value::Unknown(u)).map_err(setup_err),
    }
}

/// The rows and columns an assumption gives a hex force's `deploy: ?`.
type Span2 = Option<(u32, u32)>;
fn assumed_hexes(force: &str, v: &Val) -> Result<(Span2, Span2), EngineError> {
    let items = match v {
        Val::List(items) => items.clone(),
        v => vec![v.clone()],
    };
    let (mut columns, mut rows) = (None, None);
    for v in &items {
        match v {
            Val::Range(lo, hi) => {
                let end = |n: Option<i64>, or: u32| n.map_or(Some(or), |n| u32::try_from(n).ok());
                rows = Some((
                    end(*lo, 1).ok_or_else(|| bad_deploy(force, v))?,
                    end(*hi, u32::MAX).ok_or_else(|| bad_deploy(force, v))?,
                ));
            }
            Val::LabelRange(r) => {
                let (lo, hi) = &**r;
                let col = |l: &Option<String>, or: u32| match l {
                    None => Ok(or),
                    Some(l) => HexCoord::parse(&format!("{l}1"))
                        .map(|h| h.column())
                        .map_err(|_| bad_deploy(force, v)),
                };
                columns = Some((col(lo, 1)?, col(hi, u32::MAX)?));
            }
            // The book's words for the area: nothing narrows the board.
            Val::Text(_) => {}
            other => return Err(bad_deploy(force, other)),
        }
    }
    Ok((columns, rows))
}

fn bad_deploy(force: &str, v: &Val) -> EngineError {
    EngineError::Setup(format!(
        "force {force}: the assumption for `deploy: ?` gives {v:?}; on a hex board it gives rows (`1..=2`), columns (`A..=D`) or both in a list"
    ))
}

fn read_force(
    program: &Program,
    interp: &Interp,
    f: &ForceDef,
    board: &BoardSpec,
) -> Result<ForceSpec, EngineError> {
    let name = program.sides[f.side as usize].name.clone();
    let side = f.side;
    // `units:` lists every piece the force sets up, whatever the rules call them.
    let mut units = Vec::new();
    for v in expand(interp, &f.units)? {
        match v {
            Val::Entity(e) if program.entities[e as usize].category != Category::Terrain => {
                units.push(e)
            }
            other => {
                return Err(EngineError::Setup(format!(
                    "force {name}: `units` holds {}, not a piece",
                    other.show(program)
                )));
            }
        }
    }
    if units.is_empty() {
        return Err(EngineError::Setup(format!("force {name} has no units")));
    }
    let mut markers = Vec::new();
    for v in expand(interp, &f.markers)? {
        match v {
            Val::Entity(e)
                if program.entities[e as usize].category != Category::Terrain
                    && program.entities[e as usize].side.is_none() =>
            {
                markers.push(e)
            }
            other => {
                return Err(EngineError::Setup(format!(
                    "force {name}: `markers` holds {}, not a piece of no side",
                    other.show(program)
                )));
            }
        }
    }
    let mut flags = Vec::new();
    for (k, v) in &f.flags {
        if let Ok(Val::Bool(b)) = interp.constant(v) {
            flags.push((k.clone(), b));
        }
    }
    let hidden = flags.iter().any(|(k, v)| k == "hidden" && *v);
    let max_per_hex = match f.max_per_hex {
        Some(n) => Some(int(&count_value(interp, n)?)? as u32),
        None => None,
    };
    let mut exits: Vec<HexCoord> = f
        .exits
        .iter()
        .map(|h| HexCoord::new(h.column, h.row).map_err(setup_err))
        .collect::<Result<_, _>>()?;
    // `exit: ?` reaches the IR as an unknown property of the force: the assumption gives a
    // hex label or a list of them.
    for (_, v) in f.flags.iter().filter(|(k, _)| k == "exit") {
        let Value::Unknown(u) = v else { continue };
        let v = interp.constant(&Value::Unknown(*u)).map_err(setup_err)?;
        let vs = match v {
            Val::List(items) => items,
            v => vec![v],
        };
        for v in vs {
            let h = match v {
                Val::Hex(h) => h,
                Val::Sym(s) | Val::Text(s) => HexCoord::parse(&s).map_err(setup_err)?,
                other => {
                    return Err(EngineError::Setup(format!(
                        "force {name}: `exit: ?` is a hex label or a list of them, not {}",
                        other.show(program)
                    )));
                }
            };
            if let BoardSpec::Hex { grid, .. } = board
                && !grid.contains(h)
            {
                return Err(EngineError::Setup(format!(
                    "force {name}: exit hex {h} is off the board"
                )));
            }
            exits.push(h);
        }
    }
    let deploy = f
        .deploy
        .as_ref()
        .ok_or_else(|| EngineError::Setup(format!("force {name} has no `deploy` area")))?;
    let (area, home) = match board {
        BoardSpec::Hex { grid, .. } => {
            let (cols, rows) = match deploy {
                Deploy::Hexes { columns, rows } => (*columns, *rows),
                // `?`: the assumption gives rows (`1..=2`), columns (`A..=D`) or both in a
                // list; with none, or in the book's words, nothing narrows the board.
                Deploy::Unknown(u) => match interp.constant(&Value::Unknown(*u)) {
                    Ok(v) => assumed_hexes(&name, &v)?,
                    Err(_) => (None, None),
                },
                Deploy::Described(_) => (None, None),
                Deploy::Area(a) => {
                    return Err(EngineError::Setup(format!(
                        "force {name}: on a hex board a force deploys by rows and columns, not in an area (`{a}`)"
                    )));
                }
            };
            let within =
                |v: u32, r: Option<(u32, u32)>| r.is_none_or(|(lo, hi)| (lo..=hi).contains(&v));
            let hexes: Vec<HexCoord> = grid
                .hexes()
                .filter(|h| within(h.row(), rows) && within(h.column(), cols))
                .collect();
            if hexes.is_empty() {
                return Err(EngineError::Setup(format!(
                    "force {name}: the deployment area holds no hex of the board"
                )));
            }
            let home = Pos::Hex(hexes[hexes.len() / 2]);
            (DeployArea::Hexes(hexes), home)
        }
        BoardSpec::Table { areas, .. } => {
            let an = match deploy {
                Deploy::Area(a) => a.clone(),
                Deploy::Unknown(u) => {
                    sym(&interp.constant(&Value::Unknown(*u)).map_err(setup_err)?)?
                }
                Deploy::Described(t) => t.clone(),
                Deploy::Hexes { .. } => {
                    return Err(EngineError::Setup(format!(
                        "force {name}: on a table a force deploys in a named `area`"
                    )));
                }
            };
            let g = areas
                .iter()
                .find(|(n, _)| *n == an)
                .map(|(_, g)| *g)
                .ok_or_else(|| {
                    EngineError::Setup(format!("force {name}: the board has no area `{an}`"))
                })?;
            let centre = match (g.as_rect(), g.as_circle()) {
                (Some((a, b)), _) => Point::new((a.x() + b.x()) / 2, (a.y() + b.y()) / 2),
                (_, Some((c, _))) => Ok(c),
                _ => Point::new(0, 0),
            }
            .map_err(setup_err)?;
            (DeployArea::Area(g), Pos::Point(centre))
        }
    };
    let marker_area = match (&f.markers_deploy, board) {
        (None, _) => None,
        (Some(Deploy::Area(a)), BoardSpec::Table { areas, .. }) => Some(DeployArea::Area(
            areas
                .iter()
                .find(|(n, _)| n == a)
                .map(|(_, g)| *g)
                .ok_or_else(|| {
                    EngineError::Setup(format!("force {name}: the board has no area `{a}`"))
                })?,
        )),
        (Some(_), _) => {
            return Err(EngineError::Setup(format!(
                "force {name}: `markers_deploy:` names an area of a table"
            )));
        }
    };
    Ok(ForceSpec {
        side,
        units,
        reserve: super::reserve::read(program, interp, f)?,
        markers,
        area,
        marker_area,
        deploy_check: f.deploy_check,
        max_per_hex,
        hidden,
        exits,
        flags,
        home,
    })
}
