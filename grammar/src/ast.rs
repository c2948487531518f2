//! The owned syntax tree. Every node carries the byte span it came from so the compiler can
//! point diagnostics at it; no node carries meaning beyond what was written.

use serde::Serialize;

/// A half-open byte range into one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
    pub fn len(&self) -> usize {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
    pub fn join(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrLit {
    pub value: String,
    pub span: Span,
}

/// A reference to a rule as written: `6e`, `7.a.2` or `"Riverine Craft"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ref {
    pub text: String,
    pub quoted: bool,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct File {
    pub items: Vec<Item>,
    /// Names that items with syntax errors were defining (`action fire(` …): they exist in
    /// the author's mind, so uses of them are not reported as unknown as well.
    pub broken: Vec<Ident>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ItemKind {
    Section(Section),
    Import(Import),
    Side(Side),
    Enum(EnumDef),
    Kind(KindDef),
    Entity(Entity),
    Die(DieDef),
    Stack(Stack),
    Table(Table),
    Proc(Proc),
    Config(Config),
    Note(StrLit),
    See(Vec<Ref>),
    Assume(Assume),
    Policy(Policy),
}

/// `policy NAME for SIDE "title" { prefer … }`: a side's decisions as ordered rules.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Policy {
    pub name: Ident,
    pub side: Ident,
    pub title: Option<StrLit>,
    pub see: Vec<Ref>,
    pub rules: Vec<Prefer>,
}

/// One `prefer` line: what it prefers, when, and by which measure among several.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prefer {
    pub what: PreferWhat,
    pub when: Option<Expr>,
    pub by: Option<Expr>,
    pub see: Vec<Ref>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum PreferWhat {
    /// An action, its arguments bound to the names given (as many as it has parameters).
    Action { name: Ident, binders: Vec<Ident> },
    /// An option of a `choose` met inside the action named (whose arguments are bound):
    /// the option as the side is shown it (`1`, `spring`).
    Pick {
        option: Ident,
        action: Ident,
        binders: Vec<Ident>,
    },
    /// Letting the piece offered do nothing (bound to the name given, if any).
    Hold(Span, Option<Ident>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SectionKeyword {
    Section,
    Chapter,
    Rule,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub keyword: SectionKeyword,
    pub number: Option<Ident>,
    pub title: Option<StrLit>,
    pub see: Vec<Ref>,
    pub body: Option<Vec<Item>>,
    /// Span of `keyword number "title"`: where numbering diagnostics point.
    pub head: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Import {
    File(StrLit),
    Std(Ident),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub name: Ident,
    pub title: Option<StrLit>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnumDef {
    pub name: Ident,
    pub see: Vec<Ref>,
    pub members: Vec<Ident>,
}

/// A type as written: a name (`int`, an enum, a kind), a die (`d6`) or an int range.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum TypeExpr {
    Named(Ident),
    Die(Expr),
    Range(Expr),
}

impl TypeExpr {
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Named(i) => i.span,
            TypeExpr::Die(e) | TypeExpr::Range(e) => e.span,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldDecl {
    pub name: Ident,
    pub ty: TypeExpr,
    pub default: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindDef {
    pub name: Ident,
    pub title: Option<StrLit>,
    pub see: Vec<Ref>,
    pub fields: Vec<FieldDecl>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EntityCategory {
    Unit,
    Weapon,
    Terrain,
    Marker,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldInit {
    pub name: Ident,
    pub value: Expr,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entity {
    pub category: EntityCategory,
    pub name: Ident,
    pub kind: Option<Ident>,
    pub side: Option<Ident>,
    pub title: Option<StrLit>,
    pub see: Vec<Ref>,
    pub fields: Vec<FieldInit>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DieDef {
    pub name: Ident,
    pub faces: Expr,
    pub see: Vec<Ref>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
    pub default: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stack {
    pub name: Ident,
    pub params: Vec<Param>,
    pub clamp: Option<Expr>,
    pub see: Vec<Ref>,
    pub entries: Vec<StackEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StackEntry {
    /// The signed value: a `Unary(Neg, …)`, an int, an expression, or `?`.
    pub value: Expr,
    pub label: StrLit,
    pub per: Option<Expr>,
    pub when: Option<Expr>,
    pub see: Vec<Ref>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableKey {
    pub name: Ident,
    pub domain: Option<TypeExpr>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRow {
    pub keys: Vec<Pattern>,
    pub cells: Vec<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub name: Ident,
    pub keys: Vec<TableKey>,
    pub see: Vec<Ref>,
    pub columns: Option<(Vec<Expr>, Span)>,
    pub rows: Vec<TableRow>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ProcKind {
    Resolve,
    Action,
    Procedure,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proc {
    pub kind: ProcKind,
    pub name: Ident,
    pub params: Vec<Param>,
    pub see: Vec<Ref>,
    pub body: Block,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    /// `scenario`, `board`, … or, for a nested generic block, its leading word.
    pub keyword: Ident,
    pub name: Option<Ident>,
    pub scheme: Option<Ident>,
    pub title: Option<StrLit>,
    pub see: Vec<Ref>,
    pub entries: Vec<ConfigEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PropValue {
    pub name: Option<Ident>,
    pub value: Expr,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ConfigEntry {
    Property {
        key: Ident,
        values: Vec<PropValue>,
        see: Vec<Ref>,
        span: Span,
    },
    Block(Config, Span),
    Hook {
        event: Ident,
        see: Vec<Ref>,
        body: Block,
    },
    Victory {
        see: Vec<Ref>,
        body: Block,
        span: Span,
    },
    Item(Item),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assume {
    pub path: Ident,
    pub value: Expr,
    pub reason: Option<StrLit>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ScoreOp {
    Add,
    Sub,
    Set,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum StmtKind {
    Let {
        name: Ident,
        value: Expr,
    },
    If {
        cond: Expr,
        then: Block,
        otherwise: Option<Box<Else>>,
    },
    Bands {
        scrutinee: Expr,
        arms: Vec<Arm>,
    },
    Result(Expr),
    Outcome(Ident),
    Eliminate(Expr),
    Place {
        marker: Ident,
        target: Expr,
    },
    Remove {
        marker: Ident,
        target: Expr,
    },
    Move {
        what: Expr,
        to: Expr,
    },
    Score {
        side: Ident,
        op: ScoreOp,
        value: Expr,
    },
    /// `win SIDE`.
    Win(Ident),
    /// `win ? "note"`: the book does not say who wins here.
    WinUnknown(Option<String>),
    Choose {
        var: Ident,
        from: Expr,
        /// `by SIDE`: the side that decides, when not the acting one.
        by: Option<Box<Expr>>,
        body: Block,
    },
    For {
        var: Ident,
        iter: Expr,
        body: Block,
    },
    Repeat {
        count: Expr,
        body: Block,
    },
    Require(Expr),
    See(Vec<Ref>),
    Note(StrLit),
    Expr(Expr),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Else {
    If(Stmt),
    Block(Block),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arm {
    pub patterns: Vec<Pattern>,
    pub outcome: Option<Ident>,
    pub value: Option<Expr>,
    pub body: Option<Block>,
    pub see: Vec<Ref>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum PatternKind {
    Wildcard,
    /// `a..=b`, `a..`, `..=b`, or `n+` (as `n..`).
    Range(Expr),
    Value(Expr),
    Unknown(Option<String>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "or",
            BinOp::And => "and",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::In => "in",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ExprKind {
    Int(i64),
    /// A length in tenths of a millimetre.
    Length(i64),
    Bool(bool),
    Str(String),
    Unknown(Option<String>),
    Name(String),
    /// `NdX`; `count` is 1 for a lone `dX`.
    Dice {
        count: u32,
        sides: u32,
    },
    List(Vec<Expr>),
    Range {
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
        inclusive: bool,
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
    Call {
        callee: Ident,
        args: Vec<Arg>,
    },
    Field {
        base: Box<Expr>,
        field: Ident,
    },
    Index {
        base: Box<Expr>,
        args: Vec<Arg>,
    },
    If {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
}

/// Tenths of a millimetre per unit: exact integers for inches, centimetres and millimetres.
/// The name a `-` table cell (not applicable) is given.
pub const NOT_APPLICABLE: &str = "-";
pub const LENGTH_PER_INCH: i64 = 254;
pub const LENGTH_PER_CM: i64 = 100;
pub const LENGTH_PER_MM: i64 = 10;
