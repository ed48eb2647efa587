//! Writing HCL: literals (strings escaped so that `${` and `%{` stay text), `jsonencode`d
//! documents, nested blocks, and a resource with its `import` block and lifecycle.

use serde_json::{Map, Value};
use std::fmt::Write as _;

/// One argument's value as it is written.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// A literal: `name = "x"`, `[...]`, `{ "k" = "v" }`.
    Value(Value),
    /// A JSON document: `jsonencode(...)` of an object, or a JSON text as a string.
    Json(Value),
    /// One nested block (`alias { ... }`); keys are already argument names.
    Block(Map<String, Value>),
    /// Repeated nested blocks.
    Blocks(Vec<Map<String, Value>>),
    /// An expression written as it is (`aws.us_east_1` for a resource's provider).
    Expr(String),
}

/// Marks a Terraform reference inside a resolved value (`\u{1}aws_sqs_queue.q.arn\u{1}`): the
/// value of an attribute the inventory did not record, of a resource the same Terraform
/// imports. [`string`] writes it as an expression.
pub const REFERENCE: char = '\u{1}';

/// A resolved value standing for `expr`.
pub fn reference(expr: &str) -> String {
    format!("{REFERENCE}{expr}{REFERENCE}")
}

/// A quoted HCL string; a whole [`reference`] is written as its bare expression and one inside
/// text as an interpolation.
pub fn string(s: &str) -> String {
    let parts: Vec<&str> = s.split(REFERENCE).collect();
    if parts.len() == 3 && parts[0].is_empty() && parts[2].is_empty() {
        return parts[1].to_string();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 {
            out.push_str("${");
            out.push_str(part);
            out.push('}');
        } else {
            escape_into(&mut out, part);
        }
    }
    out.push('"');
    out
}

fn escape_into(out: &mut String, s: &str) {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Template sequences stay literal text.
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// Whether `s` can be written bare as a name (an identifier).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A literal expression, `indent` spaces deep for continuation lines.
pub fn literal(v: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent + 2);
    let close = " ".repeat(indent);
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Array(items) if items.is_empty() => "[]".into(),
        Value::Array(items) => {
            let mut out = String::from("[\n");
            for item in items {
                let _ = writeln!(out, "{pad}{},", literal(item, indent + 2));
            }
            out.push_str(&close);
            out.push(']');
            out
        }
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Object(map) => {
            let mut out = String::from("{\n");
            for (k, item) in map {
                let _ = writeln!(out, "{pad}{} = {}", string(k), literal(item, indent + 2));
            }
            out.push_str(&close);
            out.push('}');
            out
        }
    }
}

/// Writes `name = value` or nested blocks at `indent`.
pub fn write_arg(out: &mut String, name: &str, arg: &Arg, indent: usize) {
    let pad = " ".repeat(indent);
    match arg {
        Arg::Value(v) => {
            let _ = writeln!(out, "{pad}{name} = {}", literal(v, indent));
        }
        Arg::Json(Value::String(text)) => {
            let _ = writeln!(out, "{pad}{name} = {}", string(text));
        }
        Arg::Json(v) => {
            let _ = writeln!(out, "{pad}{name} = jsonencode({})", literal(v, indent));
        }
        Arg::Block(map) => write_block(out, name, map, indent),
        Arg::Blocks(maps) => maps.iter().for_each(|m| write_block(out, name, m, indent)),
        Arg::Expr(e) => {
            let _ = writeln!(out, "{pad}{name} = {e}");
        }
    }
}

/// A block whose object members become nested blocks and lists of objects repeated blocks.
fn write_block(out: &mut String, name: &str, map: &Map<String, Value>, indent: usize) {
    let pad = " ".repeat(indent);
    let _ = writeln!(out, "{pad}{name} {{");
    for (k, v) in map {
        let arg = match v {
            Value::Object(m) => Arg::Block(m.clone()),
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
                Arg::Blocks(
                    items
                        .iter()
                        .filter_map(|i| i.as_object().cloned())
                        .collect(),
                )
            }
            other => Arg::Value(other.clone()),
        };
        write_arg(out, k, &arg, indent + 2);
    }
    let _ = writeln!(out, "{pad}}}");
}

