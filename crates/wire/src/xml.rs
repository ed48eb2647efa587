//! A tiny XML writer for response bodies. Services build documents element by element; text is
//! always escaped here so no service can emit malformed XML from user data.

use std::fmt::Write;

/// Escapes text for XML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
    out
}

/// Builds an XML document as a string.
#[derive(Debug, Default)]
pub struct XmlWriter {
    buf: String,
    stack: Vec<&'static str>,
}

impl XmlWriter {
    /// Starts a document with the XML declaration.
    pub fn new() -> Self {
        XmlWriter {
            buf: String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
            stack: Vec::new(),
        }
    }

    /// A fragment to splice into a document: no XML declaration.
    pub fn new_fragment() -> Self {
        XmlWriter::default()
    }

    /// Opens `<name>` or `<name xmlns="ns">`.
    pub fn open(&mut self, name: &'static str, xmlns: Option<&str>) -> &mut Self {
        match xmlns {
            Some(ns) => {
                let _ = write!(self.buf, "<{name} xmlns=\"{}\">", escape(ns));
            }
            None => {
                let _ = write!(self.buf, "<{name}>");
            }
        }
        self.stack.push(name);
        self
    }

    /// Closes the innermost open element.
    pub fn close(&mut self) -> &mut Self {
        if let Some(name) = self.stack.pop() {
            let _ = write!(self.buf, "</{name}>");
        }
        self
    }

    /// `<name>text</name>` with the text escaped.
    pub fn elem(&mut self, name: &str, text: &str) -> &mut Self {
        let _ = write!(self.buf, "<{name}>{}</{name}>", escape(text));
        self
    }

    /// `elem` only when the value is present.
    pub fn opt(&mut self, name: &str, text: Option<&str>) -> &mut Self {
        if let Some(t) = text {
            self.elem(name, t);
        }
        self
    }

    /// Appends pre-rendered, already escaped XML.
    pub fn raw(&mut self, xml: &str) -> &mut Self {
        self.buf.push_str(xml);
        self
    }

    /// Closes whatever is still open and returns the document.
    pub fn finish(mut self) -> String {
        while !self.stack.is_empty() {
            self.close();
        }
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_user_text() {
        let mut w = XmlWriter::new();
        w.open("A", Some("urn:x")).elem("B", "<&>\"'");
        let doc = w.finish();
        assert!(doc.ends_with("<A xmlns=\"urn:x\"><B>&lt;&amp;&gt;&quot;&apos;</B></A>"));
    }
}
