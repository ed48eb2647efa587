//! XML documents read into a small element tree (local names, text, children): what the
//! model-driven codecs read request bodies (rest-xml) and answers (query, EC2) from.

use crate::AwsError;
use quick_xml::events::Event;

/// An XML element: local name, text, children.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) children: Vec<Element>,
}

impl Element {
    pub(crate) fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }
}

/// Deeper documents are refused (no API document nests near this; parsing stays bounded).
const MAX_DEPTH: usize = 48;

fn malformed(what: &str) -> AwsError {
    AwsError::bad_request("MalformedInput", format!("Malformed XML: {what}"))
}

pub(crate) fn parse(body: &[u8]) -> Result<Element, AwsError> {
    let mut reader = quick_xml::Reader::from_reader(body);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let attach = |stack: &mut Vec<Element>, root: &mut Option<Element>, el: Element| {
        match stack.last_mut() {
            Some(p) => p.children.push(el),
            None if root.is_none() => *root = Some(el),
            None => return Err(malformed("more than one root element")),
        }
        Ok(())
    };
    loop {
        match reader.read_event() {
            Err(e) => return Err(malformed(&e.to_string())),
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => {
                if root.is_some() || stack.len() >= MAX_DEPTH {
                    return Err(malformed("unexpected element"));
                }
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                stack.push(Element {
                    name,
                    ..Default::default()
                });
            }
            Ok(Event::Empty(e)) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                attach(
                    &mut stack,
                    &mut root,
                    Element {
                        name,
                        ..Default::default()
                    },
                )?;
            }
            Ok(Event::End(_)) => {
                let el = stack.pop().ok_or_else(|| malformed("unbalanced end tag"))?;
                attach(&mut stack, &mut root, el)?;
            }
            Ok(Event::Text(t)) => {
                let text = t.unescape().map_err(|e| malformed(&e.to_string()))?;
                match stack.last_mut() {
                    Some(top) => top.text.push_str(&text),
                    None if text.trim().is_empty() => {}
                    None => return Err(malformed("text outside the root element")),
                }
            }
            Ok(Event::CData(c)) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&String::from_utf8_lossy(&c.into_inner()));
                }
            }
            Ok(_) => {}
        }
    }
    if !stack.is_empty() {
        return Err(malformed("unclosed element"));
    }
    root.ok_or_else(|| malformed("no root element"))
}
