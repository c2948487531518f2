//! Config blocks (board, scenario, turn, phase, activation, force, ruleset): each keyword has
//! a schema of properties, nested blocks and schemes, so a typo is an error with the list of
//! what is allowed rather than a silently ignored line.

use sandtable_grammar::ast::{self, ExprKind};

use super::{Lowerer, Scope, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, Expr, Value};
use crate::source::FileId;

pub(crate) struct Schema {
    pub keyword: &'static str,
    pub properties: &'static [&'static str],
    pub blocks: &'static [&'static str],
    /// Allowed `: scheme` values; empty when the block takes none.
    pub schemes: &'static [&'static str],
    /// Properties whose bare names must resolve to definitions (others may be free labels).
    pub references: &'static [&'static str],
    /// The events its `on EVENT` hooks may name: those the engine runs for the block. A deck
    /// activation adds its inserts' events and the sides (`on us`: the side's card).
    pub events: &'static [&'static str],
}

pub(crate) const SCHEMAS: &[Schema] = &[
    Schema {
        keyword: "ruleset",
        properties: &[
            "source",
            "version",
            "authors",
            "language",
            "note",
            "translation",
            "edition",
        ],
        blocks: &[],
        schemes: &[],
        references: &[],
        events: &[],
    },
    Schema {
        keyword: "board",
        properties: &[
            "columns",
            "rows",
            "default",
            "terrain",
            "stand_in",
            "edges",
            "exits",
            "width",
            "depth",
            "sector",
            "zones",
            "numbering",
            "units",
            "scale",
            "orientation",
            "coordinates",
            "note",
            "hexes",
            "features",
            "base",
            "blocks_sight",
            "entry_cost",
            "move_directions",
            "move_steps",
        ],
        blocks: &["region", "area", "feature"],
        schemes: &["hex", "open", "sectors", "square"],
        references: &["default"],
        events: &[],
    },
    Schema {
        keyword: "turn",
        properties: &[
            "sequence",
            "limit",
            "order",
            "note",
            "distance_counter",
            "secret_counters",
            "concealing_markers",
        ],
        blocks: &[],
        schemes: &[],
        references: &["sequence", "concealing_markers"],
        events: &["end"],
    },
    Schema {
        keyword: "phase",
        properties: &[
            "activation",
            "actions",
            "side",
            "sides",
            "order",
            "optional",
            "note",
            "repeat",
            "per",
            "cost",
        ],
        blocks: &[],
        schemes: &[],
        references: &["actions"],
        events: &["run"],
    },
    Schema {
        keyword: "activation",
        properties: &[
            "card",
            "insert",
            "draws_before_reshuffle",
            "cost",
            "currency",
            "sides",
            "order",
            "per_figure",
            "per_turn",
            "chips",
            "draw",
            "pick",
            "reshuffle",
            "income",
            "first",
            "pass",
            "alternate",
            "note",
            "deck",
            "rolls",
            "reroll",
            "units",
            "activates",
            "actions_per_piece",
            "all_act_when",
            "commands",
            "together",
        ],
        blocks: &["card", "income", "roll"],
        schemes: &[
            "chip_cup",
            "deck",
            "fixed",
            "sequence",
            "all",
            "alternating",
        ],
        references: &["together"],
        events: &[],
    },
    Schema {
        keyword: "scenario",
        properties: &[
            "board",
            "turns",
            "chips",
            "reinforce",
            "sides",
            "options",
            "terrain",
            "special",
            "first",
            "note",
            "threat_level",
            "weather",
            "table",
            "deployment",
            "points",
            "command_points",
            "ambush_tokens",
            "activation",
            "time",
            "objective",
            "length",
            "recommended",
            "hold",
            "capture",
        ],
        blocks: &["force", "special_rule", "terrain", "neutral"],
        schemes: &[],
        references: &["board"],
        events: &ir::scenario::ScenarioEvent::NAMES,
    },
    Schema {
        keyword: "force",
        properties: &[
            "deploy",
            "units",
            "markers",
            "artillery",
            "points",
            "max_per_hex",
            "deploys",
            "order",
            "note",
            "support",
            "reinforcements",
            "flag",
            "entry",
            "exit",
            "soldiers",
            "vehicles",
            "composition",
            "hidden",
            "secret_markers",
            "markers_deploy",
            "reserve",
            "deploy_check",
        ],
        blocks: &["deploy"],
        schemes: &[],
        references: &["units", "deploy_check"],
        events: &[],
    },
    // Pieces of no side at fixed places: `neutral { pieces: 2 * objective, at: D4, F6 }`.
    Schema {
        keyword: "neutral",
        properties: &["pieces", "at", "note"],
        blocks: &[],
        schemes: &[],
        references: &["pieces"],
        events: &[],
    },
];

