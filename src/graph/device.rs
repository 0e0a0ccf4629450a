//! The device profile: every constant of the cost model (docs/cost-model.md) and of the
//! device model (docs/simulate.md) in one place, so that a user can describe their own chip in
//! one small JSON file (`--device FILE`) and the importer's roofline, the simulator and the
//! schedulers all read the same numbers.
//!
//! Defaults are a nominal Ascend 910-class NPU in fp16, the constants the corpus was built with.

#![forbid(unsafe_code)]

use serde::Deserialize;

use crate::error::Result;
use crate::{bail, err};

/// Compute units of the default device: the simulator's units, and the cap on a node's `cores`.
pub const DEFAULT_UNITS: u32 = 24;
/// Time from a sync's source finishing to its waiting stream being able to start, in µs.
pub const DEFAULT_WAIT_LATENCY_US: f64 = 1.0;

/// `gert::StreamAllocator::kMaxStreamNum` (ge-runtime-api.md §1): a host-side array bound;
/// stream requests must be below it, so an assignment needing this many streams is refused at
/// compile time, and the checker and the runtime's stream allocator read the same bound.
pub const MAX_STREAM_NUM: usize = 2024;
/// `gert::NotifyAllocator::kMaxNotifyNum` (ge-runtime-api.md §1), GE's `kMaxNotifyNum`: the
/// runtime's notify allocator serves requests below it, and the compile stages refuse an
/// assignment needing more notifies (sync ids in notify mode) than it.
pub const MAX_NOTIFY_NUM: usize = 1024;
/// The most logical stream ids a document may use: the checker's vector clocks are `streams²`
/// words, and a preassigned id beyond it is refused before tables are sized by it.
pub const MAX_LOGICAL_STREAMS: usize = 4096;

/// One device's constants. Built by [`DeviceProfile::default`] or read from a JSON object
/// whose keys are the field names; absent keys keep their default, unknown keys are refused.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeviceProfile {
    /// A label for reports; not used in any computation.
    pub name: String,
    /// Compute units the simulator shares between streams; `cores` is capped at this.
    pub units: u32,
    /// Sync wait latency in µs (source end to the waiting stream's next start).
    pub wait_latency_us: f64,
    /// AI-core peak compute, flop/s (fp16 cube units).
    pub peak_flops: f64,
    /// Device memory bandwidth, byte/s.
    pub memory_bandwidth: f64,
    /// Launch floor added to every AI-core kernel, µs.
    pub launch_us: f64,
    /// Bytes per tensor element.
    pub element_bytes: u32,
    /// Flops one compute unit's tile covers (for `cores`).
    pub flops_per_unit: f64,
    /// Bytes one compute unit's local buffer covers (for `cores`).
    pub bytes_per_unit: f64,
    /// AI CPU compute, flop/s.
    pub aicpu_flops: f64,
    /// AI CPU memory bandwidth, byte/s.
    pub aicpu_bandwidth: f64,
    /// Launch floor of an AI CPU kernel, µs.
    pub aicpu_launch_us: f64,
    /// Collective (all-reduce) bus bandwidth, byte/s.
    pub collective_bandwidth: f64,
    /// Fixed latency of a collective, µs.
    pub collective_latency_us: f64,
}

impl Default for DeviceProfile {
    fn default() -> Self {
        DeviceProfile {
            name: "ascend910-fp16".to_string(),
            units: DEFAULT_UNITS,
            wait_latency_us: DEFAULT_WAIT_LATENCY_US,
            peak_flops: 280e12,
            memory_bandwidth: 1.6e12,
            launch_us: 3.0,
            element_bytes: 2,
            flops_per_unit: 2e7,
            bytes_per_unit: 262_144.0,
            aicpu_flops: 1e11,
            aicpu_bandwidth: 50e9,
            aicpu_launch_us: 20.0,
            collective_bandwidth: 50e9,
            collective_latency_us: 10.0,
        }
    }
}

impl DeviceProfile {
    /// Reads a profile from JSON text; `what` names the source in errors (a file path).
    pub fn from_json_str(text: &str, what: &str) -> Result<Self> {
        let p: DeviceProfile =
            serde_json::from_str(text).map_err(|e| err!(InvalidOption, "device profile {what}: {e}"))?;
        p.validate(what)?;
        Ok(p)
    }

    /// Reads a profile from a JSON file.
    pub fn from_json_file(path: &std::path::Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| err!(Io, "device profile {}: cannot read: {e}", path.display()))?;
        Self::from_json_str(&text, &path.display().to_string())
    }

    /// Every rate positive and finite, every floor and latency finite and not negative.
    pub fn validate(&self, what: &str) -> Result<()> {
        if self.units == 0 {
            bail!(InvalidOption, "device profile {what}: 'units' must be at least 1");
        }
        if self.element_bytes == 0 {
            bail!(InvalidOption, "device profile {what}: 'element_bytes' must be at least 1");
        }
        // Rates must be above 0; latencies and floors (`true`: 0 allowed) at least 0.
        let fields = [
            ("peak_flops", self.peak_flops, false),
            ("memory_bandwidth", self.memory_bandwidth, false),
            ("flops_per_unit", self.flops_per_unit, false),
            ("bytes_per_unit", self.bytes_per_unit, false),
            ("aicpu_flops", self.aicpu_flops, false),
            ("aicpu_bandwidth", self.aicpu_bandwidth, false),
            ("collective_bandwidth", self.collective_bandwidth, false),
            ("wait_latency_us", self.wait_latency_us, true),
            ("launch_us", self.launch_us, true),
            ("aicpu_launch_us", self.aicpu_launch_us, true),
            ("collective_latency_us", self.collective_latency_us, true),
        ];
        for (key, v, zero_ok) in fields {
            let (ok, rule) = if zero_ok { (v >= 0.0, ">=") } else { (v > 0.0, ">") };
            if !(v.is_finite() && ok) {
                bail!(InvalidOption, "device profile {what}: '{key}' must be a finite number {rule} 0, got {v}");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_keys_keep_defaults() {
        let p = DeviceProfile::from_json_str(r#"{"units": 30, "wait_latency_us": 2.5}"#, "t").unwrap();
        assert_eq!(p.units, 30);
        assert_eq!(p.wait_latency_us, 2.5);
        assert_eq!(p.peak_flops, DeviceProfile::default().peak_flops);
    }

    #[test]
    fn bad_profiles_name_the_key() {
        let e = DeviceProfile::from_json_str(r#"{"unitz": 3}"#, "t").unwrap_err();
        assert!(e.message.contains("unitz"), "{e}");
        let e = DeviceProfile::from_json_str(r#"{"units": 0}"#, "t").unwrap_err();
        assert!(e.message.contains("'units'"), "{e}");
        let e = DeviceProfile::from_json_str(r#"{"peak_flops": -1}"#, "t").unwrap_err();
        assert!(e.message.contains("'peak_flops'"), "{e}");
        let e = DeviceProfile::from_json_str("[", "t").unwrap_err();
        assert!(e.message.contains("device profile t"), "{e}");
    }
}
