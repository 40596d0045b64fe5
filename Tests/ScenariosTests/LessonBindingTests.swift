import Foundation
import Replica
@_spi(Kernel) import Simulator
import Testing

@testable import Scenarios

/// Binding the app lessons (written on a `Note` schema) to an app's own schema: each lesson is
/// played by the app's types and fields, or says which role the schema lacks.
@Suite struct LessonBindingTests {
  // MARK: - Schemas

  /// A reminders app: lists of reminders, each with a title, a priority and notes.
  static let reminders = Schema(types: [
    RecordType(name: "List", fields: [FieldSpec(name: "name", kind: .string, defaultValue: .string(""), mutable: true)]),
    RecordType(
      name: "Reminder",
      fields: [
        FieldSpec(name: "list", kind: .ref("List"), optional: true, onDelete: .cascade),
        FieldSpec(name: "title", kind: .string, defaultValue: .string(""), mutable: true),
        FieldSpec(name: "priority", kind: .int, defaultValue: .int(0), mutable: true),
        FieldSpec(name: "notes", kind: .text, optional: true),
      ]),
  ])

  /// A contacts app: no text field.
  static let contacts = Schema(types: [
    RecordType(
      name: "Contact",
      fields: [
        FieldSpec(name: "name", kind: .string, defaultValue: .string(""), mutable: true),
        FieldSpec(name: "company", kind: .string, optional: true, mutable: true),
        FieldSpec(name: "birthday", kind: .date, optional: true),
        FieldSpec(name: "favorite", kind: .bool, defaultValue: .bool(false)),
      ])
  ])

  /// What each app lesson becomes on the reminders app that does not reuse names.
  static let onReminders: [String: String] = [
    "app-concurrent-appends": "Note → Reminder (title → title, body → notes)",
    "app-conflicting-save": "Note → Reminder (title → title, tag → priority)",
    "app-delete-after-edit": "Note → Reminder (title → title, tag → priority)",
    "app-edit-under-fetch": "Note → Reminder (title → title, tag → priority)",
    "app-edit-while-sending": "Note → Reminder (title → title, tag → priority)",
    "app-killed-before-sync": "Note → Reminder (title → title)",
    "app-reinserted-note":
      "app-reinserted-note makes n1 again under the name of a deleted record (line 15); RemindersApp gives every record a name of its own, so the lesson does not apply to it",
    "app-signed-out-offline": "Note → Reminder (title → title)",
    "app-zone-busy": "Note → Reminder (title → title)",
    "app-zone-deleted": "Note → Reminder (title → title)",
    "app-list-deleted": "Folder → List (name → name); Item → Reminder (folder → list, title → title)",
    "app-delete-in-failed-batch": "Note → Reminder (title → title)",
  ]

  // MARK: - Every app lesson

  @Test(arguments: Scenario.builtInNames.filter { $0.hasPrefix("app-") })
  func everyAppLessonBindsToRemindersOrNamesWhatItLacks(name: String) throws {
    let lesson = try Scenario.load(name)
    switch lesson.bound(to: Self.reminders, appName: "RemindersApp", reusesNames: false) {
    case .success(let binding):
      try expectRoundTrip(binding.file)
      #expect(binding.file.schema == Self.reminders)
      if let expected = Self.onReminders[name] { #expect(binding.summary == expected) }
    case .failure(let mismatch):
      if let expected = Self.onReminders[name] {
        #expect(mismatch.message == expected)
      } else {
        #expect(mismatch.message.hasPrefix("\(name) "), "a new lesson's mismatch names it: \(mismatch.message)")
      }
    }
  }

  @Test(arguments: Scenario.builtInNames.filter { $0.hasPrefix("app-") })
  func everyBoundLessonStillPassesUnderItsOwnPolicy(name: String) throws {
    // The binding keeps the lesson's meaning: the preset it is written for passes it on the
    // app's schema as it does on the Note.
    guard case .success(let binding) = try Scenario.load(name).bound(to: Self.reminders, appName: "RemindersApp", reusesNames: true) else {
      Issue.record("\(name) does not bind to the reminders app that reuses names")
      return
    }
    let report = ScenarioRunner.run(binding.file).report
    #expect(report.passed, "\(report.text)")
  }

  @Test func theKnownAppLessonsAreAllChecked() {
    // A lesson added later is still checked above, by the general property; this says which
    // of today's bind.
    let names = Set(Scenario.builtInNames.filter { $0.hasPrefix("app-") })
    #expect(Set(Self.onReminders.keys).isSubset(of: names))
  }

  @Test func concurrentAppendsPlaysTheBodyWithTheNotes() throws {
    let binding = try Scenario.load("app-concurrent-appends").bound(to: Self.reminders, appName: "RemindersApp", reusesNames: false).get()
    let appends = binding.file.timeline.compactMap { entry -> String? in
      if case .append(_, let id, let field, _) = entry.action { return "\(id).\(field)" }
      return nil
    }
    #expect(appends == ["n1.notes", "n1.notes", "n1.notes"])
    #expect(
      binding.file.expectations.map(\.text) == [
        "expect no violations", "expect converged", #"expect n1.notes in "milk eggs; bread; tea;" "milk bread; tea; eggs;""#,
      ])
  }

