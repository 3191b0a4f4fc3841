#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// Byte equality, what SQL's `=` on text is. Swift's `==` is canonical equivalence
    /// ("é" == "e\u{301}"), under which two names the databases keep apart would be one.
    package func isExactly(_ other: String) -> Bool { utf8.elementsEqual(other.utf8) }

    /// Byte order, what SQL's `ORDER BY` on text in the "C" collation (PostgreSQL) and in
    /// SQLite's BINARY one is: the order of every page of names the stores hand out, and of
    /// their cursors. One `memcmp` over the contiguous UTF-8 (a native string's own storage,
    /// not copied): the `UTF8View`'s element by element comparison was 1 % of a sync's CPU
    /// on PostgreSQL, which checks every page's order (issue 34).
    package func precedesInBytes(_ other: String) -> Bool {
        var left = self, right = other
        return left.withUTF8 { a in
            right.withUTF8 { b in
                let common = min(a.count, b.count)
                let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                return order != 0 ? order < 0 : a.count < b.count
            }
        }
    }
}
