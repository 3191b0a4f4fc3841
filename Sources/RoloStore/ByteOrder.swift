#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// Byte equality, what SQL's `=` on text is. Swift's `==` is canonical equivalence
    /// ("é" == "e\u{301}"), under which two names the databases keep apart would be one.
    package func isExactly(_ other: String) -> Bool { utf8.count == other.utf8.count && byteOrder(other) == 0 }

    /// Byte order, what SQL's `ORDER BY` on text in the "C" collation (PostgreSQL) and in
    /// SQLite's BINARY one is: the order of every page of names the stores hand out, and of
    /// their cursors.
    package func precedesInBytes(_ other: String) -> Bool { byteOrder(other) < 0 }

    /// Negative, zero or positive as `self`'s UTF-8 sorts before, with or after `other`'s:
    /// one `memcmp` over the contiguous bytes (a native string's own storage, not copied).
    /// The `UTF8View`s compared element by element were 1 % of a sync's CPU on PostgreSQL,
    /// which checks every page's order (issue 34).
    private func byteOrder(_ other: String) -> Int {
        var left = self, right = other
        return left.withUTF8 { a in
            right.withUTF8 { b in
                let common = min(a.count, b.count)
                let order = common == 0 ? 0 : Int(memcmp(a.baseAddress!, b.baseAddress!, common))
                return order != 0 ? order : a.count - b.count
            }
        }
    }
}

/// A string compared and hashed by its UTF-8 bytes, as the back ends compare names: the key
/// for a set or dictionary of names, users or paths. Swift's `String` keys would merge two
/// names the databases keep apart ("é" and "e\u{301}"). Hashed in bulk, without copying
/// the bytes (hashing them one at a time was 3 % of a multiget of 1,000 on PostgreSQL).
package struct ExactString: Hashable, Sendable {
    package let string: String
    package init(_ string: String) { self.string = string }

    package static func == (left: ExactString, right: ExactString) -> Bool { left.string.isExactly(right.string) }

    package func hash(into hasher: inout Hasher) {
        var string = string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