  // MARK: - A schema without a role

  @Test func concurrentAppendsNeedsATextFieldTheContactsAppHasNot() throws {
    let result = try Scenario.load("app-concurrent-appends").bound(to: Self.contacts, appName: "ContactsApp", reusesNames: true)
    #expect(
      result.mismatch
        == "app-concurrent-appends needs a record type with a text field that is appended to (its Note's body); ContactsApp's schema has no text field"
    )
  }

  /// docs/your-engine.md shows the line a report gives a lesson the app's schema cannot play:
  /// it is this report's.
  @Test func theGuidesLineForALessonTheSchemaCannotPlayIsTheReports() throws {
    let app = AppUnderTest(name: "ContactsApp", schema: Self.contacts) { _ in { _ in fatalError("a lesson that is not bound does not run") } }
    let report = ScenarioRunner.run(try Scenario.load("app-concurrent-appends"), app: app).report
    let printed = report.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    let shown = try Fixtures.documentBlock("docs/your-engine.md", checkedBy: "Tests/ScenariosTests/LessonBindingTests.swift")
    #expect(!shown.isEmpty)
    for line in shown { #expect(printed.contains(line), "\(report.text)") }
  }

  @Test func conflictingSaveBindsToTwoStringFieldsOfAContact() throws {
    let binding = try Scenario.load("app-conflicting-save").bound(to: Self.contacts, appName: "ContactsApp", reusesNames: true).get()
    #expect(binding.summary == "Note → Contact (title → name, tag → company)")
    #expect(
      binding.types == [
        LessonBinding.TypeMap(
          lesson: "Note", app: "Contact", fields: [.init(lesson: "title", app: "name"), .init(lesson: "tag", app: "company")])
      ])
    try expectRoundTrip(binding.file)
  }

  @Test func aSchemaWithTooFewFieldsGetsTheRoleSentence() throws {
    let tiny = Schema(types: [
      RecordType(name: "List", fields: [FieldSpec(name: "name", kind: .string, optional: true, mutable: true)]),
      RecordType(
        name: "Reminder",
        fields: [
          FieldSpec(name: "title", kind: .string, optional: true, mutable: true),
          FieldSpec(name: "done", kind: .bool, defaultValue: .bool(false), mutable: true),
        ]),
    ])
    let result = try Scenario.load("app-conflicting-save").bound(to: tiny, appName: "TinyApp", reusesNames: true)
    #expect(
      result.mismatch
        == "app-conflicting-save needs a record type with two editable fields (string, int, date or text), as its Note's title and tag; TinyApp's schema has none: List has one (name), Reminder has one (title; done is a bool)"
    )
  }

  @Test func aSchemaOfOnlyAppendOnlyTypesFitsNoEditedNote() throws {
    let events = Schema(types: [
      RecordType(name: "Event", appendOnly: true, fields: [FieldSpec(name: "what", kind: .string, optional: true)])
    ])
    let result = try Scenario.load("app-zone-busy").bound(to: events, appName: "LogApp", reusesNames: true)
    #expect(
      result.mismatch
        == "app-zone-busy needs a record type with an editable field (string, int, date or text), as its Note's title; LogApp's schema has a string, int, date or text field only on types that do not fit: Event is append-only"
    )
  }

  // MARK: - Identity

  @Test func aLessonOnItsOwnSchemaIsUnchanged() throws {
    for name in ["app-conflicting-save", "app-concurrent-appends", "app-reinserted-note"] {
      let lesson = try Scenario.load(name)
      let binding = try lesson.bound(to: lesson.schema, appName: "NotesApp", reusesNames: true).get()
      #expect(binding.file == lesson)
      #expect(binding.types.isEmpty)
      #expect(binding.summary == nil)
    }
  }

  @Test func theSameNoteWithAnotherFieldIsPlayedByName() throws {
    var schema = try Scenario.load("app-conflicting-save").schema
    schema.types[0].fields.insert(FieldSpec(name: "pinned", kind: .bool, defaultValue: .bool(false)), at: 0)
    let binding = try Scenario.load("app-conflicting-save").bound(to: schema, appName: "NotesApp", reusesNames: true).get()
    #expect(binding.summary == "Note → Note (title → title, tag → tag)")
    #expect(binding.file.timeline == (try Scenario.load("app-conflicting-save")).timeline)
  }

  // MARK: - Literals

  /// A lesson that writes four distinct tags (one of them twice) and expects two of them.
  static let manyTags = """
    scenario many-tags
    devices iPad phone

    type Note
      title: string = "" mutable
      tag: string = "" mutable

    at 0s iPad create Note n1 title="a" tag="red"
    at 1s iPad set n1 tag="green"
    at 2s phone set n1 tag="red"
    at 3s phone set n1 tag="blue"
    at 3s iPad set n1 tag="yellow"
    settle

    expect n1.tag in "blue" "yellow"
    expect n1.title == "a"
    """

  @Test func stringsOnAnIntFieldAreRenumberedInOrderOfFirstAppearance() throws {
    let lesson = try Scenario.parse(Self.manyTags, source: "many-tags.scenario").get()
    let binding = try lesson.bound(to: Self.reminders, appName: "RemindersApp", reusesNames: false).get()
    #expect(binding.summary == "Note → Reminder (title → title, tag → priority)")
    let written = binding.file.timeline.flatMap { entry -> [String] in
      switch entry.action {
      case .create(_, _, _, let fields), .set(_, _, let fields): fields.map { "\($0.field)=\($0.value)" }
      default: []
      }
    }
    #expect(written == ["title=\"a\"", "priority=1", "priority=2", "priority=1", "priority=3", "priority=4"])
    #expect(
      binding.file.expectations.map(\.kind) == [
        .fieldIn(id: "n1", field: "priority", values: [.int(3), .int(4)]),
        .fieldEquals(id: "n1", field: "title", value: .string("a")),
      ])
    #expect(binding.file.expectations.map(\.text) == ["expect n1.priority in 3 4", #"expect n1.title == "a""#])
    try expectRoundTrip(binding.file)
  }

  @Test func stringsOnADateFieldBecomeThatManySeconds() throws {
    let diary = Schema(types: [
      RecordType(
        name: "Entry",
        fields: [
          FieldSpec(name: "headline", kind: .string, optional: true, mutable: true),
          FieldSpec(name: "day", kind: .date, optional: true, mutable: true),
        ])
    ])
    let lesson = try Scenario.parse(Self.manyTags, source: "many-tags.scenario").get()
    let binding = try lesson.bound(to: diary, appName: "DiaryApp", reusesNames: false).get()
    #expect(binding.summary == "Note → Entry (title → headline, tag → day)")
    #expect(binding.file.expectations[0].kind == .fieldIn(id: "n1", field: "day", values: [.duration(.seconds(3)), .duration(.seconds(4))]))
    try expectRoundTrip(binding.file)
  }

  /// A counter set to a positive and a negative number.
  static let counter = """
    devices iPad
    type Counter
      count: int = 0 mutable
    at 0s iPad create Counter c1 count=7
    at 1s iPad set c1 count=-12
    settle
    expect c1.count == -12
    """

  @Test func anIntLessonFieldPrefersADateAndIsRenumberedWhenItCannotBeSeconds() throws {
    let lesson = try Scenario.parse(Self.counter, source: "counter.scenario").get()
    let binding = try lesson.bound(to: Self.contacts, appName: "ContactsApp", reusesNames: false).get()
    #expect(binding.summary == "Counter → Contact (count → birthday)")
    // -12s is no date: both values are renumbered, in order.
    #expect(binding.file.expectations[0].kind == .fieldEquals(id: "c1", field: "birthday", value: .duration(.seconds(2))))
    try expectRoundTrip(binding.file)
  }

  @Test func anIntLessonFieldOnAStringFieldIsWrittenAsItsDecimalText() throws {
    let labels = Schema(types: [RecordType(name: "Label", fields: [FieldSpec(name: "text", kind: .string, optional: true)])])
    let lesson = try Scenario.parse(Self.counter, source: "counter.scenario").get()
    let binding = try lesson.bound(to: labels, appName: "LabelsApp", reusesNames: false).get()
    #expect(binding.summary == "Counter → Label (count → text)")
    #expect(binding.file.expectations[0].kind == .fieldEquals(id: "c1", field: "text", value: .string("-12")))
    try expectRoundTrip(binding.file)
  }

  // MARK: - Names made again

  @Test func aLessonThatMakesANameAgainNeedsAnAppThatReusesNames() throws {
    let lesson = try Scenario.load("app-reinserted-note")
    let refused = lesson.bound(to: Self.reminders, appName: "RemindersApp", reusesNames: false)
    #expect(
      refused.mismatch
        == "app-reinserted-note makes n1 again under the name of a deleted record (line 15); RemindersApp gives every record a name of its own, so the lesson does not apply to it"
    )
    // Even on its own schema: the rule is about the app, not its types.
    #expect(lesson.bound(to: lesson.schema, appName: "RemindersApp", reusesNames: false).mismatch != nil)

    let binding = try lesson.bound(to: Self.reminders, appName: "RemindersApp", reusesNames: true).get()
    #expect(binding.summary == "Note → Reminder (title → title)")
    let creates = binding.file.timeline.compactMap { entry -> String? in
      if case .create(_, let type, let id, _) = entry.action { return "\(type) \(id)" }
      return nil
    }
    #expect(creates == ["Reminder n1", "Reminder n1"])
    try expectRoundTrip(binding.file)
  }

  // MARK: - Helpers

  /// The file written with `ScenarioWriter` parses back to the same schema, timeline and
  /// expectations.
  func expectRoundTrip(_ file: ScenarioFile, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
    let text = file.rendered()
    let reread: ScenarioFile
    switch Scenario.parse(text, source: "bound.scenario") {
    case .success(let parsed): reread = parsed
    case .failure(let errors):
      Issue.record("the bound lesson does not parse:\n\(errors.rendered())\n\(text)", sourceLocation: sourceLocation)
      return
    }
    #expect(reread.schema == file.schema, sourceLocation: sourceLocation)
    #expect(reread.withoutLocations.timeline == file.withoutLocations.timeline, "\(text)", sourceLocation: sourceLocation)
    #expect(reread.expectations.map(\.kind) == file.expectations.map(\.kind), sourceLocation: sourceLocation)
    #expect(reread.expectations.map(\.text) == file.expectations.map(\.text), sourceLocation: sourceLocation)
  }
}

extension Result where Failure == LessonMismatch {
  /// The mismatch's sentence, or nil when the lesson bound.
  fileprivate var mismatch: String? {
    if case .failure(let mismatch) = self { return mismatch.message }
    return nil
  }
}
