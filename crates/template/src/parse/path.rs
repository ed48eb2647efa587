//! The path of the node being parsed, built in one reusable buffer.

/// `Resources/Bucket/Properties`-style path; segments are pushed on the way down and truncated on
/// the way up, so a template costs one allocation per located node (the map key), not per segment.
#[derive(Debug, Default)]
pub(super) struct NodePath {
    buf: String,
}

impl NodePath {
    /// Appends a segment; returns the length to [`NodePath::truncate`] back to.
    pub(super) fn push(&mut self, segment: &str) -> usize {
        let mark = self.buf.len();
        if !self.buf.is_empty() {
            self.buf.push('/');
        }
        self.buf.push_str(segment);
        mark
    }

    /// Appends a sequence index.
    pub(super) fn push_index(&mut self, index: usize) -> usize {
        use std::fmt::Write;
        let mark = self.buf.len();
        if !self.buf.is_empty() {
            self.buf.push('/');
        }
        // Writing to a String cannot fail.
        let _ = write!(self.buf, "{index}");
        mark
    }

    pub(super) fn truncate(&mut self, mark: usize) {
        self.buf.truncate(mark);
    }

    pub(super) fn as_str(&self) -> &str {
        &self.buf
    }
}
