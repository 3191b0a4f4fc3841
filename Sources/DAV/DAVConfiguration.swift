import Foundation
import RoloStore

/// Deployment settings of the protocol engine: where it is mounted, what hrefs look like
/// behind a reverse proxy, and the limits it enforces.
public struct DAVConfiguration: Sendable {
    /// Path where the DAV tree is mounted, e.g. "/dav" (no trailing slash).
    public var basePath: String
    /// Path a reverse proxy puts before `basePath` in URLs clients see, e.g. "/contacts"
    /// (no trailing slash; "" when the server is reached directly). Prepended to every href
    /// and stripped from request paths and Destination headers that carry it.
    public var proxyPrefix: String
    /// Largest accepted resource (vCard or file) in bytes; advertised as `max-resource-size`.
    public var maxResourceSize: Int
    /// 10 MiB: cards with a phone's full-resolution photo (a 4-7 MB JPEG, a third more as
    /// base64) still fit. Listings never hold such bodies whole (`pageBodyLimit`).
    public static let defaultMaxResourceSize = 10 << 20
    /// Largest PROPFIND/PROPPATCH/REPORT/MKCOL body the engine parses, in bytes.
    public var maxXMLBodySize: Int
    /// Bytes a user may store in total; nil means no quota.
    public var quotaBytes: Int64?
    /// Absolute URL clients use to reach the server (scheme, host, port, proxy path);
    /// used to recognise absolute Destination URIs. Its path, when present and
    /// `proxyPrefix` is empty, becomes the proxy prefix.
    public var publicBaseURL: URL?
    /// Lock tokens from a counter rather than random UUIDs (deterministic test servers).
    public var sequentialLockTokens: Bool
    /// Rows a listing (PROPFIND Depth 1, sync-collection, addressbook-query) reads from the
    /// store at a time, each page in its own short read. A listing longer than one page is
    /// streamed (`DAVBodyStream`) instead of held whole.
    public var listingPageSize: Int
    /// Bytes of a streamed body gathered before they are handed to the connection, and the
    /// size up to which a multistatus is answered whole. 256 KB: a multiget of 100 cards
    /// (200 KB) stays whole, and a 3 MB listing goes out in 12 writes rather than 48 (each
    /// a hop through the channel's writer and a wake-up of the client). glibc serves the
    /// first chunk from mmap, then raises its mmap threshold past the chunk size, so later
    /// chunks come from (and go back to) the heap.
    public var streamChunkSize: Int
    /// Card bodies up to this size are read with their page of a listing (multiget, sync,
    /// query, PROPFIND); a bigger one is left in the store and read alone when its response
    /// is written, then escaped and sent a chunk at a time. 64 KB keeps nearly every card in
    /// its page (a contact photo as phones sync it is 10-60 KB), while a page of 250 or 1000
    /// cards can never hold several 10 MB photos at once (plus the page read ahead).
    public var pageBodyLimit: Int
    /// WebDAV-Push: advertised and accepted when set (`DAVPushConfiguration`).
    public var push: DAVPushConfiguration?
    /// The most cards an addressbook-query on the organisation's directory answers
    /// (`directory_query_limit`; RFC 6352 §8.6.1), whatever limit the client asks.
    public var directoryQueryLimit: Int = DirectoryRules.defaultQueryLimit
    /// `directory = gateway`: the directory is searched at `directory~rolo` in each home
    /// (addressbook-query alone), never mounted, listed, read card by card or synced.
    public var directoryGatewayOnly = false

    public init(basePath: String = "/dav", proxyPrefix: String = "", maxResourceSize: Int = DAVConfiguration.defaultMaxResourceSize,
                maxXMLBodySize: Int = 4 << 20, quotaBytes: Int64? = nil, publicBaseURL: URL? = nil,
                sequentialLockTokens: Bool = false, listingPageSize: Int = 1000, streamChunkSize: Int = 256 << 10,
                pageBodyLimit: Int = 64 << 10) {
        self.basePath = Self.normalized(basePath)
        var prefix = Self.normalized(proxyPrefix)
        if prefix.isEmpty, let path = publicBaseURL?.path { prefix = Self.normalized(path) }
        self.proxyPrefix = prefix
        self.maxResourceSize = maxResourceSize
        self.maxXMLBodySize = maxXMLBodySize
        self.quotaBytes = quotaBytes
        self.publicBaseURL = publicBaseURL
        self.sequentialLockTokens = sequentialLockTokens
        self.listingPageSize = max(listingPageSize, 1)
        self.streamChunkSize = max(streamChunkSize, 1)
        self.pageBodyLimit = max(pageBodyLimit, 0)
    }

    /// "/dav/" -> "/dav", "dav" -> "/dav", "/" -> "".
    static func normalized(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        if trimmed.isEmpty { return "" }
        return trimmed.hasPrefix("/") ? String(trimmed) : "/" + trimmed
    }
}