/// `PascalCase`/`camelCase` → `snake_case` (`VPCId` → `vpc_id`, `TargetGroupArn` →
/// `target_group_arn`), how the provider names most arguments after the API's members.
pub fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// One resource with its import block.
pub struct ResourceBlock<'a> {
    pub tf: &'a str,
    pub name: &'a str,
    pub id: &'a str,
    /// Comment lines above the resource (where it came from, what was not carried over).
    pub comments: &'a [String],
    pub args: &'a [(String, Arg)],
    pub prevent_destroy: bool,
    pub ignore_changes: &'a [&'a str],
}

impl ResourceBlock<'_> {
    pub fn write(&self, out: &mut String) {
        for c in self.comments {
            for line in c.lines() {
                let _ = writeln!(out, "# {line}");
            }
        }
        let _ = writeln!(out, "import {{");
        let _ = writeln!(out, "  to = {}.{}", self.tf, self.name);
        let _ = writeln!(out, "  id = {}", string(self.id));
        let _ = writeln!(out, "}}\n");
        let _ = writeln!(out, "resource {} {} {{", string(self.tf), string(self.name));
        for (name, arg) in self.args {
            write_arg(out, name, arg, 2);
        }
        if self.prevent_destroy || !self.ignore_changes.is_empty() {
            let _ = writeln!(out, "\n  lifecycle {{");
            if self.prevent_destroy {
                let _ = writeln!(out, "    prevent_destroy = true");
            }
            if !self.ignore_changes.is_empty() {
                let _ = writeln!(
                    out,
                    "    ignore_changes = [{}]",
                    self.ignore_changes.join(", ")
                );
            }
            let _ = writeln!(out, "  }}");
        }
        let _ = writeln!(out, "}}\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_keep_template_sequences_literal() {
        assert_eq!(string(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(string("${x} %{y} $z\n"), r#""$${x} %%{y} $z\n""#);
        assert_eq!(
            string(&reference("aws_sqs_queue.q.arn")),
            "aws_sqs_queue.q.arn"
        );
        let inside = format!("{}/*", reference("aws_s3_bucket.b.arn"));
        assert_eq!(string(&inside), r#""${aws_s3_bucket.b.arn}/*""#);
    }

    #[test]
    fn snake_case_of_api_names() {
        assert_eq!(snake("VPCId"), "vpc_id");
        assert_eq!(snake("TargetGroupArn"), "target_group_arn");
        assert_eq!(snake("Type"), "type");
        assert_eq!(snake("HTTPCode"), "http_code");
    }

    #[test]
    fn a_resource_with_its_import_and_lifecycle() {
        let mut out = String::new();
        ResourceBlock {
            tf: "aws_s3_bucket",
            name: "data_Bucket",
            id: "my-bucket",
            comments: &["Bucket (AWS::S3::Bucket)".into()],
            args: &[
                ("bucket".into(), Arg::Value(json!("my-bucket"))),
                ("tags".into(), Arg::Value(json!({"team": "a"}))),
                ("policy".into(), Arg::Json(json!({"Version": "2012-10-17"}))),
                (
                    "alias".into(),
                    Arg::Block(
                        serde_json::from_value(json!({"name": "x", "list": [{"a": 1}]})).unwrap(),
                    ),
                ),
            ],
            prevent_destroy: true,
            ignore_changes: &["tags"],
        }
        .write(&mut out);
        assert_eq!(
            out,
            r#"# Bucket (AWS::S3::Bucket)
import {
  to = aws_s3_bucket.data_Bucket
  id = "my-bucket"
}

resource "aws_s3_bucket" "data_Bucket" {
  bucket = "my-bucket"
  tags = {
    "team" = "a"
  }
  policy = jsonencode({
    "Version" = "2012-10-17"
  })
  alias {
    name = "x"
    list {
      a = 1
    }
  }

  lifecycle {
    prevent_destroy = true
    ignore_changes = [tags]
  }
}

"#
        );
    }
}
