//! The checked IR: the one contract between the compiler and the runtime. Names are resolved
//! to indices, types are checked, every definition cites the rule it came from. The runtime
//! never sees the AST.

use serde::{Deserialize, Serialize};

pub mod functions;
pub mod read;
pub mod scenario;
pub mod turn;

pub use functions::EngineFn;
pub use scenario::{
    AreaDef, BoardDef, BoardPlay, BoardShape, ChipsDef, Count, Deploy, FeatureDef, ForceDef, Given,
    Ground, HexBoardDef, HexLabel, HexOrientation, HexTerrain, NeutralDef, Outline, Pieces, Place,
    ScenarioDef, SectorsDef, TableBoardDef,
};
pub use turn::{
    ActivationDef, CardDef, DeckDef, InsertDef, PhaseDef, SchemeDef, SideOrder, TurnDef, UnitDef,
    UnitKind,
};

/// Shared text: names the rules compare and copy at run time (symbols, outcomes), copied
/// by a count, not by allocating.
pub type Str = std::sync::Arc<str>;
pub type SideId = u32;
pub type EnumId = u32;
pub type KindId = u32;
pub type EntityId = u32;
pub type DieId = u32;
pub type StackId = u32;
pub type TableId = u32;
pub type ProcId = u32;
pub type UnknownId = u32;
pub type SectionId = u32;
pub type Slot = u32;
/// A counter a rule keeps on pieces or sides (`counter(p, "fired")`), by its index in
/// [`Program::counters`]: every counter is named in the rules, so names are resolved once.
pub type CounterId = u32;

/// Bumped whenever the IR changes shape, so stale JSON is refused rather than misread.
pub const IR_VERSION: u32 = 6;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Program {
    pub ir_version: u32,
    pub name: String,
    pub source: Option<String>,
    pub sections: Vec<SectionInfo>,
    pub sides: Vec<SideDef>,
    pub enums: Vec<EnumDef>,
    pub kinds: Vec<KindDef>,
    pub entities: Vec<EntityDef>,
    pub dice: Vec<DieDef>,
    pub stacks: Vec<StackDef>,
    pub tables: Vec<TableDef>,
    pub procs: Vec<ProcDef>,
    pub configs: Vec<ConfigBlock>,
    /// Boards and scenarios as typed data, lowered from their config blocks.
    #[serde(default)]
    pub boards: Vec<BoardDef>,
    #[serde(default)]
    pub scenarios: Vec<ScenarioDef>,
    /// The `turn` block as typed data, when the ruleset has one.
    #[serde(default)]
    pub turn: Option<TurnDef>,
    /// `activation` blocks as typed data, in declaration order.
    #[serde(default)]
    pub activations: Vec<ActivationDef>,
    pub unknowns: Vec<UnknownDef>,
    /// Policies written in the rules (`policy NAME for SIDE { prefer … }`).
    #[serde(default)]
    pub policies: Vec<PolicyDef>,
    /// The unit the ruleset writes its lengths in (`in` or `cm`), so lengths are shown to
    /// people as the book gives them rather than in the internal tenths of a millimetre.
    #[serde(default)]
    pub length_unit: Option<String>,
    /// The names of the counters the rules keep (`counter`, `add_counter`, `set_counter`, the
    /// turn's `distance_counter:` and `secret_counters:`), indexed by [`CounterId`].
    #[serde(default)]
    pub counters: Vec<Str>,
}

/// A table cell written `-`: the row and column do not apply (a weapon that cannot fire at
/// that range). It is the symbol `-`, which no name can spell; `applicable(t[…])` tests it.
pub const NOT_APPLICABLE: &str = "-";

/// Tenths of a millimetre per inch, centimetre and millimetre.
pub const LENGTH_UNITS: [(&str, i64); 3] = [("in", 254), ("cm", 100), ("mm", 10)];

