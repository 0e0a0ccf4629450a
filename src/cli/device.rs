//! The device model's arguments, shared by `simulate` and `compare`: the units and wait
//! latency over the device profile (`--device FILE`, the one file the ONNX importer's
//! roofline reads too, docs/cost-model.md), and the arbitration rule.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use stream_alloc::Error;
use stream_alloc::graph::device::DeviceProfile;
use stream_alloc::simulate::{Arbitration, SimConfig};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ArbitrationArg {
    /// The stream head that became startable first gets units first (the default).
    Ready,
    /// The lowest stream id first (the older rule; depends on stream numbering).
    StreamId,
}

#[derive(Args, Debug)]
pub struct DeviceArgs {
    /// Compute units of the device, over the profile's (`--device FILE`; default 24).
    #[arg(long)]
    pub units: Option<u32>,
    /// Latency of one wait in µs, over the profile's (default 1).
    #[arg(long = "wait-latency", value_name = "US")]
    pub wait_latency: Option<f64>,
    /// Which stream head gets compute units first when several may start at once.
    #[arg(long, value_enum, default_value = "ready")]
    pub arbitration: ArbitrationArg,
}

impl DeviceArgs {
    /// The simulator's configuration: the profile `device` (`--device FILE`: its `units` and
    /// `wait_latency_us`) or the defaults, then the flags over it.
    pub fn config(&self, device: Option<&PathBuf>) -> Result<SimConfig, Error> {
        let profile = match device {
            Some(path) => DeviceProfile::from_json_file(path)?,
            None => DeviceProfile::default(),
        };
        let mut cfg = SimConfig::from_device(&profile);
        if let Some(u) = self.units {
            cfg.units = u;
        }
        if let Some(l) = self.wait_latency {
            cfg.wait_latency_us = l;
        }
        cfg.arbitration = match self.arbitration {
            ArbitrationArg::Ready => Arbitration::Ready,
            ArbitrationArg::StreamId => Arbitration::StreamId,
        };
        Ok(cfg)
    }
}
