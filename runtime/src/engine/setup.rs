//! A scenario made ready to play: the typed scenario of the IR (`ScenarioDef`: board played,
//! turns, forces, neutral pieces, hooks) with its `?` values resolved through the assumptions,
//! the board's grid or table built from its block, and the turn's phases with their
//! activation schemes (still read from config blocks). Everything the engine plays comes from
//! here; nothing is named in engine code.

use sandtable_ir::{
    BinOp, Category, ConfigBlock, Count, Deploy, EntityId, Expr, ForceDef, NeutralDef, Pieces,
    Place, ProcId, ProcKind, Program, Property, SideId, Type, UnOp, Value,
};

use super::{EngineError, options};
use crate::board::table::INCH;
use crate::board::{Geometry, HexCoord, HexGrid, HexLayout, Point, SectorGrid, Shape};
use crate::engine::state::Pos;
use crate::interp::{Assumptions, Interp};
use crate::value::Val;

/// Most turns a game may last when its scenario sets no limit.
pub const MAX_TURNS: u32 = 200;
/// Most chips one side puts in the cup per turn.
pub const MAX_CHIPS: u32 = 1_000;
/// Most copies of one piece a force lists (`20 * soldier`).
pub const MAX_COPIES: i64 = 1_000;

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
        members: Vec<String>,
    },
    Table {
        width: i64,
        depth: i64,
        shapes: Vec<Shape>,
        /// The ground of each shape (the shape's `terrain` field is its index here).
        shape_terrain: Vec<Ground>,
        /// The enum members used as ground, by [`Ground::Member`] index.
        members: Vec<String>,
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
    pub const MAX_DIRECTIONS: u32 = 360;
    pub const MAX_STEPS: u32 = 16;
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
        match (g, v) {
            (Ground::Entity(e), Val::Entity(x)) => e == *x,
            (Ground::Member(_), Val::Sym(_)) => self.ground_val(g) == *v,
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
    pub hooks: Vec<(String, ProcId)>,
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
    pub distance_counter: Option<String>,
    /// The turn block's `secret_counters:`: piece counters known to the piece's own side
    /// only (shown in its view, logged as `counted` events, shuffled in others' look-ahead).
    pub secret_counters: Vec<String>,
    /// The turn block's `on end` hooks: clean-up after the last phase of every turn.
    pub turn_end: Vec<ProcId>,
    /// Every entity's fields with the assumptions applied, by entity id; `None` for an
    /// unknown with no assumption (asking for it is an error with its name).
    pub entity_fields: Vec<Vec<(String, Option<Val>)>>,
    /// Per procedure: its leading `require`s and how many parameters each reads.
    pub guards: Vec<Vec<(&'p Expr, usize)>>,
    /// Per procedure and parameter: the guards that narrow the hexes it may take.
    pub(crate) narrowings: Vec<Vec<Vec<(usize, super::options::Narrow<'p>)>>>,
    /// The scenario's properties (first value, assumptions applied; `None` if unknown), for
    /// `scenario_value`.
    pub scenario_values: Vec<(String, Option<Val>)>,
}

fn prop<'a>(b: &'a ConfigBlock, key: &str) -> Option<&'a Property> {
    b.properties.iter().find(|p| p.key == key)
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
        let cv = |e: &Expr| const_value(&interp, e);
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
        };
        // Board: the scenario's, or a board that declares itself its stand-in.
        let Some(played) = typed.board_played else {
            return Err(EngineError::Setup(match prop(sc, "board") {
                Some(p) => format!("no board `{}`", sym(&cv(&p.values[0].1)?)?),
                None => "the scenario names no `board`".into(),
            }));
        };
        if typed.board != Some(played) {
            r.stand_in_for = typed.board.map(|b| program.boards[b as usize].name.clone());
        }
        let board_def = &program.boards[played as usize];
        let board_block = &program.configs[board_def.config as usize];
        r.board_name = board_def.name.clone();
        r.board = read_board(program, &interp, board_block)?;
        // `entry_cost: FIELD`: the terrain field that adds to the cost of entering a hex.
        let entry_cost = match prop(board_block, "entry_cost") {
            Some(p) => Some(sym(&cv(&p.values[0].1)?)?),
            None => None,
        };
        if let BoardSpec::Hex { grid, terrain, .. } = &r.board {
            for h in grid.hexes() {
                let t = match terrain[BoardSpec::hex_index(grid, h)] {
                    Some(Ground::Entity(t)) => Some(t),
                    _ => None,
                };
                let extra = match (t, &entry_cost) {
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
        if let Some(p) = prop(sc, "options") {
            for (_, e) in &p.values {
                match cv(e)? {
                    Val::List(items) => {
                        for i in items {
                            r.options.push(sym(&i)?);
                        }
                    }
                    v => r.options.push(sym(&v)?),
                }
            }
        }
        let chips: Vec<(SideId, Chips)> = match prop(sc, "chips") {
            Some(p) => p
                .values
                .iter()
                .map(|(name, e)| {
                    let side = side_named(program, name.as_deref().unwrap_or(""))?;
                    let chips = match cv(e)? {
                        Val::Sym(w) if w == "units" => Chips::PerUnit(None),
                        Val::Sym(w) => match program.kinds.iter().position(|k| k.name == w) {
                            Some(k) => Chips::PerUnit(Some(k as u32)),
                            None => {
                                return Err(EngineError::Setup(format!(
                                    "chips: `{w}` is neither a number, `units` (one chip per unit of the side on the board) nor a kind (one per unit of that kind)"
                                )));
                            }
                        },
                        v => {
                            let n = int(&v)?;
                            Chips::Fixed(
                                u32::try_from(n).ok().filter(|n| *n <= MAX_CHIPS).ok_or_else(
                                    || {
                                        EngineError::Setup(format!(
                                            "chip count {n} is out of range: a side has 0 to {MAX_CHIPS} chips"
                                        ))
                                    },
                                )?,
                            )
                        }
                    };
                    Ok((side, chips))
                })
                .collect::<Result<_, EngineError>>()?,
            None => Vec::new(),
        };

        // Turn: its phases in order, each with its activation scheme.
        let turn = program
            .configs
            .iter()
            .find(|c| c.keyword == "turn")
            .ok_or_else(|| EngineError::Setup("the ruleset has no `turn` block".into()))?;
        if let Some(p) = prop(turn, "distance_counter") {
            r.distance_counter = Some(sym(&cv(&p.values[0].1)?)?);
        }
        if let Some(p) = prop(turn, "secret_counters") {
            for v in flat(&interp, p)? {
                r.secret_counters.push(sym(&v)?);
            }
        }
        r.turn_end = turn
            .hooks
            .iter()
            .filter(|(n, _)| n == "end")
            .map(|(_, p)| *p)
            .collect();
        for ph in turn.blocks.iter().filter(|b| b.keyword == "phase") {
            let name = ph.name.clone().unwrap_or_default();
            let mut actions = Vec::new();
            if let Some(p) = prop(ph, "actions") {
                for (_, e) in &p.values {
                    let a = sym(&cv(e)?)?;
                    let (id, def) = program.proc_by_name(&a).ok_or_else(|| {
                        EngineError::Setup(format!("phase `{name}` lists unknown action `{a}`"))
                    })?;
                    if def.kind != ProcKind::Action {
                        return Err(EngineError::Setup(format!(
                            "phase `{name}` lists `{a}`, which is not an action"
                        )));
                    }
                    actions.push(id);
                }
            }
            let (activation, unit) = match prop(ph, "activation") {
                None => (Activation::None, UnitSpec::default()),
                Some(p) => {
                    let an = sym(&cv(&p.values[0].1)?)?;
                    let block = program
                        .configs
                        .iter()
                        .find(|c| c.keyword == "activation" && c.name.as_deref() == Some(&an))
                        .ok_or_else(|| EngineError::Setup(format!("no activation `{an}`")))?;
                    (
                        read_activation(program, &interp, block, &chips)?,
                        read_unit(program, &interp, block)?,
                    )
                }
            };
            if r.free_actions.is_empty() && activation != Activation::None {
                r.free_actions = actions.clone();
                r.free_unit = unit.clone();
            }
            r.phases.push(PhaseSpec {
                title: ph.title.clone().unwrap_or(name.clone()),
                name,
                activation,
                unit,
                actions,
                on_run: ph
                    .hooks
                    .iter()
                    .filter(|(n, _)| n == "run")
                    .map(|(_, p)| *p)
                    .collect(),
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
        Ok(r)
    }

    pub fn side_name(&self, s: SideId) -> &str {
        &self.program.sides[s as usize].name
    }

    pub fn scenario_hooks(&self, event: &str) -> impl Iterator<Item = ProcId> + '_ {
        let event = event.to_string();
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
                    at.label()
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
        Val::Sym(s) | Val::Text(s) => Ok(s.clone()),
        other => Err(EngineError::Setup(format!(
            "expected a name, found {other:?}"
        ))),
    }
}

fn side_named(program: &Program, name: &str) -> Result<SideId, EngineError> {
    program
        .sides
        .iter()
        .position(|s| s.name == name)
        .map(|i| i as SideId)
        .ok_or_else(|| EngineError::Setup(format!("no side `{name}`")))
}

/// Values of one property, lists flattened.
fn flat(interp: &Interp, p: &Property) -> Result<Vec<Val>, EngineError> {
    let mut out = Vec::new();
    for (_, e) in &p.values {
        match const_value(interp, e)? {
            Val::List(items) => out.extend(items),
            v => out.push(v),
        }
    }
    Ok(out)
}

fn read_activation(
    program: &Program,
    interp: &Interp,
    b: &ConfigBlock,
    chips: &[(SideId, Chips)],
) -> Result<Activation, EngineError> {
    let order = |key: &str| -> Result<Vec<SideId>, EngineError> {
        let Some(p) = prop(b, key) else {
            return Ok((0..program.sides.len() as SideId).collect());
        };
        flat(interp, p)?
            .iter()
            .map(|v| match v {
                Val::Side(s) => Ok(*s),
                other => side_named(program, &sym(other)?),
            })
            .collect()
    };
    match b.scheme.as_deref() {
        Some("chip_cup") => {
            if chips.is_empty() {
                return Err(EngineError::Setup(
                    "a chip cup needs the scenario's `chips:` counts".into(),
                ));
            }
            Ok(Activation::ChipCup(chips.to_vec()))
        }
        Some("all") | Some("fixed") | Some("sequence") => {
            Ok(Activation::EachPiece(if prop(b, "order").is_some() {
                order("order")?
            } else {
                order("sides")?
            }))
        }
        Some("alternating") => Ok(Activation::Alternating(if prop(b, "first").is_some() {
            order("first")?
        } else {
            order("sides")?
        })),
        Some("deck") => read_deck(program, interp, b).map(Activation::Deck),
        Some(other) => Err(EngineError::Setup(format!(
            "the engine does not play the `{other}` activation scheme yet; it plays chip_cup, deck, all, fixed, sequence and alternating"
        ))),
        None => Err(EngineError::Setup(
            "an activation block needs a scheme".into(),
        )),
    }
}

/// What one activation of block `b` activates; the compiler checked the values.
fn read_unit(program: &Program, interp: &Interp, b: &ConfigBlock) -> Result<UnitSpec, EngineError> {
    let mut u = UnitSpec::default();
    if let Some(p) = prop(b, "activates") {
        u.kind = match sym(&const_value(interp, &p.values[0].1)?)?.as_str() {
            "piece" => UnitKind::Piece,
            "place" => UnitKind::Place,
            "group" => UnitKind::Group,
            "side" => UnitKind::Side,
            other => {
                return Err(EngineError::Setup(format!(
                    "`activates: {other}` names no unit (piece, place, group, side)"
                )));
            }
        };
    }
    if let Some(p) = prop(b, "actions_per_piece") {
        let n = int(&const_value(interp, &p.values[0].1)?)?;
        u.actions_per_piece = u32::try_from(n)
            .ok()
            .filter(|n| (1..=20).contains(n))
            .ok_or_else(|| {
                EngineError::Setup(format!("`actions_per_piece: {n}` is out of range"))
            })?;
    }
    let hook = |key: &str| b.hooks.iter().find(|(k, _)| k == key).map(|(_, p)| *p);
    u.all_act_when = hook("all_act_when");
    u.commands = hook("commands");
    if u.kind == UnitKind::Group && u.commands.is_none() {
        return Err(EngineError::Setup(
            "a group activation needs `commands:`".into(),
        ));
    }
    if let Some(p) = prop(b, "together") {
        for v in flat(interp, p)? {
            let a = sym(&v)?;
            let (id, def) = program.proc_by_name(&a).ok_or_else(|| {
                EngineError::Setup(format!("`together:` names unknown action `{a}`"))
            })?;
            if def.kind != ProcKind::Action {
                return Err(EngineError::Setup(format!(
                    "`together:` names `{a}`, which is not an action"
                )));
            }
            u.together.push(id);
        }
    }
    Ok(u)
}

/// Most cards one deck may hold.
const MAX_CARDS: u32 = 10_000;

fn read_deck(program: &Program, interp: &Interp, b: &ConfigBlock) -> Result<DeckSpec, EngineError> {
    let named = |p: &Property, key: &str| -> Result<Option<Val>, EngineError> {
        p.values
            .iter()
            .find(|(k, _)| k.as_deref() == Some(key))
            .map(|(_, e)| const_value(interp, e))
            .transpose()
    };
    let count = |p: &Property, key: &str| -> Result<u32, EngineError> {
        match named(p, key)? {
            Some(v) => u32::try_from(int(&v)?)
                .ok()
                .filter(|n| *n <= MAX_CARDS)
                .ok_or_else(|| {
                    EngineError::Setup(format!("`{key}` is out of range: 0 to {MAX_CARDS}"))
                }),
            None => Ok(1),
        }
    };
    let label = |p: &Property| -> Result<String, EngineError> {
        match p.values.iter().find(|(k, _)| k.is_none()) {
            Some((_, e)) => sym(&const_value(interp, e)?),
            None => Err(EngineError::Setup("a card needs a name".into())),
        }
    };
    let mut spec = DeckSpec {
        cards: Vec::new(),
        draws: None,
        inserts: Vec::new(),
        hooks: b.hooks.clone(),
        reshuffle_on_insert: false,
    };
    for p in &b.properties {
        match p.key.as_str() {
            "card" => {
                let side = match named(p, "side")? {
                    Some(Val::Side(s)) => Some(s),
                    Some(other) => Some(side_named(program, &sym(&other)?)?),
                    None => None,
                };
                let n = count(p, "count")?;
                let l = label(p)?;
                for _ in 0..n {
                    spec.cards.push(DeckCard {
                        label: l.clone(),
                        side,
                        event: None,
                    });
                }
                if spec.cards.len() as u32 > MAX_CARDS {
                    return Err(EngineError::Setup(format!(
                        "a deck holds at most {MAX_CARDS} cards"
                    )));
                }
            }
            "insert" => spec.inserts.push(DeckInsert {
                side: match named(p, "side")? {
                    Some(Val::Side(s)) => Some(s),
                    Some(other) => Some(side_named(program, &sym(&other)?)?),
                    None => None,
                },
                label: label(p)?,
                count: count(p, "count")?,
                replaces: match named(p, "replaces")? {
                    Some(v) => u32::try_from(int(&v)?).unwrap_or(0),
                    None => 0,
                },
                event: match named(p, "event")? {
                    Some(v) => sym(&v)?,
                    None => label(p)?,
                },
            }),
            "reshuffle" => {
                spec.reshuffle_on_insert = match sym(&const_value(interp, &p.values[0].1)?)?
                    .as_str()
                {
                    "on_insert" => true,
                    "after_draws" => false,
                    other => {
                        return Err(EngineError::Setup(format!(
                            "a deck's `reshuffle:` is `on_insert` or `after_draws`, not `{other}`"
                        )));
                    }
                };
            }
            "draws_before_reshuffle" => {
                let n = int(&const_value(interp, &p.values[0].1)?)?;
                spec.draws = Some(u32::try_from(n).ok().filter(|n| *n >= 1).ok_or_else(|| {
                    EngineError::Setup(format!("draws_before_reshuffle must be 1 or more, not {n}"))
                })?);
            }
            _ => {}
        }
    }
    if spec.cards.is_empty() {
        return Err(EngineError::Setup("a deck needs `card:` lines".into()));
    }
    Ok(spec)
}

fn length(v: &Val) -> Result<i64, EngineError> {
    int(v)
}

fn read_board(
    program: &Program,
    interp: &Interp,
    b: &ConfigBlock,
) -> Result<BoardSpec, EngineError> {
    // On a hex board the ground may also be a member of one of the rules' enums.
    let mut members: Vec<String> = Vec::new();
    let mut ground = |v: &Val| -> Result<Ground, EngineError> {
        match v {
            Val::Entity(e) => Ok(Ground::Entity(*e)),
            Val::Sym(s) if program.enums.iter().any(|e| e.members.contains(s)) => {
                let i = match members.iter().position(|m| m == s) {
                    Some(i) => i,
                    None => {
                        members.push(s.clone());
                        members.len() - 1
                    }
                };
                Ok(Ground::Member(i as u32))
            }
            other => Err(EngineError::Setup(format!(
                "expected a terrain or a member of an enum, found {}",
                other.show(program)
            ))),
        }
    };
    match b.scheme.as_deref() {
        Some("hex") => {
            let cols = prop(b, "columns")
                .ok_or_else(|| EngineError::Setup("a hex board needs `columns`".into()))?;
            let rows = prop(b, "rows")
                .ok_or_else(|| EngineError::Setup("a hex board needs `rows`".into()))?;
            let ncols = match const_value(interp, &cols.values[0].1)? {
                Val::LabelRange(_, Some(hi)) => HexCoord::parse(&format!("{hi}1"))
                    .map_err(setup_err)?
                    .column(),
                v => int(&v)? as u32,
            };
            let nrows = match const_value(interp, &rows.values[0].1)? {
                Val::Range(_, Some(hi)) => hi as u32,
                v => int(&v)? as u32,
            };
            let layout = match prop(b, "orientation") {
                Some(p) if sym(&const_value(interp, &p.values[0].1)?)? == "odd_columns_down" => {
                    HexLayout::OddColumnsDown
                }
                _ => HexLayout::EvenColumnsDown,
            };
            let grid = HexGrid::new(ncols, nrows, layout).map_err(setup_err)?;
            let default = match prop(b, "default") {
                Some(p) => Some(ground(&const_value(interp, &p.values[0].1)?)?),
                None => None,
            };
            let mut terrain = vec![default; grid.hex_count() as usize];
            let mut paint = |t: Ground, hexes: Vec<Val>| -> Result<(), EngineError> {
                for v in hexes {
                    let h = HexCoord::parse(&sym(&v)?).map_err(setup_err)?;
                    if !grid.contains(h) {
                        return Err(EngineError::Setup(format!("hex {h} is off the board")));
                    }
                    terrain[BoardSpec::hex_index(&grid, h)] = Some(t);
                }
                Ok(())
            };
            // `terrain: jungle = [B2, B3], paddy = [E4]`: each named terrain on its hexes (an
            // unnamed value, such as the `?` of a board no one has drawn, lists none).
            if let Some(p) = prop(b, "terrain") {
                for (name, e) in &p.values {
                    let Some(name) = name else { continue };
                    let t = match program.entities.iter().position(|x| x.name == *name) {
                        Some(i) => ground(&Val::Entity(i as EntityId))?,
                        None => ground(&Val::Sym(name.clone()))?,
                    };
                    let hexes = match const_value(interp, e)? {
                        Val::List(items) => items,
                        v => vec![v],
                    };
                    paint(t, hexes)?;
                }
            }
            for region in b.blocks.iter().filter(|x| x.keyword == "region") {
                let t = prop(region, "terrain")
                    .ok_or_else(|| EngineError::Setup("a region needs `terrain`".into()))?;
                let t = ground(&const_value(interp, &t.values[0].1)?)?;
                let hexes = prop(region, "hexes")
                    .ok_or_else(|| EngineError::Setup("a region needs `hexes`".into()))?;
                paint(t, flat(interp, hexes)?)?;
            }
            Ok(BoardSpec::Hex {
                grid,
                terrain,
                members,
            })
        }
        // A sectors board is an open table with numbered square sectors and zones over it.
        Some(scheme @ ("open" | "sectors")) => {
            let get = |k: &str| -> Result<i64, EngineError> {
                let p = prop(b, k).ok_or_else(|| {
                    EngineError::Setup(format!(
                        "a{} {scheme} board needs `{k}`",
                        if scheme == "open" { "n" } else { "" }
                    ))
                })?;
                length(&const_value(interp, &p.values[0].1)?)
            };
            let (width, depth) = (get("width")?, get("depth")?);
            let sectors = if scheme == "sectors" {
                let zones = match prop(b, "zones") {
                    Some(p) => u32::try_from(int(&const_value(interp, &p.values[0].1)?)?)
                        .map_err(|_| EngineError::Setup("`zones` is out of range".into()))?,
                    None => 1,
                };
                Some(SectorGrid::new(width, depth, get("sector")?, zones).map_err(setup_err)?)
            } else {
                None
            };
            if width <= 0 || depth <= 0 || width > 1_000_000 || depth > 1_000_000 {
                return Err(EngineError::Setup(format!(
                    "table size {width} x {depth} (tenths of a millimetre) is out of range"
                )));
            }
            let base = match prop(b, "base") {
                Some(p) => length(&const_value(interp, &p.values[0].1)?)?,
                None => INCH,
            };
            let mut moves = MoveOffers::default();
            for (key, slot, max) in [
                (
                    "move_directions",
                    &mut moves.directions,
                    MoveOffers::MAX_DIRECTIONS,
                ),
                ("move_steps", &mut moves.steps, MoveOffers::MAX_STEPS),
            ] {
                if let Some(p) = prop(b, key) {
                    match const_value(interp, &p.values[0].1)? {
                        Val::Int(n) if (0..=i64::from(max)).contains(&n) => *slot = n as u32,
                        other => {
                            return Err(EngineError::Setup(format!(
                                "`{key}` is a whole number from 0 to {max}, not {}",
                                other.show(program)
                            )));
                        }
                    }
                }
            }
            let sight_field = match prop(b, "blocks_sight") {
                Some(p) => Some(sym(&const_value(interp, &p.values[0].1)?)?),
                None => None,
            };
            let outline = |blk: &ConfigBlock| -> Result<Geometry, EngineError> {
                let pt = |x: i64, y: i64| Point::new(x, y).map_err(setup_err);
                let lengths =
                    |p: &Property, n: usize, what: &str| -> Result<Vec<i64>, EngineError> {
                        let v: Vec<i64> = flat(interp, p)?
                            .iter()
                            .map(length)
                            .collect::<Result<_, _>>()?;
                        if v.len() != n {
                            return Err(EngineError::Setup(what.to_string()));
                        }
                        Ok(v)
                    };
                if let Some(p) = prop(blk, "rect") {
                    let v = lengths(p, 4, "`rect` takes x0, y0, x1, y1")?;
                    Ok(Geometry::rect(pt(v[0], v[1])?, pt(v[2], v[3])?))
                } else if let Some(p) = prop(blk, "circle") {
                    let v = lengths(p, 3, "`circle` takes x, y, radius")?;
                    Geometry::circle(pt(v[0], v[1])?, v[2]).map_err(setup_err)
                } else {
                    Err(EngineError::Setup(format!(
                        "`{}` needs a `rect` or a `circle`",
                        blk.name.clone().unwrap_or(blk.keyword.clone())
                    )))
                }
            };
            let mut shapes = Vec::new();
            let mut shape_terrain = Vec::new();
            for f in b.blocks.iter().filter(|x| x.keyword == "feature") {
                let t = prop(f, "terrain")
                    .ok_or_else(|| EngineError::Setup("a feature needs `terrain`".into()))?;
                let t = ground(&const_value(interp, &t.values[0].1)?)?;
                let blocks_sight = match (&sight_field, t) {
                    // An enum member has no fields: it never blocks sight.
                    (_, Ground::Member(_)) | (None, _) => false,
                    (Some(field), Ground::Entity(t)) => {
                        let v = program.entities[t as usize].field(field).ok_or_else(|| {
                            EngineError::Setup(format!(
                                "terrain `{}` has no field `{field}`",
                                program.entities[t as usize].name
                            ))
                        })?;
                        interp.constant(v).map_err(setup_err)?.as_bool() == Some(true)
                    }
                };
                shapes.push(Shape {
                    geometry: outline(f)?,
                    blocks_sight,
                    terrain: shape_terrain.len() as u32,
                });
                shape_terrain.push(t);
            }
            let mut areas = Vec::new();
            for a in b.blocks.iter().filter(|x| x.keyword == "area") {
                areas.push((a.name.clone().unwrap_or_default(), outline(a)?));
            }
            let default = match prop(b, "default") {
                Some(p) => Some(ground(&const_value(interp, &p.values[0].1)?)?),
                None => None,
            };
            Ok(BoardSpec::Table {
                width,
                depth,
                shapes,
                shape_terrain,
                members,
                default,
                areas,
                base,
                sectors,
                moves,
            })
        }
        other => Err(EngineError::Setup(format!(
            "the engine plays hex, open and sectors boards, not `{}`",
            other.unwrap_or("?")
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
    let exits = f
        .exits
        .iter()
        .map(|h| HexCoord::new(h.column, h.row).map_err(setup_err))
        .collect::<Result<_, _>>()?;
    let deploy = f
        .deploy
        .as_ref()
        .ok_or_else(|| EngineError::Setup(format!("force {name} has no `deploy` area")))?;
    let (area, home) = match board {
        BoardSpec::Hex { grid, .. } => {
            let (cols, rows) = match deploy {
                Deploy::Hexes { columns, rows } => (*columns, *rows),
                // `?` or the book's words: nothing to narrow the board by.
                Deploy::Unknown(_) | Deploy::Described(_) => (None, None),
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
        max_per_hex,
        hidden,
        exits,
        flags,
        home,
    })
}
