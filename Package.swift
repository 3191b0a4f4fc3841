// swift-tools-version: 6.1
import PackageDescription

/// Targets point one way: VCard <- Contacts <- RoloStore / DAVXML <- DAV <- RoloServer <- RoloTestControl <- RoloTesting <- rolo.
/// RoloStore is the store core (protocols by role, value types, domain rules; no database library);
/// RoloSQLite and RoloPostgres implement it and depend on it only; rolo picks one by the database URL;
/// RoloStoreTesting holds the in-memory double of its CardStore role.
/// HTTPHead (the raw request-head reading, no dependencies) <- RoloServer and RoloFuzz.
/// WebPush (message crypto and push-URL checks, no I/O) <- RoloPush (delivery over HTTP, with RoloStore);
/// DAV uses WebPush to validate push registrations. Authorization (who may do what, the quota) depends on
/// RoloStore's value types; DAV, RoloWeb, RoloServer and rolo ask it. BuildInfo (the version and the
/// commit, written by the BuildCommit plugin) <- RoloServer (the admin page) and rolo (--version).
let package = Package(
    name: "Rolo",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "rolo", targets: ["rolo"]),
        .library(name: "VCard", targets: ["VCard"]),
        .library(name: "Contacts", targets: ["Contacts"]),
        .library(name: "RoloStore", targets: ["RoloStore"]),
        .library(name: "RoloSQLite", targets: ["RoloSQLite"]),
        .library(name: "RoloStoreTesting", targets: ["RoloStoreTesting"]),
        .library(name: "RoloServer", targets: ["RoloServer"]),
        .library(name: "RoloTesting", targets: ["RoloTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.0.0"..<"4.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        // Already in the graph through Hummingbird; named for NIOHTTP1 and NIOHTTPTypesHTTP1
        // (the inline GET handler finds the codec's handlers) and NIOEmbedded in the tests.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.20.0"),
        // In the graph through Hummingbird; named for HTTPField in the fake push service.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        // Outbound POSTs to push services (WebDAV-Push).
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.20.0"),
        // The web UI's templates (embedded in the binary as string literals, see RoloWeb).
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // The PostgreSQL store (RoloPostgres); NIOSSL for TLS to the database.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.25.0"),
        // In the graph through swift-nio-ssl; named for its CMS signing of device profiles.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.19.0"),
    ],
    targets: [
        // The version and the commit the binary was built from (`rolo --version`, the admin
        // page); the commit is written by the BuildCommit plugin at build time.
        .target(name: "BuildInfo", plugins: ["BuildCommit"]),
        .plugin(name: "BuildCommit", capability: .buildTool()),
        // vCard 2.1/3.0/4.0 parse, write, convert, validate. No dependencies.
        .target(name: "VCard"),
        // Apple-Contacts-shaped domain model over VCard.
        .target(name: "Contacts", dependencies: ["VCard"]),
        // Feeds of contacts for other programs (issue 33): the birthday calendar (iCalendar)
        // and desk-phone / router phone books (XML). Pure writers: no store, no HTTP.
        .target(name: "ContactFeeds", dependencies: ["Contacts", "VCard"]),
        // Google and Outlook contacts CSV, both ways (issue 33): encodings, RFC 4180, their headers.
        .target(name: "ContactsCSV", dependencies: ["Contacts", "VCard"]),
        // SQLite's process-wide settings (sqlite3_config is variadic: not callable from Swift)
        // and the VFS that writes a commit's WAL frames in one call (WALWriteCombining.c).
        .target(name: "CSQLiteConfig", linkerSettings: [.linkedLibrary("sqlite3")]),
        // The store core: the storage protocols by role, their value types and the domain
        // rules every back end applies (preconditions, UID conflicts, names, shares,
        // credentials). No database library: front ends depend on this and on nothing below.
        .target(name: "RoloStore", dependencies: [
            .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The embedded SQLite (GRDB) implementation of the store protocols.
        .target(name: "RoloSQLite", dependencies: [
            "RoloStore", "CSQLiteConfig",
            .product(name: "GRDB", package: "GRDB.swift"),
            // The SQLite C API GRDB links, for binding import rows without per-row arrays.
            .product(name: "GRDBSQLite", package: "GRDB.swift"),
            .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The in-memory test double of the CardStore role (as NIOEmbedded is NIO's): no
        // database, the core's rules; run through the store suite beside the back ends.
        .target(name: "RoloStoreTesting", dependencies: ["RoloStore"]),
        // The same storage protocol on PostgreSQL (postgres-nio), for several processes on one database.
        .target(name: "RoloPostgres", dependencies: [
            "RoloStore",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
        ]),
        // libxml2 behind a header that does not include libxml2 (ICU clash with Foundation).
        .target(
            name: "CLibXML2",
            cSettings: [.unsafeFlags(["-I/usr/include/libxml2"])],
            linkerSettings: [.linkedLibrary("xml2")]
        ),
        // OpenLDAP's client library (Debian's libldap-dev) and a few helpers for what Swift cannot import.
        .target(name: "CLDAP", linkerSettings: [.linkedLibrary("ldap"), .linkedLibrary("lber")]),
        // An LDAP client (connect, StartTLS, bind, search, RFC 4515 escaping) for directory logins (issue 30).
        .target(name: "LDAPClient", dependencies: ["CLDAP", .product(name: "NIOPosix", package: "swift-nio")]),
        // libqrencode (Debian's libqrencode-dev) behind one call that returns plain bytes.
        .target(name: "CQRencode", linkerSettings: [.linkedLibrary("qrencode")]),
        // QR codes drawn as SVG on the server (issue 33: a phone's camera reads a set-up URL off a page).
        .target(name: "QRCode", dependencies: ["CQRencode"]),
        // Apple configuration profiles for a CardDAV account, signed with CMS when a certificate is given (issue 33).
        .target(name: "DeviceProfiles", dependencies: [.product(name: "X509", package: "swift-certificates")]),
        // DAV request-body parsing and multistatus writing.
        .target(name: "DAVXML", dependencies: ["CLibXML2"]),
        // What the store keeps of a card beside its bytes (index entries, list row), read
        // from the vCard: every write path (DAV, import, the web UI) uses it; and
        // `CardImporter`, the one bulk path from .vcf bytes to stored cards.
        .target(name: "CardIndexing", dependencies: [
            "VCard", "Contacts", "RoloStore", "Authorization", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Who may do what, for every front end: privileges on DAV's nodes and the web UI's
        // books, account actions (shares, app passwords, users), the quota. Value types only.
        .target(name: "Authorization", dependencies: ["RoloStore"]),
        // WebDAV/CardDAV protocol engine: no HTTP framework, no SQL.
        .target(name: "DAV", dependencies: ["Authorization", "DAVXML", "RoloStore", "Contacts", "VCard", "WebPush", "CardIndexing"]),
        // WebDAV-Push message crypto (RFC 8291 aes128gcm, RFC 8292 VAPID) and push-URL checks. No I/O.
        .target(name: "WebPush", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // WebDAV-Push delivery: POSTs encrypted messages to push services.
        .target(name: "RoloPush", dependencies: [
            "WebPush", "RoloStore",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        // The web UI at /web/: server-rendered pages over the store, no HTTP framework, no DAV, no SQL.
        .target(name: "RoloWeb", dependencies: [
            "Authorization", "RoloStore", "VCard", "Contacts", "CardIndexing", "ContactsCSV", "DeviceProfiles", "QRCode",
            .product(name: "Mustache", package: "swift-mustache"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], exclude: ["Templates", "Static"]),
        // The strict reading of a raw HTTP/1.1 request head (`RawRequestHead`) that the inline
        // GET path puts in front of NIO's codec. No dependencies: RoloFuzz compares it with
        // NIO's parser without building the server.
        .target(name: "HTTPHead"),
        // Hummingbird glue: routes, auth, limits.
        .target(name: "RoloServer", dependencies: [
            "Authorization", "BuildInfo", "HTTPHead", "RoloWeb", "DAV", "CardIndexing", "DAVXML", "RoloStore", "VCard", "RoloPush", "WebPush",
            "ContactFeeds", "DeviceProfiles", "LDAPClient", "Contacts",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            // OIDC sign-in (Authentication/OIDC*): the provider's HTTP, its CA file, RS256 keys.
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
        ]),
        // The test-control API (`/_rolo/`: reset, fixtures, request log, faults), plugged into
        // RoloServer as its front middleware by `rolo serve --test-api` and RoloTesting.
        .target(name: "RoloTestControl", dependencies: [
            "RoloServer", "RoloStore", "DAV", "DAVXML", "CardIndexing",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Rolo as a fixture for other test suites: in-process server, shared launch setup.
        .target(name: "RoloTesting", dependencies: [
            "RoloServer", "RoloTestControl", "RoloStore", "RoloSQLite", .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "rolo", dependencies: [
            "Authorization", "BuildInfo", "ContactsCSV", "RoloServer", "RoloStore", "RoloSQLite", "RoloPostgres", "RoloTestControl", "RoloTesting", "DAV", "CardIndexing", "Contacts", "VCard", "WebPush",
            "DeviceProfiles", "LDAPClient",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "TOMLKit", package: "TOMLKit"),
        ]),

        // Benchmarks (figures, not tests): swift run -c release RoloBench vcard|xml|store|web-store
        .executableTarget(name: "RoloBench", dependencies: ["VCard", "DAVXML", "Contacts", "RoloStore", "RoloSQLite", "RoloPostgres", "CardIndexing",
                                                      "RoloServer", "LDAPClient", "LDAPTestSupport", "LoopbackSockets",
                                                      .product(name: "Logging", package: "swift-log")]),
        // libFuzzer targets (scripts/fuzz.sh builds them with --sanitize fuzzer); in a plain
        // build, a tool that replays saved inputs through the same checks.
        .executableTarget(name: "RoloFuzz", dependencies: [
            "VCard", "DAVXML", "DAV", "HTTPHead",
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], path: "Fuzz/RoloFuzz"),

        .testTarget(name: "VCardTests", dependencies: [
            "VCard", .product(name: "PropertyBased", package: "swift-property-based"),
        ], exclude: ["Fixtures/RealWorld"]),
        .testTarget(name: "ContactsTests", dependencies: ["Contacts", "VCard"], exclude: ["Fixtures"]),
        .testTarget(name: "ContactFeedsTests", dependencies: ["ContactFeeds", "Contacts", "VCard"]),
        .testTarget(name: "ContactsCSVTests", dependencies: ["ContactsCSV", "Contacts", "VCard"], exclude: ["Fixtures"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode", "ProcessLaunch"]),
        .testTarget(name: "DeviceProfilesTests", dependencies: ["DeviceProfiles", "ProcessLaunch"]),
        // Starts a throwaway PostgreSQL cluster (scripts/pg-cluster.sh) or uses ROLO_TEST_POSTGRES_URL,
        // and makes a fresh database per test.
        .target(name: "PostgresTestSupport", dependencies: [
            "RoloPostgres", "ProcessLaunch", "LoopbackSockets", .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/PostgresTestSupport"),
        .testTarget(name: "RoloStoreTests", dependencies: ["RoloStore", "RoloSQLite", "RoloPostgres", "RoloStoreTesting", "PostgresTestSupport", "ProcessLaunch",
                                                       "CardIndexing", "VCard"]),
        .testTarget(name: "DAVXMLTests", dependencies: ["DAVXML"]),
        .testTarget(name: "HTTPHeadTests", dependencies: ["HTTPHead"]),
        .testTarget(name: "AuthorizationTests", dependencies: ["Authorization", "RoloStore"]),
        .testTarget(name: "DAVTests", dependencies: ["DAV", "Authorization", "RoloStore", "RoloSQLite", "DAVXML", "VCard", "CardIndexing"]),
        .testTarget(name: "CardIndexingTests", dependencies: ["CardIndexing", "VCard", "RoloStore"]),
        // One lock for every child process any test target starts (Foundation's spawn is not safe to overlap).
        .target(name: "ProcessLaunch", path: "Tests/ProcessLaunch"),
        // A throwaway OpenLDAP slapd on a free loopback port with a small directory (issue 30).
        .target(name: "LDAPTestSupport", dependencies: ["ProcessLaunch", "LoopbackSockets"], path: "Tests/LDAPTestSupport"),
        .testTarget(name: "LDAPClientTests", dependencies: ["LDAPClient", "LDAPTestSupport"]),
        // A loopback socket for the tests that speak HTTP byte by byte.
        .target(name: "LoopbackSockets", path: "Tests/LoopbackSockets"),
        .testTarget(name: "RoloServerTests", dependencies: [
            "RoloServer", "RoloTestControl", "RoloStore", "RoloSQLite", "DAV", "CardIndexing", "LoopbackSockets", "PushTestSupport", "WebPush", "ProcessLaunch",
            "LDAPTestSupport", "LDAPClient", "RoloPostgres", "PostgresTestSupport",
            .product(name: "Crypto", package: "swift-crypto"), .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
        ], exclude: ["Fixtures"]),
        // Test-side WebDAV-Push: decrypt, VAPID check, a fake push service on loopback.
        .target(name: "PushTestSupport", dependencies: [
            "WebPush", .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ], path: "Tests/PushTestSupport"),
        .testTarget(name: "WebPushTests", dependencies: [
            "WebPush", "PushTestSupport", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "RoloPushTests", dependencies: [
            "RoloPush", "WebPush", "PushTestSupport", .product(name: "Logging", package: "swift-log"),
            "RoloStore", "RoloSQLite", "RoloPostgres", "PostgresTestSupport", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "RoloCLITests", dependencies: ["rolo", "RoloStore", "RoloSQLite", "Contacts", "VCard", "LoopbackSockets", "PostgresTestSupport", "ProcessLaunch",
                                                    "LDAPTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "RoloWebTests", dependencies: [
            "RoloWeb", "RoloStore", "RoloSQLite", "Contacts", "VCard", "CardIndexing", "DeviceProfiles",
            .product(name: "X509", package: "swift-certificates"), .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "RoloTestingTests", dependencies: ["RoloTesting", "RoloTestControl", "RoloServer", "RoloStore", "LoopbackSockets"]),
    ],
    swiftLanguageModes: [.v6]
)
