//! Outputs and the export rules checked when an operation completes.

use super::Op;
use crate::resolve::{LiveResolver, importers, value_text};
use crate::state::StoredOutput;
use crate::status::StackStatus;
use std::collections::HashSet;

impl Op {
    /// Resolves the outputs and checks the exports; sets them on the stack.
    pub fn finish_outputs(&self) -> Result<(), String> {
        let Some(prepared) = &self.prepared else {
            return Ok(());
        };
        let mut st = self.inner.lock();
        let (outputs, imported) = {
            let Some(stack) = st.stacks.get(&self.stack_id) else {
                return Err("stack vanished".into());
            };
            let resolver = LiveResolver::new(&st, stack);
            let resolved = prepared.resolve_outputs(&resolver).map_err(|errors| {
                errors
                    .into_iter()
                    .map(|d| d.message)
                    .collect::<Vec<_>>()
                    .join("; ")
            })?;
            let outputs: Vec<StoredOutput> = resolved
                .into_iter()
                .map(|o| StoredOutput {
                    key: o.name,
                    value: value_text(&o.value),
                    description: o.description,
                    export_name: o.export_name,
                })
                .collect();
            let mut seen = HashSet::new();
            for o in &outputs {
                let Some(name) = &o.export_name else { continue };
                if !seen.insert(name.clone()) {
                    return Err(format!(
                        "Template format error: duplicate Export names found: {name}"
                    ));
                }
                if let Some(other) = st.stacks.values().find(|s| {
                    s.stack_id != self.stack_id
                        && s.region == self.region
                        && s.status != StackStatus::DELETE_COMPLETE
                        && s.outputs
                            .iter()
                            .any(|x| x.export_name.as_deref() == Some(name))
                }) {
                    return Err(format!(
                        "Export with name {name} is already exported by stack {}",
                        other.stack_name
                    ));
                }
            }
            for old in &stack.outputs {
                let Some(name) = &old.export_name else {
                    continue;
                };
                let users = importers(&st, &self.region, name, &self.stack_id);
                if users.is_empty() {
                    continue;
                }
                match outputs
                    .iter()
                    .find(|o| o.export_name.as_ref() == Some(name))
                {
                    None => {
                        return Err(format!(
                            "Export {name} cannot be deleted as it is in use by {}",
                            crate::resolve::and_list(&users)
                        ));
                    }
                    Some(o) if o.value != old.value => {
                        return Err(format!(
                            "Cannot update export {name} as it is in use by {}",
                            crate::resolve::and_list(&users)
                        ));
                    }
                    _ => {}
                }
            }
            (outputs, resolver.imported.into_inner())
        };
        if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
            stack.outputs = outputs;
            for name in imported {
                if !stack.imports.contains(&name) {
                    stack.imports.push(name);
                }
            }
            if let Some(reason) = self.persist(self.inner.save_stack(stack)) {
                return Err(reason);
            }
        }
        Ok(())
    }
}
