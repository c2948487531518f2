//! Inputs the compiler typed (`sandtable_compiler::assume`: `--set`, `--assume`, assumptions
//! files) as the runtime's values. The runtime reads no input text itself.

use sandtable_ir::{Supplied, Value};

use crate::interp::Assumptions;
use crate::value::Val;

/// The values supplied for the book's unknowns, by unknown id.
pub fn assumptions(supplied: &Supplied) -> Assumptions {
    Assumptions {
        values: supplied
            .values
            .iter()
            .filter_map(|(id, v)| Some((*id, Val::from_const(v)?)))
            .collect(),
    }
}

/// A procedure's arguments. A default that rests on an unknown has no value yet: it is
/// `()` until the procedure reads it.
pub fn args(values: &[Value]) -> Vec<Val> {
    values
        .iter()
        .map(|v| Val::from_const(v).unwrap_or(Val::Unit))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_inputs_become_runtime_values() {
        let mut s = Supplied::default();
        s.values.insert(3, Value::Length(254));
        s.values.insert(
            5,
            Value::List(vec![Value::Symbol("a".into()), Value::Bool(true)]),
        );
        s.values.insert(7, Value::Unknown(0));
        let a = assumptions(&s);
        assert_eq!(a.values.get(&3), Some(&Val::Int(254)));
        assert_eq!(
            a.values.get(&5),
            Some(&Val::List(vec![Val::Sym("a".into()), Val::Bool(true)]))
        );
        assert_eq!(a.values.get(&7), None, "an unknown is no value");
        assert_eq!(
            args(&[Value::Int(2), Value::Unknown(1)]),
            vec![Val::Int(2), Val::Unit]
        );
    }
}