/// A length (tenths of a millimetre) in `unit` when it is a whole number or a half of one
/// there (`6in`, `2.5cm`), else in millimetres, which every length of the language is exact in.
pub fn show_length(v: i64, unit: Option<&str>) -> String {
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    let unit = unit.or_else(|| {
        LENGTH_UNITS
            .iter()
            .find(|(_, per)| a.is_multiple_of(*per as u64))
            .map(|(u, _)| *u)
    });
    if let Some((u, per)) = LENGTH_UNITS.iter().find(|(u, _)| Some(*u) == unit) {
        let per = *per as u64;
        if a.is_multiple_of(per) {
            return format!("{sign}{}{u}", a / per);
        }
        if (2 * a).is_multiple_of(per) {
            return format!("{sign}{}.5{u}", a / per);
        }
    }
    if a.is_multiple_of(10) {
        format!("{sign}{}mm", a / 10)
    } else {
        format!("{sign}{}.{}mm", a / 10, a % 10)
    }
}

impl Program {
    /// A length as the ruleset writes them.
    pub fn show_length(&self, v: i64) -> String {
        show_length(v, self.length_unit.as_deref())
    }

    /// A counter's name as the rules write it (`?` for an id this program does not have).
    pub fn counter_name(&self, id: CounterId) -> &str {
        self.counters.get(id as usize).map_or("?", |n| n)
    }

    /// The id of the counter the rules name `name`, if they name it.
    pub fn counter_id(&self, name: &str) -> Option<CounterId> {
        self.counters
            .iter()
            .position(|c| **c == *name)
            .map(|i| i as CounterId)
    }
}

/// Where a definition comes from: the innermost enclosing section/rule and explicit `see`s.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Cite {
    pub section: Option<SectionId>,
    pub refs: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SectionInfo {
    /// Full number as a path, `["7", "a", "2"]`; empty for an unnumbered section.
    pub path: Vec<String>,
    pub title: Option<String>,
    pub parent: Option<SectionId>,
    pub file: String,
    pub line: u32,
}

