//! The system allocator, counting a thread's allocations (and reallocations)
//! and their largest size while that thread is inside [`allocations`]. Other
//! threads (the test harness runs tests in parallel) are never counted.
//! Shared by the allocation and system-call tests; each test binary that
//! includes it makes it its global allocator.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

pub struct Counting;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
    static FREED: Cell<usize> = const { Cell::new(0) };
}

fn count_one(size: usize) {
    if MEASURING.try_with(Cell::get).unwrap_or(false) {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        let _ = LARGEST.try_with(|c| c.set(c.get().max(size)));
    }
}

// SAFETY: every call is passed to `System` unchanged; counting touches only
// const-initialised thread-locals, which never allocate. (`unsafe impl` is
// what `GlobalAlloc` requires; the library itself stays `forbid(unsafe_code)`.)
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A new block for the old: counted as both.
        count_one(new_size);
        if MEASURING.try_with(Cell::get).unwrap_or(false) {
            let _ = FREED.try_with(|c| c.set(c.get() + 1));
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if MEASURING.try_with(Cell::get).unwrap_or(false) {
            let _ = FREED.try_with(|c| c.set(c.get() + 1));
        }
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What `f` did: its result, how many times it allocated on this thread,
/// the largest allocation, and how many times it freed.
pub struct Allocations<T> {
    pub out: T,
    pub count: usize,
    pub largest: usize,
    pub freed: usize,
}

/// `f`, measured.
pub fn allocations<T>(f: impl FnOnce() -> T) -> Allocations<T> {
    COUNT.with(|c| c.set(0));
    LARGEST.with(|c| c.set(0));
    FREED.with(|c| c.set(0));
    MEASURING.with(|m| m.set(true));
    let out = f();
    MEASURING.with(|m| m.set(false));
    Allocations {
        out,
        count: COUNT.with(Cell::get),
        largest: LARGEST.with(Cell::get),
        freed: FREED.with(Cell::get),
    }
}
