//! Exact distributions against brute-force enumeration of every die roll, and Monte Carlo
//! estimates against exact values, over random small dice expressions; plus the figures the
//! documentation quotes.

use std::collections::BTreeMap;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};
use proptest::prelude::*;
use sandtable_runtime::exact::{DEFAULT_LIMIT, Exact, Session, distribution};
use sandtable_runtime::interp::{Assumptions, Ctx, Interp, NoGame};
use sandtable_runtime::rng::Dice;
use sandtable_runtime::{OutcomeKey, montecarlo};

fn compile(src: &str) -> sandtable_compiler::Compiled {
    sandtable_conformance::compile_clean(src)
}

/// Every sequence of rolls, each weighted by its probability: `outcome → (numerator, denominator)`.
/// `None` when there are too many roll sequences to walk.
fn brute_force(
    program: &sandtable_ir::Program,
    proc: u32,
) -> Option<BTreeMap<OutcomeKey, (BigUint, BigUint)>> {
    let none = Assumptions::default();
    let interp = Interp::new(program, &none);
    let mut leaves: Vec<(OutcomeKey, BigUint)> = Vec::new();
    let mut stack: Vec<(Vec<u32>, BigUint)> = vec![(Vec::new(), BigUint::one())];
    while let Some((script, den)) = stack.pop() {
        let mut dice = Dice::scripted(script.clone());
        let mut host = NoGame;
        let mut ctx = Ctx::new(&mut dice, &mut host);
        let out = interp.run(proc, Vec::new(), &mut ctx).expect("runs");
        match dice.overflow() {
            Some(n) => {
                for i in 0..n {
                    let mut s = script.clone();
                    s.push(i);
                    stack.push((s, &den * n));
                }
            }
            None => leaves.push((out.key, den)),
        }
        if leaves.len() + stack.len() > 100_000 {
            return None;
        }
    }
    let l = leaves.iter().fold(BigUint::one(), |acc, (_, d)| acc.lcm(d));
    let mut num: BTreeMap<OutcomeKey, BigUint> = BTreeMap::new();
    for (k, d) in leaves {
        *num.entry(k).or_default() += &l / d;
    }
    Some(
        num.into_iter()
            .map(|(k, n)| {
                let g = n.gcd(&l);
                (k, (&n / &g, &l / &g))
            })
            .collect(),
    )
}

fn exact(program: &sandtable_ir::Program, proc: u32) -> BTreeMap<OutcomeKey, (BigUint, BigUint)> {
    let none = Assumptions::default();
    let d = distribution(program, &none, DEFAULT_LIMIT, proc, Vec::new()).expect("exact");
    d.keys()
        .map(|k| {
            let p = d.probability(&k);
            (k, p)
        })
        .collect()
}