impl SectionInfo {
    /// `7.a.2`, or the title for an unnumbered section.
    pub fn label(&self) -> String {
        if self.path.is_empty() {
            self.title.clone().unwrap_or_default()
        } else {
            self.path.join(".")
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SideDef {
    pub name: String,
    pub title: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EnumDef {
    pub name: String,
    pub members: Vec<String>,
    pub cite: Cite,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Type {
    Int,
    /// Tenths of a millimetre.
    Length,
    Bool,
    Text,
    Die,
    Side,
    Enum(EnumId),
    Entity(Option<KindId>),
    /// A bag of dice results.
    Pool,
    /// A symbol that names an outcome or a table's label.
    Symbol,
    List(Box<Type>),
    Range,
    /// Statically unknown: `?`, host results, free-form fields.
    Any,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FieldDef {
    pub name: String,
    pub ty: Type,
    pub default: Option<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KindDef {
    pub name: String,
    pub title: Option<String>,
    pub fields: Vec<FieldDef>,
    pub cite: Cite,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Category {
    Unit,
    Weapon,
    Terrain,
    Marker,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EntityDef {
    pub name: String,
    pub category: Category,
    pub kind: Option<KindId>,
    pub side: Option<SideId>,
    pub title: Option<String>,
    /// Every field of the kind (defaults filled in), then free-form fields.
    pub fields: Vec<(String, Value)>,
    pub cite: Cite,
}

impl EntityDef {
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DieDef {
    pub name: String,
    pub faces: Vec<i64>,
    pub cite: Cite,
}

/// A constant value.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Value {
    Int(i64),
    Length(i64),
    Bool(bool),
    Text(Str),
    /// An enum member, outcome name or table label.
    Symbol(Str),
    Side(SideId),
    Entity(EntityId),
    Die(DieId),
    Unknown(UnknownId),
    List(Vec<Value>),
    Range(Option<i64>, Option<i64>),
    /// A range of labels, such as hex columns `M..=U`.
    LabelRange(Option<String>, Option<String>),
    /// A counter's name as the rules write it, resolved to its index.
    Counter(CounterId),
    /// A kind a rule names as a value (`is(p, soldier)`, `count_units(h, soldier)`).
    Kind(KindId),
    /// A hex label a rule writes (`S11`) on a ruleset whose boards are grids, read once when
    /// compiled (and checked against the boards).
    Hex(HexLabel),
}

/// Values supplied for the book's unknowns (`--assume`, assumption files), each already
/// typed by the compiler against the unknown's declared type.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Supplied {
    pub values: std::collections::BTreeMap<UnknownId, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UnknownDef {
    /// A dotted name for `--assume NAME=VALUE`, e.g. `trench.target_modifier`.
    pub name: String,
    pub note: Option<String>,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub cite: Cite,
    /// What a value for it must be, when the place it stands in says (a field of an int
    /// column, a length stat), so `--assume` can refuse a value of another type.
    #[serde(default)]
    pub ty: Option<Type>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    /// Inclusive bounds for int parameters declared with a range.
    pub range: Option<(i64, i64)>,
    pub default: Option<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StackEntry {
    pub label: String,
    pub value: Expr,
    pub per: Option<Expr>,
    pub when: Option<Expr>,
    pub cite: Cite,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StackDef {
    pub name: String,
    pub params: Vec<Param>,
    pub clamp: (Option<i64>, Option<i64>),
    pub entries: Vec<StackEntry>,
    /// Slots used by parameters (a stack has no `let`).
    pub n_slots: u32,
    pub cite: Cite,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum KeyPattern {
    Any,
    Range(Option<i64>, Option<i64>),
    Symbol(String),
    Unknown,
}

impl KeyPattern {
    pub fn matches_int(&self, v: i64) -> bool {
        match self {
            KeyPattern::Any => true,
            KeyPattern::Range(lo, hi) => lo.is_none_or(|l| v >= l) && hi.is_none_or(|h| v <= h),
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableRow {
    pub keys: Vec<KeyPattern>,
    pub cells: Vec<Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableDef {
    pub name: String,
    pub key_names: Vec<String>,
    /// Column labels for a two-key table.
    pub columns: Vec<Value>,
    pub rows: Vec<TableRow>,
    pub cite: Cite,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum ProcKind {
    Resolve,
    Action,
    Procedure,
    /// A `victory` or `on EVENT` block of a config.
    Hook,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProcDef {
    pub name: String,
    pub kind: ProcKind,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub n_slots: u32,
    /// Names of slots, for `explain`.
    pub slot_names: Vec<String>,
    /// Types of slots, for `explain` to show lengths in the ruleset's unit.
    #[serde(default)]
    pub slot_types: Vec<Type>,
    /// The file and line the procedure is defined at, for run-time errors.
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub line: u32,
    /// The line of each statement of the body in the order of [`stmts_post_order`] (empty
    /// when unknown), so a run-time error names the statement it came from.
    #[serde(default)]
    pub lines: Vec<u32>,
    /// Every `result` of the body is a length, so its outcomes are shown as lengths.
    #[serde(default)]
    pub result_length: bool,
    pub cite: Cite,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Stmt {
    Let {
        slot: Slot,
        value: Expr,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    Bands {
        scrutinee: Expr,
        arms: Vec<Arm>,
        /// The scrutinee is a length: band bounds are lengths, for people to read.
        #[serde(default)]
        length: bool,
    },
    Result(Expr),
    Outcome(Str),
    Effect(Effect),
    Choose {
        slot: Slot,
        from: Expr,
        /// `by SIDE`: the side that decides; else the acting side.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<Expr>,
        body: Vec<Stmt>,
        /// The options are lengths: labels for people show them in the ruleset's unit.
        #[serde(default)]
        length: bool,
    },
    For {
        slot: Slot,
        iter: Expr,
        body: Vec<Stmt>,
    },
    Repeat {
        count: Expr,
        body: Vec<Stmt>,
    },
    Require(Expr),
    Expr(Expr),
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Effect {
    Eliminate(Expr),
    Place {
        marker: EntityId,
        target: Expr,
    },
    Remove {
        marker: EntityId,
        target: Expr,
    },
    Move {
        what: Expr,
        to: Expr,
    },
    Score {
        side: SideId,
        op: ScoreOp,
        value: Expr,
    },
    Win(SideId),
    /// `win ?`: the book does not say who wins here.
    Undecided(UnknownId),
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum ScoreOp {
    Add,
    Sub,
    Set,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Arm {
    /// The arm matches when any pattern does.
    pub patterns: Vec<KeyPattern>,
    pub outcome: Option<Str>,
    pub value: Option<Expr>,
    pub body: Vec<Stmt>,
    pub cite: Cite,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

/// Functions the language provides.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Builtin {
    Min,
    Max,
    Clamp,
    Abs,
    DivUp,
    /// `pool(n, die)`
    Pool,
    Sum,
    Highest,
    Lowest,
    /// `successes(pool, t)`: dice showing t or more.
    Successes,
    /// `count(pool, lo..=hi)`
    Count,
    /// `reroll(die, lo..=hi)`: roll again once when the first roll is in the range.
    Reroll,
    /// `lo..=hi` whose bounds are computed (`for i in 1..=shots`): the range from two ints.
    Range,
}

/// What a quantifier over a list computes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum Quant {
    /// How many items meet the condition.
    Count,
    /// Whether one does (stops at the first that does).
    Any,
    /// Whether every one does (stops at the first that does not).
    All,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Expr {
    Const(Value),
    Local(Slot),
    /// One roll of a die.
    Roll(DieId),
    /// `count` dice of one kind, as a pool.
    Dice {
        count: Box<Expr>,
        die: DieId,
    },
    Unary {
        op: UnOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    If {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    Builtin {
        func: Builtin,
        args: Vec<Expr>,
    },
    /// A function of the game engine (`eliminated`, `distance`, …): needs a game state.
    Host {
        func: EngineFn,
        args: Vec<Expr>,
    },
    Call {
        proc: ProcId,
        args: Vec<Expr>,
    },
    Stack {
        stack: StackId,
        args: Vec<Expr>,
    },
    Lookup {
        table: TableId,
        keys: Vec<Expr>,
    },
    Field {
        base: Box<Expr>,
        field: String,
    },
    List(Vec<Expr>),
    /// `count(x in list, cond)`, `any(…)`, `all(…)`: `cond` is evaluated with each item of
    /// `list` in `slot`, in order.
    Quant {
        quant: Quant,
        slot: Slot,
        list: Box<Expr>,
        cond: Box<Expr>,
    },
}

/// A board, scenario, turn, phase, activation or force block: a tree of checked properties.
/// A policy whose decisions are rules: the first rule that some legal choice meets decides,
/// among the choices it meets the highest `by` wins, and ties go to the policy's own dice.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PolicyDef {
    pub name: String,
    pub side: SideId,
    pub title: Option<String>,
    pub rules: Vec<PolicyRule>,
    pub cite: Cite,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PolicyRule {
    pub what: Preferred,
    /// A hook taking the action's arguments, whose result is true when the rule applies.
    pub when: Option<ProcId>,
    /// A hook taking the action's arguments, whose result (an int or a length) ranks the
    /// choices the rule applies to.
    pub by: Option<ProcId>,
    /// `file:line` of the rule, for the log of why a choice was made.
    pub at: String,
    pub cite: Cite,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Preferred {
    Action(ProcId),
    /// An option of a `choose` inside the action, as the side is shown it.
    Pick {
        option: String,
        action: ProcId,
    },
    Hold,
    /// Where a piece is set up (`prefer deploy(piece, at)`): the engine's set-up choices.
    Deploy,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConfigBlock {
    pub keyword: String,
    pub name: Option<String>,
    pub scheme: Option<String>,
    pub title: Option<String>,
    pub properties: Vec<Property>,
    pub blocks: Vec<ConfigBlock>,
    /// `on EVENT` hooks and `victory`, as procedures of kind `Hook`.
    pub hooks: Vec<(String, ProcId)>,
    pub cite: Cite,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Property {
    pub key: String,
    pub values: Vec<(Option<String>, Expr)>,
}

impl Program {
    pub fn proc_by_name(&self, name: &str) -> Option<(ProcId, &ProcDef)> {
        self.procs
            .iter()
            .enumerate()
            .find(|(_, p)| p.name == name && p.kind != ProcKind::Hook)
            .map(|(i, p)| (i as ProcId, p))
    }
}

impl Expr {
    /// The direct subexpressions, in evaluation order.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Const(_) | Expr::Local(_) | Expr::Roll(_) => Vec::new(),
            Expr::Dice { count, .. } => vec![count],
            Expr::Unary { operand, .. } => vec![operand],
            Expr::Binary { lhs, rhs, .. } => vec![lhs, rhs],
            Expr::If {
                cond,
                then,
                otherwise,
            } => vec![cond, then, otherwise],
            Expr::Builtin { args, .. }
            | Expr::Host { args, .. }
            | Expr::Call { args, .. }
            | Expr::Stack { args, .. }
            | Expr::List(args) => args.iter().collect(),
            Expr::Lookup { keys, .. } => keys.iter().collect(),
            Expr::Field { base, .. } => vec![base],
            Expr::Quant { list, cond, .. } => vec![list, cond],
        }
    }

    /// Visit this expression and every expression inside it, outermost first.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        for c in self.children() {
            c.walk(f);
        }
    }
}

/// Visit the expressions statements evaluate (not their subexpressions: use [`Expr::walk`]),
/// nested blocks included. `looped` tells whether an expression sits in a loop body, where it
/// may be evaluated many times.
pub fn visit_stmts<'a>(stmts: &'a [Stmt], looped: bool, f: &mut impl FnMut(&'a Expr, bool)) {
    for s in stmts {
        match s {
            Stmt::Let { value: e, .. } | Stmt::Result(e) | Stmt::Require(e) | Stmt::Expr(e) => {
                f(e, looped)
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                f(cond, looped);
                visit_stmts(then, looped, f);
                visit_stmts(otherwise, looped, f);
            }
            Stmt::Bands {
                scrutinee, arms, ..
            } => {
                f(scrutinee, looped);
                for a in arms {
                    visit_stmts(&a.body, looped, f);
                    if let Some(v) = &a.value {
                        f(v, looped);
                    }
                }
            }
            Stmt::Choose { from, by, body, .. } => {
                f(from, looped);
                if let Some(b) = by {
                    f(b, looped);
                }
                visit_stmts(body, true, f);
            }
            Stmt::For {
                iter: from, body, ..
            }
            | Stmt::Repeat { count: from, body } => {
                f(from, looped);
                visit_stmts(body, true, f);
            }
            Stmt::Effect(e) => match e {
                Effect::Eliminate(x)
                | Effect::Place { target: x, .. }
                | Effect::Remove { target: x, .. }
                | Effect::Score { value: x, .. } => f(x, looped),
                Effect::Move { what, to } => {
                    f(what, looped);
                    f(to, looped);
                }
                Effect::Win(_) | Effect::Undecided(_) => {}
            },
            Stmt::Outcome(_) => {}
        }
    }
}

/// Every statement of a body, nested ones before the statement that holds them, blocks in
/// source order: the order [`ProcDef::lines`] follows.
pub fn stmts_post_order(stmts: &[Stmt]) -> Vec<&Stmt> {
    fn go<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a Stmt>) {
        for s in stmts {
            match s {
                Stmt::If {
                    then, otherwise, ..
                } => {
                    go(then, out);
                    go(otherwise, out);
                }
                Stmt::Bands { arms, .. } => {
                    for a in arms {
                        go(&a.body, out);
                    }
                }
                Stmt::Choose { body, .. } | Stmt::For { body, .. } | Stmt::Repeat { body, .. } => {
                    go(body, out)
                }
                _ => {}
            }
            out.push(s);
        }
    }
    let mut out = Vec::new();
    go(stmts, &mut out);
    out
}

impl ProcDef {
    /// The source line of statement `s` of this procedure's body, else of the procedure.
    /// `stmt` is the statement's address (`std::ptr::from_ref(s).addr()`), 0 for none.
    pub fn line_of(&self, stmt: usize) -> u32 {
        if stmt == 0 {
            return self.line;
        }
        stmts_post_order(&self.body)
            .iter()
            .position(|x| std::ptr::from_ref(*x).addr() == stmt)
            .and_then(|i| self.lines.get(i).copied())
            .unwrap_or(self.line)
    }

    /// The procedures this one calls, in the order the calls appear (with repeats).
    pub fn callees(&self) -> Vec<ProcId> {
        let mut out = Vec::new();
        visit_stmts(&self.body, false, &mut |e, _| {
            e.walk(&mut |x| {
                if let Expr::Call { proc, .. } = x {
                    out.push(*proc);
                }
            })
        });
        out
    }
}
