//! The task sizes Fargate offers (AWS's table of CPU units and memory MiB), and the task-level
//! values a definition gives in either of the forms the API accepts (`1024`, `1 vCPU`, `2 GB`).

/// The memory choices (MiB) for one CPU size: an explicit list, or a range with a step.
enum Memory {
    List(&'static [i64]),
    Range { from: i64, to: i64, step: i64 },
}

const TABLE: &[(i64, Memory)] = &[
    (256, Memory::List(&[512, 1024, 2048])),
    (
        512,
        Memory::Range {
            from: 1024,
            to: 4096,
            step: 1024,
        },
    ),
    (
        1024,
        Memory::Range {
            from: 2048,
            to: 8192,
            step: 1024,
        },
    ),
    (
        2048,
        Memory::Range {
            from: 4096,
            to: 16384,
            step: 1024,
        },
    ),
    (
        4096,
        Memory::Range {
            from: 8192,
            to: 30720,
            step: 1024,
        },
    ),
    (
        8192,
        Memory::Range {
            from: 16384,
            to: 61440,
            step: 4096,
        },
    ),
    (
        16384,
        Memory::Range {
            from: 32768,
            to: 122880,
            step: 8192,
        },
    ),
];

/// Whether Fargate offers a task of `cpu` units with `memory` MiB.
pub fn offered(cpu: i64, memory: i64) -> bool {
    TABLE.iter().any(|(c, m)| {
        *c == cpu
            && match m {
                Memory::List(l) => l.contains(&memory),
                Memory::Range { from, to, step } => {
                    (*from..=*to).contains(&memory) && (memory - from) % step == 0
                }
            }
    })
}

/// CPU units from `1024` or `1 vCPU` / `0.25 vcpu`.
pub fn cpu_units(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Ok(n) = t.parse::<i64>() {
        return Some(n);
    }
    let lower = t.to_ascii_lowercase();
    let v = lower.strip_suffix("vcpu")?.trim().parse::<f64>().ok()?;
    Some((v * 1024.0).round() as i64)
}

/// Memory MiB from `2048` or `2 GB` / `0.5gb`.
pub fn memory_mib(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Ok(n) = t.parse::<i64>() {
        return Some(n);
    }
    let lower = t.to_ascii_lowercase();
    let v = lower.strip_suffix("gb")?.trim().parse::<f64>().ok()?;
    Some((v * 1024.0).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fargate_offers_only_its_table() {
        assert!(offered(256, 512));
        assert!(offered(256, 2048));
        assert!(!offered(256, 4096));
        assert!(offered(1024, 3072));
        assert!(!offered(1024, 1024));
        assert!(offered(8192, 20480));
        assert!(!offered(8192, 18432));
        assert!(!offered(300, 1024));
    }

    #[test]
    fn sizes_are_read_in_both_notations() {
        assert_eq!(cpu_units("1 vCPU"), Some(1024));
        assert_eq!(cpu_units("0.25 vcpu"), Some(256));
        assert_eq!(cpu_units("512"), Some(512));
        assert_eq!(memory_mib("2 GB"), Some(2048));
        assert_eq!(memory_mib("0.5GB"), Some(512));
        assert_eq!(memory_mib("lots"), None);
    }
}
