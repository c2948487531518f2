//! What one activation activates (`activates:`), how many actions each activated piece takes
//! (`actions_per_piece:`), whether every piece of the unit acts or only one (`all_act_when:`),
//! which pieces a leader commands (`commands:`) and which actions pieces of a unit may take
//! together (`together:`). The two conditions are expressions of the language over the unit:
//! each is lowered as a hook whose only statement is `require CONDITION`, with the unit's names
//! as its parameters, so the engine evaluates it like any guard.

use sandtable_grammar::ast::{self, ExprKind};

use super::{Lowerer, Scope, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, Type};
use crate::source::FileId;

/// The units one activation may activate, as `activates:` names them.
pub(crate) const UNITS: &[&str] = &["piece", "place", "group", "side"];

/// Most actions one activated piece may take (a bound, so a typo cannot stall a game).
const MAX_ACTIONS_PER_PIECE: i64 = 20;

/// The parameters a condition property sees, or `None` for any other property.
pub(crate) fn condition_params(key: &str) -> Option<Vec<ir::Param>> {
    let piece = |name: &str, ty: Type| ir::Param {
        name: name.to_string(),
        ty,
        range: None,
        default: None,
    };
    match key {
        // The pieces that start the activation in the unit.
        "all_act_when" => Some(vec![piece(
            "unit",
            Type::List(Box::new(Type::Entity(None))),
        )]),
        // Whether `member` belongs to the group headed by `leader`.
        "commands" => Some(vec![
            piece("leader", Type::Entity(None)),
            piece("member", Type::Entity(None)),
        ]),
        _ => None,
    }
}

fn name_of(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(n) => Some(n),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// Lower `all_act_when: CONDITION` or `commands: CONDITION` of activation `owner` into a
    /// hook named `owner.key` that reads the unit through its parameters.
    pub(crate) fn activation_condition(
        &mut self,
        file: FileId,
        section: Option<ir::SectionId>,
        owner: &str,
        key: &ast::Ident,
        values: &[ast::PropValue],
        params: Vec<ir::Param>,
    ) -> Option<u32> {
        let value = values.first()?;
        if values.len() > 1 {
            self.diags.push(
                Diagnostic::new(
                    Code::ActivationNotCondition,
                    file,
                    values[1].value.span,
                    format!("`{}:` takes one condition", key.name),
                )
                .label("a second value")
                .help("join the conditions with `and` / `or`"),
            );
        }
        let names: Vec<String> = params.iter().map(|p| format!("`{}`", p.name)).collect();
        let mut scope = Scope::new(&params);
        let path = format!("{owner}.{}", key.name);
        let typed = self.lower_expr(file, &mut scope, &value.value, &path);
        if !matches!(typed.ty, Type::Bool | Type::Any) {
            self.diags.push(
                Diagnostic::new(
                    Code::ActivationNotCondition,
                    file,
                    value.value.span,
                    format!("`{}:` is not a condition", key.name),
                )
                .label(format!("this is {}", self.type_name(&typed.ty)))
                .help(format!(
                    "write something true or false about {}, e.g. `any(u in unit, u.leader)`",
                    names.join(" and ")
                )),
            );
        }
        self.stmt_lines.clear();
        let cite = self.cite(section, &[]);
        let body = vec![ir::Stmt::Require(typed.expr)];
        Some(self.push_hook(path, params, body, &scope, cite, file, value.value.span))
    }

    /// The unit properties of an activation block, read as the engine will read them.
    pub(crate) fn check_activation_unit(&mut self, file: FileId, a: &ast::Config) {
        let get = |key: &str| {
            a.entries.iter().find_map(|e| match e {
                ast::ConfigEntry::Property { key: k, values, .. } if k.name == key => {
                    Some((k.clone(), values.clone()))
                }
                _ => None,
            })
        };
        let mut unit = "piece";
        if let Some((_, values)) = get("activates") {
            let v = &values[0].value;
            match name_of(v).and_then(|n| UNITS.iter().find(|u| **u == n)) {
                Some(u) if values.len() == 1 => unit = u,
                _ => self.diags.push(
                    Diagnostic::new(
                        Code::ActivationUnknownUnit,
                        file,
                        values.last().map_or(v.span, |x| x.value.span),
                        "`activates:` names no unit",
                    )
                    .label("not a unit")
                    .help(format!(
                        "one activation activates one of: {} (`piece` when left out)",
                        UNITS.join(", ")
                    )),
                ),
            }
        }
        if let Some((_, values)) = get("actions_per_piece") {
            let v = &values[0].value;
            let ok = matches!(v.kind, ExprKind::Int(n) if (1..=MAX_ACTIONS_PER_PIECE).contains(&n));
            if !ok || values.len() > 1 {
                self.diags.push(
                    Diagnostic::new(
                        Code::ScenarioBadValue,
                        file,
                        v.span,
                        "`actions_per_piece:` is not a number of actions",
                    )
                    .label(format!("expected 1 to {MAX_ACTIONS_PER_PIECE}"))
                    .help("write how many actions each activated piece takes, e.g. `actions_per_piece: 1`"),
                );
            }
        }
        if let Some((_, values)) = get("together") {
            for v in &values {
                let items: Vec<&ast::Expr> = match &v.value.kind {
                    ExprKind::List(xs) => xs.iter().collect(),
                    _ => vec![&v.value],
                };
                for it in items {
                    let action =
                        name_of(it).and_then(|n| match self.globals.get(n).map(|d| d.sym) {
                            Some(Sym::Proc(p)) => (self.program.procs[p as usize].kind
                                == ir::ProcKind::Action)
                                .then_some(()),
                            _ => None,
                        });
                    if action.is_none() {
                        self.diags.push(
                            Diagnostic::new(
                                Code::ActivationNotAction,
                                file,
                                it.span,
                                "`together:` lists something that is not an action",
                            )
                            .label("not an action")
                            .help("list the actions (e.g. moves) that pieces of one unit may take together to the same place"),
                        );
                    }
                }
            }
        }
        match (unit, get("commands")) {
            ("group", None) => self.diags.push(
                Diagnostic::new(
                    Code::ScenarioMissingProperty,
                    file,
                    a.name.as_ref().map_or(a.keyword.span, |n| n.span),
                    "a group activation does not say who is in a group",
                )
                .label("`activates: group` without `commands:`")
                .help("add `commands: CONDITION` over `leader` and `member`, e.g. `commands: distance(leader, member) <= 1`"),
            ),
            (u, Some((key, _))) if u != "group" => self.diags.push(
                Diagnostic::new(
                    Code::ActivationIgnored,
                    file,
                    key.span,
                    format!("`commands:` is read only when an activation activates a group, not a {u}"),
                )
                .label("ignored")
                .help("remove it, or write `activates: group`"),
            ),
            _ => {}
        }
    }
}
