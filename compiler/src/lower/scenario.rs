//! Scenario checks: what the engine reads out of boards, activations, turns, scenarios and
//! forces is checked here, against the board each scenario is played on, so a set-up mistake
//! is a `sand::scenario::*` diagnostic from `check`, with its span, rather than an error from
//! `run` with no position. The checks follow the engine's reading (`docs/language.md`, "How a
//! scenario is read").

use sandtable_grammar::ast::{self, ExprKind, Span};

use super::{Located, Lowerer, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::Category;
use crate::source::FileId;

/// Most turns a scenario may last (the engine's limit).
const MAX_TURNS: i64 = crate::ir::scenario::MAX_TURNS as i64;

/// Activation properties that only some schemes read: on any other scheme they would be
/// silently ignored. Properties not listed here are common to every scheme.
const SCHEME_PROPERTIES: &[(&str, &[&str])] = &[
    ("card", &["deck"]),
    ("insert", &["deck"]),
    ("draws_before_reshuffle", &["deck"]),
    ("reshuffle", &["deck"]),
    ("deck", &["deck"]),
    ("chips", &["chip_cup"]),
    // Units bigger than a piece are played where a draw gives a side an activation.
    ("activates", &["chip_cup", "deck"]),
    // Side after side, each piece may take several actions in a row.
    (
        "actions_per_piece",
        &["chip_cup", "deck", "all", "fixed", "sequence"],
    ),
    ("all_act_when", &["chip_cup", "deck"]),
    ("commands", &["chip_cup", "deck"]),
    ("together", &["chip_cup", "deck"]),
    ("draw", &["chip_cup"]),
    ("first", &["alternating"]),
    ("alternate", &["alternating"]),
    ("order", &["all", "fixed", "sequence", "alternating"]),
];

/// Board properties and blocks that belong to one family of boards.
const HEX_ONLY: &[&str] = &[
    "columns",
    "rows",
    "orientation",
    "region",
    "hexes",
    "exits",
    "entry_cost",
];
const TABLE_ONLY: &[&str] = &[
    "width",
    "depth",
    "base",
    "blocks_sight",
    "move_directions",
    "move_steps",
    "area",
    "feature",
    "features",
];
const SECTOR_ONLY: &[&str] = &["sector", "zones"];

/// The shape of a board as far as set-up needs it.
pub(super) enum Shape {
    Hex {
        columns: u32,
        rows: u32,
    },
    Table {
        width: i64,
        depth: i64,
    },
    /// Missing or unknown sizes (already reported, or a `?`): nothing to check against.
    Unknown,
}

pub(super) struct Board<'c> {
    pub file: FileId,
    pub config: &'c ast::Config,
    pub shape: Shape,
    /// Names of the table's `area` blocks.
    pub areas: Vec<String>,
}

pub(super) fn name_of(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(n) => Some(n),
        _ => None,
    }
}

/// The values of a property with lists flattened.
pub(super) fn flat(values: &[ast::PropValue]) -> Vec<&ast::Expr> {
    let mut out = Vec::new();
    for v in values {
        match &v.value.kind {
            ExprKind::List(xs) => out.extend(xs.iter()),
            _ => out.push(&v.value),
        }
    }
    out
}

pub(super) fn prop<'c>(
    c: &'c ast::Config,
    key: &str,
) -> Option<(&'c ast::Ident, &'c [ast::PropValue])> {
    c.entries.iter().find_map(|e| match e {
        ast::ConfigEntry::Property { key: k, values, .. } if k.name == key => {
            Some((k, values.as_slice()))
        }
        _ => None,
    })
}

pub(super) fn properties(
    c: &ast::Config,
) -> impl Iterator<Item = (&ast::Ident, &[ast::PropValue])> {
    c.entries.iter().filter_map(|e| match e {
        ast::ConfigEntry::Property { key, values, .. } => Some((key, values.as_slice())),
        _ => None,
    })
}

/// Nested blocks, written either as blocks or as items.
pub(super) fn children(c: &ast::Config) -> impl Iterator<Item = &ast::Config> {
    c.entries.iter().filter_map(|e| match e {
        ast::ConfigEntry::Block(b, _) => Some(b),
        ast::ConfigEntry::Item(item) => match &item.kind {
            ast::ItemKind::Config(b) => Some(b),
            _ => None,
        },
        _ => None,
    })
}

/// A hex label `B12` as (column, row), columns counted from A = 1.
pub(super) fn hex_label(s: &str) -> Option<(u32, u32)> {
    crate::ir::scenario::HexLabel::parse(s).map(|h| (h.column, h.row))
}

/// A column label `H` as its number.
fn column_label(s: &str) -> Option<u32> {
    hex_label(&format!("{s}1")).map(|(c, _)| c)
}

