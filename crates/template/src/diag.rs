//! Diagnostics: every problem found in a template, in AWS's wording, with where it is.

/// One problem in a template. `message` is exactly what AWS would say (e.g. `Template format
/// error: ...`); the position is cumulo's addition so a user can find it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct Diagnostic {
    pub message: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// Path in the template, e.g. `Resources/Bucket/Properties`.
    pub path: Option<String>,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>) -> Self {
        Diagnostic {
            message: message.into(),
            line: None,
            column: None,
            path: None,
        }
    }

    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The message as AWS's API words it. For a document that does not parse AWS says only
    /// where (`Template format error: JSON not well-formed. (line 3, column 5)`); the detail
    /// cumulo adds after that is for `cumulo validate`, not for the API's answer.
    pub fn aws_message(&self) -> String {
        use crate::errors::{JSON_NOT_WELL_FORMED, YAML_NOT_WELL_FORMED};
        for prefix in [JSON_NOT_WELL_FORMED, YAML_NOT_WELL_FORMED] {
            if self.message.starts_with(prefix) {
                return match (self.line, self.column) {
                    (Some(l), Some(c)) => format!("{prefix} (line {l}, column {c})"),
                    _ => prefix.to_string(),
                };
            }
        }
        self.message.clone()
    }

    fn render(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{} (line {l}, column {c})", self.message),
            _ => self.message.clone(),
        }
    }
}