/// Keywords of nested blocks without a schema of their own: any property is accepted.
fn free_block(keyword: &str) -> bool {
    matches!(
        keyword,
        "card"
            | "income"
            | "roll"
            | "region"
            | "area"
            | "feature"
            | "deploy"
            | "special_rule"
            | "terrain"
    )
}

pub(crate) fn schema(keyword: &str) -> Option<&'static Schema> {
    SCHEMAS.iter().find(|s| s.keyword == keyword)
}

/// A config block's header, before its entries are lowered.
fn empty_block(c: &ast::Config, cite: ir::Cite) -> ir::ConfigBlock {
    ir::ConfigBlock {
        keyword: c.keyword.name.clone(),
        name: c.name.as_ref().map(|n| n.name.clone()),
        scheme: c.scheme.as_ref().map(|s| s.name.clone()),
        title: c.title.as_ref().map(|t| t.value.clone()),
        properties: Vec::new(),
        blocks: Vec::new(),
        hooks: Vec::new(),
        cite,
    }
}

impl<'a> Lowerer<'a> {
    pub(crate) fn declare_config(&mut self, file: FileId, c: &ast::Config) {
        let id = self.program.configs.len() as u32;
        self.program
            .configs
            .push(empty_block(c, ir::Cite::default()));
        if let Some(n) = &c.name {
            // Forces are named by their side; they are not global names.
            if c.keyword.name != "force" && c.keyword.name != "phase" {
                self.define_global(n, file, Sym::Config(id));
                self.uses.insert(Sym::Config(id), 1);
            }
        }
    }

