//! Deploy progress as the CDK CLI shows it: one line per resource event,
//! `Stack | done/total | time | STATUS | Type | Logical reason`. On a terminal the lines scroll
//! above an indicatif bar; otherwise (CI logs, pipes) they are plain lines. With
//! `--output json` they go to stderr so stdout holds only the JSON document.

use cumulo_engine::StackEvent;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};

pub struct Progress {
    bar: Option<ProgressBar>,
    to_stderr: bool,
    stack: String,
    total: usize,
    done: usize,
    /// Every event seen, for `--output json`.
    pub events: Vec<StackEvent>,
}

impl Progress {
    /// `json`: stdout is reserved for the result document.
    pub fn new(json: bool) -> Self {
        let terminal = if json {
            std::io::stderr().is_terminal()
        } else {
            std::io::stdout().is_terminal()
        };
        let bar = terminal.then(|| {
            let bar = ProgressBar::new(0);
            if let Ok(style) =
                ProgressStyle::with_template("{spinner} {prefix} [{bar:30}] {pos}/{len} {msg}")
            {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        });
        Progress {
            bar,
            to_stderr: json,
            stack: String::new(),
            total: 0,
            done: 0,
            events: Vec::new(),
        }
    }

    /// A stack operation begins: `resources` is how many resource events to count to.
    pub fn start(&mut self, stack: &str, resources: usize) {
        self.stack = stack.to_string();
        self.total = resources + 1;
        self.done = 0;
        if let Some(bar) = &self.bar {
            bar.set_length(self.total as u64);
            bar.set_position(0);
            bar.set_prefix(stack.to_string());
        }
    }

    fn line(&self, text: &str) {
        match &self.bar {
            // Suspended around the write, so the line lands above the bar whatever the bar's
            // refresh rate.
            Some(bar) => bar.suspend(|| {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{text}");
            }),
            None if self.to_stderr => eprintln!("{text}"),
            None => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{text}");
            }
        }
    }

    /// A message that is not an event.
    pub fn note(&mut self, text: &str) {
        self.line(text);
    }

    pub fn event(&mut self, e: &StackEvent) {
        if e.resource_status.ends_with("_COMPLETE") || e.resource_status.ends_with("_FAILED") {
            self.done = (self.done + 1).min(self.total.max(1));
        }
        let time = e.timestamp.format("%-I:%M:%S %p");
        let width = self.total.to_string().len();
        let mut text = format!(
            "{} | {:>width$}/{} | {time} | {:<20} | {:<26} | {}",
            if self.stack.is_empty() {
                &e.stack_name
            } else {
                &self.stack
            },
            self.done,
            self.total,
            e.resource_status,
            e.resource_type,
            e.logical_resource_id,
        );
        if let Some(physical) = e
            .physical_resource_id
            .as_ref()
            .filter(|p| !p.is_empty() && e.resource_type != "AWS::CloudFormation::Stack")
        {
            text.push_str(&format!(" ({physical})"));
        }
        if let Some(reason) = e.resource_status_reason.as_ref().filter(|r| !r.is_empty()) {
            text.push_str(&format!(" {reason}"));
        }
        self.line(&text);
        if let Some(bar) = &self.bar {
            bar.set_position(self.done as u64);
            bar.set_message(e.logical_resource_id.clone());
        }
        self.events.push(e.clone());
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
