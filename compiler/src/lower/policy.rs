//! `policy NAME for SIDE { prefer … }`: a side's decisions written as ordered rules. Each
//! rule's condition and measure become hooks over the preferred action's arguments, so the
//! runtime evaluates them as it does any procedure.

use sandtable_grammar::ast::{self, Span};

use super::expr::Scope;
use super::{Located, Lowerer, Sym};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{self, Stmt};
use crate::source::FileId;

/// Policies the engine has of its own: a written policy may not take their names.
const ENGINE_POLICIES: &[&str] = &["random", "greedy", "human", "script", "mcts"];

impl Lowerer<'_> {
    pub(crate) fn define_policies(&mut self, items: &[Located]) {
        let mut seen: Vec<(String, FileId, Span)> = Vec::new();
        for loc in items {
            let ast::ItemKind::Policy(p) = &loc.item.kind else {
                continue;
            };
            let file = loc.file;
            for r in p.see.iter().chain(p.rules.iter().flat_map(|r| &r.see)) {
                self.refs.push((file, r.clone()));
            }
            if ENGINE_POLICIES.contains(&p.name.name.as_str()) {
                self.diags.push(
                    Diagnostic::new(
                        Code::PolicyBadName,
                        file,
                        p.name.span,
                        format!("`{}` is a policy the engine already has", p.name.name),
                    )
                    .label("taken by the engine")
                    .help(format!(
                        "give the written policy its own name; the engine's are {}",
                        ENGINE_POLICIES.join(", ")
                    )),
                );
            }
            if let Some((_, f0, s0)) = seen.iter().find(|(n, _, _)| *n == p.name.name) {
                let (f0, s0) = (*f0, *s0);
                self.diags.push(
                    Diagnostic::new(
                        Code::PolicyBadName,
                        file,
                        p.name.span,
                        format!("a second policy named `{}`", p.name.name),
                    )
                    .label("named again here")
                    .related(f0, s0, "first defined here")
                    .help("rename one of them: `--policy SIDE=NAME` must name one policy"),
                );
            }
            seen.push((p.name.name.clone(), file, p.name.span));
            let side = match self.lookup(&p.side.name) {
                Some(Sym::Side(s)) => Some(s),
                _ => {
                    let names: Vec<String> =
                        self.program.sides.iter().map(|s| s.name.clone()).collect();
                    self.diags.push(
                        Diagnostic::new(
                            Code::PolicyUnknownSide,
                            file,
                            p.side.span,
                            format!("no side `{}` for policy `{}`", p.side.name, p.name.name),
                        )
                        .label("not a side")
                        .help(format!("the sides are: {}", names.join(", "))),
                    );
                    None
                }
            };
            let mut rules = Vec::new();
            for (k, r) in p.rules.iter().enumerate() {
                let hook = format!("policy {} rule {}", p.name.name, k + 1);
                if let Some(rule) = self.policy_rule(file, loc.section, r, &hook) {
                    rules.push(rule);
                }
            }
            if let Some(side) = side {
                self.program.policies.push(ir::PolicyDef {
                    name: p.name.name.clone(),
                    side,
                    title: p.title.as_ref().map(|t| t.value.clone()),
                    rules,
                    cite: self.cite(loc.section, &p.see),
                });
            }
        }
    }

    /// The action a rule names, with the parameters its binders give it.
    fn preferred_action(
        &mut self,
        file: FileId,
        name: &ast::Ident,
        binders: &[ast::Ident],
    ) -> Option<(ir::ProcId, Vec<ir::Param>)> {
        let id = match self.lookup(&name.name) {
            Some(Sym::Proc(id)) if self.program.procs[id as usize].kind == ir::ProcKind::Action => {
                id
            }
            other => {
                let what = other.map_or("nothing of that name".to_string(), |s| {
                    format!("a {}", s.describe())
                });
                let mut d = Diagnostic::new(
                    Code::PolicyNotAction,
                    file,
                    name.span,
                    format!("`{}` is not an action: there is {what}", name.name),
                )
                .label("not an action");
                let actions: Vec<String> = self
                    .program
                    .procs
                    .iter()
                    .filter(|p| p.kind == ir::ProcKind::Action)
                    .map(|p| p.name.clone())
                    .collect();
                let near = actions
                    .iter()
                    .min_by_key(|a| super::edit_distance(a, &name.name))
                    .filter(|a| super::edit_distance(a, &name.name) <= 3);
                d = d.help(match near {
                    Some(a) => format!("did you mean `{a}`?"),
                    None => "a policy prefers one of the rules' actions, `hold`, `deploy(piece, at)`, or `pick OPTION during ACTION(…)`".into(),
                });
                self.diags.push(d);
                return None;
            }
        };
        let params = self.program.procs[id as usize].params.clone();
        if params.len() != binders.len() {
            let span = binders.iter().fold(name.span, |s, b| s.join(b.span));
            let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            self.diags.push(
                Diagnostic::new(
                    Code::PolicyNotAction,
                    file,
                    span,
                    format!(
                        "action `{}` takes {} argument(s), and {} name(s) are given",
                        name.name,
                        params.len(),
                        binders.len()
                    ),
                )
                .label("one name per argument")
                .help(format!("write `{}({})`", name.name, names.join(", "))),
            );
            return None;
        }
        let params = params
            .into_iter()
            .zip(binders)
            .map(|(p, b)| ir::Param {
                name: b.name.clone(),
                ty: p.ty,
                range: p.range,
                default: None,
            })
            .collect();
        Some((id, params))
    }

    fn policy_rule(
        &mut self,
        file: FileId,
        section: Option<ir::SectionId>,
        r: &ast::Prefer,
        hook: &str,
    ) -> Option<ir::PolicyRule> {
        let (what, params) = match &r.what {
            ast::PreferWhat::Hold(_, piece) => (
                ir::Preferred::Hold,
                piece
                    .iter()
                    .map(|b| ir::Param {
                        name: b.name.clone(),
                        ty: ir::Type::Entity(None),
                        range: None,
                        default: None,
                    })
                    .collect(),
            ),
            // `deploy(piece, at)` names the engine's set-up choice, unless the rules have an
            // action of that name.
            ast::PreferWhat::Action { name, binders }
                if name.name == "deploy"
                    && binders.len() == 2
                    && !matches!(self.lookup("deploy"), Some(Sym::Proc(_))) =>
            {
                (
                    ir::Preferred::Deploy,
                    binders
                        .iter()
                        .map(|b| ir::Param {
                            name: b.name.clone(),
                            ty: ir::Type::Entity(None),
                            range: None,
                            default: None,
                        })
                        .collect(),
                )
            }
            ast::PreferWhat::Action { name, binders } => {
                let (id, params) = self.preferred_action(file, name, binders)?;
                (ir::Preferred::Action(id), params)
            }
            ast::PreferWhat::Pick {
                option,
                action,
                binders,
            } => {
                let (id, params) = self.preferred_action(file, action, binders)?;
                (
                    ir::Preferred::Pick {
                        option: option.name.clone(),
                        action: id,
                    },
                    params,
                )
            }
        };
        let cite = self.cite(section, &r.see);
        let when = r.when.as_ref().map(|e| {
            let mut scope = Scope::new(&params);
            let t = self.lower_expr(file, &mut scope, e, hook);
            let x = t.expect_bool(self, file, e.span);
            self.rule_hook(
                format!("{hook} when"),
                &params,
                x,
                &scope,
                &cite,
                file,
                e.span,
            )
        });
        let by = r.by.as_ref().map(|e| {
            let mut scope = Scope::new(&params);
            let t = self.lower_expr(file, &mut scope, e, hook);
            let x = t.expect_numeric(self, file, e.span);
            self.rule_hook(
                format!("{hook} by"),
                &params,
                x,
                &scope,
                &cite,
                file,
                e.span,
            )
        });
        let (line, _) = self.line_of(file, r.span);
        Some(ir::PolicyRule {
            what,
            when,
            by,
            at: format!("{}:{line}", self.db.file(file).name),
            cite,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn rule_hook(
        &mut self,
        name: String,
        params: &[ir::Param],
        value: ir::Expr,
        scope: &Scope,
        cite: &ir::Cite,
        file: FileId,
        span: Span,
    ) -> ir::ProcId {
        let (line, _) = self.line_of(file, span);
        self.stmt_lines.clear();
        self.stmt_lines.push(line);
        self.push_hook(
            name,
            params.to_vec(),
            vec![Stmt::Result(value)],
            scope,
            cite.clone(),
            file,
            span,
        )
    }
}