    /// Lower a config block. Top-level blocks fill the slot `declare_config` made; nested ones
    /// are returned to their parent.
    pub(crate) fn define_config(
        &mut self,
        file: FileId,
        section: Option<ir::SectionId>,
        c: &ast::Config,
        parent: Option<&'static Schema>,
    ) -> ir::ConfigBlock {
        let kw = c.keyword.name.as_str();
        let sch = schema(kw);
        if sch.is_none() && !free_block(kw) {
            let allowed: Vec<&str> = parent.map(|p| p.blocks.to_vec()).unwrap_or_default();
            self.diags.push(
                Diagnostic::new(
                    Code::ConfigUnknownBlock,
                    file,
                    c.keyword.span,
                    format!("unknown block `{kw}`"),
                )
                .label("not a block here")
                .help(if allowed.is_empty() {
                    "blocks are: ruleset, board, turn, phase, activation, scenario, force"
                        .to_string()
                } else {
                    format!("blocks allowed here: {}", allowed.join(", "))
                }),
            );
        }
        if let (Some(sch), Some(scheme)) = (sch, &c.scheme) {
            if sch.schemes.is_empty() {
                self.diags.push(
                    Diagnostic::new(
                        Code::ConfigUnknownScheme,
                        file,
                        scheme.span,
                        format!("`{kw}` takes no `: scheme`"),
                    )
                    .label("unexpected scheme")
                    .help("remove it"),
                );
            } else if !sch.schemes.contains(&scheme.name.as_str()) {
                self.diags.push(
                    Diagnostic::new(
                        Code::ConfigUnknownScheme,
                        file,
                        scheme.span,
                        format!("unknown {kw} scheme `{}`", scheme.name),
                    )
                    .label("unknown scheme")
                    .help(format!("schemes: {}", sch.schemes.join(", "))),
                );
            }
        }
        let owner = c
            .name
            .as_ref()
            .map_or(kw.to_string(), |n| format!("{kw}.{}", n.name));
        let mut block = empty_block(c, self.cite(section, &c.see));
        for r in &c.see {
            self.refs.push((file, r.clone()));
        }
        let mut events: Vec<&ast::Ident> = Vec::new();
        for entry in &c.entries {
            match entry {
                ast::ConfigEntry::Property {
                    key, values, see, ..
                } => {
                    for r in see {
                        self.refs.push((file, r.clone()));
                    }
                    if let Some(sch) = sch
                        && !sch.properties.contains(&key.name.as_str())
                    {
                        let mut d = Diagnostic::new(
                            Code::ConfigUnknownProperty,
                            file,
                            key.span,
                            format!("`{kw}` has no property `{}`", key.name),
                        )
                        .label("unknown property");
                        d = d.help(format!(
                            "properties of `{kw}`: {}",
                            sch.properties.join(", ")
                        ));
                        self.diags.push(d);
                    }
                    if kw == "activation"
                        && matches!(key.name.as_str(), "order" | "sides" | "first")
                    {
                        self.check_side_order(file, key, values);
                    }
                    if kw == "activation"
                        && let Some(params) = super::activation::condition_params(&key.name)
                    {
                        if let Some(id) =
                            self.activation_condition(file, section, &owner, key, values, params)
                        {
                            block.hooks.push((key.name.clone(), id));
                        }
                        continue;
                    }
                    let strict = sch.is_some_and(|s| s.references.contains(&key.name.as_str()));
                    let path = format!("{owner}.{}", key.name);
                    let vals = values
                        .iter()
                        .map(|v| {
                            // `chips: us = ?, nva = ?`: each side's unknown is named for its
                            // side (`scenario.s.chips.us`), a name the user can write.
                            let path = match &v.name {
                                Some(n) => format!("{path}.{}", n.name),
                                None => path.clone(),
                            };
                            (
                                v.name.as_ref().map(|n| n.name.clone()),
                                self.config_value(file, &v.value, &path, strict),
                            )
                        })
                        .collect();
                    block.properties.push(ir::Property {
                        key: key.name.clone(),
                        values: vals,
                    });
                }
                ast::ConfigEntry::Block(inner, _) => {
                    let known = schema(&inner.keyword.name).is_some();
                    let allowed =
                        sch.is_none_or(|s| s.blocks.contains(&inner.keyword.name.as_str()));
                    if !allowed && !known {
                        let d = Diagnostic::new(
                            Code::ConfigUnknownBlock,
                            file,
                            inner.keyword.span,
                            format!("`{kw}` has no block `{}`", inner.keyword.name),
                        )
                        .label("unknown block")
                        .help(match sch {
                            Some(s) if !s.blocks.is_empty() => format!("blocks allowed in `{kw}`: {}", s.blocks.join(", ")),
                            _ => format!("`{kw}` holds properties (`key: value`) and hooks (`on EVENT {{ … }}`)"),
                        });
                        self.diags.push(d);
                        continue;
                    }
                    let b = self.define_config(file, section, inner, sch);
                    block.blocks.push(b);
                }
                ast::ConfigEntry::Hook { event, see, body } => {
                    events.push(event);
                    let id = self.hook_proc(
                        file,
                        section,
                        &format!("{owner}.on_{}", event.name),
                        see,
                        body,
                    );
                    block.hooks.push((event.name.clone(), id));
                }
                ast::ConfigEntry::Victory { see, body, .. } => {
                    let id = self.hook_proc(file, section, &format!("{owner}.victory"), see, body);
                    block.hooks.push(("victory".to_string(), id));
                }
                // A config may nest other configs (a scenario's force, a turn's phases);
                // other definitions inside a config were collected and lowered with the rest.
                ast::ConfigEntry::Item(item) => {
                    if let ast::ItemKind::Config(inner) = &item.kind {
                        let b = self.define_config(file, section, inner, sch);
                        block.blocks.push(b);
                    }
                }
            }
        }
        if let Some(sch) = sch {
            self.check_events(file, sch, c, &block, &events);
        }
        if parent.is_none()
            && let Some(slot) = self.program.configs.iter().position(|x| {
                x.keyword == block.keyword
                    && x.name == block.name
                    && x.properties.is_empty()
                    && x.blocks.is_empty()
                    && x.hooks.is_empty()
            })
        {
            self.program.configs[slot] = block.clone();
        }
        block
    }