/// Small random dice expressions, as source text.
fn expr(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        prop::sample::select(vec!["d2", "d3", "d4", "d6"]).prop_map(String::from),
        (-3i64..=3).prop_map(|k| if k < 0 {
            format!("({k})")
        } else {
            k.to_string()
        }),
        prop::sample::select(vec!["2d3", "2d4"]).prop_map(String::from),
        (1u32..=3, 2u32..=4).prop_map(|(n, t)| format!("successes(pool({n}, d4), {t})")),
        (1u32..=2).prop_map(|k| format!("highest({k}, 3d3)")),
        (1u32..=2).prop_map(|k| format!("lowest({k}, 2d4)")),
        Just("reroll(d4, 1..=1)".to_string()),
        Just("custom".to_string()),
        (1i64..=3).prop_map(|t| format!("count(k in [1, 2], d3 + k > {t})")),
        Just("(if any(k in 1..=2, d4 == k) then 1 else 0)".to_string()),
        Just("(if all(k in [1, 2], d3 >= k) then 2 else 0)".to_string()),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let sub = expr(depth - 1);
    prop_oneof![
        2 => leaf,
        1 => (sub.clone(), sub.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(a, b)| format!("({a} - {b})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(a, b)| format!("max({a}, {b})")),
        1 => (sub.clone(), sub.clone()).prop_map(|(a, b)| format!("min({a}, {b})")),
        1 => (sub.clone(), -1i64..=2).prop_map(|(a, k)| format!("({a} * {k})")),
        1 => (sub.clone(), sub.clone(), sub.clone(), 1i64..=4).prop_map(|(c, a, b, k)| format!("(if {c} >= {k} then {a} else {b})")),
    ]
    .boxed()
}

/// A resolution around an expression: a plain result, a `let` read twice, or bands.
fn program_text(e: &str, shape: u8) -> String {
    let body = match shape % 3 {
        0 => format!("result {e}"),
        1 => format!("let x = {e}\n  result x * 2 - x"),
        _ => format!(
            "let x = {e}\n  bands x {{\n    ..=0 => low\n    1..=3 => mid\n    4.. => high\n  }}"
        ),
    };
    format!("die custom = [0, 1, 1, 3]\nresolve q() {{\n  {body}\n}}\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, max_global_rejects: 4096, ..ProptestConfig::default() })]

    #[test]
    fn exact_matches_brute_force(e in expr(2), shape in any::<u8>()) {
        let src = program_text(&e, shape);
        let c = compile(&src);
        let (proc, _) = c.program.proc_by_name("q").unwrap();
        let brute = brute_force(&c.program, proc);
        prop_assume!(brute.is_some(), "too many roll sequences to enumerate");
        prop_assert_eq!(exact(&c.program, proc), brute.unwrap(), "{}", src);
    }

    /// The dense evaluator (arrays of weights, `u64` first) against the sparse one (maps of
    /// values, big integers): the same weights and totals, unreduced, on every outcome.
    #[test]
    fn dense_equals_sparse(e in expr(3), shape in any::<u8>()) {
        let src = program_text(&e, shape);
        let c = compile(&src);
        let (proc, _) = c.program.proc_by_name("q").unwrap();
        let none = Assumptions::default();
        let sparse = Exact::<BigUint>::sparse(&c.program, &none, DEFAULT_LIMIT).query(proc, Vec::new());
        let dense = distribution(&c.program, &none, DEFAULT_LIMIT, proc, Vec::new());
        match (dense, sparse) {
            (Ok(d), Ok(s)) => prop_assert_eq!(d.to_dist(), s, "{}", src),
            (d, s) => prop_assert_eq!(d.map(|_| ()).map_err(|e| e.to_string()), s.map(|_| ()).map_err(|e| e.to_string()), "{}", src),
        }
    }

    #[test]
    fn monte_carlo_lands_within_its_interval(e in expr(1), shape in any::<u8>(), seed in any::<u64>()) {
        let src = program_text(&e, shape);
        let c = compile(&src);
        let (proc, _) = c.program.proc_by_name("q").unwrap();
        let ex = exact(&c.program, proc);
        let n = 4000;
        let est = montecarlo::sample(&c.program, &Assumptions::default(), proc, &[], n, seed).unwrap();
        for (k, (num, den)) in &ex {
            let p = num.to_string().parse::<f64>().unwrap() / den.to_string().parse::<f64>().unwrap();
            let got = est.counts.get(k).copied().unwrap_or(0);
            // Wilson 95% interval, widened to about 5 standard errors so that across every
            // outcome of every case a true value falls outside with negligible probability.
            let (lo, hi) = montecarlo::wilson(got, n);
            let slack = 1.5 * (hi - lo);
            prop_assert!(p >= lo - slack && p <= hi + slack, "{}: {:?} exact {} estimate {}/{}", src, k, p, got, n);
        }
        prop_assert_eq!(est.counts.values().sum::<u64>(), n);
    }
}

fn rules(path: &str) -> sandtable_compiler::Compiled {
    let root = sandtable_conformance::root().join(path);
    sandtable_compiler::compile_path(&root).expect("ruleset loads")
}

#[test]
fn platoon_fire_with_modifier_four_against_zero() {
    let c = rules("rules/platoon");
    let proc = sandtable_compiler::assume::find_proc(&c.program, "fire").unwrap();
    let sets = vec![
        ("fire_modifier".to_string(), "4".to_string()),
        ("target_modifier".to_string(), "0".to_string()),
    ];
    let args = sandtable_compiler::assume::bind_args(&c.program, proc, &sets).unwrap();
    let args = sandtable_runtime::query::args(&args);
    let none = Assumptions::default();
    let d = distribution(&c.program, &none, DEFAULT_LIMIT, proc, args).unwrap();
    let p = |name: &str| {
        let (n, d) = d.probability(&OutcomeKey::Named(name.into()));
        format!("{n}/{d}")
    };
    assert_eq!(p("miss"), "21/100");
    assert_eq!(p("pinned_down"), "17/50");
    assert_eq!(p("eliminated"), "9/20");
}

#[test]
fn sum_of_100d6_is_exact() {
    let c = compile("resolve s() { result 100d6 }");
    let (proc, _) = c.program.proc_by_name("s").unwrap();
    let none = Assumptions::default();
    let d = distribution(&c.program, &none, DEFAULT_LIMIT, proc, Vec::new()).unwrap();
    let six100 = BigUint::from(6u32).pow(100);
    assert_eq!(d.total(), &six100, "the natural denominator is 6^100");
    let mut mean_num = BigUint::zero();
    for (k, w) in d.iter() {
        mean_num += w.as_ref() * BigUint::from(k.numeric().unwrap() as u64);
    }
    assert_eq!(mean_num, d.total() * 350u32, "mean is 350");
    let w350 = d
        .weight(&OutcomeKey::Value(sandtable_runtime::Val::Int(350)))
        .unwrap();
    assert_eq!(
        w350.to_string(),
        "15237092858379903128111407924086725562812976591205826140530848189030092709496"
    );
    assert_eq!(d.len(), 501);
}

/// The four benchmark queries (runtime/benches/queries.sand): dense and sparse agree, and a
/// session asked twice gives the same answer (remembered the second time).
#[test]
fn benchmark_queries_dense_sparse_and_remembered_agree() {
    let src =
        std::fs::read_to_string(sandtable_conformance::root().join("runtime/benches/queries.sand"))
            .unwrap();
    let c = compile(&src);
    let none = Assumptions::default();
    let session = Session::new(&c.program, &none, DEFAULT_LIMIT);
    for q in [
        "opposed_d10",
        "hit_save_pool",
        "sum_100d6",
        "highest_3_of_10d6",
    ] {
        let (proc, p) = c.program.proc_by_name(q).unwrap();
        let defaults: Vec<_> = p
            .params
            .iter()
            .map(|pa| pa.default.clone().expect("every parameter has a default"))
            .collect();
        let args = sandtable_runtime::query::args(&defaults);
        let dense = session.distribution(proc, args.clone()).unwrap();
        let again = session.distribution(proc, args.clone()).unwrap();
        assert!(
            std::rc::Rc::ptr_eq(&dense, &again),
            "{q}: asked again, remembered"
        );
        let sparse = Exact::<BigUint>::sparse(&c.program, &none, DEFAULT_LIMIT)
            .query(proc, args)
            .unwrap();
        assert_eq!(dense.to_dist(), sparse, "{q}");
    }
}

/// A die whose repeated faces lie close enough for an array though its distinct faces alone
/// are not worth one: once read as certain (every roll a 1); its rolls, sums and keeps agree
/// with the sparse evaluator.
#[test]
fn a_die_of_repeated_faces_far_apart_is_not_certain() {
    let c = compile(
        "die lumpy = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 30]\n\
         resolve one() {\n  result lumpy\n}\n\
         resolve two() {\n  result lumpy + lumpy\n}\n\
         resolve keep() {\n  result highest(1, 3d4) + lumpy\n}\n",
    );
    let none = Assumptions::default();
    for q in ["one", "two", "keep"] {
        let (proc, _) = c.program.proc_by_name(q).unwrap();
        let dense = distribution(&c.program, &none, DEFAULT_LIMIT, proc, Vec::new()).unwrap();
        let sparse = Exact::<BigUint>::sparse(&c.program, &none, DEFAULT_LIMIT)
            .query(proc, Vec::new())
            .unwrap();
        assert_eq!(dense.to_dist(), sparse, "{q}");
    }
    let (proc, _) = c.program.proc_by_name("one").unwrap();
    let d = exact(&c.program, proc);
    assert_eq!(
        d.get(&OutcomeKey::Value(sandtable_runtime::value::Val::Int(30))),
        Some(&(BigUint::from(1u32), BigUint::from(11u32)))
    );
}

#[test]
fn exact_refuses_what_would_explode_with_the_size() {
    let c = compile(
        "resolve big() {\n  let a = 3d100\n  let b = 3d100\n  let c = 3d100\n  result a * b * c + a * b * c\n}",
    );
    let (proc, _) = c.program.proc_by_name("big").unwrap();
    let none = Assumptions::default();
    let err = distribution(&c.program, &none, 1_000_000, proc, Vec::new()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("limit 1000000") && msg.contains("--samples"),
        "{msg}"
    );
}

#[test]
fn unknown_values_stop_with_their_name_until_assumed() {
    let c = compile(
        "marker trench \"Trench\" { target_modifier: ? \"not printed\" }\nresolve f() { result d10 + trench.target_modifier }",
    );
    let (proc, _) = c.program.proc_by_name("f").unwrap();
    let none = Assumptions::default();
    let err = distribution(&c.program, &none, DEFAULT_LIMIT, proc, Vec::new()).unwrap_err();
    assert!(
        err.to_string()
            .contains("--assume trench.target_modifier=VALUE"),
        "{err}"
    );
    let a = sandtable_conformance::assumptions(
        &c.program,
        &[("trench.target_modifier".into(), "2".into())],
        &[],
    )
    .unwrap();
    let d = distribution(&c.program, &a, DEFAULT_LIMIT, proc, Vec::new()).unwrap();
    assert_eq!(d.len(), 10);
    assert!(
        d.weight(&OutcomeKey::Value(sandtable_runtime::Val::Int(12)))
            .is_some()
    );
}

/// A sum of dice given as the result leaves the evaluator in its kernel's words (one word,
/// two, five) or as weights (a die with a gap): every width and shape reads as the sparse
/// evaluator's map, alone, mixed with other branches, with a random count, and called.
#[test]
fn sums_given_as_results_agree_with_the_sparse_evaluator() {
    let c = compile(
        "die custom = [0, 1, 1, 3]\n\
         resolve few() {\n  result 3d6\n}\n\
         resolve wide() {\n  result 30d6\n}\n\
         resolve huge() {\n  result sum(pool(100, d6))\n}\n\
         resolve gappy() {\n  result sum(pool(5, custom))\n}\n\
         resolve random_count() {\n  result sum(pool(d3, d6))\n}\n\
         resolve either() {\n  if d2 == 1 {\n    result 10d6\n  } else {\n    result 40d6\n  }\n}\n\
         resolve called() {\n  result huge() + 1\n}\n",
    );
    let none = Assumptions::default();
    for q in [
        "few",
        "wide",
        "huge",
        "gappy",
        "random_count",
        "either",
        "called",
    ] {
        let (proc, _) = c.program.proc_by_name(q).unwrap();
        let dense = distribution(&c.program, &none, DEFAULT_LIMIT, proc, Vec::new()).unwrap();
        let sparse = Exact::<BigUint>::sparse(&c.program, &none, DEFAULT_LIMIT)
            .query(proc, Vec::new())
            .unwrap();
        assert_eq!(dense.to_dist(), sparse, "{q}");
        let sum = dense
            .iter()
            .fold(BigUint::zero(), |s, (_, w)| s + w.as_ref());
        assert_eq!(&sum, dense.total(), "{q}: weights add up to the total");
    }
}
