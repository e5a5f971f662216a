//! Compresses the embedded kernels (`ptx/`: PTX for four targets, cubins
//! for two, 23 MB together) with LZ4 into `OUT_DIR`, from where
//! `src/ptx.rs` embeds them: a program that uses the library carries about
//! a fifth of that, and `Context::new` unpacks only the image it loads.

use std::path::{Path, PathBuf};

/// The files of `ptx/` that `src/ptx.rs` embeds.
const IMAGES: [&str; 6] = [
    "warpspeed_sm_90a.ptx",
    "warpspeed_sm_90.ptx",
    "warpspeed_sm_80.ptx",
    "warpspeed_sm_70.ptx",
    "warpspeed_sm_90a.cubin",
    "warpspeed_sm_80.cubin",
];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for name in IMAGES {
        let path = Path::new("ptx").join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        let bytes =
            std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let packed = lz4_flex::compress_prepend_size(&bytes);
        std::fs::write(out.join(format!("{name}.lz4")), packed)
            .unwrap_or_else(|e| panic!("writing the packed {name}: {e}"));
    }
}