    /// Each `on EVENT` names an event the engine runs for its block: any other would never
    /// run, and the rule it holds would be lost without a word.
    fn check_events(
        &mut self,
        file: FileId,
        sch: &Schema,
        c: &ast::Config,
        block: &ir::ConfigBlock,
        events: &[&ast::Ident],
    ) {
        let mut allowed: Vec<String> = sch.events.iter().map(|e| e.to_string()).collect();
        if c.scheme.as_ref().is_some_and(|s| s.name == "deck") {
            let inserts = block.properties.iter().filter(|p| p.key == "insert");
            allowed.extend(
                inserts
                    .filter_map(super::turn::insert_event)
                    .map(str::to_string),
            );
            allowed.extend(self.program.sides.iter().map(|s| s.name.clone()));
        }
        allowed.dedup();
        for ev in events {
            if allowed.contains(&ev.name) {
                continue;
            }
            let names: Vec<&str> = allowed.iter().map(String::as_str).collect();
            let help = match super::closest(&ev.name, names.iter().copied()) {
                Some(s) => format!("did you mean `on {s}`?"),
                None if allowed.is_empty() => format!("a `{}` block runs no hooks", sch.keyword),
                None => format!("events here: {}", names.join(", ")),
            };
            self.diags.push(
                Diagnostic::new(
                    Code::ConfigUnknownEvent,
                    file,
                    ev.span,
                    format!("a `{}` never runs `on {}`", sch.keyword, ev.name),
                )
                .label("no such event here")
                .help(help),
            );
        }
    }

    /// An activation's `order:`, `sides:` or `first:` lists sides to take turns: an empty list
    /// would give nobody a turn and a repeated side two turns in a row, which no book means.
    fn check_side_order(&mut self, file: FileId, key: &ast::Ident, values: &[ast::PropValue]) {
        let mut items: Vec<&ast::Expr> = Vec::new();
        for v in values {
            match &v.value.kind {
                ExprKind::List(xs) if xs.is_empty() => {
                    self.diags.push(
                        Diagnostic::new(
                            Code::ConfigBadOrder,
                            file,
                            v.value.span,
                            format!("`{}:` lists no side", key.name),
                        )
                        .label("empty list")
                        .help(format!(
                            "list every side that takes turns, e.g. `{}: {}`",
                            key.name,
                            self.side_names_example()
                        )),
                    );
                }
                ExprKind::List(xs) => items.extend(xs.iter()),
                _ => items.push(&v.value),
            }
        }
        let mut seen: Vec<(&str, ast::Span)> = Vec::new();
        for it in items {
            let ExprKind::Name(n) = &it.kind else {
                continue;
            };
            if !matches!(self.globals.get(n).map(|d| d.sym), Some(Sym::Side(_))) {
                continue;
            }
            if let Some((_, first)) = seen.iter().find(|(s, _)| s == n) {
                let (line, col) = self.line_of(file, *first);
                self.diags.push(
                    Diagnostic::new(
                        Code::ConfigBadOrder,
                        file,
                        it.span,
                        format!("side `{n}` is listed twice in `{}:`", key.name),
                    )
                    .label("listed again")
                    .help(format!(
                        "each side appears once (first at {line}:{col}); to give a side more \
                         activations use `chips:` or the phase's `repeat:`"
                    )),
                );
            } else {
                seen.push((n.as_str(), it.span));
            }
        }
    }

