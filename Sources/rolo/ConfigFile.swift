import Foundation
import TOMLKit

/// The `rolo serve --config FILE` settings: a flat TOML table whose keys are the `serve`
/// flags in snake case (`max_resource_size = 2097152`). Read strictly: an unknown key or a
/// value of the wrong type stops the server with the key's name, because a typo silently
/// ignored would leave a production server on a default nobody chose.
struct ConfigFile {
    enum Kind: String {
        case string, integer, stringList = "array of strings"
    }

    /// Every key the file may hold, with its type.
    static let keys: [String: Kind] = [
        "host": .string, "port": .integer, "database": .string, "base_path": .string,
        "database_pool_size": .integer, "database_statement_timeout": .integer, "database_connection_timeout": .integer,
        "database_card_cache_mb": .integer,
        "proxy_prefix": .string, "public_url": .string, "trusted_proxies": .stringList,
        "log_level": .string, "log_format": .string,
        "max_resource_size": .integer, "max_request_size": .integer, "quota_bytes": .integer,
        "sqlite_writer_cache_kib": .integer, "sqlite_reader_cache_kib": .integer,
        "sqlite_mmap_bytes": .integer, "sqlite_readers": .integer,
        "login_free_failures": .integer, "login_delay_ms": .integer, "login_max_delay_ms": .integer,
        "login_capped_failures": .integer, "login_window_seconds": .integer, "login_account_free_failures": .integer,
        "access_history_hourly_days": .integer, "access_history_daily_days": .integer,
        "history_days": .integer, "history_versions": .integer,
        "push": .string, "web_ui": .string, "push_subject": .string, "push_allowed_origins": .stringList,
        "push_registrations_per_book": .integer,
        "profile_signing_certificate": .string, "profile_signing_key": .string,
        "auth_sources": .stringList, "proxy_user_header": .string, "auth_cache_seconds": .integer,
        "ldap_url": .string, "ldap_start_tls": .string, "ldap_ca_file": .string, "ldap_tls_verify": .string,
        "ldap_base_dn": .string, "ldap_bind_dn": .string, "ldap_bind_password_file": .string,
        "ldap_user_filter": .string, "ldap_user_attribute": .string, "ldap_display_name_attribute": .string,
        "ldap_email_attribute": .string, "ldap_user_groups_attribute": .string, "ldap_group_base_dn": .string,
        "ldap_group_member_attribute": .string, "ldap_required_group": .string, "ldap_admin_group": .string,
        "ldap_timeout_seconds": .integer,
        "oidc_issuer": .string, "oidc_display_name": .string, "oidc_client_id": .string, "oidc_client_secret_file": .string,
        "oidc_scopes": .stringList, "oidc_ca_file": .string, "oidc_user_claim": .string, "oidc_groups_claim": .string,
        "oidc_required_group": .string, "oidc_admin_group": .string,
        "directory": .string, "directory_groups": .stringList, "directory_exclude_groups": .stringList, "directory_fields": .stringList, "directory_opt_out": .string, "directory_query_limit": .integer,
    ]

    /// The file read, for messages; nil without one.
    private(set) var path: String?
    private var strings: [String: String] = [:]
    private var integers: [String: Int] = [:]
    private var lists: [String: [String]] = [:]

    /// No file: every lookup falls through to the default.
    init() {}

    init(path: String) throws {
        self.path = path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CLIError("Cannot read config file \(path).")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw CLIError("\(path): \(error.description) at line \(error.source.begin.line).")
        }
        for key in table.keys {
            guard let kind = Self.keys[key] else {
                throw CLIError("\(path): unknown key \"\(key)\" (known: \(Self.keys.keys.sorted().joined(separator: ", "))).")
            }
            guard let value = table[key] else { continue }
            switch kind {
            case .string:
                guard let text = value.string else { throw Self.typeError(path, key, kind) }
                strings[key] = text
            case .integer:
                guard let number = value.int else { throw Self.typeError(path, key, kind) }
                integers[key] = number
            case .stringList:
                guard let array = value.array else { throw Self.typeError(path, key, kind) }
                lists[key] = try array.map {
                    guard let text = $0.string else { throw Self.typeError(path, key, kind) }
                    return text
                }
            }
        }
    }

    func string(_ key: String) -> String? { strings[key] }
    func integer(_ key: String) -> Int? { integers[key] }
    func list(_ key: String) -> [String]? { lists[key] }
    func holds(_ key: String) -> Bool { strings[key] != nil || integers[key] != nil || lists[key] != nil }

    private static func typeError(_ path: String, _ key: String, _ kind: Kind) -> CLIError {
        CLIError("\(path): key \"\(key)\" must be \(kind == .integer ? "an" : "a") \(kind.rawValue).")
    }
}

/// One `serve` setting looked up in precedence order: flag, then `ROLO_*` environment
/// variable, then config file; nil leaves the caller's default.
struct LayeredSettings {
    let file: ConfigFile

    func string(_ flag: String?, env: String, key: String) -> String? {
        flag ?? Environment.value(env) ?? file.string(key)
    }

    func integer(_ flag: Int?, env: String, key: String) throws -> Int? {
        if let flag { return flag }
        if let text = Environment.value(env) {
            guard let value = Int(text) else { throw CLIError("\(env) is not a number: \(text)") }
            return value
        }
        return file.integer(key)
    }

    /// A bad value, named by its key and where it was set: "web_ui must be on or off (got
    /// x); it was set in /etc/rolo/rolo.toml." (or "by --web-ui", "by ROLO_WEB_UI"). A
    /// `CLIError`: exit 1 with the one line, no usage text (that is for a malformed command line).
    func invalid(_ key: String, flagGiven: Bool, env: String, flag: String? = nil, _ problem: String) -> CLIError {
        var sentence = "\(key) \(problem)"
        if sentence.hasSuffix(".") { sentence.removeLast() }
        if flagGiven {
            sentence += "; it was set by \(flag ?? "--" + key.replacingOccurrences(of: "_", with: "-"))"
        } else if Environment.value(env) != nil {
            sentence += "; it was set by \(env)"
        } else if let path = file.path, file.holds(key) {
            sentence += "; it was set in \(path)"
        }
        return CLIError(sentence + ".")
    }

    /// A repeatable flag, or a comma-separated variable, or a TOML array.
    func list(_ flag: [String], env: String, key: String) -> [String] {
        if !flag.isEmpty { return flag }
        if let text = Environment.value(env) {
            return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return file.list(key) ?? []
    }
}

/// The storage quota (`Quota`): `serve` applies it to DAV and the web UI, `rolo import` to
/// what it writes, from the same flag, variable and key, so no way in skips it.
enum QuotaSetting {
    static func bytes(flag: Int64?, settings: LayeredSettings) throws -> Int64? {
        guard let bytes = try settings.integer(flag.map { Int($0) }, env: "ROLO_QUOTA_BYTES", key: "quota_bytes") else {
            return nil
        }
        guard bytes > 0 else { throw CLIError("quota_bytes must be a number of bytes above 0 (got \(bytes)); leave it out for no quota.") }
        return Int64(bytes)
    }
}
