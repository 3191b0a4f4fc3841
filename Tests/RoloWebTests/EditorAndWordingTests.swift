import Foundation
import RoloStore
import Testing
@testable import RoloWeb

/// The editor and the words of the web UI (issue 29): Add phone number keeps what the form
/// showed, the birthday's boxes are labelled, and no page speaks of privileges or libraries.
@Suite struct EditorAndWordingTests {
    static func card(_ uid: String, _ fn: String, extra: [String] = []) -> String {
        (["BEGIN:VCARD", "VERSION:3.0", "UID:\(uid)", "FN:\(fn)", "N:\(fn);;;;"] + extra + ["END:VCARD", ""]).joined(separator: "\r\n")
    }

    @Test func addPhoneNumberKeepsThePhotoBoxAndTheSearch() async throws {
        let web = try await WebHarness()
        let photo = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 24)).base64EncodedString()
        try await web.put(Self.card("ph", "Pia Photo", extra: ["TEL;TYPE=CELL:+1 555 0100", "PHOTO;ENCODING=b;TYPE=PNG:\(photo)"]), name: "ph.vcf")
        try await web.signIn()
        let editor = await web.get("/web/b/default/c/ph.vcf/edit?q=pia")
        #expect(editor.text.contains("data-testid=\"photo-remove\""))
        var form = try web.form(editor.text, id: "edit-form")
        #expect(form.action == "/web/b/default/c/ph.vcf/edit?q=pia")
        form.set("photo-remove", to: "1")
        form.set("add", to: "tel")
        let again = await web.postMultipart(form.action, form.submitted)
        #expect(again.status == 200)
        #expect(again.text.components(separatedBy: "data-testid=\"tel-row\"").count - 1 == 2)
        let box = try #require(again.text.range(of: #"<input type="checkbox" name="photo-remove"[^>]*>"#, options: .regularExpression))
        #expect(again.text[box].contains(" checked"))
        #expect(again.text.contains("id=\"q\" name=\"q\" value=\"pia\""))
        let next = try web.form(again.text, id: "edit-form")
        #expect(next.action == "/web/b/default/c/ph.vcf/edit?q=pia")
        // Saving keeps the list's search too.
        var save = next
        save.remove("add")
        save.set("action", to: "save")
        let saved = await web.postMultipart(save.action, save.submitted)
        #expect(saved.status == 303 && saved.header("Location") == "/web/b/default/c/ph.vcf?q=pia&done=saved")
        #expect(!WebFlowTests.text(try await web.stored("ph.vcf")).contains("PHOTO"))
    }

    @Test func theBirthdayBoxesHaveVisibleLabels() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        let editor = await web.get("/web/b/default/new").text
        for (id, label) in [("f-bday-day", "Day"), ("f-bday-month", "Month"), ("f-bday-year", "Year")] {
            #expect(editor.contains("<label for=\"\(id)\">\(label) "), "\(id)")
        }
        #expect(!editor.contains("class=\"visually-hidden\">Birthday"))
    }

    @Test func theAppPasswordPageSaysNothingOfTheProgramsInsides() async throws {
        let web = try await WebHarness()
        try await web.signIn()
        await web.get("/web/privacy")
        let created = await web.post("/web/privacy/tokens", [("name", "Phone"), ("scope", "read-write"), ("books", "all")])
        #expect(created.status == 201 && created.text.contains("data-testid=\"profile-hint\""))
        #expect(!created.text.contains("library"))
    }

    @Test func aWriteToAReadOnlyShareIsRefusedInPlainWords() async throws {
        let web = try await WebHarness()
        try await web.put(Self.card("b1", "Ben"), name: "b1.vcf", user: "bob")
        _ = try await web.store.shareBook(owner: "bob", book: "default", with: "alice", access: .readOnly, accepted: true)
        try await web.signIn()
        let refused = await web.get("/web/b/default~bob/new")
        #expect(refused.status == 403 && refused.text.contains("shared with you read-only"))
        #expect(!refused.text.contains("privilege"))
    }
}
