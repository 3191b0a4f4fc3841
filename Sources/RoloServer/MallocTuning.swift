#if canImport(Glibc)
import Glibc
#endif

/// How glibc's malloc keeps memory between requests. By default it hands memory back to the
/// kernel as soon as 128 KiB lie free at the top of a heap, and gives blocks of 128 KiB or
/// more (a listing's 256 KiB chunk, the `ByteBuffer` it is copied into, a card with a photo
/// read from SQLite) a mapping of their own, unmapped when freed. The next request then
/// faults in and zeroes every page it touches again: 7.7% of the server's samples in a
/// 1,000-card multiget (Docs/performance.md, "Page faults between requests"). Keeping up to
/// `trimThreshold` free per heap and serving blocks under `mmapThreshold` from the heaps
/// ends those faults; the resident set peaks where it did, since the same blocks are reused.
public enum MallocTuning {
    public static let trimThreshold: Int32 = 8 << 20
    public static let mmapThreshold: Int32 = 4 << 20

    /// Sets both thresholds, unless the environment sets either through glibc's own
    /// `MALLOC_TRIM_THRESHOLD_` / `MALLOC_MMAP_THRESHOLD_` (which then stand). Call before the
    /// server starts threads. Does nothing where malloc is not glibc's.
    public static func apply(environment: [String: String]) {
        #if canImport(Glibc)
        guard environment["MALLOC_TRIM_THRESHOLD_"] == nil, environment["MALLOC_MMAP_THRESHOLD_"] == nil,
              let mallopt = mallopt() else { return }
        _ = mallopt(trimThresholdParameter, trimThreshold)
        _ = mallopt(mmapThresholdParameter, mmapThreshold)
        #endif
    }

    #if canImport(Glibc)
    /// `M_TRIM_THRESHOLD` and `M_MMAP_THRESHOLD` of glibc's `<malloc.h>`, which Swift's Glibc
    /// module does not import (nor `mallopt`, looked up below).
    private static let trimThresholdParameter: Int32 = -1
    private static let mmapThresholdParameter: Int32 = -3

    private static func mallopt() -> (@convention(c) (Int32, Int32) -> Int32)? {
        // RTLD_DEFAULT: the symbol as the process resolves it.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }
    #endif
}
