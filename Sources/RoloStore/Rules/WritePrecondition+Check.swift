extension WritePrecondition {
    /// Whether the precondition holds for a resource whose current ETag is `etag` (nil when
    /// absent), as RFC 9110 §13.1 defines `If-Match` and `If-None-Match`. The one evaluation:
    /// the stores decide with it inside their write transactions (`check`), and the DAV
    /// engine with it where it answers before writing.
    public func holds(currentETag etag: String?) -> Bool {
        switch self {
        case .none: true
        case .ifMatchAny: etag != nil
        case .ifMatch(let tags): etag.map(tags.contains) ?? false
        case .ifNoneMatchAny: etag == nil
        case .ifNoneMatch(let tags): etag.map { !tags.contains($0) } ?? true
        }
    }

    /// Throws `StoreError.preconditionFailed` unless the precondition holds.
    package func check(currentETag: String?) throws(StoreError) {
        if !holds(currentETag: currentETag) { throw StoreError.preconditionFailed }
    }
}
