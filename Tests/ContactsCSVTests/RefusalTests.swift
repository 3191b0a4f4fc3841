import Contacts
import ContactsCSV
import Testing

/// A file that is no contacts CSV is refused with a reason; bad rows are named by line.
struct RefusalTests {
    func refusal(_ text: String) -> String? {
        do { _ = try CSVContactFile(bytes: Array(text.utf8)); return nil } catch { return error.reason }
    }

    @Test func aVCardIsNotAContactsCSV() {
        #expect(refusal("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:A\r\nEND:VCARD\r\n")?.hasPrefix("not a Google or Outlook contacts CSV") == true)
    }

    @Test func emptyAndBinaryFilesAreRefused() {
        #expect(refusal("") == "the file is empty")
        #expect(throws: CSVRefusal.self) { try CSVContactFile(bytes: [0x50, 0x4B, 0x03, 0x04, 0x00, 0x00, 0x08, 0x00, 0xFF]) }
    }

    @Test func aHeaderWithoutANameColumnIsRefused() {
        #expect(refusal("E-mail Address,Mobile Phone\r\na@example.org,+1\r\n")?.hasPrefix("the header has no name column") == true)
    }

    @Test func badRowsAreReportedByTheirLineAndGoodOnesKept() throws {
        let text = "First Name,Last Name,Birthday,Notes\r\n"     // 1
            + "Ann,Able,1/2/1990,\"two\r\nlines\"\r\n"          // 2-3
            + "Bob,Baker,1/2/1990,x,extra\r\n"                 // 4: one field too many
            + "Cy,Cole,31/31/1990,\r\n"                        // 5: no such date
            + ",,,only a note\r\n"                             // 6: nothing to name it by
            + "Di,Dale,,\"never closed\r\n"                    // 7: unterminated quote
        let file = try CSVContactFile(bytes: Array(text.utf8))
        #expect(file.rows.map(\.line) == [2])
        #expect(file.failures.map(\.line) == [4, 5, 6, 7])
        #expect(file.failures[0].reason.hasPrefix("5 fields where the header has 4"))
        #expect(file.failures[1].reason.contains("\"31/31/1990\" is not a date"))
    }
}
