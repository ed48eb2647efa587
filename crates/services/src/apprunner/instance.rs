//! InstanceConfiguration's Cpu and Memory: the API takes either units (`1024`) or words
//! (`1 vCPU`, `2 GB`) and reports units; only App Runner's documented combinations are accepted.

/// `(Cpu, Memory)` in units, App Runner's supported configurations.
const COMBINATIONS: &[(u32, &[u32])] = &[
    (256, &[512, 1024]),
    (512, &[1024]),
    (1024, &[2048, 3072, 4096]),
    (2048, &[4096, 6144]),
    (4096, &[8192, 10240, 12288]),
];

/// The defaults AWS applies when InstanceConfiguration omits them.
pub const DEFAULT_CPU: u32 = 1024;
pub const DEFAULT_MEMORY: u32 = 2048;

/// `"1 vCPU"` or `"1024"` as units; `None` if it is neither a unit count nor a vCPU count
/// App Runner offers.
pub fn cpu_units(text: &str) -> Option<u32> {
    let units = match text.trim().strip_suffix(" vCPU") {
        Some(v) => match v {
            "0.25" => 256,
            "0.5" => 512,
            "1" => 1024,
            "2" => 2048,
            "4" => 4096,
            _ => return None,
        },
        None => text.parse().ok()?,
    };
    COMBINATIONS
        .iter()
        .any(|(c, _)| *c == units)
        .then_some(units)
}

/// `"2 GB"` or `"2048"` as MiB; `None` for anything App Runner does not offer.
pub fn memory_units(text: &str) -> Option<u32> {
    let units = match text.trim().strip_suffix(" GB") {
        Some(v) => match v {
            "0.5" => 512,
            _ => v.parse::<u32>().ok()?.checked_mul(1024)?,
        },
        None => text.parse().ok()?,
    };
    COMBINATIONS
        .iter()
        .any(|(_, m)| m.contains(&units))
        .then_some(units)
}

/// Whether App Runner offers that memory with that CPU.
pub fn combination_allowed(cpu: u32, memory: u32) -> bool {
    COMBINATIONS
        .iter()
        .any(|(c, m)| *c == cpu && m.contains(&memory))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_units_normalise_to_units() {
        assert_eq!(cpu_units("1 vCPU"), Some(1024));
        assert_eq!(cpu_units("0.25 vCPU"), Some(256));
        assert_eq!(cpu_units("4096"), Some(4096));
        assert_eq!(memory_units("2 GB"), Some(2048));
        assert_eq!(memory_units("0.5 GB"), Some(512));
        assert_eq!(memory_units("12 GB"), Some(12288));
        assert_eq!(memory_units("3072"), Some(3072));
    }

    #[test]
    fn values_app_runner_does_not_offer_are_refused() {
        for bad in ["3 vCPU", "1000", "1vCPU", "", "-1", "0.75 vCPU"] {
            assert_eq!(cpu_units(bad), None, "{bad}");
        }
        for bad in ["5 GB", "16 GB", "2000", "GB", "0.25 GB"] {
            assert_eq!(memory_units(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_documented_combinations_are_allowed() {
        assert!(combination_allowed(1024, 2048));
        assert!(combination_allowed(256, 512));
        assert!(combination_allowed(4096, 12288));
        assert!(!combination_allowed(256, 2048));
        assert!(!combination_allowed(4096, 2048));
        assert!(!combination_allowed(512, 512));
    }
}
