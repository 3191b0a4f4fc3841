import RoloStore

extension Array where Element == AccessRecord {
    /// The hourly rows `matches` picks, summed into one: the recorder files each request under
    /// the hour it was served in, so a test whose requests straddle the top of an hour finds
    /// them in two rows (a fresh-clone CI run at 18:59-19:00 did). nil when none matches.
    func hourlyTotal(where matches: (AccessRecord) -> Bool) -> AccessRecord? {
        let rows = filter { $0.period == .hour && matches($0) }
        guard var total = rows.first else { return nil }
        for row in rows.dropFirst() {
            total.requests += row.requests
            total.cardsRead += row.cardsRead
            total.cardsWritten += row.cardsWritten
            total.cardsDeleted += row.cardsDeleted
            total.fullDownload = total.fullDownload || row.fullDownload
        }
        return total
    }
}
