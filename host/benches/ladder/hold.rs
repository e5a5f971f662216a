//! A kernel that holds the stream while the timed launches are enqueued, so
//! that every pair of events times the GPU alone.
//!
//! Without it, a launch shorter than the host's own cost of issuing the
//! next one (events and launch call: a few µs) leaves the GPU idle between
//! launches; its start event is then stamped before the host has even made
//! the launch call, and the launch call's latency is counted as kernel time.
//! With the stream held until a whole window of launches is queued, the GPU
//! runs them back to back whatever their size: the method of NVIDIA's
//! nvbench (its "blocking kernel"). `peers.cu` holds its stream the same
//! way.
//!
//! The kernel spins on a word of page-locked host memory that the host sets
//! once the window is queued. It gives up after [`TIMEOUT_NS`] and says so in
//! the next word: a launch that waited for the stream (a synchronising call)
//! would otherwise deadlock the benchmark; the window is then reported as an
//! error rather than timed.

use cust::memory::LockedBuffer;
use cust::module::Module;
use cust::stream::Stream;
use std::ffi::c_void;

/// Longest hold: far above the time to enqueue a window ([`WINDOW`]), far
/// below a user's patience.
const TIMEOUT_NS: u64 = 10_000_000_000;

/// Timed launches queued behind one hold: few enough that the driver's
/// queue never fills (the launch call would then wait for the held GPU).
pub const WINDOW: usize = 32;

/// The hold kernel, hand-written PTX (sm_70 and newer: `nanosleep`):
/// `flag[0]` nonzero releases it; on timeout it sets `flag[1]` to 1.
const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry bench_hold(
    .param .u64 flag,
    .param .u64 timeout_ns
)
{
    .reg .pred %p<3>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<6>;

    ld.param.u64 %rd1, [flag];
    ld.param.u64 %rd2, [timeout_ns];
    mov.u64 %rd3, %globaltimer;
$L_wait:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra $L_done;
    nanosleep.u32 1000;
    mov.u64 %rd4, %globaltimer;
    sub.u64 %rd5, %rd4, %rd3;
    setp.lt.u64 %p2, %rd5, %rd2;
    @%p2 bra $L_wait;
    mov.u32 %r2, 1;
    st.volatile.global.u32 [%rd1+4], %r2;
$L_done:
    ret;
}
"#;

/// The loaded hold kernel and its two words of page-locked memory.
pub struct Hold {
    module: Module,
    /// `[release, timed_out]`, page-locked: under unified addressing the
    /// device reads it at the same address. Only touched through `words`.
    _flag: LockedBuffer<u32>,
    /// The first of `_flag`'s two words, taken once from its mutable slice:
    /// both sides write them while the other may read, so every access is a
    /// volatile one through this pointer, never through a reference.
    words: *mut u32,
}

impl Hold {
    /// Loads the kernel into the current context.
    pub fn new() -> Result<Self, String> {
        let module = Module::from_ptx(PTX, &[]).map_err(|e| format!("hold kernel: {e}"))?;
        let mut flag = LockedBuffer::new(&0u32, 2).map_err(|e| format!("hold flag: {e}"))?;
        let words = flag.as_mut_slice().as_mut_ptr();
        Ok(Hold {
            module,
            _flag: flag,
            words,
        })
    }

    /// Enqueues the hold on `stream`. The stream must be idle (the caller
    /// synchronised after the previous window).
    pub fn hold(&self, stream: &Stream) -> Result<(), String> {
        // SAFETY: both words of the live buffer; no kernel uses them while
        // the stream is idle.
        unsafe {
            self.words.write_volatile(0);
            self.words.add(1).write_volatile(0);
        }
        let function = self
            .module
            .get_function("bench_hold")
            .map_err(|e| format!("hold kernel: {e}"))?;
        let mut flag = self.words as u64;
        let mut timeout = TIMEOUT_NS;
        let args = [
            (&raw mut flag).cast::<c_void>(),
            (&raw mut timeout).cast::<c_void>(),
        ];
        // SAFETY: `bench_hold` takes two `u64` parameters, given in order;
        // `flag` addresses two page-locked words, which the device reads and
        // writes at the host's address under unified addressing (every
        // 64-bit platform CUDA supports), and which live until `self` drops,
        // after the caller's synchronisation.
        unsafe { stream.launch(&function, 1, 1, 0, &args) }.map_err(|e| format!("hold: {e}"))
    }

    /// Lets the held stream run what was queued behind the hold.
    pub fn release(&self) {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: the first word of the live buffer; volatile, because the
        // device polls it while the host writes.
        unsafe { self.words.write_volatile(1) };
    }

    /// Whether the last hold gave up before it was released; read after
    /// the stream was synchronised.
    pub fn timed_out(&self) -> bool {
        // SAFETY: the second word of the live buffer, volatile because the
        // device wrote it.
        unsafe { self.words.add(1).read_volatile() != 0 }
    }
}