pub(super) fn int_of(e: &ast::Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(n) => Some(*n),
        _ => None,
    }
}

/// The upper end of `lo..=hi` (or `lo..hi`), or a bare count.
fn upper<T>(e: &ast::Expr, each: impl Fn(&ast::Expr) -> Option<T>) -> Option<T>
where
    T: std::ops::Sub<Output = T> + From<u8>,
{
    match &e.kind {
        ExprKind::Range {
            hi: Some(hi),
            inclusive,
            ..
        } => {
            let v = each(hi)?;
            Some(if *inclusive { v } else { v - T::from(1) })
        }
        _ => each(e),
    }
}

pub(super) fn length_of(e: &ast::Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Length(n) => Some(*n),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// Check every board, activation, turn and scenario the engine would read.
    pub(crate) fn check_scenarios(&mut self, items: &[Located]) {
        let mut boards = Vec::new();
        let mut activations = Vec::new();
        let mut turns = Vec::new();
        let mut scenarios = Vec::new();
        for loc in items {
            let ast::ItemKind::Config(c) = &loc.item.kind else {
                continue;
            };
            match c.keyword.name.as_str() {
                "board" => boards.push((loc.file, c)),
                "activation" => activations.push((loc.file, c)),
                "turn" => turns.push((loc.file, c)),
                "scenario" => scenarios.push((loc.file, c)),
                _ => {}
            }
        }
        for &(file, a) in &activations {
            self.check_activation(file, a);
        }
        let boards: Vec<Board> = boards
            .iter()
            .map(|&(file, c)| self.read_board(file, c))
            .collect();
        for b in &boards {
            self.check_board(b);
            self.check_board_size(b);
        }
        for &(file, t) in &turns {
            self.check_turn(file, t, &activations);
        }
        // A chip cup takes its chips from the scenario: every scenario needs them.
        let chip_cup = turns.iter().find_map(|&(_, t)| {
            children(t).find_map(|ph| {
                let (_, v) = prop(ph, "activation")?;
                let name = name_of(&v.first()?.value)?;
                activations.iter().find_map(|&(_, a)| {
                    (a.name.as_ref().is_some_and(|n| n.name == name)
                        && a.scheme.as_ref().is_some_and(|s| s.name == "chip_cup"))
                    .then_some(name.to_string())
                })
            })
        });
        for &(file, s) in &scenarios {
            self.check_scenario(file, s, &boards, chip_cup.as_deref());
        }
        self.check_playable(&boards, &activations, &turns, &scenarios);
        // `limit:` holds only for a scenario without `turns:`.
        if !scenarios.is_empty() && scenarios.iter().all(|(_, s)| prop(s, "turns").is_some()) {
            for &(file, t) in &turns {
                if let Some((key, _)) = prop(t, "limit") {
                    self.diags.push(
                        Diagnostic::new(
                            Code::LintIgnoredLimit,
                            file,
                            key.span,
                            "the turn block's `limit:` is never used: every scenario sets its own `turns:`",
                        )
                        .label("ignored")
                        .help("remove `limit:`, or remove `turns:` from the scenarios that should play this limit"),
                    );
                }
            }
        }
    }

    fn check_activation(&mut self, file: FileId, a: &ast::Config) {
        let Some(scheme) = &a.scheme else {
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioMissingProperty,
                    file,
                    a.keyword.span,
                    "this activation has no scheme",
                )
                .label("no `: SCHEME`")
                .help(
                    "name how it is played: `activation NAME: chip_cup` (or deck, alternating, all, fixed, sequence)",
                ),
            );
            return;
        };
        if !super::config::schema("activation")
            .is_some_and(|sch| sch.schemes.contains(&scheme.name.as_str()))
        {
            // An unknown scheme is reported with the config schema.
            return;
        }
        self.check_activation_unit(file, a);
        let wrong = |key: &str| {
            SCHEME_PROPERTIES
                .iter()
                .find(|(k, _)| *k == key)
                .filter(|(_, schemes)| !schemes.contains(&scheme.name.as_str()))
                .map(|(_, schemes)| *schemes)
        };
        let mut found = Vec::new();
        for (key, _) in properties(a) {
            if let Some(s) = wrong(&key.name) {
                found.push((key.name.clone(), key.span, s, "property"));
            }
        }
        for b in children(a) {
            if let Some(s) = wrong(&b.keyword.name) {
                found.push((b.keyword.name.clone(), b.keyword.span, s, "block"));
            }
        }
        for (key, span, schemes, what) in found {
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioWrongScheme,
                    file,
                    span,
                    format!(
                        "`{key}` does not belong to a `{}` activation",
                        scheme.name
                    ),
                )
                .label(format!("a {what} of {}", schemes.join(", ")))
                .help(format!(
                    "a `{}` activation would ignore it: remove it, or make this block `activation {}: {}`",
                    scheme.name,
                    a.name.as_ref().map_or("NAME", |n| n.name.as_str()),
                    schemes[0]
                )),
            );
        }
        if scheme.name == "deck" && prop(a, "card").is_none() {
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioMissingProperty,
                    file,
                    scheme.span,
                    "a deck has no `card:` lines",
                )
                .label("empty deck")
                .help("add the cards: `card: red, count = 10, side = SIDE`"),
            );
        }
    }

    fn read_board<'c>(&mut self, file: FileId, c: &'c ast::Config) -> Board<'c> {
        let scheme = c.scheme.as_ref().map(|s| s.name.as_str());
        let shape = match scheme {
            Some("hex") => {
                let columns =
                    prop(c, "columns")
                        .and_then(|(_, v)| v.first())
                        .and_then(|v| match &v.value.kind {
                            ExprKind::Int(n) => u32::try_from(*n).ok(),
                            _ => upper(&v.value, |e| name_of(e).and_then(column_label)),
                        });
                let rows = prop(c, "rows")
                    .and_then(|(_, v)| v.first())
                    .and_then(|v| upper(&v.value, int_of))
                    .and_then(|n| u32::try_from(n).ok());
                match (columns, rows) {
                    (Some(columns), Some(rows)) => Shape::Hex { columns, rows },
                    _ => Shape::Unknown,
                }
            }
            Some("open" | "sectors") => {
                let get = |k: &str| {
                    prop(c, k)
                        .and_then(|(_, v)| v.first())
                        .and_then(|v| length_of(&v.value))
                };
                match (get("width"), get("depth")) {
                    (Some(width), Some(depth)) => Shape::Table { width, depth },
                    _ => Shape::Unknown,
                }
            }
            _ => Shape::Unknown,
        };
        let areas = children(c)
            .filter(|b| b.keyword.name == "area")
            .filter_map(|b| b.name.as_ref().map(|n| n.name.clone()))
            .collect();
        Board {
            file,
            config: c,
            shape,
            areas,
        }
    }

    fn check_board(&mut self, b: &Board) {
        let (c, file) = (b.config, b.file);
        let Some(scheme) = &c.scheme else {
            return;
        };
        let in_family = |k: &str| match scheme.name.as_str() {
            "hex" => HEX_ONLY.contains(&k),
            "open" => TABLE_ONLY.contains(&k),
            _ => TABLE_ONLY.contains(&k) || SECTOR_ONLY.contains(&k),
        };
        if !matches!(scheme.name.as_str(), "hex" | "open" | "sectors") {
            return;
        }
        let mut foreign = Vec::new();
        for (key, _) in properties(c) {
            foreign.push((key.name.as_str(), key.span));
        }
        for blk in children(c) {
            foreign.push((blk.keyword.name.as_str(), blk.keyword.span));
        }
        for (key, span) in foreign {
            let owned = [HEX_ONLY, TABLE_ONLY, SECTOR_ONLY]
                .iter()
                .any(|f| f.contains(&key));
            if owned && !in_family(key) {
                let wants = if HEX_ONLY.contains(&key) {
                    "hex"
                } else if SECTOR_ONLY.contains(&key) {
                    "sectors"
                } else {
                    "open"
                };
                self.diags.push(
                    Diagnostic::new(
                        Code::ScenarioWrongScheme,
                        file,
                        span,
                        format!("`{key}` does not belong to a `{}` board", scheme.name),
                    )
                    .label(format!(
                        "read only on {} `{wants}` board",
                        if wants == "open" { "an" } else { "a" }
                    ))
                    .help(format!(
                        "the engine would ignore it here: remove it, or make the board `: {wants}`"
                    )),
                );
            }
        }
        match scheme.name.as_str() {
            "hex" => {
                for k in ["columns", "rows"] {
                    if prop(c, k).is_none() && prop(c, "stand_in").is_none() {
                        self.missing(file, c, k, "a hex board", "`columns: A..=H`, `rows: 1..=6`");
                    }
                }
                let mut terrain_names = Vec::new();
                if let Some((_, v)) = prop(c, "default") {
                    terrain_names.extend(v.iter().map(|v| &v.value));
                }
                if let Some((_, values)) = prop(c, "terrain") {
                    for v in values {
                        if let Some(n) = &v.name {
                            self.check_terrain_name(file, &n.name, n.span, true);
                        }
                        if v.name.is_some() {
                            for e in flat(std::slice::from_ref(v)) {
                                self.check_label(file, b, e);
                            }
                        }
                    }
                }
                for region in children(c).filter(|r| r.keyword.name == "region") {
                    match prop(region, "terrain") {
                        Some((_, v)) => terrain_names.extend(v.iter().map(|v| &v.value)),
                        None => {
                            self.missing(file, region, "terrain", "a region", "`terrain: woods`")
                        }
                    }
                    match prop(region, "hexes") {
                        Some((_, v)) => {
                            for e in flat(v) {
                                self.check_label(file, b, e);
                            }
                        }
                        None => self.missing(file, region, "hexes", "a region", "`hexes: B2, B3`"),
                    }
                }
                if let Some((_, v)) = prop(c, "exits") {
                    for e in flat(v) {
                        self.check_label(file, b, e);
                    }
                }
                for e in terrain_names {
                    if let Some(n) = name_of(e) {
                        self.check_terrain_name(file, n, e.span, true);
                    }
                }
            }
            "open" | "sectors" => {
                if let Some((_, v)) = prop(c, "default") {
                    for e in flat(v) {
                        if let Some(n) = name_of(e) {
                            self.check_terrain_name(file, n, e.span, true);
                        }
                    }
                }
                let mut keys = vec!["width", "depth"];
                if scheme.name == "sectors" {
                    keys.push("sector");
                }
                for k in keys {
                    match prop(c, k) {
                        None if prop(c, "stand_in").is_none() => {
                            self.missing(file, c, k, "a table", "`width: 48in`, `depth: 36in`")
                        }
                        Some((_, v)) => {
                            if let Some(v) = v.first()
                                && let ExprKind::Int(_) = v.value.kind
                            {
                                self.diags.push(
                                    Diagnostic::new(
                                        Code::ScenarioBadValue,
                                        file,
                                        v.value.span,
                                        format!("`{k}:` is a length"),
                                    )
                                    .label("a bare number")
                                    .help("give its unit: `48in` or `120cm`"),
                                );
                            }
                        }
                        None => {}
                    }
                }
                for blk in
                    children(c).filter(|x| matches!(x.keyword.name.as_str(), "area" | "feature"))
                {
                    if prop(blk, "rect").is_none() && prop(blk, "circle").is_none() {
                        self.missing(
                            file,
                            blk,
                            "rect",
                            &format!("`{}`", blk.keyword.name),
                            "`rect: x0, y0, x1, y1` or `circle: x, y, radius`",
                        );
                    }
                    if blk.keyword.name == "feature" {
                        match prop(blk, "terrain") {
                            Some((_, v)) => {
                                for e in flat(v) {
                                    if let Some(n) = name_of(e) {
                                        self.check_terrain_name(file, n, e.span, true);
                                    }
                                }
                            }
                            None => {
                                self.missing(file, blk, "terrain", "a feature", "`terrain: woods`")
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn missing(&mut self, file: FileId, c: &ast::Config, key: &str, what: &str, example: &str) {
        let span = c.name.as_ref().map_or(c.keyword.span, |n| n.span);
        self.diags.push(
            Diagnostic::new(
                Code::ScenarioMissingProperty,
                file,
                span,
                format!("{what} needs `{key}:`"),
            )
            .label(format!("no `{key}:`"))
            .help(format!("add it, e.g. {example}")),
        );
    }

    /// A board's ground is a `terrain` entity or (with `members`) a member of one of the enums.
    fn check_terrain_name(&mut self, file: FileId, name: &str, span: Span, members: bool) {
        let entity = matches!(self.globals.get(name).map(|d| d.sym), Some(Sym::Entity(e))
            if self.program.entities[e as usize].category == Category::Terrain);
        let member = members && self.members.contains_key(name);
        if entity || member || self.broken.contains(name) {
            return;
        }
        let terrains: Vec<&str> = self
            .program
            .entities
            .iter()
            .filter(|e| e.category == Category::Terrain)
            .map(|e| e.name.as_str())
            .collect();
        self.diags.push(
            Diagnostic::new(
                Code::ScenarioUnknownTerrain,
                file,
                span,
                format!("`{name}` is not a terrain"),
            )
            .label("not a terrain")
            .help(if terrains.is_empty() {
                if members {
                    "declare it: `terrain NAME { … }`, or as a member of an enum (`enum ground { paddy, dyke }`)".to_string()
                } else {
                    "declare it: `terrain NAME { … }` (a table's features take terrain entities)".to_string()
                }
            } else {
                format!("terrains: {}", terrains.join(", "))
            }),
        );
    }

    /// A hex label must lie on the board.
    pub(super) fn check_label(&mut self, file: FileId, b: &Board, e: &ast::Expr) {
        let Shape::Hex { columns, rows } = b.shape else {
            return;
        };
        let Some(n) = name_of(e) else { return };
        if self.globals.contains_key(n) {
            return;
        }
        let Some((c, r)) = hex_label(n) else {
            return;
        };
        if c > columns || r > rows {
            self.off_board(file, b, e.span, format!("hex {n} is off the board"));
        }
    }

    /// A hex label a rule reads that lies on none of the ruleset's boards could never match
    /// a piece's place: the rule would be dead, or a place argument fail mid-game. Boards
    /// whose size the book leaves `?` could hold anything, so they check nothing.
    pub(super) fn check_rule_labels(&mut self) {
        let mut sizes = Vec::new();
        for b in &self.program.boards {
            match b.shape {
                crate::ir::BoardShape::Hex { columns, rows } => {
                    sizes.push((b.name.clone(), columns, rows))
                }
                crate::ir::BoardShape::Unknown => return,
                crate::ir::BoardShape::Table { .. } => {}
            }
        }
        if sizes.is_empty() {
            return;
        }
        for (hex, file, span) in std::mem::take(&mut self.rule_labels) {
            if sizes
                .iter()
                .any(|(_, c, r)| hex.column <= *c && hex.row <= *r)
            {
                continue;
            }
            let boards: Vec<String> = sizes
                .iter()
                .map(|(n, c, r)| {
                    format!(
                        "`{n}` has columns A to {} and rows 1 to {r}",
                        column_name(*c)
                    )
                })
                .collect();
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioOffBoard,
                    file,
                    span,
                    format!("hex {hex} is on no board of the ruleset"),
                )
                .label("outside every board")
                .help(format!("{}; check the label", boards.join(", "))),
            );
        }
    }

    pub(super) fn off_board(&mut self, file: FileId, b: &Board, span: Span, message: String) {
        let size = match b.shape {
            Shape::Hex { columns, rows } => format!(
                "{} columns (A to {}) and {rows} rows",
                columns,
                column_name(columns)
            ),
            Shape::Table { width, depth } => format!(
                "{} by {}",
                crate::ir::show_length(width, self.program.length_unit.as_deref()),
                crate::ir::show_length(depth, self.program.length_unit.as_deref())
            ),
            Shape::Unknown => "an unknown size".into(),
        };
        let board = b
            .config
            .name
            .as_ref()
            .map_or("the board", |n| n.name.as_str());
        self.diags.push(
            Diagnostic::new(Code::ScenarioOffBoard, file, span, message)
                .label("outside the board")
                .help(format!("`{board}` has {size}")),
        );
    }

    fn check_turn(
        &mut self,
        file: FileId,
        t: &ast::Config,
        activations: &[(FileId, &ast::Config)],
    ) {
        for ph in children(t).filter(|p| p.keyword.name == "phase") {
            let Some((_, v)) = prop(ph, "activation") else {
                continue;
            };
            let Some(e) = v.first().map(|v| &v.value) else {
                continue;
            };
            let Some(name) = name_of(e) else { continue };
            if activations
                .iter()
                .any(|(_, a)| a.name.as_ref().is_some_and(|n| n.name == name))
                || self.broken.contains(name)
            {
                continue;
            }
            let names: Vec<&str> = activations
                .iter()
                .filter_map(|(_, a)| a.name.as_ref().map(|n| n.name.as_str()))
                .collect();
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioUnknownActivation,
                    file,
                    e.span,
                    format!("no activation block `{name}`"),
                )
                .label("not an activation")
                .help(if names.is_empty() {
                    format!("declare it: `activation {name}: alternating {{ sides: … }}`")
                } else {
                    format!("activations: {}", names.join(", "))
                }),
            );
        }
    }

    fn check_scenario(
        &mut self,
        file: FileId,
        s: &ast::Config,
        boards: &[Board],
        chip_cup: Option<&str>,
    ) {
        let head = s.name.as_ref().map_or(s.keyword.span, |n| n.span);
        // The board played: the named one, or the board that stands in for it.
        // A scenario with no forces is one the book names without printing it: `run` says so,
        // and there is nothing to check.
        if children(s).all(|f| f.keyword.name != "force") {
            return;
        }
        let board = match prop(s, "board").and_then(|(_, v)| v.first()) {
            None => {
                self.missing(file, s, "board", "a scenario", "`board: map`");
                None
            }
            Some(_) => self.board_of(s, boards),
        };
        if let Some((_, v)) = prop(s, "turns")
            && let Some(e) = v.first()
            && let Some(n) = int_of(&e.value)
            && !(1..=MAX_TURNS).contains(&n)
        {
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioBadValue,
                    file,
                    e.value.span,
                    format!("a game lasts 1 to {MAX_TURNS} turns, not {n}"),
                )
                .label("out of range")
                .help(format!("give a number of turns from 1 to {MAX_TURNS}")),
            );
        }
        if let Some(cup) = chip_cup
            && prop(s, "chips").is_none()
        {
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioMissingProperty,
                    file,
                    head,
                    "this scenario gives no `chips:` for the chip cup".to_string(),
                )
                .label("no `chips:`")
                .help(format!(
                    "the chip cup `{cup}` draws the scenario's chips: add `chips: SIDE = n, …` (or `SIDE = units`)"
                )),
            );
        }
        if let Some((_, values)) = prop(s, "chips") {
            for v in values {
                if let Some(n) = &v.name {
                    self.check_side(file, &n.name, n.span, "chips");
                }
                if let Some(w) = name_of(&v.value)
                    && w != "units"
                    && !matches!(self.globals.get(w).map(|d| d.sym), Some(Sym::Kind(_)))
                    && !self.broken.contains(w)
                {
                    self.diags.push(
                        Diagnostic::new(
                            Code::ScenarioBadValue,
                            file,
                            v.value.span,
                            format!("`{w}` is neither a number, `units` nor a kind"),
                        )
                        .label("not a chip count")
                        .help("give a number, `units` (one chip per unit of the side on the board) or a kind (one per unit of that kind)"),
                    );
                }
            }
        }
        let forces: Vec<&ast::Config> = children(s).filter(|f| f.keyword.name == "force").collect();
        let mut seen: Vec<&str> = Vec::new();
        let mut hex_areas = Vec::new();
        for f in forces {
            let Some(side) = &f.name else {
                self.diags.push(
                    Diagnostic::new(
                        Code::ScenarioUnknownSide,
                        file,
                        f.keyword.span,
                        "a force names no side",
                    )
                    .label("no side")
                    .help("name the side it belongs to: `force SIDE { … }`"),
                );
                continue;
            };
            if self.check_side(file, &side.name, side.span, "force") {
                if seen.contains(&side.name.as_str()) {
                    self.diags.push(
                        Diagnostic::new(
                            Code::ScenarioUnknownSide,
                            file,
                            side.span,
                            format!("side `{}` has two forces in this scenario", side.name),
                        )
                        .label("second force")
                        .help("give each side one `force` block and list all its pieces there"),
                    );
                }
                seen.push(&side.name);
            }
            hex_areas.extend(self.check_force(file, f, board));
        }
        self.check_hex_room(file, &hex_areas);
        if let Some(b) = board {
            self.check_table_room(file, s, b);
        }
        for n in children(s).filter(|n| n.keyword.name == "neutral") {
            let pieces = prop(n, "pieces").map_or(Some(0), |(_, v)| self.count_pieces(v));
            if let Some((_, values)) = prop(n, "pieces") {
                for e in flat(values) {
                    let name = match &e.kind {
                        ExprKind::Binary {
                            op: ast::BinOp::Mul,
                            rhs,
                            ..
                        } => rhs,
                        _ => e,
                    };
                    let Some(Sym::Entity(id)) = name_of(name)
                        .and_then(|n| self.globals.get(n))
                        .map(|d| d.sym)
                    else {
                        continue;
                    };
                    let ent = &self.program.entities[id as usize];
                    let why = match (ent.category, ent.side) {
                        (Category::Terrain, _) => "is a terrain, not a piece".to_string(),
                        (_, Some(side)) => {
                            format!("belongs to side {}", self.program.sides[side as usize].name)
                        }
                        _ => continue,
                    };
                    self.diags.push(
                        Diagnostic::new(
                            Code::ScenarioBadValue,
                            file,
                            name.span,
                            format!("`{}` {why}: a neutral piece is one of no side", ent.name),
                        )
                        .label("not a neutral piece")
                        .help("declare it as a `marker`, or as a unit without `of SIDE`"),
                    );
                }
            }
            let at: Vec<&ast::Expr> =
                prop(n, "at").map_or(Vec::new(), |(_, v)| v.iter().map(|v| &v.value).collect());
            if let Some(b) = board {
                for e in &at {
                    self.check_label(file, b, e);
                    self.check_neutral_place(file, b, e);
                }
            }
            if let Some(pieces) = pieces
                && pieces != at.len() as i64
            {
                let span = prop(n, "at").map_or(n.keyword.span, |(k, _)| k.span);
                self.diags.push(
                    Diagnostic::new(
                        Code::ScenarioBadValue,
                        file,
                        span,
                        format!("`neutral` lists {pieces} pieces and {} places", at.len()),
                    )
                    .label("one place per piece")
                    .help("give one place in `at:` for each piece in `pieces:`"),
                );
            }
        }
    }

    /// Whether `name` is a side; reports it when not.
    pub(super) fn check_side(&mut self, file: FileId, name: &str, span: Span, what: &str) -> bool {
        if self.program.sides.iter().any(|s| s.name == name) {
            return true;
        }
        if self.broken.contains(name) {
            return false;
        }
        let sides: Vec<&str> = self.program.sides.iter().map(|s| s.name.as_str()).collect();
        self.diags.push(
            Diagnostic::new(
                Code::ScenarioUnknownSide,
                file,
                span,
                format!("`{what}` names `{name}`, which is not a side"),
            )
            .label("not a side")
            .help(if sides.is_empty() {
                format!("declare it: `side {name} \"…\"`")
            } else {
                format!("sides: {}", sides.join(", "))
            }),
        );
        false
    }

    /// How many pieces `2 * rifle_team, mg_team` lists, when every count is written out.
    fn count_pieces(&self, values: &[ast::PropValue]) -> Option<i64> {
        let mut n = 0i64;
        for e in flat(values) {
            n = n.checked_add(match &e.kind {
                ExprKind::Name(_) => 1,
                ExprKind::Binary {
                    op: ast::BinOp::Mul,
                    lhs,
                    ..
                } => int_of(lhs)?,
                _ => return None,
            })?;
        }
        Some(n)
    }

    /// Checks a force; on a hex board, returns its deployment hexes for the room check.
    fn check_force(
        &mut self,
        file: FileId,
        f: &ast::Config,
        board: Option<&Board>,
    ) -> Option<super::deploy::HexDeploy> {
        let head = f.name.as_ref().map_or(f.keyword.span, |n| n.span);
        let side = f.name.as_ref().map_or("", |n| n.name.as_str()).to_string();
        let units = prop(f, "units").map_or(Some(0), |(_, v)| self.count_pieces(v));
        if prop(f, "units").is_none() {
            self.missing(file, f, "units", "a force", "`units: 2 * rifle_team`");
        }
        if let (Some((key, _)), Some(0)) = (prop(f, "units"), units) {
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioBadValue,
                    file,
                    key.span,
                    format!("force `{side}` sets up no units"),
                )
                .label("no units")
                .help("list at least one piece: `units: 2 * rifle_team`"),
            );
        }
        for (key, values) in properties(f) {
            if key.name != "units" && key.name != "reserve" {
                continue;
            }
            for e in flat(values) {
                if let ExprKind::Int(n) = e.kind {
                    self.diags.push(
                        Diagnostic::new(
                            Code::ScenarioBadValue,
                            file,
                            e.span,
                            format!("a bare count ({n}) names no piece to set up"),
                        )
                        .label("not a piece")
                        .help(format!("say which piece: `{n} * PIECE`")),
                    );
                    continue;
                }
                let name = match &e.kind {
                    ExprKind::Binary {
                        op: ast::BinOp::Mul,
                        rhs,
                        ..
                    } => rhs,
                    _ => e,
                };
                if let Some(n) = name_of(name)
                    && let Some(Sym::Entity(id)) = self.globals.get(n).map(|d| d.sym)
                    && self.program.entities[id as usize].category == Category::Terrain
                {
                    self.diags.push(
                        Diagnostic::new(
                            Code::ScenarioBadValue,
                            file,
                            name.span,
                            format!("`{n}` is a terrain, not a piece"),
                        )
                        .label("not a piece")
                        .help(format!("`{}:` lists units or markers", key.name)),
                    );
                }
            }
        }
        // `markers: bunker = 3` counts a piece by name: the name must be one.
        if let Some((_, values)) = prop(f, "markers") {
            for v in values {
                let Some(n) = &v.name else { continue };
                if matches!(
                    self.globals.get(&n.name).map(|d| d.sym),
                    Some(Sym::Entity(_))
                ) || self.broken.contains(&n.name)
                {
                    continue;
                }
                let help = self.suggest(&n.name, &[]).map_or(
                    "name a marker or another piece of no side".to_string(),
                    |s| format!("did you mean `{s}`?"),
                );
                self.diags.push(
                    Diagnostic::new(
                        Code::ScenarioBadValue,
                        file,
                        n.span,
                        format!("`markers:` counts `{}`, which is not a piece", n.name),
                    )
                    .label("not a piece")
                    .help(help),
                );
            }
        }
        self.check_force_hex_values(file, f, board);
        let max_per_hex = prop(f, "max_per_hex")
            .and_then(|(_, v)| v.first())
            .and_then(|v| int_of(&v.value))
            .filter(|n| *n >= 1);
        let Some((deploy_key, deploy)) = prop(f, "deploy") else {
            self.diags.push(
                Diagnostic::new(
                    Code::ScenarioMissingProperty,
                    file,
                    head,
                    format!("force `{side}` has no `deploy:` area"),
                )
                .label("no `deploy:`")
                .help("say where it sets up: `deploy: rows = 1..=2` on a hex board, `deploy: AREA` on a table"),
            );
            return None;
        };
        let b = board?;
        match b.shape {
            Shape::Hex { columns, rows } => {
                let mut area_cols = (1, columns);
                let mut area_rows = (1, rows);
                for v in deploy {
                    let Some(key) = &v.name else {
                        if matches!(v.value.kind, ExprKind::Unknown(_) | ExprKind::Str(_)) {
                            continue;
                        }
                        self.diags.push(
                            Diagnostic::new(
                                Code::ScenarioUnknownArea,
                                file,
                                v.value.span,
                                "on a hex board a force deploys by rows and columns",
                            )
                            .label("not `rows = …` or `columns = …`")
                            .help("write `deploy: rows = 1..=2` and/or `columns = A..=D`"),
                        );
                        // Its hexes are not known: counting it over the whole board would
                        // report the forces after it as short of room when they are not.
                        return None;
                    };
                    let (lo, hi, max, what) = match (key.name.as_str(), &v.value.kind) {
                        ("rows", ExprKind::Range { lo, hi, inclusive }) => (
                            lo.as_deref().and_then(int_of).map(|x| x as u32),
                            hi.as_deref()
                                .and_then(int_of)
                                .map(|x| x as u32 - u32::from(!inclusive)),
                            rows,
                            "rows",
                        ),
                        ("columns", ExprKind::Range { lo, hi, inclusive }) => (
                            lo.as_deref().and_then(name_of).and_then(column_label),
                            hi.as_deref()
                                .and_then(name_of)
                                .and_then(column_label)
                                .map(|x| x - u32::from(!inclusive)),
                            columns,
                            "columns",
                        ),
                        // `rows = 5` would be read as no rows at all: the whole board.
                        ("rows" | "columns", kind) if !matches!(kind, ExprKind::Unknown(_)) => {
                            let (what, example) = if key.name == "rows" {
                                ("rows", "rows = 5..=5")
                            } else {
                                ("columns", "columns = E..=E")
                            };
                            self.diags.push(
                                Diagnostic::new(
                                    Code::ScenarioBadValue,
                                    file,
                                    v.value.span,
                                    format!("`{what} =` takes a range of {what}"),
                                )
                                .label("not a range")
                                .help(format!("write the first and last of them: `{example}`")),
                            );
                            return None;
                        }
                        // Other named parts are the book's words for where some pieces go
                        // (`wire = P..=Q`): the engine places by rows and columns only.
                        _ => continue,
                    };
                    let (lo, hi) = (lo.unwrap_or(1), hi.unwrap_or(max));
                    if lo == 0 || lo > max || hi > max || lo > hi {
                        self.off_board(
                            file,
                            b,
                            v.value.span,
                            format!("these {what} are not on the board"),
                        );
                        return None;
                    }
                    if what == "rows" {
                        area_rows = (lo, hi);
                    } else {
                        area_cols = (lo, hi);
                    }
                }
                return Some(super::deploy::HexDeploy {
                    side,
                    columns: area_cols,
                    rows: area_rows,
                    units,
                    alone: self.units_alone(f),
                    max_per_hex,
                    span: deploy_key.span,
                });
            }
            Shape::Table { .. } => {
                let v = deploy.first()?;
                // `?` waits for an assumption; a string is the book's description.
                if matches!(v.value.kind, ExprKind::Unknown(_) | ExprKind::Str(_)) {
                    return None;
                }
                let Some(name) = name_of(&v.value) else {
                    self.diags.push(
                        Diagnostic::new(
                            Code::ScenarioUnknownArea,
                            file,
                            v.value.span,
                            "on a table a force deploys in a named `area`",
                        )
                        .label("not an area name")
                        .help(self.areas_help(b)),
                    );
                    return None;
                };
                if !b.areas.iter().any(|a| a == name) {
                    let board = b.config.name.as_ref().map_or("", |n| n.name.as_str());
                    self.diags.push(
                        Diagnostic::new(
                            Code::ScenarioUnknownArea,
                            file,
                            v.value.span,
                            format!("board `{board}` has no area `{name}`"),
                        )
                        .label("no such area")
                        .help(self.areas_help(b)),
                    );
                }
            }
            Shape::Unknown => {}
        }
        None
    }

    fn areas_help(&self, b: &Board) -> String {
        if b.areas.is_empty() {
            "declare one on the board: `area NAME { rect: x0, y0, x1, y1 }`".into()
        } else {
            format!("areas of this board: {}", b.areas.join(", "))
        }
    }
}

fn column_name(c: u32) -> String {
    crate::ir::scenario::HexLabel::column_name(c)
}

#[cfg(test)]
mod tests {
    use super::{column_name, hex_label};

    #[test]
    fn hex_labels_read_as_columns_and_rows() {
        assert_eq!(hex_label("B12"), Some((2, 12)));
        assert_eq!(hex_label("AA3"), Some((27, 3)));
        assert_eq!(hex_label("B0"), None);
        assert_eq!(hex_label("b3"), None);
        assert_eq!(column_name(27), "AA");
        assert_eq!(column_name(8), "H");
    }
}
