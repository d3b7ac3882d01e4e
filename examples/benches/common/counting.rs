//! A counting allocator for the benches that read their heap.

/// The system allocator, counting the bytes held now and the most held since
/// [`Counting::reset_most`]: a bench installs it as its `#[global_allocator]` to read its heap.
/// (The benches share this file by path: the library forbids unsafe code.)
pub struct Counting;

static HELD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static MOST: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Counting {
    /// Bytes held now.
    pub fn held() -> usize {
        HELD.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The most bytes held at once since the last reset.
    pub fn most() -> usize {
        MOST.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Starts a new high-water mark from what is held now; returns that.
    pub fn reset_most() -> usize {
        let held = Self::held();
        MOST.store(held, std::sync::atomic::Ordering::Relaxed);
        held
    }
}

// SAFETY: every call goes to the system allocator unchanged; only counters are added.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use std::sync::atomic::Ordering::Relaxed;
        let held = HELD.fetch_add(layout.size(), Relaxed) + layout.size();
        MOST.fetch_max(held, Relaxed);
        // SAFETY: the caller's layout is passed on as is.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        HELD.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use std::sync::atomic::Ordering::Relaxed;
        if new_size > layout.size() {
            let grown = new_size - layout.size();
            let held = HELD.fetch_add(grown, Relaxed) + grown;
            MOST.fetch_max(held, Relaxed);
        } else {
            HELD.fetch_sub(layout.size() - new_size, Relaxed);
        }
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}