    fn side_names_example(&self) -> String {
        let names: Vec<&str> = self.program.sides.iter().map(|s| s.name.as_str()).collect();
        if names.is_empty() {
            "red, blue".to_string()
        } else {
            names.join(", ")
        }
    }

    fn hook_proc(
        &mut self,
        file: FileId,
        section: Option<ir::SectionId>,
        name: &str,
        see: &[ast::Ref],
        body: &ast::Block,
    ) -> u32 {
        for r in see {
            self.refs.push((file, r.clone()));
        }
        let mut scope = Scope::new(&[]);
        self.stmt_lines.clear();
        let stmts = self.lower_body(file, &mut scope, body, name);
        let cite = self.cite(section, see);
        self.push_hook(
            name.to_string(),
            Vec::new(),
            stmts,
            &scope,
            cite,
            file,
            body.span,
        )
    }

    /// Property values: names resolve when they can; otherwise they are labels, except for
    /// properties that must name a definition (`board: map`, `actions: fire`).
    fn config_value(&mut self, file: FileId, e: &ast::Expr, path: &str, strict: bool) -> Expr {
        match &e.kind {
            ExprKind::Name(n) => {
                if self.globals.contains_key(n) {
                    let sym = self.lookup(n);
                    return match sym {
                        Some(Sym::Entity(id)) => Expr::Const(Value::Entity(id)),
                        Some(Sym::Side(id)) => Expr::Const(Value::Side(id)),
                        Some(Sym::Die(id)) => Expr::Const(Value::Die(id)),
                        _ => Expr::Const(Value::Symbol(n.as_str().into())),
                    };
                }
                if strict
                    && !super::expr::looks_like_coordinate(n)
                    && !self.members.contains_key(n)
                    && !self.broken.contains(n)
                {
                    let help = self
                        .suggest(n, &[])
                        .map_or("define it, or check the spelling".to_string(), |s| {
                            format!("did you mean `{s}`?")
                        });
                    self.diags.push(
                        Diagnostic::new(
                            Code::ResolveUnknownName,
                            file,
                            e.span,
                            format!("cannot find `{n}`"),
                        )
                        .label("not defined")
                        .help(help),
                    );
                }
                if let Some(en) = self.members.get(n).and_then(|v| v.first()).copied() {
                    self.uses.insert(Sym::Enum(en), 1);
                }
                Expr::Const(Value::Symbol(n.as_str().into()))
            }
            ExprKind::Int(_)
            | ExprKind::Length(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Unknown(_)
            | ExprKind::Range { .. } => Expr::Const(self.const_value(file, e, path, None)),
            ExprKind::List(items) => Expr::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.config_value(file, x, &format!("{path}[{i}]"), strict))
                    .collect(),
            ),
            ExprKind::Binary {
                op: ast::BinOp::Mul,
                lhs,
                rhs,
            } => {
                // `6 * ak47`: a count of pieces.
                let l = self.config_value(file, lhs, path, false);
                let r = self.config_value(file, rhs, path, strict);
                Expr::Binary {
                    op: ir::BinOp::Mul,
                    lhs: Box::new(l),
                    rhs: Box::new(r),
                }
            }
            _ => {
                let mut scope = Scope::new(&[]);
                self.lower_expr(file, &mut scope, e, path).expr
            }
        }
    }
}
