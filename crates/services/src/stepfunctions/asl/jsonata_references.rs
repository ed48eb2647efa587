//! What Step Functions refuses in a JSONata expression that parses: a reference to the context
//! value at the top level. A state's expressions are evaluated with no context value (the
//! input is `$states.input`), so AWS refuses a path that starts from a field name, and cumulo
//! the wildcards `*` and `**` and the context references `$` and `$$`, where they would read
//! it: outside predicates, later path
//! steps, sort terms, grouping pairs, function bodies and transforms, which have a context of
//! their own.

use super::Node;

/// The names the expression reads from the absent context value, each once, in order.
pub(super) fn top_level(n: &Node) -> Vec<String> {
    let mut out = Vec::new();
    walk(n, true, &mut out);
    out
}

fn walk(n: &Node, top: bool, out: &mut Vec<String>) {
    let mut name = |s: String| {
        if top && !out.contains(&s) {
            out.push(s);
        }
    };
    match n {
        Node::Name(s) => name(s.clone()),
        // The wildcards read the context value as a field name does.
        Node::Wild => name("*".into()),
        Node::Descendants => name("**".into()),
        Node::Context => name("$".into()),
        Node::Var(v) if v == "$" => name("$$".into()),
        Node::Path(l, r) | Node::Filter(l, r) => {
            walk(l, top, out);
            walk(r, false, out);
        }
        Node::OrderBy(l, terms) => {
            walk(l, top, out);
            terms.iter().for_each(|(_, t)| walk(t, false, out));
        }
        Node::Group(l, pairs) => {
            walk(l, top, out);
            for (k, v) in pairs {
                walk(k, false, out);
                walk(v, false, out);
            }
        }
        Node::Focus(l, _) | Node::Index(l, _) => walk(l, top, out),
        Node::Tuples(p) => p.first_step(|first| walk(first, top, out)),
        Node::Bin(_, l, r) | Node::Chain(l, r) | Node::Range(l, r) => {
            walk(l, top, out);
            walk(r, top, out);
        }
        Node::Neg(x) | Node::Bind(_, x) => walk(x, top, out),
        Node::Cond(c, t, e) => {
            walk(c, top, out);
            walk(t, top, out);
            if let Some(e) = e {
                walk(e, top, out);
            }
        }
        Node::Array(items) | Node::Block(items) => items.iter().for_each(|i| walk(i, top, out)),
        Node::Object(pairs) => {
            for (k, v) in pairs {
                walk(k, top, out);
                walk(v, top, out);
            }
        }
        Node::Call(f, args) => {
            walk(f, top, out);
            args.iter().for_each(|a| walk(a, top, out));
        }
        _ => {}
    }
}
