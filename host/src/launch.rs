//! Launch configurations and the checks made before every launch. (The
//! arguments are typed: each kernel's generated `Args`, see
//! `warpspeed_gpu::kernel`.)

use crate::device::DeviceInfo;
use crate::error::{Error, Result};
use std::fmt;

/// Grid and block shape and dynamic shared memory of one launch (2D; `z` is 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaunchConfig {
    pub grid: (u32, u32),
    pub block: (u32, u32),
    pub shared_bytes: u32,
}

impl LaunchConfig {
    /// A 1D launch.
    pub fn linear(grid: u32, block: u32, shared_bytes: u32) -> Self {
        LaunchConfig {
            grid: (grid, 1),
            block: (block, 1),
            shared_bytes,
        }
    }
}

impl fmt::Display for LaunchConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "grid {}x{}, block {}x{}, {} B dynamic shared memory",
            self.grid.0, self.grid.1, self.block.0, self.block.1, self.shared_bytes
        )
    }
}

/// Blocks needed to cover `items` with `per_block` items each, as a grid
/// dimension; `None` if that exceeds `u32` (the caller reports the limit).
pub(crate) fn blocks_for(items: usize, per_block: usize) -> Option<u32> {
    u32::try_from(items.div_ceil(per_block)).ok()
}

/// The grid of a grid-stride kernel over `items`, one per thread in blocks
/// of `block`: a block per `block` items, at most as many as a device of
/// `sms` multiprocessors of `threads_per_sm` threads holds at once (the
/// blocks then walk the rest). At least 1.
pub(crate) fn grid_stride_blocks(items: usize, block: u32, sms: u32, threads_per_sm: u32) -> u32 {
    let resident = sms.saturating_mul((threads_per_sm / block).max(1)).max(1);
    blocks_for(items, block as usize).map_or(resident, |b| b.clamp(1, resident))
}

impl DeviceInfo {
    /// Refuses a configuration the device cannot run, with a sentence that
    /// names the kernel, the limit and the value.
    pub(crate) fn check_launch(&self, kernel: &str, cfg: &LaunchConfig) -> Result<()> {
        let refuse = |what: String| {
            Err(Error::InvalidArgument(format!(
                "cannot launch {kernel} on {}: {what}",
                self.name
            )))
        };
        let (gx, gy) = cfg.grid;
        let (bx, by) = cfg.block;
        if gx == 0 || gy == 0 || bx == 0 || by == 0 {
            return refuse(format!("empty launch ({cfg})"));
        }
        if gx > self.max_grid.0 || gy > self.max_grid.1 {
            return refuse(format!(
                "a grid of {gx}x{gy} blocks exceeds the device's {}x{}: the input is too large \
                 for this kernel",
                self.max_grid.0, self.max_grid.1
            ));
        }
        if bx > self.max_block.0 || by > self.max_block.1 || bx * by > self.max_threads_per_block {
            return refuse(format!(
                "a block of {bx}x{by} threads exceeds the device's limit of {} threads",
                self.max_threads_per_block
            ));
        }
        if cfg.shared_bytes > self.max_shared_per_block_optin {
            return refuse(format!(
                "{} B of shared memory per block exceed the device's {} B",
                cfg.shared_bytes, self.max_shared_per_block_optin
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100_like() -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: "test device".into(),
            compute_capability: (9, 0),
            multiprocessors: 132,
            total_memory: 80 << 30,
            l2_bytes: 50 << 20,
            max_threads_per_block: 1024,
            max_threads_per_multiprocessor: 2048,
            max_block: (1024, 1024),
            max_grid: (i32::MAX as u32, 65535),
            max_shared_per_block: 48 << 10,
            max_shared_per_block_optin: 227 << 10,
            theoretical_bandwidth: 3.35e12,
            ptx_target: "sm_90",
            jit: false,
        }
    }

    #[test]
    fn launches_over_the_device_limits_are_refused() {
        let info = h100_like();
        let ok = |cfg: LaunchConfig| info.check_launch("k", &cfg);
        assert!(ok(LaunchConfig::linear(1, 256, 0)).is_ok());
        assert!(
            ok(LaunchConfig {
                grid: (i32::MAX as u32, 65535),
                block: (32, 32),
                shared_bytes: 227 << 10
            })
            .is_ok()
        );
        let refused = [
            LaunchConfig::linear(0, 256, 0), // empty grid
            LaunchConfig::linear(1, 0, 0),   // empty block
            LaunchConfig {
                grid: (1, 65536),
                block: (16, 16),
                shared_bytes: 0,
            }, // grid y
            LaunchConfig {
                grid: (u32::MAX, 1),
                block: (16, 16),
                shared_bytes: 0,
            }, // grid x
            LaunchConfig::linear(1, 2048, 0), // block x
            LaunchConfig {
                grid: (1, 1),
                block: (64, 32),
                shared_bytes: 0,
            }, // threads
            LaunchConfig::linear(1, 256, (227 << 10) + 1), // shared memory
        ];
        for cfg in refused {
            assert!(
                matches!(ok(cfg), Err(Error::InvalidArgument(m)) if m.contains("cannot launch k")),
                "{cfg}"
            );
        }
    }

    #[test]
    fn grid_stride_grids_stop_at_what_the_device_holds() {
        // Blocks of 256 threads: one per 256 items, at most what 132 SMs of
        // 2048 threads hold (8 blocks each), never 0.
        assert_eq!(grid_stride_blocks(1, 256, 132, 2048), 1);
        assert_eq!(grid_stride_blocks(257, 256, 132, 2048), 2);
        assert_eq!(grid_stride_blocks(1 << 30, 256, 132, 2048), 132 * 8);
        assert_eq!(grid_stride_blocks(usize::MAX, 256, 132, 2048), 132 * 8);
        assert_eq!(grid_stride_blocks(1000, 256, 1, 128), 1);
    }

    #[test]
    fn block_counts_that_overflow_a_grid_dimension_are_none() {
        assert_eq!(blocks_for(0, 256), Some(0));
        assert_eq!(blocks_for(257, 256), Some(2));
        assert_eq!(blocks_for(usize::MAX, 1), None);
    }
}
