//! Request bodies: a small element tree parsed with quick-xml.
//!
//! S3 request documents are small (configurations, delete lists, part lists), so a tree is simpler
//! and safer than streaming. Namespaces are dropped (clients send S3's or none); any parse error is
//! S3's `MalformedXML`. Configurations that S3 echoes back are re-serialized from the tree, so what
//! is stored is always well-formed and escaped.

use super::errors;
use cumulo_wire::AwsError;
use cumulo_wire::xml::escape;
use quick_xml::events::Event;

/// One XML element: local name, text content and child elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    /// The first child with this name.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// All children with this name.
    pub fn children<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The trimmed text of the first child with this name.
    pub fn child_text(&self, name: &str) -> Option<&str> {
        self.child(name).map(|c| c.text.trim())
    }

    /// Serializes the element (and its subtree); `xmlns` is put on this element only.
    pub fn to_xml(&self, xmlns: Option<&str>) -> String {
        let mut out = String::new();
        self.write(&mut out, xmlns);
        out
    }

    fn write(&self, out: &mut String, xmlns: Option<&str>) {
        out.push('<');
        out.push_str(&self.name);
        if let Some(ns) = xmlns {
            out.push_str(" xmlns=\"");
            out.push_str(&escape(ns));
            out.push('"');
        }
        out.push('>');
        if self.children.is_empty() {
            out.push_str(&escape(&self.text));
        }
        for c in &self.children {
            c.write(out, None);
        }
        out.push_str("</");
        out.push_str(&self.name);
        out.push('>');
    }
}

/// Deeper documents are refused: no S3 request document nests anywhere near this, and the tree
/// is serialized and dropped recursively, so depth must stay bounded.
const MAX_DEPTH: usize = 32;

/// Parses a document into its root element; anything malformed is `MalformedXML`.
pub fn parse(body: &[u8]) -> Result<Element, AwsError> {
    let mut reader = quick_xml::Reader::from_reader(body);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        match reader.read_event() {
            Err(_) => return Err(errors::malformed_xml()),
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => {
                if root.is_some() || stack.len() >= MAX_DEPTH {
                    return Err(errors::malformed_xml());
                }
                stack.push(Element {
                    name: local_name(e.local_name().as_ref())?,
                    ..Default::default()
                });
            }
            Ok(Event::Empty(e)) => {
                let el = Element {
                    name: local_name(e.local_name().as_ref())?,
                    ..Default::default()
                };
                attach(&mut stack, &mut root, el)?;
            }
            Ok(Event::End(_)) => {
                let el = stack.pop().ok_or_else(errors::malformed_xml)?;
                attach(&mut stack, &mut root, el)?;
            }
            Ok(Event::Text(t)) => {
                let text = t.unescape().map_err(|_| errors::malformed_xml())?;
                match stack.last_mut() {
                    Some(top) => top.text.push_str(&text),
                    None if text.trim().is_empty() => {}
                    None => return Err(errors::malformed_xml()),
                }
            }
            Ok(Event::CData(c)) => {
                let text = String::from_utf8(c.into_inner().into_owned())
                    .map_err(|_| errors::malformed_xml())?;
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&text);
                }
            }
            Ok(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err(errors::malformed_xml());
    }
    root.ok_or_else(errors::malformed_xml)
}

/// Parses and checks the root element's name.
pub fn parse_root(body: &[u8], root: &str) -> Result<Element, AwsError> {
    let el = parse(body)?;
    if el.name != root {
        return Err(errors::malformed_xml());
    }
    Ok(el)
}

fn local_name(raw: &[u8]) -> Result<String, AwsError> {
    String::from_utf8(raw.to_vec()).map_err(|_| errors::malformed_xml())
}

fn attach(stack: &mut [Element], root: &mut Option<Element>, el: Element) -> Result<(), AwsError> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(el),
        None if root.is_none() => *root = Some(el),
        None => return Err(errors::malformed_xml()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_with_namespace_and_entities() {
        let doc = br#"<?xml version="1.0"?>
            <Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Object><Key>a &amp; b</Key></Object>
              <Object><Key>c</Key><VersionId>v1</VersionId></Object>
              <Quiet>true</Quiet>
            </Delete>"#;
        let d = parse_root(doc, "Delete").unwrap();
        let keys: Vec<_> = d
            .children("Object")
            .filter_map(|o| o.child_text("Key"))
            .collect();
        assert_eq!(keys, vec!["a & b", "c"]);
        assert_eq!(d.child_text("Quiet"), Some("true"));
        assert_eq!(
            d.children("Object").nth(1).unwrap().child_text("VersionId"),
            Some("v1")
        );
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            &b""[..],
            b"<a>",
            b"<a></b>",
            b"<a/><b/>",
            b"text",
            b"<a>&bogus;</a>",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code, "MalformedXML", "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse_root(b"<A/>", "B").unwrap_err().code, "MalformedXML");
        let deep = "<a>".repeat(100_000);
        assert_eq!(parse(deep.as_bytes()).unwrap_err().code, "MalformedXML");
    }

    #[test]
    fn round_trips_escaped() {
        let d = parse(b"<R><K>&lt;x&gt;</K><E/></R>").unwrap();
        assert_eq!(
            d.to_xml(Some("urn:s3")),
            "<R xmlns=\"urn:s3\"><K>&lt;x&gt;</K><E></E></R>"
        );
    }
}
